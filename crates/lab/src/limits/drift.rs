//! Did the machine itself change speed during a point?
//!
//! Between visits the point loop takes a cheap sample of the machine (a cache line
//! and a futex handed between the two CPUs, a 2 MiB memcpy, and the hand-over and
//! stream floors that points are held against, at most
//! [`SAMPLE_BUDGET`] per batch). A point is flagged when a
//! probe that bears on its figure ([`bearing`]: the copy for a point held against a
//! copy or a stream floor, the cache line or the futex for one held against a round
//! trip) moved by more than the threshold (25 % by default) across the samples taken
//! from just before its first visit to just after its last: its runs then measured
//! more than one machine.
//!
//! A sample's value is the median of a few short batches, and it keeps the lowest and
//! highest of them ([`DriftSample::spread`]). A probe has moved only as far as the
//! samples lie apart *beyond* that scatter: the highest of their lowest batches over
//! the lowest of their highest ([`worst`]). On a VM whose cache line and futex wander
//! by a third between two samples of a quiet machine, medians alone flag nearly every
//! run (docs/limits.md gives the measurement).
//!
//! Samples cost time, so the loop takes one only as drift detection needs it
//! ([`DriftLog::sample`]): when at least [`GAP_PER_COST`] times the last sample's
//! cost has passed since it was taken. Between short points the last sample stands
//! for the next one, so a point's span reaches back to it; the probes then add at
//! most a tenth to the plan's time.
//!
//! In an interleaved plan every point spans the same rounds, so a drift flags them
//! all alike and their ratios still hold; the warning says so.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The default threshold: a probe that moves by more than 25 % flags the point.
pub const DEFAULT_THRESHOLD: f64 = 0.25;

/// The probes of one sample.
pub const CACHE_LINE: &str = "cache-line round trip";
/// The futex probe's name.
pub const FUTEX: &str = "futex wake round trip";
/// The memcpy probe's name.
pub const MEMCPY: &str = "memcpy 2 MiB";

/// The probes whose movement flags a point. A sample also holds the hand-over round
/// trips ([`handover`]) and the stream floors ([`stream`]), which serve only as the
/// floors of the points around them ([`super::Limits::around`]): their short batches
/// are too noisy to flag by.
pub const DRIFT_PROBES: [&str; 3] = [CACHE_LINE, FUTEX, MEMCPY];

/// The name of the hand-over probe at `size` bytes: `hand-over round trip 64 KiB`, as
/// a point's limit names it.
pub fn handover(size: u64) -> String {
    format!("hand-over round trip {}", super::probes::size_words(size))
}

/// The name of the stream floor at `size` bytes: `stream floor 64 KiB`, or `stream
/// floor 64 KiB in place` for messages read in place, as a point's limit names it.
pub fn stream(size: u64, in_place: bool) -> String {
    let how = if in_place { " in place" } else { "" };
    format!("stream floor {}{how}", super::probes::size_words(size))
}

/// Bytes a sample's stream batch times at each size, after its untimed lead
/// ([`super::probes::STREAM_LEAD_LAPS`] laps of the ring): enough to be the pair's
/// steady state, not its way into it, which lasts a few MiB and runs at half or
/// twice the steady rate depending on the VM's mode.
const STREAM_BATCH_BYTES: u64 = 32 << 20;

/// Bytes a sample's hand-over batch moves at each size (256 round trips of 4 KiB, 16
/// of 64 KiB).
const HANDOVER_BATCH_BYTES: u64 = 1 << 20;

/// One cheap sample of the machine: each probe's median over a few short batches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DriftSample {
    /// Probe name → value (ns for round trips, bytes/s for memcpy).
    pub probes: BTreeMap<String, f64>,
    /// Probe name → the lowest and the highest of the batches its value is the median
    /// of: the probe's own scatter at that moment (absent in older files, and for a
    /// probe read once, whose scatter is then taken as none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub spread: BTreeMap<String, [f64; 2]>,
}

impl DriftSample {
    /// Sets probe `name` to the median of `batches`, keeping their lowest and highest
    /// as its spread; nothing when there are none.
    pub fn insert(&mut self, name: String, batches: &[f64]) {
        let Some(median) = xferbench_probes::stats::median(batches) else {
            return;
        };
        let low = batches.iter().copied().fold(f64::INFINITY, f64::min);
        let high = batches.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        self.spread.insert(name.clone(), [low, high]);
        self.probes.insert(name, median);
    }

