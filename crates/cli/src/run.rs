//! `xferbench run`: plan the sweep, run it with observers, write the outputs.

use crate::cli::{RecordArgs, RemoteArgs, WatchArgs, choice, seconds};
use crate::config::RunConfig;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use xferbench_lab::observer::Observer;
use xferbench_lab::result::ResultDoc;
use xferbench_lab::workload::WorkloadKind;
use xferbench_report::{
    Exporter, csv::Csv, export_to_path, html::Html, json::Json, jsonl::JsonLinesWriter,
    markdown::Markdown,
};

/// Where peers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PeerArg {
    /// A thread of the xferbench process per channel.
    Thread,
    /// A re-executed xferbench process per channel (nothing else to install).
    Process,
}

/// Where `--counters` come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CountersArg {
    /// perf_event_open: software counters, and hardware counters with a PMU.
    Perf,
    /// valgrind --tool=callgrind --cache-sim=yes on the peers: simulated, deterministic.
    Callgrind,
}

/// `xferbench run`.
#[derive(Debug, Args)]
#[command(after_help = "\
Lists take commas and ranges: --size 64,2KiB,64KiB  --size 1..64KiB:x4 (geometric)  \
--channels 1..32 (x2)  --size 100..500:+100 (arithmetic). Every combination of the axes is \
one point.

Examples:
  xferbench run stream --transport shm,pipe,unix,tcp --size 64,2KiB,64KiB --export-md r.md
  xferbench run pingpong --transport unix --size 64 --channels 1,2 --peer process --json
  xferbench run stream -t pipe -s 64KiB -p pipe_size=64KiB,1MiB --verify

Exit status: 0 success, 1 a point failed, 2 bad usage, 3 --verify found faults, 128+N stopped by \
signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP; finished points and exports are written).")]
pub struct RunArgs {
    /// The workload to run.
    #[arg(value_parser = choice::<WorkloadKind>())]
    pub workload: WorkloadKind,

    /// Transports to sweep (see `xferbench list`); plugin:PATH[:NAME] measures a
    /// plugin's transport (see docs/plugins.md).
    #[arg(short, long, value_name = "LIST", default_value = "shm,pipe,unix,tcp")]
    pub transport: String,

    /// Message sizes to sweep, in bytes (64, 4KiB, 1MiB; ranges like 1..64KiB:x4); rpmsg,
    /// whose packets hold at most 496 bytes, runs the default as 64 and 496, with a note
    ///
    /// [default: 64,4KiB,64KiB]
    #[arg(short, long, value_name = "LIST")]
    pub size: Option<String>,

    /// Concurrent channel counts to sweep; each channel is an independent endpoint pair.
    #[arg(short, long, value_name = "LIST", default_value = "1")]
    pub channels: String,

    /// Sweep a parameter: a transport parameter (see `xferbench list`) or an axis
    /// (transport, size, channels); numeric ranges as in --size (spin_us=1..64:x4).
    /// Repeatable.
    #[arg(short = 'p', long = "param", value_name = "NAME=LIST")]
    pub params: Vec<String>,

    /// Messages (stream) or round trips (pingpong) per channel per run.
    #[arg(short = 'n', long, value_name = "N", conflicts_with = "duration")]
    pub count: Option<u64>,

    /// Time per run per channel (250ms, 1s, 2m or bare seconds) [default: 250ms,
    /// unless --count is given].
    #[arg(short, long, value_name = "DURATION", value_parser = seconds)]
    pub duration: Option<f64>,

    /// Measured runs per point; figures are medians over these.
    #[arg(short, long, value_name = "N", default_value_t = 5)]
    pub runs: usize,

    /// Warm-up runs per point, discarded.
    #[arg(short, long, value_name = "N", default_value_t = 1)]
    pub warmup: usize,

    /// Where the serving side of each channel runs.
    #[arg(long, value_enum, default_value_t = PeerArg::Process)]
    pub peer: PeerArg,

    /// Run round-robin across points (A, B, C, A, B, C, ...) instead of all runs of one
    /// point before the next: points then share the machine's drift. Each visit starts
    /// the point's peers afresh and discards --warmup runs
    #[arg(long)]
    pub interleave: bool,

