//! The RPMsg study (issue #4): the tables of the "RPMsg Benchmark Figures" page for
//! the ADSP-SC598 — channels 1, 8, 32 × packet sizes 1, 2, 16, 64, 256, 496 × transfer
//! sizes 100 … 10^7 bytes per thread — measured on this machine with a kick per
//! message (the original's mailbox interrupt), plus the variants: kick vs event index
//! vs polling, copy vs zero-copy.
//!
//! # Budget
//!
//! A point makes `channels · ⌈transfer / packet⌉` round trips; 32 channels × 10^7 B
//! of 1-byte packets would be 3.2·10^8 of them. Points above the budget
//! ([`StudyPlan::budget`] round trips in all) are skipped and listed as such, like
//! the original's tables, which also omit the long small-packet runs. The rate of
//! a link does not depend on the transfer size once a run is long enough, which the
//! kept transfer sizes show.
//!
//! Each point is measured `runs` times on one link (one remote process per channel
//! count and mode); every figure is the median over the runs.

use crate::profile::ParticipantProfiler;
use crate::profile::perf_record::Attached;
use crate::result::Context;
use crate::rpmsg::{RemoteKind, RpmsgError, RpmsgPoint, RunFigures, Session, link_config};
use crate::stats::Estimate;
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;
use xferbench_transports::rpmsg::{Buffers, Notify, Service};

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyPlan {
    /// Channel counts.
    pub channels: Vec<u32>,
    /// Packet sizes, bytes.
    pub packets: Vec<usize>,
    /// Transfer sizes, bytes per thread.
    pub transfers: Vec<u64>,
    /// Largest number of round trips (all channels) of a kept point.
    pub budget: u64,
    /// Measured runs per point.
    pub runs: usize,
    /// Channel counts of the variants table.
    pub variant_channels: Vec<u32>,
    /// Round trips of a variant run, shared among its channels (packets of 496
    /// bytes; ×10 when polling, which is about ten times faster).
    pub variant_round_trips: u64,
}

impl StudyPlan {
    /// The full plan: every size of the original, a few minutes on two CPUs.
    pub fn full() -> StudyPlan {
        StudyPlan {
            channels: vec![1, 8, 32],
            packets: vec![1, 2, 16, 64, 256, 496],
            transfers: vec![100, 10_000, 100_000, 1_000_000, 10_000_000],
            budget: 50_000,
            runs: 3,
            variant_channels: vec![1, 8, 32],
            variant_round_trips: 20_000,
        }
    }

    /// The quick plan: a subset that runs in well under a minute.
    pub fn quick() -> StudyPlan {
        StudyPlan {
            channels: vec![1, 8, 32],
            packets: vec![1, 16, 496],
            transfers: vec![100, 10_000, 100_000],
            budget: 12_000,
            runs: 3,
            variant_channels: vec![1, 8],
            variant_round_trips: 4_000,
        }
    }

    /// Whether a point fits the budget.
    pub fn keeps(&self, channels: u32, packet: usize, transfer: u64) -> bool {
        u64::from(channels) * transfer.div_ceil(packet as u64) <= self.budget
    }
}

/// Medians over the runs of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Medians {
    /// All bytes over the common window, bytes/s.
    pub aggregate_bytes_per_s: f64,
    /// The original's figure: sum of per-channel rates, bytes/s.
    pub sum_of_rates_bytes_per_s: f64,
    /// Sum of per-channel rates ÷ channels (the original's "average CH speed").
    pub per_channel_bytes_per_s: f64,
    /// Round trips per second over the common window.
    pub round_trips_per_s: f64,
    /// Jain's index over per-channel rates.
    pub jain: f64,
    /// Median round trip, ns.
    pub rtt_p50_ns: f64,
    /// 99th percentile round trip, ns.
    pub rtt_p99_ns: f64,
    /// Host CPUs used.
    pub host_cpus: f64,
    /// Remote CPUs used.
    pub remote_cpus: Option<f64>,
    /// Host → remote kicks per round trip.
    pub kicks_to_remote_per_rt: f64,
    /// Remote → host kicks per round trip.
    pub kicks_to_host_per_rt: f64,
    /// Robust CV of the aggregate over the runs (noise).
    pub aggregate_rcv: f64,
}

