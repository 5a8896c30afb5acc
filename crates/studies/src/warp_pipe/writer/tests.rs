//! A hand-built warp-pipe document through the folder writer.

use super::*;
use std::collections::BTreeMap;
use xferbench_lab::result::{Outcome, RunRecord, SCHEMA_VERSION, StudyInfo};
use xferbench_probes::stats::Estimate;
use xferbench_probes::verify::Integrity;

/// A run of `messages` transactions of 2048 B at `tps` transactions/s.
fn run(i: usize, messages: u64, tps: f64) -> RunRecord {
    let window_s = messages as f64 / tps;
    let bytes = messages * 2048;
    let figures: BTreeMap<String, f64> = [
        (figure::THROUGHPUT, bytes as f64 / window_s),
        (figure::MESSAGE_RATE, tps),
        (figure::WINDOW, window_s),
        (TRANSACTIONS_PER_S, tps),
        (MB_PER_S, bytes as f64 / window_s / 1e6),
        (CLIENT_CPU_S, 0.5 * window_s),
        (SERVER_CPU_S, 0.25 * window_s),
        (figure::LATENCY[0], 1e9 / tps),
        (figure::LATENCY[2], 4e9 / tps),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    RunRecord {
        run: i,
        sequence: None,
        window_ns: (window_s * 1e9) as u64,
        messages,
        bytes,
        figures,
        latency: None,
        channels: vec![],
        cpu: vec![],
        integrity: None,
        counters: None,
        contention: None,
        collapsed: None,
    }
}

fn point(index: usize, params: &[(&str, &str)], rates: &[f64]) -> PointResult {
    let params: BTreeMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain([
            ("payload".into(), "2048".into()),
            ("io".into(), "epoll".into()),
        ])
        .collect();
    let threads: u64 = params["threads"].parse().unwrap();
    let messages = threads * 2 * 3;
    let runs: Vec<RunRecord> = rates
        .iter()
        .enumerate()
        .map(|(i, &t)| run(i, messages, t))
        .collect();
    let summary = runs[0]
        .figures
        .keys()
        .map(|k| {
            let e = Estimate::from_values(runs.iter().map(|r| r.figures[k]));
            (k.clone(), e.unwrap())
        })
        .collect();
    PointResult {
        index,
        params,
        chosen: Default::default(),
        defaults: Default::default(),
        size_bytes: 2048,
        channels: 1,
        primary: None,
        summary,
        per_channel: vec![],
        integrity: Some(Integrity {
            checked: messages / 3 * runs.len() as u64,
            ..Integrity::default()
        }),
        runs,
        warnings: vec![],
        counters: None,
        limit: None,
        drift: None,
        contention: None,
    }
}

/// Made-up shares shaped like a profile of the original workload.
fn original_profile() -> serde_json::Value {
    serde_json::json!({
        "point": 1, "group": "original-workload", "iterations": "100", "participant": "main",
        "sampled_cpu_ms": 2500.0,
        "top": {"name": "finish_task_switch_[k]", "self_share": 0.30, "total_share": 0.30},
        "top_user": {"name": "xferbench_transports::warp::crc::lcrc32_bitwise", "self_share": 0.21},
        "top_crc": {"name": "xferbench_transports::warp::crc::lcrc32_bitwise", "self_share": 0.21, "rank": 2},
        "crc_total_share": 0.43,
    })
}

pub(crate) fn doc() -> ResultDoc {
    let p = |g, v, c, crc, t| {
        vec![
            ("group", g),
            ("variant", v),
            ("connection", c),
            ("crc", crc),
            ("threads", t),
            ("iterations", "2"),
            ("instances", "1"),
            ("ops", "read-write-read"),
        ]
    };
    let points = vec![
        point(
            0,
            &p("original-workload", "original", "shared", "bitwise", "506"),
            &[1000.0, 1100.0, 1050.0],
        ),
        point(
            1,
            &p(
                "original-workload",
                "per-thread",
                "per-thread",
                "fast",
                "506",
            ),
            &[20000.0, 21000.0, 22000.0],
        ),
        point(
            2,
            &p("original-workload", "pipelined", "pipelined", "fast", "506"),
            &[50000.0, 52000.0, 51000.0],
        ),
        point(
            3,
            &p("crc", "shared, crc=fast", "shared", "fast", "506"),
            &[3000.0, 3300.0, 3150.0],
        ),
        point(
            4,
            &p("threads", "original", "shared", "bitwise", "16"),
            &[1200.0, 1300.0],
        ),
        point(
            5,
            &p("threads", "pipelined", "pipelined", "fast", "16"),
            &[24000.0, 26000.0],
        ),
        point(
            6,
            &[
                ("group", "sample-sleep"),
                ("variant", "original"),
                ("connection", "shared"),
                ("crc", "bitwise"),
                ("threads", "506"),
                ("iterations", "100"),
                ("instances", "1"),
                ("ops", "read-write-read"),
            ],
            // 3,036 transactions in 30.36 s at the median.
            &[100.0, 101.0, 99.0],
        ),
    ];
    let crc = serde_json::json!({"bitwise": 150.0, "fast": 9000.0, "table": 600.0});
    ResultDoc {
        schema_version: SCHEMA_VERSION,
        study: Some(StudyInfo {
            name: "warp-pipe".into(),
            quick: false,
            planned_points: 7,
            extras: BTreeMap::from([
                ("crc_mb_per_s".to_string(), crc),
                ("original_profile".to_string(), original_profile()),
            ]),
        }),
        context: {
            let mut c = xferbench_report::fixture::context("warp-pipe", true, "process");
            c.command_line = vec!["xferbench".into(), "study".into(), "warp-pipe".into()];
            c.settings.runs = 3;
            c.settings.warmup = 0;
            c.settings.count = None;
            c.settings.interleave = true;
            c.start_time = "2026-11-23T10:00:00Z".into();
            c
        },
        points,
        warnings: vec![],
        outcome: Outcome::Complete,
        knees: Vec::new(),
        failed: Vec::new(),
        ab: None,
    }
}

#[test]
fn the_folder_has_the_tables_plots_and_summary_of_the_document() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = crate::write_folder(tmp.path(), &doc()).unwrap();
    let read = |f: &str| std::fs::read_to_string(folder.dir().join(f)).unwrap();
    for f in [
        "results.json",
        "original-workload.md",
        "original-workload.csv",
        "crc.md",
        "threads.md",
        "crc-speed.md",
        "throughput-vs-threads.svg",
        "summary.md",
    ] {
        assert!(folder.dir().join(f).exists(), "{f}");
    }
    assert!(
        !folder.dir().join("payload.md").exists(),
        "no points, no table"
    );
    let table = read("original-workload.md");
    assert_eq!(table.lines().filter(|l| l.starts_with("| ")).count(), 4);
    insta::assert_snapshot!("warp_pipe_original_workload_table", table);
    let crc = read("crc-speed.md");
    assert!(crc.contains("| fast | 9000.0 | 60.0 |"), "{crc}");
    let summary = read("summary.md");
    assert!(summary.starts_with("# Warp Pipe study — summary\n"));
    assert!(
        summary.contains("**48.6× (interval 47.3–50.0×"),
        "{summary}"
    );
    assert!(summary.contains("21 s of `native_sim` time (49 s of real time)"));
    assert!(
        summary.contains("the original design took 30.360 [30.059–30.667, 75 %] s of real time")
            && summary.contains("A thread's sleeps alone take 20.0 s; the transactions add 10.4 s"),
        "{summary}"
    );
    assert!(folder.dir().join("sample-sleep.md").exists());
    assert!(summary.contains("the bitwise CRC accounts for 67 % of the original's wall time"));
    assert!(summary.contains(
        "At 16 threads the original reaches 1250 transactions/s, `pipelined` 25000 (20.0×)"
    ));
    assert!(
        summary.contains("**Integrity.** 7 points, 0 verification failures, 0 points unverified")
    );
    assert!(
        summary.contains(
            "the original workload's top function by self time is `finish_task_switch_[k]` with 30.0 % of the samples (30.0 % with its callees); the top function outside the kernel is `xferbench_transports::warp::crc::lcrc32_bitwise` with 21.0 %"
        ) && summary.contains("finds CRC32 on top, without a share"),
        "{summary}"
    );
    insta::assert_snapshot!("warp_pipe_summary", summary);
}

