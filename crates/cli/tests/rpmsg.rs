//! `xferbench study rpmsg` and the RPMsg remote process: the quick study end to end
//! (its files, and its JSON documents against their schemas), and a remote killed in
//! the middle of a run.

mod common;

use common::{check, regions_left_by};
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use xferbench_lab::rig::rpmsg::{RemoteKind, RpmsgRig};
use xferbench_lab::rig::{Rig, RunControl, RunError};
use xferbench_lab::workload::Limit;
use xferbench_lab::workload::rpmsg::RpmsgPoint;
use xferbench_probes::process::{Launcher, Role};
use xferbench_transports::rpmsg::header::MAX_PAYLOAD;
use xferbench_transports::rpmsg::{Buffers, Notify};

fn remote() -> RemoteKind {
    RemoteKind::Process(
        Launcher::new(crate::common::BIN).with_role(Role::RpmsgRemote, ["__rpmsg-remote"]),
    )
}

/// One quick study serves both the folder's checks and the schema checks of what it
/// prints and writes (`--json`, `results.json`, and `compare --json` of the folder
/// against itself).
#[test]
fn the_quick_study_writes_every_file_of_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study");
    let assert = crate::common::xferbench()
        .args([
            "study",
            "rpmsg",
            "--allow-debug",
            "--quick",
            "--json",
            "--out",
        ])
        .arg(&out)
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let pid = assert.get_output().status.code(); // exited: nothing of it may remain
    assert_eq!(pid, Some(0));
    let printed: serde_json::Value =
        serde_json::from_slice(&assert.get_output().stdout).expect("one JSON document");
    check("result.schema.json", "study rpmsg --json", &printed);
    for f in [
        "results.json",
        "summary.md",
        "table-1ch.md",
        "table-1ch.csv",
        "table-8ch.md",
        "table-32ch.csv",
        "variants.md",
        "variants.csv",
        "bandwidth-per-channel.svg",
        "total-bandwidth.svg",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let res: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    check("result.schema.json", "study rpmsg results.json", &res);
    assert_eq!(printed, res, "--json prints what results.json holds");
    let cmp = crate::common::xferbench()
        .arg("compare")
        .arg(&out)
        .arg(&out)
        .arg("--json")
        .assert()
        .success();
    let cmp: serde_json::Value =
        serde_json::from_slice(&cmp.get_output().stdout).expect("one JSON document");
    check("compare.schema.json", "compare --json", &cmp);
    assert_eq!(res["outcome"]["status"], "complete");
    assert_eq!(res["study"]["name"], "rpmsg");
    assert_eq!(res["context"]["settings"]["interleave"], true);
    let points = res["points"].as_array().unwrap();
    let group = |g: &str| {
        points
            .iter()
            .filter(|p| p["params"]["group"] == g)
            .collect::<Vec<_>>()
    };
    assert!(group("table").len() >= 10);
    for p in group("table") {
        let s = &p["summary"];
        assert_eq!(p["runs"].as_array().unwrap().len(), 3);
        assert!(s["throughput_bytes_per_s"]["median"].as_f64().unwrap() > 0.0);
        assert!(s["sum_of_rates_bytes_per_s"]["median"].as_f64().unwrap() > 0.0);
        assert!(
            s["cpu_peers_cpus"]["median"].as_f64().is_some(),
            "a process remote has CPU figures"
        );
    }
    assert!(
        !res["study"]["extras"]["skipped"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(group("variants").len(), 12);
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("Packet-rate ceiling"), "{summary}");
    assert!(summary.contains("SC598"), "{summary}");
    let table = std::fs::read_to_string(out.join("table-8ch.md")).unwrap();
    assert!(table.contains(
        "| PACKET SIZE | TRANSFER SIZE | Single CH speed | SC598 Single CH speed | Average CH speed | SC598 Average CH speed |"
    ));
    assert!(
        std::fs::read_to_string(out.join("total-bandwidth.svg"))
            .unwrap()
            .starts_with("<svg")
    );
}

#[test]
fn list_names_the_rpmsg_study() {
    crate::common::xferbench()
        .arg("list")
        .assert()
        .success()
        .stdout(predicates::str::contains("xferbench study NAME"))
        .stdout(predicates::str::contains("rpmsg"));
}

#[test]
fn an_unknown_study_is_a_usage_error() {
    crate::common::xferbench()
        .args(["study", "nope", "--allow-debug"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("rpmsg"));
}

#[test]
fn a_remote_killed_mid_run_is_reported_and_leaves_no_shared_memory() {
    let stop = AtomicBool::new(false);
    let point = RpmsgPoint {
        channels: 4,
        packet: 64,
        limit: Limit::Count(50_000_000), // far longer than the test waits
        notify: Notify::Kick,
        buffers: Buffers::Copy,
        suffix: false,
        verify: true,
        zero_copy: false,
        pace_ns: None,
    };
    let mut rig = RpmsgRig::start(point, &remote()).unwrap();
    let pid = rig.remote_pid();
    assert_ne!(pid as u32, std::process::id());
    let names: Vec<String> = rig.participants().into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["main", "remote"]);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid).unwrap(),
            rustix::process::Signal::KILL,
        );
    });
    let started = std::time::Instant::now();
    // Noticed well before the hang timeout, however loaded the machine.
    let mut ctl = RunControl::new(&stop, Duration::from_secs(60), None);
    let err = rig.run_once(&mut ctl).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "noticed promptly"
    );
    assert!(matches!(err, RunError::Participant(_)), "{err}");
    assert!(
        !err.is_usage(),
        "a dead remote is a failure, not a usage error"
    );
    let msg = err.to_string();
    assert!(msg.contains("SIGKILL"), "{msg}");
    drop(rig);
    assert!(regions_left_by(std::process::id()).is_empty());
    assert!(regions_left_by(pid as u32).is_empty());
}

