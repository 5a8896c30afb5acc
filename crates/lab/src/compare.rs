//! `xferbench compare`: two result documents, point by point.
//!
//! Points are matched by their parameters (`workload`, `transport`, `size`,
//! `channels` and every `-p` parameter, or a study's own). For each pair the primary
//! figure its workload declared (stream: throughput, higher is better; pingpong:
//! median round trip, lower is better) is compared by the **means** of the per-run
//! figures, the quantity Welch's t-test tests, and the per-run figures of both sides go
//! through Welch's t-test ([`xferbench_probes::stats::welch_t_test`]). A change is a
//! regression when it is significant (p < [`crate::ab::ALPHA`]) and worse than the
//! threshold. Its interval, at the level `1 − ALPHA` the test is held to, is the
//! percentile bootstrap of the ratio of the means
//! ([`xferbench_probes::stats::bootstrap_ratio_of_means`]), less one.
//!
//! When both documents carry machine limits ([`crate::limits`]) and the point has a
//! natural limit, the change is also given normalised by that limit: the figure
//! divided by the limit measured in the same run, NEW against BASE. A raw regression
//! whose normalised change is small says "the machine was slower", not "the change
//! was slower". The verdict stays on the raw figures, which the test is about. A
//! point whose fraction of its limit is suspect on either side (above 110 %, see
//! [`crate::ratio`]) is not normalised: its limit does not bound it.
//!
//! A side that did not measure what it planned says so in [`Comparison::cautions`]: a
//! document that was interrupted or ended at a failed point, and a point measured
//! while processes outside the run used the machine (contended, see
//! [`xferbench_probes::contention`]). The verdicts stand on the figures; the cautions say which
//! of them describe a shared or cut-short run.

use crate::params::{describe as describe_params, same_point};
use crate::result::{Outcome, PointResult, ResultDoc, SCHEMA_VERSION};
use serde::Serialize;
use std::collections::BTreeMap;
use xferbench_probes::stats::{RatioInterval, bootstrap_ratio_of_means, mean, welch_t_test};

/// Why two documents cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A document of a newer layout.
    #[error("{which} has schema_version {found}; this xferbench reads up to {SCHEMA_VERSION}")]
    Schema {
        /// `BASE` or `NEW`.
        which: &'static str,
        /// Its version.
        found: u32,
    },
    /// The workloads differ.
    #[error("BASE ran {base} and NEW ran {new}: compare runs of the same workload")]
    Workload {
        /// BASE's workload.
        base: String,
        /// NEW's workload.
        new: String,
    },
    /// No point of one matches a point of the other.
    #[error(
        "no point of NEW matches a point of BASE by parameters (BASE has {base}; NEW has {new})"
    )]
    NothingInCommon {
        /// BASE's points, described.
        base: String,
        /// NEW's points, described.
        new: String,
    },
}

/// One matched point.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PointComparison {
    /// The point's parameters.
    pub params: BTreeMap<String, String>,
    /// The figure compared.
    pub figure: String,
    /// Whether higher values of the figure are better.
    pub higher_is_better: bool,
    /// Mean over BASE's runs.
    pub base: f64,
    /// Mean over NEW's runs.
    pub new: f64,
    /// `new / base − 1`.
    pub change: f64,
    /// The bootstrap interval of `change` at the level `1 − ALPHA` (0.99), when both
    /// sides have two runs or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_interval: Option<RatioInterval>,
    /// Welch's p-value, when both sides have two runs or more.
    pub p_value: Option<f64>,
    /// `regression`, `improvement`, `within threshold` or `not significant`.
    pub verdict: String,
    /// The change normalised by the point's natural limit, measured in each run:
    /// `(new / limit_new) / (base / limit_base) − 1`; absent unless both sides carry
    /// it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normalised: Option<Normalised>,
}

