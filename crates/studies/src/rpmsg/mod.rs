//! The RPMsg study: the tables of the "RPMsg Benchmark Figures" page for the
//! ADSP-SC598 — channels 1, 8, 32 × packet sizes 1, 2, 16, 64, 256, 496 × transfer
//! sizes 100 … 10^7 bytes per thread — measured on this machine with a kick per
//! message (the original's mailbox interrupt), plus the variants: kick vs event index
//! vs polling, copy vs zero-copy. The plan only: the workload is
//! [`xferbench_lab::workload::rpmsg`], the rig [`xferbench_lab::rig::rpmsg`].
//!
//! # Points
//!
//! Every point has the parameters `group` (`table` or `variants`; `calibration`
//! for `--full`'s rates, [`full`]), `channels`,
//! `packet`, `transfer` (bytes per thread: `⌈transfer / packet⌉` round trips per
//! channel), `notify` and `buffers`. Its primary figure is the throughput over the
//! common window (the original measures bandwidth).
//!
//! The `table` points run as the firmware answers: its echo appends
//! `" => echo from Core1\n"`, so replies are 20 bytes longer than the packet (cut at
//! 496), and every reply is checked to be the packet and the suffix. The
//! `variants` (496-byte packets, where the suffix no longer fits) echo plainly.
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
//! measured minutes apart share the machine's drift. `--full` starts with its
//! calibration points, one visit each ([`full`]), and tells its estimate of the
//! rest once they have finished.

use crate::params::GROUP;
use crate::study::{Study, StudyEnv, StudyPlan};
use std::collections::BTreeMap;
use std::time::Duration;
use xferbench_lab::measure::{LoopOptions, PlannedPoint};
use xferbench_lab::result::figure;
use xferbench_lab::rig::FigureRules;
use xferbench_lab::rig::rpmsg::{RemoteKind, RpmsgBench};
use xferbench_lab::workload::rpmsg::RpmsgParams;
use xferbench_params::PointParams;
use xferbench_probes::counters::CounterMode;

/// The participants a profile can record: this process and the remote.
pub const PARTICIPANTS: [&str; 2] = ["main", "remote"];

/// The primary figure of every point: bytes/s over the common window.
pub const RULES: FigureRules = FigureRules {
    primary: figure::THROUGHPUT,
    higher_is_better: true,
};

pub mod full;
pub mod plan;
mod seed;
pub mod writer;

#[cfg(test)]
pub(crate) mod fixture;

pub use plan::{ORIGINAL_CELLS, Planned, Scale, SkippedPoint, points};

/// The study's bench: the lab's [`RpmsgBench`] over `points` (a link and its
/// remote per visit), remotes started as `remote`, pinned with `pin` as
/// `xferbench rpmsg --pin` pins them.
pub fn bench(points: &[Planned], remote: RemoteKind, pin: bool) -> RpmsgBench {
    RpmsgBench::new(remote, pin).with(points.iter().map(|p| (planned(p), p.point)))
}

/// How a point of the plan is planned: its parameters and rules.
fn planned(p: &Planned) -> PlannedPoint {
    let q = &p.point;
    let mut params = RpmsgParams::of(q, p.transfer).to_map();
    params.put_text(&GROUP, p.group);
    PlannedPoint {
        size_bytes: q.packet as u64,
        channels: q.channels as usize,
        verify: q.verify || q.suffix,
        // A calibration point: one visit of a warm-up and a measured run.
        runs: (p.group == full::GROUP)
            .then_some(xferbench_lab::plan::RunCount { runs: 1, warmup: 1 }),
        ..PlannedPoint::from_params(params.into_params(), RULES)
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

    fn has_full(&self) -> bool {
        true
    }

    fn pins(&self) -> bool {
        true
    }

    fn plan(&self, quick: bool, env: &StudyEnv) -> StudyPlan {
        let scale = match (quick, env.full) {
            (true, _) => Scale::quick(),
            (false, true) => Scale::every_cell(),
            (false, false) => Scale::full(),
        };
        let (mut planned, skipped) = points(&scale);
        // `--full` says how long it will take once it has measured its rates.
        let mut watch: Option<Box<dyn crate::study::StudyWatch>> = None;
        if env.full && !quick {
            let calibrations = full::calibration_points(&planned);
            watch = Some(Box::new(full::EstimateWatch::new(
                planned.clone(),
                &calibrations,
                env.say,
            )));
            planned.splice(0..0, calibrations);
        }
        let remote = match &env.launcher {
            Some(l) => RemoteKind::Process(l.clone()),
            None => RemoteKind::Thread,
        };
        let options = LoopOptions {
            judge: &xferbench_lab::judge::LAB,
            runs: 3,
            warmup: 1,
            interleave: true,
            hang_timeout: Duration::from_secs(10),
            counters: CounterMode::Off,
            profile: None,
            watch: None,
            until_stopped: false,
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
            bench: Box::new(bench(&planned, remote, env.pin)),
            options,
            settings,
            extras,
            watch,
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
        let plan = RpmsgStudy.plan(true, &StudyEnv::default());
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

    #[test]
    fn full_measures_every_cell_of_the_original_and_no_other() {
        let (planned, skipped) = points(&Scale::every_cell());
        assert!(skipped.is_empty());
        let mut cells: Vec<(u32, usize, u64)> = planned
            .iter()
            .filter(|p| p.group == "table")
            .map(|p| (p.point.channels, p.point.packet, p.transfer))
            .collect();
        cells.sort();
        let mut original = ORIGINAL_CELLS.to_vec();
        original.sort();
        assert_eq!(cells, original);
        // The default plan measures 51 of them and lists the other 29 as skipped.
        let (planned, skipped) = points(&Scale::full());
        let table = planned.iter().filter(|p| p.group == "table").count();
        let in_original = |c: u32, p: usize, t: u64| ORIGINAL_CELLS.contains(&(c, p, t));
        assert_eq!(table, 51);
        assert_eq!(
            skipped
                .iter()
                .filter(|k| in_original(k.channels, k.packet, k.transfer))
                .count(),
            29
        );
        let full = RpmsgStudy.plan(
            false,
            &StudyEnv {
                full: true,
                ..StudyEnv::default()
            },
        );
        assert_eq!(
            full.bench
                .points()
                .iter()
                .filter(|p| p.params["group"] == "table")
                .count(),
            80
        );
        // Its calibration points come first, one visit of a warm-up and a measured
        // run each, whatever the plan's runs.
        let groups: Vec<&str> = full.bench.points()[..4]
            .iter()
            .map(|p| p.params["group"].as_str())
            .collect();
        assert_eq!(
            groups,
            ["calibration", "calibration", "calibration", "table"]
        );
        let own = xferbench_lab::plan::RunCount { runs: 1, warmup: 1 };
        assert_eq!(full.bench.points()[0].runs, Some(own));
        assert!(full.watch.is_some());
        assert!(RpmsgStudy.plan(false, &StudyEnv::default()).watch.is_none());
        assert!(RpmsgStudy.has_full());
    }
}
