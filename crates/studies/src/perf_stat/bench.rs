//! The study's bench: each planned point on its rig, a perf-stat rig of the lab
//! for the timed points, a [`CallgrindRig`] for callgrind's counts.

use super::callgrind::CallgrindRig;
use xferbench_lab::counters::CounterSource;
use xferbench_lab::measure::{Bench, PlannedPoint};
use xferbench_lab::process::Launcher;
use xferbench_lab::rig::perf_stat::PerfStatRig;
use xferbench_lab::rig::{Rig, RunError};
use xferbench_lab::workload::perf_stat::BenchSpec;

/// What a point of the study runs.
#[derive(Debug, Clone)]
enum PerfStatRun {
    /// The seed's harness, timed.
    Timed(BenchSpec),
    /// The benchmark under callgrind (a process of the launcher).
    Callgrind(BenchSpec, Launcher),
}

/// The bench of the study: one planned point per spec.
pub struct PerfStatBench {
    planned: Vec<PlannedPoint>,
    specs: Vec<PerfStatRun>,
    launcher: Option<Launcher>,
}

impl PerfStatBench {
    /// Timed points `(planned, spec)`, run as processes of `launcher` (threads
    /// without).
    pub fn new(points: Vec<(PlannedPoint, BenchSpec)>, launcher: Option<Launcher>) -> Self {
        let (planned, specs) = points
            .into_iter()
            .map(|(p, s)| (p, PerfStatRun::Timed(s)))
            .unzip();
        PerfStatBench {
            planned,
            specs,
            launcher,
        }
    }

    /// The same plan with callgrind's points first ([`super::callgrind::points`]),
    /// their processes started by `launcher`.
    pub fn with_callgrind_first(
        mut self,
        points: Vec<(PlannedPoint, BenchSpec)>,
        launcher: &Launcher,
    ) -> Self {
        let (planned, specs): (Vec<_>, Vec<_>) = points
            .into_iter()
            .map(|(p, s)| (p, PerfStatRun::Callgrind(s, launcher.clone())))
            .unzip();
        self.planned.splice(0..0, planned);
        self.specs.splice(0..0, specs);
        self
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
        match self.specs[index].clone() {
            PerfStatRun::Timed(spec) => {
                spec.check().map_err(RunError::Config)?;
                Ok(Box::new(PerfStatRig::new(spec, self.launcher.clone())))
            }
            PerfStatRun::Callgrind(spec, launcher) => {
                Ok(Box::new(CallgrindRig::new(spec, launcher)))
            }
        }
    }
}
