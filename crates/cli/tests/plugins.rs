//! Plugin transports end to end: the examples pass `check`; bad plugin files are
//! usage errors naming the file; fault-injecting wrappers are caught as lost or
//! corrupt; a plugin that crashes or hangs in either process fails its point like a
//! dead peer, keeps the finished points and leaves no queue behind; results record
//! the plugin's build, and `compare` tells builds apart.
//!
//! The C plugins are built here with the one-line commands of their READMEs; the
//! tests skip, saying why, when no C compiler (or, for ZeroMQ and nng, no libzmq or
//! nng headers) is installed. CI installs them.

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

fn xferbench() -> Command {
    crate::common::xferbench()
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds a plugin once per test process: `cc -shared -fPIC -O2 -I include EXTRA...
/// -o lib<name>.so SOURCES LIBS`. `None` (after saying why) when it cannot be built
/// here for want of a compiler or a library's headers.
fn build(name: &str, sources: &[&str], extra: &[&str], libs: &[&str]) -> Option<PathBuf> {
    static BUILT: OnceLock<Mutex<HashMap<String, Option<PathBuf>>>> = OnceLock::new();
    let built = BUILT.get_or_init(|| Mutex::new(HashMap::new()));
    let mut built = built.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(name) {
        return p.clone();
    }
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("plugins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join(format!("lib{name}.so"));
    let out = std::process::Command::new("cc")
        .current_dir(root())
        .args([
            "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-I", "include",
        ])
        .args(extra)
        .arg("-o")
        .arg(&lib)
        .args(sources)
        .args(libs)
        .output();
    let result = match out {
        Err(e) => {
            println!("skipped: no C compiler (cc: {e}); install gcc");
            None
        }
        Ok(o) if !o.status.success() => {
            let stderr = String::from_utf8_lossy(&o.stderr);
            if stderr.contains("zmq.h") {
                println!("skipped: no libzmq headers; apt-get install libzmq3-dev");
                None
            } else if stderr.contains("nng/nng.h") {
                println!("skipped: no nng headers; apt-get install libnng-dev");
                None
            } else {
                panic!("building {name} failed:\n{stderr}");
            }
        }
        Ok(_) => Some(lib),
    };
    built.insert(name.to_string(), result.clone());
    result
}

fn pipe_plugin() -> Option<PathBuf> {
    build("xb_pipe", &["examples/plugins/pipe/pipe.c"], &[], &[])
}

fn posix_mq_plugin() -> Option<PathBuf> {
    build(
        "xb_posix_mq",
        &["examples/plugins/posix-mq/posix_mq.c"],
        &[],
        &["-lrt"],
    )
}

fn zeromq_plugin() -> Option<PathBuf> {
    build(
        "xb_zeromq",
        &["examples/plugins/zeromq/zeromq.c"],
        &[],
        &["-lzmq"],
    )
}

fn nng_plugin() -> Option<PathBuf> {
    build("xb_nng", &["examples/plugins/nng/nng.c"], &[], &["-lnng"])
}

fn faulty_plugin() -> Option<PathBuf> {
    build(
        "xb_faulty",
        &["crates/cli/tests/plugins/faulty.c"],
        &["-I", "examples/plugins/posix-mq"],
        &["-lrt"],
    )
}

/// The Rust example, built by cargo as a member of the workspace, in the target
/// directory cargo builds into (`CARGO_TARGET_DIR` when set, as the build below
/// inherits it).
fn seqpacket_plugin() -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root().join(dir),
        None => root().join("target"),
    };
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let lib = target.join(profile).join("libxb_seqpacket.so");
    if !lib.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        cmd.current_dir(root())
            .args(["build", "-q", "-p", "xb-seqpacket"]);
        if profile == "release" {
            cmd.arg("--release");
        }
        assert!(
            cmd.status().unwrap().success(),
            "cargo build -p xb-seqpacket"
        );
    }
    lib
}

fn plugin(lib: &Path, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("plugin:{}:{n}", lib.display()),
        None => format!("plugin:{}", lib.display()),
    }
}

fn stderr_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout_json(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            stderr_of(o)
        )
    })
}

