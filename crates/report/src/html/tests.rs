use super::*;
use crate::fixture;
use crate::studies::write_folder;

/// Every table caption and plot title the folder holds appears in its report.html.
fn assert_folder_in_report(doc: &ResultDoc) -> String {
    let dir = tempfile::tempdir().unwrap();
    let folder = write_folder(dir.path(), doc).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let written = folder.written();
    assert!(written.iter().any(|w| matches!(w, Written::Table { .. })));
    for w in &written {
        match w {
            Written::Table { stem, table } => {
                assert!(dir.path().join(format!("{stem}.md")).is_file());
                assert!(html.contains(&format!("id=\"t-{stem}\"")), "{stem}");
                assert!(
                    html.contains(&maud::html!((table.title)).into_string()),
                    "{stem}"
                );
                for row in &table.rows {
                    let first = maud::html!((table::keep_units(&row[0]))).into_string();
                    assert!(html.contains(&first), "{stem}: {first}");
                }
            }
            Written::Plot { stem, chart } => {
                assert!(dir.path().join(format!("{stem}.svg")).is_file());
                assert!(html.contains(&format!("id=\"plot-{stem}\"")), "{stem}");
                assert!(
                    html.contains(&maud::html!((chart.title)).into_string()),
                    "{stem}"
                );
                let drawn: usize = chart.series.iter().map(|s| s.points.len()).sum();
                let section = html.split(&format!("id=\"plot-{stem}\"")).nth(1).unwrap();
                let section = section.split("</figure>").next().unwrap();
                assert!(
                    section.matches("<circle").count() > 0 && drawn > 0,
                    "{stem}"
                );
            }
            Written::Text { name, .. } => assert!(html.contains(name.as_str()), "{name}"),
        }
    }
    // Every file in the folder is named in the report.
    for f in std::fs::read_dir(dir.path()).unwrap() {
        let name = f.unwrap().file_name().to_string_lossy().into_owned();
        if name != "report.html" {
            assert!(html.contains(&name), "{name} is not in report.html");
        }
    }
    for p in &doc.points {
        assert!(html.contains(&format!("id=\"point-{}\"", p.index + 1)));
    }
    html
}

#[test]
fn the_rpmsg_report_holds_every_table_plot_and_finding() {
    let html = assert_folder_in_report(&fixture::rpmsg_doc());
    assert!(html.contains("<section class=\"findings\" id=\"findings\">"));
    assert!(
        html.contains("Packet-rate ceiling"),
        "the summary's findings"
    );
    // The SC598's figures are reference series, dashed.
    assert!(html.contains("series s2 reference"), "{html}");
    assert!(html.find("id=\"findings\"") < html.find("id=\"tables\""));
}

#[test]
fn the_warp_pipe_report_holds_every_table_plot_and_finding() {
    let html = assert_folder_in_report(&crate::studies::warp_pipe::tests::doc());
    assert!(html.contains("Speed-up."));
}

#[test]
fn the_hashtable_report_holds_every_table_plot_and_finding() {
    let html = assert_folder_in_report(&crate::studies::hashtable::tests::doc());
    assert!(html.contains("The collapse (preopt S4)"));
    // The seed's columns are reference series, dashed.
    assert!(html.contains(" reference\""), "{html}");
}

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

    let mut study = fixture::rpmsg_doc();
    study.context.hostname = evil.into();
    study.warnings.push(evil.into());
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), &study).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert_eq!(html.matches("<script").count(), 1);
    assert!(!html.contains("<img"));
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
