//! The result model: one versioned JSON document per run of `xferbench`.
//!
//! The schema is documented for users in `docs/results-schema.md`; bump
//! [`SCHEMA_VERSION`] on any change that is not a pure addition.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use xferbench_probes::counters::{PointCounters, RunCounters};
use xferbench_probes::cpu::ProcessCpu;
use xferbench_probes::stats::Estimate;
use xferbench_probes::verify::Integrity;

/// Version of the JSON document's layout.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole run of the tool: context, finished points, warnings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResultDoc {
    /// Layout version, [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Which built-in study this is, for a study's `results.json` (absent for
    /// `xferbench run`; added in schema 1 as an optional field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<StudyInfo>,
    /// Where and how the measurement was taken.
    pub context: Context,
    /// One entry per finished sweep point, in the order they ran.
    pub points: Vec<PointResult>,
    /// Warnings about the whole run; per-point warnings stay in their points, with one
    /// summary line here when any point was noisy.
    pub warnings: Vec<String>,
    /// How the run ended.
    pub outcome: Outcome,
    /// The knees of the `load` workload's latency–rate curves: one per curve (its
    /// points' parameters but the rate), found from a sweep of rates or by the
    /// search of `--rate auto` (`knee`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub knees: Vec<Knee>,
    /// Points that failed while the plan went on past them (`run` without
    /// `--fail-fast`), in the order they failed; `outcome` is then `failed`, naming
    /// the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<FailedPoint>,
    /// `ab`'s verdict of its point B (`side=B`) against its point A (`side=A`): the
    /// difference, its significance, the counting passes and the diagnosis (absent
    /// for every other document; added within schema 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ab: Option<crate::verdict::AbVerdict>,
}

/// A point that failed, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailedPoint {
    /// Its index in the plan.
    pub index: usize,
    /// Its parameters (machine form).
    pub params: BTreeMap<String, String>,
    /// The error, with its causes.
    pub error: String,
}

/// A context with placeholder host facts, for tests of the lab and the studies.
#[doc(hidden)]
pub fn test_context(settings: Settings) -> Context {
    Context {
        tool: "xferbench".into(),
        version: "0".into(),
        command_line: vec![],
        hostname: "h".into(),
        cpu_model: "c".into(),
        cores: 2,
        kernel: "k".into(),
        os: "o".into(),
        start_time: "t".into(),
        capabilities: Capabilities {
            pmu: false,
            pmu_note: None,
            perf: None,
            valgrind: None,
            perf_event_paranoid: None,
            trip_clock: None,
            trip_clock_step_ns: None,
        },
        settings,
        limits: None,
        remote: None,
        plugins: Vec::new(),
        build: None,
        load: None,
    }
}

/// What a study adds to the document: its name, its plan's scale and what it
/// measured beside the points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StudyInfo {
    /// The study's name (`rpmsg`, `warp-pipe`, …).
    pub name: String,
    /// Whether the quick plan ran.
    pub quick: bool,
    /// Points in the plan (some may not have run: see the outcome).
    pub planned_points: usize,
    /// Study-specific findings that are not points (the points the plan left out,
    /// a micro-measurement, …), by name.
    #[serde(default)]
    pub extras: BTreeMap<String, serde_json::Value>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// Every planned point finished.
    Complete,
    /// Stopped by the user (Ctrl-C); `points` holds what finished.
    Interrupted,
    /// A point failed; `points` holds what finished before it.
    Failed {
        /// The error, with its causes.
        error: String,
    },
}

/// Where and how a run was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Context {
    /// `xferbench`.
    pub tool: String,
    /// Tool version.
    pub version: String,
    /// The command line, argument by argument.
    pub command_line: Vec<String>,
    /// Host name.
    pub hostname: String,
    /// CPU model from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// CPUs this process may run on.
    pub cores: usize,
    /// Kernel release.
    pub kernel: String,
    /// Operating system (`PRETTY_NAME` of `/etc/os-release`).
    pub os: String,
    /// Start time, RFC 3339, UTC.
    pub start_time: String,
    /// Measurement facilities found on this machine.
    pub capabilities: Capabilities,
    /// Run-control settings shared by all points.
    pub settings: Settings,
    /// The machine's limits, measured at the start and the end (absent when not
    /// measured: `--no-limits`, or files that predate the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<crate::limits::MachineLimits>,
    /// Runs across hosts: both hosts, how windows were timed and the estimated
    /// clock offset (absent for runs on one host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<crate::hosts::RemoteContext>,
    /// The plugin transports measured: each one's file, SHA-256 and version, so
    /// that two builds of a plugin are told apart (absent when none was).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<PluginRecord>,
    /// How the measuring binary was built: an unoptimised build says so (added in
    /// schema 1; absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<xferbench_probes::build::BuildInfo>,
    /// How busy the machine was with other work: the load average at the start and
    /// the end, and how many points were contended (added in schema 1; absent in
    /// older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<xferbench_probes::contention::MachineLoad>,
}

