//! Deterministic result documents for snapshot tests: synthetic timings, no machine.

use std::collections::BTreeMap;
use xferbench_lab::cpu::ProcessCpu;
use xferbench_lab::result::*;
use xferbench_lab::stats::Estimate;
use xferbench_lab::verify::Integrity;

pub(crate) fn context(workload: &str, verify: bool, peer: &str) -> Context {
    Context {
        tool: "xferbench".into(),
        version: "0.1.0".into(),
        command_line: vec!["xferbench".into(), "run".into(), workload.into()],
        hostname: "testhost".into(),
        cpu_model: "Test CPU".into(),
        cores: 2,
        kernel: "6.1.0".into(),
        os: "Debian GNU/Linux 12 (bookworm)".into(),
        start_time: "2026-11-22T05:00:00Z".into(),
        capabilities: Capabilities {
            pmu: false,
            pmu_note: Some("no hardware PMU".into()),
            perf: None,
            valgrind: None,
            perf_event_paranoid: Some(2),
        },
        settings: Settings {
            workload: workload.into(),
            runs: 5,
            warmup: 1,
            count: Some(100_000),
            duration_s: None,
            peer: peer.into(),
            pin: false,
            verify,
            interleave: false,
        },
        limits: None,
        remote: None,
    }
}

/// A machine with round numbers: memcpy 10 GB/s at every size, cache line 200 ns,
/// futex 20 µs across CPUs and 5 µs on one, pipe 25 µs, a system call 80 ns.
pub(crate) fn limits() -> xferbench_lab::limits::Limits {
    use xferbench_lab::limits::{COPY_SIZES, CopyLimit, Depth, Limits};
    let est = |v: f64| Estimate::from_values([v * 0.9, v, v * 1.1]).unwrap();
    Limits {
        depth: Depth::Quick,
        cpus: vec![0, 1],
        memcpy: COPY_SIZES
            .iter()
            .map(|&s| CopyLimit {
                size_bytes: s,
                bytes_per_s: est(10e9),
            })
            .collect(),
        cache_line_rtt_ns: Some(est(200.0)),
        futex_rtt_cross_ns: Some(est(20e3)),
        futex_rtt_same_ns: Some(est(5e3)),
        syscall_ns: est(80.0),
        pipe_rtt_ns: Some(est(25e3)),
        handover_rtt_ns: Vec::new(),
        took_s: 0.2,
    }
}

/// A run whose throughput is `bps` with `channels` equal channels.
fn run(
    i: usize,
    bps: f64,
    size: u64,
    channels: usize,
    latency: Option<f64>,
    integrity: Option<Integrity>,
) -> RunRecord {
    let messages = 100_000 * channels as u64;
    let bytes = messages * size;
    let window_s = bytes as f64 / bps;
    let mut figures = BTreeMap::new();
    figures.insert(figure::THROUGHPUT.to_string(), bps);
    figures.insert(figure::MESSAGE_RATE.to_string(), messages as f64 / window_s);
    figures.insert(figure::WINDOW.to_string(), window_s);
    figures.insert(figure::CPU_MAIN.to_string(), 0.9 + 0.01 * i as f64);
    figures.insert(figure::CPU_PEERS.to_string(), 0.8);
    let lat = latency.map(|l| Latency {
        count: messages,
        p50_ns: l as u64,
        p90_ns: (l * 1.2) as u64,
        p99_ns: (l * 2.0) as u64,
        p999_ns: (l * 4.0) as u64,
        min_ns: (l * 0.8) as u64,
        max_ns: (l * 30.0) as u64,
        mean_ns: l * 1.1,
    });
    if let Some(l) = &lat {
        for (name, v) in l.figures() {
            figures.insert(name.to_string(), v);
        }
    }
    let per = bps / channels as f64;
    RunRecord {
        run: i,
        sequence: Some(i),
        window_ns: (window_s * 1e9) as u64,
        messages,
        bytes,
        figures,
        latency: lat,
        channels: (0..channels)
            .map(|c| ChannelRun {
                channel: c,
                start_offset_ns: c as u64 * 1000,
                end_offset_ns: (window_s * 1e9) as u64,
                messages: 100_000,
                bytes: 100_000 * size,
                throughput_bytes_per_s: per * (1.0 + 0.01 * c as f64),
                messages_per_s: per / size as f64,
                latency: lat,
                integrity,
            })
            .collect(),
        cpu: vec![ProcessCpu {
            role: "main (drivers)".into(),
            pid: 100,
            window_s,
            user_s: 0.1 * window_s,
            sys_s: 0.8 * window_s,
            cpus_utilised: 0.9,
            voluntary_switches: 10,
            involuntary_switches: 2,
        }],
        integrity,
        counters: None,
    }
}

