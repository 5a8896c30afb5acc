//! The study data the docs quote (`docs/studies/data/<study>/`, written by
//! `scripts/refresh-docs-data.sh`): every committed `results.json` still parses under
//! the current schema and its study's writer still renders it, and every block of
//! `docs/studies/*.md` generated from a data file is that file. So is every block of
//! the other docs in [`OTHER_DOCS`] (`docs/load.md`: the tables
//! `scripts/load-summary.py` writes from `docs/data/load/`).
//!
//! A generated block is
//!
//! ```text
//! <!-- generated from data/<study>/<file>.md by scripts/refresh-docs-data.sh -->
//! ...the file, its headings moved two levels down...
//! <!-- end of generated block -->
//! ```
//!
//! (`by` names the script that writes the file; its path is relative to the doc.)
//!
//! `XFERBENCH_UPDATE_DOCS=1 cargo test -p xferbench-studies --lib docs_data` rewrites
//! each data folder's `summary.md` as its writer renders it from the folder's
//! `results.json`, and the blocks from the files.

use crate::write_folder;
use std::path::{Path, PathBuf};
use xferbench_lab::result::{ResultDoc, SCHEMA_VERSION};

const OPEN: &str = "<!-- generated from ";
const OPEN_END: &str = " by scripts/refresh-docs-data.sh -->";
/// Between the quoted file's name and the end of the opening line, the script's name.
const BY: &str = " by scripts/";

/// Docs outside `docs/studies/` with generated blocks, relative to `docs/`.
const OTHER_DOCS: &[&str] = &["load.md"];
const CLOSE: &str = "<!-- end of generated block -->";

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/studies")
}

/// The study folders under `docs/studies/data/`, each with its study's name: the
/// study's own, and every run of the same study beside it (`<study>/profile/`, the
/// profile run's, or a subset's), when there is one.
fn data_folders() -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = Vec::new();
    let dirs = std::fs::read_dir(docs().join("data"))
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    for d in dirs {
        let study = d.file_name().unwrap().to_string_lossy().into_owned();
        for sub in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if sub.path().join("results.json").is_file() {
                v.push((study.clone(), sub.path()));
            }
        }
        v.push((study, d));
    }
    v.sort();
    v
}

/// A data file as the doc quotes it: its headings two levels down, so that the
/// summary's title sits under the doc's section.
fn quoted(text: &str) -> String {
    let mut out = String::new();
    for line in text.trim_end().lines() {
        if line.starts_with('#') {
            out.push_str("##");
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The doc with every generated block replaced by its file, or the first error.
fn regenerate(doc: &str, dir: &Path) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = doc;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        let after = &rest[i + OPEN.len()..];
        let malformed = || {
            format!(
                "a generated block's opening line is malformed near: {}",
                after.chars().take(80).collect::<String>()
            )
        };
        let line_end = after.find('\n').unwrap_or(after.len());
        let j = after[..line_end].find(BY).ok_or_else(malformed)?;
        let close = after[..line_end].find(" -->").ok_or_else(malformed)?;
        let name = &after[..j];
        let by = &after[j..close + " -->".len()];
        let body = &after[close + " -->".len()..];
        let k = body
            .find(CLOSE)
            .ok_or_else(|| format!("the block generated from {name} has no end line"))?;
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{name}, quoted by a generated block: {e}"))?;
        out.push_str(OPEN);
        out.push_str(name);
        out.push_str(by);
        out.push_str("\n\n");
        out.push_str(&quoted(&text));
        out.push('\n');
        out.push_str(CLOSE);
        rest = &body[k + CLOSE.len()..];
    }
    out.push_str(rest);
    Ok(out)
}

#[test]
fn docs_data_results_parse_under_the_current_schema_and_render() {
    for (study, dir) in data_folders() {
        let path = dir.join("results.json");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let doc: ResultDoc = serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "{} no longer parses under the current schema ({e}): rerun \
                 scripts/refresh-docs-data.sh {study}",
                path.display()
            )
        });
        assert!(doc.schema_version <= SCHEMA_VERSION, "{}", path.display());
        let info = doc.study.as_ref().expect("a study's document");
        assert_eq!(info.name, study, "{}", path.display());
        assert!(
            crate::find(&study).is_ok(),
            "{study} is not a registered study"
        );
        let out = tempfile::tempdir().unwrap();
        write_folder(out.path(), &doc)
            .unwrap_or_else(|e| panic!("{study}'s writer fails on {}: {e:#}", path.display()));
    }
}

