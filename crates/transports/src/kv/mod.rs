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

pub mod arch;
pub mod config;
pub mod error;
mod guard;
pub mod header;
pub mod preopt;
pub mod ring;
pub(crate) mod sem;
pub mod sharded;
mod shared;
pub mod table;
pub mod wire;

pub use arch::{ARCH, Arch};
pub use config::{ClientOptions, DEFAULT_HANG, PrivateKey, ServerConfig};
pub use error::KvError;

use header::ShmObject;
use shared::ServerShared;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use wire::{RequestPayload, ResponseData};

// The body sizes are the architectures' own layouts, so this method stands here,
// beside the modules it dispatches to, and not in `arch.rs`.
impl Arch {
    /// Bytes of the body of object `part` for `workers` workers.
    pub fn body_len(self, workers: u32, part: u32) -> usize {
        match self {
            Arch::Preopt => preopt::body_len(part),
            Arch::Ring => ring::body_len(),
            Arch::Sharded => sharded::body_len(workers),
        }
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

/// The kv servers of this user that are running, private ones marked.
pub fn running_servers() -> Vec<header::Running> {
    header::running_servers()
}

#[cfg(test)]
mod tests;
