//! `xferbench ab`: is command B faster or slower than command A, and why?
//!
//! The method of the "advanced performance analysis" guide, automated:
//!
//! 1. **Time.** A and B are the two points of a plan (`workload=command`,
//!    `side=A|B`, `command=…`), run by the one point loop like every other plan:
//!    interleaved (A B A B …, after warm-up runs of each) so a drifting machine
//!    affects both alike, with the same statistics, contention record, machine limits
//!    and result document. Each run is one `sh -c CMD` on the command rig
//!    ([`crate::rig::command`]): its wall time from start to exit, its CPU time from
//!    `getrusage(RUSAGE_CHILDREN)`.
//! 2. **Stability and CPU-bound-ness.** The coefficient of variation of the wall
//!    time (> 5 % is unstable: I/O, allocation or a busy machine) and the CPUs
//!    utilised, `(user + sys) / wall` (well under 1: the command waits, and
//!    instruction counts explain little).
//! 3. **Significance.** Welch's t-test on the wall times
//!    ([`xferbench_probes::stats::welch_t_test`]); a difference with p ≥ [`ALPHA`] is noise.
//! 4. **Counters.** Every run is counted with `perf_event_open` counters opened on
//!    the measuring thread with `inherit`, so the shell and everything it starts is
//!    counted and nothing is added to the command line; software counters always,
//!    hardware ones (instructions, cycles, stalls, misses) with a PMU. Without a
//!    PMU, instructions come from passes of each command under callgrind (with
//!    simulated cache misses), made deterministic: address-space randomisation off
//!    and interpreters' hash seeds fixed ([`fixed_seeds`]).
//! 5. **Named events and the stall search** ([`stalls`]): `--events LIST` counts
//!    model-specific events by name through `perf stat -x,`; `--search-stalls`
//!    counts every `stall|penalty|miss` event of `perf list` on A and B and ranks
//!    them by B/A. Both need a PMU for hardware events; without one the search is
//!    skipped with a one-line reason.
//! 6. **Diagnosis**, in words: when the time difference is not significant, what
//!    the instruction counts say ([`signal`]): "time inconclusive; B executes 8.6 %
//!    more instructions: expect it slower, about N runs would show it" when the
//!    counts differ beyond their own measured run-to-run noise, else "not
//!    significant: noise"; "same instructions (within 0.01 %) but slower: EVENT a →
//!    b (r×): CAUSE" when the counts agree within 0.01 %; "fewer instructions,
//!    slower: memory stalls (…)" when B does less work more slowly; "more/fewer
//!    instructions (±x %)" otherwise. The event is the one that moved most among
//!    the PMU's stall and miss counters, the named and searched events and
//!    callgrind's simulated cache misses; its cause comes from [`stalls::cause_of`].
//!
//! The counting passes and the diagnosis ([`judge`]) run after the plan, on its
//! document; what they find is the document's [`AbVerdict`]. Everything is listed A
//! first, then B.

pub mod diagnosis;
pub mod point;
pub mod side;
pub mod signal;
pub mod stalls;

pub use diagnosis::{diagnose, evidence, simulated_moves};
pub use point::{AbPoint, COMMAND, SIDE, Side};
pub use side::{ALPHA, AbRun, AbSide, CPU_BOUND, SAME_INSTRUCTIONS, UNSTABLE_CV};
pub use stalls::search_unavailable;

use crate::control::{Rig, RunError};
use crate::limits::Watch;
use crate::measure::{Bench, LoopOptions, PlannedPoint};
use crate::result::{PointResult, ResultDoc};
use crate::rig::command::{self, CommandRig};
pub use crate::verdict::{AbCounted, AbVerdict};
use stalls::EventComparison;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use xferbench_params::PointParams;
use xferbench_probes::counters::callgrind;
use xferbench_probes::counters::perf_event::EVENTS;
use xferbench_probes::counters::{CounterMode, CounterSource};
use xferbench_probes::stats::welch_t_test;

