//! Stopping cleanly on SIGINT, SIGTERM and SIGHUP, and noticing SIGCONT.
//!
//! Ctrl-C, `kill`, `timeout`, a CI cancellation and `systemd` all mean "finish what you
//! can and go": the first of these signals sets the stop flag, the measurement ends at
//! the next run boundary, and every output is written with the finished points. The
//! exit status is then 128 + the signal's number (130 for SIGINT, 143 for SIGTERM, 129
//! for SIGHUP), as a shell reports a process killed by it. A second signal exits at
//! once; peers die with the tool (`PR_SET_PDEATHSIG`).
//!
//! SIGCONT (a shell's `fg` after Ctrl-Z) does not stop anything: the same thread counts
//! it ([`xferbench_probes::clock::note_continued`]), and a point that ran while the
//! process was stopped gets a `paused:` warning, since the pause lies inside its
//! measured windows.

use anyhow::{Context, Result};
use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The first stopping signal received, 0 before any.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Installs the handler and returns the flag it sets.
pub fn stop_flag() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP, SIGCONT])
        .context("cannot install the SIGINT/SIGTERM/SIGHUP/SIGCONT handler")?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if signal == SIGCONT {
                    xferbench_probes::clock::note_continued();
                    continue;
                }
                // Recorded before the flag is raised, so whoever sees the flag reads
                // the signal.
                let _ = RECEIVED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
                if flag.swap(true, Ordering::SeqCst) {
                    std::process::exit(128 + signal);
                }
            }
        })
        .context("cannot start the signal thread")?;
    Ok(stop)
}

/// The exit status after a stopping signal: 128 + its number (130 when none was
/// recorded, as for a command that saw its child die of SIGINT).
pub fn interrupted_status() -> u8 {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => (128 + SIGINT) as u8,
        s => (128 + s) as u8,
    }
}

/// Whether a stopping signal was received (after [`stop_flag`] installed the
/// handler; before, the signal's default action ends the process).
pub fn received() -> bool {
    RECEIVED.load(Ordering::SeqCst) != 0
}

/// The name of the stopping signal received, for messages.
pub fn received_name() -> &'static str {
    match RECEIVED.load(Ordering::SeqCst) {
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "Ctrl-C",
    }
}
