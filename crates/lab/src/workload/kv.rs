//! The hash-table workload: the original client's request mix, against a kv server
//! of any architecture ([`xferbench_transports::kv`]) or a Redis server.
//!
//! Per outer iteration, with `inner` = il keys `"ht{seed}{random u32}"`:
//! 1. `inner` inserts `(key[i], i)`, then their `inner` replies (each `Inserted`);
//! 2. `inner` bucket reads of `key[i]`, then the replies (bucket `i` must hold
//!    `(key[i], v)` with `v` the last index holding that key);
//! 3. `inner` deletes, then the replies (`Deleted`; `NotFound` only up to the number
//!    of duplicate keys).
//!
//! Every reply is matched by (client id, request id): a reply for another client, a
//! request id out of range or answered twice, a missing reply and any failed check
//! above is a mismatch. `outer = 0` runs until the stop flag (the "visitor" mode).
//! Latency is per request, from its send to its reply.
//!
//! Against Redis ([`Backend::Redis`]) the same mix is sent as `inner`-deep pipelines
//! of `SET`, `GET` (the read: the value must be `i`) and `DEL`.

use super::kind::{RecordedWorkload, WORKLOAD};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use xferbench_params::{ParamError, ParamMap, PointParams, Value};
use xferbench_probes::clock::Stamp;
use xferbench_probes::cpu::{CpuSnapshot, ProcessCpu};
use xferbench_transports::ParamDef;
use xferbench_transports::kv::wire::{Key, Reply, RequestPayload, ResponseData};
use xferbench_transports::kv::{Client, ClientOptions, KvError, PrivateKey};

/// `outer`: the timed client's outer iterations (0: until stopped).
pub const OUTER: ParamDef = ParamDef::integer(
    "outer",
    0,
    i64::MAX,
    1000,
    "a kv client's outer iterations (0: until stopped)",
);
/// `inner`: keys per outer iteration, the requests a kv client has in flight.
pub const INNER: ParamDef = ParamDef::integer(
    "inner",
    1,
    u32::MAX as i64,
    100,
    "keys per outer iteration: the requests a kv client has in flight",
);
/// `server`: the kv server a client joined, by its main object's name.
pub const SERVER_NAME: ParamDef = ParamDef::text(
    "server",
    "a kv server's name",
    "kv",
    "the kv server the client joined",
);
/// `seed`: the key prefix and random stream of a kv client, or `random`.
pub const SEED: ParamDef = ParamDef::text(
    "seed",
    "a whole number from 0 to 4294967295, or `random`",
    RANDOM,
    "the client's key prefix and random stream",
);
/// [`SEED`] when the client drew its own.
const RANDOM: &str = "random";

/// The parameters of an `xferbench kv client` point: the server it joined and its
/// request mix, under `workload=kv-client`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvClientParams {
    /// The server's name.
    pub server: String,
    /// Outer iterations (0: until stopped).
    pub outer: u64,
    /// Keys per iteration.
    pub inner: u32,
    /// Key prefix and random stream; random when absent.
    pub seed: Option<u32>,
}

impl KvClientParams {
    /// The parameters of `spec` against the server named `server`.
    pub fn of(spec: &KvClientSpec, server: &str) -> KvClientParams {
        KvClientParams {
            server: server.to_string(),
            outer: spec.outer,
            inner: spec.inner,
            seed: spec.seed,
        }
    }
}

impl PointParams for KvClientParams {
    fn definitions() -> Vec<ParamDef> {
        vec![WORKLOAD, SERVER_NAME, OUTER, INNER, SEED]
    }

