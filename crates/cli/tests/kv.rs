//! `xferbench kv serve` and `xferbench kv client` as a user runs them: every
//! architecture end to end, usage errors, `sharded` clients killed with SIGKILL in
//! the middle of their requests while others keep going, a client finding its
//! server while visitors hold the server's objects, and a visitor ended by Ctrl-C
//! keeping its run. `kv client --json` prints the result document: the requests are
//! its one run's messages, the mismatched replies its corrupt ones.

mod common;

use common::regions_left_by;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Held by every test that starts a server, so that a client without `--server`
/// finds only the test's own (other users of the machine may still run one).
static ONE_SERVER: Mutex<()> = Mutex::new(());

fn one_server() -> std::sync::MutexGuard<'static, ()> {
    ONE_SERVER.lock().unwrap_or_else(|e| e.into_inner())
}

fn xferbench() -> Command {
    crate::common::std_xferbench()
}

/// A `kv serve` process and the name it serves on.
struct Serve {
    child: Child,
    name: String,
}

impl Serve {
    fn start(arch: &str, workers: u32) -> Serve {
        let mut child = xferbench()
            .args(["kv", "serve", "--arch", arch, "-s", "1000", "-n"])
            .arg(workers.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let name = line
            .trim()
            .strip_prefix("serving on ")
            .unwrap_or_else(|| panic!("no announcement: {line:?}"))
            .to_string();
        Serve { child, name }
    }

    fn client(&self, outer: u64, inner: u32) -> Command {
        let mut c = xferbench();
        c.args(["kv", "client", "--json", "--timeout", "20s", "--server"])
            .arg(&self.name)
            .arg(outer.to_string())
            .arg(inner.to_string());
        c
    }

    /// SIGINT, as Ctrl-C; the exit status (130) and what the server left in /dev/shm.
    fn stop(mut self) -> (Option<i32>, Vec<String>) {
        let pid = self.child.id();
        signal(pid, rustix::process::Signal::INT);
        let status = self.child.wait().unwrap();
        (status.code(), regions_left_by(pid))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn signal(pid: u32, sig: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(pid as i32).unwrap();
    let _ = rustix::process::kill_process(pid, sig);
}

/// Runs a finite client and returns its JSON result, checking it exited 0.
fn run_json(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `(requests, mismatches)` of a `kv client --json` result document: its one run's
/// messages and corrupt replies.
fn requests_and_mismatches(doc: &serde_json::Value) -> (Option<u64>, Option<u64>) {
    let run = &doc["points"][0]["runs"][0];
    (
        run["messages"].as_u64(),
        run["integrity"]["corrupt"].as_u64(),
    )
}

#[test]
fn every_architecture_serves_a_verified_client_and_leaves_nothing_on_ctrl_c() {
    let _one = one_server();
    for arch in ["preopt", "ring", "sharded"] {
        let serve = Serve::start(arch, 2);
        let r = run_json(serve.client(20, 10).arg("--seed").arg("3"));
        assert_eq!(
            requests_and_mismatches(&r),
            (Some(600), Some(0)),
            "{arch}: {r}"
        );
        assert_eq!(r["outcome"]["status"], "complete", "{arch}");
        let (code, left) = serve.stop();
        assert_eq!(code, Some(130), "{arch}: Ctrl-C is 128 + SIGINT");
        assert!(left.is_empty(), "{arch} left {left:?}");
    }
}

#[test]
fn usage_errors_exit_2_and_a_missing_server_is_named() {
    let out = xferbench()
        .args(["kv", "client", "1", "0", "--server", "nothing"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("for '[INNER]': expected at least 1"));
    let out = xferbench()
        .args(["kv", "serve", "-n", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("invalid value '0' for '--workers <WORKERS>'")
    );
    let out = xferbench()
        .args(["kv", "client", "1", "1", "--server", "xferbench-no-such-kv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("xferbench-no-such-kv"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sharded_clients_killed_mid_request_stop_neither_the_server_nor_the_others() {
    let _one = one_server();
    // One worker, so the killed clients share it with the survivors.
    let serve = Serve::start("sharded", 1);
    let survivors: Vec<Child> = (0..2)
        .map(|i| {
            serve
                .client(300, 10)
                .arg("--seed")
                .arg((10 + i).to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Visitors in endless loops of 10 inserts, reads and deletes are inside a request
    // almost all the time; kill each after a different delay. More victims than the
    // server has client slots, so their slots must be freed for the later ones.
    let victims = xferbench_transports::kv::sharded::CLIENT_SLOTS + 6;
    let mut served_victims = 0;
    for i in 0..victims {
        let mut v = serve
            .client(0, 10)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(2 + (i as u64 * 7) % 23));
        if v.try_wait().unwrap().is_none() {
            served_victims += 1;
        }
        signal(v.id(), rustix::process::Signal::KILL);
        let status = v.wait().unwrap();
        assert!(
            status.code().is_none(),
            "victim {i} ended by itself: {status:?}: {}",
            std::io::read_to_string(v.stderr.take().unwrap()).unwrap_or_default()
        );
    }
    assert_eq!(served_victims, victims);
    for (i, s) in survivors.into_iter().enumerate() {
        let out = s.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "survivor {i}: {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(requests_and_mismatches(&r), (Some(9000), Some(0)));
    }
    // The server still takes new clients once the victims' slots are freed.
    let r = run_json(serve.client(5, 10).arg("--seed").arg("99"));
    assert_eq!(requests_and_mismatches(&r), (Some(150), Some(0)));
    let (code, left) = serve.stop();
    assert_eq!(code, Some(130));
    assert!(left.is_empty(), "left {left:?}");
}

/// True once process `pid` holds a kv object's memfd (it has attached).
fn holds_a_kv_object(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.flatten().any(|f| {
                std::fs::read_link(f.path())
                    .is_ok_and(|t| t.to_string_lossy().starts_with("/memfd:xferbench-kv"))
            })
        })
        .unwrap_or(false)
}

/// The seed's scenario: visitors run, then a client is timed. Every visitor maps the
/// server's objects, so its `/proc/<pid>/fd` shows the same memfds as the server's;
/// discovery must still name one server, and never a visitor.
#[test]
fn a_client_finds_its_server_while_a_visitor_holds_the_same_objects() {
    let _one = one_server();
    let serve = Serve::start("preopt", 1);
    let server_pid = serve.child.id() as i32;
    let mut visitor = xferbench()
        .args(["kv", "client", "0", "10", "--server"])
        .arg(&serve.name)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let visitor_pid = visitor.id();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !holds_a_kv_object(visitor_pid) {
        assert!(Instant::now() < deadline, "the visitor never attached");
        assert!(visitor.try_wait().unwrap().is_none(), "the visitor ended");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Other users of the machine may run servers too: look at ours only.
    let ours: Vec<(String, i32)> = xferbench_transports::kv::running_servers()
        .into_iter()
        .filter(|s| s.pid == server_pid || s.pid == visitor_pid as i32)
        .map(|s| (s.address, s.pid))
        .collect();
    assert_eq!(ours, vec![(serve.name.clone(), server_pid)]);
    let out = xferbench()
        .args(["kv", "client", "--json", "--timeout", "20s", "100", "10"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(requests_and_mismatches(&r), (Some(3000), Some(0)));
    } else {
        // Only another user's server may make the choice ambiguous, never the visitor.
        assert!(stderr.contains("kv servers are running"), "{stderr}");
        assert!(!stderr.contains(&format!("pid {visitor_pid}")), "{stderr}");
    }
    signal(visitor_pid, rustix::process::Signal::INT);
    let _ = visitor.wait();
    let (code, left) = serve.stop();
    assert_eq!(code, Some(130));
    assert!(left.is_empty(), "left {left:?}");
}

/// A visitor (`OUTER` 0) runs until Ctrl-C; the run Ctrl-C ends is its result: kept
/// in the document, exported, recorded in the history, and the exit status is 130
/// (128 + SIGINT), as for every command a signal stops.
#[test]
fn a_visitor_ended_by_ctrl_c_keeps_its_run_exports_and_records_it_and_exits_130() {
    let _one = one_server();
    let serve = Serve::start("sharded", 1);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("visitor.json");
    let history = dir.path().join("history.sqlite");
    let mut visitor = xferbench()
        .env("XFERBENCH_HISTORY", &history)
        .args([
            "kv",
            "client",
            "0",
            "10",
            "--server",
            &serve.name,
            "--export-json",
        ])
        .arg(&json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !holds_a_kv_object(visitor.id()) {
        assert!(Instant::now() < deadline, "the visitor never attached");
        assert!(visitor.try_wait().unwrap().is_none(), "the visitor ended");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    signal(visitor.id(), rustix::process::Signal::INT);
    let out = visitor.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stdout}{stderr}");
    assert!(
        stdout.contains("requests in") && stdout.contains("0 mismatches, interrupted"),
        "{stdout}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["outcome"]["status"], "complete");
    assert_eq!(doc["points"][0]["params"]["outer"], "0");
    let (requests, mismatches) = requests_and_mismatches(&doc);
    assert!(requests.unwrap() > 0, "{doc}");
    assert_eq!(mismatches, Some(0));
    let list = xferbench()
        .env("XFERBENCH_HISTORY", &history)
        .args(["history", "list"])
        .output()
        .unwrap();
    assert!(list.status.success());
    assert!(String::from_utf8_lossy(&list.stdout).contains("kv-client"));
    let (code, left) = serve.stop();
    assert_eq!(code, Some(130));
    assert!(left.is_empty(), "left {left:?}");
}

/// A study's server (the hidden role, started with a key) is private: a `kv client`
/// given its address is refused by name, one looking for a server never picks it,
/// and the server leaves nothing behind.
#[test]
fn a_private_server_is_neither_joined_nor_picked_by_kv_client() {
    let _one = one_server();
    let spec =
        r#"{"arch":"sharded","buckets":1000,"workers":1,"hang_timeout_ms":5000,"key":12345}"#;
    let mut child = xferbench()
        .args(["__kv-server", spec])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let name = line
        .trim()
        .strip_prefix("serving on ")
        .unwrap_or_else(|| panic!("no announcement: {line:?}"))
        .to_string();
    let pid = child.id();
    let out = xferbench()
        .args([
            "kv",
            "client",
            "1",
            "1",
            "--timeout",
            "5s",
            "--server",
            &name,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&name) && stderr.contains("private") && !stderr.contains("panicked"),
        "{stderr}"
    );
    // Looking for a server: never this one (another user's public server may be
    // picked, or none).
    let out = xferbench()
        .args(["kv", "client", "--json", "--timeout", "5s", "1", "1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    if out.status.success() {
        assert!(!String::from_utf8_lossy(&out.stdout).contains(&name));
    } else {
        assert!(
            stderr.contains(&format!("private to a running study: pid {pid}"))
                || stderr.contains("kv servers are running"),
            "{stderr}"
        );
        assert!(!stderr.contains(&name), "{stderr}");
    }
    signal(pid, rustix::process::Signal::INT);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(regions_left_by(pid).is_empty());
}
