//! The peer rig: one peer per channel over any [`Transport`], the path of
//! `xferbench run`.
//!
//! # One run
//!
//! 1. For each channel the driver side listens and sends the address to its peer,
//!    which connects, takes its CPU snapshot and answers `ready`.
//! 2. One driver thread per channel waits at a barrier with the supervising thread;
//!    the supervisor takes the main process's CPU snapshot and releases them all at
//!    once.
//! 3. Each driver stamps its start, runs the workload, and closes its side; each peer
//!    stamps the end of its stream and reports it with its CPU usage.
//! 4. While the drivers run, the supervisor watches: a peer that dies, a channel that
//!    makes no progress for the hang timeout, or a Ctrl-C ends the run with an error
//!    (killing the peers, which unblocks the drivers).
//!
//! The rig is generic over the transport: the drivers' loops are monomorphised
//! (`drive::<T::Endpoint>`), with no virtual call per message.

use super::{Rig, RunControl, RunError, aggregate};
use crate::error::{PeerError, WorkloadError};
use crate::peer::{PEER_TIMEOUT, Peer, PeerCommand, PeerReply, PeerSpec};
use crate::remote::{RemoteTarget, Session};
use crate::result::RunRecord;
use crate::sweep::PointSpec;
use crate::workload::{
    ChannelSpec, Control, DriverOutcome, Limit, ServeOutcome, WorkloadKind, drive,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::thread;
use std::time::{Duration, Instant};
use xferbench_probes::affinity::{allowed_cpus, pin_current_thread, pin_plan};
use xferbench_probes::clock::Stamp;
use xferbench_probes::counters::{CounterSource, Participant};
use xferbench_probes::cpu::{CpuSnapshot, ProcessCpu};
use xferbench_probes::process::Launcher;
use xferbench_transports::{Endpoint, Listener, Recv, Transport};

/// Where peers run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerMode {
    /// Threads of this process.
    Thread,
    /// Re-executed copies of the binary.
    Process(Launcher),
    /// Copies of the binary on another host, started by its agent
    /// ([`crate::remote`]); TCP only.
    Remote(RemoteTarget),
}

/// What the peer rig needs beyond the point: the workload and how to run it.
#[derive(Debug, Clone)]
pub struct PeerOptions {
    /// The workload.
    pub workload: WorkloadKind,
    /// Run length per channel.
    pub limit: Limit,
    /// Verify payloads.
    pub verify: bool,
    /// Where peers run.
    pub peer: PeerMode,
    /// Pin driver threads and peers to CPUs.
    pub pin: bool,
    /// Fault injection for tests (see [`ChannelSpec::corrupt_every`]).
    pub corrupt_every: Option<u64>,
    /// How to start the binary's hidden roles, whatever `peer` is: a plugin
    /// transport's point runs in a measuring process of its own
    /// ([`super::plugin`]).
    pub launcher: Option<Launcher>,
    /// A run with no progress for this long is hung (a plugin's sends and receives
    /// time out after it too).
    pub hang_timeout: Duration,
}

/// One peer per channel over transport `T`.
pub struct PeerRig<T: Transport> {
    transport: T,
    spec: ChannelSpec,
    peers: Vec<Peer>,
    opts: PeerOptions,
    cpus: Vec<usize>,
    /// The control connection of remote peers (dropped after them).
    session: Option<Arc<Session>>,
}

impl<T: Transport + Clone> PeerRig<T> {
    /// Starts one peer per channel of `point`. A counter `source` may wrap process
    /// peers (callgrind runs them under valgrind).
    pub fn start(
        transport: T,
        point: &PointSpec,
        opts: &PeerOptions,
        source: Option<&dyn CounterSource>,
    ) -> Result<PeerRig<T>, RunError> {
        let spec = ChannelSpec {
            workload: opts.workload,
            size: point.size as usize,
            limit: opts.limit,
            verify: opts.verify,
            corrupt_every: opts.corrupt_every,
            zero_copy: point.zero_copy,
            touch: point.touch(),
            // Where no clock is shared with the peers, they echo and the driver times
            // the round trip from each message's intended time.
            load: (opts.workload == WorkloadKind::Load).then(|| {
                let mut s = point.schedule();
                s.echo = matches!(opts.peer, PeerMode::Remote(_));
                s.channel(point.channels)
            }),
            params: point.workload_params.machine(opts.workload.params()),
        };
        // Every message of the point has its size and the workload its depth, and the
        // peer is told the same (`PeerSpec::spec`): a transport may size its buffers
        // to them.
        let mut transport = transport;
        transport.size_for(spec.traffic());
        if point.zero_copy && !transport.zero_copy() {
            return Err(RunError::Config(crate::transports::no_zero_copy(
                &point.transport,
            )));
        }
        let cpus = allowed_cpus();
        let session = match &opts.peer {
            PeerMode::Remote(target) => {
                crate::remote::crosses_hosts(&point.transport).map_err(RunError::Config)?;
                Some(
                    target
                        .connect()
                        .map_err(|e| RunError::Participant(e.to_string()))?,
                )
            }
            _ => None,
        };
        let mut peers = Vec::with_capacity(point.channels);
        for channel in 0..point.channels {
            let ps = PeerSpec {
                channel,
                transport: point.transport.clone(),
                transport_params: point.transport_params.machine(T::params()),
                spec: spec.clone(),
                // The agent's host has its own CPUs: pinning is this host's business.
                pin_cpu: (opts.pin && session.is_none()).then(|| pin_plan(channel, &cpus).1),
                plugin_sha256: crate::plugins::sha256_of(&point.transport),
            };
            peers.push(match &opts.peer {
                PeerMode::Thread => Peer::thread(ps),
                PeerMode::Remote(_) => {
                    Peer::remote(ps, session.as_ref().expect("connected above"))?
                }
                PeerMode::Process(program) => match source {
                    Some(src) => Peer::process(ps, &src.wrap_peer(program.clone()))?,
                    None => Peer::process(ps, program)?,
                },
            });
        }
        Ok(PeerRig {
            transport,
            spec,
            peers,
            opts: opts.clone(),
            cpus,
            session,
        })
    }
}

