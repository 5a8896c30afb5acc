//! `study rpmsg --full`: how long every cell of the original's tables will take,
//! said once the study has measured its rates.
//!
//! The estimate is the round trips the plan will make (each point's `channels ×
//! ⌈transfer / packet⌉`, times the runs of the default run control: 3 visits of a
//! warm-up and a measured run) divided by a rate measured in the same run, for
//! each channel count, plus the measured cost of a visit beyond its runs (starting
//! and stopping a link and its remote, the loop's own work).
//!
//! # Calibration
//!
//! The rates come from the first points of the study's own plan: one point per
//! channel count (group [`GROUP`], short runs of 16-byte packets), each with its
//! own run count of one visit of a warm-up and a measured run, so the interleaved
//! plan visits them first, in its first round. [`EstimateWatch`] watches them finish
//! and, once the last has, tells the user the estimate and keeps it for the
//! extras (`estimate`). A visit's cost is the point's time in the loop less its two
//! runs' windows.

use super::plan::Planned;
use crate::study::StudyWatch;
use std::collections::BTreeMap;
use std::time::Instant;
use xferbench_lab::measure::PlannedPoint;
use xferbench_lab::observer::Observer;
use xferbench_lab::result::{PointResult, figure};
use xferbench_lab::workload::Limit;
use xferbench_lab::workload::rpmsg::RpmsgPoint;
use xferbench_transports::rpmsg::{Buffers, Notify};

/// The group of the calibration points.
pub const GROUP: &str = "calibration";

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
        group: GROUP,
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
            pace_ns: None,
        },
    }
}

/// One calibration point per channel count of `planned`, in increasing order.
pub fn calibration_points(planned: &[Planned]) -> Vec<Planned> {
    let counts: std::collections::BTreeSet<u32> =
        planned.iter().map(|p| p.point.channels).collect();
    counts.into_iter().map(calibration_point).collect()
}

/// What a finished calibration point measured, or why it cannot be used.
pub fn calibration_of(p: &PointResult, took_s: f64) -> Result<Calibration, String> {
    let rate = p
        .summary
        .get(figure::MESSAGE_RATE)
        .map_or(0.0, |e| e.median);
    let window_s = p.runs.first().map_or(0.0, |r| r.window_ns as f64 / 1e9);
    if !(rate > 0.0 && window_s > 0.0) {
        return Err("the calibration run made no round trip".into());
    }
    // The warm-up's window is taken to be the measured run's.
    let visit_s = (took_s - 2.0 * window_s).max(0.0);
    Ok(Calibration { rate, visit_s })
}

/// Watches the calibration points (group [`GROUP`]) and makes the estimate of
/// the rest of the plan (`planned`) once every channel count has been calibrated.
pub struct EstimateWatch {
    planned: Vec<Planned>,
    calibrations: usize,
    started: BTreeMap<usize, Instant>,
    finished: usize,
    measured: BTreeMap<u32, Calibration>,
    error: Option<String>,
    estimate: Option<serde_json::Value>,
    say: Option<fn(&str)>,
}

impl EstimateWatch {
    /// A watch of the calibration points `calibrations` for the estimate of
    /// `planned`; the estimate is told through `say`.
    pub fn new(planned: Vec<Planned>, calibrations: &[Planned], say: Option<fn(&str)>) -> Self {
        EstimateWatch {
            planned,
            calibrations: calibrations.len(),
            started: BTreeMap::new(),
            finished: 0,
            measured: BTreeMap::new(),
            error: None,
            estimate: None,
            say,
        }
    }
}

fn is_calibration(params: &BTreeMap<String, String>) -> bool {
    params.get(crate::params::names::GROUP).map(String::as_str) == Some(GROUP)
}

impl Observer for EstimateWatch {
    fn point_started(&mut self, index: usize, point: &PlannedPoint) -> std::io::Result<()> {
        if is_calibration(&point.params) {
            self.started.insert(index, Instant::now());
        }
        Ok(())
    }

    fn point_finished(&mut self, result: &PointResult) -> std::io::Result<()> {
        if !is_calibration(&result.params) {
            return Ok(());
        }
        let took = self
            .started
            .get(&result.index)
            .map_or(0.0, |t| t.elapsed().as_secs_f64());
        let channels = result.params.get("channels").and_then(|c| c.parse().ok());
        match (calibration_of(result, took), channels) {
            (Ok(c), Some(channels)) => {
                self.measured.insert(channels, c);
            }
            (Err(e), _) => self.error = Some(e),
            (Ok(_), None) => self.error = Some("a calibration point without channels".into()),
        }
        self.finished += 1;
        if self.finished == self.calibrations && self.estimate.is_none() {
            let e = match &self.error {
                None => estimate(&self.planned, &self.measured),
                Some(e) => serde_json::json!({
                    "text": format!("no estimate: the calibration run failed: {e}"),
                    "error": e,
                }),
            };
            if let (Some(say), Some(text)) = (self.say, e["text"].as_str()) {
                say(&format!("rpmsg study: {text}"));
            }
            self.estimate = Some(e);
        }
        Ok(())
    }
}

