use super::*;
use crate::fixture;

#[test]
fn a_run_page_has_the_table_plots_and_every_point() {
    for doc in [
        fixture::stream_doc(),
        fixture::pingpong_doc(),
        fixture::counters_doc(),
    ] {
        let html = run_page(&doc);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("id=\"results-table\""));
        assert_eq!(
            html.matches("<details class=\"point\"").count(),
            doc.points.len()
        );
        for p in &doc.points {
            assert!(html.contains(&format!("href=\"#point-{}\"", p.index + 1)));
        }
        assert!(
            !html.contains("http://") || !html.contains("src=\"http"),
            "no network"
        );
        assert!(
            !html.contains("<link") && !html.contains("src="),
            "self-contained"
        );
    }
    let html = run_page(&fixture::counters_doc());
    assert!(html.contains("Counters (medians over the runs)"));
    let html = run_page(&fixture::pingpong_doc());
    assert!(html.contains("Latency percentiles"));
    let html = run_page(&fixture::stream_doc());
    assert!(html.contains("CPU per process"));
    assert!(html.contains("id=\"plots\""));
}

#[test]
fn strings_from_the_results_are_escaped() {
    let evil = "<script>alert('x')</script><img src=x onerror=alert(1)>\"&";
    let mut doc = fixture::stream_doc();
    doc.context.hostname = evil.into();
    doc.context.command_line.push(evil.into());
    doc.warnings.push(evil.into());
    doc.outcome = Outcome::Failed { error: evil.into() };
    doc.points[0].params.insert("transport".into(), evil.into());
    doc.points[0].params.insert("note".into(), evil.into());
    doc.points[0].warnings.push(evil.into());
    let html = run_page(&doc);
    // The page's own script is the only one.
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert!(!html.contains("<img"));
    assert!(html.contains("&lt;script&gt;alert('x')&lt;/script&gt;"));
}

#[test]
fn the_page_follows_the_colour_scheme_and_prints() {
    let html = run_page(&fixture::stream_doc());
    assert!(html.contains("prefers-color-scheme: dark"));
    assert!(html.contains("@media print"));
    assert!(html.contains("stroke-dasharray"));
}

#[test]
fn no_limits_are_shown_while_the_context_has_none() {
    assert!(machine_limits(&fixture::stream_doc().context).is_none());
}

#[test]
fn a_chart_page_holds_its_notes_chart_and_escaped_table_and_its_title_once() {
    let chart = Chart {
        title: "trend <x>".into(),
        x: Axis::new("run", Unit::Number, Scale::Linear),
        y: Axis::new("throughput", Unit::BytesPerSecond, Scale::Linear),
        lines: vec![Line {
            label: "host <a>".into(),
            points: vec![Point::new(1.0, 10.0), Point::new(2.0, 12.0)],
            reference: false,
        }],
        intervals: Intervals::Band,
        markers: Vec::new(),
    };
    let t = Table {
        title: String::new(),
        headers: vec!["run".into(), "median".into()],
        rows: vec![
            vec!["1".into(), "10 B/s".into()],
            vec!["2".into(), "<b>12</b>".into()],
        ],
    };
    let html = chart_page("trend <x>", &["a note".into()], &chart, &t);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("trend &lt;x&gt;") && !html.contains("trend <x>"));
    // The heading says the title; the figure has no caption repeating it.
    assert_eq!(html.matches("<h1>trend &lt;x&gt;</h1>").count(), 1);
    assert!(!html.contains("<figcaption>"));
    assert!(html.contains("a note"));
    assert_eq!(html.matches("class=\"dot\"").count(), 2);
    assert!(html.contains("id=\"trend-table\""));
    assert!(html.contains("&lt;b&gt;12&lt;/b&gt;"));
    assert!(html.contains("host &lt;a&gt;"));
}

#[test]
fn the_load_fixture_has_a_knee_per_curve() {
    let doc = fixture::load_doc();
    let knees: Vec<(Option<f64>, Option<f64>)> = doc
        .knees
        .iter()
        .map(|k| (k.knee_per_s, k.above_per_s))
        .collect();
    assert_eq!(knees, [(Some(1e6), None), (Some(1e5), Some(1e6))]);
    assert_eq!(doc.knees[1].params["transport"], "unix");
}

