//! `study rpmsg --full`: how long every cell of the original's tables will take,
//! said before the study starts.
//!
//! The estimate is the round trips the plan will make (each point's `channels ×
//! ⌈transfer / packet⌉`, times the runs of the default run control: 3 visits of a
//! warm-up and a measured run) divided by a rate measured here just before, for
//! each channel count (a short run of 16-byte packets on a fresh link), plus the
//! measured cost of starting and stopping a link and its remote for every visit.

use super::plan::{Planned, Scale, points};
use crate::StudyEnv;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use xferbench_lab::rig::rpmsg::{RemoteKind, RpmsgRig};
use xferbench_lab::rig::{Rig, RunControl};
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

/// Round trips per second with `channels` channels and the cost of one visit
/// (link and remote started and stopped), seconds; measured on a fresh link.
pub fn calibrate(channels: u32, remote: &RemoteKind) -> Result<(f64, f64), String> {
    let per_channel = (4_000 / u64::from(channels)).max(200);
    let point = RpmsgPoint {
        channels,
        packet: 16,
        limit: Limit::Count(per_channel),
        notify: Notify::Kick,
        buffers: Buffers::Copy,
        suffix: false,
        verify: false,
        zero_copy: false,
    };
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let mut rig = Box::new(RpmsgRig::start(point, remote).map_err(|e| e.to_string())?);
    let started = t0.elapsed();
    let mut run = || {
        let mut ctl = RunControl::new(&stop, Duration::from_secs(10), None);
        rig.run_once(&mut ctl).map_err(|e| e.to_string())
    };
    run()?;
    let rec = run()?;
    let t1 = Instant::now();
    rig.finish().map_err(|e| e.to_string())?;
    let visit_s = (started + t1.elapsed()).as_secs_f64();
    let window_s = rec.window_ns as f64 / 1e9;
    if rec.messages == 0 || window_s <= 0.0 {
        return Err("the calibration run made no round trip".into());
    }
    Ok((rec.messages as f64 / window_s, visit_s))
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
    let mut rates = BTreeMap::new();
    let mut seconds = 0.0;
    let mut visit_s = 0.0f64;
    for (&channels, &rts) in &by_channels {
        match calibrate(channels, &remote) {
            Ok((rate, visit)) => {
                rates.insert(channels.to_string(), rate);
                visit_s = visit_s.max(visit);
                seconds += (rts * VISITS * RUNS_PER_VISIT) as f64 / rate;
            }
            Err(e) => {
                return serde_json::json!({
                    "text": format!("no estimate: the calibration run failed: {e}"),
                    "error": e,
                });
            }
        }
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
        // A tiny calibration on a thread remote gives a positive rate.
        let (rate, visit) = calibrate(1, &RemoteKind::Thread).unwrap();
        assert!(rate > 0.0 && visit > 0.0, "{rate} {visit}");
    }
}
