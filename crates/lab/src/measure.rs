//! The point loop: the one measurement path of `run` and every study.
//!
//! A plan is a list of points ([`PlannedPoint`]) and a [`Bench`] that stands up a
//! [`Rig`](crate::control::Rig) for any of them. [`run_plan`] visits the points, runs each rig's warm-up
//! and measured runs, summarises every figure into an [`Estimate`] with a confidence
//! interval, adds the warnings (noisy, short windows, integrity), records counters
//! and profiles, and hands every finished point to the [`Observer`]s.
//!
//! # Order of runs
//!
//! * **Sequential** (the default of `run`): all runs of point A, then all of B, … One
//!   visit per point: the rig is started once, `warmup` runs are discarded, `runs`
//!   are kept.
//! * **Interleaved** (`--interleave`, the default of studies that compare variants):
//!   round-robin, A, B, C, A, B, C, … `runs` rounds of one visit per point; each visit
//!   starts the point's rig afresh, discards `warmup` runs and keeps one. On a machine
//!   whose speed drifts by 2–10× within minutes, back-to-back points compare different
//!   machines; interleaved points share the drift. It costs the rig start-up and the
//!   warm-up once per round instead of once per point; a bench whose points need no
//!   warm-up per visit (`ab`'s commands, [`Bench::warm_up_once`]) warms each point up
//!   on its first visit only.
//!
//! A point may carry its own run count ([`PlannedPoint::runs`]): its measured runs
//! and its warm-up per visit, whatever the plan's. Sequential plans visit it once
//! for them; interleaved ones visit it in each of the first `runs` rounds only (a
//! point of one run is visited in the first round, beside the others' first
//! visits). A deterministic count (callgrind) or a calibration runs so inside the
//! study's plan, in the same document as the timed points.
//!
//! Every kept run carries its `sequence`, its position in the whole plan's order of
//! measured runs, so the order is recorded in the result.
//!
//! # Statistics
//!
//! Every figure of [`RunRecord::figures`] is summarised over the kept runs by
//! [`Estimate::from_values`] (median, spread, outliers, an order-statistic interval of
//! the median at its stated level). The point's primary figure, declared by its
//! workload ([`FigureRules`](crate::record::FigureRules)), decides the noisy warning.
//!
//! The file is one loop and its unit tests on the fake rig (about half of it); the
//! tests stay beside the loop they pin down.

use crate::control::{RunControl, RunError};
use crate::limits::drift::{self, DriftLog};
use crate::limits::fraction::{self, LimitFraction};
use crate::limits::{Limits, MachineLimits, Watch};
use crate::observer::Observer;
pub use crate::plan::{Bench, Judge, PlannedPoint, RunCount, RunProgress, describe_params};
use crate::result::{
    ChannelRun, ChannelSummary, Context, FailedPoint, Outcome, PointResult, Primary, ResultDoc,
    RunRecord, SCHEMA_VERSION, figure,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use xferbench_probes::contention::{MachineLoad, PointContention, ProcFs};
use xferbench_probes::counters::{self, CounterMode, RunCounters};
use xferbench_probes::stats::Estimate;
use xferbench_probes::verify::Integrity;

/// Run control shared by every point of a plan.
#[derive(Debug, Clone)]
pub struct LoopOptions {
    /// Measured runs per point.
    pub runs: usize,
    /// Discarded warm-up runs per visit.
    pub warmup: usize,
    /// Round-robin across points instead of all runs of one point at a time.
    pub interleave: bool,
    /// A run with no progress for this long is declared hung.
    pub hang_timeout: Duration,
    /// Counters to record per participant (`--counters`).
    pub counters: CounterMode,
    /// Profile one participant of every point (`--profile`, `--profile-peer`).
    pub profile: Option<xferbench_probes::profile::ProfileRequest>,
    /// Measure the machine's limits at the start and end, and watch it for drift
    /// between points ([`crate::limits`]); `None` (`--no-limits`) does neither.
    pub watch: Option<Watch>,
    /// Open-ended runs: each run lasts until the stop flag (Ctrl-C), not for a count
    /// or a duration. The rig sees it in [`RunControl::until_stopped`] and returns the
    /// run it was doing when the flag rose; the loop keeps that run, summarises its
    /// point and ends the plan as [`Outcome::Complete`]: a stop is the planned end, and
    /// nothing finished is lost. `false`: a stop interrupts ([`Outcome::Interrupted`]).
    pub until_stopped: bool,
    /// What the systems measured say of a finished point (`judge::LAB` for the lab's).
    pub judge: &'static dyn Judge,
}

impl LoopOptions {
    /// The plan's run count, for points that have none of their own.
    pub fn run_count(&self) -> RunCount {
        RunCount {
            runs: self.runs,
            warmup: self.warmup,
        }
    }
}

/// What one visit of a point brought back.
struct Visit {
    records: Vec<RunRecord>,
    point_counters: Option<RunCounters>,
    /// [`Rig::chosen`].
    chosen: BTreeMap<String, String>,
}

/// Runs a plan and returns the document of everything that finished, whatever
/// happened: on Ctrl-C (`stop`) the outcome is [`Outcome::Interrupted`]; on a failed
/// point or observer it is [`Outcome::Failed`] with the error's whole cause chain.
pub fn run_plan(
    context: Context,
    bench: &mut dyn Bench,
    opts: &LoopOptions,
    stop: &AtomicBool,
    observers: &mut [&mut dyn Observer],
) -> ResultDoc {
    let mut doc = open_document(context, opts);
    let planned: Vec<PlannedPoint> = bench.points().to_vec();
    let proc = bench.machine_load();
    let load = proc.as_ref().map(MachineLoad::starting);
    if !stop.load(Ordering::Relaxed) {
        measure_start_limits(&mut doc, opts);
    }
    for o in observers.iter_mut() {
        if let Err(e) = o.sweep_started(&doc.context, &planned) {
            doc.outcome = failed(&e);
            return finish(doc, observers);
        }
    }
    let mut walk = Walk::new(&planned, opts, proc.as_ref());
    if walk.run(&mut doc, bench, stop, observers) == Flow::End && opts.interleave {
        walk.summarise_partial(&mut doc, observers);
    }
    // Points finish out of order when interleaved ones have their own run counts
    // (or are partial): the document lists them in plan order.
    doc.points.sort_by_key(|p| p.index);
    name_first_failure(&mut doc);
    record_load(&mut doc, load, proc.as_ref());
    hold_at_the_end(&mut doc, &walk, opts);
    finish(doc, observers)
}

/// A document for a plan about to start: the build's and the counters' warnings.
fn open_document(context: Context, opts: &LoopOptions) -> ResultDoc {
    let mut doc = ResultDoc {
        schema_version: SCHEMA_VERSION,
        study: None,
        context,
        points: Vec::new(),
        warnings: Vec::new(),
        outcome: Outcome::Complete,
        knees: Vec::new(),
        failed: Vec::new(),
        ab: None,
    };
    if let Some(w) = doc.context.build.as_ref().and_then(|b| b.warning()) {
        doc.warnings.push(w);
    }
    if opts.counters == CounterMode::PerfEvent
        && !doc.context.capabilities.pmu
        && let Some(note) = &doc.context.capabilities.pmu_note
    {
        doc.warnings.push(format!("counters: {note}"));
    }
    doc
}

/// The machine's limits at the start, unless not watched or already known.
fn measure_start_limits(doc: &mut ResultDoc, opts: &LoopOptions) {
    let Some(w) = &opts.watch else { return };
    if doc.context.limits.is_some() {
        return;
    }
    let start = w.probe.limits();
    for f in start.findings() {
        doc.warnings.push(format!(
            "slow copy placement: {f}; the workloads' buffers start on a page, which \
             avoids it (see docs/limits.md)"
        ));
    }
    doc.context.limits = Some(MachineLimits {
        start,
        end: None,
        drift_threshold: w.drift_threshold,
    });
}

fn failed(e: &dyn std::error::Error) -> Outcome {
    Outcome::Failed { error: chain(e) }
}

/// Whether the walk through a plan goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Go,
    /// It ended before its last step: stopped, interrupted or failed
    /// (`doc.outcome` says which), or an open-ended run's planned end.
    End,
}

