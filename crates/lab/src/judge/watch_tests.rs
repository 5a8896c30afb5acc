//! The point loop with a watched machine: limits in the context, a fraction of the
//! limit per point, and the drift flag, on the fake rig and a scripted machine.

use crate::fake::{FakeBench, Scripted};
use crate::limits::drift::{CACHE_LINE, DriftSample, FUTEX, MEMCPY};
use crate::limits::{Limits, MachineProbe, Watch};
use crate::measure::{LoopOptions, RunSamples, run_plan};
use crate::result::{ResultDoc, Settings, figure};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use xferbench_probes::counters::CounterMode;

/// A machine whose futex round trip is 13 µs until the `shift_at`-th drift sample,
/// and `shifted` µs from then on, its 2 MiB copy slowing by as much (9 GB/s at
/// 13 µs) unless `futex_only`; limits are round numbers.
#[derive(Debug)]
struct ScriptedMachine {
    samples: AtomicUsize,
    limits: AtomicUsize,
    shift_at: usize,
    shifted: f64,
    futex_only: bool,
    /// The first limits (the start) copy and stream at this many bytes/s instead of
    /// 10 and 12.5 GB/s.
    slow_start: Option<f64>,
    /// The cache-line round trip of the `k`-th drift sample, ns (the last one from
    /// then on); none when empty.
    cache_lines: Vec<f64>,
}

impl ScriptedMachine {
    fn new(shift_at: usize, shifted: f64) -> Arc<Self> {
        Arc::new(ScriptedMachine {
            samples: AtomicUsize::new(0),
            limits: AtomicUsize::new(0),
            shift_at,
            shifted,
            futex_only: false,
            slow_start: None,
            cache_lines: Vec::new(),
        })
    }
}

impl MachineProbe for ScriptedMachine {
    fn limits(&self) -> Limits {
        let k = self.limits.fetch_add(1, Ordering::Relaxed);
        let mut limits = crate::limits::tests::machine();
        if let (0, Some(rate)) = (k, self.slow_start) {
            let slow = xferbench_probes::stats::Estimate::from_values([rate; 3]).unwrap();
            for c in &mut limits.memcpy {
                c.bytes_per_s = slow;
            }
            for f in &mut limits.stream_floor {
                f.bytes_per_s = slow;
            }
        }
        limits
    }

    fn drift_sample(&self) -> DriftSample {
        let k = self.samples.fetch_add(1, Ordering::Relaxed);
        let futex = if k >= self.shift_at {
            self.shifted
        } else {
            13.0
        };
        // The copy slows as the futex does, unless only the futex moves.
        let copy = if self.futex_only {
            9e9
        } else {
            9e9 * 13.0 / futex
        };
        let mut probes: std::collections::BTreeMap<String, f64> =
            [(FUTEX.to_string(), futex * 1e3), (MEMCPY.to_string(), copy)]
                .into_iter()
                .collect();
        if let Some(&last) = self.cache_lines.last() {
            let ns = self.cache_lines.get(k).copied().unwrap_or(last);
            probes.insert(CACHE_LINE.to_string(), ns);
        }
        DriftSample {
            probes,
            ..DriftSample::default()
        }
    }
}

fn run(points: usize, interleave: bool, machine: Arc<ScriptedMachine>) -> ResultDoc {
    let mut bench = FakeBench::new(points, |_, _| {
        Scripted::Lanes(vec![(0, 1_000_000_000, 1000, 5_000_000_000)])
    });
    for p in &mut bench.points {
        p.params.insert("workload".into(), "stream".into());
        p.size_bytes = 64 << 10;
    }
    run_bench(&mut bench, "stream", 2, interleave, machine)
}

