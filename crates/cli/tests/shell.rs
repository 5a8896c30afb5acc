//! What a command-line tool is expected to have: shell completions, man pages and
//! `-v` logging.

mod common;

use assert_cmd::Command;

fn xferbench() -> Command {
    let mut cmd = crate::common::xferbench();
    // Logging is off unless asked for: the user's environment must not decide.
    cmd.env_remove("RUST_LOG").env_remove("XFERBENCH_LOG");
    cmd
}

#[test]
fn the_bash_completion_knows_the_subcommands_and_their_flags() {
    let out = xferbench().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(script.contains("run"), "{script}");
    assert!(script.contains("--transport"), "{script}");
}

#[test]
fn every_shell_gets_a_script() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = xferbench().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        assert!(!out.stdout.is_empty(), "{shell}");
    }
    xferbench().args(["completions", "tcsh"]).assert().code(2);
}

/// The page's first request after the apostrophe-string preamble (`.ie`/`.el`, which
/// clap_mangen puts before everything).
fn first_request(page: &str) -> &str {
    page.lines()
        .find(|l| !l.starts_with(".ie ") && !l.starts_with(".el "))
        .unwrap_or_default()
}

#[test]
fn man_out_writes_a_page_per_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    xferbench()
        .args(["man", "--out"])
        .arg(dir.path())
        .assert()
        .success();
    for page in ["xferbench.1", "xferbench-run.1", "xferbench-warp-serve.1"] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        assert!(first_request(&text).starts_with(".TH "), "{page}:\n{text}");
    }
    let run = std::fs::read_to_string(dir.path().join("xferbench-run.1")).unwrap();
    assert!(run.contains("transport"), "{run}");
    let hidden = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("__"))
        .count();
    assert_eq!(hidden, 0, "no pages for the hidden process roles");
}

#[test]
fn man_without_out_prints_the_main_page() {
    let out = xferbench().arg("man").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        first_request(&text).starts_with(".TH xferbench 1"),
        "{text}"
    );
}

const RUN: [&str; 15] = [
    "run", "stream", "-t", "pipe", "-s", "64", "-n", "100", "-r", "1", "-w", "0", "--peer",
    "process", "-q",
];

#[test]
fn verbose_logs_the_peer_start_to_stderr_and_silence_is_the_default() {
    let out = xferbench().arg("-v").args(RUN).output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("started peer process"), "{err}");
    assert!(err.contains("INFO"), "{err}");
    // The peer process logs at the same level, to the same stderr.
    assert!(err.contains("peer process serving"), "{err}");
    assert!(!err.contains("DEBUG"), "-v is info only: {err}");

    let out = xferbench().args(RUN).output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("peer"), "no logs without -v: {err}");
}

#[test]
fn vv_and_rust_log_select_debug() {
    let out = xferbench().arg("-vv").args(RUN).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("DEBUG") && err.contains("spawned child process"),
        "{err}"
    );

    let out = xferbench()
        .env("RUST_LOG", "xferbench_lab::peer=info")
        .args(RUN)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("started peer process"), "{err}");
    assert!(
        !err.contains("visiting point"),
        "only the peer module: {err}"
    );
}
