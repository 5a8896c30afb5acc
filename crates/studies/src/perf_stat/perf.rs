//! `perf stat`'s counts as points of the study's plan, after callgrind's and
//! before the timed points: one point per pair and build
//! ([`EVENT_PAIRS`] × `a`, `b`) in each of three groups:
//!
//! * [`DEFAULT_BLOCK`]: perf's default event set (T2 shows A of the 1 KiB
//!   benchmark), one run, no warm-up;
//! * [`STALLS`]: the seed's stall events ([`SEED_STALL_EVENTS`] that perf knows on
//!   this CPU), 3 runs (1 with `--quick`), no warm-up;
//! * [`SEARCH`]: every stall, penalty or miss event of `perf list`
//!   ([`stalls::search_candidates`]), 2 runs (1 quick), no warm-up; the writer ranks
//!   them by B/A.
//!
//! Every group's events are known when the plan is made (`perf list` is read
//! then), so all three are points of the one plan; A and B of a pair alternate in
//! the interleaved plan as `ab`'s rounds do. The stall groups are planned only
//! where a hardware PMU answers and the search only where perf can count it; why
//! a group was not planned is in the study's `passes` extra.
//!
//! One run is one benchmark process of the seed's harness under `perf stat -x,`
//! (in chunks of [`stalls::CHUNK`] events, a process per chunk); its figures are
//! perf's rows ([`perf_stat::to_figures`]: `perf_<event>`, its unit, perf's derived
//! figures) and the wall and CPU time of the whole command ([`ELAPSED_S`],
//! [`USER_S`], [`SYS_S`]: perf's own included, as perf's block prints them). A run
//! perf could not count is kept without counts and says why in its point's
//! warnings ([`NOT_COUNTED`]), and so do `<not supported>` events and the seed's
//! events perf does not know here: the timed points still run.

use super::bench::counting_run;
use super::passes::{NO_LAUNCHER, SEED_STALL_EVENTS, Tools};
use std::ffi::OsString;
use xferbench_lab::ab::stalls;
use xferbench_lab::measure::PlannedPoint;
use xferbench_lab::result::RunRecord;
use xferbench_lab::rig::{FigureRules, Rig, RunControl, RunError};
use xferbench_lab::workload::perf_stat::{BenchSpec, Benchmark, Variant};
use xferbench_probes::counters::Participant;
use xferbench_probes::counters::perf_stat::{self, PerfValue};
use xferbench_probes::process::{Launcher, Role};

/// The group of the default block's points.
pub const DEFAULT_BLOCK: &str = "perf-stat";
/// The group of the seed's stall events.
pub const STALLS: &str = "stalls";
/// The group of the stall search.
pub const SEARCH: &str = "search";

/// Wall time of the whole `perf stat` command(s) of a run, seconds (primary).
pub const ELAPSED_S: &str = "elapsed_s";
/// User CPU seconds of the command(s), perf's own included.
pub const USER_S: &str = "user_s";
/// System CPU seconds of the command(s), perf's own included.
pub const SYS_S: &str = "sys_s";

/// The start of the warning of a run perf could not count.
pub const NOT_COUNTED: &str = "perf stat could not count";
/// The start of the warning naming `<not supported>` events.
pub const NOT_SUPPORTED: &str = "perf stat: <not supported> here";
/// The start of the warning naming the seed's events perf does not know here.
pub const UNKNOWN: &str = "not in perf's event tables for this CPU";

/// Wall time of the command, lower is better.
pub const RULES: FigureRules = FigureRules {
    primary: ELAPSED_S,
    higher_is_better: false,
};

/// The pairs whose events are counted: the seed's 1 KiB one and the memory pair.
pub const EVENT_PAIRS: [Benchmark; 2] = [Benchmark::CircularBuffer1Kb, Benchmark::ListWalk];

/// What a point of perf's groups counts.
#[derive(Debug, Clone)]
pub struct PerfCount {
    /// The benchmark and build, as the timed points run it.
    pub spec: BenchSpec,
    /// The events (perf's default set when empty).
    pub events: Vec<String>,
    /// The seed's events perf does not know here (warned on every run).
    pub unknown: Vec<String>,
}

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

