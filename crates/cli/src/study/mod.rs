//! `xferbench study NAME`: one table-driven dispatcher for every built-in study.
//!
//! The study and its writer come from the one registry of `xferbench-studies`; this
//! module only turns the arguments into overrides, runs the plan with the observers
//! (a line per point, and `results.jsonl` in the folder while it runs), writes the
//! folder and the profile, and maps the outcome to the common exit status.

use crate::exit;
use crate::flags::{RecordArgs, RemoteArgs, WatchArgs, count_of, duration_of};
use anyhow::Result;
use clap::Args;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;
use xferbench_lab::observer::Observer;
use xferbench_lab::params::{RUNS, TIMEOUT, WARMUP};
use xferbench_probes::profile::Folded;
use xferbench_probes::profile::ProfileRequest;
use xferbench_report::jsonl::JsonLinesWriter;
use xferbench_report::progress::PointLines;
use xferbench_studies::{self as studies, StudyEnv, StudyOverrides};

/// `xferbench study`.
// The field docs are `--help` text (`[default: …]`), not rustdoc's links.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench study rpmsg --quick
  xferbench study rpmsg --out rpmsg-study --runs 5
  xferbench study rpmsg --full
  xferbench study sis8300 --quick --profile --only group=test3
  xferbench study warp-pipe --only group=threads --only 'threads=16|64'

--only KEY=VALUE[|VALUE] (repeatable: all must hold) runs only the points whose \
parameters match, exactly as the whole study runs them; quote a value with `|` for the shell.

Exit status: 0 success, 1 a point failed, 2 bad usage, 3 data verification failed, \
128+N stopped by signal N: 130 SIGINT, 143 SIGTERM, 129 SIGHUP (the points finished so far are written).")]
pub struct StudyArgs {
    /// The study (`xferbench list` describes them).
    #[arg(value_parser = study_names())]
    pub name: String,
    /// A smaller version of the same study, for a first look (from seconds to a
    /// minute or two, by study; the full ones take minutes to most of an hour).
    #[arg(long)]
    pub quick: bool,
    /// Every cell of the original's matrix, where the default plan leaves some out
    /// for time (rpmsg); prints an estimate of the time once its first points
    /// have measured the rates.
    #[arg(long, conflicts_with = "quick")]
    pub full: bool,
    /// Output folder [default: `xferbench-<study>-<YYYYmmdd-HHMMSS>`].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Measured runs per point [default: the study's own: 30 for perf-stat, 2 for
    /// sis8300, 3 for the others; fewer with --quick for some]
    #[arg(short, long, value_name = "N", value_parser = count_of::<usize>(RUNS))]
    pub runs: Option<usize>,
    /// Discarded warm-up runs per visit of a point [default: the study's own]
    #[arg(short, long, value_name = "N", value_parser = count_of::<usize>(WARMUP))]
    pub warmup: Option<usize>,
    /// Run all runs of one point before the next, instead of the studies' default
    /// round-robin order across points
    #[arg(long)]
    pub no_interleave: bool,
    /// Profile one participant over the whole study with `perf record` (`--profile`
    /// or `--profile=DIR`) and write a flame graph, a speedscope file and a top-functions table to DIR
    /// [default DIR: `<out>/profile`].
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true)]
    pub profile: Option<Option<PathBuf>>,
    /// The participant to profile: `main` (this process: the host or client
    /// threads), `remote` (rpmsg), `memory-mock` (warp-pipe) or `server`
    /// (hashtable) [default: the study's own: `server` for hashtable, else `main`].
    #[arg(long, value_name = "NAME", requires = "profile")]
    pub profile_peer: Option<String>,
    /// Time without progress before a run is declared hung (250ms, 1s, 2m or bare
    /// seconds; 100ms to 24h) [default: the study's own].
    #[arg(long, value_name = "DURATION", value_parser = duration_of(TIMEOUT))]
    pub timeout: Option<Duration>,
    /// Run only the study's points whose parameter KEY has VALUE, or one of the
    /// values `A|B` (repeatable: all must match), e.g. `--only group=threads --only
    /// threads=16`.
    #[arg(long, value_name = "KEY=VALUE")]
    pub only: Vec<String>,
    /// Pin the participants to CPUs as `run --pin` pins drivers and peers: driver or
    /// client i on the 2i-th allowed CPU and the serving side (the RPMsg remote, the
    /// memory mock, the kv server) on the CPU after the first's, wrapping around
    /// (rpmsg, warp-pipe, hashtable, sis8300; hashtable's visitor i on the 2(i+1)-th;
    /// sis8300's board i reader on the 2i-th and its DMA engine on the next).
    #[arg(long)]
    pub pin: bool,
    /// Print the study's result document (its `results.json`) as JSON on stdout too.
    #[arg(long)]
    pub json: bool,
    /// No line per point and no notes; only errors (the folder is still written).
    #[arg(short, long)]
    pub quiet: bool,
    /// Run on an unoptimised build (`cargo build` without `--release`), which a study
    /// otherwise refuses: its figures would measure unoptimised code. The result says
    /// so in every output.
    #[arg(long)]
    pub allow_debug: bool,
    /// Machine limits and drift.
    #[command(flatten)]
    pub watch: WatchArgs,
    /// The results history.
    #[command(flatten)]
    pub record: RecordArgs,
    /// Runs across hosts.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// The names of the built-in studies, for clap.
