//! The Warp Pipe client workload: T threads × N iterations of read P bytes → write
//! them back modified (`buf[j] = j + i`) → read again and verify, against a memory
//! mock, in the connection arrangements of [`ConnectionMode`].
//!
//! [`run_client`] runs the workload of one client process (this one) against a
//! server address and returns a [`ClientRun`]: per-transaction latencies (HDR
//! histogram buckets, so runs of several processes merge exactly), the time window
//! on the shared `CLOCK_MONOTONIC` axis, errors and verification failures. The rig
//! that stands the mock and the clients up is `rig::memory_mock`.
//!
//! Every thread works on its own slice of BAR1 (`slot × P`), so that verification is
//! exact even with many writers; the rig sizes BAR1 to hold all slices. When BAR1 is
//! too small for that, threads share offset 0 and verification is skipped (and
//! reported as such), like warp-pipe's sample, which checks only the lengths.
//!
//! A transaction is one MRd answered by its completion(s), or one MWr (posted: its
//! latency is the time to hand it to the socket). The original's 200 ms sleep per
//! iteration is `think` (default 0).

use super::kind::{RecordedWorkload, WORKLOAD};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Duration;
use xferbench_params::{ParamError, ParamMap, PointParams, Value};
use xferbench_probes::clock::Stamp;
use xferbench_probes::cpu::{CpuSnapshot, ProcessCpu};
use xferbench_probes::process::{Ended, Role, SpawnError};
use xferbench_transports::ParamDef;
use xferbench_transports::warp::CrcKind;
use xferbench_transports::warp::client::{AckPolicy, ClientError, Link, MAX_TAGS, Pipeline};
use xferbench_transports::warp::crc::CRC;

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

xferbench_params::choices!(ConnectionMode {
    Shared => "shared": "all threads share one connection, one transaction in flight (warp-pipe)",
    PerThread => "per-thread": "one connection per thread",
    Pipelined => "pipelined": "up to 32 threads per connection with their own tags (32 reads in flight)",
});

/// `connection`: how client threads share connections.
pub const CONNECTION: ParamDef = ParamDef::choice(
    "connection",
    <ConnectionMode as xferbench_params::Choices>::CHOICES,
    "per-thread",
    "how client threads share connections",
);

/// `payload`: bytes per read and write.
pub const PAYLOAD: ParamDef = ParamDef::message_bytes_in_units(
    "payload",
    4,
    4096,
    4,
    2048,
    "bytes per read and write, a multiple of 4",
);

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

xferbench_params::choices!(Ops {
    ReadWriteRead => "read-write-read": "read, write back modified, read again and verify (warp-pipe's sample)",
    Read => "read": "one read per iteration (the mock's read throughput)",
});

/// The names of the Warp Pipe client's parameters, for code that names a group or a
/// table column after one; each is the name of its definition below.
pub mod names {
    /// [`super::THREADS`].
    pub const THREADS: &str = "threads";
    /// [`super::ITERATIONS`].
    pub const ITERATIONS: &str = "iterations";
    /// [`super::INSTANCES`].
    pub const INSTANCES: &str = "instances";
    /// [`super::PAYLOAD`].
    pub const PAYLOAD: &str = "payload";
}

/// `threads`: client threads per client process (warp-pipe's `--threads`).
pub const THREADS: ParamDef = ParamDef::integer(
    names::THREADS,
    1,
    i64::MAX,
    1,
    "client threads per client process",
);
/// `iterations`: iterations per thread (warp-pipe's `--iterations`).
pub const ITERATIONS: ParamDef = ParamDef::integer(
    names::ITERATIONS,
    0,
    i64::MAX,
    100,
    "iterations per client thread",
);
/// `instances`: client processes run at once.
pub const INSTANCES: ParamDef = ParamDef::integer(
    names::INSTANCES,
    1,
    i64::MAX,
    1,
    "client processes run at once (1: the client runs in the measuring process)",
);
/// `ops`: what each iteration does.
pub const OPS: ParamDef = ParamDef::choice(
    "ops",
    <Ops as xferbench_params::Choices>::CHOICES,
    "read-write-read",
    "what each iteration does",
);
/// `connect`: the memory mock's address, as given.
pub const CONNECT: ParamDef = ParamDef::text(
    "connect",
    "an address HOST:PORT",
    "127.0.0.1:2115",
    "the memory mock's address",
);
/// `piggyback_acks`: TLPs acknowledged with the next request instead of at once.
pub const PIGGYBACK_ACKS: ParamDef = ParamDef::boolean(
    "piggyback_acks",
    false,
    "acknowledge received TLPs with the next request instead of at once",
);
/// `think_ms`: sleep after each iteration, milliseconds.
pub const THINK_MS: ParamDef = ParamDef::integer(
    "think_ms",
    0,
    i64::MAX,
    0,
    "sleep after each iteration, milliseconds (warp-pipe's sample: 200)",
);

