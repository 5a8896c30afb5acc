//! The perf-stat study's folder: the seed's four tables with this machine's figures
//! beside the seed's, and `summary.md` in sentences.
//!
//! * T1 (`t1-time`): benchmark, time with A, time with B, which is faster,
//!   difference, and Welch's p-value over the interleaved runs (the seed lists B
//!   first; like every `ab` table this one lists A, the baseline, first).
//! * T2 (`t2-perf-stat-default`): `perf stat`'s default block for A of the 1 KiB
//!   benchmark.
//! * T3 (`t3-stall-events`): the seed's stall events, A vs B, and callgrind's
//!   simulated cache misses of every pair.
//! * T4 (`t4-culprit`): the stall search, ranked by B/A.
//!
//! Every diagnosis is `xferbench ab`'s ([`compare_with`]), fed with the timed
//! points' runs, callgrind's counts and `perf stat`'s, all from the document's
//! points (from its extras' `passes` in result files made before they were points).

use crate::finding::{Finding, section};
use crate::folder::{param, summary_header_with};
use crate::params::names::GROUP;
use crate::perf_stat::params::names::{BENCHMARK, PAIR, VARIANT};
use crate::perf_stat::passes::{
    BlockRow, CallgrindCount, DefaultBlock, PairEvents, Passes, SEED_STALL_EVENTS,
};
use crate::perf_stat::{callgrind, perf};
use anyhow::Result;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use xferbench_lab::ab::stalls::{self, EventComparison, ratio_text, short};
use xferbench_lab::ab::{ALPHA, AbReport, AbRun, AbSide, SAME_INSTRUCTIONS, compare_with};
use xferbench_lab::result::{PointResult, ResultDoc};
use xferbench_lab::rig::perf_stat::figures::{BENCH_CPU_S, TIME_S};
use xferbench_lab::rig::perf_stat::{callgrind as callgrind_rig, perf as perf_rig};
use xferbench_probes::stats::mean_sd;
use xferbench_report::chart::Unit;
use xferbench_report::study::{ColumnUnit, StudyFolder, Table};

/// The seed's table: benchmark, with the PR, before it, which is faster, difference.
pub const SEED_T1: [(&str, f64, f64, &str, &str); 2] = [
    (
        "circular_buffer_into_byte_buffer_1kb",
        0.05089386,
        0.041163118,
        "previous",
        "23%",
    ),
    (
        "circular_buffer_into_byte_buffer_1mb",
        0.094321349,
        0.082286637,
        "previous",
        "14%",
    ),
];

/// The seed's `perf stat` default block: event, value, perf's note.
pub const SEED_T2: [(&str, &str, &str); 12] = [
    ("task-clock", "449.96 msec", "1.001 CPUs utilized"),
    ("context-switches", "36", "0.080 K/sec"),
    ("cpu-migrations", "9", "0.020 K/sec"),
    ("page-faults", "2989", "0.007 M/sec"),
    ("cycles", "1736698259", "3.860 GHz"),
    (
        "stalled-cycles-frontend",
        "53504877",
        "3.08% frontend cycles idle",
    ),
    (
        "instructions",
        "5927885177",
        "3.41 insn per cycle, 0.01 stalled cycles per insn",
    ),
    ("branches", "1422566509", "3161.555 M/sec"),
    ("branch-misses", "375326", "0.03% of all branches"),
    ("seconds time elapsed", "0.449450377", ""),
    ("seconds user", "0.442788000", ""),
    ("seconds sys", "0.008050000", ""),
];

/// The seed's stall events on the fast (A) and slow (B) build.
pub const SEED_T3: [(&str, Option<f64>, Option<f64>); 5] = [
    ("instructions", Some(5_927_396_603.0), Some(5_927_358_294.0)),
    ("stalled-cycles-frontend", Some(64_091_849.0), None),
    (
        "uops_executed.stall_cycles",
        Some(34_307_940.0),
        Some(308_782_310.0),
    ),
    (
        "resource_stalls.any",
        Some(13_109_779.0),
        Some(14_159_547.0),
    ),
    (
        "cycle_activity.stalls_mem_any",
        Some(18_148_622.0),
        Some(288_072_686.0),
    ),
];

/// The seed's culprit.
pub const SEED_T4: (&str, f64, f64) = (
    "dsb2mite_switches.penalty_cycles",
    9_943_811.0,
    229_285_609.0,
);

