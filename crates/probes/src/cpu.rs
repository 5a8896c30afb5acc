//! CPU cost of a process over a window: user and system time, CPUs utilised and
//! context switches, from `getrusage(RUSAGE_SELF)` (microsecond resolution) for
//! this process and from `/proc` for another (schedstat's nanoseconds for the
//! total, see [`CpuSnapshot::of_pid`]).

use crate::clock::Stamp;
use serde::{Deserialize, Serialize};

/// One reading of this process's resource usage, with the time it was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuSnapshot {
    /// When the reading was taken.
    pub at: Stamp,
    /// User CPU time, microseconds.
    pub user_us: u64,
    /// System CPU time, microseconds.
    pub sys_us: u64,
    /// Voluntary context switches (the process blocked).
    pub voluntary_switches: u64,
    /// Involuntary context switches (the process was preempted).
    pub involuntary_switches: u64,
    /// Another process's run time in nanoseconds, summed over its live threads
    /// (`/proc/<pid>/task/*/schedstat`), with the threads it was summed over; see
    /// [`CpuSnapshot::of_pid`]. `None` for this process and where schedstat is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_ns: Option<ThreadRunTime>,
    /// Time the process's live threads spent runnable but waiting for a CPU,
    /// nanoseconds, summed (the second field of `/proc/<pid>/task/*/schedstat`);
    /// `None` where schedstat is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ns: Option<u64>,
}

/// Run time summed over a process's live threads, and which threads they were (so
/// that a thread that exited or started between two readings is noticed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadRunTime {
    /// The sum of the threads' on-CPU time, nanoseconds.
    pub ns: u64,
    /// How many threads were summed.
    pub threads: u32,
    /// The sum of their thread ids.
    pub tid_sum: u64,
}

impl CpuSnapshot {
    /// Reads this process's usage now.
    pub fn now() -> Self {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `ru` points to writable memory of the right size; RUSAGE_SELF is a
        // valid `who`. getrusage cannot fail with these arguments, and the zeroed
        // struct is a valid `rusage` even if it did.
        let ru = unsafe {
            libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr());
            ru.assume_init()
        };
        let us = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64;
        CpuSnapshot {
            at: Stamp::now(),
            user_us: us(ru.ru_utime),
            sys_us: us(ru.ru_stime),
            voluntary_switches: ru.ru_nvcsw as u64,
            involuntary_switches: ru.ru_nivcsw as u64,
            run_ns: None,
            wait_ns: thread_wait_time("self"),
        }
    }

    /// Reads another process's usage, all its threads together:
    ///
    /// * user and system time from `/proc/<pid>/stat` (the whole thread group,
    ///   exited threads included; clock-tick resolution, usually 10 ms);
    /// * the run time of every live thread from `/proc/<pid>/task/*/schedstat`
    ///   (nanoseconds; [`CpuSnapshot::until`] prefers it for the total when the
    ///   same threads were alive at both readings);
    /// * context switches summed over `/proc/<pid>/task/*/status` (live threads; the
    ///   process's own `status` counts its main thread only).
    ///
    /// `None` when the process is gone or the file cannot be parsed.
    pub fn of_pid(pid: u32) -> Option<Self> {
        let at = Stamp::now();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the command name, which is in parentheses and may hold spaces.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // utime and stime are fields 14 and 15 of the file, 12 and 13 after ")".
        let tick = |i: usize| fields.get(i)?.parse::<u64>().ok();
        let hz = rustix::param::clock_ticks_per_second().max(1);
        let (utime, stime) = (tick(11)?, tick(12)?);
        let (voluntary, involuntary) = thread_switches(pid);
        Some(CpuSnapshot {
            at,
            user_us: utime * 1_000_000 / hz,
            sys_us: stime * 1_000_000 / hz,
            voluntary_switches: voluntary,
            involuntary_switches: involuntary,
            run_ns: thread_run_time(pid),
            wait_ns: thread_wait_time(&pid.to_string()),
        })
    }

    /// User and system seconds between `self` and `later`. The total is the
    /// schedstat run time when both readings have it over the same threads (ns
    /// resolution), split between user and system in the proportion of the tick
    /// counts (all user when no tick fell in the window); otherwise the tick or
    /// rusage figures as read.
    fn user_sys_s(&self, later: &CpuSnapshot) -> (f64, f64) {
        let user = later.user_us.saturating_sub(self.user_us) as f64 / 1e6;
        let sys = later.sys_us.saturating_sub(self.sys_us) as f64 / 1e6;
        match (self.run_ns, later.run_ns) {
            (Some(a), Some(b))
                if a.threads == b.threads && a.tid_sum == b.tid_sum && b.ns >= a.ns =>
            {
                let total = (b.ns - a.ns) as f64 / 1e9;
                let ticks = user + sys;
                if ticks > 0.0 {
                    (total * user / ticks, total * sys / ticks)
                } else {
                    (total, 0.0)
                }
            }
            _ => (user, sys),
        }
    }

    /// The usage between `self` (earlier) and `later`, attributed to `role`.
    pub fn until(&self, later: &CpuSnapshot, role: impl Into<String>, pid: u32) -> ProcessCpu {
        let window_s = later.at.since(self.at) as f64 / 1e9;
        let (user_s, sys_s) = self.user_sys_s(later);
        ProcessCpu {
            role: role.into(),
            pid,
            window_s,
            user_s,
            sys_s,
            cpus_utilised: if window_s > 0.0 {
                (user_s + sys_s) / window_s
            } else {
                0.0
            },
            voluntary_switches: later
                .voluntary_switches
                .saturating_sub(self.voluntary_switches),
            involuntary_switches: later
                .involuntary_switches
                .saturating_sub(self.involuntary_switches),
            runqueue_wait_s: match (self.wait_ns, later.wait_ns) {
                (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / 1e9),
                _ => None,
            },
        }
    }
}

