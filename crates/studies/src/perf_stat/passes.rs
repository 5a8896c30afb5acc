//! The perf-stat study's passes besides its timed points, as its `passes` extra
//! records them: callgrind's counts ([`super::callgrind`]) and `perf stat`'s default
//! block, the seed's stall events and the stall search ([`super::perf`]) are all
//! points of the study's plan, so the extra says only why a pass was not planned,
//! when it was not. Result files made before carry what the passes found here too:
//! the writer reads them from these types.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use xferbench_lab::ab::stalls::EventComparison;
use xferbench_lab::measure::PlannedPoint;
use xferbench_lab::rig::perf_stat::perf::PerfCount;
use xferbench_lab::workload::perf_stat::Benchmark;
use xferbench_probes::counters::perf_stat::{PerfStatRow, PerfValue};
use xferbench_probes::process::Launcher;

/// The seed's stall events (`perf stat -e …` of the seed), in its order.
pub const SEED_STALL_EVENTS: [&str; 5] = [
    "instructions",
    "stalled-cycles-frontend",
    "uops_executed.stall_cycles",
    "resource_stalls.any",
    "cycle_activity.stalls_mem_any",
];

/// Callgrind's counts of one build of one benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallgrindCount {
    /// The benchmark.
    pub benchmark: String,
    /// `a` or `b`.
    pub variant: String,
    /// Iterations callgrind ran (one run, no warm-up).
    pub iterations: u64,
    /// Factor from those iterations to one timed run of the seed's harness.
    pub scale: f64,
    /// Counts per timed run (scaled): `Ir`, `D1mr`, … and `estimated-cycles`.
    pub per_run: BTreeMap<String, f64>,
}

/// A pass's outcome: measured, or why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pass<T> {
    /// What it found, when it ran.
    pub value: Option<T>,
    /// Why it did not run, or what it could not count.
    pub reason: Option<String>,
}

impl<T> Pass<T> {
    /// Not planned, for `reason` (planned when `None`: the points hold the values).
    pub fn reason(reason: Option<String>) -> Self {
        Pass {
            value: None,
            reason,
        }
    }
}

/// One line of perf's default block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockRow {
    /// The event.
    pub event: String,
    /// Its count, when counted.
    pub value: Option<f64>,
    /// `counted`, `not supported` or `not counted`.
    pub status: String,
    /// Its unit (`msec`).
    pub unit: String,
    /// perf's derived figures (`3.860 GHz`).
    pub metrics: Vec<(f64, String)>,
}

/// `perf stat`'s default block for one run of one side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DefaultBlock {
    /// The benchmark.
    pub benchmark: String,
    /// The side.
    pub variant: String,
    /// The rows perf printed.
    pub rows: Vec<BlockRow>,
    /// Wall time of the whole command, seconds.
    pub elapsed_s: f64,
    /// User CPU seconds of the command (and perf).
    pub user_s: f64,
    /// System CPU seconds of the command (and perf).
    pub sys_s: f64,
}

/// Events of one pair, A vs B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairEvents {
    /// The benchmark.
    pub benchmark: String,
    /// The counts.
    pub comparison: EventComparison,
}

/// Why each pass was not planned (and, in result files made before, what each
/// found); stored in the study's extras under these names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Passes {
    /// Callgrind counts of every benchmark and build: since they are points of the
    /// plan (group `callgrind`), only why they were not planned; results of earlier
    /// versions carry the counts here.
    pub callgrind: Pass<Vec<CallgrindCount>>,
    /// `perf stat`'s default block of A of the 1 KiB benchmark (T2); since it is
    /// points of the plan (group `perf-stat`), only why it was not planned.
    pub default_block: Pass<DefaultBlock>,
    /// The seed's stall events, A vs B, per pair (T3); points of group `stalls`.
    pub stall_events: Pass<Vec<PairEvents>>,
    /// The stall search, per pair (T4); points of group `search`.
    pub search: Pass<Vec<PairEvents>>,
}

