//! One channel of the host: a host endpoint (address `100 + i`) paired with remote
//! endpoint `0x120 + i`, owned by the thread that uses it, and the tx path every
//! channel shares.
//!
//! # Sharing the tx vring
//!
//! Senders share the tx vring under one mutex around the virtqueue, as Linux's
//! `virtio_rpmsg_bus` does (`tx_lock`). The critical section is short (take a free
//! descriptor or reclaim used ones, fill it, publish the avail idx); the kick happens
//! after the unlock. Per-channel descriptor slots would avoid the lock but give each
//! channel a fixed share of 256 entries and still need a lock-free multi-producer
//! avail ring, whose index is a single shared word anyway.
//!
//! # Invariants
//!
//! * The tx [`Driver`] is only reached under `Shared::tx`: a descriptor taken from its
//!   free list belongs to the taker (copy mode, or a [`TxBuf`]) until it is published,
//!   and to the remote after that until it comes back on the used ring.
//! * Tx descriptor `i` always describes tx buffer `i` of the pool, so a descriptor
//!   index is all a [`TxBuf`] needs to find its buffer again.
//! * Every message is one buffer: a 16-byte header and at most 496 payload bytes.
//! * Receiving goes through the demultiplexer (`demux.rs`): a channel reads only its
//!   own mailbox, and takes the rx role when nobody holds it.

use super::doorbell::wait_bell;
use super::error::LinkError;
use super::header::{Fault, MAX_PAYLOAD, MSG_HEADER_LEN, MsgHeader};
use super::params::{Buffers, Notify};
use super::shared::{HOST_EPT_BASE, REMOTE_EPT_BASE, Shared};
use super::vring::{Driver, need_event};
use std::sync::atomic::{Ordering, fence};
use std::sync::{Arc, MutexGuard};
use std::time::Instant;

impl Shared {
    fn lock_tx(&self) -> MutexGuard<'_, Driver> {
        self.tx.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A free tx descriptor, reclaiming returned ones and waiting if none is free.
    fn tx_buffer(&self, tx: &mut Driver, deadline: Option<Instant>) -> Result<u16, LinkError> {
        let start = Instant::now();
        loop {
            if let Some(id) = tx.take_free() {
                return Ok(id);
            }
            loop {
                match tx.get_used() {
                    Ok(Some((id, _))) => tx.put_free(id),
                    Ok(None) => break,
                    Err(Fault::BadIndex) => {
                        self.faults.count(Fault::BadIndex);
                        return Err(LinkError::Corrupt {
                            ring: "tx",
                            fault: Fault::BadIndex,
                        });
                    }
                    Err(f) => self.faults.count(f),
                }
            }
            if let Some(id) = tx.take_free() {
                return Ok(id);
            }
            let hdr = self.hdr();
            wait_bell(
                &hdr.host_bell.0,
                self.notify,
                self.peer(),
                deadline,
                || tx.arm_used_event(),
                || tx.used_pending() || hdr.stop.0.load(Ordering::Relaxed) != 0,
            )
            .map_err(|e| self.wait_err(e, "free tx buffer", start))?;
            if hdr.stop.0.load(Ordering::Relaxed) != 0 {
                return Err(LinkError::Stopped);
            }
        }
    }

    /// Publishes descriptor `id` holding `len` bytes and notifies the remote.
    #[inline]
    fn post_tx(&self, mut tx: MutexGuard<'_, Driver>, id: u16, len: usize) {
        tx.add(id, self.addr(usize::from(id)), len as u32, 0);
        let (old, new) = tx.publish();
        drop(tx);
        match self.notify {
            Notify::Kick => self.kick(),
            Notify::EventIdx => {
                fence(Ordering::SeqCst);
                if need_event(self.tx_ring.avail_event().load(Ordering::Relaxed), new, old) {
                    self.kick();
                }
            }
            Notify::Poll => {}
        }
    }
}

/// A transmit buffer reserved for in-place writing ([`Buffers::ZeroCopy`]).
#[derive(Debug)]
#[must_use = "a reserved buffer is only given back by sending it"]
pub struct TxBuf {
    id: u16,
    payload: *mut u8,
}

impl TxBuf {
    /// The 496 payload bytes, written in place in shared memory.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        // SAFETY: the buffer is reserved for us (not offered to the remote) and its
        // payload area is MAX_PAYLOAD bytes inside the mapping, which the channel that
        // made this TxBuf keeps alive.
        unsafe { std::slice::from_raw_parts_mut(self.payload, MAX_PAYLOAD) }
    }
}

/// One host endpoint (address `100 + i`) paired with remote endpoint `0x120 + i`.
pub struct Channel {
    shared: Arc<Shared>,
    index: usize,
    buffers: Buffers,
}

impl std::fmt::Debug for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channel")
            .field("index", &self.index)
            .finish()
    }
}

impl Channel {
    /// Channel `index` of the link, copying into buffers.
    pub(super) fn new(shared: Arc<Shared>, index: usize) -> Channel {
        Channel {
            shared,
            index,
            buffers: Buffers::Copy,
        }
    }

    /// This channel's number.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The local (host) address.
    pub fn local_addr(&self) -> u32 {
        HOST_EPT_BASE + self.index as u32
    }

