//! Callgrind's counts of every build as points of the study's plan, ahead of its
//! timed points: one point per benchmark and build (group [`GROUP`]), each with its
//! own run count of **one** run and no warm-up ([`PlannedPoint::runs`]), so an
//! interleaved plan visits them in its first round only. Callgrind counts
//! instructions and simulated cache misses of a deterministic program: a second run
//! would count the same, so one run is the measurement, not a sample of it. The loop
//! still gives each point its context, its window and the machine's load over it.
//!
//! Each point runs on the lab's [`CallgrindRig`](xferbench_lab::rig::perf_stat::callgrind::CallgrindRig):
//! a run that callgrind could not count is kept without counts and says why in its
//! point's warnings, and the timed points still run. A run's figures are
//! callgrind's totals over the reduced iterations, scaled to one timed run of the
//! seed's harness, each named [`PREFIX`] + callgrind's name (`callgrind_Ir`, …).

use super::params::names;
use super::passes::{CallgrindCount, callgrind_iterations};
use std::collections::BTreeMap;
use xferbench_lab::measure::PlannedPoint;
use xferbench_lab::result::PointResult;
use xferbench_lab::rig::FigureRules;
use xferbench_lab::rig::perf_stat::callgrind::PREFIX;
use xferbench_lab::workload::perf_stat::{BenchSpec, Benchmark, Variant};

/// The group of the callgrind points.
pub const GROUP: &str = "callgrind";

/// Instructions per timed run, lower is better.
pub const RULES: FigureRules = FigureRules {
    primary: "callgrind_Ir",
    higher_is_better: false,
};

/// Both builds of every benchmark on [`callgrind_iterations`] iterations, as
/// points of one run and no warm-up.
pub fn points(quick: bool) -> Vec<(PlannedPoint, BenchSpec)> {
    Benchmark::ALL
        .into_iter()
        .flat_map(|bench| [(bench, Variant::A), (bench, Variant::B)])
        .map(|(bench, variant)| {
            let iterations = callgrind_iterations(bench, quick);
            let spec = BenchSpec {
                iterations,
                warmup: 0,
                runs: 1,
                ..BenchSpec::seed(bench, variant)
            };
            let params = [
                (crate::params::names::GROUP, GROUP.to_string()),
                (names::BENCHMARK, bench.name().to_string()),
                (names::VARIANT, variant.name().to_string()),
                (names::ITERATIONS, iterations.to_string()),
            ];
            let planned = PlannedPoint::from_params(params, RULES).with_runs(1, 0);
            (planned, spec)
        })
        .collect()
}

/// A finished callgrind point as the passes record it.
pub fn count_of(p: &PointResult) -> Option<CallgrindCount> {
    let run = p.runs.first()?;
    let param = |k: &str| p.params.get(k).cloned();
    let benchmark = param(names::BENCHMARK)?;
    let iterations: u64 = param(names::ITERATIONS)?.parse().ok()?;
    let bench = Benchmark::ALL.into_iter().find(|b| b.name() == benchmark)?;
    Some(CallgrindCount {
        benchmark,
        variant: param(names::VARIANT)?,
        iterations,
        scale: bench.iterations() as f64 / iterations.max(1) as f64,
        per_run: run
            .figures
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(PREFIX)?.to_string(), *v)))
            .collect::<BTreeMap<_, _>>(),
    })
}
