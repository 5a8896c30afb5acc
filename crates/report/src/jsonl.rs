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
}

impl JsonLinesWriter {
    /// Creates (or truncates) the file.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(Self {
            path: path.to_path_buf(),
            file: File::create(path)?,
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
        self.file.sync_data()
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
        let dir = std::env::temp_dir().join(format!("xferbench-jsonl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.jsonl");
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
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
