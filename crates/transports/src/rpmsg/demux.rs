//! Sorting replies to channels: the rx side of the host, where every channel's
//! replies arrive on the one used ring of the rx vring.
//!
//! A dedicated dispatcher thread would cost a second wake-up per message (remote →
//! dispatcher → channel) and, on two CPUs, a third runnable thread. Instead the
//! channel threads take turns as the **leader** (leader/followers): a thread waiting
//! for its reply that finds the rx role free takes it, drains the used ring, copies
//! each message into its channel's mailbox (`mailbox.rs`), re-offers the buffers,
//! wakes the owners of the messages, and sleeps on the host doorbell until its own
//! reply comes. The others sleep on their own mailbox futex. When the leader leaves
//! with its reply it wakes one waiting follower to take over. With one channel the
//! thread is always the leader and a round trip costs exactly one wake-up in each
//! direction; with many channels one remote kick delivers every reply that is ready.
//!
//! # Invariants
//!
//! * At most one leader: the rx [`Driver`] is reached only through the [`TryLock`]
//!   that is the rx role, so the used ring has one consumer and every mailbox one
//!   producer at a time.
//! * Every rx buffer the leader takes from the used ring is re-offered before it
//!   publishes, whether its message was delivered, dropped (full mailbox, counted in
//!   `dropped`) or rejected (counted as a fault); only a corrupt used index
//!   ([`Fault::BadIndex`]) ends the drain with an error.
//! * The hand-over and the deposits use the Dekker pattern: a follower announces
//!   itself (`waiting`), fences, and re-checks its mailbox and the leader flag before
//!   sleeping; a depositor or leaving leader publishes, fences and then reads
//!   `waiting`. Every sleep also ends within 10 ms (doorbells are nudged, mailbox
//!   sleeps time out), so a missed hand-over would cost time, not a hang.

use super::doorbell::{WaitEnd, wait_bell};
use super::error::LinkError;
use super::header::{BUF_SIZE, Fault, MSG_HEADER_LEN, MsgHeader};
use super::mailbox::Mailbox;
use super::params::Notify;
use super::shared::{HOST_EPT_BASE, Shared};
use super::vring::{DESC_F_WRITE, Driver, need_event};
use std::sync::atomic::{Ordering, fence};
use std::time::{Duration, Instant};

impl Shared {
    /// Receives the next message for channel `me` into `out` (bytes beyond
    /// `out.len()` are cut), as leader or follower; returns its whole payload length
    /// and its header flags.
    pub(super) fn recv(
        &self,
        me: usize,
        out: &mut [u8],
        deadline: Option<Instant>,
    ) -> Result<(usize, u16), LinkError> {
        self.recv_with(me, deadline, |mb| mb.pop(out))
    }

    /// Receives the next message for channel `me` in place: `read` gets its payload
    /// and header flags where they lie in the channel's mailbox.
    pub(super) fn recv_in_place<R>(
        &self,
        me: usize,
        deadline: Option<Instant>,
        read: impl FnOnce(&[u8], u16) -> R,
    ) -> Result<R, LinkError> {
        let mut read = Some(read);
        self.recv_with(me, deadline, |mb| {
            if !mb.has() {
                return None;
            }
            mb.pop_with(read.take().expect("read once"))
        })
    }

    /// The receive loop, as leader or follower; `pop` takes a message out of the
    /// channel's mailbox if there is one.
    #[inline]
    fn recv_with<R>(
        &self,
        me: usize,
        deadline: Option<Instant>,
        mut pop: impl FnMut(&Mailbox) -> Option<R>,
    ) -> Result<R, LinkError> {
        let mb = &self.mailboxes[me];
        let start = Instant::now();
        loop {
            if let Some(got) = pop(mb) {
                self.hand_over(me);
                return Ok(got);
            }
            if let Some(mut rx) = self.rx.try_lock() {
                // Leader: drain, and sleep on the doorbell until our reply is in.
                let hdr = self.hdr();
                let r = loop {
                    if let Err(e) = self.drain(&mut rx, me) {
                        break Err(e);
                    }
                    if mb.has() {
                        break Ok(());
                    }
                    if let Err(e) = wait_bell(
                        &hdr.host_bell.0,
                        self.notify,
                        self.peer(),
                        deadline,
                        || rx.arm_used_event(),
                        || rx.used_pending() || hdr.stop.0.load(Ordering::Relaxed) != 0,
                    ) {
                        break Err(self.wait_err(e, "reply", start));
                    }
                    // Acquire: a remote that hung up published its last messages
                    // before it stored `stop`, so they are seen as pending here.
                    if hdr.stop.0.load(Ordering::Acquire) != 0 && !rx.used_pending() {
                        break Err(LinkError::Stopped);
                    }
                };
                drop(rx);
                if let Err(e) = r {
                    self.hand_over(me);
                    return Err(e);
                }
                continue;
            }
            // Follower: sleep until a message arrives or the leader role is free.
            let ready = || mb.has() || !self.rx.is_locked();
            let r = if self.notify == Notify::Poll {
                follower_poll(self.peer(), deadline, ready)
            } else {
                mb.sleep(self.peer(), deadline, ready)
            };
            if let Err(e) = r
                && !mb.has()
            {
                return Err(self.wait_err(e, "reply", start));
            }
        }
    }