#[test]
fn load_points_get_latency_against_the_offered_rate_on_log_axes_with_the_knees_marked() {
    let doc = fixture::load_doc();
    let charts = run_charts(&doc);
    assert_eq!(charts.len(), 2, "latency, then the achieved rate");
    let RunChart::One { chart, note } = &charts[0] else {
        panic!("one chart of every percentile: {charts:?}");
    };
    assert_eq!(chart.title, "Latency vs offered rate");
    assert_eq!(
        (chart.x.scale, chart.x.unit, chart.y.scale, chart.y.unit),
        (Scale::Log, Unit::PerSecond, Scale::Log, Unit::Nanoseconds)
    );
    let labels: Vec<&str> = chart.lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "shm — p50",
            "shm — p99",
            "shm — p99.9",
            "shm — max",
            "unix — p50",
            "unix — p99",
            "unix — p99.9",
            "unix — max"
        ]
    );
    // Each line runs over the offered rates, the measured offered rate on x.
    let unix_p99 = &chart.lines[5].points;
    let xs: Vec<f64> = unix_p99.iter().map(|p| p.x).collect();
    assert_eq!(xs, [1e4, 1e5, 1e6]);
    assert_eq!(unix_p99[2].y, 10e6, "p99 at 1 M/s");
    let knees: Vec<(f64, &str)> = chart
        .markers
        .iter()
        .map(|m| (m.x, m.label.as_str()))
        .collect();
    assert_eq!(
        knees,
        [(1e6, "knee 1.00 M/s: shm"), (1e5, "knee 100 k/s: unix")]
    );
    assert!(note.contains("intended send time") && note.contains("knee"));

    let RunChart::One { chart, .. } = &charts[1] else {
        panic!("{charts:?}");
    };
    assert_eq!((chart.x.scale, chart.y.scale), (Scale::Log, Scale::Log));
    assert_eq!(chart.y.unit, Unit::PerSecond);
    assert_eq!(chart.lines.len(), 3, "shm, unix and the diagonal");
    assert!(chart.lines[2].reference);
    assert_eq!(chart.lines[1].points[2].y, 4e5, "unix delivers 400 k/s");
    assert_eq!(chart.markers.len(), 2);
}

#[test]
fn a_load_page_draws_both_axes_in_units_and_lists_the_knees() {
    let html = run_page(&fixture::load_doc());
    assert!(html.contains("<figcaption>Latency vs offered rate</figcaption>"));
    // Ticks in messages per second across, in times up the side.
    for tick in [">10 k/s</text>", ">100 k/s</text>", ">1 M/s</text>"] {
        assert!(html.contains(tick), "{tick}");
    }
    assert!(html.contains(" µs</text>") && html.contains(" ms</text>"));
    assert!(html.contains("<title>unix — p99: offered rate 1.00 M/s, latency 10.0 ms</title>"));
    // The knees, marked on both charts.
    assert_eq!(html.matches("<g class=\"marker\">").count(), 4);
    assert!(html.contains(">knee 1.00 M/s: shm</text>"));
    assert!(html.contains(">knee 100 k/s: unix</text>"));
    // No choice of percentile: every percentile is in the one chart.
    assert!(!html.contains("class=\"choice\""));
    // The knees table, linked from the contents.
    assert!(html.contains("href=\"#knees\"") && html.contains("id=\"knees-table\""));
    let knees = &html[html.find("id=\"knees-table\"").unwrap()..];
    let knees = &knees[..knees.find("</table>").unwrap()];
    for cell in [
        "first rate not sustained",
        "not sustained below the knee",
        "shm, 64\u{a0}B, 1\u{a0}channel",
        "none measured",
        "16.0\u{a0}µs at 10.0\u{a0}k/s",
        "sweep, 3\u{a0}points",
    ] {
        assert!(knees.contains(cell), "{cell}: {knees}");
    }
}

