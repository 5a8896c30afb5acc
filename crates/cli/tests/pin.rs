//! `--pin` on the memory mock and the kv rig: every thread of every participant the
//! command or rig starts runs on the CPU `run --pin`'s plan gives its role, as the
//! system reports it (`sched_getaffinity` of each thread in `/proc/PID/task`).

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use xferbench_lab::rig::{Rig, RunControl};
use xferbench_probes::affinity::{allowed_cpus, cpus_of_thread, pin_plan};
use xferbench_probes::process::{Launcher, Role};

fn xferbench() -> Command {
    crate::common::std_xferbench()
}

fn launcher() -> Launcher {
    Launcher::new(crate::common::BIN)
        .with_role(Role::MemoryMock, ["__memory-mock"])
        .with_role(Role::WarpClient, ["__warp-client"])
        .with_role(Role::KvServer, ["__kv-server"])
        .with_role(Role::KvClient, ["__kv-client"])
}

/// The CPU set of every thread of process `pid`.
fn thread_cpus(pid: u32) -> Vec<Vec<usize>> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .filter_map(|t| t.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|tid| cpus_of_thread(tid).ok())
        .collect()
}

/// Waits (at most 10 s) until every thread of `pid` runs on `cpu` alone; the threads'
/// sets as last seen.
fn settled_on(pid: u32, cpu: usize) -> Vec<Vec<usize>> {
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        let seen = thread_cpus(pid);
        if seen.iter().all(|c| c == &[cpu]) || Instant::now() >= give_up {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (at most 10 s) until every thread of `pid` runs on one and the same CPU
/// alone (a process that pins itself after it starts); the threads' sets as last
/// seen, without repeats.
fn settled_alone(pid: u32) -> Vec<Vec<usize>> {
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        let mut seen = thread_cpus(pid);
        seen.dedup();
        if (seen.len() == 1 && seen[0].len() == 1) || Instant::now() >= give_up {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A process killed and reaped however the test ends.
struct Reaped(Child);

impl Reaped {
    /// SIGINT, as Ctrl-C, and its exit status.
    fn interrupt(mut self) -> Option<i32> {
        let pid = rustix::process::Pid::from_raw(self.0.id() as i32).unwrap();
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
        self.0.wait().unwrap().code()
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads `child`'s stderr until a line holding `marker`; that line.
fn line_with(child: &mut Child, marker: &str) -> String {
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        if err.read_line(&mut line).unwrap() == 0 {
            panic!("the process ended before printing {marker:?}");
        }
        if line.contains(marker) {
            // Later lines are drained so the process never blocks on them.
            std::thread::spawn(move || for _ in err.lines() {});
            return line;
        }
    }
}

#[test]
fn warp_serve_and_client_pin_to_the_cpus_of_their_roles() {
    let cpus = allowed_cpus();
    let mut serve = xferbench()
        .args(["warp", "serve", "--port", "0", "--pin"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line = line_with(&mut serve, "listening on ");
    let serve = Reaped(serve);
    let addr = line
        .split("listening on ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_string();
    // The mock is a peer: every thread on the second allowed CPU.
    let mock_cpu = pin_plan(0, &cpus).1;
    let seen = settled_on(serve.0.id(), mock_cpu);
    assert!(seen.iter().all(|c| c == &[mock_cpu]), "{seen:?}");
    // Client thread i is a driver: the 2i-th allowed CPU; the result says so.
    for (extra, expect) in [
        (
            &["--threads", "3"][..],
            vec![
                (0..3)
                    .map(|i| vec![pin_plan(i, &cpus).0])
                    .collect::<Vec<_>>(),
            ],
        ),
        (
            &["--instances", "2"][..],
            (0..2).map(|i| vec![vec![pin_plan(i, &cpus).0]]).collect(),
        ),
    ] {
        let out = xferbench()
            .args([
                "warp",
                "client",
                "--connect",
                &addr,
                "-n",
                "20",
                "-s",
                "256",
                "--pin",
            ])
            .args(extra)
            .arg("--json")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {stderr}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        // The result document records thread j of client i's CPU as a figure.
        let figures = &doc["points"][0]["runs"][0]["figures"];
        let seen: Vec<Vec<Vec<usize>>> = (0..expect.len())
            .map(|i| {
                (0..)
                    .map_while(|j| {
                        figures[format!("thread_cpu_client{i}_thread{j}")]
                            .as_f64()
                            .map(|c| vec![c as usize])
                    })
                    .collect()
            })
            .collect();
        assert_eq!(seen, expect, "{extra:?}: {doc}");
    }
    // Unpinned, the result has no CPUs to report.
    let out = xferbench()
        .args(["warp", "client", "--connect", &addr, "-n", "5", "--json"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let figures = doc["points"][0]["runs"][0]["figures"].as_object().unwrap();
    assert!(
        !figures.keys().any(|k| k.starts_with("thread_cpu_")),
        "{doc}"
    );
    // Ctrl-C stops the mock cleanly, with 128 + SIGINT.
    assert_eq!(serve.interrupt(), Some(130));
}

#[test]
fn a_pinned_memory_mock_rig_pins_its_mock_process_and_its_clients() {
    use xferbench_lab::rig::memory_mock::{MemoryMockRig, MockPoint};
    use xferbench_lab::workload::warp::{ClientSpec, ConnectionMode, Ops};
    use xferbench_transports::warp::CrcKind;
    use xferbench_transports::warp::server::IoModel;
    let cpus = allowed_cpus();
    let point = MockPoint {
        client: ClientSpec {
            threads: 1,
            iterations: 20,
            payload: 256,
            crc: CrcKind::Fast,
            connection: ConnectionMode::PerThread,
            piggyback_acks: false,
            think_ms: 0,
            first_slot: 0,
            slots: 0,
            ops: Ops::ReadWriteRead,
            hang_timeout_ms: 10_000,
            pin_cpus: Vec::new(),
        },
        instances: 2,
        io: IoModel::Threads,
        pin: true,
    };
    assert_eq!(
        point.client_cpus(&cpus),
        vec![pin_plan(0, &cpus).0, pin_plan(1, &cpus).0]
    );
    let mut rig = MemoryMockRig::start(point.clone(), Some(launcher())).unwrap();
    let mock = rig
        .participants()
        .into_iter()
        .find(|p| p.name == "memory-mock")
        .unwrap();
    assert_ne!(mock.pid, std::process::id(), "the mock is a process");
    let mock_cpu = point.mock_cpu(&cpus).unwrap();
    assert_eq!(mock_cpu, pin_plan(0, &cpus).1);
    let seen = settled_on(mock.pid, mock_cpu);
    assert!(seen.iter().all(|c| c == &[mock_cpu]), "{seen:?}");
    let stop = AtomicBool::new(false);
    let r = rig
        .run_once(&mut RunControl::new(&stop, Duration::from_secs(30), None))
        .unwrap();
    assert_eq!(r.channels.len(), 2);
    // Threads the mock started since (for the clients' connections) inherit its CPU.
    let seen = thread_cpus(mock.pid);
    assert!(seen.iter().all(|c| c == &[mock_cpu]), "{seen:?}");
    Box::new(rig).finish().unwrap();
}

/// The pids of the kv client processes of the server of pid `server`.
fn kv_clients_of(server: u32) -> Vec<u32> {
    let needle = format!("memfd:{server}:");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let c = String::from_utf8_lossy(&c);
                c.contains("__kv-client") && c.contains(&needle)
            })
        })
        .collect()
}

#[test]
fn kv_serve_and_client_pin_to_the_cpus_of_their_roles() {
    let cpus = allowed_cpus();
    let mut serve = xferbench()
        .args([
            "kv", "serve", "--arch", "sharded", "-n", "2", "-s", "1000", "--pin",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let serve = Reaped(serve);
    let name = line.trim().strip_prefix("serving on ").unwrap().to_string();
    let (driver, peer) = pin_plan(0, &cpus);
    let seen = settled_on(serve.0.id(), peer);
    assert!(seen.len() > 2, "the server and its workers: {seen:?}");
    assert!(seen.iter().all(|c| c == &[peer]), "{seen:?}");
    // A client running until stopped: on the first CPU.
    let client = xferbench()
        .args(["kv", "client", "0", "10", "--pin", "--server", &name])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = Reaped(client);
    let seen = settled_on(client.0.id(), driver);
    assert!(seen.iter().all(|c| c == &[driver]), "{seen:?}");
    assert!(client.interrupt().is_some());
    assert_eq!(serve.interrupt(), Some(130));
}

#[test]
fn a_pinned_kv_rig_pins_its_server_and_every_visitor() {
    use xferbench_lab::rig::kv::{KvPoint, KvRig, Target};
    use xferbench_transports::kv::Arch;
    let cpus = allowed_cpus();
    let point = KvPoint {
        target: Target::Kv {
            arch: Arch::Sharded,
            workers: 2,
            buckets: 1000,
        },
        visitors: 2,
        outer: 3,
        inner: 10,
        warmup: 0,
        min_runs: 2,
        min_time_ms: 0,
        max_runs: 3,
        budget_ms: 30_000,
        seed: 1,
        steady_ms: 0,
        pin: true,
        run_limit_ms: 0,
    };
    let mut rig = KvRig::start(point, Some(launcher())).unwrap();
    let server = rig
        .participants()
        .into_iter()
        .find(|p| p.name == "server")
        .unwrap();
    assert_ne!(server.pid, std::process::id(), "the server is a process");
    let peer = pin_plan(0, &cpus).1;
    let seen = settled_on(server.pid, peer);
    assert!(seen.iter().all(|c| c == &[peer]), "{seen:?}");
    // Visitor i (from 1) on the 2i-th allowed CPU.
    let mut visitors: Vec<Vec<usize>> = kv_clients_of(server.pid)
        .into_iter()
        .map(|pid| {
            // Every thread of a visitor on one CPU, once it has pinned itself.
            let mut seen = settled_alone(pid);
            assert_eq!(seen.len(), 1, "visitor {pid}: {seen:?}");
            seen.remove(0)
        })
        .collect();
    visitors.sort();
    let mut expect = vec![vec![pin_plan(1, &cpus).0], vec![pin_plan(2, &cpus).0]];
    expect.sort();
    assert_eq!(visitors, expect);
    let stop = AtomicBool::new(false);
    rig.run_once(&mut RunControl::new(&stop, Duration::from_secs(60), None))
        .unwrap();
    Box::new(rig).finish().unwrap();
}

#[test]
fn a_study_that_does_not_pin_refuses_pin_and_names_those_that_do() {
    let out = xferbench()
        .args(["study", "perf-stat", "--quick", "--pin", "--allow-debug"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--pin")
            && stderr.contains("rpmsg")
            && stderr.contains("warp-pipe")
            && stderr.contains("hashtable")
            && stderr.contains("sis8300"),
        "{stderr}"
    );
}

/// The name of each thread of `pid` with its CPU set.
fn named_thread_cpus(pid: u32) -> Vec<(String, Vec<usize>)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| {
            let tid = t.file_name().to_str()?.parse::<u32>().ok()?;
            let name = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).ok()?;
            Some((name.trim().to_string(), cpus_of_thread(tid).ok()?))
        })
        .collect()
}

#[test]
fn daq_pins_each_boards_reader_and_dma_engine() {
    let cpus = allowed_cpus();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("daq.json");
    let child = xferbench()
        .args([
            "daq",
            "b0",
            "b1",
            "-S",
            "4096",
            "-l",
            "40",
            "--trigger",
            "20",
        ])
        .args([
            "--link",
            "unthrottled",
            "--pin",
            "--no-limits",
            "--no-history",
            "--quiet",
        ])
        .arg("--export-json")
        .arg(&json)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Reaped(child);
    let pid = child.0.id();
    // Board i's reader on the 2i-th allowed CPU, its engine on the next.
    let expect: Vec<(String, Vec<usize>)> = (0..2)
        .flat_map(|i| {
            let (reader, engine) = pin_plan(i, &cpus);
            [
                (format!("daq-read{i}"), vec![reader]),
                (format!("daq-dma{i}"), vec![engine]),
            ]
        })
        .collect();
    let give_up = Instant::now() + Duration::from_secs(20);
    let seen = loop {
        let mut seen: Vec<_> = named_thread_cpus(pid)
            .into_iter()
            .filter(|(name, _)| name.starts_with("daq-read") || name.starts_with("daq-dma"))
            .collect();
        seen.sort();
        let mut want = expect.clone();
        want.sort();
        if seen == want || Instant::now() >= give_up {
            break (seen, want);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(seen.0, seen.1);
    let status = child.0.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.0.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["context"]["settings"]["pin"], true);
}
