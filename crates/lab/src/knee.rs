//! The knee of a latency–rate curve: the highest offered rate a transport sustains.
//!
//! # Definition
//!
//! A curve is the `load` points that differ only in their offered rate. Its
//! reference is its lowest offered rate and that point's p99 latency. An offered
//! rate is **sustained** when its point delivered at least [`SUSTAINED`] of it
//! (achieved ≥ 99 % of offered) and its p99 stayed at most [`P99_GROWTH`] times the
//! reference p99. The **knee** is the highest sustained rate below the lowest rate
//! that is not sustained: above it latency explodes or messages pile up. A curve
//! whose every rate is sustained has its knee at its highest rate, and says that
//! the knee may lie higher (`above_per_s` is `None`).
//!
//! A sweep of rates (`--rate 10k..1M:x2`) finds the knee between its points;
//! `--rate auto` searches for it ([`search`]): a probe at a low rate gives the
//! reference, a probe far above any transport's reach gives the saturated rate, and
//! a bisection on a log scale narrows the bracket between the highest sustained and
//! the lowest unsustained rate to [`SearchOptions::precision`], within a time budget.
//! A probe is one run, so a probe that fails is repeated once at the same rate, and
//! the rate counts as not sustained only if both fail ([`confirmed`]): one stall of
//! the machine does not end a curve, whether it lands in the probe's p99 or costs
//! its sender the last percent of its rate.

use crate::observer::Observer;
use crate::plan::{PlannedPoint, RunProgress};
use crate::result::{Context, Outcome, PointResult, ResultDoc, figure};
use crate::run::{RunOptions, run_sweep};
use crate::sweep::PointSpec;
use crate::workload::load::{RATE, Schedule};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The share of the offered rate a sustained point delivers.
pub const SUSTAINED: f64 = 0.99;
/// How far a sustained point's p99 may grow over the curve's lowest rate's p99.
pub const P99_GROWTH: f64 = 10.0;

/// The knee of one curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Knee {
    /// The curve: its points' parameters, the rate left out.
    pub params: BTreeMap<String, String>,
    /// The knee: the highest offered rate sustained below the lowest one that is
    /// not, messages per second; `None` when even the lowest rate was not sustained.
    pub knee_per_s: Option<f64>,
    /// The lowest offered rate found not sustained, messages per second; `None`
    /// when every rate measured was (the knee may lie higher).
    pub above_per_s: Option<f64>,
    /// The curve's lowest offered rate, messages per second: the reference.
    pub low_rate_per_s: f64,
    /// The p99 latency at the reference rate, nanoseconds.
    pub low_p99_ns: f64,
    /// `sweep` (from a sweep of rates) or `search` (`--rate auto`).
    pub method: String,
    /// Points measured on the curve.
    pub points: usize,
    /// Seconds the search took (`search` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// One point of a curve, as the definition reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    /// Offered messages per second.
    pub offered: f64,
    /// Achieved (delivered) messages per second.
    pub achieved: f64,
    /// p99 latency, nanoseconds.
    pub p99_ns: f64,
}

impl CurvePoint {
    /// The curve point of a finished `load` point (medians over its runs).
    pub fn of(p: &PointResult) -> Option<CurvePoint> {
        let m = |name: &str| p.summary.get(name).map(|e| e.median);
        Some(CurvePoint {
            offered: m(figure::OFFERED_RATE)?,
            achieved: m(figure::MESSAGE_RATE)?,
            p99_ns: m(figure::LATENCY[2])?,
        })
    }

    /// Whether this rate is sustained against a reference p99.
    pub fn sustained(&self, low_p99_ns: f64) -> bool {
        self.achieved >= SUSTAINED * self.offered && self.p99_ns <= P99_GROWTH * low_p99_ns
    }
}

