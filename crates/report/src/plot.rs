//! SVG line charts for study folders, drawn with `plotters`' SVG backend.
//!
//! A [`LineChart`] is plain data (title, axis labels, scales, one [`Series`] per line),
//! so a study builds it from finished results and the rendering stays here. Each series
//! is drawn as a line with a marker at every point, in a colour-blind-safe palette, with
//! a legend. Logarithmic axes drop non-positive values (they have no place on a log
//! scale) rather than failing; an axis with one distinct value is widened so the point
//! sits in the middle. Text is emitted as SVG `<text>`, so no font files are needed.

use anyhow::{Context as _, Result};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

/// One line of a chart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Legend entry.
    pub label: String,
    /// `(x, y)` points, drawn in the given order.
    pub points: Vec<(f64, f64)>,
    /// A reference series (figures quoted from elsewhere, such as a seed's hardware),
    /// drawn dashed; measured series are drawn solid.
    pub reference: bool,
}

impl Series {
    /// Labels starting with this mark a reference series (a published figure, not a
    /// measurement); it is drawn dashed.
    pub const REFERENCE_PREFIX: &'static str = "seed";

    /// Whether this is a reference series (drawn dashed).
    pub fn is_reference(&self) -> bool {
        self.label.starts_with(Self::REFERENCE_PREFIX)
    }
}

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Evenly spaced powers of ten; non-positive values are left out.
    Log,
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

/// Okabe–Ito palette: distinguishable with the common colour-vision deficiencies.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(86, 180, 233),
    RGBColor(204, 121, 167),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

const WIDTH: u32 = 900;
const HEIGHT: u32 = 560;

impl LineChart {
    /// Renders the chart as a standalone SVG document.
    pub fn to_svg(&self) -> Result<String> {
        let series: Vec<Series> = self
            .series
            .iter()
            .map(|s| Series {
                label: s.label.clone(),
                reference: s.reference,
                points: s
                    .points
                    .iter()
                    .copied()
                    .filter(|&(x, y)| {
                        x.is_finite()
                            && y.is_finite()
                            && (self.x_scale == Scale::Linear || x > 0.0)
                            && (self.y_scale == Scale::Linear || y > 0.0)
                    })
                    .collect(),
            })
            .collect();
        let xs = axis_range(
            series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
            self.x_scale,
        );
        let ys = axis_range(
            series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
            self.y_scale,
        );
        let mut svg = String::new();
        let (sx, sy) = (self.x_scale, self.y_scale);
        match (sx, sy) {
            (Scale::Linear, Scale::Linear) => {
                self.draw(&series, (xs.0..xs.1, sx), (ys.0..ys.1, sy), &mut svg)
            }
            (Scale::Linear, Scale::Log) => self.draw(
                &series,
                (xs.0..xs.1, sx),
                ((ys.0..ys.1).log_scale(), sy),
                &mut svg,
            ),
            (Scale::Log, Scale::Linear) => self.draw(
                &series,
                ((xs.0..xs.1).log_scale(), sx),
                (ys.0..ys.1, sy),
                &mut svg,
            ),
            (Scale::Log, Scale::Log) => self.draw(
                &series,
                ((xs.0..xs.1).log_scale(), sx),
                ((ys.0..ys.1).log_scale(), sy),
                &mut svg,
            ),
        }
        .with_context(|| format!("drawing the chart {:?}", self.title))?;
        Ok(svg)
    }

    fn draw<X, Y>(
        &self,
        series: &[Series],
        (x, xs): (X, Scale),
        (y, ys): (Y, Scale),
        svg: &mut String,
    ) -> Result<()>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let root = SVGBackend::with_string(svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(x, y)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .x_label_formatter(&|v| axis_number(*v))
            .y_label_formatter(&|v| axis_number(*v))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(plot_error)?;
        for (i, s) in series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            let style = ShapeStyle::from(colour).stroke_width(2);
            let drawn = if s.reference || s.is_reference() {
                chart.draw_series(DashedLineSeries::new(s.points.iter().copied(), 8, 5, style))
            } else {
                chart.draw_series(LineSeries::new(s.points.iter().copied(), style))
            };
            let reference = s.reference || s.is_reference();
            drawn
                .map_err(plot_error)?
                .label(&s.label)
                .legend(move |(x, y)| {
                    // A reference series has two dashes in the legend, as in the plot.
                    let (first, second) = if reference {
                        (8, (12, 20))
                    } else {
                        (20, (20, 20))
                    };
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (first, 0)], colour.stroke_width(2))
                        + PathElement::new(
                            vec![(second.0, 0), (second.1, 0)],
                            colour.stroke_width(2),
                        )
                });
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(plot_error)?;
        }
        if series.iter().any(|s| !s.label.is_empty()) {
            chart
                .configure_series_labels()
                .position(legend_corner(series, xs, ys))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.3))
                .draw()
                .map_err(plot_error)?;
        }
        root.present().map_err(plot_error)?;
        drop(chart);
        drop(root);
        Ok(())
    }
}

