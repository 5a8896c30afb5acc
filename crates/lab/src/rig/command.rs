//! The command rig: one `sh -c COMMAND` per run, timed from its start to its exit
//! (`ab`'s points A and B).
//!
//! # Participants
//!
//! * `main`: this process, which only waits.
//! * the command: `sh -c COMMAND` and everything it starts, started for each run in a
//!   process group of its own (so that a stop ends all of it), with stdin and stdout
//!   on `/dev/null` and stderr passed through. Its processes are this process's
//!   descendants: their CPU comes from `getrusage(RUSAGE_CHILDREN)`, their counters
//!   from counters opened on this thread with `inherit` (nothing is added to the
//!   command line), and the contention record counts them as the run's own.
//!
//! # One run
//!
//! The window is the command's life. A waiting thread reaps it and stamps its exit;
//! this thread watches the stop flag and [`RunControl::hang_timeout`] (a command
//! makes no progress the rig could see, so the bound is on the whole run). Figures:
//! [`figures::WALL_S`] (primary, lower is better), the command's user and system CPU
//! seconds and the CPUs it kept busy; counters per run, as `command`.

use super::{ChannelOutcome, Rig, RunControl, RunError, aggregate};
use crate::record::FigureRules;
use crate::result::RunRecord;
use perf_event::Counter;
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;
use xferbench_probes::clock::Stamp;
use xferbench_probes::counters::perf_event::{CounterValue, EVENTS};
use xferbench_probes::counters::{Participant, ProcessCounters, RunCounters};
use xferbench_probes::cpu::{CpuSnapshot, ProcessCpu, children_cpu};

/// The figures of a command's run.
pub mod figures {
    /// Wall time from the command's start to its exit, seconds (primary).
    pub const WALL_S: &str = "wall_s";
    /// User + system CPU seconds of the command and everything it started.
    pub const CPU_S: &str = "cpu_s";
    /// User CPU seconds of the command.
    pub const USER_S: &str = "user_s";
    /// System CPU seconds of the command.
    pub const SYS_S: &str = "sys_s";
    /// `cpu_s / wall_s`: the CPUs the command kept busy.
    pub const CPUS: &str = "command_cpus";
}

/// Wall time, lower is better.
pub const RULES: FigureRules = FigureRules {
    primary: figures::WALL_S,
    higher_is_better: false,
};

/// The longest a command's run may take: a day. `ab` compares commands as they are,
/// so this bounds only a command that never ends (Ctrl-C ends any).
pub const LONGEST_RUN: Duration = Duration::from_secs(86_400);

/// The counters' role in a run's record.
pub const ROLE: &str = "command";

/// One visit of a command's point.
pub struct CommandRig {
    command: String,
    counters: Inherited,
}

impl CommandRig {
    /// The rig of `command`, counting hardware events too when there is a PMU.
    pub fn new(command: &str, pmu: bool) -> CommandRig {
        CommandRig {
            command: command.into(),
            counters: Inherited::open(pmu),
        }
    }

    /// Counters that could not be opened here.
    pub fn unsupported(&self) -> &[&'static str] {
        &self.counters.unsupported
    }

    /// Starts the command, waits for its exit on a thread of its own and returns
    /// how it ended with the stamps of its start and exit.
    fn run_command(&self, ctl: &RunControl<'_>) -> Result<(ExitStatus, Stamp, Stamp), RunError> {
        let mut command = Command::new("sh");
        command
            .args(["-c", &self.command])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0);
        let start = Stamp::now();
        let mut child = command
            .spawn()
            .map_err(|e| RunError::Participant(format!("cannot run `{}`: {e}", self.command)))?;
        let group = child.id() as libc::pid_t;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let status = child.wait();
            let _ = tx.send((status, Stamp::now()));
        });
        let began = std::time::Instant::now();
        let ended = loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(ended) => break ended,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(RunError::Participant(format!(
                        "lost the wait for `{}`",
                        self.command
                    )));
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            let stopped = ctl.stop.load(Ordering::Relaxed);
            if stopped || began.elapsed() > ctl.hang_timeout {
                end_group(group, &rx);
                return Err(if stopped {
                    RunError::Interrupted
                } else {
                    RunError::Participant(format!(
                        "`{}` ran longer than {} s and was stopped (raise --timeout if this is \
                         expected)",
                        self.command,
                        ctl.hang_timeout.as_secs()
                    ))
                });
            }
        };
        let (status, end) = ended;
        let status = status.map_err(|e| {
            RunError::Participant(format!("cannot wait for `{}`: {e}", self.command))
        })?;
        Ok((status, start, end))
    }
}

