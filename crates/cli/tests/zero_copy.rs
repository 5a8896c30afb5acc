//! Zero-copy runs (`--zero-copy`, `-p zero_copy=...`) on the transports that have the
//! mode, its refusal elsewhere, and what a killed iceoryx2 peer leaves behind.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::Path;

fn xferbench() -> Command {
    crate::common::xferbench()
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("file written")).expect("JSON")
}

/// Every point of `doc` checked `n` messages and found nothing wrong.
fn all_clean(doc: &serde_json::Value, n: u64) {
    let points = doc["points"].as_array().expect("points");
    assert!(!points.is_empty());
    for p in points {
        let i = &p["integrity"];
        assert_eq!(i["checked"], n, "{}", p["params"]);
        for k in ["lost", "duplicated", "reordered", "corrupt"] {
            assert_eq!(i[k], 0, "{} {k}", p["params"]);
        }
    }
}

#[test]
fn zero_copy_streams_and_round_trips_verify_clean_on_every_transport_that_has_it() {
    let dir = tempfile::tempdir().unwrap();
    for (workload, transports) in [
        ("stream", "shm,iceoryx2"),
        ("pingpong", "shm,iceoryx2,rpmsg"),
    ] {
        let j = dir.path().join(format!("{workload}.json"));
        xferbench()
            .args(["run", workload, "-t", transports, "-s", "16,496"])
            .args([
                "-n",
                "20000",
                "-r",
                "1",
                "-w",
                "0",
                "--zero-copy",
                "--verify",
            ])
            .args(["-q", "--no-limits", "--export-json"])
            .arg(&j)
            .assert()
            .success();
        let doc = read_json(&j);
        all_clean(&doc, 20_000);
        let points = doc["points"].as_array().unwrap();
        assert_eq!(points.len(), transports.split(',').count() * 2);
        assert!(points.iter().all(|p| p["params"]["zero_copy"] == "true"));
    }
}

#[test]
fn corruption_written_in_place_is_counted() {
    for (workload, t) in [("stream", "shm"), ("pingpong", "iceoryx2")] {
        xferbench()
            .args([
                "run", workload, "-t", t, "-s", "64", "-n", "10000", "-r", "1", "-w", "0",
            ])
            .args([
                "--zero-copy",
                "--verify",
                "--inject-corruption",
                "100",
                "--no-limits",
            ])
            .assert()
            .code(3)
            .stdout(predicate::str::contains("100 corrupt"));
    }
}

#[test]
fn zero_copy_is_refused_on_transports_without_it() {
    for t in ["pipe", "tcp", "shm,unix"] {
        xferbench()
            .args(["run", "stream", "-t", t, "--zero-copy"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("has no zero-copy mode"))
            .stderr(predicate::str::contains("shm, iceoryx2, rpmsg"));
    }
    xferbench()
        .args(["run", "stream", "-t", "pipe", "-p", "zero_copy=true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no selected transport has a zero-copy mode",
        ));
    xferbench()
        .args(["run", "stream", "-t", "shm", "-p", "zero_copy=maybe"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("choose from: false, true"));
    xferbench()
        .args([
            "run",
            "stream",
            "-t",
            "shm",
            "-p",
            "zero_copy=true",
            "--zero-copy",
        ])
        .assert()
        .code(2);
    xferbench()
        .args([
            "run",
            "pingpong",
            "-t",
            "rpmsg",
            "-s",
            "64",
            "-p",
            "buffers=copy",
            "--zero-copy",
        ])
        .args(["-n", "10", "-r", "1", "-w", "0", "--no-limits"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("buffers=copy"));
}

#[test]
fn the_zero_copy_axis_applies_where_a_transport_has_the_mode() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("r.json");
    xferbench()
        .args([
            "run",
            "stream",
            "-t",
            "shm,pipe",
            "-s",
            "64",
            "-p",
            "zero_copy=false,true",
        ])
        .args([
            "-n",
            "1000",
            "-r",
            "1",
            "-w",
            "0",
            "--verify",
            "-q",
            "--no-limits",
        ])
        .arg("--export-json")
        .arg(&j)
        .assert()
        .success();
    let doc = read_json(&j);
    all_clean(&doc, 1000);
    let modes: Vec<(String, bool)> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["params"]["transport"].as_str().unwrap().to_string(),
                p["params"]["zero_copy"] == "true",
            )
        })
        .collect();
    assert_eq!(
        modes,
        [
            ("shm".to_string(), false),
            ("shm".to_string(), true),
            ("pipe".to_string(), false)
        ]
    );
}

