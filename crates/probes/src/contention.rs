//! How busy the machine was with other work while each point ran.
//!
//! A figure measured while a compiler ran on the same CPUs describes the compiler as
//! much as the transport. Around every run's measured window the point loop reads
//! `/proc` twice ([`ProcFs::read`]) and records ([`RunContention`]):
//!
//! * **the CPU used by processes outside the run**: every process that is neither
//!   this one nor one of its descendants (peers, remotes, memory mocks, clients) nor
//!   a participant of the run, from `/proc/<pid>/stat` (user + system time of the
//!   whole thread group, and the time of its waited-for children, so a child that
//!   exits during the window is still counted: its parent's children's time grows by
//!   what the child used in all, and the child's time at the start is subtracted).
//!   Kernel threads are counted apart (`kernel_cpus`, the busiest named in
//!   `busiest_kernel`): they often work for the run itself (network processing for
//!   `tcp`, say), and they are what holds a pinned side's CPU for milliseconds on a
//!   quiet machine (workqueues, memory compaction);
//! * **steal**: the share of all CPU time the hypervisor gave to other guests
//!   (`/proc/stat`);
//! * **the load average** (`/proc/loadavg`, one minute), which counts the run's own
//!   threads too, so it is recorded but does not decide anything.
//!
//! A point is **contended** ([`PointContention::contended`]) when, over the windows
//! of all its runs, processes outside the run used more than [`OTHERS_CPUS`] of a CPU
//! or steal exceeded [`STEAL`]; it then carries a warning naming the busiest
//! processes. Readings of processes have the kernel's clock-tick resolution (10 ms per
//! process); summed over a point's runs that is a small fraction of a CPU. Kernel
//! threads, each a single task, are read from `/proc/<pid>/schedstat` (nanoseconds on
//! a CPU), so that their work of a few milliseconds within a quarter-second run is
//! seen.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Processes outside the run using more than this many CPUs make a point contended.
pub const OTHERS_CPUS: f64 = 0.2;
/// Steal above this fraction of all CPU time makes a point contended.
pub const STEAL: f64 = 0.05;
/// How many of the busiest outside processes are named.
const BUSIEST: usize = 3;
/// `PF_KTHREAD` in the flags of `/proc/<pid>/stat`.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Where to read the process table: `/proc`, or a directory laid out like it (tests).
#[derive(Debug, Clone)]
pub struct ProcFs {
    root: PathBuf,
}

/// One process in a reading.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcEntry {
    /// Parent process id.
    pub ppid: u32,
    /// User + system clock ticks of the process and of its waited-for children.
    pub ticks: u64,
    /// Nanoseconds on a CPU (`schedstat`), read for kernel threads only.
    pub run_ns: Option<u64>,
    /// A kernel thread.
    pub kernel: bool,
    /// The command name (`comm`).
    pub command: String,
}

/// One reading of the process table and the CPU counters.
#[derive(Debug, Clone)]
pub struct ProcReading {
    /// When it was taken.
    pub at: Instant,
    /// Every process, by pid.
    pub processes: BTreeMap<u32, ProcEntry>,
    /// All CPUs' ticks (`/proc/stat` `cpu` line, the first eight fields summed).
    pub total_ticks: u64,
    /// Of which stolen by the hypervisor.
    pub steal_ticks: u64,
    /// The one-minute load average.
    pub load_1m: Option<f64>,
}

impl ProcFs {
    /// The real `/proc`.
    pub fn real() -> Self {
        Self::at("/proc")
    }

    /// A directory laid out like `/proc`: `stat`, `loadavg` and `<pid>/stat`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        ProcFs { root: root.into() }
    }

    /// Reads the process table, `/proc/stat` and `/proc/loadavg`; `None` when
    /// `/proc/stat` cannot be read (no `/proc`).
    pub fn read(&self) -> Option<ProcReading> {
        let at = Instant::now();
        let (total_ticks, steal_ticks) =
            cpu_line(&std::fs::read_to_string(self.root.join("stat")).ok()?)?;
        let load_1m = self.read_load();
        let mut processes = BTreeMap::new();
        let mut text = String::new();
        for entry in std::fs::read_dir(&self.root).ok()?.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            text.clear();
            // A process that exited since the directory was listed is simply absent.
            if read_into(&entry.path().join("stat"), &mut text).is_ok()
                && let Some(mut p) = parse_stat(&text)
            {
                if p.kernel {
                    text.clear();
                    p.run_ns = read_into(&entry.path().join("schedstat"), &mut text)
                        .ok()
                        .and_then(|()| text.split_whitespace().next()?.parse().ok());
                }
                processes.insert(pid, p);
            }
        }
        Some(ProcReading {
            at,
            processes,
            total_ticks,
            steal_ticks,
            load_1m,
        })
    }
}

