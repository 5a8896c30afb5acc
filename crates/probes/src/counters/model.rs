//! What every counter source shares: the counters' names, who is counted
//! ([`Participant`]), what a run and a point record ([`RunCounters`],
//! [`PointCounters`]), the [`CounterSource`] trait and the figures derived from
//! others ([`derive`]).

use crate::process::Launcher;
use crate::stats::Estimate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counter names as recorded in results.
pub mod name {
    /// CPU time of the process's threads, nanoseconds.
    pub const TASK_CLOCK: &str = "task-clock";
    /// Context switches.
    pub const CONTEXT_SWITCHES: &str = "context-switches";
    /// Migrations between CPUs.
    pub const CPU_MIGRATIONS: &str = "cpu-migrations";
    /// Page faults.
    pub const PAGE_FAULTS: &str = "page-faults";
    /// Retired instructions (PMU).
    pub const INSTRUCTIONS: &str = "instructions";
    /// Core cycles (PMU).
    pub const CYCLES: &str = "cycles";
    /// Instructions per cycle, derived.
    pub const IPC: &str = "ipc";
    /// Cycles the front end delivered nothing (PMU).
    pub const STALLED_FRONTEND: &str = "stalled-cycles-frontend";
    /// Cycles the back end retired nothing (PMU).
    pub const STALLED_BACKEND: &str = "stalled-cycles-backend";
    /// Last-level cache misses (PMU).
    pub const CACHE_MISSES: &str = "cache-misses";
    /// Mispredicted branches (PMU).
    pub const BRANCH_MISSES: &str = "branch-misses";
    /// Branch instructions retired (PMU).
    pub const BRANCHES: &str = "branches";
    /// Callgrind: instructions executed (simulated).
    pub const IR: &str = "Ir";
    /// Callgrind: estimated cycles, `Ir + 10·(I1mr + D1mr + D1mw) + 100·(ILmr + DLmr + DLmw)`.
    pub const ESTIMATED_CYCLES: &str = "estimated-cycles";
}

/// Which counters `--counters` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CounterMode {
    /// None.
    #[default]
    Off,
    /// `perf_event_open` counters (software always, hardware with a PMU).
    PerfEvent,
    /// Simulated counts of the serving side under callgrind.
    Callgrind,
}

/// A participating process: its name in results (`main`, `peer0`, …) and its pid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participant {
    /// Name: `main` for the xferbench process, `peerN` for the peer of channel N.
    /// Studies may use their own names (`memory-mock`, `remote`).
    pub name: String,
    /// Process id.
    pub pid: u32,
}

impl Participant {
    /// The xferbench process itself, named `main`.
    pub fn main() -> Participant {
        Participant {
            name: "main".into(),
            pid: std::process::id(),
        }
    }
}

/// The counters of one process over one window (or one whole process lifetime).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProcessCounters {
    /// Participant name (`main`, `peer0`, …).
    pub role: String,
    /// Process id.
    pub pid: u32,
    /// Counter values by name (see [`name`]).
    pub values: BTreeMap<String, f64>,
}

/// The counters of all participants in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunCounters {
    /// `perf_event` or `callgrind`.
    pub source: String,
    /// True when the figures come from a simulation (callgrind), not the hardware.
    pub simulated: bool,
    /// One entry per participating process.
    pub processes: Vec<ProcessCounters>,
    /// Counters asked for but not supported here (`<not supported>` in `perf stat`).
    pub unsupported: Vec<String>,
}

/// The counters of a point, summarised over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PointCounters {
    /// `perf_event` or `callgrind`.
    pub source: String,
    /// True for simulated figures (callgrind).
    pub simulated: bool,
    /// What the figures cover, in words.
    pub covers: String,
    /// Counters asked for but not supported here.
    pub unsupported: Vec<String>,
    /// Every counter summed over all processes, summarised over the runs.
    pub total: BTreeMap<String, Estimate>,
    /// Every counter of each process, summarised over the runs.
    pub processes: Vec<ProcessSummary>,
}

/// One process's counters over the runs of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProcessSummary {
    /// Participant name.
    pub role: String,
    /// Counter values by name.
    pub values: BTreeMap<String, Estimate>,
}

/// Why a counter source could not start.
#[derive(Debug, thiserror::Error)]
pub enum CounterStartError {
    /// A tool the source needs is not installed.
    #[error("{tool} is not installed; {fix}")]
    Missing {
        /// The tool.
        tool: &'static str,
        /// How to install it.
        fix: &'static str,
    },
}

/// A way of counting what participants do; see the module doc for the contract.
pub trait CounterSource {
    /// The launcher peers are started with, for example under a tool with
    /// [`Launcher::wrapped`] (default: unchanged).
    fn wrap_peer(&self, launcher: Launcher) -> Launcher {
        launcher
    }
    /// A measured window starts now for these participants.
    fn window_started(&mut self, participants: &[Participant]);
    /// The window ended; the counters of this run, if this source counts per run.
    fn window_ended(&mut self) -> Option<RunCounters>;
    /// All peers of the point have exited; counters of the whole point, if this
    /// source counts per process lifetime. Warnings go to `warnings`.
    fn point_finished(
        &mut self,
        participants: &[Participant],
        warnings: &mut Vec<String>,
    ) -> Option<RunCounters>;
}

/// Derives figures from others: `ipc` from `instructions` and `cycles`, and
/// `estimated-cycles` from callgrind's events.
pub fn derive(values: &mut BTreeMap<String, f64>) {
    if let (Some(i), Some(c)) = (values.get(name::INSTRUCTIONS), values.get(name::CYCLES))
        && *c > 0.0
    {
        let ipc = i / c;
        values.insert(name::IPC.into(), ipc);
    }
    if let Some(est) = estimated_cycles(values) {
        values.insert(name::ESTIMATED_CYCLES.into(), est);
    }
}

/// `Ir + 10·(I1mr + D1mr + D1mw) + 100·(ILmr + DLmr + DLmw)`, when `Ir` and the cache
/// events are present.
pub fn estimated_cycles(v: &BTreeMap<String, f64>) -> Option<f64> {
    let get = |k: &str| v.get(k).copied();
    let ir = get("Ir")?;
    let l1 = get("I1mr")? + get("D1mr")? + get("D1mw")?;
    let ll = get("ILmr")? + get("DLmr")? + get("DLmw")?;
    Some(ir + 10.0 * l1 + 100.0 * ll)
}
