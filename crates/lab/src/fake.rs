//! A rig with synthetic stamps, for deterministic tests of the point loop and its
//! aggregation rules: no thread, process or clock is involved.

use crate::control::{Rig, RunControl, RunError};
use crate::limits::Limits;
use crate::limits::fraction::LimitFraction;
use crate::plan::{Bench, Judge, PlannedPoint};
use crate::record::{ChannelOutcome, FigureRules, aggregate};
use crate::result::{RunRecord, figure};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use xferbench_probes::clock::Stamp;
use xferbench_probes::counters::{CounterSource, Participant};
use xferbench_probes::cpu::ProcessCpu;
use xferbench_probes::stats::Estimate;
use xferbench_probes::verify::Integrity;

/// One channel of a scripted run: `(start_ns, end_ns, messages, bytes)`.
pub type Lane = (u64, u64, u64, u64);

/// What a script answers for a run: channels, or a failure.
pub enum Scripted {
    /// The channels of the run.
    Lanes(Vec<Lane>),
    /// The run fails with this participant error.
    Fail(String),
    /// The run sets the stop flag (a Ctrl-C arriving during the run); an open-ended
    /// run ([`RunControl::until_stopped`]) then returns these channels.
    Stop(Vec<Lane>),
}

/// `script(point, call)` answers the `call`-th run of `point` (warm-ups included,
/// counted over all visits).
pub type Script = Box<dyn Fn(usize, usize) -> Scripted>;

/// A bench of fake rigs; every run is logged as `(point, call)`.
pub struct FakeBench {
    pub points: Vec<PlannedPoint>,
    pub script: Rc<Script>,
    pub log: Rc<RefCell<Vec<(usize, usize)>>>,
    pub integrity: Option<Integrity>,
    /// The `/proc` the loop reads the machine's load from (none by default).
    pub machine: Option<xferbench_probes::contention::ProcFs>,
    /// Go on past a failed point ([`Bench::keep_going`]).
    pub keep_going: bool,
    /// Warm up on a point's first visit only ([`Bench::warm_up_once`]).
    pub warm_up_once: bool,
}

impl FakeBench {
    /// `n` throughput points scripted by `script`.
    pub fn new(n: usize, script: impl Fn(usize, usize) -> Scripted + 'static) -> FakeBench {
        let points = (0..n)
            .map(|i| PlannedPoint {
                params: BTreeMap::from([("point".to_string(), i.to_string())]),
                size_bytes: 1,
                channels: 1,
                rules: FigureRules {
                    primary: figure::THROUGHPUT,
                    higher_is_better: true,
                },
                verify: false,
                runs: None,
            })
            .collect();
        FakeBench {
            points,
            script: Rc::new(Box::new(script)),
            log: Rc::default(),
            integrity: None,
            machine: None,
            keep_going: false,
            warm_up_once: false,
        }
    }

    /// The runs so far, in order.
    pub fn log(&self) -> Vec<(usize, usize)> {
        self.log.borrow().clone()
    }
}

struct FakeRig {
    point: usize,
    script: Rc<Script>,
    log: Rc<RefCell<Vec<(usize, usize)>>>,
    integrity: Option<Integrity>,
}

impl Bench for FakeBench {
    fn points(&self) -> &[PlannedPoint] {
        &self.points
    }

    fn machine_load(&self) -> Option<xferbench_probes::contention::ProcFs> {
        self.machine.clone()
    }

    fn keep_going(&self) -> bool {
        self.keep_going
    }

    fn warm_up_once(&self) -> bool {
        self.warm_up_once
    }

    fn rig(
        &mut self,
        index: usize,
        _source: Option<&dyn CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError> {
        Ok(Box::new(FakeRig {
            point: index,
            script: self.script.clone(),
            log: self.log.clone(),
            integrity: self.integrity,
        }))
    }
}

impl Rig for FakeRig {
    fn participants(&self) -> Vec<Participant> {
        vec![Participant::main()]
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        let call = self
            .log
            .borrow()
            .iter()
            .filter(|(p, _)| *p == self.point)
            .count();
        self.log.borrow_mut().push((self.point, call));
        ctl.window_started();
        let lanes = match (self.script)(self.point, call) {
            Scripted::Lanes(l) => l,
            Scripted::Fail(m) => return Err(RunError::Participant(m)),
            Scripted::Stop(l) => {
                ctl.stop.store(true, Ordering::Relaxed);
                if !ctl.until_stopped {
                    return Err(RunError::Interrupted);
                }
                l
            }
        };
        ctl.window_ended();
        let channels = lanes
            .into_iter()
            .map(|(s, e, messages, bytes)| ChannelOutcome {
                start: Stamp(s),
                end: Stamp(e),
                messages,
                bytes,
                latency: None,
                integrity: self.integrity,
                schedule: None,
            })
            .collect();
        let cpu = vec![ProcessCpu {
            role: "main".into(),
            pid: 1,
            window_s: 1.0,
            user_s: 0.5,
            sys_s: 0.25,
            cpus_utilised: 0.75,
            voluntary_switches: 0,
            involuntary_switches: 0,
            runqueue_wait_s: None,
        }];
        Ok(aggregate(channels, cpu))
    }

    fn finish(self: Box<Self>) -> Result<(), RunError> {
        Ok(())
    }
}

/// What the loop's unit tests judge fake points by: they name no transport, hold
/// against no limit and follow no schedule, as the lab's judge would find.
#[derive(Debug)]
pub(crate) struct FakeJudge;

/// See [`FakeJudge`].
pub(crate) static JUDGE: FakeJudge = FakeJudge;

impl Judge for FakeJudge {
    fn transport_defaults(&self, _: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    fn limit_fraction(
        &self,
        _: &BTreeMap<String, String>,
        _: u64,
        _: usize,
        _: &BTreeMap<String, Estimate>,
        _: &Limits,
    ) -> Option<LimitFraction> {
        None
    }

    fn pacing_warning(
        &self,
        _: &BTreeMap<String, Estimate>,
        _: usize,
        _: Option<f64>,
    ) -> Option<String> {
        None
    }
}