/// What to compare.
#[derive(Debug, Clone)]
pub struct AbConfig {
    /// Command A (the baseline), run with `sh -c`.
    pub a: String,
    /// Command B (the change).
    pub b: String,
    /// Measured runs of each.
    pub runs: usize,
    /// Warm-up runs of each, discarded.
    pub warmup: usize,
    /// B slower than A by more than this fraction (and significantly) is a regression.
    pub threshold: f64,
    /// Count instructions under callgrind when there is no PMU (needs valgrind).
    pub callgrind: bool,
    /// Callgrind passes of each command (interleaved A, B, A, B, …), so that the
    /// counts' own run-to-run noise is measured ([`signal`]).
    pub callgrind_runs: usize,
    /// The time all callgrind passes together may take, seconds: fewer passes than
    /// `callgrind_runs` when their estimate exceeds it (at least one).
    pub callgrind_budget_s: f64,
    /// Named events to count with `perf stat` on both sides (`--events`).
    pub events: Vec<String>,
    /// Count every `stall|penalty|miss` event of `perf list` and rank by B/A.
    pub search_stalls: bool,
}

impl AbConfig {
    /// The plan: A and B, each on the command rig, counting hardware events when
    /// `pmu`.
    pub fn bench(&self, pmu: bool) -> AbBench {
        let point = |side, command: &str| {
            let params = AbPoint {
                side,
                command: command.into(),
            }
            .to_map()
            .into_params();
            PlannedPoint::from_params(params, command::RULES)
        };
        AbBench {
            points: [point(Side::A, &self.a), point(Side::B, &self.b)],
            commands: [self.a.clone(), self.b.clone()],
            pmu,
        }
    }

    /// The point loop's options: A and B interleaved, with the machine watched when
    /// `watch` says so.
    pub fn loop_options(&self, watch: Option<Watch>) -> LoopOptions {
        LoopOptions {
            runs: self.runs,
            warmup: self.warmup,
            interleave: true,
            hang_timeout: command::LONGEST_RUN,
            counters: CounterMode::Off,
            profile: None,
            watch,
            until_stopped: false,
            judge: &crate::judge::LAB,
        }
    }
}

/// `ab`'s plan: its points A and B.
pub struct AbBench {
    points: [PlannedPoint; 2],
    commands: [String; 2],
    pmu: bool,
}

impl Bench for AbBench {
    fn points(&self) -> &[PlannedPoint] {
        &self.points
    }

    fn rig(
        &mut self,
        index: usize,
        _source: Option<&dyn CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError> {
        let command = self
            .commands
            .get(index)
            .ok_or_else(|| RunError::Config(format!("ab has no point {index}")))?;
        Ok(Box::new(CommandRig::new(command, self.pmu)))
    }

    /// A command starts afresh every run: its warm-up (the page cache, the CPU's
    /// clock) is the machine's, made once before the first run of each command.
    fn warm_up_once(&self) -> bool {
        true
    }
}

/// Why a comparison failed.
#[derive(Debug, thiserror::Error)]
pub enum AbError {
    /// The plan did not measure both commands (the document's outcome says why).
    #[error("the plan measured {0} of ab's two points")]
    Incomplete(usize),
    /// A command was stopped by Ctrl-C.
    #[error("interrupted")]
    Interrupted,
    /// A `perf stat` pass (named events, the stall search) failed.
    #[error("perf stat: {0}")]
    Perf(String),
    /// The callgrind pass failed.
    #[error("callgrind pass of `{command}`: {message}")]
    Callgrind {
        /// The command.
        command: String,
        /// What went wrong.
        message: String,
    },
}

/// The point of `side` in `ab`'s document.
pub fn point_of(doc: &ResultDoc, side: Side) -> Option<&PointResult> {
    doc.points
        .iter()
        .find(|p| p.params.get(SIDE.name()).map(String::as_str) == Some(side.name()))
}

/// The comparison of B against A: both sides as measured, and the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct AbReport {
    /// Command A.
    pub a: AbSide,
    /// Command B.
    pub b: AbSide,
    /// The verdict, as the document records it.
    pub verdict: AbVerdict,
}

impl AbReport {
    /// The report of a document of `ab` (`None` for any other document).
    pub fn of(doc: &ResultDoc) -> Option<AbReport> {
        let verdict = doc.ab.clone()?;
        let a = AbSide::of_point(point_of(doc, Side::A)?, &verdict.a.callgrind);
        let b = AbSide::of_point(point_of(doc, Side::B)?, &verdict.b.callgrind);
        Some(AbReport { a, b, verdict })
    }
}

