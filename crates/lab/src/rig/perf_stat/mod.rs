//! The perf-stat rig: one process of the benchmark role per run.
//!
//! # Participants
//!
//! * `main`: this process, which only waits.
//! * the benchmark: a process of [`Role::PerfStatBench`] given a [`BenchSpec`],
//!   started for each run (so its id is not known beforehand: it appears in the
//!   run's CPU rows as `benchmark`, not in [`Rig::participants`]). Without a
//!   [`Launcher`] (tests) the harness runs on this thread.
//!
//! # One run
//!
//! One run is one execution of the seed's harness: set-up, a warm-up run and
//! `runs` timed runs in one process. Its figures: [`figures::TIME_S`], the mean of
//! the timed runs (the one number per benchmark of the seed's table), the fastest
//! and the median, and the common figures of [`aggregate`] with the timed runs as
//! messages and the bytes copied (or nodes visited) as bytes.
//!
//! The same benchmark counted rather than timed has a rig of its own:
//! [`callgrind::CallgrindRig`] under callgrind, [`perf::PerfRig`] under `perf stat`.

pub mod callgrind;
pub mod perf;

use super::{ChannelOutcome, Rig, RunControl, RunError, aggregate};
use crate::record::FigureRules;
use crate::result::RunRecord;
use crate::workload::perf_stat::{BenchOutput, BenchSpec, run_harness};
use std::io::Read;
use std::sync::atomic::Ordering;
use std::time::Duration;
use xferbench_probes::clock::Stamp;
use xferbench_probes::counters::Participant;
use xferbench_probes::cpu::CpuSnapshot;
use xferbench_probes::process::{Launcher, Role, Streams, Supervised};
use xferbench_probes::stats;

/// The figures of a perf-stat run.
pub mod figures {
    /// Mean wall time of the timed runs of the harness, seconds (primary).
    pub const TIME_S: &str = "time_s";
    /// Fastest timed run, seconds.
    pub const TIME_MIN_S: &str = "time_min_s";
    /// Median timed run, seconds.
    pub const TIME_MEDIAN_S: &str = "time_median_s";
    /// CPU seconds (user + sys) of the benchmark process over its timed runs.
    pub const BENCH_CPU_S: &str = "bench_cpu_s";
}

/// Time, lower is better.
pub const RULES: FigureRules = FigureRules {
    primary: figures::TIME_S,
    higher_is_better: false,
};

/// One visit of a perf-stat point.
pub struct PerfStatRig {
    spec: BenchSpec,
    launcher: Option<Launcher>,
}

impl PerfStatRig {
    /// The rig of one point: a benchmark process per run of `launcher` (a thread of
    /// this process without one).
    pub fn new(spec: BenchSpec, launcher: Option<Launcher>) -> PerfStatRig {
        PerfStatRig { spec, launcher }
    }

    fn run_process(
        &self,
        launcher: &Launcher,
        ctl: &RunControl<'_>,
    ) -> Result<BenchOutput, RunError> {
        let json = serde_json::to_string(&self.spec).expect("a spec serialises");
        let mut child = launcher
            .spawn(Role::PerfStatBench, [json], Streams::OUTPUT)
            .map_err(|e| RunError::Participant(format!("cannot start the benchmark: {e}")))?;
        let mut stdout = child.take_stdout().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let r = stdout.read_to_end(&mut out).map(|_| out);
            let _ = tx.send(r);
        });
        let mut started = xferbench_probes::clock::Watchdog::start();
        let out = loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(r) => break r,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    break Err(std::io::Error::other("the output reader stopped"));
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
            if ctl.stop.load(Ordering::Relaxed) {
                child.stop();
                return Err(RunError::Interrupted);
            }
            if started.elapsed() > ctl.hang_timeout {
                let ended = child.stop();
                return Err(RunError::Participant(format!(
                    "the benchmark ran longer than {} s and was stopped {ended} (raise --timeout if this is expected)",
                    ctl.hang_timeout.as_secs()
                )));
            }
        };
        let ended = child
            .exited_within(Duration::from_secs(10))
            .unwrap_or_else(|| child.stop());
        if !ended.success() {
            return Err(RunError::Participant(format!("the benchmark {ended}")));
        }
        let out = out.map_err(|e| RunError::Participant(format!("the benchmark's output: {e}")))?;
        serde_json::from_slice(&out)
            .map_err(|e| RunError::Participant(format!("the benchmark printed no result: {e}")))
    }
}

