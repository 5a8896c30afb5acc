//! The command line, as clap sees it. Nothing here is used past
//! [`crate::config`], which turns it into validated lab types.
//!
//! The doc comments of the arguments are their `--help` text, written for the
//! terminal (`[default: …]`, `memfd:<pid>:…`), not for rustdoc.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use xferbench_lab::workload::WorkloadKind;
use xferbench_lab::workload::warp::ConnectionMode;
use xferbench_params::{ChoiceError, Choices};
use xferbench_transports::daq::convert::Kernels;
use xferbench_transports::kv::Arch;
use xferbench_transports::rpmsg::{Buffers, Notify};
use xferbench_transports::warp::CrcKind;
use xferbench_transports::warp::server::IoModel;

/// The value parser of a [`Choices`] type: its names, each with its help, from the
/// type's one definition (no mirror enum of the command line's own).
pub fn choice<T: Choices + Clone>() -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(
        T::ALL
            .iter()
            .map(|v| clap::builder::PossibleValue::new(v.name()).help(v.help())),
    )
    .try_map(|s: String| T::from_name(&s).ok_or_else(|| ChoiceError::new::<T>(&s)))
}

/// The hidden subcommands that select the lab's process roles (see
/// [`crate::launcher::launcher`]).
pub mod role {
    /// [`xferbench_lab::process::Role::Peer`].
    pub const PEER: &str = "__peer";
    /// [`xferbench_lab::process::Role::RpmsgRemote`].
    pub const RPMSG_REMOTE: &str = "__rpmsg-remote";
    /// [`xferbench_lab::process::Role::MemoryMock`].
    pub const MEMORY_MOCK: &str = "__memory-mock";
    /// [`xferbench_lab::process::Role::WarpClient`].
    pub const WARP_CLIENT: &str = "__warp-client";
    /// [`xferbench_lab::process::Role::KvServer`].
    pub const KV_SERVER: &str = "__kv-server";
    /// [`xferbench_lab::process::Role::KvClient`].
    pub const KV_CLIENT: &str = "__kv-client";
    /// [`xferbench_lab::process::Role::PerfStatBench`].
    pub const PERFSTAT_BENCH: &str = "__perfstat-bench";
    /// [`xferbench_lab::process::Role::PluginProbe`].
    pub const PLUGIN_PROBE: &str = "__plugin-probe";
    /// [`xferbench_lab::process::Role::PluginDriver`].
    pub const PLUGIN_DRIVER: &str = "__plugin-driver";
    /// [`xferbench_lab::process::Role::PluginCleanup`].
    pub const PLUGIN_CLEANUP: &str = "__plugin-cleanup";
    /// [`xferbench_lab::process::Role::Check`].
    pub const CHECK: &str = "__check";
}

/// A duration, read the same way by every flag that takes one, through the one
/// definition of durations ([`xferbench_params::duration`]): `250ms`, `1s`, `2m`,
/// `1h` or bare seconds (`0.25`). Returns seconds; a bare negative or non-finite
/// number is passed on for the flag's own range check to name.
pub fn seconds(s: &str) -> Result<f64, String> {
    if let Ok(x) = s.trim().parse::<f64>()
        && !(x.is_finite() && x >= 0.0)
    {
        return Ok(x);
    }
    xferbench_params::duration::parse(s)
        .map(|d| d.as_secs_f64())
        .ok_or_else(|| "expected a duration such as 250ms, 1s or 2m, or a number of seconds".into())
}

/// A performance lab for data-transport systems: sweeps of transports, message
/// sizes and channel counts, with honest throughput, latency and CPU figures.
#[derive(Debug, Parser)]
#[command(name = "xferbench", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,

    /// Log what the lab does to stderr: -v info (peers, child processes, visits),
    /// -vv debug. Off by default; XFERBENCH_LOG or RUST_LOG take a filter instead.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

impl Cli {
    /// The whole command line, with every flag that takes a value reading a value that
    /// looks like a negative number as its value, so `--size -5` is refused by the
    /// flag's own check, which names the flag, rather than as an unknown argument.
    pub fn command_line() -> clap::Command {
        fn negatives(cmd: clap::Command) -> clap::Command {
            cmd.mut_args(|a| {
                if a.get_action().takes_values() && !a.is_positional() {
                    a.allow_negative_numbers(true)
                } else {
                    a
                }
            })
            .mut_subcommands(negatives)
        }
        negatives(<Cli as clap::CommandFactory>::command())
    }

    /// Parses the process's arguments; exits with clap's message and status on bad
    /// usage.
    pub fn parse_args() -> Cli {
        use clap::FromArgMatches;
        let mut matches = Cli::command_line()
            .try_get_matches()
            .unwrap_or_else(|e| exit_with(e));
        Cli::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| exit_with(e))
    }
}

