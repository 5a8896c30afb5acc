//! Charts in the page: a [`Chart`] of the one chart engine ([`crate::chart`]) drawn
//! inline as a `<figure>` with its caption, legend and a note; and a choice of charts
//! shown one at a time (the latency percentiles), switched by radio buttons with CSS
//! alone, so it works without the script and prints every chart.

use crate::chart::{Chart, svg};
use crate::plot::LineChart;
use maud::{Markup, html};

/// A chart as a `<figure>`: the caption (unless `caption` is false, when the page's
/// heading already says it), the chart, its legend and `note`.
pub fn figure(c: &Chart, caption: bool, note: Option<&str>) -> Markup {
    html! {
        figure.chart {
            @if caption { figcaption { (c.title) } }
            // On a narrow window the chart keeps a legible size and scrolls in its box.
            div.chart-box { (svg::inline(c)) }
            @if c.lines.iter().any(|l| !l.label.is_empty()) {
                ul.legend {
                    @for (i, l) in c.lines.iter().enumerate() {
                        li {
                            svg.xb-chart.swatch viewBox="0 0 28 10" width="28" height="10" aria-hidden="true" {
                                g class={"series s" (i % 8) @if l.reference { " reference" }} {
                                    line.swatch x1="0" x2="28" y1="5" y2="5" {}
                                }
                            }
                            " " (l.label)
                            @if l.reference { " (reference, dashed)" }
                        }
                    }
                }
            }
            @if let Some(n) = note { p.note { (n) } }
        }
    }
}

/// A study's [`LineChart`] as a `<figure>` (the same drawing as its SVG file).
pub fn line_chart(c: &LineChart) -> Markup {
    figure(&Chart::from(c), true, None)
}

/// Charts shown one at a time: `name` labels the choice (`percentile`), each option
/// is a label (`p50`) and its chart; the first is shown first. `id` must be unique in
/// the page.
pub fn choice(id: &str, name: &str, options: &[(String, Chart)], note: Option<&str>) -> Markup {
    html! {
        div.choice id=(id) role="group" aria-label=(name) {
            span.choice-name { (name) ":" }
            @for (i, (label, _)) in options.iter().enumerate() {
                input type="radio" name=(id) id={(id) "-" (i)} value=(label) checked[i == 0];
                label for={(id) "-" (i)} { (label) }
            }
            div.panels {
                @for (label, c) in options {
                    div.panel data-option=(label) { (figure(c, true, note)) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{Axis, Intervals, Line, Point, Scale, Unit};

    fn chart(title: &str) -> Chart {
        Chart {
            title: title.into(),
            x: Axis::new("message size", Unit::Bytes, Scale::Log),
            y: Axis::new("round-trip latency p50", Unit::Nanoseconds, Scale::Linear),
            lines: vec![Line {
                label: "pipe <1>".into(),
                points: vec![Point::new(64.0, 6000.0), Point::new(1024.0, 6500.0)],
                reference: false,
            }],
            intervals: Intervals::Bars,
            markers: Vec::new(),
        }
    }

    #[test]
    fn a_figure_has_its_caption_legend_and_note() {
        let h = figure(&chart("latency"), true, Some("lower is better")).into_string();
        assert!(h.contains("<figcaption>latency</figcaption>"));
        assert!(h.contains("pipe &lt;1&gt;") && !h.contains("<1>"));
        assert!(h.contains("lower is better"));
        assert!(
            !figure(&chart("x"), false, None)
                .into_string()
                .contains("figcaption")
        );
    }

    #[test]
    fn a_choice_has_one_radio_and_one_panel_per_option_the_first_checked() {
        let options: Vec<(String, Chart)> = ["p50", "p99", "p99.9"]
            .iter()
            .map(|p| (p.to_string(), chart(&format!("latency {p}"))))
            .collect();
        let h = choice("lat", "percentile", &options, None).into_string();
        assert_eq!(h.matches("type=\"radio\"").count(), 3);
        assert_eq!(h.matches("checked").count(), 1);
        assert!(h.contains("id=\"lat-0\" value=\"p50\" checked"), "{h}");
        assert_eq!(h.matches("class=\"panel\"").count(), 3);
        assert!(h.contains("latency p99.9"));
    }
}

/// A chart of a `run`'s page.
#[derive(Debug, Clone, PartialEq)]
pub enum RunChart {
    /// One chart of the primary figure.
    One {
        /// The chart.
        chart: Chart,
        /// What is drawn: medians, intervals, which way is better.
        note: String,
    },
    /// The round-trip latency, one chart per percentile (p50, p99, p99.9), shown one
    /// at a time.
    Percentiles {
        /// Percentile names (`p50`) and their charts.
        options: Vec<(String, Chart)>,
        /// What is drawn.
        note: String,
    },
}