fn study_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        xferbench_studies::registry()
            .iter()
            .map(|s| clap::builder::PossibleValue::new(s.name()).help(s.description())),
    )
}

/// What a study's flags ask for, checked: its folder, profile, overrides and remote
/// agent.
struct Prepared {
    out: PathBuf,
    profile: Option<ProfileRequest>,
    overrides: StudyOverrides,
    remote: Option<xferbench_lab::remote::RemoteTarget>,
}

/// Checks the flags of `study`; an error is a usage error's message.
fn prepare(args: &StudyArgs, study: &studies::Registered) -> Result<Prepared, String> {
    let name = study.name();
    let build = xferbench_probes::build::BuildInfo::current();
    if !build.optimised && !args.allow_debug {
        return Err(format!(
            "this xferbench is an unoptimised build ({}): the {name} study's figures would \
                 measure unoptimised code. Build it with `cargo build --release` (or run \
                 `cargo run --release -- study {name}`), or pass --allow-debug to run anyway",
            build.describe()
        )
        .to_string());
    }
    let out = out_dir(args, name);
    let peer = args
        .profile_peer
        .clone()
        .unwrap_or_else(|| study.profile_peer().to_string());
    let profile = match &args.profile {
        None => None,
        Some(_) if !study.participants().contains(&peer.as_str()) => {
            return Err(format!(
                "--profile-peer {peer}: the {name} study's participants are {}",
                study.participants().join(", ")
            )
            .to_string());
        }
        Some(dir) => Some(ProfileRequest {
            dir: dir.clone().unwrap_or_else(|| out.join("profile")),
            participant: peer,
        }),
    };
    let mut folders = vec![("--out", out.clone())];
    if let Some(p) = &profile {
        folders.push(("--profile", p.dir.clone()));
    }
    for (flag, dir) in folders {
        if let Err(e) = crate::paths::folder(flag, &dir) {
            return Err(e.to_string());
        }
    }
    if let Err(e) = args.record.check() {
        return Err(e.to_string());
    }
    let watch = match crate::config::watch(&args.watch) {
        Ok(w) => w,
        Err(e) => return Err(e.to_string()),
    };
    if profile.is_some() && !args.no_interleave && !args.quiet {
        eprintln!(
            "note: --profile records one point at a time, so the study runs point by point (as with --no-interleave)"
        );
    }
    // Repeated --only flags must all hold; each may list alternatives (a|b).
    let only = if args.only.is_empty() {
        None
    } else {
        match xferbench_studies::subset::PointFilter::parse(&args.only.join(",")) {
            Ok(f) => Some(f),
            Err(e) => return Err(e.to_string()),
        }
    };
    let overrides = StudyOverrides {
        runs: args.runs,
        warmup: args.warmup,
        interleave: (args.no_interleave || profile.is_some()).then_some(false),
        profile: profile.clone(),
        hang_timeout: args.timeout,
        watch,
        only,
        ..StudyOverrides::default()
    };
    if args.full && !study.has_full() {
        return Err(
            format!("--full: the {name} study's default plan already measures every case")
                .to_string(),
        );
    }
    if args.pin && !study.pins() {
        let pinning: Vec<&str> = studies::registry()
            .iter()
            .filter(|s| s.pins())
            .map(|s| s.name())
            .collect();
        return Err(format!(
            "--pin: the {name} study does not pin its participants; the studies that do: {}",
            pinning.join(", ")
        )
        .to_string());
    }
    let remote = match crate::serve::target(&args.remote) {
        Ok(r) => r,
        Err(e) => return Err(e.to_string()),
    };
    if remote.is_some() {
        if !study.crosses_hosts() {
            let across: Vec<String> = studies::registry()
                .iter()
                .filter(|s| s.crosses_hosts())
                .map(|s| format!("the {} study", s.name()))
                .collect();
            return Err(format!(
                    "--remote: the {name} study's participants share memory on one host; only {} runs across hosts",
                    across.join(", ")
                ).to_string());
        }
        if profile.is_some() {
            return Err("--profile records processes of this host; it cannot follow the memory mock on the agent's host (--remote)".to_string());
        }
    }
    Ok(Prepared {
        out,
        profile,
        overrides,
        remote,
    })
}

