//! Running one sweep point: start the peers, run the warm-up and measured runs, and
//! turn what every side measured into a [`PointResult`].
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
//! # Figures
//!
//! A channel's window runs from its driver's first message to its last delivery
//! (stream: the peer's end of stream; pingpong: the last reply). The *common window*
//! runs from the earliest start to the latest end over all channels; aggregate
//! throughput is total bytes over the common window, never a sum of per-channel rates.

use crate::affinity::{allowed_cpus, pin_current_thread};
use crate::clock::Stamp;
use crate::counters::{self, CounterMode, CounterSource, Participant, RunCounters};
use crate::cpu::{CpuSnapshot, ProcessCpu};
use crate::peer::{PEER_TIMEOUT, Peer, PeerCommand, PeerError, PeerReply, PeerSpec};
use crate::process::Launcher;
use crate::result::{ChannelRun, ChannelSummary, Latency, PointResult, RunRecord, figure};
use crate::stats::{Estimate, jain_index};
use crate::sweep::PointSpec;
use crate::transports::{TransportLookupError, WithTransport, dispatch};
use crate::verify::Integrity;
use crate::workload::{
    ChannelSpec, Control, DriverOutcome, Limit, ServeOutcome, WorkloadError, WorkloadKind, drive,
};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::thread;
use std::time::{Duration, Instant};
use xferbench_transports::{Listener, Transport, TransportError};

/// Where peers run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerMode {
    /// Threads of this process.
    Thread,
    /// Re-executed copies of the binary.
    Process(Launcher),
}

/// Run control shared by every point of a sweep.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The workload.
    pub workload: WorkloadKind,
    /// Measured runs per point.
    pub runs: usize,
    /// Discarded warm-up runs per point.
    pub warmup: usize,
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
    /// Fault injection for tests (see [`ChannelSpec::corrupt_every`]).
    pub corrupt_every: Option<u64>,
    /// Counters to record per participant (`--counters`).
    pub counters: CounterMode,
    /// Profile one participant of every point (`--profile`, `--profile-peer`).
    pub profile: Option<crate::profile::ProfileRequest>,
}

/// Why a point could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The transport name or a parameter was refused.
    #[error(transparent)]
    Lookup(#[from] TransportLookupError),
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

/// Progress within a point, for progress bars.
#[derive(Debug, Clone, Copy)]
pub struct RunProgress {
    /// Runs done (warm-up included).
    pub done: usize,
    /// Runs in all (warm-up included).
    pub total: usize,
}

/// CPUs for channel `i`: the driver on the 2i-th allowed CPU and its peer on the
/// (2i+1)-th, wrapping around; on two CPUs, drivers share one and peers the other.
fn pin_plan(i: usize, cpus: &[usize]) -> (usize, usize) {
    let n = cpus.len().max(1);
    (cpus[(2 * i) % n], cpus[(2 * i + 1) % n])
}

/// Measures one point.
pub fn run_point(
    index: usize,
    point: &PointSpec,
    opts: &RunOptions,
    stop: &AtomicBool,
    on_run: &mut dyn FnMut(RunProgress),
) -> Result<PointResult, RunError> {
    struct Go<'a> {
        index: usize,
        point: &'a PointSpec,
        opts: &'a RunOptions,
        stop: &'a AtomicBool,
        on_run: &'a mut dyn FnMut(RunProgress),
    }
    impl WithTransport for Go<'_> {
        type Output = Result<PointResult, RunError>;
        fn with<T: Transport + Clone>(self, t: T) -> Self::Output {
            run_point_with(
                &t,
                self.index,
                self.point,
                self.opts,
                self.stop,
                self.on_run,
            )
        }
    }
    dispatch(
        &point.transport,
        &point.transport_params,
        Go {
            index,
            point,
            opts,
            stop,
            on_run,
        },
    )?
}