/// Whether the probe `p` of a search sustained its rate against `low_p99_ns`,
/// confirmed: a probe that failed is probed once more at the same rate (`again`), and
/// the rate is not sustained only if that probe fails too. A probe is one run, and one
/// stall of the machine (a VM that loses its CPU for a millisecond now and then) lands
/// in a run's p99 or takes the last percent of a sender's rate; a rate beyond the knee
/// fails every time. `None` when the second
/// probe could not be made.
pub fn confirmed(
    p: &CurvePoint,
    low_p99_ns: f64,
    doc: &mut ResultDoc,
    again: &mut impl FnMut(u64, &mut ResultDoc) -> Option<CurvePoint>,
) -> Option<bool> {
    if p.sustained(low_p99_ns) {
        return Some(true);
    }
    Some(again(p.offered as u64, doc)?.sustained(low_p99_ns))
}

/// The knee of points of one curve, in any order: `(knee, above, reference)`.
pub fn knee_of(points: &[CurvePoint]) -> Option<(Option<f64>, Option<f64>, CurvePoint)> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.offered.total_cmp(&b.offered));
    let low = *sorted.first()?;
    let mut knee = None;
    for p in &sorted {
        if !p.sustained(low.p99_ns) {
            return Some((knee, Some(p.offered), low));
        }
        knee = Some(p.offered);
    }
    Some((knee, None, low))
}

/// A point's curve: its parameters without the rate.
fn curve_of(p: &PointResult) -> BTreeMap<String, String> {
    let mut k = p.params.clone();
    k.remove(RATE.name());
    k
}

/// The knees of every curve of `doc` with at least two rates, in the order the
/// curves first appear.
pub fn knees(doc: &ResultDoc) -> Vec<Knee> {
    let mut curves: Vec<(BTreeMap<String, String>, Vec<CurvePoint>)> = Vec::new();
    for p in &doc.points {
        let Some(c) = CurvePoint::of(p) else { continue };
        let key = curve_of(p);
        match curves.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(c),
            None => curves.push((key, vec![c])),
        }
    }
    curves
        .into_iter()
        .filter(|(_, v)| v.len() >= 2)
        .filter_map(|(params, v)| {
            let (knee, above, low) = knee_of(&v)?;
            Some(Knee {
                params,
                knee_per_s: knee,
                above_per_s: above,
                low_rate_per_s: low.offered,
                low_p99_ns: low.p99_ns,
                method: "sweep".into(),
                points: v.len(),
                seconds: None,
            })
        })
        .collect()
}

/// How `--rate auto` searches.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// The reference rate, messages per second.
    pub low_rate: u64,
    /// The rate of the saturating probe: far above what a transport sustains.
    pub ceiling: u64,
    /// Stop when the bracket's ends are within this factor of each other.
    pub precision: f64,
    /// Stop bisecting after this long per curve (the bracket so far is the answer).
    pub budget: Duration,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            low_rate: 1_000,
            ceiling: 100_000_000,
            precision: 1.1,
            budget: Duration::from_secs(60),
        }
    }
}