/// The corner of the plot with the fewest data points near it, for the legend.
fn legend_corner(series: &[Series], xs: Scale, ys: Scale) -> SeriesLabelPosition {
    let map = |v: f64, s: Scale| if s == Scale::Log { v.log10() } else { v };
    let points: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|&(x, y)| (map(x, xs), map(y, ys))))
        .collect();
    let (x_lo, x_hi) = axis_range(points.iter().map(|p| p.0), Scale::Linear);
    let (y_lo, y_hi) = axis_range(points.iter().map(|p| p.1), Scale::Linear);
    let near = |right: bool, top: bool| {
        points
            .iter()
            .filter(|&&(x, y)| {
                let fx = (x - x_lo) / (x_hi - x_lo);
                let fy = (y - y_lo) / (y_hi - y_lo);
                (if right { fx > 0.6 } else { fx < 0.4 }) && (if top { fy > 0.6 } else { fy < 0.4 })
            })
            .count()
    };
    [
        (SeriesLabelPosition::UpperRight, near(true, true)),
        (SeriesLabelPosition::UpperLeft, near(false, true)),
        (SeriesLabelPosition::LowerRight, near(true, false)),
        (SeriesLabelPosition::LowerLeft, near(false, false)),
    ]
    .into_iter()
    .min_by_key(|&(_, n)| n)
    .map_or(SeriesLabelPosition::UpperRight, |(p, _)| p)
}

fn plot_error<E: std::error::Error + Send + Sync + 'static>(e: E) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// The drawn range of an axis: the data's extent with a little room, never empty.
pub(crate) fn axis_range(values: impl Iterator<Item = f64>, scale: Scale) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return match scale {
            Scale::Linear => (0.0, 1.0),
            Scale::Log => (1.0, 10.0),
        };
    }
    match scale {
        Scale::Log => {
            // A fifth of a decade on either side.
            let pad = 10f64.powf(0.2);
            (lo / pad, hi * pad)
        }
        Scale::Linear if lo == hi => {
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
            (lo - pad, hi + pad)
        }
        Scale::Linear => {
            let pad = (hi - lo) * 0.05;
            // Rates and sizes are positive: keep zero in view unless the data sit far
            // above it.
            let low = if lo >= 0.0 && lo < hi - lo {
                0.0
            } else {
                lo - pad
            };
            (low, hi + pad)
        }
    }
}

/// Compact axis numbers: `0.5`, `16`, `2k`, `1.5M`, `3G`.
pub(crate) fn axis_number(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e12 {
        (v / 1e12, "T")
    } else if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let text = if scaled == scaled.round() || scaled.abs() >= 10.0 {
        format!("{scaled:.0}")
    } else {
        let s = format!("{scaled:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    format!("{text}{suffix}")
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
                assert!(svg.contains("packet size (bytes)"));
                assert!(svg.contains("1 channel") && svg.contains("8 channels"));
                // One polyline per series plus one per legend entry.
                assert!(svg.matches("<polyline").count() >= 4, "{xs:?}/{ys:?}");
                assert_eq!(svg.matches("<circle").count(), 6, "{xs:?}/{ys:?}");
            }
        }
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
        assert_eq!(svg.matches("<circle").count(), 1);
    }

    #[test]
    fn empty_and_single_point_charts_still_render() {
        assert!(chart(Scale::Log, Scale::Linear, vec![]).to_svg().is_ok());
        let one = chart(Scale::Linear, Scale::Log, vec![line("x", &[(3.0, 3.0)])]);
        assert_eq!(one.to_svg().unwrap().matches("<circle").count(), 1);
    }

    #[test]
    fn axis_numbers_are_compact() {
        assert_eq!(axis_number(0.5), "0.5");
        assert_eq!(axis_number(16.0), "16");
        assert_eq!(axis_number(2000.0), "2k");
        assert_eq!(axis_number(1.5e6), "1.5M");
        assert_eq!(axis_number(3.0e9), "3G");
        assert_eq!(axis_number(12.4e3), "12k");
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(axis_range([5.0].into_iter(), Scale::Linear), (4.5, 5.5));
        assert_eq!(axis_range(std::iter::empty(), Scale::Log), (1.0, 10.0));
        let (lo, hi) = axis_range([10.0, 1000.0].into_iter(), Scale::Log);
        assert!(lo < 10.0 && hi > 1000.0);
        let (lo, _) = axis_range([10.0, 1000.0].into_iter(), Scale::Linear);
        assert_eq!(lo, 0.0);
    }

    #[test]
    fn the_legend_avoids_the_data() {
        let rising = [line("up", &[(1.0, 1.0), (10.0, 10.0), (100.0, 100.0)])];
        let pos = legend_corner(&rising, Scale::Log, Scale::Log);
        assert!(matches!(
            pos,
            SeriesLabelPosition::UpperLeft | SeriesLabelPosition::LowerRight
        ));
        let falling = [line("down", &[(1.0, 100.0), (10.0, 10.0), (100.0, 1.0)])];
        let pos = legend_corner(&falling, Scale::Linear, Scale::Linear);
        assert!(matches!(pos, SeriesLabelPosition::UpperRight));
    }
}
