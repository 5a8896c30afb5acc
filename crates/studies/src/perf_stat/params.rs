//! The perf-stat study's point parameters, defined once.

use xferbench_lab::workload::perf_stat::Benchmark;
use xferbench_params::ParamDef;

/// The names of the perf-stat study's point parameters, for code that builds or
/// selects points by them; each is the name of its definition below.
pub mod names {
    /// [`super::PAIR`].
    pub const PAIR: &str = "pair";
    /// [`super::BENCHMARK`].
    pub const BENCHMARK: &str = "benchmark";
    /// [`super::VARIANT`].
    pub const VARIANT: &str = "variant";
    /// [`super::ITERATIONS`].
    pub const ITERATIONS: &str = "iterations";
}

/// `pair`: which pair of the study a benchmark belongs to ([`pair_of`]).
pub const PAIR: ParamDef = ParamDef::text(
    names::PAIR,
    "alignment or memory",
    "",
    "the pair of the study a benchmark belongs to: the seed's code alignments or the cache-miss pair",
);

/// `benchmark`: the benchmark a point runs (`Benchmark::name`).
pub const BENCHMARK: ParamDef = ParamDef::text(
    names::BENCHMARK,
    "a benchmark's name",
    "",
    "the benchmark a point runs",
);

/// `variant`: the build of the benchmark's hot loop, `a` (before) or `b` (after).
pub const VARIANT: ParamDef = ParamDef::text(
    names::VARIANT,
    "a or b",
    "a",
    "the build of the benchmark's hot loop: a (before) or b (after)",
);

/// `iterations`: the iterations of one run of a counting point.
pub const ITERATIONS: ParamDef = ParamDef::integer(
    names::ITERATIONS,
    1,
    i64::MAX,
    1,
    "iterations of one run of a counting point",
);

/// Which pair a benchmark belongs to.
pub fn pair_of(bench: Benchmark) -> &'static str {
    if bench.is_seed() {
        "alignment"
    } else {
        "memory"
    }
}
