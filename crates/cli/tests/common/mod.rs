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