/// Exits as clap does, except that `--help` and `--version` into a full or failing
/// stdout say so and exit 1 (clap drops that error), and into a closed pipe exit 0.
fn exit_with(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit()
    }
    use std::io::Write;
    let printed = e
        .print()
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot write to standard output: {e}")))
        .and_then(|()| crate::out::flush());
    match printed {
        Ok(()) => std::process::exit(0),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            std::process::exit(crate::exit::EXIT_FAILURE.into())
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List transports, workloads and their parameters with defaults.
    List(ListArgs),
    /// Run a workload over a sweep of transports, sizes and channel counts.
    Run(Box<RunArgs>),
    /// Profile a command or a running process with perf: flame graph, speedscope
    /// file and top-functions table.
    Profile(ProfileArgs),
    /// Compare two shell commands, interleaved: time with significance, CPU,
    /// counters, and a diagnosis (the perf-stat method).
    Ab(AbArgs),
    /// Compare two result files point by point; non-zero exit on a regression.
    Compare(CompareArgs),
    /// The results history: every run and study recorded, listed, shown, followed
    /// across commits, and named as baselines.
    #[command(subcommand)]
    History(HistoryCommand),
    /// Measure this machine's ceilings: memcpy bandwidth, cache-line and futex round
    /// trips between two CPUs, a system call, a pipe round trip.
    Limits(LimitsArgs),
    /// The agent for runs across hosts (like `iperf3 -s`): serves peers and memory
    /// mocks to `run --remote` and `study warp-pipe --remote`.
    #[command(after_help = "\
Without --token-file the agent accepts loopback clients only. See docs/remote.md.

Examples:
  xferbench serve
  xferbench serve --listen 192.0.2.2:5301 --token-file ~/.xferbench-token
  xferbench serve --listen 0.0.0.0:5301 --token-file token --data-ports 5310-5319")]
    Serve(ServeArgs),
    /// Internal: serve one channel as a peer process (started by `run --peer process`).
    #[command(name = role::PEER, hide = true)]
    Peer,
    /// Run a built-in study: results, tables, plots and a summary in one folder.
    Study(StudyArgs),
    /// Warp Pipe (PCIe transactions over TCP): the memory mock and the client.
    #[command(after_help = "\
Examples:
  xferbench warp serve --port 2115
  xferbench warp client --connect 127.0.0.1:2115 --threads 4")]
    #[command(subcommand)]
    Warp(WarpCommand),
    /// RPMsg link throughput, like `rpmsg-xmit-p`: a thread per channel loops
    /// write(packet) → read(echo) until --transfer bytes are sent.
    Rpmsg(RpmsgArgs),
    /// Digitizer readout and conversion, like `sis8300drv_threads`: a thread per
    /// board reads its samples and runs the chosen function, on a model of the boards.
    Daq(Box<DaqArgs>),
    /// Internal: the remote side of an RPMsg link (started by `study rpmsg`).
    #[command(name = role::RPMSG_REMOTE, hide = true)]
    RpmsgRemote {
        /// The link's shared-memory region name.
        name: String,
    },
    /// Internal: the Warp Pipe memory mock of the study; prints `listening on ADDR`.
    #[command(name = role::MEMORY_MOCK, hide = true)]
    MemoryMock {
        /// The lab's `MemoryMockSpec` as JSON.
        spec_json: String,
    },
    /// Internal: one Warp Pipe client process (`warp client --instances`, the study);
    /// prints its result as JSON.
    #[command(name = role::WARP_CLIENT, hide = true)]
    WarpClient {
        /// The lab's `ClientProcessSpec` as JSON.
        spec_json: String,
    },
    /// The shared-memory hash-table server and its client (preopt, ring, sharded).
    #[command(after_help = "\
Examples:
  xferbench kv serve --arch sharded -s 10000 -n 4
  xferbench kv client 100 10 --seed 42
  xferbench kv client 0 10          # a visitor: runs until Ctrl-C")]
    #[command(subcommand)]
    Kv(KvCommand),
    /// Internal: a hash-table server of the study; prints `serving on ADDRESS`.
    #[command(name = role::KV_SERVER, hide = true)]
    KvServer {
        /// The lab's `KvServerSpec` as JSON.
        spec_json: String,
    },
    /// Internal: one hash-table client process of the study; prints its result as JSON.
    #[command(name = role::KV_CLIENT, hide = true)]
    KvClient {
        /// The lab's `KvClientSpec` as JSON.
        spec_json: String,
    },
    /// Internal: one benchmark process of the perf-stat study (the seed's harness);
    /// prints its timings as JSON.
    #[command(name = role::PERFSTAT_BENCH, hide = true)]
    PerfStatBench {
        /// The lab's `BenchSpec` as JSON.
        spec_json: String,
    },
    /// Run the conformance checks on transports, built-in or plugin: ordering, sizes,
    /// back-pressure, channels, a dying peer, end of stream, integrity, zero-copy.
    Check(crate::check::CheckArgs),
    /// Internal: describe a plugin file as JSON (started by `run`, `check`, `list`).
    #[command(name = role::PLUGIN_PROBE, hide = true)]
    PluginProbe {
        /// The plugin file.
        path: String,
    },
    /// Internal: the measuring process of a plugin transport's point.
    #[command(name = role::PLUGIN_DRIVER, hide = true)]
    PluginDriver {
        /// The lab's `DriverSpec` as JSON.
        spec_json: String,
    },
    /// Internal: run a plugin's clean-up hook on a scope.
    #[command(name = role::PLUGIN_CLEANUP, hide = true)]
    PluginCleanup {
        /// The plugin transport.
        transport: String,
        /// The clean-up scope.
        scope: String,
    },
    /// Internal: run one conformance check (started by `check`).
    #[command(name = role::CHECK, hide = true)]
    CheckOne {
        /// The lab's `CheckSpec` as JSON.
        spec_json: String,
    },
    /// Print a shell completion script for bash, zsh, fish, elvish or powershell.
    Completions(CompletionsArgs),
    /// Write the man pages (xferbench.1 and one per subcommand).
    Man(ManArgs),
}

/// `xferbench serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The control address to listen on (any other than loopback needs --token-file).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:5301")]
    pub listen: String,
    /// The file holding the token shared with the measuring side (mode 600; at least
    /// 16 bytes). Every client must prove it knows it.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Ports the memory mock listens on (`LO-HI`, inclusive), so that a firewall
    /// or a relay can let them through [default: any free port].
    #[arg(long, value_name = "LO-HI")]
    pub data_ports: Option<String>,
}

