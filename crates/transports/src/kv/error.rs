//! Why a server or client failed: [`KvError`].

use super::wire;
use std::io;

/// Why a server or client failed.
#[derive(Debug, thiserror::Error)]
pub enum KvError {
    /// A system call failed.
    #[error("{op}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The object's header is corrupt, truncated or from another build.
    #[error("refusing the kv object: {0}")]
    Header(String),
    /// No server to connect to.
    #[error("no kv server: {0}")]
    NoServer(String),
    /// Bytes read from shared memory failed their checks.
    #[error("bad message in shared memory: {0}")]
    Wire(#[from] wire::WireError),
    /// A wait made no progress for the hang timeout.
    #[error(
        "{arch}: no progress for {secs} s waiting for {what}; the protocol hung (a client may have died holding it)"
    )]
    Hung {
        /// The architecture.
        arch: &'static str,
        /// The wait.
        what: &'static str,
        /// Seconds waited.
        secs: u64,
    },
    /// The server process died.
    #[error("the kv server (pid {0}) is gone")]
    ServerGone(i32),
    /// Every client slot is taken.
    #[error("all {0} client slots of the server are taken")]
    Full(usize),
    /// Bad configuration.
    #[error("{0}")]
    Config(String),
    /// Stopped (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
    /// The server is private to the process that started it ([`PrivateKey`](super::config::PrivateKey)), and
    /// the client did not present its key.
    #[error(
        "the kv server {address} (pid {pid}) is private to the run that started it (a study's server); start one of your own with `xferbench kv serve`"
    )]
    Private {
        /// The server's address.
        address: String,
        /// The server's pid.
        pid: u32,
    },
    /// An index read from shared memory breaks its ring's invariant: another
    /// process wrote over the region.
    #[error("kv region {region}: {what} (another process wrote over the shared memory)")]
    Corrupt {
        /// The region's address.
        region: String,
        /// What was wrong.
        what: String,
    },
}
