//! The machine's probes and counters, knowing no transport, rig or study: the clock,
//! CPU accounting and affinity, contention, payload verification, leak checks,
//! hardware and software counters, CPU profiles, child processes, statistics and the
//! names of the recorded figures.
//!
//! The lab (`xferbench-lab`) measures with these; nothing here depends on
//! `xferbench-transports`, so this crate builds beside it.

#![deny(missing_docs)]

#[cfg(not(target_os = "linux"))]
compile_error!(
    "xferbench runs on Linux only: perf_event_open, /proc, sched_setaffinity and /dev/shm"
);

pub mod affinity;
pub mod build;
pub mod clock;
pub mod contention;
pub mod counters;
pub mod cpu;
pub mod figure;
pub mod leaks;
pub mod process;
pub mod profile;
pub mod stats;
pub mod verify;
