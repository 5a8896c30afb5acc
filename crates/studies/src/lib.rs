//! The built-in studies: each is a plan of points behind the [`Study`] trait, run by
//! the one point loop ([`xferbench_lab::measure`]) into one [`ResultDoc`] with its
//! [`StudyInfo`].
//!
//! # The study contract
//!
//! * A study names itself, says in one line what it reproduces, lists the
//!   participants a profile can record, and plans its points, full or `--quick`
//!   ([`Study::plan`]).
//! * Its plan is a [`Bench`]: the points and a rig for each. Workloads live in
//!   [`xferbench_lab::workload`], rigs in [`xferbench_lab::rig`]; a study file holds the plan only.
//! * What a study measures is points of its plan, timed or counted (a calibration,
//!   callgrind's counts: points of their own run count,
//!   [`PlannedPoint::runs`](xferbench_lab::plan::PlannedPoint::runs)); what it
//!   decides or reads off them (the points the plan left out, an estimate) goes
//!   into [`StudyInfo::extras`], and what it must learn while its plan runs comes
//!   from a [`StudyWatch`] over it.
//! * Rendering is the study's writer (`<study>/writer.rs`), argument parsing the
//!   CLI's: one table-driven dispatcher over [`registry`].
//!
//! Every study thereby gets warm-up and repeated runs, estimates with intervals, CPU
//! of every process, counters, profiles, observers, the versioned result and
//! `compare` with no code of its own.

#![deny(missing_docs)]

pub mod finding;
pub mod folder;
pub mod hashtable;
pub mod params;
pub mod perf_stat;
pub mod rpmsg;
pub mod sis8300;
pub mod subset;
pub mod warp_pipe;

#[cfg(test)]
mod browser_tests;
#[cfg(test)]
mod docs_data_tests;
#[cfg(test)]
mod docs_figures_tests;
#[cfg(test)]
mod folder_tests;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use xferbench_lab::measure::{Bench, LoopOptions, run_plan};
use xferbench_lab::observer::Observer;
use xferbench_lab::result::{Context, ResultDoc, Settings, StudyInfo};
use xferbench_probes::counters::CounterMode;
use xferbench_probes::process::Launcher;

/// What a study's plan needs from its caller.
#[derive(Debug, Clone, Default)]
pub struct StudyEnv {
    /// How to start participant processes (remotes, memory mocks, clients); `None`
    /// runs them as threads of this process, for tests.
    pub launcher: Option<Launcher>,
    /// `--full`: every cell of the original's matrix, where a study's default
    /// leaves some out for time ([`Study::has_full`]).
    pub full: bool,
    /// The participant `--profile` records, when it does: a study may add a point
    /// long enough to profile on its own.
    pub profiling: Option<String>,
    /// The agent that runs the serving side on another host (`--remote`); only
    /// studies whose participants can cross hosts use it (warp-pipe).
    pub remote: Option<xferbench_lab::remote::RemoteTarget>,
    /// `--pin`: pin the participants as `run --pin` pins drivers and peers (only
    /// studies whose [`Study::pins`] is true are given it).
    pub pin: bool,
    /// Where a study tells the user what it learns while its plan runs (`--full`'s
    /// estimate): a line for stderr; `None` (tests, `--quiet`) says nothing.
    pub say: Option<fn(&str)>,
}

impl StudyEnv {
    /// The settings a study records in its context: its workload, the run control of
    /// `options`, where participants ran, and whether payloads are verified.
    pub fn settings(&self, workload: &str, options: &LoopOptions, verify: bool) -> Settings {
        Settings {
            workload: workload.into(),
            runs: options.runs,
            warmup: options.warmup,
            count: None,
            duration_s: None,
            peer: if self.remote.is_some() {
                "remote"
            } else if self.launcher.is_some() {
                "process"
            } else {
                "thread"
            }
            .into(),
            pin: self.pin,
            verify,
            interleave: options.interleave,
        }
    }
}

