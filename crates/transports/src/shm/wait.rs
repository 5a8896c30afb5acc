//! Waiting for the other side of a ring: busy-spin, block on a futex, or spin then
//! block.
//!
//! # No lost wake-ups
//!
//! A waiter (say the consumer, waiting for data) reads the futex word, then
//! increments `waiters` with a SeqCst read-modify-write, then re-checks its condition,
//! and only then sleeps in `FUTEX_WAIT` on the word's old value. The waker first
//! publishes (stores `head`), then issues a SeqCst fence, then reads `waiters`; if it
//! is non-zero it bumps the futex word and calls `FUTEX_WAKE`. Either the waker sees
//! the waiter's increment and wakes it (a wake before the sleep changes the word, so
//! the sleep returns at once), or the waiter's re-check sees the published data.
//!
//! In `spin` mode nobody sleeps, so wakers skip the fence and the check entirely.
//!
//! # The asymmetric fence
//!
//! A SeqCst fence on every publish stalls the waker until its `head` store has left
//! the core, about one cache-line transfer: hundreds of nanoseconds on a round trip.
//! When both processes can use `membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)`, the
//! fence moves to the rare side instead: the waker only stops the compiler from
//! reordering, and a sleeper, after announcing itself in `waiters`, calls
//! `membarrier`, which runs a full barrier on every CPU running a registered process.
//! Either the waker's load of `waiters` comes after that barrier and sees the
//! announcement, or its `head` store was made visible by it and the sleeper's re-check
//! sees the data (the argument of asymmetric Dekker synchronisation, as in liburcu).
//! Both sides must agree, so the region header says whether both processes
//! registered; the transport then uses [`Fences::Asymmetric`] for `hybrid` only. A
//! `membarrier` interrupts the other CPU (a VM exit on a virtual machine), which is
//! cheap next to a hybrid wait's spin, where sleeping is rare, but would add an
//! interrupt to every `block` round trip, which sleeps on every wait (see
//! docs/transports-log.md, "How the shm transport works", "Waiting").
//!
//! # Bounded waits
//!
//! Every sleep has a timeout (10 ms) and every spin reads the clock every few thousand
//! iterations, so a waiter notices within milliseconds that the peer process died
//! ([`process_alive`]) or that its owner gave up on the channel (the abandon flag of
//! [`crate::Endpoint::abandon_when`]: a thread peer never dies alone) instead of
//! waiting forever.

use std::io;
use std::ops::ControlFlow;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering, compiler_fence, fence};
use std::time::{Duration, Instant};

/// A futex word and the number of sleepers on it.
#[repr(C)]
#[derive(Debug, Default)]
pub struct WaitLine {
    /// Bumped by the waker before `FUTEX_WAKE`.
    pub futex: AtomicU32,
    /// Sleepers (or would-be sleepers) on `futex`.
    pub waiters: AtomicU32,
}

/// How a side waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// Busy-poll: lowest latency, one CPU busy per waiting side.
    Spin,
    /// Sleep on a futex at once: no CPU while idle, a wake-up per wait.
    Block,
    /// Spin for `spin`, then sleep.
    Hybrid {
        /// How long to spin before sleeping.
        spin: Duration,
    },
}

/// The values of the `wait` parameter; `hybrid` spins for the `spin_us` parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Busy-poll.
    Spin,
    /// Sleep on a futex at once.
    Block,
    /// Spin, then sleep.
    Hybrid,
}

xferbench_params::choices!(Strategy {
    Spin => "spin": "busy-poll: lowest latency, one CPU busy per waiting side",
    Block => "block": "sleep on a futex at once: no CPU while idle, a wake-up per wait",
    Hybrid => "hybrid": "spin for spin_us, then sleep",
});

impl WaitMode {
    /// The mode of a strategy; `spin` is how long `Hybrid` spins.
    pub fn new(strategy: Strategy, spin: Duration) -> WaitMode {
        match strategy {
            Strategy::Spin => WaitMode::Spin,
            Strategy::Block => WaitMode::Block,
            Strategy::Hybrid => WaitMode::Hybrid { spin },
        }
    }

    /// The code stored in the region header: both sides must agree.
    pub fn code(self) -> u32 {
        match self {
            WaitMode::Spin => 1,
            WaitMode::Block => 2,
            WaitMode::Hybrid { spin } => 3 | ((spin.as_micros().min(0x0fff_ffff) as u32) << 4),
        }
    }