/// Runs across hosts: where the agent is.
#[derive(Debug, Clone, Args)]
pub struct RemoteArgs {
    /// Run the serving side on another host: the address of its `xferbench serve`
    /// agent (`HOST` or `HOST:PORT`, default port 5301). TCP only; see docs/remote.md.
    #[arg(long, value_name = "HOST:PORT")]
    pub remote: Option<String>,
    /// The file holding the token shared with the agent (mode 600).
    #[arg(long, value_name = "FILE", requires = "remote")]
    pub token_file: Option<PathBuf>,
    /// With --remote: dial the agent's data listeners (the memory mock) at this host
    /// instead of the agent's address, e.g. a relay.
    #[arg(long, value_name = "HOST", requires = "remote")]
    pub data_host: Option<String>,
}

/// `xferbench limits`.
#[derive(Debug, Args)]
#[command(after_help = "\
Every `run` and study measures the quick set at its start and end into its result, \
gives each point's primary figure as a fraction of its natural limit, and flags points \
during which the machine changed speed (docs/limits.md).

Examples:
  xferbench limits
  xferbench limits --quick --json")]
pub struct LimitsArgs {
    /// The quick set (5 short samples per probe, well under a second) that runs and
    /// studies record, instead of the full one (15 samples, a few seconds).
    #[arg(long)]
    pub quick: bool,
    /// Print the limits as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// The machine watch of a run or study: its limits and drift detection.
#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// Do not measure the machine's limits at the start and end, nor watch it for
    /// drift between points.
    #[arg(long)]
    pub no_limits: bool,
    /// Flag a point when a probe of the machine (cache-line or futex round trip, a
    /// 2 MiB memcpy) moved by more than this percentage during it.
    #[arg(long, value_name = "PCT", default_value_t = 25.0)]
    pub drift_threshold: f64,
}

/// `xferbench study`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench study rpmsg --quick
  xferbench study rpmsg --out rpmsg-study --runs 5
  xferbench study rpmsg --full
  xferbench study sis8300 --quick --profile --only group=test3
  xferbench study warp-pipe --only group=threads --only threads=16|64

--only KEY=VALUE[|VALUE] (repeatable: all must hold) runs only the points whose \
parameters match, exactly as the whole study runs them.

Exit status: 0 success, 1 a point failed, 2 bad usage, 3 data verification failed, \
128+N stopped by signal N: 130 SIGINT, 143 SIGTERM, 129 SIGHUP (the points finished so far are written).")]
pub struct StudyArgs {
    /// The study (`xferbench list` describes them).
    #[arg(value_parser = study_names())]
    pub name: String,
    /// A smaller version of the same study (under a minute).
    #[arg(long)]
    pub quick: bool,
    /// Every cell of the original's matrix, where the default plan leaves some out
    /// for time (rpmsg); prints an estimate of the time first.
    #[arg(long, conflicts_with = "quick")]
    pub full: bool,
    /// Output folder [default: `xferbench-<study>-<YYYYmmdd-HHMMSS>`].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Measured runs per point [default: the study's own, 3; 1 with --quick for some]
    #[arg(short, long, value_name = "N")]
    pub runs: Option<usize>,
    /// Discarded warm-up runs per visit of a point [default: the study's own]
    #[arg(short, long, value_name = "N")]
    pub warmup: Option<usize>,
    /// Run all runs of one point before the next, instead of the studies' default
    /// round-robin order across points
    #[arg(long)]
    pub no_interleave: bool,
    /// Profile one participant over the whole study with `perf record` (`--profile`
    /// or `--profile=DIR`) and write a flame graph, a speedscope file and a top-functions table to DIR
    /// [default DIR: `<out>/profile`].
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true)]
    pub profile: Option<Option<PathBuf>>,
    /// The participant to profile: `main` (this process: the host or client
    /// threads), `remote` (rpmsg), `memory-mock` (warp-pipe) or `server`
    /// (hashtable) [default: the study's own: `server` for hashtable, else `main`].
    #[arg(long, value_name = "NAME", requires = "profile")]
    pub profile_peer: Option<String>,
    /// Time without progress before a run is declared hung (250ms, 1s, 2m or bare
    /// seconds) [default: the study's own, 10s].
    #[arg(long, value_name = "DURATION", value_parser = seconds)]
    pub timeout: Option<f64>,
    /// Run only the study's points whose parameter KEY has VALUE, or one of the
    /// values `A|B` (repeatable: all must match), e.g. `--only group=threads --only
    /// threads=16`.
    #[arg(long, value_name = "KEY=VALUE")]
    pub only: Vec<String>,
    /// Print the study's result document (its `results.json`) as JSON on stdout too.
    #[arg(long)]
    pub json: bool,
    /// No line per point and no notes; only errors (the folder is still written).
    #[arg(short, long)]
    pub quiet: bool,
    /// Run on an unoptimised build (`cargo build` without `--release`), which a study
    /// otherwise refuses: its figures would measure unoptimised code. The result says
    /// so in every output.
    #[arg(long)]
    pub allow_debug: bool,
    /// Machine limits and drift.
    #[command(flatten)]
    pub watch: WatchArgs,
    /// The results history.
    #[command(flatten)]
    pub record: RecordArgs,
    /// Runs across hosts.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `xferbench warp ...`.
#[derive(Debug, Subcommand)]
pub enum WarpCommand {
    /// Serve the memory mock (warp-pipe's memory-mock, wire-compatible).
    Serve(WarpServeArgs),
    /// Enumerate the device, then run C channels (threads) × N iterations of read →
    /// write → read.
    Client(WarpClientArgs),
}

/// `xferbench kv ...`.
#[derive(Debug, Subcommand)]
pub enum KvCommand {
    /// Serve a hash table over shared memory until Ctrl-C (the original's `server`).
    #[command(after_help = "\
Examples:
  xferbench kv serve --arch preopt -s 10000 -n 1
  xferbench kv serve --arch sharded -n 4")]
    Serve(KvServeArgs),
    /// Run the original client's mix: OUTER × (INNER inserts, INNER bucket reads,
    /// INNER deletes), verifying every reply.
    #[command(after_help = "\
Examples:
  xferbench kv client 100 10 --seed 42
  xferbench kv client 0 10 --server memfd:4242:5:1035

Exit status: 0 success, 1 failure, 2 bad usage, 3 a reply failed verification.")]
    Client(KvClientArgs),
}