/// The client settings every Warp Pipe point records (`xferbench warp client`'s and
/// the Warp Pipe study's alike): threads, iterations, payload, CRC, connections,
/// client processes and what an iteration does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpParams {
    /// Threads per client process.
    pub threads: usize,
    /// Iterations per thread.
    pub iterations: u64,
    /// Bytes per read and write.
    pub payload: usize,
    /// CRC implementation.
    pub crc: CrcKind,
    /// How threads share connections.
    pub connection: ConnectionMode,
    /// Client processes.
    pub instances: usize,
    /// What each iteration does.
    pub ops: Ops,
}

impl WarpParams {
    /// The settings of `client` run as `instances` client processes.
    pub fn of(client: &ClientSpec, instances: usize) -> WarpParams {
        WarpParams {
            threads: client.threads,
            iterations: client.iterations,
            payload: client.payload,
            crc: client.crc,
            connection: client.connection,
            instances,
            ops: client.ops,
        }
    }
}

impl PointParams for WarpParams {
    fn definitions() -> Vec<ParamDef> {
        vec![
            THREADS, ITERATIONS, PAYLOAD, CRC, CONNECTION, INSTANCES, OPS,
        ]
    }

    fn write(&self, map: &mut ParamMap) {
        map.put(&THREADS, &Value::whole(self.threads));
        map.put(&ITERATIONS, &Value::whole(self.iterations));
        map.put(&PAYLOAD, &Value::Bytes(self.payload as u64));
        map.put_text(&CRC, self.crc.name());
        map.put_text(&CONNECTION, self.connection.name());
        map.put(&INSTANCES, &Value::whole(self.instances));
        map.put_text(&OPS, self.ops.name());
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        Ok(WarpParams {
            threads: map.whole(&THREADS)?,
            iterations: map.whole(&ITERATIONS)?,
            payload: map.bytes(&PAYLOAD)? as usize,
            crc: map.choice(&CRC)?,
            connection: map.choice(&CONNECTION)?,
            instances: map.whole(&INSTANCES)?,
            ops: map.choice(&OPS)?,
        })
    }
}

/// The parameters of an `xferbench warp client` point: the client's settings
/// ([`WarpParams`]), the mock's address as given, ACK piggybacking and think time,
/// under `workload=warp-client`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarpClientParams {
    /// The settings every Warp Pipe point records.
    pub warp: WarpParams,
    /// The memory mock's address, as given.
    pub connect: String,
    /// ACK received TLPs with the next request.
    pub piggyback_acks: bool,
    /// Sleep between iterations, milliseconds.
    pub think_ms: u64,
}

impl WarpClientParams {
    /// The parameters of `client` run as `instances` processes against `connect`.
    pub fn of(client: &ClientSpec, instances: usize, connect: &str) -> WarpClientParams {
        WarpClientParams {
            warp: WarpParams::of(client, instances),
            connect: connect.to_string(),
            piggyback_acks: client.piggyback_acks,
            think_ms: client.think_ms,
        }
    }
}

impl PointParams for WarpClientParams {
    fn definitions() -> Vec<ParamDef> {
        let mut defs = WarpParams::definitions();
        defs.extend([WORKLOAD, CONNECT, PIGGYBACK_ACKS, THINK_MS]);
        defs
    }

