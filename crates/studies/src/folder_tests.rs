//! Every study's folder in its `report.html`: each table, plot and finding the
//! writer wrote, from the studies' fixture documents.

use crate::write_folder;
use xferbench_lab::result::ResultDoc;
use xferbench_report::study::Written;

/// Every table caption and plot title the folder holds appears in its report.html.
fn assert_folder_in_report(doc: &ResultDoc) -> String {
    let dir = tempfile::tempdir().unwrap();
    let folder = write_folder(dir.path(), doc).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let written = folder.written();
    assert!(written.iter().any(|w| matches!(w, Written::Table { .. })));
    for w in &written {
        match w {
            Written::Table { stem, table, units } => {
                // The Markdown keeps the bare numbers; the page writes them in their units.
                assert_eq!(
                    std::fs::read_to_string(dir.path().join(format!("{stem}.md"))).unwrap(),
                    table.to_markdown()
                );
                for u in units {
                    assert!(table.headers.contains(&u.column), "{stem}: {}", u.column);
                }
                let shown = xferbench_report::html::table::with_units(table, units);
                assert!(html.contains(&format!("id=\"t-{stem}\"")), "{stem}");
                assert!(
                    html.contains(&maud::html!((table.title)).into_string()),
                    "{stem}"
                );
                for row in &shown.rows {
                    for cell in row {
                        let cell = maud::html!((xferbench_report::html::table::keep_units(cell)))
                            .into_string();
                        assert!(html.contains(&cell), "{stem}: {cell}");
                    }
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
    let html = assert_folder_in_report(&crate::rpmsg::fixture::rpmsg_doc());
    assert!(html.contains("<section class=\"findings\" id=\"findings\">"));
    assert!(
        html.contains("Packet-rate ceiling"),
        "the summary's findings"
    );
    // The SC598's figures are reference series, dashed.
    assert!(html.contains("series s2 reference"), "{html}");
    // The measured medians carry their intervals; the quoted figures none.
    let plots = html.split("id=\"plots\"").nth(1).unwrap();
    assert!(plots.contains("class=\"bar\""), "{plots}");
    assert!(html.find("id=\"findings\"") < html.find("id=\"tables\""));
    // The tables' quantities carry their units, as the terminal writes them: the
    // Markdown's `489600 [480000–499200, 75 %]` bytes/s of one channel.
    let rate = xferbench_report::format::rate_bytes;
    let cell = format!(
        "{} [{}–{}, 75 %]",
        rate(489600.0),
        rate(480000.0),
        rate(499200.0)
    );
    let cell = xferbench_report::html::table::keep_units(&cell);
    assert!(html.contains(&cell), "{cell}");
}

#[test]
fn the_warp_pipe_report_holds_every_table_plot_and_finding() {
    let html = assert_folder_in_report(&crate::warp_pipe::writer::tests::doc());
    assert!(html.contains("Speed-up."));
    // Its plots of medians carry the interval of each median.
    let plots = html.split("id=\"plots\"").nth(1).unwrap();
    assert!(plots.contains("class=\"bar\""), "{plots}");
}

#[test]
fn the_hashtable_report_holds_every_table_plot_and_finding() {
    let html = assert_folder_in_report(&crate::hashtable::writer::tests::doc());
    assert!(html.contains("The collapse (preopt S4)"));
    // The seed's columns are reference series, dashed.
    assert!(html.contains(" reference\""), "{html}");
    // The steady requests/s are medians, with their intervals where several runs
    // made them (the fixture's one run has none; the seed's figures none).
    let mut doc = crate::hashtable::writer::tests::doc();
    let steady = xferbench_lab::rig::kv::figures::REQUESTS_PER_S_STEADY;
    for p in &mut doc.points {
        if let Some(e) = p.summary.get_mut(steady) {
            let m = e.median;
            *e = xferbench_probes::stats::Estimate::from_values([m * 0.9, m, m * 1.1]).unwrap();
        }
    }
    let chart = crate::hashtable::writer::throughput_chart(&doc);
    for series in &chart.series {
        assert_eq!(
            series.intervals.iter().any(Option::is_some),
            !series.reference && !series.is_reference(),
            "{}",
            series.label
        );
    }
}

#[test]
fn strings_from_a_study_document_are_escaped() {
    let evil = "<script>alert('x')</script><img src=x onerror=alert(1)>\"&";
    let mut study = crate::rpmsg::fixture::rpmsg_doc();
    study.context.hostname = evil.into();
    study.warnings.push(evil.into());
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), &study).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert_eq!(html.matches("<script").count(), 1);
    assert!(!html.contains("<img"));
}