/// `bench`'s points, `runs` runs each after no warm-up, watched on `machine`.
fn run_bench(
    bench: &mut FakeBench,
    workload: &str,
    runs: usize,
    interleave: bool,
    machine: Arc<ScriptedMachine>,
) -> ResultDoc {
    let opts = LoopOptions {
        judge: &crate::judge::LAB,
        runs,
        warmup: 0,
        interleave,
        hang_timeout: Duration::from_secs(1),
        counters: CounterMode::Off,
        profile: None,
        watch: Some(Watch {
            probe: machine,
            drift_threshold: 0.25,
        }),
        until_stopped: false,
    };
    let context = crate::result::test_context(Settings {
        workload: workload.into(),
        runs,
        warmup: 0,
        count: None,
        duration_s: None,
        peer: "thread".into(),
        pin: false,
        verify: false,
        interleave,
    });
    run_plan(context, bench, &opts, &AtomicBool::new(false), &mut [])
}

#[test]
fn limits_are_measured_at_the_start_and_end_and_every_point_gets_its_fraction() {
    let machine = ScriptedMachine::new(usize::MAX, 0.0);
    let doc = run(2, false, machine.clone());
    assert_eq!(machine.limits.load(Ordering::Relaxed), 2);
    let limits = doc.context.limits.as_ref().unwrap();
    assert!(limits.end.is_some());
    for p in &doc.points {
        let f = p.limit.as_ref().unwrap();
        // 5 GB over one second against a 12.5 GB/s stream floor at 64 KiB, with
        // memcpy's 10 GB/s beside it.
        assert_eq!(f.limit, "stream floor 64 KiB");
        assert_eq!(f.figure, figure::THROUGHPUT);
        assert!((f.fraction - 0.4).abs() < 1e-9, "{}", f.fraction);
        let r = f.reference.as_ref().expect("memcpy as a reference");
        assert_eq!(r.name, "memcpy 64 KiB (one CPU, hot)");
        assert!((r.fraction - 0.5).abs() < 1e-9, "{}", r.fraction);
    }
}

#[test]
fn a_point_is_held_against_the_better_of_the_start_and_the_end() {
    // The start's stream floor ran at 2 GB/s (the machine was briefly slow), the
    // end's at 12.5 GB/s: the points' 5 GB/s are 40 % of the limit, not a suspect
    // 250 %.
    let machine = Arc::new(ScriptedMachine {
        slow_start: Some(2e9),
        ..Arc::try_unwrap(ScriptedMachine::new(usize::MAX, 0.0)).unwrap()
    });
    let doc = run(2, false, machine);
    for p in &doc.points {
        let f = p.limit.as_ref().unwrap();
        assert!((f.fraction - 0.4).abs() < 1e-9, "{}", f.fraction);
        assert!(!f.suspect);
        assert!(
            !p.warnings.iter().any(|w| w.starts_with("limit suspect")),
            "{:?}",
            p.warnings
        );
    }
}

#[test]
fn each_run_is_held_against_the_floor_sampled_just_before_it() {
    // An interleaved RPMsg point that polls, three runs of one round each. The start
    // and end measure a 200 ns cache-line round trip; the samples before the three
    // rounds measure 400, 400 and 4000 ns (the machine slowed for the last round),
    // and the runs make 1000, 1000 and 100 round trips a second (1, 1 and 10 ms).
    // Each run reached 0.04 % of the floor sampled before it.
    let machine = Arc::new(ScriptedMachine {
        cache_lines: vec![400.0, 400.0, 4000.0, 4000.0],
        ..Arc::try_unwrap(ScriptedMachine::new(usize::MAX, 0.0)).unwrap()
    });
    let mut bench = FakeBench::new(1, |_, call| {
        let trips = if call < 2 { 1000 } else { 100 };
        Scripted::Lanes(vec![(0, 1_000_000_000, trips, trips)])
    });
    bench.points[0]
        .params
        .insert("notify".into(), "poll".into());
    let doc = run_bench(&mut bench, "rpmsg", 3, true, machine);
    let p = &doc.points[0];
    assert_eq!(p.runs.len(), 3);
    let f = p.limit.as_ref().expect("a fraction");
    assert_eq!(f.limit, "cache-line round trip");
    assert!(f.paired);
    // The median of the runs' floors, and of their fractions. The second run ran
    // between a sample of 400 ns and one of 4000 ns: its floor is unknown, and it is
    // left out (the first and the last remain: 2200 ns). A sample is due only after
    // ten times its own cost, so on a loaded machine the third round's may be
    // skipped; then no sample moves around a run and all three are held against
    // 400 ns.
    assert!(
        f.limit_value == 2200.0 || f.limit_value == 400.0,
        "{}",
        f.limit_value
    );
    assert!((f.fraction - 4e-4).abs() < 1e-12, "{}", f.fraction);
    // The point's own figure is still the median of its runs.
    assert!((f.figure_value - 1e6).abs() < 1.0, "{}", f.figure_value);
    // The context keeps the start's and the end's own measurement.
    let limits = doc.context.limits.as_ref().unwrap();
    assert_eq!(limits.floor().cache_line_rtt_ns.unwrap().median, 200.0);
}

