//! Reading a result document that a `run` or a study wrote, for `compare` and the
//! history.

use anyhow::{Context, Result};
use std::path::Path;
use xferbench_lab::result::ResultDoc;

/// A result document: a file, or a study folder's `results.json`.
pub(crate) fn load(which: &str, path: &Path) -> Result<ResultDoc> {
    let file = if path.is_dir() {
        path.join("results.json")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {which} {}", file.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{which} {} is not an xferbench result document (write one with `run --export-json`, or give a study folder)",
            file.display()
        )
    })
}
