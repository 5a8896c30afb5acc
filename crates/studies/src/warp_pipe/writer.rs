//! The Warp Pipe study's folder: one table per group of points (Markdown and CSV),
//! the CRC points' speed table, SVG plots of throughput vs threads, payload, instances
//! and I/O model, and `summary.md` in sentences with this run's figures beside the
//! seed's (warp-pipe's own performance analysis).
//!
//! Everything is read from the [`ResultDoc`]: a cell is a figure's median with its
//! interval ([`figure_cell`]); the speed-up of an improved variant over the original
//! design is the median of run-by-run ratios of paired runs ([`speedup`]).

use super::{SAMPLE_SLEEP_MS, VARIANT, crc};
use crate::finding::section;
use crate::folder::{figure_cell, median, param, speedup, speedup_text, summary_header};
use crate::params::GROUP;
use anyhow::Result;
use points::{find, group, med, num, tps, wall};
use std::fmt::Write as _;
use xferbench_lab::result::{PointResult, ResultDoc, figure};
use xferbench_lab::rig::memory_mock::figures::{
    CLIENT_CPU_S, MB_PER_S, SERVER_CPU_S, TRANSACTIONS_PER_S,
};
use xferbench_lab::workload::warp::{
    CONNECTION, ConnectionMode, INSTANCES, ITERATIONS, OPS, Ops, PAYLOAD, THREADS, names,
};
use xferbench_params::ParamDef;
use xferbench_report::chart::Unit;
use xferbench_report::plot::{LineChart, Scale, Series};
use xferbench_report::study::{ColumnUnit, StudyFolder, Table};
use xferbench_transports::warp::crc::CRC;
use xferbench_transports::warp::server::{IO, IoModel};

/// The groups of points, in the order of the report, with their table titles.
pub const GROUPS: [(&str, &str); 10] = [
    (
        "original-workload",
        "The original workload (506 threads × N iterations × read/write/read 2048 B)",
    ),
    (
        "original-profile",
        "The original workload at warp-pipe's size, added to be profiled on its own (--profile)",
    ),
    (
        "sample-sleep",
        "warp-pipe's sample as it runs: the original design with a 200 ms sleep per iteration",
    ),
    (
        "crc",
        "The original shape with each CRC (shared connection)",
    ),
    (names::THREADS, "Threads (2048 B, read/write/read)"),
    (names::PAYLOAD, "Payload size (64 threads)"),
    (
        names::ITERATIONS,
        "Iterations per thread (64 threads, 2048 B)",
    ),
    (names::INSTANCES, "Single-threaded client processes"),
    ("io-model", "Memory mock I/O model (fast CRC)"),
    (
        "mock-reads",
        "Memory mock: 2048-byte reads only (64 threads)",
    ),
];

/// What warp-pipe's performance analysis reports for its sample (506 threads × 100
/// iterations × read/write/read of 2048 B, on Zephyr's `native_sim`).
const SEED: &str = "warp-pipe's own analysis reports 21 s of `native_sim` time (49 s of real time) \
                    for 506 threads × 100 iterations";

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

fn fixed(digits: usize) -> impl Fn(f64) -> String {
    move |v| format!("{v:.digits$}")
}

fn cell_us(p: &PointResult, f: &str) -> String {
    figure_cell(p, f, us)
}

/// Verification failures over all runs of a point.
fn failures(p: &PointResult) -> u64 {
    p.integrity.map_or(0, |k| k.corrupt)
}

