//! The built-in studies: each is a plan of points behind the [`Study`] trait, run by
//! the one point loop ([`xferbench_lab::measure`]) into one [`ResultDoc`] with its
//! [`StudyInfo`].
//!
//! # The study contract
//!
//! * A study names itself, says in one line what it reproduces, lists the
//!   participants a profile can record, and plans its points, full or `--quick`
//!   ([`Study::plan`]).
//! * Its plan is a [`Bench`](xferbench_lab::measure::Bench): the points and a rig for each. Workloads live in
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
pub mod study;
pub mod subset;
pub mod warp_pipe;

pub use study::{Study, StudyEnv, StudyOverrides, StudyPlan, StudyWatch};

#[cfg(test)]
mod browser_tests;
#[cfg(test)]
mod docs_data_tests;
#[cfg(test)]
mod docs_figures_tests;
#[cfg(test)]
mod folder_tests;

use std::sync::atomic::AtomicBool;
use xferbench_lab::measure::run_plan;
use xferbench_lab::observer::Observer;
use xferbench_lab::result::{Context, ResultDoc, Settings, StudyInfo};

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

/// Writes a study's whole folder: `results.json`, then the study's own files, then
/// `report.html` showing every table, plot and finding the study wrote.
pub fn write_folder(
    dir: &std::path::Path,
    doc: &ResultDoc,
) -> anyhow::Result<xferbench_report::study::StudyFolder> {
    use anyhow::Context as _;
    use xferbench_report::study::StudyFolder;
    let folder = StudyFolder::create(dir)?;
    folder.write_json("results.json", doc)?;
    let name = doc
        .study
        .as_ref()
        .map(|s| s.name.as_str())
        .context("the document is not a study's (no `study` section)")?;
    let study = find(name).map_err(anyhow::Error::msg)?;
    (study.writer)(&folder, doc)?;
    let page = xferbench_report::html::study_page(doc, &folder.written());
    xferbench_report::write_atomic(&dir.join("report.html"), |w| w.write_all(page.as_bytes()))
        .with_context(|| format!("cannot write {}", dir.join("report.html").display()))?;
    Ok(folder)
}