fn run_point_with<T: Transport + Clone>(
    t: &T,
    index: usize,
    point: &PointSpec,
    opts: &RunOptions,
    stop: &AtomicBool,
    on_run: &mut dyn FnMut(RunProgress),
) -> Result<PointResult, RunError> {
    let spec = ChannelSpec {
        workload: opts.workload,
        size: point.size as usize,
        limit: opts.limit,
        verify: opts.verify,
        corrupt_every: opts.corrupt_every,
    };
    let cpus = allowed_cpus();
    let mut source = counters::source_for(opts.counters, crate::context::pmu_available());
    let mut peers = Vec::with_capacity(point.channels);
    for channel in 0..point.channels {
        let ps = PeerSpec {
            channel,
            transport: point.transport.clone(),
            transport_params: point.transport_params.clone(),
            spec: spec.clone(),
            pin_cpu: opts.pin.then(|| pin_plan(channel, &cpus).1),
        };
        peers.push(match &opts.peer {
            PeerMode::Thread => Peer::thread(ps),
            PeerMode::Process(program) => match &source {
                Some(src) => Peer::process(ps, &src.wrap_peer(program.clone()))?,
                None => Peer::process(ps, program)?,
            },
        });
    }
    let participants = participants(&peers, &opts.peer);
    let mut profiler = match &opts.profile {
        Some(req) => Some(start_profile(req, index, &participants)?),
        None => None,
    };
    let total = opts.warmup + opts.runs;
    let mut records = Vec::with_capacity(opts.runs);
    for r in 0..total {
        if stop.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        let probe = source.as_deref_mut().map(|s| (s, participants.as_slice()));
        let rec = run_once(t, &spec, &mut peers, opts, &cpus, stop, probe)?;
        if r >= opts.warmup {
            records.push(RunRecord {
                run: r - opts.warmup,
                ..rec
            });
        }
        on_run(RunProgress { done: r + 1, total });
    }
    if let Some(p) = profiler.as_mut() {
        p.stop()?;
    }
    for p in peers {
        p.quit();
    }
    let mut result = summarise(index, point, opts, records);
    if let Some(src) = source.as_deref_mut() {
        let per_run: Vec<RunCounters> = result
            .runs
            .iter()
            .filter_map(|r| r.counters.clone())
            .collect();
        result.counters = if per_run.is_empty() {
            src.point_finished(&participants, &mut result.warnings)
                .and_then(|c| {
                    counters::summarise(
                        &[c],
                        "the serving side of every run, warm-up included, averaged per run (simulated)",
                    )
                })
        } else {
            counters::summarise(&per_run, "the measured window of each run")
        };
    }
    Ok(result)
}

