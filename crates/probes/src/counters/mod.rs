//! Hardware and software counters of the processes taking part in a measurement.
//!
//! # The contract of a [`CounterSource`]
//!
//! A source is created per sweep point. The runner calls
//! [`CounterSource::window_started`] with every participating process just before it
//! releases the drivers of a run and [`CounterSource::window_ended`] right after the
//! last driver reported, so a per-run source counts exactly the measured window. A
//! source that can only count whole processes (callgrind counts a peer process from
//! start to exit) returns nothing per run and hands its figures to
//! [`CounterSource::point_finished`] after the peers have exited. A source may wrap
//! the peers' launcher ([`CounterSource::wrap_peer`]) to run them under a tool.
//! Nothing a source does may fail a run: what it cannot count is reported in
//! [`RunCounters::unsupported`] or as a warning.
//!
//! # Implementations
//!
//! - [`perf_event`]: `perf_event_open(2)` counters opened by the main process for
//!   every thread of every participant (by thread id from `/proc/PID/task`), software
//!   counters always, hardware counters when a PMU answers. Peers need no protocol
//!   change: the main process counts them by pid (same user, so
//!   `perf_event_paranoid` ≤ 2 allows it).
//! - [`callgrind`]: re-executes the peers under `valgrind --tool=callgrind
//!   --cache-sim=yes` and reads the totals from its output files: deterministic,
//!   simulated instruction and cache-miss counts.
//!
//! Counter names follow `perf stat` (`task-clock`, `instructions`, …) and callgrind
//! (`Ir`, `D1mr`, …); see [`name`].

pub mod callgrind;
mod model;
pub mod perf_event;
pub mod perf_stat;

pub use model::{
    CounterMode, CounterSource, CounterStartError, Participant, PointCounters, ProcessCounters,
    ProcessSummary, RunCounters, derive, name,
};

use crate::stats::Estimate;
use std::collections::BTreeMap;

/// Summarises the per-run counters of a point (or the one per-point reading of a
/// lifetime source) into a [`PointCounters`].
pub fn summarise(runs: &[RunCounters], covers: &str) -> Option<PointCounters> {
    let first = runs.first()?;
    let mut roles: Vec<String> = Vec::new();
    for r in runs {
        for p in &r.processes {
            if !roles.contains(&p.role) {
                roles.push(p.role.clone());
            }
        }
    }
    let estimate = |get: &dyn Fn(&RunCounters) -> Option<f64>| {
        Estimate::from_values(runs.iter().filter_map(get))
    };
    let names: std::collections::BTreeSet<&String> = runs
        .iter()
        .flat_map(|r| r.processes.iter().flat_map(|p| p.values.keys()))
        .collect();
    let mut total = BTreeMap::new();
    for n in &names {
        if n.as_str() == name::IPC {
            continue;
        }
        let sum = |r: &RunCounters| {
            let vals: Vec<f64> = r
                .processes
                .iter()
                .filter_map(|p| p.values.get(*n))
                .copied()
                .collect();
            (!vals.is_empty()).then(|| vals.iter().sum())
        };
        if let Some(e) = estimate(&sum) {
            total.insert((*n).clone(), e);
        }
    }
    let ipc = |r: &RunCounters| {
        let sum = |k: &str| -> f64 { r.processes.iter().filter_map(|p| p.values.get(k)).sum() };
        let c = sum(name::CYCLES);
        (c > 0.0).then(|| sum(name::INSTRUCTIONS) / c)
    };
    if let Some(e) = estimate(&ipc) {
        total.insert(name::IPC.into(), e);
    }
    let processes = roles
        .iter()
        .map(|role| {
            let mut values = BTreeMap::new();
            for n in &names {
                let get = |r: &RunCounters| {
                    r.processes
                        .iter()
                        .find(|p| &p.role == role)
                        .and_then(|p| p.values.get(*n).copied())
                };
                if let Some(e) = estimate(&get) {
                    values.insert((*n).clone(), e);
                }
            }
            ProcessSummary {
                role: role.clone(),
                values,
            }
        })
        .collect();
    Some(PointCounters {
        source: first.source.clone(),
        simulated: first.simulated,
        covers: covers.into(),
        unsupported: first.unsupported.clone(),
        total,
        processes,
    })
}

/// The source for a mode, or `None` for [`CounterMode::Off`].
pub fn source_for(mode: CounterMode, pmu: bool) -> Option<Box<dyn CounterSource>> {
    match mode {
        CounterMode::Off => None,
        CounterMode::PerfEvent => Some(Box::new(perf_event::PerfEventSource::new(pmu))),
        CounterMode::Callgrind => Some(Box::new(callgrind::CallgrindSource::new())),
    }
}