/// What measurement facilities the machine offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Capabilities {
    /// A hardware PMU answers `perf_event_open` for instructions.
    pub pmu: bool,
    /// Why there is no PMU, when there is none.
    pub pmu_note: Option<String>,
    /// `perf --version`, if perf is installed.
    pub perf: Option<String>,
    /// `valgrind --version`, if valgrind is installed.
    pub valgrind: Option<String>,
    /// `/proc/sys/kernel/perf_event_paranoid`, if readable.
    pub perf_event_paranoid: Option<i32>,
    /// The clock that timed each round trip of a ping-pong ([`xferbench_probes::clock::TripClock`];
    /// `null` in results of earlier versions, which all used `monotonic`).
    #[serde(default)]
    pub trip_clock: Option<xferbench_probes::clock::TripSource>,
    /// The smallest step in which that clock advances here, in nanoseconds
    /// ([`xferbench_probes::clock::TripClock::step_ns`]): a round trip is a whole
    /// number of such steps, so a latency of a few steps is coarse (absent in results
    /// of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trip_clock_step_ns: Option<f64>,
}

/// Run-control settings, as validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Settings {
    /// Workload name.
    pub workload: String,
    /// Measured runs per point.
    pub runs: usize,
    /// Discarded warm-up runs per point.
    pub warmup: usize,
    /// Messages per channel per run, when the run length is a count.
    pub count: Option<u64>,
    /// Seconds per run, when the run length is a duration.
    pub duration_s: Option<f64>,
    /// `thread` or `process`.
    pub peer: String,
    /// Whether threads and peers were pinned to CPUs.
    pub pin: bool,
    /// Whether payloads were verified.
    pub verify: bool,
    /// Whether runs went round-robin across points (added in schema 1 as an optional
    /// field; `false` when absent).
    #[serde(default)]
    pub interleave: bool,
}

/// One finished sweep point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PointResult {
    /// 0-based position in the sweep.
    pub index: usize,
    /// The sweep parameters of this point, as strings: `workload`, `transport`,
    /// `size`, `channels` and any `-p` parameters.
    pub params: BTreeMap<String, String>,
    /// What the transport chose for its parameters set to `auto`, by name, as
    /// parameters are stored (`capacity`: `4096`): the configuration the figures were
    /// measured with (absent where nothing was chosen, and in older files).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub chosen: BTreeMap<String, String>,
    /// The transport's parameters the point left at their defaults, with the default
    /// as parameters are stored (`wait`: `hybrid`, a plugin's `depth`: `10`):
    /// with `params`, every parameter the transport ran with (absent where there
    /// are none, and in older files).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub defaults: BTreeMap<String, String>,
    /// Message size in bytes, as delivered.
    pub size_bytes: u64,
    /// Number of concurrent channels.
    pub channels: usize,
    /// The primary figure, as the workload declared it (added in schema 1 as an
    /// optional field; absent in older files, where it follows from the workload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<Primary>,
    /// Every measured run (warm-up runs are discarded).
    pub runs: Vec<RunRecord>,
    /// Every figure summarised over the runs, by name (see [`figure`]).
    pub summary: BTreeMap<String, Estimate>,
    /// Per-channel figures summarised over the runs.
    pub per_channel: Vec<ChannelSummary>,
    /// Integrity counters summed over the measured runs; `None` without `--verify`.
    pub integrity: Option<Integrity>,
    /// Warnings about this point.
    pub warnings: Vec<String>,
    /// Counters of the participating processes, with `--counters` (absent otherwise;
    /// added in schema 1 as an optional field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<PointCounters>,
    /// The primary figure as a fraction of its natural limit on this machine, when
    /// the context carries limits and the point has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<crate::limits::fraction::LimitFraction>,
    /// The machine changed speed during this point (a probe moved by more than the
    /// threshold); absent when it did not or was not watched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<crate::limits::drift::Drift>,
    /// How busy the machine was with other work over this point's runs, and whether
    /// that makes it contended (added in schema 1; absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contention: Option<xferbench_probes::contention::PointContention>,
}

/// A point's primary figure and which way is better.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Primary {
    /// The figure's name.
    pub figure: String,
    /// Whether higher is better.
    pub higher_is_better: bool,
}

impl PointResult {
    /// The text the point stores for parameter `def` (its machine form), if any.
    pub fn param(&self, def: &xferbench_params::ParamDef) -> Option<&str> {
        self.params.get(def.name()).map(String::as_str)
    }