fn start_profile(
    req: &crate::profile::ProfileRequest,
    index: usize,
    participants: &[Participant],
) -> Result<crate::profile::perf_record::Attached, RunError> {
    let who = participants
        .iter()
        .find(|p| p.name == req.participant)
        .ok_or_else(|| crate::profile::ProfileError::UnknownParticipant {
            name: req.participant.clone(),
            known: participants
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let dir = req.point_dir(index);
    std::fs::create_dir_all(&dir).map_err(|source| crate::profile::ProfileError::Io {
        what: format!("creating {}", dir.display()),
        source,
    })?;
    Ok(crate::profile::perf_record::attach(
        who.pid,
        &dir.join("perf.data"),
    )?)
}

/// The participants of a point: `main`, then `peerN` for each process peer.
fn participants(peers: &[Peer], mode: &PeerMode) -> Vec<Participant> {
    let mut all = vec![Participant {
        name: "main".into(),
        pid: std::process::id(),
    }];
    if matches!(mode, PeerMode::Process(_)) {
        all.extend(peers.iter().map(|p| Participant {
            name: format!("peer{}", p.channel()),
            pid: p.pid(),
        }));
    }
    all
}

type DriverResult = (usize, Result<DriverOutcome, WorkloadError>);

fn run_once<T: Transport + Clone>(
    t: &T,
    spec: &ChannelSpec,
    peers: &mut [Peer],
    opts: &RunOptions,
    cpus: &[usize],
    stop: &AtomicBool,
    mut counters: Option<(&mut (dyn CounterSource + 'static), &[Participant])>,
) -> Result<RunRecord, RunError> {
    let n = peers.len();
    // 1. Listen, hand out addresses, wait until every peer is connected and ready.
    let mut listeners = Vec::with_capacity(n);
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
    let mut endpoints = Vec::with_capacity(n);
    for (channel, l) in listeners.into_iter().enumerate() {
        endpoints.push(
            l.accept(deadline)
                .map_err(|source| RunError::Transport { channel, source })?,
        );
    }

    // 2. Driver threads wait at one barrier with this thread.
    let barrier = Arc::new(Barrier::new(n + 1));
    let progress: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let (tx, rx) = mpsc::channel::<DriverResult>();
    // Drivers poll `halt`, which the supervisor sets on Ctrl-C (`stop`) or when it
    // gives up on the run. Driver threads are detached, so a driver stuck in a
    // transfer can never hang the tool; killing process peers unblocks them.
    let halt = Arc::new(AtomicBool::new(false));
    let (pin_tx, pin_rx) = mpsc::channel::<Result<(), RunError>>();
    for (channel, mut ep) in endpoints.into_iter().enumerate() {
        let barrier = barrier.clone();
        let progress = progress.clone();
        let tx = tx.clone();
        let pin_tx = pin_tx.clone();
        let spec = spec.clone();
        let halt = halt.clone();
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
                let r = drive(&mut ep, &spec, &ctl);
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
        halt.store(true, Ordering::Relaxed);
        barrier.wait();
        return Err(e);
    }

    // 3. Release, then supervise.
    if let Some((src, who)) = counters.as_mut() {
        src.window_started(who);
    }
    let cpu_before = CpuSnapshot::now();
    barrier.wait();
    let mut outcomes: Vec<Option<DriverOutcome>> = (0..n).map(|_| None).collect();
    let mut first_error: Option<RunError> = None;
    let mut last_total = 0u64;
    let mut last_change = Instant::now();
    let mut done = 0;
    while done < n {
        match rx.recv_timeout(Duration::from_millis(50)) {
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
                        Some(d) => d.into(),
                        None => RunError::Workload { channel, source: e },
                    });
                    halt.store(true, Ordering::Relaxed);
                    peers.iter_mut().for_each(Peer::kill);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if stop.load(Ordering::Relaxed) {
                    halt.store(true, Ordering::Relaxed);
                }
                if first_error.is_some() {
                    // Peers are killed; drivers unblock on their own. Do not wait long.
                    if last_change.elapsed() > Duration::from_secs(2) {
                        break;
                    }
                    continue;
                }
                if let Some(e) = peers.iter_mut().find_map(Peer::exited) {
                    first_error = Some(e.into());
                    halt.store(true, Ordering::Relaxed);
                    peers.iter_mut().for_each(Peer::kill);
                    last_change = Instant::now();
                    continue;
                }
                let total: u64 = progress.iter().map(|p| p.load(Ordering::Relaxed)).sum();
                if total != last_total {
                    last_total = total;
                    last_change = Instant::now();
                } else if last_change.elapsed() >= opts.hang_timeout {
                    let channel = progress
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, p)| p.load(Ordering::Relaxed))
                        .map_or(0, |(i, _)| i);
                    first_error = Some(RunError::Hung {
                        channel,
                        secs: opts.hang_timeout.as_secs(),
                    });
                    halt.store(true, Ordering::Relaxed);
                    peers.iter_mut().for_each(Peer::kill);
                    last_change = Instant::now();
                }
            }
        }
    }
    let cpu_after = CpuSnapshot::now();
    let run_counters = counters.and_then(|(src, _)| src.window_ended());
    if let Some(e) = first_error {
        return Err(e);
    }
    if stop.load(Ordering::Relaxed) || outcomes.iter().flatten().any(|o| o.stopped) {
        return Err(RunError::Interrupted);
    }
    let outcomes: Vec<DriverOutcome> = outcomes
        .into_iter()
        .map(|o| o.expect("every driver reported"))
        .collect();

    // 4. Collect what the peers measured.
    let mut served = Vec::with_capacity(n);
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
    let main_role = match opts.peer {
        PeerMode::Thread => "main (drivers + thread peers)",
        PeerMode::Process(_) => "main (drivers)",
    };
    let mut cpu = vec![cpu_before.until(&cpu_after, main_role, std::process::id())];
    cpu.extend(peer_cpu);
    Ok(RunRecord {
        counters: run_counters,
        ..build_record(spec, &outcomes, &served, cpu)
    })
}

