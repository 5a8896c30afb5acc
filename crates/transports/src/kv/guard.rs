//! The checks of a wait on another process: [`Guard`].

use super::error::KvError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The checks of a wait on another process: the stop flag (when the wait may be
/// abandoned), the peer's liveness and the hang timeout.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Guard<'a> {
    pub(crate) arch: &'static str,
    pub(crate) stop: &'a AtomicBool,
    pub(crate) interruptible: bool,
    /// The server pid (clients), or 0.
    pub(crate) peer: i32,
    pub(crate) hang: Option<Duration>,
}

impl Guard<'_> {
    /// Called between bounded slices of a wait that started at `since`.
    pub(crate) fn check(&self, since: Instant, what: &'static str) -> Result<(), KvError> {
        if self.interruptible && self.stop.load(Ordering::Relaxed) {
            return Err(KvError::Interrupted);
        }
        if self.peer != 0 && !crate::shm::wait::process_alive(self.peer) {
            return Err(KvError::ServerGone(self.peer));
        }
        if let Some(h) = self.hang
            && since.elapsed() >= h
        {
            return Err(KvError::Hung {
                arch: self.arch,
                what,
                secs: h.as_secs(),
            });
        }
        Ok(())
    }
}
