//! The study writers' chart: a [`LineChart`] is plain data (title, axis labels, scales,
//! one [`Series`] per line), built from finished results; [`LineChart::to_svg`] draws
//! it as a standalone SVG file with the reports' one chart engine ([`crate::chart`]),
//! which also draws it inline in the study's `report.html`.
//!
//! Each series is a line with a marker at every point, in a colour-blind-safe palette,
//! with a legend; reference series are dashed; a point with an interval (the interval
//! of a median of several runs, [`Series::median_interval`]) has it as an error bar. Logarithmic axes drop non-positive
//! values (they have no place on a log scale) rather than failing; an axis with one
//! distinct value is widened so the point sits in the middle. A unit in parentheses at
//! the end of an axis label (`packet size (bytes)`, `mean time per run (ms)`) is the
//! axis's unit: its ticks are written in it (`64 B`, `1 KiB`; `10 ms`). Text is SVG
//! `<text>`, so no font files are needed.

use crate::chart::{Axis, Chart, Interval, Intervals, Line, Point};
use anyhow::Result;

pub use crate::chart::Scale;

/// One line of a chart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Legend entry.
    pub label: String,
    /// `(x, y)` points, drawn in the given order.
    pub points: Vec<(f64, f64)>,
    /// The interval around each point's `y`, in the order of `points` (the interval
    /// of a median of several runs), drawn as an error bar; empty, or `None` for a
    /// point, where there is none (a lone run, a figure quoted from elsewhere).
    pub intervals: Vec<Option<Interval>>,
    /// A reference series (figures quoted from elsewhere, such as a seed's hardware),
    /// drawn dashed; measured series are drawn solid.
    pub reference: bool,
}

impl Series {
    /// The interval a study plot draws around a median of several runs: the
    /// order-statistic interval of the median with its level, as the run page's
    /// charts draw it; `None` for a lone run.
    pub fn median_interval(e: &xferbench_probes::stats::Estimate) -> Option<Interval> {
        (e.n >= 2).then_some(Interval {
            low: e.ci_low,
            high: e.ci_high,
            level: Some(e.ci_level),
        })
    }

    /// Labels starting with this mark a reference series (a published figure, not a
    /// measurement); it is drawn dashed.
    pub const REFERENCE_PREFIX: &'static str = "seed";

    /// Whether this is a reference series (drawn dashed).
    pub fn is_reference(&self) -> bool {
        self.label.starts_with(Self::REFERENCE_PREFIX)
    }
}

/// A line chart: one line per series over shared axes.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Caption above the plot.
    pub title: String,
    /// Horizontal axis description, with its unit.
    pub x_label: String,
    /// Vertical axis description, with its unit.
    pub y_label: String,
    /// Horizontal scale.
    pub x_scale: Scale,
    /// Vertical scale.
    pub y_scale: Scale,
    /// The lines.
    pub series: Vec<Series>,
}

/// Okabe–Ito palette: distinguishable with the common colour-vision deficiencies
/// (the light colours of [`crate::chart::THEME`]).
pub const PALETTE: [&str; 8] = [
    "#0072b2", "#e69f00", "#009e73", "#d55e00", "#56b4e9", "#cc79a7", "#b8a800", "#000000",
];

impl LineChart {
    /// Renders the chart as a standalone SVG document (never fails; the `Result` is
    /// kept for callers).
    pub fn to_svg(&self) -> Result<String> {
        Ok(crate::chart::svg::standalone(&Chart::from(self)))
    }
}

