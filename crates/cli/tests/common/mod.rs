//! Helpers shared by the CLI test binaries.

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
