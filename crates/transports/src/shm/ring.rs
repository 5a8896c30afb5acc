//! The single-producer single-consumer byte ring.
//!
//! # Design: a byte stream, not slots or records
//!
//! The ring carries bytes, like a pipe: the producer appends, the consumer removes,
//! message boundaries are the caller's (the workloads agree on a message size out of
//! band, as with pipes and sockets). Trade-offs against the alternatives:
//!
//! * vs fixed slots: any message size works, including messages larger than the ring
//!   (they stream through), and a 64-byte message costs 64 bytes of ring, not a slot;
//!   but the ring cannot tell messages apart by itself.
//! * vs variable-length records: no per-message header to write, read and validate;
//!   but no per-record metadata either.
//!
//! The data is mapped twice back to back ([`super::region::Mirror`]), so any view of
//! up to `capacity` bytes is contiguous: copies are one `memcpy`, and the zero-copy API
//! ([`Producer::reserve`], [`Consumer::peek`]) hands out plain slices.
//!
//! # Index protocol
//!
//! `head` (bytes published, written by the producer only) and `tail` (bytes released,
//! written by the consumer only) are monotonic `u64`s on their own cache lines. Each
//! side keeps a private copy of the other's index and re-reads the shared one only
//! when its copy says "full" (producer) or "empty" (consumer), so in steady state the
//! index lines do not bounce. Each side also *publishes* its own index in batches of
//! `batch` bytes, and always before it waits, on `flush`, and on close: data written
//! is invisible until published. The producer writes the bytes, then stores `head`
//! with Release; the consumer loads `head` with Acquire, then reads the bytes (and
//! symmetrically for `tail` and the space it frees). Invariant:
//! `tail ≤ head ≤ tail + capacity`.
//!
//! # Pieces
//!
//! A message longer than a *piece* is copied in and published in pieces, and a
//! receiver waits for at most a piece before it copies out what has arrived: both
//! copies of a large message run at once on the two CPUs instead of one after the
//! other. A piece is `batch` bytes, but never fewer than [`MIN_PIECE`]: a small
//! `batch` says "publish soon", not "copy in small bits", and a piece of a few bytes
//! would make every large message pay a publication (a store to a shared line) and a
//! short copy per few bytes. With `batch` below [`MIN_PIECE`] every piece is
//! published as soon as it is copied (it is at least `batch` bytes), so `batch = 1`
//! still publishes every message at once.
//!
//! # Copying out
//!
//! The consumer copies a message out with [`crate::copy::copy_out`]: by vector loads
//! from 2 KiB to 64 KiB, where `memcpy`'s `rep movsb`, reading lines the producer's
//! CPU has just written, falls at times into a regime several times slower (see
//! there). The producer copies in with `memcpy`.
//!
//! # Small messages
//!
//! A message of up to 64 bytes at a 64-byte position lies in one data line, and
//! `head` (with `closed`) in one more: two lines per message, the fewest a byte ring
//! with a separate index allows. A waiting consumer asks for the data line at its
//! `tail` on every turn of its wait, next to its load of `head`, so that the two
//! lines cross between the CPUs at the same time rather than one after the other.
//!
//! # A hostile peer
//!
//! The other side's index is read from shared memory, which a faulty or hostile
//! peer can overwrite with anything. Every time an end re-reads it (when it starts,
//! and on the slow path where its private copy said "full" or "empty"), it checks
//! the invariant against its own private index before using it, and a value that
//! breaks it ends the call with an [`io::ErrorKind::InvalidData`] error that names
//! the region and the index ([`Corrupt`]): no copy ever uses an unchecked index, so
//! scribbled indices cannot make a copy leave the ring. The check is one compare on
//! a path that already pays a cache-line transfer; the fast path is unchanged.

use super::region::{Mirror, RingControl};
use super::wait::{
    Fences, WaitError, WaitLine, WaitMode, spin_briefly, wait_until, wake, wake_always,
};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Asks for the cache line at `p` without waiting for it (a hint: it never faults,
/// whatever the address).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is a hint; it never faults or changes memory.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A ring index read from shared memory that breaks the ring's invariant.
#[derive(Debug, thiserror::Error)]
#[error(
    "shared-memory region {region}: ring {ring} is corrupt: the peer's {index} is {found}, \
     but with our {ours_name} at {ours} and a {capacity}-byte ring it must lie in {lo}..={hi} \
     (the peer wrote over the region's header)"
)]
pub struct Corrupt {
    /// The region's address.
    pub region: String,
    /// Ring 0 or 1.
    pub ring: usize,
    /// "head" or "tail".
    pub index: &'static str,
    /// The value read.
    pub found: u64,
    /// "tail" or "head".
    pub ours_name: &'static str,
    /// Our own index.
    pub ours: u64,
    /// Bytes of the ring.
    pub capacity: u64,
    /// Smallest valid value.
    pub lo: u64,
    /// Largest valid value.
    pub hi: u64,
}