impl Medians {
    fn of(runs: &[RunFigures]) -> Medians {
        let med = |f: &dyn Fn(&RunFigures) -> f64| {
            Estimate::from_values(runs.iter().map(f)).map_or(f64::NAN, |e| e.median)
        };
        let n = |r: &RunFigures| r.channels.len().max(1) as f64;
        let rts = |r: &RunFigures| r.latency.count.max(1) as f64;
        Medians {
            aggregate_bytes_per_s: med(&|r| r.aggregate_bytes_per_s),
            sum_of_rates_bytes_per_s: med(&|r| r.sum_of_rates_bytes_per_s),
            per_channel_bytes_per_s: med(&|r| r.sum_of_rates_bytes_per_s / n(r)),
            round_trips_per_s: med(&|r| r.round_trips_per_s),
            jain: med(&|r| r.jain),
            rtt_p50_ns: med(&|r| r.latency.p50_ns as f64),
            rtt_p99_ns: med(&|r| r.latency.p99_ns as f64),
            host_cpus: med(&|r| r.host_cpus),
            remote_cpus: runs
                .iter()
                .all(|r| r.remote_cpus.is_some())
                .then(|| med(&|r| r.remote_cpus.unwrap_or(0.0))),
            kicks_to_remote_per_rt: med(&|r| r.counters.kicks_to_remote as f64 / rts(r)),
            kicks_to_host_per_rt: med(&|r| r.counters.kicks_to_host as f64 / rts(r)),
            aggregate_rcv: Estimate::from_values(runs.iter().map(|r| r.aggregate_bytes_per_s))
                .map_or(0.0, |e| e.rcv),
        }
    }
}

/// One measured point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointRecord {
    /// What was run.
    pub point: RpmsgPoint,
    /// Medians over the runs.
    pub medians: Medians,
    /// Every run, with per-channel rows.
    pub runs: Vec<RunFigures>,
}

/// A point left out by the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedPoint {
    /// Channels.
    pub channels: u32,
    /// Packet bytes.
    pub packet: usize,
    /// Transfer bytes per thread.
    pub transfer: u64,
    /// Round trips it would have taken (all channels).
    pub round_trips: u64,
}

/// How the study ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StudyOutcome {
    /// Every point ran.
    Complete,
    /// Ctrl-C; the results hold what finished.
    Interrupted,
    /// A point failed; the results hold what finished before.
    Failed {
        /// The error.
        error: String,
    },
}

/// Everything the study measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyResults {
    /// Where and how.
    pub context: Context,
    /// Whether `--quick`.
    pub quick: bool,
    /// The plan.
    pub plan: StudyPlan,
    /// The table points, with the kick-per-message link (the original).
    pub points: Vec<PointRecord>,
    /// Points over budget.
    pub skipped: Vec<SkippedPoint>,
    /// Variants: every notification × buffer mode at 496-byte packets.
    pub variants: Vec<PointRecord>,
    /// How it ended.
    pub outcome: StudyOutcome,
}

/// Runs the study. `progress` hears a line per point; `stop` is Ctrl-C. With a
/// `profiler` for the participant `remote`, every remote process is recorded.
pub fn run(
    plan: &StudyPlan,
    quick: bool,
    context: Context,
    remote: &RemoteKind,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
    mut profiler: Option<&mut ParticipantProfiler>,
) -> StudyResults {
    let mut res = StudyResults {
        context,
        quick,
        plan: plan.clone(),
        points: Vec::new(),
        skipped: Vec::new(),
        variants: Vec::new(),
        outcome: StudyOutcome::Complete,
    };
    if let Err(e) = run_into(plan, remote, stop, progress, &mut profiler, &mut res) {
        res.outcome = match e {
            RpmsgError::Interrupted => StudyOutcome::Interrupted,
            e => StudyOutcome::Failed {
                error: e.to_string(),
            },
        };
    }
    res
}

