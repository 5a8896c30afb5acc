//! The page of `compare --export-html`: NEW against BASE, point by point, with what
//! the terminal's comparison says ([`crate::compare::render_compare`]) and what it
//! rests on.
//!
//! For each matched point: both sides' means, the change of the means, its bootstrap
//! interval at the level the test is held to, Welch's p-value and the verdict, under
//! the same threshold as the terminal (all from [`Comparison`]); then two charts: each
//! side's mean with the spread of its runs (min–max), and the change with its
//! interval. The cautions and notes of the terminal's comparison follow the table.

use super::layout::page;
use super::words::figure_name;
use super::{chart, table};
use crate::chart::{Axis, Chart, Interval, Intervals, Line, Point, Scale, Unit};
use crate::study::Table;
use maud::{Markup, html};
use std::collections::{BTreeMap, BTreeSet};
use xferbench_lab::compare::{Comparison, PointComparison};
use xferbench_lab::names;
use xferbench_lab::params::{describe, same_point};
use xferbench_lab::result::{PointResult, ResultDoc};

/// One side of the comparison: the result as the user named it (a file, a study
/// folder, a run of the history) and its document.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// How the user named it (`base.json`, `run 7`).
    pub label: &'a str,
    /// Its result document.
    pub doc: &'a ResultDoc,
}

/// The verdict as a reader asks it: slower, faster or no change, and why.
pub fn verdict_words(p: &PointComparison, threshold: f64) -> String {
    let beyond = format!("{:.1} %", threshold * 100.0);
    match p.verdict.as_str() {
        "regression" => format!("slower (regression beyond {beyond})"),
        "improvement" => format!("faster (improvement beyond {beyond})"),
        "within threshold" => format!("no change (within {beyond})"),
        "not significant" => "no change (not significant)".into(),
        other => other.into(),
    }
}

/// `+1.2 %`.
fn percent(v: f64) -> String {
    format!("{:+.1} %", v * 100.0)
}

/// The table of the comparison: one row per matched point, numbered as the charts'
/// points are when no parameter gives them an axis.
pub fn points_table(c: &Comparison) -> Table {
    let normalised = c.points.iter().any(|p| p.normalised.is_some());
    let level = c
        .points
        .iter()
        .find_map(|p| p.change_interval.map(|i| i.level));
    let mut headers: Vec<String> = [
        "#",
        "point",
        "figure",
        "BASE mean",
        "NEW mean",
        "change of means",
    ]
    .map(String::from)
    .to_vec();
    headers.push(match level {
        Some(l) => format!("interval ({} %)", crate::format::level(l)),
        None => "interval".into(),
    });
    headers.extend(["p (Welch)".into(), "verdict".into()]);
    if normalised {
        headers.extend(["machine's limit moved".into(), "change vs limit".into()]);
    }
    let rows = c
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let unit = Unit::of_figure(&p.figure);
            let mut row = vec![
                (i + 1).to_string(),
                describe(&p.params),
                figure_name(&p.figure),
                unit.value(p.base),
                unit.value(p.new),
                percent(p.change),
                p.change_interval.map_or("-".into(), |r| {
                    format!("{} to {}", percent(r.low), percent(r.high))
                }),
                p.p_value.map_or("-".into(), |p| format!("{p:.3}")),
                verdict_words(p, c.threshold),
            ];
            if normalised {
                match &p.normalised {
                    Some(n) => row.extend([
                        format!("{} ({})", percent(n.machine_change), n.limit),
                        percent(n.change),
                    ]),
                    None => row.extend(["-".into(), "-".into()]),
                }
            }
            row
        })
        .collect();
    Table {
        title: String::new(),
        headers,
        rows,
    }
}

/// Where a compared point (its number in the table from 0, and itself) sits on the
/// horizontal axis.
type XOf = Box<dyn Fn(usize, &PointComparison) -> f64>;