/// Ends a command's process group: SIGTERM, then SIGKILL if it is still there a
/// second later; reaped by its waiting thread.
fn end_group(group: libc::pid_t, exited: &mpsc::Receiver<(std::io::Result<ExitStatus>, Stamp)>) {
    // SAFETY: kill(2) on the group this rig started; a group that is gone is ESRCH.
    unsafe { libc::kill(-group, libc::SIGTERM) };
    if exited.recv_timeout(Duration::from_secs(1)).is_err() {
        // SAFETY: as above.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        let _ = exited.recv_timeout(Duration::from_secs(5));
    }
}

impl Rig for CommandRig {
    fn participants(&self) -> Vec<Participant> {
        vec![Participant::main()]
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        if ctl.stop.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        ctl.window_started();
        let main0 = CpuSnapshot::now();
        let cpu0 = children_cpu();
        let before = self.counters.start();
        let ran = self.run_command(ctl);
        let values = self.counters.stop(&before);
        let cpu1 = children_cpu();
        let main1 = CpuSnapshot::now();
        ctl.window_ended();
        let (status, start, end) = ran?;
        if ctl.stop.load(Ordering::Relaxed)
            && std::os::unix::process::ExitStatusExt::signal(&status) == Some(libc::SIGINT)
        {
            return Err(RunError::Interrupted);
        }
        if !status.success() {
            return Err(RunError::Participant(format!(
                "`{}` {}; ab compares commands that succeed",
                self.command,
                xferbench_probes::process::describe_status(status)
            )));
        }
        let wall_s = end.since(start) as f64 / 1e9;
        let (user_s, sys_s) = (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
        let channel = ChannelOutcome {
            start,
            end,
            messages: 1,
            bytes: 0,
            latency: None,
            integrity: None,
            schedule: None,
        };
        let command_cpu = ProcessCpu {
            role: ROLE.into(),
            pid: 0,
            window_s: wall_s,
            user_s,
            sys_s,
            cpus_utilised: if wall_s > 0.0 {
                (user_s + sys_s) / wall_s
            } else {
                0.0
            },
            voluntary_switches: 0,
            involuntary_switches: 0,
            runqueue_wait_s: None,
        };
        let main = main0.until(&main1, "main", std::process::id());
        let mut record = aggregate(vec![channel], vec![main, command_cpu.clone()]);
        let f = &mut record.figures;
        f.insert(figures::WALL_S.into(), wall_s);
        f.insert(figures::USER_S.into(), user_s);
        f.insert(figures::SYS_S.into(), sys_s);
        f.insert(figures::CPU_S.into(), user_s + sys_s);
        f.insert(figures::CPUS.into(), command_cpu.cpus_utilised);
        record.counters = Some(RunCounters {
            source: "perf_event".into(),
            simulated: false,
            processes: vec![ProcessCounters {
                role: ROLE.into(),
                pid: 0,
                values,
            }],
            unsupported: self
                .counters
                .unsupported
                .iter()
                .map(|s| s.to_string())
                .collect(),
        });
        Ok(record)
    }

    fn finish(self: Box<Self>) -> Result<(), RunError> {
        Ok(())
    }
}

/// Counters opened on this thread with `inherit`: they count every process it
/// starts while enabled.
struct Inherited {
    counters: Vec<(&'static str, Counter)>,
    unsupported: Vec<&'static str>,
}

impl Inherited {
    fn open(pmu: bool) -> Inherited {
        let mut counters = Vec::new();
        let mut unsupported = Vec::new();
        for spec in EVENTS.iter().filter(|e| pmu || !e.hardware) {
            let mut b = spec.builder();
            b.observe_self()
                .any_cpu()
                .inherit(true)
                .enabled(false)
                .exclude_hv(true);
            // Kernel work counts where allowed; else user mode only.
            match b.build().or_else(|_| b.exclude_kernel(true).build()) {
                Ok(c) => counters.push((spec.name, c)),
                Err(_) => unsupported.push(spec.name),
            }
        }
        Inherited {
            counters,
            unsupported,
        }
    }