/// The study's extras and its counting points (callgrind's, perf's), read back.
pub struct Extras {
    /// The passes, if recorded.
    pub passes: Option<Passes>,
    /// Callgrind's counts, from the points of group `callgrind` (results of earlier
    /// versions have them in the passes instead).
    pub callgrind: Vec<CallgrindCount>,
    /// Why planned callgrind points have no counts (their warnings).
    pub callgrind_warnings: Vec<String>,
    /// perf's default block (T2): the point of group `perf-stat` for A of the 1 KiB
    /// benchmark, or the passes of earlier versions.
    pub default_block: Option<DefaultBlock>,
    /// The seed's stall events per pair (T3): the points of group `stalls`, or the
    /// passes.
    pub stall_events: Vec<PairEvents>,
    /// The stall search per pair, ranked (T4): the points of group `search`, or the
    /// passes.
    pub search: Vec<PairEvents>,
    /// Why planned perf points have no counts, or lack events, by group.
    pub perf_warnings: BTreeMap<&'static str, Vec<String>>,
    /// Rerun commands.
    pub rerun: Vec<String>,
    /// Ran in a container.
    pub container: bool,
}

fn in_group<'a>(doc: &'a ResultDoc, group: &str) -> Vec<&'a PointResult> {
    doc.points
        .iter()
        .filter(|p| p.params.get(GROUP).map(String::as_str) == Some(group))
        .collect()
}

/// The warnings of `points` that start with one of `kinds`, each once.
fn warnings_of(points: &[&PointResult], kinds: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in points.iter().flat_map(|p| &p.warnings) {
        if kinds.iter().any(|k| w.starts_with(k)) && !out.contains(w) {
            out.push(w.clone());
        }
    }
    out
}

/// perf's rows of every run of `p` (runs without counts left out).
fn perf_runs(p: &PointResult) -> Vec<Vec<xferbench_probes::counters::perf_stat::PerfStatRow>> {
    p.runs
        .iter()
        .map(perf_rig::rows_of)
        .filter(|r| !r.is_empty())
        .collect()
}

/// The default block of the group's point for A of the 1 KiB benchmark.
fn default_block_of(points: &[&PointResult]) -> Option<DefaultBlock> {
    let bench = xferbench_lab::workload::perf_stat::Benchmark::CircularBuffer1Kb.name();
    let p = points
        .iter()
        .find(|p| param(p, BENCHMARK) == bench && param(p, VARIANT) == "a")?;
    let run = p.runs.first()?;
    let rows = perf_rig::rows_of(run);
    if rows.is_empty() {
        return None;
    }
    let figure = |k: &str| run.figures.get(k).copied().unwrap_or(0.0);
    Some(DefaultBlock {
        benchmark: bench.into(),
        variant: "a".into(),
        rows: rows.iter().map(BlockRow::of).collect(),
        elapsed_s: figure(perf_rig::ELAPSED_S),
        user_s: figure(perf_rig::USER_S),
        sys_s: figure(perf_rig::SYS_S),
    })
}