fn measure(
    session: &mut Session,
    point: &RpmsgPoint,
    runs: usize,
    stop: &AtomicBool,
) -> Result<PointRecord, RpmsgError> {
    // A short warm-up run: page faults, thread start-up, branch predictors.
    let warm = RpmsgPoint {
        transfer: (point.packet as u64 * 50).min(point.transfer),
        ..*point
    };
    session.run(&warm, stop)?;
    let mut figures = Vec::with_capacity(runs);
    for _ in 0..runs {
        figures.push(session.run(point, stop)?);
    }
    Ok(PointRecord {
        point: *point,
        medians: Medians::of(&figures),
        runs: figures,
    })
}

/// The participants a study can profile: this process and the remote.
pub const PARTICIPANTS: [&str; 2] = ["main", "remote"];

/// Starts recording the session's remote when it is the profiled participant.
fn profile_remote(
    profiler: &mut Option<&mut ParticipantProfiler>,
    session: &Session,
) -> Result<Option<Attached>, RpmsgError> {
    match profiler {
        Some(p) => p
            .attach("remote", session.remote_pid() as u32)
            .map_err(|e| RpmsgError::Config(format!("profile: {e}"))),
        None => Ok(None),
    }
}

fn run_into(
    plan: &StudyPlan,
    remote: &RemoteKind,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
    profiler: &mut Option<&mut ParticipantProfiler>,
    res: &mut StudyResults,
) -> Result<(), RpmsgError> {
    let base = RpmsgPoint {
        channels: 1,
        packet: 1,
        transfer: 1,
        notify: Notify::Kick,
        buffers: Buffers::Copy,
        suffix: false,
        verify: false,
    };
    for &channels in &plan.channels {
        let first = RpmsgPoint { channels, ..base };
        let mut session = Session::start(&link_config(&first, Service::Echo), remote)?;
        let _recording = profile_remote(profiler, &session)?;
        for &packet in &plan.packets {
            for &transfer in &plan.transfers {
                let point = RpmsgPoint {
                    channels,
                    packet,
                    transfer,
                    ..base
                };
                if !plan.keeps(channels, packet, transfer) {
                    res.skipped.push(SkippedPoint {
                        channels,
                        packet,
                        transfer,
                        round_trips: u64::from(channels) * point.round_trips(),
                    });
                    continue;
                }
                let rec = measure(&mut session, &point, plan.runs, stop)?;
                progress(&format!(
                    "{channels:>2} ch × {packet:>3} B × {transfer:>8} B: {:>12.0} B/s (sum of rates {:.0})",
                    rec.medians.aggregate_bytes_per_s, rec.medians.sum_of_rates_bytes_per_s
                ));
                res.points.push(rec);
            }
        }
        session.finish()?;
    }
    for &channels in &plan.variant_channels {
        for notify in Notify::ALL {
            for buffers in Buffers::ALL {
                // Polling is ~10× faster per round trip: give it as long a run. The
                // round trips are shared among the channels, so every run carries
                // about as many messages whatever the channel count.
                let total = plan.variant_round_trips * if notify == Notify::Poll { 10 } else { 1 };
                let rts = (total / u64::from(channels)).max(200);
                let point = RpmsgPoint {
                    channels,
                    packet: 496,
                    transfer: 496 * rts,
                    notify,
                    buffers,
                    ..base
                };
                let mut session = Session::start(&link_config(&point, Service::Echo), remote)?;
                let _recording = profile_remote(profiler, &session)?;
                let rec = measure(&mut session, &point, plan.runs, stop)?;
                session.finish()?;
                progress(&format!(
                    "variant {channels:>2} ch {:>9} {:>9}: {:>10.0} round trips/s, p50 {:.1} µs",
                    notify.name(),
                    buffers.name(),
                    rec.medians.round_trips_per_s,
                    rec.medians.rtt_p50_ns / 1e3
                ));
                res.variants.push(rec);
            }
        }
    }
    Ok(())
}