    fn write(&self, map: &mut ParamMap) {
        self.warp.write(map);
        map.put_text(&WORKLOAD, RecordedWorkload::WarpClient.name());
        map.put_text(&CONNECT, &self.connect);
        map.put(&PIGGYBACK_ACKS, &Value::Bool(self.piggyback_acks));
        map.put(&THINK_MS, &Value::whole(self.think_ms));
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        Ok(WarpClientParams {
            warp: WarpParams::read(map)?,
            connect: map
                .text(&CONNECT)
                .map_or_else(|| CONNECT.machine(&CONNECT.default), str::to_string),
            piggyback_acks: map.boolean(&PIGGYBACK_ACKS)?,
            think_ms: map.whole(&THINK_MS)?,
        })
    }
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
    /// CRC implementation.
    #[serde(with = "xferbench_params::by_name")]
    pub crc: CrcKind,
    /// How threads share connections.
    pub connection: ConnectionMode,
    /// ACK received TLPs with the next request instead of at once.
    pub piggyback_acks: bool,
    /// Sleep between iterations, milliseconds (warp-pipe's sample: 200).
    pub think_ms: u64,
    /// BAR1 slice of this process's first thread (other processes use other slots).
    pub first_slot: usize,
    /// BAR1 slices used by all the processes of the run (0: this process's own,
    /// `first_slot + threads`). Every process verifies its data only if all of them
    /// fit in BAR1; otherwise all of them work on the first slice unverified, so one
    /// that does not fit never overwrites another's verified slice.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub slots: usize,
    /// What each iteration does.
    pub ops: Ops,
    /// Connecting, every send and every wait for a completion fail after this long
    /// (the run's hang timeout), milliseconds.
    #[serde(default = "default_hang_timeout_ms")]
    pub hang_timeout_ms: u64,
    /// With `--pin`: the CPU of each OS thread that runs transactions, thread `i` on
    /// `pin_cpus[i % len]` (empty: not pinned).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pin_cpus: Vec<usize>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// [`ClientSpec::hang_timeout_ms`] unless given: the transaction timeout of the link.
pub fn default_hang_timeout_ms() -> u64 {
    xferbench_transports::warp::client::TRANSACTION_TIMEOUT.as_millis() as u64
}

/// What one client measured: what [`run_client`] returns, and what a client
/// process ([`Role::WarpClient`]) prints as one JSON line for the memory-mock rig.
/// It is no user output: the rig makes it a channel of its run
/// (`rig::memory_mock::outcome`).
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
    /// With pinning: the CPUs each OS thread that ran transactions may use, as the
    /// system reported them once it was pinned (empty: not pinned).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_cpus: Vec<Vec<usize>>,
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

/// What one client process ([`Role::WarpClient`]) runs: its one argument, as JSON. It
/// prints its [`ClientRun`] as JSON on stdout and dies with its parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientProcessSpec {
    /// The memory mock's address.
    pub connect: SocketAddr,
    /// The workload.
    pub client: ClientSpec,
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
    /// Each pinned thread's index and CPU set.
    thread_cpus: Mutex<Vec<(usize, Vec<usize>)>>,
}

impl Tally {
    fn new() -> Self {
        Tally {
            transactions: AtomicU64::new(0),
            verify_failures: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            first_error: Mutex::new(None),
            hist: Mutex::new(new_histogram()),
            thread_cpus: Mutex::new(Vec::new()),
        }
    }

    /// Pins the calling thread, the `i`-th OS thread of the client, as `spec` says,
    /// and notes the CPUs it may then use; a failure to pin is a failed transaction.
    fn pin(&self, spec: &ClientSpec, i: usize) {
        let Some(&cpu) = spec.pin_cpus.get(i % spec.pin_cpus.len().max(1)) else {
            return;
        };
        match xferbench_probes::affinity::pin_current_thread(cpu) {
            Ok(()) => self
                .thread_cpus
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((i, xferbench_probes::affinity::allowed_cpus())),
            Err(e) => self.error(1, format!("cannot pin client thread {i} to CPU {cpu}: {e}")),
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
    let crc = spec.crc;
    let checked =
        |def: &ParamDef, v: Value| def.check(&v).map_err(|e| WarpRunError::Spec(e.to_string()));
    checked(&PAYLOAD, Value::Bytes(spec.payload as u64))?;
    checked(&THREADS, Value::Integer(spec.threads as i64))?;
    let ack = if spec.piggyback_acks {
        AckPolicy::Piggyback
    } else {
        AckPolicy::Immediate
    };
    let timeout = Duration::from_millis(spec.hang_timeout_ms);
    let cpu_before = CpuSnapshot::now();
    let mut first = Link::connect_within(addr, crc, ack, timeout)?;
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
    let slots = spec.slots.max(spec.first_slot + spec.threads);
    let slots_needed = slots as u64 * spec.payload as u64;
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
                v.push(Mutex::new(enumerated(addr, crc, ack, timeout)?));
            }
            run_threads(&Conns::PerThread(v), spec, geo, &tally, stop)
        }
        ConnectionMode::Pipelined => {
            let n = spec.threads.div_ceil(MAX_TAGS);
            let mut pipes = Vec::with_capacity(n);
            pipes.push(first.into_pipeline());
            for _ in 1..n {
                pipes.push(enumerated(addr, crc, ack, timeout)?.into_pipeline());
            }
            run_pipelined(pipes, spec, geo, &tally, stop)
        }
    };
    let hist = tally.hist.into_inner().unwrap_or_else(|p| p.into_inner());
    let transactions = tally.transactions.into_inner();
    let mut thread_cpus = tally
        .thread_cpus
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    thread_cpus.sort();
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
        thread_cpus: thread_cpus.into_iter().map(|(_, c)| c).collect(),
    })
}

