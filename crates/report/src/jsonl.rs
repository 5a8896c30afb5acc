//! The JSON Lines stream: the context first, then every point as it finishes, then
//! how the run ended. Each line is flushed and synced before the next point starts,
//! so a Ctrl-C, a crash or a killed machine loses no finished point.
//! [`read`] turns such a file back into a [`ResultDoc`].

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use xferbench_lab::measure::PlannedPoint;
use xferbench_lab::observer::Observer;
use xferbench_lab::result::{Context, PointResult, ResultDoc, SCHEMA_VERSION, StreamRecord};

/// Appends records to a JSON Lines file.
#[derive(Debug)]
pub struct JsonLinesWriter {
    path: PathBuf,
    file: File,
    /// Whether the file is a regular one, which is synced after each line (a FIFO,
    /// a device or stdout cannot be).
    sync: bool,
}

impl JsonLinesWriter {
    /// Creates (or truncates) the file, written in place line by line: `-` is
    /// stdout; a symbolic link is followed and kept; a FIFO or a device is opened
    /// and written, never replaced (see [`crate::output`]).
    pub fn create(path: &Path) -> std::io::Result<Self> {
        use std::os::fd::AsFd as _;
        let file = match crate::output::target(path)? {
            crate::output::Target::Stdout => {
                File::from(std::io::stdout().as_fd().try_clone_to_owned()?)
            }
            crate::output::Target::Replace(p) => File::create(p)?,
            crate::output::Target::InPlace(p) => {
                std::fs::OpenOptions::new().append(true).open(p)?
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            sync: file.metadata()?.is_file(),
            file,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write(&mut self, r: &StreamRecord) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(r)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        if self.sync {
            self.file.sync_data()?;
        }
        Ok(())
    }
}

impl Observer for JsonLinesWriter {
    fn sweep_started(
        &mut self,
        context: &Context,
        _points: &[PlannedPoint],
    ) -> std::io::Result<()> {
        self.write(&StreamRecord::Context {
            schema_version: SCHEMA_VERSION,
            context: Box::new(context.clone()),
        })
    }

    fn point_finished(&mut self, result: &PointResult) -> std::io::Result<()> {
        self.write(&StreamRecord::Point(Box::new(result.clone())))
    }

    fn sweep_finished(&mut self, doc: &ResultDoc) -> std::io::Result<()> {
        self.write(&StreamRecord::End {
            outcome: doc.outcome.clone(),
            warnings: doc.warnings.clone(),
        })
    }
}

/// Reads a JSON Lines stream back into a document. A truncated last line (the
/// process died while writing it) is ignored; any other bad line is an error.
pub fn read(path: &Path) -> std::io::Result<ResultDoc> {
    let lines: Vec<String> = BufReader::new(File::open(path)?)
        .lines()
        .collect::<Result<_, _>>()?;
    let mut records = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        match serde_json::from_str::<StreamRecord>(line) {
            Ok(r) => records.push(r),
            Err(_) if i + 1 == lines.len() => {}
            Err(e) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: line {}: {e}", path.display(), i + 1),
                ));
            }
        }
    }
    ResultDoc::from_stream(records).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{}: no context line; not an xferbench JSON Lines file",
                path.display()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;
    use xferbench_lab::result::Outcome;

    #[test]
    fn a_stream_cut_short_keeps_its_finished_points() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let doc = fixture::stream_doc();
        let mut w = JsonLinesWriter::create(&path).unwrap();
        w.sweep_started(&doc.context, &[]).unwrap();
        w.point_finished(&doc.points[0]).unwrap();
        // The process "dies" half-way through the next line.
        w.file.write_all(b"{\"type\":\"point\",\"ind").unwrap();
        drop(w);
        let back = read(&path).unwrap();
        assert_eq!(back.points, vec![doc.points[0].clone()]);
        assert!(matches!(back.outcome, Outcome::Failed { .. }));
    }

    #[test]
    fn a_fifo_is_written_in_place_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("r.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        let doc = fixture::stream_doc();
        let mut w = JsonLinesWriter::create(&fifo).unwrap();
        w.sweep_started(&doc.context, &[]).unwrap();
        w.point_finished(&doc.points[0]).unwrap();
        drop(w);
        assert_eq!(reader.join().unwrap().lines().count(), 2);
        use std::os::unix::fs::FileTypeExt as _;
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn dev_full_is_an_error() {
        let doc = fixture::stream_doc();
        let mut w = JsonLinesWriter::create(Path::new("/dev/full")).unwrap();
        assert!(w.sweep_started(&doc.context, &[]).is_err());
    }
}
