//! How a server is started ([`ServerConfig`]) and a client connects
//! ([`ClientOptions`]), and the key of a private server ([`PrivateKey`]).

use super::arch::Arch;
use super::error::KvError;
use super::header;
use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How to start a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerConfig {
    /// The architecture.
    pub arch: Arch,
    /// Buckets of the hash table (`-s`).
    pub buckets: usize,
    /// Worker threads (`-n`).
    pub workers: u32,
    /// A wait on another process with no progress for this long is a hang.
    pub hang_timeout: Duration,
    /// A private server's key: only clients presenting it join (see the module doc).
    /// None: a public server, which any client of this user may join.
    pub key: Option<PrivateKey>,
}

impl ServerConfig {
    /// The original's defaults: 10,000 buckets, one worker, public.
    pub fn new(arch: Arch) -> ServerConfig {
        ServerConfig {
            arch,
            buckets: 10_000,
            workers: 1,
            hang_timeout: DEFAULT_HANG,
            key: None,
        }
    }

    pub(super) fn check(&self) -> Result<(), KvError> {
        if self.buckets == 0 {
            return Err(KvError::Config("the table needs at least 1 bucket".into()));
        }
        if self.workers == 0 || self.workers > header::MAX_WORKERS {
            return Err(KvError::Config(format!(
                "workers must be 1 to {}, got {}",
                header::MAX_WORKERS,
                self.workers
            )));
        }
        Ok(())
    }
}

/// The default hang timeout.
pub const DEFAULT_HANG: Duration = Duration::from_secs(10);

/// The key of a private server (never 0, which the header reserves for a public
/// one): a random value the server's owner gives its own clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct PrivateKey(NonZeroU64);

impl PrivateKey {
    /// A fresh random key (std's per-process random hasher keys, the clock and the
    /// pid): unique among the servers of a machine.
    pub fn random() -> PrivateKey {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        h.write_u128(now);
        h.write_u32(std::process::id());
        PrivateKey(NonZeroU64::new(h.finish()).unwrap_or(NonZeroU64::MIN))
    }

    /// The key as the header stores it.
    pub fn get(self) -> u64 {
        self.0.get()
    }
}

/// How a client connects and waits.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The client's id (random in the original).
    pub client_id: u32,
    /// Set on Ctrl-C: waits end with [`KvError::Interrupted`] at a safe point.
    pub stop: Arc<AtomicBool>,
    /// A wait with no progress for this long is [`KvError::Hung`].
    pub hang_timeout: Duration,
    /// The key of a private server ([`ServerConfig::key`]); None joins public
    /// servers only.
    pub key: Option<PrivateKey>,
}
