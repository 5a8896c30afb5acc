//! The charts and table of `load` points (open-loop messages at an offered rate):
//! the latency percentiles against the offered rate with each curve's knee marked,
//! the achieved rate against the offered, and the knees.
//!
//! A curve is the points that differ only in their offered rate (as
//! [`xferbench_lab::knee`] defines it); its line labels name the other parameters
//! that vary across the document, as the run's other charts do.

use super::chart::RunChart;
use super::point::{self, line_label};
use super::words::varying;
use crate::chart::{Axis, Chart, Intervals, Line, Marker, Point, Scale, Unit};
use crate::format;
use crate::study::Table;
use std::collections::BTreeMap;
use xferbench_lab::knee::{P99_GROWTH, SUSTAINED};
use xferbench_lab::result::Knee;
use xferbench_lab::result::{PointResult, ResultDoc, figure};
use xferbench_lab::workload::load::RATE;

/// The latency percentiles drawn against the offered rate.
pub const PERCENTILES: [(&str, &str); 4] = [
    ("p50", figure::LATENCY[0]),
    ("p99", figure::LATENCY[2]),
    ("p99.9", figure::LATENCY[3]),
    ("max", figure::LATENCY[4]),
];

/// The points of one curve, by offered rate.
struct Curve<'a> {
    /// The points' parameters, the rate left out (a [`Knee`]'s `params`).
    params: BTreeMap<String, String>,
    /// The parameters that tell it from the other curves (empty for one curve).
    label: String,
    /// Its points with their offered rates, lowest first.
    points: Vec<(f64, &'a PointResult)>,
}

/// A figure's median.
fn median(p: &PointResult, name: &str) -> Option<f64> {
    p.summary.get(name).map(|e| e.median)
}

/// The curves of `doc`'s `load` points, in the order they first appear.
fn curves(doc: &ResultDoc) -> Vec<Curve<'_>> {
    let varying = varying(doc, RATE.name());
    let mut curves: Vec<Curve> = Vec::new();
    for p in &doc.points {
        let Some(offered) = median(p, figure::OFFERED_RATE) else {
            continue;
        };
        let mut params = p.params.clone();
        params.remove(RATE.name());
        match curves.iter_mut().find(|c| c.params == params) {
            Some(c) => c.points.push((offered, p)),
            None => curves.push(Curve {
                params,
                label: line_label(p, &varying),
                points: vec![(offered, p)],
            }),
        }
    }
    for c in &mut curves {
        c.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    curves
}

/// The knee of each curve that has one, as a marker: `knee 1.00 M/s`, with the
/// curve's name when there are several (`knee 1.00 M/s: shm`).
fn knee_markers(doc: &ResultDoc, curves: &[Curve]) -> Vec<Marker> {
    curves
        .iter()
        .filter_map(|c| {
            let k = doc.knees.iter().find(|k| k.params == c.params)?;
            let x = k.knee_per_s?;
            let mut label = format!("knee {}", format::rate_count(x));
            if !c.label.is_empty() {
                label = format!("{label}: {}", c.label);
            }
            Some(Marker { x, label })
        })
        .collect()
}

/// Each curve's floor as a dashed level line across its rates: the one-way floor
/// its points are held against (half the round-trip floor of the transport's
/// ping-pong, [`xferbench_lab::ratio`]), the median over its points. Curves
/// with the same floor share one line.
fn floor_lines(curves: &[Curve]) -> Vec<Line> {
    let mut lines: Vec<(String, f64, Line)> = Vec::new();
    for c in curves {
        let floors: Vec<(&str, f64)> = c
            .points
            .iter()
            .filter_map(|(_, p)| p.limit.as_ref())
            .filter(|l| !l.suspect)
            .map(|l| (l.limit.as_str(), l.limit_value))
            .collect();
        let Some(&(name, _)) = floors.first() else {
            continue;
        };
        let Some(level) = xferbench_probes::stats::Estimate::from_values(
            floors.iter().filter(|(n, _)| *n == name).map(|(_, v)| *v),
        ) else {
            continue;
        };
        let (lo, hi) = (c.points[0].0, c.points[c.points.len() - 1].0);
        match lines
            .iter_mut()
            .find(|(n, v, _)| n == name && (v - level.median).abs() <= 1e-9 * v.abs())
        {
            Some((_, _, l)) => {
                let (first, last) = (l.points[0].x.min(lo), l.points[1].x.max(hi));
                l.points = vec![
                    Point::new(first, level.median),
                    Point::new(last, level.median),
                ];
                l.label = format!("floor: {name}");
            }
            None => {
                let label = if c.label.is_empty() {
                    format!("floor: {name}")
                } else {
                    format!("{} — floor: {name}", c.label)
                };
                lines.push((
                    name.to_string(),
                    level.median,
                    Line {
                        label,
                        points: vec![Point::new(lo, level.median), Point::new(hi, level.median)],
                        reference: true,
                    },
                ));
            }
        }
    }
    lines.into_iter().map(|(_, _, l)| l).collect()
}