/// The walk through a plan's schedule, and what it gathered per point until each
/// point is summarised.
struct Walk<'a> {
    planned: &'a [PlannedPoint],
    opts: &'a LoopOptions,
    proc: Option<&'a ProcFs>,
    drift_log: DriftLog,
    /// Per point: the first drift sample of its span.
    first_sample: Vec<usize>,
    /// Per run (by sequence): the sample taken just before its visit, the floor it
    /// is held against.
    sample_before: Vec<usize>,
    /// Per point: the kept runs and point-level counters gathered so far.
    kept: Vec<Vec<RunRecord>>,
    point_counters: Vec<Vec<RunCounters>>,
    chosen: Vec<BTreeMap<String, String>>,
    warnings: Vec<Vec<String>>,
    /// Points that failed in a plan that goes on past them.
    dead: Vec<bool>,
    sequence: usize,
}

impl<'a> Walk<'a> {
    fn new(planned: &'a [PlannedPoint], opts: &'a LoopOptions, proc: Option<&'a ProcFs>) -> Self {
        let n = planned.len();
        Walk {
            planned,
            opts,
            proc,
            drift_log: DriftLog::default(),
            first_sample: vec![0; n],
            sample_before: Vec::new(),
            kept: (0..n).map(|_| Vec::new()).collect(),
            point_counters: (0..n).map(|_| Vec::new()).collect(),
            chosen: vec![BTreeMap::new(); n],
            warnings: (0..n).map(|_| Vec::new()).collect(),
            dead: vec![false; n],
            sequence: 0,
        }
    }

    /// Visits the schedule's steps in order; [`Flow::End`] when it stopped early.
    fn run(
        &mut self,
        doc: &mut ResultDoc,
        bench: &mut dyn Bench,
        stop: &AtomicBool,
        observers: &mut [&mut dyn Observer],
    ) -> Flow {
        let schedule = schedule(self.planned, self.opts);
        // The step of each point's last visit: once it is done the point is summarised.
        let mut last_step = vec![0; self.planned.len()];
        for (step, &(index, _)) in schedule.iter().enumerate() {
            last_step[index] = step;
        }
        tracing::info!(
            points = self.planned.len(),
            visits = schedule.len(),
            runs = self.opts.runs,
            warmup = self.opts.warmup,
            interleave = self.opts.interleave,
            "plan started"
        );
        for (step, &(index, runs)) in schedule.iter().enumerate() {
            if self.dead[index] {
                continue;
            }
            if stop.load(Ordering::Relaxed) {
                doc.outcome = Outcome::Interrupted;
                return Flow::End;
            }
            // A new round: the plan's first visit, or one of a point not after the last.
            let round_starts = step == 0 || index <= schedule[step - 1].0;
            let step = Step {
                index,
                runs,
                round_starts,
                last: step == last_step[index],
            };
            if self.step(step, doc, bench, stop, observers) == Flow::End {
                return Flow::End;
            }
        }
        Flow::Go
    }

    /// One visit of one point, and the point's summary when it was its last.
    fn step(
        &mut self,
        step: Step,
        doc: &mut ResultDoc,
        bench: &mut dyn Bench,
        stop: &AtomicBool,
        observers: &mut [&mut dyn Observer],
    ) -> Flow {
        let (index, opts) = (step.index, self.opts);
        let first_visit = self.kept[index].is_empty();
        if let Some(w) = &opts.watch {
            // Between points; in an interleaved plan, between rounds.
            if !opts.interleave || step.round_starts {
                self.drift_log.sample(|| w.probe.drift_sample());
            }
            if first_visit {
                self.first_sample[index] = self.drift_log.latest();
            }
        }
        let before = self.drift_log.latest();
        if first_visit || opts.interleave {
            for o in observers.iter_mut() {
                if let Err(e) = o.point_started(index, &self.planned[index]) {
                    doc.outcome = failed(&e);
                    return Flow::End;
                }
            }
        }
        let mut on_run = |p| observers.iter_mut().for_each(|o| o.run_finished(index, p));
        let continued = xferbench_probes::clock::continued();
        let count = RunCount {
            runs: step.runs,
            warmup: if first_visit || !bench.warm_up_once() {
                self.planned[index].run_count(opts.run_count()).warmup
            } else {
                0
            },
        };
        let warnings = &mut self.warnings[index];
        let visited = visit(
            bench,
            index,
            count,
            opts,
            stop,
            self.proc,
            warnings,
            &mut on_run,
        );
        self.drift_log.visited();
        if xferbench_probes::clock::continued() != continued
            && !warnings.iter().any(|w| w.starts_with(PAUSED))
        {
            warnings.push(format!(
                "{PAUSED} the process was stopped and continued (Ctrl-Z and fg, or SIGSTOP \
                 and SIGCONT) while this point ran; the pause lies inside its runs' windows \
                 and latencies: rerun it"
            ));
        }
        // An open-ended run ended by the stop flag: the plan's planned end.
        let ended = opts.until_stopped && visited.is_ok() && stop.load(Ordering::Relaxed);
        match visited {
            Ok(v) => self.keep(index, v, before),
            Err(RunError::Interrupted) => {
                doc.outcome = Outcome::Interrupted;
                return Flow::End;
            }
            Err(e) => return self.point_failed(index, &e, doc, bench.keep_going()),
        }
        // A point is finished once its last visit is done: in order for sequential
        // plans, all in the last round for interleaved ones.
        if (step.last || ended) && self.finish_point(index, doc, observers) == Flow::End {
            return Flow::End;
        }
        if ended { Flow::End } else { Flow::Go }
    }

    /// Keeps a visit's runs, numbered in the point and in the plan.
    fn keep(&mut self, index: usize, v: Visit, before: usize) {
        for mut r in v.records {
            r.run = self.kept[index].len();
            r.sequence = Some(self.sequence);
            self.sample_before.push(before);
            self.sequence += 1;
            self.kept[index].push(r);
        }
        self.point_counters[index].extend(v.point_counters);
        self.chosen[index] = v.chosen;
    }

    /// A failed visit ends the plan, or, when the bench keeps going, is recorded as
    /// a failed point that is never visited again.
    fn point_failed(
        &mut self,
        index: usize,
        e: &RunError,
        doc: &mut ResultDoc,
        keep_going: bool,
    ) -> Flow {
        let what = format!("point {} ({})", index + 1, self.planned[index].describe());
        let error = format!("{what}: {}", chain(e));
        if !keep_going {
            doc.outcome = Outcome::Failed { error };
            return Flow::End;
        }
        tracing::warn!(%error, "point failed; the plan goes on");
        self.dead[index] = true;
        doc.failed.push(FailedPoint {
            index,
            params: self.planned[index].params.clone(),
            error,
        });
        self.kept[index].clear();
        Flow::Go
    }

    /// The summary of a point's kept runs, held against its limit.
    fn summary(&mut self, index: usize, warnings: Vec<String>, context: &Context) -> PointResult {
        let mut result = summarise(
            index,
            &self.planned[index],
            std::mem::take(&mut self.kept[index]),
            &self.point_counters[index],
            warnings,
            self.opts,
        );
        result.chosen = std::mem::take(&mut self.chosen[index]);
        let paired = paired_samples(&result, &self.sample_before, &self.drift_log);
        attach_limits(&mut result, context, &paired, self.opts.judge);
        result
    }

    /// Summarises a point after its last visit, with its drift, and hands it on.
    fn finish_point(
        &mut self,
        index: usize,
        doc: &mut ResultDoc,
        observers: &mut [&mut dyn Observer],
    ) -> Flow {
        if let Some(w) = &self.opts.watch {
            self.drift_log.sample(|| w.probe.drift_sample());
        }
        let warnings = std::mem::take(&mut self.warnings[index]);
        let mut result = self.summary(index, warnings, &doc.context);
        if let Some(w) = &self.opts.watch {
            let span = self.drift_log.since(self.first_sample[index]);
            attach_drift(&mut result, span, w.drift_threshold, self.opts.interleave);
        }
        let r = observers
            .iter_mut()
            .try_for_each(|o| o.point_finished(&result));
        doc.points.push(result);
        match r {
            Ok(()) => Flow::Go,
            Err(e) => {
                doc.outcome = failed(&e);
                Flow::End
            }
        }
    }

    /// Interleaved points that kept some runs before the plan ended early are still
    /// results: summarised over what they have, and said to be partial.
    fn summarise_partial(&mut self, doc: &mut ResultDoc, observers: &mut [&mut dyn Observer]) {
        for index in 0..self.planned.len() {
            if self.kept[index].is_empty() {
                continue;
            }
            let mut w = std::mem::take(&mut self.warnings[index]);
            w.push(format!(
                "partial: {} of {} measured runs finished before the plan ended",
                self.kept[index].len(),
                self.planned[index].run_count(self.opts.run_count()).runs
            ));
            let result = self.summary(index, w, &doc.context);
            let _ = observers
                .iter_mut()
                .try_for_each(|o| o.point_finished(&result));
            doc.points.push(result);
        }
    }
}

