//! The exit statuses of `crates/cli/src/exit.rs` (and `docs/cli.md`), checked for
//! every subcommand: success, bad usage, a failure, and the subcommand's own codes.
//! Signals (128 + N) are checked by the robustness tests of `cli.rs`.

mod common;

use assert_cmd::Command;

fn xferbench() -> Command {
    crate::common::xferbench()
}

/// `(what, arguments, expected status)`.
const CASES: &[(&str, &[&str], i32)] = &[
    ("list", &["list"], 0),
    ("list: an unknown flag", &["list", "--bogus"], 2),
    (
        "run",
        &[
            "run", "stream", "-t", "pipe", "-s", "64", "-n", "100", "-r", "1", "-w", "0", "--peer",
            "thread", "-q",
        ],
        0,
    ),
    ("run: a bad size", &["run", "stream", "-s", "big"], 2),
    (
        "run: a drift threshold of zero",
        &["run", "stream", "--drift-threshold", "0"],
        2,
    ),
    (
        "study: a negative drift threshold",
        &[
            "study",
            "rpmsg",
            "--allow-debug",
            "--quick",
            "--drift-threshold=-5",
        ],
        2,
    ),
    ("limits", &["limits", "--quick"], 0),
    ("limits: an unknown flag", &["limits", "--bogus"], 2),
    (
        "run: an unknown transport",
        &["run", "stream", "-t", "carrier-pigeon"],
        2,
    ),
    (
        "run: a point that fails",
        &[
            "run",
            "stream",
            "-t",
            "tcp",
            "-p",
            "bind=192.0.2.1",
            "-s",
            "64",
            "-n",
            "10",
            "-r",
            "1",
            "-w",
            "0",
            "--peer",
            "thread",
            "-q",
        ],
        1,
    ),
    (
        "run: corrupt data",
        &[
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
            "--verify",
            "--inject-corruption",
            "10",
            "-q",
        ],
        3,
    ),
    (
        "study: an unknown study",
        &["study", "hashtable-of-doom", "--allow-debug"],
        2,
    ),
    (
        "study: no runs",
        &["study", "rpmsg", "--allow-debug", "--runs", "0"],
        2,
    ),
    (
        "study: --full where the plan is already whole",
        &["study", "warp-pipe", "--allow-debug", "--full"],
        2,
    ),
    (
        "study: --full with --quick",
        &["study", "rpmsg", "--allow-debug", "--full", "--quick"],
        2,
    ),
    (
        "compare: unreadable files",
        &["compare", "/nonexistent/a.json", "/nonexistent/b.json"],
        2,
    ),
    (
        "ab",
        &["ab", "--runs", "2", "--no-callgrind", "true", "true"],
        0,
    ),
    (
        "ab: one run is no test",
        &["ab", "--runs", "1", "true", "true"],
        2,
    ),
    (
        "ab: a failing command",
        &["ab", "--runs", "2", "--no-callgrind", "true", "exit 3"],
        1,
    ),
    ("profile: nothing to profile", &["profile"], 2),
    (
        "rpmsg",
        &[
            "rpmsg",
            "-c",
            "1",
            "-s",
            "64",
            "--transfer",
            "640",
            "-r",
            "1",
            "-q",
        ],
        0,
    ),
    ("rpmsg: a packet too large", &["rpmsg", "-s", "1000"], 2),
    (
        "warp serve: a bad address",
        &["warp", "serve", "--listen", "nowhere"],
        2,
    ),
    (
        "warp client: no server",
        &["warp", "client", "--connect", "127.0.0.1:1", "-n", "1"],
        1,
    ),
    (
        "warp client: a bad size",
        &["warp", "client", "--connect", "127.0.0.1:1", "-s", "6"],
        2,
    ),
    ("completions", &["completions", "bash"], 0),
    (
        "completions: an unknown shell",
        &["completions", "teletype"],
        2,
    ),
    ("man", &["man"], 0),
];

