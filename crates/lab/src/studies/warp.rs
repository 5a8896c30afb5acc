//! The Warp Pipe workload and study: T threads × N iterations of read P bytes →
//! write them back modified (`buf[j] = j + i`) → read again and verify, against the
//! memory mock, in the connection arrangements of [`ConnectionMode`].
//!
//! * [`run_client`] runs the workload of one client process (this one) against a
//!   server address and returns a [`ClientRun`]: per-transaction latencies (HDR
//!   histogram buckets, so runs of several processes merge exactly), the time window
//!   on the shared `CLOCK_MONOTONIC` axis, errors and verification failures.
//! * [`run_point`] starts a memory mock (a process in the binary's
//!   [`Role::MemoryMock`], given a [`MemoryMockSpec`], so its CPU time is its own, or a
//!   thread for tests), runs one client in this process or `instances` client
//!   processes ([`Role::WarpClient`], each given a [`ClientProcessSpec`]), and returns a
//!   [`PointResult`] with transactions/s, MB/s, latency percentiles and the CPU of
//!   client(s) and server.
//! * [`run_study`] runs the study's list of points ([`study_points`]).
//!
//! Every thread works on its own slice of BAR1 (`slot × P`), so that verification is
//! exact even with many writers; the study sizes BAR1 to hold all slices. When BAR1 is
//! too small for that, threads share offset 0 and verification is skipped (and
//! reported as such), like warp-pipe's sample, which checks only the lengths.
//!
//! A transaction is one MRd answered by its completion(s), or one MWr (posted: its
//! latency is the time to hand it to the socket). The original's 200 ms sleep per
//! iteration is `think` (default 0).

use crate::clock::Stamp;
use crate::cpu::{CpuSnapshot, ProcessCpu};
use crate::process::{Child, Ended, Launcher, Role, SpawnError, Streams};
use crate::profile::ParticipantProfiler;
use crate::result::Latency;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;
use xferbench_transports::warp::CrcKind;
use xferbench_transports::warp::client::{AckPolicy, ClientError, Link, MAX_TAGS, Pipeline};
use xferbench_transports::warp::mock::MockConfig;
use xferbench_transports::warp::server::{IoModel, Server, ServerConfig};

/// How client threads share connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConnectionMode {
    /// One connection for all threads, one transaction in flight (warp-pipe's sample).
    Shared,
    /// One connection per thread.
    PerThread,
    /// Up to 32 threads per connection, each with its own tag: up to 32 reads in
    /// flight per connection.
    Pipelined,
}

impl ConnectionMode {
    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            ConnectionMode::Shared => "shared",
            ConnectionMode::PerThread => "per-thread",
            ConnectionMode::Pipelined => "pipelined",
        }
    }

    /// Parses [`ConnectionMode::name`].
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Shared, Self::PerThread, Self::Pipelined]
            .into_iter()
            .find(|m| m.name() == s)
    }
}

/// What each iteration does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Ops {
    /// Read, write back modified, read again and verify (warp-pipe's sample).
    #[default]
    ReadWriteRead,
    /// One read per iteration (the mock's read throughput).
    Read,
}

/// One client process's share of the workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientSpec {
    /// Threads.
    pub threads: usize,
    /// Iterations per thread.
    pub iterations: u64,
    /// Bytes per read and write, 4..=4096, a multiple of 4.
    pub payload: usize,
    /// CRC implementation (`bitwise`, `table`, `fast`).
    pub crc: String,
    /// How threads share connections.
    pub connection: ConnectionMode,
    /// ACK received TLPs with the next request instead of at once.
    pub piggyback_acks: bool,
    /// Sleep between iterations, milliseconds (warp-pipe's sample: 200).
    pub think_ms: u64,
    /// BAR1 slice of this process's first thread (other processes use other slots).
    pub first_slot: usize,
    /// What each iteration does.
    pub ops: Ops,
}

/// What one client process measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientRun {
    /// Transactions completed.
    pub transactions: u64,
    /// Payload bytes moved (read and written).
    pub payload_bytes: u64,
    /// When the threads started (after connecting and enumerating).
    pub start: Stamp,
    /// When the last thread finished.
    pub end: Stamp,
    /// Latency histogram as `(value_ns, count)` buckets.
    pub latency_buckets: Vec<(u64, u64)>,
    /// Second reads that did not return what was written.
    pub verify_failures: u64,
    /// Whether data was verified (each thread had its own BAR1 slice).
    pub verified: bool,
    /// Failed transactions.
    pub errors: u64,
    /// The first error, if any.
    pub first_error: Option<String>,
    /// This process's CPU over the run.
    pub cpu: ProcessCpu,
    /// Interrupted before the end.
    pub interrupted: bool,
}

/// Why the workload could not run.
#[derive(Debug, thiserror::Error)]
pub enum WarpRunError {
    /// A parameter is out of range.
    #[error("{0}")]
    Spec(String),
    /// Connecting or enumerating failed.
    #[error("warp client: {0}")]
    Client(#[from] ClientError),
    /// Starting or talking to a server or client process failed.
    #[error("warp: {0}")]
    Process(String),
    /// A server or client process could not be started.
    #[error("warp: could not start the {}", .role.name())]
    Spawn {
        /// Which.
        role: Role,
        /// Why.
        #[source]
        source: SpawnError,
    },
    /// A server or client process failed.
    #[error("warp: {what} {ended}")]
    Ended {
        /// Which process (`client 2`, `the memory mock`).
        what: String,
        /// How it ended.
        ended: Ended,
    },
}

fn new_histogram() -> Histogram<u64> {
    // 1 ns .. 100 s, 3 significant digits. Valid bounds: cannot fail.
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid histogram bounds")
}

/// Connections shared by OS threads (shared and per-thread modes).
enum Conns {
    Shared(Mutex<Link>),
    PerThread(Vec<Mutex<Link>>),
}

/// What the threads of one client process add up.
struct Tally {
    transactions: AtomicU64,
    verify_failures: AtomicU64,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
    hist: Mutex<Histogram<u64>>,
}

impl Tally {
    fn new() -> Self {
        Tally {
            transactions: AtomicU64::new(0),
            verify_failures: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            first_error: Mutex::new(None),
            hist: Mutex::new(new_histogram()),
        }
    }

