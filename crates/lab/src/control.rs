//! The run control: the [`Rig`] trait the point loop drives, its side of one run
//! ([`RunControl`]) and why a point could not be measured ([`RunError`]). The rigs
//! themselves (`rig`) stand above the loop and implement this.
//!
//! # The rig contract
//!
//! * A rig is started for one point (one *visit*, see `measure`) with its
//!   participants running; [`Rig::participants`] names them, `main` first, so that
//!   counters and profiles can find their processes.
//! * [`Rig::run_once`] performs one run and returns a [`RunRecord`]. It brackets the
//!   measured window with [`RunControl::window_started`] and
//!   [`RunControl::window_ended`], honours [`RunControl::stop`] (returning
//!   [`RunError::Interrupted`]) and never waits on a participant without a bound
//!   ([`RunControl::hang_timeout`]).
//! * Figures are built with [`aggregate`](crate::record::aggregate), so every rig obeys the same rules:
//!   aggregate throughput is all bytes over the common window of all channels, never
//!   a sum of per-channel rates; per-channel rates use each channel's own window.
//! * [`Rig::finish`] stops and reaps every participant; dropping a rig must do the
//!   same (no process, thread or shared-memory region outlives it).

use crate::error::{PeerError, TransportLookupError, WorkloadError};
use crate::result::RunRecord;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use xferbench_probes::contention::{ProcFs, ProcReading, RunContention};
use xferbench_probes::counters::{CounterSource, Participant, RunCounters};
use xferbench_transports::TransportError;

/// A way of standing a point's participants up and running it once.
pub trait Rig {
    /// The participants, `main` (this process) first, for counters and profiles.
    fn participants(&self) -> Vec<Participant>;
    /// One run: drive the workload, return what every side measured.
    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError>;
    /// Stops and reaps every participant.
    fn finish(self: Box<Self>) -> Result<(), RunError>;
    /// [`Rig::finish`], adding to `warnings` what the point should say about how it
    /// ended (files a plugin left behind, say).
    fn finish_with_warnings(self: Box<Self>, warnings: &mut Vec<String>) -> Result<(), RunError> {
        let _ = warnings;
        self.finish()
    }
    /// What the transport chose for its parameters set to `auto`
    /// ([`Transport::chosen`](xferbench_transports::Transport::chosen)), recorded in
    /// the point's result; empty for rigs without such parameters.
    fn chosen(&self) -> std::collections::BTreeMap<String, String> {
        std::collections::BTreeMap::new()
    }
}

/// The loop's side of one run, handed to [`Rig::run_once`].
pub struct RunControl<'a> {
    /// Set on Ctrl-C: the rig ends the run early with [`RunError::Interrupted`].
    pub stop: &'a AtomicBool,
    /// A run with no progress for this long is declared hung.
    pub hang_timeout: Duration,
    /// The run is open-ended (`measure::LoopOptions::until_stopped`):
    /// it lasts until `stop`, and the rig returns its record then instead of
    /// [`RunError::Interrupted`].
    pub until_stopped: bool,
    counters: Option<(&'a mut (dyn CounterSource + 'static), &'a [Participant])>,
    recorded: Option<RunCounters>,
    contention: Option<ContentionWatch<'a>>,
    warnings: Vec<String>,
}

/// The run's processes and the `/proc` readings around its window.
struct ContentionWatch<'a> {
    proc: &'a ProcFs,
    roots: Vec<u32>,
    start: Option<ProcReading>,
    recorded: Option<RunContention>,
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
            until_stopped: false,
            counters,
            recorded: None,
            contention: None,
            warnings: Vec::new(),
        }
    }

    /// Open-ended when `yes` ([`RunControl::until_stopped`]).
    pub fn open_ended(mut self, yes: bool) -> Self {
        self.until_stopped = yes;
        self
    }

    /// Also reads `proc` around the window, to record how much CPU processes outside
    /// the run used ([`xferbench_probes::contention`]): the run is this process, the
    /// `participants` and all their descendants.
    pub fn with_contention(mut self, proc: &'a ProcFs, participants: &[Participant]) -> Self {
        let mut roots = vec![std::process::id()];
        roots.extend(participants.iter().map(|p| p.pid).filter(|&p| p != 0));
        self.contention = Some(ContentionWatch {
            proc,
            roots,
            start: None,
            recorded: None,
        });
        self
    }

    /// Just before the participants are released: counters start counting.
    pub fn window_started(&mut self) {
        if let Some(w) = self.contention.as_mut() {
            w.start = w.proc.read();
        }
        if let Some((src, who)) = self.counters.as_mut() {
            src.window_started(who);
        }
    }

    /// Just after the last participant finished: counters stop.
    pub fn window_ended(&mut self) {
        if let Some((src, _)) = self.counters.as_mut() {
            self.recorded = src.window_ended();
        }
        if let Some(w) = self.contention.as_mut()
            && let Some(start) = w.start.take()
            && let Some(end) = w.proc.read()
        {
            w.recorded = Some(xferbench_probes::contention::between(
                &start, &end, &w.roots,
            ));
        }
    }

    /// How busy the machine was with other work during the window, once it ended.
    pub fn take_contention(&mut self) -> Option<RunContention> {
        self.contention.as_mut().and_then(|w| w.recorded.take())
    }

    /// The counters of the window, once it ended.
    pub fn take_counters(&mut self) -> Option<RunCounters> {
        self.recorded.take()
    }

    /// Says what the run could not measure without failing it (a tool missing, a
    /// counter `<not supported>`): the point keeps the warning, once however many
    /// runs repeat it.
    pub fn warn(&mut self, warning: impl Into<String>) {
        self.warnings.push(warning.into());
    }

    /// The run's warnings ([`RunControl::warn`]).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
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
    #[error("channel {channel}: {source}{calls}")]
    Workload {
        /// Channel.
        channel: usize,
        /// The error.
        #[source]
        source: WorkloadError,
        /// The plugin calls in flight when it failed, in words (as for
        /// [`RunError::Hung`]), or empty.
        calls: String,
    },
    /// A peer failed, died or hung.
    #[error(transparent)]
    Peer(#[from] PeerError),
    /// A participant of a rig failed (an RPMsg remote, a memory mock, a client).
    #[error("{0}")]
    Participant(String),
    /// No channel made progress for the hang timeout.
    #[error(
        "no progress on channel {channel} for {secs} s: the peer or the transport hung{calls} (raise --timeout if this is expected)"
    )]
    Hung {
        /// The first stuck channel.
        channel: usize,
        /// Seconds without progress.
        secs: u64,
        /// The plugin calls in flight when it was declared hung, in words
        /// (`; in plugin calls: recv of message 12 (this process), …`), or empty.
        calls: String,
    },
    /// Stopped by the user.
    #[error("interrupted")]
    Interrupted,
    /// The profiler could not start or stop.
    #[error(transparent)]
    Profile(#[from] xferbench_probes::profile::ProfileError),
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