/// What [`judge`] tells its caller before its callgrind passes start.
#[derive(Debug, Clone, PartialEq)]
pub struct CallgrindPlan {
    /// Passes of each command that fit the budget.
    pub passes: usize,
    /// Passes asked for (`--callgrind-runs`).
    pub asked: usize,
    /// Estimated seconds of one pass of both commands.
    pub estimate_s: f64,
}

/// How many callgrind passes of each command fit `budget_s` when one pass of both
/// takes `pair_s`: at most `asked`, at least one.
pub fn passes_within(asked: usize, pair_s: f64, budget_s: f64) -> usize {
    if pair_s <= 0.0 {
        return asked.max(1);
    }
    ((budget_s / pair_s).floor() as usize).clamp(1, asked.max(1))
}

/// Judges a finished plan of `ab` ([`AbConfig::bench`]): counts what the timed
/// runs could not (callgrind's passes without a PMU, `perf stat`'s named events and
/// stall search), compares B against A and writes the diagnosis. `progress` hears
/// of the callgrind passes before they start.
pub fn judge(
    doc: &ResultDoc,
    cfg: &AbConfig,
    pmu: bool,
    stop: &std::sync::atomic::AtomicBool,
    progress: &mut dyn FnMut(&CallgrindPlan),
) -> Result<AbVerdict, AbError> {
    let (Some(pa), Some(pb)) = (point_of(doc, Side::A), point_of(doc, Side::B)) else {
        return Err(AbError::Incomplete(doc.points.len()));
    };
    // How busy the machine was is the document's (its points' contention and its
    // warnings); the notes add what only the comparison knows.
    let mut notes = Vec::new();
    notes.extend(machine_note(doc));
    let (events, search) = perf_passes(cfg, pmu, stop, &mut notes)?;
    let wall = |p: &PointResult| {
        p.runs.iter().map(|r| AbRun::of(r).wall_s).sum::<f64>() / p.runs.len().max(1) as f64
    };
    let (ca, cb) = callgrind_passes(cfg, pmu, wall(pa) + wall(pb), stop, progress, &mut notes)?;
    // Every run opens the same counters on the same machine: one run's refusals
    // are all of them.
    let mut unsupported: Vec<String> = pa
        .runs
        .iter()
        .find_map(|r| r.counters.as_ref())
        .map(|c| c.unsupported.clone())
        .unwrap_or_default();
    if !pmu {
        // Not even tried without a PMU: every hardware counter.
        unsupported.extend(
            EVENTS
                .iter()
                .filter(|e| e.hardware)
                .map(|e| e.name.to_string()),
        );
    }
    if !unsupported.is_empty() {
        notes.push(format!(
            "counters not available here: {}",
            unsupported.join(", ")
        ));
    }
    let mut report = compare_with(
        AbSide::of_point(pa, &ca),
        AbSide::of_point(pb, &cb),
        cfg.threshold,
        notes,
        events,
        search,
    );
    report.verdict.unsupported = unsupported;
    report.verdict.a.callgrind = ca;
    report.verdict.b.callgrind = cb;
    Ok(report.verdict)
}

/// The `perf stat` passes: named events and the stall search.
fn perf_passes(
    cfg: &AbConfig,
    pmu: bool,
    stop: &std::sync::atomic::AtomicBool,
    notes: &mut Vec<String>,
) -> Result<(Option<EventComparison>, Option<EventComparison>), AbError> {
    if cfg.events.is_empty() && !cfg.search_stalls {
        return Ok((None, None));
    }
    let perf_err =
        |e: xferbench_probes::counters::perf_stat::PerfStatError| AbError::Perf(e.to_string());
    let rounds = cfg.runs.clamp(1, 3);
    let argv = |c: &str| -> Vec<std::ffi::OsString> { vec!["sh".into(), "-c".into(), c.into()] };
    let (a, b) = (argv(&cfg.a), argv(&cfg.b));
    let known = xferbench_probes::counters::perf_stat::list_events().map_err(perf_err)?;
    let mut events = None;
    if !cfg.events.is_empty() {
        let (ok, unknown) = xferbench_probes::counters::perf_stat::resolve(&cfg.events, &known);
        if !unknown.is_empty() {
            notes.push(format!(
                "--events: not in perf's event tables on this CPU: {}",
                unknown.join(", ")
            ));
        }
        let rows = if ok.is_empty() {
            Vec::new()
        } else {
            stalls::count_events(&a, &b, &ok, rounds, stop).map_err(perf_err)?
        };
        events = Some(EventComparison {
            rounds,
            rows,
            unknown,
        });
    }
    let mut search = None;
    if cfg.search_stalls {
        match stalls::search_unavailable(pmu, true) {
            Some(reason) => notes.push(reason),
            None => {
                let candidates = stalls::search_candidates(&known);
                let mut rows =
                    stalls::count_events(&a, &b, &candidates, rounds, stop).map_err(perf_err)?;
                stalls::rank(&mut rows);
                search = Some(EventComparison {
                    rounds,
                    rows,
                    unknown: Vec::new(),
                });
            }
        }
    }
    Ok((events, search))
}