    fn write(&self, map: &mut ParamMap) {
        map.put_text(&WORKLOAD, RecordedWorkload::KvClient.name());
        map.put_text(&SERVER_NAME, &self.server);
        map.put(
            &OUTER,
            &Value::Integer(i64::try_from(self.outer).unwrap_or(i64::MAX)),
        );
        map.put(&INNER, &Value::Integer(i64::from(self.inner)));
        match self.seed {
            Some(s) => map.put_text(&SEED, &s.to_string()),
            None => map.put_text(&SEED, RANDOM),
        }
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        let seed = map.text(&SEED).unwrap_or(RANDOM);
        Ok(KvClientParams {
            server: map.text(&SERVER_NAME).unwrap_or_default().to_string(),
            outer: u64::try_from(map.integer(&OUTER)?).unwrap_or_default(),
            inner: u32::try_from(map.integer(&INNER)?).unwrap_or(u32::MAX),
            seed: match seed {
                RANDOM => None,
                s => Some(s.parse().map_err(|_| ParamError::Invalid {
                    name: SEED.name().to_string(),
                    value: s.to_string(),
                    accepts: SEED.accepts(),
                })?),
            },
        })
    }
}

/// What a client talks to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Backend {
    /// A kv server's main object.
    Shm(String),
    /// A Redis server's Unix socket path.
    Redis(String),
}

/// One client process's work ([`xferbench_probes::process::Role::KvClient`] takes it as JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvClientSpec {
    /// The server.
    pub backend: Backend,
    /// Outer iterations; 0 runs until stopped.
    pub outer: u64,
    /// Keys per iteration (requests in flight).
    pub inner: u32,
    /// Key prefix and random stream; random when absent.
    pub seed: Option<u32>,
    /// A wait with no progress for this long fails the client, milliseconds.
    pub hang_timeout_ms: u64,
    /// With `--pin`: the CPU the client's process (or thread) runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<usize>,
    /// A time limit, milliseconds: once the client has run this long it stops at the
    /// next safe point, as a stop does, and its run says so
    /// ([`KvClientRun::timed_out`]). None: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_ms: Option<u64>,
    /// The key of a private kv server (a study's own): None joins public servers
    /// only ([`xferbench_transports::kv::KvError::Private`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<PrivateKey>,
}

/// What a client did: what [`run_client`] returns, and what a client process
/// ([`xferbench_probes::process::Role::KvClient`]) prints as one JSON line for the kv rig that
/// started it. It is no user output: `xferbench kv client` writes the result
/// document, its run made by `rig::kv::client::record`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KvClientRun {
    /// Replies received.
    pub requests: u64,
    /// Replies that failed their checks (see the module doc).
    pub mismatches: u64,
    /// The first mismatch, described.
    pub first_mismatch: Option<String>,
    /// First request sent.
    pub start: Stamp,
    /// Last reply received.
    pub end: Stamp,
    /// Per-request latency as `(value_ns, count)` buckets.
    pub latency_buckets: Vec<(u64, u64)>,
    /// This process's CPU over the run.
    pub cpu: Option<ProcessCpu>,
    /// Stopped before the planned iterations.
    pub interrupted: bool,
    /// Stopped by its time limit ([`KvClientSpec::limit_ms`]) before the planned
    /// iterations (then `interrupted` too).
    #[serde(default)]
    pub timed_out: bool,
    /// What a client with a time limit could not do within its hang timeout after
    /// its requests (`leave the server after its last request`): a server so starved
    /// that even leaving makes no progress. Then `timed_out` too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stuck: Option<String>,
}

impl KvClientRun {
    fn empty() -> KvClientRun {
        KvClientRun {
            requests: 0,
            mismatches: 0,
            first_mismatch: None,
            start: Stamp::now(),
            end: Stamp::now(),
            latency_buckets: Vec::new(),
            cpu: None,
            interrupted: false,
            timed_out: false,
            stuck: None,
        }
    }
}

/// Why the workload could not run.
#[derive(Debug, thiserror::Error)]
pub enum KvRunError {
    /// The kv server failed or refused.
    #[error(transparent)]
    Kv(#[from] KvError),
    /// Redis failed.
    #[error("redis: {0}")]
    Redis(String),
    /// A parameter out of range.
    #[error("{0}")]
    Spec(String),
}

/// A small, fast random stream (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// Seeded from the clock and the pid.
    pub fn from_entropy() -> Rng {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Rng(t ^ (u64::from(std::process::id()) << 32))
    }

    /// The next value.
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) as u32
    }
}

/// Requests of one phase: the keys, the expected value of each, the duplicates.
struct Batch {
    keys: Vec<Key>,
    expect: Vec<u32>,
    duplicates: u64,
}

