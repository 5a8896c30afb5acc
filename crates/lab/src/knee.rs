//! The knee of a latency–rate curve: the highest offered rate a transport sustains.
//!
//! # Definition
//!
//! A curve is the `load` points that differ only in their offered rate. Its
//! reference is its lowest offered rate and that point's p99 latency. An offered
//! rate is **sustained** when its point delivered at least [`SUSTAINED`] of it
//! (achieved ≥ 99 % of offered) and its p99 stayed at most [`P99_GROWTH`] times the
//! reference p99. The **knee** is the highest sustained rate: above it latency
//! explodes or messages pile up. A rate the transport sustained is evidence that it
//! can, while a rate it did not may have met one stall of the machine, so a point
//! that failed below a higher one that held does not cut the curve; it is named in
//! the knee (`unsustained_below_per_s`), so that a trough in the curve is not hidden.
//! A curve whose every rate is sustained has its knee at its highest rate, and says
//! that the knee may lie higher (`above_per_s` is `None`).
//!
//! A sweep of rates (`--rate 10k..1M:x2`) finds the knee between its points;
//! `--rate auto` searches for it (`rate_search`): a probe at a low rate gives the
//! reference, a probe far above any transport's reach gives the saturated rate, and
//! a bisection on a log scale narrows the bracket between the highest sustained and
//! the lowest unsustained rate to `rate_search::SearchOptions::precision`, within a time budget.
//! A probe is one run, so a probe that fails is repeated at the same rate, up to
//! [`PROBES`] probes in all, and the rate counts as not sustained only if every one
//! fails ([`confirmed`]): one stall of the machine does not end a curve, whether it
//! lands in the probe's p99 or costs its sender the last percent of its rate. A probe
//! far short of its rate (under [`FAR_SHORT`] of it) is not repeated. The
//! reference is probed twice and the lower p99 kept ([`reference()`]): a stall in the
//! reference would loosen the allowance of every rate after it.

use crate::result::{Knee, PointResult, ResultDoc, figure};
use std::collections::BTreeMap;

/// The share of the offered rate a sustained point delivers.
pub const SUSTAINED: f64 = 0.99;
/// How far a sustained point's p99 may grow over the curve's lowest rate's p99.
pub const P99_GROWTH: f64 = 10.0;
/// The probes a search makes at most of one rate before it counts the rate as not
/// sustained: every one must fail.
pub const PROBES: usize = 3;
/// A probe that delivered less than this share of its offered rate is beyond the knee
/// at once, without a repeat: a stall of the machine (milliseconds) delays a
/// quarter-second probe's messages, it does not cost it a tenth of them.
pub const FAR_SHORT: f64 = 0.9;

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
/// confirmed: a probe that failed is probed again at the same rate (`again`), up to
/// [`PROBES`] probes in all, and the rate is not sustained only if every one fails
/// (a probe that delivered less than [`FAR_SHORT`] of its rate is not repeated). A
/// probe is one run, and a stall of the machine (a VM that loses its CPU for a few
/// milliseconds now and then) lands in a run's p99 or takes the last percent of a
/// sender's rate; a rate beyond the knee fails every time. `None` when a further
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
    if p.achieved < FAR_SHORT * p.offered {
        return Some(false);
    }
    for _ in 1..PROBES {
        if again(p.offered as u64, doc)?.sustained(low_p99_ns) {
            return Some(true);
        }
    }
    Some(false)
}

/// The reference of a search: two probes at the low `rate`, and of them the one with
/// the lower p99 (a stall of the machine in one would loosen every later verdict);
/// `None` when a probe could not be made.
pub fn reference(
    rate: u64,
    doc: &mut ResultDoc,
    probe: &mut impl FnMut(u64, &mut ResultDoc) -> Option<CurvePoint>,
) -> Option<CurvePoint> {
    let first = probe(rate, doc)?;
    let second = probe(rate, doc)?;
    Some(if second.p99_ns < first.p99_ns {
        second
    } else {
        first
    })
}

/// The knee of the points of one curve, read by the definition (in any order).
#[derive(Debug, Clone, PartialEq)]
pub struct CurveKnee {
    /// The highest sustained offered rate; `None` when no rate was sustained.
    pub knee: Option<f64>,
    /// The lowest offered rate above the knee that was not sustained; `None` when
    /// there is none (the knee may lie higher).
    pub above: Option<f64>,
    /// The offered rates below the knee that were not sustained, ascending.
    pub unsustained_below: Vec<f64>,
    /// The reference: the curve's lowest rate.
    pub low: CurvePoint,
}

/// The knee of the points of one curve, in any order; `None` for no points.
pub fn knee_of(points: &[CurvePoint]) -> Option<CurveKnee> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.offered.total_cmp(&b.offered));
    let low = *sorted.first()?;
    let held = |p: &CurvePoint| p.sustained(low.p99_ns);
    let knee = sorted.iter().rev().find(|p| held(p)).map(|p| p.offered);
    let failed = sorted.iter().filter(|p| !held(p)).map(|p| p.offered);
    let (below, above): (Vec<f64>, Vec<f64>) = failed.partition(|&r| knee.is_some_and(|k| r < k));
    Some(CurveKnee {
        knee,
        above: above.first().copied(),
        unsustained_below: below,
        low,
    })
}

