//! `report.html`: one self-contained page per `run` (`--export-html`), per study
//! folder and per comparison (`compare --export-html`). Inline CSS (light and dark
//! schemes following the reader's setting, a layout that holds on a phone, a print
//! style), inline SVG charts from the one chart
//! engine that also draws the folder's SVG files ([`crate::chart`]), and one small
//! inline script that sorts tables. No network, no external file.
//!
//! Every string from the results goes through `maud`'s escaping; Markdown (a
//! study's `summary.md`) is rendered with its raw HTML shown as text.
//!
//! - [`mod@chart`]: charts as figures, and a choice of charts (latency percentiles).
//! - [`mod@compare`]: the page of `compare --export-html`.
//! - [`mod@load`]: `load` points: latency against the offered rate, the knees.
//! - [`mod@table`]: sortable tables.
//! - [`mod@point`]: one point in detail.
//! - [`mod@summary`]: Markdown findings.

pub mod chart;
pub mod compare;
mod layout;
pub mod load;
pub mod point;
pub mod summary;
pub mod table;
mod words;

pub use chart::RunChart;
use layout::page;
use point::line_label;
use words::varying;
pub use words::{figure_name, point_figure_name};

use crate::Exporter;
use crate::chart::{Axis, Chart, Interval, Intervals, Line, Point, Scale, Unit};
use crate::plot::LineChart;
use crate::study::{Table, Written};
use maud::{Markup, html};
use std::collections::BTreeSet;
use xferbench_lab::names;
use xferbench_lab::result::{Context, Outcome, PointResult, ResultDoc, figure};

/// The machine's limits at the start and end, when the context records them.
pub fn machine_limits(context: &Context) -> Option<Markup> {
    let m = context.limits.as_ref()?;
    let end = m.end.as_ref().map(|e| e.rows());
    let value = crate::format::limit_value;
    Some(html! {
        section.limits {
            h2 { "Machine limits" }
            p { "Measured at the start and the end of the run (quick set; `xferbench limits` measures the full one). Each point's primary figure is also given as a fraction of its natural limit." }
            table.sortable {
                thead { tr { th { "limit" } th { "start" } th { "end" } } }
                tbody {
                    @for row in m.start.rows() {
                        tr {
                            td { (row.name) }
                            td.num { (value(row.unit, row.estimate.median)) }
                            td.num {
                                (end.as_ref()
                                    .and_then(|rows| rows.iter().find(|r| r.name == row.name))
                                    .map_or_else(|| "-".to_string(), |r| value(r.unit, r.estimate.median)))
                            }
                        }
                    }
                }
            }
        }
    })
}

/// The header: where and how the results were measured, how the run ended, and the
/// run-level warnings.
fn context_header(doc: &ResultDoc, title: &str) -> Markup {
    let c = &doc.context;
    let s = &c.settings;
    let length = match (s.count, s.duration_s) {
        (Some(n), _) => format!("{n} messages per channel per run"),
        (_, Some(d)) => format!("{d} s per channel per run"),
        _ => "set by the plan".into(),
    };
    let caps = &c.capabilities;
    html! {
        header.context {
            h1 { (title) }
            dl {
                dt { "Host" } dd { (c.hostname) " — " (c.cpu_model) " (" (c.cores) " CPUs)" }
                dt { "System" } dd { (c.os) ", kernel " (c.kernel) }
                dt { "Started" } dd { (c.start_time) " (" (c.tool) " " (c.version) ")" }
                dt { "Command" } dd { code { (c.command_line.join(" ")) } }
                dt { "Runs" } dd {
                    (s.runs) " measured after " (s.warmup) " warm-up per point, " (length) ", "
                    (s.peer) " peers"
                    @if s.pin { ", pinned" } @if s.verify { ", verified" }
                    @if s.interleave { ", interleaved across points" }
                }
                dt { "Measurement" } dd {
                    // The note of a missing PMU says so itself, and why.
                    @match (caps.pmu, &caps.pmu_note) {
                        (true, Some(n)) => { "hardware PMU (" (n) ")" },
                        (true, None) => "hardware PMU",
                        (false, Some(n)) => (n),
                        (false, None) => "no hardware PMU",
                    }
                    @if let Some(p) = &caps.perf { "; " (p) }
                    @if let Some(v) = &caps.valgrind { "; " (v) }
                    @if let Some(p) = caps.perf_event_paranoid { "; perf_event_paranoid " (p) }
                }
                @if let Some(b) = crate::machine::build_line(c) {
                    dt { "Build" } dd { (b) }
                }
                @if let Some(l) = crate::machine::load_line(c) {
                    dt { "Machine load" } dd { (l) }
                }
            }
            @if let Some(limits) = machine_limits(c) { (limits) }
            @match &doc.outcome {
                Outcome::Complete => {},
                Outcome::Interrupted => p.warning { "Interrupted: only the points that finished are shown." },
                Outcome::Failed { error } => p.warning { "Failed: " (error) ". The points that finished before it are shown." },
            }
            @if !doc.warnings.is_empty() {
                ul.warnings { @for w in &doc.warnings { li { (w) } } }
            }
        }
    }
}