/// Every pair of the group's points, A vs B over their runs: the events in the
/// order of `order` (then by name), ranked by B/A with `ranked`.
fn pair_events_of(points: &[&PointResult], order: &[&str], ranked: bool) -> Vec<PairEvents> {
    let mut out = Vec::new();
    for a in points.iter().filter(|p| param(p, VARIANT) == "a") {
        let bench = param(a, BENCHMARK);
        let Some(b) = points
            .iter()
            .find(|p| param(p, BENCHMARK) == bench && param(p, VARIANT) == "b")
        else {
            continue;
        };
        let (ra, rb) = (perf_runs(a), perf_runs(b));
        if ra.is_empty() || rb.is_empty() {
            continue;
        }
        let mut events: Vec<String> = Vec::new();
        for r in ra.iter().chain(&rb).flatten() {
            if !events.contains(&r.event) {
                events.push(r.event.clone());
            }
        }
        let place = |e: &String| {
            order
                .iter()
                .position(|o| *o == e.as_str())
                .unwrap_or(order.len())
        };
        events.sort_by(|x, y| place(x).cmp(&place(y)).then(x.cmp(y)));
        let mut rows = stalls::compare_rows(&events, &ra, &rb);
        if ranked {
            stalls::rank(&mut rows);
        }
        let unknown = warnings_of(&[*a, *b], &[perf_rig::UNKNOWN])
            .first()
            .and_then(|w| w.strip_prefix(perf_rig::UNKNOWN))
            .map(|l| {
                l.trim_start_matches(": ")
                    .split(", ")
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        out.push(PairEvents {
            benchmark: bench.to_string(),
            comparison: EventComparison {
                rounds: ra.len().min(rb.len()),
                rows,
                unknown,
            },
        });
    }
    out
}

impl Extras {
    /// Reads the extras of a perf-stat document (missing parts are `None`/empty).
    pub fn of(doc: &ResultDoc) -> Extras {
        let ex = doc.study.as_ref().map(|s| &s.extras);
        let get = |k: &str| ex.and_then(|e| e.get(k)).cloned();
        let passes: Option<Passes> = get("passes").and_then(|v| serde_json::from_value(v).ok());
        let points = in_group(doc, callgrind::GROUP);
        let callgrind_warnings = warnings_of(&points, &[callgrind_rig::NOT_COUNTED]);
        let block = in_group(doc, perf::DEFAULT_BLOCK);
        let stall = in_group(doc, perf::STALLS);
        let search = in_group(doc, perf::SEARCH);
        let mut stall_events = pair_events_of(&stall, &SEED_STALL_EVENTS, false);
        if stall_events.is_empty() {
            stall_events = passes
                .as_ref()
                .and_then(|p| p.stall_events.value.clone())
                .unwrap_or_default();
        }
        let mut searched = pair_events_of(&search, &[], true);
        if searched.is_empty() {
            searched = passes
                .as_ref()
                .and_then(|p| p.search.value.clone())
                .unwrap_or_default();
        }
        let why = [perf_rig::NOT_COUNTED, perf_rig::UNKNOWN];
        Extras {
            callgrind: points
                .iter()
                .copied()
                .filter_map(callgrind::count_of)
                .filter(|c| !c.per_run.is_empty())
                .collect(),
            callgrind_warnings,
            default_block: default_block_of(&block)
                .or_else(|| passes.as_ref().and_then(|p| p.default_block.value.clone())),
            stall_events,
            search: searched,
            perf_warnings: BTreeMap::from([
                ("default", warnings_of(&block, &[perf_rig::NOT_COUNTED])),
                ("stalls", warnings_of(&stall, &why)),
                ("search", warnings_of(&search, &why)),
            ]),
            passes,
            rerun: get("rerun")
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default(),
            container: get("container").and_then(|v| v.as_bool()).unwrap_or(false),
        }
    }

    fn callgrind(&self, bench: &str, variant: &str) -> Option<&CallgrindCount> {
        let recorded = if self.callgrind.is_empty() {
            self.passes.as_ref()?.callgrind.value.as_ref()?
        } else {
            &self.callgrind
        };
        recorded
            .iter()
            .find(|c| c.benchmark == bench && c.variant == variant)
    }

    fn pair_events<'a>(&'a self, which: &str, bench: &str) -> Option<&'a EventComparison> {
        let pass = if which == "search" {
            &self.search
        } else {
            &self.stall_events
        };
        pass.iter()
            .find(|e| e.benchmark == bench)
            .map(|e| &e.comparison)
    }

    fn reason(&self, which: &str) -> String {
        let Some(p) = &self.passes else {
            return "the passes were not recorded".into();
        };
        let warned = |w: &[String]| (!w.is_empty()).then(|| w.join("; "));
        let perf = |w: &str| self.perf_warnings.get(w).and_then(|w| warned(w));
        match which {
            "callgrind" => p
                .callgrind
                .reason
                .clone()
                .or_else(|| warned(&self.callgrind_warnings)),
            "default" => p.default_block.reason.clone().or_else(|| perf("default")),
            "stalls" => p.stall_events.reason.clone().or_else(|| perf("stalls")),
            _ => p.search.reason.clone().or_else(|| perf("search")),
        }
        .unwrap_or_default()
    }
}

/// One pair, A against B, as `xferbench ab` would judge it.
pub struct Pair<'a> {
    /// The benchmark.
    pub benchmark: String,
    /// `alignment` or `memory`.
    pub pair: String,
    /// A's point.
    pub a: &'a PointResult,
    /// B's point.
    pub b: &'a PointResult,
    /// The comparison.
    pub report: AbReport,
}

fn side(p: &PointResult, callgrind: Option<&CallgrindCount>) -> AbSide {
    let runs: Vec<AbRun> = p
        .runs
        .iter()
        .map(|r| {
            let timed = r.messages.max(1) as f64;
            let cpu = r.figures.get(BENCH_CPU_S).copied().unwrap_or(0.0) / timed;
            let (user, sys) = r
                .cpu
                .first()
                .map_or((cpu, 0.0), |c| (c.user_s / timed, c.sys_s / timed));
            AbRun {
                wall_s: r.figures.get(TIME_S).copied().unwrap_or(0.0),
                cpu_s: cpu,
                user_s: user,
                sys_s: sys,
                counters: BTreeMap::new(),
            }
        })
        .collect();
    let walls: Vec<f64> = runs.iter().map(|r| r.wall_s).collect();
    let (mean_s, sd_s) = mean_sd(&walls).unwrap_or((walls.first().copied().unwrap_or(0.0), 0.0));
    let n = runs.len().max(1) as f64;
    let mean = |f: fn(&AbRun) -> f64| runs.iter().map(f).sum::<f64>() / n;
    AbSide {
        command: format!("{} {}", param(p, "benchmark"), param(p, "variant")),
        mean_s,
        sd_s,
        cv: if mean_s > 0.0 { sd_s / mean_s } else { 0.0 },
        cpus_utilised: if mean_s > 0.0 {
            mean(|r| r.cpu_s) / mean_s
        } else {
            0.0
        },
        user_s: mean(|r| r.user_s),
        sys_s: mean(|r| r.sys_s),
        counters: BTreeMap::new(),
        callgrind: callgrind.map(|c| c.per_run.clone()),
        instruction_runs: Vec::new(),
        runs,
    }
}

