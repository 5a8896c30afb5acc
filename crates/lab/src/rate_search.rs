//! `--rate auto`: the bounded search for the knee of each curve (see `knee` for
//! the definition it applies).

use crate::knee::{CurvePoint, confirmed, reference};
use crate::observer::Observer;
use crate::plan::{PlannedPoint, RunProgress};
use crate::result::{Context, Knee, Outcome, PointResult, ResultDoc};
use crate::run::{RunOptions, run_sweep};
use crate::sweep::PointSpec;
use crate::workload::load::RATE;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use xferbench_params::Value;

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
        ab: None,
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
            let mut spec = base.clone();
            if let Err(e) = spec.workload_params.set(
                &RATE,
                Value::Integer(i64::try_from(rate).unwrap_or(i64::MAX)),
            ) {
                doc.warnings.push(format!("rate search: {e}"));
                return None;
            }
            let first = doc.points.is_empty() && doc.failed.is_empty();
            let opts = if first { &probe_opts } else { &later_opts };
            let one = run_probe(doc, spec, opts, stop, observers);
            absorb(doc, one, &mut measured)
        };
        let Some(found) = find_knee(&mut doc, how, started, stop, &mut probe) else {
            continue 'bases;
        };
        let (low, good, bad) = (found.low, found.good, found.bad);
        let mut params = base.params(opts.workload);
        params.remove(RATE.name());
        doc.knees.push(Knee {
            params,
            knee_per_s: good,
            above_per_s: bad,
            unsustained_below_per_s: Vec::new(),
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

/// What the search found of one curve: its reference point, the highest rate it
/// sustained and the lowest it did not.
struct Found {
    low: CurvePoint,
    good: Option<f64>,
    bad: Option<f64>,
}

/// The search of one curve: the reference (two probes), then the saturated rate (the knee lies at
/// or below what the transport delivers when offered far more), a probe just below
/// that, then bisection of the bracket until it is within the precision or the
/// budget is spent. `None` when a probe failed or the search was stopped.
fn find_knee(
    doc: &mut ResultDoc,
    how: &SearchOptions,
    started: Instant,
    stop: &AtomicBool,
    probe: &mut impl FnMut(u64, &mut ResultDoc) -> Option<CurvePoint>,
) -> Option<Found> {
    let low = reference(how.low_rate, doc, probe)?;
    let mut found = Found {
        good: low.sustained(low.p99_ns).then_some(low.offered),
        bad: None,
        low,
    };
    if found.good.is_some() {
        let top = probe(how.ceiling, doc)?;
        if top.sustained(found.low.p99_ns) {
            found.good = Some(top.offered);
        } else {
            found.bad = Some(top.offered);
            // The delivered rate under saturation bounds the knee from above:
            // probe just below it first.
            let guess = (top.achieved * 0.95).max(found.low.offered * how.precision);
            if guess < top.offered {
                found.try_rate(guess as u64, doc, probe)?;
            }
        }
    }
    while let (Some(g), Some(b)) = (found.good, found.bad) {
        if b / g <= how.precision || started.elapsed() >= how.budget {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        found.try_rate((g * b).sqrt() as u64, doc, probe)?;
    }
    Some(found)
}

impl Found {
    /// Probes `rate` (again when a probe missed, [`confirmed`]) and moves the
    /// bracket's end it falls on.
    fn try_rate(
        &mut self,
        rate: u64,
        doc: &mut ResultDoc,
        probe: &mut impl FnMut(u64, &mut ResultDoc) -> Option<CurvePoint>,
    ) -> Option<()> {
        let p = probe(rate, doc)?;
        if confirmed(&p, self.low.p99_ns, doc, probe)? {
            self.good = Some(p.offered);
        } else {
            self.bad = Some(p.offered);
        }
        Some(())
    }
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
                let mut p = b.params(opts.workload);
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