fn points_section(doc: &ResultDoc) -> Markup {
    html! {
        section id="points" {
            h2 { "Points in detail" }
            p.note { "Each point: the spread of its runs (dots; the bar is the median, the band the interval of the median), every figure, and where they apply its channels, latency percentiles, CPU per process, counters and warnings." }
            @for p in &doc.points { (point::detail(p)) }
        }
    }
}

/// The page of a `run`: context, the points table, the knees of `load` curves,
/// charts of the primary figure (the latency percentiles to choose from for a
/// round-trip workload; latency against the offered rate for `load` points at several
/// rates) and every point in detail.
pub fn run_page(doc: &ResultDoc) -> String {
    let title = format!("xferbench {} results", doc.context.settings.workload);
    let mut points_table = crate::markdown::points_table(doc);
    points_table.headers.insert(0, "point".into());
    let links: Vec<String> = doc.points.iter().map(point::anchor).collect();
    for (row, p) in points_table.rows.iter_mut().zip(&doc.points) {
        let mark = if p.warnings.is_empty() { "" } else { " ⚠" };
        row.insert(0, format!("{}{mark}", p.index + 1));
    }
    let charts = run_charts(doc);
    let knees = load::knees_table(&doc.knees);
    let body = html! {
        (context_header(doc, &title))
        nav.toc aria-label="contents" { ul {
            @if doc.ab.is_some() { li { a href="#verdict" { "Verdict" } } }
            li { a href="#results" { "Results" } }
            @if knees.is_some() { li { a href="#knees" { "Knees" } } }
            @if !charts.is_empty() { li { a href="#plots" { "Plots" } } }
            li { a href="#points" { "Points in detail" } }
        } }
        @if let Some(v) = &doc.ab { (verdict(v)) }
        section id="results" {
            h2 { "Results" }
            p.note { "Medians over the measured runs. Click a column header to sort; a point's number links to its detail (⚠: the point has warnings)." }
            (table::table(&points_table, "results-table", Some(&links)))
        }
        @if let Some(t) = &knees {
            section id="knees" {
                h2 { "Knees" }
                p.note { (load::knees_note()) }
                (table::table(t, "knees-table", None))
            }
        }
        @if !charts.is_empty() {
            section id="plots" {
                h2 { "Plots" }
                @for (i, c) in charts.iter().enumerate() {
                    @match c {
                        RunChart::One { chart, note } => (chart::figure(chart, true, Some(note))),
                        RunChart::Percentiles { options, note } => (chart::choice(&format!("percentile-{i}"), "percentile", options, Some(note))),
                    }
                }
            }
        }
        (points_section(doc))
    };
    page(&title, body)
}

/// `ab`'s verdict of B against A: which is faster, by how much, how sure, and why.
fn verdict(v: &xferbench_lab::verdict::AbVerdict) -> Markup {
    let faster = match v.faster.as_str() {
        "A" | "B" => v.faster.as_str(),
        _ => "neither (noise)",
    };
    html! {
        section id="verdict" {
            h2 { "Verdict: B against A" }
            dl {
                dt { "A" } dd { code { (v.a.command) } }
                dt { "B" } dd { code { (v.b.command) } }
                dt { "Faster" } dd { (faster) }
                dt { "Difference" } dd { (format!("{:+.1} % (mean wall time of B against A)", v.difference * 100.0)) }
                dt { "p" } dd { (format!("{:.4} (Welch's t-test on the wall times)", v.p_value)) }
                dt { "Regression" } dd {
                    @if v.regression { "yes: " } @else { "no: " }
                    (format!("threshold {:.1} %", v.threshold * 100.0))
                }
                dt { "Diagnosis" } dd { (v.diagnosis) }
            }
            @if !v.notes.is_empty() {
                ul.warnings { @for n in &v.notes { li { (n) } } }
            }
        }
    }
}

