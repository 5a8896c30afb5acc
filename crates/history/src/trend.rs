//! A trend: one point's figure across the recorded runs, oldest first.
//!
//! The filters choose the runs (`name`: the workload or study) and the point (its
//! label, or `NAME=VALUE` parameters it must have); together they must name exactly
//! one point, or the error lists the candidates. The figure is the point's primary
//! one unless another is named, in which case it comes from each run's stored
//! document. Runs on a machine other than the newest entry's are marked, since their
//! figures are not comparable with it.

use crate::db::History;
use crate::error::HistoryError;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use xferbench_lab::params::{describe, matches};
use xferbench_lab::workload::WORKLOAD;

/// What to follow.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrendFilter {
    /// Only runs of this workload or study.
    pub name: Option<String>,
    /// The point's label exactly, as `history show` prints it (or as stored).
    pub point: Option<String>,
    /// Parameters the point must have, each matched as its definition reads it.
    pub params: Vec<(String, String)>,
    /// A figure other than the point's primary one.
    pub figure: Option<String>,
    /// Only the newest this many entries.
    pub limit: Option<usize>,
}

impl TrendFilter {
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = &self.name {
            parts.push(format!("--name {n}"));
        }
        if let Some(p) = &self.point {
            parts.push(format!("--point {p:?}"));
        }
        for (k, v) in &self.params {
            parts.push(format!("-p {k}={v}"));
        }
        if parts.is_empty() {
            "no filters".into()
        } else {
            parts.join(" ")
        }
    }
}

/// One run's value of the followed figure.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TrendEntry {
    /// The run's id.
    pub run_id: i64,
    /// When it started.
    pub time: String,
    /// The machine's short id.
    pub machine_id: String,
    /// The machine's host name.
    pub hostname: String,
    /// Whether this run was on another machine than the newest entry's.
    pub other_machine: bool,
    /// The git commit of the working directory.
    pub git_commit: Option<String>,
    /// Whether the working directory had changes.
    pub git_dirty: Option<bool>,
    /// The median over the point's runs.
    pub value: f64,
    /// Lower end of the median's confidence interval.
    pub ci_low: Option<f64>,
    /// Upper end of the median's confidence interval.
    pub ci_high: Option<f64>,
    /// Measured runs of the point.
    pub runs: usize,
}

/// A point's figure across runs.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Trend {
    /// The workload or study.
    pub name: String,
    /// The point's parameters, `name=value`.
    pub label: String,
    /// The point's parameters.
    pub params: BTreeMap<String, String>,
    /// The figure followed.
    pub figure: String,
    /// Its unit.
    pub unit: String,
    /// Whether higher values are better.
    pub higher_is_better: bool,
    /// The machine of the newest entry, the one the others are compared with.
    pub machine_id: String,
    /// One entry per run, oldest first.
    pub entries: Vec<TrendEntry>,
}

struct Found {
    run_id: i64,
    idx: i64,
    time: String,
    name: String,
    machine_id: String,
    hostname: String,
    git_commit: Option<String>,
    git_dirty: Option<bool>,
    key: String,
    label: String,
    figure: String,
    value: Option<f64>,
    ci_low: Option<f64>,
    ci_high: Option<f64>,
    runs: usize,
    higher_is_better: bool,
}

