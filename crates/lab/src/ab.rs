//! `xferbench ab`: is command B faster or slower than command A, and why?
//!
//! The method of the "advanced performance analysis" guide, automated:
//!
//! 1. **Time.** A and B run interleaved (A B A B …, after warm-up runs of each) so a
//!    drifting machine affects both alike. Each run's wall time is measured around
//!    `sh -c CMD`; CPU time comes from `getrusage(RUSAGE_CHILDREN)`.
//! 2. **Stability and CPU-bound-ness.** The coefficient of variation of the wall
//!    time (> 5 % is unstable: I/O, allocation or a busy machine) and the CPUs
//!    utilised, `(user + sys) / wall` (well under 1: the command waits, and
//!    instruction counts explain little).
//! 3. **Significance.** Welch's t-test on the wall times
//!    ([`xferbench_probes::stats::welch_t_test`]); a difference with p ≥ [`ALPHA`] is noise.
//! 4. **Counters.** Every run is counted with `perf_event_open` counters opened on
//!    this thread with `inherit`, so the shell and everything it starts is
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
//! Everything is listed A first, then B.

pub mod diagnosis;
pub mod signal;
pub mod stalls;

pub use diagnosis::{diagnose, evidence, simulated_moves};
pub use stalls::search_unavailable;

use perf_event::Counter;
use serde::{Deserialize, Serialize};
use stalls::EventComparison;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Instant;
use xferbench_probes::counters::callgrind;
use xferbench_probes::counters::name;
use xferbench_probes::counters::perf_event::{CounterValue, EVENTS};
use xferbench_probes::stats::{mean_sd, welch_t_test};

/// Significance level of the time comparison. 1 % rather than 5 %: `ab` is run
/// often, and a false "slower" costs more than a missed small change.
pub const ALPHA: f64 = 0.01;
/// Instruction counts closer than this (relative) are "the same".
pub const SAME_INSTRUCTIONS: f64 = 1e-4;
/// A coefficient of variation above this makes a command "unstable".
pub const UNSTABLE_CV: f64 = 0.05;
/// Fewer CPUs utilised than this: not CPU-bound.
pub const CPU_BOUND: f64 = 0.9;

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

/// Why a comparison failed.
#[derive(Debug, thiserror::Error)]
pub enum AbError {
    /// A command could not be started.
    #[error("cannot run `{command}`: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A command failed.
    #[error("`{command}` {status}; ab compares commands that succeed")]
    CommandFailed {
        /// The command.
        command: String,
        /// How it ended.
        status: String,
    },
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

/// One run of one command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AbRun {
    /// Wall time, seconds.
    pub wall_s: f64,
    /// User + system CPU time of the command and its children, seconds.
    pub cpu_s: f64,
    /// User CPU time, seconds.
    #[serde(default)]
    pub user_s: f64,
    /// System CPU time, seconds.
    #[serde(default)]
    pub sys_s: f64,
    /// Counters by name (see [`xferbench_probes::counters::name`]).
    pub counters: BTreeMap<String, f64>,
    /// How busy the machine was with other work during the run (added in schema 1;
    /// absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contention: Option<xferbench_probes::contention::RunContention>,
}

/// Everything measured of one command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AbSide {
    /// The command.
    pub command: String,
    /// Every measured run.
    pub runs: Vec<AbRun>,
    /// Mean wall time, seconds.
    pub mean_s: f64,
    /// Standard deviation of the wall time, seconds.
    pub sd_s: f64,
    /// Coefficient of variation of the wall time.
    pub cv: f64,
    /// Mean CPUs utilised, `(user + sys) / wall`.
    pub cpus_utilised: f64,
    /// Mean user CPU time per run, seconds.
    #[serde(default)]
    pub user_s: f64,
    /// Mean system CPU time per run, seconds.
    #[serde(default)]
    pub sys_s: f64,
    /// Mean of every counter over the runs.
    pub counters: BTreeMap<String, f64>,
    /// Callgrind totals (instructions and simulated cache misses), the mean over its
    /// passes.
    pub callgrind: Option<BTreeMap<String, f64>>,
    /// Every independent instruction count: one per timed run with a PMU, one per
    /// callgrind pass without (added in schema 1; empty in older files).
    #[serde(default)]
    pub instruction_runs: Vec<f64>,
}

