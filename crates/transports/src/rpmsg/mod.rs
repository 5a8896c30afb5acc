//! RPMsg over shared memory: a "host" and a "remote" exchange 512-byte buffers through
//! two virtio split vrings, one per direction, like Linux's `virtio_rpmsg_bus` talking
//! to rpmsg-lite firmware on a DSP — with a futex standing in for the mailbox
//! interrupt.
//!
//! * [`header`]: the 16-byte RPMsg message header and the link header that both sides
//!   validate (magic, version, vring size, buffer size and count, offsets, pids).
//! * [`vring`]: the split virtqueue, its driver (host) and device (remote) roles, and
//!   the validation of every index read from shared memory.
//! * `fault.rs` (re-exported from [`header`]): the kinds of rejected input and their
//!   counters; the module below both `header` and `vring`, so that `header` depends
//!   on `vring` and never the other way round.
//! * [`link`]: the host side — [`HostLink`] creates the link and hands out channels
//!   (one endpoint each) multiplexed over the one vring pair. Its parts: `channel.rs`
//!   (a channel's endpoint and the tx path the channels share under one lock),
//!   `demux.rs` (the rx leader/follower scheme sorting replies to channels) and
//!   `mailbox.rs` (each channel's queue of received replies and its futex).
//! * [`remote`]: the remote side — one service loop dispatching by destination
//!   address to per-endpoint services (`echo`, `echo-hold`), or single messages
//!   received and sent one at a time ([`RemoteLink::recv`], [`RemoteLink::send`]).
//! * `transport.rs`: [`Rpmsg`], the link as a [`Transport`](crate::Transport) (a
//!   one-channel host link and a per-message remote, 496-byte messages, end of
//!   stream as the [`header::MSG_F_END`] flag); it passes the conformance suite.
//!
//! # The shared area
//!
//! The link lives in the data area of an [`shm::region::Region`](crate::shm::region):
//! the region supplies the name, the creator/attacher handshake, unlinking on attach
//! and the sweep of stale names; the RPMsg link header follows at the start of its
//! first data area (see [`header`] for the layout). The vrings are in the "tx"
//! (host → remote) and "rx" (remote → host) directions as seen from the host, which is
//! the virtio driver of both: it offers full buffers on tx and empty buffers on rx.
//!
//! # Notification
//!
//! [`Notify::Kick`] rings the other side's doorbell (bump a futex word, `FUTEX_WAKE`)
//! after every message, as the mailbox interrupt of the original does;
//! [`Notify::EventIdx`] uses virtio's event index so that a side only rings when the
//! other is about to sleep; [`Notify::Poll`] never rings and both sides busy-poll.
//! Buffer returns (tx used) and refills (rx avail) always use event-index
//! suppression (except when polling), as Linux disables the tx-complete callback
//! unless a sender is waiting for a buffer.
//!
//! Every wait ends within 10 ms of the other process dying: doorbell sleeps are
//! unbounded futex waits (a timeout's hrtimer is expensive on a VM) that a per-process
//! nudger thread wakes every 10 ms (`Nudge`); mailbox sleeps carry a 10 ms timeout.
//! After such a wake-up the sleeper re-checks that the other process is alive
//! (`kill(pid, 0)` and `/proc/<pid>/stat`), so a killed remote is reported, never
//! waited for.

mod channel;
mod demux;
mod fault;
pub mod header;
pub mod link;
mod mailbox;
pub mod remote;
mod shared;
mod transport;
pub mod vring;

pub use link::{Channel, HostLink, LinkConfig, TxBuf};
pub use remote::{RemoteLink, RemoteMessage, RemoteStats};
pub use transport::{Rpmsg, RpmsgEndpoint, RpmsgListener};

use crate::shm::wait::WaitLine;
use std::ops::ControlFlow;
use std::sync::atomic::{Ordering, fence};
use std::time::{Duration, Instant};

/// How a side tells the other that it published something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Notify {
    /// A kick per message (the original's mailbox interrupt).
    Kick,
    /// Kicks suppressed by virtio's event index: only when the other side sleeps.
    EventIdx,
    /// No kicks; both sides busy-poll.
    Poll,
}

xferbench_params::choices!(Notify {
    Kick => "kick": "a kick (futex wake) per message, like the original's mailbox interrupt",
    EventIdx => "event-idx": "kicks only when the other side sleeps (virtio's event index)",
    Poll => "poll": "no kicks: both sides busy-poll",
});

/// What wakes an RPMsg side, by `notify`: polling spins on the vring, kicks wake it.
pub const WAKEUP: crate::WakeupRule = crate::WakeupRule::ByChoice {
    param: NOTIFY,
    cases: &[
        ("poll", crate::Wakeup::CacheLine),
        ("kick", crate::Wakeup::Futex),
        ("event-idx", crate::Wakeup::Futex),
    ],
};

/// Where an RPMsg link's sides run: one host (the link is emulated in shared memory).
pub const HOSTS: crate::Hosts = crate::Hosts::One(std::borrow::Cow::Borrowed(
    "emulates an RPMsg link in shared memory on one host",
));

