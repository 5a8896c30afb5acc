//! `perf stat`'s counts as points of the study's plan, after callgrind's and
//! before the timed points: one point per pair and build
//! ([`EVENT_PAIRS`] × `a`, `b`) in each of three groups:
//!
//! * [`DEFAULT_BLOCK`]: perf's default event set (T2 shows A of the 1 KiB
//!   benchmark), one run, no warm-up;
//! * [`STALLS`]: the seed's stall events ([`SEED_STALL_EVENTS`] that perf knows on
//!   this CPU), 3 runs (1 with `--quick`), no warm-up;
//! * [`SEARCH`]: every stall, penalty or miss event of `perf list`
//!   ([`stalls::search_candidates`]), 2 runs (1 quick), no warm-up; the writer ranks
//!   them by B/A.
//!
//! Every group's events are known when the plan is made (`perf list` is read
//! then), so all three are points of the one plan; A and B of a pair alternate in
//! the interleaved plan as `ab`'s rounds do. The stall groups are planned only
//! where a hardware PMU answers and the search only where perf can count it; why
//! a group was not planned is in the study's `passes` extra.
//!
//! One run is one benchmark process of the seed's harness under `perf stat -x,`,
//! on the lab's [`PerfRig`](xferbench_lab::rig::perf_stat::perf::PerfRig), whose
//! module names its figures and warnings: a run perf could not count is kept without
//! counts and says why in its point's warnings, and the timed points still run.

use super::params::names;
use super::passes::{NO_LAUNCHER, PerfPlan, SEED_STALL_EVENTS, Tools};
use xferbench_lab::ab::stalls;
use xferbench_lab::measure::PlannedPoint;
use xferbench_lab::rig::FigureRules;
use xferbench_lab::rig::perf_stat::perf::{ELAPSED_S, PerfCount, UNKNOWN};
use xferbench_lab::workload::perf_stat::{BenchSpec, Benchmark, Variant};
use xferbench_probes::counters::perf_stat;
use xferbench_probes::process::Launcher;

/// The group of the default block's points.
pub const DEFAULT_BLOCK: &str = "perf-stat";
/// The group of the seed's stall events.
pub const STALLS: &str = "stalls";
/// The group of the stall search.
pub const SEARCH: &str = "search";

/// Wall time of the command, lower is better.
pub const RULES: FigureRules = FigureRules {
    primary: ELAPSED_S,
    higher_is_better: false,
};

/// The pairs whose events are counted: the seed's 1 KiB one and the memory pair.
pub const EVENT_PAIRS: [Benchmark; 2] = [Benchmark::CircularBuffer1Kb, Benchmark::ListWalk];

const NO_PERF: &str = "perf is not installed (apt-get install linux-perf)";

fn no_pmu_reason() -> String {
    "no hardware PMU here (a VM without PMU passthrough, a container that blocks perf_event_open, \
     or kernel.perf_event_paranoid too high): every hardware event is <not supported>"
        .into()
}

/// Plans perf's groups on this machine: `launcher` starts the benchmarks (none:
/// they are threads, and nothing is planned), `tools` what it has, `list` reads
/// `perf list` (called once, only where a stall group may be planned).
pub fn plan(
    launcher: Option<&Launcher>,
    tools: Tools,
    quick: bool,
    list: impl FnOnce() -> Result<Vec<String>, String>,
) -> PerfPlan {
    let not = |r: String| PerfPlan {
        points: Vec::new(),
        default_block: Some(r.clone()),
        stall_events: Some(r.clone()),
        search: Some(r),
    };
    if launcher.is_none() {
        return not(NO_LAUNCHER.into());
    }
    let search_off = xferbench_lab::ab::search_unavailable(tools.pmu, tools.perf)
        .map(|r| r.trim_start_matches("--search-stalls: ").to_string());
    if !tools.perf {
        return PerfPlan {
            search: search_off.or_else(|| Some(NO_PERF.into())),
            ..not(NO_PERF.into())
        };
    }
    let mut out = PerfPlan {
        points: group(DEFAULT_BLOCK, &[], &[], 1),
        default_block: None,
        stall_events: None,
        search: None,
    };
    if !tools.pmu {
        out.stall_events = Some(no_pmu_reason());
        out.search = search_off.or_else(|| Some(no_pmu_reason()));
        return out;
    }
    let known = match list() {
        Ok(k) => k,
        Err(e) => {
            let r = format!("perf list failed: {e}");
            out.stall_events = Some(r.clone());
            out.search = Some(r);
            return out;
        }
    };
    let wanted: Vec<String> = SEED_STALL_EVENTS.iter().map(|s| s.to_string()).collect();
    let (ok, unknown) = perf_stat::resolve(&wanted, &known);
    if ok.is_empty() {
        out.stall_events = Some(format!("{UNKNOWN}: {}", unknown.join(", ")));
    } else {
        out.points
            .extend(group(STALLS, &ok, &unknown, if quick { 1 } else { 3 }));
    }
    let candidates = stalls::search_candidates(&known);
    match search_off {
        Some(r) => out.search = Some(r),
        None if candidates.is_empty() => {
            out.search = Some("perf list names no stall, penalty or miss event on this CPU".into())
        }
        None => out
            .points
            .extend(group(SEARCH, &candidates, &[], if quick { 1 } else { 2 })),
    }
    out
}

/// One group's points: both builds of every [`EVENT_PAIRS`] benchmark, `runs`
/// runs each and no warm-up.
fn group(
    name: &str,
    events: &[String],
    unknown: &[String],
    runs: usize,
) -> Vec<(PlannedPoint, PerfCount)> {
    EVENT_PAIRS
        .into_iter()
        .flat_map(|bench| [(bench, Variant::A), (bench, Variant::B)])
        .map(|(bench, variant)| {
            let params = [
                (crate::params::names::GROUP, name.to_string()),
                (names::PAIR, super::params::pair_of(bench).to_string()),
                (names::BENCHMARK, bench.name().to_string()),
                (names::VARIANT, variant.name().to_string()),
            ];
            let planned = PlannedPoint {
                size_bytes: bench.size() as u64,
                ..PlannedPoint::from_params(params, RULES)
            }
            .with_runs(runs, 0);
            let count = PerfCount {
                spec: BenchSpec::seed(bench, variant),
                events: events.to_vec(),
                unknown: unknown.to_vec(),
            };
            (planned, count)
        })
        .collect()
}
