//! Drawing a [`Chart`] as SVG: [`inline`] for a page (CSS classes only; the page's
//! stylesheet colours it), [`standalone`] for a file (the same markup with a title, a
//! legend and a light style of its own), and [`strip`], the runs of one figure around
//! their median.
//!
//! Geometry: an 800 × 440 frame; the left margin grows with the longest y tick label.
//! Every point is a group with its `<title>` (the hover text: the line, both values as
//! the tables write them, and the interval), a dot, a larger invisible target, and
//! its interval bar when intervals are drawn as bars. Markers are dashed vertical
//! lines over the lines, their labels stacked from the top, beside the line on the
//! side with more room.

use super::scale::{Role, Span};
use super::{Chart, Interval, Intervals, Line, Marker, Point, Scale, Unit};
use crate::format;
use maud::{Markup, PreEscaped, html};
use xferbench_probes::stats::Estimate;

const W: f64 = 800.0;
const H: f64 = 440.0;
const TOP: f64 = 12.0;
const RIGHT: f64 = 24.0;
const BOTTOM: f64 = 54.0;
/// The width of an average character of the 12 px chart font.
const CHAR: f64 = 6.8;

/// A line with its index (its colour) and its drawable points.
type Drawn<'a> = (usize, &'a Line, Vec<Point>);

/// Where everything goes.
struct Layout<'a> {
    chart: &'a Chart,
    lines: Vec<Drawn<'a>>,
    markers: Vec<&'a Marker>,
    x: Span,
    y: Span,
    x_ticks: Vec<(f64, String)>,
    y_ticks: Vec<(f64, String)>,
    left: f64,
}

fn drawable(scale: Scale, v: f64) -> bool {
    v.is_finite() && (scale == Scale::Linear || v > 0.0)
}

/// The point as drawn: an interval end that cannot be drawn is the value itself.
fn clean(p: &Point, y: Scale) -> Point {
    let interval = p.interval.map(|iv| {
        let end = |v: f64| if drawable(y, v) { v } else { p.y };
        Interval {
            low: end(iv.low).min(p.y),
            high: end(iv.high).max(p.y),
            level: iv.level,
        }
    });
    Point { interval, ..*p }
}

impl<'a> Layout<'a> {
    fn new(chart: &'a Chart) -> Layout<'a> {
        let (xs, ys) = (chart.x.scale, chart.y.scale);
        let lines: Vec<Drawn> = chart
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let pts = l
                    .points
                    .iter()
                    .filter(|p| drawable(xs, p.x) && drawable(ys, p.y))
                    .map(|p| clean(p, ys))
                    .collect();
                (i, l, pts)
            })
            .collect();
        let markers: Vec<&Marker> = chart.markers.iter().filter(|m| drawable(xs, m.x)).collect();
        let points = || lines.iter().flat_map(|(_, _, p)| p.iter());
        let x = Span::of(
            points().map(|p| p.x).chain(markers.iter().map(|m| m.x)),
            xs,
            Role::Across,
        );
        let y = Span::of(
            points().flat_map(|p| {
                let (lo, hi) = p.interval.map_or((p.y, p.y), |i| (i.low, i.high));
                [p.y, lo, hi]
            }),
            ys,
            Role::Value,
        );
        let ticks = |span: &Span, unit: Unit| {
            let t = span.ticks(unit);
            let labels = unit.ticks(&t, span.scale == Scale::Linear);
            t.into_iter().zip(labels).collect::<Vec<_>>()
        };
        let x_ticks = ticks(&x, chart.x.unit);
        let y_ticks = ticks(&y, chart.y.unit);
        let widest = y_ticks
            .iter()
            .map(|(_, s)| s.chars().count())
            .max()
            .unwrap_or(1);
        let left = (widest as f64 * CHAR + 34.0).clamp(56.0, 150.0);
        Layout {
            chart,
            lines,
            markers,
            x,
            y,
            x_ticks,
            y_ticks,
            left,
        }
    }

    fn px(&self, v: f64) -> f64 {
        self.left + self.x.fraction(v) * (W - RIGHT - self.left)
    }

    /// How far line `i` is moved sideways so that the interval bars of lines sharing
    /// an x value stand side by side (a few pixels; none without bars).
    fn dodge(&self, i: usize) -> f64 {
        let n = self.lines.len();
        let bars = self.chart.intervals == Intervals::Bars
            && self
                .lines
                .iter()
                .any(|(_, _, pts)| pts.iter().any(|p| p.interval.is_some()));
        if !bars || n < 2 {
            return 0.0;
        }
        let step = (24.0 / n as f64).min(5.0);
        (i as f64 - (n - 1) as f64 / 2.0) * step
    }

    fn py(&self, v: f64) -> f64 {
        (H - BOTTOM) - self.y.fraction(v) * (H - BOTTOM - TOP)
    }

    fn xy(&self, x: f64, y: f64, dx: f64) -> String {
        format!("{},{}", n(self.px(x) + dx), n(self.py(y)))
    }
}

