//! Inline SVG for the HTML report: a [`LineChart`] drawn with CSS classes (so it
//! follows the page's light or dark scheme and prints in black on white), every point
//! carrying its exact value in an SVG `<title>` (shown on hover), reference series
//! dashed; and a strip plot of the runs of one point around their median and its
//! interval.

use crate::plot::{LineChart, Scale, axis_number, axis_range};
use maud::{Markup, html};

const W: f64 = 720.0;
const H: f64 = 400.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 52.0;

/// A number in full (shortest exact representation), for hover text.
pub fn exact(v: f64) -> String {
    if v.is_finite() && v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// Maps values of one axis to pixels.
#[derive(Clone, Copy)]
struct Axis {
    lo: f64,
    hi: f64,
    scale: Scale,
    from: f64,
    to: f64,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>, scale: Scale, from: f64, to: f64) -> Axis {
        let (lo, hi) = axis_range(values, scale);
        Axis {
            lo,
            hi,
            scale,
            from,
            to,
        }
    }

    fn t(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log => v.log10(),
        }
    }

    fn px(&self, v: f64) -> f64 {
        let (a, b) = (self.t(self.lo), self.t(self.hi));
        let f = if b > a {
            (self.t(v) - a) / (b - a)
        } else {
            0.5
        };
        self.from + f * (self.to - self.from)
    }

    /// Tick values: powers of ten (with 2 and 5 when the range is short) on a log
    /// axis, steps of 1, 2 or 5 × 10^k on a linear one.
    fn ticks(&self) -> Vec<f64> {
        let mut out = Vec::new();
        match self.scale {
            Scale::Log => {
                let (a, b) = (
                    self.lo.log10().floor() as i32,
                    self.hi.log10().ceil() as i32,
                );
                let mults: &[f64] = if b - a <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
                for e in a..=b {
                    for m in mults {
                        let v = m * 10f64.powi(e);
                        if v >= self.lo && v <= self.hi {
                            out.push(v);
                        }
                    }
                }
            }
            Scale::Linear => {
                let span = self.hi - self.lo;
                let raw = span / 6.0;
                let mag = 10f64.powf(raw.log10().floor());
                let step = [1.0, 2.0, 5.0, 10.0]
                    .iter()
                    .map(|m| m * mag)
                    .find(|s| span / s <= 7.0)
                    .unwrap_or(10.0 * mag);
                let mut v = (self.lo / step).ceil() * step;
                while v <= self.hi + step * 1e-9 && out.len() < 20 {
                    out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
                    v += step;
                }
            }
        }
        out
    }
}

fn num(v: f64) -> String {
    format!("{v:.1}")
}

/// The polyline's points attribute.
fn path(points: &[(f64, f64)], x: &Axis, y: &Axis) -> String {
    points
        .iter()
        .map(|&(a, b)| format!("{},{}", num(x.px(a)), num(y.px(b))))
        .collect::<Vec<_>>()
        .join(" ")
}

fn drawable(c: &LineChart, (x, y): (f64, f64)) -> bool {
    x.is_finite()
        && y.is_finite()
        && (c.x_scale == Scale::Linear || x > 0.0)
        && (c.y_scale == Scale::Linear || y > 0.0)
}

/// A series with its index (for its colour) and its drawable points.
type Drawn<'a> = (usize, &'a crate::plot::Series, Vec<(f64, f64)>);