    fn error(&self, n: u64, e: impl std::fmt::Display) {
        self.errors.fetch_add(n, Ordering::Relaxed);
        self.first_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| e.to_string());
    }

    fn add(&self, done: u64, failures: u64, hist: &Histogram<u64>) {
        self.transactions.fetch_add(done, Ordering::Relaxed);
        self.verify_failures.fetch_add(failures, Ordering::Relaxed);
        let _ = self
            .hist
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .add(hist);
    }
}

/// The pattern thread `t`'s iteration `i` writes: `buf[j] = j + i` (warp-pipe's
/// sample; `i` there is the thread number, here the iteration, so that every
/// iteration writes something new).
fn fill(buf: &mut [u8], i: u64) {
    for (j, b) in buf.iter_mut().enumerate() {
        *b = (j as u64).wrapping_add(i) as u8;
    }
}

fn check(buf: &[u8], i: u64) -> bool {
    buf.iter()
        .enumerate()
        .all(|(j, &b)| b == (j as u64).wrapping_add(i) as u8)
}

/// The workload's geometry, shared by all threads of a process.
#[derive(Clone, Copy)]
struct Geometry {
    bar_address: u64,
    verified: bool,
    first_slot: usize,
    payload: usize,
}

impl Geometry {
    fn addr(&self, t: usize) -> u64 {
        let offset = if self.verified {
            ((self.first_slot + t) * self.payload) as u64
        } else {
            0
        };
        self.bar_address + offset
    }
}

/// Runs `spec` against the server at `addr` until done or `stop`.
pub fn run_client(
    addr: SocketAddr,
    spec: &ClientSpec,
    stop: &AtomicBool,
) -> Result<ClientRun, WarpRunError> {
    let crc: CrcKind = spec.crc.parse().map_err(|_| {
        WarpRunError::Spec(format!(
            "unknown CRC `{}`: choose from bitwise, table, fast",
            spec.crc
        ))
    })?;
    if spec.payload == 0 || spec.payload > 4096 || spec.payload % 4 != 0 {
        return Err(WarpRunError::Spec(format!(
            "payload {} B: need a multiple of 4 from 4 to 4096",
            spec.payload
        )));
    }
    if spec.threads == 0 {
        return Err(WarpRunError::Spec("threads must be at least 1".into()));
    }
    let ack = if spec.piggyback_acks {
        AckPolicy::Piggyback
    } else {
        AckPolicy::Immediate
    };
    let cpu_before = CpuSnapshot::now();
    let mut first = Link::connect(addr, crc, ack)?;
    let info = first.enumerate()?;
    let bar = info
        .bar(1)
        .ok_or_else(|| WarpRunError::Spec("the device has no BAR1".into()))?;
    if spec.payload as u64 > u64::from(bar.size) {
        return Err(WarpRunError::Spec(format!(
            "payload {} B is larger than BAR1 ({} B)",
            spec.payload, bar.size
        )));
    }
    let slots_needed = (spec.first_slot + spec.threads) as u64 * spec.payload as u64;
    let geo = Geometry {
        bar_address: bar.address,
        verified: slots_needed <= u64::from(bar.size),
        first_slot: spec.first_slot,
        payload: spec.payload,
    };
    let tally = Tally::new();
    let (start, end) = match spec.connection {
        ConnectionMode::Shared => {
            let conns = Conns::Shared(Mutex::new(first));
            run_threads(&conns, spec, geo, &tally, stop)
        }
        ConnectionMode::PerThread => {
            let mut v = vec![Mutex::new(first)];
            for _ in 1..spec.threads {
                v.push(Mutex::new(enumerated(addr, crc, ack)?));
            }
            run_threads(&Conns::PerThread(v), spec, geo, &tally, stop)
        }
        ConnectionMode::Pipelined => {
            let n = spec.threads.div_ceil(MAX_TAGS);
            let mut pipes = Vec::with_capacity(n);
            pipes.push(first.into_pipeline());
            for _ in 1..n {
                pipes.push(enumerated(addr, crc, ack)?.into_pipeline());
            }
            run_pipelined(pipes, spec, geo, &tally, stop)
        }
    };
    let hist = tally.hist.into_inner().unwrap_or_else(|p| p.into_inner());
    let transactions = tally.transactions.into_inner();
    Ok(ClientRun {
        transactions,
        payload_bytes: transactions * spec.payload as u64,
        start,
        end,
        latency_buckets: hist
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect(),
        verify_failures: tally.verify_failures.into_inner(),
        verified: geo.verified,
        errors: tally.errors.into_inner(),
        first_error: tally
            .first_error
            .into_inner()
            .unwrap_or_else(|p| p.into_inner()),
        cpu: cpu_before.until(&CpuSnapshot::now(), "client", std::process::id()),
        interrupted: stop.load(Ordering::Relaxed),
    })
}

/// A new connection that enumerated the device itself: warp-pipe's memory mock maps
/// BARs per connection (and answers nothing for unmapped addresses), so every
/// connection enumerates, as every Zephyr instance would.
fn enumerated(addr: SocketAddr, crc: CrcKind, ack: AckPolicy) -> Result<Link, WarpRunError> {
    let mut link = Link::connect(addr, crc, ack)?;
    link.enumerate()?;
    Ok(link)
}

