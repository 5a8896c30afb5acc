//! The Warp Pipe study: warp-pipe's sample workload (506 threads × 100 iterations of
//! read → write back → read 2048 B against the memory mock), then the seed's testing
//! plan (threads, payload, iterations, single-threaded instances) plus the CRC's
//! share, the mock's I/O model and its read throughput, each comparing the original
//! design with the improved variants ([`ORIGINAL`], [`PER_THREAD`], [`PIPELINED`]).
//!
//! The plan only: the workload is [`xferbench_lab::workload::warp`], the rig
//! [`xferbench_lab::rig::memory_mock`]. Points run interleaved, 3 runs each (2 with
//! `--quick`), so that variants share the machine's drift. The CRC's speed on a
//! 2 KiB buffer is measured by points of the plan too, one per CRC ([`crc`]).

pub mod bench;
pub mod crc;
pub mod writer;

use crate::params::GROUP;
use crate::study::{Study, StudyEnv, StudyPlan};
use bench::MemoryMockBench;
use std::collections::BTreeMap;
use std::time::Duration;
use xferbench_lab::measure::{LoopOptions, PlannedPoint};
use xferbench_lab::result::figure;
use xferbench_lab::rig::FigureRules;
use xferbench_lab::rig::memory_mock::MockPoint;
use xferbench_lab::workload::warp::{ClientSpec, ConnectionMode, Ops, WarpParams, names};
use xferbench_params::{ParamDef, ParamError, ParamMap, PointParams};
use xferbench_probes::counters::CounterMode;
use xferbench_transports::warp::CrcKind;
use xferbench_transports::warp::server::{IO, IoModel};

/// `variant`: the design a Warp Pipe study point measures ([`ORIGINAL`],
/// [`PER_THREAD`], [`PIPELINED`]), with what the point changes in it
/// (`shared, crc=table`, `pipelined, io=threads`).
pub const VARIANT: ParamDef = ParamDef::text(
    "variant",
    "a variant of the study's plan",
    "original",
    "the design a point measures, with what it changes in it",
);

/// The parameters a Warp Pipe study point records: its group and variant, the
/// client's settings ([`WarpParams`]) and the mock's I/O model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarpStudyParams {
    /// The group of the study.
    pub group: String,
    /// The variant.
    pub variant: String,
    /// The client's settings.
    pub warp: WarpParams,
    /// The mock's I/O model.
    pub io: IoModel,
}

impl PointParams for WarpStudyParams {
    fn definitions() -> Vec<ParamDef> {
        let mut defs = WarpParams::definitions();
        defs.extend([GROUP, VARIANT, IO]);
        defs
    }

    fn write(&self, map: &mut ParamMap) {
        self.warp.write(map);
        map.put_text(&GROUP, &self.group);
        map.put_text(&VARIANT, &self.variant);
        map.put_text(&IO, self.io.name());
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        let text = |d: &ParamDef| map.text(d).unwrap_or_default().to_string();
        Ok(WarpStudyParams {
            group: text(&GROUP),
            variant: text(&VARIANT),
            warp: WarpParams::read(map)?,
            io: map.choice(&IO)?,
        })
    }
}

/// The study's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StudyScale {
    /// Iterations of the original workload (100 in warp-pipe's sample).
    pub original_iterations: u64,
    /// Iterations per thread in the sweeps.
    pub sweep_iterations: u64,
    /// Thread counts swept.
    pub threads: &'static [usize],
    /// Payload sizes swept.
    pub payloads: &'static [usize],
    /// Iteration counts swept.
    pub iterations: &'static [u64],
    /// Instance counts swept.
    pub instances: &'static [usize],
}

impl StudyScale {
    /// The full study (a few minutes on 2 cores).
    pub const FULL: StudyScale = StudyScale {
        original_iterations: 100,
        sweep_iterations: 10,
        threads: &[1, 16, 64, 256, 506],
        payloads: &[64, 256, 1024, 2048, 4096],
        iterations: &[1, 10, 100],
        instances: &[1, 2, 4, 8],
    };
    /// `--quick`: the same shape, fewer iterations (under a minute).
    pub const QUICK: StudyScale = StudyScale {
        original_iterations: 5,
        sweep_iterations: 2,
        threads: &[1, 16, 64, 256, 506],
        payloads: &[64, 256, 1024, 2048, 4096],
        iterations: &[1, 10],
        instances: &[1, 2, 4],
    };
}