impl Batch {
    fn new(rng: &mut Rng, seed: u32, inner: u32) -> Batch {
        let mut b = Batch {
            keys: vec![Key::default(); inner as usize],
            expect: vec![0; inner as usize],
            duplicates: 0,
        };
        b.refill(rng, seed);
        b
    }

    /// New keys for the next iteration, in place (no allocation).
    fn refill(&mut self, rng: &mut Rng, seed: u32) {
        use std::io::Write as _;
        for k in &mut self.keys {
            let mut text = [0u8; 32];
            let mut w = &mut text[..];
            // "ht" + two u32 in decimal: at most 22 bytes, so the write fits.
            let _ = write!(w, "ht{seed}{}", rng.next_u32());
            let len = 32 - w.len();
            *k = Key::new(&text[..len]).unwrap_or_default();
        }
        let keys = &self.keys;
        for (i, e) in self.expect.iter_mut().enumerate() {
            *e = keys.iter().rposition(|k| *k == keys[i]).unwrap_or(i) as u32;
        }
        self.duplicates = (0..keys.len())
            .filter(|&i| self.expect[i] != i as u32)
            .count() as u64;
    }
}

/// Counts replies and mismatches and records latency.
struct Tally {
    run: KvClientRun,
    hist: hdrhistogram::Histogram<u64>,
}

