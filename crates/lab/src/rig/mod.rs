//! Rigs: the things that stand a point's participants up and run it once.
//!
//! The point loop (`measure`) is the same for every study: warm-up and
//! measured runs, interleaving, estimates, warnings, counters and profiles. What
//! differs between a sweep of `shm` channels, an RPMsg link with its remote and a
//! Warp Pipe memory mock is how the participants are started, how one run is driven
//! and how they are stopped. That is a [`Rig`].
//!
//! The contract every rig keeps is [`Rig`]'s (`control`, below the point loop).
//!
//! One file per rig: [`peers`] (one peer per channel over any [`Transport`]),
//! [`plugin`] (the peer rig of a plugin transport, in a measuring process of its
//! own), [`rpmsg`] (one RPMsg link and its remote), [`command`] (one shell command
//! per run: `ab`'s sides), [`perf_stat`] (one benchmark
//! process per run, and the benchmark under callgrind or `perf stat`), [`crc`] (a
//! CRC implementation on this thread) and the server rigs live beside it.
//!
//! [`Transport`]: xferbench_transports::Transport

pub mod command;
pub mod crc;
pub mod daq;
pub mod kv;
pub mod memory_mock;
pub mod peers;
pub mod perf_stat;
pub mod plugin;
pub mod rpmsg;

pub use crate::control::{Rig, RunControl, RunError};
pub use crate::record::{ChannelOutcome, FigureRules, aggregate};
