//! Neighbours: background work beside a point (`--neighbours`), the hash-table
//! study's "visitors" made general: how a transport's figures degrade when other
//! work shares the machine.
//!
//! * `cpu:N`: N processes in a busy arithmetic loop (they compete for CPU time);
//! * `memory:N`: N processes streaming over a buffer of four times the last-level
//!   cache, reading and writing every cache line (they compete for memory
//!   bandwidth and evict the caches);
//! * `cache:N`: N processes sweeping a buffer the size of the L2 cache (they compete
//!   for the cache a transport's messages pass through).
//!
//! Each neighbour is a child of this process, forked before the point's first run
//! and killed after its last one (and by the kernel if this process dies first). A
//! child does nothing but its loop: it maps its own buffer and touches no lock,
//! allocator or file, so a fork of this multithreaded process is safe. It publishes
//! its progress (bytes or iterations) and its CPU time in a shared page that the
//! rig reads around every run's window, so a point records the neighbours' CPUs and
//! achieved bandwidth beside its own figures. As children of this process they
//! belong to the run and never count as contention.

use crate::control::{Rig, RunControl, RunError};
use crate::result::RunRecord;
use std::sync::atomic::{AtomicU64, Ordering};
use xferbench_params::{ParamDef, ParamError, ParamMap, PointParams, Value};
use xferbench_probes::counters::Participant;

/// Most neighbours of one kind.
pub const MAX_NEIGHBOURS: u32 = 256;

/// `neighbours`: background work beside the point.
pub const NEIGHBOURS: ParamDef = ParamDef::text(
    "neighbours",
    "none, cpu:N, memory:N or cache:N (N from 1 to 256)",
    "none",
    "background work started before the point and stopped after it: busy loops (cpu), streams over a buffer larger than the last-level cache (memory), sweeps of an L2-sized buffer (cache)",
);

/// Figure: CPUs the neighbours used over a run's window.
pub const CPU_FIGURE: &str = "neighbours_cpus";
/// Figure: bytes per second the neighbours moved (memory, cache) or loop iterations
/// per second (cpu) over a run's window.
pub const WORK_FIGURE: &str = "neighbours_per_s";

/// What kind of background work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Busy loops.
    Cpu,
    /// Streams over a buffer larger than the last-level cache.
    Memory,
    /// Sweeps of a buffer the size of L2.
    Cache,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Cpu => "cpu",
            Kind::Memory => "memory",
            Kind::Cache => "cache",
        }
    }
}

/// The background work of a point: none, or N neighbours of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Neighbours(pub Option<(Kind, u32)>);

impl Neighbours {
    /// Reads `none`, `cpu:N`, `memory:N` or `cache:N`.
    pub fn parse(text: &str) -> Result<Neighbours, ParamError> {
        let t = text.trim();
        let bad = || ParamError::Invalid {
            name: NEIGHBOURS.name().to_string(),
            value: t.to_string(),
            accepts: NEIGHBOURS.accepts(),
        };
        if t == "none" {
            return Ok(Neighbours(None));
        }
        let (kind, n) = t.split_once(':').ok_or_else(bad)?;
        let kind = match kind.trim() {
            "cpu" => Kind::Cpu,
            "memory" => Kind::Memory,
            "cache" => Kind::Cache,
            _ => return Err(bad()),
        };
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        if !(1..=MAX_NEIGHBOURS).contains(&n) {
            return Err(bad());
        }
        Ok(Neighbours(Some((kind, n))))
    }

    /// Reads a list (`none,memory:1,cpu:2`); repeats count once.
    pub fn parse_list(list: &str) -> Result<Vec<Neighbours>, ParamError> {
        let mut out = Vec::new();
        for item in list.split(',') {
            let n = Neighbours::parse(item)?;
            if !out.contains(&n) {
                out.push(n);
            }
        }
        Ok(out)
    }

    /// `none`, `cpu:2`.
    pub fn text(&self) -> String {
        match self.0 {
            None => "none".into(),
            Some((k, n)) => format!("{}:{n}", k.word()),
        }
    }

    /// Whether there is any background work.
    pub fn any(&self) -> bool {
        self.0.is_some()
    }
}

impl PointParams for Neighbours {
    fn definitions() -> Vec<ParamDef> {
        vec![NEIGHBOURS]
    }

    /// Written only when there are neighbours: a point without them keeps the
    /// parameters it always had.
    fn write(&self, map: &mut ParamMap) {
        if self.any() {
            map.put(&NEIGHBOURS, &Value::Text(self.text().into()));
        }
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        match map.text(&NEIGHBOURS) {
            Some(t) => Neighbours::parse(t),
            None => Ok(Neighbours(None)),
        }
    }
}

/// One neighbour's shared page: progress and CPU time, written by the child.
#[repr(C, align(64))]
struct Slot {
    /// Bytes moved (memory, cache) or iterations done (cpu), so far.
    work: AtomicU64,
    /// The child's CPU time so far, nanoseconds.
    cpu_ns: AtomicU64,
}

/// Running neighbours: the children and their shared page.
pub struct Crowd {
    pids: Vec<libc::pid_t>,
    slots: *mut Slot,
    len: usize,
}