fn read_into(path: &Path, buf: &mut String) -> std::io::Result<()> {
    use std::io::Read;
    std::fs::File::open(path)?.read_to_string(buf).map(|_| ())
}

/// The `cpu` line of `/proc/stat`: (all ticks, steal ticks).
fn cpu_line(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    Some((v.iter().sum(), *v.get(7).unwrap_or(&0)))
}

/// One `/proc/<pid>/stat` line.
fn parse_stat(text: &str) -> Option<ProcEntry> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let command = text.get(open + 1..close)?.to_string();
    let f: Vec<&str> = text.get(close + 2..)?.split_whitespace().collect();
    let n = |i: usize| f.get(i)?.parse::<u64>().ok();
    Some(ProcEntry {
        ppid: n(1)? as u32,
        kernel: n(6)? & PF_KTHREAD != 0,
        ticks: n(11)? + n(12)? + n(13)? + n(14)?,
        run_ns: None,
        command,
    })
}

/// Which processes belong to the run: the given roots and their descendants.
fn run_members(r: &ProcReading, roots: &BTreeSet<u32>) -> BTreeSet<u32> {
    let mut members = BTreeSet::new();
    for &pid in r.processes.keys() {
        let mut p = pid;
        // Bounded: a ppid loop in a hostile or half-read table cannot hang us.
        for _ in 0..64 {
            if roots.contains(&p) {
                members.insert(pid);
                break;
            }
            match r.processes.get(&p) {
                Some(e) if e.ppid != 0 && e.ppid != p => p = e.ppid,
                _ => break,
            }
        }
    }
    members.extend(roots.iter().copied());
    members
}

/// The nearest ancestor of `pid` (a process in `start`) that is still in `end`:
/// the one that reaped it, when its parent or a chain of exited parents did.
fn surviving_ancestor(start: &ProcReading, end: &ProcReading, pid: u32) -> Option<u32> {
    let mut p = pid;
    // Bounded, as in `run_members`.
    for _ in 0..64 {
        let e = start.processes.get(&p)?;
        if e.ppid == 0 || e.ppid == p {
            return None;
        }
        p = e.ppid;
        if end.processes.contains_key(&p) {
            return Some(p);
        }
    }
    None
}

/// A process outside the run that used CPU during it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Contender {
    /// Process id.
    pub pid: u32,
    /// Its command name.
    pub command: String,
    /// CPUs it used on average over the window(s), with what its children that
    /// exited in the window used within it.
    pub cpus: f64,
}

/// How busy the machine was with other work during one run's window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunContention {
    /// Seconds between the two readings (the measured window and a little around it).
    pub window_s: f64,
    /// CPUs used on average by processes outside the run (not kernel threads).
    pub others_cpus: f64,
    /// CPUs used on average by kernel threads.
    pub kernel_cpus: f64,
    /// Share of all CPU time stolen by the hypervisor, 0–1.
    pub steal: f64,
    /// The one-minute load average at the start (counts the run's own threads too).
    pub load_1m: Option<f64>,
    /// The busiest outside processes, most first (at most three).
    pub busiest: Vec<Contender>,
    /// The busiest kernel threads, most first (at most three; absent in results of
    /// earlier versions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub busiest_kernel: Vec<Contender>,
}

