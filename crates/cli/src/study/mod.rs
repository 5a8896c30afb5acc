//! `xferbench study NAME`: one module per study turns the arguments into the lab's
//! study config, runs it and writes its folder.

mod rpmsg;
mod warp_pipe;

use crate::cli::{StudyArgs, StudyName};
use anyhow::Result;
use std::path::PathBuf;

/// Runs a study and returns the exit status.
pub fn run(args: &StudyArgs) -> Result<u8> {
    match args.name {
        StudyName::Rpmsg => {
            let stop = crate::run::stop_flag()?;
            rpmsg::run(args.quick, &out_dir(args, "rpmsg"), &stop)
        }
        StudyName::WarpPipe => warp_pipe::run(args),
    }
}

/// The folder to write into: `--out`, or `xferbench-<study>-<YYYYmmdd-HHMMSS>` (UTC).
pub fn out_dir(args: &StudyArgs, study: &str) -> PathBuf {
    if let Some(o) = &args.out {
        return o.clone();
    }
    // "2026-11-22T06:07:42Z" → "20261122-060742"
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let digits: String = now.chars().filter(char::is_ascii_digit).collect();
    PathBuf::from(format!(
        "xferbench-{study}-{}-{}",
        &digits[..8],
        &digits[8..14]
    ))
}

#[cfg(test)]
mod tests {
    use crate::cli::{StudyArgs, StudyName};

    #[test]
    fn the_default_folder_is_named_after_the_study_and_the_time() {
        let args = StudyArgs {
            name: StudyName::Rpmsg,
            quick: true,
            out: None,
        };
        let dir = super::out_dir(&args, "rpmsg")
            .to_string_lossy()
            .into_owned();
        let (prefix, stamp) = dir.split_at("xferbench-rpmsg-".len());
        assert_eq!(prefix, "xferbench-rpmsg-");
        assert_eq!(stamp.len(), 15, "{dir}");
        assert!(stamp[..8].bytes().all(|b| b.is_ascii_digit()) && &stamp[8..9] == "-");
    }
}