/// A coordinate, to a tenth of a pixel.
fn n(v: f64) -> String {
    format!("{v:.1}")
}

/// The hover text of a point: `shm: message size 64 KiB, throughput 1.45 GB/s
/// (interval 1.40 GB/s – 1.50 GB/s, 93.75 %)`.
fn hover(c: &Chart, line: &Line, p: &Point) -> String {
    let mut s = String::new();
    if !line.label.is_empty() {
        s.push_str(&line.label);
        s.push_str(": ");
    }
    s.push_str(&format!(
        "{} {}, {} {}",
        c.x.label,
        c.x.unit.value(p.x),
        c.y.label,
        c.y.unit.value(p.y)
    ));
    if let Some(iv) = p.interval.filter(|iv| iv.high > iv.low) {
        s.push_str(&format!(
            " (interval {} – {}",
            c.y.unit.value(iv.low),
            c.y.unit.value(iv.high)
        ));
        if let Some(level) = iv.level {
            s.push_str(&format!(", {} %", format::level(level)));
        }
        s.push(')');
    }
    s
}

/// The series classes: colour by index, dashed for a reference.
fn class(i: usize, line: &Line) -> String {
    format!(
        "series s{}{}",
        i % 8,
        if line.reference { " reference" } else { "" }
    )
}

