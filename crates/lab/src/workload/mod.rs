//! Workloads: what the two ends of a channel do during a run.
//!
//! A workload has a *driver* side, run by the xferbench process on one thread per
//! channel, and a *serving* side, run by the peer (a thread or a peer process). Both
//! are generic over the transport's [`Endpoint`], so the measuring loop is statically
//! dispatched: no virtual call, allocation or lock per message.
//!
//! # The workload contract
//!
//! * The driver reads the clock once before its first message ([`DriverOutcome::start`])
//!   and checks [`Control::stop`] before every message; it publishes its message count
//!   in [`Control::progress`] so a hung channel can be noticed.
//! * When done (count reached, duration elapsed, or stopped) the driver calls
//!   [`Endpoint::close_send`]; the serving side runs until it sees [`Recv::Closed`].
//! * With `verify`, every message carries the header of [`xferbench_probes::verify`] and the
//!   receiving side counts what it found.
//! * With `zero_copy`, messages are written and read in place in the transport's
//!   buffers ([`Endpoint::send_in_place`] and friends), every byte written and every
//!   cache line read (see [`xferbench_probes::verify`]); otherwise the transport copies them in
//!   and out of the workload's buffers.
//! * The workload's message buffers start on a page
//!   ([`xferbench_transports::buffer::PageBuf`]), so a copy between them and a
//!   transport's page-aligned memory keeps to the C library's fast path
//!   ([`xferbench_transports::buffer::placed_for_copy`]) rather than depending on
//!   where `malloc` happened to put them.

pub mod daq;
pub mod kv;
pub mod load;
pub mod perf_stat;
pub mod pingpong;
pub mod rpmsg;
pub mod stream;
pub mod warp;

pub use load::Load;
pub use pingpong::Pingpong;
pub use stream::Stream;

use crate::error::WorkloadError;
use crate::names;
use crate::record::{ChannelOutcome, FigureRules};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64};
use xferbench_params::{ParamMap, ParamValues, Params};
use xferbench_probes::clock::Stamp;
use xferbench_probes::verify::{Integrity, Verifier, read_lines, stamp, touch, write_in_place};
use xferbench_transports::{Endpoint, ParamDef, ParamError, Recv};

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
    Stream => "stream": Stream::DESCRIPTION,
    Pingpong => "pingpong": Pingpong::DESCRIPTION,
    Load => "load": Load::DESCRIPTION,
});

impl WorkloadKind {
    /// One line for `xferbench list`.
    pub fn description(self) -> &'static str {
        xferbench_params::Choices::help(self)
    }

    /// The workload's own parameters ([`Workload::PARAMS`]).
    pub fn params(self) -> &'static [ParamDef] {
        match self {
            WorkloadKind::Stream => Stream::PARAMS,
            WorkloadKind::Pingpong => Pingpong::PARAMS,
            WorkloadKind::Load => Load::PARAMS,
        }
    }

    /// The definition of this workload's parameter `name`.
    pub fn param(self, name: &str) -> Option<&'static ParamDef> {
        self.params().iter().find(|d| d.name == name)
    }

    /// A point's values of this workload's parameters, as results record them
    /// ([`Workload::record`]).
    pub fn record(self, values: &ParamValues, map: &mut ParamMap) {
        match self {
            WorkloadKind::Stream => Stream::record(values, map),
            WorkloadKind::Pingpong => Pingpong::record(values, map),
            WorkloadKind::Load => Load::record(values, map),
        }
    }

    /// The workload's primary figure and its direction.
    pub fn rules(self) -> FigureRules {
        match self {
            WorkloadKind::Stream => Stream::RULES,
            WorkloadKind::Pingpong => Pingpong::RULES,
            WorkloadKind::Load => Load::RULES,
        }
    }

    /// What one channel delivered in one run, from what both of its ends measured.
    pub fn channel_outcome(
        self,
        size: usize,
        driver: DriverOutcome,
        served: &ServeOutcome,
    ) -> ChannelOutcome {
        match self {
            WorkloadKind::Stream => Stream::channel_outcome(size, driver, served),
            WorkloadKind::Pingpong => Pingpong::channel_outcome(size, driver, served),
            WorkloadKind::Load => Load::channel_outcome(size, driver, served),
        }
    }
}

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
    /// `xferbench kv client`: a kv client's timed requests ([`kv`]).
    KvClient,
    /// `xferbench warp client`: Warp Pipe clients of a memory mock ([`warp`]).
    WarpClient,
    /// `xferbench daq`: the SIS8300 readout with the functions of `-A` ([`daq`]).
    Daq,
    /// The SIS8300 study's readout points (tests 1, 2 and 4).
    Readout,
    /// The SIS8300 study's conversion points (test 3).
    Convert,
    /// `xferbench ab`: a shell command, once per run (`rig::command`).
    Command,
}