    /// Pin each channel's driver and peer to CPUs (driver on the 2i-th allowed CPU,
    /// peer on the next).
    #[arg(long)]
    pub pin: bool,

    /// Stamp every message with a sequence number and checksum and count lost,
    /// duplicated, reordered and corrupt messages (sizes of at least 16 bytes).
    #[arg(long)]
    pub verify: bool,

    /// Write every message in place in the transport's buffer and read it there
    /// (shm, rpmsg, iceoryx2): the sender writes every byte, the receiver reads every
    /// cache line (with --verify: checks the CRC over every byte). Both modes in one
    /// sweep: -p zero_copy=false,true. Peers' own rules for the payload:
    /// -p touch=write|read|none (none: neither written nor read, as iceoryx2's
    /// benchmark sends its samples); the default, all, is the rule above.
    #[arg(long)]
    pub zero_copy: bool,

    /// Time without progress on any channel before a run is declared hung (250ms,
    /// 1s, 2m or bare seconds).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = seconds)]
    pub timeout: f64,

    /// Write the result document as JSON.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Write one CSV row per point.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,

    /// Write a Markdown report.
    #[arg(long, visible_alias = "export-markdown", value_name = "FILE")]
    pub export_md: Option<PathBuf>,

    /// Write a self-contained HTML report (tables, plots, every point in detail).
    #[arg(long, value_name = "FILE")]
    pub export_html: Option<PathBuf>,

    /// Append each finished point to this JSON Lines file as it finishes [default:
    /// FILE.jsonl next to --export-json FILE, removed once every export is written].
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,

    /// Print the result document as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Add a row per channel under each point in the table.
    #[arg(long)]
    pub per_channel: bool,

    /// No progress bar, table or warnings; only errors (files are still written).
    #[arg(short, long)]
    pub quiet: bool,

    /// Record counters of every participating process over each run's window
    /// (`--counters` or `--counters=SOURCE`): `perf` (default) for perf_event_open software counters and, with a PMU, hardware
    /// ones; `callgrind` for simulated instruction and cache-miss counts of the peers
    /// under valgrind (slow: use a small --count). See docs/profiling.md.
    #[arg(long, value_enum, value_name = "SOURCE", num_args = 0..=1, default_missing_value = "perf", require_equals = true)]
    pub counters: Option<CountersArg>,

    /// Profile one participant of every point with `perf record` (`--profile` or
    /// `--profile=DIR`) and write a flame graph, a speedscope file and a top-functions
    /// table per point under DIR
    /// [default DIR: `xferbench-profile-<time>`].
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true)]
    pub profile: Option<Option<PathBuf>>,

    /// The participant to profile: `main` (drivers, and thread peers) or `peerN` (the
    /// process serving channel N).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "main",
        requires = "profile"
    )]
    pub profile_peer: String,

    /// Testing aid: corrupt every Nth message after stamping it.
    #[arg(long, value_name = "N", hide = true)]
    pub inject_corruption: Option<u64>,

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

