//! `xferbench run`'s arguments, as clap reads them; [`crate::config`] validates them
//! into the lab's types.
//!
//! The doc comments of the arguments are their `--help` text, written for the
//! terminal (`[default: …]`, `plugin:PATH[:NAME]`), not for rustdoc.
#![allow(rustdoc::broken_intra_doc_links)]

use crate::flags::{
    ExportArgs, RecordArgs, RemoteArgs, RunsArgs, TimeoutArgs, WatchArgs, choice, default_of,
    duration_of, seconds,
};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;
use xferbench_lab::params::DURATION;
use xferbench_lab::workload::WorkloadKind;

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
  xferbench run load -t shm,unix -s 64 --rate 10k..1M:x4 --neighbours none,memory:1
  xferbench run load -t shm -s 64 --rate auto

Exit status: 0 success, 1 a point failed (the others ran, unless --fail-fast), 2 bad usage, 3 --verify found faults, 128+N stopped by \
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

    /// load: offered messages per second of each point, all channels together, to
    /// sweep (250000, 10k, 1M; ranges like 10k..1M:x2), or `auto` to search for the
    /// knee, the highest rate sustained (docs/load.md). Also -p rate=LIST; spacing
    /// with -p burst=N and -p arrivals=uniform|poisson
    ///
    /// [default: 10k]
    #[arg(long, value_name = "LIST|auto")]
    pub rate: Option<String>,

    /// Background work beside every point, to sweep: none, cpu:N (busy loops),
    /// memory:N (streams over a buffer larger than the last-level cache), cache:N
    /// (sweeps of an L2-sized buffer); started before the point, pinned with --pin,
    /// their CPU and bandwidth recorded. Also -p neighbours=LIST
    #[arg(long, value_name = "LIST")]
    pub neighbours: Option<String>,

    /// load with --rate auto: how long the search for one knee may probe before it
    /// settles on the bracket it has (250ms, 1s, 2m or bare seconds)
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = seconds)]
    pub search_budget: f64,

    /// Sweep a parameter: a transport parameter (see `xferbench list`) or an axis
    /// (transport, size, channels); numeric ranges as in --size (spin_us=1..64:x4).
    /// Repeatable.
    #[arg(short = 'p', long = "param", value_name = "NAME=LIST")]
    pub params: Vec<String>,

    /// Messages (stream, load) or round trips (pingpong) per channel per run.
    #[arg(short = 'n', long, value_name = "N", conflicts_with = "duration")]
    pub count: Option<u64>,

    /// Time per run per channel (250ms, 1s, 2m or bare seconds), unless --count is
    /// given.
    #[arg(
        short,
        long,
        value_name = "DURATION",
        default_value = default_of(DURATION),
        value_parser = duration_of(DURATION)
    )]
    pub duration: Duration,

    /// Measured and warm-up runs per point.
    #[command(flatten)]
    pub repeat: RunsArgs,

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

    /// End the sweep at its first failed point; without it a failed point (a peer
    /// that died, a transport that refused) is recorded in the result's `failed` with
    /// its cause, the other points run, and the exit status is 1
    #[arg(long)]
    pub fail_fast: bool,

    /// Time without progress on any channel before a run is declared hung.
    #[command(flatten)]
    pub hang: TimeoutArgs,

    /// The result document's files.
    #[command(flatten)]
    pub export: ExportArgs,

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