/// A line of one figure against the offered rate.
fn line(label: String, c: &Curve, name: &str) -> Line {
    Line {
        label,
        points: c
            .points
            .iter()
            .filter_map(|(x, p)| Some(Point::new(*x, median(p, name)?)))
            .collect(),
        reference: false,
    }
}

fn offered_axis() -> Axis {
    Axis::new("offered rate", Unit::PerSecond, Scale::Log)
}

/// The charts of a document whose `load` points were measured at more than one
/// offered rate: latency percentiles against the offered rate and the achieved rate
/// against the offered, both with each curve's knee marked. `None` for any other
/// document, which gets the usual charts.
pub fn charts(doc: &ResultDoc) -> Option<Vec<RunChart>> {
    let curves = curves(doc);
    if !curves.iter().any(|c| c.points.len() > 1) {
        return None;
    }
    let markers = knee_markers(doc, &curves);
    let runs = doc.context.settings.runs;
    let knees = if markers.is_empty() {
        String::new()
    } else {
        format!(
            " Dotted vertical lines: each curve's knee, the highest offered rate it sustained (achieved at least {} % of offered, p99 at most {P99_GROWTH}× the p99 at its lowest rate).",
            format::level(SUSTAINED)
        )
    };
    let latency = Chart {
        title: "Latency vs offered rate".into(),
        x: offered_axis(),
        y: Axis::new("latency", Unit::Nanoseconds, Scale::Log),
        lines: curves
            .iter()
            .flat_map(|c| {
                PERCENTILES.iter().map(move |(pct, name)| {
                    let label = if c.label.is_empty() {
                        pct.to_string()
                    } else {
                        format!("{} — {pct}", c.label)
                    };
                    line(label, c, name)
                })
            })
            .filter(|l| !l.points.is_empty())
            .chain(floor_lines(&curves))
            .collect(),
        intervals: Intervals::Bars,
        markers: markers.clone(),
    };
    let (lo, hi) = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|(x, _)| *x))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    let mut achieved_lines: Vec<Line> = curves
        .iter()
        .map(|c| {
            let label = if c.label.is_empty() {
                "achieved".into()
            } else {
                c.label.clone()
            };
            line(label, c, figure::MESSAGE_RATE)
        })
        .collect();
    achieved_lines.push(Line {
        label: "achieved = offered".into(),
        points: vec![Point::new(lo, lo), Point::new(hi, hi)],
        reference: true,
    });
    let achieved = Chart {
        title: "Achieved vs offered rate".into(),
        x: offered_axis(),
        y: Axis::new("achieved rate", Unit::PerSecond, Scale::Log),
        lines: achieved_lines,
        intervals: Intervals::Bars,
        markers,
    };
    Some(vec![
        RunChart::One {
            chart: latency,
            note: format!(
                "Medians of {} at each offered rate; latency from each message's intended send time, so a sender held up by a stall counts the delay; both axes logarithmic. Dashed: the one-way floor each curve's points are held against (half its transport's round-trip floor, measured on this machine).{knees} Lower is better. Hover a point for its values.",
                format::runs(runs)
            ),
        },
        RunChart::One {
            chart: achieved,
            note: format!(
                "Medians of {}; a curve below the dashed diagonal delivered less than it was offered.{knees} Hover a point for its values.",
                format::runs(runs)
            ),
        },
    ])
}

/// Knees as a table: the curve, its knee, the lowest rate not sustained, the
/// reference it was held against and how it was found; `None` without knees.
pub fn knees_table(knees: &[Knee]) -> Option<Table> {
    let rows: Vec<Vec<String>> = knees
        .iter()
        .map(|k| {
            let method = match k.seconds {
                Some(s) => format!("{}, {} points in {s:.1} s", k.method, k.points),
                None => format!("{}, {} points", k.method, k.points),
            };
            vec![
                point::describe_params(&k.params),
                k.knee_per_s
                    .map_or_else(|| "below the lowest rate".into(), format::rate_count),
                k.above_per_s
                    .map_or_else(|| "none measured".into(), format::rate_count),
                format::rate_list(&k.unsustained_below_per_s).unwrap_or_else(|| "none".into()),
                format!(
                    "{} at {}",
                    format::nanos(k.low_p99_ns),
                    format::rate_count(k.low_rate_per_s)
                ),
                method,
            ]
        })
        .collect();
    (!rows.is_empty()).then(|| Table {
        title: String::new(),
        headers: [
            "curve",
            "knee",
            "first rate not sustained",
            "not sustained below the knee",
            "reference p99 (at the lowest rate)",
            "method",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    })
}

/// What a knee is, for the note under the table.
pub fn knees_note() -> String {
    format!(
        "A curve is the points that differ only in their offered rate. Its knee is the highest offered rate it sustained (achieved at least {} % of offered, p99 at most {P99_GROWTH}× the reference p99, the p99 at its lowest rate); a rate below the knee that was not sustained (one stall of the machine, or a trough in the curve) is named beside it.",
        format::level(SUSTAINED)
    )
}