/// The horizontal axis of the charts: message size or channels when the points
/// differ in them, else the table's point number; and the parameters that name the
/// lines (those that differ otherwise, the transport first).
fn axis(c: &Comparison) -> (Axis, XOf, Vec<String>) {
    let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in &c.points {
        for (k, v) in &p.params {
            values.entry(k).or_default().insert(v);
        }
    }
    let varies = |k: &str| values.get(k).is_some_and(|v| v.len() > 1);
    let number = |k: &'static str| {
        move |_: usize, p: &PointComparison| {
            p.params
                .get(k)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(f64::NAN)
        }
    };
    let parsed = |k: &str| {
        c.points
            .iter()
            .all(|p| p.params.get(k).is_some_and(|v| v.parse::<f64>().is_ok()))
    };
    let (x_key, axis, x): (Option<&str>, Axis, XOf) = if varies(names::SIZE) && parsed(names::SIZE)
    {
        (
            Some(names::SIZE),
            Axis::new("message size", Unit::Bytes, Scale::Log),
            Box::new(number(names::SIZE)),
        )
    } else if varies(names::CHANNELS) && parsed(names::CHANNELS) {
        (
            Some(names::CHANNELS),
            Axis::new("channels", Unit::Number, Scale::Log),
            Box::new(number(names::CHANNELS)),
        )
    } else {
        (
            None,
            Axis::new("point (# of the table)", Unit::Number, Scale::Linear),
            Box::new(|i, _| (i + 1) as f64),
        )
    };
    let mut varying: Vec<String> = values
        .iter()
        .filter(|(k, v)| {
            v.len() > 1 && Some(**k) != x_key && **k != names::WORKLOAD && x_key.is_some()
        })
        .map(|(k, _)| k.to_string())
        .collect();
    varying.sort_by_key(|k| k != names::TRANSPORT);
    (axis, x, varying)
}

