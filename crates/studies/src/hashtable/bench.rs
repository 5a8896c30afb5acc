//! The study's bench: each planned point on a kv rig of the lab.

use xferbench_lab::measure::{Bench, PlannedPoint};
use xferbench_lab::rig::kv::{KvPoint, KvRig};
use xferbench_lab::rig::{Rig, RunError};
use xferbench_probes::counters::CounterSource;
use xferbench_probes::process::Launcher;

/// A plan of kv points.
pub struct KvBench {
    points: Vec<PlannedPoint>,
    specs: Vec<KvPoint>,
    launcher: Option<Launcher>,
}

impl KvBench {
    /// The points, in order, each with its rig's point.
    pub fn new(points: Vec<(PlannedPoint, KvPoint)>, launcher: Option<Launcher>) -> Self {
        let (points, specs) = points.into_iter().unzip();
        KvBench {
            points,
            specs,
            launcher,
        }
    }
}

impl Bench for KvBench {
    fn points(&self) -> &[PlannedPoint] {
        &self.points
    }

    fn rig(
        &mut self,
        index: usize,
        _source: Option<&dyn CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError> {
        Ok(Box::new(KvRig::start(
            self.specs[index].clone(),
            self.launcher.clone(),
        )?))
    }
}
