//! Time: one monotonic clock, comparable across the processes of a run.
//!
//! Timestamps are `CLOCK_MONOTONIC` nanoseconds. Unlike [`std::time::Instant`] they can
//! be sent to another process and compared there: a peer process's end-of-stream
//! stamp and the driver's start stamp lie on the same axis. Reading the clock goes
//! through the vDSO (tens of nanoseconds, no system call).
//!
//! A single message's time (a ping-pong's round trip) is read with a [`TripClock`]
//! instead: on a machine whose kernel keeps time with the CPU's time-stamp counter,
//! it reads that counter directly (`rdtsc`, a few nanoseconds) and converts the
//! difference to nanoseconds with a calibration against `CLOCK_MONOTONIC`. Every
//! round trip contains about one read of its clock, so a cheap one keeps the
//! measurement out of sub-microsecond figures.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// Times this process was continued after a stop, counted by [`note_continued`].
static CONTINUED: AtomicU64 = AtomicU64::new(0);

/// Counts one continue after a stop (`SIGCONT`: a shell's `fg` after Ctrl-Z, or `kill
/// -CONT`), for the signal handler of whoever installs one (the command line does).
/// Every clock here keeps running while a process is stopped, so a measurement that
/// spans a stop includes it ([`continued`]).
pub fn note_continued() {
    CONTINUED.fetch_add(1, Ordering::Relaxed);
}

/// How many continues [`note_continued`] has counted; a change between two readings
/// means the process was stopped in between. Stays 0 where no handler counts.
pub fn continued() -> u64 {
    CONTINUED.load(Ordering::Relaxed)
}

/// A `CLOCK_MONOTONIC` reading in nanoseconds.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Stamp(pub u64);

impl Stamp {
    /// Reads the clock.
    #[inline]
    pub fn now() -> Self {
        let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        Stamp(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }

    /// Nanoseconds from `earlier` to `self`, zero if `earlier` is later.
    #[inline]
    pub fn since(self, earlier: Stamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// A wall-clock limit that a stop of the process does not use up: the time since it
/// started, or since the process was last continued after a stop ([`continued`]),
/// whichever is later. A run paused with Ctrl-Z for longer than its hang timeout is
/// not taken for a hung one once it is resumed.
#[derive(Debug, Clone, Copy)]
pub struct Watchdog {
    since: std::time::Instant,
    continued: u64,
}

impl Watchdog {
    /// Starts counting now.
    pub fn start() -> Self {
        Watchdog {
            since: std::time::Instant::now(),
            continued: continued(),
        }
    }

    /// Starts counting again now.
    pub fn restart(&mut self) {
        *self = Watchdog::start();
    }

    /// The time counted so far.
    pub fn elapsed(&mut self) -> std::time::Duration {
        self.elapsed_seeing(continued())
    }

    /// [`Watchdog::elapsed`] when the continue count reads `count`.
    fn elapsed_seeing(&mut self, count: u64) -> std::time::Duration {
        if count != self.continued {
            self.continued = count;
            self.since = std::time::Instant::now();
        }
        self.since.elapsed()
    }
}

/// Which clock times single messages ([`TripClock`]), as results record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TripSource {
    /// The CPU's time-stamp counter, calibrated against `CLOCK_MONOTONIC`.
    Tsc,
    /// `clock_gettime(CLOCK_MONOTONIC)`, as [`Stamp`].
    Monotonic,
}

impl TripSource {
    /// `rdtsc`, `clock_gettime`: how the clock is read.
    pub fn call(self) -> &'static str {
        match self {
            TripSource::Tsc => "rdtsc",
            TripSource::Monotonic => "clock_gettime",
        }
    }
}

/// The clock that times one message: [`TripClock::read`] before, again after, and
/// [`TripClock::nanos`] between them.
///
/// It reads the time-stamp counter only where the kernel itself keeps time with it
/// (clocksource `tsc`, which the kernel keeps only for a counter that is stable and
/// in step across CPUs) and the CPU's counter runs at a constant rate through sleep
/// states (`nonstop_tsc`); anywhere else it reads `CLOCK_MONOTONIC`. The counter's
/// rate is calibrated once per process (by `quanta`, up to 200 ms, on the first
/// [`TripClock::new`]), so create the clock before a timed window opens.
#[derive(Debug, Clone)]
pub struct TripClock {
    tsc: Option<quanta::Clock>,
}

impl TripClock {
    /// The best clock this machine allows ([`TripClock::source`] says which).
    pub fn new() -> Self {
        TripClock {
            tsc: tsc_is_trusted().then(quanta::Clock::new),
        }
    }

    /// `CLOCK_MONOTONIC`, whatever the machine has.
    pub fn monotonic() -> Self {
        TripClock { tsc: None }
    }

    /// Which clock this is.
    pub fn source(&self) -> TripSource {
        match self.tsc {
            Some(_) => TripSource::Tsc,
            None => TripSource::Monotonic,
        }
    }

    /// A raw reading, meaningful only to [`TripClock::nanos`] of the same clock.
    #[inline(always)]
    pub fn read(&self) -> u64 {
        match &self.tsc {
            Some(c) => c.raw(),
            None => Stamp::now().0,
        }
    }

