//! Rigs: the things that stand a point's participants up and run it once.
//!
//! The point loop ([`crate::measure`]) is the same for every study: warm-up and
//! measured runs, interleaving, estimates, warnings, counters and profiles. What
//! differs between a sweep of `shm` channels, an RPMsg link with its remote and a
//! Warp Pipe memory mock is how the participants are started, how one run is driven
//! and how they are stopped. That is a [`Rig`].
//!
//! # The rig contract
//!
//! * A rig is started for one point (one *visit*, see [`crate::measure`]) with its
//!   participants running; [`Rig::participants`] names them, `main` first, so that
//!   counters and profiles can find their processes.
//! * [`Rig::run_once`] performs one run and returns a [`RunRecord`]. It brackets the
//!   measured window with [`RunControl::window_started`] and
//!   [`RunControl::window_ended`], honours [`RunControl::stop`] (returning
//!   [`RunError::Interrupted`]) and never waits on a participant without a bound
//!   ([`RunControl::hang_timeout`]).
//! * Figures are built with [`aggregate`], so every rig obeys the same rules:
//!   aggregate throughput is all bytes over the common window of all channels, never
//!   a sum of per-channel rates; per-channel rates use each channel's own window.
//! * [`Rig::finish`] stops and reaps every participant; dropping a rig must do the
//!   same (no process, thread or shared-memory region outlives it).
//!
//! One file per rig: [`peers`] (one peer per channel over any [`Transport`]),
//! [`rpmsg`] (one RPMsg link and its remote) and the server rigs live beside it.
//!
//! [`Transport`]: xferbench_transports::Transport

pub mod peers;
pub mod rpmsg;

#[cfg(test)]
pub(crate) mod fake;

use crate::clock::Stamp;
use crate::counters::{CounterSource, Participant, RunCounters};
use crate::cpu::ProcessCpu;
use crate::peer::PeerError;
use crate::result::{ChannelRun, Latency, RunRecord, figure};
use crate::stats::jain_index;
use crate::transports::TransportLookupError;
use crate::verify::Integrity;
use crate::workload::{WorkloadError, new_histogram};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use xferbench_transports::TransportError;

/// A way of standing a point's participants up and running it once.
pub trait Rig {
    /// The participants, `main` (this process) first, for counters and profiles.
    fn participants(&self) -> Vec<Participant>;
    /// One run: drive the workload, return what every side measured.
    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError>;
    /// Stops and reaps every participant.
    fn finish(self: Box<Self>) -> Result<(), RunError>;
}

/// What a workload declares about its figures: which one is primary (the one the
/// noisy check, `compare` and the tables use) and which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FigureRules {
    /// The primary figure's name (see [`figure`]).
    pub primary: &'static str,
    /// Whether higher values of the primary figure are better.
    pub higher_is_better: bool,
}

/// The loop's side of one run, handed to [`Rig::run_once`].
pub struct RunControl<'a> {
    /// Set on Ctrl-C: the rig ends the run early with [`RunError::Interrupted`].
    pub stop: &'a AtomicBool,
    /// A run with no progress for this long is declared hung.
    pub hang_timeout: Duration,
    counters: Option<(&'a mut (dyn CounterSource + 'static), &'a [Participant])>,
    recorded: Option<RunCounters>,
}

impl std::fmt::Debug for RunControl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunControl")
            .field("hang_timeout", &self.hang_timeout)
            .field("counters", &self.counters.is_some())
            .finish()
    }
}

impl<'a> RunControl<'a> {
    /// A control for one run, recording counters of `participants` when a source is
    /// given.
    pub fn new(
        stop: &'a AtomicBool,
        hang_timeout: Duration,
        counters: Option<(&'a mut (dyn CounterSource + 'static), &'a [Participant])>,
    ) -> RunControl<'a> {
        RunControl {
            stop,
            hang_timeout,
            counters,
            recorded: None,
        }
    }

    /// Just before the participants are released: counters start counting.
    pub fn window_started(&mut self) {
        if let Some((src, who)) = self.counters.as_mut() {
            src.window_started(who);
        }
    }

    /// Just after the last participant finished: counters stop.
    pub fn window_ended(&mut self) {
        if let Some((src, _)) = self.counters.as_mut() {
            self.recorded = src.window_ended();
        }
    }

    /// The counters of the window, once it ended.
    pub fn take_counters(&mut self) -> Option<RunCounters> {
        self.recorded.take()
    }
}

