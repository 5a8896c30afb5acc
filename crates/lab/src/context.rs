//! The measurement context: the host, and which measurement facilities it offers.
//!
//! A missing facility is not an error: it is recorded here (with a one-line reason)
//! so that results say what could and could not be measured.

use crate::result::{Capabilities, Context, Settings};
use std::process::Command;
use xferbench_probes::build::BuildInfo;
use xferbench_probes::counters::perf_event::OpenFailure;

/// Collects the context of a run starting now.
pub fn collect(version: &str, command_line: Vec<String>, settings: Settings) -> Context {
    let uname = rustix::system::uname();
    Context {
        tool: "xferbench".into(),
        version: version.into(),
        command_line,
        hostname: uname.nodename().to_string_lossy().into_owned(),
        cpu_model: cpu_model().unwrap_or_else(|| "unknown".into()),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: uname.release().to_string_lossy().into_owned(),
        os: os_name().unwrap_or_else(|| "unknown".into()),
        start_time: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        capabilities: capabilities(),
        settings,
        limits: None,
        remote: None,
        plugins: Vec::new(),
        build: Some(BuildInfo::current()),
        load: None,
    }
}

/// The time now as `YYYYmmdd-HHMMSS` (UTC), for default output folder names.
pub fn compact_timestamp() -> String {
    let t = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    // 2026-11-22T06:40:05Z -> 20261122-064005
    t.chars()
        .filter_map(|c| match c {
            'T' => Some('-'),
            c if c.is_ascii_digit() => Some(c),
            _ => None,
        })
        .collect()
}

/// The CPU model from `/proc/cpuinfo`, or `unknown`.
pub fn cpu_model_name() -> String {
    cpu_model().unwrap_or_else(|| "unknown".into())
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn os_name() -> Option<String> {
    let text = std::fs::read_to_string("/etc/os-release").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
}

/// Probes the machine: PMU, perf, valgrind, perf_event_paranoid.
pub fn capabilities() -> Capabilities {
    let (pmu, pmu_note) = probe_pmu();
    Capabilities {
        pmu,
        pmu_note,
        perf: tool_version("perf", &["--version"]),
        valgrind: tool_version("valgrind", &["--version"]),
        perf_event_paranoid: std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|s| s.trim().parse().ok()),
        trip_clock: Some(xferbench_probes::clock::trip_source()),
        trip_clock_step_ns: Some(xferbench_probes::clock::trip_step_ns()),
    }
}

fn tool_version(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Whether a hardware PMU answers `perf_event_open` (cheap: one syscall).
pub fn pmu_available() -> bool {
    probe_pmu().0
}

/// Opens (and drops) a user-mode hardware instruction counter for this thread, with
/// the same builder and the same reading of `errno` as the counters themselves
/// ([`OpenFailure::from_errno`]), so the probe and the counters never disagree.
fn probe_pmu() -> (bool, Option<String>) {
    let opened = perf_event::Builder::new(perf_event::events::Hardware::INSTRUCTIONS)
        .exclude_kernel(true)
        .exclude_hv(true)
        .build();
    let err = match opened {
        Ok(_counter) => return (true, None),
        Err(e) => e,
    };
    let note = match err.raw_os_error().map(OpenFailure::from_errno) {
        Some(OpenFailure::NotSupported) => {
            "no hardware PMU (typical of VMs without PMU passthrough): hardware counters unavailable; \
             software counters and callgrind still work"
                .to_string()
        }
        Some(OpenFailure::Forbidden) => {
            "hardware counters are forbidden by kernel.perf_event_paranoid; \
             lower it with `sysctl kernel.perf_event_paranoid=1`"
                .to_string()
        }
        _ => format!("perf_event_open for instructions failed: {err}"),
    };
    (false, Some(note))
}