/// What happened between two readings, for a run made of `roots` (this process and
/// the run's participants) and their descendants.
pub fn between(start: &ProcReading, end: &ProcReading, roots: &[u32]) -> RunContention {
    let roots: BTreeSet<u32> = roots.iter().copied().collect();
    let mut run = run_members(start, &roots);
    run.extend(run_members(end, &roots));
    let window_s = end.at.saturating_duration_since(start.at).as_secs_f64();
    let hz = rustix::param::clock_ticks_per_second().max(1) as f64;
    let mut per_process: BTreeMap<u32, (&ProcEntry, i64)> = BTreeMap::new();
    // Kernel threads in seconds on a CPU: schedstat's nanoseconds where both readings
    // have them, ticks otherwise.
    let mut per_kernel: Vec<(u32, &ProcEntry, f64)> = Vec::new();
    for (pid, e) in &end.processes {
        if run.contains(pid) {
            continue;
        }
        let was = start.processes.get(pid);
        if e.kernel {
            let seconds = match (was.map_or(Some(0), |s| s.run_ns), e.run_ns) {
                (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e9,
                _ => e.ticks.saturating_sub(was.map_or(0, |s| s.ticks)) as f64 / hz,
            };
            per_kernel.push((*pid, e, seconds));
        } else {
            let d = e.ticks as i64 - was.map_or(0, |s| s.ticks) as i64;
            per_process.insert(*pid, (e, d));
        }
    }
    // A process that exited during the window: whoever reaped it now holds all it
    // ever used in its children's time, so what it had used before the window comes
    // off that process (its nearest ancestor still there at the end), leaving it the
    // exited child's use within the window. With no such ancestor outside the run it
    // comes off the total only.
    let mut unplaced = 0i64;
    for (pid, s) in &start.processes {
        if end.processes.contains_key(pid) || run.contains(pid) || s.kernel {
            continue;
        }
        match surviving_ancestor(start, end, *pid).and_then(|a| per_process.get_mut(&a)) {
            Some((_, d)) => *d -= s.ticks as i64,
            None => unplaced += s.ticks as i64,
        }
    }
    let others: i64 = per_process.values().map(|(_, d)| d).sum::<i64>() - unplaced;
    // Seconds on a CPU, averaged over the window.
    let cpus = |seconds: f64| {
        if window_s > 0.0 {
            seconds.max(0.0) / window_s
        } else {
            0.0
        }
    };
    let busiest = busiest_of(
        per_process
            .into_iter()
            .map(|(pid, (e, d))| (pid, e, d as f64 / hz))
            .collect(),
        cpus,
    );
    let kernel_s: f64 = per_kernel.iter().map(|(_, _, s)| s).sum();
    let busiest_kernel = busiest_of(per_kernel, cpus);
    let total = end.total_ticks.saturating_sub(start.total_ticks);
    let steal = end.steal_ticks.saturating_sub(start.steal_ticks);
    RunContention {
        window_s,
        others_cpus: cpus(others as f64 / hz),
        kernel_cpus: cpus(kernel_s),
        steal: if total > 0 {
            steal as f64 / total as f64
        } else {
            0.0
        },
        load_1m: start.load_1m,
        busiest,
        busiest_kernel,
    }
}

/// The [`BUSIEST`] of `(pid, process, seconds on a CPU)` that used any, most first, in
/// CPUs averaged over the window (`cpus`).
fn busiest_of(mut used: Vec<(u32, &ProcEntry, f64)>, cpus: impl Fn(f64) -> f64) -> Vec<Contender> {
    used.sort_by(|a, b| b.2.total_cmp(&a.2));
    used.into_iter()
        .filter(|(_, _, s)| *s > 0.0)
        .take(BUSIEST)
        .map(|(pid, e, s)| Contender {
            pid,
            command: e.command.clone(),
            cpus: cpus(s),
        })
        .collect()
}

/// How busy the machine was with other work over all of a point's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PointContention {
    /// Runs it covers.
    pub runs: usize,
    /// CPUs used by processes outside the run, over the windows of all its runs.
    pub others_cpus: f64,
    /// CPUs used by kernel threads, likewise.
    pub kernel_cpus: f64,
    /// Share of all CPU time stolen by the hypervisor, over the same windows.
    pub steal: f64,
    /// The highest one-minute load average at the start of a run.
    pub load_1m: Option<f64>,
    /// The busiest outside processes over the point's runs, most first.
    pub busiest: Vec<Contender>,
    /// The busiest kernel threads over the point's runs, most first (absent in
    /// results of earlier versions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub busiest_kernel: Vec<Contender>,
    /// Others used more than [`OTHERS_CPUS`] of a CPU, or steal exceeded [`STEAL`].
    pub contended: bool,
}