/// Runs a study and returns the exit status.
pub fn run(args: &StudyArgs) -> Result<u8> {
    let study = match studies::find(&args.name) {
        Ok(s) => s,
        Err(e) => return Ok(exit::usage("study", e)),
    };
    let name = study.name();
    let Prepared {
        out,
        profile,
        overrides,
        remote,
    } = match prepare(args, study) {
        Ok(p) => p,
        Err(e) => return Ok(exit::usage("study", e)),
    };
    let remote_context = match &remote {
        Some(t) => Some(crate::serve::describe(t)?),
        None => None,
    };
    let env = StudyEnv {
        launcher: Some(crate::launcher::launcher()?),
        full: args.full,
        profiling: profile.as_ref().map(|p| p.participant.clone()),
        remote,
        pin: args.pin,
        say: (!args.quiet).then_some(say as fn(&str)),
    };
    let stop = crate::stop::stop_flag()?;
    std::fs::create_dir_all(&out)
        .map_err(|e| anyhow::anyhow!("cannot create the study folder {}: {e}", out.display()))?;
    // Finished points stream to the journal, so nothing finished is lost even if
    // the folder cannot be written at the end.
    let journal_path = out.join("results.jsonl");
    let mut journal = JsonLinesWriter::create(&journal_path)?;
    let mut lines = PointLines::new();
    if !args.quiet {
        eprintln!("{name} study: writing {}", out.display());
    }
    let began = std::time::Instant::now();
    let mut doc = {
        let mut observers: Vec<&mut dyn Observer> = vec![&mut journal];
        if !args.quiet {
            observers.push(&mut lines);
        }
        studies::run_study(
            study.study,
            args.quick,
            &overrides,
            &env,
            |settings| xferbench_lab::result::Context {
                remote: remote_context.clone(),
                ..xferbench_lab::context::collect(
                    env!("CARGO_PKG_VERSION"),
                    std::env::args().collect(),
                    settings,
                )
            },
            &stop,
            &mut observers,
        )
    };
    if !args.quiet {
        for w in xferbench_report::warnings::lines(&doc) {
            eprintln!("warning: {w}");
        }
    }
    if let Some(p) = doc
        .study
        .as_mut()
        .and_then(|info| info.extras.get_mut("estimate"))
    {
        p["actual_s"] = serde_json::json!(began.elapsed().as_secs_f64());
    }
    let outputs_failed = write_outputs(args, study, &out, profile.as_ref(), &mut doc)?;
    Ok(exit::for_doc(&doc, outputs_failed))
}

