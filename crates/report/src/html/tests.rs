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
