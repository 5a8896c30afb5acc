//! `study … --only KEY=VALUE`: run the points of a study's plan whose parameters match,
//! and no others. The points run exactly as in the whole study (same rig, size and
//! run control); only the rest of the plan is left out. Tests use it to profile a
//! few cases of a long study, and users to re-measure one group.
//!
//! The filter is `KEY=VALUE[|VALUE…][,KEY=VALUE…]` (repeated `--only` flags are joined
//! with commas): a point is kept when, for every
//! key, its parameter equals one of the values (`group=test3`,
//! `group=cases|profile,arch=sharded`).

use xferbench_lab::plan::{Bench, PlannedPoint};
use xferbench_lab::rig::{Rig, RunError};
use xferbench_probes::counters::CounterSource;

/// A parsed filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointFilter {
    terms: Vec<(String, Vec<String>)>,
    text: String,
}

impl PointFilter {
    /// Parses `KEY=VALUE[|VALUE…][,…]`.
    pub fn parse(text: &str) -> Result<PointFilter, String> {
        let mut terms = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (k, v) = term
                .split_once('=')
                .ok_or_else(|| format!("--only: `{term}` is not KEY=VALUE"))?;
            let values: Vec<String> = v.split('|').map(|s| s.trim().to_string()).collect();
            if k.trim().is_empty() || values.iter().any(String::is_empty) {
                return Err(format!("--only: `{term}` is not KEY=VALUE"));
            }
            terms.push((k.trim().to_string(), values));
        }
        if terms.is_empty() {
            return Err("--only: an empty filter; give KEY=VALUE".to_string());
        }
        Ok(PointFilter {
            terms,
            text: text.trim().to_string(),
        })
    }

    /// Whether `p` is kept.
    pub fn keeps(&self, p: &PlannedPoint) -> bool {
        self.terms
            .iter()
            .all(|(k, vs)| p.params.get(k).is_some_and(|v| vs.contains(v)))
    }

    /// The filter as given.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for PointFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The points of `inner` that a filter keeps, as a plan of their own.
pub struct Subset {
    inner: Box<dyn Bench>,
    kept: Vec<usize>,
    points: Vec<PlannedPoint>,
}

impl Subset {
    /// The kept points of `inner` (perhaps none).
    pub fn new(inner: Box<dyn Bench>, filter: &PointFilter) -> Subset {
        let kept: Vec<usize> = (0..inner.points().len())
            .filter(|&i| filter.keeps(&inner.points()[i]))
            .collect();
        let points = kept.iter().map(|&i| inner.points()[i].clone()).collect();
        Subset {
            inner,
            kept,
            points,
        }
    }
}

impl Bench for Subset {
    fn points(&self) -> &[PlannedPoint] {
        &self.points
    }

    fn rig(
        &mut self,
        index: usize,
        source: Option<&dyn CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError> {
        let i = *self
            .kept
            .get(index)
            .ok_or_else(|| RunError::Config(format!("no point {index} in the subset")))?;
        self.inner.rig(i, source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(group: &str, arch: &str) -> PlannedPoint {
        PlannedPoint {
            params: [("group", group), ("arch", arch)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            size_bytes: 0,
            channels: 1,
            rules: xferbench_lab::record::FigureRules {
                primary: "x",
                higher_is_better: true,
            },
            verify: false,
            runs: None,
        }
    }

    #[test]
    fn a_point_is_kept_when_every_key_matches_one_of_its_values() {
        let f = PointFilter::parse("group=cases|profile, arch=sharded").unwrap();
        assert!(f.keeps(&point("profile", "sharded")));
        assert!(f.keeps(&point("cases", "sharded")));
        assert!(!f.keeps(&point("redis", "sharded")));
        assert!(!f.keeps(&point("cases", "ring")));
        assert!(
            !PointFilter::parse("group=x").unwrap().keeps(&PlannedPoint {
                params: Default::default(),
                ..point("a", "b")
            })
        );
        for bad in ["", "group", "=x", "group=", "group=a|"] {
            let e = PointFilter::parse(bad).unwrap_err();
            assert!(e.contains("--only"), "{bad}: {e}");
        }
    }
}
