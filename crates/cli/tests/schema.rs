//! Every JSON document a measuring subcommand prints or writes validates against its
//! documented schema (`docs/schema/*.json`, generated from the types by the lab's
//! `schema` test).

mod common;

use assert_cmd::Command;
use common::{check, schema};
use std::path::Path;

fn xferbench() -> Command {
    crate::common::xferbench()
}

/// The one JSON document a command printed. A result document whose run did not
/// complete fails here, with the run's error and the command's stderr, rather than
/// later on a missing point.
fn stdout_json(cmd: &mut Command) -> serde_json::Value {
    let assert = cmd.assert();
    let out = assert.get_output();
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("one JSON document on stdout");
    if let Some(status) = doc["outcome"]["status"].as_str() {
        assert_eq!(
            status,
            "complete",
            "the run did not complete: {}\nstderr:\n{}",
            doc["outcome"],
            String::from_utf8_lossy(&out.stderr)
        );
    }
    doc
}

fn file_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("written")).expect("JSON")
}

#[test]
fn limits_json_matches_its_schema_and_runs_carry_limits_and_fractions() {
    let limits = stdout_json(xferbench().args(["limits", "--quick", "--json"]));
    check("limits.schema.json", "limits", &limits);
    assert_eq!(limits["memcpy"].as_array().unwrap().len(), 4);
    // The quick set measures 64 KiB at three more placements, each against aligned.
    let placements = limits["placements"].as_array().unwrap();
    assert_eq!(placements.len(), 3, "{placements:?}");
    for p in placements {
        assert_eq!(p["size_bytes"], 65536);
        let slow = p["vs_aligned"].as_f64().unwrap() < 0.5;
        assert_eq!(p["slow"], slow, "{p}");
    }
    assert_eq!(limits["build"]["optimised"], !cfg!(debug_assertions));
    assert!(limits["syscall_ns"]["median"].as_f64().unwrap() > 0.0);
    let mut broken = limits.clone();
    broken["syscall_ns"] = "fast".into();
    assert!(!schema("limits.schema.json").is_valid(&broken));
    // A run records the limits at its start and end and a fraction for every point.
    let doc = stdout_json(xferbench().args([
        "run", "stream", "-t", "shm,pipe", "-s", "64,64KiB", "-n", "2000", "-r", "1", "-w", "0",
        "--peer", "thread", "--json",
    ]));
    check("result.schema.json", "run with limits", &doc);
    // The build and the machine's load are recorded, and an unoptimised build says so.
    assert_eq!(
        doc["context"]["build"]["optimised"],
        !cfg!(debug_assertions)
    );
    let unoptimised = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().starts_with("unoptimised build"));
    assert_eq!(unoptimised, cfg!(debug_assertions), "{}", doc["warnings"]);
    assert_eq!(doc["context"]["load"]["points"], 4);
    for p in doc["points"].as_array().unwrap() {
        assert!(
            p["contention"]["others_cpus"].as_f64().unwrap() >= 0.0,
            "{p}"
        );
        assert!(
            p["runs"][0]["contention"]["window_s"].as_f64().unwrap() > 0.0,
            "{p}"
        );
    }
    assert!(doc["context"]["limits"]["start"]["memcpy"].is_array());
    assert!(doc["context"]["limits"]["end"]["memcpy"].is_array());
    assert!(doc["context"]["limits"]["start"]["stream_floor"].is_array());
    for p in doc["points"].as_array().unwrap() {
        let l = &p["limit"];
        let name = l["limit"].as_str().unwrap();
        assert!(l["fraction"].as_f64().unwrap() > 0.0, "{p}");
        // A 64 KiB stream is held against the streaming floor of its size, memcpy
        // beside it as a reference; 64 B is too far from a probed size, and a
        // machine of one CPU has no floor: memcpy.
        let floors = doc["context"]["limits"]["start"]["stream_floor"].as_array();
        if p["size_bytes"] == 65536 && floors.is_some_and(|f| !f.is_empty()) {
            assert_eq!(name, "stream floor 64 KiB", "{p}");
            let reference = l["reference"]["name"].as_str().unwrap();
            assert!(reference.starts_with("memcpy"), "{p}");
        } else {
            assert!(name.starts_with("memcpy"), "{p}");
        }
    }
    // --no-limits measures none.
    let doc = stdout_json(xferbench().args([
        "run",
        "stream",
        "-t",
        "pipe",
        "-s",
        "64",
        "-n",
        "1000",
        "-r",
        "1",
        "-w",
        "0",
        "--peer",
        "thread",
        "--no-limits",
        "--json",
    ]));
    assert!(doc["context"].get("limits").is_none());
    assert!(doc["points"][0].get("limit").is_none());
}