#[test]
fn a_load_point_shows_its_percentile_spectrum_and_how_far_behind_its_sender_fell() {
    let doc = fixture::load_doc();
    let h = point::detail(&doc.points[0]).into_string();
    assert!(h.contains("Latency percentiles from the intended send times"));
    let latency = &h[h.find("id=\"point-1-latency\"").unwrap()..];
    let latency = &latency[..latency.find("</table>").unwrap()];
    let rows: Vec<&str> = ["p50", "p90", "p99", "p99.9", "p99.99", "max", "mean"]
        .into_iter()
        .filter(|r| latency.contains(&format!(">{r}</td>")))
        .collect();
    assert_eq!(rows.len(), 7, "{latency}");
    assert!(latency.contains("16.0\u{a0}µs"), "p99.99: {latency}");
    let behind = &h[h.find("id=\"point-1-behind\"").unwrap()..];
    let behind = &behind[..behind.find("</table>").unwrap()];
    assert!(h.contains("Behind schedule"));
    for cell in [">p50</td>", "100\u{a0}ns", ">p99.9</td>", "4.00\u{a0}µs"] {
        assert!(behind.contains(cell), "{cell}: {behind}");
    }
}

#[test]
fn pages_without_load_points_have_no_knees_markers_or_behind_schedule() {
    for doc in [fixture::stream_doc(), fixture::pingpong_doc()] {
        let html = run_page(&doc);
        assert!(!html.contains("id=\"knees\"") && !html.contains("class=\"marker\""));
        assert!(!html.contains("Behind schedule") && !html.contains("p99.99"));
    }
    let html = run_page(&fixture::pingpong_doc());
    assert!(html.contains("Latency percentiles (median over the runs)"));
}

#[test]
fn one_curve_s_lines_are_named_by_their_percentile_and_its_knee_alone() {
    let mut doc = fixture::load_doc();
    doc.points.retain(|p| p.params["transport"] == "shm");
    doc.knees.truncate(1);
    let charts = run_charts(&doc);
    let [
        RunChart::One { chart: latency, .. },
        RunChart::One {
            chart: achieved, ..
        },
    ] = &charts[..]
    else {
        panic!("{charts:?}");
    };
    let labels: Vec<&str> = latency.lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["p50", "p99", "p99.9", "max"]);
    assert_eq!(latency.markers[0].label, "knee 1.00 M/s");
    let labels: Vec<&str> = achieved.lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["achieved", "achieved = offered"]);
}

#[test]
fn load_points_at_one_rate_keep_the_usual_charts() {
    let mut doc = fixture::load_doc();
    doc.points.retain(|p| p.params["rate"] == "10000");
    doc.knees.clear();
    assert!(load::charts(&doc).is_none());
    assert!(!run_page(&doc).contains("id=\"knees\""));
}

#[test]
fn each_load_curve_draws_the_floor_its_points_are_held_against() {
    use xferbench_lab::limits::fraction::LimitFraction;
    let mut doc = fixture::load_doc();
    let held = |limit: &str, value: f64, suspect: bool| LimitFraction {
        limit: limit.into(),
        limit_value: value,
        unit: "ns".into(),
        figure: figure::LATENCY[0].into(),
        figure_value: 1e3,
        fraction: value / 1e3,
        suspect,
        paired: false,
        reference: None,
    };
    for p in &mut doc.points {
        p.limit = Some(match p.params["transport"].as_str() {
            "shm" => held("half the cache-line round trip", 40.0, false),
            // A suspect floor bounds nothing: no line.
            _ => held("half the futex wake round trip", 10e3, true),
        });
    }
    let charts = run_charts(&doc);
    let RunChart::One { chart, note } = &charts[0] else {
        panic!("{charts:?}");
    };
    let floors: Vec<&Line> = chart.lines.iter().filter(|l| l.reference).collect();
    assert_eq!(floors.len(), 1, "{floors:?}");
    assert_eq!(
        floors[0].label,
        "shm — floor: half the cache-line round trip"
    );
    let ys: Vec<f64> = floors[0].points.iter().map(|p| p.y).collect();
    assert_eq!(ys, [40.0, 40.0]);
    let xs: Vec<f64> = floors[0].points.iter().map(|p| p.x).collect();
    assert_eq!(xs.first(), Some(&1e4), "from the curve's lowest rate");
    assert!(note.contains("Dashed: the one-way floor"), "{note}");
}
