//! The hash-table study's folder: the seven cases per architecture beside the seed's
//! figures, throughput, latency and CPU tables, the Redis rows, two SVG plots (time
//! per run by case; steady aggregate requests/s vs visitors, with the seed's
//! whole-process figures as dashed reference lines), and `summary.md` with the seed's
//! seven sentences (S1–S7) per architecture, in its wording and with its formulas.
//!
//! Every figure comes from the [`ResultDoc`]. A point holds one hyperfine-style
//! session and one steady window per visit (visits interleaved); a cell is the median
//! over the visits. Times per run are whole-process times, as the seed's; aggregate
//! throughput is the steady rate of all clients over a common window
//! ([`f::REQUESTS_PER_S_STEADY`]), never derived from whole-process time.

use super::{CASE, REDIS_VISITORS, redis_case};
use crate::finding::section;
use crate::folder::{median, param, summary_header_with};
use crate::params::GROUP;
use anyhow::Result;
use std::fmt::Write as _;
use xferbench_lab::result::{PointResult, ResultDoc, figure};
use xferbench_lab::rig::kv::figures as f;
use xferbench_lab::rig::kv::{SERVER, VISITORS, WORKERS};
use xferbench_report::chart::{Interval, Unit};
use xferbench_report::plot::{LineChart, Scale, Series};
use xferbench_report::study::{ColumnUnit, StudyFolder, Table};

pub use cases::{CASES, SEED_COLUMNS, SEED_MEAN_MS, SEED_RATIOS, SEED_SD_MS, SENTENCES, sentence};
use cases::{find, time_of};
use profile::arches;

fn med(p: &PointResult, fig: &str) -> f64 {
    median(p, fig).unwrap_or(f64::NAN)
}

fn ms(s: f64) -> String {
    if s.is_finite() {
        format!("{:.2}", s * 1e3)
    } else {
        "-".into()
    }
}

fn us(ns: f64) -> String {
    if ns.is_finite() {
        format!("{:.1}", ns / 1e3)
    } else {
        "-".into()
    }
}

fn rate(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.0}")
    } else {
        "-".into()
    }
}

fn mismatches(p: &PointResult) -> u64 {
    p.integrity.map_or(0, |k| k.corrupt + k.lost + k.duplicated)
}

/// The point's collapse in words, when a visit's timed client could not finish in
/// its run limit: "1 of 2 visits: the timed client completed 120 of 300 requests in
/// its 20 s limit" (the first collapsed visit's figures).
pub fn collapse(p: &PointResult) -> Option<String> {
    let cut: Vec<_> = p.runs.iter().filter_map(|r| r.collapsed.as_ref()).collect();
    let first = cut.first()?;
    Some(format!(
        "{} of {} visits: {}",
        cut.len(),
        p.runs.len(),
        first.describe()
    ))
}

/// A point none of whose timed runs finished in the limit: "collapsed: > 20 s", the
/// limit being a lower bound on its time per run.
pub fn collapsed_time(p: &PointResult) -> Option<String> {
    if median(p, f::TIME_MEAN_S).is_some_and(f64::is_finite) {
        return None;
    }
    let limit = p
        .runs
        .iter()
        .filter_map(|r| r.collapsed.as_ref())
        .filter(|c| c.stuck.is_none())
        .map(|c| c.limit_s)
        .reduce(f64::min)?;
    Some(format!("collapsed: > {} s", (limit * 1e3).round() / 1e3))
}