/// A new connection that enumerated the device itself: warp-pipe's memory mock maps
/// BARs per connection (and answers nothing for unmapped addresses), so every
/// connection enumerates, as every Zephyr instance would.
fn enumerated(
    addr: SocketAddr,
    crc: CrcKind,
    ack: AckPolicy,
    timeout: Duration,
) -> Result<Link, WarpRunError> {
    let mut link = Link::connect_within(addr, crc, ack, timeout)?;
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
                    tally.pin(spec, t);
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
                tally.pin(spec, c);
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
    let mut lt = Logical::new(first, n, spec, geo, tally);
    for k in 0..lt.active {
        lt.sent_at[k] = Stamp::now();
        if let Err(e) = pipe.read(k as u8, geo.addr(first + k), spec.payload) {
            lt.fail(e);
            break;
        }
    }
    let mut writes: Vec<Stamp> = Vec::with_capacity(n);
    let mut completed: Vec<(usize, bool)> = Vec::with_capacity(n);
    while lt.active > 0 {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        lt.wake_thinkers(pipe);
        if let Err(e) = pipe.flush() {
            lt.fail(e);
            break;
        }
        let flushed = Stamp::now();
        for t0 in writes.drain(..) {
            let _ = lt.hist.record(flushed.since(t0).max(1));
            lt.done += 1;
        }
        if pipe.in_flight() == 0 {
            lt.sleep_until_one_wakes();
            continue;
        }
        completed.clear();
        let r = pipe.wait(|tag, res| {
            let k = usize::from(tag);
            let _ = lt.hist.record(Stamp::now().since(lt.sent_at[k]).max(1));
            match res {
                Ok(data) => {
                    let ok = lt.phase.get(k) != Some(&Phase::ReadB)
                        || !geo.verified
                        || check(data, lt.iter[k]);
                    completed.push((k, ok));
                }
                Err(e) => {
                    tally.error(1, e);
                    lt.phase[k] = Phase::Done;
                    lt.active -= 1;
                }
            }
        });
        if let Err(e) = r {
            lt.fail(e);
            break;
        }
        for &(k, ok) in &completed {
            lt.done += 1;
            if let Err(e) = lt.advance(pipe, k, ok, &mut writes) {
                lt.fail(e);
                break;
            }
        }
    }
    let _ = pipe.flush();
    tally.add(lt.done, lt.failures, &lt.hist);
}

/// The logical threads one OS thread drives over its connection, each a state
/// machine ([`Phase`]), and what they have measured.
struct Logical<'a> {
    first: usize,
    spec: &'a ClientSpec,
    geo: Geometry,
    tally: &'a Tally,
    phase: Vec<Phase>,
    /// Per logical thread: its iteration and when its request in flight was sent.
    iter: Vec<u64>,
    sent_at: Vec<Stamp>,
    /// Logical threads not yet done.
    active: usize,
    hist: Histogram<u64>,
    done: u64,
    failures: u64,
    /// The payload of a write.
    buf: Vec<u8>,
    think: Duration,
}

impl<'a> Logical<'a> {
    fn new(first: usize, n: usize, spec: &'a ClientSpec, geo: Geometry, tally: &'a Tally) -> Self {
        let active = if spec.iterations == 0 { 0 } else { n };
        Logical {
            first,
            spec,
            geo,
            tally,
            phase: vec![
                if active == 0 {
                    Phase::Done
                } else {
                    Phase::ReadA
                };
                n
            ],
            iter: vec![0; n],
            sent_at: vec![Stamp(0); n],
            active,
            hist: new_histogram(),
            done: 0,
            failures: 0,
            buf: vec![0u8; spec.payload],
            think: Duration::from_millis(spec.think_ms),
        }
    }

    /// The connection failed: every logical thread is done, the error counted for
    /// each that was still active.
    fn fail(&mut self, e: ClientError) {
        self.tally.error(self.active as u64, e);
        self.phase.fill(Phase::Done);
        self.active = 0;
    }

