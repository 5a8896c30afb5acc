//! The perf-stat study's benchmark role, `ab`'s stall search and the study, end to end.

mod common;

use xferbench_lab::rig::perf_stat::callgrind_totals;
use xferbench_lab::workload::perf_stat::{BenchSpec, Benchmark, Variant};
use xferbench_probes::process::{Launcher, Role};

fn launcher() -> Launcher {
    Launcher::new(crate::common::BIN).with_role(Role::PerfStatBench, ["__perfstat-bench"])
}

use common::skip_without_valgrind;

#[test]
fn the_alignment_variants_run_the_same_instructions_under_callgrind() {
    if skip_without_valgrind() {
        return;
    }
    for (bench, iterations) in [
        (Benchmark::CircularBuffer1Kb, 300),
        (Benchmark::CircularBuffer1Mb, 1),
    ] {
        let ir = |variant| {
            let spec = BenchSpec {
                iterations,
                warmup: 0,
                runs: 1,
                ..BenchSpec::seed(bench, variant)
            };
            callgrind_totals(&launcher(), &spec).expect("callgrind pass")["Ir"]
        };
        let (a, b) = (ir(Variant::A), ir(Variant::B));
        // Two bytes per trip of a 7-instruction loop, and the set-up excluded.
        let bytes = 2.0 * bench.size() as f64 * iterations as f64;
        assert!(a > 3.0 * bytes, "{} counted {a} instructions", bench.name());
        let diff = (b / a - 1.0).abs();
        assert!(
            diff <= 1e-4,
            "{}: A {a} vs B {b} instructions differ by {:.4} %",
            bench.name(),
            diff * 100.0
        );
    }
}

#[test]
fn the_list_walk_b_runs_fewer_instructions_but_misses_d1_more() {
    if skip_without_valgrind() {
        return;
    }
    let count = |variant| {
        let spec = BenchSpec {
            iterations: 1 << 16,
            warmup: 0,
            runs: 1,
            ..BenchSpec::seed(Benchmark::ListWalk, variant)
        };
        callgrind_totals(&launcher(), &spec).expect("callgrind pass")
    };
    let (a, b) = (count(Variant::A), count(Variant::B));
    assert!(
        b["Ir"] < a["Ir"],
        "B {} vs A {} instructions",
        b["Ir"],
        a["Ir"]
    );
    assert!(
        b["D1mr"] > 8.0 * a["D1mr"],
        "B {} vs A {} D1 read misses",
        b["D1mr"],
        a["D1mr"]
    );
}