/// The units of [`points_table`]'s columns of quantities, for the HTML page.
pub fn points_units() -> Vec<ColumnUnit> {
    let mut units: Vec<ColumnUnit> = [
        "mean ms",
        "± sd ms",
        "median ms",
        "min ms",
        "max ms",
        "user ms",
        "sys ms",
    ]
    .map(|c| ColumnUnit::new(c, Unit::Milliseconds))
    .to_vec();
    units.extend(
        ["p50 µs", "p90 µs", "p99 µs", "max µs"].map(|c| ColumnUnit::new(c, Unit::Microseconds)),
    );
    units.extend(["server CPU s", "visitors CPU s"].map(|c| ColumnUnit::new(c, Unit::Seconds)));
    units.extend(
        [
            "requests/s (all clients, steady)",
            "requests/s (all clients, hyperfine window)",
            "requests/s (timed client, whole process)",
        ]
        .map(|c| ColumnUnit::new(c, Unit::PerSecond)),
    );
    units
}

/// The mean time per run in ms, or "collapsed: > N s" ([`collapsed_time`]).
fn mean_ms(p: &PointResult) -> String {
    collapsed_time(p).unwrap_or_else(|| ms(med(p, f::TIME_MEAN_S)))
}

/// One row per point: hyperfine's columns, throughput, latency and CPU.
pub fn points_table(title: &str, points: &[&PointResult]) -> Table {
    let headers = [
        CASE.name(),
        SERVER.name(),
        WORKERS.name(),
        VISITORS.name(),
        "runs",
        "mean ms",
        "± sd ms",
        "median ms",
        "min ms",
        "max ms",
        "user ms",
        "sys ms",
        "requests/s (all clients, steady)",
        "requests/s (all clients, hyperfine window)",
        "requests/s (timed client, whole process)",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "max µs",
        "server CPU s",
        "visitors CPU s",
        "mismatches",
        "collapsed",
    ]
    .map(str::to_string);
    let rows = points
        .iter()
        .map(|p| {
            let mut row: Vec<String> = [&CASE, &SERVER, &WORKERS, &VISITORS]
                .iter()
                .map(|d| param(p, d.name()).to_string())
                .collect();
            row.push(format!("{:.0}", med(p, f::TIMED_RUNS)));
            row.push(mean_ms(p));
            for fig in [
                f::TIME_SD_S,
                f::TIME_MEDIAN_S,
                f::TIME_MIN_S,
                f::TIME_MAX_S,
                f::USER_MEAN_S,
                f::SYS_MEAN_S,
            ] {
                row.push(ms(med(p, fig)));
            }
            row.push(median(p, f::REQUESTS_PER_S_STEADY).map_or_else(|| "-".into(), rate));
            row.push(rate(med(p, f::REQUESTS_PER_S_ALL)));
            row.push(rate(med(p, f::REQUESTS_PER_S_TIMED)));
            for fig in [0, 1, 2, 4] {
                row.push(us(med(p, figure::LATENCY[fig])));
            }
            let cpu = |fig| median(p, fig).map_or_else(|| "-".into(), |v| format!("{v:.2}"));
            row.push(cpu(f::SERVER_CPU_S));
            row.push(cpu(f::VISITORS_CPU_S));
            row.push(mismatches(p).to_string());
            row.push(collapse(p).unwrap_or_else(|| "-".into()));
            row
        })
        .collect();
    Table {
        title: title.into(),
        headers: headers.to_vec(),
        rows,
    }
}

/// Mean time per run of each case: the seed's three columns beside ours.
pub fn seed_table(doc: &ResultDoc) -> Table {
    let mut headers: Vec<String> = vec![CASE.name().into()];
    headers.extend(SEED_COLUMNS.iter().map(|c| format!("{c} (ms)")));
    headers.extend(arches().iter().map(|a| format!("{a} here (ms)")));
    let rows = CASES
        .iter()
        .enumerate()
        .map(|(i, (case, words))| {
            let mut row = vec![format!("{case} ({words})")];
            row.push(format!("{:.2} ± {:.2}", SEED_MEAN_MS[0][i], SEED_SD_MS[i]));
            row.push(format!("{:.1}", SEED_MEAN_MS[1][i]));
            row.push(format!("{:.1}", SEED_MEAN_MS[2][i]));
            for a in arches() {
                row.push(find(doc, "cases", case, a).map_or_else(
                    || "-".into(),
                    |p| {
                        collapsed_time(p).unwrap_or_else(|| {
                            format!(
                                "{} ± {}",
                                ms(med(p, f::TIME_MEAN_S)),
                                ms(med(p, f::TIME_SD_S))
                            )
                        })
                    },
                ));
            }
            row
        })
        .collect();
    Table {
        title: "Mean time per timed client run, beside the seed's".into(),
        headers,
        rows,
    }
}