/// One OS thread per workload thread, each blocking on its transactions.
fn run_threads(
    conns: &Conns,
    spec: &ClientSpec,
    geo: Geometry,
    tally: &Tally,
    stop: &AtomicBool,
) -> (Stamp, Stamp) {
    let barrier = &Barrier::new(spec.threads + 1);
    let think = Duration::from_millis(spec.think_ms);
    let mut start = Stamp(0);
    std::thread::scope(|scope| {
        for t in 0..spec.threads {
            let spawned = std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn_scoped(scope, move || {
                    let addr = geo.addr(t);
                    let mut hist = new_histogram();
                    let mut buf = vec![0u8; spec.payload];
                    let (mut done, mut failures) = (0u64, 0u64);
                    let mut op = |read: bool, buf: &mut [u8]| -> Result<(), ClientError> {
                        let t0 = Stamp::now();
                        let link = match conns {
                            Conns::Shared(l) => l,
                            Conns::PerThread(v) => &v[t],
                        };
                        let mut l = link.lock().unwrap_or_else(|p| p.into_inner());
                        let r = if read {
                            l.read(addr, buf)
                        } else {
                            l.write(addr, buf)
                        };
                        drop(l);
                        let _ = hist.record(Stamp::now().since(t0).max(1));
                        if r.is_ok() {
                            done += 1;
                        }
                        r
                    };
                    barrier.wait();
                    let mut iteration = |i: u64, buf: &mut [u8]| -> Result<(), ClientError> {
                        op(true, buf)?;
                        if spec.ops == Ops::ReadWriteRead {
                            fill(buf, i);
                            op(false, buf)?;
                            buf.fill(0);
                            op(true, buf)?;
                            if geo.verified && !check(buf, i) {
                                failures += 1;
                            }
                        }
                        Ok(())
                    };
                    for i in 0..spec.iterations {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        if let Err(e) = iteration(i, &mut buf) {
                            tally.error(1, e);
                            break;
                        }
                        if !think.is_zero() {
                            std::thread::sleep(think);
                        }
                    }
                    tally.add(done, failures, &hist);
                });
            if let Err(e) = spawned {
                tally.error(1, format!("could not start thread {t}: {e}"));
                // A thread that never started cannot reach the barrier; take its
                // place so the others are not stuck.
                scope.spawn(move || {
                    barrier.wait();
                });
            }
        }
        barrier.wait();
        start = Stamp::now();
    });
    (start, Stamp::now())
}

/// Where a logical thread of the pipelined driver is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// First read of the iteration in flight.
    ReadA,
    /// Second read (after the write) in flight.
    ReadB,
    /// Sleeping (`think`) until the given time.
    Thinking(Stamp),
    /// Finished or failed.
    Done,
}

/// One OS thread per connection, each driving up to 32 logical threads (one per
/// tag) as state machines: no thread blocks per transaction, and one `send` and one
/// `recv` carry the transactions of many logical threads.
fn run_pipelined(
    pipes: Vec<Pipeline>,
    spec: &ClientSpec,
    geo: Geometry,
    tally: &Tally,
    stop: &AtomicBool,
) -> (Stamp, Stamp) {
    let barrier = &Barrier::new(pipes.len() + 1);
    let mut start = Stamp(0);
    std::thread::scope(|scope| {
        for (c, mut pipe) in pipes.into_iter().enumerate() {
            let first = c * MAX_TAGS;
            let n = MAX_TAGS.min(spec.threads - first);
            scope.spawn(move || {
                barrier.wait();
                drive(&mut pipe, first, n, spec, geo, tally, stop);
            });
        }
        barrier.wait();
        start = Stamp::now();
    });
    (start, Stamp::now())
}