#[test]
fn the_benchmark_role_refuses_a_bad_spec_with_a_usage_error() {
    let out = crate::common::std_xferbench()
        .args(["__perfstat-bench", "{\"bench\":\"nope\"}"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad perf-stat benchmark spec"));
}

fn has_pmu() -> bool {
    xferbench_lab::context::pmu_available()
}

#[test]
fn ab_search_stalls_without_a_pmu_says_why_in_one_line_and_exits_0() {
    if has_pmu() {
        println!("skipped: this machine has a PMU (the search runs; see the fixture tests)");
        return;
    }
    let out = crate::common::std_xferbench()
        .args([
            "ab",
            "--runs",
            "2",
            "--warmup",
            "0",
            "--no-callgrind",
            "--search-stalls",
            "true",
            "true",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reasons: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("--search-stalls:"))
        .collect();
    assert_eq!(reasons.len(), 1, "{stdout}");
    assert!(
        reasons[0].contains("no hardware PMU") || reasons[0].contains("perf is not installed"),
        "{}",
        reasons[0]
    );
    // The default block says which counters this machine lacks.
    assert!(stdout.contains("branch-miss %"), "{stdout}");
    assert!(stdout.contains("not supported"), "{stdout}");
}

#[test]
fn ab_events_counts_software_events_and_names_unknown_ones() {
    if !std::process::Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        println!("skipped: perf is not installed");
        return;
    }
    let out = crate::common::std_xferbench()
        .args([
            "ab",
            "--runs",
            "2",
            "--warmup",
            "0",
            "--no-callgrind",
            "--json",
            "--events",
            "page-faults,no_such.event_here",
            "true",
            "true",
        ])
        .output()
        .unwrap();
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("perf stat") {
        println!(
            "skipped: perf stat cannot count here: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ev = &v["ab"]["events"];
    assert_eq!(ev["rows"][0]["event"], "page-faults");
    assert!(ev["rows"][0]["a"].as_f64().unwrap() > 0.0, "{ev}");
    assert_eq!(ev["unknown"][0], "no_such.event_here");
}

/// The study, and its record in a history of its own: one study run for both.
#[test]
fn the_quick_study_completes_with_p_values_and_says_what_it_could_not_measure() {
    // The quick plan's 5 runs: with 3, Welch's test on a loaded machine may miss even
    // the memory pair's 100× difference at p < 0.01.
    let dir = tempfile::tempdir().unwrap();
    let history = tempfile::tempdir().unwrap();
    let history = history.path().join("history.sqlite");
    let out = crate::common::std_xferbench()
        .env("XFERBENCH_HISTORY", &history)
        .args([
            "study",
            "perf-stat",
            "--allow-debug",
            "--quick",
            "-q",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap();
    let t1 = read("t1-time.md");
    for b in Benchmark::ALL {
        let row = t1
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", b.name())))
            .unwrap_or_else(|| panic!("no T1 row for {}: {t1}", b.name()));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let p: f64 = cells[6]
            .parse()
            .unwrap_or_else(|_| panic!("p-value in {row}"));
        assert!((0.0..=1.0).contains(&p), "{row}");
    }
    let summary = read("summary.md");
    assert!(
        summary.contains("## Not measured here, and why") || has_pmu(),
        "{summary}"
    );
    assert!(summary.contains("xferbench study perf-stat --out perf-stat-bare-metal"));
    if !skip_without_valgrind() {
        // The alignment pair runs the same instructions; the memory pair is
        // diagnosed from simulated cache misses.
        assert_eq!(
            summary.matches("the same, within 0.01 %").count(),
            2,
            "{summary}"
        );
        assert!(
            summary.contains("fewer instructions, slower: memory stalls"),
            "{summary}"
        );
    }
    if !has_pmu() {
        assert!(read("t3-stall-events.md").contains("(no PMU events)"));
        assert!(read("t4-culprit.md").contains("(no search)"));
    }
    let doc: serde_json::Value = serde_json::from_str(&read("results.json")).unwrap();
    // Six timed points, callgrind's six counting points where valgrind runs, and
    // perf's default block (one point per pair and build) where perf runs.
    let points = doc["points"].as_array().unwrap();
    let in_group = |g: &str| points.iter().filter(|p| p["params"]["group"] == g).count();
    assert_eq!(
        points
            .iter()
            .filter(|p| p["params"]["group"].is_null())
            .count(),
        6
    );
    let counted = if common::have_valgrind() { 6 } else { 0 };
    assert_eq!(in_group("callgrind"), counted);
    let perf = std::process::Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let block = if perf { 4 } else { 0 };
    assert_eq!(in_group("perf-stat"), block);
    if perf {
        let t2 = read("t2-perf-stat-default.md");
        let row = t2.lines().find(|l| l.starts_with("| task-clock |"));
        let here = row.and_then(|r| r.split('|').nth(2)).unwrap_or_default();
        assert!(here.trim().ends_with("msec"), "{t2}");
    }
    let stalls = in_group("stalls") + in_group("search");
    assert_eq!(points.len(), 6 + counted + block + stalls);
    // The study is recorded with its name.
    let list = crate::common::std_xferbench()
        .env("XFERBENCH_HISTORY", &history)
        .args(["history", "list", "--json"])
        .output()
        .unwrap();
    assert!(
        list.status.success(),
        "{}",
        String::from_utf8_lossy(&list.stderr)
    );
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["kind"], "study");
    assert_eq!(list[0]["name"], "perf-stat");
    assert!(list[0]["point_count"].as_u64().unwrap() >= 1);
}