/// A planned study: its points on their rigs, and how to run them.
pub struct StudyPlan {
    /// The points and their rigs.
    pub bench: Box<dyn Bench>,
    /// Runs, warm-up and order (interleaved wherever the study compares variants).
    pub options: LoopOptions,
    /// The run-control settings recorded in the context.
    pub settings: Settings,
    /// What the study measured or decided besides its points.
    pub extras: BTreeMap<String, serde_json::Value>,
    /// What reads the study's own points while they run, if anything does.
    pub watch: Option<Box<dyn StudyWatch>>,
}

/// Reads a study's own points while its plan runs (the RPMsg study's `--full`
/// estimate, made once its calibration points have finished): an observer of the
/// plan, after the caller's, whose findings join the study's extras when the plan
/// ends.
pub trait StudyWatch: Observer {
    /// What it found, for [`StudyInfo::extras`].
    fn extras(&mut self) -> BTreeMap<String, serde_json::Value>;
}

/// A built-in study.
pub trait Study: Sync {
    /// Its name on the command line and in results (`rpmsg`, `warp-pipe`).
    fn name(&self) -> &'static str;
    /// One line for `xferbench list`.
    fn description(&self) -> &'static str;
    /// The participants `--profile-peer` can name; `main` first.
    fn participants(&self) -> &'static [&'static str];
    /// The plan, full or quick.
    fn plan(&self, quick: bool, env: &StudyEnv) -> StudyPlan;
    /// The participant `--profile` records unless `--profile-peer` names one.
    fn profile_peer(&self) -> &'static str {
        "main"
    }
    /// Whether `--full` adds anything to this study's default plan.
    fn has_full(&self) -> bool {
        false
    }
    /// Whether it pins its participants with `--pin` ([`StudyEnv::pin`]).
    fn pins(&self) -> bool {
        false
    }
    /// Whether its serving side can run on another host (`--remote`): only where its
    /// participants share no memory or kernel.
    fn crosses_hosts(&self) -> bool {
        false
    }
    /// What the study reads off the profiles of its points after a `--profile` run
    /// (`profiles`: the folded recordings of `participant` by point index), for
    /// its extras.
    fn profile_extras(
        &self,
        _doc: &ResultDoc,
        _participant: &str,
        _profiles: &BTreeMap<usize, xferbench_probes::profile::Folded>,
    ) -> BTreeMap<String, serde_json::Value> {
        BTreeMap::new()
    }
}

/// Overrides of a study's own run control (`study --runs`, `--warmup`, …).
#[derive(Debug, Clone, Default)]
pub struct StudyOverrides {
    /// Measured runs per point.
    pub runs: Option<usize>,
    /// Warm-up runs per visit.
    pub warmup: Option<usize>,
    /// Round-robin order (`Some(false)` to run point by point).
    pub interleave: Option<bool>,
    /// Counters per participant.
    pub counters: Option<CounterMode>,
    /// Profile one participant of every point.
    pub profile: Option<xferbench_probes::profile::ProfileRequest>,
    /// Hang timeout.
    pub hang_timeout: Option<Duration>,
    /// Measure the machine's limits and watch it for drift (`None`: `--no-limits`).
    pub watch: Option<xferbench_lab::limits::Watch>,
    /// Run only the points this filter keeps (`--only`, [`subset`]).
    pub only: Option<subset::PointFilter>,
}

/// A built-in study: its plan and the writer of its folder.
pub struct Registered {
    /// The study: its name, description and plan.
    pub study: &'static dyn Study,
    /// Its folder's tables, plots and summary.
    pub writer: folder::Writer,
}

impl std::ops::Deref for Registered {
    type Target = dyn Study;
    fn deref(&self) -> &(dyn Study + 'static) {
        self.study
    }
}

