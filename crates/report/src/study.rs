//! A study's output folder: `results.json`, tables as Markdown and CSV, SVG plots and a
//! `summary.md`, every file written atomically so a crash or Ctrl-C never leaves half a
//! file behind.
//!
//! A study fills [`Table`]s and [`LineChart`]s from its finished results and hands them
//! to a [`StudyFolder`]; this module knows nothing of any particular study.

use crate::plot::LineChart;
use anyhow::{Context as _, Result};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A table shaped like a write-up's: a title, column headers and rows of formatted cells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// Caption, written above the Markdown table (not part of the CSV).
    pub title: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows; each should have as many cells as there are headers.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A GitHub-flavoured Markdown table under a `### title` line. Numeric-looking
    /// columns are right-aligned; `|` in cells is escaped.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        if !self.title.is_empty() {
            out.push_str(&format!("### {}\n\n", self.title));
        }
        let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        out.push('|');
        for h in &self.headers {
            out.push_str(&format!(" {} |", cell(h)));
        }
        out.push_str("\n|");
        for i in 0..self.headers.len() {
            let numeric = !self.rows.is_empty()
                && self
                    .rows
                    .iter()
                    .all(|r| r.get(i).is_none_or(|c| looks_numeric(c)));
            out.push_str(if numeric { "--:|" } else { ":--|" });
        }
        out.push('\n');
        for row in &self.rows {
            out.push('|');
            for i in 0..self.headers.len().max(row.len()) {
                out.push_str(&format!(
                    " {} |",
                    cell(row.get(i).map_or("", String::as_str))
                ));
            }
            out.push('\n');
        }
        out
    }

    /// RFC 4180 CSV: a header line, then one line per row.
    pub fn to_csv(&self) -> String {
        let mut w = ::csv::WriterBuilder::new()
            .flexible(true)
            .from_writer(Vec::new());
        // Writing to a Vec cannot fail.
        let _ = w.write_record(&self.headers);
        for row in &self.rows {
            let _ = w.write_record(row);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

/// `12.5`, `1,024`, `3.2 GB/s`, `-4 %`, `12x`: a number, perhaps with a unit after it.
fn looks_numeric(cell: &str) -> bool {
    let c = cell.trim();
    c.is_empty()
        || c == "—"
        || c.chars()
            .next()
            .is_some_and(|ch| ch.is_ascii_digit() || ch == '-' || ch == '+' || ch == '±')
}

/// The unit of the numbers of one column of a [`Table`], by the column's header: the
/// HTML page writes each number of that column in it, as the terminal tables do
/// (`489600` bytes/s as `489.6 kB/s`), while the Markdown and CSV files keep the bare
/// numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnUnit {
    /// The column's header, as in [`Table::headers`].
    pub column: String,
    /// The unit of its numbers once multiplied by `scale`.
    pub unit: crate::chart::Unit,
    /// What one of the column's numbers is worth in `unit` (1e6 for a column of
    /// MB/s given in [`crate::chart::Unit::BytesPerSecond`]).
    pub scale: f64,
}

impl ColumnUnit {
    /// The column `column` of numbers in `unit`.
    pub fn new(column: impl Into<String>, unit: crate::chart::Unit) -> ColumnUnit {
        ColumnUnit {
            column: column.into(),
            unit,
            scale: 1.0,
        }
    }

    /// The same column with numbers worth `scale` of the unit each.
    pub fn scaled(self, scale: f64) -> ColumnUnit {
        ColumnUnit { scale, ..self }
    }
}

/// A table, plot or text a study wrote into its folder, kept for the folder's
/// `report.html` (see [`StudyFolder::written`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Written {
    /// `stem.md` and `stem.csv`.
    Table {
        /// The file stem.
        stem: String,
        /// The table.
        table: Table,
        /// The units of its columns of quantities, for the HTML page (empty: the
        /// cells as they are).
        units: Vec<ColumnUnit>,
    },
    /// `stem.svg`.
    Plot {
        /// The file stem.
        stem: String,
        /// The chart.
        chart: LineChart,
    },
    /// A text file such as `summary.md`.
    Text {
        /// The file name.
        name: String,
        /// Its contents.
        text: String,
    },
}

/// The folder a study writes into. It remembers the tables, plots and texts written
/// through it, in order, so that the HTML report shows exactly what the folder holds.
#[derive(Debug, Clone)]
pub struct StudyFolder {
    dir: PathBuf,
    written: std::sync::Arc<std::sync::Mutex<Vec<Written>>>,
}