fn point(
    index: usize,
    transport: &str,
    size: u64,
    channels: usize,
    runs: Vec<RunRecord>,
    workload: &str,
) -> PointResult {
    let mut summary = BTreeMap::new();
    for name in runs[0].figures.keys() {
        summary.insert(
            name.clone(),
            Estimate::from_values(runs.iter().map(|r| r.figures[name])).unwrap(),
        );
    }
    let per_channel = (0..channels)
        .map(|c| ChannelSummary {
            channel: c,
            throughput_bytes_per_s: Estimate::from_values(
                runs.iter().map(|r| r.channels[c].throughput_bytes_per_s),
            )
            .unwrap(),
            messages_per_s: Estimate::from_values(
                runs.iter().map(|r| r.channels[c].messages_per_s),
            )
            .unwrap(),
            latency_p50_ns: Estimate::from_values(
                runs.iter()
                    .filter_map(|r| r.channels[c].latency.map(|l| l.p50_ns as f64)),
            ),
        })
        .collect();
    let integrity = runs[0].integrity.map(|_| {
        let mut t = Integrity::default();
        runs.iter()
            .filter_map(|r| r.integrity.as_ref())
            .for_each(|c| t.add(c));
        t
    });
    let mut params = BTreeMap::new();
    params.insert("workload".into(), workload.into());
    params.insert("transport".into(), transport.into());
    params.insert("size".into(), size.to_string());
    params.insert("channels".into(), channels.to_string());
    PointResult {
        index,
        params,
        size_bytes: size,
        channels,
        primary: xferbench_lab::workload::WorkloadKind::from_name(workload).map(|w| {
            let r = w.rules();
            xferbench_lab::result::Primary {
                figure: r.primary.into(),
                higher_is_better: r.higher_is_better,
            }
        }),
        runs,
        summary,
        per_channel,
        integrity,
        warnings: vec![],
        counters: None,
        limit: None,
        drift: None,
    }
}

/// A stream sweep: pipe and tcp, two sizes, one with two channels, verified.
pub fn stream_doc() -> ResultDoc {
    let clean = Some(Integrity {
        checked: 100_000,
        ..Default::default()
    });
    let mut points = Vec::new();
    for (i, (t, size, ch, base)) in [
        ("pipe", 64u64, 1usize, 90e6),
        ("pipe", 65536, 2, 1.6e9),
        ("tcp", 64, 1, 40e6),
        ("tcp", 65536, 2, 3.8e9),
    ]
    .into_iter()
    .enumerate()
    {
        let runs = (0..5)
            .map(|r| {
                run(
                    r,
                    base * (1.0 + 0.02 * (r as f64 - 2.0)),
                    size,
                    ch,
                    None,
                    clean,
                )
            })
            .collect();
        points.push(point(i, t, size, ch, runs, "stream"));
    }
    points[3]
        .warnings
        .push("noisy: throughput_bytes_per_s varies by ±6.0 % (robust CV) over 5 runs".into());
    let mut p = points[2].clone();
    p.integrity = Some(Integrity {
        checked: 500_000,
        corrupt: 3,
        ..Default::default()
    });
    points[2] = p;
    ResultDoc {
        schema_version: SCHEMA_VERSION,
        study: None,
        context: context("stream", true, "process"),
        points,
        warnings: vec!["counters: no hardware PMU".into()],
        outcome: Outcome::Complete,
    }
}

/// A pingpong sweep over unix, one size, 1 and 2 channels, interrupted.
pub fn pingpong_doc() -> ResultDoc {
    let points = [1usize, 2]
        .into_iter()
        .enumerate()
        .map(|(i, ch)| {
            let runs = (0..5)
                .map(|r| run(r, 5e6, 64, ch, Some(12_400.0 + 100.0 * r as f64), None))
                .collect();
            point(i, "unix", 64, ch, runs, "pingpong")
        })
        .collect();
    ResultDoc {
        schema_version: SCHEMA_VERSION,
        study: None,
        context: context("pingpong", false, "thread"),
        points,
        warnings: vec![],
        outcome: Outcome::Interrupted,
    }
}

/// A stream sweep with hardware counters, as a machine with a PMU records them:
/// main and one peer process per point, `stalled-cycles-backend` not supported.
pub fn counters_doc() -> ResultDoc {
    use xferbench_lab::counters::{self, ProcessCounters, RunCounters};
    let mut doc = stream_doc();
    doc.warnings.clear();
    doc.context.capabilities.pmu = true;
    doc.context.capabilities.pmu_note = None;
    for p in &mut doc.points {
        let mut per_run = Vec::new();
        for r in &mut p.runs {
            let k = r.messages as f64 * (1.0 + 0.001 * r.run as f64);
            let process = |role: &str, pid: u32, scale: f64| {
                let mut values: BTreeMap<String, f64> = [
                    (counters::name::TASK_CLOCK, 0.9e9 * scale),
                    (counters::name::CONTEXT_SWITCHES, 0.01 * k),
                    (counters::name::CPU_MIGRATIONS, 1.0),
                    (counters::name::PAGE_FAULTS, 12.0),
                    (counters::name::INSTRUCTIONS, 2400.0 * k * scale),
                    (counters::name::CYCLES, 1800.0 * k * scale),
                    (counters::name::STALLED_FRONTEND, 90.0 * k * scale),
                    (counters::name::CACHE_MISSES, 0.5 * k),
                    (counters::name::BRANCH_MISSES, 2.0 * k),
                ]
                .into_iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect();
                counters::derive(&mut values);
                ProcessCounters {
                    role: role.into(),
                    pid,
                    values,
                }
            };
            let rc = RunCounters {
                source: "perf_event".into(),
                simulated: false,
                processes: vec![process("main", 100, 1.0), process("peer0", 101, 0.8)],
                unsupported: vec![counters::name::STALLED_BACKEND.into()],
            };
            r.counters = Some(rc.clone());
            per_run.push(rc);
        }
        p.counters = counters::summarise(&per_run, "the measured window of each run");
    }
    doc
}