/// The data folders whose `summary.md` is not what their writer renders from their
/// `results.json`; with `update`, rewritten so that it is.
fn stale_summaries(update: bool) -> Vec<String> {
    let mut stale = Vec::new();
    for (_, dir) in data_folders() {
        let text = std::fs::read_to_string(dir.join("results.json")).unwrap();
        let Ok(doc) = serde_json::from_str::<ResultDoc>(&text) else {
            continue; // the test above names it
        };
        let out = tempfile::tempdir().unwrap();
        if write_folder(out.path(), &doc).is_err() {
            continue; // likewise
        }
        let path = dir.join("summary.md");
        let rendered = std::fs::read_to_string(out.path().join("summary.md")).unwrap();
        if std::fs::read_to_string(&path).ok().as_deref() != Some(rendered.as_str()) {
            if update {
                std::fs::write(&path, rendered).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    stale
}

#[test]
fn docs_data_summaries_are_what_their_writers_render() {
    if std::env::var_os("XFERBENCH_UPDATE_DOCS").is_some() {
        return; // the blocks' test rewrites them before it quotes them
    }
    let stale = stale_summaries(false);
    assert!(
        stale.is_empty(),
        "the writers render these summaries differently from their results.json: {}; run \
         `XFERBENCH_UPDATE_DOCS=1 cargo test -p xferbench-studies --lib docs_data` and commit",
        stale.join(", ")
    );
}

#[test]
fn docs_data_every_study_has_committed_data() {
    for r in crate::registry() {
        let name = r.study.name();
        assert!(
            docs()
                .join("data")
                .join(name)
                .join("results.json")
                .is_file(),
            "docs/studies/data/{name}/results.json is missing: run scripts/refresh-docs-data.sh {name}"
        );
    }
}

#[test]
fn docs_data_blocks_are_the_files_they_quote() {
    let update = std::env::var_os("XFERBENCH_UPDATE_DOCS").is_some();
    if update {
        // The summaries first, so that the blocks quote them as rendered.
        stale_summaries(true);
    }
    let mut stale = Vec::new();
    let mut docs_files: Vec<PathBuf> = std::fs::read_dir(docs())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs_files.sort();
    docs_files.extend(OTHER_DOCS.iter().map(|d| docs().join("..").join(d)));
    for path in docs_files {
        let doc = std::fs::read_to_string(&path).unwrap();
        let new = regenerate(&doc, path.parent().unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if new != doc {
            if update {
                std::fs::write(&path, new).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "generated blocks differ from the data they quote in {}: run \
         `XFERBENCH_UPDATE_DOCS=1 cargo test -p xferbench-studies --lib docs_data` and commit",
        stale.join(", ")
    );
}

#[test]
fn docs_data_a_block_quotes_its_file_with_headings_moved_down() {
    let doc = format!("intro\n{OPEN}data/none/x.md{OPEN_END}\nold\n{CLOSE}\ntail\n");
    let e = regenerate(&doc, &docs()).unwrap_err();
    assert!(e.contains("data/none/x.md"), "{e}");
    assert_eq!(quoted("# T\n\ntext\n## S\n"), "### T\n\ntext\n#### S\n");
    let unterminated = format!("{OPEN}data/none/x.md{OPEN_END}\nold\n");
    assert!(
        regenerate(&unterminated, &docs())
            .unwrap_err()
            .contains("no end line")
    );
    // Another script's block, its file relative to the doc.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/s.md"), "## Knees\n\n| a |\n").unwrap();
    let doc = format!("x\n{OPEN}data/s.md by scripts/s.py -->\nold\n{CLOSE}\ny\n");
    assert_eq!(
        regenerate(&doc, dir.path()).unwrap(),
        format!("x\n{OPEN}data/s.md by scripts/s.py -->\n\n#### Knees\n\n| a |\n\n{CLOSE}\ny\n")
    );
}