#[test]
fn run_json_matches_the_result_schema() {
    for workload in ["stream", "pingpong", "load"] {
        let doc = stdout_json(xferbench().args([
            "run", workload, "-t", "pipe,shm", "-s", "64", "-c", "1,2", "-n", "2000", "-r", "2",
            "-w", "0", "--peer", "thread", "--verify", "--json",
        ]));
        check("result.schema.json", workload, &doc);
        assert_eq!(doc["points"].as_array().unwrap().len(), 4);
        // The schema has teeth: a document without its context, or with a figure
        // that is not a number, is refused.
        let mut broken = doc.clone();
        broken.as_object_mut().unwrap().remove("context");
        assert!(!schema("result.schema.json").is_valid(&broken));
        let mut broken = doc.clone();
        broken["points"][0]["runs"][0]["figures"]["window_s"] = "fast".into();
        assert!(!schema("result.schema.json").is_valid(&broken));
    }
}

#[test]
fn ab_json_matches_the_result_schema() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ab.json");
    let printed = stdout_json(
        xferbench()
            .args([
                "ab",
                "--runs",
                "3",
                "--no-callgrind",
                "--json",
                "--export-json",
            ])
            .arg(&json)
            .args(["true", "true"]),
    );
    check("result.schema.json", "ab --json", &printed);
    check("result.schema.json", "ab --export-json", &file_json(&json));
    assert!(printed["ab"]["diagnosis"].is_string(), "{printed}");
}

#[test]
fn rpmsg_json_matches_the_result_schema() {
    let doc = stdout_json(xferbench().args([
        "rpmsg",
        "-c",
        "2",
        "-s",
        "64",
        "--transfer",
        "6400",
        "-r",
        "2",
        "--json",
    ]));
    check("result.schema.json", "rpmsg --json", &doc);
    assert_eq!(doc["points"].as_array().unwrap().len(), 1);
}

