//! One build of one perf-stat benchmark under `perf stat -x,`, a process per run
//! (in chunks of [`CHUNK`] events, a process per chunk): the perf-stat
//! study's `perf stat` points. A run's figures are perf's rows
//! ([`perf_stat::to_figures`]: `perf_<event>`, its unit, perf's derived figures)
//! and the wall and CPU time of the whole command ([`ELAPSED_S`], [`USER_S`],
//! [`SYS_S`]: perf's own included, as perf's block prints them). A run perf could
//! not count is kept without counts and says why in its point's warnings
//! ([`NOT_COUNTED`]), and so do `<not supported>` events ([`NOT_SUPPORTED`]) and
//! the seed's events perf does not know here ([`UNKNOWN`]).

use super::counting_run;
use crate::result::RunRecord;
use crate::rig::{Rig, RunControl, RunError};
use crate::workload::perf_stat::BenchSpec;
use std::ffi::OsString;
use xferbench_probes::counters::Participant;
use xferbench_probes::counters::perf_stat::CHUNK;
use xferbench_probes::counters::perf_stat::{self, PerfValue};
use xferbench_probes::process::{Launcher, Role};

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
            self.count.events.chunks(CHUNK).collect()
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
            let cpu0 = xferbench_probes::cpu::children_cpu();
            let t = std::time::Instant::now();
            let rows = self.rows(ctl);
            let elapsed_s = t.elapsed().as_secs_f64();
            let cpu1 = xferbench_probes::cpu::children_cpu();
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
