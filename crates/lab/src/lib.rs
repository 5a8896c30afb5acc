//! The measurement lab: workloads, the sweep planner, the runner (threads and peer
//! processes), timers, CPU accounting, payload verification, statistics and the
//! result model.
//!
//! The lab knows nothing of the command line or of report formats: the CLI builds a
//! [`SweepSpec`](sweep::SweepSpec) and [`RunOptions`](runner::RunOptions), and
//! [`run_sweep`] hands every finished point to the [`Observer`](observer::Observer)s.

#![deny(missing_docs)]

pub mod ab;
pub mod affinity;
pub mod clock;
pub mod compare;
pub mod context;
pub mod counters;
pub mod cpu;
pub mod observer;
pub mod peer;
pub mod process;
pub mod profile;
pub mod result;
pub mod rpmsg;
pub mod runner;
pub mod stats;
pub mod studies;
pub mod sweep;
pub mod transports;
pub mod verify;
pub mod workload;

use observer::Observer;
use result::{Context, Outcome, ResultDoc, SCHEMA_VERSION};
use runner::{RunError, RunOptions, run_point};
use std::sync::atomic::{AtomicBool, Ordering};
use sweep::PointSpec;

/// Runs every point in order, streaming each finished point to the observers.
///
/// Returns the document of everything that finished, whatever happened: on Ctrl-C
/// (`stop`) the outcome is [`Outcome::Interrupted`]; on a failed point or observer it
/// is [`Outcome::Failed`] with the error's whole cause chain.
pub fn run_sweep(
    context: Context,
    points: &[PointSpec],
    opts: &RunOptions,
    stop: &AtomicBool,
    observers: &mut [&mut dyn Observer],
) -> ResultDoc {
    let mut doc = ResultDoc {
        schema_version: SCHEMA_VERSION,
        context,
        points: Vec::with_capacity(points.len()),
        warnings: Vec::new(),
        outcome: Outcome::Complete,
    };
    if opts.counters == counters::CounterMode::PerfEvent && !doc.context.capabilities.pmu {
        if let Some(note) = &doc.context.capabilities.pmu_note {
            doc.warnings.push(format!("counters: {note}"));
        }
    }
    let failed = |e: &dyn std::error::Error| Outcome::Failed { error: chain(e) };
    'sweep: {
        for o in observers.iter_mut() {
            if let Err(e) = o.sweep_started(&doc.context, points) {
                doc.outcome = failed(&e);
                break 'sweep;
            }
        }
        for (index, point) in points.iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                doc.outcome = Outcome::Interrupted;
                break;
            }
            for o in observers.iter_mut() {
                if let Err(e) = o.point_started(index, point) {
                    doc.outcome = failed(&e);
                    break 'sweep;
                }
            }
            let mut on_run = |p| observers.iter_mut().for_each(|o| o.run_finished(index, p));
            match run_point(index, point, opts, stop, &mut on_run) {
                Ok(result) => {
                    for o in observers.iter_mut() {
                        if let Err(e) = o.point_finished(&result) {
                            doc.points.push(result);
                            doc.outcome = failed(&e);
                            break 'sweep;
                        }
                    }
                    doc.points.push(result);
                }
                Err(RunError::Interrupted) => {
                    doc.outcome = Outcome::Interrupted;
                    break;
                }
                Err(e) => {
                    let what = format!("point {} ({})", index + 1, describe(point));
                    doc.outcome = Outcome::Failed {
                        error: format!("{what}: {}", chain(&e)),
                    };
                    break;
                }
            }
        }
    }
    for p in &doc.points {
        for w in &p.warnings {
            if w.starts_with("noisy") && !doc.warnings.iter().any(|x| x.starts_with("noisy")) {
                doc.warnings.push(
                    "noisy: some points vary by more than 5 % between runs (see their warnings)"
                        .into(),
                );
            }
        }
    }
    for o in observers.iter_mut() {
        if let Err(e) = o.sweep_finished(&doc) {
            if doc.outcome == Outcome::Complete {
                doc.outcome = failed(&e);
            }
        }
    }
    doc
}

/// A point in words: `pipe size=64 channels=1 pipe_size=1MiB`.
pub fn describe(point: &PointSpec) -> String {
    let mut s = format!(
        "{} size={} channels={}",
        point.transport, point.size, point.channels
    );
    for (k, v) in &point.transport_params {
        s.push_str(&format!(" {k}={v}"));
    }
    s
}

/// An error and all its causes, joined with ": ".
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let text = c.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cur = c.source();
    }
    s
}
