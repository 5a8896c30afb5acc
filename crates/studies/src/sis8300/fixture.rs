//! Deterministic result documents of the study for its writer's tests: synthetic
//! timings, no machine.

use std::collections::BTreeMap;
use xferbench_lab::result::*;
use xferbench_probes::cpu::ProcessCpu;
use xferbench_probes::stats::Estimate;
use xferbench_probes::verify::Integrity;
use xferbench_report::fixture::context;

/// A small SIS8300 study: the quick plan's points, each with two synthetic runs
/// turned into records by the rig's own `record` (per-board rows, memcpy rows,
/// host CPU with 0.5 s samples, sample checks).
pub fn sis8300_doc() -> ResultDoc {
    use super::{Scale, params, points};
    use xferbench_lab::rig::daq::record;
    use xferbench_lab::workload::daq::{Access, BoardCpu, DaqCpu, DaqEnd, DaqRun, Kernels, Row};
    use xferbench_probes::clock::Stamp;
    let speed = |func: &str, k: Kernels, factor: usize| -> f64 {
        let base = match func {
            "func_dec" | "func_no_decsca" => 800.0,
            "func_decsca" | "func_sca" => 300.0,
            _ => 280.0,
        } * factor as f64;
        if k == Kernels::Improved {
            base * 8.0
        } else {
            base
        }
    };
    let mut out = Vec::new();
    for (index, p) in points(&Scale::quick()).into_iter().enumerate() {
        let s = &p.spec;
        let runs: Vec<RunRecord> = (0..2)
            .map(|r| {
                let mut rows = Vec::new();
                for (b, link) in s.links.iter().enumerate() {
                    let link = link.rate().map_or(8000.0, |x| x / 1e6);
                    let share = if s.links.len() > 1 { 0.93 } else { 1.0 };
                    let mut funcs = vec![("func_readout", link * share * (1.0 - 0.01 * b as f64))];
                    if p.primary != "func_readout" {
                        funcs.push((p.primary, speed(p.primary, s.kernels, s.scale.factor)));
                    }
                    if s.memcpy {
                        funcs.push(("memcpy", 5000.0));
                        funcs.push(("memcpy_moved", 3000.0));
                    }
                    for (func, mb_s) in funcs {
                        let passes = u64::from(s.nreads * s.loops.max(1));
                        let bytes = s.nbytes_raw() * passes;
                        let busy = (bytes as f64 / (mb_s * (1.0 + 0.01 * r as f64)) * 1e3) as u64;
                        rows.push(Row {
                            func: func.into(),
                            board: b,
                            dev: s.devices[b].clone(),
                            bytes_raw: s.nbytes_raw(),
                            passes,
                            start_ns: 100_000,
                            end_ns: 100_000 + busy,
                            busy_ns: busy,
                            output_samples: if func == "func_readout" { 0 } else { bytes / 2 },
                            cpu_ns: busy / 2,
                            engine_cpu_ns: if s.access == Access::Mmap && func == "func_readout" {
                                busy / 2
                            } else {
                                0
                            },
                        });
                    }
                }
                let n = s.links.len() as f64;
                let host = match (s.loops, s.end) {
                    (0, _) => 50.0 * n,
                    (_, DaqEnd::Poll) => 18.0 * n + 1.0,
                    (_, DaqEnd::Irq) => 0.5 * n + s.samples as f64 / 1e6,
                };
                let run = DaqRun {
                    td: Stamp(1_000_000),
                    rows,
                    cpu: DaqCpu {
                        process: ProcessCpu {
                            role: "main".into(),
                            pid: 100,
                            window_s: 1.0,
                            user_s: host / 200.0,
                            sys_s: host / 200.0,
                            cpus_utilised: host / 100.0,
                            voluntary_switches: 10,
                            involuntary_switches: 2,
                            runqueue_wait_s: None,
                        },
                        engines_s: 0.01,
                        verify_s: 0.0,
                        host_percent: host,
                        top_percent: vec![host - 1.0, host + 1.0],
                        wait_s: match (s.loops, s.end) {
                            (0, _) => 0.0,
                            (_, DaqEnd::Poll) => 0.18 * n,
                            (_, DaqEnd::Irq) => 0.002 * n,
                        },
                        work_s: s.samples as f64 / 1e8,
                        boards: (0..s.links.len())
                            .map(|b| BoardCpu {
                                board: b,
                                wait_s: 0.18,
                                work_s: s.samples as f64 / 1e8 / n,
                                engine_s: if s.access == Access::Mmap { 0.01 } else { 0.0 },
                            })
                            .collect(),
                    },
                    status_reads: if s.end == DaqEnd::Poll {
                        1200 * u64::from(s.loops)
                    } else {
                        0
                    },
                    acquisitions: u64::from(s.loops),
                    integrity: Some(Integrity {
                        checked: s.samples as u64 * n as u64,
                        ..Integrity::default()
                    }),
                    interrupted: false,
                };
                let mut rec = record(&run, p.primary);
                rec.run = r;
                rec
            })
            .collect();
        let mut summary = BTreeMap::new();
        for name in runs[0].figures.keys() {
            if let Some(e) =
                Estimate::from_values(runs.iter().filter_map(|r| r.figures.get(name).copied()))
            {
                summary.insert(name.clone(), e);
            }
        }
        let mut integrity = Integrity::default();
        runs.iter()
            .filter_map(|r| r.integrity.as_ref())
            .for_each(|i| integrity.add(i));
        out.push(PointResult {
            index,
            params: params(&p),
            chosen: Default::default(),
            defaults: Default::default(),
            size_bytes: s.nbytes_raw(),
            channels: s.links.len(),
            primary: None,
            runs,
            summary,
            per_channel: vec![],
            integrity: Some(integrity),
            warnings: vec![],
            counters: None,
            limit: None,
            drift: None,
            contention: None,
        });
    }
    let mut ctx = context("daq", true, "thread");
    ctx.settings.runs = 2;
    ctx.settings.warmup = 0;
    ctx.settings.interleave = true;
    ctx.settings.count = None;
    let planned_points = out.len();
    ResultDoc {
        schema_version: SCHEMA_VERSION,
        study: Some(StudyInfo {
            name: "sis8300".into(),
            quick: true,
            planned_points,
            extras: BTreeMap::new(),
        }),
        context: ctx,
        points: out,
        warnings: vec![],
        outcome: Outcome::Complete,
        knees: Vec::new(),
        failed: Vec::new(),
        ab: None,
    }
}
