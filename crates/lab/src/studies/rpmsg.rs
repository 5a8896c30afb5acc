//! The RPMsg study: the tables of the "RPMsg Benchmark Figures" page for the
//! ADSP-SC598 — channels 1, 8, 32 × packet sizes 1, 2, 16, 64, 256, 496 × transfer
//! sizes 100 … 10^7 bytes per thread — measured on this machine with a kick per
//! message (the original's mailbox interrupt), plus the variants: kick vs event index
//! vs polling, copy vs zero-copy. The plan only: the workload is
//! [`crate::workload::rpmsg`], the rig [`crate::rig::rpmsg`].
//!
//! # Points
//!
//! Every point has the parameters `group` (`table` or `variants`), `channels`,
//! `packet`, `transfer` (bytes per thread: `⌈transfer / packet⌉` round trips per
//! channel), `notify` and `buffers`. Its primary figure is the throughput over the
//! common window (the original measures bandwidth).
//!
//! # Budget
//!
//! A point makes `channels · ⌈transfer / packet⌉` round trips; 32 channels × 10^7 B
//! of 1-byte packets would be 3.2·10^8 of them. Table points above the budget
//! ([`Scale::budget`] round trips in all) are skipped and listed in
//! `extras["skipped"]`, like the original's tables, which also omit the long
//! small-packet runs.
//!
//! # Order
//!
//! Three measured runs per point, interleaved round-robin: every visit starts a link
//! and its remote afresh, discards one warm-up run and keeps one, so that points
//! measured minutes apart share the machine's drift.

use super::{Study, StudyEnv, StudyPlan};
use crate::counters::{CounterMode, CounterSource};
use crate::measure::{Bench, LoopOptions, PlannedPoint};
use crate::result::figure;
use crate::rig::rpmsg::{RemoteKind, RpmsgRig};
use crate::rig::{FigureRules, Rig, RunError};
use crate::workload::Limit;
use crate::workload::rpmsg::RpmsgPoint;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;
use xferbench_transports::rpmsg::{Buffers, Notify};

/// The participants a profile can record: this process and the remote.
pub const PARTICIPANTS: [&str; 2] = ["main", "remote"];

/// The primary figure of every point: bytes/s over the common window.
pub const RULES: FigureRules = FigureRules {
    primary: figure::THROUGHPUT,
    higher_is_better: true,
};

/// How much to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scale {
    /// Channel counts.
    pub channels: Vec<u32>,
    /// Packet sizes, bytes.
    pub packets: Vec<usize>,
    /// Transfer sizes, bytes per thread.
    pub transfers: Vec<u64>,
    /// Largest number of round trips (all channels) of a kept point.
    pub budget: u64,
    /// Channel counts of the variants.
    pub variant_channels: Vec<u32>,
    /// Round trips of a variant run, shared among its channels (packets of 496
    /// bytes; ×10 when polling, which is about ten times faster).
    pub variant_round_trips: u64,
}

impl Scale {
    /// The full plan: every size of the original.
    pub fn full() -> Scale {
        Scale {
            channels: vec![1, 8, 32],
            packets: vec![1, 2, 16, 64, 256, 496],
            transfers: vec![100, 10_000, 100_000, 1_000_000, 10_000_000],
            budget: 50_000,
            variant_channels: vec![1, 8, 32],
            variant_round_trips: 20_000,
        }
    }

    /// The quick plan: a subset that runs in about a minute.
    pub fn quick() -> Scale {
        Scale {
            channels: vec![1, 8, 32],
            packets: vec![1, 16, 496],
            transfers: vec![100, 10_000, 100_000],
            budget: 12_000,
            variant_channels: vec![1, 8],
            variant_round_trips: 4_000,
        }
    }

    /// Whether a table point fits the budget.
    pub fn keeps(&self, channels: u32, packet: usize, transfer: u64) -> bool {
        u64::from(channels) * RpmsgPoint::round_trips_for(transfer, packet) <= self.budget
    }
}

/// A table point left out by the budget.
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

/// One planned point: its group, transfer and workload point.
#[derive(Debug, Clone, Copy)]
pub struct Planned {
    /// `table` or `variants`.
    pub group: &'static str,
    /// Bytes per thread.
    pub transfer: u64,
    /// The workload's point.
    pub point: RpmsgPoint,
}

