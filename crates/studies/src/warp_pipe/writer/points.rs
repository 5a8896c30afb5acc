//! The points of a Warp Pipe document and their figures, as the tables and the
//! findings read them.

use super::super::VARIANT;
use crate::folder::{median, param};
use crate::params::GROUP;
use xferbench_lab::result::{PointResult, ResultDoc, figure};
use xferbench_lab::rig::memory_mock::figures::TRANSACTIONS_PER_S;
use xferbench_params::ParamDef;

/// The points of study group `g`.
pub(super) fn group<'a>(doc: &'a ResultDoc, g: &'a str) -> Vec<&'a PointResult> {
    doc.points
        .iter()
        .filter(|p| param(p, GROUP.name()) == g)
        .collect()
}

/// A point's numeric parameter `def`, or NaN.
pub(super) fn num(p: &PointResult, def: &ParamDef) -> f64 {
    param(p, def.name()).parse().unwrap_or(f64::NAN)
}

/// A point's median figure `f`, or NaN.
pub(super) fn med(p: &PointResult, f: &str) -> f64 {
    median(p, f).unwrap_or(f64::NAN)
}

/// The point of group `g` and variant `variant`.
pub(super) fn find<'a>(doc: &'a ResultDoc, g: &'a str, variant: &str) -> Option<&'a PointResult> {
    group(doc, g)
        .into_iter()
        .find(|p| param(p, VARIANT.name()) == variant)
}

/// A point's transactions per second.
pub(super) fn tps(p: &PointResult) -> f64 {
    med(p, TRANSACTIONS_PER_S)
}

/// A point's wall time, s.
pub(super) fn wall(p: &PointResult) -> f64 {
    med(p, figure::WINDOW)
}
