//! The SIS8300 study: the four tests of the seed's "performance measurements made
//! with SIS8300L/L2/KU boards", on the digitizer model ([`xferbench_transports::daq`]),
//! with the original's kernels and readout beside the improved ones. The plan only:
//! the workload is [`xferbench_lab::workload::daq`], the rig [`xferbench_lab::rig::daq`].
//!
//! # Points
//!
//! Every point has the parameters `group`, `boards`, `links`, `samples`, `reads`,
//! `func` (the C name of its primary function), `factor`, `kernels`, `access`
//! (`read`/`mmap`), `daq` (`none`, `poll`, `irq`) and `loops`.
//!
//! * `test1`: 60 MB × 30 reads on 1 L2, 1 KU, 5 L2 and 1 KU + 5 L2 boards, plus one
//!   unthrottled board (the host CPU per byte of each path); `read` and `mmap`.
//! * `test2`: 0.6, 1.68 and 6 MB × 30 reads on 5 L2 boards; `read` and `mmap`.
//! * `test3`: every conversion (and dec / decsca at f = 10) at 6 MB × 30 passes on
//!   5 boards, original and improved kernels, each run also timing a memcpy of the
//!   same input bytes on the same threads.
//! * `test4`: host CPU at a 14 Hz trigger: readout and u→double on 1 and 5 boards,
//!   polling and interrupt, the seed's sizes 0.06 to 18 MB; at 6 MB also `mmap`
//!   readout and the improved u→double.
//!
//! Tests 1–3 have the common-window throughput of their function as primary
//! figure; test 4 the host CPU % (lower is better). Every sample read is checked.

mod seed;
pub mod writer;

#[cfg(test)]
pub(crate) mod fixture;

use crate::params::GROUP;
use crate::study::{Study, StudyEnv, StudyPlan};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;
use xferbench_lab::measure::{Bench, LoopOptions, PlannedPoint};
use xferbench_lab::record::FigureRules;
use xferbench_lab::result::figure;
use xferbench_lab::rig::daq::{DaqRig, HOST_CPU_PERCENT};
use xferbench_lab::rig::{Rig, RunError};
use xferbench_lab::workload::RecordedWorkload;
use xferbench_lab::workload::WORKLOAD;
use xferbench_lab::workload::daq::{DaqParams, DaqSpec};
use xferbench_params::{ParamDef, ParamError, ParamMap, PointParams};
use xferbench_probes::counters::{CounterMode, CounterSource};
use xferbench_transports::daq::convert::{Function, Kernels, ScaleParams};
use xferbench_transports::daq::{Access, DEFAULT_BUS_BYTES_PER_S, DaqEnd, Link, Trigger};

/// The participants a profile can record: this process (boards are threads).
pub const PARTICIPANTS: [&str; 1] = ["main"];

/// Tests 1–3: throughput over the common window.
pub const THROUGHPUT_RULES: FigureRules = FigureRules {
    primary: figure::THROUGHPUT,
    higher_is_better: true,
};

/// Test 4: host CPU %.
pub const CPU_RULES: FigureRules = FigureRules {
    primary: HOST_CPU_PERCENT,
    higher_is_better: false,
};

/// Test 3's passes at least, under `--profile` (the quick study has 3).
pub const PROFILE_T3_PASSES: u32 = 10;

/// The seed's trigger rate, Hz.
pub const TRIGGER_HZ: f64 = 14.0;

/// How much to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scale {
    /// Test 1 samples per read (the seed: 30,000,000 = 60 MB).
    pub t1_samples: usize,
    /// Test 1 and 2 reads.
    pub reads: u32,
    /// Test 2 samples per read.
    pub t2_samples: Vec<usize>,
    /// Test 3 samples (the seed: 3,000,000 = 6 MB).
    pub t3_samples: usize,
    /// Test 3 passes per function.
    pub t3_passes: u32,
    /// Test 4 samples per acquisition (the seed: 30,000 to 9,000,000).
    pub t4_samples: Vec<usize>,
    /// Test 4 triggers per run (the seed: 100).
    pub t4_loops: u32,
}