#[test]
fn a_point_whose_floor_the_samples_do_not_measure_is_not_paired() {
    // A stream is held against the stream floor at its size, which this machine's
    // samples do not measure.
    let doc = run(1, true, ScriptedMachine::new(usize::MAX, 0.0));
    let f = doc.points[0].limit.as_ref().unwrap();
    assert_eq!(f.limit, "stream floor 64 KiB");
    assert!(!f.paired);
}

#[test]
fn a_steady_machine_flags_nothing() {
    let machine = ScriptedMachine::new(usize::MAX, 0.0);
    let doc = run(3, false, machine.clone());
    // One sample between consecutive points, one before the first and after the last.
    assert_eq!(machine.samples.load(Ordering::Relaxed), 4);
    assert!(doc.points.iter().all(|p| p.drift.is_none()));
    assert!(
        doc.points
            .iter()
            .all(|p| !p.warnings.iter().any(|w| w.contains("machine changed")))
    );
}

#[test]
fn a_probe_that_shifts_during_a_point_flags_that_point_only() {
    // Samples: 0 before point 0, 1 between 0 and 1, 2 between 1 and 2, 3 after 2.
    // The futex round trip jumps from 13 to 60 µs at sample 2: point 1 saw it.
    let doc = run(3, false, ScriptedMachine::new(2, 60.0));
    let flagged: Vec<usize> = doc
        .points
        .iter()
        .filter(|p| p.drift.is_some())
        .map(|p| p.index)
        .collect();
    assert_eq!(flagged, vec![1]);
    // A stream is held against a stream floor: the copy bears on it, the futex not.
    let d = doc.points[1].drift.as_ref().unwrap();
    assert_eq!(
        (d.probe.as_str(), d.first, d.last),
        (MEMCPY, 9e9, 9e9 * 13.0 / 60.0)
    );
    let w = doc.points[1]
        .warnings
        .iter()
        .find(|w| w.starts_with("machine changed during measurement"))
        .expect("a drift warning");
    assert!(w.contains("9.00 GB/s") && w.contains("1.95 GB/s"), "{w}");
}

#[test]
fn a_probe_that_does_not_bear_on_the_points_flags_none_of_them() {
    // The futex round trip jumps 4.6× at sample 2, the copy stays: streams held
    // against a stream floor are not flagged, nor is the run.
    let machine = Arc::new(ScriptedMachine {
        futex_only: true,
        ..Arc::try_unwrap(ScriptedMachine::new(2, 60.0)).unwrap()
    });
    let doc = run(3, false, machine);
    assert!(
        doc.points.iter().all(|p| p.drift.is_none()),
        "{:?}",
        doc.points[1].drift
    );
    assert!(
        !doc.warnings.iter().any(|w| w.contains("machine changed")),
        "{:?}",
        doc.warnings
    );
}

#[test]
fn a_small_shift_stays_under_the_threshold() {
    let doc = run(3, false, ScriptedMachine::new(2, 15.0));
    assert!(doc.points.iter().all(|p| p.drift.is_none()));
}

#[test]
fn an_interleaved_plan_flags_every_point_and_says_the_ratios_hold() {
    // Samples at each round start, then after each point's last visit.
    let doc = run(2, true, ScriptedMachine::new(1, 60.0));
    assert_eq!(doc.points.len(), 2);
    for p in &doc.points {
        let d = p.drift.as_ref().expect("flagged");
        assert!(d.interleaved);
        assert!(p.warnings.iter().any(|w| w.contains("every variant alike")));
    }
}