/// A change held against the machine's own limit in each run.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Normalised {
    /// The limit (`memcpy 64 KiB`, `futex wake round trip`).
    pub limit: String,
    /// Its value in BASE's run.
    pub base_limit: f64,
    /// Its value in NEW's run.
    pub new_limit: f64,
    /// `new_limit / base_limit − 1`: how much the machine itself moved.
    pub machine_change: f64,
    /// The figure's change once each side is divided by its own limit.
    pub change: f64,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Comparison {
    /// Matched points, in BASE's order.
    pub points: Vec<PointComparison>,
    /// Points only in BASE, described.
    pub only_in_base: Vec<String>,
    /// Points only in NEW, described.
    pub only_in_new: Vec<String>,
    /// Number of regressions.
    pub regressions: usize,
    /// The threshold, as a fraction.
    pub threshold: f64,
    /// Plugin transports measured from different builds (another SHA-256 of the
    /// file), or in one document only, described.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugin_builds: Vec<String>,
    /// What limits the comparison: a side interrupted or ended by a failed point, and
    /// matched points measured on a contended machine, described.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cautions: Vec<String>,
}

/// The cautions of a comparison (see [`Comparison::cautions`]): each side's outcome
/// when it is not complete, then each compared point that either side measured while
/// the machine was contended, with what its verdict was.
fn cautions(
    base: &ResultDoc,
    new: &ResultDoc,
    points: &[(&PointResult, &PointResult, &str)],
) -> Vec<String> {
    let mut out = Vec::new();
    for (which, d) in [("BASE", base), ("NEW", new)] {
        match &d.outcome {
            Outcome::Complete => {}
            Outcome::Interrupted => out.push(format!(
                "{which} was interrupted: it holds only the points that finished ({} of them)",
                d.points.len()
            )),
            Outcome::Failed { error } => out.push(format!(
                "{which} ended at a failed point ({}): it holds only the {} point(s) before it",
                error.lines().next().unwrap_or_default(),
                d.points.len()
            )),
        }
    }
    for (b, n, verdict) in points {
        let busy: Vec<String> = [("BASE", b), ("NEW", n)]
            .into_iter()
            .filter_map(|(which, p)| {
                let c = p.contention.as_ref().filter(|c| c.contended)?;
                Some(format!(
                    "{which} while processes outside the run used {:.2} CPUs (steal {:.1} %)",
                    c.others_cpus,
                    c.steal * 100.0
                ))
            })
            .collect();
        if !busy.is_empty() {
            out.push(format!(
                "{}: measured contended, {}: its verdict ({verdict}) describes a shared machine; measure again on a quiet one",
                describe_params(&b.params),
                busy.join(", and ")
            ));
        }
    }
    out
}

/// How the plugin transports of two documents differ: one line per transport whose
/// file (SHA-256) differs, or that only one document measured.
pub fn plugin_builds(base: &ResultDoc, new: &ResultDoc) -> Vec<String> {
    let show = |p: &crate::result::PluginRecord| {
        format!(
            "{} {} (sha256 {}…, {})",
            p.plugin,
            p.version,
            &p.sha256[..p.sha256.len().min(12)],
            p.path
        )
    };
    let mut out = Vec::new();
    for b in &base.context.plugins {
        match new.context.plugins.iter().find(|n| n.name == b.name) {
            Some(n) if n.sha256 != b.sha256 => out.push(format!(
                "plugin transport `{}`: BASE {} vs NEW {}",
                b.name,
                show(b),
                show(n)
            )),
            Some(_) => {}
            None => out.push(format!(
                "plugin transport `{}` only in BASE: {}",
                b.name,
                show(b)
            )),
        }
    }
    for n in &new.context.plugins {
        if !base.context.plugins.iter().any(|b| b.name == n.name) {
            out.push(format!(
                "plugin transport `{}` only in NEW: {}",
                n.name,
                show(n)
            ));
        }
    }
    out
}

fn run_values(p: &PointResult, fig: &str) -> Vec<f64> {
    p.runs
        .iter()
        .filter_map(|r| r.figures.get(fig).copied())
        .collect()
}

