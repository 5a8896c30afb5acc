//! The tables of the history and the migrations between their versions.
//!
//! The layout version is SQLite's `PRAGMA user_version`: 0 for a new file, then the
//! number of [`MIGRATIONS`] applied. Opening a file applies the missing ones in one
//! `BEGIN IMMEDIATE` transaction, so two processes opening a new file at once do not
//! both create the tables, and a file is never left half-migrated.
//!
//! Version 1:
//! - `runs`: one row per `run` or study: when, what (`kind` `run` or `study`, `name`
//!   the workload or study), the command line, the context as JSON, the machine
//!   (`machine_id`, `hostname`), the git commit and dirty flag of the working
//!   directory (NULL outside a repository or without `git`), how it ended, and the
//!   whole result document as JSON.
//! - `points`: one row per finished point of a run: its parameters (`point_key` is
//!   their canonical JSON, `label` their `name=value` text), the primary figure, its
//!   median, unit, confidence interval, number of runs and which way is better.
//!
//! Version 2:
//! - `baselines`: a name for a run.
//! - an index on `points(point_key)` for trends.

use crate::error::HistoryError;
use rusqlite::{Connection, TransactionBehavior};

/// The migrations, in order: `MIGRATIONS[i]` brings a file from version `i` to
/// `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // 1: runs and their points.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        time TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('run', 'study')),
        name TEXT NOT NULL,
        command_line TEXT NOT NULL,
        context_json TEXT NOT NULL,
        machine_id TEXT NOT NULL,
        hostname TEXT NOT NULL,
        git_commit TEXT,
        git_dirty INTEGER,
        outcome TEXT NOT NULL,
        doc_json TEXT NOT NULL
    );
    CREATE TABLE points (
        run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        point_key TEXT NOT NULL,
        label TEXT NOT NULL,
        params_json TEXT NOT NULL,
        figure TEXT NOT NULL,
        value REAL,
        unit TEXT NOT NULL,
        ci_low REAL,
        ci_high REAL,
        runs INTEGER NOT NULL,
        higher_is_better INTEGER NOT NULL,
        PRIMARY KEY (run_id, idx)
    );",
    // 2: named baselines; points found by their parameters.
    "CREATE TABLE baselines (
        name TEXT PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        set_at TEXT NOT NULL
    );
    CREATE INDEX points_by_key ON points (point_key, run_id);",
];

/// The layout this code writes.
pub const LATEST: u32 = MIGRATIONS.len() as u32;

/// The layout version of the open file.
pub fn version(conn: &Connection) -> Result<u32, HistoryError> {
    Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
}

/// Brings the file to layout `target` (at most [`LATEST`]); refuses a newer file.
pub fn migrate(conn: &mut Connection, target: u32) -> Result<(), HistoryError> {
    if version(conn)? == target {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Read again inside the transaction: another process may have migrated.
    let found: u32 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > LATEST {
        return Err(HistoryError::Newer {
            path: Default::default(),
            found,
            supported: LATEST,
        });
    }
    for step in MIGRATIONS.iter().take(target as usize).skip(found as usize) {
        tx.execute_batch(step)?;
    }
    if found < target {
        tx.pragma_update(None, "user_version", target)?;
    }
    tx.commit()?;
    Ok(())
}