/// The table of one group.
pub fn group_table(title: &str, points: &[&PointResult]) -> Table {
    let headers = [
        VARIANT.name(),
        THREADS.name(),
        INSTANCES.name(),
        ITERATIONS.name(),
        "payload B",
        CRC.name(),
        CONNECTION.name(),
        IO.name(),
        "runs",
        "transactions",
        "wall s",
        "transactions/s",
        "MB/s",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "p99.9 µs",
        "max µs",
        "client CPU s",
        "server CPU s",
        "verified",
        "verify failures",
    ]
    .map(str::to_string);
    let rows = points
        .iter()
        .map(|p| {
            let mut row: Vec<String> = [
                &VARIANT,
                &THREADS,
                &INSTANCES,
                &ITERATIONS,
                &PAYLOAD,
                &CRC,
                &CONNECTION,
                &IO,
            ]
            .iter()
            .map(|d| param(p, d.name()).to_string())
            .collect();
            row.extend([
                p.runs.len().to_string(),
                p.runs
                    .first()
                    .map_or_else(|| "-".into(), |r| r.messages.to_string()),
                figure_cell(p, figure::WINDOW, fixed(3)),
                figure_cell(p, TRANSACTIONS_PER_S, fixed(0)),
                figure_cell(p, MB_PER_S, fixed(2)),
                cell_us(p, figure::LATENCY[0]),
                cell_us(p, figure::LATENCY[1]),
                cell_us(p, figure::LATENCY[2]),
                cell_us(p, figure::LATENCY[3]),
                cell_us(p, figure::LATENCY[4]),
                figure_cell(p, CLIENT_CPU_S, fixed(3)),
                figure_cell(p, SERVER_CPU_S, fixed(3)),
                p.integrity.is_some().to_string(),
                failures(p).to_string(),
            ]);
            row
        })
        .collect();
    Table {
        title: title.into(),
        headers: headers.to_vec(),
        rows,
    }
}

/// One series per variant of `group`, x from the parameter `x`, y the median of
/// figure `y` with the interval of the median.
fn chart(
    doc: &ResultDoc,
    g: &str,
    title: &str,
    x: (&ParamDef, &str),
    y: (&str, &str),
) -> LineChart {
    let mut series: Vec<Series> = Vec::new();
    for p in group(doc, g) {
        let label = param(p, VARIANT.name());
        let xy = (num(p, x.0), med(p, y.0));
        let interval = p.summary.get(y.0).and_then(Series::median_interval);
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => {
                s.points.push(xy);
                s.intervals.push(interval);
            }
            None => series.push(Series {
                intervals: vec![interval],
                label: label.into(),
                points: vec![xy],
                reference: false,
            }),
        }
    }
    LineChart {
        title: title.into(),
        x_label: x.1.into(),
        y_label: y.1.into(),
        x_scale: Scale::Log,
        y_scale: Scale::Log,
        series,
    }
}

/// The CRC's speed, `(crc, MB/s)`, bitwise, table, fast first: the medians of the
/// CRC points ([`super::crc`]), or in result files made before the CRC was measured
/// by points of the plan, the extras' `crc_mb_per_s`.
pub fn crc_rates(doc: &ResultDoc) -> Vec<(String, f64)> {
    let points: Vec<(String, f64)> = group(doc, crc::GROUP)
        .iter()
        .filter_map(|p| {
            Some((
                param(p, CRC.name()).to_string(),
                p.summary.get(xferbench_lab::rig::crc::CRC_MB_PER_S)?.median,
            ))
        })
        .collect();
    let mut v = if points.is_empty() {
        let Some(map) = doc
            .study
            .as_ref()
            .and_then(|s| s.extras.get("crc_mb_per_s"))
            .and_then(|v| v.as_object())
        else {
            return Vec::new();
        };
        map.iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
            .collect()
    } else {
        points
    };
    let rank = |k: &str| ["bitwise", "table", "fast"].iter().position(|x| *x == k);
    v.sort_by_key(|(k, _)| rank(k).unwrap_or(usize::MAX));
    v
}

fn crc_rate(rates: &[(String, f64)], kind: &str) -> Option<f64> {
    rates.iter().find(|(k, _)| k == kind).map(|(_, v)| *v)
}