/// One step of a plan's schedule.
#[derive(Debug, Clone, Copy)]
struct Step {
    index: usize,
    /// Measured runs of this visit.
    runs: usize,
    /// The first visit of a round (of the plan, when sequential).
    round_starts: bool,
    /// The point's last visit.
    last: bool,
}

/// A plan that went on past failed points still failed: the first one names why.
fn name_first_failure(doc: &mut ResultDoc) {
    if let (Some(first), Outcome::Complete) = (doc.failed.first(), &doc.outcome) {
        let more = match doc.failed.len() {
            1 => String::new(),
            n => format!(" (and {} more failed points: see `failed`)", n - 1),
        };
        doc.outcome = Outcome::Failed {
            error: format!("{}{more}", first.error),
        };
    }
}

/// How busy the machine was over the plan, beside the points' own contention.
fn record_load(doc: &mut ResultDoc, mut load: Option<MachineLoad>, proc: Option<&ProcFs>) {
    let all_runs: Vec<&xferbench_probes::contention::RunContention> = doc
        .points
        .iter()
        .flat_map(|p| p.runs.iter().filter_map(|r| r.contention.as_ref()))
        .collect();
    if let (Some(load), Some(proc)) = (load.as_mut(), proc) {
        load.finish(
            proc,
            doc.points.iter().filter_map(|p| p.contention.as_ref()),
            &all_runs,
        );
        doc.warnings.extend(load.warning());
    }
    doc.context.load = load;
}

/// The machine's limits at the end: the start-to-end drift, and every point held
/// again against the better of the start and the end, its runs against the floors
/// sampled before them.
fn hold_at_the_end(doc: &mut ResultDoc, walk: &Walk<'_>, opts: &LoopOptions) {
    let Some(w) = &opts.watch else { return };
    if doc.outcome == Outcome::Interrupted {
        return;
    }
    let Some(limits) = doc.context.limits.as_mut() else {
        return;
    };
    limits.end = Some(w.probe.limits());
    let floor = limits.floor();
    if let Some(d) = doc.machine_drift(opts.interleave) {
        doc.warnings.push(format!(
            "machine changed between the start and the end: {}{}",
            d.movement(),
            d.consequence()
        ));
    }
    for p in &mut doc.points {
        let paired = paired_samples(p, &walk.sample_before, &walk.drift_log);
        hold_against(p, &floor, &paired, opts.judge);
        hold_to_schedule(p, &floor, opts.judge);
    }
}

/// The drift samples around one run: the latest taken before it, and the next one,
/// taken after it (absent until the plan takes it).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RunSamples<'a> {
    /// The latest sample taken before the run.
    pub before: Option<&'a drift::DriftSample>,
    /// The first sample taken after it.
    pub after: Option<&'a drift::DriftSample>,
}

impl RunSamples<'_> {
    /// Whether the probe `name` moved beyond the drift threshold between the sample
    /// before the run and the one after: the machine changed state somewhere around
    /// the run (this VM switches modes within minutes), and which state the run saw
    /// is unknown.
    fn moved(&self, name: &str) -> bool {
        let value = |s: Option<&drift::DriftSample>| s.and_then(|s| s.probes.get(name).copied());
        match (value(self.before), value(self.after)) {
            (Some(b), Some(a)) if a > 0.0 && b > 0.0 => {
                a.max(b) / a.min(b) > 1.0 + drift::DEFAULT_THRESHOLD
            }
            _ => false,
        }
    }
}

/// The drift samples around each of the point's runs, in the order of its runs.
fn paired_samples<'a>(
    result: &PointResult,
    sample_before: &[usize],
    log: &'a DriftLog,
) -> Vec<RunSamples<'a>> {
    result
        .runs
        .iter()
        .map(|r| {
            let Some(&k) = r.sequence.and_then(|s| sample_before.get(s)) else {
                return RunSamples::default();
            };
            RunSamples {
                before: log.get(k),
                after: log.get(k + 1),
            }
        })
        .collect()
}

/// The point's fraction of its natural limit; `paired` holds
/// the drift samples around each of its runs.
fn attach_limits(
    result: &mut PointResult,
    context: &Context,
    paired: &[RunSamples<'_>],
    judge: &dyn Judge,
) {
    if let Some(l) = &context.limits {
        let floor = l.floor();
        hold_against(result, &floor, paired, judge);
        hold_to_schedule(result, &floor, judge);
    }
}

/// The point's drift across the samples of its `span`, by the probes that bear on the
/// limit it is held against ([`drift::bearing`]), and its warning.
fn attach_drift(
    result: &mut PointResult,
    span: &[drift::DriftSample],
    threshold: f64,
    interleaved: bool,
) {
    let bearing = drift::bearing(result.limit.as_ref().map(|l| l.limit.as_str()));
    result.drift = drift::worst(span, threshold, interleaved, bearing);
    if let Some(d) = &result.drift {
        result.warnings.push(d.warning());
    }
}

/// Sets the warning of a load point whose sender fell behind its schedule, against
/// the CPUs' own stalls in `limits`, replacing an earlier one.
fn hold_to_schedule(result: &mut PointResult, limits: &Limits, judge: &dyn Judge) {
    result
        .warnings
        .retain(|w| !w.starts_with(crate::record::BEHIND_WARNING));
    result.warnings.extend(judge.pacing_warning(
        &result.summary,
        result.channels,
        limits.stall_p99_ns(None),
    ));
}

/// Sets the point's fraction of its natural limit in `limits`, replacing an earlier
/// fraction and its warning. Where the drift sample taken just before each run
/// (`paired`) measured the point's floor, each run is held against its own sample
/// and the point gets the median of those fractions ([`LimitFraction::paired`]).
/// A run around which the floor moved beyond the drift threshold (the sample after
/// it disagrees with the one before) is left out, as its floor is unknown, as long
/// as at least half of the runs remain.
pub(crate) fn hold_against(
    result: &mut PointResult,
    limits: &Limits,
    paired: &[RunSamples<'_>],
    judge: &dyn Judge,
) {
    if result.limit.take().is_some_and(|f| f.suspect) {
        result
            .warnings
            .retain(|w| !w.starts_with(fraction::SUSPECT_WARNING));
    }
    let whole = judge.limit_fraction(
        &result.params,
        result.size_bytes,
        result.channels,
        &result.summary,
        limits,
    );
    let per_run: Vec<(LimitFraction, bool)> = result
        .runs
        .iter()
        .zip(paired)
        .filter_map(|(run, samples)| {
            let around = limits.around(std::slice::from_ref(samples.before?));
            let figures: BTreeMap<String, Estimate> = run
                .figures
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), Estimate::from_values([*v])?)))
                .collect();
            let f = judge.limit_fraction(
                &result.params,
                result.size_bytes,
                result.channels,
                &figures,
                &around.limits,
            )?;
            let floor = fraction::floor_of(&f.limit);
            let moved = samples.moved(floor);
            around
                .replaced
                .iter()
                .any(|r| r == floor)
                .then_some((f, moved))
        })
        .collect();
    let steady: Vec<LimitFraction> = per_run
        .iter()
        .filter(|(_, moved)| !moved)
        .map(|(f, _)| f.clone())
        .collect();
    result.limit = match whole {
        Some(whole)
            if per_run.len() == result.runs.len()
                && !steady.is_empty()
                && 2 * steady.len() >= per_run.len() =>
        {
            Some(LimitFraction::paired(&whole, &steady))
        }
        Some(whole) if !per_run.is_empty() && per_run.len() == result.runs.len() => {
            let all: Vec<LimitFraction> = per_run.into_iter().map(|(f, _)| f).collect();
            Some(LimitFraction::paired(&whole, &all))
        }
        whole => whole,
    };
    if let Some(w) = result.limit.as_ref().and_then(|f| f.warning()) {
        result.warnings.push(w);
    }
}

/// How the warning of a point whose threads wanted more CPUs than it had begins.
pub const CPU_BOUND: &str = "cpu-bound:";

/// Participants that use at least this share of the CPUs while their threads still
/// wait for one at least [`CPU_BOUND_WAIT`] as long as they run are CPU-bound too.
pub const CPU_BOUND_USE: f64 = 0.9;

/// See [`CPU_BOUND_USE`].
pub const CPU_BOUND_WAIT: f64 = 0.10;