/// One point of BASE against its match in NEW, by their primary figure's runs:
/// the change in means, Welch's test, the verdict against `threshold`, and the
/// change against both held to the same limit. `None` when either has no runs of
/// the figure.
fn compare_point(b: &PointResult, n: &PointResult, threshold: f64) -> Option<PointComparison> {
    let primary = b.primary();
    let (fig, higher_is_better) = (primary.figure.as_str(), primary.higher_is_better);
    let (vb, vn) = (run_values(b, fig), run_values(n, fig));
    let (mb, mn) = (mean(&vb)?, mean(&vn)?);
    // The change is in means, the quantity Welch's t-test compares.
    let change = if mb != 0.0 { mn / mb - 1.0 } else { 0.0 };
    let p_value = welch_t_test(&vb, &vn).map(|w| w.p);
    let change_interval =
        bootstrap_ratio_of_means(&vb, &vn, 1.0 - crate::ab::ALPHA).map(|r| RatioInterval {
            low: r.low - 1.0,
            high: r.high - 1.0,
            ..r
        });
    let significant = p_value.is_some_and(|p| p < crate::ab::ALPHA);
    let worse = if higher_is_better { -change } else { change };
    let verdict = if !significant {
        "not significant"
    } else if worse > threshold {
        "regression"
    } else if -worse > threshold {
        "improvement"
    } else {
        "within threshold"
    };
    let normalised = match (&b.limit, &n.limit) {
        (Some(lb), Some(ln))
            if lb.limit == ln.limit
                && !lb.suspect
                && !ln.suspect
                && lb.limit_value > 0.0
                && mb != 0.0 =>
        {
            Some(Normalised {
                limit: lb.limit.clone(),
                base_limit: lb.limit_value,
                new_limit: ln.limit_value,
                machine_change: ln.limit_value / lb.limit_value - 1.0,
                change: (mn / ln.limit_value) / (mb / lb.limit_value) - 1.0,
            })
        }
        _ => None,
    };
    Some(PointComparison {
        params: b.params.clone(),
        figure: fig.into(),
        higher_is_better,
        base: mb,
        new: mn,
        change,
        change_interval,
        p_value,
        verdict: verdict.into(),
        normalised,
    })
}

/// Compares NEW against BASE; `threshold` is a fraction (0.05 for 5 %).
pub fn compare_docs(
    base: &ResultDoc,
    new: &ResultDoc,
    threshold: f64,
) -> Result<Comparison, CompareError> {
    for (which, d) in [("BASE", base), ("NEW", new)] {
        if d.schema_version > SCHEMA_VERSION {
            return Err(CompareError::Schema {
                which,
                found: d.schema_version,
            });
        }
    }
    let (wb, wn) = (
        &base.context.settings.workload,
        &new.context.settings.workload,
    );
    if wb != wn {
        return Err(CompareError::Workload {
            base: wb.clone(),
            new: wn.clone(),
        });
    }
    let mut points = Vec::new();
    let mut pairs: Vec<(&PointResult, &PointResult)> = Vec::new();
    let mut only_in_base = Vec::new();
    for b in &base.points {
        let Some(n) = new.points.iter().find(|n| same_point(&n.params, &b.params)) else {
            only_in_base.push(describe_params(&b.params));
            continue;
        };
        if let Some(c) = compare_point(b, n, threshold) {
            pairs.push((b, n));
            points.push(c);
        }
    }
    let only_in_new: Vec<String> = new
        .points
        .iter()
        .filter(|n| !base.points.iter().any(|b| same_point(&b.params, &n.params)))
        .map(|n| describe_params(&n.params))
        .collect();
    if points.is_empty() {
        let list = |d: &ResultDoc| {
            let v: Vec<String> = d
                .points
                .iter()
                .map(|p| describe_params(&p.params))
                .collect();
            if v.is_empty() {
                "no points".into()
            } else {
                v.join("; ")
            }
        };
        return Err(CompareError::NothingInCommon {
            base: list(base),
            new: list(new),
        });
    }
    let regressions = points.iter().filter(|p| p.verdict == "regression").count();
    let judged: Vec<(&PointResult, &PointResult, &str)> = pairs
        .iter()
        .zip(&points)
        .map(|(&(b, n), c)| (b, n, c.verdict.as_str()))
        .collect();
    let cautions = cautions(base, new, &judged);
    Ok(Comparison {
        points,
        only_in_base,
        only_in_new,
        regressions,
        threshold,
        plugin_builds: plugin_builds(base, new),
        cautions,
    })
}
