//! Round trips through the history file: append, list, show, trend, baselines,
//! concurrent writers, an older layout, and files that are not histories.

use std::collections::BTreeMap;
use std::path::Path;
use xferbench_history::{History, HistoryError, TrendFilter, schema};
use xferbench_lab::result::*;
use xferbench_probes::stats::Estimate;

/// A stream result with one point per `(transport, throughputs of its runs)`.
fn doc(host: &str, points: &[(&str, &[f64])]) -> ResultDoc {
    let points = points
        .iter()
        .enumerate()
        .map(|(index, (transport, values))| {
            let runs: Vec<RunRecord> = values
                .iter()
                .enumerate()
                .map(|(run, v)| RunRecord {
                    run,
                    sequence: None,
                    window_ns: 1_000_000,
                    messages: 1000,
                    bytes: 64_000,
                    figures: BTreeMap::from([
                        (figure::THROUGHPUT.to_string(), *v),
                        (figure::MESSAGE_RATE.to_string(), v / 64.0),
                    ]),
                    latency: None,
                    channels: vec![],
                    cpu: vec![],
                    integrity: None,
                    counters: None,
                    contention: None,
                    collapsed: None,
                })
                .collect();
            let summary = [figure::THROUGHPUT, figure::MESSAGE_RATE]
                .iter()
                .map(|f| {
                    (
                        f.to_string(),
                        Estimate::from_values(runs.iter().map(|r| r.figures[*f])).unwrap(),
                    )
                })
                .collect();
            PointResult {
                index,
                params: BTreeMap::from([
                    ("workload".to_string(), "stream".to_string()),
                    ("transport".to_string(), transport.to_string()),
                    ("size".to_string(), "64".to_string()),
                    ("channels".to_string(), "1".to_string()),
                ]),
                chosen: Default::default(),
                defaults: Default::default(),
                size_bytes: 64,
                channels: 1,
                primary: Some(Primary {
                    figure: figure::THROUGHPUT.into(),
                    higher_is_better: true,
                }),
                runs,
                summary,
                per_channel: vec![],
                integrity: None,
                warnings: vec![],
                counters: None,
                limit: None,
                drift: None,
                contention: None,
            }
        })
        .collect();
    ResultDoc {
        schema_version: SCHEMA_VERSION,
        study: None,
        context: Context {
            tool: "xferbench".into(),
            version: "0.1.0".into(),
            command_line: vec!["xferbench".into(), "run".into(), "stream".into()],
            hostname: host.into(),
            cpu_model: format!("cpu of {host}"),
            cores: 2,
            kernel: "6.1".into(),
            os: "Debian".into(),
            start_time: "2026-11-23T10:00:00Z".into(),
            capabilities: Capabilities {
                pmu: false,
                pmu_note: None,
                perf: None,
                valgrind: None,
                perf_event_paranoid: None,
                trip_clock: None,
                trip_clock_step_ns: None,
            },
            settings: Settings {
                workload: "stream".into(),
                runs: 3,
                warmup: 0,
                count: Some(1000),
                duration_s: None,
                peer: "thread".into(),
                pin: false,
                verify: false,
                interleave: false,
            },
            limits: None,
            remote: None,
            plugins: Vec::new(),
            build: None,
            load: None,
        },
        points,
        warnings: vec![],
        outcome: Outcome::Complete,
        knees: Vec::new(),
        failed: Vec::new(),
        ab: None,
    }
}

/// [`doc`] of another workload, each point's extra parameters given.
fn doc_of(workload: &str, points: &[(&str, &[f64])], extra: &[(&str, &str)]) -> ResultDoc {
    let mut d = doc("here", points);
    d.context.settings.workload = workload.into();
    for p in &mut d.points {
        p.params.insert("workload".into(), workload.into());
        for (k, v) in extra {
            p.params.insert(k.to_string(), v.to_string());
        }
    }
    d
}

fn temp() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("history.sqlite");
    (dir, path)
}