/// CPU used by one participating process over its measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProcessCpu {
    /// Who this is: `main (drivers)` or `main (drivers + thread peers)` for the
    /// xferbench process, `peer N` for the process serving channel N.
    pub role: String,
    /// Process id.
    pub pid: u32,
    /// Wall-clock length of the window, seconds.
    pub window_s: f64,
    /// User CPU seconds in the window. For another process whose threads were the
    /// same at both ends, `user_s + sys_s` is its schedstat run time (ns
    /// resolution) and the split follows the clock ticks of `/proc/<pid>/stat`
    /// (all user when no tick fell in the window); otherwise both are tick counts
    /// (10 ms). For this process, rusage (µs).
    pub user_s: f64,
    /// System CPU seconds in the window (see `user_s`).
    pub sys_s: f64,
    /// (user + sys) / window: 1.0 is one CPU busy all the time.
    pub cpus_utilised: f64,
    /// Voluntary context switches in the window.
    pub voluntary_switches: u64,
    /// Involuntary context switches in the window.
    pub involuntary_switches: u64,
    /// Seconds the process's threads spent runnable but waiting for a CPU in the
    /// window, summed over its threads (schedstat; threads that exited in the window
    /// are not counted). Busy threads that outnumber the CPUs wait here. Absent where
    /// schedstat is missing and in results of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runqueue_wait_s: Option<f64>,
}

/// The run time of every live thread of `pid` from its `schedstat` (first field:
/// time on a CPU, ns); `None` when there is none to read.
fn thread_run_time(pid: u32) -> Option<ThreadRunTime> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut t = ThreadRunTime {
        ns: 0,
        threads: 0,
        tid_sum: 0,
    };
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) else {
            // A thread that exited while we read: the set differs, so the ticks count.
            continue;
        };
        let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
        t.ns += ns;
        t.threads += 1;
        t.tid_sum += tid;
    }
    (t.threads > 0).then_some(t)
}

/// The run-queue wait of every live thread of `/proc/<pid>` (`self` for this
/// process), nanoseconds summed (schedstat's second field); `None` when there is no
/// schedstat to read.
fn thread_wait_time(pid: &str) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut sum = None;
    for task in tasks.flatten() {
        let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        if let Some(ns) = text
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse::<u64>().ok())
        {
            *sum.get_or_insert(0) += ns;
        }
    }
    sum
}

/// Voluntary and involuntary context switches of every live thread of `pid`.
fn thread_switches(pid: u32) -> (u64, u64) {
    let switches = |status: &str, key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    let count = |status: &str| {
        (
            switches(status, "voluntary_ctxt_switches:"),
            switches(status, "nonvoluntary_ctxt_switches:"),
        )
    };
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
    let per_thread = tasks.into_iter().flatten().flatten().filter_map(|task| {
        std::fs::read_to_string(task.path().join("status"))
            .ok()
            .map(|s| count(&s))
    });
    let (mut v, mut n, mut threads) = (0, 0, 0);
    for (a, b) in per_thread {
        (v, n, threads) = (v + a, n + b, threads + 1);
    }
    if threads == 0 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        return count(&status);
    }
    (v, n)
}