/// Which region and ring an end belongs to, for its error messages.
#[derive(Debug, Clone)]
pub struct RingId {
    /// The region's address.
    pub region: std::sync::Arc<str>,
    /// 0 or 1.
    pub ring: usize,
}

/// The fewest bytes a piece of a large message holds, whatever `batch` says (see
/// "Pieces" in the module doc; the ring's capacity caps it too).
pub const MIN_PIECE: u64 = 4 << 10;

/// The bytes of each piece of a large message for a `batch` (already in
/// `1..=capacity`) in a ring of `capacity` bytes: `batch`, but at least
/// [`MIN_PIECE`], and at most the ring.
pub fn piece(batch: u64, capacity: u64) -> u64 {
    batch.max(MIN_PIECE).min(capacity)
}

/// Shared pieces of both ends.
struct Shared {
    id: RingId,
    ctl: *const RingControl,
    data: *mut u8,
    capacity: u64,
    mask: u64,
    /// Bytes written (read) before the index is published, in `1..=capacity`.
    batch: u64,
    /// Most bytes copied in one piece ([`piece`]), in `batch..=capacity`.
    piece: u64,
    /// Most bytes a consumer waits for before it copies: `min(piece, capacity / 2)`.
    wait_most: u64,
    mode: WaitMode,
    fences: Fences,
    peer_pid: i32,
    /// The owner's abandon flag ([`crate::Endpoint::abandon_when`]).
    abandon: Option<Arc<AtomicBool>>,
}

/// How a ring end waits and whom it watches.
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    /// The wait strategy.
    pub mode: WaitMode,
    /// Who pays for the sleep/wake barrier.
    pub fences: Fences,
    /// The peer process (0 or our own pid for a thread peer).
    pub peer_pid: i32,
}

impl Shared {
    /// Waits until `ready()` holds, `line` being the waiter's futex line: first a brief
    /// spin on the condition alone (no clock read, no set-up), then the full wait by this
    /// ring's mode, watching the peer and the owner's abandon flag.
    #[inline(always)]
    fn wait(&self, line: &WaitLine, mut ready: impl FnMut() -> bool) -> Result<(), WaitError> {
        if spin_briefly(self.mode, &mut ready) {
            return Ok(());
        }
        wait_until(
            line,
            self.mode,
            self.fences,
            self.peer_pid,
            self.abandon.as_deref(),
            ready,
        )
    }

    fn new(id: RingId, ctl: &RingControl, data: &Mirror, batch: usize, w: Waiting) -> Shared {
        let capacity = data.capacity() as u64;
        let batch = (batch as u64).clamp(1, capacity);
        let piece = piece(batch, capacity);
        Shared {
            id,
            ctl,
            data: data.base(),
            capacity,
            mask: capacity - 1,
            batch,
            piece,
            wait_most: piece.min(capacity / 2).max(1),
            mode: w.mode,
            fences: w.fences,
            peer_pid: w.peer_pid,
            abandon: None,
        }
    }

    /// Checks the producer's `head` against the consumer's `tail`: both valid when
    /// `tail ≤ head ≤ tail + capacity`. `peer_is_head` says which one was read.
    #[cold]
    fn corrupt(&self, head: u64, tail: u64, peer_is_head: bool) -> io::Error {
        let cap = self.capacity;
        let e = if peer_is_head {
            Corrupt {
                region: self.id.region.to_string(),
                ring: self.id.ring,
                index: "head",
                found: head,
                ours_name: "tail",
                ours: tail,
                capacity: cap,
                lo: tail,
                hi: tail.saturating_add(cap),
            }
        } else {
            Corrupt {
                region: self.id.region.to_string(),
                ring: self.id.ring,
                index: "tail",
                found: tail,
                ours_name: "head",
                ours: head,
                capacity: cap,
                lo: head.saturating_sub(cap),
                hi: head,
            }
        };
        io::Error::new(io::ErrorKind::InvalidData, e)
    }