#[test]
fn a_remote_that_cannot_attach_says_why() {
    let out = crate::common::xferbench()
        .args(["__rpmsg-remote", "/xferbench-no-such-region"])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("bad region address") && err.contains("memfd:<pid>:<fd>:<inode>"),
        "{err}"
    );
}

#[test]
fn the_rpmsg_command_runs_a_verified_point_and_writes_every_run_as_json_lines() {
    let out = crate::common::xferbench()
        .args([
            "rpmsg",
            "-c",
            "4",
            "-s",
            "64",
            "--transfer",
            "6400",
            "-r",
            "3",
        ])
        .args([
            "--notify",
            "event-idx",
            "--buffers",
            "zero-copy",
            "--verify",
            "--jsonl",
            "-",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let runs: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(runs.len(), 3, "one JSON line per measured run");
    for r in &runs {
        let channels = r["channels"].as_array().unwrap();
        assert_eq!(channels.len(), 4);
        for c in channels {
            // ⌈6400 / 64⌉ round trips of 64 bytes each.
            assert_eq!(c["round_trips"], 100);
            assert_eq!(c["bytes"], 6400);
        }
        assert_eq!(r["integrity"]["lost"], 0);
        assert_eq!(r["integrity"]["corrupt"], 0);
        assert!(r["aggregate_bytes_per_s"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn rpmsg_json_prints_one_result_document_as_export_json_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    let out = crate::common::xferbench()
        .args(["rpmsg", "-c", "2", "-s", "64", "--transfer", "6400"])
        .args([
            "-r",
            "2",
            "-w",
            "0",
            "--timeout",
            "30",
            "--json",
            "--export-json",
        ])
        .arg(&file)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc, saved);
    assert_eq!(doc["context"]["settings"]["workload"], "rpmsg");
    assert_eq!(doc["context"]["settings"]["warmup"], 0);
    let runs = doc["points"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(doc["points"][0]["channels"], 2);
}

#[test]
fn rpmsg_writes_every_export_and_records_its_run_in_the_history_as_the_other_commands_do() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("r.md");
    let history = dir.path().join("h.sqlite");
    let out = crate::common::xferbench()
        .args(["rpmsg", "-c", "1", "-s", "64", "--transfer", "6400"])
        .args(["-r", "1", "-w", "0", "--no-limits", "--export-md"])
        .arg(&md)
        .arg("--history")
        .arg(&history)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        std::fs::read_to_string(&md).unwrap().contains("rpmsg"),
        "the Markdown report names the workload"
    );
    assert!(stderr.contains("history: created"), "{stderr}");
    let list = crate::common::xferbench()
        .args(["history", "list", "--json", "--history"])
        .arg(&history)
        .output()
        .unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(1), "{runs}");
    // A path that cannot be written is refused before anything is measured.
    let out = crate::common::xferbench()
        .args(["rpmsg", "--export-md", "/nonexistent/dir/r.md"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--export-md"));
}

#[test]
fn bad_rpmsg_flags_are_usage_errors_naming_the_flag() {
    for (args, needle) in [
        (&["-s", "497"][..], "--size: invalid value \"497\""),
        (&["-s", "8", "--verify"][..], "--verify needs packets"),
        (&["--transfer", "lots"][..], "--transfer"),
        (&["-c", "0"][..], "--channels 0"),
        (&["--timeout", "0"][..], "--timeout"),
        (&["-t", "6400"][..], "unexpected argument '-t'"),
        (&["-r", "0"][..], "--runs"),
        (&["--notify", "smoke-signal"][..], "--notify"),
    ] {
        let out = crate::common::xferbench()
            .arg("rpmsg")
            .args(args)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn rpmsg_runs_as_a_transport_of_run_beside_shm() {
    let out = crate::common::xferbench()
        .args([
            "run",
            "pingpong",
            "-t",
            "rpmsg,shm",
            "-s",
            "496",
            "-c",
            "1,2",
        ])
        .args(["-p", "notify=kick,poll", "-p", "buffers=copy,zero-copy"])
        .args([
            "--peer", "process", "-n", "200", "-r", "2", "-w", "0", "--json",
        ])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let points = doc["points"].as_array().unwrap();
    let of = |t: &str| {
        points
            .iter()
            .filter(|p| p["params"]["transport"] == t)
            .collect::<Vec<_>>()
    };
    // rpmsg: 2 channel counts × 2 notify × 2 buffers; shm takes neither parameter.
    assert_eq!(of("rpmsg").len(), 8, "{doc}");
    assert_eq!(of("shm").len(), 2, "{doc}");
    for p in of("rpmsg") {
        assert_eq!(p["primary"]["figure"], "latency_p50_ns");
        let channels: u64 = p["params"]["channels"].as_str().unwrap().parse().unwrap();
        for r in p["runs"].as_array().unwrap() {
            assert_eq!(r["messages"].as_u64().unwrap(), 200 * channels);
            assert!(r["figures"]["kicks_to_remote_per_round_trip"].is_number());
        }
    }
}

#[test]
fn rpmsg_in_run_refuses_stream_and_large_sizes_with_the_reason() {
    for (args, needle) in [
        (&["run", "stream", "-t", "rpmsg"][..], "pingpong"),
        (&["run", "pingpong", "-t", "rpmsg", "-s", "1024"][..], "496"),
        (
            &[
                "run",
                "pingpong",
                "-t",
                "rpmsg",
                "-s",
                "64",
                "-p",
                "notify=smoke",
            ][..],
            "notify",
        ),
    ] {
        let out = crate::common::xferbench()
            .args(args)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn rpmsg_in_run_without_sizes_runs_the_defaults_that_fit_and_warns() {
    let out = crate::common::xferbench()
        .args(["run", "pingpong", "-t", "rpmsg"])
        .args(["-r", "1", "-w", "0", "-d", "0.2", "--no-limits", "--json"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("rpmsg: the default sizes 4 KiB and 64 KiB do not fit an RPMsg packet"),
        "{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sizes: Vec<&str> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["params"]["size"].as_str().unwrap())
        .collect();
    assert_eq!(sizes, ["64", &MAX_PAYLOAD.to_string()], "{doc}");
}

#[test]
fn list_shows_rpmsg_with_its_parameters() {
    crate::common::xferbench()
        .arg("list")
        .assert()
        .success()
        .stdout(predicates::str::contains("notify"))
        .stdout(predicates::str::contains("event-idx"))
        .stdout(predicates::str::contains("zero-copy"));
}

#[test]
fn a_pinned_rpmsg_link_pins_its_remote_process_and_records_it() {
    // The rig with a remote process: every thread of the remote on one CPU.
    let p = RpmsgPoint {
        channels: 2,
        packet: 64,
        limit: Limit::Count(200),
        notify: Notify::Kick,
        buffers: Buffers::Copy,
        suffix: false,
        verify: false,
        zero_copy: false,
        pace_ns: None,
    };
    let cpus = xferbench_probes::affinity::allowed_cpus();
    let mut rig = RpmsgRig::start_pinned(p, &remote(), true).unwrap();
    assert_eq!(
        rig.remote_cpus(),
        Some(vec![xferbench_probes::affinity::pin_plan(0, &cpus).1])
    );
    let stop = AtomicBool::new(false);
    rig.run_once(&mut RunControl::new(&stop, Duration::from_secs(30), None))
        .unwrap();
    Box::new(rig).finish().unwrap();
    // The command records it.
    let out = crate::common::xferbench()
        .args([
            "rpmsg",
            "-c",
            "2",
            "-s",
            "64",
            "--transfer",
            "6400",
            "--pin",
        ])
        .args(["-r", "1", "-w", "0", "--timeout", "30", "--json"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["context"]["settings"]["pin"], true);
}
