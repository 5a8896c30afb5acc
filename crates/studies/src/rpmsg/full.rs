//! `study rpmsg --full`: how long every cell of the original's tables will take,
//! said before the study starts.
//!
//! The estimate is the round trips the plan will make (each point's `channels ×
//! ⌈transfer / packet⌉`, times the runs of the default run control: 3 visits of a
//! warm-up and a measured run) divided by a rate measured here just before, for
//! each channel count, plus the measured cost of a visit beyond its runs (starting
//! and stopping a link and its remote, the loop's own work).
//!
//! # Calibration
//!
//! The rates come from a plan of their own run by the point loop before the study
//! starts ([`calibrate`]): one point per channel count (group `calibration`, short
//! runs of 16-byte packets), each visited once with a warm-up and a measured run on
//! the study's bench. A visit's cost is the point's time in the loop less its two
//! runs' windows.

use super::plan::{Planned, Scale, points};
use crate::StudyEnv;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use xferbench_lab::counters::CounterMode;
use xferbench_lab::measure::{LoopOptions, PlannedPoint, run_plan};
use xferbench_lab::observer::Observer;
use xferbench_lab::result::{Outcome, PointResult, figure};
use xferbench_lab::rig::rpmsg::RemoteKind;
use xferbench_lab::workload::Limit;
use xferbench_lab::workload::rpmsg::RpmsgPoint;
use xferbench_transports::rpmsg::{Buffers, Notify};

/// Visits per point (the study's default runs) and runs per visit (a warm-up and
/// a measured run).
pub const VISITS: u64 = 3;
/// Runs per visit.
pub const RUNS_PER_VISIT: u64 = 2;

/// Round trips (all channels) of one run of a planned point.
pub fn round_trips(p: &Planned) -> u64 {
    u64::from(p.point.channels) * RpmsgPoint::round_trips_for(p.transfer, p.point.packet)
}

/// What the calibration measured of one channel count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Round trips (all channels) per second: the measured run's median.
    pub rate: f64,
    /// Seconds of a visit beyond its runs.
    pub visit_s: f64,
}

/// The calibration point of `channels` channels: 16-byte packets, about 4000
/// round trips in all (at least 200 per channel).
pub fn calibration_point(channels: u32) -> Planned {
    let per_channel = (4_000 / u64::from(channels)).max(200);
    Planned {
        group: "calibration",
        transfer: per_channel * 16,
        point: RpmsgPoint {
            channels,
            packet: 16,
            limit: Limit::Count(per_channel),
            notify: Notify::Kick,
            buffers: Buffers::Copy,
            suffix: false,
            verify: false,
            zero_copy: false,
        },
    }
}

/// The calibration's loop: each point visited once, a warm-up then a measured run.
pub fn calibration_options() -> LoopOptions {
    LoopOptions {
        runs: 1,
        warmup: 1,
        interleave: false,
        hang_timeout: Duration::from_secs(10),
        counters: CounterMode::Off,
        profile: None,
        watch: None,
        until_stopped: false,
    }
}

/// When each point's visit started and how long it took.
#[derive(Default)]
struct VisitClock {
    started: BTreeMap<usize, Instant>,
    took: BTreeMap<usize, Duration>,
}

impl Observer for VisitClock {
    fn point_started(&mut self, index: usize, _: &PlannedPoint) -> std::io::Result<()> {
        self.started.insert(index, Instant::now());
        Ok(())
    }

    fn point_finished(&mut self, result: &PointResult) -> std::io::Result<()> {
        if let Some(t) = self.started.get(&result.index) {
            self.took.insert(result.index, t.elapsed());
        }
        Ok(())
    }
}