/// Every built-in study, in the order `list` shows them. Adding a study is one
/// folder and one line here.
static REGISTRY: &[Registered] = &[
    Registered {
        study: &rpmsg::RpmsgStudy,
        writer: rpmsg::writer::write,
    },
    Registered {
        study: &warp_pipe::WarpPipe,
        writer: warp_pipe::writer::write,
    },
    Registered {
        study: &hashtable::Hashtable,
        writer: hashtable::writer::write,
    },
    Registered {
        study: &sis8300::Sis8300,
        writer: sis8300::writer::write,
    },
    Registered {
        study: &perf_stat::PerfStat,
        writer: perf_stat::writer::write,
    },
];

/// Every built-in study, in the order `list` shows them.
pub fn registry() -> &'static [Registered] {
    REGISTRY
}

/// A study by name, or the list of names to choose from.
pub fn find(name: &str) -> Result<&'static Registered, String> {
    REGISTRY.iter().find(|s| s.name() == name).ok_or_else(|| {
        let names: Vec<&str> = REGISTRY.iter().map(|s| s.name()).collect();
        format!("unknown study `{name}`; choose from: {}", names.join(", "))
    })
}

/// Plans and runs a study; `context` builds the measurement context from the
/// settings the plan decided. The document records the study, its extras, and how
/// it ended (interruptions and failures included).
pub fn run_study(
    study: &dyn Study,
    quick: bool,
    overrides: &StudyOverrides,
    env: &StudyEnv,
    context: impl FnOnce(Settings) -> Context,
    stop: &AtomicBool,
    observers: &mut [&mut dyn Observer],
) -> ResultDoc {
    let mut plan = study.plan(quick, env);
    if let Some(f) = &overrides.only {
        plan = StudyPlan {
            bench: Box::new(subset::Subset::new(plan.bench, f)),
            ..plan
        };
        plan.extras
            .insert("only".into(), serde_json::json!(f.text()));
    }
    let o = &mut plan.options;
    if let Some(r) = overrides.runs {
        o.runs = r;
    }
    if let Some(w) = overrides.warmup {
        o.warmup = w;
    }
    if let Some(i) = overrides.interleave {
        o.interleave = i;
    }
    if let Some(c) = overrides.counters {
        o.counters = c;
    }
    if let Some(t) = overrides.hang_timeout {
        o.hang_timeout = t;
    }
    o.profile = overrides.profile.clone();
    o.watch = overrides.watch.clone();
    plan.settings.runs = o.runs;
    plan.settings.warmup = o.warmup;
    plan.settings.interleave = o.interleave;
    let planned_points = plan.bench.points().len();
    let no_match = overrides.only.as_ref().filter(|_| planned_points == 0);
    let mut all: Vec<&mut dyn Observer> = observers
        .iter_mut()
        .map(|o| &mut **o as &mut dyn Observer)
        .collect();
    if let Some(w) = plan.watch.as_mut() {
        all.push(w.as_mut() as &mut dyn Observer);
    }
    let mut doc = run_plan(
        context(plan.settings.clone()),
        plan.bench.as_mut(),
        &plan.options,
        stop,
        &mut all,
    );
    drop(all);
    if let Some(w) = plan.watch.as_mut() {
        plan.extras.extend(w.extras());
    }
    // Rows a study left out, and why (`extras.skipped`), are warnings of the run.
    if let Some(skipped) = plan.extras.get("skipped").and_then(|v| v.as_array()) {
        doc.warnings.extend(
            skipped
                .iter()
                .filter_map(|v| v.as_str())
                .map(|s| format!("skipped: {s}")),
        );
    }
    if let Some(f) = no_match {
        doc.outcome = xferbench_lab::result::Outcome::Failed {
            error: format!("--only {f}: no point of the plan matches"),
        };
    }
    doc.study = Some(StudyInfo {
        name: study.name().into(),
        quick,
        planned_points,
        extras: plan.extras,
    });
    doc
}
