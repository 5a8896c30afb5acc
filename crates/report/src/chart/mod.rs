//! The one chart engine of the reports: the study folders' SVG files and the HTML
//! report's inline charts are drawn here, from one model, with one set of rules for
//! extents, ticks and units ([`scale`], [`mod@unit`]).
//!
//! A [`Chart`] is plain data: a title, two [`Axis`]es (label, [`Unit`], [`Scale`]),
//! and [`Line`]s of [`Point`]s, each point with an optional [`Interval`] (drawn as
//! error bars or as a band, [`Intervals`]), and [`Marker`]s: labelled vertical lines
//! at values of the horizontal axis (the knee of a latency–rate curve). Study writers build a simpler line chart of
//! labelled series, which converts into a `Chart` ([`Axis::from_label`]: a unit in
//! parentheses at the end of an axis label becomes the axis's unit).
//!
//! [`svg`] draws a chart two ways with the same markup: inline in a page (CSS classes,
//! so it follows the page's light or dark scheme and prints) and as a standalone SVG
//! file (the same classes with a light style of their own). Every point carries its
//! values, formatted as the tables write them, in an SVG `<title>` shown on hover;
//! reference series (figures quoted from elsewhere) are dashed; the palette is
//! Okabe–Ito's, distinguishable with the common colour-vision deficiencies.

pub mod scale;
pub mod svg;
pub mod unit;

pub use scale::Scale;
pub use unit::Unit;

/// A chart: lines over two axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// What the chart shows, in a few words.
    pub title: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// The lines, drawn in order; the first gets the palette's first colour.
    pub lines: Vec<Line>,
    /// How the points' intervals are drawn.
    pub intervals: Intervals,
    /// Vertical lines at values of the horizontal axis, drawn over the lines.
    pub markers: Vec<Marker>,
}

/// A labelled vertical line across the plot at one horizontal value; the axis's
/// extent includes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Where, in the horizontal axis's values.
    pub x: f64,
    /// What it marks, in a few words (`knee 1.00 M/s`), written beside the line.
    pub label: String,
}

/// One axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// What the axis shows, as people say it (`message size`, `throughput`), without
    /// its unit: the ticks carry the unit.
    pub label: String,
    /// The unit of its values.
    pub unit: Unit,
    /// How values map to positions.
    pub scale: Scale,
}

/// One line of a chart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Line {
    /// The legend entry (empty for a chart of one line).
    pub label: String,
    /// The points, drawn in the given order.
    pub points: Vec<Point>,
    /// Figures quoted from elsewhere (a seed's hardware), drawn dashed.
    pub reference: bool,
}

impl Line {
    /// Appends `point` to the line `label` of `lines`, starting the line if there is
    /// none yet.
    pub fn push_to(lines: &mut Vec<Line>, label: String, point: Point) {
        match lines.iter_mut().find(|l| l.label == label) {
            Some(l) => l.points.push(point),
            None => lines.push(Line {
                label,
                points: vec![point],
                reference: false,
            }),
        }
    }
}

/// One point; values that cannot be drawn (not finite, or not positive on a log
/// axis) are left out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Horizontal value.
    pub x: f64,
    /// Vertical value.
    pub y: f64,
    /// The interval around `y`, if any.
    pub interval: Option<Interval>,
}

/// An interval around a value, such as the order-statistic interval of a median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Its coverage (0.9375 for the interval of the median of 5 runs), when known.
    pub level: Option<f64>,
}

/// How intervals are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Intervals {
    /// A vertical bar with caps at each point (separate settings, such as sizes).
    #[default]
    Bars,
    /// A shaded band along the line (a sequence, such as runs over time).
    Band,
}

impl Point {
    /// A point without an interval.
    pub fn new(x: f64, y: f64) -> Point {
        Point {
            x,
            y,
            interval: None,
        }
    }
}

impl Axis {
    /// An axis of `unit` values.
    pub fn new(label: impl Into<String>, unit: Unit, scale: Scale) -> Axis {
        Axis {
            label: label.into(),
            unit,
            scale,
        }
    }

    /// The axis a label describes: a unit in parentheses at its end
    /// (`packet size (bytes)`) becomes the axis's unit.
    pub fn from_label(label: &str, scale: Scale) -> Axis {
        let (unit, rest) = Unit::from_label(label);
        Axis::new(rest, unit, scale)
    }
}

/// The chart colours, light and dark: CSS custom properties of the page, and the
/// literal colours of a standalone SVG file (light).
pub const THEME: [(&str, &str, &str); 13] = [
    ("bg", "#ffffff", "#16181c"),
    ("fg", "#1b1b1b", "#e6e6e6"),
    ("muted", "#5b5b5b", "#a8a8a8"),
    ("grid", "#e6e6e6", "#2c2f34"),
    // Okabe–Ito; on white its yellow is darkened, on dark its black is light grey.
    ("c0", "#0072b2", "#0072b2"),
    ("c1", "#e69f00", "#e69f00"),
    ("c2", "#009e73", "#009e73"),
    ("c3", "#d55e00", "#d55e00"),
    ("c4", "#56b4e9", "#56b4e9"),
    ("c5", "#cc79a7", "#cc79a7"),
    ("c6", "#b8a800", "#f0e442"),
    ("c7", "#000000", "#e6e6e6"),
    ("band", "#0072b2", "#56b4e9"),
];

/// The CSS of every chart (`svg.xb-chart`), in terms of the [`THEME`] variables.
pub const CSS: &str = include_str!("chart.css");

/// The [`THEME`] as CSS custom properties on `:root`, light, and dark when the reader
/// prefers it.
pub fn theme_css() -> String {
    let vars = |dark: bool| {
        THEME
            .iter()
            .map(|(n, l, d)| format!("--{n}: {};", if dark { d } else { l }))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        ":root {{ {} }}\n@media (prefers-color-scheme: dark) {{ :root {{ {} }} }}\n",
        vars(false),
        vars(true)
    )
}

/// [`CSS`] with the light colours written in, for a standalone SVG file (SVG viewers
/// outside browsers do not all know CSS variables).
pub fn standalone_css() -> String {
    let mut css = CSS.to_string();
    for (n, light, _) in THEME {
        css = css.replace(&format!("var(--{n})"), light);
    }
    css
}