/// `xferbench kv serve`.
#[derive(Debug, Args)]
pub struct KvServeArgs {
    /// Server architecture.
    #[arg(long, value_parser = choice::<Arch>(), default_value_t = Arch::Sharded)]
    pub arch: Arch,
    /// Table size in buckets (the original's -s).
    #[arg(short, long, value_name = "BUCKETS", default_value_t = 10_000)]
    pub size: usize,
    /// Worker threads (the original's -n).
    #[arg(short = 'n', long, value_name = "WORKERS", default_value_t = 1)]
    pub workers: u32,
    /// A wait on a client with no progress for this long is reported as a hang
    /// (250ms, 1s, 2m or bare seconds).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = seconds)]
    pub timeout: f64,
}

/// `xferbench kv client`.
#[derive(Debug, Args)]
pub struct KvClientArgs {
    /// Outer iterations; 0 runs until Ctrl-C (a background "visitor").
    #[arg(value_name = "OUTER", default_value_t = 1000)]
    pub outer: u64,
    /// Keys per iteration: requests in flight.
    #[arg(value_name = "INNER", default_value_t = 100)]
    pub inner: u32,
    /// Key prefix and random stream (random when absent).
    #[arg(long, value_name = "N")]
    pub seed: Option<u32>,
    /// The server's shared-memory address (memfd:<pid>:<fd>:<inode>), as `kv serve` prints
    /// it (default: the one kv server of this user that is running).
    #[arg(long, value_name = "ADDRESS")]
    pub server: Option<String>,
    /// A wait with no progress for this long fails the client (250ms, 1s, 2m or bare
    /// seconds).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = seconds)]
    pub timeout: f64,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `xferbench warp serve`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench warp serve
  xferbench warp serve --port 0 --io threads --crc table")]
pub struct WarpServeArgs {
    /// Address to listen on (IP or IP:PORT); loopback by default.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub listen: String,
    /// TCP port, when --listen has none (0: any free port).
    #[arg(long, default_value_t = 2115)]
    pub port: u16,
    /// CRC implementation for LCRC/CRC16.
    #[arg(long, value_parser = choice::<CrcKind>(), default_value_t = CrcKind::Fast)]
    pub crc: CrcKind,
    /// BAR1 size in bytes (a power of two, 16 B .. 1 GiB).
    #[arg(long, value_name = "BYTES", default_value_t = 2048)]
    pub bar1: u32,
    /// Largest payload of one read completion (multiple of 64, 64..4096); longer
    /// reads are split.
    #[arg(long, value_name = "BYTES", default_value_t = 4096)]
    pub max_read_completion: usize,
    /// I/O model.
    #[arg(long, value_parser = choice::<IoModel>(), default_value_t = IoModel::Epoll)]
    pub io: IoModel,
}

/// `xferbench warp client`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench warp client --connect 127.0.0.1:2115 --threads 4 --iterations 1000
  xferbench warp client --instances 8 --reads-only --json")]
pub struct WarpClientArgs {
    /// The memory mock's address.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:2115")]
    pub connect: String,
    /// Concurrent channels: client threads (warp-pipe's --threads).
    #[arg(
        short,
        long,
        visible_alias = "threads",
        value_name = "N",
        default_value_t = 1
    )]
    pub channels: usize,
    /// Iterations per channel (warp-pipe's --iterations).
    #[arg(
        short = 'n',
        long,
        visible_alias = "iterations",
        value_name = "N",
        default_value_t = 100
    )]
    pub count: u64,
    /// Payload bytes per read/write (multiple of 4, 4..4096; 2048, 4KiB).
    #[arg(
        short,
        long,
        visible_alias = "payload",
        value_name = "BYTES",
        default_value = "2048"
    )]
    pub size: String,
    /// CRC implementation.
    #[arg(long, value_parser = choice::<CrcKind>(), default_value_t = CrcKind::Fast)]
    pub crc: CrcKind,
    /// Connection arrangement.
    #[arg(long, value_parser = choice::<ConnectionMode>(), default_value_t = ConnectionMode::PerThread)]
    pub connection: ConnectionMode,
    /// ACK each received TLP with the next request instead of at once.
    #[arg(long)]
    pub piggyback_acks: bool,
    /// Sleep between iterations in ms (warp-pipe's sample: 200).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub think: u64,
    /// Only read (one 2048-byte read per iteration with the default payload): the
    /// memory mock's read throughput.
    #[arg(long)]
    pub reads_only: bool,
    /// Run K single-threaded client processes at once (overrides --channels).
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub instances: usize,
    /// Connecting, every send and every wait for a completion fail after this long
    /// (250ms, 1s, 2m or bare seconds).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = seconds)]
    pub timeout: f64,
    /// Print the result as one JSON document on stdout: the client's result, or with
    /// --instances K > 1 an array of K results.
    #[arg(long)]
    pub json: bool,
}

/// `xferbench list`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench list
  xferbench list --json
  xferbench list -t plugin:./libxb_posix_mq.so")]
pub struct ListArgs {
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also list these plugin transports (plugin:PATH[:NAME], comma-separated) with
    /// their parameters.
    #[arg(short, long, value_name = "LIST")]
    pub transport: Option<String>,
}

/// `xferbench profile`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench profile -- xferbench run stream -t shm -s 64 --peer thread -q
  xferbench profile --pid 1234 -d 5 --out prof

