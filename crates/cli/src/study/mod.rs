//! `xferbench study NAME`: one module per study turns the arguments into the lab's
//! plan, runs it and writes the folder.

mod rpmsg;

use crate::cli::{StudyArgs, StudyName};
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Every study: (name, description), for `xferbench list`.
pub const STUDIES: &[(&str, &str)] = &[(
    "rpmsg",
    "RPMsg over virtio vrings: 1/8/32 channels x 1..496-byte packets, kick/event-idx/poll",
)];

/// Runs `xferbench study` and returns the exit status.
pub fn run(args: &StudyArgs) -> Result<u8> {
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                std::process::exit(crate::run::EXIT_INTERRUPTED.into());
            }
        })
        .context("cannot install the Ctrl-C handler")?;
    }
    let name = match args.name {
        StudyName::Rpmsg => "rpmsg",
    };
    let out = args.out.clone().unwrap_or_else(|| default_out(name));
    match args.name {
        StudyName::Rpmsg => rpmsg::run(args.quick, &out, &stop),
    }
}

/// `xferbench-<study>-<YYYYmmdd-HHMMSS>` (UTC) in the current directory.
fn default_out(study: &str) -> PathBuf {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    // "2026-11-22T06:07:42Z" → "20261122-060742"
    let digits: String = now.chars().filter(char::is_ascii_digit).collect();
    PathBuf::from(format!(
        "xferbench-{study}-{}-{}",
        &digits[..8],
        &digits[8..14]
    ))
}
