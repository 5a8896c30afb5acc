//! A shared-memory key-value server: a hash table in the server's memory, reached by
//! client processes through shared memory, in three architectures.
//!
//! * [`Arch::Preopt`] ([`preopt`]): the original design. Two objects guarded by
//!   process-shared POSIX semaphores: a one-slot request channel (`busy`/`waker`:
//!   one writer at a time) and a one-slot broadcast response channel behind a
//!   two-phase barrier (every client reads every response). Inside the server an
//!   input thread, k workers and an output thread talk over unbounded crossbeam
//!   channels.
//! * [`Arch::Ring`] ([`ring`]): the original author's later design: a 2048-slot MPMC
//!   request ring under a process-shared mutex and counting semaphores, and a
//!   2048-slot broadcast response ring of reader-writer-locked slots that every
//!   client reads from a polling thread.
//! * [`Arch::Sharded`] ([`sharded`]): one region with a validated header and one
//!   block per worker; each client attaches to the least-loaded worker and owns an
//!   SPSC request ring and an SPSC response ring, so no client ever reads another's
//!   responses; a worker serves its clients round-robin (any number per worker);
//!   waits spin briefly, then sleep on a futex; a client that dies at any moment is
//!   noticed and its slot reclaimed.
//!
//! Every architecture starts its objects with the validated [`header::KvHeader`]
//! and bounds every index and length it reads from shared memory
//! ([`wire`]). Waits that depend on another process are bounded: a client whose
//! server died gets [`KvError::ServerGone`]; a wait the original protocol can leave
//! hanging (a client that died inside preopt's barrier) ends, after the hang
//! timeout, in [`KvError::Hung`], which names the wait.
//!
//! A server started with a [`PrivateKey`] ([`ServerConfig::key`]) is private: only a
//! client presenting the same key joins it ([`ClientOptions::key`]; any other gets
//! [`KvError::Private`]), and [`running_servers`] marks it so that no one else picks
//! it by default. That is how a study keeps its server to its own clients; it guards
//! against joining by mistake, not against a process of the same user that reads the
//! key from the shared memory.
//!
//! The server's objects are unlinked when the [`Server`] is dropped (the CLI stops it
//! on Ctrl-C and SIGTERM); objects of a server that was killed are removed by the
//! stale-region sweep ([`crate::shm::region::sweep_stale`]), run by every new server.

pub mod header;
pub mod preopt;
pub mod ring;
pub(crate) mod sem;
pub mod sharded;
pub mod table;
pub mod wire;

use header::ShmObject;
use std::io;
use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use wire::{RequestPayload, ResponseData};

/// A server architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    /// The original: one-slot channels, semaphores, broadcast responses.
    Preopt,
    /// The original author's rings: MPMC requests, broadcast response ring.
    Ring,
    /// Per-client SPSC rings served by the least-loaded worker.
    Sharded,
}

xferbench_params::choices!(Arch {
    Preopt => "preopt": "the original: one-slot request channel, broadcast responses, semaphores",
    Ring => "ring": "the original author's MPMC request ring and broadcast response ring",
    Sharded => "sharded": "per-client SPSC rings served by the least-loaded worker",
});

/// `arch`: the server's architecture.
pub const ARCH: crate::ParamDef = crate::ParamDef::choice(
    "arch",
    <Arch as xferbench_params::Choices>::CHOICES,
    "sharded",
    "the hash-table server's architecture",
);

impl Arch {
    /// The code stored in the header.
    pub fn code(self) -> u32 {
        match self {
            Arch::Preopt => 1,
            Arch::Ring => 2,
            Arch::Sharded => 3,
        }
    }

    /// The architecture of a header code.
    pub fn from_code(code: u32) -> Option<Arch> {
        Arch::ALL.into_iter().find(|a| a.code() == code)
    }

    /// Bytes of the body of object `part` for `workers` workers.
    pub fn body_len(self, workers: u32, part: u32) -> usize {
        match self {
            Arch::Preopt => preopt::body_len(part),
            Arch::Ring => ring::body_len(),
            Arch::Sharded => sharded::body_len(workers),
        }
    }
}

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
    /// The server is private to the process that started it ([`PrivateKey`]), and
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

    fn check(&self) -> Result<(), KvError> {
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

/// A running server: its objects and its threads. Dropping it stops the threads and
/// unlinks the objects.
pub struct Server {
    objects: Vec<Arc<ShmObject>>,
    shared: Arc<ServerShared>,
    threads: Vec<std::thread::JoinHandle<()>>,
    arch: Arch,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("arch", &self.arch)
            .field("name", &self.name())
            .finish()
    }
}

static NEXT_SERVER: AtomicU64 = AtomicU64::new(0);