/// The `cpu-bound` warning of a point that wanted more CPUs than the `cpus` it may
/// use, in its median run: its participants' threads waited on the run queue for a
/// CPU at least [`CPU_BOUND_WAIT`] as long as they ran, while they were runnable (on
/// a CPU or waiting for one) as many at a time on average as more than `cpus`, or used
/// at least [`CPU_BOUND_USE`] of them. Its
/// figures then measure the machine's CPUs as much as the design. Names the busy
/// threads, the CPUs used and the CPUs allowed. Runs without schedstat readings
/// claim nothing.
fn cpu_bound_warning(
    runs: &[RunRecord],
    summary: &BTreeMap<String, Estimate>,
    cpus: usize,
) -> Option<String> {
    let mut busy = Vec::new();
    let mut waits = Vec::new();
    for r in runs {
        let timed: Vec<_> = r
            .cpu
            .iter()
            .filter(|c| c.runqueue_wait_s.is_some())
            .collect();
        let ran: f64 = timed.iter().map(|c| c.user_s + c.sys_s).sum();
        let waited: f64 = timed.iter().filter_map(|c| c.runqueue_wait_s).sum();
        let runnable: f64 = timed
            .iter()
            .filter(|c| c.window_s > 0.0)
            .map(|c| (c.user_s + c.sys_s + c.runqueue_wait_s.unwrap_or(0.0)) / c.window_s)
            .sum();
        if ran > 0.0 {
            busy.push(runnable);
            waits.push(waited / ran);
        }
    }
    let busy = Estimate::from_values(busy)?.median;
    let wait = Estimate::from_values(waits)?.median;
    let used: f64 = [figure::CPU_MAIN, figure::CPU_PEERS]
        .iter()
        .filter_map(|f| summary.get(*f).map(|e| e.median))
        .sum();
    let cpus_f = cpus.max(1) as f64;
    // Either way the threads must have waited for a CPU a tenth as long as they ran:
    // two spinning sides on two CPUs average just over 2 runnable threads whenever a
    // kernel thread wakes, without their figures measuring a shortage of CPUs.
    let outnumbered = busy > cpus_f;
    let saturated = used >= CPU_BOUND_USE * cpus_f;
    ((outnumbered || saturated) && wait >= CPU_BOUND_WAIT).then(|| {
        format!(
            "{CPU_BOUND} {busy:.1} of its threads were runnable at a time on average for the \
             {cpus} CPUs it may use (they used {used:.2} and waited for one {:.0} % as long as \
             they ran): its figures measure this machine's CPUs as much as the design",
            wait * 100.0
        )
    })
}

/// How the warning of a latency point whose participant waited for its CPU begins.
pub const WAITED: &str = "waited for a CPU:";

/// The share of a run's window a participant may wait on the run queue before a
/// latency point says so: a p99 is the slowest 1 % of the messages, and messages that
/// arrive while their receiver waits for its CPU wait with it.
pub const WAITED_SHARE: f64 = 0.01;

/// The `waited for a CPU` warning of a latency point (one with a p99) that is not
/// CPU-bound: in its median run the peer process that waited longest on the run queue
/// (runnable, its CPU held by another task: a kernel thread, a process outside the
/// run, another thread of the run) waited at least [`WAITED_SHARE`] of the window. Its
/// tail then measures what else ran on that CPU as much as the transport. Only peers
/// are read: the xferbench process's own wait includes its control thread, which
/// waits whenever the run's sides hold every CPU, off the messages' path (the
/// sender's own stalls are `sender_stall_*`). Names the peer, the share and the time.
/// Runs without schedstat readings claim nothing.
fn waited_warning(runs: &[RunRecord], summary: &BTreeMap<String, Estimate>) -> Option<String> {
    summary.get(figure::LATENCY[2])?;
    // Per run, the peer that waited the longest share of its window.
    let longest: Vec<(f64, &str, f64)> = runs
        .iter()
        .filter_map(|r| {
            r.cpu
                .iter()
                .filter(|c| c.window_s > 0.0 && c.role.starts_with("peer"))
                .filter_map(|c| {
                    let waited = c.runqueue_wait_s?;
                    Some((waited / c.window_s, c.role.as_str(), waited))
                })
                .max_by(|a, b| a.0.total_cmp(&b.0))
        })
        .collect();
    let shares: Vec<f64> = longest.iter().map(|l| l.0).collect();
    let share = xferbench_probes::stats::median(&shares)?;
    let waited = xferbench_probes::stats::median(&longest.iter().map(|l| l.2).collect::<Vec<_>>())?;
    let (_, role, _) = longest
        .iter()
        .min_by(|a, b| (a.0 - share).abs().total_cmp(&(b.0 - share).abs()))?;
    (share >= WAITED_SHARE).then(|| {
        format!(
            "{WAITED} {role} waited on the run queue for {:.1} % of the window ({:.2} ms) in the \
             median run, its CPU held by other tasks (kernel threads, processes outside the run, \
             the run's other threads); the slowest 1 % of the messages can be those that waited \
             with it",
            share * 100.0,
            waited * 1e3
        )
    })
}

/// How the warning of a point during which the process was stopped begins.
pub const PAUSED: &str = "paused:";

fn finish(mut doc: ResultDoc, observers: &mut [&mut dyn Observer]) -> ResultDoc {
    tracing::info!(points = doc.points.len(), outcome = ?doc.outcome, "plan finished");
    let paused = doc
        .points
        .iter()
        .filter(|p| p.warnings.iter().any(|w| w.starts_with(PAUSED)))
        .count();
    if paused > 0 {
        doc.warnings.push(format!(
            "{PAUSED} the process was stopped and continued while {paused} of {} points ran \
             (see their warnings)",
            doc.points.len()
        ));
    }
    if let Some(w) = clock_steps_warning(&doc) {
        doc.warnings.push(w);
    }
    if doc
        .points
        .iter()
        .any(|p| p.warnings.iter().any(|w| w.starts_with("noisy")))
    {
        doc.warnings.push(
            "noisy: some points vary by more than 5 % between runs (see their warnings)".into(),
        );
    }
    for o in observers.iter_mut() {
        if let Err(e) = o.sweep_finished(&doc)
            && doc.outcome == Outcome::Complete
        {
            doc.outcome = Outcome::Failed { error: chain(&e) };
        }
    }
    doc
}

/// How the warning about a coarse round-trip clock begins.
pub const CLOCK_STEPS: &str = "clock steps:";

/// A round trip is timed in whole steps of the trip clock; where the clock steps by
/// 2 ns or more and a point's median latency is under 20 of them, says so: such a
/// p50 reads to the nearest step, and only a mean averages the steps out.
fn clock_steps_warning(doc: &ResultDoc) -> Option<String> {
    let step = doc.context.capabilities.trip_clock_step_ns?;
    if step < 2.0 {
        return None;
    }
    let under = 20.0 * step;
    let coarse = doc
        .points
        .iter()
        .filter(|p| {
            p.summary
                .get(figure::LATENCY[0])
                .is_some_and(|e| e.median < under)
        })
        .count();
    (coarse > 0).then(|| {
        format!(
            "{CLOCK_STEPS} the round-trip clock advances in steps of {step:.1} ns on this \
             machine, so the latencies of {coarse} of {} points, under {under:.0} ns, are \
             read to the nearest step (a percentile stands for itself ± {half:.1} ns; \
             means average the steps out)",
            doc.points.len(),
            half = step / 2.0
        )
    })
}

/// A figure as the tables head its column: `throughput` for
/// `throughput_bytes_per_s`, `messages/s` for `messages_per_s`, `latency p99` for
/// `latency_p99_ns`.
fn spoken(figure: &str) -> String {
    let (base, rate) = match figure.strip_suffix("_bytes_per_s") {
        Some(b) => (b, false),
        None => match figure.strip_suffix("_per_s") {
            Some(b) => (b, true),
            None => (
                ["_ns", "_s", "_cpus"]
                    .iter()
                    .find_map(|u| figure.strip_suffix(u))
                    .unwrap_or(figure),
                false,
            ),
        },
    };
    let words = base.replace('_', " ");
    if rate { format!("{words}/s") } else { words }
}

/// The order of visits: `(point, measured runs of the visit)`. Interleaved, round
/// `r` visits every point with more than `r` runs, in plan order.
pub fn schedule(points: &[PlannedPoint], opts: &LoopOptions) -> Vec<(usize, usize)> {
    let runs: Vec<usize> = points
        .iter()
        .map(|p| p.run_count(opts.run_count()).runs)
        .collect();
    if opts.interleave {
        let rounds = runs.iter().copied().max().unwrap_or(0);
        let runs = &runs;
        (0..rounds)
            .flat_map(|r| (0..runs.len()).filter(move |&i| runs[i] > r))
            .map(|i| (i, 1))
            .collect()
    } else {
        runs.into_iter().enumerate().collect()
    }
}