#[test]
fn appended_runs_come_back_in_list_show_and_the_stored_document() {
    let (_dir, path) = temp();
    let mut h = History::open(&path).unwrap();
    assert_eq!(h.schema_version().unwrap(), schema::LATEST);
    let first = doc(
        "a",
        &[
            ("pipe", &[100.0, 110.0, 90.0]),
            ("tcp", &[50.0, 50.0, 50.0]),
        ],
    );
    let git = xferbench_history::GitState {
        commit: "0123abcd".into(),
        dirty: true,
    };
    let id1 = h.append(&first, Some(&git)).unwrap();
    let id2 = h.append(&doc("a", &[("pipe", &[200.0])]), None).unwrap();
    assert!(id2 > id1);
    let list = h.list(10).unwrap();
    assert_eq!(list.iter().map(|r| r.id).collect::<Vec<_>>(), [id2, id1]);
    assert_eq!(list[1].point_count, 2);
    assert_eq!(list[1].git_commit.as_deref(), Some("0123abcd"));
    assert_eq!(list[1].git_dirty, Some(true));
    assert_eq!(list[0].git_commit, None);
    assert_eq!(
        (list[0].kind.as_str(), list[0].name.as_str()),
        ("run", "stream")
    );
    assert_eq!(h.list(1).unwrap().len(), 1);
    let shown = h.show(id1).unwrap();
    assert_eq!(shown.points.len(), 2);
    let p = &shown.points[0];
    assert_eq!(p.label, "channels=1 size=64 transport=pipe");
    assert_eq!(
        (p.figure.as_str(), p.unit.as_str()),
        (figure::THROUGHPUT, "bytes/s")
    );
    assert_eq!(p.value, Some(100.0));
    assert_eq!(p.runs, 3);
    assert!(p.higher_is_better);
    assert_eq!(shown.context["hostname"], "a");
    assert_eq!(h.doc(id1).unwrap(), first);
    assert_eq!(h.newest().unwrap(), id2);
    // Reopening sees the same.
    drop(h);
    let h = History::open_existing(&path).unwrap();
    assert_eq!(h.list(10).unwrap().len(), 2);
    assert_eq!(h.integrity_check().unwrap(), "ok");
}

#[test]
fn a_trend_follows_one_point_and_marks_other_machines() {
    let (_dir, path) = temp();
    let mut h = History::open(&path).unwrap();
    h.append(&doc("other", &[("pipe", &[80.0]), ("tcp", &[1.0])]), None)
        .unwrap();
    let a = h
        .append(&doc("here", &[("pipe", &[100.0]), ("tcp", &[2.0])]), None)
        .unwrap();
    let b = h
        .append(&doc("here", &[("pipe", &[120.0]), ("tcp", &[3.0])]), None)
        .unwrap();
    // Two points match no filter at all: the error names the parameter they differ
    // in and lists them.
    let e = h.trend(&TrendFilter::default()).unwrap_err();
    assert!(
        matches!(e, HistoryError::AmbiguousParams { count: 2, .. }),
        "{e}"
    );
    assert!(
        e.to_string().contains("differ in transport (pipe, tcp)"),
        "{e}"
    );
    assert!(e.to_string().contains("transport=tcp"), "{e}");
    let f = TrendFilter {
        params: vec![("transport".into(), "pipe".into())],
        ..TrendFilter::default()
    };
    let t = h.trend(&f).unwrap();
    assert_eq!(t.figure, figure::THROUGHPUT);
    assert_eq!(
        t.entries.iter().map(|e| e.value).collect::<Vec<_>>(),
        [80.0, 100.0, 120.0]
    );
    assert_eq!(
        t.entries
            .iter()
            .map(|e| e.other_machine)
            .collect::<Vec<_>>(),
        [true, false, false]
    );
    assert_eq!(t.entries[2].run_id, b);
    // The same by label, limited to the newest two, with another figure.
    let t = h
        .trend(&TrendFilter {
            point: Some("channels=1 size=64 transport=pipe".into()),
            figure: Some(figure::MESSAGE_RATE.into()),
            limit: Some(2),
            ..TrendFilter::default()
        })
        .unwrap();
    assert_eq!(t.entries[0].run_id, a);
    assert_eq!(t.entries[0].value, 100.0 / 64.0);
    assert_eq!(t.unit, "1/s");
    // Filters that match nothing, and a figure no run has.
    let none = TrendFilter {
        name: Some("pingpong".into()),
        ..TrendFilter::default()
    };
    assert!(matches!(h.trend(&none), Err(HistoryError::NoMatch(_))));
    let e = h
        .trend(&TrendFilter {
            figure: Some("nonsense".into()),
            ..f
        })
        .unwrap_err();
    assert!(e.to_string().contains(figure::THROUGHPUT), "{e}");
}