impl StudyWatch for EstimateWatch {
    fn extras(&mut self) -> BTreeMap<String, serde_json::Value> {
        self.estimate
            .take()
            .map(|e| ("estimate".to_string(), e))
            .into_iter()
            .collect()
    }
}

/// The estimate of a run of `planned` at the `measured` rates: `text` for the user,
/// the seconds, the round trips and the rates it is made of.
pub fn estimate(planned: &[Planned], measured: &BTreeMap<u32, Calibration>) -> serde_json::Value {
    let mut by_channels: BTreeMap<u32, u64> = BTreeMap::new();
    for p in planned {
        *by_channels.entry(p.point.channels).or_default() += round_trips(p);
    }
    let mut rates = BTreeMap::new();
    let mut seconds = 0.0;
    let mut visit_s = 0.0f64;
    for (&channels, &rts) in &by_channels {
        let Some(&Calibration {
            rate,
            visit_s: visit,
        }) = measured.get(&channels)
        else {
            return serde_json::json!({
                "text": format!("no estimate: {channels} channel(s) were not calibrated"),
                "error": "a channel count without calibration",
            });
        };
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
    use super::super::plan::{Scale, points};
    use super::*;
    use xferbench_lab::rig::rpmsg::RemoteKind;

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
        // One calibration point per channel count, and an estimate from their rates.
        let cal = calibration_points(&planned);
        let counts: Vec<u32> = cal.iter().map(|c| c.point.channels).collect();
        assert_eq!(counts, [1, 8, 32]);
        let measured: BTreeMap<u32, Calibration> = counts
            .iter()
            .map(|&c| {
                (
                    c,
                    Calibration {
                        rate: 1e5,
                        visit_s: 0.01,
                    },
                )
            })
            .collect();
        let e = estimate(&planned, &measured);
        let rts = e["round_trips"].as_u64().unwrap();
        assert_eq!(rts % (VISITS * RUNS_PER_VISIT), 0);
        let s = e["seconds"].as_f64().unwrap();
        let expect = rts as f64 / 1e5 + planned.len() as f64 * 3.0 * 0.01;
        assert!((s - expect).abs() < 1e-6 * expect, "{s} {expect}");
        let text = e["text"].as_str().unwrap();
        assert!(
            text.starts_with(&format!("--full: {} points", planned.len())),
            "{text}"
        );
        let partial = BTreeMap::from([(1, measured[&1])]);
        assert!(
            estimate(&planned, &partial)["text"]
                .as_str()
                .unwrap()
                .starts_with("no estimate")
        );
        // Through the point loop on thread remotes: the calibration points first,
        // one visit each, and the estimate once the last of them has finished.
        let rest = vec![Planned {
            group: "table",
            ..calibration_point(2)
        }];
        let cal = vec![calibration_point(1), calibration_point(2)];
        let all: Vec<Planned> = cal.iter().chain(&rest).copied().collect();
        let mut bench = super::super::bench(&all, RemoteKind::Thread, false);
        let options = xferbench_lab::measure::LoopOptions {
            judge: &xferbench_lab::judge::LAB,
            runs: 2,
            warmup: 0,
            interleave: true,
            hang_timeout: std::time::Duration::from_secs(10),
            counters: xferbench_probes::counters::CounterMode::Off,
            profile: None,
            watch: None,
            until_stopped: false,
        };
        let mut watch = EstimateWatch::new(rest, &cal, None);
        let doc = xferbench_lab::measure::run_plan(
            xferbench_lab::result::test_context(
                crate::study::StudyEnv::default().settings("rpmsg", &options, false),
            ),
            &mut bench,
            &options,
            &std::sync::atomic::AtomicBool::new(false),
            &mut [&mut watch],
        );
        assert_eq!(doc.outcome, xferbench_lab::result::Outcome::Complete);
        let runs: Vec<usize> = doc.points.iter().map(|p| p.runs.len()).collect();
        assert_eq!(runs, [1, 1, 2]);
        let extras = watch.extras();
        let e = &extras["estimate"];
        assert!(e["seconds"].as_f64().unwrap() > 0.0, "{e}");
        assert!(e["rates_per_s"]["2"].as_f64().unwrap() > 0.0, "{e}");
        assert_eq!(calibration_point(1).point.limit, Limit::Count(4000));
        assert_eq!(calibration_point(32).point.limit, Limit::Count(200));
    }
}
