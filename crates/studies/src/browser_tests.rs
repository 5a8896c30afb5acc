//! The reports in a real browser: headless Chromium loads a study's and a run's
//! `report.html` from disk (no network), and the DOM it ends with must hold the
//! tables and plots, show that the sort script ran, and record no script error. A
//! screenshot of each page is saved in the test's temporary folder. Skipped, saying
//! why, when no Chromium is installed (`.ci/run` installs Debian's `chromium`).

use std::path::{Path, PathBuf};
use std::process::Command;
use xferbench_report::fixture;

fn browser() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|b| {
            std::env::var_os("PATH")?
                .to_str()?
                .split(':')
                .map(|d| Path::new(d).join(b))
                .find(|p| p.is_file())
        })
}

fn chromium(bin: &Path, page: &Path, extra: &[String]) -> std::process::Output {
    let profile = page.with_extension("profile");
    Command::new(bin)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--enable-logging=stderr",
            "--virtual-time-budget=2000",
            &format!("--user-data-dir={}", profile.display()),
        ])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs")
}

fn check(bin: &Path, page: &Path, tables: usize, plots: usize) {
    let out = chromium(bin, page, &["--dump-dom".into()]);
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    // The script marks the root element: ready, or the message of an error.
    let root = dom.split("<head").next().unwrap_or_default();
    assert!(
        root.contains("data-report=\"ready\""),
        "the script did not run: {log}"
    );
    assert!(!root.contains("data-script-error"), "script error: {root}");
    assert!(
        !log.contains("Uncaught") && !log.contains(":CONSOLE("),
        "console output: {log}"
    );
    assert!(
        dom.matches("data-sortable=\"ready\"").count() >= tables,
        "tables"
    );
    assert!(
        dom.matches("<figure class=\"chart\"").count() >= plots,
        "plots"
    );
    let shot = page.with_extension("png");
    chromium(
        bin,
        page,
        &[
            "--window-size=1200,1600".into(),
            format!("--screenshot={}", shot.display()),
        ],
    );
    assert!(
        std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000),
        "no screenshot"
    );
}

#[test]
fn a_browser_shows_the_study_and_run_reports_without_script_errors() {
    let Some(bin) = browser() else {
        eprintln!("skipped: no chromium on PATH (install Debian's `chromium` package)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("study");
    let folder = crate::folder::write_folder(&study, &crate::rpmsg::fixture::rpmsg_doc()).unwrap();
    let written = folder.written();
    let count = |plot: bool| {
        written
            .iter()
            .filter(|w| matches!(w, xferbench_report::study::Written::Plot { .. }) == plot)
            .filter(|w| !matches!(w, xferbench_report::study::Written::Text { .. }))
            .count()
    };
    check(&bin, &study.join("report.html"), count(false), count(true));
    let run = dir.path().join("run.html");
    std::fs::write(
        &run,
        xferbench_report::html::run_page(&fixture::stream_doc()),
    )
    .unwrap();
    check(&bin, &run, 1, 1);
}
