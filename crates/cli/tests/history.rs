//! The results history through the command line: runs recorded, listed, shown and
//! followed (a study's record is checked beside the perf-stat study's own test, which
//! runs it once for both); baselines and `compare --baseline`; two writers at once, a
//! writer killed mid-append, a run stopped by Ctrl-C; and bad input.
//!
//! Every command here names its own history file (`XFERBENCH_HISTORY` in a temporary
//! folder), so nothing is written to the user's.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use rustix::process::{Pid, Signal, kill_process};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A quick run: one point, two runs, no limits.
const QUICK: &[&str] = &[
    "run",
    "stream",
    "-t",
    "pipe",
    "-s",
    "64",
    "-n",
    "2000",
    "-r",
    "2",
    "-w",
    "0",
    "--peer",
    "thread",
    "--no-limits",
    "-q",
];

fn xferbench(history: &Path) -> Command {
    let mut c = crate::common::xferbench();
    c.env("XFERBENCH_HISTORY", history);
    c
}

fn spawn(history: &Path, args: &[&str], hook: Option<String>) -> std::process::Child {
    let mut c = crate::common::std_xferbench();
    c.env("XFERBENCH_HISTORY", history)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(h) = hook {
        c.env("XFERBENCH_HISTORY_TEST_HOOK", h);
    }
    c.spawn().unwrap()
}

fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn json(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).expect("one JSON document on stdout")
}

fn runs(history: &Path) -> Vec<serde_json::Value> {
    json(xferbench(history).args(["history", "list", "--json"]))
        .as_array()
        .unwrap()
        .clone()
}

fn temp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("history.sqlite");
    (dir, h)
}

#[test]
fn every_test_runs_the_binary_through_the_helpers() {
    // The helpers (tests/common) keep every run out of the user's own history; a test
    // that ran the binary any other way could record into it.
    let forbidden = [
        concat!("cargo", "_bin"),
        concat!("CARGO_BIN", "_EXE"),
        concat!("Command::new(", "crate::common::BIN"),
        concat!("Command::new(", "common::BIN"),
    ];
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = vec![tests.clone()];
    let mut offending = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("common/mod.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if forbidden.iter().any(|f| line.contains(f)) {
                offending.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offending.is_empty(),
        "run the binary through common::xferbench() or common::std_xferbench():\n{}",
        offending.join("\n")
    );
}

#[test]
fn the_helpers_point_the_default_history_away_from_the_users() {
    // An XFERBENCH_HISTORY in the user's environment is dropped, and the default
    // location is in the test data folder under target/: a test's run never records
    // into the user's own history.
    let mut isolated = common::std_xferbench();
    assert!(
        isolated
            .get_envs()
            .any(|(k, v)| k == "XFERBENCH_HISTORY" && v.is_none()),
        "XFERBENCH_HISTORY is removed"
    );
    let data = common::test_data_home();
    assert!(data.starts_with(env!("CARGO_TARGET_TMPDIR")), "{data:?}");
    let out = isolated.args(&QUICK[..QUICK.len() - 1]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let expected = data.join("xferbench").join("history.sqlite");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&expected.display().to_string()),
        "{out:?}"
    );
}

#[test]
fn the_default_history_is_the_data_folders_for_every_build() {
    // No --history, no XFERBENCH_HISTORY: $XDG_DATA_HOME/xferbench/history.sqlite,
    // its folder created by the first run.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let expected = data.join("xferbench").join("history.sqlite");
    let mut run = common::xferbench();
    run.env("XDG_DATA_HOME", &data)
        .args(&QUICK[..QUICK.len() - 1])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "history: created {}",
            expected.display()
        )));
    assert!(expected.exists());
}