    /// A readable name for a header code.
    pub fn name_of(code: u32) -> String {
        match code & 0xf {
            1 => "spin".into(),
            2 => "block".into(),
            3 => format!("hybrid (spin {} µs)", code >> 4),
            _ => format!("unknown ({code})"),
        }
    }

    /// Whether a waker must check for sleepers.
    #[inline]
    pub fn may_sleep(self) -> bool {
        !matches!(self, WaitMode::Spin)
    }
}

/// Which side pays for the store-load barrier of the sleep/wake protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fences {
    /// The waker issues a SeqCst fence on every publish.
    Symmetric,
    /// The waker issues none; a sleeper calls `membarrier(GLOBAL_EXPEDITED)`.
    Asymmetric,
}

/// Whether this process can take part in [`Fences::Asymmetric`] (registers it once).
pub fn asymmetric_fences_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        use rustix::thread::{MembarrierCommand, membarrier, membarrier_query};
        let q = membarrier_query();
        q.contains_command(MembarrierCommand::GlobalExpedited)
            && q.contains_command(MembarrierCommand::RegisterGlobalExpedited)
            && membarrier(MembarrierCommand::RegisterGlobalExpedited).is_ok()
    })
}

/// How long one futex sleep lasts before the waiter re-checks the peer.
const SLEEP_SLICE: Duration = Duration::from_millis(10);
/// How often a spinner checks the clock (and the peer, every millisecond).
const SPINS_PER_CHECK: u32 = 1 << 10;

/// Why a wait ended without the condition.
#[derive(Debug)]
pub enum WaitError {
    /// The peer process no longer exists.
    PeerDead(i32),
    /// The owner gave up on the channel (its abandon flag was set).
    Abandoned,
}

impl From<WaitError> for io::Error {
    fn from(e: WaitError) -> io::Error {
        match e {
            WaitError::PeerDead(pid) => io::Error::new(
                io::ErrorKind::BrokenPipe,
                format!("the peer process {pid} is gone"),
            ),
            WaitError::Abandoned => io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "the channel was abandoned (the run gave up on it)",
            ),
        }
    }
}

/// Spins until `ready()` holds (`Continue`). Every `every` turns it reads the clock and
/// asks `tick`, which may end the spin early with `Break`.
#[inline]
pub(crate) fn spin_until<B>(
    mut ready: impl FnMut() -> bool,
    every: u32,
    mut tick: impl FnMut(Instant) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let mut n = 0u32;
    loop {
        if ready() {
            return ControlFlow::Continue(());
        }
        std::hint::spin_loop();
        n += 1;
        if n == every {
            n = 0;
            tick(Instant::now())?;
        }
    }
}