fn drive(
    pipe: &mut Pipeline,
    first: usize,
    n: usize,
    spec: &ClientSpec,
    geo: Geometry,
    tally: &Tally,
    stop: &AtomicBool,
) {
    let mut hist = new_histogram();
    let mut phase = vec![Phase::ReadA; n];
    let mut iter = vec![0u64; n];
    let mut sent_at = vec![Stamp(0); n];
    let (mut done, mut failures) = (0u64, 0u64);
    let mut buf = vec![0u8; spec.payload];
    let mut writes: Vec<Stamp> = Vec::with_capacity(n);
    let mut completed: Vec<(usize, bool)> = Vec::with_capacity(n);
    let think = Duration::from_millis(spec.think_ms);
    let mut active = if spec.iterations == 0 { 0 } else { n };
    if active == 0 {
        phase.fill(Phase::Done);
    }
    let fail = |e: ClientError, phase: &mut [Phase], active: &mut usize| {
        tally.error(*active as u64, e);
        phase.fill(Phase::Done);
        *active = 0;
    };
    for (k, at) in sent_at.iter_mut().enumerate().take(active) {
        *at = Stamp::now();
        if let Err(e) = pipe.read(k as u8, geo.addr(first + k), spec.payload) {
            fail(e, &mut phase, &mut active);
            break;
        }
    }
    while active > 0 {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        // Logical threads whose sleep is over start their next iteration.
        let now = Stamp::now();
        for k in 0..n {
            if let Phase::Thinking(until) = phase[k] {
                if now >= until {
                    phase[k] = Phase::ReadA;
                    sent_at[k] = now;
                    if let Err(e) = pipe.read(k as u8, geo.addr(first + k), spec.payload) {
                        fail(e, &mut phase, &mut active);
                    }
                }
            }
        }
        if let Err(e) = pipe.flush() {
            fail(e, &mut phase, &mut active);
            break;
        }
        let flushed = Stamp::now();
        for t0 in writes.drain(..) {
            let _ = hist.record(flushed.since(t0).max(1));
            done += 1;
        }
        if pipe.in_flight() == 0 {
            // Everyone is thinking: sleep until the first wakes.
            let next = phase
                .iter()
                .filter_map(|p| match p {
                    Phase::Thinking(u) => Some(u.0),
                    _ => None,
                })
                .min();
            if let Some(u) = next {
                std::thread::sleep(Duration::from_nanos(u.saturating_sub(Stamp::now().0)));
            }
            continue;
        }
        completed.clear();
        let r = pipe.wait(|tag, res| {
            let k = usize::from(tag);
            let now = Stamp::now();
            let _ = hist.record(now.since(sent_at[k]).max(1));
            match res {
                Ok(data) => {
                    let ok = phase.get(k) != Some(&Phase::ReadB)
                        || !geo.verified
                        || check(data, iter[k]);
                    completed.push((k, ok));
                }
                Err(e) => {
                    tally.error(1, e);
                    phase[k] = Phase::Done;
                    active -= 1;
                }
            }
        });
        if let Err(e) = r {
            fail(e, &mut phase, &mut active);
            break;
        }
        for &(k, ok) in &completed {
            done += 1;
            let addr = geo.addr(first + k);
            let next_read = match phase[k] {
                Phase::ReadA if spec.ops == Ops::ReadWriteRead => {
                    fill(&mut buf, iter[k]);
                    writes.push(Stamp::now());
                    if let Err(e) = pipe.write(addr, &buf) {
                        fail(e, &mut phase, &mut active);
                        break;
                    }
                    phase[k] = Phase::ReadB;
                    true
                }
                Phase::ReadA | Phase::ReadB => {
                    if !ok {
                        failures += 1;
                    }
                    iter[k] += 1;
                    if iter[k] >= spec.iterations {
                        phase[k] = Phase::Done;
                        active -= 1;
                        false
                    } else if !think.is_zero() {
                        phase[k] = Phase::Thinking(Stamp(Stamp::now().0 + think.as_nanos() as u64));
                        false
                    } else {
                        phase[k] = Phase::ReadA;
                        true
                    }
                }
                Phase::Thinking(_) | Phase::Done => false,
            };
            if next_read {
                sent_at[k] = Stamp::now();
                if let Err(e) = pipe.read(k as u8, addr, spec.payload) {
                    fail(e, &mut phase, &mut active);
                    break;
                }
            }
        }
    }
    let _ = pipe.flush();
    tally.add(done, failures, &hist);
}

/// One point of the study: who serves, who asks, how much.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointSpec {
    /// Which group of the study this point belongs to (`original-workload`, `threads`,
    /// `payload`, ...).
    pub group: String,
    /// The variant's name (`original`, `pipelined`, `shared, crc=table`, ...).
    pub variant: String,
    /// What each client process does (`first_slot` is set per process).
    #[serde(flatten)]
    pub client: ClientSpec,
    /// Client processes (1: the client runs in this process).
    pub instances: usize,
    /// The server's I/O model.
    pub io: String,
}

/// What one point measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// The point.
    pub spec: PointSpec,
    /// Wall time of the whole workload (first thread start to last thread end), s.
    pub wall_s: f64,
    /// Transactions completed.
    pub transactions: u64,
    /// Transactions per second over the wall time.
    pub transactions_per_s: f64,
    /// Payload megabytes (10^6) per second over the wall time.
    pub mb_per_s: f64,
    /// Per-transaction latency.
    pub latency: Latency,
    /// CPU of the client process(es), summed.
    pub client_cpu_s: f64,
    /// CPU of the server process, when it ran as its own process.
    pub server_cpu_s: Option<f64>,
    /// Per-process CPU records (clients, then the server).
    pub cpu: Vec<ProcessCpu>,
    /// Verification failures.
    pub verify_failures: u64,
    /// Whether data was verified.
    pub verified: bool,
    /// Failed transactions.
    pub errors: u64,
    /// The first error.
    pub first_error: Option<String>,
}

/// What the memory mock process ([`Role::MemoryMock`]) serves: its one argument, as
/// JSON. It prints `listening on ADDR` on stdout once bound, serves until SIGINT and
/// dies with its parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryMockSpec {
    /// Address to listen on (port 0: any free port).
    pub listen: SocketAddr,
    /// CRC implementation (`bitwise`, `table`, `fast`).
    pub crc: String,
    /// BAR1 size in bytes (a power of two).
    pub bar1: u32,
    /// I/O model (`epoll` or `threads`).
    pub io: String,
}

impl MemoryMockSpec {
    /// A mock on a free loopback port.
    pub fn loopback(crc: &str, bar1: u32, io: &str) -> MemoryMockSpec {
        MemoryMockSpec {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            crc: crc.into(),
            bar1,
            io: io.into(),
        }
    }

    /// The server configuration, once the names are checked.
    pub fn config(&self) -> Result<ServerConfig, WarpRunError> {
        let io = match self.io.as_str() {
            "epoll" => IoModel::Epoll,
            "threads" => IoModel::Threads,
            other => {
                return Err(WarpRunError::Spec(format!(
                    "unknown I/O model `{other}`: choose epoll or threads"
                )));
            }
        };
        let crc: CrcKind = self
            .crc
            .parse()
            .map_err(|_| WarpRunError::Spec(format!("unknown CRC `{}`", self.crc)))?;
        let mut device = MockConfig::default();
        device.bar_sizes[1] = self.bar1;
        Ok(ServerConfig {
            listen: self.listen,
            crc,
            device,
            io,
        })
    }

