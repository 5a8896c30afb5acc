//! The results history: every `run` and study of `xferbench` appended to one SQLite
//! file, so that results can be listed, shown, followed across commits (`trend`) and
//! compared against a named baseline.
//!
//! One [`History`] is one open database. The file lives in the user's data directory
//! ([`default_path`]) unless `--history PATH` or [`ENV`] say otherwise.
//!
//! Invariants:
//! - The layout is versioned with `PRAGMA user_version` and brought up to date by
//!   [`schema`] migrations when the file is opened; a file written by a newer layout
//!   is refused, never rewritten.
//! - The journal is a write-ahead log (WAL) and every append is one `BEGIN IMMEDIATE`
//!   transaction, so two writers at once wait for each other (`busy_timeout`) and a
//!   writer killed mid-append leaves the earlier runs intact and no partial run.
//! - Each run stores its whole result document, so a comparison against a baseline
//!   runs the same code and significance test as `compare BASE NEW` on files.
//!
//! - [`mod@schema`]: the tables and their migrations.
//! - [`mod@store`]: append, list, show, baselines.
//! - [`mod@trend`]: one point's primary figure across runs.
//! - [`mod@origin`]: the git commit of the working directory and the machine's id.
//! - [`mod@json_schema`]: the schemas of the `--json` outputs.

#![deny(missing_docs)]

pub mod db;
pub mod error;
pub mod json_schema;
pub mod origin;
pub mod schema;
pub mod store;
pub mod trend;

pub use db::{BUSY_TIMEOUT, History};
pub use error::HistoryError;
pub use origin::GitState;
pub use store::{Baseline, PointRow, RunDetail, RunRow};
pub use trend::{Trend, TrendEntry, TrendFilter};

use std::path::{Path, PathBuf};

/// The environment variable that chooses the history file (as `--history PATH`).
pub const ENV: &str = "XFERBENCH_HISTORY";

/// The default history file: `$XDG_DATA_HOME/xferbench/history.sqlite`
/// (`~/.local/share/xferbench/history.sqlite`); `None` when there is no home.
pub fn default_path() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("xferbench").join("history.sqlite"))
}

/// Who chose the history file: the user (by `--history` or [`ENV`]), or nobody (the
/// default location in the data folder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chosen {
    /// `--history PATH`.
    Flag,
    /// [`ENV`].
    Env,
    /// [`default_path`].
    Default,
}

impl Chosen {
    /// How the user named the file (`--history`, `XFERBENCH_HISTORY`), or `None` for
    /// the default location. A file the user named is held to the rules of every
    /// other output file (its folder must exist); the default one's folder is created.
    pub fn by_user(self) -> Option<&'static str> {
        match self {
            Chosen::Flag => Some("--history"),
            Chosen::Env => Some(ENV),
            Chosen::Default => None,
        }
    }
}

/// The history file to use and who chose it: `flag` (`--history`), else [`ENV`],
/// else [`default_path`].
pub fn resolve(flag: Option<&Path>) -> Result<(PathBuf, Chosen), HistoryError> {
    if let Some(p) = flag {
        return Ok((p.to_path_buf(), Chosen::Flag));
    }
    if let Some(p) = std::env::var_os(ENV).filter(|p| !p.is_empty()) {
        return Ok((PathBuf::from(p), Chosen::Env));
    }
    default_path()
        .map(|p| (p, Chosen::Default))
        .ok_or(HistoryError::NoDefaultPath)
}

/// The history file to use: `flag` (`--history`), else [`ENV`], else
/// [`default_path`].
pub fn resolve_path(flag: Option<&Path>) -> Result<PathBuf, HistoryError> {
    resolve(flag).map(|(p, _)| p)
}
