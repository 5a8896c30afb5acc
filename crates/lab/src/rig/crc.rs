//! The CRC rig: one LCRC32 implementation checksumming a 2 KiB buffer a fixed number
//! of times on this thread per run (the warp-pipe study's CRC points, parameter
//! `crc`).
//!
//! A run's figures are [`aggregate`]'s (the repetitions as messages, the bytes
//! checksummed as bytes, this process's CPU) and [`CRC_MB_PER_S`], its primary
//! figure: bytes checksummed per microsecond of the window (MB/s).

use super::{ChannelOutcome, FigureRules, Rig, RunControl, RunError, aggregate};
use crate::result::RunRecord;
use xferbench_probes::clock::Stamp;
use xferbench_probes::counters::Participant;
use xferbench_probes::cpu::CpuSnapshot;
use xferbench_transports::warp::CrcKind;

/// The bytes of the buffer checksummed.
pub const BUFFER: usize = 2048;

/// The primary figure of a CRC point: MB/s (10^6 bytes per second).
pub const CRC_MB_PER_S: &str = "crc_mb_per_s";

/// Higher is better.
pub const RULES: FigureRules = FigureRules {
    primary: CRC_MB_PER_S,
    higher_is_better: true,
};

/// Checksums per run: enough for a millisecond-scale window even for the bitwise
/// loop.
pub fn repetitions(kind: CrcKind) -> u64 {
    if kind == CrcKind::Bitwise { 50 } else { 5000 }
}

/// One CRC implementation checksumming one buffer on this thread.
#[derive(Debug)]
pub struct CrcRig {
    kind: CrcKind,
    buf: Vec<u8>,
}

impl CrcRig {
    /// The rig of `kind`.
    pub fn new(kind: CrcKind) -> CrcRig {
        CrcRig {
            kind,
            buf: (0..BUFFER as u32).map(|i| (i * 7 + 3) as u8).collect(),
        }
    }
}

impl Rig for CrcRig {
    /// `main` only.
    fn participants(&self) -> Vec<Participant> {
        vec![Participant::main()]
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        if ctl.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        let reps = repetitions(self.kind);
        ctl.window_started();
        let cpu0 = CpuSnapshot::now();
        let start = Stamp::now();
        let mut acc = 0u32;
        for _ in 0..reps {
            acc ^= self.kind.lcrc32(std::hint::black_box(&self.buf));
        }
        std::hint::black_box(acc);
        let end = Stamp::now();
        let cpu1 = CpuSnapshot::now();
        ctl.window_ended();
        let bytes = reps * BUFFER as u64;
        let channel = ChannelOutcome {
            start,
            end,
            messages: reps,
            bytes,
            latency: None,
            integrity: None,
            schedule: None,
        };
        let main = cpu0.until(&cpu1, "main", std::process::id());
        let mut rec = aggregate(vec![channel], vec![main]);
        let ns = end.since(start).max(1) as f64;
        rec.figures
            .insert(CRC_MB_PER_S.into(), bytes as f64 / ns * 1e3);
        rec.counters = ctl.take_counters();
        Ok(rec)
    }

    fn finish(self: Box<Self>) -> Result<(), RunError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    #[test]
    fn a_run_checksums_the_buffer_its_repetitions_and_gives_its_rate() {
        let stop = AtomicBool::new(false);
        let mut rig = CrcRig::new(CrcKind::Table);
        let r = rig
            .run_once(&mut RunControl::new(&stop, Duration::from_secs(10), None))
            .unwrap();
        assert_eq!(r.messages, 5000);
        assert_eq!(r.bytes, 5000 * 2048);
        let rate = r.figures[CRC_MB_PER_S];
        // The same bytes over the same window as the common throughput, in MB/s.
        let throughput = r.figures[xferbench_probes::figure::THROUGHPUT];
        assert!(rate > 0.0 && (rate - throughput / 1e6).abs() <= rate * 1e-3);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let e = rig
            .run_once(&mut RunControl::new(&stop, Duration::from_secs(10), None))
            .unwrap_err();
        assert!(matches!(e, RunError::Interrupted));
        Box::new(rig).finish().unwrap();
    }
}
