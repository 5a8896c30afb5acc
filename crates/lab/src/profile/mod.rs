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
//!    (speedscope's "sandwich" view).

pub mod fold;
pub mod perf_record;
pub mod speedscope;

pub use fold::{Folded, FunctionShare};
pub use perf_record::{ProfileError, preflight};

use std::path::{Path, PathBuf};

/// `--profile DIR --profile-peer NAME` on a run: profile one participant of every
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

/// Runs `perf script` on a recording and folds its stacks.
pub fn analyse(perf_data: &Path) -> Result<Folded, ProfileError> {
    let script = perf_record::script(perf_data)?;
    fold::collapse_perf_script(&script).map_err(|e| ProfileError::Io {
        what: format!("folding the stacks of {}", perf_data.display()),
        source: e,
    })
}