// SAFETY: the slots are atomics in a shared mapping owned by the crowd; the raw
// pointer is only read through atomic loads.
unsafe impl Send for Crowd {}

/// What the neighbours did between two readings.
#[derive(Debug, Clone, Copy, Default)]
struct Reading {
    work: u64,
    cpu_ns: u64,
}

impl Crowd {
    /// Forks the neighbours of `n`, pinned round-robin over `cpus` when given.
    pub fn start(n: Neighbours, cpus: Option<&[usize]>) -> Result<Crowd, RunError> {
        let Some((kind, count)) = n.0 else {
            return Ok(Crowd {
                pids: Vec::new(),
                slots: std::ptr::null_mut(),
                len: 0,
            });
        };
        let bytes = match kind {
            Kind::Cpu => 0,
            Kind::Memory => 4 * last_level_cache().max(8 << 20),
            Kind::Cache => l2_cache().max(256 << 10),
        };
        let len = std::mem::size_of::<Slot>() * count as usize;
        // SAFETY: an anonymous shared mapping of `len` bytes, checked below.
        let slots = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if slots == libc::MAP_FAILED {
            return Err(RunError::Participant(format!(
                "neighbours: cannot map their shared page: {}",
                std::io::Error::last_os_error()
            )));
        }
        let mut crowd = Crowd {
            pids: Vec::with_capacity(count as usize),
            slots: slots.cast(),
            len,
        };
        let parent = std::process::id() as libc::pid_t;
        for i in 0..count as usize {
            let cpu = cpus.filter(|c| !c.is_empty()).map(|c| c[i % c.len()]);
            // SAFETY: the slot lies inside the mapping made above.
            let slot = unsafe { &*crowd.slots.add(i) };
            // SAFETY: the child runs only `neighbour_main`, which makes system calls
            // and touches its own mapping: no allocation, lock or unwinding.
            let pid = unsafe { libc::fork() };
            if pid < 0 {
                return Err(RunError::Participant(format!(
                    "neighbours: cannot fork: {}",
                    std::io::Error::last_os_error()
                )));
            }
            if pid == 0 {
                neighbour_main(kind, bytes, cpu, slot, parent);
            }
            crowd.pids.push(pid);
        }
        // Each neighbour is at work (its buffer mapped and populated, its first
        // stretch done) before the point's first run.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while (0..crowd.pids.len()).any(|i| {
            // SAFETY: `i` is below the number of slots mapped.
            unsafe { &*crowd.slots.add(i) }.work.load(Ordering::Relaxed) == 0
        }) {
            crowd.alive()?;
            if std::time::Instant::now() > deadline {
                return Err(RunError::Participant(format!(
                    "neighbours ({}) did not start working within 10 s",
                    n.text()
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        tracing::debug!(neighbours = %n.text(), pids = ?crowd.pids, "neighbours started");
        Ok(crowd)
    }

    fn reading(&self) -> Reading {
        let mut r = Reading::default();
        for i in 0..self.pids.len() {
            // SAFETY: `i` is below the number of slots mapped.
            let s = unsafe { &*self.slots.add(i) };
            r.work += s.work.load(Ordering::Relaxed);
            r.cpu_ns += s.cpu_ns.load(Ordering::Relaxed);
        }
        r
    }

    /// Whether every neighbour is still running.
    fn alive(&self) -> Result<(), RunError> {
        for &pid in &self.pids {
            let mut status = 0;
            // SAFETY: a non-blocking wait on our own child.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                return Err(RunError::Participant(format!(
                    "a neighbour (pid {pid}) ended during the point (wait status {status})"
                )));
            }
        }
        Ok(())
    }

    fn stop(&mut self) {
        for &pid in &self.pids {
            // SAFETY: signals and reaps our own children.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
        self.pids.clear();
    }
}

impl Drop for Crowd {
    fn drop(&mut self) {
        self.stop();
        if !self.slots.is_null() {
            // SAFETY: unmaps the mapping made in `start`, no longer used.
            unsafe { libc::munmap(self.slots.cast(), self.len) };
        }
    }
}

/// A neighbour's life: pin, map its buffer, loop, publish. Never returns.
fn neighbour_main(kind: Kind, bytes: usize, cpu: Option<usize>, slot: &Slot, parent: i32) -> ! {
    // SAFETY: system calls only (prctl, getppid, sched_setaffinity, mmap,
    // clock_gettime, _exit); nothing here allocates or takes a lock.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(0);
        }
        if let Some(cpu) = cpu {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
        let buf: *mut u64 = if bytes > 0 {
            let p = libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                libc::_exit(1);
            }
            p.cast()
        } else {
            std::ptr::null_mut()
        };
        let words = bytes / 8;
        let mut at = 0usize;
        let x = 0x9E37_79B9_7F4A_7C15u64;
        let mut y = x;
        loop {
            let done = match kind {
                Kind::Cpu => {
                    // A chain of dependent multiplies: busy, no memory traffic.
                    for _ in 0..(1 << 18) {
                        y = y.wrapping_mul(6364136223846793005).wrapping_add(1);
                    }
                    std::hint::black_box(y);
                    1 << 18
                }
                Kind::Memory | Kind::Cache => {
                    // Read and write one word of every cache line, in order, a
                    // stretch of at most 1 MiB at a time.
                    let stretch = words.min(1 << 17);
                    let mut i = 0;
                    while i < stretch {
                        let w = buf.add((at + i) % words);
                        w.write_volatile(w.read_volatile().wrapping_add(x));
                        i += 8;
                    }
                    at = (at + stretch) % words;
                    (stretch * 8) as u64
                }
            };
            slot.work.fetch_add(done, Ordering::Relaxed);
            let mut ts: libc::timespec = std::mem::zeroed();
            libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts);
            slot.cpu_ns.store(
                ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64,
                Ordering::Relaxed,
            );
        }
    }
}