/// Runs `xferbench run` and returns the exit status.
pub fn run(args: &RunArgs) -> Result<u8> {
    let config = match RunConfig::from_args(args, crate::launcher::launcher) {
        Ok(c) => c,
        Err(e) => return Ok(crate::exit::usage("run", e)),
    };
    let out = &config.output;
    if let Err(e) = check_outputs(&config) {
        return Ok(crate::exit::usage("run", e));
    }
    let stop = crate::stop::stop_flag()?;
    let mut context = xferbench_lab::context::collect(
        env!("CARGO_PKG_VERSION"),
        std::env::args().collect(),
        config.settings.clone(),
    );
    if let Some(t) = &config.remote {
        context.remote = Some(crate::serve::describe(t)?);
    }
    context.plugins =
        xferbench_lab::plugins::records(config.points.iter().map(|p| p.transport.as_str()));
    let mut journal = match &out.jsonl {
        Some((path, _)) => Some(
            JsonLinesWriter::create(path)
                .with_context(|| format!("cannot create the JSON Lines file {}", path.display()))?,
        ),
        None => None,
    };
    let runs_per_point = (config.options.runs + config.options.warmup) as u64;
    let mut progress = xferbench_report::progress::Progress::new(
        !out.quiet && std::io::stderr().is_terminal(),
        runs_per_point,
    );
    let mut observers: Vec<&mut dyn Observer> = vec![&mut progress];
    if let Some(j) = journal.as_mut() {
        observers.push(j);
    }
    let mut doc = xferbench_lab::run_sweep(
        context,
        &config.points,
        &config.options,
        &stop,
        &mut observers,
    );
    drop(observers);
    doc.warnings.extend(config.notes.iter().cloned());

    // Outputs: files first (they matter most), then the terminal.
    let mut export_failed = false;
    let exports: [(&Option<std::path::PathBuf>, &dyn Exporter); 4] = [
        (&out.json, &Json),
        (&out.csv, &Csv),
        (&out.markdown, &Markdown),
        (&out.html, &Html),
    ];
    for (path, exporter) in exports {
        if let Some(path) = path
            && let Err(e) = export_to_path(exporter, &doc, path)
        {
            export_failed = true;
            eprintln!(
                "error: cannot write the {} export {}: {e}",
                exporter.name(),
                path.display()
            );
        }
    }
    if let Some(req) = &config.options.profile {
        export_failed |= !crate::profile::render_run_profiles(req, &doc, out.quiet);
    }
    if let (Some((path, true)), false) = (&out.jsonl, export_failed) {
        let _ = std::fs::remove_file(path);
    }
    crate::history::record(&args.record, &doc, out.quiet);
    print_results(&doc, out)?;

    Ok(crate::exit::for_doc(&doc, export_failed))
}

/// Every output path, before anything is measured.
fn check_outputs(config: &RunConfig) -> Result<(), String> {
    let out = &config.output;
    for (flag, path) in [
        ("--export-json", &out.json),
        ("--export-csv", &out.csv),
        ("--export-md", &out.markdown),
        ("--export-html", &out.html),
    ] {
        if let Some(path) = path {
            crate::paths::file(flag, path)?;
        }
    }
    match (&out.jsonl, &out.json) {
        (Some((journal, true)), Some(json)) => crate::paths::derived(
            "--export-json",
            json,
            journal,
            "its JSON Lines journal (kept while the sweep runs)",
        )?,
        (Some((journal, _)), _) => crate::paths::file_in_place("--jsonl", journal)?,
        (None, _) => {}
    }
    if let Some(req) = &config.options.profile {
        crate::paths::folder("--profile", &req.dir)?;
    }
    Ok(())
}

fn print_results(doc: &ResultDoc, out: &crate::config::Output) -> Result<()> {
    let mut w = crate::out::stdout();
    if out.stdout_json {
        Json.export(doc, &mut w)?;
    } else if !out.quiet && !doc.points.is_empty() {
        writeln!(
            w,
            "{}",
            xferbench_report::table::render(doc, out.per_channel)
        )?;
    }
    w.flush()?;
    if !out.quiet {
        let mut e = std::io::stderr().lock();
        for warning in &doc.warnings {
            writeln!(e, "warning: {warning}")?;
        }
        for p in &doc.points {
            for warning in &p.warnings {
                writeln!(
                    e,
                    "warning: point {} ({}): {warning}",
                    p.index + 1,
                    describe(p)
                )?;
            }
        }
    }
    Ok(())
}

/// A point in words for a warning: `shm size=2 KiB channels=1 wait=spin`, every
/// value shown through its definition.
fn describe(p: &xferbench_lab::result::PointResult) -> String {
    use xferbench_lab::params::display;
    let mut s = format!(
        "{} size={} channels={}",
        p.params["transport"],
        xferbench_params::bytes::display(p.size_bytes),
        p.channels
    );
    for (k, v) in &p.params {
        if !["workload", "transport", "size", "channels"].contains(&k.as_str()) {
            s.push_str(&format!(" {k}={}", display(&p.params, k, v)));
        }
    }
    s
}