    /// The remote endpoint's address.
    pub fn remote_addr(&self) -> u32 {
        REMOTE_EPT_BASE + self.index as u32
    }

    /// Sets how [`Channel::send_with`] fills buffers.
    pub fn set_buffers(&mut self, b: Buffers) {
        self.buffers = b;
    }

    /// Sends `payload` (≤ 496 bytes) by copying it into a buffer.
    pub fn send(&mut self, payload: &[u8], deadline: Option<Instant>) -> Result<(), LinkError> {
        let h = MsgHeader {
            src: self.local_addr(),
            dst: self.remote_addr(),
            reserved: 0,
            len: 0,
            flags: 0,
        };
        self.send_with_header(h, payload, deadline)
    }

    /// Sends `len` payload bytes produced by `fill`, by the configured [`Buffers`]
    /// mode: copy (fill a caller buffer, then copy) or zero-copy (fill in place).
    #[inline]
    pub fn send_with(
        &mut self,
        len: usize,
        scratch: &mut [u8],
        fill: impl FnOnce(&mut [u8]),
        deadline: Option<Instant>,
    ) -> Result<(), LinkError> {
        match self.buffers {
            Buffers::Copy => {
                let msg = &mut scratch[..len];
                fill(msg);
                self.send(msg, deadline)
            }
            Buffers::ZeroCopy => {
                let mut b = self.reserve(deadline)?;
                fill(&mut b.payload_mut()[..len]);
                self.send_reserved(b, len)
            }
        }
    }

    /// Sends a hand-made header and payload (tests of the remote's validation use it
    /// to send malformed messages; `len` is written as given in `h`, unless 0).
    pub fn send_with_header(
        &mut self,
        mut h: MsgHeader,
        payload: &[u8],
        deadline: Option<Instant>,
    ) -> Result<(), LinkError> {
        if payload.len() > MAX_PAYLOAD {
            return Err(LinkError::TooLong(payload.len()));
        }
        if h.len == 0 {
            h.len = payload.len() as u16;
        }
        let s = &*self.shared;
        let mut tx = s.lock_tx();
        let id = s.tx_buffer(&mut tx, deadline)?;
        let buf = s.buf(usize::from(id));
        // SAFETY: descriptor `id` is free, so its buffer is ours; header and payload
        // fit its 512 bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(h.encode().as_ptr(), buf, MSG_HEADER_LEN);
            std::ptr::copy_nonoverlapping(payload.as_ptr(), buf.add(MSG_HEADER_LEN), payload.len());
        }
        s.post_tx(tx, id, MSG_HEADER_LEN + payload.len());
        Ok(())
    }

    /// Reserves a transmit buffer to fill in place.
    pub fn reserve(&mut self, deadline: Option<Instant>) -> Result<TxBuf, LinkError> {
        let s = &*self.shared;
        let mut tx = s.lock_tx();
        let id = s.tx_buffer(&mut tx, deadline)?;
        // SAFETY: the payload starts 16 bytes into the reserved buffer.
        let payload = unsafe { s.buf(usize::from(id)).add(MSG_HEADER_LEN) };
        Ok(TxBuf { id, payload })
    }

    /// Sends the first `len` payload bytes of a reserved buffer.
    pub fn send_reserved(&mut self, b: TxBuf, len: usize) -> Result<(), LinkError> {
        if len > MAX_PAYLOAD {
            return Err(LinkError::TooLong(len));
        }
        let h = MsgHeader {
            src: self.local_addr(),
            dst: self.remote_addr(),
            reserved: 0,
            len: len as u16,
            flags: 0,
        };
        let s = &*self.shared;
        // SAFETY: the header area of our reserved buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(
                h.encode().as_ptr(),
                b.payload.sub(MSG_HEADER_LEN),
                MSG_HEADER_LEN,
            )
        };
        let tx = s.lock_tx();
        s.post_tx(tx, b.id, MSG_HEADER_LEN + len);
        Ok(())
    }

    /// Receives the next message for this channel into `out` (bytes beyond
    /// `out.len()` are cut); returns its payload length.
    pub fn recv(&mut self, out: &mut [u8], deadline: Option<Instant>) -> Result<usize, LinkError> {
        let (n, _) = self.shared.recv(self.index, out, deadline)?;
        Ok(n.min(out.len()))
    }

    /// Receives the next message for this channel and lets `read` read its payload in
    /// place, in the channel's mailbox (where the rx demultiplexer put it, see
    /// `demux.rs`), without copying it out.
    #[inline]
    pub fn recv_in_place<R>(
        &mut self,
        deadline: Option<Instant>,
        read: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, LinkError> {
        self.shared
            .recv_in_place(self.index, deadline, |payload, _| read(payload))
    }

    /// Like [`Channel::recv`], but returns the message's whole payload length (which
    /// may exceed `out.len()`; the excess is cut) and its header flags.
    pub fn recv_message(
        &mut self,
        out: &mut [u8],
        deadline: Option<Instant>,
    ) -> Result<(usize, u16), LinkError> {
        self.shared.recv(self.index, out, deadline)
    }
}