    /// Whether `tail ≤ head ≤ tail + capacity` ([`readable`]'s check; the 64-bit
    /// indices never wrap).
    #[inline(always)]
    fn valid(&self, head: u64, tail: u64) -> bool {
        check_indices(tail, head, self.capacity).is_ok()
    }

    #[inline]
    fn ctl(&self) -> &RingControl {
        // SAFETY: the control block lives in the region, which outlives every ring
        // end (the endpoint holds the region in an Arc next to its ends).
        unsafe { &*self.ctl }
    }
}

/// The writing end.
pub struct Producer {
    s: Shared,
    head: u64,
    published: u64,
    cached_tail: u64,
}

/// The reading end.
pub struct Consumer {
    s: Shared,
    tail: u64,
    published: u64,
    cached_head: u64,
}

// SAFETY: a ring end is used by one thread at a time (it is `Send`, not `Sync`); the
// memory it points into is shared memory that lives as long as the region the owner
// keeps alive, and the SPSC protocol gives each end exclusive use of its bytes.
unsafe impl Send for Producer {}
// SAFETY: as for `Producer`.
unsafe impl Send for Consumer {}

/// What waiting for data found.
#[derive(Debug, PartialEq, Eq)]
pub enum Available {
    /// At least one byte can be read.
    Data,
    /// The producer closed and everything was read.
    Closed,
}

impl Producer {
    /// The producer of the ring with control `ctl` and data `data`; fails if the
    /// indices in shared memory break the ring's invariant.
    pub fn new(
        id: RingId,
        ctl: &RingControl,
        data: &Mirror,
        batch: usize,
        w: Waiting,
    ) -> io::Result<Producer> {
        let head = ctl.prod.0.head.load(Ordering::Relaxed);
        let tail = ctl.cons.0.tail.load(Ordering::Acquire);
        let s = Shared::new(id, ctl, data, batch, w);
        if !s.valid(head, tail) {
            return Err(s.corrupt(head, tail, false));
        }
        Ok(Producer {
            s,
            head,
            published: head,
            cached_tail: tail,
        })
    }

    /// Re-reads the consumer's `tail`, checking it.
    #[inline]
    fn load_tail(&mut self) -> io::Result<()> {
        let tail = self.s.ctl().cons.0.tail.load(Ordering::Acquire);
        if !self.s.valid(self.head, tail) {
            return Err(self.s.corrupt(self.head, tail, false));
        }
        self.cached_tail = tail;
        Ok(())
    }

    /// Ends this end's waits once `flag` is set ([`crate::Endpoint::abandon_when`]).
    pub fn abandon_when(&mut self, flag: Arc<AtomicBool>) {
        self.s.abandon = Some(flag);
    }

    /// Bytes of the ring.
    pub fn capacity(&self) -> usize {
        self.s.capacity as usize
    }

    #[inline(always)]
    fn offset(&self, pos: u64) -> usize {
        (pos & self.s.mask) as usize
    }

    #[inline]
    fn free(&self) -> u64 {
        self.s.capacity - (self.head - self.cached_tail)
    }

    /// Makes everything written so far visible to the consumer, waking it if asleep.
    #[inline]
    pub fn publish(&mut self) {
        if self.head != self.published {
            self.s.ctl().prod.0.head.store(self.head, Ordering::Release);
            self.published = self.head;
            wake(&self.s.ctl().data_wait.0, self.s.mode, self.s.fences);
        }
    }

    /// Waits until `need` bytes are free (`need ≤ capacity`). Publishes first, and
    /// calls `before_wait` (to publish the caller's other ring) if it has to wait.
    #[inline(always)]
    fn wait_free(&mut self, need: u64, before_wait: &mut impl FnMut()) -> io::Result<()> {
        if self.free() >= need {
            return Ok(());
        }
        self.wait_free_slow(need, before_wait)
    }

