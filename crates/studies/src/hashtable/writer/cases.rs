//! The seed's seven cases, its printed ratios and sentences, and the points of a
//! document that answer them: what the tables and the findings both read.

use super::super::CASE;
use crate::folder::{median, param};
use crate::params::GROUP;
use xferbench_lab::result::{PointResult, ResultDoc};
use xferbench_lab::rig::kv::SERVER;
use xferbench_lab::rig::kv::figures as f;

/// The original's cases, in `benchmark.sh` order: (CSV name, words of the summary).
pub const CASES: [(&str, &str); 7] = [
    ("AloneSingleThread", "alone at 1 thread"),
    ("TwoSingleThread", "one visitor at 1 thread"),
    ("AloneMultiThread", "alone at 16 threads"),
    ("TwoMultiThread", "one visitor at 16 threads"),
    ("ManyClientsST", "16 visitors at 1 thread"),
    ("ManyClientsMT", "16 visitors at 16 threads"),
    ("SCManyThreads", "alone at 32 threads"),
];

/// The seed's mean time per `client 100 10` run, ms, per case in [`CASES`] order:
/// the CSVs at the seed's commit `4ce91a1`, `preopt.log`, and `main`'s `postop.log`.
pub const SEED_MEAN_MS: [[f64; 7]; 3] = [
    [48.62, 79.62, 54.73, 88.90, 2532.8, 2806.7, 58.24],
    [42.7, 58.5, 46.1, 56.3, 2364.0, 2638.0, 43.3],
    [18.9, 17.4, 20.1, 20.1, 183.7, 160.6, 19.2],
];
/// The seed's standard deviations at `4ce91a1`, ms.
pub const SEED_SD_MS: [f64; 7] = [2.26, 13.14, 4.15, 4.91, 17.3, 108.1, 6.96];
/// Labels of the three reference columns.
pub const SEED_COLUMNS: [&str; 3] = ["seed @4ce91a1", "origins' preopt.log", "main postop.log"];

/// The seven sentences: (label, subject case, reference case); the figure is
/// T(reference) / T(subject), "faster" when ≥ 1, as the original's evaluator prints.
pub const SENTENCES: [(&str, usize, usize); 7] = [
    ("S1", 2, 0),
    ("S2", 6, 0),
    ("S3", 0, 1),
    ("S4", 0, 4),
    ("S5", 2, 3),
    ("S6", 2, 5),
    ("S7", 5, 4),
];
/// The seed's printed S1–S7, and `main`'s.
pub const SEED_RATIOS: [[f64; 7]; 2] = [
    [0.89, 0.83, 1.64, 52.09, 1.62, 51.28, 0.89],
    [0.94, 0.99, 0.92, 9.71, 1.00, 8.00, 1.14],
];

/// The point of `group`, `case` and architecture `arch`.
pub(super) fn find<'a>(
    doc: &'a ResultDoc,
    group: &str,
    case: &str,
    arch: &str,
) -> Option<&'a PointResult> {
    doc.points.iter().find(|p| {
        param(p, GROUP.name()) == group
            && param(p, CASE.name()) == case
            && param(p, SERVER.name()) == arch
    })
}

/// T(case) for an architecture: the mean time per run.
pub(super) fn time_of(doc: &ResultDoc, arch: &str, case: usize) -> Option<f64> {
    find(doc, "cases", CASES[case].0, arch)
        .and_then(|p| median(p, f::TIME_MEAN_S))
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// The sentence `label` for `arch`, in the seed's wording, or `None` when a case is
/// missing.
pub fn sentence(doc: &ResultDoc, arch: &str, s: usize) -> Option<(String, f64)> {
    let (_, a, b) = SENTENCES[s];
    let x = time_of(doc, arch, b)? / time_of(doc, arch, a)?;
    let word = if x >= 1.0 { "faster" } else { "slower" };
    Some((
        format!("{} is {word} than {}: {x:.2}x", CASES[a].1, CASES[b].1),
        x,
    ))
}
