//! `xferbench kv serve` and `xferbench kv client` as a user runs them: every
//! architecture end to end, usage errors, and `sharded` clients killed with SIGKILL in
//! the middle of their requests while others keep going.

mod common;

use common::regions_left_by;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn xferbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xferbench"))
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

#[test]
fn every_architecture_serves_a_verified_client_and_leaves_nothing_on_ctrl_c() {
    for arch in ["preopt", "ring", "sharded"] {
        let serve = Serve::start(arch, 2);
        let r = run_json(serve.client(20, 10).arg("--seed").arg("3"));
        assert_eq!(r["requests"], 600, "{arch}: {r}");
        assert_eq!(r["mismatches"], 0, "{arch}: {r}");
        assert_eq!(r["interrupted"], false, "{arch}");
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
    assert!(String::from_utf8_lossy(&out.stderr).contains("INNER must be at least 1"));
    let out = xferbench()
        .args(["kv", "serve", "-n", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--workers 0"));
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
        assert_eq!(
            (r["requests"].as_u64(), r["mismatches"].as_u64()),
            (Some(9000), Some(0))
        );
    }
    // The server still takes new clients once the victims' slots are freed.
    let r = run_json(serve.client(5, 10).arg("--seed").arg("99"));
    assert_eq!(
        (r["requests"].as_u64(), r["mismatches"].as_u64()),
        (Some(150), Some(0))
    );
    let (code, left) = serve.stop();
    assert_eq!(code, Some(130));
    assert!(left.is_empty(), "left {left:?}");
}
