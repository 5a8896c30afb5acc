//! Counters from `perf_event_open(2)`, opened by the main process for every thread
//! of every participant.
//!
//! At the start of a window the source lists `/proc/PID/task` of each participant and
//! opens one counter per event and thread (disabled), then enables them all; at the
//! end it disables and reads them and sums the threads of each process. Threads exist
//! before the window opens (the runner's drivers wait at a barrier), so no counter
//! needs `inherit`. Counting from outside keeps the peer protocol unchanged and needs
//! only that the peers run as the same user.
//!
//! Kernel-mode work (syscalls matter for transports) is counted when allowed;
//! where `perf_event_paranoid` forbids it the source falls back to user-mode
//! counting and says so. Hardware events are only tried when a PMU answered the
//! probe in `xferbench_lab::context`; without one they are listed as unsupported, once.
//! A multiplexed counter is scaled by `time_enabled / time_running`, as `perf stat`
//! does.

use super::model::{CounterSource, Participant, ProcessCounters, RunCounters, derive, name};
use perf_event::events::{Event, Hardware, Software};
use perf_event::{Builder, Counter};
use std::collections::BTreeMap;

/// One event to count.
#[derive(Debug, Clone, Copy)]
pub struct EventSpec {
    /// Name in results.
    pub name: &'static str,
    /// A hardware (PMU) event.
    pub hardware: bool,
    kind: Kind,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Sw(Software),
    Hw(Hardware),
}

/// The events counted: software first, then hardware.
pub const EVENTS: [EventSpec; 11] = [
    sw(name::TASK_CLOCK, Software::TASK_CLOCK),
    sw(name::CONTEXT_SWITCHES, Software::CONTEXT_SWITCHES),
    sw(name::CPU_MIGRATIONS, Software::CPU_MIGRATIONS),
    sw(name::PAGE_FAULTS, Software::PAGE_FAULTS),
    hw(name::INSTRUCTIONS, Hardware::INSTRUCTIONS),
    hw(name::CYCLES, Hardware::CPU_CYCLES),
    hw(name::STALLED_FRONTEND, Hardware::STALLED_CYCLES_FRONTEND),
    hw(name::STALLED_BACKEND, Hardware::STALLED_CYCLES_BACKEND),
    hw(name::CACHE_MISSES, Hardware::CACHE_MISSES),
    hw(name::BRANCHES, Hardware::BRANCH_INSTRUCTIONS),
    hw(name::BRANCH_MISSES, Hardware::BRANCH_MISSES),
];

impl EventSpec {
    /// A `perf_event` builder for this event, asking for enabled/running times.
    pub fn builder(&self) -> Builder<'static> {
        match self.kind {
            Kind::Sw(e) => builder(e),
            Kind::Hw(e) => builder(e),
        }
    }
}

const fn sw(name: &'static str, e: Software) -> EventSpec {
    EventSpec {
        name,
        hardware: false,
        kind: Kind::Sw(e),
    }
}

const fn hw(name: &'static str, e: Hardware) -> EventSpec {
    EventSpec {
        name,
        hardware: true,
        kind: Kind::Hw(e),
    }
}

/// What one counter yielded, as `perf stat` would print it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CounterValue {
    /// Counted for the whole window.
    Counted(f64),
    /// Multiplexed: counted part of the time and scaled up.
    Scaled(f64),
    /// Opened but never scheduled (`<not counted>`).
    NotCounted,
    /// The kernel or CPU does not have this event (`<not supported>`).
    NotSupported,
}

impl CounterValue {
    /// Interprets a raw reading: count, time enabled and time running (ns).
    pub fn from_reading(count: u64, enabled_ns: u64, running_ns: u64) -> CounterValue {
        if running_ns == 0 {
            if enabled_ns == 0 && count > 0 {
                // No timing information: take the count as is.
                return CounterValue::Counted(count as f64);
            }
            return CounterValue::NotCounted;
        }
        if running_ns >= enabled_ns {
            CounterValue::Counted(count as f64)
        } else {
            CounterValue::Scaled(count as f64 * enabled_ns as f64 / running_ns as f64)
        }
    }

