//! `xferbench run`'s plan: a sweep of points, each on the rig its transport needs.
//!
//! Every transport of [`crate::transports`] runs on a [`PeerRig`] (one peer per
//! channel), except `rpmsg`, whose points the sweep hands to an [`RpmsgBench`] (an
//! [`crate::rig::rpmsg::RpmsgRig`] each: one link with its remote for all channels;
//! the remote is a process unless `--peer thread`), and plugin
//! transports, whose peer rig runs in a measuring process of its own
//! ([`PluginRig`]); the point loop ([`crate::measure`]) does the rest.

use crate::control::{Rig, RunError};
use crate::measure::{Bench, LoopOptions, PlannedPoint, run_plan};
use crate::neighbours::NeighbourRig;
use crate::observer::Observer;
use crate::result::{Context, ResultDoc};
use crate::rig::peers::{PeerMode, PeerOptions, PeerRig};
use crate::rig::plugin::PluginRig;
use crate::rig::rpmsg::{RemoteKind, RpmsgBench};
use crate::sweep::PointSpec;
use crate::transports::{RPMSG, WithTransport, dispatch, rpmsg_settings};
use crate::workload::rpmsg::RpmsgPoint;
use crate::workload::{Limit, WorkloadKind};
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use xferbench_probes::counters::{CounterMode, CounterSource};
use xferbench_transports::Transport;

/// Run control of `xferbench run`, shared by every point of the sweep.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The workload.
    pub workload: WorkloadKind,
    /// Measured runs per point.
    pub runs: usize,
    /// Discarded warm-up runs per point (per visit with `interleave`).
    pub warmup: usize,
    /// Round-robin across points.
    pub interleave: bool,
    /// Run length per channel.
    pub limit: Limit,
    /// Verify payloads.
    pub verify: bool,
    /// Where peers run.
    pub peer: PeerMode,
    /// Pin driver threads and peers to CPUs.
    pub pin: bool,
    /// A run with no progress on any channel for this long is declared hung.
    pub hang_timeout: Duration,
    /// Fault injection for tests (see [`crate::workload::ChannelSpec::corrupt_every`]).
    pub corrupt_every: Option<u64>,
    /// Counters to record per participant (`--counters`).
    pub counters: CounterMode,
    /// Profile one participant of every point (`--profile`, `--profile-peer`).
    pub profile: Option<xferbench_probes::profile::ProfileRequest>,
    /// Measure the machine's limits and watch it for drift (`None`: `--no-limits`).
    pub watch: Option<crate::limits::Watch>,
    /// How to start the binary's hidden roles (plugin transports need it whatever
    /// `peer` is; see [`crate::plugins`]).
    pub launcher: Option<xferbench_probes::process::Launcher>,
    /// End the sweep at its first failed point (`--fail-fast`); otherwise a failed
    /// point is recorded and the others run.
    pub fail_fast: bool,
}

impl RunOptions {
    /// The point loop's share of the options.
    pub fn loop_options(&self) -> LoopOptions {
        LoopOptions {
            judge: &crate::judge::LAB,
            runs: self.runs,
            warmup: self.warmup,
            interleave: self.interleave,
            hang_timeout: self.hang_timeout,
            counters: self.counters,
            profile: self.profile.clone(),
            watch: self.watch.clone(),
            until_stopped: false,
        }
    }

    /// The peer rig's share of the options.
    pub fn peer_options(&self) -> PeerOptions {
        PeerOptions {
            workload: self.workload,
            limit: self.limit,
            verify: self.verify,
            peer: self.peer.clone(),
            pin: self.pin,
            corrupt_every: self.corrupt_every,
            launcher: self.launcher.clone(),
            hang_timeout: self.hang_timeout,
        }
    }
}

/// The bench of a sweep: each point's transport on its rig.
pub struct SweepBench<'a> {
    specs: &'a [PointSpec],
    planned: Vec<PlannedPoint>,
    peer: PeerOptions,
    /// The sweep's `rpmsg` points, run by the RPMsg bench (`None` when its
    /// remote cannot run where the peers would).
    rpmsg: Option<RpmsgBench>,
    /// For each `rpmsg` point of the sweep: its index in `rpmsg`, or why it cannot
    /// run.
    rpmsg_index: Vec<Option<Result<usize, String>>>,
    /// Go on past a failed point.
    keep_going: bool,
}