/// The pairs of the document, in plan order.
pub fn pairs<'a>(doc: &'a ResultDoc, ex: &Extras) -> Vec<Pair<'a>> {
    let mut out = Vec::new();
    // The timed points: those of no group (callgrind's points have one).
    let timed = |p: &&PointResult| !p.params.contains_key(GROUP);
    for a in doc
        .points
        .iter()
        .filter(timed)
        .filter(|p| param(p, VARIANT) == "a")
    {
        let bench = param(a, BENCHMARK).to_string();
        let Some(b) = doc
            .points
            .iter()
            .filter(timed)
            .find(|p| p.params.get(BENCHMARK) == Some(&bench) && param(p, VARIANT) == "b")
        else {
            continue;
        };
        let report = compare_with(
            side(a, ex.callgrind(&bench, "a")),
            side(b, ex.callgrind(&bench, "b")),
            0.05,
            Vec::new(),
            ex.pair_events("stalls", &bench).cloned(),
            ex.pair_events("search", &bench).cloned(),
        );
        out.push(Pair {
            pair: a.params.get(PAIR).cloned().unwrap_or_default(),
            benchmark: bench,
            a,
            b,
            report,
        });
    }
    out
}

/// The diagnosis as the study words it: "no significant difference on this CPU"
/// when the times do not differ significantly.
pub fn verdict(r: &AbReport) -> String {
    if r.verdict.significant {
        r.verdict.diagnosis.clone()
    } else {
        format!(
            "no significant difference on this CPU (p = {:.3})",
            r.verdict.p_value
        )
    }
}

fn secs(v: f64) -> String {
    format!("{v:.6}")
}

fn faster(r: &AbReport) -> String {
    match r.verdict.faster.as_str() {
        "A" => "previous (A)".into(),
        "B" => "B".into(),
        _ => "neither (no significant difference)".into(),
    }
}