/// `notify`: how each side learns of new buffers.
pub const NOTIFY: crate::ParamDef = crate::ParamDef::choice(
    "notify",
    <Notify as xferbench_params::Choices>::CHOICES,
    "kick",
    "how each side learns of new buffers: a kick per message, kicks suppressed by the event index, or polling",
);

impl Notify {
    /// The code stored in the link header.
    pub fn code(self) -> u32 {
        match self {
            Notify::Kick => 1,
            Notify::EventIdx => 2,
            Notify::Poll => 3,
        }
    }

    /// The mode of a header code.
    pub fn from_code(c: u32) -> Option<Notify> {
        <Notify as xferbench_params::Choices>::ALL
            .iter()
            .copied()
            .find(|n| n.code() == c)
    }
}

/// How the host fills transmit buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Buffers {
    /// Copy the caller's bytes into a 512-byte buffer (`rpmsg_send`, the original).
    Copy,
    /// Reserve a buffer, write the payload in place, send it (`rpmsg_lite_alloc_tx_buffer`
    /// + `rpmsg_lite_send_nocopy`).
    ZeroCopy,
}

xferbench_params::choices!(Buffers {
    Copy => "copy": "copy each packet into a 512-byte vring buffer (rpmsg_send)",
    ZeroCopy => "zero-copy": "write each packet in place in a reserved buffer (rpmsg_lite_send_nocopy)",
});

/// `buffers`: how the host fills transmit buffers.
pub const BUFFERS: crate::ParamDef = crate::ParamDef::choice(
    "buffers",
    <Buffers as xferbench_params::Choices>::CHOICES,
    "copy",
    "how the host fills tx buffers: copy each packet into a vring buffer (rpmsg_send), or write it in place (rpmsg_lite_send_nocopy)",
);

/// What the remote's endpoints do with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Service {
    /// Reply at once with the same payload (the firmware's ISR echo).
    Echo,
    /// Hold up to 16 buffers and answer from the idle loop, upper-cased (echo-cap).
    EchoHold,
}

impl Service {
    /// The name used in results.
    pub fn name(self) -> &'static str {
        match self {
            Service::Echo => "echo",
            Service::EchoHold => "echo-hold",
        }
    }

    /// The code stored in the link header.
    pub fn code(self) -> u32 {
        match self {
            Service::Echo => 1,
            Service::EchoHold => 2,
        }
    }

    /// The service of a header code.
    pub fn from_code(c: u32) -> Option<Service> {
        [Service::Echo, Service::EchoHold]
            .into_iter()
            .find(|s| s.code() == c)
    }
}

/// The firmware's echo suffix (`" => echo from Core1\n"`).
pub const ECHO_SUFFIX: &[u8] = b" => echo from Core1\n";