#[test]
fn without_a_watch_nothing_is_measured_or_attached() {
    let mut bench = FakeBench::new(1, |_, _| Scripted::Lanes(vec![(0, 1_000, 1, 1)]));
    let opts = LoopOptions {
        judge: &crate::judge::LAB,
        runs: 1,
        warmup: 0,
        interleave: false,
        hang_timeout: Duration::from_secs(1),
        counters: CounterMode::Off,
        profile: None,
        watch: None,
        until_stopped: false,
    };
    let context = crate::result::test_context(Settings {
        workload: "fake".into(),
        runs: 1,
        warmup: 0,
        count: None,
        duration_s: None,
        peer: "thread".into(),
        pin: false,
        verify: false,
        interleave: false,
    });
    let doc = run_plan(context, &mut bench, &opts, &AtomicBool::new(false), &mut []);
    assert!(doc.context.limits.is_none());
    assert!(doc.points[0].limit.is_none() && doc.points[0].drift.is_none());
}

#[test]
fn a_load_point_is_held_run_by_run_against_half_the_floor_sampled_before_it() {
    // A spinning shm load point of three runs whose one-way p50 is 400 ns each; the
    // samples before them measured cache-line round trips of 400, 400 and 4000 ns.
    // Each run is held against half its own sample: 0.5, 0.5 and 5; the median 0.5.
    let mut doc = run(1, true, ScriptedMachine::new(usize::MAX, 0.0));
    let p = &mut doc.points[0];
    for (k, v) in [("workload", "load"), ("transport", "shm"), ("wait", "spin")] {
        p.params.insert(k.into(), v.into());
    }
    p.size_bytes = 64;
    p.runs.push(p.runs[0].clone());
    for r in &mut p.runs {
        r.figures.insert(figure::LATENCY[0].into(), 400.0);
    }
    p.summary.insert(
        figure::LATENCY[0].into(),
        xferbench_probes::stats::Estimate::from_values([400.0; 3]).unwrap(),
    );
    let samples: Vec<DriftSample> = [400.0, 400.0, 4000.0]
        .map(|ns| DriftSample {
            probes: [(CACHE_LINE.to_string(), ns)].into_iter().collect(),
            ..DriftSample::default()
        })
        .to_vec();
    let paired: Vec<RunSamples<'_>> = samples.iter().map(before_only).collect();
    let floor = doc.context.limits.as_ref().unwrap().floor();
    crate::measure::hold_against(&mut doc.points[0], &floor, &paired, &crate::judge::LAB);
    let f = doc.points[0].limit.as_ref().expect("a fraction");
    assert_eq!(f.limit, "half the cache-line round trip");
    assert!(f.paired, "{f:?}");
    assert_eq!(f.limit_value, 200.0, "the median of the runs' half floors");
    assert!((f.fraction - 0.5).abs() < 1e-9, "{}", f.fraction);
}

