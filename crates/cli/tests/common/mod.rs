//! Helpers shared by the CLI test binaries (each binary uses some of them).
//!
//! Every test runs the binary through [`xferbench`] or [`std_xferbench`] (the test
//! `every_test_runs_the_binary_through_the_helpers` in `history.rs` checks it), so no
//! test can record into the user's own history: both point the default location
//! (`$XDG_DATA_HOME/xferbench/history.sqlite`) into the test folder cargo gives
//! integration tests under `target/`, and drop an `XFERBENCH_HISTORY` the user's
//! environment may hold. A test that checks the history sets its own file after.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The binary under test. Only for passing its path along (`profile -- BIN`, a
/// launcher of peers); run it through [`xferbench`] or [`std_xferbench`].
pub const BIN: &str = env!("CARGO_BIN_EXE_xferbench");

/// The data folder every test's binary sees as `XDG_DATA_HOME`: inside `target/`,
/// never the user's.
pub fn test_data_home() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data")
}

/// Points `cmd`'s default history away from the user's (see the module doc).
pub fn isolate(cmd: &mut std::process::Command) -> &mut std::process::Command {
    cmd.env("XDG_DATA_HOME", test_data_home())
        .env_remove("XFERBENCH_HISTORY")
}

/// The binary under test as an `assert_cmd` command, its history isolated.
pub fn xferbench() -> assert_cmd::Command {
    let mut cmd = std_xferbench();
    isolate(&mut cmd);
    assert_cmd::Command::from_std(cmd)
}

/// The binary under test as a `std::process::Command`, its history isolated.
pub fn std_xferbench() -> std::process::Command {
    let mut cmd = std::process::Command::new(BIN);
    isolate(&mut cmd);
    cmd
}

/// Shared-memory objects that process `pid` created and that are still in /dev/shm.
pub fn regions_left_by(pid: u32) -> Vec<String> {
    let prefix = format!("xferbench-u{}-p{pid}-", rustix::process::getuid().as_raw());
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// True (after printing why) when `perf record` cannot run here; the test then skips.
pub fn skip_without_perf_record() -> bool {
    let usable = std::process::Command::new("perf")
        .args(["record", "-q", "-o", "/dev/null", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !usable {
        println!("skipped: perf is missing or may not record here");
    }
    !usable
}

/// Whether valgrind is installed and runs (`valgrind --version` succeeds).
pub fn have_valgrind() -> bool {
    std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// True (after printing why) when valgrind is not installed; the test then skips.
pub fn skip_without_valgrind() -> bool {
    let usable = have_valgrind();
    if !usable {
        println!("skipped: valgrind is not installed (apt-get install valgrind)");
    }
    !usable
}

/// Held by tests that profile with `perf record`, so that one test's sampled CPU time
/// is not shared out among several recordings at once (their checks count samples).
pub fn sampling_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The documented schema `docs/schema/<name>`.
pub fn schema(name: &str) -> jsonschema::Validator {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schema")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("documented schema");
    let value: serde_json::Value = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::validator_for(&value).expect("a valid JSON Schema")
}

/// Validates `doc` against `docs/schema/<name>`, listing every violation.
pub fn check(name: &str, what: &str, doc: &serde_json::Value) {
    let v = schema(name);
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match {name}:\n{}",
        errors.join("\n")
    );
}

/// The children of `pid`, from every thread's `/proc/PID/task/TID/children`.
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|s| s.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The state and kernel wait channel of `pid` and each of its threads, and the same
/// for its children: what a run that did not end was waiting for.
pub fn describe_tree(pid: u32) -> String {
    let mut out = String::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let path = task.path();
            let read = |f: &str| std::fs::read_to_string(path.join(f)).unwrap_or_default();
            let stat = read("stat");
            let state = stat.rsplit_once(") ").map_or("?", |(_, r)| &r[..1]);
            let stack: String = read("stack")
                .lines()
                .take(6)
                .map(|l| format!("\n      {l}"))
                .collect();
            out += &format!(
                "\n  {p}/{}: {} state {state} wchan {}{stack}",
                task.file_name().to_string_lossy(),
                read("comm").trim(),
                read("wchan").trim(),
            );
        }
        todo.extend(children(p));
    }
    out
}

/// How long a run a test signals may take to end before the test fails with what it
/// waited for ([`wait_within`]).
pub const RUN_BOUND: std::time::Duration = std::time::Duration::from_secs(120);

/// Waits for `child` to end and collects its output; a run still going after
/// `within` is described ([`describe_tree`]), killed with its children, and fails
/// the test, so that a hang fails in minutes and says where it waited.
pub fn wait_within(
    child: std::process::Child,
    within: std::time::Duration,
) -> std::process::Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    if let Ok(out) = rx.recv_timeout(within) {
        return out.unwrap();
    }
    let tree = describe_tree(pid);
    let mut all = children(pid);
    all.push(pid);
    for p in all {
        if let Some(p) = rustix::process::Pid::from_raw(p as i32) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
    }
    let stderr = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .ok()
        .and_then(Result::ok)
        .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        .unwrap_or_default();
    panic!("the run did not end within {within:?}:{tree}\nits stderr:\n{stderr}");
}