/// User and system CPU seconds of this process's reaped children so far.
pub fn children_cpu() -> (f64, f64) {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is writable memory of the right size; RUSAGE_CHILDREN is valid;
    // a zeroed `rusage` is a valid value even if the call failed.
    let ru = unsafe {
        libc::getrusage(libc::RUSAGE_CHILDREN, ru.as_mut_ptr());
        ru.assume_init()
    };
    let s = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_loop_shows_up_as_user_time() {
        let a = CpuSnapshot::now();
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(60) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let b = CpuSnapshot::now();
        let cpu = a.until(&b, "main", std::process::id());
        assert!(cpu.window_s >= 0.06);
        assert!(cpu.user_s + cpu.sys_s > 0.0, "{cpu:?}");
        assert!(
            cpu.cpus_utilised > 0.0 && cpu.cpus_utilised <= 2.0 * num_cpus_upper(),
            "{cpu:?}"
        );
    }

    #[test]
    fn another_process_counts_the_switches_of_all_its_threads() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let me = std::process::id();
        let done = AtomicUsize::new(0);
        // Each sleeping thread's own count of voluntary switches, from its own
        // status file.
        let own = std::sync::atomic::AtomicU64::new(0);
        let hold = std::sync::Barrier::new(3);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..50 {
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    }
                    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
                    let mine: u64 = status
                        .lines()
                        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap();
                    own.fetch_add(mine, Ordering::SeqCst);
                    done.fetch_add(1, Ordering::SeqCst);
                    hold.wait();
                });
            }
            // The main thread blocks on nothing while the others sleep 100 times.
            while done.load(Ordering::SeqCst) < 2 {
                std::hint::spin_loop();
            }
            // Both sleepers are alive (held at the barrier): the process's count holds
            // theirs, whatever other tests' threads came and went meanwhile.
            let during = CpuSnapshot::of_pid(me).unwrap();
            hold.wait();
            let theirs = own.load(Ordering::SeqCst);
            assert!(theirs >= 100, "the sleepers switched {theirs} times");
            assert!(
                during.voluntary_switches >= theirs,
                "{} voluntary switches in the process, {theirs} in two of its threads",
                during.voluntary_switches
            );
        });
    }

    #[test]
    fn a_busy_child_is_measured_below_the_tick() {
        // A child that spins for ~25 ms: less than three 10 ms ticks, measured to the
        // nanosecond from schedstat.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "read x; while :; do :; done"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let before = CpuSnapshot::of_pid(pid).unwrap();
        assert!(before.run_ns.is_some(), "schedstat is readable: {before:?}");
        drop(child.stdin.take());
        std::thread::sleep(std::time::Duration::from_millis(25));
        let after = CpuSnapshot::of_pid(pid).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        let cpu = before.until(&after, "child", pid);
        let run_s = (after.run_ns.unwrap().ns - before.run_ns.unwrap().ns) as f64 / 1e9;
        assert!(
            (cpu.user_s + cpu.sys_s - run_s).abs() < 1e-9,
            "the total is schedstat's: {cpu:?} vs {run_s}"
        );
        // It spun (on a loaded machine, for part of the window at least).
        assert!(
            run_s > 0.001 && run_s <= cpu.window_s * 1.01,
            "{run_s} of {cpu:?}"
        );
        // A different set of threads falls back to the ticks.
        let mut other = after;
        other.run_ns = other.run_ns.map(|t| ThreadRunTime {
            threads: t.threads + 1,
            ..t
        });
        let ticks = before.until(&other, "child", pid);
        let tick_s = (after.user_us + after.sys_us - before.user_us - before.sys_us) as f64 / 1e6;
        assert!((ticks.user_s + ticks.sys_s - tick_s).abs() < 1e-9);
    }

    fn num_cpus_upper() -> f64 {
        std::thread::available_parallelism()
            .map(|n| n.get() as f64)
            .unwrap_or(64.0)
    }

    #[test]
    fn threads_that_outnumber_their_cpu_wait_on_the_run_queue() {
        let Some(&cpu) = crate::affinity::allowed_cpus().first() else {
            return;
        };
        let before = CpuSnapshot::now();
        if before.wait_ns.is_none() {
            eprintln!("skipped: no schedstat on this kernel");
            return;
        }
        // Three threads busy for 60 ms on one CPU: each waits while another runs.
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(move || {
                    crate::affinity::pin_current_thread(cpu).unwrap();
                    let start = std::time::Instant::now();
                    let mut x = 0u64;
                    while start.elapsed() < std::time::Duration::from_millis(60) {
                        x = std::hint::black_box(x.wrapping_add(1));
                    }
                    // Read while alive: an exited thread's wait leaves the sum.
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    std::hint::black_box(x)
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            let during = CpuSnapshot::now();
            let waited = during.wait_ns.unwrap() - before.wait_ns.unwrap();
            assert!(
                waited >= 20_000_000,
                "three threads on one CPU waited {waited} ns"
            );
        });
    }
}