impl StudyFolder {
    /// Creates the folder (and its parents) if needed.
    pub fn create(dir: &Path) -> Result<StudyFolder> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the study folder {}", dir.display()))?;
        Ok(StudyFolder {
            dir: dir.to_path_buf(),
            written: Default::default(),
        })
    }

    /// The tables, plots and texts written so far, in order (a file written twice
    /// appears once, with its last contents).
    pub fn written(&self) -> Vec<Written> {
        self.written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn remember(&self, item: Written) {
        let key = |w: &Written| match w {
            Written::Table { stem, .. } => format!("{stem}.md"),
            Written::Plot { stem, .. } => format!("{stem}.svg"),
            Written::Text { name, .. } => name.clone(),
        };
        let mut all = self
            .written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let k = key(&item);
        match all.iter_mut().find(|w| key(w) == k) {
            Some(old) => *old = item,
            None => all.push(item),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `value` as pretty JSON to `name` (for example `results.json`).
    pub fn write_json<T: Serialize>(&self, name: &str, value: &T) -> Result<PathBuf> {
        self.write_with(name, |w| {
            serde_json::to_writer_pretty(&mut *w, value)?;
            w.write_all(b"\n")
        })
    }

    /// Writes `stem.md` and `stem.csv`.
    pub fn write_table(&self, stem: &str, table: &Table) -> Result<()> {
        self.write_table_in(stem, table, Vec::new())
    }

    /// Writes `stem.md` and `stem.csv` as [`StudyFolder::write_table`] does, and
    /// keeps the units of its columns for the HTML page ([`ColumnUnit`]).
    pub fn write_table_in(&self, stem: &str, table: &Table, units: Vec<ColumnUnit>) -> Result<()> {
        self.write_file(&format!("{stem}.md"), &table.to_markdown())?;
        self.write_file(&format!("{stem}.csv"), &table.to_csv())?;
        self.remember(Written::Table {
            stem: stem.into(),
            table: table.clone(),
            units,
        });
        Ok(())
    }

    /// Renders `chart` to `stem.svg`.
    pub fn write_plot(&self, stem: &str, chart: &LineChart) -> Result<()> {
        let svg = chart.to_svg()?;
        self.write_file(&format!("{stem}.svg"), &svg)?;
        self.remember(Written::Plot {
            stem: stem.into(),
            chart: chart.clone(),
        });
        Ok(())
    }

    /// Writes `text` to `name` (for example `summary.md`).
    pub fn write_text(&self, name: &str, text: &str) -> Result<PathBuf> {
        let path = self.write_file(name, text)?;
        self.remember(Written::Text {
            name: name.into(),
            text: text.into(),
        });
        Ok(path)
    }

    fn write_file(&self, name: &str, text: &str) -> Result<PathBuf> {
        self.write_with(name, |w| w.write_all(text.as_bytes()))
    }

    fn write_with(
        &self,
        name: &str,
        body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<PathBuf> {
        let path = self.dir.join(name);
        crate::write_atomic(&path, body)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::{Scale, Series};

    fn table() -> Table {
        Table {
            title: "Single channel".into(),
            headers: vec!["packet size".into(), "speed".into(), "note".into()],
            rows: vec![
                vec!["1 B".into(), "0.42 MB/s".into(), "a|b".into()],
                vec![
                    "496 B".into(),
                    "61.3 MB/s".into(),
                    "ceiling, \"fast\"".into(),
                ],
            ],
        }
    }

    #[test]
    fn markdown_aligns_numbers_right_and_escapes_pipes() {
        let md = table().to_markdown();
        assert_eq!(
            md,
            "### Single channel\n\n\
             | packet size | speed | note |\n\
             |--:|--:|:--|\n\
             | 1 B | 0.42 MB/s | a\\|b |\n\
             | 496 B | 61.3 MB/s | ceiling, \"fast\" |\n"
        );
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let csv = table().to_csv();
        assert_eq!(
            csv,
            "packet size,speed,note\n1 B,0.42 MB/s,a|b\n496 B,61.3 MB/s,\"ceiling, \"\"fast\"\"\"\n"
        );
    }

    #[test]
    fn a_folder_holds_every_kind_of_file() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = StudyFolder::create(&tmp.path().join("a/b")).unwrap();
        folder
            .write_json("results.json", &serde_json::json!({"points": [1, 2]}))
            .unwrap();
        folder.write_table("single", &table()).unwrap();
        let chart = LineChart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
            series: vec![Series {
                intervals: Vec::new(),
                label: "s".into(),
                points: vec![(1.0, 1.0), (10.0, 2.0)],
                reference: false,
            }],
        };
        folder.write_plot("plot", &chart).unwrap();
        folder.write_text("summary.md", "# Summary\n").unwrap();
        let mut names: Vec<String> = std::fs::read_dir(folder.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "plot.svg",
                "results.json",
                "single.csv",
                "single.md",
                "summary.md"
            ]
        );
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(folder.dir().join("results.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(json["points"][1], 2);
    }

    #[test]
    fn an_unwritable_folder_is_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("plain-file");
        std::fs::write(&file, "x").unwrap();
        let err = StudyFolder::create(&file.join("sub")).unwrap_err();
        assert!(format!("{err:#}").contains("cannot create the study folder"));
    }
}