/// Spins up to `SPINS_PER_CHECK` turns until `ready()` holds, without reading the
/// clock or setting anything up, in the modes that spin before they sleep (`spin`, and
/// `hybrid` with a spin time); `false` when the condition still does not hold (or the
/// mode does not spin), and the caller goes on to [`wait_until`].
///
/// Most waits of a busy ping-pong end within a few hundred turns: this is their whole
/// wait. A `hybrid` wait's spin time counts from the first clock read, so it may spin
/// these turns (microseconds) longer than `spin_us`.
#[inline(always)]
pub fn spin_briefly(mode: WaitMode, mut ready: impl FnMut() -> bool) -> bool {
    let spins = match mode {
        WaitMode::Spin => true,
        WaitMode::Block => false,
        WaitMode::Hybrid { spin } => !spin.is_zero(),
    };
    if spins {
        for _ in 0..SPINS_PER_CHECK {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
    }
    false
}

/// Waits until `ready()` holds, by `mode`, watching `peer_pid` (0 or our own pid: a
/// thread of this process, which cannot die alone) and `abandon` (the owner's flag;
/// once set, the wait ends with [`WaitError::Abandoned`]).
pub fn wait_until(
    line: &WaitLine,
    mode: WaitMode,
    fences: Fences,
    peer_pid: i32,
    abandon: Option<&AtomicBool>,
    mut ready: impl FnMut() -> bool,
) -> Result<(), WaitError> {
    let abandoned = || abandon.is_some_and(|f| f.load(Ordering::Relaxed));
    // Whether to watch the peer, decided at the first check: `getpid` is a system
    // call, which a wait answered within its first spins should not pay.
    let mut watch_known: Option<bool> = None;
    let mut watch = || {
        *watch_known.get_or_insert_with(|| peer_pid != 0 && peer_pid as u32 != std::process::id())
    };
    let start = Instant::now();
    let mut last_peer_check = start;
    let spin_for = match mode {
        WaitMode::Spin => None,
        WaitMode::Block => Some(Duration::ZERO),
        WaitMode::Hybrid { spin } => Some(spin),
    };
    // Spin phase.
    if spin_for != Some(Duration::ZERO) {
        let spun = spin_until(&mut ready, SPINS_PER_CHECK, |now| {
            if abandoned() {
                return ControlFlow::Break(Some(WaitError::Abandoned));
            }
            if now.duration_since(last_peer_check) >= Duration::from_millis(1) && watch() {
                last_peer_check = now;
                if !process_alive(peer_pid) {
                    return ControlFlow::Break(Some(WaitError::PeerDead(peer_pid)));
                }
            }
            if spin_for.is_some_and(|s| now.duration_since(start) >= s) {
                return ControlFlow::Break(None);
            }
            ControlFlow::Continue(())
        });
        match spun {
            ControlFlow::Continue(()) => return Ok(()),
            ControlFlow::Break(Some(e)) => return if ready() { Ok(()) } else { Err(e) },
            // Spun long enough: sleep.
            ControlFlow::Break(None) => {}
        }
    }
    // Sleep phase.
    let slice = rustix::thread::futex::Timespec {
        tv_sec: 0,
        tv_nsec: SLEEP_SLICE.as_nanos() as _,
    };
    loop {
        let word = line.futex.load(Ordering::Acquire);
        line.waiters.fetch_add(1, Ordering::SeqCst);
        if fences == Fences::Asymmetric {
            // The waker's half of the barrier (see the module doc). Cannot fail once
            // registered; if it somehow did, the bounded sleep still ends the wait.
            let _ = rustix::thread::membarrier(rustix::thread::MembarrierCommand::GlobalExpedited);
        }
        if ready() {
            line.waiters.fetch_sub(1, Ordering::SeqCst);
            return Ok(());
        }
        // Shared (not private) futex: the other side may be another process.
        let _ = rustix::thread::futex::wait(
            &line.futex,
            rustix::thread::futex::Flags::empty(),
            word,
            Some(&slice),
        );
        line.waiters.fetch_sub(1, Ordering::SeqCst);
        if ready() {
            return Ok(());
        }
        if abandoned() {
            return Err(WaitError::Abandoned);
        }
        if watch() && !process_alive(peer_pid) {
            return if ready() {
                Ok(())
            } else {
                Err(WaitError::PeerDead(peer_pid))
            };
        }
    }
}

/// Wakes sleepers on `line` after the caller published; a no-op in spin mode.
#[inline]
pub fn wake(line: &WaitLine, mode: WaitMode, fences: Fences) {
    if !mode.may_sleep() {
        return;
    }
    match fences {
        Fences::Symmetric => fence(Ordering::SeqCst),
        Fences::Asymmetric => compiler_fence(Ordering::SeqCst),
    }
    if line.waiters.load(Ordering::Relaxed) != 0 {
        line.futex.fetch_add(1, Ordering::Release);
        let _ = rustix::thread::futex::wake(
            &line.futex,
            rustix::thread::futex::Flags::empty(),
            u32::MAX,
        );
    }
}

/// Wakes sleepers unconditionally (closing, leaving): cheap enough off the hot path.
pub fn wake_always(line: &WaitLine) {
    line.futex.fetch_add(1, Ordering::Release);
    let _ =
        rustix::thread::futex::wake(&line.futex, rustix::thread::futex::Flags::empty(), u32::MAX);
}

/// True when process `pid` exists and is not a zombie.
pub fn process_alive(pid: i32) -> bool {
    // A pid may come from shared memory: a negative one would name a process group.
    if pid <= 0 {
        return false;
    }
    let Some(p) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(p) {
        Err(rustix::io::Errno::SRCH) => false,
        _ => match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // The state follows the parenthesised command name: "pid (comm) S ...".
            Ok(stat) => stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.trim_start())
                .is_none_or(|r| !r.starts_with(['Z', 'X'])),
            // /proc hidden or not mounted: the signal test said it exists.
            Err(_) => true,
        },
    }
}
