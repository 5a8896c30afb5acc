//! `xferbench study rpmsg`: the plan (full or `--quick`), a remote process per link,
//! and the folder.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use xferbench_lab::profile::ParticipantProfiler;
use xferbench_lab::result::Settings;
use xferbench_lab::rpmsg::RemoteKind;
use xferbench_lab::studies::rpmsg::{StudyOutcome, StudyPlan, run as run_study};

/// Runs the study into `out`; returns the exit status.
pub fn run(
    quick: bool,
    out: &Path,
    stop: &AtomicBool,
    profiler: Option<&mut ParticipantProfiler>,
) -> Result<u8> {
    let plan = if quick {
        StudyPlan::quick()
    } else {
        StudyPlan::full()
    };
    let remote = RemoteKind::Process(crate::launcher()?);
    let context = xferbench_lab::context::collect(
        env!("CARGO_PKG_VERSION"),
        std::env::args().collect(),
        Settings {
            workload: "rpmsg".into(),
            runs: plan.runs,
            warmup: 1,
            count: None,
            duration_s: None,
            peer: "process".into(),
            pin: false,
            verify: false,
            interleave: false,
        },
    );
    let mut err = std::io::stderr();
    let res = run_study(
        &plan,
        quick,
        context,
        &remote,
        stop,
        &mut |line| {
            let _ = writeln!(err, "{line}");
        },
        profiler,
    );
    xferbench_report::studies::rpmsg::write(out, &res)
        .with_context(|| format!("cannot write the study folder {}", out.display()))?;
    eprintln!("wrote {}", out.display());
    Ok(match res.outcome {
        StudyOutcome::Complete => 0,
        StudyOutcome::Interrupted => crate::run::EXIT_INTERRUPTED,
        StudyOutcome::Failed { error } => {
            eprintln!("error: {error}");
            1
        }
    })
}