Needs perf (`apt-get install linux-perf`); samples cpu-clock, so no hardware PMU is needed. \
Writes flamegraph.svg, profile.speedscope.json, top-functions.md/.csv and stacks.folded.")]
pub struct ProfileArgs {
    /// Attach to this running process instead of starting a command.
    #[arg(long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<u32>,

    /// How long to record a process given with --pid (250ms, 1s, 2m or bare seconds).
    #[arg(
        short,
        long,
        value_name = "DURATION",
        default_value = "10s",
        value_parser = seconds,
        requires = "pid"
    )]
    pub duration: f64,

    /// Output folder [default: `xferbench-profile-<time>`].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Print a JSON summary on stdout: outputs written, samples, top functions.
    #[arg(long)]
    pub json: bool,

    /// The command to run and profile, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `xferbench ab`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench ab --runs 10 'xferbench run stream -t shm -s 64 -n 200000 -r 1 -w 0 -q --peer thread' \\
                        'xferbench run stream -t pipe -s 64 -n 200000 -r 1 -w 0 -q --peer thread'

Without a hardware PMU, instructions come from one run of each command under callgrind.
Exit status: 0 no regression; 4 B is significantly slower than A by more than --threshold; \
1 a command failed; 2 bad usage; 130/143/129 stopped by SIGINT/SIGTERM/SIGHUP.")]
pub struct AbArgs {
    /// Measured runs of each command.
    #[arg(short, long, value_name = "N", default_value_t = 10)]
    pub runs: usize,

    /// Warm-up runs of each command, discarded.
    #[arg(short, long, value_name = "N", default_value_t = 1)]
    pub warmup: usize,

    /// Percent by which B may be slower than A before the exit status says so.
    #[arg(long, value_name = "P", default_value_t = 5.0)]
    pub threshold: f64,

    /// Skip the callgrind pass that counts instructions when there is no PMU.
    #[arg(long)]
    pub no_callgrind: bool,

    /// Callgrind passes of each command when there is no PMU (interleaved), so that
    /// the instruction counts' own run-to-run noise is measured; at least 2 for the
    /// diagnosis to tell a real instruction difference from noise.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub callgrind_runs: usize,

    /// Also count these events on A and B with `perf stat` (comma-separated; named
    /// model-specific events such as `dsb2mite_switches.penalty_cycles` are resolved
    /// through perf's event tables).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub events: Vec<String>,

    /// Count every `stall|penalty|miss` event of `perf list` on A and B and rank them
    /// by B/A (needs a hardware PMU; skipped with a reason without one).
    #[arg(long)]
    pub search_stalls: bool,

    /// Write the whole comparison as JSON.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Print the whole comparison as JSON on stdout instead of the tables.
    #[arg(long)]
    pub json: bool,

    /// No progress line and no tables; only errors and the exit status.
    #[arg(short, long)]
    pub quiet: bool,

    /// Machine limits and drift.
    #[command(flatten)]
    pub watch: WatchArgs,

    /// Command A, the baseline (run with `sh -c`).
    #[arg(value_name = "CMD_A")]
    pub command_a: String,

    /// Command B, the change.
    #[arg(value_name = "CMD_B")]
    pub command_b: String,
}

/// `xferbench compare`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench compare base.json new.json
  xferbench compare --threshold 2 xferbench-rpmsg-old/ xferbench-rpmsg-new/
  xferbench history baseline set main && xferbench compare --baseline main new.json
  xferbench compare --baseline main          # the newest recorded run against the baseline

Exit status: 0 no regression, 4 a significant regression beyond --threshold, 2 bad usage, \
files that cannot be read or compared, or an unknown baseline.")]
pub struct CompareArgs {
    /// The baseline: a result file (`run --export-json`) or a study folder (its
    /// `results.json`). With --baseline, the new result instead [default: the newest
    /// run in the history].
    #[arg(value_name = "BASE", required_unless_present = "baseline")]
    pub base: Option<PathBuf>,

    /// The new result file or study folder.
    #[arg(value_name = "NEW", required_unless_present = "baseline")]
    pub new: Option<PathBuf>,

    /// Compare against this baseline of the history (`history baseline set NAME`)
    /// instead of a BASE file.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,

