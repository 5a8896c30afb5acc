//! Why a link operation failed: [`LinkError`].

use super::header;

/// Why a link operation failed.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// Creating or attaching the region failed.
    #[error("rpmsg region: {0}")]
    Region(#[from] crate::shm::region::RegionError),
    /// The link header was refused.
    #[error("rpmsg link header: {0}")]
    Header(#[from] header::LinkHeaderError),
    /// The other process died.
    #[error("the rpmsg {role} process {pid} is gone")]
    PeerGone {
        /// "remote" or "host".
        role: &'static str,
        /// Its pid.
        pid: i32,
    },
    /// A bounded wait expired.
    #[error("rpmsg: no {what} within {secs:.1} s")]
    Timeout {
        /// What was awaited.
        what: &'static str,
        /// Seconds waited.
        secs: f64,
    },
    /// A ring index read from shared memory jumped by more than the ring size.
    #[error("rpmsg: the {ring} vring is corrupt ({fault})")]
    Corrupt {
        /// Which ring.
        ring: &'static str,
        /// What was found.
        fault: header::Fault,
    },
    /// The link was stopped.
    #[error("rpmsg: the link was stopped")]
    Stopped,
    /// A payload longer than 496 bytes.
    #[error("rpmsg payload of {0} bytes; at most 496 fit a 512-byte buffer")]
    TooLong(usize),
    /// Bad configuration.
    #[error("rpmsg configuration: {0}")]
    Config(String),
}