impl PointContention {
    /// Summarises a point's runs (window-weighted); `None` without any reading.
    pub fn of_runs<'a>(runs: impl IntoIterator<Item = &'a RunContention>) -> Option<Self> {
        let runs: Vec<&RunContention> = runs.into_iter().collect();
        if runs.is_empty() {
            return None;
        }
        let window: f64 = runs.iter().map(|r| r.window_s).sum();
        let weighted = |f: fn(&RunContention) -> f64| {
            if window > 0.0 {
                runs.iter().map(|r| f(r) * r.window_s).sum::<f64>() / window
            } else {
                0.0
            }
        };
        let others_cpus = weighted(|r| r.others_cpus);
        let steal = weighted(|r| r.steal);
        let over_runs = |of: fn(&RunContention) -> &[Contender]| {
            let mut by_pid: BTreeMap<u32, Contender> = BTreeMap::new();
            for r in &runs {
                for c in of(r) {
                    let e = by_pid.entry(c.pid).or_insert_with(|| Contender {
                        cpus: 0.0,
                        ..c.clone()
                    });
                    if window > 0.0 {
                        e.cpus += c.cpus * r.window_s / window;
                    }
                }
            }
            let mut busiest: Vec<Contender> = by_pid.into_values().collect();
            busiest.sort_by(|a, b| b.cpus.total_cmp(&a.cpus));
            busiest.truncate(BUSIEST);
            busiest
        };
        let busiest = over_runs(|r| &r.busiest);
        let busiest_kernel = over_runs(|r| &r.busiest_kernel);
        Some(PointContention {
            runs: runs.len(),
            others_cpus,
            kernel_cpus: weighted(|r| r.kernel_cpus),
            steal,
            load_1m: runs.iter().filter_map(|r| r.load_1m).reduce(f64::max),
            busiest,
            busiest_kernel,
            contended: is_contended(others_cpus, steal),
        })
    }

    /// `contended: processes outside the run used 1.85 CPUs (cc1 1.20, rustc
    /// 0.50), steal 0.3 %, load 5.2; its figures describe a shared machine: …`.
    pub fn warning(&self) -> String {
        format!(
            "contended: {}; its figures describe a shared machine: rerun it on a quieter one",
            self.describe()
        )
    }

    /// What was measured, in words.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "processes outside the run used {:.2} CPUs",
            self.others_cpus
        );
        if !self.busiest.is_empty() {
            let names: Vec<String> = self
                .busiest
                .iter()
                .map(|c| format!("{} (pid {}) {:.2}", c.command, c.pid, c.cpus))
                .collect();
            s.push_str(&format!(" ({})", names.join(", ")));
        }
        s.push_str(&format!(", steal {:.1} %", self.steal * 100.0));
        if let Some(l) = self.load_1m {
            s.push_str(&format!(", load average {l:.2}"));
        }
        s
    }
}

/// The classifier: others above [`OTHERS_CPUS`] or steal above [`STEAL`].
pub fn is_contended(others_cpus: f64, steal: f64) -> bool {
    others_cpus > OTHERS_CPUS || steal > STEAL
}

/// The machine's load over a whole run or study, for the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MachineLoad {
    /// The one-minute load average when the plan started.
    pub load_1m_start: Option<f64>,
    /// The one-minute load average when it ended.
    pub load_1m_end: Option<f64>,
    /// CPUs used by processes outside the run, over the windows of all runs.
    pub others_cpus: f64,
    /// Share of all CPU time stolen, over the same windows.
    pub steal: f64,
    /// Points flagged contended.
    pub contended_points: usize,
    /// Points with a contention reading.
    pub points: usize,
    /// The thresholds: CPUs used by others.
    pub others_cpus_threshold: f64,
    /// The thresholds: steal.
    pub steal_threshold: f64,
}

impl MachineLoad {
    /// The load at the start of a plan.
    pub fn starting(proc: &ProcFs) -> Self {
        MachineLoad {
            load_1m_start: proc.read_load(),
            load_1m_end: None,
            others_cpus: 0.0,
            steal: 0.0,
            contended_points: 0,
            points: 0,
            others_cpus_threshold: OTHERS_CPUS,
            steal_threshold: STEAL,
        }
    }