impl Tally {
    fn mismatch(&mut self, what: impl FnOnce() -> String) {
        self.run.mismatches += 1;
        if self.run.first_mismatch.is_none() {
            self.run.first_mismatch = Some(what());
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Insert,
    Read,
    Delete,
}

/// Raises the client's own stop flag when the caller's `stop` rises or the time
/// limit has passed, checking every [`LIMIT_SLICE`] until the run ends.
struct Watchdog {
    done: Arc<AtomicBool>,
    timed_out: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

/// How often the [`Watchdog`] looks at the caller's flag and the clock.
const LIMIT_SLICE: Duration = Duration::from_millis(5);

impl Watchdog {
    fn start(limit: Duration, stop: &Arc<AtomicBool>, own: &Arc<AtomicBool>) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let timed_out = Arc::new(AtomicBool::new(false));
        let (d, t, stop, own) = (
            Arc::clone(&done),
            Arc::clone(&timed_out),
            Arc::clone(stop),
            Arc::clone(own),
        );
        let deadline = Instant::now() + limit;
        let thread = std::thread::spawn(move || {
            while !d.load(Ordering::Relaxed) {
                if stop.load(Ordering::Relaxed) {
                    own.store(true, Ordering::Relaxed);
                }
                let now = Instant::now();
                if now >= deadline {
                    t.store(true, Ordering::Relaxed);
                    own.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::park_timeout((deadline - now).min(LIMIT_SLICE));
            }
        });
        Watchdog {
            done,
            timed_out,
            thread,
        }
    }

    /// Ends the watch: whether the limit had passed.
    fn finish(self) -> bool {
        self.done.store(true, Ordering::Relaxed);
        self.thread.thread().unpark();
        let _ = self.thread.join();
        self.timed_out.load(Ordering::Relaxed)
    }
}

/// Runs the workload; `stop` ends a visitor (or a timed client) at a safe point, and
/// so does the spec's time limit. A stop while connecting is a run with no request.
pub fn run_client(spec: &KvClientSpec, stop: &Arc<AtomicBool>) -> Result<KvClientRun, KvRunError> {
    INNER
        .check(&Value::Integer(i64::from(spec.inner)))
        .map_err(|e| KvRunError::Spec(e.to_string()))?;
    let (stop, watchdog) = match spec.limit_ms {
        Some(ms) => {
            let own = Arc::new(AtomicBool::new(stop.load(Ordering::Relaxed)));
            let w = Watchdog::start(Duration::from_millis(ms), stop, &own);
            (own, Some(w))
        }
        None => (Arc::clone(stop), None),
    };
    let stop = &stop;
    let run = run_client_until(spec, stop);
    let timed_out = watchdog.is_some_and(Watchdog::finish);
    run.map(|mut r| {
        r.timed_out = (timed_out && r.interrupted) || r.stuck.is_some();
        r
    })
}

/// What a client could not do when leaving: `leave` made no progress for the hang
/// timeout (the protocol's own wait, not the server's death).
pub const STUCK_LEAVING: &str = "leave the server after its last request";

fn run_client_until(
    spec: &KvClientSpec,
    stop: &Arc<AtomicBool>,
) -> Result<KvClientRun, KvRunError> {
    let cpu0 = CpuSnapshot::now();
    let mut rng = match spec.seed {
        Some(s) => Rng::new(u64::from(s) ^ 0x5eed),
        None => Rng::from_entropy(),
    };
    let seed = spec.seed.unwrap_or_else(|| rng.next_u32());
    let mut tally = Tally {
        run: KvClientRun::empty(),
        hist: crate::result::new_histogram(),
    };
    let hang = Duration::from_millis(spec.hang_timeout_ms.max(1));
    let result = match &spec.backend {
        Backend::Shm(name) => {
            let client_id = Rng::from_entropy().next_u32() ^ rng.next_u32();
            match Client::connect(
                name,
                ClientOptions {
                    client_id,
                    stop: Arc::clone(stop),
                    hang_timeout: hang,
                    key: spec.key,
                },
            ) {
                Ok(mut c) => {
                    tally.run.start = Stamp::now();
                    let r = shm_loop(&mut c, client_id, spec, seed, &mut rng, &mut tally, stop);
                    match c.leave() {
                        // A client with a limit (the timed client) that cannot leave a
                        // starved server has done its work: the run is a collapse,
                        // not a failure ([`KvClientRun::stuck`]).
                        Err(KvError::Hung { .. }) if spec.limit_ms.is_some() => {
                            tally.run.stuck = Some(STUCK_LEAVING.into());
                            r
                        }
                        left => r.and(left.map_err(KvRunError::from)),
                    }
                }
                Err(e) => Err(e.into()),
            }
        }
        Backend::Redis(path) => {
            tally.run.start = Stamp::now();
            redis_loop(path, spec, seed, &mut rng, &mut tally, stop, hang)
        }
    };
    match result {
        Ok(()) => {}
        Err(KvRunError::Kv(KvError::Interrupted)) => tally.run.interrupted = true,
        Err(e) => return Err(e),
    }
    if stop.load(Ordering::Relaxed) {
        tally.run.interrupted = true;
    }
    tally.run.latency_buckets = tally
        .hist
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    tally.run.cpu = Some(cpu0.until(&CpuSnapshot::now(), "client", std::process::id()));
    Ok(tally.run)
}

fn check(
    tally: &mut Tally,
    phase: Phase,
    batch: &Batch,
    rid: usize,
    reply: Result<Reply<'_>, String>,
    not_found: &mut u64,
) {
    let ok = match (phase, &reply) {
        (Phase::Insert, Ok(Reply::Inserted)) => true,
        (Phase::Read, Ok(Reply::Bucket(entries))) => entries
            .iter()
            .any(|e| e.key == batch.keys[rid] && e.value == batch.expect[rid]),
        (Phase::Delete, Ok(Reply::Deleted)) => true,
        (Phase::Delete, Ok(Reply::NotFound)) => {
            *not_found += 1;
            *not_found <= batch.duplicates
        }
        _ => false,
    };
    if !ok {
        tally.mismatch(|| {
            format!(
                "{phase:?} of {:?} (request {rid}): got {reply:?}",
                batch.keys[rid]
            )
        });
    }
}

fn shm_loop(
    c: &mut Client,
    client_id: u32,
    spec: &KvClientSpec,
    seed: u32,
    rng: &mut Rng,
    tally: &mut Tally,
    stop: &AtomicBool,
) -> Result<(), KvRunError> {
    let inner = spec.inner as usize;
    let mut sent = vec![Instant::now(); inner];
    let mut answered = vec![false; inner];
    let mut out = Box::<ResponseData>::default();
    let mut iteration = 0u64;
    let mut batch = Batch::new(rng, seed, spec.inner);
    while spec.outer == 0 || iteration < spec.outer {
        if stop.load(Ordering::Relaxed) {
            return Err(KvError::Interrupted.into());
        }
        if iteration > 0 {
            batch.refill(rng, seed);
        }
        for phase in [Phase::Insert, Phase::Read, Phase::Delete] {
            // A stop between phases leaves at once: a starved server may take seconds
            // per phase (its replies are awaited in slices that see the stop too).
            if phase != Phase::Insert && stop.load(Ordering::Relaxed) {
                return Err(KvError::Interrupted.into());
            }
            for (i, k) in batch.keys.iter().enumerate() {
                let p = match phase {
                    Phase::Insert => RequestPayload::insert(*k, i as u32),
                    Phase::Read => RequestPayload::read_bucket(*k),
                    Phase::Delete => RequestPayload::delete(*k),
                };
                sent[i] = Instant::now();
                c.send(i as u32, &p)?;
            }
            answered.fill(false);
            let mut not_found = 0;
            for _ in 0..inner {
                c.recv(&mut out)?;
                let now = Instant::now();
                tally.run.requests += 1;
                let rid = out.request_id as usize;
                if out.client_id != client_id || rid >= inner || answered[rid] {
                    let (cid, r) = (out.client_id, out.request_id);
                    tally.mismatch(|| format!("{phase:?}: reply for client {cid} request {r}, expected client {client_id}, an unanswered request below {inner}"));
                    continue;
                }
                answered[rid] = true;
                let _ = tally
                    .hist
                    .record(now.duration_since(sent[rid]).as_nanos().max(1) as u64);
                let reply = out.payload.reply().map_err(|e| e.to_string());
                check(tally, phase, &batch, rid, reply, &mut not_found);
            }
            tally.run.end = Stamp::now();
        }
        iteration += 1;
    }
    Ok(())
}

fn redis_loop(
    path: &str,
    spec: &KvClientSpec,
    seed: u32,
    rng: &mut Rng,
    tally: &mut Tally,
    stop: &AtomicBool,
    hang: Duration,
) -> Result<(), KvRunError> {
    // A stop signal interrupts a blocking read: that is a stop, not a failure. A
    // socket with a read timeout is not restarted after a signal, so the read fails
    // (EINTR), possibly before the signal thread has raised the flag: after an I/O
    // error, wait for the flag briefly.
    let rerr = |e: redis::RedisError| {
        let io = e.is_io_error();
        let give_up = Instant::now() + Duration::from_millis(if io { 200 } else { 0 });
        loop {
            if stop.load(Ordering::Relaxed) {
                return KvRunError::Kv(KvError::Interrupted);
            }
            if Instant::now() >= give_up {
                return KvRunError::Redis(e.to_string());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    let client = redis::Client::open(format!("redis+unix://{path}")).map_err(rerr)?;
    let mut con = client.get_connection_with_timeout(hang).map_err(rerr)?;
    con.set_read_timeout(Some(hang)).map_err(rerr)?;
    let inner = spec.inner as usize;
    let mut iteration = 0u64;
    while spec.outer == 0 || iteration < spec.outer {
        if stop.load(Ordering::Relaxed) {
            return Err(KvError::Interrupted.into());
        }
        let batch = Batch::new(rng, seed, spec.inner);
        let names: Vec<Vec<u8>> = batch
            .keys
            .iter()
            .map(|k| k.as_bytes().unwrap_or_default().to_vec())
            .collect();
        for phase in [Phase::Insert, Phase::Read, Phase::Delete] {
            let mut pipe = redis::pipe();
            for (i, k) in names.iter().enumerate() {
                match phase {
                    Phase::Insert => pipe.cmd("SET").arg(k).arg(i as u32),
                    Phase::Read => pipe.cmd("GET").arg(k),
                    Phase::Delete => pipe.cmd("DEL").arg(k),
                };
            }
            let t0 = Instant::now();
            let replies: Vec<redis::Value> = pipe.query(&mut con).map_err(rerr)?;
            let ns = t0.elapsed().as_nanos().max(1) as u64;
            if replies.len() != inner {
                tally.mismatch(|| {
                    format!("{phase:?}: {} replies to {inner} commands", replies.len())
                });
            }
            let mut not_found = 0;
            for (rid, v) in replies.iter().enumerate().take(inner) {
                tally.run.requests += 1;
                let _ = tally.hist.record(ns);
                let reply: Result<Reply<'_>, String> = match (phase, v) {
                    (Phase::Insert, redis::Value::Okay) => Ok(Reply::Inserted),
                    (Phase::Read, redis::Value::BulkString(b)) => {
                        let want = batch.expect[rid].to_string();
                        if b.as_slice() == want.as_bytes() {
                            // Checked here: Redis has no buckets.
                            continue;
                        }
                        Err(format!(
                            "value {:?}, expected {want}",
                            String::from_utf8_lossy(b)
                        ))
                    }
                    (Phase::Delete, redis::Value::Int(1)) => Ok(Reply::Deleted),
                    (Phase::Delete, redis::Value::Int(0)) => Ok(Reply::NotFound),
                    (_, other) => Err(format!("{other:?}")),
                };
                check(tally, phase, &batch, rid, reply, &mut not_found);
            }
            tally.run.end = Stamp::now();
        }
        iteration += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use xferbench_params::PointParams;

    #[test]
    fn a_kv_client_point_writes_and_reads_itself_through_its_definitions() {
        for seed in [Some(42), None] {
            let p = KvClientParams {
                server: "kv-1234".into(),
                outer: 0,
                inner: 100,
                seed,
            };
            xferbench_params::point::round_trips(&p).unwrap();
        }
        let map = KvClientParams {
            server: "kv".into(),
            outer: 1000,
            inner: 10,
            seed: None,
        }
        .to_map();
        let keys: Vec<&str> = map.as_params().keys().map(String::as_str).collect();
        assert_eq!(keys, ["inner", "outer", "seed", "server", "workload"]);
        assert_eq!(map.as_params()["seed"], "random");
        assert_eq!(map.as_params()["workload"], "kv-client");
        for d in KvClientParams::definitions() {
            d.self_check().unwrap();
        }
    }
    use super::*;
    use xferbench_transports::kv::{Arch, Server, ServerConfig};

    #[test]
    fn every_architecture_runs_the_mix_with_no_mismatch() {
        for arch in Arch::ALL {
            let server = Server::start(ServerConfig::new(arch)).unwrap();
            let spec = KvClientSpec {
                backend: Backend::Shm(server.name().into()),
                outer: 5,
                inner: 10,
                seed: Some(7),
                hang_timeout_ms: 10_000,
                pin: None,
                limit_ms: None,
                key: None,
            };
            let r = run_client(&spec, &Arc::new(AtomicBool::new(false))).unwrap();
            assert_eq!(
                (r.requests, r.mismatches),
                (150, 0),
                "{arch:?} {:?}",
                r.first_mismatch
            );
            assert!(!r.interrupted && r.end > r.start);
            let n: u64 = r.latency_buckets.iter().map(|b| b.1).sum();
            assert_eq!(n, 150);
            server.stop().unwrap();
        }
    }

    #[test]
    fn duplicate_keys_allow_not_found_deletes_only_up_to_their_number() {
        let mut rng = Rng::new(1);
        let mut b = Batch::new(&mut rng, 1, 3);
        b.keys[2] = b.keys[0];
        b.expect = vec![2, 1, 2];
        b.duplicates = 1;
        let mut t = Tally {
            run: KvClientRun::empty(),
            hist: crate::result::new_histogram(),
        };
        let mut nf = 0;
        check(&mut t, Phase::Delete, &b, 0, Ok(Reply::Deleted), &mut nf);
        check(&mut t, Phase::Delete, &b, 2, Ok(Reply::NotFound), &mut nf);
        assert_eq!(t.run.mismatches, 0);
        check(&mut t, Phase::Delete, &b, 1, Ok(Reply::NotFound), &mut nf);
        assert_eq!(t.run.mismatches, 1);
        check(&mut t, Phase::Insert, &b, 1, Ok(Reply::Overflow), &mut nf);
        assert_eq!(t.run.mismatches, 2);
        assert!(t.run.first_mismatch.unwrap().contains("Delete"));
    }
}