/// Measures every channel count of `channels` through the point loop, remotes
/// started as `remote` ([`calibration_point`], [`calibration_options`]).
pub fn calibrate(
    channels: &[u32],
    remote: &RemoteKind,
    env: &StudyEnv,
) -> Result<BTreeMap<u32, Calibration>, String> {
    let planned: Vec<Planned> = channels.iter().map(|&c| calibration_point(c)).collect();
    let mut bench = super::bench(&planned, remote.clone(), false);
    let options = calibration_options();
    let context = xferbench_lab::context::collect(
        env!("CARGO_PKG_VERSION"),
        Vec::new(),
        env.settings("rpmsg", &options, false),
    );
    let mut clock = VisitClock::default();
    let doc = run_plan(
        context,
        &mut bench,
        &options,
        &AtomicBool::new(false),
        &mut [&mut clock],
    );
    if let Outcome::Failed { error } = &doc.outcome {
        return Err(error.clone());
    }
    let mut out = BTreeMap::new();
    for (i, &c) in channels.iter().enumerate() {
        let p = doc
            .points
            .iter()
            .find(|p| p.index == i)
            .ok_or_else(|| format!("the calibration of {c} channel(s) did not finish"))?;
        let rate = p
            .summary
            .get(figure::MESSAGE_RATE)
            .map_or(0.0, |e| e.median);
        let window_s = p.runs.first().map_or(0.0, |r| r.window_ns as f64 / 1e9);
        if !(rate > 0.0 && window_s > 0.0) {
            return Err("the calibration run made no round trip".into());
        }
        let took = clock.took.get(&i).map_or(0.0, Duration::as_secs_f64);
        // The warm-up's window is taken to be the measured run's.
        let visit_s = (took - 2.0 * window_s).max(0.0);
        out.insert(c, Calibration { rate, visit_s });
    }
    Ok(out)
}

/// The estimate of a `--full` run of `scale`: `text` for the user, the seconds,
/// the round trips and the rates it is made of.
pub fn estimate(scale: &Scale, env: &StudyEnv) -> serde_json::Value {
    let (planned, _) = points(scale);
    let remote = match &env.launcher {
        Some(l) => RemoteKind::Process(l.clone()),
        None => RemoteKind::Thread,
    };
    let mut by_channels: BTreeMap<u32, u64> = BTreeMap::new();
    for p in &planned {
        *by_channels.entry(p.point.channels).or_default() += round_trips(p);
    }
    let counts: Vec<u32> = by_channels.keys().copied().collect();
    let measured = match calibrate(&counts, &remote, env) {
        Ok(m) => m,
        Err(e) => {
            return serde_json::json!({
                "text": format!("no estimate: the calibration run failed: {e}"),
                "error": e,
            });
        }
    };
    let mut rates = BTreeMap::new();
    let mut seconds = 0.0;
    let mut visit_s = 0.0f64;
    for (&channels, &rts) in &by_channels {
        let Calibration {
            rate,
            visit_s: visit,
        } = measured[&channels];
        rates.insert(channels.to_string(), rate);
        visit_s = visit_s.max(visit);
        seconds += (rts * VISITS * RUNS_PER_VISIT) as f64 / rate;
    }
    seconds += planned.len() as f64 * VISITS as f64 * visit_s;
    let total: u64 = planned.iter().map(round_trips).sum::<u64>() * VISITS * RUNS_PER_VISIT;
    let rate_text: Vec<String> = by_channels
        .keys()
        .filter_map(|c| {
            Some(format!(
                "{c} channel(s) {:.0}/s",
                rates.get(&c.to_string())?
            ))
        })
        .collect();
    serde_json::json!({
        "text": format!(
            "--full: {} points, {:.3e} round trips (3 visits of a warm-up and a measured run each) \
             at the round-trip rates measured just now ({}) and {:.0} ms per visit: about {}",
            planned.len(),
            total as f64,
            rate_text.join(", "),
            visit_s * 1e3,
            duration_text(seconds)
        ),
        "seconds": seconds,
        "points": planned.len(),
        "round_trips": total,
        "rates_per_s": rates,
        "visit_s": visit_s,
    })
}

/// `1 h 23 min`, `12 min`, `40 s`.
pub fn duration_text(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..=119 => format!("{s} s"),
        120..=3599 => format!("{} min", s.div_ceil(60)),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_counts_every_round_trip_of_the_plan() {
        assert_eq!(duration_text(40.2), "40 s");
        assert_eq!(duration_text(601.0), "11 min");
        assert_eq!(duration_text(5000.0), "1 h 23 min");
        let (planned, _) = points(&Scale::every_cell());
        let table: u64 = planned
            .iter()
            .filter(|p| p.group == "table")
            .map(round_trips)
            .sum();
        // The 80 cells: 1-byte packets of 10^7 bytes on one channel alone are 10^7.
        assert_eq!(table, 38_556_294);
        // A tiny calibration on a thread remote gives a positive rate per channel
        // count, measured by the point loop.
        let m = calibrate(&[1, 2], &RemoteKind::Thread, &StudyEnv::default()).unwrap();
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), [1, 2]);
        for c in m.values() {
            assert!(c.rate > 0.0 && c.visit_s >= 0.0, "{c:?}");
        }
        assert_eq!(calibration_point(1).point.limit, Limit::Count(4000));
        assert_eq!(calibration_point(32).point.limit, Limit::Count(200));
    }
}