    /// [`wait_free`](Producer::wait_free) once our copy of `tail` says "full": kept
    /// out of line, so that the path of a send that finds room stays short.
    #[inline(never)]
    fn wait_free_slow(&mut self, need: u64, before_wait: &mut impl FnMut()) -> io::Result<()> {
        self.load_tail()?;
        if self.free() >= need {
            return Ok(());
        }
        self.publish();
        before_wait();
        let ctl = self.s.ctl();
        let (head, cap) = (self.head, self.s.capacity);
        let mut tail = self.cached_tail;
        let ready = || {
            tail = ctl.cons.0.tail.load(Ordering::Acquire);
            // A corrupt tail ends the wait; it is reported below.
            let used = head.wrapping_sub(tail);
            used > cap || cap - used >= need || ctl.cons.0.gone.load(Ordering::Acquire) != 0
        };
        let r = self.s.wait(&ctl.space_wait.0, ready);
        if !self.s.valid(head, tail) {
            return Err(self.s.corrupt(head, tail, false));
        }
        self.cached_tail = tail;
        r.map_err(io::Error::from)?;
        if self.free() < need {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the consumer has gone",
            ));
        }
        Ok(())
    }

    /// Copies `msg` into the ring (in pieces if it is larger than the ring).
    ///
    /// A consumer that has gone is noticed when the ring is full, as with a pipe whose
    /// reader closed once its buffer fills: checking on every send would pull the
    /// consumer's cache line across for every message.
    #[inline]
    pub fn send(&mut self, msg: &[u8], before_wait: &mut impl FnMut()) -> io::Result<()> {
        let len = msg.len() as u64;
        if len <= self.s.piece && len <= self.free() {
            // The common case: the whole message fits the room we know of and one
            // piece, so it is one copy and no wait.
            // SAFETY: as in `send_pieces`, with `k = len`.
            unsafe {
                crate::copy::copy_short(
                    msg.as_ptr(),
                    self.s.data.add(self.offset(self.head)),
                    msg.len(),
                );
            }
            self.head += len;
            if self.head - self.published >= self.s.batch {
                self.publish();
            }
            return Ok(());
        }
        self.send_pieces(msg, before_wait)
    }

    /// [`send`](Producer::send) in pieces of at most a piece, waiting for room; each
    /// piece published once a batch is unpublished.
    #[inline(never)]
    fn send_pieces(&mut self, mut msg: &[u8], before_wait: &mut impl FnMut()) -> io::Result<()> {
        while !msg.is_empty() {
            let want = (msg.len() as u64).min(self.s.capacity / 2).max(1);
            self.wait_free(want, before_wait)?;
            let k = (msg.len() as u64).min(self.free()).min(self.s.piece) as usize;
            // SAFETY: `k ≤ free`, so the `k` bytes at `head` are not readable by the
            // consumer (the protocol gives them to us); thanks to the mirror, `k ≤
            // capacity` bytes from any offset below `capacity` are mapped contiguously.
            unsafe {
                crate::copy::copy(msg.as_ptr(), self.s.data.add(self.offset(self.head)), k);
            }
            self.head += k as u64;
            msg = &msg[k..];
            if self.head - self.published >= self.s.batch {
                self.publish();
            }
        }
        Ok(())
    }

    /// Zero-copy: waits until `n` bytes are free (`n ≤ capacity / 2`, so that no
    /// reservation and peek can wait for each other for ever) and returns them as one
    /// slice, to be filled and then [`commit`](Producer::commit)ted. A consumer that
    /// has gone is noticed when the ring is full, as in [`Producer::send`].
    pub fn reserve(&mut self, n: usize, before_wait: &mut impl FnMut()) -> io::Result<&mut [u8]> {
        if n as u64 > self.s.capacity / 2 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "cannot reserve {n} bytes: at most half the {}-byte ring",
                    self.s.capacity
                ),
            ));
        }
        self.wait_free(n as u64, before_wait)?;
        // SAFETY: the `n ≤ free` bytes at `head` belong to the producer until
        // published, and are contiguous thanks to the mirror; the slice borrows
        // `self` mutably, so no other producer call can touch them meanwhile.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.s.data.add(self.offset(self.head)), n) })
    }

    /// Zero-copy: appends the first `n` bytes of the last reservation.
    #[inline]
    pub fn commit(&mut self, n: usize) {
        assert!(
            n as u64 <= self.free(),
            "commit of {n} bytes exceeds the reservation"
        );
        self.head += n as u64;
        if self.head - self.published >= self.s.batch {
            self.publish();
        }
    }

    /// Publishes and marks the ring closed: the consumer sees end-of-stream after the
    /// bytes already sent.
    pub fn close(&mut self) {
        self.publish();
        let ctl = self.s.ctl();
        ctl.prod.0.closed.store(1, Ordering::Release);
        wake_always(&ctl.data_wait.0);
    }
}