    /// Probe `name`'s lowest batch, value and highest batch (the value three times
    /// where no spread was kept).
    fn reading(&self, name: &str) -> Option<[f64; 3]> {
        let v = *self.probes.get(name)?;
        let [low, high] = self.spread.get(name).copied().unwrap_or([v, v]);
        Some([low.min(v), v, high.max(v)])
    }
}

/// The most one batch of a drift probe may take; a busy machine ends it early.
pub const SAMPLE_BUDGET: std::time::Duration = std::time::Duration::from_millis(4);

/// A new sample is taken once this many times the previous sample's cost has passed
/// since it, so that sampling adds at most `1 / GAP_PER_COST` to a plan's time.
pub const GAP_PER_COST: u32 = 10;

/// Samples the real machine.
pub fn sample_machine() -> DriftSample {
    let cpus = super::probes::probe_cpus();
    let (a, b) = (cpus[0], *cpus.get(1).unwrap_or(&cpus[0]));
    let batches3 =
        |f: &dyn Fn() -> Option<f64>| -> Vec<f64> { (0..3).filter_map(|_| f()).collect() };
    let mut sample = DriftSample::default();
    if a != b {
        let cache_line = batches3(&|| super::probes::cache_line_rtt(a, b, 2_000, SAMPLE_BUDGET));
        sample.insert(CACHE_LINE.to_string(), &cache_line);
        for size in super::probes::HANDOVER_SIZES {
            let trips = (HANDOVER_BATCH_BYTES / size).max(1);
            let floor = || super::probes::handover_floor(a, b, size as usize, trips, SAMPLE_BUDGET);
            sample.insert(handover(size), &batches3(&floor));
        }
        for size in super::probes::STREAM_SIZES {
            let ring = super::probes::stream_ring(size) as usize;
            let messages = (STREAM_BATCH_BYTES / size).max(1);
            for mode in [
                super::probes::StreamMode::Copy,
                super::probes::StreamMode::InPlace,
            ] {
                let rate = || {
                    let (size, budget) = (size as usize, SAMPLE_BUDGET);
                    super::probes::stream_rate(a, b, size, ring, mode, messages, budget)
                };
                let in_place = mode == super::probes::StreamMode::InPlace;
                sample.insert(stream(size, in_place), &batches3(&rate));
            }
        }
    }
    let futex = batches3(&|| super::probes::futex_rtt(a, b, 60, SAMPLE_BUDGET));
    sample.insert(FUTEX.to_string(), &futex);
    let mut bufs = super::probes::CopyBuffers::new(2 << 20);
    bufs.sample(1, SAMPLE_BUDGET);
    let copy = std::cell::RefCell::new(bufs);
    let copies = batches3(&|| Some(copy.borrow_mut().sample(2, SAMPLE_BUDGET)));
    sample.insert(MEMCPY.to_string(), &copies);
    sample
}

/// The drift probes that bear on a point held against `limit` (its
/// [`LimitFraction::limit`](super::fraction::LimitFraction::limit)): the copy for a
/// copy or a stream floor, the cache line for the cache-line and hand-over round
/// trips, the futex for the futex and pipe round trips, and all of them for a point
/// held against none (a study's wall time). A probe that does not bound a point's
/// figure says nothing about whether its runs measured one machine: a cache line that
/// moves by 40 ns does not move a stream of 64 KiB messages.
pub fn bearing(limit: Option<&str>) -> &'static [&'static str] {
    let Some(limit) = limit.map(super::fraction::floor_of) else {
        return &DRIFT_PROBES;
    };
    if limit.starts_with("memcpy") || limit.starts_with("stream floor") {
        &[MEMCPY]
    } else if limit.starts_with(CACHE_LINE) || limit.starts_with("hand-over round trip") {
        &[CACHE_LINE]
    } else if limit.starts_with(FUTEX) || limit.starts_with("pipe round trip") {
        &[FUTEX]
    } else {
        &DRIFT_PROBES
    }
}

