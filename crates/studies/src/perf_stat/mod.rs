//! The perf-stat study: the seed's "same instructions, slower" regression
//! (swift-nio's `circular_buffer_into_byte_buffer_{1kb,1mb}`, 23 % and 14 % slower
//! with the same 5.93 G instructions) rebuilt as two builds of one hot loop at
//! different code alignments, plus a portable pair in which B runs fewer
//! instructions and is slower from cache misses. The plan only: the workload is
//! [`xferbench_lab::workload::perf_stat`], the rig [`xferbench_lab::rig::perf_stat`], the
//! counting points [`callgrind`] and [`perf`].
//!
//! # Points
//!
//! Six points, `benchmark` × `variant` (`a`, `b`), with `pair` = `alignment` or
//! `memory`. One run of a point is one process of the seed's harness (set-up, one
//! warm-up run, ten timed runs); its primary figure is the mean of the ten timed
//! runs ([`xferbench_lab::rig::perf_stat::figures::TIME_S`]). Points run interleaved (A and
//! B of every pair alternate), 30 runs each (5 with `--quick`), so Welch's test in
//! the tables compares runs that shared the machine's drift and can see a
//! difference of a few percent on a noisy machine.
//!
//! # Extras
//!
//! * `passes`: [`passes::Passes`]: why callgrind's points and each group of
//!   perf's (the default block for T2, the seed's stall events for T3, the stall
//!   search for T4) were not planned, when they were not.
//! * `placement`: where each build's hot loop is, in words.
//! * `rerun`: the commands to run on bare metal.
//! * `container`: whether the study ran in a container.
//!
//! # Callgrind's points
//!
//! Where valgrind is installed and the benchmarks are processes, the plan starts
//! with callgrind's counts of every build (group `callgrind`, on reduced
//! iterations, scaled to one timed run; [`callgrind`]): one run each, no warm-up,
//! visited in the first round of the interleaved plan. The timed points have no
//! `group`.
//!
//! # perf's points
//!
//! Where perf is installed and the benchmarks are processes, `perf stat`'s counts
//! follow callgrind's, before the timed points ([`perf`]): the default block
//! (group `perf-stat`, one run) everywhere, the seed's stall events (`stalls`) and
//! the stall search (`search`) where a hardware PMU answers, each a point per pair
//! and build with its own few runs and no warm-up.

pub mod bench;
pub mod callgrind;
pub mod params;
pub mod passes;
pub mod perf;
pub mod writer;

use crate::study::{Study, StudyEnv, StudyPlan};
use bench::PerfStatBench;
use params::names;
use std::collections::BTreeMap;
use std::time::Duration;
use xferbench_lab::measure::{LoopOptions, PlannedPoint};
use xferbench_lab::rig::perf_stat::RULES;
use xferbench_lab::workload::perf_stat::{BenchSpec, Benchmark, Variant, placement};
use xferbench_probes::counters::CounterMode;
use xferbench_probes::counters::perf_stat;

/// The participants a profile can record: this process only (each run's
/// benchmark is a new process).
pub const PARTICIPANTS: [&str; 1] = ["main"];

/// The commands that reproduce the study with a PMU.
pub const RERUN: [&str; 2] = [
    "xferbench study perf-stat --out perf-stat-bare-metal",
    "xferbench ab --runs 10 --search-stalls \"xferbench __perfstat-bench '{\\\"bench\\\":\\\"circular_buffer_into_byte_buffer_1kb\\\",\\\"variant\\\":\\\"a\\\",\\\"iterations\\\":10000,\\\"warmup\\\":1,\\\"runs\\\":10}'\" \"xferbench __perfstat-bench '{\\\"bench\\\":\\\"circular_buffer_into_byte_buffer_1kb\\\",\\\"variant\\\":\\\"b\\\",\\\"iterations\\\":10000,\\\"warmup\\\":1,\\\"runs\\\":10}'\"",
];

pub use params::pair_of;

/// The study's points: every benchmark, A then B.
pub fn points() -> Vec<(PlannedPoint, BenchSpec)> {
    let mut out = Vec::new();
    for bench in Benchmark::ALL {
        for variant in [Variant::A, Variant::B] {
            let spec = BenchSpec::seed(bench, variant);
            let params = [
                (names::PAIR, pair_of(bench).to_string()),
                (names::BENCHMARK, bench.name().to_string()),
                (names::VARIANT, variant.name().to_string()),
            ];
            let planned = PlannedPoint {
                size_bytes: bench.size() as u64,
                ..PlannedPoint::from_params(params, RULES)
            };
            out.push((planned, spec));
        }
    }
    out
}