xferbench_params::choices!(RecordedWorkload {
    Stream => "stream": Stream::DESCRIPTION,
    Pingpong => "pingpong": Pingpong::DESCRIPTION,
    Load => "load": Load::DESCRIPTION,
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

pub use crate::result::new_histogram;

/// Every parameter `run`'s workloads declare, each once, in the order of
/// [`WorkloadKind::ALL`] and of each workload's declaration: what `-p` routes to the
/// workloads, `list` shows under them and the catalog of definitions holds.
pub fn declared() -> Vec<ParamDef> {
    let mut out: Vec<ParamDef> = Vec::new();
    for w in WorkloadKind::ALL {
        for d in w.params() {
            if !out.iter().any(|o| o.name == d.name) {
                out.push(d.clone());
            }
        }
    }
    out
}

/// The parameters `-p` routes to the lab rather than to a transport: the sweep's axes
/// (transport, size, channels, zero_copy), every workload's own ([`declared`]) and the
/// neighbours. A plugin's parameter may take none of their names, nor `workload`
/// ([`lab_param_names`]).
pub fn lab_params() -> Vec<ParamDef> {
    use crate::axes::{CHANNELS, SIZE, TRANSPORT, ZERO_COPY};
    let mut out = vec![TRANSPORT, SIZE, CHANNELS, ZERO_COPY];
    out.extend(declared());
    out.push(crate::neighbours::NEIGHBOURS);
    out
}

/// The names of the lab's own parameters: `workload` and [`lab_params`]'.
pub fn lab_param_names() -> Vec<String> {
    let mut out: Vec<String> = lab_params().iter().map(|d| d.name.to_string()).collect();
    out.insert(3, WORKLOAD.name.to_string());
    out
}

/// The workload parameters that apply to messages written and read in place only:
/// they multiply a sweep's in-place points, once its copy modes are chosen, and leave
/// its copying points as they are.
pub const IN_PLACE: &[ParamDef] = &[TOUCH];

/// Whether `def` is one of the parameters of in-place messages ([`IN_PLACE`]).
pub fn in_place_only(def: &ParamDef) -> bool {
    IN_PLACE.iter().any(|d| d.name == def.name)
}

/// Writes every value of `values` set for one of `defs` that differs from its
/// definition's default: how a workload records its parameters unless it says
/// otherwise ([`Workload::record`]), so a point that leaves a parameter at its
/// default keeps the parameters it always had.
pub fn record_set(values: &ParamValues, defs: &[ParamDef], map: &mut ParamMap) {
    for d in defs {
        if let Some(v) = values.get(d.name())
            && *v != d.default
        {
            map.put(d, v);
        }
    }
}

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
    pub load: Option<load::ChannelSchedule>,
    /// The point's values of the workload's own parameters ([`Workload::PARAMS`])
    /// set for it, in their machine form; read with [`ChannelSpec::values`].
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

/// `workload`: what the two ends of a channel do; every name a point records
/// ([`RecordedWorkload`]: `run`'s workloads and the clients and
/// readouts of the other commands and studies).
pub const WORKLOAD: ParamDef = ParamDef::choice(
    names::WORKLOAD,
    <RecordedWorkload as xferbench_params::Choices>::CHOICES,
    "stream",
    "what the two ends of a channel do",
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
    /// The point's values of the workload's own parameters, each read by its
    /// definition; a parameter not set takes its default.
    pub fn values(&self) -> Result<ParamValues, WorkloadError> {
        ParamValues::parse(self.workload.name(), self.workload.params(), &self.params)
            .map_err(|e: ParamError| WorkloadError::Config(e.to_string()))
    }

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

/// Shared state between a driver thread and the run's supervisor.
#[derive(Debug)]
pub struct Control<'a> {
    /// Set to stop early (Ctrl-C).
    pub stop: &'a AtomicBool,
    /// Messages done so far on this channel.
    pub progress: &'a AtomicU64,
}

/// What the driver side measured.
#[derive(Debug)]
pub struct DriverOutcome {
    /// Just before the first message.
    pub start: Stamp,
    /// After the last message (pingpong: its reply).
    pub end: Stamp,
    /// Messages sent (pingpong: round trips completed).
    pub sent: u64,
    /// Round-trip times in nanoseconds (pingpong).
    pub latency: Option<hdrhistogram::Histogram<u64>>,
    /// What the driver verified (pingpong with `verify`).
    pub integrity: Option<Integrity>,
    /// True if [`Control::stop`] ended the run early.
    pub stopped: bool,
    /// What a `load` driver measured of its schedule.
    pub schedule: Option<crate::record::ScheduleOutcome>,
}

/// What the serving side measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServeOutcome {
    /// When the serving side saw the end of the stream.
    pub end: Stamp,
    /// Messages received.
    pub received: u64,
    /// The next sequence number the verifier expected (tail losses are `sent − this`).
    pub next_expected: u64,
    /// What the serving side verified (stream with `verify`).
    pub integrity: Option<Integrity>,
    /// One-way latencies the serving side measured (`load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<load::Recorded>,
}

/// One workload: a driver loop and a serving loop, and the rules of its figures.
pub trait Workload {
    /// Command-line name.
    const NAME: &'static str;
    /// One line for `xferbench list`.
    const DESCRIPTION: &'static str;
    /// Its primary figure and which way is better.
    const RULES: FigureRules;
    /// Its own parameters (`-p NAME=LIST` when it runs): the sweep multiplies its
    /// points by their lists in this order (the first outermost), a point records
    /// them ([`Workload::record`]), the catalog of definitions and `list` show them,
    /// and a plugin may not take their names. A workload reads them from
    /// [`ChannelSpec::values`] by definition.
    const PARAMS: &'static [ParamDef];

    /// Writes a point's `values` of [`Workload::PARAMS`] as its result records them:
    /// by default each value set that is not its definition's default.
    fn record(values: &ParamValues, map: &mut ParamMap) {
        record_set(values, Self::PARAMS, map);
    }

    /// A channel's window, count and integrity from what its two ends measured.
    fn channel_outcome(size: usize, driver: DriverOutcome, served: &ServeOutcome)
    -> ChannelOutcome;

    /// Runs the driver side of one channel for one run.
    fn drive<E: Endpoint>(
        ep: &mut E,
        spec: &ChannelSpec,
        ctl: &Control<'_>,
    ) -> Result<DriverOutcome, WorkloadError>;

    /// Runs the serving side of one channel for one run, until the driver closes.
    fn serve<E: Endpoint>(ep: &mut E, spec: &ChannelSpec) -> Result<ServeOutcome, WorkloadError>;
}

/// Runs the driver of `spec.workload`.
pub fn drive<E: Endpoint>(
    ep: &mut E,
    spec: &ChannelSpec,
    ctl: &Control<'_>,
) -> Result<DriverOutcome, WorkloadError> {
    check_size(spec)?;
    match spec.workload {
        WorkloadKind::Stream => Stream::drive(ep, spec, ctl),
        WorkloadKind::Pingpong => Pingpong::drive(ep, spec, ctl),
        WorkloadKind::Load => Load::drive(ep, spec, ctl),
    }
}

/// Runs the serving side of `spec.workload`.
// Never inlined: `--counters callgrind` collects only inside this function
// (`counters::callgrind::COLLECT_PATTERN`), and profiles show it as the serving side.
#[inline(never)]
pub fn serve<E: Endpoint>(ep: &mut E, spec: &ChannelSpec) -> Result<ServeOutcome, WorkloadError> {
    check_size(spec)?;
    match spec.workload {
        WorkloadKind::Stream => Stream::serve(ep, spec),
        WorkloadKind::Pingpong => Pingpong::serve(ep, spec),
        WorkloadKind::Load => Load::serve(ep, spec),
    }
}

/// What a side does once, before its first run: a `load` side calibrates its clock
/// (up to 200 ms, on a process's first [`xferbench_probes::clock::TripClock`]), never inside a
/// window.
pub fn prepare(spec: &ChannelSpec) {
    if spec.workload == WorkloadKind::Load {
        xferbench_probes::clock::TripClock::new();
    }
}

fn check_size(spec: &ChannelSpec) -> Result<(), WorkloadError> {
    if spec.size == 0 {
        return Err(WorkloadError::Config(
            "message size must be at least 1 byte".into(),
        ));
    }
    if spec.workload == WorkloadKind::Load && spec.size < load::min_size(spec.verify) {
        return Err(WorkloadError::Config(format!(
            "the load workload needs messages of at least {} bytes (sequence number{} and intended send time), got {}",
            load::min_size(spec.verify),
            if spec.verify { ", checksum" } else { "" },
            spec.size
        )));
    }
    if spec.verify && spec.size < xferbench_probes::verify::HEADER_LEN {
        return Err(WorkloadError::Config(format!(
            "--verify needs messages of at least {} bytes, got {}",
            xferbench_probes::verify::HEADER_LEN,
            spec.size
        )));
    }
    Ok(())
}

/// How often (in messages) a duration-limited loop reads the clock.
pub(crate) const CLOCK_CHECK_EVERY: u64 = 64;

#[inline]
pub(crate) fn io_err(op: &'static str, seq: u64) -> impl FnOnce(std::io::Error) -> WorkloadError {
    move |source| WorkloadError::Io { op, seq, source }
}

/// Receives into `buf`, mapping [`Recv::Closed`] to `true`.
#[inline]
pub(crate) fn recv_or_closed<E: Endpoint>(
    ep: &mut E,
    buf: &mut [u8],
    seq: u64,
) -> Result<bool, WorkloadError> {
    match ep.recv(buf).map_err(io_err("receive", seq))? {
        Recv::Message => Ok(false),
        Recv::Closed => Ok(true),
    }
}

/// Sends message `seq`: in place by the zero-copy rule, or stamped in `buf` and
/// copied; fault injection flips its last byte.
#[inline]
pub(crate) fn send_message<E: Endpoint>(
    ep: &mut E,
    buf: &mut [u8],
    spec: &ChannelSpec,
    seq: u64,
) -> Result<(), WorkloadError> {
    let corrupt = spec.corrupts(seq);
    let last = buf.len() - 1;
    let r = if spec.zero_copy {
        ep.send_in_place(buf.len(), |m| {
            if spec.touch.writes() {
                write_in_place(m, seq, spec.verify);
            }
            if corrupt {
                m[last] ^= 0xFF;
            }
        })
    } else {
        stamp(buf, seq, spec.verify);
        if corrupt {
            buf[last] ^= 0xFF;
        }
        let r = ep.send(buf);
        if corrupt {
            buf[last] ^= 0xFF;
        }
        r
    };
    r.map_err(io_err("send", seq))
}

/// Receives the next message and reads it: checked by `verifier`, or touched into
/// `sink` (in place: every cache line, unless `touch` reads nothing; copied into
/// `buf`: its first word). `true` when the peer closed instead.
#[inline]
pub(crate) fn take_message<E: Endpoint>(
    ep: &mut E,
    buf: &mut [u8],
    zero_copy: Option<Touch>,
    verifier: &mut Option<Verifier>,
    sink: &mut u64,
    seq: u64,
) -> Result<bool, WorkloadError> {
    if let Some(touch) = zero_copy {
        let read = |m: &[u8]| match verifier {
            Some(v) => v.check(m),
            None if touch.reads() => *sink ^= read_lines(m),
            None => {}
        };
        return Ok(ep
            .recv_in_place(buf.len(), read)
            .map_err(io_err("receive", seq))?
            .is_none());
    }
    if recv_or_closed(ep, buf, seq)? {
        return Ok(true);
    }
    match verifier {
        Some(v) => v.check(buf),
        None => *sink ^= touch(buf),
    }
    Ok(false)
}