fn label_of(p: &PointComparison, varying: &[String]) -> String {
    varying
        .iter()
        .map(|k| {
            let v = p.params.get(k).map_or("-", String::as_str);
            if k == names::TRANSPORT {
                v.to_string()
            } else {
                format!("{k}={v}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A side's mean of `figure` with the min–max of its runs.
fn side_point(doc: &ResultDoc, p: &PointComparison, x: f64) -> Option<Point> {
    let found: &PointResult = doc
        .points
        .iter()
        .find(|d| same_point(&d.params, &p.params))?;
    let runs = crate::format::run_values(found, &p.figure);
    let mean = xferbench_probes::stats::mean(&runs)?;
    let (lo, hi) = runs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
    Some(Point {
        x,
        y: mean,
        interval: (runs.len() >= 2).then_some(Interval {
            low: lo,
            high: hi,
            level: None,
        }),
    })
}

/// The charts of the comparison, per compared figure: BASE and NEW (each mean with the
/// min–max of its runs) and the change (with its interval).
pub fn charts(c: &Comparison, base: &ResultDoc, new: &ResultDoc) -> Vec<Chart> {
    let (x_axis, x_of, varying) = axis(c);
    let mut figures: Vec<&str> = Vec::new();
    for p in &c.points {
        if !figures.contains(&p.figure.as_str()) {
            figures.push(&p.figure);
        }
    }
    let mut out = Vec::new();
    for fig in figures {
        let name = figure_name(fig);
        let mut sides: Vec<Line> = Vec::new();
        let mut change: Vec<Line> = Vec::new();
        for (i, p) in c.points.iter().enumerate().filter(|(_, p)| p.figure == fig) {
            let x = x_of(i, p);
            let label = label_of(p, &varying);
            let named = |side: &str| {
                if label.is_empty() {
                    side.to_string()
                } else {
                    format!("{side} {label}")
                }
            };
            for (side, doc) in [("BASE", base), ("NEW", new)] {
                if let Some(point) = side_point(doc, p, x) {
                    Line::push_to(&mut sides, named(side), point);
                }
            }
            Line::push_to(
                &mut change,
                label.clone(),
                Point {
                    x,
                    y: p.change * 100.0,
                    interval: p.change_interval.map(|r| Interval {
                        low: r.low * 100.0,
                        high: r.high * 100.0,
                        level: Some(r.level),
                    }),
                },
            );
        }
        for l in sides.iter_mut().chain(change.iter_mut()) {
            l.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        }
        let y_scale = if x_axis.unit == Unit::Bytes {
            Scale::Log
        } else {
            Scale::Linear
        };
        out.push(Chart {
            title: format!("{}: BASE and NEW", super::capitalised(&name)),
            x: x_axis.clone(),
            y: Axis::new(name.clone(), Unit::of_figure(fig), y_scale),
            lines: sides,
            intervals: Intervals::Bars,
            markers: Vec::new(),
        });
        out.push(Chart {
            title: format!("Change of the mean {name}, NEW against BASE"),
            x: x_axis.clone(),
            y: Axis::new("change (%)", Unit::Number, Scale::Linear),
            lines: change,
            intervals: Intervals::Bars,
            markers: Vec::new(),
        });
    }
    out
}

fn side_line(s: &Side<'_>) -> Markup {
    let c = &s.doc.context;
    html! {
        code { (s.label) } ": " (c.settings.workload) ", " (s.doc.points.len()) " point(s), "
        (crate::format::runs(c.settings.runs)) " each; " (c.hostname) ", " (c.start_time)
        " (" (c.tool) " " (c.version) ")"
    }
}

/// The page of a comparison of `new` against `base` (see the module doc).
pub fn compare_page(c: &Comparison, base: Side<'_>, new: Side<'_>) -> String {
    let workload = &base.doc.context.settings.workload;
    let title = format!("xferbench compare: {workload}, NEW against BASE");
    let t = points_table(c);
    let charts = charts(c, base.doc, new.doc);
    let alpha = xferbench_lab::ab::ALPHA;
    let level = c
        .points
        .iter()
        .find_map(|p| p.change_interval.map(|i| i.level));
    let regression_notes: Vec<String> = c
        .points
        .iter()
        .filter_map(|p| {
            let n = p.normalised.as_ref()?;
            (p.verdict == "regression" && n.change.abs() <= c.threshold).then(|| {
                format!(
                    "{}: the machine was slower, not the code: the {} moved by {} between the runs, and held against it the change is {}",
                    describe(&p.params),
                    n.limit,
                    percent(n.machine_change),
                    percent(n.change)
                )
            })
        })
        .collect();
    let body = html! {
        header.context {
            h1 { (title) }
            dl {
                dt { "BASE" } dd { (side_line(&base)) }
                dt { "NEW" } dd { (side_line(&new)) }
                dt { "Verdict" } dd {
                    (c.regressions) " regression(s) beyond " (format!("{:.1} %", c.threshold * 100.0))
                    " (significant at p < " (alpha) ") in " (c.points.len()) " compared point(s)"
                }
            }
            @if !c.cautions.is_empty() {
                ul.warnings { @for s in &c.cautions { li { "Caution: " (s) } } }
            }
        }
        nav.toc aria-label="contents" { ul {
            li { a href="#results" { "Points" } }
            @if !charts.is_empty() { li { a href="#plots" { "Plots" } } }
        } }
        section id="results" {
            h2 { "Points" }
            p.note {
                "Each point's primary figure, compared by the means of its runs. "
                "Change: NEW's mean over BASE's, less one"
                @if let Some(l) = level {
                    "; its interval: the " (crate::format::level(l)) " % percentile bootstrap of that ratio (each side's runs resampled on their own)"
                }
                "; p: Welch's t-test on the runs. A change is slower or faster when it is significant (p < "
                (alpha) ") and beyond the threshold of " (format!("{:.1} %", c.threshold * 100.0))
                "; otherwise no change. Click a column header to sort."
            }
            (table::table(&t, "compare-table", None))
            @if !(regression_notes.is_empty() && c.plugin_builds.is_empty() && c.only_in_base.is_empty() && c.only_in_new.is_empty()) {
                ul.notes {
                    @for s in &regression_notes { li { "Note: " (s) } }
                    @for s in &c.plugin_builds { li { "Note: " (s) } }
                    @for s in &c.only_in_base { li { "Only in BASE: " (s) } }
                    @for s in &c.only_in_new { li { "Only in NEW: " (s) } }
                }
            }
        }
        @if !charts.is_empty() {
            section id="plots" {
                h2 { "Plots" }
                @for (i, ch) in charts.iter().enumerate() {
                    @if i % 2 == 0 {
                        (chart::figure(ch, true, Some("The mean of each side's runs; bars: the smallest to the largest run. Hover a point for its values.")))
                    } @else {
                        (chart::figure(ch, true, Some(&match level {
                            Some(l) => format!("The change of the means in percent; bars: its {} % bootstrap interval. Above zero NEW's figure is higher.", crate::format::level(l)),
                            None => "The change of the means in percent. Above zero NEW's figure is higher.".to_string(),
                        })))
                    }
                }
            }
        }
    };
    page(&title, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;
    use xferbench_lab::compare::compare_docs;

    fn scaled(doc: &ResultDoc, by: f64) -> ResultDoc {
        let mut d = doc.clone();
        for p in &mut d.points {
            let fig = p.primary().figure.clone();
            for r in &mut p.runs {
                if let Some(v) = r.figures.get_mut(&fig) {
                    *v *= by;
                }
            }
        }
        d
    }

    #[test]
    fn every_point_has_its_change_interval_p_value_and_verdict() {
        let base = fixture::stream_doc();
        let new = scaled(&base, 0.8);
        let c = compare_docs(&base, &new, 0.05).unwrap();
        let t = points_table(&c);
        assert_eq!(t.rows.len(), base.points.len());
        assert_eq!(t.headers[6], "interval (99 %)");
        for (row, p) in t.rows.iter().zip(&c.points) {
            assert_eq!(row[5], "-20.0 %", "{row:?}");
            let i = p.change_interval.unwrap();
            assert!(i.low <= p.change && p.change <= i.high, "{i:?}");
            assert_eq!(row[6], format!("{} to {}", percent(i.low), percent(i.high)));
            assert_eq!(row[7], format!("{:.3}", p.p_value.unwrap()));
            assert_eq!(row[8], verdict_words(p, 0.05));
        }
        let html = compare_page(
            &c,
            Side {
                label: "base <1>.json",
                doc: &base,
            },
            Side {
                label: "new.json",
                doc: &new,
            },
        );
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("id=\"compare-table\""));
        assert!(html.contains("base &lt;1&gt;.json") && !html.contains("base <1>"));
        // Two charts per figure: the sides and the change.
        assert_eq!(html.matches("<figure class=\"chart\"").count(), 2, "{html}");
        assert!(html.contains("BASE") && html.contains("NEW"));
        assert!(!html.contains("<link") && !html.contains("src="));
    }

    #[test]
    fn the_verdict_says_slower_faster_or_no_change() {
        let base = fixture::stream_doc();
        let mut p = compare_docs(&base, &base, 0.05).unwrap().points[0].clone();
        for (v, words) in [
            ("regression", "slower (regression beyond 5.0 %)"),
            ("improvement", "faster (improvement beyond 5.0 %)"),
            ("within threshold", "no change (within 5.0 %)"),
            ("not significant", "no change (not significant)"),
        ] {
            p.verdict = v.into();
            assert_eq!(verdict_words(&p, 0.05), words);
        }
    }

    #[test]
    fn the_sides_chart_draws_each_mean_with_the_spread_of_its_runs() {
        let base = fixture::stream_doc();
        let new = scaled(&base, 1.1);
        let c = compare_docs(&base, &new, 0.05).unwrap();
        let charts = charts(&c, &base, &new);
        let sides = &charts[0];
        assert!(sides.lines.iter().any(|l| l.label.starts_with("BASE")));
        assert!(sides.lines.iter().any(|l| l.label.starts_with("NEW")));
        for l in &sides.lines {
            for p in &l.points {
                let i = p.interval.expect("several runs give a spread");
                assert!(i.low <= p.y && p.y <= i.high);
            }
        }
        let change = &charts[1];
        for l in &change.lines {
            for p in &l.points {
                assert!((p.y - 10.0).abs() < 1e-6, "{p:?}");
                assert!(p.interval.is_some());
            }
        }
    }
}
