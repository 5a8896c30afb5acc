//! The measurement lab, knowing no study: workloads, rigs, the point loop, timers,
//! CPU accounting, payload verification, statistics and the result model.
//!
//! The flow of a measurement: a plan of points ([`measure::PlannedPoint`]) and a
//! [`measure::Bench`] that stands up a [`rig::Rig`] per point; the one point loop
//! ([`measure::run_plan`]) runs every rig's warm-up and measured runs, summarises
//! the figures and hands each finished point to the [`observer::Observer`]s. `run`
//! plans a sweep ([`run::run_sweep`]); each built-in study (the `xferbench-studies`
//! crate) plans its own points.
//!
//! The lab knows nothing of the command line or of report formats: the CLI builds a
//! [`SweepSpec`](sweep::SweepSpec) and [`RunOptions`](run::RunOptions), or picks a
//! study from the studies' registry.

#![deny(missing_docs)]

#[cfg(not(target_os = "linux"))]
compile_error!(
    "xferbench runs on Linux only: perf_event_open, /proc, sched_setaffinity and /dev/shm"
);

pub mod ab;
pub mod agent;
pub mod axes;
pub mod check;
pub mod compare;
pub mod context;
pub mod control;
pub mod error;
#[cfg(test)]
pub(crate) mod fake;
pub mod hosts;
pub mod judge;
pub mod knee;
pub mod limits;
pub mod measure;
pub mod names;
pub mod neighbours;
pub mod observer;
pub mod params;
pub mod peer;
pub mod plan;
pub mod plugins;
pub mod rate_search;
pub mod ratio;
pub mod record;
pub mod remote;
pub(crate) mod replies;
pub mod result;
pub mod rig;
pub mod run;
pub mod schema;
pub mod sweep;
pub mod transports;
pub mod verdict;
pub mod workload;

pub use measure::chain;
pub use run::run_sweep;