impl Server {
    /// Creates the objects and starts the threads.
    pub fn start(cfg: ServerConfig) -> Result<Server, KvError> {
        cfg.check()?;
        crate::shm::region::sweep_stale();
        let name = header::object_name(NEXT_SERVER.fetch_add(1, Ordering::Relaxed));
        let shared = Arc::new(ServerShared {
            table: table::HashTable::new(cfg.buckets),
            stop: AtomicBool::new(false),
            hang: cfg.hang_timeout,
            failure: std::sync::Mutex::new(None),
        });
        let (objects, threads) = match cfg.arch {
            Arch::Preopt => preopt::start(&name, &cfg, &shared)?,
            Arch::Ring => ring::start(&name, &cfg, &shared)?,
            Arch::Sharded => sharded::start(&name, &cfg, &shared)?,
        };
        Ok(Server {
            objects,
            shared,
            threads,
            arch: cfg.arch,
        })
    }

    /// The name clients connect to.
    pub fn name(&self) -> &str {
        self.objects[0].name()
    }

    /// Requests served so far.
    pub fn served(&self) -> u64 {
        served(&self.objects[0])
    }

    /// The workers that serve: those asked for, except that `sharded` runs at most
    /// one per CPU ([`sharded::serving_workers`]).
    pub fn workers(&self) -> u32 {
        self.objects[0].workers()
    }

    /// Whether a thread failed (the server then stops).
    pub fn failed(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    /// Stops the threads, unlinks the objects, and reports the first thread error.
    pub fn stop(mut self) -> Result<(), KvError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), KvError> {
        self.shared.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let f = self
            .shared
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        match f {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

fn served(obj: &ShmObject) -> u64 {
    match obj.arch() {
        Arch::Sharded => sharded::served(obj),
        _ => obj.header().served.load(Ordering::Relaxed),
    }
}

/// A read-only view of a running server's counters, for a measuring process.
#[derive(Debug)]
pub struct ServerStats {
    obj: ShmObject,
}

impl ServerStats {
    /// Opens the server's main object (validating its header).
    pub fn open(name: &str) -> Result<ServerStats, KvError> {
        Ok(ServerStats {
            obj: ShmObject::open(name, 0)?,
        })
    }

    /// Requests served so far.
    pub fn served(&self) -> u64 {
        served(&self.obj)
    }

    /// The server's architecture.
    pub fn arch(&self) -> Arch {
        self.obj.arch()
    }

    /// The server's main object.
    pub fn name(&self) -> &str {
        self.obj.name()
    }

    /// The server's pid.
    pub fn server_pid(&self) -> u32 {
        self.obj.server_pid()
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

/// A connected client of any architecture.
pub enum Client {
    /// preopt.
    Preopt(preopt::Client),
    /// ring.
    Ring(ring::Client),
    /// sharded.
    Sharded(sharded::Client),
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Client({})", self.arch().name())
    }
}

impl Client {
    /// Connects to the server whose main object is `name`; its header says which
    /// architecture it speaks. A private server is joined only with its key
    /// ([`KvError::Private`]).
    pub fn connect(name: &str, opts: ClientOptions) -> Result<Client, KvError> {
        let main = ShmObject::open(name, 0)?;
        if main.key() != 0 && opts.key.map(PrivateKey::get) != Some(main.key()) {
            return Err(KvError::Private {
                address: name.to_string(),
                pid: main.server_pid(),
            });
        }
        Ok(match main.arch() {
            Arch::Preopt => Client::Preopt(preopt::Client::connect(main, opts)?),
            Arch::Ring => Client::Ring(ring::Client::connect(main, opts)?),
            Arch::Sharded => Client::Sharded(sharded::Client::connect(main, opts)?),
        })
    }

    /// The server's architecture.
    pub fn arch(&self) -> Arch {
        match self {
            Client::Preopt(_) => Arch::Preopt,
            Client::Ring(_) => Arch::Ring,
            Client::Sharded(_) => Arch::Sharded,
        }
    }

    /// Sends one request. `sharded` makes it visible to the server at the next
    /// `recv` (or when its ring is full), so a batch of sends is published at once;
    /// the others publish each request as the original does.
    #[inline]
    pub fn send(&mut self, request_id: u32, payload: &RequestPayload) -> Result<(), KvError> {
        match self {
            Client::Preopt(c) => c.send(request_id, payload),
            Client::Ring(c) => c.send(request_id, payload),
            Client::Sharded(c) => c.send(request_id, payload),
        }
    }

    /// Receives the next response addressed to this client into `out`.
    #[inline]
    pub fn recv(&mut self, out: &mut ResponseData) -> Result<(), KvError> {
        match self {
            Client::Preopt(c) => c.recv(out),
            Client::Ring(c) => c.recv(out),
            Client::Sharded(c) => c.recv(out),
        }
    }

    /// Leaves the server by its protocol.
    pub fn leave(self) -> Result<(), KvError> {
        match self {
            Client::Preopt(c) => c.leave(),
            Client::Ring(c) => c.leave(),
            Client::Sharded(c) => c.leave(),
        }
    }
}

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

/// The kv servers of this user that are running, private ones marked.
pub fn running_servers() -> Vec<header::Running> {
    header::running_servers()
}

#[cfg(test)]
mod tests;
