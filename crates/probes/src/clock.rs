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
///
/// The continue is counted by another thread, which may run only after the one that
/// looks at the watchdog. So a look that comes more than [`Watchdog::GAP`] after the
/// one before also starts the count again: the looking thread did not run in between
/// (the process was stopped, or the machine kept the thread off every CPU), and could
/// not have seen any progress either. Look more often than that (every 50 ms, say).
#[derive(Debug, Clone, Copy)]
pub struct Watchdog {
    since: std::time::Instant,
    looked: std::time::Instant,
    continued: u64,
}

impl Watchdog {
    /// The longest time between two looks that counts: a longer gap means a pause.
    pub const GAP: std::time::Duration = std::time::Duration::from_millis(500);

    /// Starts counting now.
    pub fn start() -> Self {
        let now = std::time::Instant::now();
        Watchdog {
            since: now,
            looked: now,
            continued: continued(),
        }
    }

    /// Starts counting again now.
    pub fn restart(&mut self) {
        *self = Watchdog::start();
    }

    /// The time counted so far.
    pub fn elapsed(&mut self) -> std::time::Duration {
        self.elapsed_seeing(continued(), std::time::Instant::now())
    }

    /// [`Watchdog::elapsed`] when the continue count reads `count` at `now`.
    fn elapsed_seeing(&mut self, count: u64, now: std::time::Instant) -> std::time::Duration {
        if count != self.continued || now.saturating_duration_since(self.looked) > Self::GAP {
            self.continued = count;
            self.since = now;
        }
        self.looked = now;
        now.saturating_duration_since(self.since)
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

/// The smallest step in which the trip clock of this machine advances, in
/// nanoseconds to two places: measured once per process (a few milliseconds) by
/// [`TripClock::step_ns`].
pub fn trip_step_ns() -> f64 {
    static STEP: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *STEP.get_or_init(|| (TripClock::new().step_ns() * 100.0).round() / 100.0)
}

impl TripClock {
    /// The smallest step in which this clock advances, in nanoseconds.
    ///
    /// A counter need not advance by one at a time: an AMD EPYC (Zen 4) VM was seen to
    /// move its time-stamp counter in steps of 10 ns, so that a round trip of 80 ns
    /// reads as 70, 80 or 90 ns. The clock is read twice around a busy wait of varying
    /// length (0 to 255 turns), a few thousand times; [`step_of`] finds the spacing of
    /// the differences.
    pub fn step_ns(&self) -> f64 {
        let mut deltas = Vec::with_capacity(4096);
        for i in 0..4096u32 {
            let turns = i.wrapping_mul(2_654_435_761) >> 24;
            let t0 = self.read();
            for _ in 0..turns {
                std::hint::black_box(());
            }
            let t1 = self.read();
            deltas.push(t1.wrapping_sub(t0));
        }
        step_of(&mut deltas) as f64 / self.ticks_per_ns()
    }
}

/// The step, in clock ticks, of a clock read twice around waits of many lengths,
/// from the differences of the pairs (`deltas`, sorted in place).
///
/// Differences of 1 or 2 ticks are set aside: a stepped counter may add one so that
/// two reads never return the same value. Of the rest, the lower nine tenths (above
/// them lie interruptions) are grouped into clusters of values at most 2 ticks
/// apart. A clock that advances one tick at a time fills the range with one cluster
/// and has a step of 1; a stepped one leaves gaps, and its step is the median
/// spacing of the clusters' middles.
pub fn step_of(deltas: &mut [u64]) -> u64 {
    deltas.sort_unstable();
    let kept: Vec<u64> = deltas.iter().copied().filter(|&d| d > 2).collect();
    if kept.len() < 16 {
        return 1;
    }
    let upper = kept[kept.len() * 9 / 10];
    // Each cluster as its lowest and highest value.
    let mut clusters: Vec<(u64, u64)> = Vec::new();
    for &d in kept.iter().take_while(|&&d| d <= upper) {
        match clusters.last_mut() {
            Some((_, high)) if d <= *high + 2 => *high = d,
            _ => clusters.push((d, d)),
        }
    }
    if clusters.len() < 3 {
        return 1;
    }
    // Twice each cluster's middle, so that the spacing stays whole.
    let middles: Vec<u64> = clusters.iter().map(|(low, high)| low + high).collect();
    let mut spacings: Vec<u64> = middles.windows(2).map(|w| w[1] - w[0]).collect();
    spacings.sort_unstable();
    spacings[spacings.len() / 2].div_ceil(2).max(1)
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

/// Gaps between two readings of the clock shorter than this are the loop's own cost
/// (a reading, a compare): only longer ones are stalls.
pub const STALL_NS: f64 = 1_000.0;

/// How many stalls one [`StallRecorder`] keeps; beyond it the window still counts
/// their time, not their lengths.
pub const STALLS_KEPT: usize = 1 << 16;

/// What a thread that does nothing but read the clock saw of its CPU in one window:
/// the time taken from it (interrupts, other threads, the hypervisor), as jHiccup
/// measures a process's hiccups.
#[derive(Debug, Clone, PartialEq)]
pub struct StallSample {
    /// The CPU the thread ran on.
    pub cpu: usize,
    /// The window's length, ns.
    pub window_ns: f64,
    /// Every gap longer than [`STALL_NS`] between two consecutive readings, ns.
    pub stalls_ns: Vec<f64>,
    /// Their sum, ns (stalls beyond [`STALLS_KEPT`] included).
    pub lost_ns: f64,
}

impl StallSample {
    /// The fraction of the window the CPU was taken from the thread.
    pub fn lost_fraction(&self) -> f64 {
        self.lost_ns / self.window_ns.max(1.0)
    }

    /// The `q` quantile (0.99: p99) of the wait for the CPU of a moment drawn at
    /// random from the window, ns: a moment inside a stall of length `g` waits for
    /// what is left of it. It is the `x` at which the stalls' parts beyond `x` add up
    /// to `1 − q` of the window, 0 when all stalls together take less than that. A
    /// sender whose messages fall due at such moments cannot begin them closer to
    /// their time.
    pub fn wait_quantile(&self, q: f64) -> f64 {
        let target = (1.0 - q).max(0.0) * self.window_ns;
        if self.lost_ns <= target {
            return 0.0;
        }
        let mut gaps = self.stalls_ns.clone();
        gaps.sort_unstable_by(|a, b| b.total_cmp(a));
        // With the k longest stalls beyond x: Σ_{i<k} g_i − k·x = target.
        let mut sum = 0.0;
        for (i, g) in gaps.iter().enumerate() {
            sum += g;
            let k = (i + 1) as f64;
            let x = (sum - target) / k;
            let next = gaps.get(i + 1).copied().unwrap_or(0.0);
            if x >= next {
                return x.min(*g).max(0.0);
            }
        }
        0.0
    }
}

/// Collects the stalls of one thread's CPU from the gaps between its consecutive
/// readings of a [`TripClock`]: the stall probe reads the clock and nothing else, a
/// `load` sender reads it while it waits for a message's time. The gaps it is given
/// make its window; a gap longer than [`STALL_NS`] is a stall. Room for
/// [`STALLS_KEPT`] stalls is taken up front, so recording never allocates.
#[derive(Debug)]
pub struct StallRecorder {
    ticks_per_ns: f64,
    threshold: u64,
    window: u64,
    lost: u64,
    stalls: Vec<u64>,
}

impl StallRecorder {
    /// An empty record for readings of `clock`.
    pub fn new(clock: &TripClock) -> StallRecorder {
        let ticks_per_ns = clock.ticks_per_ns();
        StallRecorder {
            ticks_per_ns,
            threshold: (STALL_NS * ticks_per_ns) as u64,
            window: 0,
            lost: 0,
            stalls: Vec::with_capacity(STALLS_KEPT),
        }
    }

    /// Adds the gap between two consecutive readings, `from` then `to`.
    #[inline(always)]
    pub fn gap(&mut self, from: u64, to: u64) {
        let gap = to.saturating_sub(from);
        self.window += gap;
        if gap > self.threshold {
            self.lost += gap;
            if self.stalls.len() < STALLS_KEPT {
                self.stalls.push(gap);
            }
        }
    }

    /// The window seen so far, ns.
    pub fn window_ns(&self) -> f64 {
        self.window as f64 / self.ticks_per_ns
    }

    /// What the gaps showed of the CPU `cpu`.
    pub fn sample(&self, cpu: usize) -> StallSample {
        StallSample {
            cpu,
            window_ns: self.window_ns(),
            stalls_ns: self
                .stalls
                .iter()
                .map(|&g| g as f64 / self.ticks_per_ns)
                .collect(),
            lost_ns: self.lost as f64 / self.ticks_per_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_clock_that_ticks_one_at_a_time_has_a_step_of_one() {
        // A read costs 20 to 40 ticks, waits add 0 to 200: every value occurs.
        let mut deltas: Vec<u64> = (0..4096u64).map(|i| 20 + (i * 7919) % 220).collect();
        assert_eq!(step_of(&mut deltas), 1);
    }

    #[test]
    fn a_stepped_clock_shows_its_step_despite_bumps_and_interruptions() {
        // Steps of 26 ticks (10 ns at 2.6 GHz), seen as 25 or 26 apart, with some
        // one-tick bumps and a few interrupted pairs far above.
        let mut deltas: Vec<u64> = (0..4096u64)
            .map(|i| match i % 50 {
                0 => 1,
                1 => 100_000 + i,
                _ => 26 * (1 + i % 8) - (i / 8) % 2,
            })
            .collect();
        assert_eq!(step_of(&mut deltas), 26);
    }

    #[test]
    fn too_few_differences_give_a_step_of_one() {
        assert_eq!(step_of(&mut []), 1);
        assert_eq!(step_of(&mut [1, 2, 1, 2]), 1);
        assert_eq!(step_of(&mut [26, 52, 78]), 1);
    }

    #[test]
    fn this_machines_trip_clock_has_a_step() {
        let step = trip_step_ns();
        assert!(step > 0.0 && step < 1000.0, "{step}");
    }

    use super::*;

    #[test]
    fn a_stall_recorder_counts_gaps_past_the_threshold_and_its_whole_window() {
        let clock = TripClock::new();
        let t = clock.ticks_per_ns();
        let mut r = StallRecorder::new(&clock);
        let at = |ns: f64| (ns * t) as u64;
        // Readings 100 ns apart, one 5 µs hole, then one gap of exactly the
        // threshold's ticks (not converted from ns, which may round past it).
        let marks = [0.0, 100.0, 200.0, 5_200.0, 5_300.0];
        for w in marks.windows(2) {
            r.gap(at(w[0]), at(w[1]));
        }
        let last = at(5_300.0);
        r.gap(last, last + r.threshold);
        let s = r.sample(3);
        assert_eq!(s.cpu, 3);
        assert!((s.window_ns - (5_300.0 + STALL_NS)).abs() < 2.0, "{s:?}");
        assert_eq!(s.stalls_ns.len(), 1, "{s:?}");
        assert!((s.lost_ns - 5_000.0).abs() < 2.0, "{s:?}");
        // A reading behind the one before it adds nothing.
        r.gap(at(10.0), at(5.0));
        assert_eq!(r.sample(3).stalls_ns.len(), 1);
    }

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
        use std::time::Duration;
        let mut w = Watchdog::start();
        let (count, t0) = (w.continued, w.since);
        let ms = |n| t0 + Duration::from_millis(n);
        assert_eq!(w.elapsed_seeing(count, ms(30)), Duration::from_millis(30));
        // A continue since it last looked: the stop does not count.
        assert_eq!(w.elapsed_seeing(count + 1, ms(40)), Duration::ZERO);
        assert_eq!(
            w.elapsed_seeing(count + 1, ms(70)),
            Duration::from_millis(30)
        );
        w.restart();
        assert!(w.elapsed() < Duration::from_millis(30));
    }

    #[test]
    fn a_watchdog_starts_again_after_a_gap_between_looks() {
        use std::time::Duration;
        let mut w = Watchdog::start();
        let (count, t0) = (w.continued, w.since);
        let ms = |n| t0 + Duration::from_millis(n);
        // Looks 400 ms apart count in full, however long the total.
        for n in 1..=5 {
            assert_eq!(
                w.elapsed_seeing(count, ms(400 * n)),
                Duration::from_millis(400 * n)
            );
        }
        // A look 2.5 s after the last, before the continue is counted: a pause, not
        // time without progress.
        assert_eq!(w.elapsed_seeing(count, ms(4_500)), Duration::ZERO);
        assert_eq!(
            w.elapsed_seeing(count, ms(4_550)),
            Duration::from_millis(50)
        );
        // The continue counted late starts it once more.
        assert_eq!(w.elapsed_seeing(count + 1, ms(4_600)), Duration::ZERO);
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
