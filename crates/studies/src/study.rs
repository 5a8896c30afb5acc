//! What a study is: its plan ([`Study`]), what the plan needs from its caller
//! ([`StudyEnv`]) and what the user may override ([`StudyOverrides`]). The registry
//! of the built-in studies is the crate's root.

use std::collections::BTreeMap;
use std::time::Duration;
use xferbench_lab::measure::{Bench, LoopOptions};
use xferbench_lab::observer::Observer;
use xferbench_lab::result::{ResultDoc, Settings};
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
    /// What it found, for [`StudyInfo::extras`](xferbench_lab::result::StudyInfo::extras).
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
    /// Run only the points this filter keeps (`--only`, [`subset`](crate::subset)).
    pub only: Option<crate::subset::PointFilter>,
}