impl AbSide {
    /// Instructions: from the PMU if counted, else from callgrind; with the source.
    pub fn instructions(&self) -> Option<(f64, &'static str)> {
        if let Some(i) = self.counters.get(name::INSTRUCTIONS) {
            return Some((*i, "PMU"));
        }
        self.callgrind
            .as_ref()
            .and_then(|c| c.get(name::IR))
            .map(|i| (*i, "callgrind"))
    }
}

/// The comparison of B against A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AbReport {
    /// Command A.
    pub a: AbSide,
    /// Command B.
    pub b: AbSide,
    /// `mean(B) / mean(A) − 1`: positive when B is slower.
    pub difference: f64,
    /// Welch's t-test p-value of the wall times.
    pub p_value: f64,
    /// `p_value < ALPHA`.
    pub significant: bool,
    /// `A`, `B`, or `neither` when not significant.
    pub faster: String,
    /// Instructions of B relative to A, `B / A − 1`, when known.
    pub instructions_difference: Option<f64>,
    /// The diagnosis in words.
    pub diagnosis: String,
    /// Notes on stability and CPU-bound-ness, and on what could not be counted.
    pub notes: Vec<String>,
    /// B is significantly slower than A by more than the threshold.
    pub regression: bool,
    /// The threshold, as a fraction.
    pub threshold: f64,
    /// The machine's limits before and after the comparison (absent with
    /// `--no-limits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<crate::limits::MachineLimits>,
    /// Counters that could not be opened here (no PMU, forbidden, not in this CPU).
    #[serde(default)]
    pub unsupported: Vec<String>,
    /// The named events (`--events`), A vs B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<EventComparison>,
    /// The stall search (`--search-stalls`), ranked by B/A.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<EventComparison>,
    /// The instruction counts of A and B against their own run-to-run noise, and the
    /// runs that would resolve the time difference they predict (absent when
    /// instructions were not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<signal::InstructionSignal>,
    /// How busy the machine was with other work over the measured runs of A and B
    /// (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contention: Option<xferbench_probes::contention::PointContention>,
    /// How this xferbench was built (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<xferbench_probes::build::BuildInfo>,
}

/// Counters opened on this thread with `inherit`: they count every process it
/// starts while enabled.
struct Inherited {
    counters: Vec<(&'static str, Counter)>,
    unsupported: Vec<&'static str>,
}

impl Inherited {
    fn open(pmu: bool) -> Inherited {
        let mut counters = Vec::new();
        let mut unsupported = Vec::new();
        for spec in EVENTS.iter().filter(|e| pmu || !e.hardware) {
            let mut b = spec.builder();
            b.observe_self()
                .any_cpu()
                .inherit(true)
                .enabled(false)
                .exclude_hv(true);
            // Kernel work counts where allowed; else user mode only.
            match b.build().or_else(|_| b.exclude_kernel(true).build()) {
                Ok(c) => counters.push((spec.name, c)),
                Err(_) => unsupported.push(spec.name),
            }
        }
        Inherited {
            counters,
            unsupported,
        }
    }

    /// Raw totals so far: an inherited counter keeps what exited children counted
    /// even across a reset, so runs are measured as differences of totals.
    fn totals(&mut self) -> Vec<(u64, u64, u64)> {
        self.counters
            .iter_mut()
            .map(|(_, c)| {
                c.read_full().map_or((0, 0, 0), |r| {
                    (
                        r.count(),
                        r.time_enabled().map_or(0, |d| d.as_nanos() as u64),
                        r.time_running().map_or(0, |d| d.as_nanos() as u64),
                    )
                })
            })
            .collect()
    }

    fn start(&mut self) -> Vec<(u64, u64, u64)> {
        let before = self.totals();
        for (_, c) in &mut self.counters {
            let _ = c.enable();
        }
        before
    }

