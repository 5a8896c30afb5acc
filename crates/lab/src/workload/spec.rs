//! What both ends of one channel need to know ([`ChannelSpec`]): the workload, the
//! message size, the run's length, the checks, the copy mode and what an in-place
//! message's ends do with its payload ([`Touch`]).

use super::kind::WorkloadKind;
use super::schedule::ChannelSchedule;
use serde::{Deserialize, Serialize};
use xferbench_params::{ParamDef, Params};
use xferbench_probes::verify::read_lines;

/// How long each channel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// This many messages (stream) or round trips (pingpong) per channel.
    Count(u64),
    /// This many nanoseconds per channel.
    Duration(u64),
}

/// What both ends of one channel need to know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelSpec {
    /// The workload.
    pub workload: WorkloadKind,
    /// Message size, bytes.
    pub size: usize,
    /// Run length.
    pub limit: Limit,
    /// Stamp and check sequence numbers and checksums.
    pub verify: bool,
    /// Fault injection for tests: flip a payload byte of every Nth message after
    /// stamping it.
    pub corrupt_every: Option<u64>,
    /// Write and read messages in place in the transport's buffers, by the rule of
    /// [`xferbench_probes::verify`] (`--zero-copy`).
    #[serde(default)]
    pub zero_copy: bool,
    /// What the two ends do with an in-place message's payload (`-p touch=...`),
    /// read from the point's parameters once, for the per-message path.
    #[serde(default)]
    pub touch: Touch,
    /// The `load` workload's schedule for this channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<ChannelSchedule>,
    /// The point's values of the workload's own parameters ([`Workload::PARAMS`](super::Workload::PARAMS))
    /// set for it, in their machine form; read with [`Workload::values`](super::Workload::values).
    #[serde(default, skip_serializing_if = "Params::is_empty")]
    pub params: Params,
}

impl ChannelSpec {
    /// What the channel carries, as a transport is told it before it listens or
    /// connects ([`Transport::size_for`](xferbench_transports::Transport::size_for)).
    pub fn traffic(&self) -> xferbench_transports::Traffic {
        match self.workload {
            WorkloadKind::Stream => xferbench_transports::Traffic::stream(self.size),
            WorkloadKind::Pingpong => xferbench_transports::Traffic::round_trips(self.size),
            WorkloadKind::Load if self.load.is_some_and(|l| l.echo) => {
                xferbench_transports::Traffic::round_trips(self.size)
            }
            // One way at a rate: as many messages in flight as the offered rate sends
            // in 100 µs (a burst at least), so that a transport sizing its buffers to
            // the traffic keeps a slow link's ring small, and so hot, and a fast
            // one's large enough to ride out a receiver's hiccup.
            WorkloadKind::Load => xferbench_transports::Traffic {
                largest: self.size,
                in_flight: self.load.map(|l| {
                    let per_100us = (l.rate * 1e-4).ceil() as usize;
                    per_100us.max(l.burst as usize).max(1)
                }),
            },
        }
    }
}

/// What the two ends of a channel do with the payload of a message written and read
/// in place (`-p touch=all|write|read|none`); copied messages are always copied whole.
///
/// `all` is this project's rule (see [`xferbench_probes::verify`]): a zero-copy transport is
/// charged for the bytes a real application writes and reads. The others reproduce
/// how peers measure themselves: iceoryx2's own publish-subscribe benchmark sends
/// loaned samples it neither writes nor reads (`none`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Touch {
    /// The sender writes every byte, the receiver reads every cache line, the echo
    /// copies the request into its reply.
    #[default]
    All,
    /// The sender writes every byte; nothing is read; the echo writes every byte of its
    /// reply without reading the request.
    Write,
    /// Nothing is written; the receiver reads every cache line; the echo reads the
    /// request's lines and sends its reply as the buffer holds it.
    Read,
    /// Nothing written or read: samples go as the buffer holds them.
    Nothing,
}

xferbench_params::choices!(Touch {
    All => "all": "the sender writes every byte, the receiver reads every cache line, the echo copies the request into its reply",
    Write => "write": "the sender writes every byte, nothing is read, the echo writes its reply",
    Read => "read": "nothing is written, the receiver reads every cache line, the echo reads the request",
    Nothing => "none": "nothing written or read (iceoryx2's own benchmark)",
});

/// `touch`: what the ends of an in-place message do with its payload (present on
/// zero-copy points whose rule is not `all`).
pub const TOUCH: ParamDef = ParamDef::choice(
    "touch",
    <Touch as xferbench_params::Choices>::CHOICES,
    "all",
    "what the ends of a message written and read in place do with its payload",
);

impl Touch {
    /// Whether the sender writes the payload.
    #[inline]
    pub fn writes(self) -> bool {
        matches!(self, Touch::All | Touch::Write)
    }

    /// Whether the receiver reads the payload.
    #[inline]
    pub fn reads(self) -> bool {
        matches!(self, Touch::All | Touch::Read)
    }

    /// The serving side's echo of `request` into `reply` by this rule; what it read,
    /// for a sink.
    #[inline]
    pub fn echo(self, request: &[u8], reply: &mut [u8]) -> u64 {
        match self {
            Touch::All => {
                xferbench_transports::copy::copy_slice(reply, request);
                0
            }
            Touch::Write => {
                reply.fill(0xA5);
                0
            }
            Touch::Read => read_lines(request),
            Touch::Nothing => 0,
        }
    }
}

impl ChannelSpec {
    /// The run length as (maximum messages, duration in ns if the run is timed).
    #[inline]
    pub fn bounds(&self) -> (u64, Option<u64>) {
        match self.limit {
            Limit::Count(n) => (n, None),
            Limit::Duration(ns) => (u64::MAX, Some(ns)),
        }
    }

    /// The payload rule of in-place messages; `None` when messages are copied.
    #[inline]
    pub fn in_place(&self) -> Option<Touch> {
        self.zero_copy.then_some(self.touch)
    }

    /// Whether fault injection corrupts message `seq`.
    #[inline]
    pub fn corrupts(&self, seq: u64) -> bool {
        self.corrupt_every.is_some_and(|k| seq % k == k - 1)
    }
}