    /// Binds the server.
    pub fn bind(&self) -> Result<Server, WarpRunError> {
        Server::bind(self.config()?).map_err(|e| WarpRunError::Process(e.to_string()))
    }
}

/// What one client process ([`Role::WarpClient`]) runs: its one argument, as JSON. It
/// prints its [`ClientRun`] as JSON on stdout and dies with its parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientProcessSpec {
    /// The memory mock's address.
    pub connect: SocketAddr,
    /// The workload.
    pub client: ClientSpec,
}

/// Where the memory mock runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerPlacement {
    /// A thread of this process (no separate CPU figure).
    Thread,
    /// A child process: the launcher's [`Role::MemoryMock`].
    Process(Launcher),
}

/// A running memory mock.
pub struct RunningServer {
    /// Its address.
    pub addr: SocketAddr,
    kind: ServerKind,
}

enum ServerKind {
    Thread {
        stop: Arc<AtomicBool>,
        handle: Option<std::thread::JoinHandle<()>>,
    },
    Process {
        child: Child,
    },
}

/// How long a memory mock process may take to announce its address.
const ANNOUNCE_TIMEOUT: Duration = Duration::from_secs(10);

impl RunningServer {
    /// Starts a memory mock on a free loopback port.
    pub fn start(
        placement: &ServerPlacement,
        crc: &str,
        bar1: u32,
        io: &str,
    ) -> Result<RunningServer, WarpRunError> {
        let spec = MemoryMockSpec::loopback(crc, bar1, io);
        match placement {
            ServerPlacement::Thread => {
                let server = spec.bind()?;
                let addr = server
                    .local_addr()
                    .map_err(|e| WarpRunError::Process(e.to_string()))?;
                let stop = Arc::new(AtomicBool::new(false));
                let s = Arc::clone(&stop);
                let handle = std::thread::spawn(move || {
                    let _ = server.run(&s);
                });
                Ok(RunningServer {
                    addr,
                    kind: ServerKind::Thread {
                        stop,
                        handle: Some(handle),
                    },
                })
            }
            ServerPlacement::Process(launcher) => {
                // Refuse bad names here, with the same message as a thread server.
                spec.config()?;
                let json = serde_json::to_string(&spec).expect("the spec serialises");
                let mut child = launcher
                    .spawn(Role::MemoryMock, [json], Streams::OUTPUT)
                    .map_err(|source| WarpRunError::Spawn {
                        role: Role::MemoryMock,
                        source,
                    })?;
                let stdout = child.take_stdout().expect("piped stdout");
                let (tx, rx) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    let mut line = String::new();
                    let _ = BufReader::new(stdout).read_line(&mut line);
                    let _ = tx.send(line);
                });
                let line = rx.recv_timeout(ANNOUNCE_TIMEOUT).unwrap_or_default();
                let addr = line
                    .trim()
                    .strip_prefix("listening on ")
                    .and_then(|a| a.parse::<SocketAddr>().ok());
                match addr {
                    Some(addr) => Ok(RunningServer {
                        addr,
                        kind: ServerKind::Process { child },
                    }),
                    None => match child.exited_within(Duration::from_millis(200)) {
                        Some(ended) => Err(WarpRunError::Ended {
                            what: "the memory mock".into(),
                            ended,
                        }),
                        None => {
                            child.stop();
                            Err(WarpRunError::Process(format!(
                                "the memory mock did not announce its address within {} s \
                                 (got {line:?})",
                                ANNOUNCE_TIMEOUT.as_secs()
                            )))
                        }
                    },
                }
            }
        }
    }

    /// The server process's id, when it is a process.
    pub fn pid(&self) -> Option<u32> {
        match &self.kind {
            ServerKind::Process { child } => Some(child.pid()),
            ServerKind::Thread { .. } => None,
        }
    }

    /// Stops the server (SIGINT to a process, so it shuts down cleanly) and waits.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        match &mut self.kind {
            ServerKind::Thread { stop, handle } => {
                stop.store(true, Ordering::Relaxed);
                if let Some(h) = handle.take() {
                    let _ = h.join();
                }
            }
            ServerKind::Process { child } => {
                child.stop();
            }
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// BAR1 size that gives each of `slots` threads its own `payload`-byte slice (at least
/// warp-pipe's 2048 B).
pub fn bar1_for(slots: usize, payload: usize) -> u32 {
    let need = (slots as u64 * payload as u64).clamp(2048, 1 << 30);
    need.next_power_of_two() as u32
}

/// The participants the study can profile: this process (the clients' threads) and
/// the memory mock (a process).
pub const PARTICIPANTS: [&str; 2] = ["main", "memory-mock"];

/// Runs one point: a fresh server, then the clients.
pub fn run_point(
    placement: &ServerPlacement,
    spec: &PointSpec,
    stop: &AtomicBool,
) -> Result<PointResult, WarpRunError> {
    run_point_profiled(placement, spec, stop, None)
}

/// [`run_point`], recording the memory mock when `profiler` asks for it.
fn run_point_profiled(
    placement: &ServerPlacement,
    spec: &PointSpec,
    stop: &AtomicBool,
    profiler: Option<&mut ParticipantProfiler>,
) -> Result<PointResult, WarpRunError> {
    let slots = spec.client.threads * spec.instances.max(1);
    let server = RunningServer::start(
        placement,
        &spec.client.crc,
        bar1_for(slots, spec.client.payload),
        &spec.io,
    )?;
    let _recording = match (profiler, server.pid()) {
        (Some(p), Some(pid)) => p
            .attach("memory-mock", pid)
            .map_err(|e| WarpRunError::Process(format!("profile: {e}")))?,
        _ => None,
    };
    let server_before = server.pid().and_then(CpuSnapshot::of_pid);
    let client = &spec.client;
    let runs = if spec.instances <= 1 {
        vec![run_client(server.addr, client, stop)?]
    } else {
        let ServerPlacement::Process(launcher) = placement else {
            return Err(WarpRunError::Spec(
                "--instances needs client processes: run the server as a process".into(),
            ));
        };
        run_instances(launcher, server.addr, client, spec.instances)?
    };
    let server_cpu = server.pid().and_then(|pid| {
        let before = server_before?;
        Some(before.until(&CpuSnapshot::of_pid(pid)?, "memory mock", pid))
    });
    server.stop();
    Ok(combine(spec, &runs, server_cpu))
}