impl Consumer {
    /// The consumer of the ring with control `ctl` and data `data`; fails if the
    /// indices in shared memory break the ring's invariant.
    pub fn new(
        id: RingId,
        ctl: &RingControl,
        data: &Mirror,
        batch: usize,
        w: Waiting,
    ) -> io::Result<Consumer> {
        let tail = ctl.cons.0.tail.load(Ordering::Relaxed);
        let head = ctl.prod.0.head.load(Ordering::Acquire);
        let s = Shared::new(id, ctl, data, batch, w);
        if !s.valid(head, tail) {
            return Err(s.corrupt(head, tail, true));
        }
        Ok(Consumer {
            s,
            tail,
            published: tail,
            cached_head: head,
        })
    }

    /// Ends this end's waits once `flag` is set ([`crate::Endpoint::abandon_when`]).
    pub fn abandon_when(&mut self, flag: Arc<AtomicBool>) {
        self.s.abandon = Some(flag);
    }

    /// Re-reads the producer's `head`, checking it.
    #[inline]
    fn load_head(&mut self) -> io::Result<()> {
        let head = self.s.ctl().prod.0.head.load(Ordering::Acquire);
        if !self.s.valid(head, self.tail) {
            return Err(self.s.corrupt(head, self.tail, true));
        }
        self.cached_head = head;
        Ok(())
    }

    #[inline(always)]
    fn offset(&self, pos: u64) -> usize {
        (pos & self.s.mask) as usize
    }

    /// Makes the space read so far available to the producer, waking it if asleep.
    #[inline]
    pub fn publish(&mut self) {
        if self.tail != self.published {
            self.s.ctl().cons.0.tail.store(self.tail, Ordering::Release);
            self.published = self.tail;
            wake(&self.s.ctl().space_wait.0, self.s.mode, self.s.fences);
        }
    }

    #[inline]
    fn available(&self) -> u64 {
        self.cached_head - self.tail
    }

    /// Waits until at least `need` bytes (`need ≤ capacity / 2`; 0 counts as 1) can be
    /// read or the producer closed.
    ///
    /// Never more than half the ring: a producer waits for at most half the ring free
    /// (see [`Producer::send`]), and a producer waiting for `a` free bytes and a
    /// consumer waiting for `b` readable ones can both wait for ever exactly when
    /// `a + b > capacity` (found by the model check in `tests/ring_model.rs`).
    #[inline(always)]
    fn wait_data(&mut self, need: u64, before_wait: &mut impl FnMut()) -> io::Result<Available> {
        let need = need.max(1);
        if self.available() >= need {
            return Ok(Available::Data);
        }
        self.load_head()?;
        if self.available() >= need {
            return Ok(Available::Data);
        }
        self.publish();
        before_wait();
        let ctl = self.s.ctl();
        let (tail, cap) = (self.tail, self.s.capacity);
        let mut head = self.cached_head;
        let mut closed = false;
        // The line the next byte will be read from: fetched on every turn of the wait,
        // so that it travels together with `head` instead of after it.
        // SAFETY: an offset below `capacity`, inside the mapping.
        let next = unsafe { self.s.data.add(self.offset(tail)) };
        let ready = || {
            prefetch(next);
            // `closed` is stored after the final `head`: read it first, then `head`.
            closed = ctl.prod.0.closed.load(Ordering::Acquire) != 0;
            head = ctl.prod.0.head.load(Ordering::Acquire);
            // A corrupt head ends the wait; it is reported below.
            let avail = head.wrapping_sub(tail);
            avail > cap || avail >= need || closed
        };
        let r = self.s.wait(&ctl.data_wait.0, ready);
        if !self.s.valid(head, tail) {
            return Err(self.s.corrupt(head, tail, true));
        }
        self.cached_head = head;
        match r {
            Ok(()) if self.available() > 0 => Ok(Available::Data),
            Ok(()) => Ok(Available::Closed),
            // A dead producer may still have left published data or a close.
            Err(WaitError::PeerDead(_)) if self.available() > 0 => Ok(Available::Data),
            Err(e) => Err(e.into()),
        }
    }