/// A point during which the machine changed speed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Drift {
    /// The probe that moved most.
    pub probe: String,
    /// Its value in the first sample of the point's span.
    pub first: f64,
    /// Its value in the last sample.
    pub last: f64,
    /// Its lowest value across the span.
    pub low: f64,
    /// Its highest value across the span.
    pub high: f64,
    /// How far the probe moved beyond its samples' own scatter: the highest of their
    /// lowest batches over the lowest of their highest, less 1 (`high / low - 1` for
    /// samples that kept no spread).
    pub change: f64,
    /// Samples across the span.
    pub samples: usize,
    /// Whether the plan was interleaved (the drift then touched every point alike).
    pub interleaved: bool,
}

impl Drift {
    /// How the probe moved: `the futex wake round trip moved 13.0 µs → 60.0 µs (4.6×)
    /// across 3 probes (first 13.0 µs, last 58.0 µs)`, low to high, in the units the
    /// tables use.
    pub fn movement(&self) -> String {
        let show = |v: f64| {
            if self.probe == MEMCPY {
                format!("{:.2} GB/s", v / 1e9)
            } else if v >= 1e6 {
                format!("{:.2} ms", v / 1e6)
            } else if v >= 1e3 {
                format!("{:.1} µs", v / 1e3)
            } else {
                format!("{v:.0} ns")
            }
        };
        let ratio = self.high / self.low.max(f64::MIN_POSITIVE);
        let beyond = if (1.0 + self.change) < ratio * 0.99 {
            format!(", {:.1}× beyond its own scatter", 1.0 + self.change)
        } else {
            String::new()
        };
        format!(
            "the {} moved {} → {} ({ratio:.1}×{beyond}) across {} probes (first {}, last {})",
            self.probe,
            show(self.low),
            show(self.high),
            self.samples,
            show(self.first),
            show(self.last),
        )
    }

    /// The warning attached to a point.
    pub fn warning(&self) -> String {
        format!(
            "machine changed during measurement: {} around this point{}",
            self.movement(),
            self.consequence()
        )
    }

    /// What the drift means for the figures.
    pub fn consequence(&self) -> String {
        let mut w = String::new();
        if self.interleaved {
            w.push_str(
                "; the plan was interleaved, so the drift affected every variant alike and \
                 their ratios still compare",
            );
        } else {
            w.push_str("; its runs may compare different machines: rerun it, or use --interleave");
        }
        w
    }
}

/// The probes that bear on any of a run's points, given the limits they are held
/// against ([`bearing`]); every probe for a run with no points.
pub fn bearing_on_any<'a>(limits: impl IntoIterator<Item = Option<&'a str>>) -> Vec<&'static str> {
    let mut probes: Vec<&'static str> = Vec::new();
    for limit in limits {
        for probe in bearing(limit) {
            if !probes.contains(probe) {
                probes.push(probe);
            }
        }
    }
    if probes.is_empty() {
        probes = DRIFT_PROBES.to_vec();
    }
    probes
}

/// The probe among `bearing` that moved most across `samples`, when it moved by more
/// than `threshold` beyond the samples' own scatter (see [`Drift::change`]).
pub fn worst(
    samples: &[DriftSample],
    threshold: f64,
    interleaved: bool,
    bearing: &[&str],
) -> Option<Drift> {
    if samples.len() < 2 {
        return None;
    }
    let names: std::collections::BTreeSet<&String> = samples
        .iter()
        .flat_map(|s| s.probes.keys())
        .filter(|name| DRIFT_PROBES.contains(&name.as_str()) && bearing.contains(&name.as_str()))
        .collect();
    names
        .into_iter()
        .filter_map(|name| {
            let readings: Vec<[f64; 3]> = samples
                .iter()
                .filter_map(|s| s.reading(name))
                .filter(|r| r.iter().all(|v| v.is_finite() && *v > 0.0))
                .collect();
            let fold = |k: usize, f: fn(f64, f64) -> f64, from: f64| {
                readings.iter().map(|r| r[k]).fold(from, f)
            };
            let (low, high) = (fold(1, f64::min, f64::INFINITY), fold(1, f64::max, 0.0));
            // Apart beyond the scatter: the highest low batch over the lowest high one.
            let apart = fold(0, f64::max, 0.0) / fold(2, f64::min, f64::INFINITY);
            (readings.len() >= 2).then(|| Drift {
                probe: name.clone(),
                first: readings[0][1],
                last: readings[readings.len() - 1][1],
                low,
                high,
                change: apart - 1.0,
                samples: readings.len(),
                interleaved,
            })
        })
        .max_by(|a, b| a.change.total_cmp(&b.change))
        .filter(|d| d.change > threshold)
}

