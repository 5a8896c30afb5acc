//! The measurement context: the host, and which measurement facilities it offers.
//!
//! A missing facility is not an error: it is recorded here (with a one-line reason)
//! so that results say what could and could not be measured.

use crate::counters::perf_event::OpenFailure;
use crate::result::{Capabilities, Context, Settings};
use serde::{Deserialize, Serialize};
use std::process::Command;

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

/// How the measuring binary was built.
///
/// A build is **optimised** when cargo compiled it at `opt-level` 2 or 3 without
/// debug assertions (`cargo build --release`). Anything else (the `dev` profile of
/// `cargo run`, opt-level 1 with debug assertions here) measures the tool's own
/// unoptimised loops as much as the transport: every run says so, and studies refuse
/// to run on one unless asked (`--allow-debug`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BuildInfo {
    /// Cargo's profile: `release` or `debug`.
    pub profile: String,
    /// The optimisation level: `0`–`3`, `s` or `z`.
    pub opt_level: String,
    /// Whether debug assertions (and overflow checks) were compiled in.
    pub debug_assertions: bool,
    /// opt-level 2 or 3 and no debug assertions.
    pub optimised: bool,
}

impl BuildInfo {
    /// This binary's build.
    pub fn current() -> Self {
        let opt_level = env!("XFERBENCH_OPT_LEVEL").to_string();
        let debug_assertions = cfg!(debug_assertions);
        BuildInfo {
            profile: env!("XFERBENCH_BUILD_PROFILE").to_string(),
            optimised: matches!(opt_level.as_str(), "2" | "3") && !debug_assertions,
            opt_level,
            debug_assertions,
        }
    }

    /// `profile debug, opt-level 1, debug assertions on`.
    pub fn describe(&self) -> String {
        format!(
            "profile {}, opt-level {}, debug assertions {}",
            self.profile,
            self.opt_level,
            if self.debug_assertions { "on" } else { "off" }
        )
    }

    /// The warning an unoptimised build carries on every run and in every output.
    pub fn warning(&self) -> Option<String> {
        (!self.optimised).then(|| {
            format!(
                "unoptimised build ({}): the figures measure unoptimised code, not what a \
                 release build does; build with `cargo build --release`",
                self.describe()
            )
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_is_described_as_cargo_made_it() {
        let b = BuildInfo::current();
        assert_eq!(b.debug_assertions, cfg!(debug_assertions));
        assert!(["debug", "release"].contains(&b.profile.as_str()), "{b:?}");
        assert_eq!(b.optimised, b.warning().is_none());
        if cfg!(debug_assertions) {
            // `cargo test` without --release: the dev profile.
            let w = b.warning().unwrap();
            assert!(w.starts_with("unoptimised build (profile debug"), "{w}");
            assert!(w.contains("--release"), "{w}");
        }
    }

    #[test]
    fn a_release_build_carries_no_warning() {
        let b = BuildInfo {
            profile: "release".into(),
            opt_level: "3".into(),
            debug_assertions: false,
            optimised: true,
        };
        assert_eq!(b.warning(), None);
        assert_eq!(
            b.describe(),
            "profile release, opt-level 3, debug assertions off"
        );
    }
}
