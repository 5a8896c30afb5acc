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

pub mod error;
pub mod json_schema;
pub mod origin;
pub mod schema;
pub mod store;
pub mod trend;

pub use error::HistoryError;
pub use origin::GitState;
pub use store::{Baseline, PointRow, RunDetail, RunRow};
pub use trend::{Trend, TrendEntry, TrendFilter};

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The environment variable that chooses the history file (as `--history PATH`).
pub const ENV: &str = "XFERBENCH_HISTORY";

/// How long a writer waits for another one before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

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

/// An open history database.
#[derive(Debug)]
pub struct History {
    conn: Connection,
    path: PathBuf,
}

impl History {
    /// Opens the history at `path`, creating the file and its folder when missing,
    /// and migrates it to the current layout.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| HistoryError::CreateFolder {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        Self::connect(path)
    }

    /// Opens an existing history for reading and editing baselines; a missing file is
    /// an error (it is created by the first `run` or study).
    pub fn open_existing(path: &Path) -> Result<History, HistoryError> {
        if !path.exists() {
            return Err(HistoryError::Missing {
                path: path.to_path_buf(),
            });
        }
        Self::connect(path)
    }

    fn connect(path: &Path) -> Result<History, HistoryError> {
        let at = |e| HistoryError::at(path, e);
        let conn = Connection::open(path).map_err(at)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(at)?;
        // Reading the journal mode is the first access to the file's header: a file
        // that is not a database fails here.
        // On a file system without shared memory for the WAL index SQLite keeps the
        // rollback journal: still correct, with coarser locking.
        let _mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(at)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(at)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(at)?;
        let mut h = History {
            conn,
            path: path.to_path_buf(),
        };
        schema::migrate(&mut h.conn, schema::LATEST).map_err(|e| match e {
            HistoryError::Sql(e) => HistoryError::at(path, e),
            HistoryError::Newer { found, .. } => HistoryError::Newer {
                path: path.to_path_buf(),
                found,
            },
            e => e,
        })?;
        Ok(h)
    }

    /// The file this history lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The layout version of the open file.
    pub fn schema_version(&self) -> Result<u32, HistoryError> {
        schema::version(&self.conn)
    }

    /// SQLite's own consistency check: `ok`, or what is wrong.
    pub fn integrity_check(&self) -> Result<String, HistoryError> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }
}