pub(crate) fn latency_of(h: &Histogram<u64>) -> Latency {
    Latency {
        count: h.len(),
        p50_ns: h.value_at_quantile(0.50),
        p90_ns: h.value_at_quantile(0.90),
        p99_ns: h.value_at_quantile(0.99),
        p999_ns: h.value_at_quantile(0.999),
        min_ns: h.min(),
        max_ns: h.max(),
        mean_ns: h.mean(),
    }
}

fn build_record(
    spec: &ChannelSpec,
    drivers: &[DriverOutcome],
    served: &[ServeOutcome],
    cpu: Vec<ProcessCpu>,
) -> RunRecord {
    let size = spec.size as u64;
    let ends: Vec<(Stamp, Stamp, u64)> = drivers
        .iter()
        .zip(served)
        .map(|(d, s)| match spec.workload {
            WorkloadKind::Stream => (d.start, s.end.max(d.start), s.received),
            WorkloadKind::Pingpong => (d.start, d.end, d.sent),
        })
        .collect();
    let first = ends.iter().map(|e| e.0).min().unwrap_or(Stamp(0));
    let last = ends.iter().map(|e| e.1).max().unwrap_or(Stamp(0));
    let window_ns = last.since(first).max(1);
    let mut merged = crate::workload::pingpong::new_histogram();
    let mut integrity_total: Option<Integrity> = None;
    let mut channels = Vec::with_capacity(drivers.len());
    for (i, ((d, s), (start, end, messages))) in drivers.iter().zip(served).zip(&ends).enumerate() {
        let own = end.since(*start).max(1) as f64 / 1e9;
        let bytes = messages * size;
        let integrity = match spec.workload {
            WorkloadKind::Stream => s.integrity.map(|mut c| {
                // Messages the driver sent that never reached the verifier's count.
                c.lost += d.sent.saturating_sub(s.next_expected);
                c
            }),
            WorkloadKind::Pingpong => d.integrity,
        };
        if let Some(c) = &integrity {
            integrity_total
                .get_or_insert_with(Integrity::default)
                .add(c);
        }
        if let Some(h) = &d.latency {
            let _ = merged.add(h);
        }
        channels.push(ChannelRun {
            channel: i,
            start_offset_ns: start.since(first),
            end_offset_ns: end.since(first),
            messages: *messages,
            bytes,
            throughput_bytes_per_s: bytes as f64 / own,
            messages_per_s: *messages as f64 / own,
            latency: d.latency.as_ref().map(latency_of),
            integrity,
        });
    }
    let messages: u64 = channels.iter().map(|c| c.messages).sum();
    let bytes: u64 = channels.iter().map(|c| c.bytes).sum();
    let window_s = window_ns as f64 / 1e9;
    let mut figures = BTreeMap::new();
    figures.insert(figure::THROUGHPUT.to_string(), bytes as f64 / window_s);
    figures.insert(figure::MESSAGE_RATE.to_string(), messages as f64 / window_s);
    figures.insert(figure::WINDOW.to_string(), window_s);
    if channels.len() > 1 {
        let shares: Vec<f64> = channels.iter().map(|c| c.throughput_bytes_per_s).collect();
        if let Some(j) = jain_index(&shares) {
            figures.insert(figure::FAIRNESS.to_string(), j);
        }
    }
    let latency = (spec.workload == WorkloadKind::Pingpong && !merged.is_empty())
        .then(|| latency_of(&merged));
    if let Some(l) = &latency {
        for (name, v) in l.figures() {
            figures.insert(name.to_string(), v);
        }
    }
    if let Some(main) = cpu.first() {
        figures.insert(figure::CPU_MAIN.to_string(), main.cpus_utilised);
    }
    let peer_cpu_s: f64 = cpu.iter().skip(1).map(|c| c.user_s + c.sys_s).sum();
    if cpu.len() > 1 {
        figures.insert(figure::CPU_PEERS.to_string(), peer_cpu_s / window_s);
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
        window_ns,
        messages,
        bytes,
        figures,
        latency,
        channels,
        cpu,
        integrity: integrity_total,
        counters: None,
    }
}

