//! The doorbells: ringing one, waiting on one (by polling or sleeping on its futex
//! word, watching the peer and a deadline), and the nudger that bounds every sleep;
//! the pid a side watches.

use super::params::Notify;
use crate::shm::wait::WaitLine;
use std::ops::ControlFlow;
use std::sync::atomic::{Ordering, fence};
use std::time::{Duration, Instant};

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