/// The variants compared throughout the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// Name in tables.
    pub name: &'static str,
    /// CRC.
    pub crc: CrcKind,
    /// Connections.
    pub connection: ConnectionMode,
    /// Piggybacked ACKs.
    pub piggyback_acks: bool,
}

/// warp-pipe as it is: bitwise CRC, one shared connection, ACK per TLP.
pub const ORIGINAL: Variant = Variant {
    name: "original",
    crc: CrcKind::Bitwise,
    connection: ConnectionMode::Shared,
    piggyback_acks: false,
};
/// Fast CRC, a connection per thread, ACKs piggybacked.
pub const PER_THREAD: Variant = Variant {
    name: "per-thread",
    crc: CrcKind::Fast,
    connection: ConnectionMode::PerThread,
    piggyback_acks: true,
};
/// Fast CRC, 32 tags per connection.
pub const PIPELINED: Variant = Variant {
    name: "pipelined",
    crc: CrcKind::Fast,
    connection: ConnectionMode::Pipelined,
    piggyback_acks: true,
};

/// One point of the study: its group and variant, and what the rig runs.
#[derive(Debug, Clone, PartialEq)]
pub struct WarpPoint {
    /// Which group of the study this point belongs to (`original-workload`,
    /// `threads`, `payload`, ...).
    pub group: String,
    /// The variant's name (`original`, `pipelined`, `shared, crc=table`, ...).
    pub variant: String,
    /// What the rig runs.
    pub mock: MockPoint,
}

impl WarpPoint {
    /// The point as the point loop and the results see it: params `group`,
    /// `variant`, `threads`, `iterations`, `payload`, `crc`, `connection`,
    /// `instances`, `io`, `ops`.
    pub fn planned(&self) -> PlannedPoint {
        let c = &self.mock.client;
        PlannedPoint {
            size_bytes: c.payload as u64,
            channels: self.mock.instances,
            verify: c.ops == Ops::ReadWriteRead,
            ..PlannedPoint::from_params(self.params().to_map().into_params(), RULES)
        }
    }

    /// The parameters the point records.
    pub fn params(&self) -> WarpStudyParams {
        WarpStudyParams {
            group: self.group.clone(),
            variant: self.variant.clone(),
            warp: WarpParams::of(&self.mock.client, self.mock.instances),
            io: self.mock.io,
        }
    }
}

/// Throughput, higher is better.
pub const RULES: FigureRules = FigureRules {
    primary: figure::THROUGHPUT,
    higher_is_better: true,
};

fn point(group: &str, v: &Variant, threads: usize, iterations: u64, payload: usize) -> WarpPoint {
    WarpPoint {
        group: group.into(),
        variant: v.name.into(),
        mock: MockPoint {
            client: ClientSpec {
                threads,
                iterations,
                payload,
                crc: v.crc,
                connection: v.connection,
                piggyback_acks: v.piggyback_acks,
                think_ms: 0,
                first_slot: 0,
                slots: 0,
                ops: Ops::ReadWriteRead,
                // The run's hang timeout replaces it (MemoryMockRig::run_once).
                hang_timeout_ms: xferbench_lab::workload::warp::default_hang_timeout_ms(),
                pin_cpus: Vec::new(),
            },
            instances: 1,
            io: IoModel::Epoll,
            pin: false,
        },
    }
}

/// The sleep after each iteration in warp-pipe's Zephyr sample, in milliseconds.
pub const SAMPLE_SLEEP_MS: u64 = 200;