/// Round-trip latency percentiles offered on a run's page.
const PERCENTILES: [(&str, &str); 3] = [
    ("p50", figure::LATENCY[0]),
    ("p99", figure::LATENCY[2]),
    ("p99.9", figure::LATENCY[3]),
];

/// The charts of a sweep: the primary figure against message size (or channels, when
/// only they vary), one line per combination of the other parameters, each point the
/// median with the interval of the median as a bar. A round-trip workload gets its
/// p50, p99 and p99.9 latencies to choose from; `load` points at several offered
/// rates get [`load::charts`] instead.
pub fn run_charts(doc: &ResultDoc) -> Vec<RunChart> {
    if let Some(charts) = load::charts(doc) {
        return charts;
    }
    let distinct =
        |f: &dyn Fn(&PointResult) -> u64| doc.points.iter().map(f).collect::<BTreeSet<u64>>().len();
    let (x_key, x) = if distinct(&|p| p.size_bytes) > 1 {
        (
            names::SIZE,
            Axis::new("message size", Unit::Bytes, Scale::Log),
        )
    } else if distinct(&|p| p.channels as u64) > 1 {
        (
            names::CHANNELS,
            Axis::new("channels", Unit::Number, Scale::Log),
        )
    } else {
        return Vec::new();
    };
    let x_of = |p: &PointResult| {
        if x_key == names::SIZE {
            p.size_bytes as f64
        } else {
            p.channels as f64
        }
    };
    // Parameters that vary, other than the x axis, name the lines.
    let varying = varying(doc, x_key);
    // One chart per primary figure (a document holds one workload, so one figure).
    let mut figures: Vec<(String, bool)> = Vec::new();
    for p in &doc.points {
        let primary = p.primary();
        if !figures.iter().any(|(f, _)| *f == primary.figure) {
            figures.push((primary.figure.clone(), primary.higher_is_better));
        }
    }
    let chart_of = |figure: &str| -> Option<(Chart, Option<f64>)> {
        let mut lines: Vec<Line> = Vec::new();
        let mut level = None;
        for p in &doc.points {
            let Some(e) = p.summary.get(figure) else {
                continue;
            };
            let interval = (e.n >= 2).then(|| {
                level.get_or_insert(e.ci_level);
                Interval {
                    low: e.ci_low,
                    high: e.ci_high,
                    level: Some(e.ci_level),
                }
            });
            let label = line_label(p, &varying);
            let point = Point {
                x: x_of(p),
                y: e.median,
                interval,
            };
            Line::push_to(&mut lines, label, point);
        }
        for l in &mut lines {
            l.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        }
        let name = figure_name(figure);
        (!lines.is_empty()).then(|| {
            (
                Chart {
                    title: format!("{} vs {}", capitalised(&name), x.label),
                    x: x.clone(),
                    y: Axis::new(name, Unit::of_figure(figure), Scale::Log),
                    lines,
                    intervals: Intervals::Bars,
                    markers: Vec::new(),
                },
                level,
            )
        })
    };
    let runs = doc.context.settings.runs;
    let note = |higher: bool, level: Option<f64>| {
        let mut n = format!("Medians of {}", crate::format::runs(runs));
        if let Some(l) = level {
            n.push_str(&format!(
                "; bars: the {} % interval of the median (order statistics)",
                crate::format::level(l)
            ));
        }
        n.push_str(if higher {
            ". Higher is better. Hover a point for its values."
        } else {
            ". Lower is better. Hover a point for its values."
        });
        n
    };
    figures
        .into_iter()
        .filter_map(|(fig, higher)| {
            if fig == figure::LATENCY[0] {
                let mut level = None;
                let options: Vec<(String, Chart)> = PERCENTILES
                    .iter()
                    .filter_map(|(label, f)| {
                        let (c, l) = chart_of(f)?;
                        level = level.or(l);
                        Some((label.to_string(), c))
                    })
                    .collect();
                (!options.is_empty()).then(|| RunChart::Percentiles {
                    options,
                    note: note(higher, level),
                })
            } else {
                let (chart, level) = chart_of(&fig)?;
                Some(RunChart::One {
                    chart,
                    note: note(higher, level),
                })
            }
        })
        .collect()
}

