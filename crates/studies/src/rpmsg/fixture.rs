//! Deterministic result documents of the study for its writer's tests: synthetic
//! timings, no machine.

use std::collections::BTreeMap;
use xferbench_lab::result::*;
use xferbench_report::fixture::{context, limits, point, run};

/// A small RPMsg study: table points for 1 and 8 channels × 1 and 496-byte packets,
/// every notify mode with copy and kick with zero-copy for one channel, one table
/// point skipped; a remote process per point.
pub fn rpmsg_doc() -> ResultDoc {
    use xferbench_lab::workload::rpmsg::{KICKS_TO_HOST, KICKS_TO_REMOTE, SUM_OF_RATES};
    let mut points = Vec::new();
    let plan: [(&str, usize, u64, u64, &str, &str, f64); 8] = [
        ("table", 1, 1, 10_000, "kick", "copy", 150_000.0),
        ("table", 1, 496, 100_000, "kick", "copy", 140_000.0),
        ("table", 8, 1, 1_000, "kick", "copy", 160_000.0),
        ("table", 8, 496, 10_000, "kick", "copy", 170_000.0),
        ("variants", 1, 496, 496 * 4000, "kick", "copy", 140_000.0),
        (
            "variants",
            1,
            496,
            496 * 4000,
            "event-idx",
            "copy",
            150_000.0,
        ),
        (
            "variants",
            1,
            496,
            496 * 40_000,
            "poll",
            "copy",
            1_500_000.0,
        ),
        (
            "variants",
            1,
            496,
            496 * 4000,
            "kick",
            "zero-copy",
            141_000.0,
        ),
    ];
    for (i, (group, ch, packet, transfer, notify, buffers, rate)) in plan.into_iter().enumerate() {
        let runs: Vec<RunRecord> = (0..3)
            .map(|r| {
                let bps = rate * packet as f64 * (1.0 + 0.02 * r as f64);
                let mut rec = run(r, bps, packet, ch, Some(1e9 / rate), None);
                let sum = if ch > 1 && transfer <= 1_000 {
                    3.0
                } else {
                    1.05
                };
                let f = &mut rec.figures;
                f.insert(SUM_OF_RATES.into(), bps * sum);
                f.insert(KICKS_TO_REMOTE.into(), 1.0);
                f.insert(KICKS_TO_HOST.into(), 1.0);
                if ch > 1 {
                    f.insert(figure::FAIRNESS.into(), 0.98);
                }
                rec
            })
            .collect();
        let mut p = point(i, "rpmsg", packet, ch, runs, "pingpong");
        p.primary = Some(Primary {
            figure: figure::THROUGHPUT.into(),
            higher_is_better: true,
        });
        p.params = [
            ("group", group.to_string()),
            ("channels", ch.to_string()),
            ("packet", packet.to_string()),
            ("transfer", transfer.to_string()),
            ("notify", notify.to_string()),
            ("buffers", buffers.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        points.push(p);
    }
    let mut ctx = context("rpmsg", false, "process");
    ctx.settings.runs = 3;
    ctx.settings.interleave = true;
    ctx.settings.count = None;
    ctx.limits = Some(xferbench_lab::limits::MachineLimits {
        start: limits(),
        end: Some(limits()),
        drift_threshold: 0.25,
    });
    let mut extras = BTreeMap::new();
    extras.insert("scale".into(), serde_json::json!({ "budget": 12_000 }));
    extras.insert(
        "skipped".into(),
        serde_json::json!([{ "channels": 8, "packet": 1, "transfer": 100_000, "round_trips": 800_000 }]),
    );
    ResultDoc {
        schema_version: SCHEMA_VERSION,
        study: Some(StudyInfo {
            name: "rpmsg".into(),
            quick: true,
            planned_points: 8,
            extras,
        }),
        context: ctx,
        points,
        warnings: vec![],
        outcome: Outcome::Complete,
        knees: Vec::new(),
        failed: Vec::new(),
        ab: None,
    }
}