/// The band along a line: upper ends forward, lower ends back.
fn band(l: &Layout, pts: &[Point]) -> Option<String> {
    pts.iter().any(|p| p.interval.is_some()).then(|| {
        let end = |p: &Point, high: bool| {
            p.interval
                .map_or(p.y, |iv| if high { iv.high } else { iv.low })
        };
        pts.iter()
            .map(|p| l.xy(p.x, end(p, true), 0.0))
            .chain(pts.iter().rev().map(|p| l.xy(p.x, end(p, false), 0.0)))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// The length to squeeze an axis label into when it would not fit `room` pixels.
fn fit(label: &str, room: f64) -> Option<String> {
    // 13 px labels: about 7.2 px a character.
    (label.chars().count() as f64 * 7.2 > room).then(|| n(room - 8.0))
}

/// Grid, axes, ticks, labels and lines: everything inside the 800 × 440 frame.
fn body(l: &Layout) -> Markup {
    let c = l.chart;
    let (right, bottom) = (W - RIGHT, H - BOTTOM);
    html! {
        g.grid {
            @for (v, _) in &l.x_ticks { line x1=(n(l.px(*v))) x2=(n(l.px(*v))) y1=(TOP) y2=(bottom) {} }
            @for (v, _) in &l.y_ticks { line x1=(n(l.left)) x2=(right) y1=(n(l.py(*v))) y2=(n(l.py(*v))) {} }
        }
        g.axis {
            line x1=(n(l.left)) x2=(right) y1=(bottom) y2=(bottom) {}
            line x1=(n(l.left)) x2=(n(l.left)) y1=(TOP) y2=(bottom) {}
            @for (v, s) in &l.x_ticks {
                text.tick x=(n(l.px(*v))) y=(bottom + 18.0) text-anchor="middle" { (s) }
            }
            @for (v, s) in &l.y_ticks {
                text.tick x=(n(l.left - 8.0)) y=(n(l.py(*v) + 4.0)) text-anchor="end" { (s) }
            }
            @let (xw, yw) = (right - l.left, bottom - TOP);
            text.label x=(n((l.left + right) / 2.0)) y=(H - 12.0) text-anchor="middle"
                textLength=[fit(&c.x.label, xw)] lengthAdjust=[fit(&c.x.label, xw).map(|_| "spacingAndGlyphs")] { (c.x.label) }
            text.label transform={"translate(16," (n((TOP + bottom) / 2.0)) ") rotate(-90)"} text-anchor="middle"
                textLength=[fit(&c.y.label, yw)] lengthAdjust=[fit(&c.y.label, yw).map(|_| "spacingAndGlyphs")] { (c.y.label) }
        }
        @for (i, line, pts) in &l.lines {
            @let dx = l.dodge(*i);
            g class=(class(*i, line)) {
                @if c.intervals == Intervals::Band {
                    @if let Some(b) = band(l, pts) { polygon.band points=(b) {} }
                }
                @if pts.len() > 1 {
                    polyline points=(pts.iter().map(|p| l.xy(p.x, p.y, dx)).collect::<Vec<_>>().join(" ")) {}
                }
                @for p in pts {
                    @let px = l.px(p.x) + dx;
                    @let (x, y) = (n(px), n(l.py(p.y)));
                    g.pt {
                        title { (hover(c, line, p)) }
                        @if c.intervals == Intervals::Bars {
                            @if let Some(iv) = p.interval.filter(|iv| iv.high > iv.low) {
                                @let (lo, hi) = (n(l.py(iv.low)), n(l.py(iv.high)));
                                @let (a, b) = (n(px - 4.0), n(px + 4.0));
                                path.bar d={"M" (x) " " (lo) "V" (hi) "M" (a) " " (lo) "H" (b) "M" (a) " " (hi) "H" (b)} {}
                            }
                        }
                        circle.hit cx=(x) cy=(y) r="9" {}
                        circle.dot cx=(x) cy=(y) r="4" {}
                    }
                }
            }
        }
        @for (k, m) in l.markers.iter().enumerate() {
            @let x = l.px(m.x);
            // The label goes on the side of the line with more room.
            @let (tx, anchor) = if x < (l.left + right) / 2.0 { (x + 5.0, "start") } else { (x - 5.0, "end") };
            g.marker {
                title { (m.label) " (" (c.x.label) " " (c.x.unit.value(m.x)) ")" }
                line x1=(n(x)) x2=(n(x)) y1=(TOP) y2=(bottom) {}
                text x=(n(tx)) y=(n(TOP + 14.0 + 16.0 * k as f64)) text-anchor=(anchor) { (m.label) }
            }
        }
    }
}

/// The chart for a page: an `<svg class="xb-chart">` coloured by the page's CSS
/// ([`CSS`](super::CSS) with the [`THEME`](super::THEME) variables). The page shows
/// the title and legend around it.
pub fn inline(c: &Chart) -> Markup {
    let l = Layout::new(c);
    html! {
        svg.xb-chart.plot viewBox={"0 0 " (W) " " (H)} role="img" aria-label=(c.title)
            xmlns="http://www.w3.org/2000/svg" {
            title { (c.title) }
            (body(&l))
        }
    }
}

/// Words of `text` in lines of at most `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(last) if last.chars().count() + 1 + word.chars().count() <= width => {
                last.push(' ');
                last.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The chart as an SVG file: title above, legend below, light colours of its own.
pub fn standalone(c: &Chart) -> String {
    let l = Layout::new(c);
    let title = wrap(&c.title, 84);
    let head = 14.0 + 21.0 * title.len() as f64;
    // The legend, laid out in rows from the plot's left edge.
    let mut items: Vec<(f64, f64, usize, &Line)> = Vec::new();
    let (mut x, mut row) = (l.left, 0.0);
    for (i, line) in c
        .lines
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.label.is_empty())
    {
        let w = 38.0 + line.label.chars().count() as f64 * CHAR + 22.0;
        if x + w > W - RIGHT && x > l.left {
            x = l.left;
            row += 1.0;
        }
        items.push((x, row, i, line));
        x += w;
    }
    let legend = if items.is_empty() {
        0.0
    } else {
        (row + 1.0) * 20.0 + 10.0
    };
    let total = head + H + legend;
    html! {
        svg.xb-chart xmlns="http://www.w3.org/2000/svg" width=(W) height=(n(total))
            viewBox={"0 0 " (W) " " (n(total))} role="img" aria-label=(c.title) {
            title { (c.title) }
            style { (PreEscaped(super::standalone_css())) }
            rect.background x="0" y="0" width=(W) height=(n(total)) {}
            @for (k, t) in title.iter().enumerate() {
                text.title x=(W / 2.0) y=(n(24.0 + 21.0 * k as f64)) text-anchor="middle" { (t) }
            }
            g transform={"translate(0," (n(head)) ")"} { (body(&l)) }
            g.legend transform={"translate(0," (n(head + H)) ")"} {
                @for (x, row, i, line) in &items {
                    @let y = row * 20.0 + 8.0;
                    g class=(class(*i, line)) { line.swatch x1=(n(*x)) x2=(n(x + 28.0)) y1=(n(y)) y2=(n(y)) {} }
                    text x=(n(x + 36.0)) y=(n(y + 4.0)) { (line.label) }
                }
            }
        }
    }
    .into_string()
}

/// The runs of one figure of one point, as dots on a horizontal axis, with the median
/// (a bar) and the interval of the median (a band). Each dot's `<title>` has its run
/// number and value, written in `unit`.
pub fn strip(name: &str, runs: &[f64], e: Option<&Estimate>, unit: Unit) -> Markup {
    const SW: f64 = 480.0;
    const SH: f64 = 64.0;
    const PAD: f64 = 14.0;
    let span = Span::tight(
        runs.iter()
            .copied()
            .chain(e.iter().flat_map(|e| [e.median, e.ci_low, e.ci_high]))
            .filter(|v| v.is_finite()),
    );
    let ticks = span.ticks(unit);
    let labels = unit.ticks(&ticks, true);
    let px = |v: f64| PAD + span.fraction(v) * (SW - 2.0 * PAD);
    let mid = SH / 2.0 - 6.0;
    html! {
        svg.xb-chart.strip viewBox={"0 0 " (SW) " " (SH)} role="img" aria-label={"runs of " (name)}
            xmlns="http://www.w3.org/2000/svg" {
            title { "Every run of " (name) }
            g.axis {
                line x1=(PAD) x2=(SW - PAD) y1=(SH - 20.0) y2=(SH - 20.0) {}
                @for (v, s) in ticks.iter().zip(&labels) {
                    line x1=(n(px(*v))) x2=(n(px(*v))) y1=(SH - 20.0) y2=(SH - 16.0) {}
                    text.tick x=(n(px(*v))) y=(SH - 4.0) text-anchor="middle" { (s) }
                }
            }
            @if let Some(e) = e {
                @if e.n >= 2 {
                    rect.interval x=(n(px(e.ci_low))) y=(n(mid - 12.0))
                        width=(n((px(e.ci_high) - px(e.ci_low)).max(1.0))) height="24" {
                        title { "interval of the median: " (unit.value(e.ci_low)) " – " (unit.value(e.ci_high)) " (" (format::level(e.ci_level)) " %)" }
                    }
                }
                line.median x1=(n(px(e.median))) x2=(n(px(e.median))) y1=(n(mid - 14.0)) y2=(n(mid + 14.0)) {
                    title { "median: " (unit.value(e.median)) }
                }
            }
            g.series.s0 {
                @for (i, v) in runs.iter().enumerate() {
                    @if v.is_finite() {
                        circle.dot cx=(n(px(*v))) cy=(n(mid + ((i % 3) as f64 - 1.0) * 5.0)) r="4" {
                            title { "run " (i + 1) ": " (unit.value(*v)) }
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
    use crate::chart::Axis;

    fn chart(intervals: Intervals) -> Chart {
        let iv = |low, high| {
            Some(Interval {
                low,
                high,
                level: Some(0.9375),
            })
        };
        Chart {
            title: "Throughput <vs> size".into(),
            x: Axis::new("message size", Unit::Bytes, Scale::Log),
            y: Axis::new("throughput", Unit::BytesPerSecond, Scale::Log),
            lines: vec![
                Line {
                    label: "shm".into(),
                    points: vec![
                        Point {
                            x: 64.0,
                            y: 1.449_053_112_601_818e9,
                            interval: iv(1.40e9, 1.50e9),
                        },
                        Point::new(65536.0, 30e9),
                        Point::new(0.0, 5.0),
                    ],
                    reference: false,
                },
                Line {
                    label: "seed".into(),
                    points: vec![Point::new(64.0, 2e9), Point::new(65536.0, 20e9)],
                    reference: true,
                },
            ],
            intervals,
            markers: Vec::new(),
        }
    }

    #[test]
    fn points_carry_formatted_values_and_their_interval() {
        let svg = inline(&chart(Intervals::Bars)).into_string();
        assert_eq!(
            svg.matches("circle class=\"dot\"").count(),
            4,
            "the x = 0 point is off a log axis"
        );
        assert!(
            svg.contains(
                "<title>shm: message size 64 B, throughput 1.45 GB/s (interval 1.40 GB/s – 1.50 GB/s, 93.75 %)</title>"
            ),
            "{svg}"
        );
        assert!(!svg.contains("1449053112"), "no raw numbers");
        assert_eq!(svg.matches("class=\"bar\"").count(), 1);
        assert_eq!(svg.matches("series s1 reference").count(), 1);
        assert!(svg.contains("Throughput &lt;vs&gt; size") && !svg.contains("<vs>"));
        // Ticks carry the units.
        assert!(svg.contains(">64 B<") && svg.contains(">1 KiB<") && svg.contains(">64 KiB<"));
        assert!(svg.contains(" GB/s<"));
    }

    #[test]
    fn lines_move_apart_only_when_they_have_bars() {
        let with = chart(Intervals::Bars);
        let l = Layout::new(&with);
        assert!(l.dodge(0) < 0.0 && l.dodge(1) > 0.0);
        let mut without = chart(Intervals::Bars);
        without.lines[0].points[0].interval = None;
        let l = Layout::new(&without);
        assert_eq!((l.dodge(0), l.dodge(1)), (0.0, 0.0));
    }

    #[test]
    fn a_band_follows_the_line() {
        let svg = inline(&chart(Intervals::Band)).into_string();
        assert_eq!(svg.matches("<polygon class=\"band\"").count(), 1);
        assert!(!svg.contains("class=\"bar\""));
    }

    #[test]
    fn a_standalone_file_has_its_title_legend_and_light_colours() {
        let svg = standalone(&chart(Intervals::Bars));
        assert!(svg.starts_with("<svg class=\"xb-chart\" xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(!svg.contains("var(--"), "literal colours");
        assert!(svg.contains("#0072b2"));
        assert!(svg.contains("class=\"title\""));
        assert!(svg.contains("class=\"swatch\"") && svg.contains(">seed<"));
    }

    #[test]
    fn long_axis_labels_are_squeezed_into_their_axis() {
        let mut c = chart(Intervals::Bars);
        c.y.label = "a very long description of the vertical axis ".repeat(3);
        let svg = inline(&c).into_string();
        assert_eq!(svg.matches("lengthAdjust=\"spacingAndGlyphs\"").count(), 1);
        assert!(fit("throughput", 300.0).is_none());
    }

    #[test]
    fn long_titles_wrap() {
        assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
        let mut c = chart(Intervals::Bars);
        c.title = "word ".repeat(60);
        let svg = standalone(&c);
        assert!(svg.matches("class=\"title\"").count() >= 3);
    }

    #[test]
    fn empty_charts_still_draw_their_axes() {
        let mut c = chart(Intervals::Bars);
        c.lines.clear();
        let svg = standalone(&c);
        assert!(svg.contains("message size") && !svg.contains("<circle"));
    }

    #[test]
    fn a_marker_is_a_labelled_vertical_line_and_widens_the_axis_to_reach_it() {
        let mut c = chart(Intervals::Bars);
        c.markers = vec![
            Marker {
                x: 1024.0,
                label: "knee <1>".into(),
            },
            Marker {
                x: 1e6,
                label: "beyond".into(),
            },
            Marker {
                x: 0.0,
                label: "off a log axis".into(),
            },
        ];
        let l = Layout::new(&c);
        assert!(l.x.hi > 1e6, "the axis reaches the marker");
        let svg = inline(&c).into_string();
        assert_eq!(svg.matches("<g class=\"marker\">").count(), 2, "{svg}");
        assert!(svg.contains(">knee &lt;1&gt;</text>"), "{svg}");
        assert!(svg.contains("<title>knee &lt;1&gt; (message size 1 KiB)</title>"));
        // Labels are stacked, and sit on the side of their line with more room.
        let x = n(l.px(1024.0));
        assert!(
            svg.contains(&format!("x1=\"{x}\" x2=\"{x}\" y1=\"12\"")),
            "{svg}"
        );
        assert!(svg.contains("y=\"26.0\" text-anchor=\"start\""), "{svg}");
        assert!(svg.contains("y=\"42.0\" text-anchor=\"end\""), "{svg}");
        assert!(!svg.contains("off a log axis"));
    }

    #[test]
    fn a_strip_has_a_dot_per_run_in_the_figure_s_unit() {
        let runs = [1e9, 2e9, 3e9, f64::NAN];
        let e = Estimate::from_values([1e9, 2e9, 3e9]).unwrap();
        let s = strip("throughput", &runs, Some(&e), Unit::BytesPerSecond).into_string();
        assert_eq!(s.matches("<circle").count(), 3);
        assert!(s.contains("run 2: 2.00 GB/s"), "{s}");
        assert!(s.contains("75 %"));
        assert!(s.contains(" GB/s</text>"));
    }
}
