//! The JSON document (`--export-json`, `--json`): the result model as it is,
//! pretty-printed. Its schema is in `docs/results-schema.md`.

use crate::Exporter;
use std::io::Write;
use xferbench_lab::result::ResultDoc;

/// Pretty-printed JSON.
#[derive(Debug, Default)]
pub struct Json;

impl Exporter for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn export(&self, doc: &ResultDoc, out: &mut dyn Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, doc)?;
        writeln!(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn round_trips_through_the_result_model() {
        let doc = fixture::stream_doc();
        let mut buf = Vec::new();
        Json.export(&doc, &mut buf).unwrap();
        let back: ResultDoc = serde_json::from_slice(&buf).unwrap();
        assert_eq!(back, doc);
    }
}