/// One visit: start the rig, `count.warmup` discarded runs, `count.runs` kept, finish.
#[allow(clippy::too_many_arguments)]
fn visit(
    bench: &mut dyn Bench,
    index: usize,
    count: RunCount,
    opts: &LoopOptions,
    stop: &AtomicBool,
    proc: Option<&ProcFs>,
    warnings: &mut Vec<String>,
    on_run: &mut dyn FnMut(RunProgress),
) -> Result<Visit, RunError> {
    let point = bench.points().get(index).map(|p| p.describe());
    tracing::info!(
        point = index + 1,
        what = point.as_deref().unwrap_or("?"),
        runs = count.runs,
        warmup = count.warmup,
        "visiting point"
    );
    let mut source = counters::source_for(opts.counters, crate::context::pmu_available());
    let mut rig = bench.rig(index, source.as_deref())?;
    let participants = rig.participants();
    let chosen = rig.chosen();
    tracing::debug!(
        point = index + 1,
        participants = ?participants.iter().map(|p| (p.name.as_str(), p.pid)).collect::<Vec<_>>(),
        "rig set up"
    );
    let mut profiler = match &opts.profile {
        Some(req) => Some(start_profile(req, index, &participants)?),
        None => None,
    };
    let total = count.warmup + count.runs;
    let mut records = Vec::with_capacity(count.runs);
    let mut outcome = Ok(());
    for r in 0..total {
        if stop.load(Ordering::Relaxed) {
            outcome = Err(RunError::Interrupted);
            break;
        }
        let probe = source.as_deref_mut().map(|s| (s, participants.as_slice()));
        let mut ctl =
            RunControl::new(stop, opts.hang_timeout, probe).open_ended(opts.until_stopped);
        if let Some(proc) = proc {
            ctl = ctl.with_contention(proc, &participants);
        }
        match rig.run_once(&mut ctl) {
            Ok(mut rec) => {
                rec.contention = ctl.take_contention();
                for w in ctl.take_warnings() {
                    if !warnings.contains(&w) {
                        warnings.push(w);
                    }
                }
                tracing::debug!(point = index + 1, run = r + 1, of = total, "run finished");
                let ended = opts.until_stopped && stop.load(Ordering::Relaxed);
                if r >= count.warmup {
                    records.push(rec);
                } else if ended {
                    // A warm-up ended by the stop: nothing measured to keep.
                    outcome = Err(RunError::Interrupted);
                    break;
                }
                if ended {
                    on_run(RunProgress { done: r + 1, total });
                    break;
                }
            }
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
        on_run(RunProgress { done: r + 1, total });
    }
    if let Some(p) = profiler.as_mut()
        && let Err(e) = p.stop()
    {
        outcome = outcome.and(Err(e.into()));
    }
    // Participants are stopped whatever happened; a failure to stop them matters
    // only when the runs themselves went well.
    tracing::debug!(point = index + 1, "finishing rig");
    let finished = rig.finish_with_warnings(warnings);
    match (&outcome, &finished) {
        (Ok(()), Ok(_)) => tracing::info!(point = index + 1, kept = records.len(), "visit done"),
        (Err(e), _) => tracing::info!(point = index + 1, error = %e, "visit ended early"),
        (Ok(()), Err(e)) => {
            tracing::warn!(point = index + 1, error = %e, "rig did not finish cleanly")
        }
    }
    outcome?;
    finished?;
    let point_counters = match source.as_deref_mut() {
        Some(src) if records.iter().all(|r| r.counters.is_none()) => {
            src.point_finished(&participants, warnings)
        }
        _ => None,
    };
    Ok(Visit {
        records,
        point_counters,
        chosen,
    })
}

fn start_profile(
    req: &xferbench_probes::profile::ProfileRequest,
    index: usize,
    participants: &[counters::Participant],
) -> Result<xferbench_probes::profile::perf_record::Attached, RunError> {
    let who = participants
        .iter()
        .find(|p| p.name == req.participant)
        .ok_or_else(
            || xferbench_probes::profile::ProfileError::UnknownParticipant {
                name: req.participant.clone(),
                known: participants
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            },
        )?;
    let dir = req.point_dir(index);
    std::fs::create_dir_all(&dir).map_err(|source| {
        xferbench_probes::profile::ProfileError::Io {
            what: format!("creating {}", dir.display()),
            source,
        }
    })?;
    // Interleaved plans visit a point several times: one recording per visit.
    let file = (0..)
        .map(|k| match k {
            0 => dir.join("perf.data"),
            k => dir.join(format!("perf.{k}.data")),
        })
        .find(|f| !f.exists())
        .expect("an unused file name");
    Ok(xferbench_probes::profile::perf_record::attach(
        who.pid, &file,
    )?)
}

/// Windows shorter than this make a noisy figure; the point gets a warning.
pub const SHORT_WINDOW_S: f64 = 0.01;

/// Summarises the kept runs of a point.
pub fn summarise(
    index: usize,
    point: &PlannedPoint,
    runs: Vec<RunRecord>,
    point_counters: &[RunCounters],
    mut warnings: Vec<String>,
    opts: &LoopOptions,
) -> PointResult {
    let summary = summarise_figures(&runs);
    let per_channel = summarise_channels(&runs);
    let integrity = (point.verify || runs.iter().any(|r| r.integrity.is_some())).then(|| {
        let mut t = Integrity::default();
        runs.iter()
            .filter_map(|r| r.integrity.as_ref())
            .for_each(|c| t.add(c));
        t
    });
    let primary = point.rules.primary;
    let contention = PointContention::of_runs(runs.iter().filter_map(|r| r.contention.as_ref()));
    warn_of_runs(&mut warnings, primary, &summary, &runs, contention.as_ref());
    if let Some(c) = &integrity
        && !c.is_clean()
    {
        warnings.push(format!(
            "integrity: {} lost, {} duplicated, {} reordered, {} corrupt of {} checked",
            c.lost, c.duplicated, c.reordered, c.corrupt, c.checked
        ));
    }
    let per_run: Vec<RunCounters> = runs.iter().filter_map(|r| r.counters.clone()).collect();
    let counters = if !per_run.is_empty() {
        counters::summarise(&per_run, "the measured window of each run")
    } else if opts.counters != CounterMode::Off && !point_counters.is_empty() {
        counters::summarise(
            point_counters,
            "the serving side of every run, warm-up included, averaged per run (simulated)",
        )
    } else {
        None
    };
    PointResult {
        index,
        params: point.params.clone(),
        chosen: Default::default(),
        defaults: opts.judge.transport_defaults(&point.params),
        size_bytes: point.size_bytes,
        channels: point.channels,
        primary: Some(Primary {
            figure: primary.to_string(),
            higher_is_better: point.rules.higher_is_better,
        }),
        runs,
        summary,
        per_channel,
        integrity,
        warnings,
        counters,
        limit: None,
        drift: None,
        contention,
    }
}

/// Every figure summarised over the runs that have it: the union over runs, so a
/// figure missing from one run (no messages, say) is still summarised.
fn summarise_figures(runs: &[RunRecord]) -> BTreeMap<String, Estimate> {
    let names: std::collections::BTreeSet<&String> =
        runs.iter().flat_map(|r| r.figures.keys()).collect();
    names
        .into_iter()
        .filter_map(|name| {
            let values = runs.iter().filter_map(|r| r.figures.get(name).copied());
            Some((name.clone(), Estimate::from_values(values)?))
        })
        .collect()
}

/// Each channel's rates and median latency over the runs.
fn summarise_channels(runs: &[RunRecord]) -> Vec<ChannelSummary> {
    let channels = runs.iter().map(|r| r.channels.len()).max().unwrap_or(0);
    (0..channels)
        .filter_map(|c| {
            let rows: Vec<&ChannelRun> = runs.iter().filter_map(|r| r.channels.get(c)).collect();
            Some(ChannelSummary {
                channel: c,
                throughput_bytes_per_s: Estimate::from_values(
                    rows.iter().map(|r| r.throughput_bytes_per_s),
                )?,
                messages_per_s: Estimate::from_values(rows.iter().map(|r| r.messages_per_s))?,
                latency_p50_ns: Estimate::from_values(
                    rows.iter()
                        .filter_map(|r| r.latency.map(|l| l.p50_ns as f64)),
                ),
            })
        })
        .collect()
}

/// The warnings the runs themselves call for: a noisy primary figure, short
/// windows, a collapse, contention, and threads that waited for a CPU.
fn warn_of_runs(
    warnings: &mut Vec<String>,
    primary: &str,
    summary: &BTreeMap<String, Estimate>,
    runs: &[RunRecord],
    contention: Option<&PointContention>,
) {
    if let Some(e) = summary.get(primary)
        && e.is_noisy()
    {
        warnings.push(format!(
                "noisy: {} varies by ±{:.1} % (robust CV) over {} runs; use more --runs, --pin, --interleave, or a quieter machine",
                spoken(primary),
                e.rcv * 100.0,
                e.n
            ));
    }
    if let Some(w) = summary.get(figure::WINDOW)
        && w.median < SHORT_WINDOW_S
    {
        warnings.push(format!(
                "short runs: the median window is {:.2} ms; raise --count or use --duration for a stable figure",
                w.median * 1e3
            ));
    }
    let collapsed: Vec<(usize, &crate::result::Collapse)> = runs
        .iter()
        .filter_map(|r| r.collapsed.as_ref().map(|c| (r.run, c)))
        .collect();
    if let Some((run, c)) = collapsed.first() {
        warnings.push(format!(
            "collapsed in {} of {} runs: {} (measured run {}); its figures are of the work done",
            collapsed.len(),
            runs.len(),
            c.describe(),
            run + 1
        ));
    }
    if let Some(c) = contention.filter(|c| c.contended) {
        warnings.push(c.warning());
    }
    let bound = cpu_bound_warning(
        runs,
        summary,
        xferbench_probes::affinity::allowed_cpus().len(),
    );
    if bound.is_none() {
        warnings.extend(waited_warning(runs, summary));
    }
    warnings.extend(bound);
}

/// An error and all its causes, joined with ": ".
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let text = c.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{FakeBench, Scripted};

    #[test]
    fn a_figure_is_spoken_as_its_column() {
        assert_eq!(spoken(figure::THROUGHPUT), "throughput");
        assert_eq!(spoken(figure::MESSAGE_RATE), "messages/s");
        assert_eq!(spoken(figure::LATENCY[2]), "latency p99");
        assert_eq!(spoken("transactions_per_s"), "transactions/s");
        assert_eq!(spoken("window_s"), "window");
    }
    use crate::result::Settings;

    const S: u64 = 1_000_000_000;

    fn context() -> Context {
        crate::result::test_context(Settings {
            workload: "fake".into(),
            runs: 3,
            warmup: 1,
            count: None,
            duration_s: None,
            peer: "thread".into(),
            pin: false,
            verify: false,
            interleave: false,
        })
    }

    fn opts(runs: usize, warmup: usize, interleave: bool) -> LoopOptions {
        LoopOptions {
            judge: &crate::fake::JUDGE,
            runs,
            warmup,
            interleave,
            hang_timeout: Duration::from_secs(1),
            counters: CounterMode::Off,
            profile: None,
            watch: None,
            until_stopped: false,
        }
    }

    fn run(bench: &mut FakeBench, o: &LoopOptions) -> ResultDoc {
        run_plan(context(), bench, o, &AtomicBool::new(false), &mut [])
    }

    /// One channel moving `bytes` in one second.
    /// Each point's runs' sequence numbers, in plan order.
    fn sequences(doc: &ResultDoc) -> Vec<Vec<Option<usize>>> {
        doc.points
            .iter()
            .map(|p| p.runs.iter().map(|r| r.sequence).collect())
            .collect()
    }

    fn steady(bytes: u64) -> Scripted {
        Scripted::Lanes(vec![(0, S, bytes, bytes)])
    }

    #[test]
    fn a_latency_of_a_few_clock_steps_is_named_and_a_fine_clock_or_a_long_latency_is_not() {
        let mut bench = FakeBench::new(2, |_, _| steady(100));
        let mut doc = run(&mut bench, &opts(1, 0, false));
        let p50 = |ns: f64| Estimate::from_values([ns]).expect("an estimate");
        doc.points[0]
            .summary
            .insert(figure::LATENCY[0].into(), p50(80.0));
        doc.points[1]
            .summary
            .insert(figure::LATENCY[0].into(), p50(5000.0));
        doc.context.capabilities.trip_clock_step_ns = Some(10.0);
        let w = clock_steps_warning(&doc).expect("a warning");
        assert!(w.starts_with(CLOCK_STEPS), "{w}");
        assert!(w.contains("steps of 10.0 ns"), "{w}");
        assert!(w.contains("1 of 2 points, under 200 ns"), "{w}");
        assert!(w.contains("± 5.0 ns"), "{w}");
        // A clock of sub-nanosecond steps, an older result without a step, or only
        // latencies of many steps: nothing to say.
        doc.context.capabilities.trip_clock_step_ns = Some(0.4);
        assert_eq!(clock_steps_warning(&doc), None);
        doc.context.capabilities.trip_clock_step_ns = None;
        assert_eq!(clock_steps_warning(&doc), None);
        doc.context.capabilities.trip_clock_step_ns = Some(10.0);
        doc.points[0]
            .summary
            .insert(figure::LATENCY[0].into(), p50(400.0));
        assert_eq!(clock_steps_warning(&doc), None);
    }

    #[test]
    fn aggregate_throughput_is_over_the_common_window_never_a_sum_of_rates() {
        // Two channels of 100 bytes in one second each, staggered by half a second:
        // each ran at 100 B/s, the link carried 200 B in 1.5 s.
        let mut bench = FakeBench::new(1, |_, _| {
            Scripted::Lanes(vec![(0, S, 100, 100), (S / 2, 3 * S / 2, 100, 100)])
        });
        let doc = run(&mut bench, &opts(1, 0, false));
        let r = &doc.points[0].runs[0];
        let t = r.figures[figure::THROUGHPUT];
        assert!((t - 200.0 / 1.5).abs() < 1e-9, "{t}");
        assert_eq!(r.window_ns, 3 * S / 2);
        assert_eq!(r.channels[1].start_offset_ns, S / 2);
        assert!((r.channels[0].throughput_bytes_per_s - 100.0).abs() < 1e-9);
        assert!((r.figures[figure::FAIRNESS] - 1.0).abs() < 1e-12);
        // CPU: 0.75 s of the main process over 200 messages.
        assert!((r.figures[figure::CPU_PER_MESSAGE] - 0.75 / 200.0 * 1e9).abs() < 1e-6);
    }

    #[test]
    fn sequential_plans_run_warmups_then_keep_runs_point_by_point() {
        let mut bench = FakeBench::new(2, |p, call| steady(1000 * (p as u64 + 1) + call as u64));
        let doc = run(&mut bench, &opts(3, 1, false));
        assert_eq!(
            bench.log(),
            vec![
                (0, 0),
                (0, 1),
                (0, 2),
                (0, 3),
                (1, 0),
                (1, 1),
                (1, 2),
                (1, 3)
            ]
        );
        assert_eq!(doc.outcome, Outcome::Complete);
        assert_eq!(doc.points.len(), 2);
        let p0 = &doc.points[0];
        // The warm-up (call 0) is discarded; the median of 1001, 1002, 1003.
        assert_eq!(p0.summary[figure::THROUGHPUT].median, 1002.0);
        assert_eq!(p0.summary[figure::THROUGHPUT].n, 3);
        let seq: Vec<_> = doc
            .points
            .iter()
            .flat_map(|p| p.runs.iter().map(|r| (r.run, r.sequence)))
            .collect();
        assert_eq!(
            seq,
            vec![
                (0, Some(0)),
                (1, Some(1)),
                (2, Some(2)),
                (0, Some(3)),
                (1, Some(4)),
                (2, Some(5))
            ]
        );
        assert_eq!(p0.primary().figure, figure::THROUGHPUT);
    }

    #[test]
    fn a_bench_that_warms_up_once_does_so_on_each_points_first_visit_only() {
        let mut bench = FakeBench::new(2, |p, _| steady(100 + p as u64));
        bench.warm_up_once = true;
        let doc = run(&mut bench, &opts(3, 2, true));
        // Visits A, B, A, B, A, B: two warm-ups on the first of each, none after.
        let runs_per_visit: Vec<usize> = {
            let log = bench.log();
            let mut visits: Vec<(usize, usize)> = Vec::new();
            for (p, call) in log {
                match visits.last_mut() {
                    Some((q, n)) if *q == p && call > 0 => *n += 1,
                    _ => visits.push((p, 1)),
                }
            }
            visits.into_iter().map(|(_, n)| n).collect()
        };
        assert_eq!(runs_per_visit, [3, 3, 1, 1, 1, 1]);
        assert!(doc.points.iter().all(|p| p.runs.len() == 3));
    }

    #[test]
    fn interleaved_plans_go_round_robin_and_record_the_order() {
        let mut bench = FakeBench::new(3, |p, _| steady(100 + p as u64));
        let doc = run(&mut bench, &opts(2, 1, true));
        // Each visit: one warm-up, one kept run; rounds A, B, C, A, B, C.
        assert_eq!(
            bench.log(),
            vec![
                (0, 0),
                (0, 1),
                (1, 0),
                (1, 1),
                (2, 0),
                (2, 1),
                (0, 2),
                (0, 3),
                (1, 2),
                (1, 3),
                (2, 2),
                (2, 3)
            ]
        );
        assert_eq!(doc.points.len(), 3);
        let order = sequences(&doc);
        assert_eq!(
            order,
            vec![
                vec![Some(0), Some(3)],
                vec![Some(1), Some(4)],
                vec![Some(2), Some(5)]
            ]
        );
        assert_eq!(schedule(&bench.points, &opts(2, 1, true)).len(), 6);
    }

    #[test]
    fn a_point_of_its_own_run_count_is_visited_in_the_first_rounds_only() {
        // Point 0 is a deterministic count: one run, no warm-up; the others have
        // the plan's three runs after a warm-up per visit.
        let mut bench = FakeBench::new(3, |p, call| steady(100 * (p as u64 + 1) + call as u64));
        bench.points[0] = bench.points[0].clone().with_runs(1, 0);
        let doc = run(&mut bench, &opts(3, 1, true));
        assert_eq!(
            bench.log(),
            vec![
                (0, 0),
                (1, 0),
                (1, 1),
                (2, 0),
                (2, 1),
                (1, 2),
                (1, 3),
                (2, 2),
                (2, 3),
                (1, 4),
                (1, 5),
                (2, 4),
                (2, 5)
            ]
        );
        assert_eq!(doc.outcome, Outcome::Complete);
        let order = sequences(&doc);
        assert_eq!(
            order,
            vec![
                vec![Some(0)],
                vec![Some(1), Some(3), Some(5)],
                vec![Some(2), Some(4), Some(6)]
            ]
        );
        let n: Vec<usize> = doc
            .points
            .iter()
            .map(|p| p.summary[figure::THROUGHPUT].n)
            .collect();
        assert_eq!(n, [1, 3, 3]);
        // Its one run is its first call: nothing was discarded.
        assert_eq!(doc.points[0].summary[figure::THROUGHPUT].median, 100.0);
        // Sequentially, the same point is one visit of one run.
        let mut bench = FakeBench::new(2, |_, _| steady(100));
        bench.points[1] = bench.points[1].clone().with_runs(1, 0);
        let doc = run(&mut bench, &opts(2, 1, false));
        assert_eq!(bench.log(), vec![(0, 0), (0, 1), (0, 2), (1, 0)]);
        assert_eq!(doc.points[1].runs.len(), 1);
        // A point may also ask for more runs than the plan's; it finishes last,
        // and the document still lists the points in plan order.
        let mut bench = FakeBench::new(2, |_, _| steady(100));
        bench.points[0] = bench.points[0].clone().with_runs(3, 0);
        let doc = run(&mut bench, &opts(1, 0, true));
        assert_eq!(bench.log(), vec![(0, 0), (1, 0), (0, 1), (0, 2)]);
        let runs: Vec<(usize, usize)> =
            doc.points.iter().map(|p| (p.index, p.runs.len())).collect();
        assert_eq!(runs, [(0, 3), (1, 1)]);
    }

    #[test]
    fn an_interrupted_point_of_its_own_run_count_says_how_many_of_its_runs_finished() {
        let mut bench = FakeBench::new(2, |p, call| {
            if p == 1 && call == 1 {
                Scripted::Stop(Vec::new())
            } else {
                steady(100)
            }
        });
        bench.points[0] = bench.points[0].clone().with_runs(5, 0);
        let doc = run(&mut bench, &opts(2, 0, true));
        assert_eq!(doc.outcome, Outcome::Interrupted);
        assert!(
            doc.points[0]
                .warnings
                .iter()
                .any(|w| w.starts_with("partial: 2 of 5")),
            "{:?}",
            doc.points[0].warnings
        );
    }

    #[test]
    fn a_noisy_primary_figure_is_flagged_and_a_steady_one_is_not() {
        let mut noisy = FakeBench::new(1, |_, call| steady([100, 300, 50, 180, 20][call]));
        let doc = run(&mut noisy, &opts(5, 0, false));
        assert!(
            doc.points[0]
                .warnings
                .iter()
                .any(|w| w.starts_with("noisy")),
            "{:?}",
            doc.points[0].warnings
        );
        assert!(doc.warnings.iter().any(|w| w.starts_with("noisy")));
        let mut steady_bench = FakeBench::new(1, |_, _| steady(100));
        let doc = run(&mut steady_bench, &opts(5, 0, false));
        assert!(
            doc.points[0].warnings.is_empty(),
            "{:?}",
            doc.points[0].warnings
        );
        assert!(doc.warnings.is_empty());
    }

    #[test]
    fn short_windows_and_integrity_faults_are_warned_about() {
        let mut bench = FakeBench::new(1, |_, _| Scripted::Lanes(vec![(0, 1000, 10, 10)]));
        bench.integrity = Some(Integrity {
            checked: 10,
            lost: 2,
            ..Integrity::default()
        });
        let doc = run(&mut bench, &opts(2, 0, false));
        let w = &doc.points[0].warnings;
        assert!(w.iter().any(|w| w.starts_with("short runs")), "{w:?}");
        assert!(w.iter().any(|w| w.contains("4 lost")), "{w:?}");
        assert_eq!(doc.points[0].integrity.unwrap().lost, 4);
    }

    #[test]
    fn a_failed_point_keeps_the_finished_ones_and_names_itself() {
        let mut bench = FakeBench::new(3, |p, _| {
            if p == 1 {
                Scripted::Fail("the memory mock died".into())
            } else {
                steady(100)
            }
        });
        let doc = run(&mut bench, &opts(2, 0, false));
        assert_eq!(doc.points.len(), 1);
        match &doc.outcome {
            Outcome::Failed { error } => {
                assert!(error.starts_with("point 2 (point=1)"), "{error}");
                assert!(error.contains("the memory mock died"), "{error}");
            }
            o => panic!("{o:?}"),
        }
        // The failing point was not retried and the plan stopped there.
        assert!(!bench.log().iter().any(|(p, _)| *p == 2));
    }

    #[test]
    fn a_plan_that_goes_on_records_the_failed_point_and_runs_the_others() {
        for interleave in [false, true] {
            let mut bench = FakeBench::new(3, |p, _| {
                if p == 1 {
                    Scripted::Fail("the peer was killed by signal 9".into())
                } else {
                    steady(100)
                }
            });
            bench.keep_going = true;
            let doc = run(&mut bench, &opts(2, 0, interleave));
            let kept: Vec<usize> = doc.points.iter().map(|p| p.index).collect();
            assert_eq!(kept, [0, 2], "interleave {interleave}");
            assert!(doc.points.iter().all(|p| p.runs.len() == 2));
            assert_eq!(doc.failed.len(), 1);
            assert_eq!(doc.failed[0].index, 1);
            assert_eq!(doc.failed[0].params["point"], "1");
            assert!(doc.failed[0].error.contains("signal 9"));
            match &doc.outcome {
                Outcome::Failed { error } => assert!(error.starts_with("point 2"), "{error}"),
                o => panic!("{o:?}"),
            }
            // The failed point was visited once, never again.
            assert_eq!(bench.log().iter().filter(|(p, _)| *p == 1).count(), 1);
        }
    }

    #[test]
    fn an_interrupted_interleaved_plan_keeps_partial_points() {
        // Ctrl-C during the second round's visit of point 1.
        let mut bench = FakeBench::new(2, |p, call| {
            if p == 1 && call == 1 {
                Scripted::Stop(Vec::new())
            } else {
                steady(100)
            }
        });
        let doc = run(&mut bench, &opts(3, 0, true));
        assert_eq!(doc.outcome, Outcome::Interrupted);
        assert_eq!(doc.points.len(), 2);
        assert_eq!(doc.points[0].runs.len(), 2);
        assert_eq!(doc.points[1].runs.len(), 1);
        assert!(
            doc.points[1]
                .warnings
                .iter()
                .any(|w| w.starts_with("partial: 1 of 3"))
        );
    }

    #[test]
    fn an_open_ended_run_ended_by_the_stop_is_kept_and_the_plan_completes() {
        // Two points; the first point's second measured run is ended by the stop.
        let mut bench = FakeBench::new(2, |p, call| {
            if p == 0 && call == 2 {
                Scripted::Stop(vec![(0, S, 300, 300)])
            } else {
                steady(100)
            }
        });
        let o = LoopOptions {
            judge: &crate::fake::JUDGE,
            until_stopped: true,
            ..opts(3, 1, false)
        };
        let stop = AtomicBool::new(false);
        let doc = run_plan(context(), &mut bench, &o, &stop, &mut []);
        assert_eq!(doc.outcome, Outcome::Complete);
        assert_eq!(bench.log(), vec![(0, 0), (0, 1), (0, 2)]);
        assert_eq!(doc.points.len(), 1);
        let runs = &doc.points[0].runs;
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1].bytes, 300, "the run the stop ended is kept");
        // Without the option, the same stop interrupts and the point is lost.
        let mut bench = FakeBench::new(1, |_, call| {
            if call == 1 {
                Scripted::Stop(vec![(0, S, 300, 300)])
            } else {
                steady(100)
            }
        });
        let doc = run(&mut bench, &opts(3, 0, false));
        assert_eq!(doc.outcome, Outcome::Interrupted);
        assert!(doc.points.is_empty());
    }

    #[test]
    fn every_run_and_point_records_the_machines_load_and_the_context_sums_it_up() {
        // A still /proc: one outside process that used nothing during the runs.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stat"), "cpu  100 0 50 800 0 0 0 2 0 0\n").unwrap();
        std::fs::write(dir.path().join("loadavg"), "0.42 0.30 0.20 1/80 99\n").unwrap();
        std::fs::create_dir(dir.path().join("77")).unwrap();
        std::fs::write(
            dir.path().join("77/stat"),
            "77 (sshd) S 1 77 77 0 -1 4194560 1 0 0 0 5 5 0 0 20 0 1 0 1 2 3\n",
        )
        .unwrap();
        let mut bench = FakeBench::new(2, |_, _| steady(100));
        bench.machine = Some(ProcFs::at(dir.path()));
        let doc = run(&mut bench, &opts(3, 0, false));
        for p in &doc.points {
            assert!(p.runs.iter().all(|r| r.contention.is_some()));
            let c = p.contention.as_ref().unwrap();
            assert_eq!((c.runs, c.contended, c.load_1m), (3, false, Some(0.42)));
            assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        }
        let load = doc.context.load.as_ref().unwrap();
        assert_eq!((load.points, load.contended_points), (2, 0));
        assert_eq!(load.load_1m_start, Some(0.42));
        assert!(load.warning().is_none());
        // Without a /proc to read, nothing is recorded.
        let doc = run(
            &mut FakeBench::new(1, |_, _| steady(100)),
            &opts(1, 0, false),
        );
        assert!(doc.context.load.is_none() && doc.points[0].contention.is_none());
    }

    #[test]
    fn a_stop_before_the_plan_starts_runs_nothing() {
        let mut bench = FakeBench::new(2, |_, _| steady(100));
        let stop = AtomicBool::new(true);
        let doc = run_plan(context(), &mut bench, &opts(2, 1, false), &stop, &mut []);
        assert_eq!(doc.outcome, Outcome::Interrupted);
        assert!(doc.points.is_empty());
        assert!(bench.log().is_empty());
    }

    #[test]
    fn threads_that_outnumber_the_cpus_make_a_point_cpu_bound() {
        let mut bench = FakeBench::new(1, |_, _| steady(1000));
        let doc = run(&mut bench, &opts(3, 0, false));
        let point = &doc.points[0];
        // Every process of every run: `ran` and `waited` seconds in a 1 s window.
        let runs_with = |ran: f64, waited: f64| -> Vec<RunRecord> {
            let mut runs = point.runs.clone();
            for r in &mut runs {
                for c in &mut r.cpu {
                    c.window_s = 1.0;
                    (c.user_s, c.sys_s, c.runqueue_wait_s) = (ran, 0.0, Some(waited));
                }
            }
            runs
        };
        let used = |cpus: f64| -> BTreeMap<String, Estimate> {
            [(
                figure::CPU_MAIN.to_string(),
                Estimate::from_values([cpus]).unwrap(),
            )]
            .into()
        };
        let processes = point.runs[0].cpu.len() as f64;
        // 16 busy threads on 2 CPUs: together they ran 2 s and waited 14 s of each
        // second (spread over the run's processes).
        let w = cpu_bound_warning(&runs_with(2.0 / processes, 14.0 / processes), &used(2.0), 2)
            .expect("cpu-bound");
        assert!(w.starts_with(CPU_BOUND), "{w}");
        assert!(
            w.contains("16.0 of its threads") && w.contains("the 2 CPUs"),
            "{w}"
        );
        assert!(w.contains("used 2.00") && w.contains("700 %"), "{w}");
        // Two spinning threads on two CPUs: all of both, no waiting.
        assert_eq!(
            cpu_bound_warning(&runs_with(2.0 / processes, 0.0), &used(2.0), 2),
            None
        );
        // The same with a kernel thread's blips: just over 2 runnable on average, but
        // waiting 1 % as long as they ran is no shortage of CPUs.
        assert_eq!(
            cpu_bound_warning(
                &runs_with(1.99 / processes, 0.02 / processes),
                &used(1.99),
                2
            ),
            None
        );
        // Threads that sleep between messages wait a while at each wake-up, but are
        // runnable a small part of the time: not CPU-bound.
        assert_eq!(
            cpu_bound_warning(&runs_with(0.1 / processes, 0.1 / processes), &used(0.1), 2),
            None
        );
        // Nearly all of both CPUs and still waiting.
        assert!(
            cpu_bound_warning(&runs_with(1.9 / processes, 0.3 / processes), &used(1.9), 2)
                .is_some()
        );
        // Without schedstat nothing is claimed.
        assert_eq!(cpu_bound_warning(&point.runs, &used(2.0), 2), None);
    }

    #[test]
    fn a_latency_point_whose_receiver_waited_for_its_cpu_says_so() {
        let mut bench = FakeBench::new(1, |_, _| steady(1000));
        let doc = run(&mut bench, &opts(3, 0, false));
        let point = &doc.points[0];
        // Each run: every process waited `waits[run]` seconds of a 0.25 s window, the
        // last one ("peer") twice that.
        let runs_with = |waits: [f64; 3]| -> Vec<RunRecord> {
            let mut runs = point.runs.clone();
            for (r, wait) in runs.iter_mut().zip(waits) {
                let last = r.cpu.len() - 1;
                for (i, c) in r.cpu.iter_mut().enumerate() {
                    c.window_s = 0.25;
                    c.runqueue_wait_s = Some(if i == last { 2.0 * wait } else { wait });
                    if i == last {
                        c.role = "peer 0".into();
                    }
                }
            }
            runs
        };
        let latency = |p99: f64| -> BTreeMap<String, Estimate> {
            [(
                figure::LATENCY[2].to_string(),
                Estimate::from_values([p99]).unwrap(),
            )]
            .into()
        };
        // The median run's peer waited 4 ms of 250: 1.6 %.
        let w = waited_warning(&runs_with([0.0005, 0.002, 0.003]), &latency(5e5)).expect("waited");
        assert!(w.starts_with(WAITED), "{w}");
        assert!(
            w.contains("peer 0 waited") && w.contains("1.6 % of the window (4.00 ms)"),
            "{w}"
        );
        // The xferbench process's own wait (its control thread's among it) is not read.
        let mut main_only = runs_with([0.003; 3]);
        for c in main_only.iter_mut().flat_map(|r| r.cpu.iter_mut()) {
            c.role = "main (drivers)".into();
        }
        assert_eq!(waited_warning(&main_only, &latency(5e5)), None);
        // One run of three that waited is not the median run's.
        assert_eq!(
            waited_warning(&runs_with([0.0005, 0.0005, 0.003]), &latency(5e5)),
            None
        );
        // A stream (no p99) claims nothing, nor do runs without schedstat.
        assert_eq!(
            waited_warning(&runs_with([0.003; 3]), &BTreeMap::new()),
            None
        );
        assert_eq!(waited_warning(&point.runs, &latency(5e5)), None);
    }
}