/// The same document with the CRC's speed measured by points of the plan instead
/// of the extras: the same table and summary, and the CRC points are not counted as
/// transfers.
#[test]
fn crc_points_give_the_same_folder_as_the_extras_did() {
    let old = doc();
    let mut new = doc();
    new.study.as_mut().unwrap().extras.remove("crc_mb_per_s");
    for (i, (kind, rate)) in [("bitwise", 150.0), ("table", 600.0), ("fast", 9000.0)]
        .into_iter()
        .enumerate()
    {
        let mut p = point(
            new.points.len() + i,
            &[("group", crc::GROUP), ("crc", kind), ("threads", "1")],
            &[1.0, 1.0],
        );
        p.integrity = None;
        for r in &mut p.runs {
            r.figures
                .insert(xferbench_lab::rig::crc::CRC_MB_PER_S.into(), rate);
        }
        p.summary.insert(
            xferbench_lab::rig::crc::CRC_MB_PER_S.into(),
            Estimate::from_values([rate, rate]).unwrap(),
        );
        new.points.push(p);
    }
    assert_eq!(crc_rates(&new), crc_rates(&old));
    let tmp = tempfile::tempdir().unwrap();
    let read = |doc: &ResultDoc, sub: &str, f: &str| {
        let folder = crate::write_folder(&tmp.path().join(sub), doc).unwrap();
        std::fs::read_to_string(folder.dir().join(f)).unwrap()
    };
    assert_eq!(
        read(&new, "new", "crc-speed.md"),
        read(&old, "old", "crc-speed.md")
    );
    let summary = read(&new, "new2", "summary.md");
    assert!(
        summary.contains("**Integrity.** 7 points, 0 verification failures, 0 points unverified"),
        "{summary}"
    );
    assert!(summary.contains("the bitwise LCRC32 runs at 150 MB/s and the fast one at 9000 MB/s"));
}
