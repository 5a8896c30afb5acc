//! The names of the workloads: `run`'s three ([`WorkloadKind`]) and every workload a
//! result records ([`RecordedWorkload`], [`WORKLOAD`]), each with its one line for
//! `xferbench list`. What each of `run`'s workloads does, and the dispatch to it,
//! stand above this file (the workload modules and [`super`]).

use crate::names;
use serde::{Deserialize, Serialize};
use xferbench_params::ParamDef;

const STREAM: &str = "one-way messages as fast as possible: throughput (bytes/s, messages/s)";
const PINGPONG: &str = "request/echo round trips, one in flight per channel: latency percentiles";
const LOAD: &str = "open-loop messages at an offered rate (--rate), latency from each message's intended send time: percentiles, lag, the knee";

/// Which workload, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    /// One-way throughput.
    Stream,
    /// Request/response latency.
    Pingpong,
    /// Open-loop messages at an offered rate.
    Load,
}

xferbench_params::choices!(WorkloadKind {
    Stream => "stream": STREAM,
    Pingpong => "pingpong": PINGPONG,
    Load => "load": LOAD,
});

/// Every workload a point records as its `workload` ([`WORKLOAD`]):
/// `run`'s ([`WorkloadKind`]) and those of the commands and studies that stand their
/// own participants up, so that every name a result holds is one its definition
/// reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordedWorkload {
    /// [`WorkloadKind::Stream`].
    Stream,
    /// [`WorkloadKind::Pingpong`].
    Pingpong,
    /// [`WorkloadKind::Load`].
    Load,
    /// `xferbench kv client`: a kv client's timed requests ([`kv`](super::kv)).
    KvClient,
    /// `xferbench warp client`: Warp Pipe clients of a memory mock ([`warp`](super::warp)).
    WarpClient,
    /// `xferbench daq`: the SIS8300 readout with the functions of `-A` ([`daq`](super::daq)).
    Daq,
    /// The SIS8300 study's readout points (tests 1, 2 and 4).
    Readout,
    /// The SIS8300 study's conversion points (test 3).
    Convert,
    /// `xferbench ab`: a shell command, once per run (`rig::command`).
    Command,
}

xferbench_params::choices!(RecordedWorkload {
    Stream => "stream": STREAM,
    Pingpong => "pingpong": PINGPONG,
    Load => "load": LOAD,
    KvClient => "kv-client": "a kv client's timed requests against a kv server or redis",
    WarpClient => "warp-client": "Warp Pipe clients reading and writing a memory mock",
    Daq => "daq": "the SIS8300 readout and the conversion functions of -A",
    Readout => "readout": "the SIS8300 study's readout of its boards",
    Convert => "convert": "the SIS8300 study's conversion of a readout",
    Command => "command": "a shell command run once per run (ab's A and B)",
});

impl From<WorkloadKind> for RecordedWorkload {
    fn from(w: WorkloadKind) -> RecordedWorkload {
        match w {
            WorkloadKind::Stream => RecordedWorkload::Stream,
            WorkloadKind::Pingpong => RecordedWorkload::Pingpong,
            WorkloadKind::Load => RecordedWorkload::Load,
        }
    }
}

/// `workload`: what the two ends of a channel do; every name a point records
/// ([`RecordedWorkload`]: `run`'s workloads and the clients and
/// readouts of the other commands and studies).
pub const WORKLOAD: ParamDef = ParamDef::choice(
    names::WORKLOAD,
    <RecordedWorkload as xferbench_params::Choices>::CHOICES,
    "stream",
    "what the two ends of a channel do",
);