    /// Percent by which a point's primary figure may get worse.
    #[arg(long, value_name = "P", default_value_t = 5.0)]
    pub threshold: f64,

    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,

    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

/// Which history file to use.
#[derive(Debug, Clone, Default, Args)]
pub struct HistoryFileArgs {
    /// The history file [default: $XFERBENCH_HISTORY, else
    /// ~/.local/share/xferbench/history.sqlite (the XDG data folder)].
    #[arg(long, value_name = "PATH")]
    pub history: Option<PathBuf>,
}

/// Recording a run or study in the history.
#[derive(Debug, Clone, Default, Args)]
pub struct RecordArgs {
    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
    /// Do not record this run in the history.
    #[arg(long, conflicts_with = "history")]
    pub no_history: bool,
}

/// `xferbench history ...`.
#[derive(Debug, Subcommand)]
#[command(after_help = "\
Examples:
  xferbench history list
  xferbench history show 12
  xferbench history trend --name stream -p transport=pipe -p size=64 --html trend.html
  xferbench history baseline set main
  xferbench compare --baseline main new.json

See docs/history.md.")]
pub enum HistoryCommand {
    /// List the recorded runs, newest first.
    List(HistoryListArgs),
    /// Show one recorded run: its context and every point's primary figure.
    Show(HistoryShowArgs),
    /// Follow one point's primary figure across the recorded runs (table, and a plot
    /// with --html), marking runs from other machines.
    Trend(HistoryTrendArgs),
    /// Name runs as baselines for `compare --baseline NAME`.
    #[command(subcommand)]
    Baseline(BaselineCommand),
}

/// `xferbench history list`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench history list
  xferbench history list --limit 100 --json")]
pub struct HistoryListArgs {
    /// At most this many runs.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
    /// Print the runs as JSON.
    #[arg(long)]
    pub json: bool,
    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

/// `xferbench history show`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench history show 12
  xferbench history show 12 --json")]
pub struct HistoryShowArgs {
    /// The run's ID (`history list`).
    #[arg(value_name = "ID")]
    pub id: i64,
    /// Print the run as JSON.
    #[arg(long)]
    pub json: bool,
    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

/// `xferbench history trend`.
#[derive(Debug, Args)]
#[command(after_help = "\
The filters must name exactly one point; when they name several, the error lists them.

Examples:
  xferbench history trend --name stream -p transport=pipe -p size=64
  xferbench history trend --point \"channels=1 size=64 transport=shm\" --figure messages_per_s
  xferbench history trend --name rpmsg -p channels=8 --html trend.html")]
pub struct HistoryTrendArgs {
    /// Only runs of this workload (`stream`, `pingpong`) or study (`rpmsg`, ...).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The point, by its parameters exactly as `history show` prints them.
    #[arg(long, value_name = "PARAMS")]
    pub point: Option<String>,
    /// Only points with this parameter value (repeatable).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Follow this figure instead of the point's primary one (a name of the result's
    /// `summary`, such as messages_per_s or latency_p99_ns).
    #[arg(long, value_name = "NAME")]
    pub figure: Option<String>,
    /// Only the newest N runs.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Write a self-contained HTML page with the plot and the table.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Print the trend as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

/// `xferbench history baseline ...`.
#[derive(Debug, Subcommand)]
#[command(after_help = "\
Examples:
  xferbench history baseline set main
  xferbench history baseline list
  xferbench compare --baseline main")]
pub enum BaselineCommand {
    /// Name a run (default: the newest) as a baseline; an existing name moves.
    Set(BaselineSetArgs),
    /// List the baselines.
    List(BaselineListArgs),
}

/// `xferbench history baseline set`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench history baseline set main          # the newest run
  xferbench history baseline set before-fix 12
  xferbench compare --baseline main new.json")]
pub struct BaselineSetArgs {
    /// The baseline's name (letters, digits, `-`, `_`, `.`).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The run's ID [default: the newest run].
    #[arg(value_name = "ID")]
    pub id: Option<i64>,
    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

/// `xferbench history baseline list`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench history baseline list
  xferbench history baseline list --json")]
pub struct BaselineListArgs {
    /// Print the baselines as JSON.
    #[arg(long)]
    pub json: bool,
    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

/// Where peers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PeerArg {
    /// A thread of the xferbench process per channel.
    Thread,
    /// A re-executed xferbench process per channel (nothing else to install).
    Process,
}

/// Where `--counters` come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CountersArg {
    /// perf_event_open: software counters, and hardware counters with a PMU.
    Perf,
    /// valgrind --tool=callgrind --cache-sim=yes on the peers: simulated, deterministic.
    Callgrind,
}

/// `xferbench run`.
#[derive(Debug, Args)]
#[command(after_help = "\
Lists take commas and ranges: --size 64,2KiB,64KiB  --size 1..64KiB:x4 (geometric)  \
--channels 1..32 (x2)  --size 100..500:+100 (arithmetic). Every combination of the axes is \
one point.

Examples:
  xferbench run stream --transport shm,pipe,unix,tcp --size 64,2KiB,64KiB --export-md r.md
  xferbench run pingpong --transport unix --size 64 --channels 1,2 --peer process --json
  xferbench run stream -t pipe -s 64KiB -p pipe_size=64KiB,1MiB --verify

Exit status: 0 success, 1 a point failed, 2 bad usage, 3 --verify found faults, 128+N stopped by \
signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP; finished points and exports are written).")]
pub struct RunArgs {
    /// The workload to run.
    #[arg(value_parser = choice::<WorkloadKind>())]
    pub workload: WorkloadKind,

    /// Transports to sweep (see `xferbench list`); plugin:PATH[:NAME] measures a
    /// plugin's transport (see docs/plugins.md).
    #[arg(short, long, value_name = "LIST", default_value = "shm,pipe,unix,tcp")]
    pub transport: String,

    /// Message sizes to sweep, in bytes (64, 4KiB, 1MiB; ranges like 1..64KiB:x4); rpmsg,
    /// whose packets hold at most 496 bytes, runs the default as 64 and 496, with a note
    ///
    /// [default: 64,4KiB,64KiB]
    #[arg(short, long, value_name = "LIST")]
    pub size: Option<String>,

    /// Concurrent channel counts to sweep; each channel is an independent endpoint pair.
    #[arg(short, long, value_name = "LIST", default_value = "1")]
    pub channels: String,

    /// Sweep a parameter: a transport parameter (see `xferbench list`) or an axis
    /// (transport, size, channels); numeric ranges as in --size (spin_us=1..64:x4).
    /// Repeatable.
    #[arg(short = 'p', long = "param", value_name = "NAME=LIST")]
    pub params: Vec<String>,

    /// Messages (stream) or round trips (pingpong) per channel per run.
    #[arg(short = 'n', long, value_name = "N", conflicts_with = "duration")]
    pub count: Option<u64>,

    /// Time per run per channel (250ms, 1s, 2m or bare seconds) [default: 250ms,
    /// unless --count is given].
    #[arg(short, long, value_name = "DURATION", value_parser = seconds)]
    pub duration: Option<f64>,

    /// Measured runs per point; figures are medians over these.
    #[arg(short, long, value_name = "N", default_value_t = 5)]
    pub runs: usize,

    /// Warm-up runs per point, discarded.
    #[arg(short, long, value_name = "N", default_value_t = 1)]
    pub warmup: usize,