/// Starts `k` client processes ([`Role::WarpClient`]) at once (process `i` uses BAR1
/// slots from `i × threads`) and collects their results.
pub fn run_instances(
    launcher: &Launcher,
    addr: SocketAddr,
    spec: &ClientSpec,
    k: usize,
) -> Result<Vec<ClientRun>, WarpRunError> {
    let mut children = Vec::with_capacity(k);
    for i in 0..k {
        let json = serde_json::to_string(&ClientProcessSpec {
            connect: addr,
            client: ClientSpec {
                first_slot: i * spec.threads,
                ..spec.clone()
            },
        })
        .expect("the spec serialises");
        let child = launcher
            .spawn(Role::WarpClient, [json], Streams::OUTPUT)
            .map_err(|source| WarpRunError::Spawn {
                role: Role::WarpClient,
                source,
            })?;
        children.push(child);
    }
    let mut runs = Vec::with_capacity(k);
    let mut failure = None;
    for (i, mut child) in children.into_iter().enumerate() {
        let mut out = Vec::new();
        let read = child
            .take_stdout()
            .expect("piped stdout")
            .read_to_end(&mut out);
        // Its output is closed: it is exiting (or kill it).
        let ended = child
            .exited_within(Duration::from_secs(10))
            .unwrap_or_else(|| child.stop());
        let what = format!("client {i}");
        let result = match (read, ended.success()) {
            (Ok(_), true) => serde_json::from_slice::<ClientRun>(&out)
                .map_err(|e| WarpRunError::Process(format!("{what} printed no result: {e}"))),
            (Err(e), true) => Err(WarpRunError::Process(format!("{what}: {e}"))),
            (_, false) => Err(WarpRunError::Ended { what, ended }),
        };
        match result {
            Ok(r) => runs.push(r),
            Err(e) => failure = failure.or(Some(e)),
        }
    }
    match failure {
        Some(f) => Err(f),
        None => Ok(runs),
    }
}

fn combine(spec: &PointSpec, runs: &[ClientRun], server_cpu: Option<ProcessCpu>) -> PointResult {
    let start = runs.iter().map(|r| r.start).min().unwrap_or(Stamp(0));
    let end = runs.iter().map(|r| r.end).max().unwrap_or(Stamp(0));
    let wall_s = end.since(start) as f64 / 1e9;
    let mut hist = new_histogram();
    for r in runs {
        for &(v, n) in &r.latency_buckets {
            let _ = hist.record_n(v.max(1), n);
        }
    }
    let transactions: u64 = runs.iter().map(|r| r.transactions).sum();
    let bytes: u64 = runs.iter().map(|r| r.payload_bytes).sum();
    let per_s = |x: f64| if wall_s > 0.0 { x / wall_s } else { 0.0 };
    let mut cpu: Vec<ProcessCpu> = runs.iter().map(|r| r.cpu.clone()).collect();
    let client_cpu_s = cpu.iter().map(|c| c.user_s + c.sys_s).sum();
    let server_cpu_s = server_cpu.as_ref().map(|c| c.user_s + c.sys_s);
    cpu.extend(server_cpu);
    PointResult {
        spec: spec.clone(),
        wall_s,
        transactions,
        transactions_per_s: per_s(transactions as f64),
        mb_per_s: per_s(bytes as f64) / 1e6,
        latency: Latency::of(&hist),
        client_cpu_s,
        server_cpu_s,
        cpu,
        verify_failures: runs.iter().map(|r| r.verify_failures).sum(),
        verified: runs.iter().all(|r| r.verified),
        errors: runs.iter().map(|r| r.errors).sum(),
        first_error: runs.iter().find_map(|r| r.first_error.clone()),
    }
}

/// The study's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StudyScale {
    /// Iterations of the original workload (100 in warp-pipe's sample).
    pub original_iterations: u64,
    /// Iterations per thread in the sweeps.
    pub sweep_iterations: u64,
    /// Thread counts swept.
    pub threads: &'static [usize],
    /// Payload sizes swept.
    pub payloads: &'static [usize],
    /// Iteration counts swept.
    pub iterations: &'static [u64],
    /// Instance counts swept.
    pub instances: &'static [usize],
}

impl StudyScale {
    /// The full study (a few minutes on 2 cores).
    pub const FULL: StudyScale = StudyScale {
        original_iterations: 100,
        sweep_iterations: 10,
        threads: &[1, 16, 64, 256, 506],
        payloads: &[64, 256, 1024, 2048, 4096],
        iterations: &[1, 10, 100],
        instances: &[1, 2, 4, 8],
    };
    /// `--quick`: the same shape, fewer iterations (under a minute).
    pub const QUICK: StudyScale = StudyScale {
        original_iterations: 5,
        sweep_iterations: 2,
        threads: &[1, 16, 64, 256, 506],
        payloads: &[64, 256, 1024, 2048, 4096],
        iterations: &[1, 10],
        instances: &[1, 2, 4],
    };
}