const NO_PERF: &str = "perf is not installed (apt-get install linux-perf)";

fn no_pmu_reason() -> String {
    "no hardware PMU here (a VM without PMU passthrough, a container that blocks perf_event_open, \
     or kernel.perf_event_paranoid too high): every hardware event is <not supported>"
        .into()
}

/// Plans perf's groups on this machine: `launcher` starts the benchmarks (none:
/// they are threads, and nothing is planned), `tools` what it has, `list` reads
/// `perf list` (called once, only where a stall group may be planned).
pub fn plan(
    launcher: Option<&Launcher>,
    tools: Tools,
    quick: bool,
    list: impl FnOnce() -> Result<Vec<String>, String>,
) -> PerfPlan {
    let not = |r: String| PerfPlan {
        points: Vec::new(),
        default_block: Some(r.clone()),
        stall_events: Some(r.clone()),
        search: Some(r),
    };
    if launcher.is_none() {
        return not(NO_LAUNCHER.into());
    }
    let search_off = xferbench_lab::ab::search_unavailable(tools.pmu, tools.perf)
        .map(|r| r.trim_start_matches("--search-stalls: ").to_string());
    if !tools.perf {
        return PerfPlan {
            search: search_off.or_else(|| Some(NO_PERF.into())),
            ..not(NO_PERF.into())
        };
    }
    let mut out = PerfPlan {
        points: group(DEFAULT_BLOCK, &[], &[], 1),
        default_block: None,
        stall_events: None,
        search: None,
    };
    if !tools.pmu {
        out.stall_events = Some(no_pmu_reason());
        out.search = search_off.or_else(|| Some(no_pmu_reason()));
        return out;
    }
    let known = match list() {
        Ok(k) => k,
        Err(e) => {
            let r = format!("perf list failed: {e}");
            out.stall_events = Some(r.clone());
            out.search = Some(r);
            return out;
        }
    };
    let wanted: Vec<String> = SEED_STALL_EVENTS.iter().map(|s| s.to_string()).collect();
    let (ok, unknown) = perf_stat::resolve(&wanted, &known);
    if ok.is_empty() {
        out.stall_events = Some(format!("{UNKNOWN}: {}", unknown.join(", ")));
    } else {
        out.points
            .extend(group(STALLS, &ok, &unknown, if quick { 1 } else { 3 }));
    }
    let candidates = stalls::search_candidates(&known);
    match search_off {
        Some(r) => out.search = Some(r),
        None if candidates.is_empty() => {
            out.search = Some("perf list names no stall, penalty or miss event on this CPU".into())
        }
        None => out
            .points
            .extend(group(SEARCH, &candidates, &[], if quick { 1 } else { 2 })),
    }
    out
}

/// One group's points: both builds of every [`EVENT_PAIRS`] benchmark, `runs`
/// runs each and no warm-up.
fn group(
    name: &str,
    events: &[String],
    unknown: &[String],
    runs: usize,
) -> Vec<(PlannedPoint, PerfCount)> {
    EVENT_PAIRS
        .into_iter()
        .flat_map(|bench| [(bench, Variant::A), (bench, Variant::B)])
        .map(|(bench, variant)| {
            let params = [
                ("group", name.to_string()),
                ("pair", super::pair_of(bench).to_string()),
                ("benchmark", bench.name().to_string()),
                ("variant", variant.name().to_string()),
            ];
            let planned = PlannedPoint {
                size_bytes: bench.size() as u64,
                ..PlannedPoint::from_params(params, RULES)
            }
            .with_runs(runs, 0);
            let count = PerfCount {
                spec: BenchSpec::seed(bench, variant),
                events: events.to_vec(),
                unknown: unknown.to_vec(),
            };
            (planned, count)
        })
        .collect()
}