    /// The value, if there is one.
    pub fn value(self) -> Option<f64> {
        match self {
            CounterValue::Counted(v) | CounterValue::Scaled(v) => Some(v),
            _ => None,
        }
    }
}

/// How a failed `perf_event_open` is to be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenFailure {
    /// The event does not exist here (no PMU, or this CPU lacks it).
    NotSupported,
    /// Forbidden by `perf_event_paranoid` or missing privileges.
    Forbidden,
    /// The target thread is gone.
    Gone,
    /// Anything else.
    Other,
}

impl OpenFailure {
    /// Classifies an `errno` from `perf_event_open`.
    pub fn from_errno(errno: i32) -> OpenFailure {
        match errno {
            libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL => {
                OpenFailure::NotSupported
            }
            libc::EACCES | libc::EPERM => OpenFailure::Forbidden,
            libc::ESRCH => OpenFailure::Gone,
            _ => OpenFailure::Other,
        }
    }
}

struct Open {
    role: String,
    pid: u32,
    counters: Vec<(&'static str, Counter)>,
}

/// Counts participants with `perf_event_open`; see the module doc.
pub struct PerfEventSource {
    pmu: bool,
    user_only: bool,
    open: Vec<Open>,
    unsupported: Vec<String>,
}

impl PerfEventSource {
    /// A source; hardware events are tried only when `pmu` is true.
    pub fn new(pmu: bool) -> PerfEventSource {
        PerfEventSource {
            pmu,
            user_only: false,
            open: Vec::new(),
            unsupported: Vec::new(),
        }
    }

    fn open_one(&mut self, spec: &EventSpec, tid: u32) -> Result<Counter, OpenFailure> {
        loop {
            let mut b = spec.builder();
            b.observe_pid(tid as i32)
                .any_cpu()
                .enabled(false)
                .exclude_kernel(self.user_only)
                .exclude_hv(true);
            match b.build() {
                Ok(c) => return Ok(c),
                Err(e) => {
                    let f = OpenFailure::from_errno(e.raw_os_error().unwrap_or(0));
                    if f == OpenFailure::Forbidden && !self.user_only {
                        // Kernel-mode counting forbidden: count user mode only.
                        self.user_only = true;
                        self.note_unsupported("kernel-mode counting (perf_event_paranoid)");
                        continue;
                    }
                    return Err(f);
                }
            }
        }
    }

    fn note_unsupported(&mut self, what: &str) {
        if !self.unsupported.iter().any(|u| u == what) {
            self.unsupported.push(what.to_string());
        }
    }
}

fn builder<'a, E: Event>(e: E) -> Builder<'a> {
    let mut b = Builder::new(e);
    b.read_format(
        perf_event::ReadFormat::TOTAL_TIME_ENABLED | perf_event::ReadFormat::TOTAL_TIME_RUNNING,
    );
    b
}

/// The thread ids of a process, from `/proc/PID/task` (just the pid if unreadable).
pub fn threads_of(pid: u32) -> Vec<u32> {
    let mut tids: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    if tids.is_empty() {
        tids.push(pid);
    }
    tids.sort_unstable();
    tids
}

impl CounterSource for PerfEventSource {
    fn window_started(&mut self, participants: &[Participant]) {
        self.open.clear();
        for p in participants {
            let mut counters = Vec::new();
            for tid in threads_of(p.pid) {
                for spec in &EVENTS {
                    if spec.hardware && !self.pmu {
                        self.note_unsupported(spec.name);
                        continue;
                    }
                    if self.unsupported.iter().any(|u| u == spec.name) {
                        continue;
                    }
                    match self.open_one(spec, tid) {
                        Ok(c) => counters.push((spec.name, c)),
                        Err(OpenFailure::Gone) => {}
                        Err(_) => self.note_unsupported(spec.name),
                    }
                }
            }
            self.open.push(Open {
                role: p.name.clone(),
                pid: p.pid,
                counters,
            });
        }
        for o in &mut self.open {
            for (_, c) in &mut o.counters {
                let _ = c.enable();
            }
        }
    }

