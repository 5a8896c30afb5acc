//! `xferbench profile`, and rendering the recordings of `run --profile`.

use crate::exit::EXIT_USAGE;
use crate::flags::seconds;
use anyhow::{Context, Result};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use xferbench_lab::result::ResultDoc;
use xferbench_probes::profile::{self, ProfileRequest, perf_record};

/// `xferbench profile`.
// The field docs are `--help` text (`[default: …]`), not rustdoc's links.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench profile -- xferbench run stream -t shm -s 64 --peer thread -q
  xferbench profile --pid 1234 -d 5 --out prof

Needs perf (`apt-get install linux-perf`); samples cpu-clock, so no hardware PMU is needed. \
Writes flamegraph.svg, profile.speedscope.json, top-functions.md/.csv and stacks.folded.")]
pub struct ProfileArgs {
    /// Attach to this running process instead of starting a command.
    #[arg(long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<u32>,

    /// How long to record a process given with --pid (250ms, 1s, 2m or bare seconds).
    #[arg(
        short,
        long,
        value_name = "DURATION",
        default_value = "10s",
        value_parser = seconds,
        requires = "pid"
    )]
    pub duration: f64,

    /// Output folder [default: `xferbench-profile-<time>`].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Print a JSON summary on stdout: outputs written, samples, top functions.
    #[arg(long)]
    pub json: bool,

    /// The command to run and profile, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Runs `xferbench profile` and returns the exit status.
pub fn run(args: &ProfileArgs) -> Result<u8> {
    if args.pid.is_none() && args.command.is_empty() {
        eprintln!(
            "error: give a command after `--`, or --pid PID\n\n\
             For more information, try 'xferbench profile --help'."
        );
        return Ok(EXIT_USAGE);
    }
    if !(args.duration.is_finite() && args.duration > 0.0) {
        eprintln!("error: --duration must be a positive number of seconds");
        return Ok(EXIT_USAGE);
    }
    if let Some(pid) = args.pid
        && !Path::new(&format!("/proc/{pid}")).exists()
    {
        return Ok(crate::exit::usage(
            "profile",
            format!("--pid {pid}: no such process"),
        ));
    }
    if let Some(program) = args.command.first()
        && !runnable(program)
    {
        return Ok(crate::exit::usage(
            "profile",
            format!("{program}: no such command (not a file, nor found on PATH)"),
        ));
    }
    let dir = args.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "xferbench-profile-{}",
            xferbench_lab::context::compact_timestamp()
        ))
    });
    if let Err(e) = crate::paths::folder("--out", &dir) {
        return Ok(crate::exit::usage("profile", e));
    }
    let created = !dir.exists();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let outcome = record_and_render(args, &dir);
    if outcome.is_err() && created {
        // Nothing of a failed profile is worth keeping: leave no folder behind.
        let _ = std::fs::remove_dir_all(&dir);
    }
    outcome
}

/// Whether `program` names something to run: a path to a file, or a name found in
/// one of `PATH`'s folders.
fn runnable(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

/// Records the command or pid of `args` into `dir` and writes the outputs there.
fn record_and_render(args: &ProfileArgs, dir: &Path) -> Result<u8> {
    let data = dir.join("perf.data");
    // SIGTERM, SIGHUP or Ctrl-C end the recording early; what was recorded is kept.
    let stop = crate::stop::stop_flag()?;
    let stopped = || stop.load(std::sync::atomic::Ordering::Relaxed);
    let (title, status) = match args.pid {
        Some(pid) => {
            let mut rec = perf_record::attach(pid, &data)?;
            let until =
                std::time::Instant::now() + std::time::Duration::from_secs_f64(args.duration);
            while std::time::Instant::now() < until && !stopped() {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            rec.stop()?;
            (format!("pid {pid}, {} s", args.duration), None)
        }
        None => {
            let status = perf_record::record_command(&args.command, &data, &stop)?;
            (args.command.join(" "), Some(status))
        }
    };
    let summary = render(&data, dir, &title)?;
    if args.json {
        let mut out = crate::out::stdout();
        serde_json::to_writer_pretty(&mut out, &summary)?;
        writeln!(out)?;
    }
    if stopped() {
        eprintln!(
            "interrupted ({}): the profile covers what was recorded until then",
            crate::stop::received_name()
        );
        return Ok(crate::stop::interrupted_status());
    }
    Ok(match status {
        Some(s) if !s.success() => {
            eprintln!(
                "note: the profiled command {}",
                xferbench_probes::process::describe_status(s)
            );
            1
        }
        _ => 0,
    })
}

/// Below this much sampled CPU (ten samples) a profile says too little to read.
const FEW_SAMPLES_NS: u64 = 10_000_000;

/// How many of the top functions `profile --json` lists.
const JSON_TOP: usize = 20;

/// Folds a recording and writes every output next to it; prints where they are and
/// returns the summary `profile --json` prints.
fn render(data: &Path, dir: &Path, title: &str) -> Result<profile::ProfileSummary> {
    let folded = profile::analyse(data)?;
    if folded.total() < FEW_SAMPLES_NS {
        eprintln!(
            "profile: only {:.1} ms of CPU sampled (cpu-clock at 999 Hz, about 1 ms each): too \
             few samples to tell where time goes; the command used little CPU or spent its \
             time off the CPU (asleep, waiting for I/O or another process): profile a longer \
             or busier run",
            folded.total() as f64 / 1e6
        );
    }
    let written = xferbench_report::profile::write_outputs(dir, &folded, title)
        .with_context(|| format!("cannot write the profile outputs to {}", dir.display()))?;
    eprintln!(
        "profile: {:.1} ms of CPU sampled → {}/flamegraph.svg, profile.speedscope.json, top-functions.md",
        folded.total() as f64 / 1e6,
        dir.display()
    );
    let top: Vec<_> = folded.top_functions().into_iter().take(JSON_TOP).collect();
    Ok(profile::ProfileSummary {
        title: title.to_string(),
        dir: dir.to_path_buf(),
        outputs: written,
        perf_data: data.to_path_buf(),
        stacks: folded.stacks.len(),
        sampled_cpu_ns: folded.total(),
        top_functions: top,
    })
}

/// Renders the recording of every finished point of a `run --profile`; returns
/// false if any failed (each failure is printed).
pub fn render_run_profiles(req: &ProfileRequest, doc: &ResultDoc, quiet: bool) -> bool {
    let mut ok = true;
    for p in &doc.points {
        let dir = req.point_dir(p.index);
        let data = dir.join("perf.data");
        if !data.exists() {
            continue;
        }
        let title = format!(
            "{} of point {} ({} size={} channels={})",
            req.participant,
            p.index + 1,
            p.param(&xferbench_lab::axes::TRANSPORT).unwrap_or("-"),
            p.size_bytes,
            p.channels
        );
        let r = profile::analyse(&data)
            .map_err(anyhow::Error::from)
            .and_then(|f| {
                xferbench_report::profile::write_outputs(&dir, &f, &title)?;
                Ok(f.total() as f64 / 1e6)
            });
        match r {
            Ok(ms) if !quiet => {
                eprintln!(
                    "profile: {title}: {ms:.1} ms of CPU sampled → {}",
                    dir.display()
                )
            }
            Ok(_) => {}
            Err(e) => {
                ok = false;
                eprintln!("error: profile of point {}: {e:#}", p.index + 1);
            }
        }
    }
    ok
}