/// The error for filters that match several points: the key that is missing, by
/// name. Points of several workloads or studies ask for `--name`, each one named;
/// points of one ask for the parameters in which they differ, with their values.
fn ambiguous(f: &TrendFilter, found: &[(Found, BTreeMap<String, String>)]) -> HistoryError {
    let mut points: BTreeMap<(&str, &str), &BTreeMap<String, String>> = BTreeMap::new();
    for (r, params) in found {
        points.insert((r.name.as_str(), r.label.as_str()), params);
    }
    let n = points.len();
    let mut candidates: Vec<String> = points
        .keys()
        .take(20)
        .map(|(name, label)| format!("  --name {name} --point \"{label}\""))
        .collect();
    if n > 20 {
        candidates.push(format!("  ... and {} more", n - 20));
    }
    let candidates = candidates.join("\n");
    let names: BTreeSet<&str> = points.keys().map(|(name, _)| *name).collect();
    if names.len() > 1 {
        let names: Vec<String> = names.into_iter().map(String::from).collect();
        return HistoryError::AmbiguousName {
            filters: f.describe(),
            count: n,
            example: names[names.len() - 1].clone(),
            names: names.join(", "),
            candidates,
        };
    }
    // One workload: the parameters whose values differ between the points.
    let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for params in points.values() {
        for (k, v) in params.iter().filter(|(k, _)| *k != WORKLOAD.name()) {
            values.entry(k.as_str()).or_default().insert(v.as_str());
        }
    }
    let differ: Vec<String> = values
        .iter()
        .filter(|(k, vs)| vs.len() > 1 || points.values().any(|p| !p.contains_key(**k)))
        .map(|(k, vs)| {
            format!(
                "{k} ({})",
                vs.iter().copied().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    HistoryError::AmbiguousParams {
        filters: f.describe(),
        count: n,
        name: names.into_iter().next().unwrap_or_default().to_string(),
        differ: differ.join(", "),
        candidates,
    }
}

impl History {
    /// The trend the filters name.
    pub fn trend(&self, f: &TrendFilter) -> Result<Trend, HistoryError> {
        let mut q = self.conn.prepare(
            "SELECT r.id, p.idx, r.time, r.name, r.machine_id, r.hostname, r.git_commit, \
             r.git_dirty, p.point_key, p.label, p.figure, p.value, p.ci_low, p.ci_high, \
             p.runs, p.higher_is_better \
             FROM points p JOIN runs r ON r.id = p.run_id \
             WHERE ?1 IS NULL OR r.name = ?1 ORDER BY r.id, p.idx",
        )?;
        let rows = q.query_map([f.name.as_deref()], |r| {
            Ok(Found {
                run_id: r.get(0)?,
                idx: r.get(1)?,
                time: r.get(2)?,
                name: r.get(3)?,
                machine_id: r.get(4)?,
                hostname: r.get(5)?,
                git_commit: r.get(6)?,
                git_dirty: r.get(7)?,
                key: r.get(8)?,
                label: r.get(9)?,
                figure: r.get(10)?,
                value: r.get(11)?,
                ci_low: r.get(12)?,
                ci_high: r.get(13)?,
                runs: r.get::<_, i64>(14)? as usize,
                higher_is_better: r.get(15)?,
            })
        })?;
        let mut found = Vec::new();
        for row in rows {
            let row = row?;
            let params: BTreeMap<String, String> =
                serde_json::from_str(&row.key).unwrap_or_default();
            // The point as stored, or as `history show` prints it; values as their
            // definitions read them (`-p size=64KiB` finds `65536`).
            let keep = f
                .point
                .as_ref()
                .is_none_or(|p| *p == row.label || *p == describe(&params))
                && f.params.iter().all(|(k, v)| matches(&params, k, v));
            if keep {
                found.push((row, params));
            }
        }
        let points: BTreeSet<(&str, &str)> = found
            .iter()
            .map(|(r, _)| (r.name.as_str(), r.label.as_str()))
            .collect();
        if points.is_empty() {
            return Err(HistoryError::NoMatch(f.describe()));
        }
        if points.len() > 1 {
            return Err(ambiguous(f, &found));
        }
        // The same point twice in one run (a repeated -p value) counts once.
        found.dedup_by_key(|(r, _)| r.run_id);
        if let Some(limit) = f.limit {
            let skip = found.len().saturating_sub(limit);
            found.drain(..skip);
        }
        let (first, params) = &found[0];
        let figure = f.figure.clone().unwrap_or_else(|| first.figure.clone());
        let (name, label, params) = (first.name.clone(), first.label.clone(), params.clone());
        let higher_is_better = first.higher_is_better;
        let newest_machine = found
            .last()
            .map(|(r, _)| r.machine_id.clone())
            .unwrap_or_default();
        let mut entries = Vec::new();
        let mut known = BTreeSet::new();
        for (r, _) in &found {
            let (value, ci_low, ci_high) = if figure == r.figure {
                (r.value, r.ci_low, r.ci_high)
            } else {
                let doc = self.doc(r.run_id)?;
                let e = doc
                    .points
                    .iter()
                    .find(|p| p.index as i64 == r.idx)
                    .and_then(|p| {
                        known.extend(p.summary.keys().cloned());
                        p.summary.get(&figure)
                    });
                (
                    e.map(|e| e.median),
                    e.map(|e| e.ci_low),
                    e.map(|e| e.ci_high),
                )
            };
            let Some(value) = value else { continue };
            entries.push(TrendEntry {
                run_id: r.run_id,
                time: r.time.clone(),
                machine_id: r.machine_id.clone(),
                hostname: r.hostname.clone(),
                other_machine: r.machine_id != newest_machine,
                git_commit: r.git_commit.clone(),
                git_dirty: r.git_dirty,
                value,
                ci_low,
                ci_high,
                runs: r.runs,
            });
        }
        if entries.is_empty() {
            return Err(HistoryError::UnknownFigure {
                figure,
                known: known.into_iter().collect::<Vec<_>>().join(", "),
            });
        }
        Ok(Trend {
            name,
            label,
            params,
            unit: crate::store::unit_of(&figure).to_string(),
            figure,
            higher_is_better,
            machine_id: newest_machine,
            entries,
        })
    }
}
