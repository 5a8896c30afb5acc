//! A plan: the points to measure, as results and observers see them, and the
//! [`Bench`] that stands up a [`Rig`] for any of them. The point loop
//! (`measure`) runs a plan; `run` plans a sweep, each study its own points.

use crate::control::{Rig, RunError};
use crate::limits::Limits;
use crate::limits::fraction::LimitFraction;
use crate::record::FigureRules;
use std::collections::BTreeMap;
use xferbench_probes::counters;
use xferbench_probes::stats::Estimate;

/// One point of a plan, as results and observers see it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedPoint {
    /// The point's parameters as strings (`workload`, `transport`, `size`, …); points
    /// of two results are matched by them.
    pub params: BTreeMap<String, String>,
    /// Payload size of one message, bytes.
    pub size_bytes: u64,
    /// Concurrent channels (threads, clients).
    pub channels: usize,
    /// The workload's primary figure.
    pub rules: FigureRules,
    /// Whether integrity is checked (an absent count is then a fault).
    pub verify: bool,
    /// The point's own measured runs and warm-up per visit, where they differ from
    /// the plan's (`measure::LoopOptions`, `--runs`,
    /// `--warmup`): a deterministic count (callgrind) is one run with no warm-up
    /// whatever the plan's; a calibration one visit of a warm-up and a measured run.
    /// `None`: the plan's.
    pub runs: Option<RunCount>,
}

/// Measured runs of a point and the warm-up runs discarded before them on each
/// visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunCount {
    /// Measured runs of the point, kept.
    pub runs: usize,
    /// Discarded warm-up runs per visit.
    pub warmup: usize,
}

impl PlannedPoint {
    /// A point of `params` (`(key, value)` pairs) whose primary figure follows
    /// `rules`: no payload size, one channel, no integrity check and the plan's run
    /// count, until set otherwise (`PlannedPoint { channels: 4,
    /// ..PlannedPoint::from_params(params, rules) }`).
    pub fn from_params<K, V>(
        params: impl IntoIterator<Item = (K, V)>,
        rules: FigureRules,
    ) -> PlannedPoint
    where
        K: Into<String>,
        V: Into<String>,
    {
        PlannedPoint {
            params: params
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            size_bytes: 0,
            channels: 1,
            rules,
            verify: false,
            runs: None,
        }
    }

    /// The point with its own run count ([`PlannedPoint::runs`]).
    pub fn with_runs(self, runs: usize, warmup: usize) -> PlannedPoint {
        PlannedPoint {
            runs: Some(RunCount { runs, warmup }),
            ..self
        }
    }

    /// The point's measured runs and warm-up: its own, or else the plan's.
    pub fn run_count(&self, plan: RunCount) -> RunCount {
        self.runs.unwrap_or(plan)
    }

    /// The point in words: `transport=pipe size=64 channels=1 pipe_size=1MiB`.
    pub fn describe(&self) -> String {
        describe_params(&self.params)
    }
}

/// Parameters in words, `workload` left out.
pub fn describe_params(params: &BTreeMap<String, String>) -> String {
    params
        .iter()
        .filter(|(k, _)| k.as_str() != crate::names::WORKLOAD)
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Stands up a rig for any point of a plan.
pub trait Bench {
    /// The plan, in order.
    fn points(&self) -> &[PlannedPoint];
    /// Starts the participants of point `index`. A counter `source` may wrap
    /// participant processes (callgrind).
    fn rig(
        &mut self,
        index: usize,
        source: Option<&dyn counters::CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError>;
    /// Where the point loop reads how busy the machine is with other work
    /// ([`xferbench_probes::contention`]): the real `/proc`; a bench of scripted runs may give a
    /// scripted one, or none.
    fn machine_load(&self) -> Option<xferbench_probes::contention::ProcFs> {
        Some(xferbench_probes::contention::ProcFs::real())
    }
    /// Whether the plan goes on past a failed point (recording it in
    /// [`ResultDoc::failed`](crate::result::ResultDoc::failed)) instead of ending there:
    /// `run`'s sweeps do, unless `--fail-fast`; a study's plan ends at its first
    /// failure.
    fn keep_going(&self) -> bool {
        false
    }
    /// Whether a point's warm-up runs come on its first visit only, as a benchmark of
    /// commands warms up once (`ab`), instead of on every visit, where each visit
    /// stands its participants up anew (processes, connections, rings: `run
    /// --interleave`).
    fn warm_up_once(&self) -> bool {
        false
    }
}

/// Progress within a point, for progress bars.
#[derive(Debug, Clone, Copy)]
pub struct RunProgress {
    /// Runs done (warm-up included).
    pub done: usize,
    /// Runs in all (warm-up included).
    pub total: usize,
}

/// What the loop asks of the systems it measures about a finished point: what only
/// the transports, the workloads and the point-to-limit pairing know. The lab's
/// answers are `judge::LAB`.
pub trait Judge: std::fmt::Debug + Sync {
    /// The parameters of a point's transport it left at their defaults
    /// ([`PointResult::defaults`](crate::result::PointResult::defaults)); empty for a point without a transport or one the
    /// lab does not know.
    fn transport_defaults(&self, params: &BTreeMap<String, String>) -> BTreeMap<String, String>;

    /// The point's fraction of its natural limit in `limits`, from `figures` (its
    /// summary, or one run's figures as estimates), when it has one.
    fn limit_fraction(
        &self,
        params: &BTreeMap<String, String>,
        size_bytes: u64,
        channels: usize,
        figures: &BTreeMap<String, Estimate>,
        limits: &Limits,
    ) -> Option<LimitFraction>;

    /// The warning of a load point whose sender fell behind its schedule, from its
    /// `summary`, held against the machine's p99 wait for a CPU; it begins with
    /// [`BEHIND_WARNING`](crate::record::BEHIND_WARNING).
    fn pacing_warning(
        &self,
        summary: &BTreeMap<String, Estimate>,
        channels: usize,
        stall_p99_ns: Option<f64>,
    ) -> Option<String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_from_params_has_one_channel_and_the_plan_s_runs_until_told_otherwise() {
        let rules = FigureRules {
            primary: "time_s",
            higher_is_better: false,
        };
        let p =
            PlannedPoint::from_params([("group", "a".to_string()), ("variant", "b".into())], rules);
        assert_eq!(p.describe(), "group=a variant=b");
        assert_eq!(
            (p.size_bytes, p.channels, p.verify, p.runs),
            (0, 1, false, None)
        );
        let q = PlannedPoint {
            size_bytes: 64,
            ..PlannedPoint::from_params(p.params.clone(), rules)
        };
        assert_eq!(q.params, p.params);
        assert_eq!(q.size_bytes, 64);
    }
}
