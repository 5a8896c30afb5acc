//! Reports: turn results into tables and files. Reports read finished results
//! ([`ResultDoc`], [`PointResult`](xferbench_lab::result::PointResult)), never live measurement state.
//!
//! One extension point, [`Exporter`], with one file per format: [`json`],
//! [`csv`](mod@csv), [`markdown`]; plus the terminal [`table`], and two
//! [`Observer`](xferbench_lab::observer::Observer)s that run during a sweep:
//! [`jsonl::JsonLinesWriter`] (finished points on disk as they finish) and
//! [`progress::Progress`] (a progress bar with ETA on a terminal). Studies write their
//! folders through [`study::StudyFolder`], with [`study::Table`]s and SVG
//! [`plot::LineChart`]s; [`chart`] is the one chart engine behind those SVG files and
//! the charts of the [`html`] report.

#![deny(missing_docs)]

#[cfg(not(target_os = "linux"))]
compile_error!("xferbench runs on Linux only: it reports what the Linux-only lab measured");

pub mod chart;
pub mod compare;
pub mod csv;
pub mod format;
pub mod html;
pub mod json;
pub mod jsonl;
pub mod limits;
pub mod machine;
pub mod markdown;
pub mod output;
pub mod plot;
pub mod profile;
pub mod progress;
pub mod study;
pub mod table;
pub mod warnings;

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

/// Writes an output file the way every export, report page and study file is
/// written. Where the output goes ([`output::Target`]):
///
/// - `-` is stdout, written directly; a closed stdout (`| head`) is not an error.
/// - A symbolic link is followed to its final target, which is written as below; the
///   link stays in place (a dangling link gets its target created).
/// - A regular file, or a path where nothing exists yet, is written atomically:
///   `body` writes a temporary file with an unpredictable name (`tempfile`) in the
///   folder of the file, which is synced, renamed over it, and the folder synced, so a
///   crash or power loss leaves either the old file or the whole new one, never half a
///   file. The new file gets the permissions a plain create would (0666 less the
///   umask). On an error the temporary file is removed.
/// - Anything else that exists (a FIFO, a character or block device, a socket) is
///   opened for writing and written directly, never replaced, and any write error
///   (`ENOSPC` of `/dev/full`) is returned. A folder is an error.
pub fn write_atomic(
    path: &std::path::Path,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    match output::target(path)? {
        output::Target::Stdout => output::write_stdout(body),
        output::Target::InPlace(path) => output::write_in_place(&path, body),
        output::Target::Replace(path) => replace(&path, body),
    }
}

/// Writes a regular file (or a new one) through a renamed temporary file.
fn replace(
    path: &std::path::Path,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    let mut w = std::io::BufWriter::new(tmp);
    body(&mut w)?;
    let tmp = w
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // The rename is durable once the folder's entry is.
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod atomic_tests {
    use super::write_atomic;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_file_remains() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, "old").unwrap();
        write_atomic(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["r.json"]);
        // Not the 0600 of a private temporary file: what a plain create gives.
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode();
        assert_eq!(mode(&path) & 0o777, mode(&plain) & 0o777);
    }

    #[test]
    fn a_failed_body_keeps_the_old_file_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        std::fs::write(&path, "old").unwrap();
        let err = write_atomic(&path, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_missing_folder_is_an_error_naming_nothing_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/folder/r.md");
        assert!(write_atomic(&path, |w| w.write_all(b"x")).is_err());
        assert!(!path.exists());
    }

    #[test]
    fn temporary_names_are_not_predictable() {
        // Two temporary files for the same target at once get different names.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.html");
        write_atomic(&path, |outer| {
            write_atomic(&path, |inner| inner.write_all(b"inner"))?;
            outer.write_all(b"outer")
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "outer");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}

/// Deterministic result documents for tests of reports (the `fixtures` feature).
#[cfg(any(test, feature = "fixtures"))]
#[doc(hidden)]
pub mod fixture;
