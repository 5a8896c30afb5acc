//! Deterministic result documents for snapshot tests: synthetic timings, no machine.

use std::collections::BTreeMap;
use xferbench_lab::result::*;
use xferbench_probes::cpu::ProcessCpu;
use xferbench_probes::stats::Estimate;
use xferbench_probes::verify::Integrity;

pub fn context(workload: &str, verify: bool, peer: &str) -> Context {
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
            trip_clock: Some(xferbench_probes::clock::TripSource::Tsc),
            trip_clock_step_ns: Some(10.0),
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
        plugins: Vec::new(),
        build: None,
        load: None,
    }
}

/// A machine with round numbers: memcpy 10 GB/s at every size (and at 64 KiB 0.5 GB/s
/// with dst−src ≡ 16 mod 4096, 9.5 GB/s at 2048), cache line 200 ns, futex 20 µs
/// across CPUs and 5 µs on one, pipe 25 µs, a system call 80 ns.
pub fn limits() -> xferbench_lab::limits::Limits {
    use xferbench_lab::limits::{COPY_SIZES, CopyLimit, CopyPlacement, Depth, Limits};
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
        placements: [(16, 0.5e9), (2048, 9.5e9)]
            .into_iter()
            .map(|(offset, rate)| CopyPlacement {
                size_bytes: 64 << 10,
                offset,
                bytes_per_s: est(rate),
                vs_aligned: rate / 10e9,
                slow: rate / 10e9 < xferbench_lab::limits::SLOW_PLACEMENT,
            })
            .collect(),
        cache_line_rtt_ns: Some(est(200.0)),
        futex_rtt_cross_ns: Some(est(20e3)),
        futex_rtt_same_ns: Some(est(5e3)),
        syscall_ns: est(80.0),
        clock_read_ns: Some(est(20.0)),
        clock_source: Some(xferbench_probes::clock::TripSource::Tsc),
        pipe_rtt_ns: Some(est(25e3)),
        handover_rtt_ns: Vec::new(),
        stream_floor: Vec::new(),
        stalls: vec![xferbench_lab::limits::StallLimit {
            cpu: 0,
            lost_fraction: est(0.012),
            wait_p99_ns: est(2e3),
            longest_ns: 1.5e6,
        }],
        took_s: 0.2,
        build: None,
    }
}

/// A run whose throughput is `bps` with `channels` equal channels.
pub fn run(
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
            runqueue_wait_s: None,
        }],
        integrity,
        counters: None,
        contention: None,
        collapsed: None,
    }
}

/// A point of `runs`, summarised.
pub fn point(
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
        chosen: Default::default(),
        defaults: Default::default(),
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
        contention: None,
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
        knees: Vec::new(),
        failed: Vec::new(),
        ab: None,
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
        knees: Vec::new(),
        failed: Vec::new(),
        ab: None,
    }
}

/// A stream sweep with hardware counters, as a machine with a PMU records them:
/// main and one peer process per point, `stalled-cycles-backend` not supported.
pub fn counters_doc() -> ResultDoc {
    use xferbench_probes::counters::{self, ProcessCounters, RunCounters};
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

/// A stream sweep of two points on an unoptimised build, recorded with the machine's
/// load: the first quiet, the second measured beside a compiler using 1.85 CPUs.
pub fn contended_doc() -> ResultDoc {
    use xferbench_probes::contention::{Contender, MachineLoad, PointContention};
    let mut doc = stream_doc();
    doc.points.truncate(2);
    doc.warnings.clear();
    doc.context.build = Some(xferbench_probes::build::BuildInfo {
        profile: "debug".into(),
        opt_level: "1".into(),
        debug_assertions: true,
        optimised: false,
    });
    let quiet = PointContention {
        runs: 5,
        others_cpus: 0.01,
        kernel_cpus: 0.0,
        steal: 0.001,
        load_1m: Some(3.1),
        busiest: vec![],
        busiest_kernel: vec![],
        contended: false,
    };
    let busy = PointContention {
        runs: 5,
        others_cpus: 1.85,
        kernel_cpus: 0.02,
        steal: 0.004,
        load_1m: Some(3.4),
        busiest: vec![Contender {
            pid: 4242,
            command: "cc1".into(),
            cpus: 1.8,
        }],
        busiest_kernel: vec![],
        contended: true,
    };
    doc.points[1].warnings.push(busy.warning());
    doc.points[0].contention = Some(quiet);
    doc.points[1].contention = Some(busy);
    let load = MachineLoad {
        load_1m_start: Some(3.1),
        load_1m_end: Some(3.4),
        others_cpus: 0.93,
        steal: 0.0025,
        contended_points: 1,
        points: 2,
        others_cpus_threshold: xferbench_probes::contention::OTHERS_CPUS,
        steal_threshold: xferbench_probes::contention::STEAL,
    };
    if let Some(w) = load.warning() {
        doc.warnings.push(w);
    }
    doc.context.load = Some(load);
    doc
}

/// A `load` sweep over shm and unix at 10 k/s, 100 k/s and 1 M/s, one 64-byte
/// channel, with its knees: shm sustains every rate (p99 4 µs to 6 µs), unix
/// sustains 100 k/s but at 1 M/s delivers 400 k/s with a p99 of 10 ms.
pub fn load_doc() -> ResultDoc {
    let curves = [
        ("shm", [(1e4, 1e4, 2e3), (1e5, 1e5, 2.2e3), (1e6, 1e6, 3e3)]),
        ("unix", [(1e4, 1e4, 8e3), (1e5, 1e5, 9e3), (1e6, 4e5, 5e6)]),
    ];
    let mut points = Vec::new();
    for (t, rates) in curves {
        for (offered, achieved, p50) in rates {
            let runs = (0..5)
                .map(|r| {
                    let k = 1.0 + 0.001 * (r as f64 - 2.0);
                    let mut run = run(r, achieved * k * 64.0, 64, 1, Some(p50 * k), None);
                    let f = &mut run.figures;
                    f.insert(figure::OFFERED_RATE.into(), offered);
                    f.insert(figure::LATENCY_P9999.into(), p50 * k * 8.0);
                    for (name, x) in figure::BEHIND.iter().zip([0.05, 0.25, 0.5, 2.0]) {
                        f.insert(name.to_string(), p50 * k * x);
                    }
                    f.insert(figure::UNSENT.into(), 0.0);
                    f.insert(figure::LOST.into(), 0.0);
                    run
                })
                .collect();
            let mut p = point(points.len(), t, 64, 1, runs, "load");
            p.params.insert("rate".into(), format!("{offered:.0}"));
            points.push(p);
        }
    }
    let mut doc = ResultDoc {
        schema_version: SCHEMA_VERSION,
        study: None,
        context: context("load", false, "process"),
        points,
        warnings: vec![],
        outcome: Outcome::Complete,
        knees: Vec::new(),
        failed: Vec::new(),
        ab: None,
    };
    doc.knees = xferbench_lab::knee::knees(&doc);
    doc
}
