//! `xferbench study NAME`: one module per study turns the arguments into the lab's
//! study config, runs it and writes its folder.

mod warp_pipe;

use crate::cli::{StudyArgs, StudyName};
use anyhow::Result;
use std::path::PathBuf;
use xferbench_lab::profile::{ParticipantProfiler, ProfileRequest};

/// Runs a study and returns the exit status.
pub fn run(args: &StudyArgs) -> Result<u8> {
    let (name, participants): (&str, &[&str]) = match args.name {
        StudyName::Rpmsg => ("rpmsg", &xferbench_lab::studies::rpmsg::PARTICIPANTS),
        StudyName::WarpPipe => ("warp-pipe", &xferbench_lab::studies::warp::PARTICIPANTS),
    };
    let out = out_dir(args, name);
    let mut profiler = match &args.profile {
        None => None,
        Some(_) if !participants.contains(&args.profile_peer.as_str()) => {
            eprintln!(
                "error: --profile-peer {}: the {name} study's participants are {}",
                args.profile_peer,
                participants.join(", ")
            );
            return Ok(crate::run::EXIT_USAGE);
        }
        Some(dir) => {
            let dir = dir.clone().unwrap_or_else(|| out.join("profile"));
            let req = ProfileRequest {
                dir,
                participant: args.profile_peer.clone(),
            };
            Some(ParticipantProfiler::new(req)?)
        }
    };
    // `main` is this process: recorded over the whole study.
    let recording = match profiler.as_mut() {
        Some(p) => p.attach("main", std::process::id())?,
        None => None,
    };
    let code = match args.name {
        // Through the study registry and the point loop; a profiled remote is
        // recorded by the loop, once per point, and adopted into the profile.
        StudyName::Rpmsg => (|| -> Result<u8> {
            use xferbench_lab::studies::{StudyEnv, StudyOverrides, find, run_study};
            let study = find("rpmsg").map_err(anyhow::Error::msg)?;
            let env = StudyEnv {
                launcher: Some(crate::launcher()?),
            };
            let profile = profiler
                .as_ref()
                .filter(|p| p.participant() != "main")
                .map(|p| ProfileRequest {
                    dir: p.dir().to_path_buf(),
                    participant: p.participant().to_string(),
                });
            let overrides = StudyOverrides {
                interleave: profile.as_ref().map(|_| false),
                profile,
                ..StudyOverrides::default()
            };
            let stop = crate::run::stop_flag()?;
            let doc = run_study(
                study,
                args.quick,
                &overrides,
                &env,
                |s| {
                    let argv = std::env::args().collect();
                    xferbench_lab::context::collect(env!("CARGO_PKG_VERSION"), argv, s)
                },
                &stop,
                &mut [],
            );
            if let Some(p) = profiler.as_mut().filter(|p| p.participant() != "main") {
                for i in 0..doc.points.len() {
                    p.adopt(p.dir().join(format!("point-{i}/perf.data")));
                }
            }
            xferbench_report::studies::write_folder(&out, &doc)?;
            eprintln!("wrote {}", out.display());
            Ok(match doc.outcome {
                xferbench_lab::result::Outcome::Complete => 0,
                xferbench_lab::result::Outcome::Interrupted => crate::run::EXIT_INTERRUPTED,
                xferbench_lab::result::Outcome::Failed { error } => {
                    eprintln!("error: {error}");
                    1
                }
            })
        })(),
        StudyName::WarpPipe => warp_pipe::run(args.quick, &out, profiler.as_mut()),
    };
    drop(recording);
    if let Some(p) = &profiler {
        let title = format!("{} of the {name} study", p.participant());
        let rendered = xferbench_lab::profile::analyse_all(p.recordings())
            .map_err(anyhow::Error::from)
            .and_then(|f| {
                xferbench_report::profile::write_outputs(p.dir(), &f, &title)?;
                Ok(f.total() as f64 / 1e6)
            });
        match rendered {
            Ok(ms) => eprintln!(
                "profile: {title}: {ms:.1} ms of CPU sampled in {} recording(s) → {}",
                p.recordings().len(),
                p.dir().display()
            ),
            Err(e) => {
                eprintln!("error: profile: {e:#}");
                return code.map(|c| c.max(1));
            }
        }
    }
    code
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
            profile: None,
            profile_peer: "main".into(),
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