/// `Throughput` from `throughput`.
fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The page of a study folder: the summary's findings first, then every table and
/// plot the study wrote into the folder (in the order written), every point in
/// detail, and the list of files.
pub fn study_page(doc: &ResultDoc, written: &[Written]) -> String {
    let name = doc.study.as_ref().map_or("?", |s| s.name.as_str());
    let title = format!("xferbench study {name}");
    let texts: Vec<(&str, &str)> = written
        .iter()
        .filter_map(|w| match w {
            Written::Text { name, text } => Some((name.as_str(), text.as_str())),
            _ => None,
        })
        .collect();
    // Columns of quantities are written in their units, as the terminal tables are.
    let tables: Vec<(&str, Table)> = written
        .iter()
        .filter_map(|w| match w {
            Written::Table { stem, table, units } => {
                Some((stem.as_str(), table::with_units(table, units)))
            }
            _ => None,
        })
        .collect();
    let plots: Vec<(&str, &LineChart)> = written
        .iter()
        .filter_map(|w| match w {
            Written::Plot { stem, chart } => Some((stem.as_str(), chart)),
            _ => None,
        })
        .collect();
    let summary = texts.iter().find(|(n, _)| *n == "summary.md");
    let body = html! {
        (context_header(doc, &title))
        nav.toc aria-label="contents" { ul {
            @if summary.is_some() { li { a href="#findings" { "Findings" } } }
            @if !tables.is_empty() { li { a href="#tables" { "Tables" } } }
            @if !plots.is_empty() { li { a href="#plots" { "Plots" } } }
            li { a href="#points" { "Points in detail" } }
            li { a href="#files" { "Files" } }
        } }
        @if let Some((_, text)) = summary {
            section.findings id="findings" { (summary::markdown(text)) }
        }
        @if !tables.is_empty() {
            section id="tables" {
                h2 { "Tables" }
                p.note { "Click a column header to sort. Each table is also in the folder as Markdown and CSV." }
                @for (stem, t) in &tables {
                    h3 id={"table-" (stem)} { (if t.title.is_empty() { *stem } else { t.title.as_str() }) }
                    (table::table(&Table { title: String::new(), ..t.clone() }, &format!("t-{stem}"), None))
                    p.note { code { (stem) ".md" } ", " code { (stem) ".csv" } }
                }
            }
        }
        @if !plots.is_empty() {
            section id="plots" {
                h2 { "Plots" }
                p.note { "Hover a point for its values. Dashed lines are reference figures quoted from elsewhere; solid lines were measured here." }
                @for (stem, c) in &plots {
                    div id={"plot-" (stem)} { (chart::line_chart(c)) p.note { code { (stem) ".svg" } } }
                }
            }
        }
        (points_section(doc))
        section id="files" {
            h2 { "Files" }
            ul {
                li { code { "results.json" } ": every run of every point" }
                @for (n, _) in texts.iter().filter(|(n, _)| *n != "report.html") { li { code { (n) } } }
                @for (stem, _) in &tables { li { code { (stem) ".md" } ", " code { (stem) ".csv" } } }
                @for (stem, _) in &plots { li { code { (stem) ".svg" } } }
            }
        }
    };
    page(&title, body)
}

/// A page of one chart over a table, with a title and notes above them (the
/// history's trend of one point across runs). The page's heading is the chart's title.
pub fn chart_page(title: &str, notes: &[String], chart: &Chart, t: &Table) -> String {
    let body = html! {
        header.context {
            h1 { (title) }
            @for n in notes { p.note { (n) } }
        }
        section id="plots" { (chart::figure(chart, false, None)) }
        section id="results" {
            h2 { "Runs" }
            p.note { "Click a column header to sort." }
            (table::table(t, "trend-table", None))
        }
    };
    page(title, body)
}

/// `--export-html`: the page of a `run` ([`run_page`]).
#[derive(Debug, Default)]
pub struct Html;

impl Exporter for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    fn export(&self, doc: &ResultDoc, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(run_page(doc).as_bytes())
    }
}

#[cfg(test)]
mod tests;