#[test]
fn kv_client_json_is_the_result_document() {
    use std::io::BufRead;
    let mut server = crate::common::std_xferbench()
        .args(["kv", "serve", "--arch", "sharded", "-s", "1000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let name = line.trim().strip_prefix("serving on ").map(str::to_string);
    let doc = name.as_ref().map(|name| {
        stdout_json(
            xferbench()
                .args(["kv", "client", "5", "10", "--seed", "1", "--json"])
                .args(["--server", name]),
        )
    });
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(server.id() as i32).unwrap(),
        rustix::process::Signal::INT,
    );
    let _ = server.wait();
    let doc = doc.unwrap_or_else(|| panic!("no announcement: {line:?}"));
    check("result.schema.json", "kv client --json", &doc);
    assert_eq!(doc["points"][0]["runs"][0]["messages"], 150);
}

#[test]
fn warp_client_json_is_the_result_document() {
    use std::io::BufRead;
    // A memory mock on a free port; its address is on stderr.
    let mut server = crate::common::std_xferbench()
        .args(["warp", "serve", "--port", "0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split_whitespace()
        .find(|w| w.contains(':'))
        .expect("the mock prints its address")
        .to_string();
    let one = stdout_json(xferbench().args([
        "warp",
        "client",
        "--connect",
        &addr,
        "-c",
        "2",
        "-n",
        "2",
        "-s",
        "256",
        "--json",
    ]));
    let many = stdout_json(xferbench().args([
        "warp",
        "client",
        "--connect",
        &addr,
        "-c",
        "1",
        "-n",
        "2",
        "-s",
        "256",
        "--instances",
        "2",
        "--json",
    ]));
    let _ = server.kill();
    let _ = server.wait();
    check("result.schema.json", "warp client --json", &one);
    check(
        "result.schema.json",
        "warp client --instances 2 --json",
        &many,
    );
    // The clients are the run's channels: one client, or one per process.
    let channels = |d: &serde_json::Value| {
        d["points"][0]["runs"][0]["channels"]
            .as_array()
            .map(Vec::len)
    };
    assert_eq!(channels(&one), Some(1));
    assert_eq!(channels(&many), Some(2));
}

#[test]
fn profile_json_matches_its_schema() {
    if common::skip_without_perf_record() {
        return;
    }
    let _one_recording_at_a_time = common::sampling_lock();
    let dir = tempfile::tempdir().unwrap();
    let summary = stdout_json(
        xferbench()
            .args(["profile", "--json", "--out"])
            .arg(dir.path())
            .args([
                "--",
                "sh",
                "-c",
                "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done",
            ]),
    );
    check("profile.schema.json", "profile --json", &summary);
}

#[test]
fn study_sis8300_json_matches_the_result_schema_with_no_sample_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sis8300");
    let printed = stdout_json(
        xferbench()
            .args([
                "study",
                "sis8300",
                "--allow-debug",
                "--quick",
                "--runs",
                "1",
                "-q",
                "--json",
                "--out",
            ])
            .arg(&out)
            .timeout(std::time::Duration::from_secs(300)),
    );
    check("result.schema.json", "study sis8300 --json", &printed);
    assert_eq!(printed["study"]["name"], "sis8300");
    let points = printed["points"].as_array().unwrap();
    assert_eq!(
        points.len(),
        printed["study"]["planned_points"].as_u64().unwrap() as usize
    );
    for p in points {
        let i = &p["integrity"];
        assert!(
            i["checked"].as_u64().unwrap() > 0,
            "every point checks its samples"
        );
        assert_eq!(i["corrupt"], 0, "no sample mismatches: {}", p["params"]);
    }
    assert!(out.join("summary.md").is_file());
}

/// `--profile`'s top five functions per point, as the seed lists perf's top symbols
/// per case. The original conversion kernels only (`--only`): each
/// runs and is recorded exactly as in the whole study, which takes over 10 minutes
/// under perf.
#[test]
fn study_sis8300_profile_lists_the_top_five_functions_of_every_point() {
    if common::skip_without_perf_record() {
        return;
    }
    let _one_recording_at_a_time = common::sampling_lock();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sis8300");
    let profile = dir.path().join("profile");
    let printed = stdout_json(
        xferbench()
            .args([
                "study",
                "sis8300",
                "--allow-debug",
                "--only",
                "group=test3",
                "--only",
                "kernels=original",
                "--only",
                "factor=1",
                "--quick",
                "--runs",
                "1",
                "-q",
                "--json",
                "--out",
            ])
            .arg(&out)
            .arg(format!("--profile={}", profile.display()))
            .timeout(std::time::Duration::from_secs(600)),
    );
    assert_eq!(
        printed["study"]["extras"]["only"],
        "group=test3,kernels=original,factor=1"
    );
    assert_eq!(printed["study"]["extras"]["scale"]["t3_passes"], 10);
    let points = printed["points"].as_array().unwrap();
    // A row per point: its number, parameters and at most five functions, as the
    // seed lists perf's top symbols per case.
    let top5 = std::fs::read_to_string(out.join("profile-top5.md")).expect("profile-top5.md");
    let rows: Vec<Vec<&str>> = top5
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| point"))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    let numbers: Vec<usize> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(numbers, (1..=points.len()).collect::<Vec<_>>(), "{top5}");
    for r in &rows {
        assert!(r[1].contains("group="), "the point's parameters: {r:?}");
        assert!(!r[2].contains("not analysed"), "{r:?}");
        assert!(r[2].matches(" %").count() <= 5, "at most five: {r:?}");
    }
    // perf needs a moment to attach; on a loaded machine a short point can end
    // first and its row stays empty, but most are sampled.
    let sampled = rows.iter().filter(|r| r[2].contains(" %")).count();
    assert!(2 * sampled >= rows.len(), "{top5}");
    // The conversion points spend their time in the kernels.
    assert!(
        rows.iter()
            .any(|r| r[1].contains("group=test3") && r[2].contains("convert::")),
        "{top5}"
    );
}

#[test]
fn daq_json_is_the_result_document_and_carries_every_row() {
    let doc = stdout_json(xferbench().args([
        "daq",
        "b0",
        "b1",
        "-S",
        "4096",
        "-N",
        "3",
        "-A",
        "99",
        "--link",
        "unthrottled",
        "--kernels",
        "improved",
        "--verify",
        "--no-limits",
        "--json",
    ]));
    check("result.schema.json", "daq -A 99", &doc);
    let point = &doc["points"][0];
    assert_eq!(point["params"]["function"], "99");
    assert_eq!(point["params"]["devices"], "b0,b1");
    assert_eq!(point["size_bytes"], 8192);
    let run = &point["runs"][0];
    let figures = run["figures"].as_object().unwrap();
    // Readout and the eight conversions, on each of two boards.
    let rows: Vec<&String> = figures
        .keys()
        .filter(|k| k.contains("_row_board"))
        .collect();
    assert_eq!(rows.len(), 18, "{rows:?}");
    for k in figures.keys().filter(|k| k.contains("_mb_s_board")) {
        assert!(figures[k].as_f64().unwrap() > 0.0, "{k}");
    }
    assert_eq!(
        figures.keys().filter(|k| k.ends_with("_agg_mb_s")).count(),
        9
    );
    assert_eq!(run["integrity"]["corrupt"], 0);
    assert!(run["integrity"]["checked"].as_u64().unwrap() >= 2 * 3 * 4096);
    // Loops with the interrupt: acquisitions counted, no status polling.
    let doc = stdout_json(xferbench().args([
        "daq",
        "b0",
        "-S",
        "1024",
        "-l",
        "3",
        "-i",
        "--trigger",
        "software",
        "--no-limits",
        "--json",
    ]));
    check("result.schema.json", "daq -l 3 -i", &doc);
    let point = &doc["points"][0];
    assert_eq!(point["runs"][0]["figures"]["acquisitions"], 3.0);
    assert_eq!(point["params"]["daq"], "irq");
    assert_eq!(point["params"]["trigger"], "software");
}

#[test]
fn history_json_outputs_match_their_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("history.sqlite");
    let cmd = |args: &[&str]| {
        let mut c = xferbench();
        c.env("XFERBENCH_HISTORY", &h).args(args);
        c
    };
    for _ in 0..2 {
        cmd(&[
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
        ])
        .assert()
        .success();
    }
    cmd(&["history", "baseline", "set", "main", "1"])
        .assert()
        .success();
    let list = stdout_json(&mut cmd(&["history", "list", "--json"]));
    check("history-list.schema.json", "history list", &list);
    assert_eq!(list.as_array().unwrap().len(), 2);
    let show = stdout_json(&mut cmd(&["history", "show", "1", "--json"]));
    check("history-show.schema.json", "history show", &show);
    let trend = stdout_json(&mut cmd(&["history", "trend", "--json"]));
    check("history-trend.schema.json", "history trend", &trend);
    let baselines = stdout_json(&mut cmd(&["history", "baseline", "list", "--json"]));
    check(
        "history-baselines.schema.json",
        "history baseline list",
        &baselines,
    );
    // The schemas are strict enough to reject a wrong type.
    let mut broken = trend.clone();
    broken["entries"][0]["value"] = "fast".into();
    assert!(!schema("history-trend.schema.json").is_valid(&broken));
}

#[test]
fn study_hashtable_json_matches_the_result_schema_with_no_mismatch() {
    // Not beside the profiled hash-table study: two collapsing servers on two CPUs
    // would starve each other's clients past their hang timeout.
    let _one_hashtable_study_at_a_time = common::sampling_lock();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hashtable");
    let printed = stdout_json(
        xferbench()
            .args([
                "study",
                "hashtable",
                "--allow-debug",
                "--quick",
                "--runs",
                "1",
                "-q",
                "--json",
                "--out",
            ])
            .arg(&out)
            .timeout(std::time::Duration::from_secs(900)),
    );
    check("result.schema.json", "study hashtable --json", &printed);
    assert_eq!(printed["study"]["name"], "hashtable");
    let points = printed["points"].as_array().unwrap();
    assert_eq!(
        points.len(),
        printed["study"]["planned_points"].as_u64().unwrap() as usize
    );
    let redis = &printed["study"]["extras"]["redis"];
    if redis["available"] != true {
        println!("skipped: the Redis rows ({})", redis["reason"]);
    }
    for p in points {
        let i = &p["integrity"];
        assert!(i["checked"].as_u64().unwrap() > 0, "{}", p["params"]);
        assert_eq!(i["corrupt"], 0, "no mismatched replies: {}", p["params"]);
        assert!(
            p["summary"]["requests_per_s_all"]["median"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
    assert!(out.join("summary.md").is_file());
}

/// `--profile` on the hash-table study's profile points only: the server's shares
/// by category per architecture, in the extras, the summary and a table.
#[test]
fn study_hashtable_profile_names_the_seeds_shares_per_architecture() {
    if common::skip_without_perf_record() {
        return;
    }
    let _one_recording_at_a_time = common::sampling_lock();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hashtable");
    let printed = stdout_json(
        xferbench()
            .args([
                "study",
                "hashtable",
                "--allow-debug",
                "--only",
                "group=profile",
                "--quick",
                "--runs",
                "1",
                "-q",
                "--json",
                "--out",
            ])
            .arg(&out)
            .arg(format!(
                "--profile={}",
                dir.path().join("profile").display()
            ))
            .timeout(std::time::Duration::from_secs(300)),
    );
    check("result.schema.json", "study hashtable --profile", &printed);
    let extras = &printed["study"]["extras"];
    assert_eq!(extras["only"], "group=profile");
    assert_eq!(printed["points"].as_array().unwrap().len(), 3);
    for arch in ["preopt", "ring", "sharded"] {
        let a = &extras["profile_shares"][arch];
        assert!(a["sampled_cpu_ms"].as_f64().unwrap() > 0.0, "{arch}: {a}");
        let shares = a["shares"].as_array().unwrap();
        let keys: Vec<&str> = shares
            .iter()
            .map(|c| c["category"].as_str().unwrap())
            .collect();
        assert_eq!(keys, ["sync", "spin", "dispatch", "hashtable", "other"]);
        let sum: f64 = shares.iter().map(|c| c["share"].as_f64().unwrap()).sum();
        assert!((sum - 1.0).abs() < 1e-6, "{arch}: {sum}");
    }
    // The classifier recognises the real symbols: preopt's server spends most of
    // its samples in semaphores and channels, as in the seed.
    let share = |arch: &str, k: &str| {
        extras["profile_shares"][arch]["shares"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["category"] == k)
            .unwrap()["share"]
            .as_f64()
            .unwrap()
    };
    assert!(
        share("preopt", "sync") + share("preopt", "dispatch") > 0.3,
        "{}",
        extras["profile_shares"]
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("- **preopt** (point 1,") && summary.contains("(seed > 50 %)"),
        "{summary}"
    );
    assert!(out.join("profile-shares.md").is_file());
}

/// `--profile` on Warp Pipe: the original workload at warp-pipe's size is profiled
/// on its own even with `--quick`, and the summary names its top function.
#[test]
fn study_warp_pipe_profile_reads_the_original_workloads_own_point() {
    if common::skip_without_perf_record() {
        return;
    }
    let _one_recording_at_a_time = common::sampling_lock();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warp");
    let printed = stdout_json(
        xferbench()
            .args([
                "study",
                "warp-pipe",
                "--allow-debug",
                "--only",
                "group=original-profile",
                "--quick",
                "--runs",
                "1",
                "-q",
                "--json",
                "--out",
            ])
            .arg(&out)
            .arg(format!(
                "--profile={}",
                dir.path().join("profile").display()
            ))
            .timeout(std::time::Duration::from_secs(300)),
    );
    check("result.schema.json", "study warp-pipe --profile", &printed);
    let points = printed["points"].as_array().unwrap();
    assert_eq!(points.len(), 1);
    assert_eq!(points[0]["params"]["iterations"], "100");
    let p = &printed["study"]["extras"]["original_profile"];
    assert_eq!(p["group"], "original-profile", "{p}");
    assert_eq!(p["participant"], "main");
    assert!(p["sampled_cpu_ms"].as_f64().unwrap() > 100.0, "{p}");
    assert!(!p["top"]["name"].as_str().unwrap().is_empty());
    // The bitwise CRC runs on every TLP: it is sampled, and named.
    assert!(p["crc_total_share"].as_f64().unwrap() > 0.0, "{p}");
    assert!(
        p["top_crc"]["name"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("crc")
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains(
            "**The profile.** Profiled on its own (point 1, `original-profile`, 100 iterations"
        ),
        "{summary}"
    );
}
