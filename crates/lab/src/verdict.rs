//! What `ab` concluded, as its result document records it beside its two points
//! ([`ResultDoc::ab`](crate::result::ResultDoc::ab)): the verdict of B against A, the
//! counting passes that are not timed runs (callgrind's, `perf stat`'s) and the
//! evidence the diagnosis weighed. The points themselves (A's and B's timed runs,
//! their statistics and contention) are the point loop's, as for every plan; `ab`
//! (above the core) measures and judges, this module only holds what it found.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The comparison of B against A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AbVerdict {
    /// What was counted of command A beyond its timed runs.
    pub a: AbCounted,
    /// What was counted of command B.
    pub b: AbCounted,
    /// `mean(B) / mean(A) − 1` of the wall times: positive when B is slower.
    pub difference: f64,
    /// Welch's t-test p-value of the wall times.
    pub p_value: f64,
    /// `p_value` below `ab`'s significance level (1 %).
    pub significant: bool,
    /// `A`, `B`, or `neither` when not significant.
    pub faster: String,
    /// Instructions of B relative to A, `B / A − 1`, when known.
    pub instructions_difference: Option<f64>,
    /// The diagnosis in words.
    pub diagnosis: String,
    /// Notes on stability and CPU-bound-ness, on the machine, and on what could not be
    /// counted.
    pub notes: Vec<String>,
    /// B is significantly slower than A by more than the threshold.
    pub regression: bool,
    /// The threshold, as a fraction.
    pub threshold: f64,
    /// Counters that could not be opened here (no PMU, forbidden, not in this CPU).
    #[serde(default)]
    pub unsupported: Vec<String>,
    /// The named events (`--events`), A vs B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<EventComparison>,
    /// The stall search (`--search-stalls`), ranked by B/A.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<EventComparison>,
    /// The instruction counts of A and B against their own run-to-run noise, and the
    /// runs that would resolve the time difference they predict (absent when
    /// instructions were not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<InstructionSignal>,
}

/// What was counted of one command outside its timed runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AbCounted {
    /// The command, as run with `sh -c` (its point's `command` parameter).
    pub command: String,
    /// The totals of each callgrind pass (instructions `Ir` and simulated cache
    /// misses), in the order they ran; empty with a PMU or without valgrind.
    #[serde(default)]
    pub callgrind: Vec<BTreeMap<String, f64>>,
}

/// One event counted on A and B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventCount {
    /// The event as perf (or callgrind) names it.
    pub event: String,
    /// Mean count on A, when counted.
    pub a: Option<f64>,
    /// Mean count on B, when counted.
    pub b: Option<f64>,
    /// `b / a`, when both were counted and `a > 0`.
    pub ratio: Option<f64>,
    /// `counted`, `multiplexed` (scaled by perf), `not supported` or `not counted`.
    pub status: String,
    /// Lowest percentage of the time the event was really counted (multiplexing).
    pub running_pct: Option<f64>,
    /// The likely cause when this event moves (`ab::stalls::cause_of`).
    pub cause: String,
}

/// Events counted on A and B by `perf stat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventComparison {
    /// Runs of each side (interleaved A, B, A, B …); counts are means over them.
    pub rounds: usize,
    /// The events, in the order asked (named events) or ranked by B/A (search).
    pub rows: Vec<EventCount>,
    /// Names perf does not know on this machine (not counted).
    #[serde(default)]
    pub unknown: Vec<String>,
}

/// What the instruction counts of A and B say, beside their times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InstructionSignal {
    /// Where the counts come from: `PMU` or `callgrind`.
    pub source: String,
    /// Independent counts of A (runs or callgrind passes).
    pub a_counts: usize,
    /// Independent counts of B.
    pub b_counts: usize,
    /// `mean(B) / mean(A) − 1`.
    pub difference: f64,
    /// The counts' run-to-run noise: the larger of the two sides' `(max − min) / mean`;
    /// absent when a side was counted once (then it is unknown).
    pub noise: Option<f64>,
    /// The difference exceeds `ab::signal::NOISE_FACTOR` × the noise, or A's and B's ranges do
    /// not overlap and it exceeds the noise (and, either way, 0.01 %).
    pub beyond_noise: bool,
    /// The wall times' relative spread, pooled over A and B: `√((sd_A² + sd_B²) / 2) /
    /// mean_A`.
    pub time_spread: f64,
    /// Runs of each command that would show a time difference as large as the
    /// instruction difference at that spread (`ab::signal::runs_to_resolve`); absent unless the
    /// difference is beyond the noise.
    pub suggested_runs: Option<usize>,
}
