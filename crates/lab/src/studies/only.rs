//! `study NAME --only KEY=VALUE`: a study's plan narrowed to the points whose
//! parameters match (a subset to rerun, or a short check of a setup).

use crate::counters::CounterSource;
use crate::plan::{Bench, PlannedPoint};
use crate::rig::{Rig, RunError};

/// The points of `inner` whose params match every `KEY=VALUE`.
pub struct Only {
    inner: Box<dyn Bench>,
    keep: Vec<usize>,
    points: Vec<PlannedPoint>,
}

impl Only {
    /// Narrows `inner` to the points matching all of `only`.
    pub fn new(inner: Box<dyn Bench>, only: &[(String, String)]) -> Only {
        let keep: Vec<usize> = inner
            .points()
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                only.iter()
                    .all(|(k, v)| p.params.get(k).is_some_and(|have| have == v))
            })
            .map(|(i, _)| i)
            .collect();
        let points = keep.iter().map(|&i| inner.points()[i].clone()).collect();
        Only {
            inner,
            keep,
            points,
        }
    }
}

impl Bench for Only {
    fn points(&self) -> &[PlannedPoint] {
        &self.points
    }

    fn rig(
        &mut self,
        index: usize,
        source: Option<&dyn CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError> {
        self.inner.rig(self.keep[index], source)
    }
}