    /// Where the serving side of each channel runs.
    #[arg(long, value_enum, default_value_t = PeerArg::Process)]
    pub peer: PeerArg,

    /// Run round-robin across points (A, B, C, A, B, C, ...) instead of all runs of one
    /// point before the next: points then share the machine's drift. Each visit starts
    /// the point's peers afresh and discards --warmup runs
    #[arg(long)]
    pub interleave: bool,

    /// Pin each channel's driver and peer to CPUs (driver on the 2i-th allowed CPU,
    /// peer on the next).
    #[arg(long)]
    pub pin: bool,

    /// Stamp every message with a sequence number and checksum and count lost,
    /// duplicated, reordered and corrupt messages (sizes of at least 16 bytes).
    #[arg(long)]
    pub verify: bool,

    /// Write every message in place in the transport's buffer and read it there
    /// (shm, rpmsg, iceoryx2): the sender writes every byte, the receiver reads every
    /// cache line (with --verify: checks the CRC over every byte). Both modes in one
    /// sweep: -p zero_copy=false,true. Peers' own rules for the payload:
    /// -p touch=write|read|none (none: neither written nor read, as iceoryx2's
    /// benchmark sends its samples); the default, all, is the rule above.
    #[arg(long)]
    pub zero_copy: bool,

    /// Time without progress on any channel before a run is declared hung (250ms,
    /// 1s, 2m or bare seconds).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = seconds)]
    pub timeout: f64,

    /// Write the result document as JSON.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Write one CSV row per point.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,

    /// Write a Markdown report.
    #[arg(long, visible_alias = "export-markdown", value_name = "FILE")]
    pub export_md: Option<PathBuf>,

    /// Write a self-contained HTML report (tables, plots, every point in detail).
    #[arg(long, value_name = "FILE")]
    pub export_html: Option<PathBuf>,

    /// Append each finished point to this JSON Lines file as it finishes [default:
    /// FILE.jsonl next to --export-json FILE, removed once every export is written].
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,

    /// Print the result document as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Add a row per channel under each point in the table.
    #[arg(long)]
    pub per_channel: bool,

    /// No progress bar, table or warnings; only errors (files are still written).
    #[arg(short, long)]
    pub quiet: bool,

    /// Record counters of every participating process over each run's window
    /// (`--counters` or `--counters=SOURCE`): `perf` (default) for perf_event_open software counters and, with a PMU, hardware
    /// ones; `callgrind` for simulated instruction and cache-miss counts of the peers
    /// under valgrind (slow: use a small --count). See docs/profiling.md.
    #[arg(long, value_enum, value_name = "SOURCE", num_args = 0..=1, default_missing_value = "perf", require_equals = true)]
    pub counters: Option<CountersArg>,

    /// Profile one participant of every point with `perf record` (`--profile` or
    /// `--profile=DIR`) and write a flame graph, a speedscope file and a top-functions
    /// table per point under DIR
    /// [default DIR: `xferbench-profile-<time>`].
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true)]
    pub profile: Option<Option<PathBuf>>,

    /// The participant to profile: `main` (drivers, and thread peers) or `peerN` (the
    /// process serving channel N).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "main",
        requires = "profile"
    )]
    pub profile_peer: String,

    /// Testing aid: corrupt every Nth message after stamping it.
    #[arg(long, value_name = "N", hide = true)]
    pub inject_corruption: Option<u64>,

    /// Machine limits and drift.
    #[command(flatten)]
    pub watch: WatchArgs,

    /// The results history.
    #[command(flatten)]
    pub record: RecordArgs,

    /// Runs across hosts.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `xferbench rpmsg`.
#[derive(Debug, Args)]
#[command(after_help = "\
The remote is a separate process serving echo over two vrings in shared memory. The \
aggregate is measured over the common window of all channels; the original's figure, \
the sum of per-thread rates, is shown next to it.

Examples:
  xferbench rpmsg -c 4 -s 496 --transfer 10MB
  xferbench rpmsg --notify poll --buffers zero-copy --verify --json

Exit status: 0 success, 1 failure, 2 bad usage, 3 data verification failed, 128+N \
stopped by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP).")]
pub struct RpmsgArgs {
    /// Concurrent channels: one thread and one endpoint pair each (1..1024; the
    /// original's -n).
    #[arg(
        short,
        long,
        visible_alias = "threads",
        value_name = "N",
        default_value_t = 1
    )]
    pub channels: u32,
    /// Packet size in bytes (1..496; the original's -s).
    #[arg(short, long, value_name = "BYTES", default_value = "496")]
    pub size: String,
    /// Bytes each channel sends (K/M/G binary, kB/MB/GB decimal suffixes; the
    /// original's -t).
    #[arg(long, value_name = "BYTES", default_value = "1MB")]
    pub transfer: String,
    /// Notification mode.
    #[arg(long, value_parser = choice::<Notify>(), default_value_t = Notify::Kick)]
    pub notify: Notify,
    /// Buffer mode.
    #[arg(long, value_parser = choice::<Buffers>(), default_value_t = Buffers::Copy)]
    pub buffers: Buffers,
    /// Echo replies carry the firmware's suffix (so they differ in size).
    #[arg(long)]
    pub suffix: bool,
    /// Stamp and check every packet (sequence, CRC-32, length; packets >= 16 B).
    #[arg(long)]
    pub verify: bool,
    /// Pin each channel's driver to a CPU (the 2i-th allowed one) and the remote to
    /// the CPU after the first driver's, as `run --pin` pins drivers and peers.
    #[arg(long)]
    pub pin: bool,
    /// Measured runs; figures are medians over these.
    #[arg(short, long, value_name = "N", default_value_t = 5)]
    pub runs: usize,
    /// Warm-up runs, discarded.
    #[arg(short, long, value_name = "N", default_value_t = 1)]
    pub warmup: usize,
    /// Time without progress on any channel before a run is declared hung (250ms,
    /// 1s, 2m or bare seconds).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = seconds)]
    pub timeout: f64,
    /// Write the result document as JSON.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Print the result document as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write every measured run as one JSON line (the per-run shape) to FILE (`-`:
    /// stdout, instead of the table).
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,
    /// No table; only errors (files are still written).
    #[arg(short, long)]
    pub quiet: bool,
    /// Machine limits and drift.
    #[command(flatten)]
    pub watch: WatchArgs,
}

