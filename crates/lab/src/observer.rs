//! Observers of a sweep: progress bars, streaming files and live tables implement
//! [`Observer`]; every hook has a no-op default, and `measure::run_plan`
//! calls them in order for every observer. A failing observer (a full disk under the
//! JSON Lines file) stops the sweep with its error, keeping what finished.

use crate::plan::{PlannedPoint, RunProgress};
use crate::result::{Context, PointResult, ResultDoc};

/// Hooks called while a sweep runs.
pub trait Observer {
    /// Before the first point.
    fn sweep_started(
        &mut self,
        _context: &Context,
        _points: &[PlannedPoint],
    ) -> std::io::Result<()> {
        Ok(())
    }
    /// A point is about to start.
    fn point_started(&mut self, _index: usize, _point: &PlannedPoint) -> std::io::Result<()> {
        Ok(())
    }
    /// A run of the current point finished (warm-up runs included).
    fn run_finished(&mut self, _index: usize, _progress: RunProgress) {}
    /// A point finished.
    fn point_finished(&mut self, _result: &PointResult) -> std::io::Result<()> {
        Ok(())
    }
    /// The sweep ended, completely or not.
    fn sweep_finished(&mut self, _doc: &ResultDoc) -> std::io::Result<()> {
        Ok(())
    }
}
