//! CPU affinity: which CPUs this process may use, and pinning the calling thread to
//! one of them (`--pin` for drivers and peers).

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set).map_err(Into::into)
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> usize {
    rustix::thread::sched_getcpu()
}

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<usize> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

/// CPUs for channel `i`: the driver on the 2i-th allowed CPU and its peer on the
/// (2i+1)-th, wrapping around; on two CPUs, drivers share one and peers the other.
pub fn pin_plan(i: usize, cpus: &[usize]) -> (usize, usize) {
    let n = cpus.len().max(1);
    (cpus[(2 * i) % n], cpus[(2 * i + 1) % n])
}

/// Pins every thread of process `pid` to one CPU (threads it starts later inherit
/// the setting).
pub fn pin_process(pid: u32, cpu: usize) -> std::io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    let tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))?
        .flatten()
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
        .collect();
    for tid in tids {
        if let Some(tid) = rustix::thread::Pid::from_raw(tid) {
            rustix::thread::sched_setaffinity(Some(tid), &set)?;
        }
    }
    Ok(())
}

/// The CPU set of thread `tid` (of this process or another), as CPU numbers.
pub fn cpus_of_thread(tid: u32) -> std::io::Result<Vec<usize>> {
    let pid = rustix::thread::Pid::from_raw(tid as i32)
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let set = rustix::thread::sched_getaffinity(Some(pid))?;
    Ok((0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&c| set.is_set(c))
        .collect())
}