    /// Logical threads whose sleep is over start their next iteration.
    fn wake_thinkers(&mut self, pipe: &mut Pipeline) {
        let now = Stamp::now();
        for k in 0..self.phase.len() {
            if let Phase::Thinking(until) = self.phase[k]
                && now >= until
            {
                self.phase[k] = Phase::ReadA;
                self.sent_at[k] = now;
                let addr = self.geo.addr(self.first + k);
                if let Err(e) = pipe.read(k as u8, addr, self.spec.payload) {
                    self.fail(e);
                }
            }
        }
    }

    /// Everyone is thinking: sleeps until the first wakes.
    fn sleep_until_one_wakes(&self) {
        let next = self
            .phase
            .iter()
            .filter_map(|p| match p {
                Phase::Thinking(u) => Some(u.0),
                _ => None,
            })
            .min();
        if let Some(u) = next {
            std::thread::sleep(Duration::from_nanos(u.saturating_sub(Stamp::now().0)));
        }
    }

    /// Logical thread `k`'s request completed (`ok`: its data checked): the write
    /// after the first read, the next iteration's read, a sleep, or the end.
    fn advance(
        &mut self,
        pipe: &mut Pipeline,
        k: usize,
        ok: bool,
        writes: &mut Vec<Stamp>,
    ) -> Result<(), ClientError> {
        let addr = self.geo.addr(self.first + k);
        let next_read = match self.phase[k] {
            Phase::ReadA if self.spec.ops == Ops::ReadWriteRead => {
                fill(&mut self.buf, self.iter[k]);
                writes.push(Stamp::now());
                pipe.write(addr, &self.buf)?;
                self.phase[k] = Phase::ReadB;
                true
            }
            Phase::ReadA | Phase::ReadB => {
                if !ok {
                    self.failures += 1;
                }
                self.iter[k] += 1;
                if self.iter[k] >= self.spec.iterations {
                    self.phase[k] = Phase::Done;
                    self.active -= 1;
                    false
                } else if !self.think.is_zero() {
                    self.phase[k] =
                        Phase::Thinking(Stamp(Stamp::now().0 + self.think.as_nanos() as u64));
                    false
                } else {
                    self.phase[k] = Phase::ReadA;
                    true
                }
            }
            Phase::Thinking(_) | Phase::Done => false,
        };
        if next_read {
            self.sent_at[k] = Stamp::now();
            pipe.read(k as u8, addr, self.spec.payload)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod params_tests {
    use super::*;

    fn client() -> ClientSpec {
        ClientSpec {
            threads: 506,
            iterations: 100,
            payload: 2048,
            crc: CrcKind::Table,
            connection: ConnectionMode::Shared,
            piggyback_acks: true,
            think_ms: 200,
            first_slot: 0,
            slots: 0,
            ops: Ops::Read,
            hang_timeout_ms: default_hang_timeout_ms(),
            pin_cpus: Vec::new(),
        }
    }

    #[test]
    fn a_warp_point_writes_and_reads_itself_through_its_definitions() {
        let w = WarpParams::of(&client(), 4);
        xferbench_params::point::round_trips(&w).unwrap();
        let map = w.to_map();
        let keys: Vec<&str> = map.as_params().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "connection",
                "crc",
                "instances",
                "iterations",
                "ops",
                "payload",
                "threads"
            ]
        );
        assert_eq!(map.as_params()["payload"], "2048");
        assert_eq!(map.as_params()["ops"], "read");
        let c = WarpClientParams::of(&client(), 1, "127.0.0.1:2115");
        xferbench_params::point::round_trips(&c).unwrap();
        let map = c.to_map();
        assert_eq!(map.as_params()["workload"], "warp-client");
        assert_eq!(map.as_params()["think_ms"], "200");
        assert_eq!(map.as_params()["piggyback_acks"], "true");
        // The keys and values `xferbench warp client` has always recorded.
        let want: [(&str, &str); 11] = [
            ("connect", "127.0.0.1:2115"),
            ("connection", "shared"),
            ("crc", "table"),
            ("instances", "1"),
            ("iterations", "100"),
            ("ops", "read"),
            ("payload", "2048"),
            ("piggyback_acks", "true"),
            ("think_ms", "200"),
            ("threads", "506"),
            ("workload", "warp-client"),
        ];
        let have: Vec<(&str, &str)> = map
            .as_params()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(have, want);
        for d in WarpClientParams::definitions() {
            d.self_check().unwrap();
        }
    }

    #[test]
    fn ops_are_named_as_their_serde_form() {
        for ops in Ops::ALL {
            let json = serde_json::to_string(&ops).unwrap();
            assert_eq!(json, format!("\"{}\"", ops.name()));
        }
    }
}