/// Writes the study's folder, history, profile and JSON; true when an output failed
/// (the finished points stay in the journal).
fn write_outputs(
    args: &StudyArgs,
    study: &studies::Registered,
    out: &Path,
    profile: Option<&ProfileRequest>,
    doc: &mut xferbench_lab::result::ResultDoc,
) -> Result<bool> {
    let name = study.name();
    let journal_path = out.join("results.jsonl");
    let mut outputs_failed = false;
    // Each point's recordings are folded once, for the study's own reading of
    // them (its extras), the top five per point and the merged flame graph.
    let profiles = profile.as_ref().map(|req| fold_points(req, doc));
    if let (Some(req), Some(profiles)) = (&profile, &profiles) {
        let folded: BTreeMap<usize, Folded> = profiles
            .iter()
            .filter_map(|(i, f)| Some((*i, f.as_ref().ok()?.clone())))
            .collect();
        let extras = study.profile_extras(doc, &req.participant, &folded);
        if let Some(info) = doc.study.as_mut() {
            info.extras.extend(extras);
        }
    }
    match xferbench_studies::write_folder(out, doc) {
        Ok(_) => {
            let _ = std::fs::remove_file(&journal_path);
            if !args.quiet {
                eprintln!("wrote {}", out.display());
            }
        }
        Err(e) => {
            outputs_failed = true;
            eprintln!(
                "error: cannot write the study folder: {e:#} (the finished points are in {})",
                journal_path.display()
            );
        }
    }
    crate::history::record(&args.record, doc, args.quiet);
    if let (Some(req), Some(profiles)) = (&profile, &profiles) {
        outputs_failed |= !render_profile(req, name, profiles, args.quiet);
        if let Err(e) = write_top5(profiles, doc, out) {
            eprintln!("error: profile: the top symbols per point: {e:#}");
            outputs_failed = true;
        }
    }
    if args.json {
        let mut out = crate::out::stdout();
        xferbench_report::Exporter::export(&xferbench_report::json::Json, doc, &mut out)?;
        out.flush()?;
    }
    Ok(outputs_failed)
}

/// The folded recordings of every point of `doc`, or why they could not be read.
type PointProfiles = BTreeMap<usize, Result<Folded, String>>;

/// Folds the recordings of every point of `doc` (several per point when it was
/// visited several times); points without a recording are left out.
/// A study's line to the user while its plan runs ([`StudyEnv::say`]).
fn say(text: &str) {
    eprintln!("{text}");
}

fn fold_points(req: &ProfileRequest, doc: &xferbench_lab::result::ResultDoc) -> PointProfiles {
    doc.points
        .iter()
        .filter_map(|p| {
            let recs = recordings(&req.point_dir(p.index));
            (!recs.is_empty()).then(|| {
                let folded =
                    xferbench_probes::profile::analyse_all(&recs).map_err(|e| e.to_string());
                (p.index, folded)
            })
        })
        .collect()
}

