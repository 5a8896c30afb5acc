//! Hand-built perf-stat documents through the folder writer: one as on a VM
//! without a PMU (callgrind only), one with the passes of a machine with a PMU
//! (the recorded `perf stat -x,` fixtures of the lab).

use super::*;
use crate::perf_stat::passes::{BlockRow, DefaultBlock, PairEvents, Pass, SEED_STALL_EVENTS};
use crate::perf_stat::perf;
use xferbench_lab::ab::stalls::{compare_rows, rank, search_candidates};
use xferbench_lab::result::{Outcome, RunRecord, SCHEMA_VERSION, StudyInfo};
use xferbench_lab::rig::perf_stat::perf as perf_rig;
use xferbench_probes::counters::perf_stat::{
    PerfStatRow, PerfValue, parse_csv, parse_list, to_figures,
};
use xferbench_probes::cpu::ProcessCpu;
use xferbench_probes::stats::Estimate;

fn run(i: usize, time_s: f64) -> RunRecord {
    let figures: BTreeMap<String, f64> = [(TIME_S, time_s), (BENCH_CPU_S, 10.0 * time_s)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    RunRecord {
        run: i,
        sequence: Some(i),
        window_ns: (10.0 * time_s * 1e9) as u64,
        messages: 10,
        bytes: 0,
        figures,
        latency: None,
        channels: vec![],
        cpu: vec![ProcessCpu {
            role: "benchmark".into(),
            pid: 7,
            window_s: 10.0 * time_s,
            user_s: 9.9 * time_s,
            sys_s: 0.1 * time_s,
            cpus_utilised: 1.0,
            voluntary_switches: 0,
            involuntary_switches: 1,
            runqueue_wait_s: None,
        }],
        integrity: None,
        counters: None,
        contention: None,
        collapsed: None,
    }
}

fn point(index: usize, bench: &str, variant: &str, times: &[f64]) -> PointResult {
    let runs: Vec<RunRecord> = times.iter().enumerate().map(|(i, t)| run(i, *t)).collect();
    let summary = runs[0]
        .figures
        .keys()
        .map(|k| {
            (
                k.clone(),
                Estimate::from_values(runs.iter().map(|r| r.figures[k])).unwrap(),
            )
        })
        .collect();
    let pair = if bench.starts_with("circular") {
        "alignment"
    } else {
        "memory"
    };
    PointResult {
        index,
        params: [("benchmark", bench), ("variant", variant), ("pair", pair)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        chosen: Default::default(),
        defaults: Default::default(),
        size_bytes: 1024,
        channels: 1,
        primary: None,
        summary,
        per_channel: vec![],
        integrity: None,
        runs,
        warnings: vec![],
        counters: None,
        limit: None,
        drift: None,
        contention: None,
    }
}

fn cg(bench: &str, variant: &str, iterations: u64, scale: f64, v: [f64; 7]) -> CallgrindCount {
    let keys = ["Ir", "D1mr", "D1mw", "DLmr", "DLmw", "I1mr", "ILmr"];
    CallgrindCount {
        benchmark: bench.into(),
        variant: variant.into(),
        iterations,
        scale,
        per_run: keys
            .iter()
            .zip(v)
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    }
}

const KB: &str = "circular_buffer_into_byte_buffer_1kb";
const MB: &str = "circular_buffer_into_byte_buffer_1mb";
const WALK: &str = "list_walk_512k_nodes";

/// As measured on a VM without a PMU: no significant alignment effect, a large
/// memory effect, callgrind's counts, no PMU passes.
fn vm_doc(passes: Passes) -> ResultDoc {
    let points = vec![
        point(0, KB, "a", &[0.00402, 0.00398, 0.00410, 0.00395, 0.00405]),
        point(1, KB, "b", &[0.00399, 0.00404, 0.00401, 0.00409, 0.00396]),
        point(2, MB, "a", &[0.0079, 0.0081, 0.0080, 0.0078, 0.0082]),
        point(3, MB, "b", &[0.0080, 0.0079, 0.0082, 0.0081, 0.0079]),
        point(4, WALK, "a", &[0.00110, 0.00112, 0.00108, 0.00111, 0.00109]),
        point(5, WALK, "b", &[0.0810, 0.0832, 0.0798, 0.0825, 0.0805]),
    ];
    let extras = BTreeMap::from([
        ("passes".to_string(), serde_json::to_value(&passes).unwrap()),
        (
            "rerun".to_string(),
            serde_json::json!(crate::perf_stat::RERUN),
        ),
        ("container".to_string(), serde_json::json!(false)),
    ]);
    let mut c = xferbench_report::fixture::context("perf-stat", false, "process");
    c.command_line = vec![
        "xferbench".into(),
        "study".into(),
        "perf-stat".into(),
        "--quick".into(),
    ];
    c.settings.runs = 5;
    c.settings.warmup = 0;
    c.settings.count = None;
    c.settings.interleave = true;
    c.start_time = "2026-11-23T13:00:00Z".into();
    ResultDoc {
        schema_version: SCHEMA_VERSION,
        study: Some(StudyInfo {
            name: "perf-stat".into(),
            quick: true,
            planned_points: 6,
            extras,
        }),
        context: c,
        points,
        warnings: vec![],
        outcome: Outcome::Complete,
        knees: Vec::new(),
        failed: Vec::new(),
        ab: None,
    }
}

fn vm_passes() -> Passes {
    let no_pmu = "no hardware PMU here (a VM without PMU passthrough, a container that blocks perf_event_open, \
                  or kernel.perf_event_paranoid too high): every hardware event is <not supported>";
    let block = DefaultBlock {
        benchmark: KB.into(),
        variant: "a".into(),
        rows: parse_csv(include_str!(
            "../../../../lab/testdata/perf-stat/default-block-vm.csv"
        ))
        .unwrap()
        .iter()
        .map(|r| BlockRow {
            event: r.event.clone(),
            value: r.count(),
            status: if r.count().is_some() {
                "counted"
            } else {
                "not supported"
            }
            .into(),
            unit: r.unit.clone(),
            metrics: r.metrics.clone(),
        })
        .collect(),
        elapsed_s: 0.0891,
        user_s: 0.0802,
        sys_s: 0.0081,
    };
    Passes {
        callgrind: Pass {
            value: Some(vec![
                cg(
                    KB,
                    "a",
                    100,
                    100.0,
                    [73_999_700.0, 25_400.0, 1_800.0, 2_200.0, 0.0, 3_600.0, 0.0],
                ),
                cg(
                    KB,
                    "b",
                    100,
                    100.0,
                    [73_999_700.0, 25_400.0, 1_800.0, 2_300.0, 0.0, 3_700.0, 0.0],
                ),
                cg(
                    MB,
                    "a",
                    1,
                    20.0,
                    [151_000_000.0, 655_000.0, 330_000.0, 0.0, 0.0, 20.0, 0.0],
                ),
                cg(
                    MB,
                    "b",
                    1,
                    20.0,
                    [151_000_000.0, 655_000.0, 330_000.0, 0.0, 0.0, 20.0, 0.0],
                ),
                cg(
                    WALK,
                    "a",
                    524_288,
                    1.0,
                    [5_242_900.0, 32_770.0, 0.0, 3.0, 0.0, 10.0, 0.0],
                ),
                cg(
                    WALK,
                    "b",
                    524_288,
                    1.0,
                    [3_670_030.0, 524_290.0, 0.0, 5.0, 0.0, 10.0, 0.0],
                ),
            ]),
            reason: None,
        },
        default_block: Pass {
            value: Some(block),
            reason: None,
        },
        stall_events: Pass {
            value: None,
            reason: Some(no_pmu.into()),
        },
        search: Pass {
            value: None,
            reason: Some(no_pmu.replace(
                ": every hardware event is <not supported>",
                ": no stall event can be counted; run the same command on bare metal",
            )),
        },
    }
}

#[test]
fn on_a_vm_the_folder_reports_no_alignment_effect_and_memory_stalls() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = crate::write_folder(tmp.path(), &vm_doc(vm_passes())).unwrap();
    let read = |f: &str| std::fs::read_to_string(folder.dir().join(f)).unwrap();
    for f in [
        "t1-time.md",
        "t1-time.csv",
        "t2-perf-stat-default.md",
        "t3-stall-events.md",
        "t4-culprit.md",
        "summary.md",
    ] {
        assert!(folder.dir().join(f).exists(), "{f}");
    }
    let t1 = read("t1-time.md");
    assert!(t1.contains("0.05089386") && t1.contains("23%"), "{t1}");
    insta::assert_snapshot!("perf_stat_t1", t1);
    let t3 = read("t3-stall-events.md");
    assert!(
        t3.contains("(no PMU events)") && t3.contains("no hardware PMU"),
        "{t3}"
    );
    let t4 = read("t4-culprit.md");
    assert!(
        t4.contains("(no search)") && t4.contains("dsb2mite_switches.penalty_cycles"),
        "{t4}"
    );
    let summary = read("summary.md");
    assert!(
        summary.contains("no significant difference on this CPU (p = "),
        "{summary}"
    );
    assert!(
        summary.contains("fewer instructions, slower: memory stalls"),
        "{summary}"
    );
    assert!(summary.contains("the same, within 0.01 %"), "{summary}");
    assert!(summary.contains("xferbench study perf-stat --out perf-stat-bare-metal"));
    insta::assert_snapshot!("perf_stat_summary_vm", summary);
    insta::assert_snapshot!("perf_stat_t2_vm", read("t2-perf-stat-default.md"));
}

#[test]
fn with_a_pmu_the_culprit_is_the_23x_event_and_the_diagnosis_names_it() {
    let fx = |n: &str| {
        std::fs::read_to_string(format!(
            "{}/../lab/testdata/perf-stat/{n}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    let candidates = search_candidates(&parse_list(&fx("perf-list-skylake.txt")));
    let mut rows = compare_rows(
        &candidates,
        &[parse_csv(&fx("search-fast-a.csv")).unwrap()],
        &[parse_csv(&fx("search-slow-b.csv")).unwrap()],
    );
    rank(&mut rows);
    let stall_names: Vec<String> = SEED_STALL_EVENTS.iter().map(|s| s.to_string()).collect();
    let stall_rows = compare_rows(
        &stall_names,
        &[parse_csv(&fx("seed-stalls-fast-a.csv")).unwrap()],
        &[parse_csv(&fx("seed-stalls-slow-b.csv")).unwrap()],
    );
    let mut passes = vm_passes();
    let comparison = |rows| EventComparison {
        rounds: 1,
        rows,
        unknown: vec![],
    };
    passes.search = Pass {
        value: Some(vec![PairEvents {
            benchmark: KB.into(),
            comparison: comparison(rows),
        }]),
        reason: None,
    };
    passes.stall_events = Pass {
        value: Some(vec![PairEvents {
            benchmark: KB.into(),
            comparison: comparison(stall_rows),
        }]),
        reason: None,
    };
    let mut doc = vm_doc(passes);
    // B 23 % slower, as in the seed.
    doc.points[1] = point(1, KB, "b", &[0.00494, 0.00490, 0.00499, 0.00492, 0.00497]);
    doc.context.capabilities.pmu = true;
    doc.context.capabilities.pmu_note = None;
    let ex = Extras::of(&doc);
    let pairs = pairs(&doc, &ex);
    let kb = &pairs[0].report;
    assert!(kb.verdict.significant);
    assert!(
        kb.verdict.diagnosis.starts_with(
            "same instructions (within 0.01 %) but slower: dsb2mite_switches.penalty_cycles 9.94 M → 229 M (23.1×): front end, likely code alignment"
        ),
        "{}",
        kb.verdict.diagnosis
    );
    let t4 = t4(&pairs, &ex).to_markdown();
    let first = t4.lines().nth(4).unwrap();
    assert!(
        first.contains("| 1 | dsb2mite_switches.penalty_cycles |") && first.contains("23.1×"),
        "{t4}"
    );
    insta::assert_snapshot!("perf_stat_t4_pmu", t4);
    insta::assert_snapshot!("perf_stat_t3_pmu", t3(&pairs, &ex).to_markdown());
}

/// Callgrind's counts as points of the plan (group `callgrind`, one run, first)
/// render the tables the counts in the passes rendered.
#[test]
fn callgrind_points_render_as_the_counts_in_the_passes_did() {
    let passes = vm_passes();
    let counts = passes.callgrind.value.clone().unwrap();
    let old = vm_doc(passes.clone());
    let mut new = vm_doc(Passes {
        callgrind: Pass {
            value: None,
            reason: None,
        },
        ..passes
    });
    let cg_points: Vec<PointResult> = counts
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut p = point(i, &c.benchmark, &c.variant, &[1.0]);
            p.params = [
                ("group", callgrind::GROUP.to_string()),
                ("benchmark", c.benchmark.clone()),
                ("variant", c.variant.clone()),
                ("iterations", c.iterations.to_string()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            p.runs[0].figures = c
                .per_run
                .iter()
                .map(|(k, v)| (format!("{}{k}", callgrind_rig::PREFIX), *v))
                .collect();
            p
        })
        .collect();
    let timed = std::mem::take(&mut new.points);
    new.points = cg_points.into_iter().chain(timed).collect();
    for (i, p) in new.points.iter_mut().enumerate() {
        p.index = i;
    }
    let render = |doc: &ResultDoc| {
        let tmp = tempfile::tempdir().unwrap();
        let folder = crate::write_folder(tmp.path(), doc).unwrap();
        [
            "t1-time.md",
            "t3-stall-events.md",
            "t4-culprit.md",
            "summary.md",
        ]
        .map(|f| std::fs::read_to_string(folder.dir().join(f)).unwrap())
    };
    let (old, new) = (render(&old), render(&new));
    assert!(new[1].contains("callgrind, simulated"), "{}", new[1]);
    assert_eq!(old, new);
}

/// A point of one of perf's groups whose runs counted `runs` (rows of
/// `perf stat -x,`, each with the events it asked for).
fn perf_point(group: &str, bench: &str, variant: &str, runs: &[Vec<PerfStatRow>]) -> PointResult {
    let mut p = point(0, bench, variant, &vec![1.0; runs.len()]);
    p.params.insert("group".into(), group.into());
    for (run, rows) in p.runs.iter_mut().zip(runs) {
        run.figures = to_figures(rows);
        for (k, v) in [
            (perf_rig::ELAPSED_S, 0.1),
            (perf_rig::USER_S, 0.09),
            (perf_rig::SYS_S, 0.01),
        ] {
            run.figures.insert(k.into(), v);
        }
    }
    p
}

/// `doc` with `points` ahead of its timed points, all numbered in order.
fn with_points_first(mut doc: ResultDoc, points: Vec<PointResult>) -> ResultDoc {
    let timed = std::mem::take(&mut doc.points);
    doc.points = points.into_iter().chain(timed).collect();
    for (i, p) in doc.points.iter_mut().enumerate() {
        p.index = i;
    }
    doc
}

fn render_all(doc: &ResultDoc) -> [String; 5] {
    let tmp = tempfile::tempdir().unwrap();
    let folder = crate::write_folder(tmp.path(), doc).unwrap();
    [
        "t1-time.md",
        "t2-perf-stat-default.md",
        "t3-stall-events.md",
        "t4-culprit.md",
        "summary.md",
    ]
    .map(|f| std::fs::read_to_string(folder.dir().join(f)).unwrap())
}

/// perf's default block as points of the plan (group `perf-stat`, one run) renders
/// the T2 and summary the block in the passes rendered.
#[test]
fn the_default_block_as_points_renders_as_the_block_in_the_passes_did() {
    let passes = vm_passes();
    let block = passes.default_block.value.clone().unwrap();
    let old = vm_doc(passes.clone());
    let rows: Vec<PerfStatRow> = parse_csv(include_str!(
        "../../../../lab/testdata/perf-stat/default-block-vm.csv"
    ))
    .unwrap();
    let mut a = perf_point(perf::DEFAULT_BLOCK, KB, "a", std::slice::from_ref(&rows));
    let figures = &mut a.runs[0].figures;
    figures.insert(perf_rig::ELAPSED_S.into(), block.elapsed_s);
    figures.insert(perf_rig::USER_S.into(), block.user_s);
    figures.insert(perf_rig::SYS_S.into(), block.sys_s);
    a.warnings
        .push(format!("{}: cycles, instructions", perf_rig::NOT_SUPPORTED));
    let b = perf_point(perf::DEFAULT_BLOCK, KB, "b", &[rows]);
    let new = with_points_first(
        vm_doc(Passes {
            default_block: Pass::reason(None),
            ..passes
        }),
        vec![a, b],
    );
    let (old, new) = (render_all(&old), render_all(&new));
    assert!(
        new[1].contains("86.80 msec") || new[1].contains("88.41 msec"),
        "{}",
        new[1]
    );
    assert!(new[1].contains("<not supported>"), "{}", new[1]);
    assert_eq!(old, new);
}

/// The seed's stall events and the stall search as points of the plan (groups
/// `stalls` and `search`) render the T3, T4 and summary the passes rendered.
#[test]
fn stall_points_render_as_the_stall_passes_did() {
    let fx = |n: &str| {
        parse_csv(
            &std::fs::read_to_string(format!(
                "{}/../lab/testdata/perf-stat/{n}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
        )
        .unwrap()
    };
    let candidates: Vec<String> = fx("search-fast-a.csv")
        .iter()
        .map(|r| r.event.clone())
        .collect();
    let seed: Vec<String> = SEED_STALL_EVENTS.iter().map(|s| s.to_string()).collect();
    let rows = |events: &[String], f: &str| perf_rig::with_every_event(events, fx(f));
    let (sa, sb) = (
        rows(&seed, "seed-stalls-fast-a.csv"),
        rows(&seed, "seed-stalls-slow-b.csv"),
    );
    let (qa, qb) = (
        rows(&candidates, "search-fast-a.csv"),
        rows(&candidates, "search-slow-b.csv"),
    );
    let comparison = |rows| EventComparison {
        rounds: 1,
        rows,
        unknown: vec![],
    };
    let mut search = compare_rows(
        &candidates,
        std::slice::from_ref(&qa),
        std::slice::from_ref(&qb),
    );
    rank(&mut search);
    let mut passes = vm_passes();
    passes.stall_events = Pass {
        value: Some(vec![PairEvents {
            benchmark: KB.into(),
            comparison: comparison(compare_rows(
                &seed,
                std::slice::from_ref(&sa),
                std::slice::from_ref(&sb),
            )),
        }]),
        reason: None,
    };
    passes.search = Pass {
        value: Some(vec![PairEvents {
            benchmark: KB.into(),
            comparison: comparison(search),
        }]),
        reason: None,
    };
    let mut old = vm_doc(passes.clone());
    old.points[1] = point(1, KB, "b", &[0.00494, 0.00490, 0.00499, 0.00492, 0.00497]);
    old.context.capabilities.pmu = true;
    old.context.capabilities.pmu_note = None;
    let mut new = old.clone();
    let ex = new.study.as_mut().unwrap();
    let planned = Passes {
        stall_events: Pass::reason(None),
        search: Pass::reason(None),
        ..passes
    };
    ex.extras
        .insert("passes".into(), serde_json::to_value(&planned).unwrap());
    let new = with_points_first(
        new,
        vec![
            perf_point(perf::STALLS, KB, "a", &[sa]),
            perf_point(perf::STALLS, KB, "b", &[sb]),
            perf_point(perf::SEARCH, KB, "a", &[qa]),
            perf_point(perf::SEARCH, KB, "b", &[qb]),
        ],
    );
    let (old, new) = (render_all(&old), render_all(&new));
    assert!(
        new[3].contains("dsb2mite_switches.penalty_cycles"),
        "{}",
        new[3]
    );
    assert!(new[2].contains("uops_executed.stall_cycles"), "{}", new[2]);
    assert_eq!(old, new);
}

/// A row of an earlier version's default block as perf printed it.
fn perf_row(r: &BlockRow) -> PerfStatRow {
    PerfStatRow {
        event: r.event.clone(),
        value: match (r.value, r.status.as_str()) {
            (Some(v), _) => PerfValue::Counted(v),
            (None, "not supported") => PerfValue::NotSupported,
            (None, _) => PerfValue::NotCounted,
        },
        unit: r.unit.clone(),
        running_pct: None,
        metrics: r.metrics.clone(),
    }
}

/// A result file of an earlier version, in which perf's default block was a pass of
/// its own (`passes.default_block`, kept in `testdata/` with its runs cut to three),
/// renders the same tables and summary as the same file with the block as a point of
/// the plan, and its T2 as that version wrote it.
#[test]
fn an_earlier_result_renders_the_same_from_the_passes_and_from_points() {
    let dir = format!("{}/testdata/perf-stat", env!("CARGO_MANIFEST_DIR"));
    let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).unwrap();
    let old: ResultDoc = serde_json::from_str(&read("results-passes.json")).unwrap();
    let ex = Extras::of(&old);
    let block = ex
        .default_block
        .clone()
        .expect("the earlier version's block");
    let rows: Vec<PerfStatRow> = block.rows.iter().map(perf_row).collect();
    let mut a = perf_point(perf::DEFAULT_BLOCK, KB, "a", &[rows]);
    for (k, v) in [
        (perf_rig::ELAPSED_S, block.elapsed_s),
        (perf_rig::USER_S, block.user_s),
        (perf_rig::SYS_S, block.sys_s),
    ] {
        a.runs[0].figures.insert(k.into(), v);
    }
    let passes = Passes {
        default_block: Pass::reason(None),
        ..ex.passes.clone().unwrap()
    };
    let mut new = old.clone();
    new.study
        .as_mut()
        .unwrap()
        .extras
        .insert("passes".into(), serde_json::to_value(&passes).unwrap());
    let new = with_points_first(new, vec![a]);
    assert!(
        Extras::of(&new)
            .passes
            .unwrap()
            .default_block
            .value
            .is_none()
    );
    let (old, new) = (render_all(&old), render_all(&new));
    assert_eq!(old, new);
    assert_eq!(old[1], read("t2-perf-stat-default-passes.md"));
}

/// The committed result file renders the committed tables and summary byte for byte.
#[test]
fn the_committed_results_render_the_committed_tables() {
    let dir = format!(
        "{}/../../docs/studies/data/perf-stat",
        env!("CARGO_MANIFEST_DIR")
    );
    let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).unwrap();
    let doc: ResultDoc = serde_json::from_str(&read("results.json")).unwrap();
    assert!(
        doc.points
            .iter()
            .any(|p| p.params.get("group").map(String::as_str) == Some(perf::DEFAULT_BLOCK)),
        "the committed data holds perf's default block as points"
    );
    let rendered = render_all(&doc);
    for (i, f) in [
        "t1-time.md",
        "t2-perf-stat-default.md",
        "t3-stall-events.md",
        "t4-culprit.md",
        "summary.md",
    ]
    .iter()
    .enumerate()
    {
        if std::path::Path::new(&format!("{dir}/{f}")).exists() {
            assert_eq!(rendered[i], read(f), "{f}");
        }
    }
}

/// A comparison of hand-picked counts, A then B, each event counted.
fn events(rows: &[(&str, f64, f64)]) -> Vec<PairEvents> {
    let rows = rows
        .iter()
        .map(|(e, a, b)| xferbench_lab::ab::stalls::EventCount {
            event: e.to_string(),
            a: Some(*a),
            b: Some(*b),
            ratio: Some(b / a),
            status: "counted".into(),
            running_pct: Some(100.0),
            cause: String::new(),
        })
        .collect();
    vec![PairEvents {
        benchmark: KB.into(),
        comparison: EventComparison {
            rounds: 1,
            rows,
            unknown: vec![],
        },
    }]
}

/// The findings of a document, with a PMU when `pmu`.
fn findings_of(mut doc: ResultDoc, pmu: bool) -> Vec<Finding> {
    doc.context.capabilities.pmu = pmu;
    let ex = Extras::of(&doc);
    let pairs = pairs(&doc, &ex);
    findings(&doc, &ex, &pairs)
}

#[test]
fn same_instructions_slower_holds_only_on_a_significant_slowdown_with_equal_counts() {
    use crate::finding::Verdict;
    // The VM fixture: the 1 KiB pair does not differ significantly.
    let f = findings_of(vm_doc(vm_passes()), false);
    assert!(
        f[0].seed
            .contains("`circular_buffer_into_byte_buffer_1kb` ran 23% slower")
    );
    assert_eq!(f[0].verdict, Verdict::DoesNotHold, "{}", f[0].line());
    // B 23 % slower with callgrind's equal counts: it holds.
    let mut doc = vm_doc(vm_passes());
    doc.points[1] = point(1, KB, "b", &[0.00494, 0.00490, 0.00499, 0.00492, 0.00497]);
    let f = findings_of(doc.clone(), false);
    assert_eq!(f[0].verdict, Verdict::Holds, "{}", f[0].line());
    // No instruction count at all (no PMU, no callgrind): it cannot be judged.
    let mut passes = vm_passes();
    passes.callgrind = Pass {
        value: None,
        reason: Some("valgrind is not installed".into()),
    };
    let mut bare = vm_doc(passes);
    bare.points[1] = doc.points[1].clone();
    let f = findings_of(bare, false);
    assert!(f[0].cannot_be_judged(), "{}", f[0].line());
    assert!(f.last().unwrap().cannot_be_judged(), "the memory pair too");
}

#[test]
fn fewer_instructions_slower_holds_on_the_memory_pair_and_not_on_equal_counts() {
    use crate::finding::Verdict;
    let f = findings_of(vm_doc(vm_passes()), false);
    let walk = f.last().unwrap();
    assert!(
        walk.figures.contains("`list_walk_512k_nodes`"),
        "{}",
        walk.line()
    );
    assert_eq!(walk.verdict, Verdict::Holds, "{}", walk.line());
    // The same instruction counts on both sides: not the seed's trade.
    let mut passes = vm_passes();
    if let Some(c) = passes.callgrind.value.as_mut() {
        let a = c[4].clone();
        c[5].per_run = a.per_run;
    }
    let f = findings_of(vm_doc(passes), false);
    assert_eq!(f.last().unwrap().verdict, Verdict::DoesNotHold);
}

#[test]
fn stall_findings_cannot_be_judged_without_a_pmu_and_are_judged_with_one() {
    use crate::finding::Verdict;
    let seeded = |stalls: &[(&str, f64, f64)], search: &[(&str, f64, f64)]| {
        let mut passes = vm_passes();
        passes.stall_events = Pass {
            value: Some(events(stalls)),
            reason: None,
        };
        passes.search = Pass {
            value: Some(events(search)),
            reason: None,
        };
        vm_doc(passes)
    };
    let seed_stalls = [
        ("instructions", 5.9e9, 5.9e9),
        ("uops_executed.stall_cycles", 34.3e6, 308.8e6),
        ("resource_stalls.any", 13.1e6, 14.2e6),
        ("cycle_activity.stalls_mem_any", 18.1e6, 288.1e6),
    ];
    let culprit = [
        ("dsb2mite_switches.penalty_cycles", 9.9e6, 229.3e6),
        ("resource_stalls.any", 13.1e6, 14.2e6),
    ];
    // Without a PMU: neither can be judged, whatever was recorded.
    let f = findings_of(seeded(&seed_stalls, &culprit), false);
    let (stalls, top) = (&f[2], &f[3]);
    assert!(stalls.cannot_be_judged() && top.cannot_be_judged());
    assert!(top.line().contains("no hardware PMU"), "{}", top.line());
    // With one, the seed's counts hold.
    let f = findings_of(seeded(&seed_stalls, &culprit), true);
    assert_eq!(f[2].verdict, Verdict::Holds, "{}", f[2].line());
    assert_eq!(f[3].verdict, Verdict::Holds, "{}", f[3].line());
    // Stall cycles that barely move, and another event on top: they do not.
    let flat = [
        ("uops_executed.stall_cycles", 34.3e6, 40.0e6),
        ("resource_stalls.any", 13.1e6, 14.2e6),
        ("cycle_activity.stalls_mem_any", 18.1e6, 288.1e6),
    ];
    let other = [("l1d_pend_miss.pending", 1.0e6, 30.0e6)];
    let f = findings_of(seeded(&flat, &other), true);
    assert_eq!(f[2].verdict, Verdict::DoesNotHold, "{}", f[2].line());
    assert_eq!(f[3].verdict, Verdict::DoesNotHold, "{}", f[3].line());
    // A PMU without the seed's Intel events cannot judge the first.
    let f = findings_of(seeded(&[("instructions", 1e9, 1e9)], &other), true);
    assert!(f[2].cannot_be_judged(), "{}", f[2].line());
}