/// A line chart as a `<figure>`: inline SVG with a `<title>` per point, and the
/// legend under it.
pub fn line_chart(c: &LineChart) -> Markup {
    let series: Vec<Drawn> = c
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let pts = s
                .points
                .iter()
                .copied()
                .filter(|&p| drawable(c, p))
                .collect();
            (i, s, pts)
        })
        .collect();
    let all = || series.iter().flat_map(|(_, _, p)| p.iter().copied());
    let x = Axis::new(all().map(|p| p.0), c.x_scale, LEFT, W - RIGHT);
    let y = Axis::new(all().map(|p| p.1), c.y_scale, H - BOTTOM, TOP);
    let (xt, yt) = (x.ticks(), y.ticks());
    html! {
        figure.chart {
            figcaption { (c.title) }
            svg viewBox={"0 0 " (W) " " (H)} role="img" aria-label=(c.title)
                xmlns="http://www.w3.org/2000/svg" {
                title { (c.title) }
                g.grid {
                    @for v in &xt { line x1=(num(x.px(*v))) x2=(num(x.px(*v))) y1=(TOP) y2=(H - BOTTOM) {} }
                    @for v in &yt { line x1=(LEFT) x2=(W - RIGHT) y1=(num(y.px(*v))) y2=(num(y.px(*v))) {} }
                }
                g.axis {
                    line x1=(LEFT) x2=(W - RIGHT) y1=(H - BOTTOM) y2=(H - BOTTOM) {}
                    line x1=(LEFT) x2=(LEFT) y1=(TOP) y2=(H - BOTTOM) {}
                    @for v in &xt {
                        text.tick x=(num(x.px(*v))) y=(H - BOTTOM + 18.0) text-anchor="middle" { (axis_number(*v)) }
                    }
                    @for v in &yt {
                        text.tick x=(LEFT - 6.0) y=(num(y.px(*v) + 4.0)) text-anchor="end" { (axis_number(*v)) }
                    }
                    text.label x=(num((LEFT + W - RIGHT) / 2.0)) y=(H - 10.0) text-anchor="middle" { (c.x_label) }
                    text.label transform={"translate(16," (num((TOP + H - BOTTOM) / 2.0)) ") rotate(-90)"} text-anchor="middle" { (c.y_label) }
                }
                @for (i, s, pts) in &series {
                    g class={"series s" (i % 8) @if s.reference { " reference" }} {
                        polyline points=(path(pts, &x, &y)) {}
                        @for (a, b) in pts {
                            circle cx=(num(x.px(*a))) cy=(num(y.px(*b))) r="3.5" {
                                title { (s.label) ": " (c.x_label) " = " (exact(*a)) ", " (c.y_label) " = " (exact(*b)) }
                            }
                        }
                    }
                }
            }
            @if c.series.iter().any(|s| !s.label.is_empty()) {
                ul.legend {
                    @for (i, s) in c.series.iter().enumerate() {
                        li {
                            svg.swatch viewBox="0 0 28 10" width="28" height="10" aria-hidden="true" {
                                g class={"series s" (i % 8) @if s.reference { " reference" }} {
                                    line x1="0" x2="28" y1="5" y2="5" {}
                                }
                            }
                            " " (s.label)
                            @if s.reference { " (reference, dashed)" }
                        }
                    }
                }
            }
        }
    }
}

