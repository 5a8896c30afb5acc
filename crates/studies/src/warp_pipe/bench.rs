//! The study's bench: each planned point on its rig, a memory-mock rig of the lab
//! (the mock here or on the agent's host) or, for the CRC's speed, a
//! [`CrcRig`] on this thread.

use xferbench_lab::measure::{Bench, PlannedPoint};
use xferbench_lab::rig::crc::CrcRig;
use xferbench_lab::rig::memory_mock::{MemoryMockRig, MockPoint};
use xferbench_lab::rig::{Rig, RunError};
use xferbench_probes::counters::CounterSource;
use xferbench_probes::process::Launcher;
use xferbench_transports::warp::CrcKind;

/// What a point of the study runs.
#[derive(Debug, Clone)]
pub enum WarpRig {
    /// Clients against a memory mock.
    Mock(MockPoint),
    /// One CRC on a 2 KiB buffer.
    Crc(CrcKind),
}

/// A plan of the study's points, with the launcher of their processes (`None`:
/// threads of this process).
pub struct MemoryMockBench {
    points: Vec<PlannedPoint>,
    specs: Vec<WarpRig>,
    launcher: Option<Launcher>,
    remote: Option<xferbench_lab::remote::RemoteTarget>,
}

impl MemoryMockBench {
    /// The points, in order, each with its rig's point.
    pub fn new(points: Vec<(PlannedPoint, MockPoint)>, launcher: Option<Launcher>) -> Self {
        let (points, specs): (Vec<_>, Vec<_>) = points
            .into_iter()
            .map(|(p, m)| (p, WarpRig::Mock(m)))
            .unzip();
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

    /// The same plan with a CRC point of each kind appended
    /// ([`super::crc::planned`]).
    pub fn with_crc(mut self, kinds: &[CrcKind]) -> Self {
        for &k in kinds {
            self.points.push(super::crc::planned(k));
            self.specs.push(WarpRig::Crc(k));
        }
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
        let point = match &self.specs[index] {
            WarpRig::Mock(p) => p.clone(),
            WarpRig::Crc(k) => return Ok(Box::new(CrcRig::new(*k))),
        };
        let rig = match &self.remote {
            None => MemoryMockRig::start(point, self.launcher.clone())?,
            Some(t) => MemoryMockRig::start_remote(point, self.launcher.clone(), t)?,
        };
        Ok(Box::new(rig))
    }
}