/// The points of a scale and the table points it skipped.
pub fn points(scale: &Scale) -> (Vec<Planned>, Vec<SkippedPoint>) {
    let base = |channels, packet, transfer, notify, buffers| RpmsgPoint {
        channels,
        packet,
        limit: Limit::Count(RpmsgPoint::round_trips_for(transfer, packet)),
        notify,
        buffers,
        suffix: false,
        verify: false,
        zero_copy: false,
    };
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for &channels in &scale.channels {
        for &packet in &scale.packets {
            for &transfer in &scale.transfers {
                if !scale.keeps(channels, packet, transfer) {
                    skipped.push(SkippedPoint {
                        channels,
                        packet,
                        transfer,
                        round_trips: u64::from(channels)
                            * RpmsgPoint::round_trips_for(transfer, packet),
                    });
                    continue;
                }
                out.push(Planned {
                    group: "table",
                    transfer,
                    point: base(channels, packet, transfer, Notify::Kick, Buffers::Copy),
                });
            }
        }
    }
    for &channels in &scale.variant_channels {
        for notify in Notify::ALL {
            for buffers in Buffers::ALL {
                // The round trips are shared among the channels, so every run
                // carries about as many messages whatever the channel count.
                let total = scale.variant_round_trips * if notify == Notify::Poll { 10 } else { 1 };
                let rts = (total / u64::from(channels)).max(200);
                out.push(Planned {
                    group: "variants",
                    transfer: 496 * rts,
                    point: base(channels, 496, 496 * rts, notify, buffers),
                });
            }
        }
    }
    (out, skipped)
}

/// The study's bench: a link and its remote per visit.
pub struct RpmsgBench {
    planned: Vec<PlannedPoint>,
    points: Vec<RpmsgPoint>,
    remote: RemoteKind,
}

impl RpmsgBench {
    /// The bench of `points`, remotes started as `remote`.
    pub fn new(points: &[Planned], remote: RemoteKind) -> RpmsgBench {
        let planned = points
            .iter()
            .map(|p| {
                let q = &p.point;
                let params = [
                    ("group", p.group.to_string()),
                    ("channels", q.channels.to_string()),
                    ("packet", q.packet.to_string()),
                    ("transfer", p.transfer.to_string()),
                    ("notify", q.notify.name().to_string()),
                    ("buffers", q.buffers.name().to_string()),
                ];
                PlannedPoint {
                    params: params
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                    size_bytes: q.packet as u64,
                    channels: q.channels as usize,
                    rules: RULES,
                    verify: q.verify,
                }
            })
            .collect();
        RpmsgBench {
            planned,
            points: points.iter().map(|p| p.point).collect(),
            remote,
        }
    }
}

impl Bench for RpmsgBench {
    fn points(&self) -> &[PlannedPoint] {
        &self.planned
    }

    fn rig(
        &mut self,
        index: usize,
        _source: Option<&dyn CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError> {
        Ok(Box::new(RpmsgRig::start(self.points[index], &self.remote)?))
    }
}

/// The RPMsg study.
#[derive(Debug, Clone, Copy)]
pub struct RpmsgStudy;

impl Study for RpmsgStudy {
    fn name(&self) -> &'static str {
        "rpmsg"
    }

    fn description(&self) -> &'static str {
        "RPMsg link bandwidth like rpmsg-xmit-p on the ADSP-SC598 (channels × packet × transfer), plus notify × buffer variants"
    }

    fn participants(&self) -> &'static [&'static str] {
        &PARTICIPANTS
    }

    fn plan(&self, quick: bool, env: &StudyEnv) -> StudyPlan {
        let scale = if quick { Scale::quick() } else { Scale::full() };
        let (planned, skipped) = points(&scale);
        let remote = match &env.launcher {
            Some(l) => RemoteKind::Process(l.clone()),
            None => RemoteKind::Thread,
        };
        let options = LoopOptions {
            runs: 3,
            warmup: 1,
            interleave: true,
            hang_timeout: Duration::from_secs(10),
            counters: CounterMode::Off,
            profile: None,
            watch: None,
        };
        let settings = env.settings("rpmsg", &options, false);
        let mut extras = BTreeMap::new();
        extras.insert(
            "scale".to_string(),
            serde_json::to_value(&scale).expect("a scale serialises"),
        );
        extras.insert(
            "skipped".to_string(),
            serde_json::to_value(&skipped).expect("skipped points serialise"),
        );
        StudyPlan {
            bench: Box::new(RpmsgBench::new(&planned, remote)),
            options,
            settings,
            extras,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quick_plan_keeps_the_budget_and_lists_what_it_skips() {
        let scale = Scale::quick();
        let (planned, skipped) = points(&scale);
        let table = planned.iter().filter(|p| p.group == "table").count();
        let variants = planned.iter().filter(|p| p.group == "variants").count();
        assert_eq!(table + skipped.len(), 3 * 3 * 3);
        assert_eq!(variants, 2 * 3 * 2);
        assert!(skipped.iter().all(|k| k.round_trips > scale.budget));
        let plan = RpmsgStudy.plan(
            true,
            &StudyEnv {
                launcher: None,
                remote: None,
            },
        );
        assert!(plan.options.interleave);
        assert_eq!((plan.options.runs, plan.options.warmup), (3, 1));
        let p = &plan.bench.points()[0];
        let keys: Vec<&str> = p.params.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "buffers", "channels", "group", "notify", "packet", "transfer"
            ]
        );
        assert_eq!(
            plan.extras["skipped"].as_array().unwrap().len(),
            skipped.len()
        );
    }
}
