//! The reports in a real browser: headless Chromium loads a study's and a run's
//! `report.html` from disk (no network), and the DOM it ends with must hold the
//! tables and plots, show that the sort script ran, and record no script error. A
//! probe page then loads each report in a frame as wide as a desktop window and as
//! a phone's, measures that nothing is wider than the window but what the tables'
//! and charts' own scroll boxes hold, and picks another latency percentile to see its
//! chart replace the p50 one; a `load` run's page, with its charts against the offered
//! rate and its knees, and a `compare --export-html` page must load and fit too. Skipped, saying why, when no Chromium is installed (`.ci/run` installs
//! Debian's `chromium`).
//!
//! With `XFERBENCH_SCREENSHOTS=DIR` set, [`screenshots_for_review`] also renders the
//! pages of the result files in `docs/data/report/` and saves screenshots of them
//! (light and dark, and one on a phone-sized window) into `DIR`; that is how
//! `scripts/screenshots.sh` makes `docs/img/`.

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
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--virtual-time-budget=3000",
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

/// What the probe measured in a report shown `width` pixels wide.
#[derive(Debug, serde::Deserialize)]
struct Probe {
    /// The window's width.
    width: f64,
    /// How far the page scrolls sideways (0 when it fits).
    overflow: f64,
    /// Elements wider than the window, outside the tables' and charts' own scroll
    /// boxes.
    wide: Vec<String>,
    /// The latency percentile shown first, and after choosing the second.
    shown: Vec<String>,
    after: Vec<String>,
}