/// The steady aggregate requests/s of all clients (the visitors and the timed
/// client's stand-in over a common window once all run).
fn agg(doc: &ResultDoc, group: &str, case: &str, arch: &str) -> Option<f64> {
    find(doc, group, case, arch).and_then(|p| median(p, f::REQUESTS_PER_S_STEADY))
}

/// [`agg`] with the interval of its median, for a plot.
fn agg_with_interval(
    doc: &ResultDoc,
    group: &str,
    case: &str,
    arch: &str,
) -> Option<(f64, Option<Interval>)> {
    let p = find(doc, group, case, arch)?;
    let interval = p
        .summary
        .get(f::REQUESTS_PER_S_STEADY)
        .and_then(Series::median_interval);
    Some((median(p, f::REQUESTS_PER_S_STEADY)?, interval))
}

/// The steady aggregate requests/s of `case` over `reference`'s, visit by visit: the
/// points' visits are interleaved, so visit `r` of both saw the same machine.
fn visit_ratios(
    doc: &ResultDoc,
    case: &str,
    reference: &str,
    arch: &str,
) -> Option<xferbench_probes::stats::Estimate> {
    let rates = |case| {
        find(doc, "cases", case, arch).map(|p| {
            p.runs
                .iter()
                .map(|r| {
                    r.figures
                        .get(f::REQUESTS_PER_S_STEADY)
                        .copied()
                        .unwrap_or(f64::NAN)
                })
                .collect::<Vec<f64>>()
        })
    };
    xferbench_probes::stats::paired_ratio(&rates(case)?, &rates(reference)?)
}

/// Steady aggregate requests/s vs visitors, per architecture and worker count, and
/// Redis; the seed's timed client (whole-process time) as a dashed reference.
pub fn throughput_chart(doc: &ResultDoc) -> LineChart {
    let mut series = Vec::new();
    for a in arches() {
        for (w, cases) in [
            (1, ["AloneSingleThread", "TwoSingleThread", "ManyClientsST"]),
            (16, ["AloneMultiThread", "TwoMultiThread", "ManyClientsMT"]),
        ] {
            let (points, intervals): (Vec<(f64, f64)>, Vec<Option<Interval>>) = cases
                .iter()
                .zip([0.0, 1.0, 16.0])
                .filter_map(|(c, v)| {
                    agg_with_interval(doc, "cases", c, a).map(|(r, i)| ((v, r), i))
                })
                .unzip();
            if !points.is_empty() {
                series.push(Series {
                    intervals,
                    label: format!("{a}, {w} worker(s)"),
                    points,
                    reference: false,
                });
            }
        }
    }
    let (redis, redis_intervals): (Vec<(f64, f64)>, Vec<Option<Interval>>) = REDIS_VISITORS
        .into_iter()
        .filter_map(|v| {
            agg_with_interval(doc, "redis", &redis_case(v), "redis")
                .map(|(r, i)| ((v as f64, r), i))
        })
        .unzip();
    if !redis.is_empty() {
        series.push(Series {
            intervals: redis_intervals,
            label: "redis (unix socket)".into(),
            points: redis,
            reference: false,
        });
    }
    // The seed reports only the timed client: 3,000 requests / mean time per run,
    // whole-process time (hyperfine -N), start-up included.
    series.push(Series {
        intervals: Vec::new(),
        label: "seed: preopt @4ce91a1, timed client only, whole-process time, 1 worker".into(),
        points: [(0.0, 0), (1.0, 1), (16.0, 4)]
            .into_iter()
            .map(|(v, i)| (v + 0.0, 3000.0 / (SEED_MEAN_MS[0][i] / 1e3)))
            .collect(),
        reference: true,
    });
    LineChart {
        title: "Steady aggregate requests/s of all clients vs background visitors".into(),
        x_label: "background visitors".into(),
        y_label: "requests/s (all clients, steady window)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Log,
        series,
    }
}

