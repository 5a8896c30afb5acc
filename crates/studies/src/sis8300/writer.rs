//! The SIS8300 study folder: `results.json`; one table per test of the seed, each
//! with the seed's figures beside ours (`test1` per-board speed, `test2` sizes,
//! `test3` conversions against memcpy, `test4` CPU polling vs interrupt); plots of
//! per-board speed against boards, conversion speed per function and CPU % against
//! size, the seed's series dashed; and `summary.md`, the seed's findings one by one
//! with whether each holds here.
//!
//! Everything is read from the [`ResultDoc`] (parameters and figures of
//! [`crate::sis8300`] and [`xferbench_lab::rig::daq`]); cells are
//! medians over runs, per-board figures the median of each board's row.

use super::seed;
use crate::folder::{median, param, select, summary_header};
use crate::params::names::GROUP;
use anyhow::Result;
use std::fmt::Write as _;
use xferbench_lab::result::{PointResult, ResultDoc, figure};
use xferbench_lab::rig::daq::{
    CPU_PERCENT, ENGINE_CPU_PERCENT, HOST_CPU_NS_PER_BYTE, MISMATCHES, READOUT_CPU_NS_PER_BYTE,
    TOP_CPU_PERCENT, WAIT_CPU_PERCENT, WORK_CPU_PERCENT, board_figure, func_figure,
};
use xferbench_lab::workload::daq::names::{
    ACCESS, BOARDS, DAQ, FACTOR, FUNC, KERNELS, LINKS, SAMPLES,
};
use xferbench_report::chart::Unit;
use xferbench_report::plot::{LineChart, Scale, Series};
use xferbench_report::study::{ColumnUnit, StudyFolder, Table};

fn f1(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "–".into()
    }
}

fn boards(p: &PointResult) -> usize {
    param(p, BOARDS).parse().unwrap_or(0)
}

fn samples(p: &PointResult) -> usize {
    param(p, SAMPLES).parse().unwrap_or(0)
}

/// Per-board medians of a function's row speed, MB/s, in board order.
fn per_board(p: &PointResult, func: &str) -> Vec<f64> {
    (0..boards(p))
        .filter_map(|i| median(p, &func_figure(func, &format!("mb_s_board{i}"))))
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    xferbench_probes::stats::mean(v).unwrap_or(f64::NAN)
}

fn range(v: &[f64]) -> String {
    let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if v.is_empty() {
        "–".into()
    } else if (hi - lo) < 0.05 {
        f1(lo)
    } else {
        format!("{}–{}", f1(lo), f1(hi))
    }
}

fn agg_mb_s(p: &PointResult) -> f64 {
    median(p, figure::THROUGHPUT).map_or(f64::NAN, |b| b / 1e6)
}

fn point<'a>(doc: &'a ResultDoc, filter: &[(&str, &str)]) -> Option<&'a PointResult> {
    doc.points.iter().find(|p| {
        filter
            .iter()
            .all(|(k, v)| p.params.get(*k).map(String::as_str) == Some(*v))
    })
}

