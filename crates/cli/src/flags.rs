//! The flags and value parsers several commands share: the value parser of a
//! domain enum ([`choice`]), durations ([`seconds`]), flags a parameter definition
//! defines ([`duration_of`], [`count_of`], [`bytes_of`]: [`TimeoutArgs`], [`RunsArgs`]), runs across hosts
//! ([`RemoteArgs`]), the machine watch ([`WatchArgs`]), the result document's files
//! ([`ExportArgs`]), the history ([`HistoryFileArgs`], [`RecordArgs`]), and the names
//! of the hidden roles
//! ([`role`]). Every command's module imports them from here; nothing here imports
//! a command, so the root ([`crate::cli`]) stays the only module that names them all.

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use xferbench_lab::params::{RUNS, TIMEOUT, WARMUP};
use xferbench_lab::result::ResultDoc;
use xferbench_params::{ChoiceError, Choices, ParamDef, Value};
use xferbench_report::{
    Exporter, csv::Csv, export_to_path, html::Html, json::Json, markdown::Markdown,
};

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
    /// [`xferbench_probes::process::Role::Peer`].
    pub const PEER: &str = "__peer";
    /// [`xferbench_probes::process::Role::RpmsgRemote`].
    pub const RPMSG_REMOTE: &str = "__rpmsg-remote";
    /// [`xferbench_probes::process::Role::MemoryMock`].
    pub const MEMORY_MOCK: &str = "__memory-mock";
    /// [`xferbench_probes::process::Role::WarpClient`].
    pub const WARP_CLIENT: &str = "__warp-client";
    /// [`xferbench_probes::process::Role::KvServer`].
    pub const KV_SERVER: &str = "__kv-server";
    /// [`xferbench_probes::process::Role::KvClient`].
    pub const KV_CLIENT: &str = "__kv-client";
    /// [`xferbench_probes::process::Role::PerfStatBench`].
    pub const PERFSTAT_BENCH: &str = "__perfstat-bench";
    /// [`xferbench_probes::process::Role::PluginProbe`].
    pub const PLUGIN_PROBE: &str = "__plugin-probe";
    /// [`xferbench_probes::process::Role::PluginDriver`].
    pub const PLUGIN_DRIVER: &str = "__plugin-driver";
    /// [`xferbench_probes::process::Role::PluginCleanup`].
    pub const PLUGIN_CLEANUP: &str = "__plugin-cleanup";
    /// [`xferbench_probes::process::Role::Check`].
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

/// The value parser of a duration flag that `def` defines: its syntax, bounds and
/// error message come from that one definition (`--timeout 0` names the range).
pub fn duration_of(def: ParamDef) -> impl Fn(&str) -> Result<Duration, String> + Clone {
    move |s| match def.parse(s) {
        Ok(Value::Duration(d)) => Ok(d),
        Ok(other) => Err(format!("expected a duration, not {other:?}")),
        Err(e) => Err(expected(e)),
    }
}

/// The value parser of a whole-number flag that `def` defines (`--runs`,
/// `--warmup`, `kv client`'s INNER): bounds and error message from that one
/// definition, read into the flag's own integer type.
pub fn count_of<T: TryFrom<i64>>(def: ParamDef) -> impl Fn(&str) -> Result<T, String> + Clone
where
    T::Error: std::fmt::Display,
{
    move |s| match def.parse(s) {
        Ok(Value::Integer(n)) => T::try_from(n).map_err(|e| e.to_string()),
        Ok(other) => Err(format!("expected a whole number, not {other:?}")),
        Err(e) => Err(expected(e)),
    }
}

/// The value parser of a byte-size flag that `def` defines (`warp client --size`):
/// syntax, bounds and error message from that one definition.
pub fn bytes_of(def: ParamDef) -> impl Fn(&str) -> Result<usize, String> + Clone {
    move |s| match def.parse(s) {
        Ok(Value::Bytes(n)) => usize::try_from(n).map_err(|e| e.to_string()),
        Ok(other) => Err(format!("expected a byte size, not {other:?}")),
        Err(e) => Err(expected(e)),
    }
}

/// What a flag's value should have been: the definition's own words, without the
/// value and name the command line's error already shows.
fn expected(e: xferbench_params::ParamError) -> String {
    match e {
        xferbench_params::ParamError::Invalid { accepts, .. } => format!("expected {accepts}"),
        other => other.to_string(),
    }
}

/// `def`'s default as the help shows it (`10 s`), for a flag's `default_value`; the
/// text lives as long as the program, one per definition.
pub fn default_of(def: ParamDef) -> &'static str {
    use std::collections::BTreeMap;
    use std::sync::{Mutex, OnceLock};
    static SHOWN: OnceLock<Mutex<BTreeMap<String, &'static str>>> = OnceLock::new();
    let mut shown = SHOWN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    shown
        .entry(def.name.to_string())
        .or_insert_with(|| Box::leak(def.default_display().into_boxed_str()))
}

