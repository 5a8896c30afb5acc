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