/// The units of [`group_table`]'s columns of quantities, for the HTML page.
pub fn group_units() -> Vec<ColumnUnit> {
    let mut units = vec![
        ColumnUnit::new("payload B", Unit::Bytes),
        ColumnUnit::new("transactions/s", Unit::PerSecond),
        ColumnUnit::new("MB/s", Unit::BytesPerSecond).scaled(1e6),
    ];
    units.extend(
        ["wall s", "client CPU s", "server CPU s"].map(|c| ColumnUnit::new(c, Unit::Seconds)),
    );
    units.extend(
        ["p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs"]
            .map(|c| ColumnUnit::new(c, Unit::Microseconds)),
    );
    units
}

/// Writes the study's tables, plots and summary.
pub fn write(folder: &StudyFolder, doc: &ResultDoc) -> Result<()> {
    for (g, title) in GROUPS {
        let pts = group(doc, g);
        if !pts.is_empty() {
            folder.write_table_in(g, &group_table(title, &pts), group_units())?;
        }
    }
    let rates = crc_rates(doc);
    if !rates.is_empty() {
        let bitwise = crc_rate(&rates, "bitwise");
        let crc = Table {
            title: "LCRC32 throughput on a 2 KiB buffer".into(),
            headers: vec!["crc".into(), "MB/s".into(), "× bitwise".into()],
            rows: rates
                .iter()
                .map(|(k, v)| {
                    vec![
                        k.clone(),
                        format!("{v:.1}"),
                        format!("{:.1}", v / bitwise.unwrap_or(*v)),
                    ]
                })
                .collect(),
        };
        let mb_per_s = ColumnUnit::new("MB/s", Unit::BytesPerSecond).scaled(1e6);
        folder.write_table_in("crc-speed", &crc, vec![mb_per_s])?;
    }
    let tps = (TRANSACTIONS_PER_S, "transactions/s");
    let charts = [
        (
            "throughput-vs-threads",
            chart(
                doc,
                names::THREADS,
                "Transactions/s vs threads (2048 B)",
                (&THREADS, THREADS.name()),
                tps,
            ),
        ),
        (
            "throughput-vs-payload",
            chart(
                doc,
                names::PAYLOAD,
                "MB/s vs payload (64 threads)",
                (&PAYLOAD, &format!("{} (bytes)", PAYLOAD.name())),
                (MB_PER_S, "MB/s"),
            ),
        ),
        (
            "throughput-vs-instances",
            chart(
                doc,
                names::INSTANCES,
                "Transactions/s vs client processes",
                (&INSTANCES, INSTANCES.name()),
                tps,
            ),
        ),
        (
            "io-model",
            chart(
                doc,
                "io-model",
                "Memory mock I/O model: transactions/s vs connections",
                (&THREADS, "connections"),
                tps,
            ),
        ),
    ];
    for (stem, c) in &charts {
        if c.series.iter().any(|s| !s.points.is_empty()) {
            folder.write_plot(stem, c)?;
        }
    }
    folder.write_text("summary.md", &summary(doc))?;
    Ok(())
}

