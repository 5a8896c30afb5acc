//! Every subcommand that prints, into a stdout that fails: a closed pipe
//! (`xferbench list | head -1`) is not an error (exit 0, no message), a full disk
//! (`> /dev/full`) is (exit 1, "cannot write to standard output"), and neither
//! panics.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A quick run: one point, one run, no limits.
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
    "1",
    "-w",
    "0",
    "--peer",
    "thread",
    "--no-limits",
];

struct Fixture {
    _dir: tempfile::TempDir,
    history: PathBuf,
    result: PathBuf,
}

/// A history with one run, and that run's result file.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history.sqlite");
    let result = dir.path().join("r.json");
    let out = xferbench(&history)
        .args(QUICK)
        .arg("--export-json")
        .arg(&result)
        .arg("-q")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    Fixture {
        _dir: dir,
        history,
        result,
    }
}

fn xferbench(history: &Path) -> Command {
    let mut c = crate::common::std_xferbench();
    c.env("XFERBENCH_HISTORY", history)
        .env_remove("RUST_LOG")
        .env_remove("XFERBENCH_LOG")
        .env("RUST_BACKTRACE", "0")
        .stderr(Stdio::piped());
    c
}

/// The printing command lines, cheap ones only.
fn commands(f: &Fixture) -> Vec<Vec<String>> {
    let result = f.result.display().to_string();
    let with_json = |args: &[&str]| {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let mut j = a.clone();
        j.push("--json".into());
        [a, j]
    };
    let mut all: Vec<Vec<String>> = Vec::new();
    for args in [
        &["list"][..],
        QUICK,
        &["rpmsg", "-c", "1", "-s", "64", "--transfer", "64KB"][..],
        &["history", "list"][..],
        &["history", "show", "1"][..],
        &["history", "baseline", "list"][..],
        &["compare", &result, &result][..],
        &["limits", "--quick"][..],
    ] {
        all.extend(with_json(args));
    }
    for args in [
        &["--help"][..],
        &["--version"][..],
        &["run", "--help"][..],
        &["history", "trend", "--help"][..],
        &["completions", "bash"][..],
        &["completions", "zsh"][..],
        &["man"][..],
        &["daq", "b0", "-S", "30000", "-N", "2"][..],
        &["ab", "--runs", "2", "true", "true"][..],
    ] {
        all.push(args.iter().map(|s| s.to_string()).collect());
    }
    all
}

fn describe(args: &[String], out: &Output) -> String {
    format!(
        "xferbench {}: {:?}\n{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_closed_stdout_is_not_an_error_for_any_subcommand() {
    let f = fixture();
    for args in commands(&f) {
        let mut child = xferbench(&f.history)
            .args(&args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let why = describe(&args, &out);
        assert_eq!(out.status.code(), Some(0), "{why}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{why}");
        assert!(!stderr.contains("standard output"), "{why}");
    }
}

#[test]
fn a_full_stdout_is_an_error_with_a_message_for_every_subcommand() {
    let f = fixture();
    for args in commands(&f) {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = xferbench(&f.history)
            .args(&args)
            .stdout(full)
            .output()
            .unwrap();
        let why = describe(&args, &out);
        assert_eq!(out.status.code(), Some(1), "{why}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{why}");
        assert!(
            stderr.contains("error: cannot write to standard output: No space left on device"),
            "{why}"
        );
    }
}

#[test]
fn completions_offer_no_hidden_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let out = xferbench(Path::new("/nonexistent/history.sqlite"))
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("warp"), "{shell}: {script}");
        for role in [
            "__peer",
            "__rpmsg-remote",
            "__memory-mock",
            "__warp-client",
            "__kv-server",
            "__kv-client",
            "__perfstat-bench",
        ] {
            assert!(!script.contains(role), "{shell} offers {role}");
        }
    }
}