/// Paths under `root` (recursively) whose name starts with `prefix`.
fn files_with_prefix(root: &Path, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(root) else {
        return out;
    };
    for e in dir.flatten() {
        let path = e.path();
        if e.file_name().to_string_lossy().starts_with(prefix) {
            out.push(path.display().to_string());
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(files_with_prefix(&path, prefix));
        }
    }
    out
}

/// A stream whose iceoryx2 peer process is SIGKILLed mid-run fails clearly, and
/// nothing of the run's iceoryx2 domain (a private one, so that other tests' files do
/// not count) stays in /dev/shm or under iceoryx2's root in the temp directory.
#[test]
fn a_killed_iceoryx2_peer_leaves_nothing_behind() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let prefix = format!("xferbench_iox2_t{}_", std::process::id());
    for zero_copy in [false, true] {
        let mut cmd = crate::common::std_xferbench();
        cmd.args(["run", "stream", "-t", "iceoryx2", "-s", "4KiB", "-d", "30"])
            .args(["-r", "1", "-w", "0", "--no-limits", "-q"])
            .env("XFERBENCH_IOX2_PREFIX", &prefix)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if zero_copy {
            cmd.arg("--zero-copy");
        }
        let child = cmd.spawn().unwrap();
        let pid = child.id();
        // Wait until the peer process exists and the channel is up.
        let deadline = Instant::now() + Duration::from_secs(30);
        let peer = loop {
            let kids = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
                .unwrap_or_default();
            let up = !files_with_prefix(Path::new("/dev/shm"), &prefix).is_empty();
            if let Some(p) = kids.split_whitespace().next()
                && up
            {
                break p.parse::<i32>().unwrap();
            }
            assert!(Instant::now() < deadline, "the run did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        std::thread::sleep(Duration::from_millis(300));
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(peer).unwrap(),
            rustix::process::Signal::KILL,
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("SIGKILL"), "{stderr}");
        let mut left = files_with_prefix(Path::new("/dev/shm"), &prefix);
        left.extend(files_with_prefix(Path::new("/tmp/iceoryx2"), &prefix));
        assert_eq!(left, Vec::<String>::new(), "zero_copy={zero_copy}");
        assert_eq!(common::regions_left_by(pid), Vec::<String>::new());
    }
}

/// A peer killed while creating its iceoryx2 node (after the node's details, before
/// its monitor) leaves a node directory iceoryx2 itself never lists: the next run of
/// the domain removes it, and leaves a node of a live process alone.
#[test]
fn a_node_left_half_created_by_a_killed_process_is_removed_by_the_next_run() {
    let prefix = format!("xferbench_iox2_h{}_", std::process::id());
    let nodes = Path::new("/tmp/iceoryx2/nodes");
    std::fs::create_dir_all(nodes).unwrap();
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let orphan = |id: &str, pid: u32| {
        let dir = nodes.join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("{prefix}node.details")),
            format!("executable = \"xferbench\"\nprocess = {pid}\nname = \"\"\n"),
        )
        .unwrap();
        dir
    };
    let gone = orphan("1000000000000000000000000001", dead_pid);
    let alive = orphan("1000000000000000000000000002", std::process::id());
    xferbench()
        .args(["run", "pingpong", "-t", "iceoryx2", "-s", "64", "-n", "100"])
        .args(["-r", "1", "-w", "0", "-q", "--no-limits"])
        .env("XFERBENCH_IOX2_PREFIX", &prefix)
        .assert()
        .success();
    assert!(
        !gone.exists(),
        "the dead process's half-created node stayed"
    );
    assert!(alive.exists(), "a live process's node was removed");
    std::fs::remove_dir_all(&alive).unwrap();
    let mut left = files_with_prefix(Path::new("/dev/shm"), &prefix);
    left.extend(files_with_prefix(Path::new("/tmp/iceoryx2"), &prefix));
    assert_eq!(left, Vec::<String>::new());
}