type DriverResult = (usize, Result<DriverOutcome, WorkloadError>);

impl<T: Transport + Clone> Rig for PeerRig<T> {
    fn chosen(&self) -> std::collections::BTreeMap<String, String> {
        self.transport
            .chosen()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    /// `main`, then `peerN` for each process peer.
    fn participants(&self) -> Vec<Participant> {
        let mut all = vec![Participant::main()];
        if matches!(self.opts.peer, PeerMode::Process(_)) {
            all.extend(self.peers.iter().map(|p| Participant {
                name: format!("peer{}", p.channel()),
                pid: p.pid(),
            }));
        }
        all
    }

    fn finish(self: Box<Self>) -> Result<(), RunError> {
        for p in self.peers {
            p.quit();
        }
        drop(self.session);
        Ok(())
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        let PeerRig {
            transport: t,
            spec,
            peers,
            opts,
            cpus,
            ..
        } = self;
        let endpoints = connect(t, peers)?;
        let remote = matches!(opts.peer, PeerMode::Remote(_));
        let drivers = Drivers::start(endpoints, spec, opts, cpus)?;
        ctl.window_started();
        let cpu_before = CpuSnapshot::now();
        drivers.barrier.wait();
        let outcomes = drivers.supervise(peers, ctl);
        let cpu_after = CpuSnapshot::now();
        ctl.window_ended();
        let outcomes = outcomes?;
        let (served, peer_cpu) = collect(peers)?;
        let main_role = match opts.peer {
            PeerMode::Thread => "main (drivers + thread peers)",
            PeerMode::Process(_) | PeerMode::Remote(_) => "main (drivers)",
        };
        let mut cpu = vec![cpu_before.until(&cpu_after, main_role, std::process::id())];
        cpu.extend(peer_cpu);
        let channels = outcomes
            .into_iter()
            .zip(&served)
            .map(|(d, s)| {
                if remote {
                    // Every stamp of the window from this host's clock.
                    let s = ServeOutcome {
                        end: d.end,
                        ..s.clone()
                    };
                    spec.workload.channel_outcome(spec.size, d, &s)
                } else {
                    spec.workload.channel_outcome(spec.size, d, s)
                }
            })
            .collect();
        Ok(RunRecord {
            counters: ctl.take_counters(),
            ..aggregate(channels, cpu)
        })
    }
}

/// Step 1 of a run: listens once per channel, hands each peer its address, waits
/// until every peer is connected and ready, and accepts its connection.
fn connect<T: Transport>(t: &T, peers: &mut [Peer]) -> Result<Vec<T::Endpoint>, RunError> {
    let mut listeners = Vec::with_capacity(peers.len());
    for (channel, peer) in peers.iter_mut().enumerate() {
        let l = t
            .listen()
            .map_err(|source| RunError::Transport { channel, source })?;
        peer.send(&PeerCommand::Run {
            address: l.address().to_string(),
        })?;
        listeners.push(l);
    }
    for peer in peers.iter_mut() {
        match peer.wait_reply("connect", PEER_TIMEOUT)? {
            PeerReply::Ready => {}
            other => {
                return Err(PeerError::Protocol {
                    channel: peer.channel(),
                    message: format!("expected ready, got {other:?}"),
                }
                .into());
            }
        }
    }
    let deadline = Instant::now() + PEER_TIMEOUT;
    let mut endpoints = Vec::with_capacity(listeners.len());
    for (channel, l) in listeners.into_iter().enumerate() {
        endpoints.push(
            l.accept(deadline)
                .map_err(|source| RunError::Transport { channel, source })?,
        );
    }
    Ok(endpoints)
}

/// The driver threads of one run, one per channel, waiting at `barrier` with the
/// supervising thread.
struct Drivers {
    n: usize,
    barrier: Arc<Barrier>,
    progress: Arc<Vec<AtomicU64>>,
    results: mpsc::Receiver<DriverResult>,
    /// Polled by the drivers; set by the supervisor on Ctrl-C or when it gives up on
    /// the run. Driver threads are detached, so a driver stuck in a transfer can
    /// never hang the tool; killing process peers unblocks them.
    halt: Arc<AtomicBool>,
    /// Set with `halt` when the supervisor gives up on the run (not on Ctrl-C, where
    /// drivers stop between messages): a driver waiting on a thread peer that will
    /// never answer stops waiting ([`Endpoint::abandon_when`]) and drops its end.
    abandon: Arc<AtomicBool>,
}

impl Drivers {
    /// Step 2: starts one driver thread per endpoint, pinned where `opts` says, each
    /// waiting at the barrier; an error if one could not be pinned.
    fn start<E: Endpoint + 'static>(
        endpoints: Vec<E>,
        spec: &ChannelSpec,
        opts: &PeerOptions,
        cpus: &[usize],
    ) -> Result<Drivers, RunError> {
        let n = endpoints.len();
        let (tx, results) = mpsc::channel::<DriverResult>();
        let drivers = Drivers {
            n,
            barrier: Arc::new(Barrier::new(n + 1)),
            progress: Arc::new((0..n).map(|_| AtomicU64::new(0)).collect()),
            results,
            halt: Arc::new(AtomicBool::new(false)),
            abandon: Arc::new(AtomicBool::new(false)),
        };
        // Remote peers stamp the end of a stream on another host's clock: the driver
        // stamps it here instead, when the peer closes its end after the last message.
        let remote = matches!(opts.peer, PeerMode::Remote(_));
        let stamp_close = remote && spec.workload == WorkloadKind::Stream;
        let (pin_tx, pin_rx) = mpsc::channel::<Result<(), RunError>>();
        // A process's first trip clock calibrates the time-stamp counter (up to 200
        // ms): done here, before any channel is released, never inside a window.
        xferbench_probes::clock::TripClock::new();
        for (channel, mut ep) in endpoints.into_iter().enumerate() {
            let barrier = drivers.barrier.clone();
            let progress = drivers.progress.clone();
            let tx = tx.clone();
            let pin_tx = pin_tx.clone();
            let spec = spec.clone();
            let halt = drivers.halt.clone();
            ep.abandon_when(drivers.abandon.clone());
            let pin = opts.pin.then(|| pin_plan(channel, cpus).0);
            thread::Builder::new()
                .name(format!("driver-{channel}"))
                .spawn(move || {
                    let pinned = match pin {
                        Some(cpu) => {
                            pin_current_thread(cpu).map_err(|source| RunError::Pin { cpu, source })
                        }
                        None => Ok(()),
                    };
                    let _ = pin_tx.send(pinned);
                    barrier.wait();
                    if halt.load(Ordering::Relaxed) {
                        return;
                    }
                    let ctl = Control {
                        stop: &halt,
                        progress: &progress[channel],
                    };
                    let mut r = drive(&mut ep, &spec, &ctl);
                    if stamp_close && let Ok(o) = &mut r {
                        let mut buf =
                            xferbench_transports::buffer::PageBuf::zeroed(spec.size.max(1));
                        while let Ok(Recv::Message) = ep.recv(&mut buf) {}
                        o.end = Stamp::now();
                    }
                    drop(ep);
                    let _ = tx.send((channel, r));
                })
                .expect("spawning a driver thread");
        }
        drop(tx);
        drop(pin_tx);
        let mut pin_error = None;
        for r in pin_rx.iter().take(n) {
            if let Err(e) = r {
                pin_error.get_or_insert(e);
            }
        }
        if let Some(e) = pin_error {
            drivers.halt.store(true, Ordering::Relaxed);
            drivers.barrier.wait();
            return Err(e);
        }
        Ok(drivers)
    }