impl Scale {
    /// The seed's matrix, test 4 with the seed's 100 triggers per run (`-l 100`).
    pub fn full() -> Scale {
        Scale {
            t1_samples: 30_000_000,
            reads: 30,
            t2_samples: vec![300_000, 840_000, 3_000_000],
            t3_samples: 3_000_000,
            t3_passes: 30,
            t4_samples: vec![30_000, 300_000, 3_000_000, 6_000_000, 9_000_000],
            t4_loops: 100,
        }
    }

    /// A subset that runs in under a minute.
    pub fn quick() -> Scale {
        Scale {
            t1_samples: 3_000_000,
            reads: 5,
            t2_samples: vec![300_000, 840_000, 3_000_000],
            t3_samples: 3_000_000,
            t3_passes: 3,
            t4_samples: vec![300_000, 3_000_000],
            t4_loops: 7,
        }
    }
}

/// One planned point.
#[derive(Debug, Clone)]
pub struct Planned {
    /// `test1` … `test4`.
    pub group: &'static str,
    /// The links in words (`l2`, `ku+5l2`).
    pub links: String,
    /// The spec.
    pub spec: DaqSpec,
    /// The primary function's C name.
    pub primary: &'static str,
}

fn spec(links: Vec<Link>, samples: usize) -> DaqSpec {
    let bus = links
        .iter()
        .any(|l| l.rate().is_some())
        .then_some(DEFAULT_BUS_BYTES_PER_S);
    DaqSpec {
        devices: (0..links.len()).map(|i| format!("sis8300-{i}")).collect(),
        links,
        samples,
        nreads: 1,
        scale: ScaleParams::default(),
        access: Access::Read,
        function: 0,
        loops: 0,
        end: DaqEnd::Poll,
        trigger: Trigger::Internal(TRIGGER_HZ),
        bus,
        kernels: Kernels::Original,
        verify: true,
        memcpy: false,
        pin: false,
    }
}

const ACCESS: [Access; 2] = [Access::Read, Access::Mmap];

/// The points of a scale.
pub fn points(scale: &Scale) -> Vec<Planned> {
    let mut out = Vec::new();
    let configs: [(&str, Vec<Link>); 5] = [
        ("l2", vec![Link::L2]),
        ("ku", vec![Link::Ku]),
        ("5l2", vec![Link::L2; 5]),
        ("ku+5l2", [vec![Link::Ku], vec![Link::L2; 5]].concat()),
        ("unthrottled", vec![Link::Unthrottled]),
    ];
    for (name, links) in &configs {
        for access in ACCESS {
            let mut s = spec(links.clone(), scale.t1_samples);
            s.nreads = scale.reads;
            s.access = access;
            out.push(Planned {
                group: "test1",
                links: name.to_string(),
                spec: s,
                primary: "func_readout",
            });
        }
    }
    for &samples in &scale.t2_samples {
        for access in ACCESS {
            let mut s = spec(vec![Link::L2; 5], samples);
            s.nreads = scale.reads;
            s.access = access;
            out.push(Planned {
                group: "test2",
                links: "5l2".into(),
                spec: s,
                primary: "func_readout",
            });
        }
    }
    let mut cases: Vec<(Function, usize)> = Function::CONVERSIONS.iter().map(|&f| (f, 1)).collect();
    cases.insert(2, (Function::Dec, 10));
    cases.insert(1, (Function::DecSca, 10));
    for (f, factor) in cases {
        for kernels in [Kernels::Original, Kernels::Improved] {
            let mut s = spec(vec![Link::L2; 5], scale.t3_samples);
            s.nreads = scale.t3_passes;
            s.function = f.code();
            s.scale.factor = factor;
            s.kernels = kernels;
            s.memcpy = true;
            out.push(Planned {
                group: "test3",
                links: "5l2".into(),
                spec: s,
                primary: f.c_name(),
            });
        }
    }
    let t4 = |f: Function, boards: usize, end, samples, access, kernels| {
        let mut s = spec(vec![Link::L2; boards], samples);
        s.function = f.code();
        s.loops = scale.t4_loops;
        s.end = end;
        s.access = access;
        s.kernels = kernels;
        Planned {
            group: "test4",
            links: format!("{boards}l2"),
            spec: s,
            primary: f.c_name(),
        }
    };
    for f in [Function::Readout, Function::UMn2Double] {
        for boards in [1, 5] {
            for &samples in &scale.t4_samples {
                for end in [DaqEnd::Poll, DaqEnd::Irq] {
                    out.push(t4(f, boards, end, samples, Access::Read, Kernels::Original));
                }
            }
        }
    }
    let at6 = 3_000_000;
    for boards in [1, 5] {
        for end in [DaqEnd::Poll, DaqEnd::Irq] {
            out.push(t4(
                Function::Readout,
                boards,
                end,
                at6,
                Access::Mmap,
                Kernels::Original,
            ));
            out.push(t4(
                Function::UMn2Double,
                boards,
                end,
                at6,
                Access::Read,
                Kernels::Improved,
            ));
        }
    }
    out
}

