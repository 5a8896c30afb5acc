//! CPU profiles: record with `perf record`, fold the stacks, and turn them into the
//! speedscope file format and a top-functions table (rendering the flame graph and
//! writing files is the report crate's job).
//!
//! # Pipeline
//!
//! 1. [`perf_record`] runs `perf record -e cpu-clock -F 999 --call-graph dwarf`, on a
//!    command or attached to a pid (a participant of a run). `cpu-clock` is a software
//!    event, so profiles work without a hardware PMU (in VMs); DWARF unwinding gives
//!    whole stacks for our release binary, which has line tables
//!    (`debug = "line-tables-only"`) but no frame pointers (with `--call-graph fp`
//!    the user-space stacks stop after one frame).
//! 2. `perf script` prints the samples; [`fold`] collapses them into folded stacks
//!    (`inferno::collapse::perf`), one line per distinct stack with its sample count.
//! 3. [`speedscope`] writes the folded stacks as a speedscope `sampled` profile, and
//!    [`fold::Folded::top_functions`] computes each function's self and total share
//!    (speedscope's "sandwich" view); [`classify`] sorts the stacks into a study's
//!    categories (synchronisation, dispatch, …) by their symbols.

pub mod classify;
pub mod fold;
pub mod perf_record;
pub mod speedscope;

pub use fold::{Folded, FunctionShare};
pub use perf_record::{ProfileError, preflight};

use std::path::{Path, PathBuf};

/// `--profile=DIR --profile-peer NAME` on a run: profile one participant of every
/// point into `DIR/point-<index>/perf.data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileRequest {
    /// Output folder.
    pub dir: PathBuf,
    /// Participant name (`main`, `peer0`, …; see [`crate::counters::Participant`]).
    pub participant: String,
}

impl ProfileRequest {
    /// Where the recording of point `index` goes.
    pub fn point_dir(&self, index: usize) -> PathBuf {
        self.dir.join(format!("point-{index}"))
    }
}

/// What `xferbench profile --json` prints: where the outputs went and the top of
/// the profile.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct ProfileSummary {
    /// The profile's title.
    pub title: String,
    /// The folder of the outputs.
    pub dir: PathBuf,
    /// Every file written.
    pub outputs: Vec<PathBuf>,
    /// The recording.
    pub perf_data: PathBuf,
    /// Distinct stacks sampled.
    pub stacks: usize,
    /// CPU time sampled, nanoseconds.
    pub sampled_cpu_ns: u64,
    /// The functions with the largest self share, first the largest.
    pub top_functions: Vec<FunctionShare>,
}

/// Runs `perf script` on a recording and folds its stacks.
pub fn analyse(perf_data: &Path) -> Result<Folded, ProfileError> {
    let script = perf_record::script(perf_data)?;
    fold::collapse_perf_script(&script).map_err(|e| ProfileError::Io {
        what: format!("folding the stacks of {}", perf_data.display()),
        source: e,
    })
}

/// `study --profile DIR --profile-peer NAME`: records a named participant of a study
/// every time it appears (a study starts many remotes or memory mocks, one per point
/// or link), each into `DIR/point-<n>/perf.data`; [`analyse_all`] folds them into one
/// profile.
#[derive(Debug)]
pub struct ParticipantProfiler {
    req: ProfileRequest,
    recordings: Vec<PathBuf>,
}

impl ParticipantProfiler {
    /// A profiler for `req.participant`; checks that perf can record first.
    pub fn new(req: ProfileRequest) -> Result<ParticipantProfiler, ProfileError> {
        preflight()?;
        Ok(ParticipantProfiler {
            req,
            recordings: Vec::new(),
        })
    }

    /// The participant being profiled.
    pub fn participant(&self) -> &str {
        &self.req.participant
    }

    /// The output folder.
    pub fn dir(&self) -> &Path {
        &self.req.dir
    }

    /// Starts recording `pid` when `name` is the requested participant; the recording
    /// ends when the returned guard is stopped or dropped, or the process exits.
    pub fn attach(
        &mut self,
        name: &str,
        pid: u32,
    ) -> Result<Option<perf_record::Attached>, ProfileError> {
        if name != self.req.participant {
            return Ok(None);
        }
        let dir = self.req.point_dir(self.recordings.len());
        std::fs::create_dir_all(&dir).map_err(|source| ProfileError::Io {
            what: format!("creating {}", dir.display()),
            source,
        })?;
        let out = dir.join("perf.data");
        self.recordings.push(out.clone());
        perf_record::attach(pid, &out).map(Some)
    }

    /// Adds a recording made by someone else (the point loop's, one per point).
    pub fn adopt(&mut self, perf_data: PathBuf) {
        self.recordings.push(perf_data);
    }

    /// Every recording started so far.
    pub fn recordings(&self) -> &[PathBuf] {
        &self.recordings
    }
}

/// Folds several recordings into one profile: identical stacks add up. Recordings
/// that were never written (a participant that exited before perf attached) are
/// skipped; none at all is an error.
pub fn analyse_all(recordings: &[PathBuf]) -> Result<Folded, ProfileError> {
    let mut merged: std::collections::BTreeMap<Vec<String>, u64> = Default::default();
    let mut any = false;
    for data in recordings.iter().filter(|d| d.exists()) {
        any = true;
        for (frames, weight) in analyse(data)?.stacks {
            *merged.entry(frames).or_insert(0) += weight;
        }
    }
    if !any {
        return Err(ProfileError::Io {
            what: "reading the recordings".into(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no participant was recorded (it never ran, or exited before perf attached)",
            ),
        });
    }
    Ok(Folded {
        stacks: merged.into_iter().collect(),
    })
}