/// The variants compared throughout the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// Name in tables.
    pub name: &'static str,
    /// CRC.
    pub crc: &'static str,
    /// Connections.
    pub connection: ConnectionMode,
    /// Piggybacked ACKs.
    pub piggyback_acks: bool,
}

/// warp-pipe as it is: bitwise CRC, one shared connection, ACK per TLP.
pub const ORIGINAL: Variant = Variant {
    name: "original",
    crc: "bitwise",
    connection: ConnectionMode::Shared,
    piggyback_acks: false,
};
/// Fast CRC, a connection per thread, ACKs piggybacked.
pub const PER_THREAD: Variant = Variant {
    name: "per-thread",
    crc: "fast",
    connection: ConnectionMode::PerThread,
    piggyback_acks: true,
};
/// Fast CRC, 32 tags per connection.
pub const PIPELINED: Variant = Variant {
    name: "pipelined",
    crc: "fast",
    connection: ConnectionMode::Pipelined,
    piggyback_acks: true,
};

fn point(group: &str, v: &Variant, threads: usize, iterations: u64, payload: usize) -> PointSpec {
    PointSpec {
        group: group.into(),
        variant: v.name.into(),
        client: ClientSpec {
            threads,
            iterations,
            payload,
            crc: v.crc.into(),
            connection: v.connection,
            piggyback_acks: v.piggyback_acks,
            think_ms: 0,
            first_slot: 0,
            ops: Ops::ReadWriteRead,
        },
        instances: 1,
        io: "epoll".into(),
    }
}

/// The study's points, in the order they run.
pub fn study_points(scale: &StudyScale) -> Vec<PointSpec> {
    let mut v = Vec::new();
    let it = scale.original_iterations;
    // The original workload: 506 threads × N iterations × 2048 B, no sleeps.
    for var in [&ORIGINAL, &PER_THREAD, &PIPELINED] {
        v.push(point("original-workload", var, 506, it, 2048));
    }
    // The CRC's share: the original shape with each CRC.
    for crc in ["table", "fast"] {
        let mut p = point("crc", &ORIGINAL, 506, it, 2048);
        p.variant = format!("shared, crc={crc}");
        p.client.crc = crc.into();
        v.push(p);
    }
    let si = scale.sweep_iterations;
    for &t in scale.threads {
        for var in [&ORIGINAL, &PER_THREAD, &PIPELINED] {
            v.push(point("threads", var, t, si, 2048));
        }
    }
    for &p in scale.payloads {
        for var in [&ORIGINAL, &PIPELINED] {
            v.push(point("payload", var, 64, si, p));
        }
    }
    for &n in scale.iterations {
        for var in [&ORIGINAL, &PIPELINED] {
            v.push(point("iterations", var, 64, n, 2048));
        }
    }
    for &k in scale.instances {
        for var in [&ORIGINAL, &PER_THREAD] {
            let mut p = point("instances", var, 1, it, 2048);
            p.instances = k;
            v.push(p);
        }
    }
    // The server's I/O model, with many blocking client threads (per-thread) and
    // with a few batching driver threads (pipelined).
    for &t in scale.threads {
        for var in [&PER_THREAD, &PIPELINED] {
            for io in ["epoll", "threads"] {
                let mut p = point("io-model", var, t, it, 2048);
                p.variant = format!("{}, io={io}", var.name);
                p.io = io.into();
                v.push(p);
            }
        }
    }
    // The mock's read throughput: 2048-byte reads only.
    for var in [&PER_THREAD, &PIPELINED] {
        let mut p = point("mock-reads", var, 64, it.max(10) * 3, 2048);
        p.client.ops = Ops::Read;
        v.push(p);
    }
    v
}

/// Everything the study measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyResult {
    /// Whether this was `--quick`.
    pub quick: bool,
    /// The points, in the order they ran.
    pub points: Vec<PointResult>,
    /// The CRC micro-measurement: MB/s of each CRC on a 2 KiB buffer.
    pub crc_mb_per_s: Vec<(String, f64)>,
    /// Interrupted by Ctrl-C (the points so far are kept).
    pub interrupted: bool,
}

impl StudyResult {
    /// The points of `group`.
    pub fn group<'a>(&'a self, group: &'a str) -> impl Iterator<Item = &'a PointResult> + 'a {
        self.points.iter().filter(move |p| p.spec.group == group)
    }
}

/// Measures each CRC's throughput on a 2 KiB buffer (best of a few rounds).
pub fn measure_crc(rounds: u32) -> Vec<(String, f64)> {
    let buf: Vec<u8> = (0..2048u32).map(|i| (i * 7 + 3) as u8).collect();
    CrcKind::ALL
        .iter()
        .map(|&k| {
            let mut best = f64::INFINITY;
            // Enough repetitions for ~ms-scale timing even for the bitwise loop.
            let reps = if k == CrcKind::Bitwise { 50 } else { 5000 };
            for _ in 0..rounds {
                let t0 = Stamp::now();
                let mut acc = 0u32;
                for _ in 0..reps {
                    acc ^= k.lcrc32(std::hint::black_box(&buf));
                }
                std::hint::black_box(acc);
                best = best.min(Stamp::now().since(t0) as f64 / reps as f64);
            }
            (k.name().to_string(), 2048.0 / best * 1e3)
        })
        .collect()
}