/// A run of one short stream point (plus `args`), peers as processes.
fn run_stream(transports: &str, args: &[&str]) -> std::process::Output {
    xferbench()
        .args([
            "run", "stream", "-t", transports, "-s", "64", "-r", "1", "-w", "0",
        ])
        .args(["--no-limits", "-q", "--no-history"])
        .args(args)
        .output()
        .unwrap()
}

/// Held by the tests that run the nng example, so that one's socket files are not
/// taken for the other's leftovers, and by those whose plugins hold many POSIX
/// queues at once: every queue of this user counts against one RLIMIT_MSGQUEUE,
/// private IPC namespaces included, so two of them side by side can exceed it.
static SHARED: Mutex<()> = Mutex::new(());

#[test]
fn the_example_plugins_pass_check() {
    let _tmp = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    let mut words = vec![plugin(&seqpacket_plugin(), None)];
    for lib in [
        pipe_plugin(),
        posix_mq_plugin(),
        zeromq_plugin(),
        nng_plugin(),
    ]
    .into_iter()
    .flatten()
    {
        words.push(plugin(&lib, None));
    }
    let out = xferbench()
        .args(["check", "--json", "-t", &words.join(",")])
        .output()
        .unwrap();
    let doc = stdout_json(&out);
    let failed: Vec<&Value> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "fail")
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let checked: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["transport"].as_str().unwrap())
        .collect();
    assert!(checked.contains(&"seqpacket"), "{checked:?}");
}

