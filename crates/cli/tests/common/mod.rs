//! Helpers shared by the CLI test binaries (each binary uses some of them).
#![allow(dead_code)]

/// Shared-memory objects that process `pid` created and that are still in /dev/shm.
pub fn regions_left_by(pid: u32) -> Vec<String> {
    let prefix = format!("xferbench-u{}-p{pid}-", rustix::process::getuid().as_raw());
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// True (after printing why) when `perf record` cannot run here; the test then skips.
pub fn skip_without_perf_record() -> bool {
    let usable = std::process::Command::new("perf")
        .args(["record", "-q", "-o", "/dev/null", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !usable {
        println!("skipped: perf is missing or may not record here");
    }
    !usable
}

/// Held by tests that profile with `perf record`, so that one test's sampled CPU time
/// is not shared out among several recordings at once (their checks count samples).
pub fn sampling_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