/// The command line of `spec` as a process of `launcher`.
pub fn argv(launcher: &Launcher, spec: &BenchSpec) -> Result<Vec<OsString>, String> {
    let json = serde_json::to_string(spec).expect("a spec serialises");
    let cmd = launcher
        .command(Role::PerfStatBench, [json])
        .map_err(|e| e.to_string())?;
    Ok(std::iter::once(cmd.get_program().to_os_string())
        .chain(cmd.get_args().map(|a| a.to_os_string()))
        .collect())
}

/// One build of one benchmark under `perf stat`, a process per run (and chunk).
pub struct PerfRig {
    count: PerfCount,
    launcher: Launcher,
}

impl PerfRig {
    /// `count` under `perf stat`, its processes started by `launcher`.
    pub fn new(count: PerfCount, launcher: Launcher) -> PerfRig {
        PerfRig { count, launcher }
    }

    fn rows(&self, ctl: &RunControl<'_>) -> Result<Vec<perf_stat::PerfStatRow>, String> {
        let argv = argv(&self.launcher, &self.count.spec)?;
        let mut rows = Vec::new();
        let chunks: Vec<&[String]> = if self.count.events.is_empty() {
            vec![&[][..]]
        } else {
            self.count.events.chunks(stalls::CHUNK).collect()
        };
        for chunk in chunks {
            if ctl.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err("interrupted".into());
            }
            rows.extend(perf_stat::run(chunk, &argv).map_err(|e| e.to_string())?);
        }
        Ok(rows)
    }
}

impl Rig for PerfRig {
    /// `main`, which waits for perf.
    fn participants(&self) -> Vec<Participant> {
        vec![Participant::main()]
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        let messages = self.count.spec.runs as u64;
        let (mut rec, (rows, elapsed_s, user_s, sys_s)) = counting_run(ctl, messages, |ctl| {
            let cpu0 = xferbench_lab::ab::children_cpu();
            let t = std::time::Instant::now();
            let rows = self.rows(ctl);
            let elapsed_s = t.elapsed().as_secs_f64();
            let cpu1 = xferbench_lab::ab::children_cpu();
            (rows, elapsed_s, cpu1.0 - cpu0.0, cpu1.1 - cpu0.1)
        })?;
        let rows = rows.map_or_else(
            |e| {
                ctl.warn(format!("{NOT_COUNTED}: {e}"));
                Vec::new()
            },
            |rows| with_every_event(&self.count.events, rows),
        );
        let unsupported: Vec<&str> = rows
            .iter()
            .filter(|r| r.value == PerfValue::NotSupported)
            .map(|r| r.event.as_str())
            .collect();
        if !unsupported.is_empty() {
            ctl.warn(format!("{NOT_SUPPORTED}: {}", unsupported.join(", ")));
        }
        if !self.count.unknown.is_empty() {
            ctl.warn(format!("{UNKNOWN}: {}", self.count.unknown.join(", ")));
        }
        rec.figures.extend(perf_stat::to_figures(&rows));
        for (k, v) in [(ELAPSED_S, elapsed_s), (USER_S, user_s), (SYS_S, sys_s)] {
            rec.figures.insert(k.into(), v);
        }
        Ok(rec)
    }

    fn finish(self: Box<Self>) -> Result<(), RunError> {
        Ok(())
    }
}

/// `rows` with a `<not counted>` row for each of `events` perf printed nothing
/// for, so that a run's figures name every event it asked for.
pub fn with_every_event(
    events: &[String],
    mut rows: Vec<perf_stat::PerfStatRow>,
) -> Vec<perf_stat::PerfStatRow> {
    for e in events {
        if !rows.iter().any(|r| r.event.eq_ignore_ascii_case(e)) {
            rows.push(perf_stat::PerfStatRow {
                event: e.clone(),
                value: PerfValue::NotCounted,
                unit: String::new(),
                running_pct: None,
                metrics: Vec::new(),
            });
        }
    }
    rows
}

/// The rows of a run of perf's points ([`perf_stat::from_figures`]).
pub fn rows_of(run: &RunRecord) -> Vec<perf_stat::PerfStatRow> {
    perf_stat::from_figures(&run.figures)
}
