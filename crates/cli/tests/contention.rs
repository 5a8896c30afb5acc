//! The machine's load in results: a run beside busy loops is flagged contended, and
//! a run's own processes are never counted as others, however busy they are.
//!
//! Both halves hold on a machine that other tests keep busy: the busy half starts
//! its own busy loops (others can only add to them), and the quiet half checks the
//! attribution (the run's CPU and the others' together fit in the machine), not an
//! idle machine. The classifier itself, quiet and busy, is tested on synthetic
//! `/proc` readings in the lab (`contention::tests`).

mod common;

use assert_cmd::Command;
use std::process::{Child, Stdio};

fn xferbench() -> Command {
    crate::common::xferbench()
}

/// Busy-looping shells, killed and reaped when dropped.
struct BusyLoops(Vec<Child>);

impl BusyLoops {
    fn start(n: usize) -> Self {
        BusyLoops(
            (0..n)
                .map(|_| {
                    std::process::Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .spawn()
                        .expect("sh starts")
                })
                .collect(),
        )
    }

    fn pids(&self) -> Vec<u64> {
        self.0.iter().map(|c| u64::from(c.id())).collect()
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn run_json(args: &[&str]) -> serde_json::Value {
    let out = xferbench()
        .args(args)
        .arg("--no-history")
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("one JSON document")
}

#[test]
fn a_run_beside_two_busy_loops_is_flagged_contended_and_names_them() {
    let busy = BusyLoops::start(2);
    // Ping-pong over a pipe sleeps between messages, so the loops get CPU time.
    let doc = run_json(&[
        "run",
        "pingpong",
        "-t",
        "pipe",
        "-s",
        "64",
        "-d",
        "0.3",
        "-r",
        "3",
        "-w",
        "0",
        "--no-limits",
        "--json",
    ]);
    let p = &doc["points"][0];
    let c = &p["contention"];
    assert_eq!(c["contended"], true, "{c}");
    assert!(c["others_cpus"].as_f64().unwrap() > 0.5, "{c}");
    let named: Vec<u64> = c["busiest"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["pid"].as_u64())
        .collect();
    assert!(
        busy.pids().iter().any(|pid| named.contains(pid)),
        "the busy loops {:?} are among the busiest {named:?}",
        busy.pids()
    );
    let warnings: Vec<&str> = p["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        warnings.iter().any(|w| w.starts_with("contended: ")),
        "{warnings:?}"
    );
    let load = &doc["context"]["load"];
    assert_eq!(load["contended_points"], 1, "{load}");
    assert!(
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("contended: 1 of 1 points")),
        "{}",
        doc["warnings"]
    );
}

#[test]
fn a_runs_own_processes_are_never_counted_as_others() {
    // Spinning shm rings keep both sides of the run busy: about 2 CPUs of its own.
    let doc = run_json(&[
        "run",
        "stream",
        "-t",
        "shm",
        "-s",
        "64KiB",
        "-d",
        "0.3",
        "-r",
        "3",
        "-w",
        "0",
        "--no-limits",
        "--json",
    ]);
    let cores = doc["context"]["cores"].as_f64().unwrap();
    let p = &doc["points"][0];
    let own: Vec<u64> = p["runs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["cpu"].as_array().unwrap().iter())
        .filter_map(|c| c["pid"].as_u64())
        .collect();
    assert!(!own.is_empty());
    for r in p["runs"].as_array().unwrap() {
        let c = &r["contention"];
        for b in c["busiest"].as_array().unwrap() {
            assert!(
                !own.contains(&b["pid"].as_u64().unwrap()),
                "a process of the run counted as another: {b}"
            );
        }
        // The run's own CPU and the others' together fit in the machine: had the
        // run's spinning been counted as others, they would take twice its CPUs.
        let own_cpus: f64 = r["cpu"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["cpus_utilised"].as_f64().unwrap())
            .sum();
        let others = c["others_cpus"].as_f64().unwrap();
        assert!(
            own_cpus + others <= cores + 0.3,
            "own {own_cpus:.2} + others {others:.2} CPUs on {cores} cores: {c}"
        );
    }
    // The classification follows the figures.
    let c = &p["contention"];
    let contended = c["others_cpus"].as_f64().unwrap() > 0.2 || c["steal"].as_f64().unwrap() > 0.05;
    assert_eq!(c["contended"], contended, "{c}");
}