#[test]
fn the_readmes_trend_and_compare_work_on_a_history_of_both_workloads() {
    let (_dir, h) = temp();
    let quick = ["-n", "2000", "-r", "2", "-w", "0", "--no-limits", "-q"];
    let record = |args: &[&str]| {
        xferbench(&h).args(args).args(quick).assert().success();
    };
    let stream = ["run", "stream", "-t", "shm", "-s", "64"];
    record(&stream); // run 1
    xferbench(&h)
        .args(["history", "baseline", "set", "main"])
        .assert()
        .success();
    record(&["run", "pingpong", "-t", "shm,pipe", "-s", "64"]); // run 2
    xferbench(&h)
        .args(["run", "load", "-t", "shm", "-s", "64", "--rate", "10k,20k"])
        .args(["-d", "0.2", "-r", "2", "-w", "0", "--no-limits", "-q"])
        .assert()
        .success(); // run 3
    // Points of three workloads: --name is asked for by name, each workload named.
    xferbench(&h)
        .args(["history", "trend", "-p", "transport=shm", "-p", "size=64"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "add --name with one of load, pingpong, stream",
        ));
    // One workload's points that differ in their rate: -p rate is asked for.
    xferbench(&h)
        .args(["history", "trend", "--name", "load", "-p", "transport=shm"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("differ in rate (10000, 20000)"));
    // The README's command.
    xferbench(&h)
        .args(["history", "trend", "--name", "stream"])
        .args(["-p", "transport=shm", "-p", "size=64"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "stream channels=1 size=64 B transport=shm",
        ));
    // Only one workload has the point: it is followed, and stderr says so.
    xferbench(&h)
        .args(["history", "trend", "-p", "transport=pipe"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "following pingpong channels=1 size=64 transport=pipe, the only workload",
        ));
    // The newest run is of another workload and no stream run came after the
    // baseline: the error says so.
    xferbench(&h)
        .args(["compare", "--baseline", "main"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no stream run was recorded after baseline main (run 1); the newest run, 3, is a load run",
        ));
    record(&stream); // run 4
    record(&["run", "pingpong", "-t", "shm", "-s", "64"]); // run 5
    // The README's command: the newest stream run, named.
    xferbench(&h)
        .args(["compare", "--baseline", "main"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "comparing run 4 (the newest stream run; the newest run, 5, is a pingpong run) against baseline main (run 1)",
        ));
}

#[test]
fn every_id_history_list_prints_is_accepted_by_compare() {
    let (dir, h) = temp();
    xferbench(&h).args(QUICK).assert().success(); // run 1
    xferbench(&h)
        .args(["history", "baseline", "set", "main"])
        .assert()
        .success();
    xferbench(&h).args(QUICK).assert().success(); // run 2
    let ids: Vec<String> = runs(&h).iter().map(|r| r["id"].to_string()).collect();
    assert_eq!(ids, ["2", "1"]);
    for id in &ids {
        xferbench(&h)
            .args(["compare", "--baseline", "main", id])
            .assert()
            .success()
            .stdout(predicate::str::contains(
                "channels=1 size=64 B transport=pipe",
            ));
    }
    xferbench(&h)
        .args(["compare", &ids[1], &ids[0]])
        .assert()
        .success();
    // An ID no run has, named as such.
    xferbench(&h)
        .args(["compare", "--baseline", "main", "9"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "NEW 9 (a run ID of the history): no run 9 in the history",
        ));
    // A file named like an ID is a file.
    let file = dir.path().join("2");
    std::fs::write(&file, "not a result").unwrap();
    xferbench(&h)
        .current_dir(dir.path())
        .args(["compare", "--baseline", "main", "2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "NEW 2 is not an xferbench result document",
        ));
}

#[test]
fn a_history_in_a_missing_folder_is_refused_as_an_export_is() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let file = missing.join("h.sqlite");
    let unused = dir.path().join("unused.sqlite");
    // The export's rule and words, before anything is measured.
    xferbench(&unused)
        .args(QUICK)
        .arg("--export-json")
        .arg(missing.join("r.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "the folder {} does not exist",
            missing.display()
        )));
    xferbench(&unused)
        .args(QUICK)
        .arg("--history")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "--history {}: the folder {} does not exist",
            file.display(),
            missing.display()
        )));
    // The same for the environment's file, named as such.
    xferbench(&file)
        .args(QUICK)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "XFERBENCH_HISTORY {}: the folder",
            file.display()
        )));
    // A study is refused the same way, before it measures anything.
    xferbench(&unused)
        .args([
            "study",
            "perf-stat",
            "--quick",
            "--allow-debug",
            "--history",
        ])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "--history {}: the folder",
            file.display()
        )));
    assert!(!missing.exists(), "no folder is created");
    assert!(!unused.exists());
}