#[test]
fn a_stream_is_held_run_by_run_against_the_stream_floor_of_its_copy_mode() {
    // Two runs of a 64 KiB stream at 5 GB/s, copied and then in place. The samples
    // before the runs measured the 64 KiB floors at 10 and 2.5 GB/s copied, 25 and
    // 4 GB/s in place; the start and end measured 12.5 and 20 GB/s.
    let samples: Vec<DriftSample> = [(10e9, 25e9), (2.5e9, 4e9)]
        .map(|(copied, in_place)| DriftSample {
            probes: [
                (crate::limits::drift::stream(64 << 10, false), copied),
                (crate::limits::drift::stream(64 << 10, true), in_place),
            ]
            .into_iter()
            .collect(),
            ..DriftSample::default()
        })
        .to_vec();
    let paired: Vec<RunSamples<'_>> = samples.iter().map(before_only).collect();
    for (zero_copy, limit, floors) in [
        ("false", "stream floor 64 KiB", [10e9, 2.5e9]),
        ("true", "stream floor 64 KiB in place", [25e9, 4e9]),
    ] {
        let mut doc = run(1, true, ScriptedMachine::new(usize::MAX, 0.0));
        let p = &mut doc.points[0];
        p.params.insert("zero_copy".into(), zero_copy.into());
        assert_eq!(p.runs.len(), 2);
        let floor = doc.context.limits.as_ref().unwrap().floor();
        crate::measure::hold_against(&mut doc.points[0], &floor, &paired, &crate::judge::LAB);
        let p = &doc.points[0];
        let f = p.limit.as_ref().expect("a fraction");
        assert_eq!(f.limit, limit);
        assert!(f.paired, "{f:?}");
        // Each run against its own sample; the point gets the medians.
        let fractions = floors.map(|fl| 5e9 / fl);
        let mid = |a: [f64; 2]| (a[0] + a[1]) / 2.0;
        assert!(
            (f.limit_value - mid(floors)).abs() < 1.0,
            "{}",
            f.limit_value
        );
        assert!((f.fraction - mid(fractions)).abs() < 1e-9, "{}", f.fraction);
        // Above 110 % of the median floor: suspect, and said so.
        assert_eq!(f.suspect, mid(fractions) > crate::limits::fraction::SUSPECT);
        assert_eq!(
            p.warnings.iter().any(|w| w.starts_with("limit suspect")),
            f.suspect
        );
        // memcpy stays beside it, from the start and end, and flags nothing.
        let r = f.reference.as_ref().expect("memcpy as a reference");
        assert!((r.fraction - 0.5).abs() < 1e-9, "{}", r.fraction);
    }
}

/// The samples around a run of which only the one before it is known.
fn before_only(s: &DriftSample) -> RunSamples<'_> {
    RunSamples {
        before: Some(s),
        after: None,
    }
}

#[test]
fn a_run_around_which_the_floor_moved_is_not_held_against_either_sample() {
    // Four runs of a 4 KiB stream in place. The machine switched modes during the
    // second run: the floor sampled before it is 80 GB/s, the one after 16 GB/s, and
    // so for the third. Held against the samples before them, the four runs are at
    // 0.95, 0.19, 0.19 and 0.94 of their floors, a median of 0.56 that no run was
    // at; the two runs whose floor is unknown are left out, and the point is at 0.94.
    let floors = [80e9, 80e9, 16e9, 16e9];
    let rates = [76e9, 15.2e9, 15.2e9, 15.04e9];
    let samples: Vec<DriftSample> = floors
        .map(|floor| DriftSample {
            probes: [(crate::limits::drift::stream(4 << 10, true), floor)]
                .into_iter()
                .collect(),
            ..DriftSample::default()
        })
        .to_vec();
    let mut doc = run(1, true, ScriptedMachine::new(usize::MAX, 0.0));
    let p = &mut doc.points[0];
    p.params.insert("zero_copy".into(), "true".into());
    p.size_bytes = 4 << 10;
    while p.runs.len() < rates.len() {
        p.runs.push(p.runs[0].clone());
    }
    for (r, rate) in p.runs.iter_mut().zip(rates) {
        r.figures.insert(figure::THROUGHPUT.into(), rate);
    }
    p.summary.insert(
        figure::THROUGHPUT.into(),
        xferbench_probes::stats::Estimate::from_values(rates).unwrap(),
    );
    // The samples are taken between rounds of an interleaved plan, so the second and
    // third runs share theirs: 80 before, 16 after.
    let around = |b: usize| RunSamples {
        before: samples.get(b),
        after: samples.get(b + 1),
    };
    let paired = [around(0), around(1), around(1), around(2)];
    let floor = doc.context.limits.as_ref().unwrap().floor();
    crate::measure::hold_against(&mut doc.points[0], &floor, &paired, &crate::judge::LAB);
    let f = doc.points[0].limit.as_ref().expect("a fraction");
    assert_eq!(f.limit, "stream floor 4 KiB in place");
    assert!(f.paired, "{f:?}");
    assert!((f.fraction - 0.945).abs() < 1e-3, "{}", f.fraction);

    // When most runs straddle a switch, every run is kept, as before.
    let moved = [around(1); 4];
    crate::measure::hold_against(&mut doc.points[0], &floor, &moved, &crate::judge::LAB);
    let f = doc.points[0].limit.as_ref().expect("a fraction");
    assert!(f.paired && f.fraction < 0.5, "{f:?}");
}
