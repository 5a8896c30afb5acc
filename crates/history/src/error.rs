//! Why a history operation failed, in words a user can act on.

use std::path::PathBuf;

/// An error of the history.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Neither `--history`, `XFERBENCH_HISTORY` nor a home folder.
    #[error(
        "there is no data folder for the history (no home directory); give one with --history PATH or XFERBENCH_HISTORY"
    )]
    NoDefaultPath,
    /// The history's folder could not be created.
    #[error("cannot create the history folder {}: {source}", path.display())]
    CreateFolder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No history file yet.
    #[error(
        "no history at {} yet: every `xferbench run` and `xferbench study` records one (or choose another file with --history PATH)",
        path.display()
    )]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The file is not an SQLite database, or it is damaged.
    #[error(
        "{} is not an xferbench history (not an SQLite database, or damaged: {reason}); move it away or choose another file with --history PATH",
        path.display()
    )]
    NotAHistory {
        /// The file.
        path: PathBuf,
        /// SQLite's words.
        reason: String,
    },
    /// The file cannot be opened (a folder, no permission, a missing parent).
    #[error(
        "cannot open the history {}: {reason}; choose another file with --history PATH (or --no-history)",
        path.display()
    )]
    CannotOpen {
        /// The file.
        path: PathBuf,
        /// SQLite's words.
        reason: String,
    },
    /// The file was written by a newer xferbench.
    #[error(
        "the history {} has layout version {found}; this xferbench reads up to {}: use a newer xferbench, or another file with --history PATH",
        path.display(),
        supported
    )]
    Newer {
        /// The file.
        path: PathBuf,
        /// Its layout version.
        found: u32,
        /// The newest layout this xferbench reads.
        supported: u32,
    },
    /// A database operation on the file failed.
    #[error("the history {}: {source}", path.display())]
    Database {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// A database operation failed (the file is named by the caller).
    #[error("the history database: {0}")]
    Sql(#[from] rusqlite::Error),
    /// A stored result document could not be read back.
    #[error("run {id}'s stored result document cannot be read: {source}")]
    StoredDoc {
        /// The run.
        id: i64,
        /// Why.
        source: serde_json::Error,
    },
    /// A result document could not be stored.
    #[error("the result document cannot be stored: {0}")]
    Encode(#[source] serde_json::Error),
    /// No run with this id.
    #[error("no run {0} in the history; `xferbench history list` shows the runs and their IDs")]
    UnknownRun(i64),
    /// No run at all.
    #[error("the history has no runs yet: every `xferbench run` and `xferbench study` records one")]
    Empty,
    /// No baseline of this name.
    #[error(
        "no baseline named {name:?} (known: {known}); set one with `xferbench history baseline set {name} [ID]`"
    )]
    UnknownBaseline {
        /// The name asked for.
        name: String,
        /// The names there are, or `none`.
        known: String,
    },
    /// A baseline name that cannot be used.
    #[error("baseline name {0:?}: use 1 to 64 letters, digits, `-`, `_` or `.`")]
    BadBaselineName(String),
    /// The trend's filters match no recorded point.
    #[error(
        "no recorded point matches ({0}); `xferbench history list` and `history show ID` show what is recorded"
    )]
    NoMatch(String),
    /// The trend's filters match points of several workloads or studies: `--name` is
    /// missing.
    #[error(
        "{count} different points of {names} match ({filters}); add --name with one of {names}, such as --name {example}:\n{candidates}"
    )]
    AmbiguousName {
        /// The filters, described.
        filters: String,
        /// How many points.
        count: usize,
        /// The workloads or studies, comma-separated.
        names: String,
        /// One of them.
        example: String,
        /// Some of the points, one per line.
        candidates: String,
    },
    /// The trend's filters match several points of one workload or study: the
    /// parameters in which they differ are missing.
    #[error(
        "{count} different points of {name} match ({filters}); they differ in {differ}: add -p NAME=VALUE for each, or choose one with --point:\n{candidates}"
    )]
    AmbiguousParams {
        /// The filters, described.
        filters: String,
        /// How many points.
        count: usize,
        /// The workload or study.
        name: String,
        /// The parameters that differ, each with its values: `rate (10000, 20000)`.
        differ: String,
        /// Some of the points, one per line.
        candidates: String,
    },
    /// The chosen figure is in none of the matched runs.
    #[error("no matched run has the figure {figure:?}; the point's figures are: {known}")]
    UnknownFigure {
        /// The figure asked for.
        figure: String,
        /// The figures the point has.
        known: String,
    },
}

impl HistoryError {
    /// An SQLite error on the file at `path`, telling a file that is not a database
    /// (or is damaged) from other failures.
    pub fn at(path: &std::path::Path, e: rusqlite::Error) -> HistoryError {
        use rusqlite::ErrorCode::{CannotOpen, DatabaseCorrupt, NotADatabase, ReadOnly};
        match e.sqlite_error_code() {
            Some(CannotOpen | ReadOnly) => HistoryError::CannotOpen {
                path: path.to_path_buf(),
                reason: e.to_string(),
            },
            Some(NotADatabase | DatabaseCorrupt) => HistoryError::NotAHistory {
                path: path.to_path_buf(),
                reason: e.to_string(),
            },
            _ => HistoryError::Database {
                path: path.to_path_buf(),
                source: e,
            },
        }
    }

    /// Whether the user can fix this by changing what they asked for (an unknown ID,
    /// baseline or point, a file that is not a history): the usage exit status.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            HistoryError::NoDefaultPath
                | HistoryError::Missing { .. }
                | HistoryError::NotAHistory { .. }
                | HistoryError::CannotOpen { .. }
                | HistoryError::Newer { .. }
                | HistoryError::UnknownRun(_)
                | HistoryError::Empty
                | HistoryError::UnknownBaseline { .. }
                | HistoryError::BadBaselineName(_)
                | HistoryError::NoMatch(_)
                | HistoryError::AmbiguousName { .. }
                | HistoryError::AmbiguousParams { .. }
                | HistoryError::UnknownFigure { .. }
        )
    }
}