/// Mean time per run by case (1–7 in `benchmark.sh` order), per architecture, with
/// the seed's columns dashed.
pub fn time_chart(doc: &ResultDoc) -> LineChart {
    let mut series: Vec<Series> = arches()
        .iter()
        .map(|a| Series {
            intervals: Vec::new(),
            label: (*a).into(),
            points: (0..7)
                .filter_map(|i| time_of(doc, a, i).map(|t| ((i + 1) as f64, t * 1e3)))
                .collect(),
            reference: false,
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    for (k, col) in [0, 2].into_iter().map(|k| (k, SEED_COLUMNS[k])) {
        series.push(Series {
            intervals: Vec::new(),
            label: format!("seed: {col}"),
            points: (0..7)
                .map(|i| ((i + 1) as f64, SEED_MEAN_MS[k][i]))
                .collect(),
            reference: true,
        });
    }
    LineChart {
        title: "Time per timed client run (client 100 10) by case: 1 alone/1w, 2 +1/1w, \
                3 alone/16w, 4 +1/16w, 5 +16/1w, 6 +16/16w, 7 alone/32w"
            .into(),
        x_label: "case (benchmark.sh order)".into(),
        y_label: "mean time per run (ms)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Log,
        series,
    }
}

/// Writes the tables, plots and summary.
pub fn write(folder: &StudyFolder, doc: &ResultDoc) -> Result<()> {
    let group = |g: &str| -> Vec<&PointResult> {
        doc.points
            .iter()
            .filter(|p| param(p, GROUP.name()) == g)
            .collect()
    };
    for (g, title) in [
        (
            "cases",
            "The seven cases per architecture (timed client: hyperfine -N semantics)",
        ),
        ("profile", "The profile's shape: 2 workers, 4 visitors"),
        (
            "redis",
            "Redis on a Unix socket, the same mix pipelined INNER deep",
        ),
    ] {
        let pts = group(g);
        if !pts.is_empty() {
            folder.write_table_in(g, &points_table(title, &pts), points_units())?;
        }
    }
    folder.write_table("seed", &seed_table(doc))?;
    if let Some(t) = profile::table(doc) {
        folder.write_table("profile-shares", &t)?;
    }
    folder.write_plot("time-per-run", &time_chart(doc))?;
    folder.write_plot("requests-vs-visitors", &throughput_chart(doc))?;
    folder.write_text("summary.md", &summary(doc))?;
    Ok(())
}

fn ratio_text(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? / b?).filter(|v| v.is_finite())
}

/// What a figure of the study is: a median over visits, each visit warming up on its
/// own before its timed runs (the study's settings count no warm-up runs of their own).
const STATISTIC: &str = "the median over visits ({runs} per point), {order}; each visit is a \
     session of its own, as the seed's hyperfine, whose warm-up runs precede its timed runs (below); \
     intervals are order-statistic intervals of the median at the level they state";

/// `summary.md`.
pub fn summary(doc: &ResultDoc) -> String {
    let mut s = summary_header_with(doc, "Hash-table study — summary", STATISTIC);
    summary_timing(&mut s, doc);
    s.push_str("## The seed's summary, per architecture\n\n");
    summary_sentences(&mut s, doc);
    let _ = writeln!(s, "## Findings\n\n{}", section(&findings::findings(doc)));
    s.push_str("## Targets\n\n");
    summary_targets(&mut s, doc);
    redis_lines(&mut s, doc);
    summary_collapsed_and_integrity(&mut s, doc);
    profile::summary(&mut s, doc);
    s
}

/// How the timed client and the aggregate rate were measured.
fn summary_timing(s: &mut String, doc: &ResultDoc) {
    let extras = doc.study.as_ref().map(|i| &i.extras);
    if let Some(t) = extras.and_then(|e| e.get("timing")) {
        let _ = writeln!(
            s,
            "The timed client is `client {} {}` ({} requests per run) with `--seed {}`, run as a whole process \
             after {} warm-up runs (2 with 16 visitors), at least {} runs and {} s per visit; the server has {} buckets. \
             Times per run are whole-process times, as the seed's (`hyperfine -N`). Aggregate requests/s are the steady \
             rate of all clients: after the timed runs of a visit one more client stands in for the timed client, and the \
             requests the server serves over a common {} s window once all clients run, per second.\n",
            t["outer"],
            t["inner"],
            t["outer"].as_u64().unwrap_or(0) * t["inner"].as_u64().unwrap_or(0) * 3,
            t["seed"],
            t["warmup"],
            t["min_runs"],
            t["min_time_s"],
            t["buckets"],
            t["steady_s"]
        );
    }
}

/// The seed's summary sentences, per architecture, beside the seed's ratios.
fn summary_sentences(s: &mut String, doc: &ResultDoc) {
    s.push_str(
        "Each line: this run's sentence, then the seed's figure at `4ce91a1` and `main`'s.\n\n",
    );
    for a in arches() {
        let _ = writeln!(s, "**{a}**\n\n```");
        for (i, (label, ..)) in SENTENCES.iter().enumerate() {
            match sentence(doc, a, i) {
                Some((text, _)) => {
                    let _ = writeln!(
                        s,
                        "{label}: {text}   (seed {:.2}x, main {:.2}x)",
                        SEED_RATIOS[0][i], SEED_RATIOS[1][i]
                    );
                }
                None => {
                    let (_, subject, reference) = SENTENCES[i];
                    let cut = [subject, reference].into_iter().find_map(|c| {
                        find(doc, "cases", CASES[c].0, a)
                            .and_then(collapse)
                            .map(|t| format!("{} collapsed ({t})", CASES[c].1))
                    });
                    let _ = match cut {
                        Some(t) => writeln!(s, "{label}: not measured: {t}"),
                        None => writeln!(s, "{label}: not measured (a case is missing)"),
                    };
                }
            }
        }
        s.push_str("```\n\n");
    }
}

/// The targets: the collapse, sharded's throughput, the redesigns' speed-ups.
fn summary_targets(s: &mut String, doc: &ResultDoc) {
    let s4 = sentence(doc, "preopt", 3).map(|(_, x)| x);
    let _ = writeln!(
        s,
        "- **The collapse (preopt S4)**: 16 visitors make the timed client {} slower at 1 worker \
         (target ≥ 10×; the seed 52.09×).",
        s4.map_or("-".into(), |x| format!("{x:.1}×"))
    );
    for (w, alone, many) in [
        (1, "AloneSingleThread", "ManyClientsST"),
        (16, "AloneMultiThread", "ManyClientsMT"),
    ] {
        let r = ratio_text(
            agg(doc, "cases", many, "sharded"),
            agg(doc, "cases", alone, "sharded"),
        );
        let spread = visit_ratios(doc, many, alone, "sharded")
            .filter(|e| e.n >= 2)
            .map_or(String::new(), |e| {
                format!(
                    "; visit by visit {:.2}× to {:.2}× over {} interleaved visits",
                    e.min, e.max, e.n
                )
            });
        let _ = writeln!(
            s,
            "- **sharded keeps its throughput at {w} worker(s)**: the steady aggregate requests/s of all clients with 16 \
             visitors is {} of one client's alone ({} vs {} requests/s{spread}; target ≥ 0.90×).",
            r.map_or("-".into(), |x| format!("{x:.2}×")),
            rate(agg(doc, "cases", many, "sharded").unwrap_or(f64::NAN)),
            rate(agg(doc, "cases", alone, "sharded").unwrap_or(f64::NAN)),
        );
    }
    let speed = ratio_text(time_of(doc, "preopt", 0), time_of(doc, "sharded", 0));
    // The redesign's gain in the seed's own records, from one source: the origins'
    // `preopt.log` and `main`'s `postop.log`, alone at 1 worker.
    let main_gain = SEED_MEAN_MS[1][0] / SEED_MEAN_MS[2][0];
    let _ = writeln!(
        s,
        "- **sharded vs preopt, alone at 1 worker**: the timed client is {} faster (target ≥ 5×; `main` reached \
         {main_gain:.2}× over preopt in the origins' logs: {:.1} vs {:.1} ms).",
        speed.map_or("-".into(), |x| format!("{x:.1}×")),
        SEED_MEAN_MS[1][0],
        SEED_MEAN_MS[2][0]
    );
    let ring = ratio_text(time_of(doc, "preopt", 0), time_of(doc, "ring", 0));
    let _ = writeln!(
        s,
        "- **ring vs preopt, alone at 1 worker**: {} (`main`, the seed's later design, in the same logs: {main_gain:.2}×).",
        ring.map_or("-".into(), |x| format!("{x:.1}×"))
    );
}

/// The points that collapsed, and the replies checked.
fn summary_collapsed_and_integrity(s: &mut String, doc: &ResultDoc) {
    let cut: Vec<String> = doc
        .points
        .iter()
        .filter_map(|p| {
            collapse(p).map(|t| {
                format!(
                    "{} ({}, {} workers, {} visitors): {t}",
                    param(p, CASE.name()),
                    param(p, SERVER.name()),
                    param(p, WORKERS.name()),
                    param(p, VISITORS.name())
                )
            })
        })
        .collect();
    if !cut.is_empty() {
        let _ = writeln!(
            s,
            "- **Collapsed**: a timed run, or a client's stop, could not finish in its limit; the point is recorded with the work it did: {}.",
            cut.join("; ")
        );
    }
    let total: u64 = doc.points.iter().map(mismatches).sum();
    let checked: u64 = doc
        .points
        .iter()
        .map(|p| p.integrity.map_or(0, |k| k.checked))
        .sum();
    let _ = writeln!(
        s,
        "- **Integrity**: {total} mismatched replies over {checked} checked replies of the timed clients in {} points \
         (visitors' replies are checked too; a visitor's mismatch fails its point).\n",
        doc.points.len()
    );
}

fn redis_lines(s: &mut String, doc: &ResultDoc) {
    let info = doc
        .study
        .as_ref()
        .and_then(|i| i.extras.get("redis"))
        .cloned()
        .unwrap_or_default();
    if info["available"].as_bool() != Some(true) {
        let _ = writeln!(
            s,
            "- **sharded vs Redis**: skipped: {}.",
            info["reason"].as_str().unwrap_or("Redis was not measured")
        );
        return;
    }
    for (v, case) in [
        (0, "AloneSingleThread"),
        (1, "TwoSingleThread"),
        (16, "ManyClientsST"),
    ] {
        let ours = agg(doc, "cases", case, "sharded");
        let theirs = agg(doc, "redis", &redis_case(v), "redis");
        let _ = writeln!(
            s,
            "- **sharded (1 worker) vs Redis ({}), {v} visitor(s)**: {} vs {} steady requests/s of all clients: {} (target ≥ 1×).",
            info["version"].as_str().unwrap_or("redis"),
            rate(ours.unwrap_or(f64::NAN)),
            rate(theirs.unwrap_or(f64::NAN)),
            ratio_text(ours, theirs).map_or("-".into(), |x| format!("{x:.2}×"))
        );
    }
}

pub mod cases;
pub mod findings;
pub mod profile;

#[cfg(test)]
pub(crate) mod tests;
