//! A hand-built hash-table document through the folder writer: the tables pinned as
//! snapshots, the seed's sentences and the targets in the summary.

use super::*;
use std::collections::BTreeMap;
use xferbench_lab::result::{Collapse, Outcome, RunRecord, SCHEMA_VERSION, StudyInfo};
use xferbench_probes::stats::Estimate;
use xferbench_probes::verify::Integrity;

/// One hyperfine-style session: `runs` timed runs of `mean_ms` each, and the
/// aggregate requests/s of all clients.
fn session(mean_ms: f64, all_per_s: f64, runs: u64) -> RunRecord {
    let requests = 3000 * runs;
    let window_s = mean_ms / 1e3 * runs as f64;
    let figures: BTreeMap<String, f64> = [
        (f::TIME_MEAN_S, mean_ms / 1e3),
        (f::TIME_SD_S, mean_ms / 1e3 * 0.05),
        (f::TIME_MEDIAN_S, mean_ms / 1e3 * 0.99),
        (f::TIME_MIN_S, mean_ms / 1e3 * 0.9),
        (f::TIME_MAX_S, mean_ms / 1e3 * 1.2),
        (f::USER_MEAN_S, mean_ms / 1e3 * 0.3),
        (f::SYS_MEAN_S, mean_ms / 1e3 * 0.1),
        (f::TIMED_RUNS, runs as f64),
        (f::REQUESTS_PER_S_ALL, all_per_s * 0.6),
        (f::REQUESTS_PER_S_STEADY, all_per_s),
        (f::REQUESTS_PER_S_TIMED, 3000.0 / (mean_ms / 1e3)),
        (f::SERVER_CPU_S, window_s * 0.8),
        (f::VISITORS_CPU_S, 0.0),
        (figure::LATENCY[0], mean_ms * 1e6 / 3000.0 * 5.0),
        (figure::LATENCY[1], mean_ms * 1e6 / 3000.0 * 8.0),
        (figure::LATENCY[2], mean_ms * 1e6 / 3000.0 * 20.0),
        (figure::LATENCY[4], mean_ms * 1e6 / 3000.0 * 90.0),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    RunRecord {
        run: 0,
        sequence: None,
        window_ns: (window_s * 1e9) as u64,
        messages: requests,
        bytes: 0,
        figures,
        latency: None,
        channels: vec![],
        cpu: vec![],
        integrity: Some(Integrity {
            checked: requests,
            ..Integrity::default()
        }),
        counters: None,
        contention: None,
        collapsed: None,
    }
}

fn point(index: usize, group: &str, case: &str, arch: &str, w: u32, v: usize) -> PointResult {
    // Made-up but shaped like a run: preopt collapses with visitors, ring less,
    // sharded keeps its aggregate; Redis sits between.
    let (alone_ms, per_visitor) = match arch {
        "preopt" => (40.0, 3.0),
        "ring" => (16.0, 0.6),
        "redis" => (9.0, 1.0),
        _ => (5.0, 1.0),
    };
    let mean_ms = alone_ms * (1.0 + per_visitor * v as f64) * (1.0 + f64::from(w) / 200.0);
    let all =
        3000.0 / (mean_ms / 1e3) * (1.0 + v as f64) * if arch == "sharded" { 1.0 } else { 0.6 };
    let runs = vec![session(mean_ms, all, if v >= 16 { 3 } else { 12 })];
    let summary = runs[0]
        .figures
        .keys()
        .map(|k| {
            let e = Estimate::from_values(runs.iter().map(|r| r.figures[k]));
            (k.clone(), e.unwrap())
        })
        .collect();
    let params: BTreeMap<String, String> = [
        ("group", group.to_string()),
        ("case", case.to_string()),
        ("arch", arch.to_string()),
        ("workers", w.to_string()),
        ("visitors", v.to_string()),
        ("outer", "100".into()),
        ("inner", "10".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    PointResult {
        index,
        params,
        chosen: Default::default(),
        defaults: Default::default(),
        size_bytes: 0,
        channels: 1,
        primary: None,
        summary,
        per_channel: vec![],
        integrity: runs[0].integrity,
        runs,
        warnings: vec![],
        counters: None,
        limit: None,
        drift: None,
        contention: None,
    }
}

/// Made-up shares shaped like the seed's: preopt in semaphores and channels.
fn profile_shares() -> serde_json::Value {
    let arch = |point: usize, sync: f64, dispatch: f64, table: f64| {
        let other = 1.0 - sync - dispatch - table;
        let shares: Vec<serde_json::Value> = [
            ("sync", sync),
            ("dispatch", dispatch),
            ("hashtable", table),
            ("other", other),
        ]
        .iter()
        .map(|(k, v)| serde_json::json!({"category": k, "weight": (v * 1e9) as u64, "share": v}))
        .collect();
        serde_json::json!({"point": point, "workers": "2", "visitors": "4",
            "sampled_cpu_ms": 1000.0, "shares": shares})
    };
    serde_json::json!({
        "preopt": arch(22, 0.55, 0.35, 0.01),
        "ring": arch(23, 0.40, 0.0, 0.05),
        "sharded": arch(24, 0.30, 0.0, 0.25),
    })
}

pub(crate) fn doc() -> ResultDoc {
    let mut points = Vec::new();
    for arch in arches() {
        for (case, w, v) in [
            ("AloneSingleThread", 1, 0),
            ("TwoSingleThread", 1, 1),
            ("AloneMultiThread", 16, 0),
            ("TwoMultiThread", 16, 1),
            ("ManyClientsST", 1, 16),
            ("ManyClientsMT", 16, 16),
            ("SCManyThreads", 32, 0),
        ] {
            points.push(point(points.len(), "cases", case, arch, w, v));
        }
    }
    for arch in arches() {
        points.push(point(points.len(), "profile", "Profile2W4V", arch, 2, 4));
    }
    for v in [0, 1, 16] {
        let case = format!("Redis{v}V");
        points.push(point(points.len(), "redis", &case, "redis", 1, v));
    }
    let extras = BTreeMap::from([
        (
            "redis".to_string(),
            serde_json::json!({"available": true, "version": "Redis server v=7.0.15"}),
        ),
        (
            "timing".to_string(),
            serde_json::json!({"outer": 100, "inner": 10, "warmup": 40, "warmup_16_visitors": 2,
                "min_runs": 10, "min_time_s": 3.0, "buckets": 10000, "seed": 42, "steady_s": 1.0}),
        ),
        ("profile_shares".to_string(), profile_shares()),
    ]);
    ResultDoc {
        schema_version: SCHEMA_VERSION,
        study: Some(StudyInfo {
            name: "hashtable".into(),
            quick: false,
            planned_points: points.len(),
            extras,
        }),
        context: {
            let mut c = xferbench_report::fixture::context("kv", true, "process");
            c.command_line = vec!["xferbench".into(), "study".into(), "hashtable".into()];
            c.settings.runs = 1;
            c.settings.warmup = 0;
            c.settings.count = None;
            c.settings.interleave = false;
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
        "cases.md",
        "cases.csv",
        "profile.md",
        "redis.md",
        "seed.md",
        "profile-shares.md",
        "time-per-run.svg",
        "requests-vs-visitors.svg",
        "summary.md",
        "report.html",
    ] {
        assert!(folder.dir().join(f).exists(), "{f}");
    }
    let cases = read("cases.md");
    assert_eq!(
        cases.lines().filter(|l| l.starts_with("| ")).count(),
        1 + 21
    );
    insta::assert_snapshot!("hashtable_cases_table", cases);
    insta::assert_snapshot!("hashtable_seed_table", read("seed.md"));
    insta::assert_snapshot!("hashtable_redis_table", read("redis.md"));
    insta::assert_snapshot!("hashtable_summary", read("summary.md"));
    insta::assert_snapshot!("hashtable_profile_shares_table", read("profile-shares.md"));
}

#[test]
fn the_profile_shares_stand_beside_the_seeds() {
    let s = summary(&doc());
    assert!(
        s.contains("- **preopt** (point 22, 1000 ms of server CPU sampled): semaphore or futex wait/post 55.0 % (seed > 50 %)"),
        "{s}"
    );
    assert!(s.contains("hash table 1.0 % (seed ≈ 0.7 %)"), "{s}");
    let mut d = doc();
    d.study.as_mut().unwrap().extras.remove("profile_shares");
    assert!(summary(&d).contains("This run was not profiled"));
    assert!(profile::table(&d).is_none());
    d.study.as_mut().unwrap().extras.insert(
        "profile_shares".into(),
        serde_json::json!({"skipped": "this run profiled `main`"}),
    );
    assert!(summary(&d).contains("No shares: this run profiled `main`."));
}

#[test]
fn the_summary_says_the_seeds_sentences_and_each_target() {
    let s = summary(&doc());
    // S4 for preopt: T(+16, 1 worker) / T(alone, 1 worker) = 49 (the fixture's shape).
    assert!(
        s.contains("S4: alone at 1 thread is faster than 16 visitors at 1 thread: 49.00x   (seed 52.09x, main 9.71x)"),
        "{s}"
    );
    assert!(s.contains("16 visitors make the timed client 49.0× slower at 1 worker"));
    assert!(
        s.contains("the timed client is 8.0× faster (target ≥ 5×"),
        "{s}"
    );
    assert!(s.contains("**sharded keeps its throughput at 1 worker(s)**"));
    assert!(s.contains("vs Redis (Redis server v=7.0.15), 16 visitor(s)"));
    assert!(s.contains("0 mismatched replies"));
}

#[test]
fn without_redis_the_summary_gives_the_reason() {
    let mut d = doc();
    d.points.retain(|p| param(p, "group") != "redis");
    d.study.as_mut().unwrap().extras.insert(
        "redis".into(),
        serde_json::json!({"available": false, "reason": "redis-server is not installed"}),
    );
    let s = summary(&d);
    assert!(s.contains("**sharded vs Redis**: skipped: redis-server is not installed."));
}

#[test]
fn the_throughput_target_gives_its_visit_by_visit_ratios() {
    let mut d = doc();
    // One visit: no spread to give.
    assert!(!summary(&d).contains("visit by visit"));
    // Three interleaved visits of sharded's two 1-worker points: with 16 visitors
    // 0.8, 1.0 and 0.9 of the alone visit's steady rate.
    for (case, rates) in [
        ("AloneSingleThread", [1000.0, 1000.0, 1000.0]),
        ("ManyClientsST", [800.0, 1000.0, 900.0]),
    ] {
        let p = d
            .points
            .iter_mut()
            .find(|p| param(p, "case") == case && param(p, "arch") == "sharded")
            .unwrap();
        let first = p.runs[0].clone();
        p.runs = rates
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                let mut run = first.clone();
                run.run = i;
                run.figures.insert(f::REQUESTS_PER_S_STEADY.into(), r);
                run
            })
            .collect();
    }
    let s = summary(&d);
    assert!(
        s.contains("visit by visit 0.80× to 1.00× over 3 interleaved visits; target ≥ 0.90×"),
        "{s}"
    );
}

#[test]
fn a_collapsed_case_is_named_in_the_table_the_sentences_and_the_summary() {
    let mut d = doc();
    let p = d
        .points
        .iter_mut()
        .find(|p| param(p, "case") == "ManyClientsST" && param(p, "arch") == "ring")
        .unwrap();
    // Its only visit was cut short: no time per run, the work it did.
    let run = &mut p.runs[0];
    run.figures.retain(|k, _| !k.starts_with("time_"));
    run.figures.insert(f::TIMED_RUNS.into(), 0.0);
    run.collapsed = Some(Collapse {
        participant: "timed client".into(),
        unit: "requests".into(),
        completed: 120,
        planned: 3000,
        limit_s: 40.0,
        stuck: None,
    });
    p.summary.retain(|k, _| !k.starts_with("time_"));
    let cut = "1 of 1 visits: the timed client completed 120 of 3000 requests in its 40 s limit";
    let table = points_table("cases", &[&*p]).rows.remove(0);
    assert_eq!(table.last().unwrap(), cut);
    // Its time per run is at least the limit.
    assert_eq!(table[5], "collapsed: > 40 s", "{table:?}");
    assert_eq!(table[6], "-", "no spread: {table:?}");
    let seed = seed_table(&d);
    let row = seed
        .rows
        .iter()
        .find(|r| r[0].starts_with("ManyClientsST"))
        .unwrap();
    let ring = seed
        .headers
        .iter()
        .position(|h| h == "ring here (ms)")
        .unwrap();
    assert_eq!(row[ring], "collapsed: > 40 s");
    let s = summary(&d);
    assert!(
        s.contains(&format!(
            "S4: not measured: 16 visitors at 1 thread collapsed ({cut})"
        )),
        "{s}"
    );
    assert!(
        s.contains(&format!(
            "- **Collapsed**: a timed run, or a client's stop, could not finish in its limit; the point is recorded with the work it did: ManyClientsST (ring, 1 workers, 16 visitors): {cut}."
        )),
        "{s}"
    );
    // Uncollapsed documents say nothing of it.
    assert!(!summary(&doc()).contains("Collapsed"));
}

#[test]
fn a_stand_in_that_could_not_leave_is_a_collapse_beside_the_times_it_measured() {
    let mut d = doc();
    let p = d
        .points
        .iter_mut()
        .find(|p| param(p, "case") == "ManyClientsMT" && param(p, "arch") == "ring")
        .unwrap();
    p.runs[0].collapsed = Some(Collapse {
        participant: "timed client's stand-in".into(),
        unit: "requests".into(),
        completed: 0,
        planned: 0,
        limit_s: 20.0,
        stuck: Some("leave the server after its stop".into()),
    });
    let table = points_table("cases", &[&*p]).rows.remove(0);
    assert_eq!(
        table.last().unwrap(),
        &format!(
            "1 of {} visits: the timed client's stand-in could not leave the server after its stop in its 20 s limit",
            p.runs.len()
        )
    );
    // The timed runs finished: their time stands.
    assert!(!table[5].starts_with("collapsed"), "{table:?}");
    assert!(collapsed_time(p).is_none());
}

#[test]
fn a_collapsed_point_is_recorded_and_the_study_completes() {
    use std::sync::atomic::AtomicBool;
    // Two quick points, in this process: one alone, one whose timed client cannot
    // finish in its 20 ms run limit.
    let mut pts: Vec<_> = crate::hashtable::study_points(&crate::hashtable::Scale::QUICK, false)
        .into_iter()
        .filter(|(pp, _)| pp.params["arch"] == "sharded" && pp.params["visitors"] == "0")
        .take(2)
        .collect();
    pts[1].1.outer = 1_000_000;
    pts[1].1.run_limit_ms = 20;
    let mut bench = crate::hashtable::bench::KvBench::new(pts, None);
    let mut options = crate::hashtable::loop_options(&crate::hashtable::Scale::QUICK);
    options.runs = 1;
    let settings = crate::study::StudyEnv::default().settings("kv", &options, true);
    let doc = xferbench_lab::measure::run_plan(
        xferbench_lab::result::test_context(settings),
        &mut bench,
        &options,
        &AtomicBool::new(false),
        &mut [],
    );
    assert!(
        matches!(doc.outcome, xferbench_lab::result::Outcome::Complete),
        "{:?}",
        doc.outcome
    );
    let (fine, cut) = (&doc.points[0], &doc.points[1]);
    // The machine's own warnings (noise, contention) may come with any point; a
    // collapse may not come with the one that finished.
    assert!(
        fine.runs[0].collapsed.is_none()
            && !fine.warnings.iter().any(|w| w.starts_with("collapsed")),
        "{:?}",
        fine.warnings
    );
    assert!(
        fine.summary
            .contains_key(xferbench_lab::rig::kv::figures::TIME_MEAN_S)
    );
    let c = cut.runs[0].collapsed.as_ref().expect("collapsed");
    assert!(c.completed < c.planned);
    assert!(
        cut.warnings
            .iter()
            .any(|w| w.starts_with("collapsed in 1 of 1 runs: the timed client completed")),
        "{:?}",
        cut.warnings
    );
    assert!(collapse(cut).is_some());
    assert!(cut.integrity.unwrap().is_clean());
}