/// The runs of one figure of one point, as dots on a horizontal axis, with the median
/// (a bar) and the interval of the median (a band). `show` formats values for
/// the axis ends; each dot's `<title>` has its run number and exact value.
pub fn strip(
    name: &str,
    runs: &[f64],
    e: Option<&xferbench_lab::stats::Estimate>,
    show: &dyn Fn(f64) -> String,
) -> Markup {
    const SW: f64 = 480.0;
    const SH: f64 = 64.0;
    const PAD: f64 = 12.0;
    let x = Axis::new(
        runs.iter()
            .copied()
            .chain(e.iter().flat_map(|e| [e.ci_low, e.ci_high]))
            .filter(|v| v.is_finite()),
        Scale::Linear,
        PAD,
        SW - PAD,
    );
    // Zero in view is for line charts; a strip shows the spread, so it spans the data.
    let (lo, hi) = runs
        .iter()
        .chain(e.iter().flat_map(|e| [&e.ci_low, &e.ci_high]))
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    let x = if lo.is_finite() && hi > lo {
        let pad = (hi - lo) * 0.08;
        Axis {
            lo: lo - pad,
            hi: hi + pad,
            ..x
        }
    } else {
        x
    };
    let mid = SH / 2.0 - 6.0;
    html! {
        figure.strip {
            svg viewBox={"0 0 " (SW) " " (SH)} role="img" aria-label={"runs of " (name)}
                xmlns="http://www.w3.org/2000/svg" {
                title { "Every run of " (name) }
                g.axis {
                    line x1=(PAD) x2=(SW - PAD) y1=(SH - 20.0) y2=(SH - 20.0) {}
                    text.tick x=(PAD) y=(SH - 4.0) text-anchor="start" { (show(x.lo)) }
                    text.tick x=(SW - PAD) y=(SH - 4.0) text-anchor="end" { (show(x.hi)) }
                }
                @if let Some(e) = e {
                    @if e.n >= 2 {
                        rect.interval x=(num(x.px(e.ci_low))) y=(num(mid - 12.0))
                            width=(num((x.px(e.ci_high) - x.px(e.ci_low)).max(1.0))) height="24" {
                            title { "interval of the median: " (exact(e.ci_low)) " – " (exact(e.ci_high)) " (" (crate::studies::level(e.ci_level)) " % level)" }
                        }
                    }
                    line.median x1=(num(x.px(e.median))) x2=(num(x.px(e.median))) y1=(num(mid - 14.0)) y2=(num(mid + 14.0)) {
                        title { "median: " (exact(e.median)) }
                    }
                }
                g.series.s0 {
                    @for (i, v) in runs.iter().enumerate() {
                        @if v.is_finite() {
                            circle cx=(num(x.px(*v))) cy=(num(mid + ((i % 3) as f64 - 1.0) * 5.0)) r="4" {
                                title { "run " (i + 1) ": " (exact(*v)) " (" (show(*v)) ")" }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::Series;

    fn chart() -> LineChart {
        LineChart {
            title: "Throughput <vs> size".into(),
            x_label: "size (B)".into(),
            y_label: "B/s".into(),
            x_scale: Scale::Log,
            y_scale: Scale::Log,
            series: vec![
                Series {
                    label: "ours".into(),
                    points: vec![(1.0, 10.0), (100.0, 1000.0), (0.0, 5.0)],
                    reference: false,
                },
                Series {
                    label: "seed".into(),
                    points: vec![(1.0, 20.0), (100.0, 2000.0)],
                    reference: true,
                },
            ],
        }
    }

    #[test]
    fn every_drawable_point_has_its_exact_value_and_references_are_marked() {
        let svg = line_chart(&chart()).into_string();
        assert_eq!(
            svg.matches("<circle").count(),
            4,
            "the x = 0 point is off a log axis"
        );
        assert!(
            svg.contains("<title>ours: size (B) = 100, B/s = 1000</title>"),
            "{svg}"
        );
        assert_eq!(
            svg.matches("series s1 reference").count(),
            2,
            "plot and legend"
        );
        assert!(svg.contains("Throughput &lt;vs&gt; size"));
        assert!(!svg.contains("<vs>"));
    }

    #[test]
    fn ticks_cover_the_range() {
        let a = Axis::new([3.0, 4000.0].into_iter(), Scale::Log, 0.0, 1.0);
        assert!(a.ticks().contains(&10.0) && a.ticks().contains(&1000.0));
        let l = Axis::new([0.0, 97.0].into_iter(), Scale::Linear, 0.0, 1.0);
        let t = l.ticks();
        assert!(t.len() >= 4 && t.len() <= 8, "{t:?}");
        assert_eq!(t[0], 0.0);
    }

    #[test]
    fn a_strip_has_a_dot_per_run() {
        let runs = [1.0, 2.0, 3.0, f64::NAN];
        let e = xferbench_lab::stats::Estimate {
            n: 3,
            median: 2.0,
            min: 1.0,
            max: 3.0,
            mad: 1.0,
            rcv: 0.7,
            ci_low: 1.0,
            ci_high: 3.0,
            ci_level: 0.75,
            outliers: 0,
        };
        let s = strip("x", &runs, Some(&e), &|v| format!("{v:.1}")).into_string();
        assert_eq!(s.matches("<circle").count(), 3);
        assert!(s.contains("run 2: 2 (2.0)"));
        assert!(s.contains("75 % level"));
    }
}