/// The study's points, in plan order.
pub fn study_points(scale: &StudyScale) -> Vec<WarpPoint> {
    let mut v = Vec::new();
    let it = scale.original_iterations;
    // The original workload: 506 threads × N iterations × 2048 B, no sleeps.
    for var in [&ORIGINAL, &PER_THREAD, &PIPELINED] {
        v.push(point("original-workload", var, 506, it, 2048));
    }
    // The sample as warp-pipe runs it: the original design with its 200 ms sleep
    // after every iteration, the run behind the seed's 21 s / 49 s headline.
    let mut sample = point("sample-sleep", &ORIGINAL, 506, it, 2048);
    sample.mock.client.think_ms = SAMPLE_SLEEP_MS;
    v.push(sample);
    // The CRC's share: the original shape with each CRC.
    for crc in [CrcKind::Table, CrcKind::Fast] {
        let mut p = point("crc", &ORIGINAL, 506, it, 2048);
        p.variant = format!("shared, crc={crc}");
        p.mock.client.crc = crc;
        v.push(p);
    }
    let si = scale.sweep_iterations;
    for &t in scale.threads {
        for var in [&ORIGINAL, &PER_THREAD, &PIPELINED] {
            v.push(point(names::THREADS, var, t, si, 2048));
        }
    }
    for &p in scale.payloads {
        for var in [&ORIGINAL, &PIPELINED] {
            v.push(point(names::PAYLOAD, var, 64, si, p));
        }
    }
    for &n in scale.iterations {
        for var in [&ORIGINAL, &PIPELINED] {
            v.push(point(names::ITERATIONS, var, 64, n, 2048));
        }
    }
    for &k in scale.instances {
        for var in [&ORIGINAL, &PER_THREAD] {
            let mut p = point(names::INSTANCES, var, 1, it, 2048);
            p.mock.instances = k;
            v.push(p);
        }
    }
    // The server's I/O model, with many blocking client threads (per-thread) and
    // with a few batching driver threads (pipelined).
    for &t in scale.threads {
        for var in [&PER_THREAD, &PIPELINED] {
            for io in IoModel::ALL {
                let mut p = point("io-model", var, t, it, 2048);
                p.variant = format!("{}, io={io}", var.name);
                p.mock.io = io;
                v.push(p);
            }
        }
    }
    // The mock's read throughput: 2048-byte reads only.
    for var in [&PER_THREAD, &PIPELINED] {
        let mut p = point("mock-reads", var, 64, it.max(10) * 3, 2048);
        p.mock.client.ops = Ops::Read;
        v.push(p);
    }
    v
}

/// Iterations of the point profiled on its own: warp-pipe's 100, so that even a
/// `--quick` study records the original workload at its size.
pub const PROFILE_ITERATIONS: u64 = 100;

/// The group of the point added under `--profile` when the original workload's
/// point is smaller than warp-pipe's (`--quick`).
pub const PROFILE_GROUP: &str = "original-profile";

/// The original workload at warp-pipe's size, 506 threads × 100 iterations, no
/// sleeps: the point whose profile the summary reads (the seed's sandwich view).
pub fn profile_point() -> WarpPoint {
    point(PROFILE_GROUP, &ORIGINAL, 506, PROFILE_ITERATIONS, 2048)
}

/// `original_profile`: the top function (by self share) of the original design's
/// original-workload point ([`PROFILE_GROUP`] when the plan has it), and the share
/// of the samples with a CRC function on the stack.
pub fn original_profile(
    doc: &xferbench_lab::result::ResultDoc,
    participant: &str,
    profiles: &BTreeMap<usize, xferbench_probes::profile::Folded>,
) -> Option<serde_json::Value> {
    let is = |p: &&xferbench_lab::result::PointResult, g: &str| {
        p.param(&GROUP) == Some(g) && p.param(&VARIANT) == Some(ORIGINAL.name)
    };
    let p = doc
        .points
        .iter()
        .find(|p| is(p, PROFILE_GROUP))
        .or_else(|| doc.points.iter().find(|p| is(p, "original-workload")))?;
    let folded = profiles.get(&p.index)?;
    let top = folded.top_functions();
    let first = top.first()?;
    let crc_weight: u64 = folded
        .stacks
        .iter()
        .filter(|(frames, _)| {
            frames
                .iter()
                .skip(1)
                .any(|f| f.to_ascii_lowercase().contains("crc"))
        })
        .map(|(_, w)| w)
        .sum();
    let top_crc = top
        .iter()
        .find(|f| f.name.to_ascii_lowercase().contains("crc"));
    let top_user = top.iter().find(|f| !f.name.ends_with("_[k]"));
    Some(serde_json::json!({
        "point": p.index + 1,
        "group": p.param(&GROUP),
        "iterations": p.param(&xferbench_lab::workload::warp::ITERATIONS),
        "participant": participant,
        "sampled_cpu_ms": folded.total() as f64 / 1e6,
        "top": {"name": first.name, "self_share": first.self_share, "total_share": first.total_share},
        "top_user": top_user.map(|f| serde_json::json!({"name": f.name, "self_share": f.self_share})),
        "top_crc": top_crc.map(|f| serde_json::json!({
            "name": f.name,
            "self_share": f.self_share,
            "rank": top.iter().position(|g| g.name == f.name).map(|r| r + 1),
        })),
        "crc_total_share": crc_weight as f64 / folded.total().max(1) as f64,
    }))
}