    fn stop(&mut self, before: &[(u64, u64, u64)]) -> BTreeMap<String, f64> {
        for (_, c) in &mut self.counters {
            let _ = c.disable();
        }
        let after = self.totals();
        let mut out = BTreeMap::new();
        for (((n, _), b), a) in self.counters.iter().zip(before).zip(&after) {
            let v = CounterValue::from_reading(
                a.0.saturating_sub(b.0),
                a.1.saturating_sub(b.1),
                a.2.saturating_sub(b.2),
            );
            if let Some(v) = v.value() {
                out.insert(n.to_string(), v);
            }
        }
        xferbench_probes::counters::derive(&mut out);
        out
    }
}

/// User and system CPU seconds of this process's reaped children so far.
pub fn children_cpu() -> (f64, f64) {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is writable memory of the right size; RUSAGE_CHILDREN is valid;
    // a zeroed `rusage` is a valid value even if the call failed.
    let ru = unsafe {
        libc::getrusage(libc::RUSAGE_CHILDREN, ru.as_mut_ptr());
        ru.assume_init()
    };
    let s = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}

fn run_once(
    command: &str,
    counters: &mut Inherited,
    proc: &xferbench_probes::contention::ProcFs,
) -> Result<AbRun, AbError> {
    let cpu_before = children_cpu();
    let load_before = proc.read();
    let before = counters.start();
    let start = Instant::now();
    let status = Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status();
    let wall_s = start.elapsed().as_secs_f64();
    let values = counters.stop(&before);
    // The command and everything it started are this process's descendants.
    let contention = match (load_before, proc.read()) {
        (Some(a), Some(b)) => Some(xferbench_probes::contention::between(
            &a,
            &b,
            &[std::process::id()],
        )),
        _ => None,
    };
    let status = status.map_err(|source| AbError::Spawn {
        command: command.into(),
        source,
    })?;
    if std::os::unix::process::ExitStatusExt::signal(&status) == Some(libc::SIGINT) {
        return Err(AbError::Interrupted);
    }
    if !status.success() {
        return Err(AbError::CommandFailed {
            command: command.into(),
            status: xferbench_probes::process::describe_status(status),
        });
    }
    let cpu_after = children_cpu();
    let (user_s, sys_s) = (cpu_after.0 - cpu_before.0, cpu_after.1 - cpu_before.1);
    Ok(AbRun {
        wall_s,
        cpu_s: user_s + sys_s,
        user_s,
        sys_s,
        counters: values,
        contention,
    })
}

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

fn side(command: &str, runs: Vec<AbRun>, passes: Vec<BTreeMap<String, f64>>) -> AbSide {
    let walls: Vec<f64> = runs.iter().map(|r| r.wall_s).collect();
    let (mean_s, sd_s) = mean_sd(&walls).unwrap_or((walls.first().copied().unwrap_or(0.0), 0.0));
    let cpus: Vec<f64> = runs
        .iter()
        .map(|r| {
            if r.wall_s > 0.0 {
                r.cpu_s / r.wall_s
            } else {
                0.0
            }
        })
        .collect();
    let mut counters = BTreeMap::new();
    for n in runs.iter().flat_map(|r| r.counters.keys()) {
        if counters.contains_key(n) {
            continue;
        }
        let vals: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.counters.get(n))
            .copied()
            .collect();
        counters.insert(n.clone(), vals.iter().sum::<f64>() / vals.len() as f64);
    }
    let mean = |f: fn(&AbRun) -> f64| runs.iter().map(f).sum::<f64>() / runs.len().max(1) as f64;
    // Counted per run by the PMU, else once per callgrind pass.
    let mut instruction_runs: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.counters.get(name::INSTRUCTIONS).copied())
        .collect();
    if instruction_runs.is_empty() {
        instruction_runs = passes
            .iter()
            .filter_map(|p| p.get(name::IR).copied())
            .collect();
    }
    let callgrind = (!passes.is_empty()).then(|| {
        let mut mean = BTreeMap::new();
        for k in passes.iter().flat_map(|p| p.keys()) {
            if !mean.contains_key(k) {
                let v: Vec<f64> = passes.iter().filter_map(|p| p.get(k).copied()).collect();
                mean.insert(k.clone(), v.iter().sum::<f64>() / v.len() as f64);
            }
        }
        mean
    });
    AbSide {
        command: command.into(),
        instruction_runs,
        user_s: mean(|r| r.user_s),
        sys_s: mean(|r| r.sys_s),
        mean_s,
        sd_s,
        cv: if mean_s > 0.0 { sd_s / mean_s } else { 0.0 },
        cpus_utilised: cpus.iter().sum::<f64>() / cpus.len().max(1) as f64,
        counters,
        callgrind,
        runs,
    }
}