/// Why a link operation failed.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// Creating or attaching the region failed.
    #[error("rpmsg region: {0}")]
    Region(#[from] crate::shm::region::RegionError),
    /// The link header was refused.
    #[error("rpmsg link header: {0}")]
    Header(#[from] header::LinkHeaderError),
    /// The other process died.
    #[error("the rpmsg {role} process {pid} is gone")]
    PeerGone {
        /// "remote" or "host".
        role: &'static str,
        /// Its pid.
        pid: i32,
    },
    /// A bounded wait expired.
    #[error("rpmsg: no {what} within {secs:.1} s")]
    Timeout {
        /// What was awaited.
        what: &'static str,
        /// Seconds waited.
        secs: f64,
    },
    /// A ring index read from shared memory jumped by more than the ring size.
    #[error("rpmsg: the {ring} vring is corrupt ({fault})")]
    Corrupt {
        /// Which ring.
        ring: &'static str,
        /// What was found.
        fault: header::Fault,
    },
    /// The link was stopped.
    #[error("rpmsg: the link was stopped")]
    Stopped,
    /// A payload longer than 496 bytes.
    #[error("rpmsg payload of {0} bytes; at most 496 fit a 512-byte buffer")]
    TooLong(usize),
    /// Bad configuration.
    #[error("rpmsg configuration: {0}")]
    Config(String),
}

/// The pid to watch for a peer process: 0 (none) when it is this process.
pub(crate) fn watch_pid(pid: i32) -> i32 {
    if pid as u32 == std::process::id() {
        0
    } else {
        pid
    }
}

/// Rings a doorbell: bump the word, wake every sleeper.
#[inline]
pub(crate) fn ring_bell(line: &WaitLine) {
    line.futex.fetch_add(1, Ordering::Release);
    let _ =
        rustix::thread::futex::wake(&line.futex, rustix::thread::futex::Flags::empty(), u32::MAX);
}

/// How often a sleeping side is nudged to re-check the other side and its deadline.
const SLEEP_SLICE: Duration = Duration::from_millis(10);

/// Doorbells whose sleepers the nudger wakes every [`SLEEP_SLICE`] (addresses of the
/// futex words).
static NUDGED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
static NUDGER: std::sync::Once = std::sync::Once::new();

/// Keeps a doorbell on the nudger's list while it lives.
///
/// Sleeps on a doorbell are unbounded futex waits: a sleep with a timeout arms and
/// cancels an hrtimer every time, and on a VM each timer-register write is a VM exit
/// on the round trip's critical path (the interleaved comparison with `cargo bench
/// --bench rpmsg` is in docs/studies/rpmsg.md, "Why doorbell sleeps have no
/// timeout"). Instead one thread per process wakes every registered doorbell each
/// [`SLEEP_SLICE`], without changing its word, so a sleeper still notices a dead peer,
/// a deadline or a stop within a slice, at the cost of one spurious wake-up per slice
/// per sleeping side.
#[derive(Debug)]
pub(crate) struct Nudge {
    addr: usize,
}

impl Nudge {
    /// Puts `word` on the list, starting the nudger thread on first use.
    ///
    /// # Safety
    ///
    /// `word` must stay mapped until the returned guard is dropped.
    pub(crate) unsafe fn register(word: &std::sync::atomic::AtomicU32) -> Nudge {
        NUDGER.call_once(|| {
            let _ = std::thread::Builder::new()
                .name("rpmsg-nudger".into())
                .spawn(|| {
                    loop {
                        std::thread::sleep(SLEEP_SLICE);
                        let list = NUDGED.lock().unwrap_or_else(|e| e.into_inner());
                        for &addr in list.iter() {
                            // SAFETY: a registered word stays mapped until its guard
                            // removes it, which takes this lock first.
                            let word = unsafe { &*(addr as *const std::sync::atomic::AtomicU32) };
                            let _ = rustix::thread::futex::wake(
                                word,
                                rustix::thread::futex::Flags::empty(),
                                u32::MAX,
                            );
                        }
                    }
                });
        });
        let addr = std::ptr::from_ref(word) as usize;
        NUDGED.lock().unwrap_or_else(|e| e.into_inner()).push(addr);
        Nudge { addr }
    }
}

impl Drop for Nudge {
    fn drop(&mut self) {
        let mut list = NUDGED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = list.iter().position(|&a| a == self.addr) {
            list.swap_remove(i);
        }
    }
}
/// Spin iterations between clock reads while polling.
const SPINS_PER_CHECK: u32 = 256;
/// A poller that spun this long without result yields the CPU between checks, so
/// that more pollers than CPUs still make progress.
const POLL_BEFORE_YIELD: Duration = Duration::from_micros(5);

/// What ended a wait without `ready`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitEnd {
    /// The watched process is gone.
    PeerGone(i32),
    /// The deadline passed.
    Timeout,
}

/// Waits until `ready()` holds: by polling in [`Notify::Poll`] mode, else by sleeping on
/// the futex word of `bell` (after `arm()` asked for a notification, a SeqCst fence
/// and a re-check). Watches `peer` (0: not watched — callers pass 0 for a peer in
/// this process; comparing with `getpid()` here would cost a system call per wait)
/// and `deadline`.
pub(crate) fn wait_bell(
    bell: &WaitLine,
    notify: Notify,
    peer: i32,
    deadline: Option<Instant>,
    mut arm: impl FnMut(),
    mut ready: impl FnMut() -> bool,
) -> Result<(), WaitEnd> {
    if ready() {
        return Ok(());
    }
    let watch = peer != 0;
    let start = Instant::now();
    let mut last_check = start;
    let mut check = |now: Instant, force: bool| -> Result<(), WaitEnd> {
        if watch && (force || now.duration_since(last_check) >= Duration::from_millis(1)) {
            last_check = now;
            if !crate::shm::wait::process_alive(peer) {
                return Err(WaitEnd::PeerGone(peer));
            }
        }
        if deadline.is_some_and(|d| now >= d) {
            return Err(WaitEnd::Timeout);
        }
        Ok(())
    };
    if notify == Notify::Poll {
        let spun = crate::shm::wait::spin_until(&mut ready, SPINS_PER_CHECK, |now| {
            if let Err(e) = check(now, false) {
                return ControlFlow::Break(e);
            }
            if now.duration_since(start) >= POLL_BEFORE_YIELD {
                std::thread::yield_now();
            }
            ControlFlow::Continue(())
        });
        return match spun {
            ControlFlow::Continue(()) => Ok(()),
            ControlFlow::Break(e) if !ready() => Err(e),
            ControlFlow::Break(_) => Ok(()),
        };
    }
    loop {
        // Read the word before the condition: a kick after that changes the word, so
        // the sleep below returns at once (no lost wake-up). Where the notifier decides
        // by an event index (always for buffer returns and refills), it reads our event
        // field after publishing, so the arm is ordered before the re-check by a full
        // fence (Dekker).
        let word = bell.futex.load(Ordering::Acquire);
        arm();
        fence(Ordering::SeqCst);
        if ready() {
            return Ok(());
        }
        let slept = rustix::thread::futex::wait(
            &bell.futex,
            rustix::thread::futex::Flags::empty(),
            word,
            None,
        );
        if ready() {
            return Ok(());
        }
        // Woken without news (by the nudger, at most a slice after we slept): check
        // the other side now.
        let _ = slept;
        if let Err(e) = check(Instant::now(), true) {
            return if ready() { Ok(()) } else { Err(e) };
        }
    }
}
