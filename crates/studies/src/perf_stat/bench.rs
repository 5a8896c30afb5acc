//! The study's bench: each planned benchmark on a perf-stat rig of the lab.

use xferbench_lab::counters::CounterSource;
use xferbench_lab::measure::{Bench, PlannedPoint};
use xferbench_lab::process::Launcher;
use xferbench_lab::rig::perf_stat::PerfStatRig;
use xferbench_lab::rig::{Rig, RunError};
use xferbench_lab::workload::perf_stat::BenchSpec;

/// The bench of the study: one planned point per spec.
pub struct PerfStatBench {
    planned: Vec<PlannedPoint>,
    specs: Vec<BenchSpec>,
    launcher: Option<Launcher>,
}

impl PerfStatBench {
    /// Points `(planned, spec)`, run as processes of `launcher` (threads without).
    pub fn new(points: Vec<(PlannedPoint, BenchSpec)>, launcher: Option<Launcher>) -> Self {
        let (planned, specs) = points.into_iter().unzip();
        PerfStatBench {
            planned,
            specs,
            launcher,
        }
    }
}

impl Bench for PerfStatBench {
    fn points(&self) -> &[PlannedPoint] {
        &self.planned
    }

    fn rig(
        &mut self,
        index: usize,
        _source: Option<&dyn CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError> {
        let spec = self.specs[index].clone();
        spec.check().map_err(RunError::Config)?;
        Ok(Box::new(PerfStatRig::new(spec, self.launcher.clone())))
    }
}