    /// The primary figure: as recorded, or for files that predate the field, the
    /// median round trip of `pingpong` points and the throughput of all others.
    pub fn primary(&self) -> Primary {
        self.primary.clone().unwrap_or_else(|| {
            // `WorkloadKind::Pingpong`'s name.
            if self.params.get(crate::names::WORKLOAD).map(String::as_str) == Some("pingpong") {
                Primary {
                    figure: figure::LATENCY[0].into(),
                    higher_is_better: false,
                }
            } else {
                Primary {
                    figure: figure::THROUGHPUT.into(),
                    higher_is_better: true,
                }
            }
        })
    }
}

/// Names of the figures in [`RunRecord::figures`] and [`PointResult::summary`].
pub use xferbench_probes::figure;

/// One measured run of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunRecord {
    /// 0-based run number among the measured runs.
    pub run: usize,
    /// Position among all measured runs of the plan, in the order they ran (added in
    /// schema 1 as an optional field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<usize>,
    /// Common window: first channel start to last channel end, nanoseconds.
    pub window_ns: u64,
    /// Messages (stream) or round trips (pingpong) delivered, all channels.
    pub messages: u64,
    /// Payload bytes delivered, all channels (pingpong: one direction).
    pub bytes: u64,
    /// Derived figures by name (see [`figure`]).
    pub figures: BTreeMap<String, f64>,
    /// Round-trip latency over all channels (pingpong only).
    pub latency: Option<Latency>,
    /// Per-channel rows.
    pub channels: Vec<ChannelRun>,
    /// CPU of every participating process.
    pub cpu: Vec<ProcessCpu>,
    /// Integrity counters of this run, with `--verify`.
    pub integrity: Option<Integrity>,
    /// Counters of the participating processes over this run's window, with
    /// `--counters` (per-run sources only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<RunCounters>,
    /// How busy the machine was with other work during this run's window (added in
    /// schema 1; absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contention: Option<xferbench_probes::contention::RunContention>,
    /// The run was cut short because the system under test collapsed: a participant
    /// could not finish its work within the run's time limit (added in schema 1;
    /// absent when the run finished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapsed: Option<Collapse>,
}

/// A run cut short because the system under test collapsed: a participant could not
/// finish its planned work within the run's time limit and was stopped, as hyperfine
/// and fio report a timeout. The run's figures are those of the work it did; a failure
/// (a mismatched reply, a crash) is an error of the point instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Collapse {
    /// The participant that did not finish (`timed client`).
    pub participant: String,
    /// The units of its work (`requests`).
    pub unit: String,
    /// Units it completed within the limit…
    pub completed: u64,
    /// …of those planned.
    pub planned: u64,
    /// The time limit, seconds: a lower bound on the time the work would have taken.
    pub limit_s: f64,
    /// What the participant could not do in the limit, when it is not a count of
    /// work (`leave the server after its stop`): then `completed` and `planned` are 0
    /// (added in schema 1; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stuck: Option<String>,
}

impl Collapse {
    /// "the timed client completed 120 of 300 requests in its 20 s limit", or "the
    /// timed client's stand-in could not leave the server after its stop in its 20 s
    /// limit".
    pub fn describe(&self) -> String {
        let limit = (self.limit_s * 1e3).round() / 1e3;
        match &self.stuck {
            Some(what) => format!(
                "the {} could not {what} in its {limit} s limit",
                self.participant
            ),
            None => format!(
                "the {} completed {} of {} {} in its {limit} s limit",
                self.participant, self.completed, self.planned, self.unit,
            ),
        }
    }
}

/// A new latency histogram: 1 ns to 1 h (longer samples are clamped), 3
/// significant digits.
pub fn new_histogram() -> hdrhistogram::Histogram<u64> {
    hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
        .expect("valid histogram bounds")
}

/// Latency percentiles from an HDR histogram (3 significant digits), nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Latency {
    /// Number of samples.
    pub count: u64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Smallest sample.
    pub min_ns: u64,
    /// Largest sample.
    pub max_ns: u64,
    /// Mean.
    pub mean_ns: f64,
}

impl Latency {
    /// The percentiles of a histogram of nanoseconds.
    pub fn of(h: &hdrhistogram::Histogram<u64>) -> Latency {
        Latency {
            count: h.len(),
            p50_ns: h.value_at_quantile(0.50),
            p90_ns: h.value_at_quantile(0.90),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            min_ns: h.min(),
            max_ns: h.max(),
            mean_ns: h.mean(),
        }
    }

