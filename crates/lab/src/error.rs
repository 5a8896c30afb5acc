//! The errors a run's participants fail with, which `control::RunError` carries: a
//! transport's lookup, a workload's transfer, a peer, the agent of another host. They
//! stand below the run control and the result model, so that these name them without
//! importing the transports, workloads, peers or the remote client that raise them.

use xferbench_probes::process::{Ended, SpawnError};
use xferbench_transports::ParamError;
use xferbench_transports::plugin::PluginError;

/// Why a transport could not be set up from its name and parameters.
#[derive(Debug, thiserror::Error)]
pub enum TransportLookupError {
    /// No transport has that name.
    #[error(
        "unknown transport `{name}`{suggestion}; choose from: {known}, or plugin:PATH[:NAME] for a transport of your own (docs/plugins.md)"
    )]
    Unknown {
        /// The name given.
        name: String,
        /// ` (did you mean `NAME`?)` when a known name is close, else empty.
        suggestion: String,
        /// The known names.
        known: String,
    },
    /// A parameter was refused.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The transport runs on a rig of its own (`rpmsg`), not through `transports::dispatch`.
    #[error("transport `{0}` is not a generic transport; it runs on its own rig")]
    OwnRig(String),
    /// A plugin transport could not be opened or created.
    #[error(transparent)]
    Plugin(#[from] PluginError),
}

/// A failed message transfer.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// A send or receive failed.
    #[error("{op} of message {seq} failed: {source}")]
    Io {
        /// `send`, `receive` or `close`.
        op: &'static str,
        /// The message's sequence number.
        seq: u64,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The peer closed the channel before answering.
    #[error("the peer closed the channel before replying to message {seq}")]
    PeerClosed {
        /// The unanswered message.
        seq: u64,
    },
    /// A message size the workload cannot run with.
    #[error("{0}")]
    Config(String),
}

/// Why a peer could not do its part.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The peer process could not be started.
    #[error("could not start the peer process")]
    Spawn(#[source] SpawnError),
    /// The peer process exited or was killed.
    #[error("peer {channel} {ended}")]
    Died {
        /// Channel.
        channel: usize,
        /// How it ended.
        ended: Ended,
    },
    /// The peer reported a failure.
    #[error("peer {channel} failed: {message}")]
    Failed {
        /// Channel.
        channel: usize,
        /// Its message.
        message: String,
    },
    /// The peer did not answer in time.
    #[error("peer {channel} did not {what} within {secs} s")]
    Timeout {
        /// Channel.
        channel: usize,
        /// What it did not do.
        what: &'static str,
        /// Seconds waited.
        secs: u64,
    },
    /// The agent could not start the peer on its host.
    #[error("could not start peer {channel} on the agent's host: {source}")]
    Remote {
        /// Channel.
        channel: usize,
        /// Why.
        #[source]
        source: RemoteError,
    },
    /// The peer broke the control protocol.
    #[error("peer {channel} broke the control protocol: {message}")]
    Protocol {
        /// Channel.
        channel: usize,
        /// What was wrong.
        message: String,
    },
}

/// Why a remote operation failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RemoteError {
    /// The agent could not be reached.
    #[error("{0}")]
    Connect(String),
    /// Authentication failed.
    #[error("authentication with the agent failed: {0}")]
    Auth(String),
    /// The agent refused a request.
    #[error("the agent refused: {0}")]
    Refused(String),
    /// The agent broke the protocol.
    #[error("{0}")]
    Protocol(String),
    /// The connection was lost.
    #[error("{0}")]
    Lost(String),
}
