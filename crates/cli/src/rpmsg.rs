//! `xferbench rpmsg`: one point of the RPMsg workload with `rpmsg-xmit-p`'s settings
//! (`--transfer` bytes per channel → ⌈transfer/size⌉ round trips per channel), run
//! `--runs` times after `--warmup` runs on the point loop with a one-point
//! [`RpmsgBench`], summarised from the point's estimates (medians and their spread).

use crate::exit::{EXIT_FAILURE, EXIT_INTEGRITY, EXIT_USAGE};
use crate::flags::{RunsArgs, TimeoutArgs, WatchArgs, choice};
use anyhow::{Result, bail};
use clap::Args;
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use xferbench_lab::measure::{LoopOptions, PlannedPoint, run_plan};
use xferbench_lab::result::{Outcome, PointResult, RunRecord, Settings, figure};
use xferbench_lab::rig::rpmsg::{RemoteKind, RpmsgBench};
use xferbench_lab::workload::Limit;
use xferbench_lab::workload::rpmsg::{
    DROPPED_REPLIES, KICKS_TO_HOST, KICKS_TO_REMOTE, LINK_FAULTS, PACKET, RpmsgParams, RpmsgPoint,
    SUM_OF_RATES, TRANSFER,
};
use xferbench_params::{PointParams, Value};
use xferbench_probes::counters::CounterMode;
use xferbench_report::{Exporter, export_to_path, format, json::Json};
use xferbench_studies::rpmsg::RULES;
use xferbench_transports::rpmsg::{Buffers, Notify};

/// `xferbench rpmsg`.
#[derive(Debug, Args)]
#[command(after_help = "\
The remote is a separate process serving echo over two vrings in shared memory. The \
aggregate is measured over the common window of all channels; the original's figure, \
the sum of per-thread rates, is shown next to it.

Examples:
  xferbench rpmsg -c 4 -s 496 --transfer 10MB
  xferbench rpmsg --notify poll --buffers zero-copy --verify --json

Exit status: 0 success, 1 failure, 2 bad usage, 3 data verification failed, 128+N \
stopped by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP).")]
pub struct RpmsgArgs {
    /// Concurrent channels: one thread and one endpoint pair each (1..1024; the
    /// original's -n).
    #[arg(
        short,
        long,
        visible_alias = "threads",
        value_name = "N",
        default_value_t = 1
    )]
    pub channels: u32,
    /// Packet size in bytes (1..496; the original's -s).
    #[arg(short, long, value_name = "BYTES", default_value = "496")]
    pub size: String,
    /// Bytes each channel sends (K/M/G binary, kB/MB/GB decimal suffixes; the
    /// original's -t).
    #[arg(long, value_name = "BYTES", default_value = "1MB")]
    pub transfer: String,
    /// Notification mode.
    #[arg(long, value_parser = choice::<Notify>(), default_value_t = Notify::Kick)]
    pub notify: Notify,
    /// Buffer mode.
    #[arg(long, value_parser = choice::<Buffers>(), default_value_t = Buffers::Copy)]
    pub buffers: Buffers,
    /// Echo replies carry the firmware's suffix (so they differ in size).
    #[arg(long)]
    pub suffix: bool,
    /// Stamp and check every packet (sequence, CRC-32, length; packets >= 16 B).
    #[arg(long)]
    pub verify: bool,
    /// Pin each channel's driver to a CPU (the 2i-th allowed one) and the remote to
    /// the CPU after the first driver's, as `run --pin` pins drivers and peers.
    #[arg(long)]
    pub pin: bool,
    /// Measured and warm-up runs.
    #[command(flatten)]
    pub repeat: RunsArgs,
    /// Time without progress on any channel before a run is declared hung.
    #[command(flatten)]
    pub hang: TimeoutArgs,
    /// Write the result document as JSON.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Print the result document as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write every measured run as one JSON line (the per-run shape) to FILE (`-`:
    /// stdout, instead of the table).
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,
    /// No table; only errors (files are still written).
    #[arg(short, long)]
    pub quiet: bool,
    /// Machine limits and drift.
    #[command(flatten)]
    pub watch: WatchArgs,
}

fn usage(msg: impl std::fmt::Display) -> Result<u8> {
    eprintln!("error: {msg}");
    eprintln!("\nFor more information, try 'xferbench rpmsg --help'.");
    Ok(EXIT_USAGE)
}