/// Windows shorter than this make a noisy figure; the point gets a warning.
pub const SHORT_WINDOW_S: f64 = 0.01;

fn summarise(
    index: usize,
    point: &PointSpec,
    opts: &RunOptions,
    runs: Vec<RunRecord>,
) -> PointResult {
    let mut summary = BTreeMap::new();
    // The union over runs: a figure missing from one run (no messages, say) is still
    // summarised over the runs that have it.
    let names: std::collections::BTreeSet<String> = runs
        .iter()
        .flat_map(|r| r.figures.keys().cloned())
        .collect();
    for name in names {
        if let Some(e) =
            Estimate::from_values(runs.iter().filter_map(|r| r.figures.get(&name).copied()))
        {
            summary.insert(name, e);
        }
    }
    let per_channel = (0..point.channels)
        .filter_map(|c| {
            let rows: Vec<&ChannelRun> = runs.iter().filter_map(|r| r.channels.get(c)).collect();
            Some(ChannelSummary {
                channel: c,
                throughput_bytes_per_s: Estimate::from_values(
                    rows.iter().map(|r| r.throughput_bytes_per_s),
                )?,
                messages_per_s: Estimate::from_values(rows.iter().map(|r| r.messages_per_s))?,
                latency_p50_ns: Estimate::from_values(
                    rows.iter()
                        .filter_map(|r| r.latency.map(|l| l.p50_ns as f64)),
                ),
            })
        })
        .collect();
    let integrity = opts.verify.then(|| {
        let mut t = Integrity::default();
        runs.iter()
            .filter_map(|r| r.integrity.as_ref())
            .for_each(|c| t.add(c));
        t
    });
    let mut warnings = Vec::new();
    let primary = match opts.workload {
        WorkloadKind::Stream => figure::THROUGHPUT,
        WorkloadKind::Pingpong => figure::LATENCY[0],
    };
    if let Some(e) = summary.get(primary) {
        if e.is_noisy() {
            warnings.push(format!(
                "noisy: {primary} varies by ±{:.1} % (robust CV) over {} runs; use more --runs, --pin, or a quieter machine",
                e.rcv * 100.0,
                e.n
            ));
        }
    }
    if let Some(w) = summary.get(figure::WINDOW) {
        if w.median < SHORT_WINDOW_S {
            warnings.push(format!(
                "short runs: the median window is {:.2} ms; raise --count or use --duration for a stable figure",
                w.median * 1e3
            ));
        }
    }
    if let Some(c) = &integrity {
        if !c.is_clean() {
            warnings.push(format!(
                "integrity: {} lost, {} duplicated, {} reordered, {} corrupt of {} checked",
                c.lost, c.duplicated, c.reordered, c.corrupt, c.checked
            ));
        }
    }
    PointResult {
        index,
        params: point.params(opts.workload.name()),
        size_bytes: point.size,
        channels: point.channels,
        runs,
        summary,
        per_channel,
        integrity,
        warnings,
        counters: None,
    }
}