/// The study: `xferbench study warp-pipe`.
#[derive(Debug, Clone, Copy)]
pub struct WarpPipe;

/// The participants a profile can record: this process (the clients' threads) and
/// the memory mock.
pub const PARTICIPANTS: [&str; 2] = ["main", "memory-mock"];

/// The loop options of the study: 3 interleaved runs per point (2 with `--quick`,
/// the fewest with which `compare` can test a difference),
/// no warm-up (each visit starts a fresh mock and runs the clients once).
pub fn loop_options(quick: bool) -> LoopOptions {
    LoopOptions {
        judge: &xferbench_lab::judge::LAB,
        runs: if quick { 2 } else { 3 },
        warmup: 0,
        interleave: true,
        hang_timeout: Duration::from_secs(300),
        counters: CounterMode::Off,
        profile: None,
        watch: None,
        until_stopped: false,
    }
}

/// A plan of `points` on memory-mock rigs, then a CRC point of each of `crc`.
pub fn plan_of(points: &[WarpPoint], crc: &[CrcKind], quick: bool, env: &StudyEnv) -> StudyPlan {
    let options = loop_options(quick);
    let bench = MemoryMockBench::new(
        points
            .iter()
            .map(|p| {
                let mock = MockPoint {
                    pin: env.pin,
                    ..p.mock.clone()
                };
                (p.planned(), mock)
            })
            .collect(),
        env.launcher.clone(),
    )
    .with_remote(env.remote.clone())
    .with_crc(crc);
    let settings = env.settings("warp-pipe", &options, true);
    StudyPlan {
        bench: Box::new(bench),
        options,
        settings,
        extras: BTreeMap::new(),
        watch: None,
    }
}