/// Runs `points` one after another, calling `on_point` after each; stops early on
/// `stop`. A failing point is an error (the points so far are in `partial`). With a
/// `profiler` for the participant `memory-mock`, every server process is recorded.
pub fn run_study(
    placement: &ServerPlacement,
    points: &[PointSpec],
    quick: bool,
    stop: &AtomicBool,
    on_point: &mut dyn FnMut(usize, &PointResult),
    mut profiler: Option<&mut ParticipantProfiler>,
) -> (StudyResult, Option<WarpRunError>) {
    let mut result = StudyResult {
        quick,
        points: Vec::with_capacity(points.len()),
        crc_mb_per_s: measure_crc(if quick { 3 } else { 10 }),
        interrupted: false,
    };
    for (i, p) in points.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            result.interrupted = true;
            break;
        }
        match run_point_profiled(placement, p, stop, profiler.as_deref_mut()) {
            Ok(r) => {
                on_point(i, &r);
                result.points.push(r);
            }
            Err(e) => return (result, Some(e)),
        }
    }
    result.interrupted |= stop.load(Ordering::Relaxed);
    (result, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(connection: ConnectionMode, threads: usize, crc: &str) -> PointSpec {
        let variant = Variant {
            name: connection.name(),
            crc: "fast",
            connection,
            piggyback_acks: connection != ConnectionMode::Shared,
        };
        let mut p = point("test", &variant, threads, 5, 256);
        p.client.crc = crc.into();
        p
    }

    #[test]
    fn every_connection_mode_completes_and_verifies_the_workload() {
        let stop = AtomicBool::new(false);
        for (mode, crc) in [
            (ConnectionMode::Shared, "bitwise"),
            (ConnectionMode::PerThread, "table"),
            (ConnectionMode::Pipelined, "fast"),
        ] {
            // 40 threads: two pipelined connections, one of them partly used.
            let r = run_point(&ServerPlacement::Thread, &spec(mode, 40, crc), &stop).unwrap();
            assert_eq!(r.errors, 0, "{mode:?}: {:?}", r.first_error);
            assert!(r.verified, "{mode:?}");
            assert_eq!(r.verify_failures, 0, "{mode:?}");
            assert_eq!(r.transactions, 40 * 5 * 3, "{mode:?}");
            assert_eq!(r.latency.count, 40 * 5 * 3, "{mode:?}");
            assert!(r.transactions_per_s > 0.0 && r.wall_s > 0.0);
        }
    }

    #[test]
    fn verification_catches_a_device_that_loses_writes() {
        // BAR1 read-only: every write is dropped, so every second read differs.
        let device = MockConfig {
            bar_writable: [false; 6],
            ..MockConfig::default()
        };
        let server = Server::bind(ServerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            crc: CrcKind::Fast,
            device,
            io: IoModel::Epoll,
        })
        .unwrap();
        let addr = server.local_addr().unwrap();
        let stop = AtomicBool::new(false);
        let server_stop = AtomicBool::new(false);
        std::thread::scope(|sc| {
            sc.spawn(|| server.run(&server_stop).unwrap());
            for connection in [ConnectionMode::Shared, ConnectionMode::Pipelined] {
                let s = ClientSpec {
                    threads: 4,
                    iterations: 3,
                    payload: 256,
                    crc: "fast".into(),
                    connection,
                    piggyback_acks: false,
                    think_ms: 0,
                    first_slot: 0,
                    ops: Ops::ReadWriteRead,
                };
                let r = run_client(addr, &s, &stop).unwrap();
                assert!(r.verified);
                assert_eq!(r.verify_failures, 12, "{connection:?}");
                assert_eq!(r.errors, 0);
            }
            server_stop.store(true, Ordering::Relaxed);
        });
    }

    #[test]
    fn read_only_iterations_count_one_transaction_each() {
        let stop = AtomicBool::new(false);
        let mut p = spec(ConnectionMode::Pipelined, 8, "fast");
        p.client.ops = Ops::Read;
        let r = run_point(&ServerPlacement::Thread, &p, &stop).unwrap();
        assert_eq!(r.transactions, 8 * 5);
        assert_eq!(r.errors, 0);
    }

    #[test]
    fn bad_specs_are_refused_with_a_message() {
        let server = RunningServer::start(&ServerPlacement::Thread, "fast", 2048, "epoll").unwrap();
        let stop = AtomicBool::new(false);
        let mut s = ClientSpec {
            threads: 1,
            iterations: 1,
            payload: 6,
            crc: "fast".into(),
            connection: ConnectionMode::Shared,
            piggyback_acks: false,
            think_ms: 0,
            first_slot: 0,
            ops: Ops::ReadWriteRead,
        };
        let e = run_client(server.addr, &s, &stop).unwrap_err().to_string();
        assert!(e.contains("multiple of 4"), "{e}");
        s.payload = 4;
        s.crc = "crc64".into();
        let e = run_client(server.addr, &s, &stop).unwrap_err().to_string();
        assert!(e.contains("bitwise, table, fast"), "{e}");
        assert!(RunningServer::start(&ServerPlacement::Thread, "fast", 2048, "poll").is_err());
    }

    #[test]
    fn study_points_cover_the_brief() {
        let pts = study_points(&StudyScale::FULL);
        let orig = pts
            .iter()
            .find(|p| p.group == "original-workload" && p.variant == "original")
            .unwrap();
        assert_eq!(
            (
                orig.client.threads,
                orig.client.iterations,
                orig.client.payload
            ),
            (506, 100, 2048)
        );
        assert_eq!(
            (orig.client.crc.as_str(), orig.client.connection),
            ("bitwise", ConnectionMode::Shared)
        );
        for t in [1, 16, 64, 256, 506] {
            assert!(
                pts.iter()
                    .any(|p| p.group == "threads" && p.client.threads == t)
            );
        }
        for k in [1, 2, 4, 8] {
            assert!(
                pts.iter()
                    .any(|p| p.group == "instances" && p.instances == k)
            );
        }
        for crc in ["table", "fast"] {
            assert!(
                pts.iter()
                    .any(|p| p.group == "crc" && p.client.crc == crc && p.client.threads == 506)
            );
        }
    }
}