impl From<&LineChart> for Chart {
    /// A unit in parentheses at the end of an axis label (`packet size (bytes)`)
    /// becomes the axis's unit.
    fn from(c: &LineChart) -> Chart {
        Chart {
            title: c.title.clone(),
            x: Axis::from_label(&c.x_label, c.x_scale),
            y: Axis::from_label(&c.y_label, c.y_scale),
            lines: c
                .series
                .iter()
                .map(|s| Line {
                    label: s.label.clone(),
                    points: s
                        .points
                        .iter()
                        .enumerate()
                        .map(|(i, &(x, y))| Point {
                            x,
                            y,
                            interval: s.intervals.get(i).copied().flatten(),
                        })
                        .collect(),
                    reference: s.reference || s.is_reference(),
                })
                .collect(),
            intervals: Intervals::Bars,
            markers: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(x_scale: Scale, y_scale: Scale, series: Vec<Series>) -> LineChart {
        LineChart {
            title: "Bandwidth per channel".into(),
            x_label: "packet size (bytes)".into(),
            y_label: "bandwidth (B/s)".into(),
            x_scale,
            y_scale,
            series,
        }
    }

    fn line(label: &str, points: &[(f64, f64)]) -> Series {
        Series {
            intervals: Vec::new(),
            label: label.into(),
            points: points.to_vec(),
            reference: false,
        }
    }

    #[test]
    fn every_scale_combination_renders_labels_and_lines() {
        let series = vec![
            line("1 channel", &[(1.0, 2e5), (16.0, 3e6), (496.0, 9e7)]),
            line("8 channels", &[(1.0, 1e5), (16.0, 1.5e6), (496.0, 4e7)]),
        ];
        for xs in [Scale::Linear, Scale::Log] {
            for ys in [Scale::Linear, Scale::Log] {
                let svg = chart(xs, ys, series.clone()).to_svg().unwrap();
                assert!(svg.starts_with("<svg"), "{xs:?}/{ys:?}");
                assert!(svg.contains("Bandwidth per channel"));
                // The unit in parentheses moved to the ticks.
                assert!(svg.contains(">packet size<") && svg.contains(">bandwidth<"));
                assert!(svg.contains("B/s<") && svg.contains(" B<"), "{xs:?}/{ys:?}");
                assert!(svg.contains(">1 channel<") && svg.contains(">8 channels<"));
                // One polyline per series, one swatch per legend entry.
                assert_eq!(svg.matches("<polyline").count(), 2, "{xs:?}/{ys:?}");
                assert_eq!(svg.matches("class=\"swatch\"").count(), 2);
                assert_eq!(svg.matches("class=\"dot\"").count(), 6, "{xs:?}/{ys:?}");
            }
        }
    }

    #[test]
    fn a_median_with_its_interval_is_drawn_with_an_error_bar() {
        let e = xferbench_probes::stats::Estimate::from_values([9.0, 10.0, 11.0]).unwrap();
        let lone = xferbench_probes::stats::Estimate::from_values([10.0]).unwrap();
        assert_eq!(Series::median_interval(&lone), None);
        let mut s = line("measured", &[(1.0, 10.0), (2.0, 12.0)]);
        s.intervals = vec![Series::median_interval(&e), None];
        let c = chart(Scale::Log, Scale::Log, vec![s]);
        let drawn = Chart::from(&c);
        assert_eq!(
            drawn.lines[0].points[0].interval,
            Some(Interval {
                low: 9.0,
                high: 11.0,
                level: Some(0.75)
            })
        );
        assert_eq!(drawn.lines[0].points[1].interval, None);
        assert_eq!(c.to_svg().unwrap().matches("class=\"bar\"").count(), 1);
    }

    #[test]
    fn log_axes_leave_out_non_positive_values() {
        let c = chart(
            Scale::Log,
            Scale::Log,
            vec![line(
                "a",
                &[(0.0, 5.0), (1.0, 0.0), (2.0, 4.0), (4.0, f64::NAN)],
            )],
        );
        let svg = c.to_svg().unwrap();
        assert_eq!(svg.matches("class=\"dot\"").count(), 1);
    }

    #[test]
    fn empty_and_single_point_charts_still_render() {
        assert!(chart(Scale::Log, Scale::Linear, vec![]).to_svg().is_ok());
        let one = chart(Scale::Linear, Scale::Log, vec![line("x", &[(3.0, 3.0)])]);
        assert_eq!(one.to_svg().unwrap().matches("class=\"dot\"").count(), 1);
    }

    #[test]
    fn seed_series_are_dashed_references() {
        let mut seed = line("seed: SC598", &[(1.0, 1.0), (2.0, 2.0)]);
        let svg = chart(Scale::Log, Scale::Log, vec![seed.clone()])
            .to_svg()
            .unwrap();
        assert!(svg.contains("series s0 reference"));
        seed.label = "ours".into();
        seed.reference = true;
        let svg = chart(Scale::Log, Scale::Log, vec![seed]).to_svg().unwrap();
        assert!(svg.contains("series s0 reference"));
    }
}