/// Why a point could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The transport name or a parameter was refused.
    #[error(transparent)]
    Lookup(#[from] TransportLookupError),
    /// The point cannot run as configured (a packet too large for the link, say).
    #[error("{0}")]
    Config(String),
    /// Setting up a channel failed.
    #[error("channel {channel}: {source}")]
    Transport {
        /// Channel.
        channel: usize,
        /// The error.
        #[source]
        source: TransportError,
    },
    /// A driver's transfer failed.
    #[error("channel {channel}: {source}")]
    Workload {
        /// Channel.
        channel: usize,
        /// The error.
        #[source]
        source: WorkloadError,
    },
    /// A peer failed, died or hung.
    #[error(transparent)]
    Peer(#[from] PeerError),
    /// A participant of a rig failed (an RPMsg remote, a memory mock, a client).
    #[error("{0}")]
    Participant(String),
    /// No channel made progress for the hang timeout.
    #[error(
        "no progress on channel {channel} for {secs} s: the peer or the transport hung (raise --timeout if this is expected)"
    )]
    Hung {
        /// The first stuck channel.
        channel: usize,
        /// Seconds without progress.
        secs: u64,
    },
    /// Stopped by the user.
    #[error("interrupted")]
    Interrupted,
    /// The profiler could not start or stop.
    #[error(transparent)]
    Profile(#[from] crate::profile::ProfileError),
    /// CPU pinning failed.
    #[error("cannot pin to CPU {cpu}: {source}")]
    Pin {
        /// The CPU.
        cpu: usize,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl RunError {
    /// Whether the error is the user's input (exit 2) rather than a failure (exit 1).
    pub fn is_usage(&self) -> bool {
        matches!(self, RunError::Lookup(_) | RunError::Config(_))
    }
}

/// What one channel (or one client process) did in one run, on the shared clock.
#[derive(Debug)]
pub struct ChannelOutcome {
    /// First message sent.
    pub start: Stamp,
    /// Last delivery (stream: the receiver's end of stream; request/response: the
    /// last reply).
    pub end: Stamp,
    /// Messages (or round trips, or transactions) delivered.
    pub messages: u64,
    /// Payload bytes delivered.
    pub bytes: u64,
    /// Per-message latency, nanoseconds, when the workload measures it.
    pub latency: Option<Histogram<u64>>,
    /// What verification found.
    pub integrity: Option<Integrity>,
}

/// Builds a run's record from what each channel did and the CPU of every process,
/// by the rules every rig shares.
///
/// * The common window runs from the earliest start to the latest end.
/// * Throughput and message rate are totals over the common window.
/// * Per-channel rates use each channel's own window; Jain's index is over them.
/// * Latency percentiles come from all channels' histograms merged.
/// * `cpu[0]` is the main process; the others' CPU time is expressed in CPUs over
///   the common window (`cpu_peers_cpus`), and all of it per message.
pub fn aggregate(channels: Vec<ChannelOutcome>, cpu: Vec<ProcessCpu>) -> RunRecord {
    let first = channels.iter().map(|c| c.start).min().unwrap_or(Stamp(0));
    let last = channels
        .iter()
        .map(|c| c.end.max(c.start))
        .max()
        .unwrap_or(Stamp(0));
    let window_ns = last.since(first).max(1);
    let mut merged = new_histogram();
    let mut integrity_total: Option<Integrity> = None;
    let mut rows = Vec::with_capacity(channels.len());
    for (i, c) in channels.into_iter().enumerate() {
        let end = c.end.max(c.start);
        let own = end.since(c.start).max(1) as f64 / 1e9;
        if let Some(k) = &c.integrity {
            integrity_total
                .get_or_insert_with(Integrity::default)
                .add(k);
        }
        if let Some(h) = &c.latency {
            let _ = merged.add(h);
        }
        rows.push(ChannelRun {
            channel: i,
            start_offset_ns: c.start.since(first),
            end_offset_ns: end.since(first),
            messages: c.messages,
            bytes: c.bytes,
            throughput_bytes_per_s: c.bytes as f64 / own,
            messages_per_s: c.messages as f64 / own,
            latency: c
                .latency
                .as_ref()
                .filter(|h| !h.is_empty())
                .map(Latency::of),
            integrity: c.integrity,
        });
    }
    let messages: u64 = rows.iter().map(|c| c.messages).sum();
    let bytes: u64 = rows.iter().map(|c| c.bytes).sum();
    let window_s = window_ns as f64 / 1e9;
    let mut figures = BTreeMap::new();
    figures.insert(figure::THROUGHPUT.to_string(), bytes as f64 / window_s);
    figures.insert(figure::MESSAGE_RATE.to_string(), messages as f64 / window_s);
    figures.insert(figure::WINDOW.to_string(), window_s);
    if rows.len() > 1 {
        let shares: Vec<f64> = rows.iter().map(|c| c.throughput_bytes_per_s).collect();
        if let Some(j) = jain_index(&shares) {
            figures.insert(figure::FAIRNESS.to_string(), j);
        }
    }
    let latency = (!merged.is_empty()).then(|| Latency::of(&merged));
    if let Some(l) = &latency {
        for (name, v) in l.figures() {
            figures.insert(name.to_string(), v);
        }
    }
    if let Some(main) = cpu.first() {
        figures.insert(figure::CPU_MAIN.to_string(), main.cpus_utilised);
    }
    if cpu.len() > 1 {
        let others: f64 = cpu.iter().skip(1).map(|c| c.user_s + c.sys_s).sum();
        figures.insert(figure::CPU_PEERS.to_string(), others / window_s);
    }
    let all_cpu_s: f64 = cpu.iter().map(|c| c.user_s + c.sys_s).sum();
    if messages > 0 {
        figures.insert(
            figure::CPU_PER_MESSAGE.to_string(),
            all_cpu_s / messages as f64 * 1e9,
        );
    }
    RunRecord {
        run: 0,
        sequence: None,
        window_ns,
        messages,
        bytes,
        figures,
        latency,
        channels: rows,
        cpu,
        integrity: integrity_total,
        counters: None,
    }
}