impl Study for WarpPipe {
    fn name(&self) -> &'static str {
        "warp-pipe"
    }

    fn description(&self) -> &'static str {
        "Warp Pipe over loopback TCP: the original design vs per-thread and pipelined connections"
    }

    fn participants(&self) -> &'static [&'static str] {
        &PARTICIPANTS
    }

    fn crosses_hosts(&self) -> bool {
        true
    }

    fn pins(&self) -> bool {
        true
    }

    fn profile_extras(
        &self,
        doc: &xferbench_lab::result::ResultDoc,
        participant: &str,
        profiles: &BTreeMap<usize, xferbench_probes::profile::Folded>,
    ) -> BTreeMap<String, serde_json::Value> {
        original_profile(doc, participant, profiles)
            .map(|v| ("original_profile".to_string(), v))
            .into_iter()
            .collect()
    }

    fn plan(&self, quick: bool, env: &StudyEnv) -> StudyPlan {
        let scale = if quick {
            StudyScale::QUICK
        } else {
            StudyScale::FULL
        };
        let mut points = study_points(&scale);
        if env.profiling.is_some() && scale.original_iterations < PROFILE_ITERATIONS {
            points.insert(0, profile_point());
        }
        // The CRC points have no memory mock to profile: a profile of the mock
        // plans none.
        let crc: &[CrcKind] = match env.profiling.as_deref() {
            Some(p) if p != "main" => &[],
            _ => &CrcKind::ALL,
        };
        plan_of(&points, crc, quick, env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use xferbench_lab::measure::run_plan;
    use xferbench_lab::result::{Context, Settings};
    use xferbench_lab::rig::memory_mock::figures;

    #[test]
    fn study_points_cover_the_brief() {
        let pts = study_points(&StudyScale::FULL);
        let orig = pts
            .iter()
            .find(|p| p.group == "original-workload" && p.variant == "original")
            .unwrap();
        let c = &orig.mock.client;
        assert_eq!((c.threads, c.iterations, c.payload), (506, 100, 2048));
        assert_eq!(c.think_ms, 0);
        let sample = pts.iter().find(|p| p.group == "sample-sleep").unwrap();
        let c = &sample.mock.client;
        assert_eq!((c.threads, c.iterations, c.think_ms), (506, 100, 200));
        assert_eq!(sample.variant, "original");
        assert_eq!(
            (c.crc.name(), c.connection),
            ("bitwise", ConnectionMode::Shared)
        );
        for t in [1, 16, 64, 256, 506] {
            assert!(
                pts.iter()
                    .any(|p| p.group == "threads" && p.mock.client.threads == t)
            );
        }
        for k in [1, 2, 4, 8] {
            assert!(
                pts.iter()
                    .any(|p| p.group == "instances" && p.mock.instances == k)
            );
        }
        for crc in ["table", "fast"] {
            assert!(pts.iter().any(|p| p.group == "crc"
                && p.mock.client.crc.name() == crc
                && p.mock.client.threads == 506));
        }
        let planned = orig.planned();
        let keys: Vec<&str> = planned.params.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "connection",
                "crc",
                "group",
                "instances",
                "io",
                "iterations",
                "ops",
                "payload",
                "threads",
                "variant"
            ]
        );
        assert_eq!(planned.params["ops"], "read-write-read");
        assert!(planned.verify && planned.rules.higher_is_better);
        for p in &pts {
            xferbench_params::point::round_trips(&p.params()).unwrap();
        }
        VARIANT.self_check().unwrap();
    }

    #[test]
    fn under_profile_a_quick_plan_gets_the_original_workload_at_its_size() {
        let profiling = StudyEnv {
            profiling: Some("main".into()),
            ..StudyEnv::default()
        };
        let plan = WarpPipe.plan(true, &profiling);
        let first = &plan.bench.points()[0];
        assert_eq!(first.params["group"], PROFILE_GROUP);
        assert_eq!(
            (
                first.params["threads"].as_str(),
                first.params["iterations"].as_str(),
                first.params["crc"].as_str()
            ),
            ("506", "100", "bitwise")
        );
        let groups = |quick, env: &StudyEnv| {
            WarpPipe
                .plan(quick, env)
                .bench
                .points()
                .iter()
                .filter(|p| p.params["group"] == PROFILE_GROUP)
                .count()
        };
        // The full study's original-workload point is already that size.
        assert_eq!(groups(false, &profiling), 0);
        assert_eq!(groups(true, &StudyEnv::default()), 0);
    }

    #[test]
    fn the_study_is_registered_and_compares_variants_interleaved() {
        let s = super::super::find("warp-pipe").unwrap();
        assert_eq!(s.participants(), ["main", "memory-mock"]);
        let full = loop_options(false);
        assert_eq!((full.runs, full.warmup, full.interleave), (3, 0, true));
        assert_eq!(loop_options(true).runs, 2);
    }

    fn context(settings: Settings) -> Context {
        xferbench_lab::result::test_context(settings)
    }

    #[test]
    fn a_tiny_plan_runs_through_the_point_loop() {
        let mut a = point("threads", &ORIGINAL, 4, 3, 256);
        a.mock.client.iterations = 3;
        let mut b = point("instances", &PER_THREAD, 1, 3, 256);
        b.mock.instances = 2;
        let env = StudyEnv::default();
        let mut plan = plan_of(&[a, b], &[CrcKind::Fast], false, &env);
        let doc = run_plan(
            context(plan.settings.clone()),
            plan.bench.as_mut(),
            &plan.options,
            &AtomicBool::new(false),
            &mut [],
        );
        assert!(
            matches!(doc.outcome, xferbench_lab::result::Outcome::Complete),
            "{:?}",
            doc.outcome
        );
        assert_eq!(doc.points.len(), 3);
        for p in &doc.points[..2] {
            assert_eq!(p.runs.len(), plan.options.runs, "{:?}", p.params);
            let t = &p.summary[figure::THROUGHPUT];
            assert!(t.median > 0.0 && t.n == plan.options.runs);
            assert!(p.summary.contains_key(figures::TRANSACTIONS_PER_S));
            assert!(p.runs.iter().all(|r| !r.cpu.is_empty()));
            assert!(
                p.integrity.is_some_and(|k| k.is_clean()),
                "{:?}",
                p.warnings
            );
        }
        assert_eq!(doc.points[1].runs[0].channels.len(), 2);
        // The CRC point ran interleaved with the others, its runs like theirs.
        let c = &doc.points[2];
        assert_eq!(c.params["group"], crc::GROUP);
        assert_eq!(c.runs.len(), plan.options.runs);
        assert!(c.runs.iter().all(|r| r.contention.is_some()));
        let rate = c.summary[xferbench_lab::rig::crc::CRC_MB_PER_S].median;
        assert_eq!(writer::crc_rates(&doc), [("fast".to_string(), rate)]);
        let rig = plan.bench.rig(0, None).unwrap();
        let names: Vec<String> = rig.participants().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["main", "memory-mock"]);
        rig.finish().unwrap();
    }
}
