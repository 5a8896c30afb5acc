//! The command line, as clap sees it. Nothing here is used past
//! [`crate::config`], which turns it into validated lab types.
//!
//! The doc comments of the arguments are their `--help` text, written for the
//! terminal (`[default: …]`, `memfd:<pid>:…`), not for rustdoc.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use crate::ab::{AbArgs, CompareArgs};
use crate::daq::DaqArgs;
use crate::docs::{CompletionsArgs, ManArgs};
use crate::history::HistoryCommand;
use crate::kv::KvCommand;
use crate::limits::LimitsArgs;
use crate::list::ListArgs;
use crate::profile::ProfileArgs;
use crate::rpmsg::RpmsgArgs;
use crate::run::RunArgs;
use crate::serve::ServeArgs;
use crate::study::StudyArgs;
use crate::warp::WarpCommand;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use xferbench_params::{ChoiceError, Choices};

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