/// T1: the two-row table (and the memory pair), beside the seed's.
pub fn t1(pairs: &[Pair<'_>]) -> Table {
    let headers = [
        "benchmark",
        "time with A (s)",
        "time with B (s)",
        "which is faster",
        "difference",
        "p (Welch)",
        "runs",
        "seed: before PR (s)",
        "seed: with PR (s)",
        "seed: which is faster",
        "seed: difference",
    ];
    let rows = pairs
        .iter()
        .map(|p| {
            let r = &p.report;
            let seed = SEED_T1.iter().find(|s| s.0 == p.benchmark);
            vec![
                p.benchmark.clone(),
                format!("{} ± {}", secs(r.a.mean_s), secs(r.a.sd_s)),
                format!("{} ± {}", secs(r.b.mean_s), secs(r.b.sd_s)),
                faster(r),
                format!("{:+.1}%", r.verdict.difference * 100.0),
                format!("{:.4}", r.verdict.p_value),
                r.a.runs.len().min(r.b.runs.len()).to_string(),
                seed.map_or("-".into(), |s| s.2.to_string()),
                seed.map_or("-".into(), |s| s.1.to_string()),
                seed.map_or("-".into(), |s| s.3.to_string()),
                seed.map_or("-".into(), |s| s.4.to_string()),
            ]
        })
        .collect();
    Table {
        title: "T1. Run time, A (before) vs B (the change), mean ± sd of the interleaved runs"
            .into(),
        headers: headers.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

/// T2: `perf stat`'s default block for A of the 1 KiB benchmark, beside the seed's.
pub fn t2(ex: &Extras) -> Table {
    let block = ex.default_block.as_ref();
    let mut rows = Vec::new();
    for (event, seed_v, seed_note) in SEED_T2 {
        let (v, note) = match (block, event) {
            (None, _) => ("-".to_string(), String::new()),
            (Some(b), "seconds time elapsed") => (format!("{:.9}", b.elapsed_s), String::new()),
            (Some(b), "seconds user") => (format!("{:.9}", b.user_s), String::new()),
            (Some(b), "seconds sys") => (format!("{:.9}", b.sys_s), String::new()),
            (Some(b), _) => match b
                .rows
                .iter()
                .find(|r| r.event == event || r.event.ends_with(&format!("/{event}/")))
            {
                None => ("not in perf's default set here".into(), String::new()),
                Some(r) => (
                    r.value.map_or_else(
                        || format!("<{}>", r.status),
                        |v| {
                            if r.unit.is_empty() {
                                format!("{v:.0}")
                            } else {
                                format!("{v:.2} {}", r.unit)
                            }
                        },
                    ),
                    r.metrics
                        .iter()
                        .map(|(v, u)| format!("{v} {u}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            },
        };
        rows.push(vec![
            event.to_string(),
            v,
            note,
            seed_v.to_string(),
            seed_note.to_string(),
        ]);
    }
    if block.is_none() {
        rows.push(vec![
            "(empty)".into(),
            ex.reason("default"),
            String::new(),
            String::new(),
            String::new(),
        ]);
    }
    Table {
        title: "T2. `perf stat` default block, A of circular_buffer_into_byte_buffer_1kb (the seed's harness: 1 + 10 runs; user and sys include perf's own)".into(),
        headers: ["counter", "this machine", "perf's note", "seed", "seed's note"].iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

fn count(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.0}"))
}

/// T3: the seed's stall events A vs B (PMU), then callgrind's simulated misses.
pub fn t3(pairs: &[Pair<'_>], ex: &Extras) -> Table {
    let mut rows = Vec::new();
    let mut any = false;
    for p in pairs {
        if let Some(c) = ex.pair_events("stalls", &p.benchmark) {
            for r in &c.rows {
                any = true;
                let seed = SEED_T3
                    .iter()
                    .find(|s| s.0 == r.event && p.pair == "alignment");
                rows.push(vec![
                    p.benchmark.clone(),
                    r.event.clone(),
                    r.a.map_or_else(|| r.status.clone(), |v| format!("{v:.0}")),
                    r.b.map_or_else(|| r.status.clone(), |v| format!("{v:.0}")),
                    r.ratio.map_or("-".into(), ratio_text),
                    seed.map_or("-".into(), |s| count(s.1)),
                    seed.map_or("-".into(), |s| count(s.2)),
                    seed.and_then(|s| Some(ratio_text(s.2? / s.1?)))
                        .unwrap_or("-".into()),
                ]);
            }
        }
    }
    if !any {
        rows.push(vec![
            "(no PMU events)".into(),
            ex.reason("stalls"),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ]);
        for (e, a, b) in SEED_T3 {
            rows.push(vec![
                "seed: circular_buffer_into_byte_buffer_1kb".into(),
                e.into(),
                "-".into(),
                "-".into(),
                "-".into(),
                count(a),
                count(b),
                a.zip(b).map_or("-".into(), |(a, b)| ratio_text(b / a)),
            ]);
        }
    }
    for p in pairs {
        let (Some(ca), Some(cb)) = (&p.report.a.callgrind, &p.report.b.callgrind) else {
            continue;
        };
        for k in ["Ir", "D1mr", "D1mw", "DLmr", "DLmw", "I1mr", "ILmr"] {
            let (a, b) = (ca.get(k).copied(), cb.get(k).copied());
            rows.push(vec![
                p.benchmark.clone(),
                format!("{k} (callgrind, simulated)"),
                count(a),
                count(b),
                a.zip(b)
                    .filter(|(a, _)| *a > 0.0)
                    .map_or("-".into(), |(a, b)| ratio_text(b / a)),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
        }
    }
    Table {
        title: "T3. Stall events, A vs B (counts per run of the seed's harness; callgrind per timed run)".into(),
        headers: ["benchmark", "event", "A", "B", "B/A", "seed: fast", "seed: slow", "seed: B/A"]
            .iter()
            .map(|h| h.to_string())
            .collect(),
        rows,
    }
}

/// T4: the stall search's ranking (ten events per pair), beside the seed's culprit.
pub fn t4(pairs: &[Pair<'_>], ex: &Extras) -> Table {
    let mut rows = Vec::new();
    for p in pairs {
        if let Some(c) = ex.pair_events("search", &p.benchmark) {
            for (i, r) in c.rows.iter().take(10).enumerate() {
                rows.push(vec![
                    p.benchmark.clone(),
                    (i + 1).to_string(),
                    r.event.clone(),
                    r.a.map_or_else(|| r.status.clone(), short),
                    r.b.map_or_else(|| r.status.clone(), short),
                    r.ratio.map_or("-".into(), ratio_text),
                    r.running_pct.map_or("-".into(), |p| format!("{p:.0} %")),
                    r.cause.clone(),
                ]);
            }
        }
    }
    if rows.is_empty() {
        rows.push(vec![
            "(no search)".into(),
            "-".into(),
            ex.reason("search"),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ]);
    }
    let (e, a, b) = SEED_T4;
    rows.push(vec![
        "seed: circular_buffer_into_byte_buffer_1kb".into(),
        "1".into(),
        e.into(),
        short(a),
        short(b),
        ratio_text(b / a),
        "-".into(),
        xferbench_lab::ab::stalls::cause_of(e).explanation.into(),
    ]);
    Table {
        title: "T4. The culprit: every stall|penalty|miss event of `perf list`, ranked by B/A"
            .into(),
        headers: [
            "benchmark",
            "rank",
            "event",
            "A",
            "B",
            "B/A",
            "counted",
            "likely cause",
        ]
        .iter()
        .map(|h| h.to_string())
        .collect(),
        rows,
    }
}

/// Writes the tables and `summary.md`.
pub fn write(folder: &StudyFolder, doc: &ResultDoc) -> Result<()> {
    let ex = Extras::of(doc);
    let pairs = pairs(doc, &ex);
    let seconds = [
        "time with A (s)",
        "time with B (s)",
        "seed: before PR (s)",
        "seed: with PR (s)",
    ]
    .map(|c| ColumnUnit::new(c, Unit::Seconds))
    .to_vec();
    folder.write_table_in("t1-time", &t1(&pairs), seconds)?;
    folder.write_table("t2-perf-stat-default", &t2(&ex))?;
    folder.write_table("t3-stall-events", &t3(&pairs, &ex))?;
    folder.write_table("t4-culprit", &t4(&pairs, &ex))?;
    folder.write_text("summary.md", &summary(doc, &ex, &pairs))?;
    Ok(())
}

fn instructions_sentence(p: &Pair<'_>) -> Option<String> {
    let (ia, src) = p.report.a.instructions()?;
    let (ib, _) = p.report.b.instructions()?;
    let d = ib / ia - 1.0;
    let same = d.abs() <= SAME_INSTRUCTIONS;
    Some(format!(
        "{src} counts {} instructions per timed run for A and {} for B ({:+.4} %: {})",
        short(ia),
        short(ib),
        d * 100.0,
        if same {
            "the same, within 0.01 %"
        } else {
            "different"
        }
    ))
}

/// A stall event "rose about an order of magnitude" when B's count is at least this
/// many times A's.
pub const STALL_RISE: f64 = 5.0;

/// An event "stayed the same" when B's count is within this fraction of A's.
pub const STALL_SAME: f64 = 0.25;

/// Why this machine cannot count stall events, if it cannot.
fn no_pmu(doc: &ResultDoc) -> Option<String> {
    (!doc.context.capabilities.pmu).then(|| {
        "this machine has no hardware PMU, so no stall counter was counted (see \"Not measured \
         here, and why\"); the study on bare metal counts them"
            .to_string()
    })
}

/// B's instructions against A's, `(B ÷ A − 1, source)`, when counted.
fn instructions_change(p: &Pair<'_>) -> Option<(f64, &'static str)> {
    let (ia, src) = p.report.a.instructions()?;
    let (ib, _) = p.report.b.instructions()?;
    Some((ib / ia - 1.0, src))
}

/// Our time and instruction figures of a pair, for a finding.
fn pair_figures(p: &Pair<'_>, d: Option<(f64, &'static str)>) -> String {
    let r = &p.report;
    format!(
        "`{}`: B {:.6} s vs A {:.6} s ({:+.1} %, p = {:.4}); instructions {}",
        p.benchmark,
        r.b.mean_s,
        r.a.mean_s,
        r.verdict.difference * 100.0,
        r.verdict.p_value,
        d.map_or("not counted".into(), |(d, src)| format!(
            "{:+.4} % ({src})",
            d * 100.0
        ))
    )
}

/// "Slower with the same instructions", for an alignment pair with the seed's row.
pub fn same_instructions_finding(p: &Pair<'_>) -> Option<Finding> {
    let seed = SEED_T1.iter().find(|x| x.0 == p.benchmark)?;
    let statement = format!(
        "`{}` ran {} slower with the same instructions ({} s with the PR vs {} s before).",
        seed.0, seed.4, seed.1, seed.2
    );
    let d = instructions_change(p);
    let figures = format!(
        "{} (condition: B slower with p < {ALPHA} and instructions within {} %)",
        pair_figures(p, d),
        SAME_INSTRUCTIONS * 100.0
    );
    let r = &p.report;
    Some(match d {
        Some((d, _)) => Finding::judged(
            statement,
            figures,
            r.verdict.significant && r.verdict.difference > 0.0 && d.abs() <= SAME_INSTRUCTIONS,
        ),
        None => Finding::cannot(
            statement,
            figures,
            "neither the PMU nor callgrind counted the instructions here",
        ),
    })
}

/// "Fewer instructions can be slower", for the memory pair.
pub fn fewer_instructions_finding(p: &Pair<'_>) -> Finding {
    let statement = "\"it is in theory possible to reduce the number of instructions but make \
                     performance actually worse\", trading arithmetic for memory accesses.";
    let d = instructions_change(p);
    let figures = format!(
        "{} (condition: B runs more than {} % fewer instructions and is slower with p < {ALPHA})",
        pair_figures(p, d),
        SAME_INSTRUCTIONS * 100.0
    );
    let r = &p.report;
    match d {
        Some((d, _)) => Finding::judged(
            statement,
            figures,
            d < -SAME_INSTRUCTIONS && r.verdict.significant && r.verdict.difference > 0.0,
        ),
        None => Finding::cannot(
            statement,
            figures,
            "neither the PMU nor callgrind counted the instructions here",
        ),
    }
}

/// The ratio B ÷ A of `event` in a comparison, when both were counted.
fn event_ratio(c: &EventComparison, event: &str) -> Option<f64> {
    c.rows.iter().find(|r| r.event == event)?.ratio
}

/// The seed's stall events on the 1 KiB pair: two up about an order of magnitude,
/// `resource_stalls.any` the same.
pub fn stall_events_finding(doc: &ResultDoc, ex: &Extras) -> Finding {
    let seed_of = |e: &str| {
        SEED_T3
            .iter()
            .find(|r| r.0 == e)
            .and_then(|r| Some(r.2? / r.1?))
            .unwrap_or(f64::NAN)
    };
    let (up, same) = (
        [
            "uops_executed.stall_cycles",
            "cycle_activity.stalls_mem_any",
        ],
        "resource_stalls.any",
    );
    let statement = format!(
        "with the same instructions, `{}` and `{}` are \"about an order of magnitude higher for \
         the slow case\" ({:.1}× and {:.1}×), `{same}` \"pretty much the same\" ({:.2}×).",
        up[0],
        up[1],
        seed_of(up[0]),
        seed_of(up[1]),
        seed_of(same)
    );
    let bench = SEED_T1[0].0;
    let c = ex.pair_events("stalls", bench).filter(|c| c.any_counted());
    let ratios = c.map(|c| (up.map(|e| event_ratio(c, e)), event_ratio(c, same)));
    match (no_pmu(doc), ratios) {
        (Some(why), _) => Finding::cannot(statement, "no stall event counted", why),
        (None, Some(([Some(a), Some(b)], Some(r)))) => Finding::judged(
            statement,
            format!(
                "`{bench}`, B ÷ A: {:.2}× and {:.2}×, `{same}` {:.2}× (condition: both at least \
                 {STALL_RISE}×, `{same}` within {:.0} %)",
                a,
                b,
                r,
                STALL_SAME * 100.0
            ),
            a >= STALL_RISE && b >= STALL_RISE && (r - 1.0).abs() <= STALL_SAME,
        ),
        (None, _) => Finding::cannot(
            statement,
            format!("`{bench}`: the events were not all counted"),
            "this CPU's PMU does not count these Intel events (perf names them unknown or \
             <not supported>)",
        ),
    }
}

/// The seed's culprit: the search's top event on the 1 KiB pair.
pub fn culprit_finding(doc: &ResultDoc, ex: &Extras) -> Finding {
    let statement = format!(
        "the search through `perf list` finds `{}` up {:.0}× ({} → {}): code alignment.",
        SEED_T4.0,
        SEED_T4.2 / SEED_T4.1,
        SEED_T4.1,
        SEED_T4.2
    );
    let bench = SEED_T1[0].0;
    let top = ex
        .pair_events("search", bench)
        .and_then(|c| c.top())
        .and_then(|t| Some((t.event.clone(), t.ratio?)));
    match (no_pmu(doc), top) {
        (Some(why), _) => Finding::cannot(statement, "no stall event counted", why),
        (None, Some((event, ratio))) => Finding::judged(
            statement,
            format!(
                "`{bench}`: the top event is `{event}`, {ratio:.1}× (condition: the top event is \
                 `{}` and at least {STALL_RISE}×)",
                SEED_T4.0
            ),
            event == SEED_T4.0 && ratio >= STALL_RISE,
        ),
        (None, None) => Finding::cannot(
            statement,
            format!("`{bench}`: the search ranked no event"),
            "no stall or penalty event was counted on this CPU",
        ),
    }
}

/// The seed's findings, each computed on this run's figures.
pub fn findings(doc: &ResultDoc, ex: &Extras, pairs: &[Pair<'_>]) -> Vec<Finding> {
    let mut out: Vec<Finding> = pairs
        .iter()
        .filter(|p| p.pair == "alignment")
        .filter_map(same_instructions_finding)
        .collect();
    out.push(stall_events_finding(doc, ex));
    out.push(culprit_finding(doc, ex));
    out.extend(
        pairs
            .iter()
            .filter(|p| p.pair == "memory")
            .map(fewer_instructions_finding),
    );
    out
}

/// `summary.md`: what was found, what could not be measured and why, and how to rerun.
pub fn summary(doc: &ResultDoc, ex: &Extras, pairs: &[Pair<'_>]) -> String {
    let mut s = summary_header_with(
        doc,
        "perf-stat: same instructions, slower",
        "the mean ± sd of {runs} measured run(s) per point after {warmup} warm-up run(s), {order}, as the \
         seed's harness reports it (the tables say the same)",
    );
    let _ = writeln!(
        s,
        "The seed (swift-nio's `NIOPerformanceTester`) saw `circular_buffer_into_byte_buffer_1kb` 23 % and `_1mb` 14 % slower \
         with the same instructions (5,927,396,603 vs 5,927,358,294) and found `dsb2mite_switches.penalty_cycles` up 23×: \
         the hot loop's code alignment had changed. Here A and B are the same copy loop placed at two alignments, and \
         `list_walk_512k_nodes` is a portable pair in which B runs fewer instructions but misses the cache. \
         One run is one process of the seed's harness (one warm-up, ten timed runs); its time is the mean of the ten; \
         p-values are Welch's t-test over the runs, significant below {ALPHA}.\n"
    );
    let _ = writeln!(s, "## Findings\n\n{}", section(&findings(doc, ex, pairs)));
    let _ = writeln!(s, "## Found on this machine\n");
    for p in pairs {
        let r = &p.report;
        let _ = write!(
            s,
            "- **{}** ({} pair): B {:.6} s vs A {:.6} s ({:+.1} %, p = {:.4}): {}.",
            p.benchmark,
            p.pair,
            r.b.mean_s,
            r.a.mean_s,
            r.verdict.difference * 100.0,
            r.verdict.p_value,
            verdict(r)
        );
        if let Some(i) = instructions_sentence(p) {
            let _ = write!(s, " {i}.");
        }
        if let Some(seed) = SEED_T1.iter().find(|x| x.0 == p.benchmark) {
            let _ = write!(
                s,
                " The seed: {} s with the PR vs {} s before ({}).",
                seed.1, seed.2, seed.4
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s);
    if let Some(c) = ex.callgrind("circular_buffer_into_byte_buffer_1kb", "a") {
        let _ = writeln!(
            s,
            "Callgrind ran each build once with reduced iterations (for example {} of the 1 KiB benchmark's {} per run, no warm-up) \
             and its counts are scaled to one timed run (×{}); its cache is a simulation of this machine's cache sizes, without \
             prefetching, and it does not model the DSB/MITE front end.\n",
            c.iterations,
            (c.iterations as f64 * c.scale).round(),
            c.scale
        );
    }
    let _ = writeln!(s, "## Not measured here, and why\n");
    let caps = &doc.context.capabilities;
    let mut missing = Vec::new();
    if !caps.pmu {
        missing.push(format!(
            "No hardware counters: {}.",
            caps.pmu_note
                .as_deref()
                .unwrap_or("no hardware PMU answers perf_event_open")
        ));
    }
    if let Some(p) = caps.perf_event_paranoid
        && p > 2
    {
        missing.push(format!(
            "kernel.perf_event_paranoid is {p}: even software counters need it at 2 or lower (`sudo sysctl kernel.perf_event_paranoid=1`)."
        ));
    }
    if ex.container {
        missing.push("This ran in a container: perf_event_open may be blocked by its seccomp profile (run with `--privileged` or `--cap-add PERFMON`).".into());
    }
    for (label, key) in [
        ("T2 (perf's default block)", "default"),
        ("T3 (stall events)", "stalls"),
        ("T4 (stall search)", "search"),
        ("Callgrind", "callgrind"),
    ] {
        let r = ex.reason(key);
        if !r.is_empty() {
            missing.push(format!("{label}: {r}."));
        }
    }
    if missing.is_empty() {
        let _ = writeln!(s, "Everything was measured.\n");
    }
    for m in &missing {
        let _ = writeln!(s, "- {m}");
    }
    if !missing.is_empty() {
        let _ = writeln!(
            s,
            "\nSo a difference with the same instructions cannot be attributed to a stall kind here; a difference with \
             fewer instructions is attributed from callgrind's simulated cache misses.\n"
        );
    }
    let _ = writeln!(s, "## Rerun on bare metal (with a PMU)\n");
    for c in &ex.rerun {
        let _ = writeln!(s, "    {c}");
    }
    s
}

#[cfg(test)]
mod tests;