/// What the passes need to know about the machine.
#[derive(Debug, Clone, Copy)]
pub struct Tools {
    /// A hardware PMU answers.
    pub pmu: bool,
    /// perf is installed.
    pub perf: bool,
    /// valgrind is installed.
    pub valgrind: bool,
}

impl BlockRow {
    /// A row of perf's CSV.
    pub fn of(r: &PerfStatRow) -> BlockRow {
        BlockRow {
            event: r.event.clone(),
            value: r.count(),
            status: match r.value {
                PerfValue::Counted(_) => "counted",
                PerfValue::NotSupported => "not supported",
                PerfValue::NotCounted => "not counted",
            }
            .into(),
            unit: r.unit.clone(),
            metrics: r.metrics.clone(),
        }
    }
}

impl Passes {
    /// The extra of a plan: why callgrind's points (`callgrind`) and each of perf's
    /// groups were not planned, when they were not.
    pub fn not_planned(callgrind: Option<String>, perf: &PerfPlan) -> Passes {
        Passes {
            callgrind: Pass::reason(callgrind),
            default_block: Pass::reason(perf.default_block.clone()),
            stall_events: Pass::reason(perf.stall_events.clone()),
            search: Pass::reason(perf.search.clone()),
        }
    }
}

impl Tools {
    /// Probes this machine.
    pub fn probe() -> Tools {
        let runs = |p: &str| {
            std::process::Command::new(p)
                .arg("--version")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        Tools {
            pmu: xferbench_lab::context::pmu_available(),
            perf: runs("perf"),
            valgrind: runs("valgrind"),
        }
    }
}

/// Whether this process runs in a container (Docker, Podman, Kubernetes), where
/// seccomp or missing capabilities often block `perf_event_open`.
pub fn in_container() -> bool {
    std::path::Path::new("/.dockerenv").exists()
        || std::path::Path::new("/run/.containerenv").exists()
        || std::fs::read_to_string("/proc/1/cgroup").is_ok_and(|c| {
            ["docker", "kubepods", "containerd", "libpod", "lxc"]
                .iter()
                .any(|k| c.contains(k))
        })
}

/// Iterations callgrind runs of `bench` (one run, no warm-up): a tenth of the
/// seed's (a hundredth of the 1 KiB one with `quick`), the whole walk.
pub fn callgrind_iterations(bench: Benchmark, quick: bool) -> u64 {
    match (bench, quick) {
        (Benchmark::CircularBuffer1Kb, false) => 1_000,
        (Benchmark::CircularBuffer1Kb, true) => 100,
        (Benchmark::CircularBuffer1Mb, false) => 2,
        (Benchmark::CircularBuffer1Mb, true) => 1,
        (Benchmark::ListWalk, _) => bench.iterations(),
    }
}

/// Why callgrind's points cannot be planned here, when they cannot: no launcher
/// (the benchmarks are threads of this process) or no valgrind.
pub fn callgrind_unavailable(launcher: Option<&Launcher>, tools: Tools) -> Option<String> {
    if launcher.is_none() {
        return Some(NO_LAUNCHER.into());
    }
    (!tools.valgrind).then(|| {
        "valgrind is not installed (apt-get install valgrind): no instruction counts without a PMU"
            .into()
    })
}

/// Why no pass over whole processes could be planned without a launcher.
pub const NO_LAUNCHER: &str =
    "the benchmarks ran as threads of this process (no launcher): no pass over whole processes";

/// perf's points, and why each group that is not among them was not planned
/// (`default`, `stalls`, `search`).
pub struct PerfPlan {
    /// The points, group by group.
    pub points: Vec<(PlannedPoint, PerfCount)>,
    /// Why the default block was not planned.
    pub default_block: Option<String>,
    /// Why the seed's stall events were not planned.
    pub stall_events: Option<String>,
    /// Why the stall search was not planned.
    pub search: Option<String>,
}