    /// Fills in the end: the points' contention and the load now.
    pub fn finish<'a>(
        &mut self,
        proc: &ProcFs,
        points: impl IntoIterator<Item = &'a PointContention>,
        all_runs: &[&RunContention],
    ) {
        self.load_1m_end = proc.read_load();
        let points: Vec<&PointContention> = points.into_iter().collect();
        self.points = points.len();
        self.contended_points = points.iter().filter(|p| p.contended).count();
        if let Some(all) = PointContention::of_runs(all_runs.iter().copied()) {
            self.others_cpus = all.others_cpus;
            self.steal = all.steal;
        }
    }

    /// `contended: 3 of 12 points were measured while …`, when any was.
    pub fn warning(&self) -> Option<String> {
        (self.contended_points > 0).then(|| {
            format!(
                "contended: {} of {} points were measured while processes outside the run used \
                 more than {:.0} % of a CPU or steal exceeded {:.0} % (see their warnings); over \
                 all runs others used {:.2} CPUs, steal {:.1} %",
                self.contended_points,
                self.points,
                self.others_cpus_threshold * 100.0,
                self.steal_threshold * 100.0,
                self.others_cpus,
                self.steal * 100.0
            )
        })
    }

    /// One line for a summary: `12 of 12 points uncontended …` or the warning.
    pub fn sentence(&self) -> String {
        match self.warning() {
            Some(w) => w,
            None => format!(
                "none of the {} points was contended: processes outside the run used {:.2} CPUs \
                 over all runs, steal {:.1} %",
                self.points,
                self.others_cpus,
                self.steal * 100.0
            ),
        }
    }
}