#[test]
fn the_built_in_transports_pass_check() {
    let out = xferbench()
        .args([
            "check",
            "-t",
            "pipe,unix,shm",
            "--only",
            "integrity,peer-death,ordered-delivery",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", stderr_of(&out));
    assert!(stdout.contains("9 checks: 9 passed"), "{stdout}");
}

#[test]
fn every_bad_plugin_file_is_a_usage_error_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a library\n").unwrap();
    let empty = dir.path().join("empty.so");
    std::fs::write(&empty, "").unwrap();
    let mut cases: Vec<(String, &str)> = vec![
        (
            dir.path().join("missing.so").display().to_string(),
            "no such file",
        ),
        (text.display().to_string(), "not an ELF file"),
        (empty.display().to_string(), "the file is empty"),
        (dir.path().display().to_string(), "is a directory"),
    ];
    let object = dir.path().join("object.o");
    let compiled = std::process::Command::new("cc")
        .current_dir(root())
        .args(["-c", "-fPIC", "-I", "include", "-o"])
        .arg(&object)
        .arg("examples/plugins/pipe/pipe.c")
        .status();
    if compiled.is_ok_and(|s| s.success()) {
        cases.push((object.display().to_string(), "relocatable object"));
    }
    let bad = |case: &str| {
        build(
            &format!("bad_{}", case.to_lowercase()),
            &["crates/cli/tests/plugins/bad.c"],
            &[&format!("-DCASE_{case}")],
            &[],
        )
    };
    let broken = [
        ("NO_ENTRY", "no entry symbol `xferbench_plugin_v1`"),
        ("NULL_DESCRIPTION", "returned no description"),
        ("FUTURE_ABI", "built for ABI revision 99"),
        ("NO_TRANSPORTS", "describes no transport"),
        ("DUPLICATE_TRANSPORT", "declared twice"),
        ("BUILTIN_NAME", "taken by a built-in transport"),
        ("BAD_NAME", "must be [a-z0-9]"),
        ("NULL_SEND", "`send` is NULL"),
        ("ZERO_COPY_WITHOUT_LOAN", "XB_ZERO_COPY but `loan` is NULL"),
        (
            "DEFAULT_NOT_ACCEPTED",
            "the default \"ten\" is not accepted",
        ),
        (
            "DEFAULT_OUT_OF_RANGE",
            "the default \"100\" is not accepted",
        ),
        ("MIN_ABOVE_MAX", "min 10 is above max 1"),
        ("DUPLICATE_PARAM", "parameter `depth` is declared twice"),
        (
            "ENUM_DEFAULT_NOT_A_CHOICE",
            "the default \"nap\" is not accepted",
        ),
        ("UNKNOWN_KIND", "unknown kind 42"),
        ("RESERVED_PARAM", "one of xferbench's own axes"),
        (
            "CRASHING_CONSTRUCTOR",
            "crashed the process that describes it",
        ),
    ];
    for (case, problem) in broken {
        if let Some(lib) = bad(case) {
            cases.push((lib.display().to_string(), problem));
        }
    }
    for (path, problem) in &cases {
        for args in [
            vec!["run", "stream", "-n", "10", "-q", "--no-history"],
            vec!["check"],
            vec!["list"],
        ] {
            let out = xferbench()
                .args(&args)
                .args(["-t", &format!("plugin:{path}")])
                .output()
                .unwrap();
            let err = stderr_of(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?} {path}: {err}");
            assert!(
                err.contains(path.as_str()),
                "{args:?}: the file is not named: {err}"
            );
            assert!(
                err.contains(problem),
                "{args:?} {path}: expected {problem:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}

#[test]
fn plugin_points_record_the_machines_load_like_built_ins() {
    // The plugin rig once watched the window only when counters were asked for, so
    // its points had no `contention` and the table showed "others' CPU" as `-`.
    let Some(lib) = pipe_plugin() else { return };
    let out = run_stream(
        &format!("pipe,{}", plugin(&lib, None)),
        &["-n", "2000", "--json"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc = stdout_json(&out);
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        let name = &p["params"]["transport"];
        let c = &p["contention"];
        assert!(c.is_object(), "{name}: no contention: {p}");
        assert!(c["others_cpus"].is_number(), "{name}: {c}");
        for r in p["runs"].as_array().unwrap() {
            assert!(r["contention"].is_object(), "{name}: a run without it: {r}");
        }
    }
}

/// The detail of the first check of a `check --json` that failed (exit 5).
fn first_failure(out: &std::process::Output) -> String {
    let doc = stdout_json(out);
    assert_eq!(out.status.code(), Some(5), "{doc}");
    doc["results"][0]["detail"]
        .as_str()
        .unwrap_or_else(|| panic!("no detail: {doc}"))
        .to_string()
}

#[test]
fn a_recv_that_returns_a_byte_count_is_told_why_a_1_byte_message_reads_as_closed() {
    let Some(lib) = faulty_plugin() else { return };
    let out = xferbench()
        .args(["check", "-t", &plugin(&lib, Some("count"))])
        .args(["--only", "ordered-delivery", "--json"])
        .output()
        .unwrap();
    let detail = first_failure(&out);
    assert!(
        detail.contains("returns 1, which is XB_CLOSED, for a 1-byte message"),
        "{detail}"
    );
}

#[test]
fn a_recv_that_returns_a_byte_count_is_named_in_run_too() {
    let Some(lib) = faulty_plugin() else { return };
    let count = plugin(&lib, Some("count"));
    // 1-byte messages: the peer's (stream) or the driver's (pingpong) recv returns
    // 1, XB_CLOSED, while messages are still expected.
    for workload in ["stream", "pingpong"] {
        let out = xferbench()
            .args(["run", workload, "-t", &count, "-s", "1", "-n", "1000"])
            .args(["-r", "1", "-w", "0", "--no-limits", "-q", "--no-history"])
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{workload}: {err}");
        assert!(
            err.contains("returns 1, which is XB_CLOSED, for a 1-byte message"),
            "{workload}: {err}"
        );
    }
    // Longer messages: the length is an unknown status, named as the length.
    let out = xferbench()
        .args(["run", "pingpong", "-t", &count, "-s", "64", "-n", "1000"])
        .args(["-r", "1", "-w", "0", "--no-limits", "-q", "--no-history"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("returned the unknown status 64") && err.contains("the message's length"),
        "{err}"
    );
}

/// The files named `xb-faulty-leak-*` in /tmp and /dev/shm now.
fn faulty_leaks() -> std::collections::BTreeSet<PathBuf> {
    ["/tmp", "/dev/shm"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|d| d.flatten())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("xb-faulty-leak-")
        })
        .map(|e| e.path())
        .collect()
}

/// Removes what the faulty plugin left on the host since `before`; returns it.
fn remove_faulty_leaks(before: &std::collections::BTreeSet<PathBuf>) -> Vec<PathBuf> {
    let new: Vec<PathBuf> = faulty_leaks().difference(before).cloned().collect();
    for p in &new {
        let _ = std::fs::remove_file(p);
    }
    new
}

#[test]
fn a_plugin_that_leaves_files_fails_check_naming_them_and_run_warns() {
    let Some(lib) = faulty_plugin() else { return };
    let leak = plugin(&lib, Some("leak"));
    let before = faulty_leaks();
    for (place, dir) in [("tmp", "/tmp"), ("shm", "/dev/shm")] {
        let out = xferbench()
            .args(["check", "-t", &leak, "-p", &format!("leak={place}")])
            .args(["--only", "round-trips,integrity", "--json"])
            .output()
            .unwrap();
        let doc = stdout_json(&out);
        let on_host = remove_faulty_leaks(&before);
        assert_eq!(out.status.code(), Some(5), "{place}: {doc}");
        for r in doc["results"].as_array().unwrap() {
            let detail = r["detail"].as_str().unwrap();
            assert_eq!(r["status"], "fail", "{place}: {detail}");
            let named = format!("left behind: {dir}/xb-faulty-leak-");
            assert!(detail.contains(&named), "{place}: {detail}");
            // In a private namespace nothing reaches the host.
            if !detail.contains("watched by snapshot") {
                assert!(on_host.is_empty(), "{place}: left on the host: {on_host:?}");
            }
        }
    }
    // SysV IPC objects are named when a private namespace holds them (and vanish
    // with it); without one they would outlast the test, so it stops there.
    let out = xferbench()
        .args([
            "check",
            "-t",
            &leak,
            "-p",
            "leak=tmp",
            "--only",
            "round-trips",
        ])
        .args(["--json"])
        .output()
        .unwrap();
    remove_faulty_leaks(&before);
    let namespace = !stdout_json(&out)
        .to_string()
        .contains("watched by snapshot");
    if namespace {
        let out = xferbench()
            .args([
                "check",
                "-t",
                &leak,
                "-p",
                "leak=sysv",
                "--only",
                "round-trips",
            ])
            .args(["--json"])
            .output()
            .unwrap();
        let detail = first_failure(&out);
        assert!(
            detail.contains("left behind: SysV shared memory (key 0, id "),
            "{detail}"
        );
    }
    // The same plugin leaving nothing passes, with no word of leftovers.
    let out = xferbench()
        .args(["check", "-t", &leak, "-p", "leak=none"])
        .args(["--only", "round-trips,integrity", "--json"])
        .output()
        .unwrap();
    let doc = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{doc}");
    assert!(!doc.to_string().contains("left behind"), "{doc}");
    // `run` warns, naming the files, and keeps the point.
    let out = run_stream(&leak, &["-n", "1000", "--json"]);
    let left = remove_faulty_leaks(&before);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: plugin transport `leak` left behind 2 file(s)")
            && err.contains("/tmp/xb-faulty-leak-"),
        "{err}"
    );
    assert_eq!(left.len(), 2, "{left:?}");
    let doc = stdout_json(&out);
    let warnings = doc["points"][0]["warnings"].to_string();
    assert!(warnings.contains("/tmp/xb-faulty-leak-"), "{warnings}");
    let out = run_stream(&leak, &["-n", "1000", "-p", "leak=none"]);
    assert!(remove_faulty_leaks(&before).is_empty());
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("left behind"), "{err}");
}

#[test]
fn without_a_namespace_check_watches_by_snapshot_and_says_so() {
    let Some(lib) = faulty_plugin() else { return };
    let leak = plugin(&lib, Some("leak"));
    let before = faulty_leaks();
    let out = xferbench()
        .env("XFERBENCH_CHECK_NAMESPACES", "0")
        .args(["check", "-t", &leak, "--only", "round-trips", "--json"])
        .output()
        .unwrap();
    let left = remove_faulty_leaks(&before);
    let detail = first_failure(&out);
    assert!(
        detail.contains("left behind: /tmp/xb-faulty-leak-")
            && detail.contains("watched by snapshot")
            && detail.contains("XFERBENCH_CHECK_NAMESPACES=0"),
        "{detail}"
    );
    assert_eq!(left.len(), 2, "{left:?}");
}

#[test]
fn results_record_the_defaults_a_transport_ran_with() {
    let Some(lib) = posix_mq_plugin() else { return };
    let out = run_stream(
        &format!("shm,{}", plugin(&lib, None)),
        &["-n", "2000", "-p", "depth=4", "--json"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc = stdout_json(&out);
    let points = doc["points"].as_array().unwrap();
    let of = |t: &str| {
        points
            .iter()
            .find(|p| p["params"]["transport"] == t)
            .unwrap_or_else(|| panic!("no {t} point: {doc}"))
    };
    // The plugin's parameter given on the command line is in `params`, the one left
    // at its default in `defaults`, as the result stores values.
    let mq = of("posix-mq");
    assert_eq!(mq["params"]["depth"], "4", "{mq}");
    assert!(mq["defaults"].get("depth").is_none(), "{mq}");
    assert_eq!(mq["defaults"]["max_message"], "4096", "{mq}");
    // A built-in's too.
    let shm = of("shm");
    assert_eq!(shm["defaults"]["wait"], "hybrid", "{shm}");
}

#[test]
fn plugin_parameters_are_listed_swept_and_checked_like_built_ins() {
    let Some(mq) = posix_mq_plugin() else { return };
    let out = xferbench()
        .args(["list", "-t", &plugin(&mq, None)])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr_of(&out));
    for want in [
        "posix-mq",
        "depth",
        "max_message",
        "default 4 KiB",
        "from 1 to 65536",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    let out = run_stream(&plugin(&mq, None), &["-n", "200", "-p", "depth=lots"]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("depth") && err.contains("whole number"),
        "{err}"
    );
    let out = run_stream(
        &format!("pipe,{}", plugin(&mq, None)),
        &["-n", "2000", "-p", "depth=2,8", "--json"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc = stdout_json(&out);
    let points: Vec<String> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{} {}",
                p["params"]["transport"].as_str().unwrap(),
                p["params"]["depth"].as_str().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(points, ["pipe -", "posix-mq 2", "posix-mq 8"]);
}

#[test]
fn results_record_the_plugins_build_and_compare_tells_builds_apart() {
    let Some(a) = pipe_plugin() else { return };
    // A second build of the same source: another file, another SHA-256.
    let Some(b) = build(
        "xb_pipe_o0",
        &["examples/plugins/pipe/pipe.c"],
        &["-O0"],
        &[],
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (lib, name) in [(&a, "a.json"), (&b, "b.json")] {
        let f = dir.path().join(name);
        let out = run_stream(
            &plugin(lib, None),
            &["-n", "5000", "--export-json", f.to_str().unwrap()],
        );
        assert!(out.status.success(), "{}", stderr_of(&out));
        files.push(f);
    }
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let rec = &doc["context"]["plugins"][0];
    assert_eq!(rec["transport"], "c-pipe");
    assert_eq!(rec["plugin"], "xb-pipe");
    assert_eq!(rec["version"], "1.0.0");
    assert_eq!(rec["path"], a.canonicalize().unwrap().to_str().unwrap());
    assert_eq!(rec["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(doc["points"][0]["params"]["transport"], "c-pipe");
    let out = xferbench()
        .args([
            "compare",
            files[0].to_str().unwrap(),
            files[1].to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("plugin transport `c-pipe`: BASE xb-pipe 1.0.0 (sha256")
            && text.contains("libxb_pipe_o0.so"),
        "{text}"
    );
    // Both builds in one interleaved run: told apart by their files' SHA-256.
    let out = run_stream(
        &format!("{},{}", plugin(&a, None), plugin(&b, None)),
        &["-n", "2000", "--interleave", "--json"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc = stdout_json(&out);
    let names: Vec<&str> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["params"]["transport"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2);
    assert!(
        names.iter().all(|n| n.starts_with("c-pipe@")) && names[0] != names[1],
        "{names:?}"
    );
}

#[test]
fn a_plugin_that_drops_messages_fails_check_and_verify_as_lost() {
    let Some(lib) = faulty_plugin() else { return };
    let drop = plugin(&lib, Some("drop"));
    let out = xferbench()
        .args(["check", "-t", &drop, "--only", "integrity", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    let doc = stdout_json(&out);
    let detail = doc["results"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("100 lost"), "{detail}");
    let out = run_stream(&drop, &["-n", "10000", "--verify", "--json"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    let doc = stdout_json(&out);
    assert_eq!(doc["points"][0]["integrity"]["lost"], 10);
    assert_eq!(doc["points"][0]["integrity"]["corrupt"], 0);
}

#[test]
fn a_plugin_that_flips_a_byte_is_named_corrupt() {
    let Some(lib) = faulty_plugin() else { return };
    let flip = plugin(&lib, Some("flip"));
    let out = xferbench()
        .args(["check", "-t", &flip, "--only", "integrity", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr_of(&out));
    let detail = stdout_json(&out)["results"][0]["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        detail.contains("100 corrupt") && detail.contains("0 lost"),
        "{detail}"
    );
    let out = run_stream(&flip, &["-n", "10000", "--verify", "--json"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    let doc = stdout_json(&out);
    assert_eq!(doc["points"][0]["integrity"]["corrupt"], 10);
    assert_eq!(doc["points"][0]["integrity"]["lost"], 0);
}

/// Runs xferbench in a private IPC namespace with its message queue file system
/// mounted, and returns its output and the queues left when it ended. `None` when
/// namespaces are not available here.
fn run_watching_queues(args: &[String]) -> Option<(std::process::Output, Vec<String>)> {
    let usable = std::process::Command::new("unshare")
        .args(["--ipc", "--mount", "--propagation", "private", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !usable {
        println!("skipped the leftover check: cannot unshare an IPC namespace here");
        return None;
    }
    let mq = tempfile::tempdir().unwrap();
    let script = format!(
        "mount -t mqueue none '{dir}' || exit 97; \"$@\"; status=$?; ls -A '{dir}' > '{dir}.left'; exit $status",
        dir = mq.path().display()
    );
    let out = crate::common::isolate(&mut std::process::Command::new("unshare"))
        .args([
            "--ipc",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            &script,
            "sh",
        ])
        .arg(crate::common::BIN)
        .args(args)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(97), "mount -t mqueue failed");
    let listing = PathBuf::from(format!("{}.left", mq.path().display()));
    let left = std::fs::read_to_string(&listing)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let _ = std::fs::remove_file(listing);
    Some((out, left))
}

#[test]
fn a_plugin_that_crashes_in_either_process_fails_like_a_dead_peer_and_leaves_nothing() {
    let Some(lib) = faulty_plugin() else { return };
    for side in ["send", "recv"] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let args: Vec<String> = [
            "run",
            "stream",
            "-t",
            &format!("pipe,{}", plugin(&lib, Some("crash"))),
            "-s",
            "64",
            "-n",
            "20000",
            "-r",
            "1",
            "-w",
            "0",
            "-p",
            "after=5000",
            "-p",
            &format!("side={side}"),
            "--no-limits",
            "-q",
            "--no-history",
            "--export-json",
            json.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (out, left) = match run_watching_queues(&args) {
            Some(r) => r,
            None => {
                let o = xferbench().args(&args).output().unwrap();
                (o, Vec::new())
            }
        };
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "side={side}: {err}");
        assert!(
            err.contains("killed by signal 11 (SIGSEGV)"),
            "side={side}: the signal is not named: {err}"
        );
        let who = if side == "send" {
            "the measuring process of plugin transport `crash`"
        } else {
            "peer 0"
        };
        assert!(err.contains(who), "side={side}: expected {who:?}: {err}");
        // The call it crashed in, and the message: the first past `after`.
        let call = format!("plugin call in flight: {side} of message 5001");
        assert!(err.contains(&call), "side={side}: expected {call:?}: {err}");
        assert!(err.contains("1 finished point(s) kept"), "{err}");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(doc["points"].as_array().unwrap().len(), 1);
        assert_eq!(doc["points"][0]["params"]["transport"], "pipe");
        assert!(left.is_empty(), "side={side}: queues left behind: {left:?}");
    }
}

#[test]
fn a_plugin_that_hangs_is_named_after_the_timeout() {
    let Some(lib) = faulty_plugin() else { return };
    for side in ["send", "recv"] {
        let out = run_stream(
            &plugin(&lib, Some("hang")),
            &[
                "-n",
                "20000",
                "-p",
                "after=2000",
                "-p",
                &format!("side={side}"),
                "--timeout",
                "1",
            ],
        );
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "side={side}: {err}");
        assert!(
            err.contains("no progress on channel 0 for 1 s")
                || err.contains("nothing moved for 1.0 s"),
            "side={side}: the timeout is not named: {err}"
        );
        // The call the hanging side is in, and its message: the first past `after`.
        let call = format!("{side} of message 2001");
        assert!(
            err.contains(&format!("in plugin calls: {call}")) || err.contains(&format!("; {call}")),
            "side={side}: expected {call:?}: {err}"
        );
    }
}

#[test]
fn check_names_the_call_a_plugin_crashed_or_hung_in_and_stops_at_the_first_with_fail_fast() {
    let Some(lib) = faulty_plugin() else { return };
    let _queues = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    for (fault, side, found) in [
        ("crash", "connect", "crashed in plugin call connect"),
        ("hang", "connect", "in plugin call connect"),
        ("hang", "recv", "recv of message"),
    ] {
        let started = std::time::Instant::now();
        let args: Vec<String> = [
            "check",
            "-t",
            &plugin(&lib, Some(fault)),
            "-p",
            &format!("side={side}"),
            "--fail-fast",
            "--timeout",
            "1s",
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // A crash in connect leaves the listener's queues (no peer ever took them):
        // in a private IPC namespace they go with it.
        let out = match run_watching_queues(&args) {
            Some((out, _)) => out,
            None => xferbench().args(&args).output().unwrap(),
        };
        let doc = stdout_json(&out);
        assert_eq!(out.status.code(), Some(5), "{fault}: {doc}");
        let results = doc["results"].as_array().unwrap();
        // Every check before the first failure passed or did not apply; none after.
        let first = results
            .iter()
            .position(|r| r["status"] == "fail")
            .unwrap_or_else(|| panic!("{fault}: no check failed: {doc}"));
        assert_eq!(
            first + 1,
            results.len(),
            "{fault}: checks ran past the failure: {doc}"
        );
        let detail = results[first]["detail"].as_str().unwrap();
        assert!(
            detail.contains(found),
            "{fault}: expected {found:?} in {detail:?}"
        );
        // A hang is declared after 20 s + 2 × 1 s + 10 s; the run stops there.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{fault}"
        );
    }
}

#[test]
fn zero_copy_plugins_move_messages_in_place_through_the_abi() {
    let Some(lib) = faulty_plugin() else { return };
    let zc = plugin(&lib, Some("zc"));
    let out = xferbench()
        .args([
            "check",
            "-t",
            &zc,
            "--only",
            "zero-copy-delivery,zero-copy-echo",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    for workload in ["stream", "pingpong"] {
        let out = xferbench()
            .args([
                "run", workload, "-t", &zc, "-s", "64", "-n", "5000", "-r", "1", "-w", "0",
            ])
            .args([
                "-p",
                "zero_copy=false,true",
                "--verify",
                "--json",
                "--no-limits",
                "-q",
            ])
            .args(["--no-history"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{workload}: {}", stderr_of(&out));
        let doc = stdout_json(&out);
        assert_eq!(doc["points"].as_array().unwrap().len(), 2, "{workload}");
        assert_eq!(doc["points"][1]["params"]["zero_copy"], "true");
    }
    // A copying plugin refuses --zero-copy by name.
    let Some(pipe) = pipe_plugin() else { return };
    let out = run_stream(&plugin(&pipe, None), &["-n", "100", "--zero-copy"]);
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`c-pipe` has no zero-copy mode"), "{err}");
}

#[test]
fn plugin_runs_take_thread_peers_and_many_channels() {
    let Some(mq) = posix_mq_plugin() else { return };
    let _queues = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    let out = run_stream(
        &plugin(&mq, None),
        &[
            "-n", "5000", "-c", "1,3", "--peer", "thread", "--verify", "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc = stdout_json(&out);
    assert_eq!(doc["points"].as_array().unwrap().len(), 2);
    assert_eq!(doc["points"][1]["integrity"]["checked"], 15000);
    assert_eq!(doc["context"]["settings"]["peer"], "thread");
}

#[test]
fn a_plugin_built_against_header_revision_1_keeps_loading_and_running() {
    let Some(lib) = build(
        "xb_revision1",
        &["crates/cli/tests/plugins/revision1.c"],
        &[],
        &[],
    ) else {
        return;
    };
    let out = xferbench()
        .args(["list", "-t", &plugin(&lib, None)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("c-pipe"));
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("r.json");
    let out = run_stream(
        &plugin(&lib, None),
        &[
            "-n",
            "5000",
            "--verify",
            "--export-json",
            f.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    assert_eq!(doc["context"]["plugins"][0]["abi_version"], 1);
}

/// A plugin transport runs the open-loop workload like a built-in one: no ABI
/// change, the intended time travels in the payload.
#[test]
fn plugins_run_the_load_workload() {
    let Some(pipe) = pipe_plugin() else { return };
    let Some(zmq) = zeromq_plugin() else { return };
    let out = xferbench()
        .args(["run", "load", "-t"])
        .arg(format!("{},{}", plugin(&pipe, None), plugin(&zmq, None)))
        .args([
            "-s",
            "64",
            "--rate",
            "2k",
            "-r",
            "1",
            "-w",
            "0",
            "--duration",
            "0.1",
        ])
        .args(["--verify", "--json", "--no-limits", "-q", "--no-history"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let doc = stdout_json(&out);
    for p in doc["points"].as_array().unwrap() {
        assert!(p["summary"]["latency_p99_ns"]["median"].as_f64().unwrap() > 0.0);
        assert_eq!(p["integrity"]["corrupt"], 0);
        let achieved = p["summary"]["messages_per_s"]["median"].as_f64().unwrap();
        assert!(achieved > 1_000.0 && achieved < 2_100.0, "{achieved}");
    }
}

/// `list` shows a plugin's parameters as it shows the built-ins': each choice of an
/// enumerated parameter with its own help.
#[test]
fn list_shows_a_plugins_choices_with_their_help() {
    let Some(pipe) = pipe_plugin() else { return };
    let out = xferbench()
        .args(["list", "-t", &plugin(&pipe, None)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("poll   non-blocking descriptors and poll(): every timeout honoured"),
        "{text}"
    );
    let out = xferbench()
        .args(["list", "--json", "-t", &plugin(&pipe, None)])
        .output()
        .unwrap();
    let doc = stdout_json(&out);
    let pipe = doc["transports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "c-pipe")
        .unwrap();
    let wait = pipe["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "wait")
        .unwrap();
    assert_eq!(wait["choices"][1]["name"], "poll");
    assert!(
        wait["choices"][1]["help"]
            .as_str()
            .unwrap()
            .contains("poll()")
    );
}

/// The nng example carries verified messages both ways (pingpong) and one way
/// (stream), peers as processes, and leaves no socket file of its own in /tmp.
#[test]
fn the_nng_plugin_carries_verified_messages_and_leaves_nothing_in_tmp() {
    let Some(lib) = nng_plugin() else { return };
    let _tmp = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    let ours = || -> Vec<String> {
        std::fs::read_dir("/tmp")
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("xb-nng-"))
            .collect()
    };
    let before = ours();
    for workload in ["pingpong", "stream"] {
        let out = xferbench()
            .args(["run", workload, "-t", &plugin(&lib, None)])
            .args([
                "-s", "64,4KiB", "-n", "2000", "-c", "1,2", "-r", "1", "-w", "0",
            ])
            .args(["--verify", "--json", "--no-limits", "-q", "--no-history"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{workload}: {}", stderr_of(&out));
        let doc = stdout_json(&out);
        let points = doc["points"].as_array().unwrap();
        assert_eq!(points.len(), 4, "{workload}");
        for p in points {
            assert_eq!(p["integrity"]["lost"], 0, "{workload}: {p:#}");
            assert_eq!(p["integrity"]["corrupt"], 0, "{workload}: {p:#}");
        }
        let version = doc["context"]["plugins"][0]["version"].as_str().unwrap();
        assert!(version.contains(" nng "), "{version}");
    }
    let left: Vec<String> = ours().into_iter().filter(|n| !before.contains(n)).collect();
    assert!(left.is_empty(), "left in /tmp: {left:?}");
}
