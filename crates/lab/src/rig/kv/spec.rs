//! What a kv point is: the server it stands up (a kv architecture or Redis), its
//! visitors and the timed client's hyperfine settings; and the one JSON argument of a
//! kv server process.

use serde::{Deserialize, Serialize};
use std::time::Duration;
use xferbench_transports::kv::{Arch, PrivateKey, ServerConfig};

/// What the server process ([`Role::KvServer`](xferbench_probes::process::Role::KvServer)) serves: its one argument, as JSON. It
/// prints `serving on NAME` on stdout once ready, serves until SIGINT or SIGTERM and
/// dies with its parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvServerSpec {
    /// The architecture.
    #[serde(with = "xferbench_params::by_name")]
    pub arch: Arch,
    /// Buckets.
    pub buckets: usize,
    /// Workers.
    pub workers: u32,
    /// Hang timeout, milliseconds.
    pub hang_timeout_ms: u64,
    /// With `--pin`: the CPU every thread of the server runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<usize>,
    /// A private server's key: only the rig's own clients join it
    /// ([`ServerConfig::key`]). None: a public server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<PrivateKey>,
}

impl KvServerSpec {
    /// The server configuration.
    pub fn config(&self) -> Result<ServerConfig, String> {
        Ok(ServerConfig {
            arch: self.arch,
            buckets: self.buckets,
            workers: self.workers,
            hang_timeout: Duration::from_millis(self.hang_timeout_ms.max(1)),
            key: self.key,
        })
    }
}

/// The kind of server a kv point measures: one of the kv architectures, or Redis. A
/// point records it as `arch` ([`SERVER`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerKind {
    /// [`Arch::Preopt`].
    Preopt,
    /// [`Arch::Ring`].
    Ring,
    /// [`Arch::Sharded`].
    Sharded,
    /// `redis-server`.
    Redis,
}

xferbench_params::choices!(ServerKind {
    Preopt => "preopt": "the original: one-slot request channel, broadcast responses, semaphores",
    Ring => "ring": "the original author's MPMC request ring and broadcast response ring",
    Sharded => "sharded": "per-client SPSC rings served by the least-loaded worker",
    Redis => "redis": "redis-server on a Unix socket, the reference beside the kv servers",
});

/// `arch` of a kv point: the server it measures. The kv server's own `arch`
/// ([`xferbench_transports::kv::ARCH`]) and Redis, so that every value a result
/// records is one this definition reads.
pub const SERVER: xferbench_transports::ParamDef = xferbench_transports::ParamDef::choice(
    "arch",
    <ServerKind as xferbench_params::Choices>::CHOICES,
    "sharded",
    "the server a kv point measures: a kv architecture, or redis",
);

/// `workers`: the server's worker threads (Redis: 1).
pub const WORKERS: xferbench_transports::ParamDef = xferbench_transports::ParamDef::integer(
    "workers",
    1,
    xferbench_transports::kv::header::MAX_WORKERS as i64,
    1,
    "the server's worker threads (redis: 1)",
);
/// `buckets`: the server's hash-table size (the original's `-s`).
pub const BUCKETS: xferbench_transports::ParamDef = xferbench_transports::ParamDef::integer(
    "buckets",
    1,
    i64::MAX,
    10_000,
    "buckets of the server's hash table",
);
/// `visitors`: background clients beside the timed client.
pub const VISITORS: xferbench_transports::ParamDef = xferbench_transports::ParamDef::integer(
    "visitors",
    0,
    i64::MAX,
    0,
    "background clients beside the timed client",
);

/// What the point's server is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Target {
    /// A kv server.
    Kv {
        /// Architecture.
        #[serde(with = "xferbench_params::by_name")]
        arch: Arch,
        /// Worker threads.
        workers: u32,
        /// Buckets.
        buckets: usize,
    },
    /// `redis-server` on a Unix socket.
    Redis,
}

impl Target {
    /// Its kind: the architecture, or Redis.
    pub fn kind(&self) -> ServerKind {
        match self {
            Target::Kv { arch, .. } => match arch {
                Arch::Preopt => ServerKind::Preopt,
                Arch::Ring => ServerKind::Ring,
                Arch::Sharded => ServerKind::Sharded,
            },
            Target::Redis => ServerKind::Redis,
        }
    }

