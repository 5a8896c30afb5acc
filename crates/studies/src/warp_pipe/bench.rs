//! The study's bench: each planned point on a memory-mock rig of the lab, the mock
//! here or on the agent's host.

use xferbench_lab::counters::CounterSource;
use xferbench_lab::measure::{Bench, PlannedPoint};
use xferbench_lab::process::Launcher;
use xferbench_lab::rig::memory_mock::{MemoryMockRig, MockPoint};
use xferbench_lab::rig::{Rig, RunError};

/// A plan of memory-mock points, with the launcher of their processes (`None`:
/// threads of this process).
pub struct MemoryMockBench {
    points: Vec<PlannedPoint>,
    specs: Vec<MockPoint>,
    launcher: Option<Launcher>,
    remote: Option<xferbench_lab::remote::RemoteTarget>,
}

impl MemoryMockBench {
    /// The points, in order, each with its rig's point.
    pub fn new(points: Vec<(PlannedPoint, MockPoint)>, launcher: Option<Launcher>) -> Self {
        let (points, specs) = points.into_iter().unzip();
        MemoryMockBench {
            points,
            specs,
            launcher,
            remote: None,
        }
    }

    /// The same plan with the memory mock on the agent's host ([`xferbench_lab::remote`]).
    pub fn with_remote(mut self, remote: Option<xferbench_lab::remote::RemoteTarget>) -> Self {
        self.remote = remote;
        self
    }
}

impl Bench for MemoryMockBench {
    fn points(&self) -> &[PlannedPoint] {
        &self.points
    }

    fn rig(
        &mut self,
        index: usize,
        _source: Option<&dyn CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError> {
        let point = self.specs[index].clone();
        let rig = match &self.remote {
            None => MemoryMockRig::start(point, self.launcher.clone())?,
            Some(t) => MemoryMockRig::start_remote(point, self.launcher.clone(), t)?,
        };
        Ok(Box::new(rig))
    }
}