/// The point the arguments describe with its transfer size, or a usage error naming
/// the flag.
pub(crate) fn point(a: &RpmsgArgs) -> Result<(RpmsgPoint, u64), String> {
    let bytes = |flag: &str, def: &xferbench_params::ParamDef, text: &str| match def.parse(text) {
        Ok(Value::Bytes(n)) => Ok(n),
        Ok(_) => Err(format!("{flag} {text:?}: expected {}", def.accepts())),
        Err(e) => Err(format!("{flag}: {e}")),
    };
    let packet = bytes("--size", &PACKET, &a.size)? as usize;
    let transfer = bytes("--transfer", &TRANSFER, &a.transfer)?;
    if !(1..=1024).contains(&a.channels) {
        return Err(format!("--channels {}: must be 1 to 1024", a.channels));
    }
    if transfer == 0 {
        return Err("--transfer: must be at least 1 byte".into());
    }
    let p = RpmsgPoint {
        channels: a.channels,
        packet,
        limit: Limit::Count(RpmsgPoint::round_trips_for(transfer, packet)),
        notify: a.notify,
        buffers: a.buffers,
        suffix: a.suffix,
        verify: a.verify,
        zero_copy: false,
        pace_ns: None,
    };
    p.check()?;
    Ok((p, transfer))
}

/// Runs `xferbench rpmsg` and returns the exit status.
pub fn run(a: &RpmsgArgs) -> Result<u8> {
    let (p, transfer) = match point(a) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    if let Some(path) = &a.export_json
        && let Err(e) = crate::paths::file("--export-json", path)
    {
        return usage(e);
    }
    if let Some(path) = a.jsonl.as_ref().filter(|p| p.as_os_str() != "-")
        && let Err(e) = crate::paths::file_in_place("--jsonl", path)
    {
        return usage(e);
    }
    let watch = match crate::config::watch(&a.watch) {
        Ok(w) => w,
        Err(e) => return usage(e),
    };
    let params = RpmsgParams::of(&p, transfer).to_map().into_params();
    let planned = PlannedPoint {
        size_bytes: p.packet as u64,
        channels: p.channels as usize,
        verify: p.verify,
        ..PlannedPoint::from_params(params, RULES)
    };
    let mut bench = RpmsgBench::new(RemoteKind::Process(crate::launcher::launcher()?), a.pin)
        .with([(planned, p)]);
    let opts = LoopOptions {
        judge: &xferbench_lab::judge::LAB,
        runs: a.repeat.runs,
        warmup: a.repeat.warmup,
        interleave: false,
        hang_timeout: a.hang.timeout,
        counters: CounterMode::Off,
        profile: None,
        watch,
        until_stopped: false,
    };
    let context = xferbench_lab::context::collect(
        env!("CARGO_PKG_VERSION"),
        std::env::args().collect(),
        Settings {
            workload: "rpmsg".into(),
            runs: a.repeat.runs,
            warmup: a.repeat.warmup,
            count: match p.limit {
                Limit::Count(n) => Some(n),
                Limit::Duration(_) => None,
            },
            duration_s: None,
            peer: "process".into(),
            pin: a.pin,
            verify: a.verify,
            interleave: false,
        },
    );
    let stop = crate::stop::stop_flag()?;
    let doc = run_plan(context, &mut bench, &opts, &stop, &mut []);
    let point = doc.points.first();
    let mut outputs_failed = false;
    if let Some(path) = &a.export_json
        && let Err(e) = export_to_path(&Json, &doc, path)
    {
        outputs_failed = true;
        eprintln!("error: cannot write --export-json {}: {e}", path.display());
    }
    let jsonl_stdout = a.jsonl.as_deref() == Some(std::path::Path::new("-"));
    if let Some(path) = a.jsonl.as_ref().filter(|_| !jsonl_stdout) {
        let lines = || xferbench_report::write_atomic(path, |mut w| write_lines(&mut w, point));
        if let Err(e) = lines() {
            outputs_failed = true;
            eprintln!("error: cannot write --jsonl {}: {e}", path.display());
        }
    }
    let mut out = crate::out::stdout();
    if a.json {
        Json.export(&doc, &mut out)?;
    } else if jsonl_stdout {
        write_lines(&mut out, point)?;
    } else if let Some(pt) = point.filter(|_| !a.quiet) {
        writeln!(out, "{}", table(&p, transfer, pt))?;
    }
    out.flush()?;
    drop(out);
    match &doc.outcome {
        Outcome::Complete => {}
        Outcome::Interrupted => return Ok(crate::stop::interrupted_status()),
        Outcome::Failed { error } => {
            let done = point.map_or(0, |p| p.runs.len());
            bail!("{error} ({done} of {} runs finished)", a.repeat.runs);
        }
    }
    let Some(pt) = point else {
        bail!("the point produced no result");
    };
    let dirty = pt.integrity.as_ref().is_some_and(|i| !i.is_clean());
    let faults = pt
        .runs
        .iter()
        .any(|r| fig(r, LINK_FAULTS) + fig(r, DROPPED_REPLIES) > 0.0);
    if dirty || faults {
        eprintln!("error: data verification failed or messages were rejected; see the table");
        return Ok(EXIT_INTEGRITY);
    }
    Ok(if outputs_failed { EXIT_FAILURE } else { 0 })
}