impl Rig for PerfStatRig {
    fn participants(&self) -> Vec<Participant> {
        vec![Participant::main()]
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        if ctl.stop.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        ctl.window_started();
        let out = match &self.launcher {
            Some(l) => self.run_process(l, ctl),
            None => run_harness(&self.spec).map_err(RunError::Config),
        };
        ctl.window_ended();
        let out = out?;
        Ok(record(&out, ctl.take_counters()))
    }

    fn finish(self: Box<Self>) -> Result<(), RunError> {
        Ok(())
    }
}

/// The run's record from what the harness measured.
pub fn record(
    out: &BenchOutput,
    counters: Option<xferbench_probes::counters::RunCounters>,
) -> RunRecord {
    let runs = out.times_s.len() as u64;
    let channel = ChannelOutcome {
        start: out.start,
        end: out.end,
        messages: runs,
        bytes: out.work_per_run * runs,
        latency: None,
        integrity: None,
        schedule: None,
    };
    let mut record = aggregate(vec![channel], vec![out.cpu.clone()]);
    let times = &out.times_s;
    let f = &mut record.figures;
    f.insert(figures::TIME_S.into(), stats::mean(times).unwrap_or(0.0));
    f.insert(
        figures::TIME_MIN_S.into(),
        times.iter().copied().reduce(f64::min).unwrap_or(0.0),
    );
    f.insert(
        figures::TIME_MEDIAN_S.into(),
        stats::median(times).unwrap_or(0.0),
    );
    f.insert(figures::BENCH_CPU_S.into(), out.cpu.user_s + out.cpu.sys_s);
    record.counters = counters;
    record
}

/// The function callgrind collects in: one timed run of the harness.
pub const CALLGRIND_COLLECT: &str = "xferbench_lab::workload::perf_stat::perfstat_timed_run*";

/// Runs `spec` once under `valgrind --tool=callgrind --cache-sim=yes`, collecting
/// only inside the timed runs, and returns callgrind's totals (instructions and
/// simulated cache misses) over all of its runs, warm-up included.
pub fn callgrind_totals(
    launcher: &Launcher,
    spec: &BenchSpec,
) -> Result<std::collections::BTreeMap<String, f64>, String> {
    spec.check()?;
    let tmp = tempfile::Builder::new()
        .prefix("xferbench-perfstat-callgrind-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    let args =
        xferbench_probes::counters::callgrind::valgrind_args(tmp.path(), Some(CALLGRIND_COLLECT));
    let wrapped = launcher
        .clone()
        .wrapped(xferbench_probes::process::Wrapper::new("valgrind", args));
    let json = serde_json::to_string(spec).expect("a spec serialises");
    let mut cmd = wrapped
        .command(Role::PerfStatBench, [json])
        .map_err(|e| e.to_string())?;
    let out = cmd
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot start valgrind: {e}"))?;
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = text.lines().rev().take(3).collect();
        return Err(format!(
            "valgrind {}: {}",
            xferbench_probes::process::describe_status(out.status),
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    let mut totals =
        xferbench_probes::counters::callgrind::sum_dir(tmp.path()).map_err(|e| e.to_string())?;
    xferbench_probes::counters::derive(&mut totals);
    Ok(totals)
}

/// One run of a counting rig (callgrind's, perf's): `count` between the window's
/// edges, as a record of that window with this process's CPU and `messages`
/// (counters too, if a source ran), and what `count` returned. Ctrl-C before or
/// during the count ends the run as interrupted.
fn counting_run<T>(
    ctl: &mut RunControl<'_>,
    messages: u64,
    count: impl FnOnce(&RunControl<'_>) -> T,
) -> Result<(RunRecord, T), RunError> {
    let stopped = |ctl: &RunControl<'_>| ctl.stop.load(std::sync::atomic::Ordering::Relaxed);
    if stopped(ctl) {
        return Err(RunError::Interrupted);
    }
    ctl.window_started();
    let cpu0 = CpuSnapshot::now();
    let start = Stamp::now();
    let counted = count(ctl);
    let end = Stamp::now();
    let cpu1 = CpuSnapshot::now();
    ctl.window_ended();
    if stopped(ctl) {
        return Err(RunError::Interrupted);
    }
    let channel = ChannelOutcome {
        start,
        end,
        messages,
        bytes: 0,
        latency: None,
        integrity: None,
        schedule: None,
    };
    let main = cpu0.until(&cpu1, "main", std::process::id());
    let mut rec = aggregate(vec![channel], vec![main]);
    rec.counters = ctl.take_counters();
    Ok((rec, counted))
}