    /// Raw totals so far: an inherited counter keeps what exited children counted
    /// even across a reset, so runs are measured as differences of totals.
    fn totals(&mut self) -> Vec<(u64, u64, u64)> {
        self.counters
            .iter_mut()
            .map(|(_, c)| {
                c.read_full().map_or((0, 0, 0), |r| {
                    (
                        r.count(),
                        r.time_enabled().map_or(0, |d| d.as_nanos() as u64),
                        r.time_running().map_or(0, |d| d.as_nanos() as u64),
                    )
                })
            })
            .collect()
    }

    fn start(&mut self) -> Vec<(u64, u64, u64)> {
        let before = self.totals();
        for (_, c) in &mut self.counters {
            let _ = c.enable();
        }
        before
    }

    fn stop(&mut self, before: &[(u64, u64, u64)]) -> BTreeMap<String, f64> {
        for (_, c) in &mut self.counters {
            let _ = c.disable();
        }
        let after = self.totals();
        let mut out = BTreeMap::new();
        for (((n, _), b), a) in self.counters.iter().zip(before).zip(&after) {
            let v = CounterValue::from_reading(
                a.0.saturating_sub(b.0),
                a.1.saturating_sub(b.1),
                a.2.saturating_sub(b.2),
            );
            if let Some(v) = v.value() {
                out.insert(n.to_string(), v);
            }
        }
        xferbench_probes::counters::derive(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn control(stop: &AtomicBool, hang: Duration) -> RunControl<'_> {
        RunControl::new(stop, hang, None)
    }

    #[test]
    fn a_run_times_the_command_and_counts_its_cpu() {
        let stop = AtomicBool::new(false);
        let mut rig = CommandRig::new("sleep 0.05", false);
        let r = rig
            .run_once(&mut control(&stop, Duration::from_secs(10)))
            .unwrap();
        let wall = r.figures[figures::WALL_S];
        assert!((0.05..1.0).contains(&wall), "{wall}");
        assert!(r.figures[figures::CPU_S] >= 0.0);
        let c = r.counters.unwrap();
        assert_eq!(c.processes[0].role, ROLE);
    }

    #[test]
    fn a_failing_command_is_named_with_its_status() {
        let stop = AtomicBool::new(false);
        let mut rig = CommandRig::new("exit 3", false);
        let e = rig
            .run_once(&mut control(&stop, Duration::from_secs(10)))
            .unwrap_err();
        assert!(e.to_string().contains("exited with status 3"), "{e}");
    }

    #[test]
    fn a_command_past_the_timeout_is_stopped_with_all_it_started() {
        let stop = AtomicBool::new(false);
        let mut rig = CommandRig::new("sleep 30 & sleep 30; wait", false);
        let t = std::time::Instant::now();
        let e = rig
            .run_once(&mut control(&stop, Duration::from_millis(200)))
            .unwrap_err();
        assert!(e.to_string().contains("ran longer than"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[test]
    fn a_stop_interrupts_the_run() {
        let stop = AtomicBool::new(false);
        let mut rig = CommandRig::new("sleep 30", false);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(100));
                stop.store(true, Ordering::Relaxed);
            });
            let e = rig
                .run_once(&mut control(&stop, Duration::from_secs(60)))
                .unwrap_err();
            assert!(matches!(e, RunError::Interrupted), "{e}");
        });
    }
}