    /// The leader's work: takes every used rx buffer, delivers it, re-offers it. With
    /// back-pressure on, it stops while a mailbox is full instead of dropping: the
    /// rest stays on the used ring (and the remote runs out of rx buffers) until the
    /// mailbox's owner has read.
    fn drain(&self, rx: &mut Driver, me: usize) -> Result<(), LinkError> {
        let mut reposted = false;
        let hold = self.backpressure.load(Ordering::Relaxed);
        loop {
            if hold && self.mailboxes.iter().any(|m| m.is_full()) {
                break;
            }
            let (id, len) = match rx.get_used() {
                Ok(Some(e)) => e,
                Ok(None) => break,
                Err(Fault::BadIndex) => {
                    self.faults.count(Fault::BadIndex);
                    return Err(LinkError::Corrupt {
                        ring: "rx",
                        fault: Fault::BadIndex,
                    });
                }
                Err(f) => {
                    self.faults.count(f);
                    continue;
                }
            };
            let pool = self.num + usize::from(id);
            let buf = self.buf(pool);
            let mut raw = [0u8; MSG_HEADER_LEN];
            // SAFETY: `buf` is a 512-byte rx buffer the remote has returned to us.
            unsafe { std::ptr::copy_nonoverlapping(buf, raw.as_mut_ptr(), MSG_HEADER_LEN) };
            let h = MsgHeader::decode(&raw);
            let delivered = h.check(len as usize).and_then(|n| {
                let ch = h.dst.wrapping_sub(HOST_EPT_BASE) as usize;
                if ch < self.mailboxes.len() {
                    Ok((ch, n))
                } else {
                    Err(Fault::UnknownDst)
                }
            });
            match delivered {
                Ok((ch, n)) => {
                    let mb = &self.mailboxes[ch];
                    // SAFETY: the payload follows the header inside the buffer (n ≤ 496).
                    if mb.push(unsafe { buf.add(MSG_HEADER_LEN) }, n, h.flags) {
                        if ch != me {
                            mb.wake_if_waiting();
                        }
                    } else {
                        self.dropped.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Err(f) => self.faults.count(f),
            }
            rx.add(id, self.addr(pool), BUF_SIZE as u32, DESC_F_WRITE);
            reposted = true;
        }
        if reposted {
            let (old, new) = rx.publish();
            if self.notify != Notify::Poll {
                fence(Ordering::SeqCst);
                if need_event(self.rx_ring.avail_event().load(Ordering::Relaxed), new, old) {
                    self.kick();
                }
            }
        }
        Ok(())
    }

    /// A thread leaving `recv` while nobody leads wakes one waiting follower.
    #[inline]
    fn hand_over(&self, me: usize) {
        if self.mailboxes.len() == 1 {
            return;
        }
        fence(Ordering::SeqCst);
        if self.rx.is_locked() {
            return;
        }
        for (i, mb) in self.mailboxes.iter().enumerate() {
            if i != me && mb.is_waiting() {
                mb.wake();
                return;
            }
        }
    }
}

/// A follower's wait when polling: it has nothing to do until the leader delivers,
/// so it yields the CPU on every check instead of spinning (with more polling
/// threads than CPUs, spinning followers would starve the leader and the remote).
fn follower_poll(
    peer: i32,
    deadline: Option<Instant>,
    ready: impl Fn() -> bool,
) -> Result<(), WaitEnd> {
    let mut last_check = Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return Ok(());
            }
            std::thread::yield_now();
        }
        let now = Instant::now();
        if now.duration_since(last_check) >= Duration::from_millis(1) {
            last_check = now;
            if peer != 0 && !crate::shm::wait::process_alive(peer) {
                return Err(WaitEnd::PeerGone(peer));
            }
        }
        if deadline.is_some_and(|d| now >= d) {
            return Err(WaitEnd::Timeout);
        }
    }
}