    /// Its worker threads: the kv server's, or Redis's one.
    pub fn workers(&self) -> u32 {
        match self {
            Target::Kv { workers, .. } => *workers,
            Target::Redis => 1,
        }
    }

    /// Its name in tables and results: the architecture, or `redis`.
    pub fn name(&self) -> &'static str {
        xferbench_params::Choices::name(self.kind())
    }
}

/// One point: the server, the visitors and the timed client's hyperfine settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvPoint {
    /// The server.
    pub target: Target,
    /// Background clients (`client 0 INNER`).
    pub visitors: usize,
    /// The timed client's outer iterations.
    pub outer: u64,
    /// Keys per iteration.
    pub inner: u32,
    /// Discarded runs after the visitors are up.
    pub warmup: usize,
    /// At least this many timed runs…
    pub min_runs: usize,
    /// …and at least this long, milliseconds.
    pub min_time_ms: u64,
    /// At most this many timed runs.
    pub max_runs: usize,
    /// Time budget of a slow point, milliseconds: once it is spent, the session ends
    /// after [`MIN_SLOW_RUNS`] runs, and the warm-up after one run once a quarter of
    /// it is spent.
    pub budget_ms: u64,
    /// The timed client's `--seed`.
    pub seed: u32,
    /// The steady window, milliseconds (0: none): after the timed runs, one more
    /// client stands in for the timed client, running until stopped; once it and the
    /// visitors all run, the requests the server serves over this window give the
    /// aggregate steady request rate of all clients, free of process start-up.
    #[serde(default)]
    pub steady_ms: u64,
    /// Pin as `run --pin` pins drivers and peers: the timed client (and its
    /// stand-in) on the first allowed CPU, visitor i (from 1) on the 2i-th, wrapping
    /// around, and the server on the second ([`KvPoint::cpus`]). Servers and clients
    /// that are threads of this process (tests, without a launcher) are not pinned.
    #[serde(default)]
    pub pin: bool,
    /// The longest one timed run may last, milliseconds; 0 (the default): the
    /// budget, at least [`HANG`] ([`KvPoint::run_limit`]).
    #[serde(default)]
    pub run_limit_ms: u64,
}

/// Where the participants of a pinned point run ([`KvPoint::pin`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvCpus {
    /// The server's CPU.
    pub server: usize,
    /// The timed client's (and its stand-in's).
    pub timed: usize,
}

impl KvPoint {
    /// With [`KvPoint::pin`], the CPUs of the server and the timed client among
    /// `cpus` (the allowed ones).
    pub fn cpus(&self, cpus: &[usize]) -> Option<KvCpus> {
        self.pin.then(|| KvCpus {
            server: xferbench_probes::affinity::pin_plan(0, cpus).1,
            timed: xferbench_probes::affinity::pin_plan(0, cpus).0,
        })
    }

    /// The longest one timed run may last: a timed client still running then stops
    /// where it is, and its point is recorded as collapsed with what it completed
    /// ([`crate::result::RunRecord::collapsed`]). [`KvPoint::run_limit_ms`], else
    /// the budget, at least [`HANG`].
    pub fn run_limit(&self) -> Duration {
        match self.run_limit_ms {
            0 => Duration::from_millis(self.budget_ms).max(HANG),
            ms => Duration::from_millis(ms),
        }
    }

    /// With [`KvPoint::pin`], the CPU of visitor `i` (0-based): the 2(i+1)-th allowed.
    pub fn visitor_cpu(&self, i: usize, cpus: &[usize]) -> Option<usize> {
        self.pin
            .then(|| xferbench_probes::affinity::pin_plan(i + 1, cpus).0)
    }
}

/// Timed runs of a point that exceeded its budget.
pub const MIN_SLOW_RUNS: usize = 3;

/// Hang timeout of servers and clients.
pub const HANG: Duration = Duration::from_secs(20);

#[cfg(test)]
mod server_tests {
    use super::*;

    #[test]
    fn a_points_server_is_named_as_its_architecture_or_redis_and_its_definition_reads_it() {
        for arch in Arch::ALL {
            let t = Target::Kv {
                arch,
                workers: 1,
                buckets: 1,
            };
            assert_eq!(t.name(), arch.name());
            assert!(SERVER.parse(t.name()).is_ok());
        }
        assert!(SERVER.parse(Target::Redis.name()).is_ok());
        for d in [SERVER, WORKERS, VISITORS, BUCKETS] {
            d.self_check().unwrap();
        }
    }
}