/// A small RPMsg study: table points for 1 and 8 channels × 1 and 496-byte packets,
/// every notify mode with copy and kick with zero-copy for one channel, one table
/// point skipped; a remote process per point.
pub fn rpmsg_doc() -> ResultDoc {
    use xferbench_lab::workload::rpmsg::{KICKS_TO_HOST, KICKS_TO_REMOTE, SUM_OF_RATES};
    let mut points = Vec::new();
    let plan: [(&str, usize, u64, u64, &str, &str, f64); 8] = [
        ("table", 1, 1, 10_000, "kick", "copy", 150_000.0),
        ("table", 1, 496, 100_000, "kick", "copy", 140_000.0),
        ("table", 8, 1, 1_000, "kick", "copy", 160_000.0),
        ("table", 8, 496, 10_000, "kick", "copy", 170_000.0),
        ("variants", 1, 496, 496 * 4000, "kick", "copy", 140_000.0),
        (
            "variants",
            1,
            496,
            496 * 4000,
            "event-idx",
            "copy",
            150_000.0,
        ),
        (
            "variants",
            1,
            496,
            496 * 40_000,
            "poll",
            "copy",
            1_500_000.0,
        ),
        (
            "variants",
            1,
            496,
            496 * 4000,
            "kick",
            "zero-copy",
            141_000.0,
        ),
    ];
    for (i, (group, ch, packet, transfer, notify, buffers, rate)) in plan.into_iter().enumerate() {
        let runs: Vec<RunRecord> = (0..3)
            .map(|r| {
                let bps = rate * packet as f64 * (1.0 + 0.02 * r as f64);
                let mut rec = run(r, bps, packet, ch, Some(1e9 / rate), None);
                let sum = if ch > 1 && transfer <= 1_000 {
                    3.0
                } else {
                    1.05
                };
                let f = &mut rec.figures;
                f.insert(SUM_OF_RATES.into(), bps * sum);
                f.insert(KICKS_TO_REMOTE.into(), 1.0);
                f.insert(KICKS_TO_HOST.into(), 1.0);
                if ch > 1 {
                    f.insert(figure::FAIRNESS.into(), 0.98);
                }
                rec
            })
            .collect();
        let mut p = point(i, "rpmsg", packet, ch, runs, "pingpong");
        p.primary = Some(Primary {
            figure: figure::THROUGHPUT.into(),
            higher_is_better: true,
        });
        p.params = [
            ("group", group.to_string()),
            ("channels", ch.to_string()),
            ("packet", packet.to_string()),
            ("transfer", transfer.to_string()),
            ("notify", notify.to_string()),
            ("buffers", buffers.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        points.push(p);
    }
    let mut ctx = context("rpmsg", false, "process");
    ctx.settings.runs = 3;
    ctx.settings.interleave = true;
    ctx.settings.count = None;
    ctx.limits = Some(xferbench_lab::limits::MachineLimits {
        start: limits(),
        end: Some(limits()),
        drift_threshold: 0.25,
    });
    let mut extras = BTreeMap::new();
    extras.insert("scale".into(), serde_json::json!({ "budget": 12_000 }));
    extras.insert(
        "skipped".into(),
        serde_json::json!([{ "channels": 8, "packet": 1, "transfer": 100_000, "round_trips": 800_000 }]),
    );
    ResultDoc {
        schema_version: SCHEMA_VERSION,
        study: Some(StudyInfo {
            name: "rpmsg".into(),
            quick: true,
            planned_points: 8,
            extras,
        }),
        context: ctx,
        points,
        warnings: vec![],
        outcome: Outcome::Complete,
    }
}

/// A small SIS8300 study: the quick plan's points, each with two synthetic runs
/// turned into records by the rig's own `record` (per-board rows, memcpy rows,
/// host CPU with 0.5 s samples, sample checks).
pub fn sis8300_doc() -> ResultDoc {
    use xferbench_lab::clock::Stamp;
    use xferbench_lab::rig::daq::record;
    use xferbench_lab::studies::sis8300::{Scale, params, points};
    use xferbench_lab::workload::daq::{DaqCpu, DaqEnd, DaqRun, Kernels, Row};
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
    }
}
