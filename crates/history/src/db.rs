//! An open history database: the file opened (or created) and migrated to the
//! current layout. What is stored and read is `store` and `trend`.

use crate::error::HistoryError;
use crate::schema;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another one before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// An open history database.
#[derive(Debug)]
pub struct History {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
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
            HistoryError::Newer {
                found, supported, ..
            } => HistoryError::Newer {
                path: path.to_path_buf(),
                found,
                supported,
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
