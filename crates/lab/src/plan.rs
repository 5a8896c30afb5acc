//! A plan: the points to measure, as results and observers see them, and the
//! [`Bench`] that stands up a [`Rig`] for any of them. The point loop
//! ([`crate::measure`]) runs a plan; `run` plans a sweep, each study its own points.

use crate::counters;
use crate::record::FigureRules;
use crate::rig::{Rig, RunError};
use std::collections::BTreeMap;

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
}

impl PlannedPoint {
    /// The point in words: `transport=pipe size=64 channels=1 pipe_size=1MiB`.
    pub fn describe(&self) -> String {
        describe_params(&self.params)
    }
}

/// Parameters in words, `workload` left out.
pub fn describe_params(params: &BTreeMap<String, String>) -> String {
    params
        .iter()
        .filter(|(k, _)| k.as_str() != "workload")
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
    /// ([`crate::contention`]): the real `/proc`; a bench of scripted runs may give a
    /// scripted one, or none.
    fn machine_load(&self) -> Option<crate::contention::ProcFs> {
        Some(crate::contention::ProcFs::real())
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
