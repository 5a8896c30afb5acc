//! The study's bench: each planned point on its rig of the lab, a
//! [`PerfStatRig`] for the timed points, a [`CallgrindRig`] for callgrind's counts,
//! a [`PerfRig`] for `perf stat`'s.

use xferbench_lab::measure::{Bench, PlannedPoint};
use xferbench_lab::rig::perf_stat::PerfStatRig;
use xferbench_lab::rig::perf_stat::callgrind::CallgrindRig;
use xferbench_lab::rig::perf_stat::perf::{PerfCount, PerfRig};
use xferbench_lab::rig::{Rig, RunError};
use xferbench_lab::workload::perf_stat::BenchSpec;
use xferbench_probes::counters::CounterSource;
use xferbench_probes::process::Launcher;

/// What a point of the study runs.
#[derive(Debug, Clone)]
enum PerfStatRun {
    /// The seed's harness, timed.
    Timed(BenchSpec),
    /// The benchmark under callgrind (a process of the launcher).
    Callgrind(BenchSpec, Launcher),
    /// The benchmark under `perf stat` (a process of the launcher).
    Perf(PerfCount, Launcher),
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
        self,
        points: Vec<(PlannedPoint, BenchSpec)>,
        launcher: &Launcher,
    ) -> Self {
        let runs = points
            .into_iter()
            .map(|(p, s)| (p, PerfStatRun::Callgrind(s, launcher.clone())));
        self.first(runs.collect())
    }

    /// The same plan with `perf stat`'s points ([`super::perf::plan`]) first, their
    /// processes started by `launcher`; callgrind's, added after, go before them.
    pub fn with_perf_first(
        self,
        points: Vec<(PlannedPoint, PerfCount)>,
        launcher: &Launcher,
    ) -> Self {
        let runs = points
            .into_iter()
            .map(|(p, c)| (p, PerfStatRun::Perf(c, launcher.clone())));
        self.first(runs.collect())
    }

    fn first(mut self, runs: Vec<(PlannedPoint, PerfStatRun)>) -> Self {
        let (planned, specs): (Vec<_>, Vec<_>) = runs.into_iter().unzip();
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
            PerfStatRun::Perf(count, launcher) => Ok(Box::new(PerfRig::new(count, launcher))),
        }
    }
}
