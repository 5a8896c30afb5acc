//! The Warp Pipe study's folder: `results.json`, one table per group of points
//! (Markdown and CSV), SVG plots of throughput vs threads, payload, instances and I/O
//! model, and `summary.md` in sentences with this run's figures.

use crate::plot::{LineChart, Scale, Series};
use crate::study::{StudyFolder, Table};
use anyhow::Result;
use std::fmt::Write as _;
use xferbench_lab::studies::warp::{PointResult, StudyResult};

/// The groups of points, in the order of the report, with their table titles.
pub const GROUPS: [(&str, &str); 8] = [
    (
        "original-workload",
        "The original workload (506 threads × N iterations × read/write/read 2048 B)",
    ),
    (
        "crc",
        "The original shape with each CRC (shared connection)",
    ),
    ("threads", "Threads (2048 B, read/write/read)"),
    ("payload", "Payload size (64 threads)"),
    ("iterations", "Iterations per thread (64 threads, 2048 B)"),
    ("instances", "Single-threaded client processes"),
    ("io-model", "Memory mock I/O model (fast CRC)"),
    (
        "mock-reads",
        "Memory mock: 2048-byte reads only (64 threads)",
    ),
];

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

/// The table of one group.
pub fn group_table(title: &str, points: &[&PointResult]) -> Table {
    let headers = [
        "variant",
        "threads",
        "instances",
        "iterations",
        "payload B",
        "crc",
        "connection",
        "io",
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
        "errors",
    ];
    let rows = points
        .iter()
        .map(|p| {
            let (s, c) = (&p.spec, &p.spec.client);
            vec![
                s.variant.clone(),
                c.threads.to_string(),
                s.instances.to_string(),
                c.iterations.to_string(),
                c.payload.to_string(),
                c.crc.clone(),
                c.connection.name().to_string(),
                s.io.clone(),
                p.transactions.to_string(),
                format!("{:.3}", p.wall_s),
                format!("{:.0}", p.transactions_per_s),
                format!("{:.2}", p.mb_per_s),
                us(p.latency.p50_ns),
                us(p.latency.p90_ns),
                us(p.latency.p99_ns),
                us(p.latency.p999_ns),
                us(p.latency.max_ns),
                format!("{:.3}", p.client_cpu_s),
                opt(p.server_cpu_s),
                p.verified.to_string(),
                p.verify_failures.to_string(),
                p.errors.to_string(),
            ]
        })
        .collect();
    Table {
        title: title.into(),
        headers: headers.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

/// One series per variant of `group`, x from `x`, y from `y`.
fn chart(
    result: &StudyResult,
    group: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    x: impl Fn(&PointResult) -> f64,
    y: impl Fn(&PointResult) -> f64,
) -> LineChart {
    let mut series: Vec<Series> = Vec::new();
    for p in result.group(group) {
        let label = &p.spec.variant;
        match series.iter_mut().find(|s| &s.label == label) {
            Some(s) => s.points.push((x(p), y(p))),
            None => series.push(Series {
                label: label.clone(),
                points: vec![(x(p), y(p))],
            }),
        }
    }
    LineChart {
        title: title.into(),
        x_label: x_label.into(),
        y_label: y_label.into(),
        x_scale: Scale::Log,
        y_scale: Scale::Log,
        series,
    }
}

/// Writes the whole study folder.
pub fn write_study(folder: &StudyFolder, result: &StudyResult) -> Result<()> {
    folder.write_json("results.json", result)?;
    for (group, title) in GROUPS {
        let pts: Vec<&PointResult> = result.group(group).collect();
        if !pts.is_empty() {
            folder.write_table(group, &group_table(title, &pts))?;
        }
    }
    let crc = Table {
        title: "LCRC32 throughput on a 2 KiB buffer".into(),
        headers: vec!["crc".into(), "MB/s".into(), "× bitwise".into()],
        rows: result
            .crc_mb_per_s
            .iter()
            .map(|(k, v)| {
                vec![
                    k.clone(),
                    format!("{v:.1}"),
                    format!("{:.1}", v / crc_rate(result, "bitwise").unwrap_or(*v)),
                ]
            })
            .collect(),
    };
    folder.write_table("crc-speed", &crc)?;
    let tps = |p: &PointResult| p.transactions_per_s;
    let charts = [
        (
            "throughput-vs-threads",
            chart(
                result,
                "threads",
                "Transactions/s vs threads (2048 B)",
                "threads",
                "transactions/s",
                |p| p.spec.client.threads as f64,
                tps,
            ),
        ),
        (
            "throughput-vs-payload",
            chart(
                result,
                "payload",
                "MB/s vs payload (64 threads)",
                "payload (bytes)",
                "MB/s",
                |p| p.spec.client.payload as f64,
                |p| p.mb_per_s,
            ),
        ),
        (
            "throughput-vs-instances",
            chart(
                result,
                "instances",
                "Transactions/s vs client processes",
                "instances",
                "transactions/s",
                |p| p.spec.instances as f64,
                tps,
            ),
        ),
        (
            "io-model",
            chart(
                result,
                "io-model",
                "Memory mock I/O model: transactions/s vs connections",
                "connections",
                "transactions/s",
                |p| p.spec.client.threads as f64,
                tps,
            ),
        ),
    ];
    for (stem, c) in &charts {
        if c.series.iter().any(|s| !s.points.is_empty()) {
            folder.write_plot(stem, c)?;
        }
    }
    folder.write_text("summary.md", &summary(result))?;
    Ok(())
}

fn crc_rate(result: &StudyResult, kind: &str) -> Option<f64> {
    result
        .crc_mb_per_s
        .iter()
        .find(|(k, _)| k == kind)
        .map(|(_, v)| *v)
}

fn find<'a>(result: &'a StudyResult, group: &'a str, variant: &str) -> Option<&'a PointResult> {
    result.group(group).find(|p| p.spec.variant == variant)
}

/// `summary.md`: findings in sentences, every figure from `result`.
pub fn summary(result: &StudyResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Warp Pipe study — summary\n");
    if result.quick {
        let _ = writeln!(
            s,
            "_`--quick` run: fewer iterations; figures are indicative._\n"
        );
    }
    if result.interrupted {
        let _ = writeln!(
            s,
            "_Interrupted: only the points that finished are reported._\n"
        );
    }
    let orig = find(result, "original-workload", "original");
    let best = result
        .group("original-workload")
        .filter(|p| p.spec.variant != "original")
        .min_by(|a, b| a.wall_s.total_cmp(&b.wall_s));
    if let (Some(o), Some(b)) = (orig, best) {
        let _ = writeln!(
            s,
            "**Speed-up.** The original workload ({} threads × {} iterations × read/write/read of {} B, no sleeps; {} transactions) \
             took {:.3} s with the original design (bitwise CRC, one shared connection, one transaction in flight, an ACK per TLP) \
             and {:.3} s with the `{}` variant (fast CRC, {} connections, piggybacked ACKs): **{:.1}× faster** \
             ({:.0} vs {:.0} transactions/s, {:.1} vs {:.1} MB/s).\n",
            o.spec.client.threads,
            o.spec.client.iterations,
            o.spec.client.payload,
            o.transactions,
            o.wall_s,
            b.wall_s,
            b.spec.variant,
            b.spec.client.connection.name(),
            o.wall_s / b.wall_s.max(1e-9),
            o.transactions_per_s,
            b.transactions_per_s,
            o.mb_per_s,
            b.mb_per_s
        );
        for p in result.group("original-workload") {
            let _ = writeln!(
                s,
                "- `{}`: {:.3} s wall, p50 {} µs / p99 {} µs per transaction, client CPU {:.3} s, memory-mock CPU {} s, verified {} ({} failures, {} errors).",
                p.spec.variant,
                p.wall_s,
                us(p.latency.p50_ns),
                us(p.latency.p99_ns),
                p.client_cpu_s,
                opt(p.server_cpu_s),
                p.verified,
                p.verify_failures,
                p.errors
            );
        }
        let _ = writeln!(s);
    }
    // Where the time goes: CRC share.
    let fast_shared = result.group("crc").find(|p| p.spec.client.crc == "fast");
    let table_shared = result.group("crc").find(|p| p.spec.client.crc == "table");
    if let (Some(o), Some(f)) = (orig, fast_shared) {
        let share = (o.wall_s - f.wall_s) / o.wall_s.max(1e-9) * 100.0;
        let _ = write!(
            s,
            "**Where the time goes.** Keeping the original's single shared connection and changing only the CRC, \
             the same workload takes {:.3} s with the bitwise CRC, ",
            o.wall_s
        );
        if let Some(t) = table_shared {
            let _ = write!(s, "{:.3} s with the table CRC ", t.wall_s);
        }
        let _ = writeln!(
            s,
            "and {:.3} s with the fast CRC: the bitwise CRC accounts for {:.0} % of the original's wall time. \
             The rest ({:.3} s, {:.1} µs per transaction) is the one-transaction-in-flight round trip over \
             loopback TCP (system calls and wake-ups on both sides), which only more transactions in flight remove.",
            f.wall_s,
            share,
            f.wall_s,
            f.wall_s / f.transactions.max(1) as f64 * 1e6
        );
        if let (Some(b), Some(fr)) = (crc_rate(result, "bitwise"), crc_rate(result, "fast")) {
            let _ = writeln!(
                s,
                "On a 2 KiB buffer the bitwise LCRC32 runs at {:.0} MB/s and the fast one at {:.0} MB/s ({:.0}×).",
                b,
                fr,
                fr / b.max(1e-9)
            );
        }
        let _ = writeln!(s);
    }
    // Threads.
    let max_t = result.group("threads").map(|p| p.spec.client.threads).max();
    if let Some(t) = max_t {
        let at: Vec<&PointResult> = result
            .group("threads")
            .filter(|p| p.spec.client.threads == t)
            .collect();
        let o = at.iter().find(|p| p.spec.variant == "original");
        if let Some(o) = o {
            let _ = write!(
                s,
                "**Threads.** At {t} threads the original reaches {:.0} transactions/s",
                o.transactions_per_s
            );
            for p in at.iter().filter(|p| p.spec.variant != "original") {
                let _ = write!(
                    s,
                    ", `{}` {:.0} ({:.1}×)",
                    p.spec.variant,
                    p.transactions_per_s,
                    p.transactions_per_s / o.transactions_per_s.max(1e-9)
                );
            }
            let _ = writeln!(
                s,
                ". With one shared connection, throughput does not grow with threads: they queue on its lock.\n"
            );
        }
    }
    // Payload.
    let pay: Vec<&PointResult> = result
        .group("payload")
        .filter(|p| p.spec.variant == "pipelined")
        .collect();
    if let (Some(lo), Some(hi)) = (pay.first(), pay.last()) {
        let _ = writeln!(
            s,
            "**Payload.** Pipelined, {} B transactions run at {:.0} transactions/s ({:.1} MB/s) and {} B ones at {:.0} transactions/s ({:.1} MB/s): \
             small transactions are bound by per-transaction costs, large ones by copying and CRC.\n",
            lo.spec.client.payload,
            lo.transactions_per_s,
            lo.mb_per_s,
            hi.spec.client.payload,
            hi.transactions_per_s,
            hi.mb_per_s
        );
    }
    // Instances.
    let inst: Vec<&PointResult> = result.group("instances").collect();
    if !inst.is_empty() {
        let _ = write!(s, "**Client processes.** ");
        for p in &inst {
            let _ = write!(
                s,
                "{} × `{}`: {:.0} transactions/s; ",
                p.spec.instances, p.spec.variant, p.transactions_per_s
            );
        }
        let _ = writeln!(
            s,
            "each process has its own connection, so several single-threaded instances behave like per-thread connections.\n"
        );
    }
    // I/O model.
    let io: Vec<&PointResult> = result.group("io-model").collect();
    if let Some(t) = io.iter().map(|p| p.spec.client.threads).max() {
        let mut said = false;
        for mode in ["per-thread", "pipelined"] {
            let at = |model: &str| {
                io.iter().find(|p| {
                    p.spec.client.threads == t
                        && p.spec.io == model
                        && p.spec.client.connection.name() == mode
                })
            };
            if let (Some(e), Some(th)) = (at("epoll"), at("threads")) {
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
                    e.transactions_per_s,
                    opt(e.server_cpu_s),
                    th.transactions_per_s,
                    opt(th.server_cpu_s)
                );
            }
        }
        if said {
            let _ = writeln!(s, ".\n");
        }
    }
    for p in result.group("mock-reads") {
        let _ = writeln!(
            s,
            "**Memory mock reads.** `{}` with {} threads: {:.0} reads of {} B per second ({:.1} MB/s), p50 {} µs, p99 {} µs.\n",
            p.spec.variant,
            p.spec.client.threads,
            p.transactions_per_s,
            p.spec.client.payload,
            p.mb_per_s,
            us(p.latency.p50_ns),
            us(p.latency.p99_ns)
        );
    }
    let failures: u64 = result.points.iter().map(|p| p.verify_failures).sum();
    let errors: u64 = result.points.iter().map(|p| p.errors).sum();
    let unverified = result.points.iter().filter(|p| !p.verified).count();
    let _ = writeln!(
        s,
        "**Integrity.** {} points, {} verification failures, {} failed transactions, {} points unverified.",
        result.points.len(),
        failures,
        errors,
        unverified
    );
    s
}