    /// Raw readings per nanosecond: 1 for `CLOCK_MONOTONIC`, the counter's
    /// calibrated rate for the time-stamp counter. A schedule in nanoseconds is
    /// laid out in raw readings with it, so that a reading taken in another process
    /// can be compared with one of this clock.
    pub fn ticks_per_ns(&self) -> f64 {
        match &self.tsc {
            Some(c) => {
                const SPAN: u64 = 1 << 40;
                SPAN as f64 / c.delta_as_nanos(0, SPAN).max(1) as f64
            }
            None => 1.0,
        }
    }

    /// Nanoseconds from the reading `start` to the reading `end`, zero if `end` is
    /// earlier.
    #[inline(always)]
    pub fn nanos(&self, start: u64, end: u64) -> u64 {
        match &self.tsc {
            Some(c) => c.delta_as_nanos(start, end),
            None => end.saturating_sub(start),
        }
    }
}

impl Default for TripClock {
    fn default() -> Self {
        Self::new()
    }
}

/// The clock a [`TripClock::new`] reads on this machine, without calibrating it.
pub fn trip_source() -> TripSource {
    if tsc_is_trusted() {
        TripSource::Tsc
    } else {
        TripSource::Monotonic
    }
}

/// Whether the kernel keeps time with the time-stamp counter and the CPU says it
/// runs at a constant rate and can be read with `rdtscp` (what `quanta` needs).
/// Read once per process: a driver makes a clock every run.
fn tsc_is_trusted() -> bool {
    static TRUSTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRUSTED.get_or_init(|| {
        if !cfg!(target_arch = "x86_64") {
            return false;
        }
        let source = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        );
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo");
        match (source, cpuinfo) {
            (Ok(source), Ok(cpuinfo)) => tsc_trusted_by(&source, &cpuinfo),
            _ => false,
        }
    })
}

/// [`tsc_is_trusted`] from the texts of the clocksource file and `/proc/cpuinfo`.
fn tsc_trusted_by(clocksource: &str, cpuinfo: &str) -> bool {
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, f)| f.split_whitespace().collect::<Vec<_>>())
        .unwrap_or_default();
    clocksource.trim() == "tsc"
        && ["constant_tsc", "nonstop_tsc", "rdtscp"]
            .iter()
            .all(|f| flags.contains(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_does_not_go_backwards() {
        let mut last = Stamp::now();
        for _ in 0..10_000 {
            let now = Stamp::now();
            assert!(now >= last);
            last = now;
        }
    }

    #[test]
    fn the_counter_is_trusted_only_when_the_kernel_keeps_time_with_it() {
        let cpu = "processor\t: 0\nflags\t\t: fpu tsc rdtscp constant_tsc nonstop_tsc sse2\n";
        assert!(tsc_trusted_by("tsc\n", cpu));
        assert!(!tsc_trusted_by("kvm-clock\n", cpu));
        assert!(!tsc_trusted_by("hpet\n", cpu));
        let drifting = "flags\t\t: fpu tsc rdtscp constant_tsc sse2\n";
        assert!(!tsc_trusted_by("tsc\n", drifting));
        assert!(!tsc_trusted_by("tsc\n", "processor\t: 0\n"));
    }

    #[test]
    fn a_watchdog_starts_again_when_the_process_was_continued() {
        let mut w = Watchdog::start();
        let count = w.continued;
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(w.elapsed_seeing(count) >= std::time::Duration::from_millis(30));
        // A continue since it last looked: the stop does not count.
        assert!(w.elapsed_seeing(count + 1) < std::time::Duration::from_millis(30));
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(w.elapsed_seeing(count + 1) >= std::time::Duration::from_millis(30));
        w.restart();
        assert!(w.elapsed() < std::time::Duration::from_millis(30));
    }

    #[test]
    fn the_source_named_without_calibrating_is_the_one_a_clock_reads() {
        assert_eq!(trip_source(), TripClock::new().source());
        assert_eq!(TripClock::monotonic().source(), TripSource::Monotonic);
    }

    /// A trip clock agrees with `CLOCK_MONOTONIC` over a sleep, whichever it reads.
    #[test]
    fn a_trip_clock_measures_what_the_monotonic_clock_measures() {
        for clock in [TripClock::new(), TripClock::monotonic()] {
            // A preemption between the paired reads can skew one attempt.
            let errors: Vec<(f64, f64)> = (0..5)
                .map(|_| {
                    let (r0, s0) = (clock.read(), Stamp::now());
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    let (r1, s1) = (clock.read(), Stamp::now());
                    assert_eq!(clock.nanos(r1, r0), 0);
                    (clock.nanos(r0, r1) as f64, s1.since(s0) as f64)
                })
                .collect();
            assert!(
                errors
                    .iter()
                    .any(|(trip, mono)| (trip / mono - 1.0).abs() < 0.01),
                "{:?}: (trip ns, monotonic ns) {errors:?}",
                clock.source()
            );
        }
    }
}