#[test]
fn a_trend_on_a_history_of_several_workloads_asks_for_the_missing_key_by_name() {
    let (_dir, path) = temp();
    let mut h = History::open(&path).unwrap();
    h.append(&doc_of("stream", &[("shm", &[100.0])], &[]), None)
        .unwrap();
    h.append(&doc_of("pingpong", &[("shm", &[2.0])], &[]), None)
        .unwrap();
    for rate in ["10000", "20000"] {
        h.append(&doc_of("load", &[("shm", &[3.0])], &[("rate", rate)]), None)
            .unwrap();
    }
    let shm_64 = TrendFilter {
        params: vec![
            ("transport".into(), "shm".into()),
            ("size".into(), "64".into()),
        ],
        ..TrendFilter::default()
    };
    // Points of three workloads: --name is asked for, with each workload named.
    let e = h.trend(&shm_64).unwrap_err();
    assert!(e.is_usage());
    assert!(matches!(e, HistoryError::AmbiguousName { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("add --name with one of load, pingpong, stream"),
        "{msg}"
    );
    // One workload: the trend of its point.
    let stream = TrendFilter {
        name: Some("stream".into()),
        ..shm_64.clone()
    };
    assert_eq!(h.trend(&stream).unwrap().entries[0].value, 100.0);
    // Two points of one workload that differ in their rate: -p rate is asked for.
    let load = TrendFilter {
        name: Some("load".into()),
        ..shm_64.clone()
    };
    let e = h.trend(&load).unwrap_err();
    assert!(matches!(e, HistoryError::AmbiguousParams { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("differ in rate (10000, 20000)"), "{msg}");
    assert!(msg.contains("add -p NAME=VALUE"), "{msg}");
    assert!(!msg.contains("transport ("), "only what differs: {msg}");
}

#[test]
fn the_newest_comparable_run_is_of_the_same_workload_and_after_it() {
    let (_dir, path) = temp();
    let mut h = History::open(&path).unwrap();
    let old = h
        .append(&doc_of("stream", &[("shm", &[1.0])], &[]), None)
        .unwrap();
    let base = h
        .append(&doc_of("stream", &[("shm", &[1.0])], &[]), None)
        .unwrap();
    let base = h.run(base).unwrap();
    // Nothing of its workload after it: an older run does not count.
    assert!(old < base.id);
    assert_eq!(h.newest_comparable(&base).unwrap(), None);
    h.append(&doc_of("pingpong", &[("shm", &[1.0])], &[]), None)
        .unwrap();
    assert_eq!(h.newest_comparable(&base).unwrap(), None);
    let new = h
        .append(&doc_of("stream", &[("shm", &[1.0])], &[]), None)
        .unwrap();
    let newest = h
        .append(&doc_of("load", &[("shm", &[1.0])], &[]), None)
        .unwrap();
    assert_eq!(h.newest().unwrap(), newest);
    assert_eq!(h.newest_comparable(&base).unwrap(), Some(new));
}

#[test]
fn baselines_name_runs_and_unknown_names_and_ids_are_clear_errors() {
    let (_dir, path) = temp();
    let mut h = History::open(&path).unwrap();
    assert!(matches!(
        h.set_baseline("main", None),
        Err(HistoryError::Empty)
    ));
    let a = h.append(&doc("a", &[("pipe", &[1.0])]), None).unwrap();
    let b = h.append(&doc("a", &[("pipe", &[2.0])]), None).unwrap();
    assert_eq!(h.set_baseline("main", None).unwrap().run.id, b);
    assert_eq!(h.set_baseline("old", Some(a)).unwrap().run.id, a);
    // Setting again moves the name.
    assert_eq!(h.set_baseline("main", Some(a)).unwrap().run.id, a);
    let names: Vec<_> = h.baselines().unwrap().into_iter().map(|b| b.name).collect();
    assert_eq!(names, ["main", "old"]);
    assert_eq!(h.run(a).unwrap().baselines, ["main", "old"]);
    let e = h.baseline("nope").unwrap_err();
    assert!(e.is_usage());
    assert!(e.to_string().contains("known: main, old"), "{e}");
    let e = h.set_baseline("x", Some(99)).unwrap_err();
    assert!(matches!(e, HistoryError::UnknownRun(99)), "{e}");
    assert!(e.is_usage());
    assert!(matches!(h.show(99), Err(HistoryError::UnknownRun(99))));
    assert!(matches!(h.doc(99), Err(HistoryError::UnknownRun(99))));
    assert!(matches!(
        h.set_baseline("has space", None),
        Err(HistoryError::BadBaselineName(_))
    ));
}

#[test]
fn an_older_layout_is_migrated_and_keeps_its_runs() {
    let (_dir, path) = temp();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    {
        // A file of layout 1: runs and points, no baselines.
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        schema::migrate(&mut conn, 1).unwrap();
        assert_eq!(schema::version(&conn).unwrap(), 1);
        let has_baselines: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'baselines'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(has_baselines, 0);
    }
    {
        // Written by layout 1's code: the same rows, without the later tables.
        let mut h = History::open(&path).unwrap();
        let id = h.append(&doc("a", &[("pipe", &[5.0])]), None).unwrap();
        assert_eq!(id, 1);
    }
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
    conn.execute_batch("DROP INDEX points_by_key; DROP TABLE baselines;")
        .unwrap();
    drop(conn);
    let mut h = History::open(&path).unwrap();
    assert_eq!(h.schema_version().unwrap(), schema::LATEST);
    assert_eq!(h.list(10).unwrap().len(), 1);
    assert_eq!(h.set_baseline("main", Some(1)).unwrap().run.id, 1);
}

#[test]
fn a_newer_layout_and_files_that_are_not_histories_are_refused() {
    let (_dir, path) = temp();
    drop(History::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", schema::LATEST + 1)
        .unwrap();
    drop(conn);
    let e = History::open(&path).unwrap_err();
    assert!(matches!(e, HistoryError::Newer { .. }), "{e}");
    assert!(e.to_string().contains(&path.display().to_string()), "{e}");

    let junk = path.with_file_name("junk.sqlite");
    std::fs::write(&junk, vec![0x5a_u8; 8192]).unwrap();
    let e = History::open(&junk).unwrap_err();
    assert!(matches!(e, HistoryError::NotAHistory { .. }), "{e}");
    assert!(e.is_usage());
    // Nothing was written over it.
    assert_eq!(std::fs::read(&junk).unwrap(), vec![0x5a_u8; 8192]);

    let folder = path.with_file_name("a-folder");
    std::fs::create_dir(&folder).unwrap();
    let e = History::open_existing(&folder).unwrap_err();
    assert!(matches!(e, HistoryError::CannotOpen { .. }), "{e}");
    assert!(e.is_usage());

    let missing = path.with_file_name("missing.sqlite");
    let e = History::open_existing(&missing).unwrap_err();
    assert!(matches!(e, HistoryError::Missing { .. }), "{e}");
    assert!(!missing.exists());
}

#[test]
fn writers_on_separate_connections_at_once_lose_nothing() {
    let (_dir, path) = temp();
    drop(History::open(&path).unwrap());
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut h = History::open(&path).unwrap();
                for i in 0..15 {
                    h.append(&doc(&format!("w{w}"), &[("pipe", &[i as f64 + 1.0])]), None)
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let h = History::open_existing(&path).unwrap();
    assert_eq!(h.list(1000).unwrap().len(), 60);
    assert_eq!(h.integrity_check().unwrap(), "ok");
    let ids: std::collections::BTreeSet<i64> = h.list(1000).unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids.len(), 60);
}

#[test]
fn the_default_path_is_in_the_data_folder_and_the_environment_overrides_it() {
    if let Some(p) = xferbench_history::default_path() {
        assert!(p.ends_with(Path::new("xferbench/history.sqlite")), "{p:?}");
    }
    let flag = Path::new("/x/h.sqlite");
    assert_eq!(xferbench_history::resolve_path(Some(flag)).unwrap(), flag);
    // A file named by the flag is the user's choice, held to the rules of other
    // output files; only the default location is the tool's own.
    let (p, chosen) = xferbench_history::resolve(Some(flag)).unwrap();
    assert_eq!((p.as_path(), chosen.by_user()), (flag, Some("--history")));
    assert_eq!(
        xferbench_history::Chosen::Env.by_user(),
        Some("XFERBENCH_HISTORY")
    );
    assert_eq!(xferbench_history::Chosen::Default.by_user(), None);
}
