//! What the server's threads share: [`ServerShared`].

use super::error::KvError;
use super::table;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What the server's threads share.
pub(crate) struct ServerShared {
    pub(crate) table: table::HashTable,
    pub(crate) stop: AtomicBool,
    pub(crate) hang: Duration,
    /// The first error of any server thread.
    pub(crate) failure: std::sync::Mutex<Option<KvError>>,
}

impl ServerShared {
    pub(crate) fn fail(&self, e: KvError) {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(e);
        }
        self.stop.store(true, Ordering::Relaxed);
    }
}