/// How much slower a command runs under callgrind than alone, for the estimate of a
/// pass before the first one is timed (valgrind's manual: 20 to 100 times).
pub const CALLGRIND_SLOWDOWN: f64 = 50.0;

/// What [`run`] tells its caller as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum AbProgress {
    /// Timed runs (warm-ups included) finished so far.
    Run {
        /// Runs finished.
        done: usize,
        /// Runs in all.
        total: usize,
    },
    /// The callgrind passes are about to start.
    Callgrind {
        /// Passes of each command that fit the budget.
        passes: usize,
        /// Passes asked for (`--callgrind-runs`).
        asked: usize,
        /// Estimated seconds of one pass of both commands.
        estimate_s: f64,
    },
}

/// How many callgrind passes of each command fit `budget_s` when one pass of both
/// takes `pair_s`: at most `asked`, at least one.
pub fn passes_within(asked: usize, pair_s: f64, budget_s: f64) -> usize {
    if pair_s <= 0.0 {
        return asked.max(1);
    }
    ((budget_s / pair_s).floor() as usize).clamp(1, asked.max(1))
}

/// Runs the comparison, telling `progress` how it goes.
pub fn run(
    cfg: &AbConfig,
    pmu: bool,
    stop: &std::sync::atomic::AtomicBool,
    progress: &mut dyn FnMut(AbProgress),
) -> Result<AbReport, AbError> {
    let mut counters = Inherited::open(pmu);
    let proc = xferbench_probes::contention::ProcFs::real();
    let total = 2 * (cfg.warmup + cfg.runs);
    let mut done = 0;
    let stopped = || {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            Err(AbError::Interrupted)
        } else {
            Ok(())
        }
    };
    for _ in 0..cfg.warmup {
        for c in [&cfg.a, &cfg.b] {
            stopped()?;
            run_once(c, &mut counters, &proc)?;
            done += 1;
            progress(AbProgress::Run { done, total });
        }
    }
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    for _ in 0..cfg.runs {
        stopped()?;
        ra.push(run_once(&cfg.a, &mut counters, &proc)?);
        stopped()?;
        rb.push(run_once(&cfg.b, &mut counters, &proc)?);
        done += 2;
        progress(AbProgress::Run { done, total });
    }
    let mut notes = Vec::new();
    let build = xferbench_probes::build::BuildInfo::current();
    notes.extend(build.warning());
    let contention = xferbench_probes::contention::PointContention::of_runs(
        ra.iter().chain(&rb).filter_map(|r| r.contention.as_ref()),
    );
    if let Some(c) = contention.as_ref().filter(|c| c.contended) {
        notes.push(format!(
            "contended: {}; A and B alternated, so it touched both, but their times spread \
             more: rerun on a quieter machine",
            c.describe()
        ));
    }
    let (events, search) = stalls::perf_passes(cfg, pmu, stop, &mut notes)?;
    let (mut ca, mut cb) = (Vec::new(), Vec::new());
    if !pmu && cfg.callgrind {
        // Interleaved like the timed runs; more than one pass each measures the
        // counts' own noise. As many as the budget allows: estimated from the timed
        // runs first, then from the first pass itself.
        let mean_wall =
            |r: &[AbRun]| r.iter().map(|r| r.wall_s).sum::<f64>() / r.len().max(1) as f64;
        let estimate_s = (mean_wall(&ra) + mean_wall(&rb)) * CALLGRIND_SLOWDOWN;
        let asked = cfg.callgrind_runs.max(1);
        let mut passes = passes_within(asked, estimate_s, cfg.callgrind_budget_s);
        progress(AbProgress::Callgrind {
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
    } else if !pmu {
        notes.push(
            "no hardware PMU and no callgrind pass: instructions unknown (install valgrind)".into(),
        );
    }
    let mut unsupported: Vec<String> = counters.unsupported.iter().map(|s| s.to_string()).collect();
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
        side(&cfg.a, ra, ca),
        side(&cfg.b, rb, cb),
        cfg.threshold,
        notes,
        events,
        search,
    );
    report.unsupported = unsupported;
    report.contention = contention;
    report.build = Some(build);
    Ok(report)
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
    AbReport {
        regression: significant && difference > threshold,
        a,
        b,
        difference,
        p_value,
        significant,
        faster: faster.into(),
        instructions_difference,
        diagnosis,
        notes,
        threshold,
        machine: None,
        unsupported: Vec::new(),
        events,
        search,
        instructions,
        contention: None,
        build: None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(super) fn fake(command: &str, walls: &[f64], instr: Option<f64>) -> AbSide {
        let runs = walls
            .iter()
            .map(|w| AbRun {
                wall_s: *w,
                cpu_s: *w,
                user_s: *w,
                sys_s: 0.0,
                counters: instr
                    .map(|i| BTreeMap::from([(name::INSTRUCTIONS.to_string(), i)]))
                    .unwrap_or_default(),
                contention: None,
            })
            .collect();
        side(command, runs, Vec::new())
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
        assert!(r.significant && r.regression, "{r:?}");
        assert_eq!(r.faster, "A");
        assert!(
            r.diagnosis.starts_with("more instructions"),
            "{}",
            r.diagnosis
        );
    }

    #[test]
    fn same_instructions_but_slower_points_at_stalls() {
        let a = fake("a", &[1.0, 1.01, 0.99, 1.0, 1.02], Some(1e9));
        let b = fake("b", &[1.2, 1.21, 1.19, 1.2, 1.22], Some(1e9 * (1.0 + 5e-5)));
        let r = compare(a, b, 0.5, vec![]);
        assert!(
            r.diagnosis
                .starts_with("same instructions (within 0.01 %) but slower")
        );
        assert!(!r.regression, "20 % is under the 50 % threshold");
    }

    #[test]
    fn overlapping_times_with_instructions_beyond_their_noise_say_what_to_expect() {
        // The PMU counted 1.0 G and 1.1 G in every run: exact counts, 10 % apart.
        let a = fake("a", &[1.0, 1.1, 0.9, 1.05, 0.95], Some(1e9));
        let b = fake("b", &[1.02, 0.92, 1.08, 0.97, 1.01], Some(1.1e9));
        let r = compare(a, b, 0.05, vec![]);
        assert!(
            r.diagnosis.starts_with(
                "time inconclusive (p = 1.000); B executes 10.0 % more instructions \
                 (5 counts of A and 5 of B by PMU, run-to-run noise 0.00 %): expect it slower"
            ),
            "{}",
            r.diagnosis
        );
        let s = r.instructions.as_ref().unwrap();
        assert!(s.beyond_noise && s.suggested_runs.unwrap() > 5, "{s:?}");
        assert_eq!(r.faster, "neither");
        assert!(!r.regression);
    }

    #[test]
    fn overlapping_times_with_the_same_instructions_are_noise() {
        let a = fake("a", &[1.0, 1.1, 0.9, 1.05, 0.95], Some(1e9));
        let b = fake("b", &[1.02, 0.92, 1.08, 0.97, 1.01], Some(1e9));
        let r = compare(a, b, 0.05, vec![]);
        assert!(
            r.diagnosis.starts_with("not significant: noise"),
            "{}",
            r.diagnosis
        );
        let none = compare(
            fake("a", &[1.0, 1.1, 0.9], None),
            fake("b", &[1.0, 1.1, 0.9], None),
            0.05,
            vec![],
        );
        assert!(none.instructions.is_none());
        assert!(none.diagnosis.starts_with("not significant: noise"));
    }

    #[test]
    fn fewer_instructions_and_faster() {
        let a = fake("a", &[2.0, 2.01, 1.99, 2.0], Some(2e9));
        let b = fake("b", &[1.0, 1.01, 0.99, 1.0], Some(1e9));
        let r = compare(a, b, 0.05, vec![]);
        assert_eq!(r.faster, "B");
        assert!(
            r.diagnosis.starts_with("fewer instructions (-50.0 %)"),
            "{}",
            r.diagnosis
        );
    }
}
