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
//!   [`Endpoint::close_send`]; the serving side runs until it sees [`Recv::Closed`](xferbench_transports::Recv::Closed).
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

pub mod contract;
pub mod daq;
pub mod kind;
pub mod kv;
pub mod load;
pub(crate) mod message;
pub mod perf_stat;
pub mod pingpong;
pub mod rpmsg;
pub mod schedule;
pub mod spec;
pub mod stream;
pub mod warp;

pub use contract::{Control, DriverOutcome, Recorded, ServeOutcome, Workload, record_set};
pub use kind::{RecordedWorkload, WORKLOAD, WorkloadKind};
pub use load::Load;
pub use pingpong::Pingpong;
pub use spec::{ChannelSpec, Limit, TOUCH, Touch};
pub use stream::Stream;

use crate::error::WorkloadError;
use crate::record::{ChannelOutcome, FigureRules};
use xferbench_params::{ParamMap, ParamValues};
use xferbench_transports::{Endpoint, ParamDef};

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