/// Test 1: per-board speed with 1, 5 and 6 boards.
pub fn test1_table(doc: &ResultDoc) -> Table {
    let mut t = Table {
        title: "Test 1: PCIe transfer speed, 60 MB × 30 reads per board (MB/s)".into(),
        headers: [
            "boards",
            "access",
            "per board",
            "seed per board",
            "aggregate (common window)",
            "seed aggregate",
            "host CPU ns/B",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    for p in select(doc, &[(GROUP, "test1")]) {
        let links = param(p, LINKS);
        let v = per_board(p, "func_readout");
        let ours = if links == "ku+5l2" && v.len() > 1 {
            format!("KU {}; L2 {}", f1(v[0]), range(&v[1..]))
        } else {
            range(&v)
        };
        let s = seed::TEST1.iter().find(|r| r.0 == links);
        t.rows.push(vec![
            format!("{} ({links})", boards(p)),
            param(p, ACCESS).into(),
            ours,
            s.map_or("–".into(), |r| r.1.into()),
            f1(agg_mb_s(p)),
            s.map_or("–".into(), |r| f1(r.3)),
            median(p, HOST_CPU_NS_PER_BYTE).map_or("–".into(), |x| format!("{x:.3}")),
        ]);
    }
    t
}

/// Test 2: three sizes on five boards.
pub fn test2_table(doc: &ResultDoc) -> Table {
    let mut t = Table {
        title: "Test 2: transfer time vs size, 5 L2 boards, 30 reads".into(),
        headers: [
            "size [MB]",
            "access",
            "dur [ms]",
            "seed dur [ms]",
            "per board [MB/s]",
            "seed per board [MB/s]",
            "aggregate [MB/s]",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    for p in select(doc, &[(GROUP, "test2")]) {
        let n = samples(p);
        let v = per_board(p, "func_readout");
        let mb = n as f64 * 2.0 / 1e6;
        let durs: Vec<f64> = v.iter().map(|s| mb / s * 1e3).collect();
        let s = seed::TEST2.iter().find(|r| r.0 == n);
        t.rows.push(vec![
            format!("{mb:.2}"),
            param(p, ACCESS).into(),
            range(&durs),
            s.map_or("–".into(), |r| r.1.into()),
            range(&v),
            s.map_or("–".into(), |r| r.2.into()),
            f1(agg_mb_s(p)),
        ]);
    }
    t
}

/// The conversion cases of test 3 in plan order: `(func, factor)`.
fn test3_cases(doc: &ResultDoc) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for p in select(doc, &[(GROUP, "test3")]) {
        let c = (param(p, FUNC).to_string(), param(p, FACTOR).to_string());
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Per run: the mean per-board speed of `func` over the mean per-board speed of the
/// memcpy row `memcpy` (`memcpy`: the same input bytes; `memcpy_moved`: the same
/// bytes read and written, at the same footprint, quoted per input byte of the
/// conversion) of the same run; the median over runs.
fn vs_memcpy(p: &PointResult, func: &str, memcpy: &str) -> Option<f64> {
    let ratios: Vec<f64> = p
        .runs
        .iter()
        .filter_map(|r| {
            let m = |f: &str| {
                let v: Vec<f64> = (0..p.channels)
                    .filter_map(|i| r.figures.get(&func_figure(f, &format!("mb_s_board{i}"))))
                    .copied()
                    .collect();
                mean(&v)
            };
            let (a, b) = (m(func), m(memcpy));
            (a.is_finite() && b.is_finite() && b > 0.0).then_some(a / b)
        })
        .collect();
    xferbench_probes::stats::median(&ratios)
}

/// One test-3 case: `(original, improved)` points.
fn case<'a>(
    doc: &'a ResultDoc,
    func: &'a str,
    factor: &'a str,
) -> (Option<&'a PointResult>, Option<&'a PointResult>) {
    let get = |k| {
        select(doc, &[(GROUP, "test3")]).find(|p| {
            param(p, FUNC) == func && param(p, FACTOR) == factor && param(p, KERNELS) == k
        })
    };
    (get("original"), get("improved"))
}

/// Test 3: every conversion, original and improved, against memcpy.
pub fn test3_table(doc: &ResultDoc) -> Table {
    let mut t = Table {
        title: "Test 3: conversion speed, 6 MB on 5 boards (MB/s of raw input per board)".into(),
        headers: [
            "function",
            "f",
            "original",
            "improved",
            "improved / original",
            "memcpy (same run)",
            "original / memcpy",
            "improved / memcpy",
            "improved / memcpy of the same traffic",
            "seed",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    if let Some(p) = select(doc, &[(GROUP, "test3"), (KERNELS, "original")]).next() {
        let v = per_board(p, "func_readout");
        t.rows.push(vec![
            "func_readout".into(),
            "–".into(),
            range(&v),
            "–".into(),
            "–".into(),
            "–".into(),
            "–".into(),
            "–".into(),
            "–".into(),
            seed::TEST3_READOUT.into(),
        ]);
    }
    for (func, factor) in test3_cases(doc) {
        let (o, i) = case(doc, &func, &factor);
        let ov = o.map(|p| per_board(p, &func)).unwrap_or_default();
        let iv = i.map(|p| per_board(p, &func)).unwrap_or_default();
        let mem = i.or(o).map(|p| per_board(p, "memcpy")).unwrap_or_default();
        let ratio = |p: Option<&PointResult>, memcpy: &str| {
            p.and_then(|p| vs_memcpy(p, &func, memcpy))
                .map_or("–".into(), |r| format!("{r:.2}×"))
        };
        let s = seed::TEST3
            .iter()
            .find(|r| r.0 == func && r.1.to_string() == factor);
        t.rows.push(vec![
            func.clone(),
            factor.clone(),
            range(&ov),
            range(&iv),
            format!("{:.1}×", mean(&iv) / mean(&ov)),
            range(&mem),
            ratio(o, "memcpy"),
            ratio(i, "memcpy"),
            ratio(i, "memcpy_moved"),
            s.map_or("–".into(), |r| r.2.into()),
        ]);
    }
    t
}

fn cpu_cell(p: Option<&PointResult>) -> String {
    pct_cell(p, TOP_CPU_PERCENT)
}

fn pct_cell(p: Option<&PointResult>, name: &str) -> String {
    p.and_then(|p| median(p, name))
        .map_or("–".into(), |x| format!("{x:.1}"))
}

/// A per-board figure over a point's boards: one board's value, or the range
/// of them (each board's median over runs).
fn boards_cell(p: Option<&PointResult>, what: &str) -> String {
    let Some(p) = p else { return "–".into() };
    let v: Vec<f64> = (0..boards(p))
        .filter_map(|b| median(p, &board_figure(what, b)))
        .collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match v.len() {
        0 => "–".into(),
        1 => format!("{lo:.1}"),
        _ => format!("{lo:.1}–{hi:.1}"),
    }
}

/// Test 4: host CPU % at 14 Hz, polling vs interrupt.
pub fn test4_table(doc: &ResultDoc) -> Table {
    let mut t = Table {
        title:
            "Test 4: host CPU % at a 14 Hz trigger (top-like, 0.5 s samples; 100 % = one core); \
                the readers' CPU split into waiting and copying + converting; per board, its \
                reader and its DMA engine thread (the model's copy for `mmap`), one value or the \
                range over the boards"
                .into(),
        headers: [
            "function",
            "boards",
            "size [MB]",
            "access",
            "kernels",
            "poll",
            "irq",
            "irq / poll",
            "poll: waiting",
            "poll: copy + conv.",
            "irq: copy + conv.",
            "poll: per board",
            "irq: per board",
            "irq: engine per board",
            "seed poll",
            "seed irq",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    let mut seen = Vec::new();
    for p in select(doc, &[(GROUP, "test4")]) {
        let key: Vec<&str> = [FUNC, BOARDS, SAMPLES, ACCESS, KERNELS]
            .iter()
            .map(|k| param(p, k))
            .collect();
        if seen.contains(&key) {
            continue;
        }
        seen.push(key.clone());
        let get = |daq| {
            doc.points.iter().find(|q| {
                param(q, GROUP) == "test4"
                    && param(q, DAQ) == daq
                    && [FUNC, BOARDS, SAMPLES, ACCESS, KERNELS]
                        .iter()
                        .zip(&key)
                        .all(|(k, v)| param(q, k) == *v)
            })
        };
        let (poll, irq) = (get("poll"), get("irq"));
        let val = |p: Option<&PointResult>| p.and_then(|p| median(p, TOP_CPU_PERCENT));
        let ratio = match (val(poll), val(irq)) {
            (Some(a), Some(b)) if a > 0.0 => format!("{:.2}", b / a),
            _ => "–".into(),
        };
        let (func, b, n) = (param(p, FUNC), boards(p), samples(p));
        let seeded = param(p, ACCESS) == "read" && param(p, KERNELS) == "original";
        let sv = |irq| {
            seeded
                .then(|| seed::cpu(func, b, n, irq))
                .flatten()
                .map_or("–".into(), |x| format!("{x:.0}"))
        };
        t.rows.push(vec![
            func.into(),
            b.to_string(),
            format!("{:.2}", n as f64 * 2.0 / 1e6),
            param(p, ACCESS).into(),
            param(p, KERNELS).into(),
            cpu_cell(poll),
            cpu_cell(irq),
            ratio,
            pct_cell(poll, WAIT_CPU_PERCENT),
            pct_cell(poll, WORK_CPU_PERCENT),
            pct_cell(irq, WORK_CPU_PERCENT),
            boards_cell(poll, CPU_PERCENT),
            boards_cell(irq, CPU_PERCENT),
            boards_cell(irq, ENGINE_CPU_PERCENT),
            sv(false),
            sv(true),
        ]);
    }
    t
}

/// The seed's perf top symbols per case, for the profile table.
pub fn seed_profiles_table() -> Table {
    Table {
        title: "The seed's perf top symbols (perf record -F 99)".into(),
        headers: vec!["case".into(), "top symbols".into()],
        rows: seed::PROFILES
            .iter()
            .map(|(c, s)| vec![c.to_string(), s.to_string()])
            .collect(),
    }
}

fn chart(title: &str, x: &str, y: &str, xs: Scale, ys: Scale, series: Vec<Series>) -> LineChart {
    LineChart {
        title: title.into(),
        x_label: x.into(),
        y_label: y.into(),
        x_scale: xs,
        y_scale: ys,
        series: series
            .into_iter()
            .filter(|s| !s.points.is_empty())
            .collect(),
    }
}

/// Per-board L2 speed against boards, ours (read, mmap) and the seed's.
pub fn boards_plot(doc: &ResultDoc) -> LineChart {
    let ours = |access| Series {
        intervals: Vec::new(),
        reference: false,
        label: format!("L2 boards, {access}"),
        points: ["l2", "5l2", "ku+5l2"]
            .iter()
            .filter_map(|l| {
                let p = point(doc, &[(GROUP, "test1"), (LINKS, l), (ACCESS, access)])?;
                let v = per_board(p, "func_readout");
                let l2 = if *l == "ku+5l2" {
                    &v[1.min(v.len())..]
                } else {
                    &v[..]
                };
                Some((boards(p) as f64, mean(l2)))
            })
            .collect(),
    };
    let ku = |access| Series {
        intervals: Vec::new(),
        reference: false,
        label: format!("KU board, {access}"),
        points: ["ku", "ku+5l2"]
            .iter()
            .filter_map(|l| {
                let p = point(doc, &[(GROUP, "test1"), (LINKS, l), (ACCESS, access)])?;
                Some((boards(p) as f64, *per_board(p, "func_readout").first()?))
            })
            .collect(),
    };
    let seed_l2 = Series {
        intervals: Vec::new(),
        reference: false,
        label: "seed: L/L2 boards".into(),
        points: vec![(1.0, 621.7), (5.0, 579.6), (6.0, 511.0)],
    };
    let seed_ku = Series {
        intervals: Vec::new(),
        reference: false,
        label: "seed: KU board".into(),
        points: vec![(1.0, 1249.2), (6.0, seed::TEST1_KU_OF_6)],
    };
    chart(
        "Per-board readout speed against boards in the crate",
        "boards",
        "per-board speed [MB/s]",
        Scale::Linear,
        Scale::Linear,
        vec![
            ours("read"),
            ours("mmap"),
            ku("read"),
            ku("mmap"),
            seed_l2,
            seed_ku,
        ],
    )
}

/// Conversion speed per case: original, improved, memcpy, seed.
pub fn conversion_plot(doc: &ResultDoc) -> LineChart {
    let cases = test3_cases(doc);
    let mut orig = Vec::new();
    let mut imp = Vec::new();
    let mut mem = Vec::new();
    let mut sd = Vec::new();
    for (k, (func, factor)) in cases.iter().enumerate() {
        let x = (k + 1) as f64;
        let (o, i) = case(doc, func, factor);
        if let Some(o) = o {
            orig.push((x, mean(&per_board(o, func))));
        }
        if let Some(i) = i {
            imp.push((x, mean(&per_board(i, func))));
            mem.push((x, mean(&per_board(i, "memcpy"))));
        }
        if let Some(s) = seed::TEST3
            .iter()
            .find(|r| r.0 == *func && r.1.to_string() == *factor)
        {
            sd.push((x, s.3));
        }
    }
    let names: Vec<String> = cases
        .iter()
        .enumerate()
        .map(|(k, (f, fac))| {
            format!(
                "{}={}{}",
                k + 1,
                f.trim_start_matches("func_"),
                if fac == "1" {
                    String::new()
                } else {
                    format!(" f{fac}")
                }
            )
        })
        .collect();
    chart(
        &format!("Conversion speed per board, 6 MB ({})", names.join(", ")),
        "case",
        "MB/s of raw input",
        Scale::Linear,
        Scale::Log,
        vec![
            Series {
                intervals: Vec::new(),
                reference: false,
                label: "original".into(),
                points: orig,
            },
            Series {
                intervals: Vec::new(),
                reference: false,
                label: "improved".into(),
                points: imp,
            },
            Series {
                intervals: Vec::new(),
                reference: false,
                label: "memcpy of the same bytes".into(),
                points: mem,
            },
            Series {
                intervals: Vec::new(),
                reference: false,
                label: "seed: original on the i7-3555LE".into(),
                points: sd,
            },
        ],
    )
}

/// Host CPU % against size for `func`: poll and irq on 1 and 5 boards, and the seed.
pub fn cpu_plot(doc: &ResultDoc, func: &str) -> LineChart {
    let mut series = Vec::new();
    for b in ["1", "5"] {
        for daq in ["poll", "irq"] {
            let filter = [
                (GROUP, "test4"),
                (FUNC, func),
                (BOARDS, b),
                (DAQ, daq),
                (ACCESS, "read"),
                (KERNELS, "original"),
            ];
            let mut pts: Vec<(f64, f64)> = select(doc, &filter)
                .filter_map(|p| Some((samples(p) as f64 * 2.0 / 1e6, median(p, TOP_CPU_PERCENT)?)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            series.push(Series {
                intervals: Vec::new(),
                reference: false,
                label: format!("{b} board(s), {daq}"),
                points: pts,
            });
        }
    }
    for b in [1, 5] {
        for irq in [false, true] {
            let pts: Vec<(f64, f64)> = seed::TEST4
                .iter()
                .filter(|r| r.0 == func && r.1 == b)
                .filter_map(|r| Some((r.2 as f64 * 2.0 / 1e6, if irq { r.4? } else { r.3? })))
                .collect();
            series.push(Series {
                intervals: Vec::new(),
                reference: false,
                label: format!("seed: {b} board(s), {}", if irq { "irq" } else { "poll" }),
                points: pts,
            });
        }
    }
    chart(
        &format!("Host CPU at 14 Hz, {func}: polling vs interrupt"),
        "size per board [MB]",
        "CPU % (100 % = one core)",
        Scale::Log,
        Scale::Linear,
        series,
    )
}

fn holds(ok: bool) -> &'static str {
    if ok { "holds" } else { "does not hold" }
}

fn t1(doc: &ResultDoc, links: &str, access: &str) -> Vec<f64> {
    point(doc, &[(GROUP, "test1"), (LINKS, links), (ACCESS, access)])
        .map(|p| per_board(p, "func_readout"))
        .unwrap_or_default()
}

fn cpu_of(doc: &ResultDoc, func: &str, b: &str, n: &str, daq: &str) -> Option<f64> {
    fig_of(doc, func, b, n, daq, TOP_CPU_PERCENT)
}

fn fig_of(doc: &ResultDoc, func: &str, b: &str, n: &str, daq: &str, fig: &str) -> Option<f64> {
    let p = point(
        doc,
        &[
            (GROUP, "test4"),
            (FUNC, func),
            (BOARDS, b),
            (SAMPLES, n),
            (DAQ, daq),
            (ACCESS, "read"),
            (KERNELS, "original"),
        ],
    )?;
    median(p, fig)
}

/// `summary.md`: each of the seed's findings and whether it holds here.
pub fn summary(doc: &ResultDoc) -> String {
    let mut s = summary_header(doc, "SIS8300 digitizer readout on the board model");
    s.push_str(
        "The boards are a model (docs/studies/sis8300.md): link presets from the seed's one-board \
         rows, a shared bus from its six-board aggregate, the copy readout through `pread` (the \
         kernel's user copy), the zero-copy readout through a shared mapping, polling through a \
         system call per status read and the interrupt through an eventfd. CPU is the host's: the \
         process minus the model's DMA engines and the sample check.\n\n## Test 1: transfer speed\n\n",
    );
    summary_transfer(&mut s, doc);
    s.push_str("\n## Test 2: time against size\n\n");
    summary_time_against_size(&mut s, doc);
    s.push_str("\n## Test 3: conversions\n\n");
    summary_conversions(&mut s, doc);
    s.push_str("\n## Test 4: CPU at 14 Hz\n\n");
    summary_cpu(&mut s, doc);
    summary_integrity(&mut s, doc);
    s
}

/// Test 1's findings: one board's speed, boards in parallel, the KU among L2s, `mmap` against `read`.
fn summary_transfer(s: &mut String, doc: &ResultDoc) {
    let l2 = mean(&t1(doc, "l2", "read"));
    let ku = mean(&t1(doc, "ku", "read"));
    let five = t1(doc, "5l2", "read");
    let six = t1(doc, "ku+5l2", "read");
    let _ = writeln!(
        s,
        "- \"L/L2 ≈ 600 MB/s\": one L2 board reads at {} MB/s (seed 621.7): {}.",
        f1(l2),
        holds((l2 - 621.7).abs() / 621.7 < 0.1)
    );
    let _ = writeln!(
        s,
        "- \"KU ≈ 1200 MB/s\": one KU board reads at {} MB/s (seed 1249.2): {}.",
        f1(ku),
        holds((ku - 1249.2).abs() / 1249.2 < 0.1)
    );
    if let Some(p5) = point(doc, &[(GROUP, "test1"), (LINKS, "5l2"), (ACCESS, "read")]) {
        let agg = agg_mb_s(p5);
        let _ = writeln!(
            s,
            "- \"Transfers from the boards run in parallel\": five boards move {} MB/s over the common \
             window, {:.1}× one board (seed 2877 MB/s, 4.6×): {}.",
            f1(agg),
            agg / l2,
            holds(agg / l2 > 3.0)
        );
    }
    let m5 = mean(&five);
    let _ = writeln!(
        s,
        "- \"Per-board speed drops as boards are added\": {} MB/s per board with five, {:+.1} % from one \
         (seed 579.6, −6.8 %): {}.",
        f1(m5),
        (m5 / l2 - 1.0) * 100.0,
        holds(m5 < l2)
    );
    if six.len() > 1 {
        let l2_6 = mean(&six[1..]);
        let _ = writeln!(
            s,
            "- \"The KU board slows the L/L2 boards\": with a KU among six, the L2 boards read at {} MB/s \
             ({:+.1} % from five L2) and the KU at {} MB/s ({:+.1} % from alone) (seed 511.0, −11.8 %; KU \
             1025.3, −17.9 %): {}.",
            f1(l2_6),
            (l2_6 / m5 - 1.0) * 100.0,
            f1(six[0]),
            (six[0] / ku - 1.0) * 100.0,
            holds(l2_6 < m5 && six[0] < ku)
        );
    }
    let (r, m) = (
        point(
            doc,
            &[(GROUP, "test1"), (LINKS, "unthrottled"), (ACCESS, "read")],
        ),
        point(
            doc,
            &[(GROUP, "test1"), (LINKS, "unthrottled"), (ACCESS, "mmap")],
        ),
    );
    if let (Some(r), Some(m)) = (
        r.and_then(|p| median(p, HOST_CPU_NS_PER_BYTE)),
        m.and_then(|p| median(p, HOST_CPU_NS_PER_BYTE)),
    ) {
        let _ = writeln!(
            s,
            "- Beyond the seed, `mmap` against `read`, unthrottled: the reader spends {:.4} ns of CPU per \
             byte with `mmap` and {:.4} with `read`, {:.2}× (target ≤ 0.2×).",
            m,
            r,
            m / r
        );
    }
    if let (Some(r), Some(m)) = (
        r.and_then(|p| median(p, READOUT_CPU_NS_PER_BYTE)),
        m.and_then(|p| median(p, READOUT_CPU_NS_PER_BYTE)),
    ) {
        let _ = writeln!(
            s,
            "- Counting the model's DMA engine, whose thread copies the board's memory into the \
             mapping for `mmap` (a DMA on the hardware, host CPU here): {:.4} ns of CPU per byte \
             with `mmap` and {:.4} with `read`, {:.2}×. On this machine the zero-copy path moves \
             the copy to the engine's thread; it does not remove it.",
            m,
            r,
            m / r
        );
    }
}

/// Test 2's finding: time linear in bytes, judged by the spread of time per byte.
fn summary_time_against_size(s: &mut String, doc: &ResultDoc) {
    let durs: Vec<(f64, f64)> = select(doc, &[(GROUP, "test2"), (ACCESS, "read")])
        .map(|p| {
            let mb = samples(p) as f64 * 2.0 / 1e6;
            (mb, mb / mean(&per_board(p, "func_readout")) * 1e3)
        })
        .collect();
    // Linear means a flat time per byte: the ranges of ns per byte (every board and
    // run) of the sizes overlap.
    let per_byte: Vec<(f64, f64, f64)> = select(doc, &[(GROUP, "test2"), (ACCESS, "read")])
        .filter_map(|p| {
            let mb = samples(p) as f64 * 2.0 / 1e6;
            let v: Vec<f64> = p
                .runs
                .iter()
                .flat_map(|r| {
                    (0..boards(p)).filter_map(move |i| {
                        r.figures
                            .get(&func_figure("func_readout", &format!("mb_s_board{i}")))
                            .filter(|x| **x > 0.0)
                            .map(|x| 1e3 / x)
                    })
                })
                .collect();
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo.is_finite() && hi.is_finite()).then_some((mb, lo, hi))
        })
        .collect();
    if let (Some(a), Some(b)) = (durs.first(), durs.last()) {
        let flat = !per_byte.is_empty()
            && per_byte
                .iter()
                .map(|x| x.1)
                .fold(f64::NEG_INFINITY, f64::max)
                <= per_byte.iter().map(|x| x.2).fold(f64::INFINITY, f64::min);
        let ranges: Vec<String> = per_byte
            .iter()
            .map(|(mb, lo, hi)| format!("{lo:.3}–{hi:.3} ns/B at {mb:.2} MB"))
            .collect();
        let _ = writeln!(
            s,
            "- \"Time scales linearly with bytes\": {:.2} MB takes {:.2} ms, {:.2} MB {:.2} ms: {:.1}× the \
             time for {:.1}× the bytes (seed 1.25 → 10.8 ms, 8.6× for 10×). Time per byte over every board \
             and run: {}: {}.",
            a.0,
            a.1,
            b.0,
            b.1,
            b.1 / a.1,
            b.0 / a.0,
            ranges.join(", "),
            if flat {
                "flat within its range, so linear: holds"
            } else {
                "the ranges do not overlap, so time is not linear in bytes here: does not hold"
            }
        );
    }
}

/// Test 3's findings: the conversions' speeds, decimation, the improved kernels against memcpy.
fn summary_conversions(s: &mut String, doc: &ResultDoc) {
    let speed = |f: &str, fac: &str, k: &str| {
        let (o, i) = case(doc, f, fac);
        let p = if k == "original" { o } else { i };
        p.map_or(f64::NAN, |p| mean(&per_board(p, f)))
    };
    let origs: Vec<f64> = test3_cases(doc)
        .iter()
        .map(|(f, fac)| speed(f, fac, "original"))
        .filter(|x| x.is_finite())
        .collect();
    let _ = writeln!(
        s,
        "- \"Time depends on the operations\": the original functions run at {} MB/s per board (seed \
         261.0–4365.5): {}.",
        range(&origs),
        holds(origs.len() > 1)
    );
    let (d1, d10) = (
        speed("func_dec", "1", "original"),
        speed("func_dec", "10", "original"),
    );
    let _ = writeln!(
        s,
        "- \"Time depends on the decimation factor\": dec at f = 10 runs {:.1}× faster by input bytes \
         than at f = 1 ({} vs {} MB/s; seed 5.2×): {}.",
        d10 / d1,
        f1(d10),
        f1(d1),
        holds(d10 / d1 > 2.0)
    );
    s.push_str(
        "- \"Time does not depend on the scale factor or offset\": not measured; the study runs the \
         seed's defaults (O = 0, F = 1), and the kernels have no data-dependent branch on them.\n",
    );
    let (uo, ui) = (
        speed("func_umn2double", "1", "original"),
        speed("func_umn2double", "1", "improved"),
    );
    let (co, _) = (speed("func_no_decsca", "1", "original"), 0);
    let _ = writeln!(
        s,
        "- The original u→double is division-bound: {} MB/s against {} for the cast, which has no \
         division (seed 298 vs 907); the improved kernel (multiply by 2^−15, vectorised) runs at {} MB/s, \
         {:.1}× the original.",
        f1(uo),
        f1(co),
        f1(ui),
        ui / uo
    );
    let ratios: Vec<(String, f64)> = test3_cases(doc)
        .iter()
        .filter_map(|(f, fac)| {
            let (_, i) = case(doc, f, fac);
            Some((format!("{f} f={fac}"), vs_memcpy(i?, f, "memcpy_moved")?))
        })
        .collect();
    if !ratios.is_empty() {
        let low = ratios
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("not empty");
        let _ = writeln!(
            s,
            "- Improved kernels against a memcpy of the same traffic (input read + output written, \
             the same footprint), same run: from {:.2}× ({}) upwards; {} of {} at ≥ 0.8× (target: all).",
            low.1,
            low.0,
            ratios.iter().filter(|r| r.1 >= 0.8).count(),
            ratios.len()
        );
    }
}

/// Test 4's findings: polling against the interrupt, and where the readers' CPU goes.
fn summary_cpu(s: &mut String, doc: &ResultDoc) {
    let r = "func_readout";
    if let (Some(p), Some(i)) = (
        cpu_of(doc, r, "1", "300000", "poll"),
        cpu_of(doc, r, "1", "300000", "irq"),
    ) {
        let _ = writeln!(
            s,
            "- \"With the interrupt CPU drops to about 4 %\": one board, 0.6 MB: {p:.1} % polling, {i:.1} % \
             with the interrupt, {:.2}× (seed 17 % vs 4 %, 0.24×; target ≤ 0.3×): {}.",
            i / p,
            holds(i <= 0.3 * p)
        );
    }
    if let (Some(p), Some(i)) = (
        cpu_of(doc, r, "5", "3000000", "poll"),
        cpu_of(doc, r, "5", "3000000", "irq"),
    ) {
        let _ = writeln!(
            s,
            "- Five boards, 6 MB: {p:.1} % polling, {i:.1} % with the interrupt, {:.2}× (seed ~100 % vs \
             44 %): {}.",
            i / p,
            holds(i <= 0.3 * p)
        );
    }
    // The largest five-board size: what the readers spent their CPU on.
    let n = ["9000000", "6000000", "3000000"]
        .into_iter()
        .find(|n| cpu_of(doc, r, "5", n, "irq").is_some());
    let split = |daq, fig| n.and_then(|n| fig_of(doc, r, "5", n, daq, fig));
    if let (Some(n), Some(wp), Some(wi), Some(w), Some(p), Some(i)) = (
        n,
        split("poll", WORK_CPU_PERCENT),
        split("irq", WORK_CPU_PERCENT),
        split("poll", WAIT_CPU_PERCENT),
        split("poll", TOP_CPU_PERCENT),
        split("irq", TOP_CPU_PERCENT),
    ) {
        let mb = n.parse::<f64>().unwrap_or(0.0) * 2.0 / 1e6;
        let _ = writeln!(
            s,
            "- Five boards, {mb:.0} MB ({:.2}×; the seed gives no interrupt figure at 12 or 18 MB): \
             the readers' copies cost {wp:.1} % polling and {wi:.1} % with the interrupt, and \
             waiting costs {w:.1} % more when polling; the interrupt's CPU is the copy, which \
             grows with the bytes, while the poll loop runs only while no copy does.",
            i / p
        );
    }
    // Per board at 6 MB on five boards: each reader with its DMA engine.
    let t4_point = |daq: &str, access: &str| {
        point(
            doc,
            &[
                (GROUP, "test4"),
                (FUNC, r),
                (BOARDS, "5"),
                (SAMPLES, "3000000"),
                (DAQ, daq),
                (ACCESS, access),
                (KERNELS, "original"),
            ],
        )
    };
    let (pr, ir, im) = (
        t4_point("poll", "read"),
        t4_point("irq", "read"),
        t4_point("irq", "mmap"),
    );
    if pr.is_some() && ir.is_some() {
        let _ = write!(
            s,
            "- Per board (its reader and its DMA engine thread), five boards, 6 MB: {} % polling, \
             {} % with the interrupt",
            boards_cell(pr, CPU_PERCENT),
            boards_cell(ir, CPU_PERCENT),
        );
        if im.is_some() {
            let _ = write!(
                s,
                "; with `mmap` and the interrupt {} %, of which the engine's copy (a DMA on the \
                 hardware) {} %",
                boards_cell(im, CPU_PERCENT),
                boards_cell(im, ENGINE_CPU_PERCENT),
            );
        }
        s.push_str(".\n");
    }
    if let (Some(a), Some(b)) = (
        cpu_of(doc, r, "1", "300000", "poll"),
        cpu_of(doc, r, "1", "3000000", "poll"),
    ) {
        let _ = writeln!(
            s,
            "- \"No difference in CPU between 30000 and 300000 samples per channel\": polling, one board, \
             {a:.1} % at 0.6 MB and {b:.1} % at 6 MB: {} (the poll loop, not the copy, dominates).",
            holds((b - a).abs() < 0.25 * a.max(b))
        );
    }
    s.push_str(
        "- \"Most time is spent copying to user space\" and \"many ioread32() calls\": run the study \
         with `--profile=DIR`; `profile-top5.md` lists the top symbols per case beside the seed's.\n",
    );
}

/// The samples checked against the model's pattern.
fn summary_integrity(s: &mut String, doc: &ResultDoc) {
    let mism: f64 = doc
        .points
        .iter()
        .flat_map(|p| p.runs.iter())
        .filter_map(|r| r.figures.get(MISMATCHES))
        .sum();
    let checked: u64 = doc
        .points
        .iter()
        .filter_map(|p| p.integrity.map(|i| i.checked))
        .sum();
    let _ = writeln!(
        s,
        "\n## Integrity\n\n{checked} samples checked against the model's pattern, {mism:.0} mismatches."
    );
}

/// Writes the study's tables, plots and summary.
pub fn write(folder: &StudyFolder, doc: &ResultDoc) -> Result<()> {
    let mb_per_s = |c: &str| ColumnUnit::new(c, Unit::BytesPerSecond).scaled(1e6);
    let test1_units = [
        "per board",
        "seed per board",
        "aggregate (common window)",
        "seed aggregate",
    ]
    .map(mb_per_s)
    .to_vec();
    let mut test2_units = [
        "per board [MB/s]",
        "seed per board [MB/s]",
        "aggregate [MB/s]",
    ]
    .map(mb_per_s)
    .to_vec();
    test2_units
        .extend(["dur [ms]", "seed dur [ms]"].map(|c| ColumnUnit::new(c, Unit::Milliseconds)));
    for (stem, t, units) in [
        ("test1-transfer", test1_table(doc), test1_units),
        ("test2-sizes", test2_table(doc), test2_units),
        (
            "test3-conversions",
            test3_table(doc),
            ["original", "improved", "memcpy (same run)", "seed"]
                .map(mb_per_s)
                .to_vec(),
        ),
        ("test4-cpu", test4_table(doc), Vec::new()),
    ] {
        if !t.rows.is_empty() {
            folder.write_table_in(stem, &t, units)?;
        }
    }
    folder.write_table("seed-profiles", &seed_profiles_table())?;
    folder.write_plot("per-board-speed", &boards_plot(doc))?;
    folder.write_plot("conversion-speed", &conversion_plot(doc))?;
    folder.write_plot("cpu-readout", &cpu_plot(doc, "func_readout"))?;
    folder.write_plot("cpu-umn2double", &cpu_plot(doc, "func_umn2double"))?;
    folder.write_text("summary.md", &summary(doc))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::fixture::sis8300_doc;
    use super::*;

    #[test]
    fn the_folder_has_every_test_table_plot_and_the_summary() {
        let doc = sis8300_doc();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("study");
        crate::write_folder(&out, &doc).unwrap();
        for f in [
            "results.json",
            "summary.md",
            "test1-transfer.md",
            "test2-sizes.csv",
            "test3-conversions.md",
            "test4-cpu.md",
            "seed-profiles.md",
            "per-board-speed.svg",
            "conversion-speed.svg",
            "cpu-readout.svg",
            "cpu-umn2double.svg",
        ] {
            assert!(out.join(f).is_file(), "{f} missing");
        }
        let svg = std::fs::read_to_string(out.join("per-board-speed.svg")).unwrap();
        assert!(svg.contains("seed: L/L2 boards") && svg.contains("L2 boards, mmap"));
    }

    #[test]
    fn tables_carry_the_seeds_figures_beside_ours() {
        let doc = sis8300_doc();
        insta::assert_snapshot!(test1_table(&doc).to_markdown());
        insta::assert_snapshot!(test2_table(&doc).to_markdown());
        insta::assert_snapshot!(test3_table(&doc).to_markdown());
        insta::assert_snapshot!(test4_table(&doc).to_markdown());
    }

    #[test]
    fn the_summary_states_each_finding() {
        insta::assert_snapshot!(summary(&sis8300_doc()));
    }
}