/// Whether the machine's limits moved between the start and the end of the plan.
fn machine_note(doc: &ResultDoc) -> Option<String> {
    let machine = doc.context.limits.as_ref()?;
    machine.end.as_ref()?;
    // A command's time may hang on any of the probes.
    let bearing = crate::limits::drift::DRIFT_PROBES;
    Some(match machine.drift(true, &bearing) {
        Some(d) => format!(
            "machine changed between the start and the end: {}; A and B ran interleaved, \
             so it touched both alike: the difference held against the machine's limits \
             is the raw difference",
            d.movement()
        ),
        None => format!(
            "machine steady: its limits moved by less than {:.0} % between the start and the end",
            machine.drift_threshold * 100.0,
        ),
    })
}

/// The callgrind passes of A and B when there is no PMU: interleaved like the
/// timed runs; more than one pass each measures the counts' own noise. As many as
/// the budget allows: estimated from the timed runs first (`pair_wall_s`, one run
/// of each), then from the first pass itself.
type Passes = Vec<BTreeMap<String, f64>>;

fn callgrind_passes(
    cfg: &AbConfig,
    pmu: bool,
    pair_wall_s: f64,
    stop: &std::sync::atomic::AtomicBool,
    progress: &mut dyn FnMut(&CallgrindPlan),
    notes: &mut Vec<String>,
) -> Result<(Passes, Passes), AbError> {
    let (mut ca, mut cb) = (Vec::new(), Vec::new());
    if pmu {
        return Ok((ca, cb));
    }
    if !cfg.callgrind {
        notes.push(
            "no hardware PMU and no callgrind pass: instructions unknown (install valgrind)".into(),
        );
        return Ok((ca, cb));
    }
    let stopped = || {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            Err(AbError::Interrupted)
        } else {
            Ok(())
        }
    };
    let estimate_s = pair_wall_s * CALLGRIND_SLOWDOWN;
    let asked = cfg.callgrind_runs.max(1);
    let mut passes = passes_within(asked, estimate_s, cfg.callgrind_budget_s);
    progress(&CallgrindPlan {
        passes,
        asked,
        estimate_s,
    });
    let mut pair_s = estimate_s;
    let mut i = 0;
    while i < passes {
        let started = std::time::Instant::now();
        stopped()?;
        ca.push(callgrind_totals(&cfg.a)?);
        stopped()?;
        cb.push(callgrind_totals(&cfg.b)?);
        if i == 0 {
            pair_s = started.elapsed().as_secs_f64();
            passes = passes_within(asked, pair_s, cfg.callgrind_budget_s);
        }
        i += 1;
    }
    if ca.len() < asked {
        notes.push(format!(
            "callgrind: {} pass(es) of each instead of {asked}: one pass of both takes about \
             {pair_s:.0} s, and {asked} would exceed the {:.0} s budget \
             (--callgrind-budget){}",
            ca.len(),
            cfg.callgrind_budget_s,
            if ca.len() == 1 {
                "; with one pass the instruction counts' own noise is not measured"
            } else {
                ""
            }
        ));
    }
    notes.push(format!(
        "no hardware PMU: instructions and cache misses simulated by callgrind ({} pass(es) \
         of each, interleaved; {})",
        ca.len(),
        determinism_note(&fixed_seeds())
    ));
    Ok((ca, cb))
}

