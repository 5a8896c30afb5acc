//! The state a host link and all its channels share ([`Shared`]), the endpoint
//! address bases, and the try-only lock that makes one receiving thread the rx
//! leader. It sits below `link.rs` (which creates it), `channel.rs` (the tx path) and
//! `demux.rs` (the rx path), which each add their methods.
//!
//! # Invariants
//!
//! * `Shared::base` points into the mapping owned by `Shared::region`, which lives as
//!   long as `Shared`; the nudge guard is its first field, so the host doorbell
//!   leaves the nudger's list before the mapping goes.
//! * A [`TryGuard`] exists only while its lock's flag is held, so at most one thread
//!   reaches the data behind a [`TryLock`] at a time.

use super::doorbell::{WaitEnd, ring_bell};
use super::error::LinkError;
use super::header::{BUF_SIZE, FaultCounters, LinkHeader};
use super::mailbox::Mailbox;
use super::params::Notify;
use super::vring::{Driver, Vring};
use crate::shm::region::Region;
use std::cell::UnsafeCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::Instant;

/// First remote endpoint address: the firmware's echo service (0x120).
pub const REMOTE_EPT_BASE: u32 = 0x120;
/// First host endpoint address (`rpmsg-bind-chardev -s 100`).
pub const HOST_EPT_BASE: u32 = 100;

/// What the host link and every channel share: the mapping, both vrings' drivers,
/// the mailboxes and the host's counters.
pub(super) struct Shared {
    /// First, so it is dropped (off the nudger's list) before the region is unmapped.
    pub(super) _nudge: super::doorbell::Nudge,
    pub(super) region: Mutex<Region>,
    pub(super) base: *mut u8,
    pub(super) num: usize,
    pub(super) buf_offset: u64,
    pub(super) notify: Notify,
    pub(super) tx_ring: Vring,
    pub(super) rx_ring: Vring,
    pub(super) tx: Mutex<Driver>,
    pub(super) rx: TryLock<Driver>,
    pub(super) mailboxes: Box<[Mailbox]>,
    pub(super) remote_pid: AtomicI32,
    /// `remote_pid`, or 0 when the remote is a thread of this process.
    pub(super) watch_pid: AtomicI32,
    pub(super) faults: FaultCounters,
    pub(super) dropped: AtomicU64,
    pub(super) kicks: AtomicU64,
    /// Whether the rx leader stops at a full mailbox instead of dropping the reply.
    pub(super) backpressure: AtomicBool,
}

// SAFETY: `base` points into the region mapping owned by `region`, which lives as
// long as `Shared`; shared-memory state is reached through atomics, the tx driver
// through a mutex, the rx driver through the try-lock, and mailbox slots under the
// SPSC protocol documented on `Mailbox`.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

impl Shared {
    #[inline]
    pub(super) fn hdr(&self) -> &LinkHeader {
        // SAFETY: the header lies at the start of the mapped area, which lives as long
        // as `self`; it was initialised by `HostLink::create`.
        unsafe { &*self.base.cast::<LinkHeader>() }
    }

    /// Address of pool buffer `i` (tx: 0..num, rx: num..2·num).
    #[inline]
    pub(super) fn buf(&self, i: usize) -> *mut u8 {
        debug_assert!(i < 2 * self.num);
        // SAFETY: the pool holds 2·num buffers inside the mapped area (layout checked
        // at creation).
        unsafe { self.base.add(self.buf_offset as usize + i * BUF_SIZE) }
    }

    #[inline]
    pub(super) fn addr(&self, i: usize) -> u64 {
        self.buf_offset + (i * BUF_SIZE) as u64
    }

    /// The process to watch while waiting (0: none).
    #[inline]
    pub(super) fn peer(&self) -> i32 {
        self.watch_pid.load(Ordering::Relaxed)
    }

    #[inline]
    pub(super) fn kick(&self) {
        self.kicks.fetch_add(1, Ordering::Relaxed);
        ring_bell(&self.hdr().remote_bell.0);
    }

    pub(super) fn wait_err(&self, e: WaitEnd, what: &'static str, since: Instant) -> LinkError {
        match e {
            WaitEnd::PeerGone(pid) => LinkError::PeerGone {
                role: "remote",
                pid,
            },
            WaitEnd::Timeout => LinkError::Timeout {
                what,
                secs: since.elapsed().as_secs_f64(),
            },
        }
    }
}

/// A try-only lock: the rx leader role.
pub(super) struct TryLock<T> {
    locked: AtomicBool,
    data: UnsafeCell<T>,
}

pub(super) struct TryGuard<'a, T>(&'a TryLock<T>);

impl<T> TryLock<T> {
    /// An unlocked lock around `data`.
    pub(super) fn new(data: T) -> TryLock<T> {
        TryLock {
            locked: AtomicBool::new(false),
            data: UnsafeCell::new(data),
        }
    }

    pub(super) fn try_lock(&self) -> Option<TryGuard<'_, T>> {
        (!self.locked.load(Ordering::Relaxed)
            && self
                .locked
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok())
        .then(|| TryGuard(self))
    }

    pub(super) fn is_locked(&self) -> bool {
        self.locked.load(Ordering::Relaxed)
    }
}

impl<T> std::ops::Deref for TryGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while `locked` is held by us.
        unsafe { &*self.0.data.get() }
    }
}

impl<T> std::ops::DerefMut for TryGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as above, and the guard is unique.
        unsafe { &mut *self.0.data.get() }
    }
}

impl<T> Drop for TryGuard<'_, T> {
    fn drop(&mut self) {
        self.0.locked.store(false, Ordering::Release);
    }
}
