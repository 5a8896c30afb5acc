//! A channel's mailbox: the small queue the rx leader copies that channel's replies
//! into, and the futex word its owner sleeps on while it waits for them.
//!
//! # Invariants
//!
//! * Single producer: only the thread holding the rx leader role (`demux.rs`) pushes.
//!   There is one leader at a time, and taking the role (Acquire) orders a new leader
//!   after the previous one's writes.
//! * Single consumer: only the channel's own thread pops (a `Channel` is owned by one
//!   thread and receives through `&mut self`).
//! * `head` and `tail` are free-running counters; the slots in `[tail, head)` belong
//!   to the consumer, the others to the producer, and `head - tail` never exceeds
//!   [`MAILBOX_SLOTS`]. A push to a full mailbox fails (the caller drops the message
//!   and counts it); it never overwrites.
//! * Wake-ups follow the Dekker pattern: the owner sets `waiting`, fences (SeqCst) and
//!   re-checks before sleeping; a waker publishes, fences and then reads `waiting`.
//!   Every sleep also ends within 10 ms, so a missed wake-up costs time, not a hang.

use super::doorbell::WaitEnd;
use super::header::MAX_PAYLOAD;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, Ordering, fence};
use std::time::Instant;

/// Messages a channel's mailbox holds before further ones are dropped and counted.
const MAILBOX_SLOTS: usize = 4;

struct Slot {
    len: u16,
    flags: u16,
    data: [u8; MAX_PAYLOAD],
}

/// A channel's queue of received messages: filled by the rx leader, emptied by the
/// channel's thread.
#[repr(C, align(128))]
pub(super) struct Mailbox {
    head: AtomicU32,
    tail: AtomicU32,
    futex: AtomicU32,
    waiting: AtomicU32,
    slots: [UnsafeCell<Slot>; MAILBOX_SLOTS],
}

impl Mailbox {
    pub(super) fn new() -> Mailbox {
        Mailbox {
            head: AtomicU32::new(0),
            tail: AtomicU32::new(0),
            futex: AtomicU32::new(0),
            waiting: AtomicU32::new(0),
            slots: std::array::from_fn(|_| {
                UnsafeCell::new(Slot {
                    len: 0,
                    flags: 0,
                    data: [0; MAX_PAYLOAD],
                })
            }),
        }
    }

    #[inline]
    pub(super) fn has(&self) -> bool {
        self.head.load(Ordering::Acquire) != self.tail.load(Ordering::Relaxed)
    }

    /// Whether a push would fail (every slot holds an unread message).
    #[inline]
    pub(super) fn is_full(&self) -> bool {
        self.head
            .load(Ordering::Relaxed)
            .wrapping_sub(self.tail.load(Ordering::Acquire)) as usize
            >= MAILBOX_SLOTS
    }

    /// Producer side; the caller holds the rx role (one producer at a time). `flags`
    /// are the message header's flags, handed to the consumer with the payload.
    #[inline]
    pub(super) fn push(&self, src: *const u8, len: usize, flags: u16) -> bool {
        let head = self.head.load(Ordering::Relaxed);
        if head.wrapping_sub(self.tail.load(Ordering::Acquire)) as usize >= MAILBOX_SLOTS {
            return false;
        }
        let slot = self.slots[head as usize % MAILBOX_SLOTS].get();
        // SAFETY: the slot at `head` is outside [tail, head), so the consumer does not
        // read it; only the rx leader writes slots and there is one leader at a time
        // (its lock's Acquire orders us after the previous leader's writes). `src`
        // points to `len ≤ MAX_PAYLOAD` readable bytes of a buffer the leader owns.
        unsafe {
            (*slot).len = len as u16;
            (*slot).flags = flags;
            std::ptr::copy_nonoverlapping(src, (*slot).data.as_mut_ptr(), len);
        }
        self.head.store(head.wrapping_add(1), Ordering::Release);
        true
    }

    /// Consumer side (the channel's own thread): copies at most `out.len()` bytes and
    /// returns the message's whole payload length and its header flags.
    #[inline]
    pub(super) fn pop(&self, out: &mut [u8]) -> Option<(usize, u16)> {
        self.pop_with(|payload, flags| {
            let n = payload.len().min(out.len());
            out[..n].copy_from_slice(&payload[..n]);
            (payload.len(), flags)
        })
    }

    /// Consumer side, in place: lets `read` read the next message's payload and
    /// header flags where they lie, then frees the slot.
    #[inline]
    pub(super) fn pop_with<R>(&self, read: impl FnOnce(&[u8], u16) -> R) -> Option<R> {
        let tail = self.tail.load(Ordering::Relaxed);
        if self.head.load(Ordering::Acquire) == tail {
            return None;
        }
        let slot = self.slots[tail as usize % MAILBOX_SLOTS].get();
        // SAFETY: the slot at `tail` lies in [tail, head): published by the producer
        // (Acquire above) and not rewritten until we advance `tail`, after `read`.
        let got = unsafe {
            let len = usize::from((*slot).len).min(MAX_PAYLOAD);
            read(&(&(*slot).data)[..len], (*slot).flags)
        };
        self.tail.store(tail.wrapping_add(1), Ordering::Release);
        Some(got)
    }

    /// Whether the owner announced that it sleeps (or is about to); the caller
    /// fenced after publishing.
    #[inline]
    pub(super) fn is_waiting(&self) -> bool {
        self.waiting.load(Ordering::Relaxed) != 0
    }

    /// Wakes the owner: bump the word, wake one sleeper.
    #[inline]
    pub(super) fn wake(&self) {
        self.futex.fetch_add(1, Ordering::Release);
        let _ = rustix::thread::futex::wake(&self.futex, rustix::thread::futex::Flags::PRIVATE, 1);
    }

    /// Wakes the owner if it sleeps (after a publish by the caller).
    #[inline]
    pub(super) fn wake_if_waiting(&self) {
        fence(Ordering::SeqCst);
        if self.is_waiting() {
            self.wake();
        }
    }

    /// The owner's sleep on this mailbox's futex until `ready()`, each sleep bounded
    /// by a 10 ms timeout after which `peer` (0: not watched) and `deadline` are
    /// checked.
    pub(super) fn sleep(
        &self,
        peer: i32,
        deadline: Option<Instant>,
        ready: impl Fn() -> bool,
    ) -> Result<(), WaitEnd> {
        let slice = rustix::thread::futex::Timespec {
            tv_sec: 0,
            tv_nsec: 10_000_000,
        };
        loop {
            let word = self.futex.load(Ordering::Acquire);
            self.waiting.store(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if ready() {
                self.waiting.store(0, Ordering::Relaxed);
                return Ok(());
            }
            let slept = rustix::thread::futex::wait(
                &self.futex,
                rustix::thread::futex::Flags::PRIVATE,
                word,
                Some(&slice),
            );
            self.waiting.store(0, Ordering::Relaxed);
            if ready() {
                return Ok(());
            }
            if slept == Err(rustix::io::Errno::TIMEDOUT) {
                if peer != 0 && !crate::shm::wait::process_alive(peer) {
                    return Err(WaitEnd::PeerGone(peer));
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Err(WaitEnd::Timeout);
                }
            }
        }
    }
}