/// The parameters a SIS8300 study point records: its group, its workload (test 3's
/// conversions are `convert`, the readouts `readout`) and the readout settings
/// ([`DaqParams`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sis8300Params {
    /// `test1` … `test4`.
    pub group: String,
    /// [`RecordedWorkload::Readout`] or [`RecordedWorkload::Convert`].
    pub workload: RecordedWorkload,
    /// The readout settings.
    pub daq: DaqParams,
}

impl PointParams for Sis8300Params {
    fn definitions() -> Vec<ParamDef> {
        let mut defs = DaqParams::definitions();
        defs.extend([GROUP, WORKLOAD]);
        defs
    }

    fn write(&self, map: &mut ParamMap) {
        self.daq.write(map);
        map.put_text(&GROUP, &self.group);
        map.put_text(&WORKLOAD, self.workload.name());
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        Ok(Sis8300Params {
            group: map.text(&GROUP).unwrap_or_default().to_string(),
            workload: map.choice(&WORKLOAD)?,
            daq: DaqParams::read(map)?,
        })
    }
}

/// The parameters of a planned point.
pub fn params(p: &Planned) -> BTreeMap<String, String> {
    point_params(p).to_map().into_params()
}

/// The parameters of a planned point, typed.
pub fn point_params(p: &Planned) -> Sis8300Params {
    Sis8300Params {
        group: p.group.to_string(),
        workload: if p.group == "test3" {
            RecordedWorkload::Convert
        } else {
            RecordedWorkload::Readout
        },
        daq: DaqParams::of(
            &p.spec,
            Function::parse(p.primary).unwrap_or(Function::Readout),
            p.links.clone(),
        ),
    }
}

/// The study's bench: a digitizer per visit.
pub struct Sis8300Bench {
    planned: Vec<PlannedPoint>,
    points: Vec<Planned>,
}

impl Sis8300Bench {
    /// The bench of `points`.
    pub fn new(points: Vec<Planned>) -> Sis8300Bench {
        let planned = points
            .iter()
            .map(|p| {
                let rules = if p.group == "test4" {
                    CPU_RULES
                } else {
                    THROUGHPUT_RULES
                };
                PlannedPoint {
                    size_bytes: p.spec.nbytes_raw(),
                    channels: p.spec.links.len(),
                    verify: p.spec.verify,
                    ..PlannedPoint::from_params(params(p), rules)
                }
            })
            .collect();
        Sis8300Bench { planned, points }
    }
}