fn cpu_s(p: &PointResult, f: &str) -> String {
    median(p, f).map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

/// `summary.md`: findings in sentences, every figure from `doc`.
pub fn summary(doc: &ResultDoc) -> String {
    let mut s = summary_header(doc, "Warp Pipe study — summary");
    if doc.study.as_ref().is_some_and(|i| i.quick) {
        let _ = writeln!(
            s,
            "_`--quick` run: fewer iterations and two runs per point; figures are indicative._\n"
        );
    }
    summary_speed_up(&mut s, doc);
    summary_crc(&mut s, doc);
    profile_lines(&mut s, doc);
    summary_scaling(&mut s, doc);
    io_model(&mut s, doc);
    summary_mock_reads(&mut s, doc);
    summary_integrity(&mut s, doc);
    let _ = write!(s, "\n## Findings\n\n{}", section(&findings::findings(doc)));
    s
}

/// The original workload: the original design against the best variant, each variant's line, and the sample as it runs with its sleeps.
fn summary_speed_up(s: &mut String, doc: &ResultDoc) {
    let orig = find(doc, "original-workload", "original");
    let best = group(doc, "original-workload")
        .into_iter()
        .filter(|p| param(p, VARIANT.name()) != "original")
        .max_by(|a, b| tps(a).total_cmp(&tps(b)));
    if let (Some(o), Some(b)) = (orig, best) {
        let up = speedup(b, o, TRANSACTIONS_PER_S).map_or_else(|| "-".into(), |e| speedup_text(&e));
        let _ = writeln!(
            s,
            "**Speed-up.** The original workload ({} threads × {} iterations × read/write/read of {} B, no sleeps; {} transactions) \
             took {:.3} s with the original design (bitwise CRC, one shared connection, one transaction in flight, an ACK per TLP) \
             and {:.3} s with the `{}` variant (fast CRC, {} connections, piggybacked ACKs): **{up} faster** \
             ({:.0} vs {:.0} transactions/s, {:.1} vs {:.1} MB/s). \
             For comparison, {SEED} in its Zephyr sample; here the original design takes {:.3} s over loopback TCP.\n",
            param(o, THREADS.name()),
            param(o, ITERATIONS.name()),
            param(o, PAYLOAD.name()),
            o.runs.first().map_or(0, |r| r.messages),
            wall(o),
            wall(b),
            param(b, VARIANT.name()),
            param(b, CONNECTION.name()),
            tps(o),
            tps(b),
            med(o, MB_PER_S),
            med(b, MB_PER_S),
            wall(o),
        );
        for p in group(doc, "original-workload") {
            let _ = writeln!(
                s,
                "- `{}`: {} s wall, p50 {} µs / p99 {} µs per transaction, client CPU {} s, memory-mock CPU {} s, verified {} ({} failures).",
                param(p, VARIANT.name()),
                figure_cell(p, figure::WINDOW, fixed(3)),
                cell_us(p, figure::LATENCY[0]),
                cell_us(p, figure::LATENCY[2]),
                cpu_s(p, CLIENT_CPU_S),
                cpu_s(p, SERVER_CPU_S),
                p.integrity.is_some(),
                failures(p),
            );
        }
        let _ = writeln!(s);
        if let Some(p) = find(doc, "sample-sleep", "original") {
            let (threads, iterations) = (num(p, &THREADS), num(p, &ITERATIONS));
            let sleeps_s = iterations * SAMPLE_SLEEP_MS as f64 / 1e3;
            let _ = writeln!(
                s,
                "**The sample as it runs.** With warp-pipe's {SAMPLE_SLEEP_MS} ms sleep after every iteration ({threads} threads × {iterations} iterations), \
                 the original design took {} s of real time here, against 21 s of `native_sim` time and 49 s of real time in warp-pipe's \
                 analysis. A thread's sleeps alone take {:.1} s; the transactions add {:.1} s to them.\n",
                figure_cell(p, figure::WINDOW, fixed(3)),
                sleeps_s,
                wall(p) - sleeps_s,
            );
        }
    }
}

/// Where the original's time goes: the same workload with each CRC, and the CRCs' own speeds.
fn summary_crc(s: &mut String, doc: &ResultDoc) {
    let orig = find(doc, "original-workload", "original");
    let crc_group = group(doc, "crc");
    let with_crc = |c: &str| {
        crc_group
            .iter()
            .find(|p| param(p, CRC.name()) == c)
            .copied()
    };
    if let (Some(o), Some(f)) = (orig, with_crc("fast")) {
        let share = (wall(o) - wall(f)) / wall(o).max(1e-9) * 100.0;
        let _ = write!(
            s,
            "**Where the time goes.** Keeping the original's single shared connection and changing only the CRC, \
             the same workload takes {:.3} s with the bitwise CRC, ",
            wall(o)
        );
        if let Some(t) = with_crc("table") {
            let _ = write!(s, "{:.3} s with the table CRC ", wall(t));
        }
        let per_tx = wall(f) / f.runs.first().map_or(1, |r| r.messages.max(1)) as f64 * 1e6;
        let _ = writeln!(
            s,
            "and {:.3} s with the fast CRC: the bitwise CRC accounts for {share:.0} % of the original's wall time \
             (warp-pipe's perf profile also points at CRC32 as the first target). \
             The rest ({:.3} s, {per_tx:.1} µs per transaction) is the one-transaction-in-flight round trip over \
             loopback TCP (system calls and wake-ups on both sides), which only more transactions in flight remove.",
            wall(f),
            wall(f),
        );
        let rates = crc_rates(doc);
        if let (Some(b), Some(fr)) = (crc_rate(&rates, "bitwise"), crc_rate(&rates, "fast")) {
            let _ = writeln!(
                s,
                "On a 2 KiB buffer the bitwise LCRC32 runs at {b:.0} MB/s and the fast one at {fr:.0} MB/s ({:.0}×).",
                fr / b.max(1e-9)
            );
        }
        let _ = writeln!(s);
    }
}

/// Threads, payload sizes and client processes.
fn summary_scaling(s: &mut String, doc: &ResultDoc) {
    let threads = group(doc, names::THREADS);
    if let Some(t) = threads.iter().map(|p| num(p, &THREADS) as u64).max() {
        let at: Vec<&PointResult> = threads
            .iter()
            .filter(|p| num(p, &THREADS) as u64 == t)
            .copied()
            .collect();
        if let Some(o) = at.iter().find(|p| param(p, VARIANT.name()) == "original") {
            let _ = write!(
                s,
                "**Threads.** At {t} threads the original reaches {:.0} transactions/s",
                tps(o)
            );
            for p in at.iter().filter(|p| param(p, VARIANT.name()) != "original") {
                let up = speedup(p, o, TRANSACTIONS_PER_S).map_or(f64::NAN, |e| e.median);
                let _ = write!(
                    s,
                    ", `{}` {:.0} ({up:.1}×)",
                    param(p, VARIANT.name()),
                    tps(p)
                );
            }
            let _ = writeln!(s, ".\n");
        }
    }
    let pay: Vec<&PointResult> = group(doc, names::PAYLOAD)
        .into_iter()
        .filter(|p| param(p, VARIANT.name()) == "pipelined")
        .collect();
    if let (Some(lo), Some(hi)) = (pay.first(), pay.last()) {
        let _ = writeln!(
            s,
            "**Payload.** Pipelined, {} B transactions run at {:.0} transactions/s ({:.1} MB/s) and {} B ones at {:.0} transactions/s ({:.1} MB/s): \
             small transactions are bound by per-transaction costs, large ones by copying and CRC.\n",
            param(lo, PAYLOAD.name()),
            tps(lo),
            med(lo, MB_PER_S),
            param(hi, PAYLOAD.name()),
            tps(hi),
            med(hi, MB_PER_S)
        );
    }
    let inst = group(doc, names::INSTANCES);
    if !inst.is_empty() {
        let _ = write!(s, "**Client processes.** ");
        for p in &inst {
            let _ = write!(
                s,
                "{} × `{}`: {:.0} transactions/s; ",
                param(p, INSTANCES.name()),
                param(p, VARIANT.name()),
                tps(p)
            );
        }
        let _ = writeln!(s, "each process has its own connection.\n");
    }
}

/// The memory mock's reads.
fn summary_mock_reads(s: &mut String, doc: &ResultDoc) {
    for p in group(doc, "mock-reads") {
        let _ = writeln!(
            s,
            "**Memory mock reads.** `{}` with {} threads: {:.0} reads of {} B per second ({:.1} MB/s), p50 {} µs, p99 {} µs.\n",
            param(p, VARIANT.name()),
            param(p, THREADS.name()),
            tps(p),
            param(p, PAYLOAD.name()),
            med(p, MB_PER_S),
            us(med(p, figure::LATENCY[0])),
            us(med(p, figure::LATENCY[2]))
        );
    }
}

/// The transactions' verification.
fn summary_integrity(s: &mut String, doc: &ResultDoc) {
    // The transactions' points: the CRC points move no data.
    let transfers: Vec<&PointResult> = doc
        .points
        .iter()
        .filter(|p| param(p, GROUP.name()) != crc::GROUP)
        .collect();
    let failures: u64 = transfers.iter().copied().map(failures).sum();
    let unverified = transfers
        .iter()
        .filter(|p| param(p, OPS.name()) != Ops::Read.name() && p.integrity.is_none())
        .count();
    let _ = writeln!(
        s,
        "**Integrity.** {} points, {} verification failures, {} points unverified; a failed transaction fails its point.",
        transfers.len(),
        failures,
        unverified
    );
}

/// The original workload's own profile (`--profile`): its top function and the
/// CRC's share, beside the seed's sandwich view.
fn profile_lines(s: &mut String, doc: &ResultDoc) {
    let Some(p) = doc
        .study
        .as_ref()
        .and_then(|i| i.extras.get("original_profile"))
    else {
        return;
    };
    let pct = |v: &serde_json::Value| {
        v.as_f64()
            .map_or("-".into(), |v| format!("{:.1} %", v * 100.0))
    };
    let _ = write!(
        s,
        "**The profile.** Profiled on its own (point {}, `{}`, {} iterations, {:.0} ms of CPU sampled in `{}`), \
         the original workload's top function by self time is `{}` with {} of the samples ({} with its callees){}. ",
        p["point"],
        p["group"].as_str().unwrap_or("-"),
        p["iterations"].as_str().unwrap_or("-"),
        p["sampled_cpu_ms"].as_f64().unwrap_or(0.0),
        p["participant"].as_str().unwrap_or("-"),
        p["top"]["name"].as_str().unwrap_or("-"),
        pct(&p["top"]["self_share"]),
        pct(&p["top"]["total_share"]),
        match p["top_user"].as_object() {
            Some(u) if u["name"] != p["top"]["name"] => format!(
                "; the top function outside the kernel is `{}` with {}",
                u["name"].as_str().unwrap_or("-"),
                pct(&u["self_share"])
            ),
            _ => String::new(),
        },
    );
    match p["top_crc"].as_object() {
        Some(c) => {
            let _ = write!(
                s,
                "The first CRC function, `{}`, ranks {} by self time ({}); stacks with a CRC function on them make {} of the samples. ",
                c["name"].as_str().unwrap_or("-"),
                c["rank"],
                pct(&c["self_share"]),
                pct(&p["crc_total_share"]),
            );
        }
        None => s.push_str("No CRC function was sampled. "),
    }
    let _ = writeln!(
        s,
        "warp-pipe's analysis (perf on its Zephyr sample, speedscope's sandwich view) finds CRC32 on top, without a share.\n"
    );
}

/// The I/O-model finding: epoll vs a thread per connection at the most threads.
fn io_model(s: &mut String, doc: &ResultDoc) {
    let io = group(doc, "io-model");
    let Some(t) = io.iter().map(|p| num(p, &THREADS) as u64).max() else {
        return;
    };
    let mut said = false;
    for mode in [ConnectionMode::PerThread, ConnectionMode::Pipelined] {
        let mode = mode.name();
        let at = |model: &str| {
            io.iter().copied().find(|p| {
                num(p, &THREADS) as u64 == t
                    && param(p, IO.name()) == model
                    && param(p, CONNECTION.name()) == mode
            })
        };
        if let (Some(e), Some(th)) = (at(IoModel::Epoll.name()), at(IoModel::Threads.name())) {
            if !said {
                let _ = write!(s, "**I/O model.** With {t} client threads ");
                said = true;
            } else {
                let _ = write!(s, "; ");
            }
            let _ = write!(
                s,
                "and `{mode}` connections, the epoll event loop serves {:.0} transactions/s ({} s of server CPU) \
                 and a thread per connection {:.0} transactions/s ({} s)",
                med(e, TRANSACTIONS_PER_S),
                cpu_s(e, SERVER_CPU_S),
                med(th, TRANSACTIONS_PER_S),
                cpu_s(th, SERVER_CPU_S)
            );
        }
    }
    if said {
        let _ = writeln!(s, ".\n");
    }
}

pub mod findings;
mod points;

#[cfg(test)]
pub(crate) mod tests;