#[test]
fn two_runs_of_the_same_command_show_in_list_show_and_trend() {
    let (_dir, h) = temp();
    xferbench(&h)
        .args(QUICK)
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
    xferbench(&h)
        .args(&QUICK[..QUICK.len() - 1])
        .assert()
        .success()
        .stderr(predicate::str::contains("history: recorded as run 2 in"));
    let list = runs(&h);
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["id"], 2);
    assert_eq!(list[1]["kind"], "run");
    assert_eq!(list[1]["name"], "stream");
    assert_eq!(list[1]["point_count"], 1);
    assert_eq!(list[1]["outcome"], "complete");
    xferbench(&h)
        .args(["history", "list", "--limit", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("│  2 ┆").and(predicate::str::contains("│  1 ┆").not()));
    let shown = json(xferbench(&h).args(["history", "show", "1", "--json"]));
    assert_eq!(
        shown["points"][0]["label"],
        "channels=1 size=64 transport=pipe"
    );
    assert_eq!(shown["points"][0]["figure"], "throughput_bytes_per_s");
    assert!(shown["points"][0]["value"].as_f64().unwrap() > 0.0);
    xferbench(&h)
        .args(["history", "show", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "channels=1 size=64 B transport=pipe",
        ));

    let dir = h.parent().unwrap();
    let page = dir.join("trend.html");
    let out = xferbench(&h)
        .args([
            "history",
            "trend",
            "--name",
            "stream",
            "-p",
            "transport=pipe",
            "--html",
        ])
        .arg(&page)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("stream channels=1 size=64 B transport=pipe"),
        "{out}"
    );
    // One row per run: run IDs 1 and 2 in the first column.
    assert!(out.contains("│   1 ┆") && out.contains("│   2 ┆"), "{out}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg") && html.contains("run (history ID)"));
    assert_eq!(
        html.matches("<circle class=\"dot\"").count(),
        2,
        "one marker per run"
    );
    // The title in words, once on the page (the chart has no caption repeating it);
    // whole run numbers on the axis.
    assert!(html.contains(
        "<h1>xferbench history: stream pipe, 64 B, 1 channel: throughput (higher is better)</h1>"
    ));
    assert_eq!(html.matches("<h1>").count(), 1);
    assert!(!html.contains("<figcaption>"));
    assert!(html.contains(">1</text>") && html.contains(">2</text>"));
    assert!(!html.contains(">1.5</text>"));
    let trend = json(xferbench(&h).args(["history", "trend", "-p", "size=64", "--json"]));
    assert_eq!(trend["entries"].as_array().unwrap().len(), 2);
    // A size is matched as written, in any unit its definition reads.
    let trend = json(xferbench(&h).args(["history", "trend", "-p", "size=64B", "--json"]));
    assert_eq!(trend["entries"].as_array().unwrap().len(), 2);
    assert_eq!(trend["entries"][0]["other_machine"], false);
}

#[test]
fn no_history_records_nothing_and_a_broken_file_only_warns() {
    let (dir, h) = temp();
    xferbench(&h)
        .args(QUICK)
        .arg("--no-history")
        .assert()
        .success();
    assert!(!h.exists());
    // --history wins over the environment.
    let other = dir.path().join("other.sqlite");
    xferbench(&h)
        .args(QUICK)
        .arg("--history")
        .arg(&other)
        .assert()
        .success();
    assert!(other.exists() && !h.exists());
    // A file that is not a history: the run succeeds and says it was not recorded.
    std::fs::write(
        &h,
        b"not a database, just some text that is long enough".repeat(100),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    xferbench(&h)
        .args(QUICK)
        .arg("--export-json")
        .arg(&json)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "warning: the result was not recorded",
        ))
        .stderr(predicate::str::contains("is not an xferbench history"));
    assert!(json.exists());
}

