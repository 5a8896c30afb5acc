//! The command line, as clap sees it: the root ([`Cli`], [`Command`]). Each
//! command's own arguments live beside its handler (`run::RunArgs`,
//! `kv::KvCommand`, ...), the flags several commands share in [`crate::flags`].
//! Only `main` reads this module, so no command imports the root.
//!
//! The doc comments of the arguments are their `--help` text, written for the
//! terminal (`[default: …]`, `memfd:<pid>:…`), not for rustdoc.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use crate::ab::{AbArgs, CompareArgs};
use crate::daq::DaqArgs;
use crate::docs::{CompletionsArgs, ManArgs};
use crate::flags::role;
use crate::history::HistoryCommand;
use crate::kv::KvCommand;
use crate::limits::LimitsArgs;
use crate::list::ListArgs;
use crate::plugin::PluginCommand;
use crate::profile::ProfileArgs;
use crate::rpmsg::RpmsgArgs;
use crate::run::RunArgs;
use crate::serve::ServeArgs;
use crate::study::StudyArgs;
use crate::warp::WarpCommand;
use clap::{Parser, Subcommand};

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
    /// Start a transport plugin: a stub in C or Rust that builds and passes `check`,
    /// and the SDK it builds against (header, pkg-config file, Rust crate).
    #[command(after_help = "\
Examples:
  xferbench plugin sdk --prefix ~/.local
  xferbench plugin new my-link --lang c
  xferbench plugin new my-link --lang rust --sdk ~/.local")]
    #[command(subcommand)]
    Plugin(PluginCommand),
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

impl Command {
    /// A hidden role (`__peer`, `__kv-server`, ...): a child of the lab, not a
    /// user's command.
    pub fn is_role(&self) -> bool {
        matches!(
            self,
            Command::Peer
                | Command::RpmsgRemote { .. }
                | Command::MemoryMock { .. }
                | Command::WarpClient { .. }
                | Command::KvServer { .. }
                | Command::KvClient { .. }
                | Command::PerfStatBench { .. }
                | Command::PluginProbe { .. }
                | Command::PluginDriver { .. }
                | Command::PluginCleanup { .. }
                | Command::CheckOne { .. }
        )
    }
}
