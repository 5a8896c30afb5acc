//! `report.html`: one self-contained page per `run` (`--export-html`) and per study
//! folder. Inline CSS (light and dark schemes following the reader's setting, a print
//! style), inline SVG charts drawn from the same [`LineChart`]s as the folder's SVG
//! files, and one small inline script that sorts tables. No network, no external file.
//!
//! Every string from the results goes through `maud`'s escaping; Markdown (a
//! study's `summary.md`) is rendered with its raw HTML shown as text.
//!
//! - [`mod@chart`]: line charts and strip plots as inline SVG.
//! - [`mod@table`]: sortable tables.
//! - [`mod@point`]: one point in detail.
//! - [`mod@summary`]: Markdown findings.

pub mod chart;
pub mod point;
pub mod summary;
pub mod table;

use crate::Exporter;
use crate::plot::{LineChart, Scale, Series};
use crate::study::{Table, Written};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use std::collections::{BTreeMap, BTreeSet};
use xferbench_lab::result::{Context, Outcome, ResultDoc};

const CSS: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("sort.js");

/// The whole page around `body`.
fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="generator" content={"xferbench"};
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body {
                (body)
                script { (PreEscaped(SCRIPT)) }
            }
        }
    }
    .into_string()
}

/// The machine's limits at the start and end, when the context records them.
pub fn machine_limits(context: &Context) -> Option<Markup> {
    let m = context.limits.as_ref()?;
    let end = m.end.as_ref().map(|e| e.rows());
    let value = |unit: &str, v: f64| match unit {
        "bytes/s" => crate::format::rate_bytes(v),
        _ => crate::format::nanos(v),
    };
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
                    @if caps.pmu { "hardware PMU" } @else { "no hardware PMU" }
                    @if let Some(n) = &caps.pmu_note { " (" (n) ")" }
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

/// The page of a `run`: context, the points table, plots of the primary figure and
/// every point in detail.
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
    let body = html! {
        (context_header(doc, &title))
        nav.toc { ul {
            li { a href="#results" { "Results table" } }
            @if !charts.is_empty() { li { a href="#plots" { "Plots" } } }
            li { a href="#points" { "Points in detail" } }
        } }
        section id="results" {
            h2 { "Results" }
            p.note { "Medians over the measured runs. Click a column header to sort; a point's number links to its detail (⚠: the point has warnings)." }
            (table::table(&points_table, "results-table", Some(&links)))
        }
        @if !charts.is_empty() {
            section id="plots" {
                h2 { "Plots" }
                @for c in &charts { (chart::line_chart(c)) }
            }
        }
        (points_section(doc))
    };
    page(&title, body)
}

/// The charts of a sweep: the primary figure against size (or channels, when only
/// they vary), one line per combination of the other parameters.
pub fn run_charts(doc: &ResultDoc) -> Vec<LineChart> {
    let distinct = |f: &dyn Fn(&xferbench_lab::result::PointResult) -> u64| {
        doc.points.iter().map(f).collect::<BTreeSet<u64>>().len()
    };
    let x_axis = if distinct(&|p| p.size_bytes) > 1 {
        "size"
    } else if distinct(&|p| p.channels as u64) > 1 {
        "channels"
    } else {
        return Vec::new();
    };
    // Parameters that vary, other than the x axis, name the lines.
    let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in &doc.points {
        for (k, v) in &p.params {
            values.entry(k).or_default().insert(v);
        }
    }
    let varying: Vec<&str> = values
        .iter()
        .filter(|(k, v)| v.len() > 1 && **k != x_axis)
        .map(|(k, _)| *k)
        .collect();
    let mut by_figure: BTreeMap<(String, bool), Vec<Series>> = BTreeMap::new();
    for p in &doc.points {
        let primary = p.primary();
        let Some(e) = p.summary.get(&primary.figure) else {
            continue;
        };
        let label = varying
            .iter()
            .map(|k| format!("{k}={}", p.params.get(*k).map_or("-", String::as_str)))
            .collect::<Vec<_>>()
            .join(" ");
        let x = if x_axis == "size" {
            p.size_bytes as f64
        } else {
            p.channels as f64
        };
        let series = by_figure
            .entry((primary.figure.clone(), primary.higher_is_better))
            .or_default();
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push((x, e.median)),
            None => series.push(Series {
                label,
                points: vec![(x, e.median)],
                reference: false,
            }),
        }
    }
    by_figure
        .into_iter()
        .map(|((fig, higher), mut series)| {
            for s in &mut series {
                s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            LineChart {
                title: format!(
                    "{fig} vs {x_axis} ({} is better; medians over the runs)",
                    if higher { "higher" } else { "lower" }
                ),
                x_label: if x_axis == "size" {
                    "message size (bytes)".into()
                } else {
                    "channels".into()
                },
                y_label: fig,
                x_scale: Scale::Log,
                y_scale: Scale::Log,
                series,
            }
        })
        .collect()
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
    let tables: Vec<(&str, &Table)> = written
        .iter()
        .filter_map(|w| match w {
            Written::Table { stem, table } => Some((stem.as_str(), table)),
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
        nav.toc { ul {
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
                    (table::table(&Table { title: String::new(), ..(*t).clone() }, &format!("t-{stem}"), None))
                    p.note { code { (stem) ".md" } ", " code { (stem) ".csv" } }
                }
            }
        }
        @if !plots.is_empty() {
            section id="plots" {
                h2 { "Plots" }
                p.note { "Hover a point for its exact value. Dashed lines are reference figures quoted from elsewhere; solid lines were measured here." }
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
/// history's trend of one point across runs).
pub fn chart_page(title: &str, notes: &[String], chart: &LineChart, t: &Table) -> String {
    let body = html! {
        header.context {
            h1 { (title) }
            @for n in notes { p.note { (n) } }
        }
        section id="plots" { (chart::line_chart(chart)) }
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

#[cfg(test)]
mod browser_tests;