    /// Stops the drivers and kills the peers, whose deaths unblock them.
    fn give_up(&self, peers: &mut [Peer]) {
        self.halt.store(true, Ordering::Relaxed);
        self.abandon.store(true, Ordering::Relaxed);
        peers.iter_mut().for_each(Peer::kill);
    }

    /// Step 3, once the drivers are released: watches them until each has reported.
    /// A peer that dies, a channel that makes no progress for the hang timeout, or a
    /// Ctrl-C ends the run with an error.
    fn supervise(
        self,
        peers: &mut [Peer],
        ctl: &RunControl<'_>,
    ) -> Result<Vec<DriverOutcome>, RunError> {
        let n = self.n;
        let mut outcomes: Vec<Option<DriverOutcome>> = (0..n).map(|_| None).collect();
        let mut first_error: Option<RunError> = None;
        let mut last_total = 0u64;
        let mut last_change = xferbench_probes::clock::Watchdog::start();
        let mut done = 0;
        while done < n {
            match self.results.recv_timeout(Duration::from_millis(50)) {
                Ok((channel, Ok(o))) => {
                    outcomes[channel] = Some(o);
                    done += 1;
                }
                Ok((channel, Err(e))) => {
                    done += 1;
                    if first_error.is_none() {
                        // A driver error is usually the symptom of a dead peer: prefer
                        // the peer's own story when there is one.
                        let death = peers
                            .iter_mut()
                            .find_map(|p| p.exited_within(Duration::from_millis(300)));
                        first_error = Some(match death {
                            Some(d) => with_calls(d, peers),
                            None => RunError::Workload {
                                channel,
                                source: e,
                                calls: calls_in_flight(peers),
                            },
                        });
                        self.give_up(peers);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if ctl.stop.load(Ordering::Relaxed) {
                        self.halt.store(true, Ordering::Relaxed);
                    }
                    if first_error.is_some() {
                        // Peers are killed; drivers unblock on their own. Do not wait long.
                        if last_change.elapsed() > Duration::from_secs(2) {
                            break;
                        }
                        continue;
                    }
                    if let Some(e) = peers.iter_mut().find_map(Peer::exited) {
                        first_error = Some(with_calls(e, peers));
                        self.give_up(peers);
                        last_change.restart();
                        continue;
                    }
                    let total: u64 = self
                        .progress
                        .iter()
                        .map(|p| p.load(Ordering::Relaxed))
                        .sum();
                    if total != last_total {
                        last_total = total;
                        last_change.restart();
                    } else if last_change.elapsed() >= ctl.hang_timeout {
                        let channel = self
                            .progress
                            .iter()
                            .enumerate()
                            .min_by_key(|(_, p)| p.load(Ordering::Relaxed))
                            .map_or(0, |(i, _)| i);
                        first_error = Some(RunError::Hung {
                            channel,
                            secs: ctl.hang_timeout.as_secs(),
                            calls: calls_in_flight(peers),
                        });
                        self.give_up(peers);
                        last_change.restart();
                    }
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        if ctl.stop.load(Ordering::Relaxed) || outcomes.iter().flatten().any(|o| o.stopped) {
            return Err(RunError::Interrupted);
        }
        Ok(outcomes
            .into_iter()
            .map(|o| o.expect("every driver reported"))
            .collect())
    }
}

/// Step 4: what the peers measured, and the CPU each process peer used.
fn collect(peers: &mut [Peer]) -> Result<(Vec<ServeOutcome>, Vec<ProcessCpu>), RunError> {
    let mut served = Vec::with_capacity(peers.len());
    let mut peer_cpu = Vec::new();
    for peer in peers.iter_mut() {
        match peer.wait_reply("finish", PEER_TIMEOUT)? {
            PeerReply::Done { outcome, cpu } => {
                served.push(outcome);
                if let Some(mut c) = cpu {
                    c.pid = peer.pid();
                    peer_cpu.push(c);
                }
            }
            other => {
                return Err(PeerError::Protocol {
                    channel: peer.channel(),
                    message: format!("expected done, got {other:?}"),
                }
                .into());
            }
        }
    }
    Ok((served, peer_cpu))
}

/// The plugin calls this process's threads (the drivers, thread peers) and each
/// process peer are in, in words for a hang's report: `; in plugin calls: recv of
/// message 12 (this process); send of message 13 (the peer of channel 0)`, or empty
/// when no plugin call is in flight anywhere.
fn calls_in_flight(peers: &mut [Peer]) -> String {
    let mut parts: Vec<String> = xferbench_transports::plugin::in_flight::describe()
        .iter()
        .map(|c| format!("{c} (this process)"))
        .collect();
    for p in peers.iter_mut() {
        let channel = p.channel();
        for c in p.calls_in_flight().unwrap_or_default() {
            parts.push(format!("{c} (the peer of channel {channel})"));
        }
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; in plugin calls: {}", parts.join("; "))
    }
}

/// A peer's failure, with the plugin calls in flight elsewhere when it reported one
/// itself (a receive that timed out while this process's sender hung in a plugin's
/// `send`); a peer that died says in its own stderr what call it died in.
fn with_calls(e: PeerError, peers: &mut [Peer]) -> RunError {
    match e {
        PeerError::Failed { channel, message } => PeerError::Failed {
            channel,
            message: message + &calls_in_flight(peers),
        }
        .into(),
        e => e.into(),
    }
}