    fn window_ended(&mut self) -> Option<RunCounters> {
        for o in &mut self.open {
            for (_, c) in &mut o.counters {
                let _ = c.disable();
            }
        }
        let mut processes = Vec::new();
        for o in self.open.drain(..) {
            let mut values: BTreeMap<String, f64> = BTreeMap::new();
            for (n, mut c) in o.counters {
                let Ok(r) = c.read_full() else { continue };
                let v = CounterValue::from_reading(
                    r.count(),
                    r.time_enabled().map_or(0, |d| d.as_nanos() as u64),
                    r.time_running().map_or(0, |d| d.as_nanos() as u64),
                );
                if let Some(v) = v.value() {
                    *values.entry(n.to_string()).or_default() += v;
                }
            }
            derive(&mut values);
            processes.push(ProcessCounters {
                role: o.role,
                pid: o.pid,
                values,
            });
        }
        Some(RunCounters {
            source: "perf_event".into(),
            simulated: false,
            processes,
            unsupported: self.unsupported.clone(),
        })
    }

    fn point_finished(&mut self, _: &[Participant], _: &mut Vec<String>) -> Option<RunCounters> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_are_interpreted_like_perf_stat() {
        assert_eq!(
            CounterValue::from_reading(1000, 50, 50),
            CounterValue::Counted(1000.0)
        );
        // Multiplexed half the time: scaled up.
        assert_eq!(
            CounterValue::from_reading(1000, 100, 50),
            CounterValue::Scaled(2000.0)
        );
        assert_eq!(
            CounterValue::from_reading(0, 100, 0),
            CounterValue::NotCounted
        );
        assert_eq!(CounterValue::NotSupported.value(), None);
    }

    #[test]
    fn open_errors_are_classified() {
        assert_eq!(
            OpenFailure::from_errno(libc::ENOENT),
            OpenFailure::NotSupported
        );
        assert_eq!(
            OpenFailure::from_errno(libc::EOPNOTSUPP),
            OpenFailure::NotSupported
        );
        assert_eq!(
            OpenFailure::from_errno(libc::EACCES),
            OpenFailure::Forbidden
        );
        assert_eq!(OpenFailure::from_errno(libc::ESRCH), OpenFailure::Gone);
    }

    #[test]
    fn a_busy_thread_is_counted_and_missing_hardware_is_listed_once() {
        let mut s = PerfEventSource::new(false);
        let me = [Participant::main()];
        s.window_started(&me);
        // Spin for 30 ms of this thread's CPU time (wall time means little on a
        // loaded machine).
        let cpu_ns = || {
            let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
            t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
        };
        let start = cpu_ns();
        let mut x = 0u64;
        while cpu_ns() - start < 30_000_000 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let r = s.window_ended().expect("per-run source");
        assert_eq!(r.processes.len(), 1);
        let task_clock = r.processes[0].values.get(name::TASK_CLOCK).copied();
        match task_clock {
            // perf_event_open may be unavailable entirely (seccomp in containers).
            None => assert!(r.unsupported.iter().any(|u| u == name::TASK_CLOCK), "{r:?}"),
            Some(ns) => assert!(ns >= 29e6, "30 ms of CPU counted as {ns} ns"),
        }
        assert_eq!(
            r.unsupported
                .iter()
                .filter(|u| *u == name::INSTRUCTIONS)
                .count(),
            1
        );
        assert!(!r.processes[0].values.contains_key(name::INSTRUCTIONS));
    }

    #[test]
    fn threads_of_this_process_include_this_thread() {
        let tids = threads_of(std::process::id());
        assert!(tids.contains(&std::process::id()));
    }
}