/// Finds the knee of each of `bases` (points whose schedule sets all but the rate)
/// by probing rates; every probe is a point of the returned document (one measured
/// run after `opts.warmup`), and the document's `knees` hold one knee per base.
pub fn search(
    context: Context,
    bases: &[PointSpec],
    opts: &RunOptions,
    how: &SearchOptions,
    stop: &AtomicBool,
    observers: &mut [&mut dyn Observer],
) -> ResultDoc {
    let probe_opts = RunOptions {
        runs: 1,
        ..opts.clone()
    };
    // The machine's limits are measured around the first probe only: a probe is a
    // second long, the limits a few seconds.
    let later_opts = RunOptions {
        watch: None,
        ..probe_opts.clone()
    };
    let planned = planned(bases, opts);
    let mut doc = ResultDoc {
        schema_version: crate::result::SCHEMA_VERSION,
        study: None,
        context,
        points: Vec::new(),
        warnings: Vec::new(),
        outcome: Outcome::Complete,
        knees: Vec::new(),
        failed: Vec::new(),
    };
    for o in observers.iter_mut() {
        if let Err(e) = o.sweep_started(&doc.context, &planned) {
            doc.outcome = Outcome::Failed {
                error: e.to_string(),
            };
            return doc;
        }
    }
    'bases: for base in bases {
        if stop.load(Ordering::Relaxed) || doc.outcome != Outcome::Complete {
            break;
        }
        let started = Instant::now();
        let mut measured: Vec<CurvePoint> = Vec::new();
        let mut probe = |rate: u64, doc: &mut ResultDoc| -> Option<CurvePoint> {
            let schedule = Schedule {
                rate,
                ..base.schedule.unwrap_or_default()
            };
            let spec = PointSpec {
                schedule: Some(schedule),
                ..base.clone()
            };
            let first = doc.points.is_empty() && doc.failed.is_empty();
            let opts = if first { &probe_opts } else { &later_opts };
            let one = run_probe(doc, spec, opts, stop, observers);
            absorb(doc, one, &mut measured)
        };
        // The reference, then the saturated rate: the knee lies at or below what
        // the transport delivers when offered far more.
        let Some(low) = probe(how.low_rate, &mut doc) else {
            continue 'bases;
        };
        let mut good: Option<f64> = low.sustained(low.p99_ns).then_some(low.offered);
        let mut bad: Option<f64> = None;
        if good.is_some() {
            let Some(top) = probe(how.ceiling, &mut doc) else {
                continue 'bases;
            };
            if top.sustained(low.p99_ns) {
                good = Some(top.offered);
            } else {
                bad = Some(top.offered);
                // The delivered rate under saturation bounds the knee from above:
                // probe just below it first.
                let guess = (top.achieved * 0.95).max(low.offered * how.precision);
                if guess < top.offered {
                    let Some(p) = probe(guess as u64, &mut doc) else {
                        continue 'bases;
                    };
                    let Some(kept) = confirmed(&p, low.p99_ns, &mut doc, &mut probe) else {
                        continue 'bases;
                    };
                    if kept {
                        good = Some(p.offered);
                    } else {
                        bad = Some(p.offered);
                    }
                }
            }
        }
        while let (Some(g), Some(b)) = (good, bad) {
            if b / g <= how.precision || started.elapsed() >= how.budget {
                break;
            }
            if stop.load(Ordering::Relaxed) {
                continue 'bases;
            }
            let mid = (g * b).sqrt();
            let Some(p) = probe(mid as u64, &mut doc) else {
                continue 'bases;
            };
            let Some(kept) = confirmed(&p, low.p99_ns, &mut doc, &mut probe) else {
                continue 'bases;
            };
            if kept {
                good = Some(p.offered);
            } else {
                bad = Some(p.offered);
            }
        }
        let mut params = base.params(opts.workload.name());
        params.remove(RATE.name());
        doc.knees.push(Knee {
            params,
            knee_per_s: good,
            above_per_s: bad,
            low_rate_per_s: low.offered,
            low_p99_ns: low.p99_ns,
            method: "search".into(),
            points: measured.len(),
            seconds: Some(started.elapsed().as_secs_f64()),
        });
    }
    conclude(&mut doc, stop);
    for o in observers.iter_mut() {
        if let Err(e) = o.sweep_finished(&doc) {
            doc.outcome = Outcome::Failed {
                error: e.to_string(),
            };
        }
    }
    doc
}

/// Runs one probe as a plan of its own, its observers seeing its points numbered on
/// from the search's.
fn run_probe(
    doc: &ResultDoc,
    spec: PointSpec,
    opts: &RunOptions,
    stop: &AtomicBool,
    observers: &mut [&mut dyn Observer],
) -> ResultDoc {
    let offset = doc.points.len();
    let mut relays: Vec<Relay<'_, '_>> = Vec::new();
    let mut refs: Vec<&mut dyn Observer> = Vec::new();
    for o in observers.iter_mut() {
        relays.push(Relay {
            inner: &mut **o,
            offset,
        });
    }
    for r in relays.iter_mut() {
        refs.push(r);
    }
    run_sweep(doc.context.clone(), &[spec], opts, stop, &mut refs)
}