    /// Fills `buf` completely. `Ok(false)`: the producer closed before the first byte.
    #[inline]
    pub fn recv(&mut self, buf: &mut [u8], before_wait: &mut impl FnMut()) -> io::Result<bool> {
        let len = buf.len() as u64;
        if self.available() < len
            && self.wait_data(len.min(self.s.wait_most), before_wait)? == Available::Closed
        {
            // `Closed` means nothing is left to read.
            return Ok(false);
        }
        if self.available() < len {
            // A message longer than a piece or half the ring, or the end of a stream.
            return self.recv_pieces(buf, before_wait);
        }
        // The common case: the whole message has arrived, one copy.
        // SAFETY: `len ≤ available`: those bytes were published by the producer
        // (Acquire on `head`) and are ours until we publish `tail`; the mirror makes
        // them contiguous.
        unsafe {
            crate::copy::copy_short_out(
                self.s.data.add(self.offset(self.tail)),
                buf.as_mut_ptr(),
                buf.len(),
            );
        }
        self.tail += len;
        if self.tail - self.published >= self.s.batch {
            self.publish();
        }
        Ok(true)
    }

    /// [`recv`](Consumer::recv) piece by piece, as the bytes arrive: each wait is for
    /// the rest of the message, but at most a piece and half the ring.
    #[inline(never)]
    fn recv_pieces(&mut self, buf: &mut [u8], before_wait: &mut impl FnMut()) -> io::Result<bool> {
        let mut filled = 0usize;
        while filled < buf.len() {
            let need = ((buf.len() - filled) as u64).min(self.s.wait_most);
            if self.available() == 0 && self.wait_data(need, before_wait)? == Available::Closed {
                if filled == 0 {
                    return Ok(false);
                }
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "stream ended {filled} bytes into a {}-byte message",
                        buf.len()
                    ),
                ));
            }
            let k = (self.available() as usize).min(buf.len() - filled);
            // SAFETY: `k ≤ available`: those bytes were published by the producer
            // (Acquire on `head`) and are ours until we publish `tail`; the mirror makes
            // them contiguous.
            unsafe {
                crate::copy::copy_out(
                    self.s.data.add(self.offset(self.tail)),
                    buf.as_mut_ptr().add(filled),
                    k,
                );
            }
            self.tail += k as u64;
            filled += k;
            if self.tail - self.published >= self.s.batch {
                self.publish();
            }
        }
        Ok(true)
    }

    /// Zero-copy: waits until `n` bytes (`n ≤ capacity / 2`, see
    /// [`Producer::reserve`]) can be read and returns them as one slice; `None` when the
    /// producer closed first. Then [`release`](Consumer::release) what was used.
    pub fn peek(&mut self, n: usize, before_wait: &mut impl FnMut()) -> io::Result<Option<&[u8]>> {
        if n as u64 > self.s.capacity / 2 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "cannot peek {n} bytes: at most half the {}-byte ring",
                    self.s.capacity
                ),
            ));
        }
        if self.available() < n as u64 {
            // The whole range, not a piece: a wait for less would come back with part of
            // it, and the next wait would find that part and never look at `head` again.
            // So a wait that comes back short means the producer closed (or died).
            let end = self.wait_data(n as u64, before_wait)?;
            if self.available() < n as u64 {
                if end == Available::Closed {
                    return Ok(None);
                }
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "stream ended {} bytes into a {n}-byte peek",
                        self.available()
                    ),
                ));
            }
        }
        // SAFETY: `n ≤ available` published bytes, ours until released; contiguous
        // thanks to the mirror; the slice borrows `self`, so no release meanwhile.
        Ok(Some(unsafe {
            std::slice::from_raw_parts(self.s.data.add(self.offset(self.tail)), n)
        }))
    }

    /// Zero-copy: gives `n` peeked bytes back to the producer.
    #[inline]
    pub fn release(&mut self, n: usize) {
        assert!(
            n as u64 <= self.available(),
            "release of {n} bytes exceeds what was peeked"
        );
        self.tail += n as u64;
        if self.tail - self.published >= self.s.batch {
            self.publish();
        }
    }

    /// Marks the consumer gone: the producer's sends fail from now on.
    pub fn leave(&mut self) {
        self.publish();
        let ctl = self.s.ctl();
        ctl.cons.0.gone.store(1, Ordering::Release);
        wake_always(&ctl.space_wait.0);
    }
}

