//! Reports: turn results into tables and files. Reports read finished results
//! ([`ResultDoc`], [`PointResult`](xferbench_lab::result::PointResult)), never live measurement state.
//!
//! One extension point, [`Exporter`], with one file per format: [`json`],
//! [`csv`](mod@csv), [`markdown`]; plus the terminal [`table`], and two
//! [`Observer`](xferbench_lab::observer::Observer)s that run during a sweep:
//! [`jsonl::JsonLinesWriter`] (finished points on disk as they finish) and
//! [`progress::Progress`] (a progress bar with ETA on a terminal). Studies write their
//! folders through [`study::StudyFolder`], with [`study::Table`]s and SVG
//! [`plot::LineChart`]s.

#![deny(missing_docs)]

#[cfg(not(target_os = "linux"))]
compile_error!("xferbench runs on Linux only: it reports what the Linux-only lab measured");

pub mod compare;
pub mod csv;
pub mod format;
pub mod html;
pub mod json;
pub mod jsonl;
pub mod limits;
pub mod machine;
pub mod markdown;
pub mod plot;
pub mod profile;
pub mod progress;
pub mod studies;
pub mod study;
pub mod table;

use std::io::Write;
use xferbench_lab::result::ResultDoc;

/// A file format for a whole result document.
pub trait Exporter {
    /// Format name, for messages (`json`, `csv`, `markdown`).
    fn name(&self) -> &'static str;
    /// Writes the document.
    fn export(&self, doc: &ResultDoc, out: &mut dyn Write) -> std::io::Result<()>;
}

/// Writes `doc` to `path` through `exporter`, atomically (see [`write_atomic`]).
pub fn export_to_path(
    exporter: &dyn Exporter,
    doc: &ResultDoc,
    path: &std::path::Path,
) -> std::io::Result<()> {
    write_atomic(path, |w| exporter.export(doc, w))
}

/// Writes a file atomically: `body` writes a temporary file in the same folder, which
/// is synced and renamed over `path`, so a crash never leaves half a file.
pub fn write_atomic(
    path: &std::path::Path,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        body(&mut f)?;
        f.flush()?;
        f.get_ref().sync_data()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
pub(crate) mod fixture;