/// The samples of one plan, and which of them each point's visits lie between.
#[derive(Debug, Default)]
pub struct DriftLog {
    samples: Vec<DriftSample>,
    /// No visit has run since the last sample.
    fresh: bool,
    /// When the last sample was taken, and how long it took.
    last: Option<(std::time::Instant, std::time::Duration)>,
}

impl DriftLog {
    /// Takes a sample (`take`, the machine's cheap probes) unless one was taken since
    /// the last visit, or the last one was taken less than [`GAP_PER_COST`] times its
    /// cost ago; returns the index of the sample that stands for now.
    pub fn sample(&mut self, take: impl FnOnce() -> DriftSample) -> usize {
        let due = match self.last {
            None => true,
            Some((at, cost)) => !self.fresh && at.elapsed() >= cost * GAP_PER_COST,
        };
        if due {
            let start = std::time::Instant::now();
            let sample = take();
            let cost = start.elapsed();
            tracing::debug!(
                sample = self.samples.len(),
                cost_ms = cost.as_secs_f64() * 1e3,
                probes = ?sample.probes,
                "drift sample"
            );
            self.samples.push(sample);
            self.last = Some((std::time::Instant::now(), cost));
            self.fresh = true;
        }
        self.samples.len() - 1
    }

    /// The index of the latest sample (0 before any).
    pub fn latest(&self) -> usize {
        self.samples.len().saturating_sub(1)
    }

    /// A visit ran.
    pub fn visited(&mut self) {
        self.fresh = false;
    }

    /// The samples from `first` on.
    pub fn since(&self, first: usize) -> &[DriftSample] {
        self.samples.get(first..).unwrap_or(&[])
    }