#[test]
fn bad_ids_baselines_and_files_are_clear_errors() {
    let (dir, h) = temp();
    let no_panic = || predicate::str::contains("panicked").not();
    // No history yet: nothing to list is not an error; a run named by ID is.
    xferbench(&h)
        .args(["history", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no runs recorded yet"));
    for args in [
        &["history", "list", "--json"][..],
        &["history", "baseline", "list", "--json"],
    ] {
        let out = xferbench(&h).args(args).assert().success();
        let list: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert_eq!(list, serde_json::json!([]), "{args:?}");
    }
    xferbench(&h)
        .args(["history", "show", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no history at").and(no_panic()));
    assert!(!h.exists(), "reading must not create the file");
    // The run that creates it says where, once.
    let loud = &QUICK[..QUICK.len() - 1];
    xferbench(&h)
        .args(loud)
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "history: created {}",
            h.display()
        )));
    xferbench(&h)
        .args(loud)
        .assert()
        .success()
        .stderr(predicate::str::contains("created").not());
    for (args, needle) in [
        (&["history", "show", "99"][..], "no run 99 in the history"),
        (&["history", "baseline", "set", "main", "42"], "no run 42"),
        (&["history", "baseline", "set", "a b"], "baseline name"),
        (
            &["compare", "--baseline", "nope"],
            "no baseline named \"nope\"",
        ),
        (
            &["history", "trend", "--name", "pingpong"],
            "no recorded point matches",
        ),
        (
            &["history", "trend", "-p", "transport"],
            "expected NAME=VALUE",
        ),
        (
            &["history", "trend", "--figure", "speed"],
            "throughput_bytes_per_s",
        ),
        (&["history", "show", "x"], "invalid value"),
        (&["compare", "only-one.json"], "NEW"),
    ] {
        xferbench(&h)
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle).and(no_panic()));
    }
    // The baseline itself as the newest run, and too many files.
    xferbench(&h)
        .args(["history", "baseline", "set", "main"])
        .assert()
        .success()
        .stdout(predicate::str::contains("baseline main is run 2"));
    xferbench(&h)
        .args(["compare", "--baseline", "main"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is baseline main itself"));
    xferbench(&h)
        .args(["compare", "--baseline", "main", "a.json", "b.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("give only NEW"));
    // A damaged file.
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, vec![0x42_u8; 4096]).unwrap();
    for args in [&["history", "list"][..], &["history", "baseline", "list"]] {
        xferbench(&h)
            .args(args)
            .arg("--history")
            .arg(&junk)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is not an xferbench history").and(no_panic()));
    }
}

#[test]
fn a_baseline_then_a_slower_run_makes_compare_exit_4_naming_the_point() {
    // The slower run is the same point with its peer under callgrind: tens of times
    // slower, every time.
    if common::skip_without_valgrind() {
        return;
    }
    // The same point (the message count is a setting, not a parameter): the baseline
    // long enough to be steady on a busy machine, the slow run short, and enough runs
    // of each for Welch's test to be significant even when the baseline's runs
    // spread widely.
    let (dir, h) = temp();
    let run = |count: &'static str| {
        [
            "run",
            "stream",
            "-t",
            "shm",
            "-s",
            "64KiB",
            "-n",
            count,
            "-r",
            "15",
            "-w",
            "1",
            "--peer",
            "process",
            "--no-limits",
            "-q",
        ]
    };
    xferbench(&h).args(run("2000")).assert().success();
    xferbench(&h)
        .args(["history", "baseline", "set", "main"])
        .assert()
        .success();
    let new = dir.path().join("new.json");
    xferbench(&h)
        .args(run("30"))
        .arg("--counters=callgrind")
        .arg("--export-json")
        .arg(&new)
        .assert()
        .success();
    // Against the newest recorded run, and against a file.
    xferbench(&h)
        .args(["compare", "--baseline", "main"])
        .assert()
        .code(4)
        .stdout(predicate::str::contains(
            "channels=1 size=64 KiB transport=shm",
        ))
        .stdout(predicate::str::contains("regression"));
    let c = xferbench(&h)
        .args(["compare", "--baseline", "main", "--json"])
        .arg(&new)
        .assert()
        .code(4)
        .get_output()
        .stdout
        .clone();
    let c: serde_json::Value = serde_json::from_slice(&c).unwrap();
    assert_eq!(c["regressions"], 1);
    assert_eq!(c["points"][0]["verdict"], "regression");
    assert_eq!(c["points"][0]["params"]["transport"], "shm");
    // The baseline list names it.
    let b = json(xferbench(&h).args(["history", "baseline", "list", "--json"]));
    assert_eq!(b[0]["name"], "main");
    assert_eq!(b[0]["run"]["id"], 1);
}

#[test]
fn a_writer_killed_inside_its_transaction_leaves_the_earlier_runs_readable() {
    let (dir, h) = temp();
    xferbench(&h).args(QUICK).assert().success();
    let marker = dir.path().join("in-transaction");
    let mut child = spawn(&h, QUICK, Some(format!("{}:60000", marker.display())));
    wait_for(&marker);
    kill_process(Pid::from_raw(child.id() as i32).unwrap(), Signal::KILL).unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    let list = runs(&h);
    assert_eq!(
        list.len(),
        1,
        "the killed run is not half-recorded: {list:?}"
    );
    assert_eq!(list[0]["id"], 1);
    xferbench(&h)
        .args(["history", "show", "1"])
        .assert()
        .success();
    // And the next writer carries on.
    xferbench(&h).args(QUICK).assert().success();
    assert_eq!(runs(&h).len(), 2);
    let check = read_back_every_run(&h);
    assert_eq!(check, 2);
}

/// Reads every run back in full: a damaged file fails here.
fn read_back_every_run(h: &Path) -> usize {
    let list = runs(h);
    for r in &list {
        let id = r["id"].to_string();
        xferbench(h)
            .args(["history", "show", &id, "--json"])
            .assert()
            .success();
    }
    list.len()
}

#[test]
fn two_processes_appending_at_once_both_land() {
    let (dir, h) = temp();
    xferbench(&h).args(QUICK).assert().success();
    // A holds the write lock for a second; B finishes its run meanwhile and waits.
    let marker = dir.path().join("a-in-transaction");
    let a = spawn(&h, QUICK, Some(format!("{}:1000", marker.display())));
    wait_for(&marker);
    let b = spawn(&h, QUICK, None);
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    for o in [&a, &b] {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            !String::from_utf8_lossy(&o.stderr).contains("not recorded"),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_eq!(read_back_every_run(&h), 3);
}

#[test]
fn a_run_stopped_by_ctrl_c_records_its_finished_points() {
    let (dir, h) = temp();
    let journal = dir.path().join("r.jsonl");
    let mut child = spawn(
        &h,
        &[
            "run",
            "stream",
            "-t",
            "pipe",
            "-s",
            "64,128,256,512,1KiB,2KiB",
            "-d",
            "0.3",
            "-r",
            "2",
            "-w",
            "0",
            "--peer",
            "thread",
            "--no-limits",
            "-q",
            "--jsonl",
            journal.to_str().unwrap(),
        ],
        None,
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&journal)
        .unwrap_or_default()
        .contains("{\"type\":\"point\"")
    {
        assert!(Instant::now() < deadline, "no point finished within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    kill_process(Pid::from_raw(child.id() as i32).unwrap(), Signal::INT).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let list = runs(&h);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["outcome"], "interrupted");
    let n = list[0]["point_count"].as_u64().unwrap();
    assert!((1..6).contains(&n), "{n} points");
}