impl ProcFs {
    /// The one-minute load average now.
    pub fn read_load(&self) -> Option<f64> {
        std::fs::read_to_string(self.root.join("loadavg"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A `/proc` laid out in a temporary folder.
    struct FakeProc {
        dir: tempfile::TempDir,
    }

    impl FakeProc {
        fn new() -> Self {
            FakeProc {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        /// `/proc/stat` with `busy` user ticks, `idle` and `steal`, and a load.
        fn machine(&self, busy: u64, idle: u64, steal: u64, load: f64) {
            std::fs::write(
                self.dir.path().join("stat"),
                format!("cpu  {busy} 0 0 {idle} 0 0 0 {steal} 0 0\ncpu0 1 2 3\n"),
            )
            .unwrap();
            std::fs::write(
                self.dir.path().join("loadavg"),
                format!("{load:.2} 1.00 1.00 2/90 1234\n"),
            )
            .unwrap();
        }

        /// A process with its parent, user and children's ticks, and kernel flag.
        fn process(&self, pid: u32, ppid: u32, comm: &str, utime: u64, cutime: u64, kernel: bool) {
            let dir = self.dir.path().join(pid.to_string());
            std::fs::create_dir_all(&dir).unwrap();
            let flags = if kernel { PF_KTHREAD | 0x40 } else { 0x400100 };
            std::fs::write(
                dir.join("stat"),
                format!(
                    "{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 {flags} 10 0 0 0 {utime} 0 {cutime} 0 20 0 1 0 100 1000 100\n"
                ),
            )
            .unwrap();
        }

        /// A thread's `schedstat`: `ns` on a CPU.
        fn schedstat(&self, pid: u32, ns: u64) {
            let dir = self.dir.path().join(pid.to_string());
            std::fs::write(dir.join("schedstat"), format!("{ns} 1000 7\n")).unwrap();
        }

        fn exit(&self, pid: u32) {
            std::fs::remove_dir_all(self.dir.path().join(pid.to_string())).unwrap();
        }

        fn read(&self, at: Instant) -> ProcReading {
            let mut r = ProcFs::at(self.dir.path()).read().unwrap();
            r.at = at;
            r
        }
    }

    fn hz() -> u64 {
        rustix::param::clock_ticks_per_second().max(1)
    }

    /// A one-second window with `others` ticks of outside work on a quiet run.
    fn window(setup: impl Fn(&FakeProc, bool)) -> RunContention {
        let p = FakeProc::new();
        let t0 = Instant::now();
        setup(&p, false);
        let a = p.read(t0);
        setup(&p, true);
        let b = p.read(t0 + Duration::from_secs(1));
        between(&a, &b, &[100])
    }

    #[test]
    fn stat_lines_parse_with_spaces_and_parentheses_in_the_name() {
        let e = parse_stat(
            "42 (tokio (worker) 1) R 7 42 42 0 -1 4194560 1 0 0 0 250 50 10 5 20 0 8 0 1 2 3\n",
        )
        .unwrap();
        assert_eq!(e.command, "tokio (worker) 1");
        assert_eq!((e.ppid, e.ticks, e.kernel), (7, 315, false));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(cpu_line("cpu  1 2 3 4 5 6 7 8 9 10\n"), Some((36, 8)));
        assert_eq!(cpu_line("intr 5\n"), None);
    }

    #[test]
    fn a_quiet_machine_is_not_contended_however_busy_the_run_itself_is() {
        // The run (100) spins two CPUs, its peer (101) a child of it; a shell and an
        // idle daemon outside do nothing.
        let c = window(|p, end| {
            let t = if end { hz() } else { 0 };
            p.machine(4 * t, 0, 0, 2.1);
            p.process(1, 0, "init", 5, 0, false);
            p.process(50, 1, "bash", 3, 0, false);
            p.process(100, 50, "xferbench", 2 * t, 0, false);
            p.process(101, 100, "xferbench", t, 0, false);
        });
        assert_eq!(c.others_cpus, 0.0);
        assert!(c.busiest.is_empty());
        let p = PointContention::of_runs([&c]).unwrap();
        assert!(!p.contended, "{p:?}");
        assert_eq!(p.load_1m, Some(2.1));
    }

    #[test]
    fn two_busy_loops_outside_the_run_make_it_contended_and_are_named() {
        let c = window(|p, end| {
            let t = if end { hz() } else { 0 };
            p.machine(4 * t, 0, 0, 4.0);
            p.process(1, 0, "init", 0, 0, false);
            p.process(100, 1, "xferbench", t, 0, false);
            p.process(200, 1, "busy", 7 + t * 9 / 10, 0, false);
            p.process(201, 1, "busy", 3 + t * 8 / 10, 0, false);
        });
        assert!((c.others_cpus - 1.7).abs() < 0.03, "{c:?}");
        assert_eq!(c.busiest[0].pid, 200);
        assert_eq!(c.busiest[1].pid, 201);
        let p = PointContention::of_runs([&c]).unwrap();
        assert!(p.contended);
        let w = p.warning();
        assert!(
            w.starts_with("contended: processes outside the run used 1.70 CPUs"),
            "{w}"
        );
        assert!(w.contains("busy (pid 200) 0.90"), "{w}");
    }

    #[test]
    fn a_child_that_exits_during_the_window_counts_only_what_it_used_in_it() {
        // A compiler (300) had used 30 s before the window and 0.5 s in it, then
        // exited and was reaped by its parent (cargo, 299).
        let c = window(|p, end| {
            p.machine(if end { hz() } else { 0 }, 0, 0, 1.0);
            p.process(100, 1, "xferbench", 0, 0, false);
            if end {
                p.exit(300);
                p.process(299, 1, "cargo", 0, 30 * hz() + hz() / 2, false);
            } else {
                p.process(299, 1, "cargo", 0, 0, false);
                p.process(300, 299, "rustc", 30 * hz(), 0, false);
            }
        });
        assert!((c.others_cpus - 0.5).abs() < 0.02, "{c:?}");
    }

    #[test]
    fn a_parent_whose_child_exits_in_the_window_reads_what_was_used_in_it() {
        // On a two-CPU machine over one second: cargo (299) runs a quarter second
        // itself and reaps a compiler (300) that had used 30 s before the window and
        // 0.5 s in it; a build script (302) that had used 10 s exits with its own
        // parent (301, 2 s before, 0.25 s in) and is reaped through it, both by cargo.
        let c = window(|p, end| {
            let t = if end { hz() } else { 0 };
            p.machine(2 * t, 0, 0, 2.0);
            p.process(1, 0, "init", 0, 0, false);
            p.process(100, 1, "xferbench", t / 4, 0, false);
            if end {
                p.exit(300);
                p.exit(301);
                p.exit(302);
                let reaped = 30 * hz() + hz() / 2 + 2 * hz() + hz() / 4 + 10 * hz();
                p.process(299, 1, "cargo", 5 * hz() + hz() / 4, reaped, false);
            } else {
                p.process(299, 1, "cargo", 5 * hz(), 0, false);
                p.process(300, 299, "rustc", 30 * hz(), 0, false);
                p.process(301, 299, "build-script", 2 * hz(), 0, false);
                p.process(302, 301, "cc", 10 * hz(), 0, false);
            }
        });
        assert_eq!(c.busiest.len(), 1, "{c:?}");
        assert_eq!(c.busiest[0].pid, 299);
        assert!((c.busiest[0].cpus - 1.0).abs() < 0.02, "{c:?}");
        assert!((c.others_cpus - 1.0).abs() < 0.02, "{c:?}");
    }

    #[test]
    fn the_runs_own_children_and_kernel_threads_are_not_others() {
        let c = window(|p, end| {
            let t = if end { hz() } else { 0 };
            p.machine(2 * t, 0, 0, 1.0);
            p.process(2, 0, "kthreadd", 0, 0, true);
            p.process(9, 2, "ksoftirqd/0", t / 2, 0, true);
            p.process(100, 1, "xferbench", t, 0, false);
            // A memory mock started by the run, and its own helper.
            p.process(110, 100, "xferbench", t / 2, 0, false);
            p.process(111, 110, "sh", t / 4, 0, false);
        });
        assert_eq!(c.others_cpus, 0.0, "{c:?}");
        assert!((c.kernel_cpus - 0.5).abs() < 0.02, "{c:?}");
    }

    #[test]
    fn kernel_threads_are_read_to_the_nanosecond_and_the_busiest_named() {
        // 4 ms of compaction and 1 ms of a worker in one second, no tick of either.
        let c = window(|p, end| {
            p.machine(0, 0, 0, 1.0);
            p.process(36, 2, "kcompactd0", 0, 0, true);
            p.schedstat(36, if end { 9_004_000 } else { 5_000_000 });
            p.process(77, 2, "kworker/1:2-events", 0, 0, true);
            p.schedstat(77, if end { 2_000_000 } else { 1_000_000 });
            p.process(100, 1, "xferbench", 0, 0, false);
        });
        assert!((c.kernel_cpus - 0.005).abs() < 1e-4, "{c:?}");
        let named: Vec<(&str, f64)> = c
            .busiest_kernel
            .iter()
            .map(|k| (k.command.as_str(), k.cpus))
            .collect();
        assert_eq!(named.len(), 2, "{named:?}");
        assert_eq!(named[0].0, "kcompactd0");
        assert!((named[0].1 - 0.004).abs() < 1e-4, "{named:?}");
        // Kernel work does not make a point contended; the point names it.
        let point = PointContention::of_runs([&c]).unwrap();
        assert!(!point.contended);
        assert_eq!(point.busiest_kernel[0].command, "kcompactd0");
    }

    #[test]
    fn steal_above_five_percent_is_contention_on_its_own() {
        let c = window(|p, end| {
            p.machine(if end { 90 } else { 0 }, 0, if end { 10 } else { 0 }, 1.0);
            p.process(100, 1, "xferbench", 0, 0, false);
        });
        assert!((c.steal - 0.1).abs() < 1e-9, "{c:?}");
        assert!(PointContention::of_runs([&c]).unwrap().contended);
        assert!(!is_contended(0.19, 0.05));
        assert!(is_contended(0.21, 0.0));
    }

    #[test]
    fn a_point_weighs_its_runs_by_their_windows() {
        let run = |window_s, others_cpus| RunContention {
            window_s,
            others_cpus,
            kernel_cpus: 0.0,
            steal: 0.0,
            load_1m: Some(window_s),
            busiest: vec![Contender {
                pid: 7,
                command: "x".into(),
                cpus: others_cpus,
            }],
            busiest_kernel: vec![],
        };
        let (a, b) = (run(3.0, 0.0), run(1.0, 1.0));
        let p = PointContention::of_runs([&a, &b]).unwrap();
        assert!((p.others_cpus - 0.25).abs() < 1e-12);
        assert!(p.contended);
        assert_eq!(p.load_1m, Some(3.0));
        assert!((p.busiest[0].cpus - 0.25).abs() < 1e-12);
        assert_eq!(PointContention::of_runs([]), None);
    }

    #[test]
    fn the_real_proc_reads_and_this_process_is_in_its_own_run() {
        let proc = ProcFs::real();
        let a = proc.read().expect("/proc is readable");
        let me = std::process::id();
        assert!(a.processes.contains_key(&me));
        let b = proc.read().unwrap();
        let c = between(&a, &b, &[me]);
        assert!(c.busiest.iter().all(|x| x.pid != me));
        assert!(c.others_cpus >= 0.0 && c.steal >= 0.0 && c.steal <= 1.0);
    }
}
