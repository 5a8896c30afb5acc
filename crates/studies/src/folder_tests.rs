//! Every study's folder in its `report.html`: each table, plot and finding the
//! writer wrote, from the studies' fixture documents.

use crate::folder::write_folder;
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
            Written::Table { stem, table } => {
                assert!(dir.path().join(format!("{stem}.md")).is_file());
                assert!(html.contains(&format!("id=\"t-{stem}\"")), "{stem}");
                assert!(
                    html.contains(&maud::html!((table.title)).into_string()),
                    "{stem}"
                );
                for row in &table.rows {
                    let first = maud::html!((xferbench_report::html::table::keep_units(&row[0])))
                        .into_string();
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
    let html = assert_folder_in_report(&crate::rpmsg::fixture::rpmsg_doc());
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
    let html = assert_folder_in_report(&crate::warp_pipe::writer::tests::doc());
    assert!(html.contains("Speed-up."));
}

#[test]
fn the_hashtable_report_holds_every_table_plot_and_finding() {
    let html = assert_folder_in_report(&crate::hashtable::writer::tests::doc());
    assert!(html.contains("The collapse (preopt S4)"));
    // The seed's columns are reference series, dashed.
    assert!(html.contains(" reference\""), "{html}");
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