/// The points the search plans, one per curve, without a rate (the search sets it).
fn planned(bases: &[PointSpec], opts: &RunOptions) -> Vec<PlannedPoint> {
    bases
        .iter()
        .map(|b| PlannedPoint {
            params: {
                let mut p = b.params(opts.workload.name());
                p.remove(RATE.name());
                p
            },
            size_bytes: b.size,
            channels: b.channels,
            rules: opts.workload.rules(),
            verify: opts.verify,
            runs: Some(crate::plan::RunCount {
                runs: 1,
                warmup: opts.warmup,
            }),
        })
        .collect()
}

/// The search's own warnings and outcome once its curves are done: how many probes
/// were contended, the first failure, or the interruption.
fn conclude(doc: &mut ResultDoc, stop: &AtomicBool) {
    let contended = doc
        .points
        .iter()
        .filter(|p| p.contention.as_ref().is_some_and(|c| c.contended))
        .count();
    if contended > 0 {
        doc.warnings.push(format!(
            "contended: {contended} of {} probes were measured while processes outside the run \
             used the machine (see their warnings); a knee found on a shared machine is the \
             machine's",
            doc.points.len()
        ));
    }
    if let (Some(first), Outcome::Complete) = (doc.failed.first(), &doc.outcome) {
        doc.outcome = Outcome::Failed {
            error: first.error.clone(),
        };
    }
    if stop.load(Ordering::Relaxed) && doc.outcome == Outcome::Complete {
        doc.outcome = Outcome::Interrupted;
    }
}

/// Adds one probe's document to the search's: its points and failures numbered on,
/// its limits (the first probe's), load and warnings; its measured point joins the
/// curve. `None` when the probe did not finish, which ends its curve's search.
fn absorb(
    doc: &mut ResultDoc,
    one: ResultDoc,
    measured: &mut Vec<CurvePoint>,
) -> Option<CurvePoint> {
    if doc.context.limits.is_none() {
        doc.context.limits = one.context.limits.clone();
    }
    // The machine's load over the whole search: the first probe's start, the
    // last one's end, every probe's points.
    merge_load(&mut doc.context.load, one.context.load.as_ref());
    // A probe's own contention summary is replaced by one for the search.
    for w in one.warnings {
        if !w.starts_with("contended:") && !doc.warnings.contains(&w) {
            doc.warnings.push(w);
        }
    }
    // A probe that failed is recorded, and ends its curve's search.
    let ended = one.outcome != Outcome::Complete;
    for mut f in one.failed {
        f.index = doc.points.len() + doc.failed.len();
        doc.failed.push(f);
    }
    for mut p in one.points {
        p.index = doc.points.len();
        let c = CurvePoint::of(&p);
        doc.points.push(p);
        if let Some(c) = c {
            measured.push(c);
        }
    }
    if ended {
        if one.outcome == Outcome::Interrupted || doc.failed.is_empty() {
            doc.outcome = one.outcome;
        }
        return None;
    }
    measured.last().copied()
}

/// The machine's load over the whole search: the first probe's start, the last
/// one's end, every probe's points.
fn merge_load(
    load: &mut Option<xferbench_probes::contention::MachineLoad>,
    probe: Option<&xferbench_probes::contention::MachineLoad>,
) {
    let Some(l) = probe else { return };
    match load {
        None => *load = Some(l.clone()),
        Some(all) => {
            let n = (all.points + l.points).max(1) as f64;
            all.others_cpus =
                (all.others_cpus * all.points as f64 + l.others_cpus * l.points as f64) / n;
            all.steal = (all.steal * all.points as f64 + l.steal * l.points as f64) / n;
            all.points += l.points;
            all.contended_points += l.contended_points;
            all.load_1m_end = l.load_1m_end;
        }
    }
}

/// An observer of the whole search seen through one probe's plan: points are
/// numbered on from those before, and the probe's start and end are not the
/// sweep's.
struct Relay<'a, 'b> {
    inner: &'a mut (dyn Observer + 'b),
    offset: usize,
}

impl Observer for Relay<'_, '_> {
    fn point_started(&mut self, index: usize, point: &PlannedPoint) -> std::io::Result<()> {
        self.inner.point_started(index + self.offset, point)
    }

