//! The `xferbench` binary driven as a user would, one module per topic.

mod common;

mod support {
    use assert_cmd::Command;
    use std::path::Path;

    pub fn xferbench() -> Command {
        crate::common::xferbench()
    }

    /// Held by tests whose verdict rests on timing, so they do not compete with each
    /// other for the CPUs.
    pub fn timing_lock() -> std::sync::MutexGuard<'static, ()> {
        static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
        LOCK.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn read_json(path: &Path) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).expect("file written"))
            .expect("valid JSON")
    }
}

mod usage {
    use super::support::xferbench;
    use predicates::prelude::*;

    #[test]
    fn help_shows_every_option_with_its_default() {
        xferbench()
            .args(["run", "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("[default: shm,pipe,unix,tcp]"))
            .stdout(predicate::str::contains("[default: 64,4KiB,64KiB]"))
            .stdout(predicate::str::contains("--export-csv"))
            .stdout(predicate::str::contains("Exit status"));
    }

    #[test]
    fn list_names_transports_workloads_and_parameters() {
        xferbench()
            .arg("list")
            .assert()
            .success()
            .stdout(predicate::str::contains("pipe_size").and(predicate::str::contains("nodelay")))
            .stdout(predicate::str::contains("pingpong"))
            // A choice's own help, under its parameter.
            .stdout(predicate::str::is_match(r"\n +spin +busy-poll").unwrap());
        let out = xferbench().args(["list", "--json"]).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let wait = &v["transports"][0]["params"][0];
        assert_eq!(wait["name"], "wait");
        assert_eq!(wait["choices"][0]["name"], "spin");
        assert!(
            wait["choices"][0]["help"]
                .as_str()
                .unwrap()
                .starts_with("busy-poll")
        );
        let names: Vec<&str> = v["transports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["shm", "pipe", "unix", "tcp", "iceoryx2", "rpmsg"]);
        let studies: Vec<&str> = v["studies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            studies,
            ["rpmsg", "warp-pipe", "hashtable", "sis8300", "perf-stat"]
        );
    }

    #[test]
    fn bad_values_name_the_flag_and_what_it_accepts() {
        let cases: &[(&[&str], &str)] = &[
            (&["--size", "big"], "--size"),
            (&["--size", "0"], "at least 1"),
            (
                &["--size", "2GiB"],
                "at most 1 GiB: 2 GiB is above the maximum",
            ),
            (&["--size", "1TiB"], "1 TiB is above the maximum"),
            (
                &["-s", "64", "-p", "size=128"],
                "-p size: --size 64 gives it too",
            ),
            (&["--duration", "a fortnight"], "--duration"),
            (&["--size", "4..1"], "backwards"),
            (
                &["--transport", "carrier-pigeon"],
                "choose from: shm, pipe, unix, tcp",
            ),
            (&["--channels", "0"], "--channels"),
            (&["--count", "0"], "--count"),
            (&["--duration=-1"], "--duration"),
            (&["--duration", "NaN"], "--duration"),
            (&["--runs", "0"], "--runs"),
            (&["-p", "pipe_size"], "NAME=LIST"),
            (&["-p", "nosuch=1"], "pipe takes pipe_size"),
            (
                &["-t", "pipe", "-p", "pipe_sz=1MiB"],
                "no selected transport takes parameter `pipe_sz` (did you mean `pipe_size`?)",
            ),
            (
                &["--transport", "pip"],
                "unknown transport `pip` (did you mean `pipe`?)",
            ),
            (&["--transport", "pip"], "or plugin:PATH[:NAME]"),
            (
                &["--size", "64kb"],
                "did you mean 64kB (decimal) or 64KiB (binary)?",
            ),
            (
                &["--size", "1..64kib:x4"],
                "did you mean 64kB (decimal) or 64KiB (binary)?",
            ),
            (&["-t", "pipe", "-p", "pipe_size=lots"], "pipe_size"),
            (&["-t", "tcp", "-p", "nodelay=maybe"], "true or false"),
            (&["--verify", "--size", "8"], "at least 16 bytes"),
            (&["--timeout", "0"], "--timeout"),
        ];
        for (args, needle) in cases {
            xferbench()
                .args(["run", "stream"])
                .args(*args)
                .assert()
                .code(2)
                .stderr(predicate::str::contains(*needle))
                .stderr(predicate::str::contains("panicked").not());
        }
    }

    #[test]
    fn an_unknown_workload_is_a_usage_error() {
        xferbench()
            .args(["run", "teleport"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("stream"));
    }

    #[test]
    fn a_closed_stdout_is_not_an_error() {
        // `xferbench list | head -c 1`: the pipe closes under our writes.
        let mut child = crate::common::std_xferbench()
            .arg("list")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

mod outputs {
    use super::support::{read_json, xferbench};
    use predicates::prelude::*;

    /// A point records what `capacity=auto` and `batch=auto` chose, in every format: a
    /// small ring for a ping-pong of 64 B, 4 MiB for a stream, and the batch; explicit
    /// values choose nothing.
    #[test]
    fn results_record_what_auto_parameters_chose() {
        let dir = tempfile::tempdir().unwrap();
        let run = |workload: &str, extra: &[&str]| {
            let json = dir.path().join(format!("{workload}.json"));
            let csv = dir.path().join(format!("{workload}.csv"));
            let md = dir.path().join(format!("{workload}.md"));
            xferbench()
                .args([
                    "run", workload, "-t", "shm", "-s", "64", "-n", "2000", "-r", "1",
                ])
                .args(["-w", "0", "--no-limits", "--no-history", "--export-json"])
                .arg(&json)
                .arg("--export-csv")
                .arg(&csv)
                .arg("--export-md")
                .arg(&md)
                .args(extra)
                .assert()
                .success()
                .stdout(
                    predicate::str::contains("(auto)").count(if extra.is_empty() { 2 } else { 0 }),
                );
            let csv = std::fs::read_to_string(csv).unwrap();
            let md = std::fs::read_to_string(md).unwrap();
            (read_json(&json), csv, md)
        };
        let (pp, csv, md) = run("pingpong", &[]);
        let ring: u64 = pp["points"][0]["chosen"]["capacity"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(ring.is_power_of_two() && ring < 4 << 20, "{ring}");
        assert!(
            csv.lines().next().unwrap().contains("chosen_capacity"),
            "{csv}"
        );
        assert!(md.contains("(auto)"), "{md}");
        // The round trips' clock is named: the counter exactly where the kernel keeps
        // time with it.
        let source = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .unwrap_or_default();
        let clock = &pp["context"]["capabilities"]["trip_clock"];
        if source.trim() != "tsc" {
            assert_eq!(clock, "monotonic", "{source}");
        } else {
            assert!(clock == "tsc" || clock == "monotonic", "{clock}");
        }
        assert_eq!(pp["points"][0]["chosen"]["batch"], "16384");
        let (stream, _, _) = run("stream", &[]);
        assert_eq!(stream["points"][0]["chosen"]["capacity"], "4194304");
        assert_eq!(stream["points"][0]["chosen"]["batch"], "16384");
        let fixed = ["-p", "capacity=64KiB", "-p", "batch=4KiB"];
        let (fixed, csv, _) = run("pingpong", &fixed);
        assert!(fixed["points"][0].get("chosen").is_none(), "{fixed}");
        assert!(!csv.contains("chosen_"), "{csv}");
    }

    /// Every output path is checked before anything runs: the command fails at once,
    /// names the flag and the path as given, and measures nothing.
    #[test]
    fn a_bad_output_path_is_refused_before_anything_is_measured() {
        let dir = tempfile::tempdir().unwrap();
        let history = dir.path().join("h.sqlite");
        let missing = dir.path().join("missing");
        let a_file = dir.path().join("a-file");
        std::fs::write(&a_file, "").unwrap();
        let cases: Vec<(Vec<String>, String)> = vec![
            (vec!["run".into(), "stream".into()], "--export-html".into()),
            (vec!["run".into(), "stream".into()], "--export-csv".into()),
            (vec!["run".into(), "stream".into()], "--export-md".into()),
            (vec!["run".into(), "stream".into()], "--export-json".into()),
            (vec!["run".into(), "stream".into()], "--jsonl".into()),
            (vec!["rpmsg".into()], "--export-json".into()),
            (vec!["rpmsg".into()], "--jsonl".into()),
            (
                vec!["ab".into(), "true".into(), "true".into()],
                "--export-json".into(),
            ),
        ];
        for (args, flag) in cases {
            let given = missing.join("r.out");
            let start = std::time::Instant::now();
            xferbench()
                .env("XFERBENCH_HISTORY", &history)
                .args(&args)
                .arg(&flag)
                .arg(&given)
                .assert()
                .code(2)
                .stderr(predicate::str::contains(format!(
                    "error: {flag} {}: the folder {} does not exist",
                    given.display(),
                    missing.display()
                )))
                .stderr(
                    predicate::str::contains("jsonl")
                        .not()
                        .or(predicate::str::contains("--jsonl")),
                );
            assert!(
                start.elapsed().as_secs() < 5,
                "{args:?} {flag}: measured first?"
            );
        }
        // The journal beside --export-json: named, and said to be derived.
        let json = dir.path().join("r.json");
        std::fs::create_dir(dir.path().join("r.json.jsonl")).unwrap();
        xferbench()
            .env("XFERBENCH_HISTORY", &history)
            .args(["run", "stream", "--export-json"])
            .arg(&json)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "error: --export-json {}: cannot write its JSON Lines journal",
                json.display()
            )));
        // Folders: --out and --profile=DIR under a file.
        for args in [
            vec![
                "study".to_string(),
                "rpmsg".into(),
                "--quick".into(),
                "--allow-debug".into(),
                "--out".into(),
            ],
            vec!["profile".to_string(), "--out".into()],
        ] {
            xferbench()
                .env("XFERBENCH_HISTORY", &history)
                .args(&args)
                .arg(a_file.join("sub"))
                .args(["--", "true"].iter().filter(|_| args[0] == "profile"))
                .assert()
                .code(2)
                .stderr(
                    predicate::str::contains("--out")
                        .and(predicate::str::contains("is not a folder")),
                );
        }
        xferbench()
            .env("XFERBENCH_HISTORY", &history)
            .args(["run", "stream"])
            .arg(format!("--profile={}", a_file.display()))
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("--profile").and(predicate::str::contains("not a folder")),
            );
        assert!(!history.exists(), "nothing was measured or recorded");
    }

    #[test]
    fn every_combination_is_a_point_in_every_export() {
        let dir = tempfile::tempdir().unwrap();
        let (j, c, m) = (
            dir.path().join("r.json"),
            dir.path().join("r.csv"),
            dir.path().join("r.md"),
        );
        xferbench()
            .args([
                "run",
                "stream",
                "-t",
                "shm,pipe,unix,tcp",
                "-s",
                "64,2KiB",
                "-n",
                "2000",
                "-r",
                "2",
                "-w",
                "0",
            ])
            .arg("--export-json")
            .arg(&j)
            .arg("--export-csv")
            .arg(&c)
            .arg("--export-md")
            .arg(&m)
            .assert()
            .success()
            .stdout(predicate::str::contains("throughput"));
        let doc = read_json(&j);
        assert_eq!(doc["schema_version"], 1);
        assert_eq!(doc["outcome"]["status"], "complete");
        let points = doc["points"].as_array().unwrap();
        assert_eq!(points.len(), 8);
        for p in points {
            assert_eq!(p["runs"].as_array().unwrap().len(), 2);
            let runs = p["runs"].as_array().unwrap();
            for r in runs {
                // Each channel delivered every message, and the bytes add up.
                assert_eq!(r["messages"], 2000);
                assert_eq!(
                    r["bytes"].as_u64().unwrap(),
                    2000 * p["size_bytes"].as_u64().unwrap()
                );
            }
            assert!(
                p["summary"]["throughput_bytes_per_s"]["median"]
                    .as_f64()
                    .unwrap()
                    > 0.0
            );
        }
        let csv = std::fs::read_to_string(&c).unwrap();
        assert_eq!(csv.lines().count(), 9, "header + 8 rows");
        assert!(
            csv.lines()
                .next()
                .unwrap()
                .contains("throughput_bytes_per_s_median")
        );
        let md = std::fs::read_to_string(&m).unwrap();
        // The points' table; the sections after it (warnings, machine limits) have
        // rows of their own.
        let table = md.split("\n## ").next().unwrap();
        assert!(md.contains("## Machine limits"), "{md}");
        let rows = table.lines().filter(|l| {
            ["| shm", "| pipe", "| unix", "| tcp"]
                .iter()
                .any(|t| l.starts_with(t))
        });
        assert_eq!(rows.count(), 8);
        // The journal is removed once the JSON export is written.
        assert!(!dir.path().join("r.json.jsonl").exists());
    }

    #[test]
    fn pingpong_with_process_peers_reports_latency_and_cpu_of_every_peer() {
        let out = xferbench()
            .args([
                "run", "pingpong", "-t", "unix", "-s", "64", "-c", "1,2", "--peer", "process",
                "--json",
            ])
            .args(["-n", "500", "-r", "2", "-w", "0"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let points = doc["points"].as_array().unwrap();
        assert_eq!(points.len(), 2);
        for p in points {
            let channels = p["channels"].as_u64().unwrap() as usize;
            for q in [
                "latency_p50_ns",
                "latency_p90_ns",
                "latency_p99_ns",
                "latency_p999_ns",
                "latency_max_ns",
            ] {
                assert!(p["summary"][q]["median"].as_f64().unwrap() > 0.0, "{q}");
            }
            let s = &p["summary"];
            assert!(
                s["latency_p50_ns"]["median"].as_f64() <= s["latency_p99_ns"]["median"].as_f64()
            );
            for r in p["runs"].as_array().unwrap() {
                let cpu = r["cpu"].as_array().unwrap();
                assert_eq!(
                    cpu.len(),
                    1 + channels,
                    "main plus one entry per peer process"
                );
                let pids: std::collections::BTreeSet<u64> =
                    cpu.iter().map(|c| c["pid"].as_u64().unwrap()).collect();
                assert_eq!(pids.len(), 1 + channels, "distinct processes");
                for c in cpu {
                    assert!(c["window_s"].as_f64().unwrap() > 0.0);
                    assert!(c["cpus_utilised"].as_f64().unwrap() >= 0.0);
                }
                assert_eq!(
                    r["latency"]["count"].as_u64().unwrap(),
                    500 * channels as u64
                );
            }
        }
    }

    #[test]
    fn per_channel_rows_and_sweeps_of_transport_parameters() {
        xferbench()
            .args([
                "run",
                "stream",
                "-t",
                "pipe",
                "-s",
                "4KiB",
                "-c",
                "2",
                "-p",
                "pipe_size=64KiB,256KiB",
            ])
            .args([
                "-n",
                "1000",
                "-r",
                "1",
                "-w",
                "0",
                "--peer",
                "thread",
                "--per-channel",
            ])
            .assert()
            .success()
            .stdout(
                predicate::str::contains("pipe_size=64 KiB")
                    .and(predicate::str::contains("pipe_size=256 KiB")),
            )
            .stdout(predicate::str::contains("channel 1"));
    }
}

mod verify {
    use super::support::{read_json, xferbench};
    use predicates::prelude::*;

    #[test]
    fn a_million_messages_per_transport_arrive_clean() {
        let dir = tempfile::tempdir().unwrap();
        for t in ["pipe", "unix", "tcp"] {
            let j = dir.path().join(format!("{t}.json"));
            xferbench()
                .args([
                    "run", "stream", "-t", t, "-s", "64", "-c", "2", "-n", "500000", "-r", "1",
                    "-w", "0", "--verify", "-q",
                ])
                .arg("--export-json")
                .arg(&j)
                .assert()
                .success();
            let integrity = &read_json(&j)["points"][0]["integrity"];
            assert_eq!(integrity["checked"], 1_000_000, "{t}");
            for k in ["lost", "duplicated", "reordered", "corrupt"] {
                assert_eq!(integrity[k], 0, "{t} {k}");
            }
        }
    }

    #[test]
    fn injected_corruption_is_counted_and_fails_the_run() {
        for workload in ["stream", "pingpong"] {
            for peer in ["thread", "process"] {
                xferbench()
                    .args([
                        "run", workload, "-t", "unix", "-s", "64", "-n", "10000", "-r", "1", "-w",
                        "0", "--verify",
                    ])
                    .args(["--peer", peer, "--inject-corruption", "100"])
                    .assert()
                    .code(3)
                    .stdout(predicate::str::contains("100 corrupt"))
                    .stderr(predicate::str::contains("--verify found"));
            }
        }
    }
}

mod robustness {
    use super::common::{children, regions_left_by};
    use super::support::read_json;
    use rustix::process::{Pid, Signal, kill_process};
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use crate::common::RUN_BOUND;

    fn spawn(args: &[&str], json: &Path) -> Child {
        crate::common::std_xferbench()
            .args(args)
            .arg("--export-json")
            .arg(json)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Waits until the JSON Lines journal holds `n` finished points.
    fn wait_points(journal: &Path, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let text = std::fs::read_to_string(journal).unwrap_or_default();
            if text
                .lines()
                .filter(|l| l.starts_with("{\"type\":\"point\""))
                .count()
                >= n
            {
                return;
            }
            assert!(Instant::now() < deadline, "no point finished within 60 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether child `pid` is a peer that has started: it runs the `__peer` role. A
    /// child between its fork and its exec still shows its parent's command line, and
    /// one stopped there would hold its parent in `spawn` (the vfork of
    /// `posix_spawn` waits for the exec): no peer protocol could ever see that.
    fn is_started_peer(pid: u32) -> bool {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.split(|&b| b == 0).any(|arg| arg == b"__peer"))
    }

    /// Waits until `pid` has `n` peers that have started ([`is_started_peer`]).
    fn wait_peers(pid: u32, n: usize) -> Vec<u32> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let c: Vec<u32> = children(pid)
                .into_iter()
                .filter(|&c| is_started_peer(c))
                .collect();
            if c.len() >= n {
                return c;
            }
            assert!(Instant::now() < deadline, "peer processes did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn signal(pid: u32, sig: Signal) {
        let _ = kill_process(Pid::from_raw(pid as i32).unwrap(), sig);
    }

    fn gone(pid: u32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(s) if s.contains(") Z ") => {}
                Ok(_) => {}
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    fn killed_peer(transport: &str, fail_fast: bool) {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let mut args = vec![
            "run",
            "stream",
            "-t",
            transport,
            "-s",
            "64,128,256",
            "-d",
            "1",
            "-r",
            "1",
            "-w",
            "0",
            "--peer",
            "process",
        ];
        if fail_fast {
            args.push("--fail-fast");
        }
        let child = spawn(&args, &json);
        let pid = child.id();
        wait_points(&dir.path().join("r.json.jsonl"), 1);
        // The second point is running: kill its peer.
        let peers = wait_peers(pid, 1);
        for p in &peers {
            signal(*p, Signal::KILL);
        }
        let out = crate::common::wait_within(child, RUN_BOUND);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("was killed by signal 9 (SIGKILL)"),
            "{stderr}"
        );
        assert!(stderr.contains("peer 0"), "{stderr}");
        let doc = read_json(&json);
        let sizes: Vec<u64> = doc["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["size_bytes"].as_u64().unwrap())
            .collect();
        if fail_fast {
            // The sweep ended at the dead point.
            assert!(stderr.contains("1 finished point(s) kept"), "{stderr}");
            assert_eq!(sizes, [64]);
            assert!(doc.get("failed").is_none());
        } else {
            // The dead point is recorded with its cause, and the last point ran.
            assert!(stderr.contains("2 finished point(s) kept"), "{stderr}");
            assert_eq!(sizes, [64, 256]);
            assert_eq!(doc["failed"][0]["params"]["size"], "128");
            assert!(
                doc["failed"][0]["error"]
                    .as_str()
                    .unwrap()
                    .contains("SIGKILL")
            );
        }
        assert_eq!(doc["outcome"]["status"], "failed");
        assert!(
            doc["outcome"]["error"]
                .as_str()
                .unwrap()
                .contains("SIGKILL")
        );
        assert_eq!(regions_left_by(pid), Vec::<String>::new());
    }

    #[test]
    fn a_killed_pipe_peer_fails_its_point_clearly_and_the_sweep_goes_on() {
        killed_peer("pipe", false);
    }

    #[test]
    fn a_killed_shm_peer_fails_its_point_clearly_and_the_sweep_goes_on() {
        killed_peer("shm", false);
    }

    #[test]
    fn fail_fast_ends_the_sweep_at_a_killed_peer() {
        killed_peer("pipe", true);
    }

    fn hung_peer(transport: &str, params: &[&str]) {
        // Stopping the peer must not race its start-up on a loaded machine.
        let _quiet = super::support::timing_lock();
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let mut args = vec![
            "run", "stream", "-t", transport, "-s", "64,128", "-d", "1", "-r", "1", "-w", "0",
        ];
        args.extend(["--timeout", "1", "--peer", "process"]);
        args.extend(params);
        let child = spawn(&args, &json);
        let pid = child.id();
        wait_points(&dir.path().join("r.json.jsonl"), 1);
        let peers = wait_peers(pid, 1);
        for p in &peers {
            signal(*p, Signal::STOP);
        }
        let out = crate::common::wait_within(child, RUN_BOUND);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        // Stopped mid-point, the supervisor sees no progress; stopped between points
        // (a race on a loaded machine), the peer protocol's own timeout catches it.
        assert!(
            stderr.contains("no progress") || stderr.contains("did not"),
            "{stderr}"
        );
        assert_eq!(read_json(&json)["points"].as_array().unwrap().len(), 1);
        for p in peers {
            assert!(gone(p), "stopped peer {p} was not reaped");
        }
        assert_eq!(regions_left_by(pid), Vec::<String>::new());
    }

    #[test]
    fn a_hung_unix_peer_is_detected_within_the_timeout() {
        hung_peer("unix", &[]);
    }

    #[test]
    fn a_hung_shm_peer_is_detected_within_the_timeout() {
        hung_peer("shm", &["-p", "wait=block"]);
    }

    /// Stops a sweep with `sig` after its first point and checks that it ended as
    /// Ctrl-C does: exit 128 + the signal, the export written with the finished
    /// points, every peer and region gone.
    fn stopped_by(transport: &str, sig: Signal, code: i32) {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let child = spawn(
            &[
                "run",
                "pingpong",
                "-t",
                transport,
                "-s",
                "64,128,256",
                "-c",
                "2",
                "-d",
                "1",
                "-r",
                "1",
                "-w",
                "0",
                "--peer",
                "process",
            ],
            &json,
        );
        let pid = child.id();
        wait_points(&dir.path().join("r.json.jsonl"), 1);
        let peers = wait_peers(pid, 2);
        signal(pid, sig);
        let out = crate::common::wait_within(child, RUN_BOUND);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        assert!(stderr.contains("interrupted"), "{stderr}");
        let doc = read_json(&json);
        assert_eq!(doc["outcome"]["status"], "interrupted");
        assert!(!doc["points"].as_array().unwrap().is_empty());
        for p in peers {
            assert!(gone(p), "peer {p} outlived the run");
        }
        assert_eq!(regions_left_by(pid), Vec::<String>::new());
    }

    /// Ctrl-Z then `fg`, as a shell does it: the whole process group stopped, then
    /// continued, longer than `--timeout`. The run goes on (a pause is not a hang);
    /// the point that ran across the stop says so.
    #[test]
    fn a_point_that_ran_while_the_process_was_stopped_says_so() {
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let child = crate::common::std_xferbench()
            .args(["run", "pingpong", "-t", "shm"])
            .args(["-s", "64,128,256", "-d", "2"])
            .args(["-r", "1", "-w", "0", "--peer", "process", "--no-limits"])
            .args(["--timeout", "2", "--no-history", "--export-json"])
            .arg(&json)
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let group = Pid::from_raw(child.id() as i32).unwrap();
        wait_points(&dir.path().join("r.json.jsonl"), 1);
        // Into the second point's 2 s run: a stop that lands between two points (the
        // first journalled, the second not yet begun) pauses no point's runs, and
        // the run rightly flags none. On a loaded machine that gap lasts long enough
        // for the stop to land in it.
        std::thread::sleep(Duration::from_millis(500));
        rustix::process::kill_process_group(group, Signal::STOP).unwrap();
        std::thread::sleep(Duration::from_millis(2500));
        rustix::process::kill_process_group(group, Signal::CONT).unwrap();
        let out = crate::common::wait_within(child, RUN_BOUND);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let doc = read_json(&json);
        assert_eq!(doc["outcome"]["status"], "complete");
        let paused: Vec<bool> = doc["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["warnings"].to_string().contains("paused:"))
            .collect();
        // The first point finished before the stop; one of the others ran across it.
        assert_eq!(paused.len(), 3);
        assert!(!paused[0] && paused[1..].contains(&true), "{paused:?}");
        let warnings = doc["warnings"].to_string();
        assert!(
            warnings.contains("stopped and continued while"),
            "{warnings}"
        );
        assert!(stderr.contains("paused:"), "{stderr}");
    }

    #[test]
    fn ctrl_c_keeps_finished_points_and_reaps_every_tcp_peer() {
        stopped_by("tcp", Signal::INT, 130);
    }

    #[test]
    fn ctrl_c_keeps_finished_points_and_reaps_every_shm_peer_and_region() {
        stopped_by("shm", Signal::INT, 130);
    }

    #[test]
    fn sigterm_mid_sweep_writes_every_export_and_exits_143() {
        stopped_by("shm", Signal::TERM, 143);
    }

    #[test]
    fn sighup_stops_like_ctrl_c_with_129() {
        stopped_by("unix", Signal::HUP, 129);
    }

    #[test]
    fn a_stale_region_of_a_dead_run_is_removed_by_the_next_run() {
        // A pid that existed and is gone: a reaped child's.
        let mut dead = Command::new("true").spawn().unwrap();
        dead.wait().unwrap();
        let name = format!(
            "xferbench-u{}-p{}-0-dead",
            rustix::process::getuid().as_raw(),
            dead.id()
        );
        let path = std::path::Path::new("/dev/shm").join(&name);
        std::fs::write(&path, b"left behind by a crashed run").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = crate::common::std_xferbench()
            .args([
                "run", "stream", "-t", "shm", "-s", "64", "-n", "1000", "-r", "1", "-w", "0", "-q",
            ])
            .arg("--export-json")
            .arg(dir.path().join("r.json"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!path.exists(), "the stale region {name} is still there");
    }

    #[test]
    fn a_garbled_peer_command_stream_is_refused_cleanly() {
        let out = crate::common::std_xferbench()
            .arg("__peer")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(b"{not json\n")?;
                c.wait_with_output()
            })
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("internal role"));
    }
}

mod warp {
    use super::support::{read_json, xferbench};
    use predicates::prelude::*;

    #[test]
    fn list_names_the_warp_pipe_study() {
        xferbench()
            .arg("list")
            .assert()
            .success()
            .stdout(predicate::str::contains("Studies").and(predicate::str::contains("warp-pipe")));
    }

    #[test]
    fn bad_warp_flags_are_usage_errors_naming_the_flag() {
        xferbench()
            .args(["warp", "serve", "--bar1", "3000", "--port", "0"])
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("--bar1").and(predicate::str::contains("power of two")),
            );
        xferbench()
            .args(["warp", "serve", "--listen", "nowhere"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--listen"));
        xferbench()
            .args(["warp", "client", "--payload", "6"])
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("--size <BYTES>").and(predicate::str::contains(
                    "a multiple of 4 from 4 B to 4 KiB",
                )),
            );
        xferbench()
            .args(["warp", "client", "--channels", "0"])
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("--channels <N>")
                    .and(predicate::str::contains("at least 1")),
            );
        xferbench()
            .args(["kv", "client", "10", "0"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("INNER").and(predicate::str::contains("at least 1")));
        xferbench()
            .args(["kv", "serve", "--workers", "300"])
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("--workers").and(predicate::str::contains("at most 256")),
            );
        xferbench()
            .args(["warp", "client", "--crc", "crc64"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("bitwise"));
    }

    #[test]
    fn a_client_without_a_server_fails_clearly() {
        xferbench()
            .args([
                "warp",
                "client",
                "--connect",
                "127.0.0.1:1",
                "--iterations",
                "1",
            ])
            .assert()
            .code(1)
            .stderr(predicate::function(|e: &str| {
                // The run's one point failed; the cause said once, not once per layer
                // of the error chain.
                let e = e.trim();
                e.starts_with("error: point 1 (")
                    && e.ends_with("warp client: warp link: Connection refused (os error 111)")
                    && e.matches("Connection refused").count() == 1
                    && e.lines().count() == 1
            }));
    }

    #[test]
    fn a_server_that_never_answers_fails_the_client_within_its_timeout() {
        // Accepts the connection and says nothing.
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap().to_string();
        let hold = std::thread::spawn(move || server.accept().map(|(s, _)| s));
        let start = std::time::Instant::now();
        xferbench()
            .args(["warp", "client", "--connect", &addr, "--timeout", "300ms"])
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(1)
            .stderr(predicate::str::contains("warp link"));
        let took = start.elapsed();
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
        drop(hold.join());
    }

    #[test]
    fn profiling_a_missing_command_names_it_and_leaves_no_folder() {
        let dir = tempfile::tempdir().unwrap();
        xferbench()
            .current_dir(dir.path())
            .args(["profile", "--", "/nonexistent/cmd", "x"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "/nonexistent/cmd: no such command",
            ));
        xferbench()
            .current_dir(dir.path())
            .args(["profile", "--", "no-such-command-anywhere"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "no-such-command-anywhere: no such command",
            ));
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_profile_without_samples_says_why() {
        let _quiet = super::support::timing_lock();
        if super::tools::skip_without_perf() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        xferbench()
            .args(["profile", "--out"])
            .arg(dir.path().join("p"))
            .args(["--", "sleep", "0.2"])
            .assert()
            .success()
            .stderr(
                predicate::str::contains("too few samples")
                    .and(predicate::str::contains("off the CPU")),
            );
    }

    #[test]
    fn profiling_a_process_that_is_gone_says_so() {
        let dir = tempfile::tempdir().unwrap();
        xferbench()
            .args(["profile", "--pid", "999999", "--out"])
            .arg(dir.path().join("p"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--pid 999999: no such process"));
    }

    #[test]
    fn study_warp_pipe_quick_writes_results_tables_plots_and_summary() {
        // A study loads both CPUs: timing-sensitive tests wait for it.
        let _quiet = super::support::timing_lock();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("study");
        let assert = xferbench()
            .args([
                "study",
                "warp-pipe",
                "--allow-debug",
                "--quick",
                "--json",
                "--out",
            ])
            .arg(&out)
            .assert()
            .success();
        let printed: serde_json::Value =
            serde_json::from_slice(&assert.get_output().stdout).unwrap();
        for f in [
            "results.json",
            "summary.md",
            "original-workload.md",
            "original-workload.csv",
            "crc.md",
            "threads.md",
            "threads.csv",
            "payload.csv",
            "iterations.md",
            "instances.md",
            "io-model.md",
            "mock-reads.md",
            "crc-speed.md",
            "throughput-vs-threads.svg",
            "throughput-vs-payload.svg",
        ] {
            assert!(out.join(f).is_file(), "{f} written");
        }
        let doc = read_json(&out.join("results.json"));
        assert_eq!(printed, doc, "study --json prints results.json");
        assert_eq!(doc["schema_version"], 1);
        assert_eq!(doc["study"]["name"], "warp-pipe");
        assert_eq!(doc["outcome"]["status"], "complete");
        assert_eq!(doc["context"]["settings"]["interleave"], true);
        let points = doc["points"].as_array().unwrap();
        assert!(points.len() > 40);
        assert_eq!(doc["study"]["planned_points"], points.len());
        for p in points {
            // Two interleaved runs per point in --quick, every figure with a spread.
            assert_eq!(p["runs"].as_array().unwrap().len(), 2, "{}", p["params"]);
            if p["params"]["group"] == "crc-speed" {
                // The CRC's speed: a point of the plan whose figure is MB/s checksummed.
                assert!(p["summary"]["crc_mb_per_s"]["median"].as_f64().unwrap() > 0.0);
                continue;
            }
            assert!(
                p["summary"]["transactions_per_s"]["median"]
                    .as_f64()
                    .unwrap()
                    > 0.0
            );
            assert_eq!(p["summary"]["throughput_bytes_per_s"]["n"], 2);
            if p["params"]["ops"] != "read" {
                assert_eq!(p["integrity"]["corrupt"], 0, "{}", p["params"]);
                assert!(p["integrity"]["checked"].as_u64().unwrap() > 0);
            }
        }
        let crcs = points
            .iter()
            .filter(|p| p["params"]["group"] == "crc-speed");
        assert_eq!(crcs.count(), 3, "one CRC-speed point per implementation");
        let instances: Vec<_> = points
            .iter()
            .filter(|p| p["params"]["group"] == "instances" && p["params"]["instances"] == "4")
            .collect();
        assert!(!instances.is_empty());
        // Four client processes and the memory mock each report their CPU.
        assert_eq!(instances[0]["runs"][0]["cpu"].as_array().unwrap().len(), 6);
        // Compared with itself, every point is matched and tested, and nothing regressed.
        let cmp = xferbench()
            .arg("compare")
            .arg(&out)
            .arg(&out)
            .arg("--json")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let cmp: serde_json::Value = serde_json::from_slice(&cmp).unwrap();
        let rows = cmp["points"].as_array().unwrap();
        assert_eq!(rows.len(), points.len());
        assert!(rows.iter().all(|r| r["p_value"].is_number()), "{cmp}");
        assert_eq!(cmp["regressions"], 0);
        let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
        assert!(summary.contains("faster"), "{summary}");
        assert!(summary.contains("bitwise CRC accounts for"), "{summary}");
        let svg = std::fs::read_to_string(out.join("throughput-vs-threads.svg")).unwrap();
        assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"));
    }

    #[test]
    fn interleaved_runs_go_round_robin_and_the_order_is_recorded() {
        let out = xferbench()
            .args(["run", "stream", "-t", "pipe,unix", "-s", "64", "-n", "2000"])
            .args([
                "-r",
                "3",
                "-w",
                "1",
                "--peer",
                "thread",
                "--interleave",
                "--json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(doc["context"]["settings"]["interleave"], true);
        let order: Vec<Vec<u64>> = doc["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                p["runs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["sequence"].as_u64().unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(order, [[0, 2, 4], [1, 3, 5]]);
    }
}

/// Tools the perf tests need; a test without them prints why it skips.
mod tools {
    pub fn have(program: &str) -> bool {
        std::process::Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// True (after printing why) when perf cannot profile here.
    pub fn skip_without_perf() -> bool {
        match perf_usable() {
            Ok(()) => false,
            Err(why) => {
                println!("skipped: {why}");
                true
            }
        }
    }

    /// perf installed and allowed to profile our own processes.
    pub fn perf_usable() -> Result<(), String> {
        if !have("perf") {
            return Err("perf is not installed (apt-get install linux-perf)".into());
        }
        let ok = std::process::Command::new("perf")
            .args([
                "record",
                "-q",
                "-e",
                "cpu-clock",
                "-o",
                "/dev/null",
                "--",
                "true",
            ])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            Ok(())
        } else {
            Err("perf record is not permitted here (kernel.perf_event_paranoid)".into())
        }
    }
}

mod counters {
    use super::support::{read_json, xferbench};

    #[test]
    fn counters_cover_main_and_every_peer_process_and_say_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        xferbench()
            .args([
                "run", "stream", "-t", "pipe", "-s", "4KiB", "-c", "2", "-n", "20000",
            ])
            .args([
                "-r",
                "2",
                "-w",
                "0",
                "--quiet",
                "--counters",
                "--export-json",
            ])
            .arg(&json)
            .assert()
            .success();
        let doc = read_json(&json);
        let c = &doc["points"][0]["counters"];
        if c["total"]["task-clock"].is_null() {
            // Containers may refuse perf_event_open altogether; then it says so.
            assert!(c["unsupported"].to_string().contains("task-clock"), "{c}");
            return;
        }
        let roles: Vec<&str> = c["processes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["main", "peer0", "peer1"]);
        assert_eq!(c["source"], "perf_event");
        assert!(c["total"]["task-clock"]["median"].as_f64().unwrap() > 0.0);
        let pmu = doc["context"]["capabilities"]["pmu"].as_bool().unwrap();
        if !pmu {
            assert!(c["unsupported"].to_string().contains("instructions"));
            let notes = doc["warnings"].to_string();
            assert_eq!(notes.matches("no hardware PMU").count(), 1, "{notes}");
        }
        assert!(doc["points"][0]["runs"][0]["counters"]["processes"].is_array());
    }

    #[test]
    fn callgrind_counts_the_peers_deterministically() {
        let _quiet = super::support::timing_lock();
        if super::common::skip_without_valgrind() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let run = |name: &str| {
            let json = dir.path().join(name);
            xferbench()
                .args(["run", "stream", "-t", "pipe", "-s", "256", "-n", "2000"])
                .args(["-r", "1", "-w", "0", "--quiet", "--counters=callgrind"])
                .arg("--export-json")
                .arg(&json)
                .assert()
                .success();
            let doc = read_json(&json);
            let c = doc["points"][0]["counters"].clone();
            assert_eq!(c["simulated"], true, "{doc}");
            assert_eq!(c["processes"][0]["role"], "peer0");
            c["total"]["Ir"]["median"].as_f64().unwrap()
        };
        let (first, second) = (run("a.json"), run("b.json"));
        assert!(
            first > 2000.0,
            "at least one instruction per message: {first}"
        );
        let drift = (first - second).abs() / first;
        assert!(drift < 0.01, "callgrind counts {first} then {second}");
    }

    #[test]
    fn callgrind_with_thread_peers_is_a_usage_error() {
        xferbench()
            .args([
                "run",
                "stream",
                "-t",
                "pipe",
                "--peer",
                "thread",
                "--counters=callgrind",
            ])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("--peer process"));
    }
}

mod profiling {
    use super::support::xferbench;
    use predicates::prelude::*;

    fn check_outputs(dir: &std::path::Path) {
        let svg = std::fs::read_to_string(dir.join("flamegraph.svg")).unwrap();
        assert!(
            svg.starts_with("<?xml") || svg.starts_with("<svg"),
            "{}",
            &svg[..80]
        );
        assert!(
            svg.contains("xferbench"),
            "the flame graph names our functions"
        );
        let ss: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("profile.speedscope.json")).unwrap(),
        )
        .unwrap();
        xferbench_probes::profile::speedscope::validate(&ss).unwrap();
        let md = std::fs::read_to_string(dir.join("top-functions.md")).unwrap();
        assert!(md.contains("| 1 |"), "{md}");
        assert!(dir.join("top-functions.csv").exists());
    }

    #[test]
    fn profile_of_a_short_run_writes_a_flame_graph() {
        let _quiet = super::support::timing_lock();
        if super::tools::skip_without_perf() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("prof");
        let bin = std::path::PathBuf::from(crate::common::BIN);
        xferbench()
            .args(["profile", "--out"])
            .arg(&out)
            .arg("--")
            .arg(bin)
            .args(["run", "stream", "-t", "pipe", "-s", "4KiB", "-d", "0.2"])
            .args(["-r", "1", "-w", "0", "--peer", "thread", "-q"])
            .assert()
            .success();
        check_outputs(&out);
    }

    #[test]
    fn run_profiles_a_named_peer() {
        let _quiet = super::support::timing_lock();
        if super::tools::skip_without_perf() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("prof");
        xferbench()
            .args([
                "run", "stream", "-t", "pipe", "-s", "4KiB", "-d", "0.3", "-r", "1",
            ])
            .args(["-w", "0", "-q", "--profile-peer", "peer0"])
            .arg(format!("--profile={}", out.display()))
            .assert()
            .success();
        check_outputs(&out.join("point-0"));
        let top = std::fs::read_to_string(out.join("point-0/top-functions.md")).unwrap();
        assert!(top.contains("serve"), "the peer serves: {top}");
    }

    /// A `load` point is profiled like any other: its receiving peer serves.
    #[test]
    fn run_profiles_a_load_point_s_receiver() {
        let _quiet = super::support::timing_lock();
        if super::tools::skip_without_perf() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("prof");
        xferbench()
            .args(["run", "load", "-t", "pipe", "-s", "64", "--rate", "20k"])
            .args([
                "-d",
                "0.3",
                "-r",
                "1",
                "-w",
                "0",
                "-q",
                "--profile-peer",
                "peer0",
            ])
            .arg(format!("--profile={}", out.display()))
            .assert()
            .success();
        check_outputs(&out.join("point-0"));
        let top = std::fs::read_to_string(out.join("point-0/top-functions.md")).unwrap();
        assert!(top.contains("serve"), "the peer serves: {top}");
    }

    #[test]
    fn an_unknown_participant_is_named_with_the_choices() {
        if super::tools::skip_without_perf() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        xferbench()
            .args([
                "run", "stream", "-t", "pipe", "-n", "100", "-r", "1", "-w", "0", "-q",
            ])
            .args(["--profile-peer", "memory-mock"])
            .arg(format!("--profile={}", dir.path().display()))
            .assert()
            .code(1)
            .stderr(
                predicates::str::contains("memory-mock")
                    .and(predicates::str::contains("main, peer0")),
            );
    }

    #[test]
    fn study_profiles_every_remote_into_one_flame_graph() {
        let _quiet = super::support::timing_lock();
        if super::tools::skip_without_perf() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("study");
        // Three points, one per kind of notification, each recorded as the whole
        // study records it; every point of the quick plan runs in the rpmsg tests.
        xferbench()
            .args(["study", "rpmsg", "--allow-debug", "--quick"])
            .args(["--only", "group=variants", "--only", "channels=1"])
            .args(["--only", "buffers=copy", "--out"])
            .arg(&out)
            .args(["--profile-peer", "remote", "--profile"])
            .timeout(std::time::Duration::from_secs(600))
            .assert()
            .success()
            .stderr(predicates::str::contains("remote of the rpmsg study"));
        // The profile goes into the study folder by default, one recording per link.
        check_outputs(&out.join("profile"));
        assert!(out.join("profile/point-1/perf.data").exists());
        // Sampling may miss any one function; some frame of the link is always there.
        let stacks = std::fs::read_to_string(out.join("profile/stacks.folded")).unwrap();
        assert!(
            stacks.contains("xferbench_transports::rpmsg"),
            "the remote runs the RPMsg link: {}",
            &stacks[..stacks.len().min(2000)]
        );
    }

    #[test]
    fn a_study_names_its_participants() {
        xferbench()
            .args([
                "study",
                "rpmsg",
                "--allow-debug",
                "--quick",
                "--profile-peer",
                "memory-mock",
            ])
            .arg("--profile")
            .assert()
            .code(2)
            .stderr(predicates::str::contains("participants are main, remote"));
    }

    #[test]
    fn profile_without_a_command_is_a_usage_error() {
        xferbench().arg("profile").assert().code(2);
    }
}

mod ab {
    use super::support::{read_json, timing_lock, xferbench};
    use predicates::prelude::*;

    /// A shell loop of `n` iterations: deterministic work for `sh`.
    fn spin(n: u32) -> String {
        format!("i=0; while [ $i -lt {n} ]; do i=$((i+1)); done")
    }

    #[test]
    fn four_times_the_work_is_more_instructions_and_a_regression() {
        // Four times, not twice: on a machine busy with the other tests a 30 ms shell
        // loop's wall time spreads by a third, and twice the work is not always
        // significant at 1 % in 12 runs.
        let _quiet = timing_lock();
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("ab.json");
        let out = xferbench()
            .args(["ab", "--runs", "12", "--threshold", "10", "--export-json"])
            .arg(&json)
            .arg(spin(20000))
            .arg(spin(80000))
            .assert()
            .code(4)
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("time with B") && text.contains("which is faster"),
            "{text}"
        );
        let r = read_json(&json);
        assert_eq!(r["ab"]["faster"], "A", "{text}");
        let pmu = xferbench_lab::context::pmu_available();
        if pmu || super::common::have_valgrind() {
            assert!(
                r["ab"]["diagnosis"]
                    .as_str()
                    .unwrap()
                    .starts_with("more instructions"),
                "{text}"
            );
            let d = r["ab"]["instructions_difference"].as_f64().unwrap();
            assert!(d > 2.5 && d < 3.5, "about four times the instructions: {d}");
        } else {
            println!("instructions not checked: no PMU and no valgrind");
        }
    }

    #[test]
    fn callgrind_passes_keep_to_their_budget_and_say_so() {
        if super::common::skip_without_valgrind() || xferbench_lab::context::pmu_available() {
            return;
        }
        let _quiet = timing_lock();
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("ab.json");
        // Two 50 ms sleeps: about 5 s per pair of passes by the estimate, over 1 s.
        let assert = xferbench()
            .args([
                "ab",
                "--runs",
                "2",
                "--callgrind-budget",
                "1s",
                "--export-json",
            ])
            .arg(&json)
            .args(["sleep 0.05", "sleep 0.05"])
            .assert();
        let err = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
        assert!(
            err.contains("1 pass(es) of each (of 3 asked: --callgrind-budget)"),
            "{err}"
        );
        let r = read_json(&json);
        let notes = r["ab"]["notes"].to_string();
        assert!(notes.contains("1 pass(es) of each instead of 3"), "{notes}");
        assert_eq!(
            r["ab"]["a"]["callgrind"].as_array().map(Vec::len),
            Some(1),
            "{r}"
        );
    }

    #[test]
    fn a_command_against_itself_is_noise() {
        let _quiet = timing_lock();
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("ab.json");
        let out = xferbench()
            .args([
                "ab",
                "--runs",
                "10",
                "--no-callgrind",
                "--json",
                "--export-json",
            ])
            .arg(&json)
            .arg(spin(2000))
            .arg(spin(2000))
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let r = read_json(&json);
        let printed: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(printed, r, "--json prints what --export-json writes");
        assert!(
            r["ab"]["diagnosis"]
                .as_str()
                .unwrap()
                .starts_with("not significant: noise"),
            "{r}"
        );
        assert_eq!(r["ab"]["regression"], false);
    }

    #[test]
    fn its_document_is_a_result_like_every_other() {
        let _quiet = timing_lock();
        let dir = tempfile::tempdir().unwrap();
        let history = dir.path().join("h.sqlite");
        let (one, two, html) = (
            dir.path().join("1.json"),
            dir.path().join("2.json"),
            dir.path().join("ab.html"),
        );
        for (json, extra) in [(&one, None), (&two, Some(&html))] {
            let mut cmd = xferbench();
            cmd.env("XFERBENCH_HISTORY", &history)
                .args([
                    "ab",
                    "-r",
                    "3",
                    "-w",
                    "1",
                    "--no-callgrind",
                    "--no-limits",
                    "-q",
                ])
                .arg("--export-json")
                .arg(json);
            if let Some(html) = extra {
                cmd.arg("--export-html").arg(html);
            }
            cmd.args(["true", "sleep 0.01"])
                .assert()
                .code(predicates::ord::eq(0).or(predicates::ord::eq(4)));
        }
        let r = read_json(&one);
        let points = r["points"].as_array().unwrap();
        assert_eq!(points.len(), 2, "{r}");
        for (p, side, command) in [(&points[0], "A", "true"), (&points[1], "B", "sleep 0.01")] {
            assert_eq!(p["params"]["workload"], "command");
            assert_eq!(p["params"]["side"], side);
            assert_eq!(p["params"]["command"], command);
            assert_eq!(p["runs"].as_array().unwrap().len(), 3, "{p}");
            assert_eq!(p["primary"]["figure"], "wall_s");
        }
        assert_eq!(r["context"]["settings"]["interleave"], true);
        // Interleaved: A's and B's runs alternate in the order they ran.
        let order: Vec<u64> = points
            .iter()
            .flat_map(|p| p["runs"].as_array().unwrap().iter())
            .map(|r| r["sequence"].as_u64().unwrap())
            .collect();
        assert_eq!(order, [0, 2, 4, 1, 3, 5], "{r}");
        assert_eq!(r["ab"]["a"]["command"], "true");
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(
            page.contains("sleep 0.01") && page.contains("Verdict: B against A"),
            "the HTML report names the points and gives the verdict"
        );
        // Recorded, and compared point by point like any two results.
        xferbench()
            .env("XFERBENCH_HISTORY", &history)
            .args(["history", "list"])
            .assert()
            .success()
            .stdout(predicates::str::contains("command"));
        xferbench()
            .args(["compare", "--threshold", "1000"])
            .arg(&one)
            .arg(&two)
            .assert()
            .success()
            .stdout(predicates::str::contains("side=A").and(predicates::str::contains("side=B")));
    }

    #[test]
    fn a_failing_command_is_reported() {
        xferbench()
            .args(["ab", "--runs", "2", "true", "exit 3"])
            .assert()
            .code(1)
            .stderr(predicates::str::contains("exited with status 3"));
    }
}

mod compare {
    use super::support::{read_json, xferbench};
    use predicates::prelude::*;
    use std::path::Path;

    /// A real result document of `workload` (one point, five runs) at `path`.
    fn record(workload: &str, path: &Path) -> serde_json::Value {
        xferbench()
            .args(["run", workload, "-t", "pipe", "-s", "64", "-n", "500"])
            .args(["-r", "5", "-w", "0", "-q", "--export-json"])
            .arg(path)
            .assert()
            .success();
        read_json(path)
    }

    /// `template` with its runs' throughputs (and the median) replaced.
    fn with_throughputs(template: &serde_json::Value, t: &[f64]) -> String {
        let mut d = template.clone();
        let key = "throughput_bytes_per_s";
        for (i, v) in t.iter().enumerate() {
            d["points"][0]["runs"][i]["figures"][key] = (*v).into();
        }
        let mut sorted = t.to_vec();
        sorted.sort_by(f64::total_cmp);
        d["points"][0]["summary"][key]["median"] = sorted[t.len() / 2].into();
        d.to_string()
    }

    #[test]
    fn a_significant_drop_in_throughput_is_a_regression() {
        let dir = tempfile::tempdir().unwrap();
        let template = record("stream", &dir.path().join("t.json"));
        let base = dir.path().join("base.json");
        let new = dir.path().join("new.json");
        let b = [100e6, 101e6, 99e6, 100.5e6, 99.5e6];
        std::fs::write(&base, with_throughputs(&template, &b)).unwrap();
        std::fs::write(&new, with_throughputs(&template, &b.map(|x| x * 0.8))).unwrap();
        xferbench()
            .arg("compare")
            .arg(&base)
            .arg(&new)
            .assert()
            .code(4)
            .stdout(
                predicate::str::contains("regression").and(predicate::str::contains("-20.0 %")),
            );
        // The other way round it is an improvement.
        xferbench()
            .arg("compare")
            .arg(&new)
            .arg(&base)
            .assert()
            .success()
            .stdout(predicate::str::contains("improvement"));
        // A file against itself: nothing changed.
        xferbench()
            .arg("compare")
            .arg(&base)
            .arg(&base)
            .assert()
            .success();
    }

    /// The text of each cell of each body row of the table `id` in `html`.
    fn table_rows(html: &str, id: &str) -> Vec<Vec<String>> {
        let start = html
            .find(&format!("id=\"{id}\""))
            .expect("the table is in the page");
        let table = &html[start..start + html[start..].find("</table>").unwrap()];
        let body = &table[table.find("<tbody>").unwrap()..];
        let text = |cell: &str| {
            let mut out = String::new();
            let mut in_tag = false;
            for c in cell.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => out.push(if c == '\u{a0}' { ' ' } else { c }),
                    _ => {}
                }
            }
            out
        };
        body.split("<tr>")
            .skip(1)
            .map(|row| {
                row.split("<td")
                    .skip(1)
                    .map(|cell| text(&format!("<td{}", &cell[..cell.find("</td>").unwrap()])))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn export_html_shows_each_points_change_interval_p_value_and_verdict() {
        use xferbench_probes::stats::{bootstrap_ratio_of_means, welch_t_test};
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t.json");
        xferbench()
            .args(["run", "stream", "-t", "pipe", "-s", "64,4096", "-n", "500"])
            .args(["-r", "5", "-w", "0", "-q", "--export-json"])
            .arg(&t)
            .assert()
            .success();
        let template = read_json(&t);
        // Point 1 loses a fifth of its throughput; point 2 moves within its noise.
        let b = [100e6, 101e6, 99e6, 100.5e6, 99.5e6];
        let n = [
            b.map(|x| x * 0.8),
            [100.2e6, 99.8e6, 100e6, 100.4e6, 99.6e6],
        ];
        let key = "throughput_bytes_per_s";
        let doc = |values: [&[f64; 5]; 2]| {
            let mut d = template.clone();
            for (p, vs) in values.iter().enumerate() {
                for (r, v) in vs.iter().enumerate() {
                    d["points"][p]["runs"][r]["figures"][key] = (*v).into();
                }
            }
            d.to_string()
        };
        let (base, new) = (dir.path().join("base.json"), dir.path().join("new.json"));
        std::fs::write(&base, doc([&b, &b])).unwrap();
        std::fs::write(&new, doc([&n[0], &n[1]])).unwrap();
        let page = dir.path().join("compare.html");
        xferbench()
            .arg("compare")
            .arg(&base)
            .arg(&new)
            .arg("--export-html")
            .arg(&page)
            .assert()
            .code(4)
            .stdout(predicate::str::contains("regression"));
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("interval (99 %)"), "{html}");
        let rows = table_rows(&html, "compare-table");
        assert_eq!(rows.len(), 2, "{rows:?}");
        let percent = |v: f64| format!("{:+.1} %", v * 100.0);
        for (row, (new, change, verdict)) in rows.iter().zip([
            (&n[0], "-20.0 %", "slower (regression beyond 5.0 %)"),
            (&n[1], "+0.0 %", "no change (not significant)"),
        ]) {
            let i = bootstrap_ratio_of_means(&b, new, 0.99).unwrap();
            let p = welch_t_test(&b, new).unwrap().p;
            assert_eq!(row[5], change, "{row:?}");
            assert_eq!(
                row[6],
                format!("{} to {}", percent(i.low - 1.0), percent(i.high - 1.0)),
                "{row:?}"
            );
            assert_eq!(row[7], format!("{p:.3}"), "{row:?}");
            assert_eq!(row[8], verdict, "{row:?}");
        }
        // Charts: BASE and NEW with their spreads, and the change with its interval.
        assert_eq!(html.matches("<figure class=\"chart\"").count(), 2);
    }

    #[test]
    fn export_html_into_a_missing_folder_is_refused_before_reading_anything() {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("no/such/folder/compare.html");
        xferbench()
            .arg("compare")
            .arg(dir.path().join("base.json"))
            .arg(dir.path().join("new.json"))
            .arg("--export-html")
            .arg(&page)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--export-html"))
            .stderr(predicate::str::contains("cannot read").not());
        assert!(!page.exists());
    }

    #[test]
    fn unreadable_or_mismatched_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("base.json");
        record("stream", &base);
        xferbench()
            .arg("compare")
            .arg(&base)
            .arg(dir.path().join("missing.json"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("cannot read NEW"));
        let junk = dir.path().join("junk.json");
        std::fs::write(&junk, "{\"not\": 1}").unwrap();
        xferbench()
            .arg("compare")
            .arg(&junk)
            .arg(&base)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("not an xferbench result document"));
        let other = dir.path().join("pingpong.json");
        record("pingpong", &other);
        xferbench()
            .arg("compare")
            .arg(&base)
            .arg(&other)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("same workload"));
    }
}

mod conventions {
    use super::support::xferbench;
    use predicates::prelude::*;

    fn run_json(args: &[&str]) -> serde_json::Value {
        let out = xferbench()
            .args(args)
            .args(["-r", "1", "-w", "0", "--peer", "thread", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn an_optional_value_never_swallows_the_next_word() {
        let doc = run_json(&[
            "run",
            "--counters",
            "stream",
            "-t",
            "pipe",
            "-s",
            "64",
            "-n",
            "100",
        ]);
        assert_eq!(doc["context"]["settings"]["workload"], "stream", "{doc}");
        assert_eq!(doc["points"].as_array().unwrap().len(), 1);
        // perf counters were asked for: recorded, or said to be unsupported.
        let c = &doc["points"][0]["counters"];
        assert!(c.is_object(), "{doc}");
        assert_eq!(c["source"], "perf_event", "{c}");
    }

    #[test]
    fn an_optional_value_takes_an_equals_sign() {
        xferbench()
            .args(["run", "stream", "--counters", "callgrind"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("callgrind"));
    }

    #[test]
    fn param_lists_take_ranges_as_size_does() {
        let doc = run_json(&[
            "run",
            "stream",
            "-t",
            "pipe",
            "-s",
            "64",
            "-n",
            "100",
            "-p",
            "pipe_size=64KiB..1MiB:x4",
        ]);
        let sizes: Vec<String> = doc["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["params"]["pipe_size"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(sizes.len(), 3, "{sizes:?}");
        xferbench()
            .args(["run", "stream", "-t", "pipe", "-p", "pipe_size=1..lots"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("-p pipe_size"));
    }

    #[test]
    fn export_markdown_is_export_md() {
        let dir = tempfile::tempdir().unwrap();
        let md = dir.path().join("r.md");
        xferbench()
            .args(["run", "stream", "-t", "pipe", "-s", "64", "-n", "100", "-q"])
            .args([
                "-r",
                "1",
                "-w",
                "0",
                "--peer",
                "thread",
                "--export-markdown",
            ])
            .arg(&md)
            .assert()
            .success();
        assert!(md.is_file());
    }

    #[test]
    fn the_warp_client_takes_sizes_with_units_and_the_shared_letters() {
        xferbench()
            .args(["warp", "client", "-s", "lots"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--size"));
        xferbench()
            .args(["warp", "client", "--payload", "1KiB", "--threads", "2"])
            .args(["--iterations", "1", "--connect", "127.0.0.1:1"])
            .assert()
            .code(1);
    }
}

/// Every command that runs until it is done or stopped exits 128 + N when signal N
/// stops it (130 for Ctrl-C), having kept what it finished.
mod signals {
    use rustix::process::{Pid, Signal, kill_process};
    use std::io::{BufRead, BufReader};
    use std::process::{Child, Output, Stdio};
    use std::time::{Duration, Instant};

    fn spawn(args: &[&str]) -> Child {
        crate::common::std_xferbench()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Whether `pid` catches SIGINT: its handler is installed (`SigCgt`, bit N − 1 for
    /// signal N, in `/proc/PID/status`).
    fn catches_sigint(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .is_some_and(|mask| mask & (1 << (Signal::INT.as_raw() - 1)) != 0)
    }

    /// Waits until `child` catches SIGINT, lets it work for `settle`, sends `sig`, and
    /// returns how it ended.
    fn stop(mut child: Child, settle: Duration, sig: Signal) -> Output {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !catches_sigint(child.id()) {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the command ended before it caught SIGINT"
            );
            assert!(Instant::now() < deadline, "SIGINT is never caught");
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(settle);
        assert!(
            child.try_wait().unwrap().is_none(),
            "the command ended before the signal; give it more work"
        );
        let _ = kill_process(Pid::from_raw(child.id() as i32).unwrap(), sig);
        crate::common::wait_within(child, crate::common::RUN_BOUND)
    }

    /// `args` stopped by Ctrl-C after `settle`: exit 130; its stdout.
    fn ctrl_c(args: &[&str], settle: Duration) -> String {
        let out = stop(spawn(args), settle, Signal::INT);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            out.status.code(),
            Some(130),
            "{args:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// A `kv serve` or `warp serve` running until dropped; the first line of its
    /// stdout (its announcement), or of its stderr when `on_stderr`.
    struct Server(Child, String);

    impl Server {
        fn start(args: &[&str], on_stderr: bool) -> Server {
            let mut child = spawn(args);
            let mut line = String::new();
            let read = if on_stderr {
                BufReader::new(child.stderr.take().unwrap()).read_line(&mut line)
            } else {
                BufReader::new(child.stdout.take().unwrap()).read_line(&mut line)
            };
            read.unwrap();
            Server(child, line.trim().to_string())
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// What a stopped run keeps is checked in `robustness` (`stopped_by`).
    #[test]
    fn run_exits_130() {
        ctrl_c(
            &[
                "run",
                "stream",
                "-t",
                "pipe",
                "-s",
                "64",
                "-d",
                "0.05",
                "-r",
                "1000",
                "-w",
                "0",
                "--peer",
                "thread",
                "--no-limits",
                "--no-history",
            ],
            Duration::from_millis(300),
        );
    }

    #[test]
    fn study_exits_130() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("study");
        ctrl_c(
            &[
                "study",
                "rpmsg",
                "--quick",
                "--allow-debug",
                "--no-limits",
                "--no-history",
                "-q",
                "--out",
                out.to_str().unwrap(),
            ],
            Duration::from_millis(500),
        );
        assert!(
            out.join("results.json").is_file(),
            "the study folder is kept"
        );
    }

    #[test]
    fn serve_exits_130() {
        ctrl_c(&["serve", "--listen", "127.0.0.1:0"], Duration::ZERO);
    }

    #[test]
    fn warp_serve_exits_130_and_sigterm_143() {
        ctrl_c(&["warp", "serve", "--port", "0"], Duration::ZERO);
        let out = stop(
            spawn(&["warp", "serve", "--port", "0"]),
            Duration::ZERO,
            Signal::TERM,
        );
        assert_eq!(out.status.code(), Some(143));
    }

    #[test]
    fn warp_client_exits_130() {
        // "memory mock listening on ADDR (Ctrl-C to stop)", on stderr.
        let server = Server::start(&["warp", "serve", "--port", "0"], true);
        let addr = server
            .1
            .split_once("listening on ")
            .and_then(|(_, rest)| rest.split(' ').next())
            .unwrap_or_else(|| panic!("no address in {:?}", server.1))
            .to_string();
        ctrl_c(
            &[
                "warp",
                "client",
                "--connect",
                &addr,
                "-n",
                "1000000000",
                "--no-history",
            ],
            Duration::from_millis(300),
        );
    }

    #[test]
    fn kv_serve_exits_130() {
        ctrl_c(&["kv", "serve", "-n", "1"], Duration::ZERO);
    }

    #[test]
    fn kv_client_until_stopped_exits_130_and_keeps_its_run() {
        let server = Server::start(&["kv", "serve", "-n", "1"], false);
        let name = server
            .1
            .strip_prefix("serving on ")
            .unwrap_or_else(|| panic!("no announcement: {:?}", server.1))
            .to_string();
        let stdout = ctrl_c(
            &["kv", "client", "--server", &name, "--no-history", "0", "10"],
            Duration::from_millis(300),
        );
        assert!(stdout.contains("interrupted"), "{stdout}");
    }

    #[test]
    fn daq_exits_130() {
        ctrl_c(
            &[
                "daq",
                "b0",
                "-S",
                "30000",
                "-l",
                "100000000",
                "--no-history",
            ],
            Duration::from_millis(300),
        );
    }

    #[test]
    fn rpmsg_exits_130() {
        ctrl_c(
            &[
                "rpmsg",
                "--transfer",
                "1MB",
                "-r",
                "10000",
                "-w",
                "0",
                "--no-limits",
            ],
            Duration::from_millis(300),
        );
    }

    #[test]
    fn limits_exits_130_and_prints_what_it_measured() {
        let stdout = ctrl_c(&["limits"], Duration::ZERO);
        assert!(!stdout.is_empty());
    }

    #[test]
    fn ab_exits_130() {
        ctrl_c(
            &[
                "ab",
                "--no-callgrind",
                "-r",
                "1000",
                "-w",
                "0",
                "sleep 0.05",
                "sleep 0.05",
            ],
            Duration::from_millis(300),
        );
    }

    #[test]
    fn check_exits_130() {
        ctrl_c(
            &["check", "-t", "pipe,unix,tcp,shm"],
            Duration::from_millis(200),
        );
    }

    #[test]
    fn profile_exits_130() {
        if super::common::skip_without_perf_record() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        ctrl_c(
            &[
                "profile",
                "--out",
                dir.path().to_str().unwrap(),
                "--",
                "sleep",
                "30",
            ],
            Duration::from_millis(500),
        );
    }
}

/// Exports never replace what is not a regular file: a device, a FIFO, a symbolic
/// link (its target is written), stdout (`-`).
mod export_targets {
    use super::support::xferbench;
    use predicates::prelude::*;
    use std::os::unix::fs::FileTypeExt as _;

    /// A small run with `extra` flags.
    fn run(extra: &[&str]) -> assert_cmd::assert::Assert {
        xferbench()
            .args([
                "run",
                "stream",
                "-t",
                "pipe",
                "-s",
                "64",
                "-n",
                "100",
                "-r",
                "1",
                "-w",
                "0",
                "--peer",
                "thread",
                "--no-limits",
                "--no-history",
                "-q",
            ])
            .args(extra)
            .assert()
    }

    #[test]
    fn an_export_to_dev_full_fails_and_the_device_stays() {
        run(&["--export-md", "/dev/full"])
            .code(1)
            .stderr(predicate::str::contains("No space left on device"));
        let kind = std::fs::symlink_metadata("/dev/full").unwrap().file_type();
        assert!(kind.is_char_device());
    }

    #[test]
    fn an_export_to_dev_null_succeeds_and_the_device_stays() {
        run(&["--export-json", "/dev/null", "--export-html", "/dev/null"]).success();
        let kind = std::fs::symlink_metadata("/dev/null").unwrap().file_type();
        assert!(kind.is_char_device());
        assert!(!std::path::Path::new("/dev/null.jsonl").exists());
    }

    #[test]
    fn an_export_through_a_symlink_writes_its_target_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("r.csv");
        let link = dir.path().join("latest.csv");
        std::os::unix::fs::symlink("r.csv", &link).unwrap();
        run(&["--export-csv", link.to_str().unwrap()]).success();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::read_to_string(&target)
                .unwrap()
                .starts_with("index,")
        );
    }

    #[test]
    fn an_export_to_a_fifo_reaches_its_reader() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("r.json");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        run(&["--export-json", fifo.to_str().unwrap()]).success();
        let doc: serde_json::Value = serde_json::from_str(&reader.join().unwrap()).unwrap();
        assert_eq!(doc["points"].as_array().unwrap().len(), 1);
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        // Nothing beside it: no journal, no temporary file.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_export_to_a_dash_goes_to_stdout() {
        let out = run(&["--export-json", "-"]).success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(doc["points"].as_array().unwrap().len(), 1);
        assert!(!std::path::Path::new("-").exists());
        assert!(!std::path::Path::new("-.jsonl").exists());
    }
}