/// How much slower a command runs under callgrind than alone, for the estimate of a
/// pass before the first one is timed (valgrind's manual: 20 to 100 times).
pub const CALLGRIND_SLOWDOWN: f64 = 50.0;

/// Hash seeds that interpreters otherwise randomise per process, set to 0 for the
/// counting passes unless the user set them: with a random seed, `python3`'s
/// instruction count varies by several per cent from run to run.
pub const FIXED_HASH_SEEDS: [&str; 2] = ["PYTHONHASHSEED", "PERL_HASH_SEED"];

/// What the counting passes fix so that a command executes the same instructions
/// every run: the hash seeds of [`FIXED_HASH_SEEDS`] the environment leaves unset.
/// (Address-space randomisation is always off in them.)
pub fn fixed_seeds() -> Vec<&'static str> {
    FIXED_HASH_SEEDS
        .into_iter()
        .filter(|v| std::env::var_os(v).is_none())
        .collect()
}

/// How the counting passes were made deterministic, in words.
pub fn determinism_note(seeds: &[&str]) -> String {
    let mut s =
        "counted with address-space randomisation off where the system allows it".to_string();
    for v in seeds {
        s.push_str(&format!(", {v}=0"));
    }
    s.push_str(" (the timed runs as users run them)");
    s
}

/// Turns address-space layout randomisation off for the calling process and what it
/// executes (`personality(ADDR_NO_RANDOMIZE)`, as `setarch -R` does); for a
/// `pre_exec` hook, so it touches nothing but the system calls. Best effort: where the
/// system refuses it (a container's seccomp profile may allow no personality flags),
/// the pass runs as it is rather than not at all.
fn no_aslr() -> std::io::Result<()> {
    // SAFETY: personality(2) only reads and sets the calling process's execution
    // domain flags; 0xffffffff queries them without changing anything.
    let current = unsafe { libc::personality(0xffff_ffff) };
    if current != -1 {
        // SAFETY: as above; the flags are the current ones plus ADDR_NO_RANDOMIZE. A
        // refusal leaves them as they were.
        unsafe { libc::personality((current | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) };
    }
    Ok(())
}

/// Runs `command` once under callgrind (following `sh` into its children) and sums
/// the totals of every process. The pass is deterministic where the platform allows:
/// address-space randomisation off, and the hash seeds of [`fixed_seeds`] set to 0.
pub fn callgrind_totals(command: &str) -> Result<BTreeMap<String, f64>, AbError> {
    let err = |message: String| AbError::Callgrind {
        command: command.into(),
        message,
    };
    // A fresh, private folder per call: concurrent runs never share one.
    let tmp = tempfile::Builder::new()
        .prefix("xferbench-ab-callgrind-")
        .tempdir()
        .map_err(|e| err(e.to_string()))?;
    let dir = tmp.path().to_path_buf();
    let mut valgrind = Command::new("valgrind");
    valgrind
        .args(callgrind::valgrind_args(&dir, None))
        .args(["sh", "-c", command])
        .envs(fixed_seeds().into_iter().map(|v| (v, "0")))
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    // SAFETY: the hook makes one system call and allocates nothing, as is required
    // between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut valgrind, no_aslr);
    }
    let output = valgrind.output();
    let result = match output {
        Err(e) => Err(err(format!("cannot start valgrind: {e}"))),
        Ok(o) if !o.status.success() => {
            let text = String::from_utf8_lossy(&o.stderr);
            let tail: Vec<&str> = text.lines().rev().take(3).collect();
            Err(err(format!(
                "valgrind {}: {}",
                xferbench_probes::process::describe_status(o.status),
                tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
            )))
        }
        Ok(_) => callgrind::sum_dir(&dir).map_err(|e| err(e.to_string())),
    };
    drop(tmp);
    let mut totals = result?;
    xferbench_probes::counters::derive(&mut totals);
    Ok(totals)
}

/// Compares two measured sides and writes the diagnosis (pure: no measuring).
pub fn compare(a: AbSide, b: AbSide, threshold: f64, notes: Vec<String>) -> AbReport {
    compare_with(a, b, threshold, notes, None, None)
}

