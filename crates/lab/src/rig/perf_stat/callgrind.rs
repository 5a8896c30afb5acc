//! One build of one perf-stat benchmark under callgrind, a process per run: the
//! perf-stat study's callgrind points (one run, no warm-up: callgrind counts
//! instructions and simulated cache misses of a deterministic program, so one run
//! is the measurement). A run that callgrind could not count is kept without counts
//! and says why in its point's warnings ([`NOT_COUNTED`]).
//!
//! A run's figures are callgrind's totals over the spec's iterations, scaled to
//! one timed run of the seed's harness, each named [`PREFIX`] + callgrind's name
//! (`callgrind_Ir`, `callgrind_D1mr`, …, `callgrind_estimated-cycles`).

use super::{callgrind_totals, counting_run};
use crate::result::RunRecord;
use crate::rig::{Rig, RunControl, RunError};
use crate::workload::perf_stat::BenchSpec;
use std::collections::BTreeMap;
use xferbench_probes::counters::Participant;
use xferbench_probes::process::Launcher;

/// The prefix of a callgrind count's figure name.
pub const PREFIX: &str = "callgrind_";

/// The start of the warning of a run callgrind could not count.
pub const NOT_COUNTED: &str = "callgrind could not count";

/// One build of one benchmark under callgrind, a process per run.
pub struct CallgrindRig {
    spec: BenchSpec,
    launcher: Launcher,
}

impl CallgrindRig {
    /// `spec` under callgrind, its process started by `launcher`.
    pub fn new(spec: BenchSpec, launcher: Launcher) -> CallgrindRig {
        CallgrindRig { spec, launcher }
    }
}

impl Rig for CallgrindRig {
    /// `main`, which waits for valgrind.
    fn participants(&self) -> Vec<Participant> {
        vec![Participant::main()]
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        let (launcher, spec) = (&self.launcher, &self.spec);
        let (mut rec, totals) =
            counting_run(ctl, spec.iterations, |_| callgrind_totals(launcher, spec))?;
        let totals = totals.unwrap_or_else(|e| {
            ctl.warn(format!("{NOT_COUNTED}: {e}"));
            BTreeMap::new()
        });
        let scale = scale(spec);
        for (k, v) in totals {
            rec.figures.insert(format!("{PREFIX}{k}"), v * scale);
        }
        Ok(rec)
    }

    fn finish(self: Box<Self>) -> Result<(), RunError> {
        Ok(())
    }
}

/// The factor from `spec`'s iterations to one timed run of the seed's harness.
fn scale(spec: &BenchSpec) -> f64 {
    spec.bench.iterations() as f64 / spec.iterations.max(1) as f64
}