/// `xferbench daq`.
#[derive(Debug, Args)]
#[command(after_help = "\
The short flags are the original's (sis8300drv_threads) with its meanings and defaults; \
they reproduce that program and may differ from other subcommands' letters. Functions \
(-A): 0 readout only, 1 decimation+scaling, 2 decimation, 3 scaling, 4 cast to float, \
5 Q1.15 unsigned to double, 6 Q3.13 signed to double, 7 Q1.15 unsigned to float, 8 Q3.13 \
signed to float, 99 all of them, 100 write a pattern to the boards. Rows print in \
completion order; speed [MB/s] is raw input bytes x reads / (end - start), as the \
original's. The boards are a model (see docs/studies/sis8300.md): no PCIe, no interrupt \
controller.

Examples:
  xferbench daq /dev/sis8300-6 -S $((100*300000)) -N 30
  xferbench daq b0 b1 b2 b3 b4 b5 -S 30000000 -N 30 --link ku,l2,l2,l2,l2,l2
  xferbench daq b0 -S 3000000 -N 30 -A 5 --kernels improved --verify
  xferbench daq b0 -S 300000 -l 100 -i

Exit status: 0 success, 1 failure, 2 bad usage, 3 a sample did not match the model's \
pattern (--verify), 128+N stopped by signal N.")]
pub struct DaqArgs {
    /// Devices: one simulated board each (any names, at most 10).
    #[arg(value_name = "DEVICES", required = true)]
    pub devices: Vec<String>,
    /// Number of samples to read, rounded up to a multiple of 16.
    #[arg(
        short = 'S',
        long = "samples",
        value_name = "N",
        default_value_t = 0x100000
    )]
    pub samples: u64,
    /// Number of reads to perform (and passes of each conversion).
    #[arg(short = 'N', long = "reads", value_name = "N", default_value_t = 1)]
    pub nreads: u32,
    /// Decimation offset.
    #[arg(
        short = 'o',
        long = "dec-offset",
        value_name = "N",
        default_value_t = 0
    )]
    pub dec_offset: u64,
    /// Decimation factor.
    #[arg(
        short = 'f',
        long = "dec-factor",
        value_name = "N",
        default_value_t = 1
    )]
    pub dec_factor: u64,
    /// Scale offset.
    #[arg(
        short = 'O',
        long = "scale-offset",
        value_name = "X",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    pub scale_offset: f64,
    /// Scale factor.
    #[arg(
        short = 'F',
        long = "scale-factor",
        value_name = "X",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    pub scale_factor: f64,
    /// Access mode: 0 read() (DMA to a bounce buffer, then a copy to the user), 1
    /// mmap() (DMA straight into the reader's mapping).
    #[arg(short = 'B', long = "access", value_name = "0|1", default_value_t = 0)]
    pub access: u32,
    /// Which function to perform (0-8, 99 all, 100 write pattern).
    #[arg(
        short = 'A',
        long = "function",
        value_name = "FUNC",
        default_value_t = 0
    )]
    pub function: u32,
    /// Loop N times on the trigger: arm, wait for the end of the acquisition, run the
    /// function (0: run once, no trigger).
    #[arg(short = 'l', long = "loops", value_name = "N", default_value_t = 0)]
    pub loops: u32,
    /// Wait for the end of the acquisition by interrupt instead of polling.
    #[arg(short = 'i', long = "intr")]
    pub intr: bool,
    /// Link per board: l2 (621.7 MB/s), ku (1249.2 MB/s), unthrottled, or MB/s; one
    /// value for all boards or a comma list, one per device.
    #[arg(long, value_name = "LINK[,LINK...]", default_value = "l2")]
    pub link: String,
    /// The crate's shared bus limit in MB/s, `none`, or `auto` (3047 MB/s when a board
    /// is throttled, none otherwise).
    #[arg(long, value_name = "MB/S", default_value = "auto")]
    pub bus: String,
    /// Conversion kernels.
    #[arg(long, value_parser = choice::<Kernels>(), default_value_t = Kernels::Original)]
    pub kernels: Kernels,
    /// Check every sample read against the model's pattern (exit 3 on a mismatch).
    #[arg(long)]
    pub verify: bool,
    /// What ends an acquisition with -l: a rate in Hz (the crate's trigger) or
    /// `software` (at once).
    #[arg(long, value_name = "HZ|software", default_value = "14")]
    pub trigger: String,
    /// Print the parameters, rows, aggregates and CPU as one JSON document
    /// (docs/schema/daq.schema.json) instead of the tables.
    #[arg(long)]
    pub json: bool,
}

/// The names of the built-in studies, for clap.
fn study_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        xferbench_studies::registry()
            .iter()
            .map(|s| clap::builder::PossibleValue::new(s.name()).help(s.description())),
    )
}

/// `xferbench completions`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench completions bash > ~/.local/share/bash-completion/completions/xferbench
  xferbench completions zsh > ~/.zfunc/_xferbench
  xferbench completions fish > ~/.config/fish/completions/xferbench.fish")]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `xferbench man`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench man | man -l -
  xferbench man --out ~/.local/share/man/man1")]
pub struct ManArgs {
    /// Write xferbench.1 and xferbench-SUBCOMMAND.1 pages to DIR instead of printing the
    /// main page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}