#[test]
fn every_subcommand_exits_with_its_documented_status() {
    let mut wrong = Vec::new();
    for (what, args, code) in CASES {
        let out = xferbench().args(*args).output().expect("the binary runs");
        if out.status.code() != Some(*code) {
            wrong.push(format!(
                "{what}: expected {code}, got {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A negative number given to a numeric flag is refused by that flag's own check,
/// with a message naming the flag, not read as an unknown argument.
#[test]
fn a_negative_number_is_refused_by_name_on_every_kind_of_numeric_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "stream", "--size", "-5"], "--size"),
        (&["run", "stream", "-s", "-5"], "--size"),
        (&["run", "stream", "-c", "-1"], "--channels"),
        (&["run", "stream", "--runs", "-3"], "--runs"),
        (&["run", "stream", "-n", "-10"], "--count"),
        (
            &["study", "rpmsg", "--allow-debug", "--runs", "-1"],
            "--runs",
        ),
        (
            &["study", "warp-pipe", "--allow-debug", "--timeout", "-1"],
            "--timeout",
        ),
        (&["ab", "--runs", "-2", "true", "true"], "--runs"),
        (
            &["run", "stream", "--drift-threshold", "-5"],
            "--drift-threshold",
        ),
    ];
    for (args, flag) in cases {
        let out = xferbench().args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(flag) && !stderr.contains("unexpected argument"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn compare_exits_0_without_and_4_with_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.json");
    xferbench()
        .args([
            "run", "stream", "-t", "pipe", "-s", "64", "-n", "2000", "-r", "3", "-w", "0",
        ])
        .args(["--peer", "thread", "-q", "--export-json"])
        .arg(&base)
        .assert()
        .code(0);
    xferbench()
        .arg("compare")
        .arg(&base)
        .arg(&base)
        .assert()
        .code(0);
    // The measured document with set throughputs: BASE steady around 100 MB/s, NEW a
    // third of it, so the verdict does not depend on this machine's noise.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    let with = |scale: f64| {
        let mut d = doc.clone();
        for (i, run) in d["points"][0]["runs"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
        {
            run["figures"]["throughput_bytes_per_s"] =
                (scale * 1e8 * (1.0 + 0.01 * i as f64)).into();
        }
        d.to_string()
    };
    let (steady, slower) = (
        dir.path().join("steady.json"),
        dir.path().join("slower.json"),
    );
    std::fs::write(&steady, with(1.0)).unwrap();
    std::fs::write(&slower, with(1.0 / 3.0)).unwrap();
    xferbench()
        .arg("compare")
        .arg(&steady)
        .arg(&steady)
        .assert()
        .code(0);
    xferbench()
        .arg("compare")
        .arg(&steady)
        .arg(&slower)
        .assert()
        .code(4);
}

#[test]
fn profile_stops_on_sigterm_and_keeps_what_it_recorded() {
    if common::skip_without_perf_record() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let child = crate::common::std_xferbench()
        .args(["profile", "--out"])
        .arg(dir.path())
        .args(["--", "sh", "-c", "while :; do :; done"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(dir.path().join("flamegraph.svg").is_file(), "{stderr}");
    assert!(dir.path().join("top-functions.md").is_file());
}

/// `--only`: a malformed filter is a usage error naming the flag;
/// a filter that keeps no point fails the study and says so.
#[test]
fn a_study_subset_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let out = xferbench()
        .args([
            "study",
            "rpmsg",
            "--allow-debug",
            "--only",
            "group",
            "--quick",
            "-q",
            "--no-limits",
            "--out",
        ])
        .arg(dir.path().join("a"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--only: `group` is not KEY=VALUE"), "{err}");
    let out = xferbench()
        .args([
            "study",
            "rpmsg",
            "--allow-debug",
            "--only",
            "group=nothing",
            "--quick",
            "-q",
            "--no-limits",
            "--out",
        ])
        .arg(dir.path().join("b"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("group=nothing: no point of the plan matches"),
        "{err}"
    );
}

#[test]
fn a_study_refuses_an_unoptimised_build_unless_allowed() {
    if !cfg!(debug_assertions) {
        // A release build of the tests runs studies without the flag.
        return;
    }
    let out = xferbench()
        .args(["study", "perf-stat", "--quick", "--out"])
        .arg(tempfile::tempdir().unwrap().path().join("never"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unoptimised build (profile debug") && err.contains("--allow-debug"),
        "{err}"
    );
}