/// Runs, order and time limits: 30 interleaved runs (5 quick), no loop warm-up (the
/// harness warms up inside each process).
pub fn loop_options(quick: bool) -> LoopOptions {
    LoopOptions {
        judge: &xferbench_lab::judge::LAB,
        runs: if quick { 5 } else { 30 },
        warmup: 0,
        interleave: true,
        hang_timeout: Duration::from_secs(120),
        counters: CounterMode::Off,
        profile: None,
        watch: None,
        until_stopped: false,
    }
}

/// The study: `xferbench study perf-stat`.
#[derive(Debug, Clone, Copy)]
pub struct PerfStat;

impl Study for PerfStat {
    fn name(&self) -> &'static str {
        "perf-stat"
    }

    fn description(&self) -> &'static str {
        "same instructions, slower: two code alignments of the seed's benchmark and a cache-miss pair, with the stall that explains it"
    }

    fn participants(&self) -> &'static [&'static str] {
        &PARTICIPANTS
    }

    fn plan(&self, quick: bool, env: &StudyEnv) -> StudyPlan {
        let options = loop_options(quick);
        let settings = env.settings("perf-stat", &options, false);
        let pts = points();
        let mut extras = BTreeMap::new();
        let place: BTreeMap<String, String> = pts
            .iter()
            .map(|(p, s)| {
                (
                    format!(
                        "{} {}",
                        p.params[names::BENCHMARK],
                        p.params[names::VARIANT]
                    ),
                    placement(s),
                )
            })
            .collect();
        extras.insert("placement".into(), serde_json::json!(place));
        let tools = passes::Tools::probe();
        let no_callgrind = passes::callgrind_unavailable(env.launcher.as_ref(), tools);
        let perf = perf::plan(env.launcher.as_ref(), tools, quick, || {
            perf_stat::list_events().map_err(|e| e.to_string())
        });
        extras.insert(
            "passes".into(),
            serde_json::to_value(passes::Passes::not_planned(no_callgrind.clone(), &perf))
                .expect("the passes serialise"),
        );
        extras.insert("rerun".into(), serde_json::json!(RERUN));
        extras.insert(
            "container".into(),
            serde_json::json!(passes::in_container()),
        );
        let mut bench = PerfStatBench::new(pts, env.launcher.clone());
        if let Some(launcher) = &env.launcher {
            bench = bench.with_perf_first(perf.points, launcher);
            if no_callgrind.is_none() {
                bench = bench.with_callgrind_first(callgrind::points(quick), launcher);
            }
        }
        StudyPlan {
            bench: Box::new(bench),
            options,
            settings,
            extras,
            watch: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use xferbench_lab::measure::run_plan;
    use xferbench_lab::rig::perf_stat::figures::TIME_S;
    use xferbench_lab::rig::perf_stat::perf as perf_rig;

    #[test]
    fn the_plan_has_both_builds_of_every_benchmark_interleaved() {
        let pts = points();
        assert_eq!(pts.len(), 6);
        let keys: Vec<&str> = pts[0].0.params.keys().map(String::as_str).collect();
        assert_eq!(keys, ["benchmark", "pair", "variant"]);
        assert_eq!(pts[0].1.runs, 10);
        assert_eq!(pts[0].1.warmup, 1);
        let o = loop_options(true);
        assert!(o.interleave && o.runs == 5 && o.warmup == 0);
        assert_eq!(loop_options(false).runs, 30);
        assert!(super::super::find("perf-stat").is_ok());
    }

    #[test]
    fn callgrind_points_come_first_with_one_run_each_and_keep_it_under_only() {
        use xferbench_lab::measure::Bench;
        let launcher = xferbench_probes::process::Launcher::new("/bin/false");
        let bench = PerfStatBench::new(points(), None)
            .with_callgrind_first(callgrind::points(true), &launcher);
        let pts = bench.points();
        assert_eq!(pts.len(), 12);
        let own = xferbench_lab::plan::RunCount { runs: 1, warmup: 0 };
        for (i, p) in pts.iter().enumerate() {
            if i < 6 {
                assert_eq!(p.params["group"], callgrind::GROUP);
                assert_eq!(p.runs, Some(own));
            } else {
                assert!(!p.params.contains_key("group") && p.runs.is_none());
            }
        }
        // `--only` keeps a point's own run count.
        let only = crate::subset::PointFilter::parse("benchmark=list_walk_512k_nodes").unwrap();
        let sub = crate::subset::Subset::new(Box::new(bench), &only);
        let runs: Vec<_> = sub.points().iter().map(|p| p.runs).collect();
        assert_eq!(runs, [Some(own), Some(own), None, None]);
    }

    #[test]
    fn perf_points_come_after_callgrind_and_before_the_timed_points_in_groups_of_their_own() {
        use xferbench_lab::measure::Bench;
        let launcher = xferbench_probes::process::Launcher::new("/bin/false");
        let vm = passes::Tools {
            pmu: false,
            perf: true,
            valgrind: true,
        };
        // Without a PMU: the default block only; the stall groups say why not.
        let plan = perf::plan(Some(&launcher), vm, false, || unreachable!("no perf list"));
        assert_eq!(plan.points.len(), 4);
        assert!(plan.default_block.is_none());
        assert!(
            plan.stall_events
                .as_deref()
                .unwrap()
                .starts_with("no hardware PMU")
        );
        assert!(plan.search.is_some());
        let bench = PerfStatBench::new(points(), None)
            .with_perf_first(plan.points, &launcher)
            .with_callgrind_first(callgrind::points(false), &launcher);
        let groups: Vec<&str> = bench
            .points()
            .iter()
            .map(|p| p.params.get("group").map_or("", String::as_str))
            .collect();
        let want: Vec<&str> = [callgrind::GROUP; 6]
            .into_iter()
            .chain([perf::DEFAULT_BLOCK; 4])
            .chain([""; 6])
            .collect();
        assert_eq!(groups, want);
        let one = xferbench_lab::plan::RunCount { runs: 1, warmup: 0 };
        assert!(bench.points()[6..10].iter().all(|p| p.runs == Some(one)));
        // With a PMU: the seed's events perf knows, and the search over `perf list`.
        let pmu = passes::Tools { pmu: true, ..vm };
        let list = || {
            Ok::<_, String>(
                [
                    "instructions",
                    "resource_stalls.any",
                    "dsb2mite_switches.penalty_cycles",
                ]
                .map(String::from)
                .to_vec(),
            )
        };
        let plan = perf::plan(Some(&launcher), pmu, false, list);
        assert!(plan.stall_events.is_none() && plan.search.is_none());
        let group = |g: &str| -> Vec<&(PlannedPoint, perf_rig::PerfCount)> {
            plan.points
                .iter()
                .filter(|(p, _)| p.params["group"] == g)
                .collect()
        };
        let stalls = group(perf::STALLS);
        assert_eq!(stalls.len(), 4);
        assert_eq!(stalls[0].1.events, ["instructions", "resource_stalls.any"]);
        assert_eq!(stalls[0].1.unknown.len(), 3);
        assert_eq!(stalls[0].0.runs.unwrap().runs, 3);
        let search = group(perf::SEARCH);
        assert_eq!(search.len(), 4);
        assert!(
            search[0]
                .1
                .events
                .contains(&"dsb2mite_switches.penalty_cycles".to_string())
        );
        assert_eq!(search[0].0.runs.unwrap().runs, 2);
        // `perf list` failing leaves the default block, and says why.
        let plan = perf::plan(Some(&launcher), pmu, true, || Err("no".into()));
        assert_eq!(plan.points.len(), 4);
        assert_eq!(plan.search.as_deref(), Some("perf list failed: no"));
    }

    #[test]
    fn a_tiny_plan_runs_through_the_point_loop_on_threads() {
        let pts: Vec<_> = points()
            .into_iter()
            .map(|(p, mut s)| {
                s.iterations = if s.bench.is_seed() { 2 } else { 1000 };
                s.runs = 2;
                (p, s)
            })
            .collect();
        let mut bench = PerfStatBench::new(pts, None);
        let options = LoopOptions {
            judge: &xferbench_lab::judge::LAB,
            runs: 2,
            ..loop_options(true)
        };
        let env = StudyEnv::default();
        let doc = run_plan(
            xferbench_lab::result::test_context(env.settings("perf-stat", &options, false)),
            &mut bench,
            &options,
            &AtomicBool::new(false),
            &mut [],
        );
        assert!(
            matches!(doc.outcome, xferbench_lab::result::Outcome::Complete),
            "{:?}",
            doc.outcome
        );
        assert_eq!(doc.points.len(), 6);
        for p in &doc.points {
            assert_eq!(p.runs.len(), 2);
            assert!(p.summary[TIME_S].median > 0.0);
        }
        let tools = passes::Tools::probe();
        assert!(passes::callgrind_unavailable(None, tools).is_some());
        let perf = perf::plan(None, tools, true, || unreachable!("no perf list"));
        assert!(perf.points.is_empty());
        assert_eq!(perf.default_block.as_deref(), Some(passes::NO_LAUNCHER));
        // Without a launcher the plan is the timed points only.
        let plan = PerfStat.plan(true, &env);
        assert_eq!(plan.bench.points().len(), 6);
        assert!(
            plan.bench
                .points()
                .iter()
                .all(|p| p.runs.is_none() && !p.params.contains_key("group"))
        );
    }
}