/// Merges the profiles of every point (identical stacks add up) into one flame
/// graph, speedscope file and top-functions table.
fn render_profile(
    req: &ProfileRequest,
    study: &str,
    profiles: &PointProfiles,
    quiet: bool,
) -> bool {
    let title = format!("{} of the {study} study", req.participant);
    let mut merged: BTreeMap<Vec<String>, u64> = BTreeMap::new();
    let mut errors = Vec::new();
    for (i, f) in profiles {
        match f {
            Ok(f) => {
                for (frames, w) in &f.stacks {
                    *merged.entry(frames.clone()).or_insert(0) += w;
                }
            }
            Err(e) => errors.push(format!("point {}: {e}", i + 1)),
        }
    }
    let rendered = if merged.is_empty() {
        Err(anyhow::anyhow!(
            "no participant was recorded{}",
            if errors.is_empty() {
                String::new()
            } else {
                format!(" ({})", errors.join("; "))
            }
        ))
    } else {
        let f = Folded {
            stacks: merged.into_iter().collect(),
        };
        xferbench_report::profile::write_outputs(&req.dir, &f, &title)
            .map(|_| f.total() as f64 / 1e6)
            .map_err(anyhow::Error::from)
    };
    match rendered {
        Ok(_) if quiet => true,
        Ok(ms) => {
            eprintln!(
                "profile: {title}: {ms:.1} ms of CPU sampled in {} point(s) → {}",
                profiles.len(),
                req.dir.display()
            );
            true
        }
        Err(e) => {
            eprintln!("error: profile: {e:#}");
            false
        }
    }
}

/// `profile-top5.md` in the study folder: the five functions with the largest self
/// share of every profiled point, named by its parameters (as the seed lists perf's
/// top symbols per case).
fn write_top5(
    profiles: &PointProfiles,
    doc: &xferbench_lab::result::ResultDoc,
    out: &Path,
) -> Result<()> {
    let mut md = String::from(
        "# Top five functions per point (self share of the CPU samples)\n\n\
         | point | parameters | top functions |\n|--:|:--|:--|\n",
    );
    for p in &doc.points {
        let Some(folded) = profiles.get(&p.index) else {
            continue;
        };
        let top = match folded {
            Ok(f) => f
                .top_functions()
                .into_iter()
                .take(5)
                .map(|t| format!("{} {:.2} %", t.name, t.self_share * 100.0))
                .collect::<Vec<_>>()
                .join(", "),
            Err(e) => format!("(not analysed: {e})"),
        };
        md.push_str(&format!(
            "| {} | {} | {} |\n",
            p.index + 1,
            xferbench_lab::params::describe(&p.params),
            top.replace('|', "\\|")
        ));
    }
    xferbench_report::write_atomic(&out.join("profile-top5.md"), |w| w.write_all(md.as_bytes()))?;
    Ok(())
}

/// The `perf*.data` files under `dir/point-*/`, or under `dir` itself when it is one
/// point's folder, in order.
fn recordings(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let Ok(points) = std::fs::read_dir(dir) else {
        return all;
    };
    let is_perf = |f: &Path| {
        f.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("perf") && n.ends_with(".data"))
    };
    for p in points.flatten() {
        if is_perf(&p.path()) {
            all.push(p.path());
            continue;
        }
        if let Ok(files) = std::fs::read_dir(p.path()) {
            all.extend(files.flatten().map(|f| f.path()).filter(|f| {
                f.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("perf") && n.ends_with(".data"))
            }));
        }
    }
    all.sort();
    all
}

/// The folder to write into: `--out`, or `xferbench-<study>-<YYYYmmdd-HHMMSS>` (UTC).
pub fn out_dir(args: &StudyArgs, study: &str) -> PathBuf {
    if let Some(o) = &args.out {
        return o.clone();
    }
    PathBuf::from(format!(
        "xferbench-{study}-{}",
        xferbench_lab::context::compact_timestamp()
    ))
}

#[cfg(test)]
mod tests {
    use super::StudyArgs;

    #[test]
    fn the_default_folder_is_named_after_the_study_and_the_time() {
        let args = StudyArgs {
            name: "rpmsg".into(),
            quick: true,
            out: None,
            runs: None,
            warmup: None,
            no_interleave: false,
            full: false,
            profile: None,
            profile_peer: None,
            timeout: None,
            pin: false,
            json: false,
            quiet: false,
            allow_debug: false,
            watch: crate::flags::WatchArgs {
                no_limits: false,
                drift_threshold: 25.0,
            },
            record: crate::flags::RecordArgs::default(),
            only: Vec::new(),
            remote: crate::flags::RemoteArgs {
                remote: None,
                token_file: None,
                data_host: None,
            },
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