/// Why an index read from the other side's line of a ring was refused: the invariant
/// `tail ≤ head ≤ tail + capacity` does not hold, so the peer is broken or hostile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// `head` is behind `tail`.
    #[error("ring head {head} is behind its tail {tail}")]
    Behind {
        /// The producer's index.
        head: u64,
        /// The consumer's index.
        tail: u64,
    },
    /// `head` is more than a ring ahead of `tail`.
    #[error("ring head {head} is more than {capacity} bytes ahead of its tail {tail}")]
    Overrun {
        /// The producer's index.
        head: u64,
        /// The consumer's index.
        tail: u64,
        /// Bytes of the ring.
        capacity: u64,
    },
    /// A span longer than the ring.
    #[error("a span of {len} bytes does not fit a {capacity}-byte ring")]
    Span {
        /// Bytes asked for.
        len: u64,
        /// Bytes of the ring.
        capacity: u64,
    },
}

fn check_indices(tail: u64, head: u64, capacity: u64) -> Result<u64, IndexError> {
    let used = head
        .checked_sub(tail)
        .ok_or(IndexError::Behind { head, tail })?;
    if used > capacity {
        return Err(IndexError::Overrun {
            head,
            tail,
            capacity,
        });
    }
    Ok(used)
}

/// Bytes a consumer at `tail` may read, given a producer `head` read from shared
/// memory: `head - tail`, once `tail ≤ head ≤ tail + capacity` is checked.
#[inline]
pub fn readable(tail: u64, head: u64, capacity: u64) -> Result<u64, IndexError> {
    check_indices(tail, head, capacity)
}

/// Bytes a producer at `head` may write, given a consumer `tail` read from shared
/// memory: `capacity - (head - tail)`, once `tail ≤ head ≤ tail + capacity` is checked.
#[inline]
pub fn writable(head: u64, tail: u64, capacity: u64) -> Result<u64, IndexError> {
    Ok(capacity - check_indices(tail, head, capacity)?)
}

/// The byte range of the mirrored data (`2 · capacity` bytes, see
/// [`Mirror`]) holding `len` bytes from stream position `pos`
/// of a ring of `capacity` bytes (a power of two): always inside `0..2 · capacity`,
/// or an error when `len` exceeds the ring.
#[inline]
pub fn span(pos: u64, len: u64, capacity: u64) -> Result<std::ops::Range<usize>, IndexError> {
    debug_assert!(capacity.is_power_of_two());
    if len > capacity {
        return Err(IndexError::Span { len, capacity });
    }
    let start = (pos & (capacity - 1)) as usize;
    Ok(start..start + len as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_from_the_peer_are_checked_against_the_ring() {
        assert_eq!(readable(10, 14, 8), Ok(4));
        assert_eq!(writable(14, 10, 8), Ok(4));
        assert_eq!(readable(10, 18, 8), Ok(8));
        assert_eq!(writable(18, 10, 8), Ok(0));
        assert_eq!(
            readable(10, 9, 8),
            Err(IndexError::Behind { head: 9, tail: 10 })
        );
        assert_eq!(
            writable(19, 10, 8),
            Err(IndexError::Overrun {
                head: 19,
                tail: 10,
                capacity: 8
            })
        );
        // A tail near u64::MAX and a head that wrapped is "behind", not huge.
        assert!(readable(u64::MAX, 3, 8).is_err());
        assert!(writable(0, u64::MAX, 8).is_err());
    }

    #[test]
    fn pieces_are_a_batch_but_at_least_the_floor_and_at_most_the_ring() {
        let mib = 1 << 20;
        assert_eq!(piece(1, 4 * mib), MIN_PIECE);
        assert_eq!(piece(MIN_PIECE - 1, 4 * mib), MIN_PIECE);
        assert_eq!(piece(16 << 10, 4 * mib), 16 << 10);
        assert_eq!(piece(4 * mib, 4 * mib), 4 * mib);
        // Never more than the ring, even when the floor is more.
        assert_eq!(piece(1, MIN_PIECE / 2), MIN_PIECE / 2);
    }

    #[test]
    fn the_batch_help_names_the_floor() {
        let floor = format!("at least {} KiB", MIN_PIECE >> 10);
        assert!(
            super::super::BATCH.help.contains(&floor),
            "{}",
            super::super::BATCH.help
        );
    }

    #[test]
    fn spans_stay_in_the_mirrored_data() {
        assert_eq!(span(13, 8, 8), Ok(5..13));
        assert_eq!(span(u64::MAX, 8, 8), Ok(7..15));
        assert_eq!(
            span(0, 9, 8),
            Err(IndexError::Span {
                len: 9,
                capacity: 8
            })
        );
    }
}