/// Loads `page` into a frame `width` pixels wide and measures it (see [`Probe`]).
fn probe(bin: &Path, page: &Path, width: u32) -> Probe {
    let name = page.file_name().unwrap().to_string_lossy();
    let probe = page.with_file_name(format!("probe-{width}-{name}"));
    std::fs::write(
        &probe,
        format!(
            r#"<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="{name}" style="width:{width}px;height:1200px;border:0"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {{
  var w = this.contentWindow, d = this.contentDocument, out = {{}};
  out.width = w.innerWidth;
  out.overflow = d.documentElement.scrollWidth - w.innerWidth;
  out.wide = Array.prototype.filter.call(d.querySelectorAll("body *"), function (e) {{
    return !e.closest(".table-wrap > *, .chart-box > *, svg > *")
      && e.getBoundingClientRect().right > w.innerWidth + 1;
  }}).map(function (e) {{
    return e.tagName + "." + (typeof e.className === "string" ? e.className : e.className.baseVal);
  }});
  function shown() {{
    return Array.prototype.filter.call(d.querySelectorAll(".choice .panel"), function (p) {{
      return w.getComputedStyle(p).display !== "none";
    }}).map(function (p) {{ return p.getAttribute("data-option"); }});
  }}
  out.shown = shown();
  var second = d.querySelector(".choice label[for$='-1']");
  if (second) second.click();
  out.after = shown();
  document.body.setAttribute("data-probe", JSON.stringify(out));
}});
</script></body></html>"#
        ),
    )
    .unwrap();
    let out = chromium(
        bin,
        &probe,
        &["--allow-file-access-from-files".into(), "--dump-dom".into()],
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let json = dom
        .split("data-probe=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("the probe did not run: {dom}"))
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// The page holds in a desktop window and on a phone: nothing wider than the window
/// but what the tables' and charts' scroll boxes hold.
fn assert_fits(bin: &Path, page: &Path) -> Vec<Probe> {
    [1280, 390]
        .into_iter()
        .map(|width| {
            let p = probe(bin, page, width);
            assert_eq!(p.width, width as f64);
            assert!(
                p.overflow <= 0.0 && p.wide.is_empty(),
                "{} at {width} px: scrolls sideways by {} px; too wide: {:?}",
                page.display(),
                p.overflow,
                p.wide
            );
            p
        })
        .collect()
}

#[test]
fn a_browser_shows_the_study_and_run_reports_without_script_errors() {
    let Some(bin) = browser() else {
        eprintln!("skipped: no chromium on PATH (install Debian's `chromium` package)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("study");
    let folder = crate::write_folder(&study, &crate::rpmsg::fixture::rpmsg_doc()).unwrap();
    let written = folder.written();
    let count = |plot: bool| {
        written
            .iter()
            .filter(|w| matches!(w, xferbench_report::study::Written::Plot { .. }) == plot)
            .filter(|w| !matches!(w, xferbench_report::study::Written::Text { .. }))
            .count()
    };
    check(&bin, &study.join("report.html"), count(false), count(true));
    assert_fits(&bin, &study.join("report.html"));
    let run = dir.path().join("run.html");
    std::fs::write(
        &run,
        xferbench_report::html::run_page(&fixture::stream_doc()),
    )
    .unwrap();
    check(&bin, &run, 1, 1);
    assert_fits(&bin, &run);
}

#[test]
fn a_browser_switches_the_latency_percentile_and_the_page_fits_a_phone() {
    let Some(bin) = browser() else {
        eprintln!("skipped: no chromium on PATH (install Debian's `chromium` package)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("pingpong.html");
    std::fs::write(
        &run,
        xferbench_report::html::run_page(&fixture::pingpong_doc()),
    )
    .unwrap();
    check(&bin, &run, 1, 1);
    for p in assert_fits(&bin, &run) {
        assert_eq!(p.shown, ["p50"], "the p50 chart alone at first");
        assert_eq!(p.after, ["p99"], "choosing p99 shows its chart alone");
    }
}

#[test]
fn a_browser_draws_latency_against_the_offered_rate_and_the_page_fits_a_phone() {
    let Some(bin) = browser() else {
        eprintln!("skipped: no chromium on PATH (install Debian's `chromium` package)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("load.html");
    std::fs::write(&run, xferbench_report::html::run_page(&fixture::load_doc())).unwrap();
    // The results and knees tables; latency and the achieved rate against the offered.
    check(&bin, &run, 2, 2);
    assert_fits(&bin, &run);
}

#[test]
fn a_browser_shows_the_compare_page_and_it_fits_a_phone() {
    let Some(bin) = browser() else {
        eprintln!("skipped: no chromium on PATH (install Debian's `chromium` package)");
        return;
    };
    let base = fixture::stream_doc();
    let mut new = base.clone();
    for p in &mut new.points {
        let fig = p.primary().figure.clone();
        for r in &mut p.runs {
            if let Some(v) = r.figures.get_mut(&fig) {
                *v *= 0.8;
            }
        }
    }
    let c = xferbench_lab::compare::compare_docs(&base, &new, 0.05).unwrap();
    let side = |label, doc| xferbench_report::html::compare::Side { label, doc };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("compare.html");
    std::fs::write(
        &page,
        xferbench_report::html::compare::compare_page(
            &c,
            side("base.json", &base),
            side("new.json", &new),
        ),
    )
    .unwrap();
    // The points table; BASE and NEW, and the change.
    check(&bin, &page, 1, 2);
    assert_fits(&bin, &page);
}

/// The result files the screenshots in `docs/img/` show.
fn review_docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/data/report")
}

#[test]
fn the_committed_result_files_render_and_fit() {
    let Some(bin) = browser() else {
        eprintln!("skipped: no chromium on PATH (install Debian's `chromium` package)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for name in ["stream", "pingpong"] {
        let text = std::fs::read_to_string(review_docs().join(format!("{name}.json"))).unwrap();
        let doc: xferbench_lab::result::ResultDoc = serde_json::from_str(&text).unwrap();
        let page = dir.path().join(format!("{name}.html"));
        std::fs::write(&page, xferbench_report::html::run_page(&doc)).unwrap();
        check(&bin, &page, 1, 1);
        assert_fits(&bin, &page);
    }
}

/// Screenshots for a person to review (`scripts/screenshots.sh`): the stream and
/// ping-pong reports of `docs/data/report/`, light and dark in a desktop window, and
/// the stream report on a phone, written to `$XFERBENCH_SCREENSHOTS`.
#[test]
fn screenshots_for_review() {
    let Some(out) = std::env::var_os("XFERBENCH_SCREENSHOTS").map(PathBuf::from) else {
        eprintln!(
            "skipped: set XFERBENCH_SCREENSHOTS=DIR to write screenshots (scripts/screenshots.sh)"
        );
        return;
    };
    let bin = browser().expect("screenshots need chromium on PATH");
    let out = std::fs::canonicalize(&out).expect("the screenshot folder exists");
    let dir = tempfile::tempdir().unwrap();
    for (name, height) in [("stream", 2500), ("pingpong", 2600)] {
        let text = std::fs::read_to_string(review_docs().join(format!("{name}.json"))).unwrap();
        let doc: xferbench_lab::result::ResultDoc = serde_json::from_str(&text).unwrap();
        let page = dir.path().join(format!("{name}.html"));
        std::fs::write(&page, xferbench_report::html::run_page(&doc)).unwrap();
        let mut shots = vec![
            (format!("report-{name}-light.png"), 1280, height, false),
            (format!("report-{name}-dark.png"), 1280, height, true),
        ];
        if name == "stream" {
            shots.push((format!("report-{name}-phone.png"), 390, 2400, false));
        }
        for (file, w, h, dark) in shots {
            let shot = out.join(&file);
            let mut flags = vec![
                format!("--window-size={w},{h}"),
                format!("--screenshot={}", shot.display()),
            ];
            if dark {
                flags.push("--force-dark-mode".into());
            }
            chromium(&bin, &page, &flags);
            assert!(
                std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000),
                "no screenshot {file}"
            );
            eprintln!("wrote {}", shot.display());
        }
    }
}
