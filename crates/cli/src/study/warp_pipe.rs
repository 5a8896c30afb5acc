//! `xferbench study warp-pipe`: the Warp Pipe study (issue 5).

use crate::run::{EXIT_INTEGRITY, EXIT_INTERRUPTED};
use anyhow::{Context, Result};
use std::path::Path;
use xferbench_lab::profile::ParticipantProfiler;
use xferbench_lab::studies::warp::{self, ServerPlacement, StudyScale};
use xferbench_report::study::StudyFolder;

/// Runs the study and writes its folder.
pub fn run(quick: bool, dir: &Path, profiler: Option<&mut ParticipantProfiler>) -> Result<u8> {
    let folder = StudyFolder::create(dir)?;
    let launcher = crate::launcher()?;
    let scale = if quick {
        StudyScale::QUICK
    } else {
        StudyScale::FULL
    };
    let points = warp::study_points(&scale);
    let stop = crate::run::stop_flag()?;
    let total = points.len();
    eprintln!("warp-pipe study: {total} points, writing {}", dir.display());
    let (result, error) = warp::run_study(
        &ServerPlacement::Process(launcher),
        &points,
        quick,
        &stop,
        &mut |i, p| {
            eprintln!(
                "[{:>2}/{total}] {:<18} {:<22} threads {:>3} × {:>3} it × {:>4} B × {} inst: {:>9.0} transactions/s, {:>8.2} MB/s, {:.3} s",
                i + 1,
                p.spec.group,
                p.spec.variant,
                p.spec.client.threads,
                p.spec.client.iterations,
                p.spec.client.payload,
                p.spec.instances,
                p.transactions_per_s,
                p.mb_per_s,
                p.wall_s
            );
        },
        profiler,
    );
    xferbench_report::warp::write_study(&folder, &result)?;
    eprintln!("wrote {}", dir.display());
    if let Some(e) = error {
        return Err(e)
            .context("a point of the warp-pipe study failed (finished points are written)");
    }
    if result.interrupted {
        return Ok(EXIT_INTERRUPTED);
    }
    if result.points.iter().any(|p| p.verify_failures > 0) {
        return Ok(EXIT_INTEGRITY);
    }
    if result.points.iter().any(|p| p.errors > 0) {
        return Ok(1);
    }
    Ok(0)
}