impl<'a> SweepBench<'a> {
    /// The bench for `points` run with `opts`.
    pub fn new(points: &'a [PointSpec], opts: &RunOptions) -> SweepBench<'a> {
        let planned: Vec<PlannedPoint> = points
            .iter()
            .map(|p| PlannedPoint {
                params: p.params(opts.workload),
                size_bytes: p.size,
                channels: p.channels,
                rules: opts.workload.rules(),
                verify: opts.verify,
                runs: None,
            })
            .collect();
        let peer = opts.peer_options();
        let mut rpmsg = match &peer.peer {
            PeerMode::Thread => Some(RpmsgBench::new(RemoteKind::Thread, peer.pin)),
            PeerMode::Process(l) => Some(RpmsgBench::new(RemoteKind::Process(l.clone()), peer.pin)),
            PeerMode::Remote(_) => None,
        };
        let rpmsg_index = points
            .iter()
            .zip(&planned)
            .map(|(spec, planned)| {
                (spec.transport == RPMSG).then(|| {
                    let point = rpmsg_point(spec, &peer)?;
                    match &mut rpmsg {
                        Some(bench) => Ok(bench.push(planned.clone(), point)),
                        None => Err(crate::remote::crosses_hosts("rpmsg").unwrap_err()),
                    }
                })
            })
            .collect();
        SweepBench {
            specs: points,
            planned,
            peer,
            rpmsg,
            rpmsg_index,
            keep_going: !opts.fail_fast,
        }
    }
}

/// The RPMsg point of a sweep point: pingpong round trips over one link.
fn rpmsg_point(point: &PointSpec, peer: &PeerOptions) -> Result<RpmsgPoint, String> {
    // The remote echoes: a load point is open loop over round trips, timed from each
    // packet's intended time, one packet in flight per channel.
    let pace_ns = match peer.workload {
        WorkloadKind::Pingpong => None,
        WorkloadKind::Load => {
            let s = point.schedule();
            if s.burst != 1 || s.arrivals != crate::workload::load::Arrivals::Uniform {
                return Err(
                    "the RPMsg remote echoes one packet at a time: its load is evenly spaced, burst=1".into(),
                );
            }
            Some((1e9 * point.channels as f64 / s.rate.max(1) as f64).max(1.0) as u64)
        }
        WorkloadKind::Stream => {
            return Err(
                "the RPMsg remote echoes: run it with the pingpong or load workload".into(),
            );
        }
    };
    let (notify, buffers) = rpmsg_settings(&point.transport_params, point.zero_copy)?;
    Ok(RpmsgPoint {
        channels: u32::try_from(point.channels).map_err(|_| "too many channels".to_string())?,
        packet: usize::try_from(point.size).map_err(|_| "packet too large".to_string())?,
        limit: peer.limit,
        notify,
        buffers,
        suffix: false,
        verify: peer.verify,
        zero_copy: point.zero_copy,
        pace_ns,
    })
}

impl Bench for SweepBench<'_> {
    fn points(&self) -> &[PlannedPoint] {
        &self.planned
    }

    fn keep_going(&self) -> bool {
        self.keep_going
    }

    fn rig(
        &mut self,
        index: usize,
        source: Option<&dyn CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError> {
        struct Start<'s> {
            point: &'s PointSpec,
            opts: &'s PeerOptions,
            source: Option<&'s dyn CounterSource>,
        }
        impl<'s> WithTransport for Start<'s> {
            type Output = Result<Box<dyn Rig>, RunError>;
            fn with<T: Transport + Clone>(self, t: T) -> Self::Output {
                Ok(Box::new(PeerRig::start(
                    t,
                    self.point,
                    self.opts,
                    self.source,
                )?))
            }
        }
        if let Some(routed) = &self.rpmsg_index[index] {
            let i = routed.clone().map_err(RunError::Config)?;
            let bench = self.rpmsg.as_mut().expect("a routed point has its bench");
            return bench.rig(i, source);
        }
        let point = &self.specs[index];
        let rig = if crate::plugins::is_plugin(&point.transport) {
            Box::new(PluginRig::start(point, &self.peer, source)?)
        } else {
            dispatch(
                &point.transport,
                &point.transport_params,
                Start {
                    point,
                    opts: &self.peer,
                    source,
                },
            )??
        };
        // Neighbours start once the point's own participants stand, and share the
        // CPUs `--pin` gives the channels.
        let cpus = self.peer.pin.then(xferbench_probes::affinity::allowed_cpus);
        NeighbourRig::wrap(rig, point.neighbours, cpus.as_deref())
    }
}

/// Runs every point of a sweep, streaming each finished point to the observers
/// (see [`run_plan`]).
pub fn run_sweep(
    context: Context,
    points: &[PointSpec],
    opts: &RunOptions,
    stop: &AtomicBool,
    observers: &mut [&mut dyn Observer],
) -> ResultDoc {
    let mut bench = SweepBench::new(points, opts);
    let mut doc = run_plan(context, &mut bench, &opts.loop_options(), stop, observers);
    if opts.workload == WorkloadKind::Load {
        doc.knees = crate::knee::knees(&doc);
    }
    doc
}