/// A point's curve: its parameters without the rate.
fn curve_of(p: &PointResult) -> BTreeMap<String, String> {
    let mut k = p.params.clone();
    k.remove(crate::names::RATE);
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
            let found = knee_of(&v)?;
            Some(Knee {
                params,
                knee_per_s: found.knee,
                above_per_s: found.above,
                unsustained_below_per_s: found.unsustained_below,
                low_rate_per_s: found.low.offered,
                low_p99_ns: found.low.p99_ns,
                method: "sweep".into(),
                points: v.len(),
                seconds: None,
            })
        })
        .collect()
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

    fn knee_above(curve: &[CurvePoint]) -> (Option<f64>, Option<f64>) {
        let k = knee_of(curve).unwrap();
        (k.knee, k.above)
    }

    #[test]
    fn the_knee_is_the_highest_sustained_rate() {
        let curve = [
            p(1e3, 1e3, 1_000.0),
            p(1e5, 0.995e5, 2_000.0),
            p(1e6, 0.999e6, 9_900.0),
            p(2e6, 1.5e6, 5e6),
            p(4e6, 3e6, 8e6),
        ];
        let k = knee_of(&curve).unwrap();
        assert_eq!((k.knee, k.above), (Some(1e6), Some(2e6)));
        assert!(k.unsustained_below.is_empty());
        assert_eq!(k.low.offered, 1e3);
        // Latency alone ends a sustained rate.
        let latency = [p(1e3, 1e3, 100.0), p(1e4, 1e4, 1_001.0)];
        assert_eq!(knee_above(&latency), (Some(1e3), Some(1e4)));
        // Delivery alone, too: 98.9 % of the offered rate.
        let delivery = [p(1e3, 1e3, 100.0), p(1e4, 0.989e4, 100.0)];
        assert_eq!(knee_above(&delivery), (Some(1e3), Some(1e4)));
        // Every rate sustained: the knee is the highest, with nothing above.
        let all = [p(1e3, 1e3, 100.0), p(1e4, 1e4, 100.0)];
        assert_eq!(knee_above(&all), (Some(1e4), None));
        // The lowest rate itself not delivered: no knee, and that rate is above it.
        let none = [p(1e3, 900.0, 100.0), p(1e4, 5e3, 100.0)];
        assert_eq!(knee_above(&none), (None, Some(1e3)));
        assert!(knee_of(&[]).is_none());
    }

    #[test]
    fn a_rate_that_failed_below_one_that_held_does_not_cut_the_curve_and_is_named() {
        // One stall of the machine in the point at 4e5; the rates above it held.
        let curve = [
            p(1e3, 1e3, 1_000.0),
            p(2e5, 2e5, 2_000.0),
            p(4e5, 4e5, 1.4e6),
            p(8e5, 8e5, 3_000.0),
            p(1e6, 0.999e6, 9_000.0),
            p(1.2e6, 0.9e6, 2e6),
        ];
        let k = knee_of(&curve).unwrap();
        assert_eq!((k.knee, k.above), (Some(1e6), Some(1.2e6)));
        assert_eq!(k.unsustained_below, vec![4e5]);
        // In any order.
        let mut shuffled = curve;
        shuffled.reverse();
        assert_eq!(knee_of(&shuffled), Some(k));
    }

    #[test]
    fn a_rate_is_not_sustained_until_every_probe_of_it_fails() {
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
        let low = 10e3;
        // Sustained: no second probe.
        let mut never = |_: u64, _: &mut ResultDoc| -> Option<CurvePoint> {
            panic!("no second probe for a sustained rate")
        };
        assert_eq!(
            confirmed(&p(1e3, 1e3, 20e3), low, &mut doc, &mut never),
            Some(true)
        );
        // A stall in one probe's p99, or a sender just short of its rate: a later
        // probe that holds decides; only a rate that fails every probe is not
        // sustained.
        let held = p(1e3, 1e3, 30e3);
        let stalled = p(1e3, 1e3, 2e6);
        let short = p(1e3, 989.0, 20e3);
        for first in [stalled, short] {
            for (later, verdict) in [
                (vec![held], true),
                (vec![stalled, held], true),
                (vec![short, stalled], false),
                (vec![stalled, stalled], false),
            ] {
                let mut made = 0;
                let mut probes = |rate: u64, _: &mut ResultDoc| -> Option<CurvePoint> {
                    assert_eq!(rate, 1000);
                    made += 1;
                    Some(later[made - 1])
                };
                let got = confirmed(&first, low, &mut doc, &mut probes);
                assert_eq!(got, Some(verdict), "{first:?} then {later:?}");
                assert_eq!(made, later.len(), "{first:?} then {later:?}");
            }
        }
        // Far short of its rate: beyond the knee without a repeat.
        assert_eq!(
            confirmed(&p(1e3, 899.0, 2e6), low, &mut doc, &mut never),
            Some(false)
        );
        // The reference: the lower p99 of two probes.
        let mut two = [p(1e3, 1e3, 400e3), p(1e3, 1e3, 30e3)].into_iter();
        let mut refs = |_: u64, _: &mut ResultDoc| two.next();
        assert_eq!(reference(1000, &mut doc, &mut refs), Some(held));
        // A further probe that cannot be made leaves the verdict open.
        let mut lost = |_: u64, _: &mut ResultDoc| -> Option<CurvePoint> { None };
        assert_eq!(confirmed(&p(1e3, 1e3, 2e6), low, &mut doc, &mut lost), None);
    }
}
