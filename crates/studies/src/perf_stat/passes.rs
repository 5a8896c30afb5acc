//! The perf-stat study's passes besides its timed points: where perf is installed,
//! the `perf stat` default block, the seed's stall events and the stall search.
//! Callgrind's instruction and simulated cache-miss counts of every benchmark are
//! points of the study's plan ([`super::callgrind`]); here only why they could not
//! be planned, when they could not. Each pass records what it found or, in one line,
//! why it could not run.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::atomic::AtomicBool;
use std::time::Instant;
use xferbench_lab::ab::stalls::{self, EventComparison};
use xferbench_lab::counters::perf_stat::{self, PerfStatRow, PerfValue};
use xferbench_lab::process::{Launcher, Role};
use xferbench_lab::workload::perf_stat::{BenchSpec, Benchmark, Variant};

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
    fn ok(value: T) -> Self {
        Pass {
            value: Some(value),
            reason: None,
        }
    }

    fn not(reason: impl Into<String>) -> Self {
        Pass {
            value: None,
            reason: Some(reason.into()),
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

/// Everything the passes found; stored in the study's extras under these names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Passes {
    /// Callgrind counts of every benchmark and build: since they are points of the
    /// plan (group `callgrind`), only why they were not planned; results of earlier
    /// versions carry the counts here.
    pub callgrind: Pass<Vec<CallgrindCount>>,
    /// `perf stat`'s default block of A of the 1 KiB benchmark (T2).
    pub default_block: Pass<DefaultBlock>,
    /// The seed's stall events, A vs B, per pair (T3).
    pub stall_events: Pass<Vec<PairEvents>>,
    /// The stall search, per pair (T4).
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

fn argv(launcher: &Launcher, spec: &BenchSpec) -> Result<Vec<OsString>, String> {
    let json = serde_json::to_string(spec).expect("a spec serialises");
    let cmd = launcher
        .command(Role::PerfStatBench, [json])
        .map_err(|e| e.to_string())?;
    Ok(std::iter::once(cmd.get_program().to_os_string())
        .chain(cmd.get_args().map(|a| a.to_os_string()))
        .collect())
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

const NO_LAUNCHER: &str =
    "the benchmarks ran as threads of this process (no launcher): no pass over whole processes";

/// Runs every perf pass that this machine allows; `callgrind` is why callgrind's
/// points were not planned, if they were not ([`callgrind_unavailable`]).
pub fn run_passes(
    launcher: Option<&Launcher>,
    tools: Tools,
    quick: bool,
    callgrind: Option<String>,
    stop: &AtomicBool,
) -> Passes {
    let callgrind = Pass {
        value: None,
        reason: callgrind,
    };
    let Some(launcher) = launcher else {
        return Passes {
            callgrind,
            default_block: Pass::not(NO_LAUNCHER),
            stall_events: Pass::not(NO_LAUNCHER),
            search: Pass::not(NO_LAUNCHER),
        };
    };
    tracing::info!(
        ?tools,
        "perf-stat passes: perf's default block, stall events, search"
    );
    let default_block = default_block_pass(launcher, tools);
    let stall_events = stall_events_pass(launcher, tools, quick, stop);
    let search = search_pass(launcher, tools, quick, stop);
    tracing::info!(
        stalls = ?stall_events.reason,
        search = ?search.reason,
        "perf passes done"
    );
    Passes {
        callgrind,
        default_block,
        stall_events,
        search,
    }
}

fn block_row(r: &PerfStatRow) -> BlockRow {
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

fn default_block_pass(launcher: &Launcher, tools: Tools) -> Pass<DefaultBlock> {
    if !tools.perf {
        return Pass::not("perf is not installed (apt-get install linux-perf)");
    }
    let bench = Benchmark::CircularBuffer1Kb;
    let spec = BenchSpec::seed(bench, Variant::A);
    let run = || -> Result<DefaultBlock, String> {
        let argv = argv(launcher, &spec)?;
        let cpu0 = xferbench_lab::ab::children_cpu();
        let t = Instant::now();
        let rows = perf_stat::run::<OsString>(&[], &argv).map_err(|e| e.to_string())?;
        let elapsed_s = t.elapsed().as_secs_f64();
        let cpu1 = xferbench_lab::ab::children_cpu();
        Ok(DefaultBlock {
            benchmark: bench.name().into(),
            variant: "a".into(),
            rows: rows.iter().map(block_row).collect(),
            elapsed_s,
            user_s: cpu1.0 - cpu0.0,
            sys_s: cpu1.1 - cpu0.1,
        })
    };
    match run() {
        Ok(b) => Pass::ok(b),
        Err(e) => Pass::not(format!("perf stat could not run: {e}")),
    }
}

/// The pairs whose stall events are counted: the seed's 1 KiB one and the memory pair.
const EVENT_PAIRS: [Benchmark; 2] = [Benchmark::CircularBuffer1Kb, Benchmark::ListWalk];

fn no_pmu_reason() -> String {
    "no hardware PMU here (a VM without PMU passthrough, a container that blocks perf_event_open, \
     or kernel.perf_event_paranoid too high): every hardware event is <not supported>"
        .into()
}

fn pairs_pass(
    launcher: &Launcher,
    events: &[String],
    rounds: usize,
    rank: bool,
    stop: &AtomicBool,
) -> Result<Vec<PairEvents>, String> {
    let mut out = Vec::new();
    for bench in EVENT_PAIRS {
        let a = argv(launcher, &BenchSpec::seed(bench, Variant::A))?;
        let b = argv(launcher, &BenchSpec::seed(bench, Variant::B))?;
        let mut rows =
            stalls::count_events(&a, &b, events, rounds, stop).map_err(|e| e.to_string())?;
        if rank {
            stalls::rank(&mut rows);
        }
        out.push(PairEvents {
            benchmark: bench.name().into(),
            comparison: EventComparison {
                rounds,
                rows,
                unknown: Vec::new(),
            },
        });
    }
    Ok(out)
}

fn stall_events_pass(
    launcher: &Launcher,
    tools: Tools,
    quick: bool,
    stop: &AtomicBool,
) -> Pass<Vec<PairEvents>> {
    if !tools.perf {
        return Pass::not("perf is not installed (apt-get install linux-perf)");
    }
    if !tools.pmu {
        return Pass::not(no_pmu_reason());
    }
    let known = match perf_stat::list_events() {
        Ok(k) => k,
        Err(e) => return Pass::not(format!("perf list failed: {e}")),
    };
    let wanted: Vec<String> = SEED_STALL_EVENTS.iter().map(|s| s.to_string()).collect();
    let (ok, unknown) = perf_stat::resolve(&wanted, &known);
    match pairs_pass(launcher, &ok, if quick { 1 } else { 3 }, false, stop) {
        Ok(mut v) => {
            for p in &mut v {
                p.comparison.unknown = unknown.clone();
            }
            let mut pass = Pass::ok(v);
            if !unknown.is_empty() {
                pass.reason = Some(format!(
                    "not in perf's event tables for this CPU: {}",
                    unknown.join(", ")
                ));
            }
            pass
        }
        Err(e) => Pass::not(format!("perf stat failed: {e}")),
    }
}

fn search_pass(
    launcher: &Launcher,
    tools: Tools,
    quick: bool,
    stop: &AtomicBool,
) -> Pass<Vec<PairEvents>> {
    if let Some(r) = xferbench_lab::ab::search_unavailable(tools.pmu, tools.perf) {
        return Pass::not(r.trim_start_matches("--search-stalls: ").to_string());
    }
    let known = match perf_stat::list_events() {
        Ok(k) => k,
        Err(e) => return Pass::not(format!("perf list failed: {e}")),
    };
    let candidates = stalls::search_candidates(&known);
    if candidates.is_empty() {
        return Pass::not("perf list names no stall, penalty or miss event on this CPU");
    }
    match pairs_pass(launcher, &candidates, if quick { 1 } else { 2 }, true, stop) {
        Ok(v) => Pass::ok(v),
        Err(e) => Pass::not(format!("perf stat failed: {e}")),
    }
}