impl Bench for Sis8300Bench {
    fn points(&self) -> &[PlannedPoint] {
        &self.planned
    }

    fn rig(
        &mut self,
        index: usize,
        _source: Option<&dyn CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError> {
        let p = &self.points[index];
        Ok(Box::new(DaqRig::start(p.spec.clone(), p.primary)?))
    }
}

/// The SIS8300 study.
#[derive(Debug, Clone, Copy)]
pub struct Sis8300;

impl Study for Sis8300 {
    fn name(&self) -> &'static str {
        "sis8300"
    }

    fn description(&self) -> &'static str {
        "SIS8300 digitizer readout like sis8300drv_threads on a board model: per-board speed, sizes, conversion kernels (original vs improved vs memcpy), CPU polling vs interrupt"
    }

    fn participants(&self) -> &'static [&'static str] {
        &PARTICIPANTS
    }

    fn pins(&self) -> bool {
        true
    }

    fn plan(&self, quick: bool, env: &StudyEnv) -> StudyPlan {
        let mut scale = if quick { Scale::quick() } else { Scale::full() };
        if env.profiling.is_some() {
            // perf needs a moment to attach: a 3-pass conversion point can end first.
            scale.t3_passes = scale.t3_passes.max(PROFILE_T3_PASSES);
        }
        let mut planned = points(&scale);
        for p in &mut planned {
            p.spec.pin = env.pin;
        }
        let options = LoopOptions {
            judge: &xferbench_lab::judge::LAB,
            runs: 2,
            warmup: if quick { 0 } else { 1 },
            interleave: true,
            hang_timeout: Duration::from_secs(60),
            counters: CounterMode::Off,
            profile: None,
            watch: None,
            until_stopped: false,
        };
        let mut settings = env.settings("daq", &options, true);
        settings.peer = "thread".into();
        let mut extras = BTreeMap::new();
        extras.insert(
            "scale".to_string(),
            serde_json::to_value(&scale).expect("a scale serialises"),
        );
        extras.insert(
            "model".to_string(),
            serde_json::json!({
                "l2_bytes_per_s": Link::L2_BYTES_PER_S,
                "ku_bytes_per_s": Link::KU_BYTES_PER_S,
                "bus_bytes_per_s": DEFAULT_BUS_BYTES_PER_S,
                "trigger_hz": TRIGGER_HZ,
                "chunk_bytes": xferbench_transports::daq::CHUNK_BYTES,
            }),
        );
        StudyPlan {
            bench: Box::new(Sis8300Bench::new(planned)),
            options,
            settings,
            extras,
            watch: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_covers_the_seeds_four_tests() {
        let p = points(&Scale::full());
        let count = |g| p.iter().filter(|x| x.group == g).count();
        assert_eq!(count("test1"), 10);
        assert_eq!(count("test2"), 6);
        assert_eq!(count("test3"), 20);
        assert_eq!(count("test4"), 2 * 2 * 5 * 2 + 8);
        assert!(p.iter().all(|x| x.spec.check().is_ok() && x.spec.verify));
        let plan = Sis8300.plan(true, &StudyEnv::default());
        assert!(plan.options.interleave);
        let keys: Vec<&str> = plan.bench.points()[0]
            .params
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "access", "boards", "daq", "factor", "func", "group", "kernels", "links", "loops",
                "reads", "samples", "workload"
            ]
        );
        // Test 3's conversions are held against memcpy (the "of limit" column).
        let workload = |g: &str| {
            let points = plan.bench.points();
            let point = points.iter().find(|x| x.params["group"] == g).unwrap();
            point.params["workload"].clone()
        };
        assert_eq!(workload("test3"), "convert");
        assert_eq!(workload("test1"), "readout");
        for q in &p {
            let typed = point_params(q);
            xferbench_params::point::round_trips(&typed).unwrap();
            assert_eq!(typed.daq.func.c_name(), q.primary);
        }
    }
}