    fn run_finished(&mut self, index: usize, progress: RunProgress) {
        self.inner.run_finished(index + self.offset, progress);
    }

    fn point_finished(&mut self, result: &PointResult) -> std::io::Result<()> {
        let mut r = result.clone();
        r.index += self.offset;
        self.inner.point_finished(&r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(offered: f64, achieved: f64, p99_ns: f64) -> CurvePoint {
        CurvePoint {
            offered,
            achieved,
            p99_ns,
        }
    }

    #[test]
    fn the_knee_is_the_highest_sustained_rate_below_the_first_that_is_not() {
        let curve = [
            p(1e3, 1e3, 1_000.0),
            p(1e5, 0.995e5, 2_000.0),
            p(1e6, 0.999e6, 9_900.0),
            p(2e6, 1.5e6, 5e6),
            // A noisy later point does not move the knee past the first failure.
            p(4e6, 4e6, 5_000.0),
        ];
        let (knee, above, low) = knee_of(&curve).unwrap();
        assert_eq!(knee, Some(1e6));
        assert_eq!(above, Some(2e6));
        assert_eq!(low.offered, 1e3);
        // Latency alone ends a sustained rate.
        let (knee, above, _) = knee_of(&[p(1e3, 1e3, 100.0), p(1e4, 1e4, 1_001.0)]).unwrap();
        assert_eq!((knee, above), (Some(1e3), Some(1e4)));
        // Delivery alone, too: 98.9 % of the offered rate.
        let (knee, _, _) = knee_of(&[p(1e3, 1e3, 100.0), p(1e4, 0.989e4, 100.0)]).unwrap();
        assert_eq!(knee, Some(1e3));
        // Every rate sustained: the knee is the highest, with nothing above.
        let (knee, above, _) = knee_of(&[p(1e3, 1e3, 100.0), p(1e4, 1e4, 100.0)]).unwrap();
        assert_eq!((knee, above), (Some(1e4), None));
        assert!(knee_of(&[]).is_none());
    }

    #[test]
    fn a_rate_that_fails_is_probed_once_more() {
        let mut doc: ResultDoc = serde_json::from_value(serde_json::json!({
            "schema_version": 1,
            "context": serde_json::to_value(crate::result::test_context(
                crate::result::Settings {
                    workload: "load".into(),
                    runs: 1,
                    warmup: 0,
                    count: None,
                    duration_s: None,
                    peer: "process".into(),
                    pin: false,
                    verify: false,
                    interleave: false,
                }
            ))
            .unwrap(),
            "points": [],
            "warnings": [],
            "outcome": {"status": "complete"}
        }))
        .unwrap();
        let again = |second: CurvePoint| {
            move |rate: u64, _: &mut ResultDoc| -> Option<CurvePoint> {
                assert_eq!(rate, 1000);
                Some(second)
            }
        };
        let low = 10e3;
        // Sustained: no second probe.
        let mut never = |_: u64, _: &mut ResultDoc| -> Option<CurvePoint> {
            panic!("no second probe for a sustained rate")
        };
        assert_eq!(
            confirmed(&p(1e3, 1e3, 20e3), low, &mut doc, &mut never),
            Some(true)
        );
        // A stall in one probe's p99, or a sender just short of its rate: the second
        // probe decides.
        for first in [p(1e3, 1e3, 2e6), p(1e3, 989.0, 20e3)] {
            for (second, verdict) in [
                (p(1e3, 1e3, 30e3), true),
                (p(1e3, 1e3, 2e6), false),
                (p(1e3, 989.0, 20e3), false),
            ] {
                let got = confirmed(&first, low, &mut doc, &mut again(second));
                assert_eq!(got, Some(verdict), "{first:?} then {second:?}");
            }
        }
        // A second probe that cannot be made leaves the verdict open.
        let mut lost = |_: u64, _: &mut ResultDoc| -> Option<CurvePoint> { None };
        assert_eq!(confirmed(&p(1e3, 1e3, 2e6), low, &mut doc, &mut lost), None);
    }
}