    /// The `k`-th sample.
    pub fn get(&self, k: usize) -> Option<&DriftSample> {
        self.samples.get(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(futex: f64, copy: f64) -> DriftSample {
        DriftSample {
            probes: [(FUTEX.to_string(), futex), (MEMCPY.to_string(), copy)]
                .into_iter()
                .collect(),
            ..DriftSample::default()
        }
    }

    #[test]
    fn a_steady_machine_is_not_flagged() {
        let samples = [s(13e3, 9e9), s(14e3, 9.5e9), s(12.5e3, 8.8e9)];
        assert_eq!(
            worst(&samples, DEFAULT_THRESHOLD, false, &DRIFT_PROBES),
            None
        );
    }

    #[test]
    fn the_probe_that_moved_most_is_named_with_its_numbers() {
        let samples = [s(13e3, 9e9), s(60e3, 8e9), s(58e3, 9e9)];
        let d = worst(&samples, DEFAULT_THRESHOLD, false, &DRIFT_PROBES).unwrap();
        assert_eq!(d.probe, FUTEX);
        assert_eq!((d.first, d.last, d.low, d.high), (13e3, 58e3, 13e3, 60e3));
        assert!((d.change - 60.0 / 13.0 + 1.0).abs() < 1e-9);
        let w = d.warning();
        assert!(w.starts_with("machine changed during measurement"), "{w}");
        assert!(w.contains("13.0 µs") && w.contains("60.0 µs"), "{w}");
        assert!(w.contains("--interleave"), "{w}");
    }

    #[test]
    fn an_interleaved_plan_says_the_drift_touched_every_variant() {
        let d = worst(&[s(13e3, 9e9), s(30e3, 9e9)], 0.25, true, &DRIFT_PROBES).unwrap();
        assert!(d.warning().contains("every variant alike"));
    }

    #[test]
    fn one_sample_or_a_missing_probe_cannot_flag() {
        assert_eq!(worst(&[s(1.0, 1.0)], 0.0, false, &DRIFT_PROBES), None);
        let a = DriftSample::default();
        assert_eq!(worst(&[a.clone(), a], 0.0, false, &DRIFT_PROBES), None);
    }

    #[test]
    fn the_real_machine_gives_a_sample_of_every_probe_it_can_run() {
        let sample = sample_machine();
        assert!(sample.probes.contains_key(MEMCPY));
        assert!(sample.probes.contains_key(FUTEX));
        assert!(sample.probes.values().all(|v| *v > 0.0));
        // Every value is the median of batches whose lowest and highest it keeps.
        for (name, v) in &sample.probes {
            let [low, high] = sample.spread[name];
            assert!(low <= *v && *v <= high, "{name}: {low} {v} {high}");
        }
        if super::super::probes::probe_cpus().len() > 1 {
            for size in super::super::HANDOVER_SIZES {
                assert!(sample.probes.contains_key(&handover(size)), "{sample:?}");
            }
        }
    }

    #[test]
    fn a_hand_over_probe_that_moves_does_not_flag() {
        let h = |ns: f64| DriftSample {
            probes: [(handover(64 << 10), ns)].into_iter().collect(),
            ..DriftSample::default()
        };
        assert_eq!(worst(&[h(5e3), h(25e3)], 0.25, false, &DRIFT_PROBES), None);
        assert_eq!(handover(64 << 10), "hand-over round trip 64 KiB");
    }

    /// A sample of one probe read in three batches.
    fn batches(name: &str, b: [f64; 3]) -> DriftSample {
        let mut s = DriftSample::default();
        s.insert(name.to_string(), &b);
        s
    }

    #[test]
    fn medians_that_move_within_their_batches_scatter_do_not_flag() {
        // Medians 120 → 160 ns (1.33×), but the batches overlap: 150 ≥ 140.
        let (a, b) = ([110.0, 120.0, 150.0], [140.0, 160.0, 170.0]);
        let span = [batches(CACHE_LINE, a), batches(CACHE_LINE, b)];
        assert_eq!(worst(&span, 0.25, false, &DRIFT_PROBES), None);
        // Apart beyond it: 200 / 130 - 1 = 54 % of movement, medians 1.7×.
        let (a, b) = ([110.0, 120.0, 130.0], [200.0, 210.0, 250.0]);
        let d = worst(
            &[batches(CACHE_LINE, a), batches(CACHE_LINE, b)],
            0.25,
            false,
            &DRIFT_PROBES,
        )
        .unwrap();
        assert!((d.change - (200.0 / 130.0 - 1.0)).abs() < 1e-9, "{d:?}");
        assert_eq!((d.low, d.high), (120.0, 210.0));
        let w = d.warning();
        assert!(
            w.contains("120 ns → 210 ns (1.8×, 1.5× beyond its own scatter)"),
            "{w}"
        );
    }

    #[test]
    fn a_probe_that_does_not_bear_on_the_point_cannot_flag_it() {
        let moved = [
            batches(CACHE_LINE, [100.0; 3]),
            batches(CACHE_LINE, [300.0; 3]),
        ];
        let stream = bearing(Some("stream floor 64 KiB in place"));
        assert_eq!(stream, &[MEMCPY]);
        assert_eq!(worst(&moved, 0.25, false, stream), None);
        let pingpong = bearing(Some("half the cache-line round trip"));
        assert_eq!(pingpong, &[CACHE_LINE]);
        assert!(worst(&moved, 0.25, false, pingpong).is_some());
        assert_eq!(bearing(Some("hand-over round trip 4 KiB")), &[CACHE_LINE]);
        assert_eq!(bearing(Some("memcpy 4 KiB")), &[MEMCPY]);
        assert_eq!(bearing(Some("futex wake round trip")), &[FUTEX]);
        assert_eq!(bearing(Some("pipe round trip")), &[FUTEX]);
        // A point held against nothing (a study's wall time): every probe bears on it.
        assert_eq!(bearing(None), &DRIFT_PROBES);
        assert!(worst(&moved, 0.25, false, bearing(None)).is_some());
    }

    #[test]
    fn an_older_file_without_spreads_reads_as_before() {
        let old: DriftSample =
            serde_json::from_str(r#"{"probes":{"futex wake round trip":13000.0}}"#).unwrap();
        assert!(old.spread.is_empty());
        let new = s(30e3, 9e9);
        let d = worst(&[old, new], 0.25, false, &DRIFT_PROBES).unwrap();
        assert!((d.change - (30.0 / 13.0 - 1.0)).abs() < 1e-9);
    }
}