/// [`compare`], with named events and a stall search as evidence.
pub fn compare_with(
    a: AbSide,
    b: AbSide,
    threshold: f64,
    mut notes: Vec<String>,
    events: Option<EventComparison>,
    search: Option<EventComparison>,
) -> AbReport {
    let wa: Vec<f64> = a.runs.iter().map(|r| r.wall_s).collect();
    let wb: Vec<f64> = b.runs.iter().map(|r| r.wall_s).collect();
    let p_value = welch_t_test(&wa, &wb).map_or(1.0, |w| w.p);
    let significant = p_value < ALPHA;
    let difference = if a.mean_s > 0.0 {
        b.mean_s / a.mean_s - 1.0
    } else {
        0.0
    };
    for (label, s) in [("A", &a), ("B", &b)] {
        if s.cv > UNSTABLE_CV {
            notes.push(format!(
                "{label} is unstable: wall time varies by {:.1} % (CV); I/O, allocation or a busy machine",
                s.cv * 100.0
            ));
        }
        if s.cpus_utilised < CPU_BOUND {
            notes.push(format!(
                "{label} is not CPU-bound ({:.2} CPUs utilised): it waits, and instruction counts explain little",
                s.cpus_utilised
            ));
        }
    }
    let instructions_difference = match (a.instructions(), b.instructions()) {
        (Some((ia, _)), Some((ib, _))) if ia > 0.0 => Some(ib / ia - 1.0),
        _ => None,
    };
    let slower = difference > 0.0;
    let moves = evidence(&a, &b, events.as_ref(), search.as_ref());
    let instructions = signal::instruction_signal(&a, &b);
    let diagnosis = diagnose(
        significant,
        p_value,
        slower,
        instructions_difference,
        &moves,
        instructions.as_ref(),
    );
    let diagnosis = match diagnosis::off_cpu(&a, &b) {
        Some(off) if significant => off,
        _ => diagnosis,
    };
    let faster = match (significant, slower) {
        (false, _) => "neither",
        (true, true) => "A",
        (true, false) => "B",
    };
    let counted = |s: &AbSide| AbCounted {
        command: s.command.clone(),
        callgrind: Vec::new(),
    };
    let verdict = AbVerdict {
        a: counted(&a),
        b: counted(&b),
        regression: significant && difference > threshold,
        difference,
        p_value,
        significant,
        faster: faster.into(),
        instructions_difference,
        diagnosis,
        notes,
        threshold,
        unsupported: Vec::new(),
        events,
        search,
        instructions,
    };
    AbReport { a, b, verdict }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::side::tests::fake;
    use super::*;

    #[test]
    fn a_point_of_ab_writes_and_reads_itself_and_its_plan_is_a_then_b() {
        for side in [Side::A, Side::B] {
            xferbench_params::point::round_trips(&AbPoint {
                side,
                command: "sleep 0.01 && echo 'a=b'".into(),
            })
            .unwrap();
        }
        let cfg = AbConfig {
            a: "true".into(),
            b: "false".into(),
            runs: 3,
            warmup: 1,
            threshold: 0.05,
            callgrind: false,
            callgrind_runs: 1,
            callgrind_budget_s: 1.0,
            events: Vec::new(),
            search_stalls: false,
        };
        let bench = cfg.bench(false);
        let sides: Vec<_> = bench
            .points()
            .iter()
            .map(|p| {
                (
                    p.params[SIDE.name()].clone(),
                    p.params[COMMAND.name()].clone(),
                )
            })
            .collect();
        assert_eq!(
            sides,
            [("A".into(), "true".into()), ("B".into(), "false".into())]
        );
        assert!(cfg.loop_options(None).interleave);
    }

    #[test]
    fn callgrind_passes_fit_their_budget_and_never_drop_to_none() {
        // Two 1 s commands: about 100 s per pair of passes under callgrind.
        assert_eq!(passes_within(3, 100.0, 120.0), 1);
        assert_eq!(passes_within(3, 100.0, 250.0), 2);
        assert_eq!(passes_within(3, 0.5, 120.0), 3, "never more than asked");
        assert_eq!(passes_within(3, 1e6, 120.0), 1, "always one");
        assert_eq!(passes_within(0, 1.0, 120.0), 1);
    }

    #[test]
    fn counting_passes_run_without_address_space_randomisation() {
        let mut c = Command::new("cat");
        c.arg("/proc/self/personality");
        // SAFETY: as in `callgrind_totals`.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut c, no_aslr);
        }
        let out = c.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let flags = u32::from_str_radix(text.trim(), 16).unwrap();
        assert_ne!(flags & libc::ADDR_NO_RANDOMIZE as u32, 0, "{text}");
    }

    #[test]
    fn the_determinism_note_names_what_was_fixed() {
        assert_eq!(
            determinism_note(&["PYTHONHASHSEED"]),
            "counted with address-space randomisation off where the system allows it, \
             PYTHONHASHSEED=0 (the timed runs as users run them)"
        );
        assert!(fixed_seeds().iter().all(|v| FIXED_HASH_SEEDS.contains(v)));
    }

    #[test]
    fn more_instructions_and_slower_is_a_regression() {
        let a = fake("a", &[1.0, 1.01, 0.99, 1.0, 1.02], Some(1e9));
        let b = fake("b", &[2.0, 2.02, 1.98, 2.0, 2.01], Some(2e9));
        let r = compare(a, b, 0.05, vec![]);
        assert!(r.verdict.significant && r.verdict.regression, "{r:?}");
        assert_eq!(r.verdict.faster, "A");
        assert!(
            r.verdict.diagnosis.starts_with("more instructions"),
            "{}",
            r.verdict.diagnosis
        );
    }

    #[test]
    fn same_instructions_but_slower_points_at_stalls() {
        let a = fake("a", &[1.0, 1.01, 0.99, 1.0, 1.02], Some(1e9));
        let b = fake("b", &[1.2, 1.21, 1.19, 1.2, 1.22], Some(1e9 * (1.0 + 5e-5)));
        let r = compare(a, b, 0.5, vec![]);
        assert!(
            r.verdict
                .diagnosis
                .starts_with("same instructions (within 0.01 %) but slower")
        );
        assert!(!r.verdict.regression, "20 % is under the 50 % threshold");
    }

    #[test]
    fn overlapping_times_with_instructions_beyond_their_noise_say_what_to_expect() {
        // The PMU counted 1.0 G and 1.1 G in every run: exact counts, 10 % apart.
        let a = fake("a", &[1.0, 1.1, 0.9, 1.05, 0.95], Some(1e9));
        let b = fake("b", &[1.02, 0.92, 1.08, 0.97, 1.01], Some(1.1e9));
        let r = compare(a, b, 0.05, vec![]);
        assert!(
            r.verdict.diagnosis.starts_with(
                "time inconclusive (p = 1.000); B executes 10.0 % more instructions \
                 (5 counts of A and 5 of B by PMU, run-to-run noise 0.00 %): expect it slower"
            ),
            "{}",
            r.verdict.diagnosis
        );
        let s = r.verdict.instructions.as_ref().unwrap();
        assert!(s.beyond_noise && s.suggested_runs.unwrap() > 5, "{s:?}");
        assert_eq!(r.verdict.faster, "neither");
        assert!(!r.verdict.regression);
    }

    #[test]
    fn overlapping_times_with_the_same_instructions_are_noise() {
        let a = fake("a", &[1.0, 1.1, 0.9, 1.05, 0.95], Some(1e9));
        let b = fake("b", &[1.02, 0.92, 1.08, 0.97, 1.01], Some(1e9));
        let r = compare(a, b, 0.05, vec![]);
        assert!(
            r.verdict.diagnosis.starts_with("not significant: noise"),
            "{}",
            r.verdict.diagnosis
        );
        let none = compare(
            fake("a", &[1.0, 1.1, 0.9], None),
            fake("b", &[1.0, 1.1, 0.9], None),
            0.05,
            vec![],
        );
        assert!(none.verdict.instructions.is_none());
        assert!(none.verdict.diagnosis.starts_with("not significant: noise"));
    }

    #[test]
    fn fewer_instructions_and_faster() {
        let a = fake("a", &[2.0, 2.01, 1.99, 2.0], Some(2e9));
        let b = fake("b", &[1.0, 1.01, 0.99, 1.0], Some(1e9));
        let r = compare(a, b, 0.05, vec![]);
        assert_eq!(r.verdict.faster, "B");
        assert!(
            r.verdict
                .diagnosis
                .starts_with("fewer instructions (-50.0 %)"),
            "{}",
            r.verdict.diagnosis
        );
    }
}