/// Every measured run of the point as one JSON line.
fn write_lines(w: &mut impl Write, point: Option<&PointResult>) -> std::io::Result<()> {
    for r in point.iter().flat_map(|p| &p.runs) {
        serde_json::to_writer(&mut *w, &run_json(r))?;
        writeln!(w)?;
    }
    Ok(())
}

fn fig(r: &RunRecord, name: &str) -> f64 {
    r.figures.get(name).copied().unwrap_or(0.0)
}

/// One run in the shape `xferbench rpmsg --jsonl` writes (what `--json` printed
/// before it printed the result document).
fn run_json(r: &RunRecord) -> serde_json::Value {
    let remote = r.cpu.iter().find(|c| c.role == "remote");
    json!({
        "channels": r.channels.iter().map(|c| json!({
            "channel": c.channel,
            "bytes": c.bytes,
            "round_trips": c.messages,
            "start_offset_ns": c.start_offset_ns,
            "end_offset_ns": c.end_offset_ns,
            "bytes_per_s": c.throughput_bytes_per_s,
            "integrity": c.integrity,
        })).collect::<Vec<_>>(),
        "window_ns": r.window_ns,
        "aggregate_bytes_per_s": fig(r, figure::THROUGHPUT),
        "sum_of_rates_bytes_per_s": fig(r, SUM_OF_RATES),
        "round_trips_per_s": fig(r, figure::MESSAGE_RATE),
        "jain": r.figures.get(figure::FAIRNESS).copied().unwrap_or(1.0),
        "latency": r.latency,
        "host_cpus": fig(r, figure::CPU_MAIN),
        "remote_cpus": remote.map(|c| c.cpus_utilised),
        "counters": {
            "kicks_to_remote_per_round_trip": fig(r, KICKS_TO_REMOTE),
            "kicks_to_host_per_round_trip": fig(r, KICKS_TO_HOST),
            "link_faults": fig(r, LINK_FAULTS),
            "dropped_replies": fig(r, DROPPED_REPLIES),
        },
        "integrity": r.integrity,
        "figures": r.figures,
    })
}

/// A table row: its name, its figure, and how to show a value of it.
type Row = (&'static str, &'static str, fn(f64) -> String);

/// Medians over the runs, with their spread.
fn table(p: &RpmsgPoint, transfer: u64, pt: &PointResult) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        format!(
            "{} ch × {} B × {} B per channel ({}, {})",
            p.channels,
            p.packet,
            transfer,
            p.notify.name(),
            p.buffers.name()
        ),
        "median".into(),
        "spread".into(),
    ]);
    let two = |v: f64| format!("{v:.2}");
    let rows: [Row; 10] = [
        ("round trips/s", figure::MESSAGE_RATE, format::rate_count),
        (
            "aggregate (common window)",
            figure::THROUGHPUT,
            format::rate_bytes,
        ),
        (
            "sum of per-thread rates (original)",
            SUM_OF_RATES,
            format::rate_bytes,
        ),
        ("round trip p50", figure::LATENCY[0], format::nanos),
        ("round trip p99", figure::LATENCY[2], format::nanos),
        ("Jain fairness", figure::FAIRNESS, |v| format!("{v:.3}")),
        ("host CPUs", figure::CPU_MAIN, two),
        ("remote CPUs", figure::CPU_PEERS, two),
        ("kicks per round trip to remote", KICKS_TO_REMOTE, two),
        ("kicks per round trip to host", KICKS_TO_HOST, two),
    ];
    for (name, key, show) in rows {
        let (median, spread) = match pt.summary.get(key) {
            Some(e) => (show(e.median), format::spread(e)),
            None => ("—".into(), String::new()),
        };
        t.add_row(vec![
            Cell::new(name),
            Cell::new(median).set_alignment(CellAlignment::Right),
            Cell::new(spread).set_alignment(CellAlignment::Right),
        ]);
    }
    let faults: f64 = pt
        .runs
        .iter()
        .map(|r| fig(r, LINK_FAULTS) + fig(r, DROPPED_REPLIES))
        .sum();
    t.add_row(vec![
        Cell::new("rejected or dropped messages (all runs)"),
        Cell::new(faults).set_alignment(CellAlignment::Right),
        Cell::new(""),
    ]);
    if let Some(all) = &pt.integrity {
        t.add_row(vec![
            Cell::new("verify: lost / dup / reordered / corrupt"),
            Cell::new(format!(
                "{} / {} / {} / {}",
                all.lost, all.duplicated, all.reordered, all.corrupt
            ))
            .set_alignment(CellAlignment::Right),
            Cell::new(""),
        ]);
    }
    t
}