/// How long a wait may go without progress (`--timeout`), as every command that waits
/// on a peer reads it: one definition ([`TIMEOUT`]), one syntax, one range.
#[derive(Debug, Clone, Args)]
pub struct TimeoutArgs {
    /// Time without progress before a wait is declared hung: connecting, a send, a
    /// receive, a run (250ms, 1s, 2m or bare seconds; 100ms to 24h).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = default_of(TIMEOUT),
        value_parser = duration_of(TIMEOUT)
    )]
    pub timeout: Duration,
}

/// Measured and warm-up runs of each point (`--runs`, `--warmup`), read through their
/// one definitions ([`RUNS`], [`WARMUP`]).
#[derive(Debug, Clone, Args)]
pub struct RunsArgs {
    /// Measured runs per point; figures are medians over these.
    #[arg(
        short,
        long,
        value_name = "N",
        default_value = default_of(RUNS),
        value_parser = count_of::<usize>(RUNS)
    )]
    pub runs: usize,
    /// Warm-up runs per point, discarded.
    #[arg(
        short,
        long,
        value_name = "N",
        default_value = default_of(WARMUP),
        value_parser = count_of::<usize>(WARMUP)
    )]
    pub warmup: usize,
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
    /// Flag a point when a probe of the machine that bears on its figure (the 2 MiB
    /// copy for a stream, the cache-line or futex round trip for a round trip) moved
    /// by more than this percentage during it, beyond the probe's own scatter.
    #[arg(long, value_name = "PCT", default_value_t = 25.0)]
    pub drift_threshold: f64,
}

/// The files a measuring command writes its result document to, one flag per format.
/// `-` is stdout; a regular file is replaced atomically; a symbolic link is followed
/// and kept; a FIFO or a device is written in place, never replaced
/// ([`xferbench_report::output`], docs/results-schema.md).
#[derive(Debug, Clone, Default, Args)]
pub struct ExportArgs {
    /// Write the result document as JSON (`-`: stdout; a FIFO or device is written in
    /// place, never replaced).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write one CSV row per point (`-`: stdout; a FIFO or device is written in
    /// place, never replaced).
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Write a Markdown report (`-`: stdout; a FIFO or device is written in place,
    /// never replaced).
    #[arg(long, visible_alias = "export-markdown", value_name = "FILE")]
    pub export_md: Option<PathBuf>,
    /// Write a self-contained HTML report (tables, plots, every point in detail;
    /// `-`: stdout; a FIFO or device is written in place, never replaced).
    #[arg(long, value_name = "FILE")]
    pub export_html: Option<PathBuf>,
}

impl ExportArgs {
    /// Each export with its flag, its path when given, and its exporter.
    fn each(&self) -> [(&'static str, Option<&PathBuf>, &'static dyn Exporter); 4] {
        [
            ("--export-json", self.export_json.as_ref(), &Json),
            ("--export-csv", self.export_csv.as_ref(), &Csv),
            ("--export-md", self.export_md.as_ref(), &Markdown),
            ("--export-html", self.export_html.as_ref(), &Html),
        ]
    }

    /// Checks every path given, before anything is measured (see [`crate::paths::file`]):
    /// the first that cannot be written, named by its flag.
    pub fn check(&self) -> Result<(), String> {
        for (flag, path, _) in self.each() {
            if let Some(path) = path {
                crate::paths::file(flag, path)?;
            }
        }
        Ok(())
    }

    /// Writes the document to each export given; says on stderr which could not be
    /// written and returns whether all were.
    pub fn write(&self, doc: &ResultDoc) -> bool {
        let mut written = true;
        for (_, path, exporter) in self.each() {
            if let Some(path) = path
                && let Err(e) = export_to_path(exporter, doc, path)
            {
                written = false;
                eprintln!(
                    "error: cannot write the {} export {}: {e}",
                    exporter.name(),
                    path.display()
                );
            }
        }
        written
    }
}

/// The outputs of a one-point measuring command (`kv client`, `warp client`, `daq`,
/// `rpmsg`): its summary or the result document on stdout, the export files and the
/// history ([`crate::one_point`]).
#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// Print the result document as JSON on stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// The result document's files.
    #[command(flatten)]
    pub export: ExportArgs,
    /// No summary; only errors (files are still written).
    #[arg(short, long)]
    pub quiet: bool,
    /// The results history.
    #[command(flatten)]
    pub record: RecordArgs,
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

impl RecordArgs {
    /// Checks the history file before anything is measured, as the exports are
    /// checked ([`crate::paths::file`]): a file chosen with `--history` or
    /// `XFERBENCH_HISTORY` whose folder does not exist is refused, named by how it was
    /// chosen. The default location's folder is created when the run is recorded.
    pub fn check(&self) -> Result<(), String> {
        if self.no_history {
            return Ok(());
        }
        match xferbench_history::resolve(self.file.history.as_deref()) {
            Ok((path, chosen)) => match chosen.by_user() {
                Some(how) => crate::paths::file(how, &path),
                None => Ok(()),
            },
            // No home folder: the run is measured and says so when it cannot record.
            Err(_) => Ok(()),
        }
    }
}