/// The last-level cache of CPU 0, bytes (0 when unknown).
fn last_level_cache() -> usize {
    caches()
        .into_iter()
        .map(|(_, size)| size)
        .max()
        .unwrap_or(0)
}

/// The L2 cache of CPU 0, bytes (0 when unknown).
fn l2_cache() -> usize {
    caches()
        .into_iter()
        .find(|(level, _)| *level == 2)
        .map_or(0, |(_, size)| size)
}

/// The (level, size) of CPU 0's data and unified caches, from sysfs.
fn caches() -> Vec<(u32, usize)> {
    let mut out = Vec::new();
    for i in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(size), Some(kind)) = (read("level"), read("size"), read("type"))
        else {
            continue;
        };
        if kind.trim() == "Instruction" {
            continue;
        }
        let (Ok(level), Some(size)) = (
            level.trim().parse::<u32>(),
            xferbench_params::bytes::parse(size.trim()),
        ) else {
            continue;
        };
        out.push((level, size as usize));
    }
    out
}

/// A rig with neighbours beside it: the neighbours start before its first run and
/// stop after its last; every run records what they did over its window.
pub struct NeighbourRig {
    inner: Box<dyn Rig>,
    crowd: Crowd,
}

impl NeighbourRig {
    /// `inner` with the neighbours of `n` beside it (pinned over `cpus` with `--pin`).
    pub fn wrap(
        inner: Box<dyn Rig>,
        n: Neighbours,
        cpus: Option<&[usize]>,
    ) -> Result<Box<dyn Rig>, RunError> {
        if !n.any() {
            return Ok(inner);
        }
        let crowd = Crowd::start(n, cpus)?;
        Ok(Box::new(NeighbourRig { inner, crowd }))
    }
}

impl Rig for NeighbourRig {
    fn participants(&self) -> Vec<Participant> {
        self.inner.participants()
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        self.crowd.alive()?;
        let before = self.crowd.reading();
        let t0 = std::time::Instant::now();
        let mut r = self.inner.run_once(ctl)?;
        let after = self.crowd.reading();
        let s = t0.elapsed().as_secs_f64().max(1e-9);
        r.figures.insert(
            CPU_FIGURE.to_string(),
            after.cpu_ns.saturating_sub(before.cpu_ns) as f64 / 1e9 / s,
        );
        r.figures.insert(
            WORK_FIGURE.to_string(),
            after.work.saturating_sub(before.work) as f64 / s,
        );
        Ok(r)
    }

    fn finish(mut self: Box<Self>) -> Result<(), RunError> {
        self.crowd.stop();
        self.inner.finish()
    }

    fn finish_with_warnings(
        mut self: Box<Self>,
        warnings: &mut Vec<String>,
    ) -> Result<(), RunError> {
        self.crowd.stop();
        self.inner.finish_with_warnings(warnings)
    }

    fn chosen(&self) -> std::collections::BTreeMap<String, String> {
        self.inner.chosen()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_read_and_write_through_their_definition() {
        for n in ["none", "cpu:1", "memory:2", "cache:16"] {
            let v = Neighbours::parse(n).unwrap();
            assert_eq!(v.text(), n);
            xferbench_params::point::round_trips(&v).unwrap();
        }
        assert!(Neighbours::default().to_map().as_params().is_empty());
        for bad in ["cpu", "cpu:0", "gpu:1", "memory:x", "cache:257", ""] {
            let e = Neighbours::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("`neighbours`") && e.contains("cpu:N"),
                "{bad}: {e}"
            );
        }
        assert_eq!(Neighbours::parse_list("none,cpu:1,none").unwrap().len(), 2);
    }

    #[test]
    fn neighbours_run_use_cpu_and_stop() {
        let crowd = Crowd::start(Neighbours::parse("cache:1").unwrap(), None).unwrap();
        let pid = crowd.pids[0];
        let a = crowd.reading();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let b = crowd.reading();
        crowd.alive().unwrap();
        assert!(b.work > a.work, "{a:?} {b:?}");
        assert!(b.cpu_ns > a.cpu_ns, "{a:?} {b:?}");
        drop(crowd);
        // SAFETY: probes whether the process exists.
        assert_ne!(unsafe { libc::kill(pid, 0) }, 0, "the neighbour was reaped");
    }
}