    /// The latency figures by name, in the order of [`figure::LATENCY`].
    pub fn figures(&self) -> [(&'static str, f64); 6] {
        let v = [
            self.p50_ns as f64,
            self.p90_ns as f64,
            self.p99_ns as f64,
            self.p999_ns as f64,
            self.max_ns as f64,
            self.mean_ns,
        ];
        std::array::from_fn(|i| (figure::LATENCY[i], v[i]))
    }
}

/// One channel in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChannelRun {
    /// Channel number.
    pub channel: usize,
    /// Start of this channel's window, nanoseconds after the common window's start.
    pub start_offset_ns: u64,
    /// End of this channel's window, nanoseconds after the common window's start.
    pub end_offset_ns: u64,
    /// Messages (or round trips) delivered on this channel.
    pub messages: u64,
    /// Payload bytes delivered on this channel.
    pub bytes: u64,
    /// Bytes per second over this channel's own window.
    pub throughput_bytes_per_s: f64,
    /// Messages per second over this channel's own window.
    pub messages_per_s: f64,
    /// Round-trip latency on this channel (pingpong only).
    pub latency: Option<Latency>,
    /// Integrity counters of this channel, with `--verify`.
    pub integrity: Option<Integrity>,
}

/// One channel summarised over the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChannelSummary {
    /// Channel number.
    pub channel: usize,
    /// Throughput over the channel's own window.
    pub throughput_bytes_per_s: Estimate,
    /// Message rate over the channel's own window.
    pub messages_per_s: Estimate,
    /// Median round-trip latency (pingpong only).
    pub latency_p50_ns: Option<Estimate>,
}

/// One line of the JSON Lines stream written while a sweep runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamRecord {
    /// First line: the context.
    Context {
        /// Layout version.
        schema_version: u32,
        /// The context.
        context: Box<Context>,
    },
    /// A finished point.
    Point(Box<PointResult>),
    /// Last line: how the run ended, and run-level warnings.
    End {
        /// How the run ended.
        outcome: Outcome,
        /// Run-level warnings.
        warnings: Vec<String>,
    },
}

impl ResultDoc {
    /// How far the machine moved between its limits at the start and at the end, by
    /// the probes that bear on the limits its points are held against
    /// ([`crate::limits::drift::bearing_on_any`]); `None` without both limits or
    /// when it moved less than the threshold.
    pub fn machine_drift(&self, interleaved: bool) -> Option<crate::limits::drift::Drift> {
        let limits = self.context.limits.as_ref()?;
        let bearing = crate::limits::drift::bearing_on_any(
            self.points
                .iter()
                .map(|p| p.limit.as_ref().map(|l| l.limit.as_str())),
        );
        limits.drift(interleaved, &bearing)
    }

    /// Rebuilds a document from the lines of a JSON Lines stream. A stream cut short
    /// (no `end` line) yields the points it holds, marked as failed.
    pub fn from_stream(records: impl IntoIterator<Item = StreamRecord>) -> Option<ResultDoc> {
        let mut doc: Option<ResultDoc> = None;
        for r in records {
            match r {
                StreamRecord::Context {
                    schema_version,
                    context,
                } => {
                    doc = Some(ResultDoc {
                        schema_version,
                        study: None,
                        context: *context,
                        points: Vec::new(),
                        warnings: Vec::new(),
                        outcome: Outcome::Failed {
                            error: "the stream ended before the run did".into(),
                        },
                        knees: Vec::new(),
                        failed: Vec::new(),
                        ab: None,
                    })
                }
                StreamRecord::Point(p) => doc.as_mut()?.points.push(*p),
                StreamRecord::End { outcome, warnings } => {
                    let d = doc.as_mut()?;
                    d.outcome = outcome;
                    d.warnings = warnings;
                }
            }
        }
        doc
    }
}

/// The knee of one curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Knee {
    /// The curve: its points' parameters, the rate left out.
    pub params: BTreeMap<String, String>,
    /// The knee: the highest offered rate sustained, messages per second; `None`
    /// when no rate was sustained.
    pub knee_per_s: Option<f64>,
    /// The lowest offered rate above the knee found not sustained, messages per
    /// second; `None` when every rate above it measured was (the knee may lie higher).
    pub above_per_s: Option<f64>,
    /// Offered rates below the knee that were not sustained (a sweep's points,
    /// ascending): a stall of the machine in that point, or a trough in the curve.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsustained_below_per_s: Vec<f64>,
    /// The curve's lowest offered rate, messages per second: the reference.
    pub low_rate_per_s: f64,
    /// The p99 latency at the reference rate, nanoseconds.
    pub low_p99_ns: f64,
    /// `sweep` (from a sweep of rates) or `search` (`--rate auto`).
    pub method: String,
    /// Points measured on the curve.
    pub points: usize,
    /// Seconds the search took (`search` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// What a result records of a plugin transport, so that two builds of one plugin are
/// told apart (`xferbench compare`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PluginRecord {
    /// The transport's name in the points (`params.transport`).
    pub transport: String,
    /// The transport's name in its plugin.
    pub name: String,
    /// The plugin's own name.
    pub plugin: String,
    /// The plugin's own version string.
    pub version: String,
    /// The file, as an absolute path.
    pub path: String,
    /// SHA-256 of the file, hex.
    pub sha256: String,
    /// The C header revision it was built with.
    pub abi_version: u32,
}
