//! The RPMsg rig: one link and its remote per visit, N channels multiplexed over it,
//! one driver thread per channel doing write → read round trips
//! ([`crate::workload::rpmsg`]).
//!
//! # The remote
//!
//! A [`Session`] starts the remote once per link: in a re-executed copy of the binary
//! in its [`Role::RpmsgRemote`], given the region address (the firmware on its own core;
//! `PR_SET_PDEATHSIG`, its own process group) or, for tests, in a thread. A remote
//! that dies is noticed by the host's bounded waits (`kill(pid, 0)` every 10 ms of
//! silence) and reported with its exit status and the tail of its stderr, as a
//! failed participant ([`RunError::Participant`]); the region is a sealed memfd whose
//! creator's descriptor was closed when the remote attached, so nothing is left behind.
//!
//! # Figures
//!
//! Besides [`aggregate`]'s (one channel outcome per channel: round trips as
//! messages, CPU of this process then of the whole remote process), every run
//! records the original's sum of per-channel rates, kicks per round trip in each
//! direction, link faults and dropped replies (names in [`crate::workload::rpmsg`]).

use super::{ChannelOutcome, Rig, RunControl, RunError, aggregate};
use crate::plan::{Bench, PlannedPoint};
use crate::result::RunRecord;
use crate::workload::rpmsg::{
    ChannelDrive, DROPPED_REPLIES, DriveError, KICKS_TO_HOST, KICKS_TO_REMOTE, LINK_FAULTS,
    RpmsgPoint, SUM_OF_RATES, drive,
};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use xferbench_probes::counters::{CounterSource, Participant};
use xferbench_probes::cpu::{CpuSnapshot, ProcessCpu};
use xferbench_probes::process::{Child, Launcher, Role, Streams, Supervised};
use xferbench_transports::rpmsg::{Channel, HostLink, RemoteLink, Service};

/// Where the remote runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteKind {
    /// A thread of this process (tests).
    Thread,
    /// A process: the launcher's [`Role::RpmsgRemote`] with the region name appended.
    Process(Launcher),
}

enum RemoteHandle {
    Thread(Option<std::thread::JoinHandle<Result<(), String>>>),
    Process(Child),
}

/// Notifications and rejected input so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LinkCounters {
    kicks_to_remote: u64,
    kicks_to_host: u64,
    faults: u64,
    dropped: u64,
}

/// A link with its remote running, ready for runs.
pub struct Session {
    link: HostLink,
    channels: Vec<Channel>,
    remote: RemoteHandle,
    remote_pid: i32,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("link", &self.link)
            .field("remote_pid", &self.remote_pid)
            .finish()
    }
}

fn failed(what: &str, e: impl std::fmt::Display) -> RunError {
    RunError::Participant(format!("{what}: {e}"))
}

impl Session {
    /// Creates the link, starts the remote and waits until it attached.
    pub fn start(
        point: &RpmsgPoint,
        remote: &RemoteKind,
        pin: Option<usize>,
    ) -> Result<Session, RunError> {
        point.check().map_err(RunError::Config)?;
        let mut link = HostLink::create(&point.link_config(Service::Echo))
            .map_err(|e| failed("cannot create the RPMsg link", e))?;
        let name = link.name().expect("a new link has a name");
        tracing::info!(
            region = %name,
            channels = point.channels,
            "created the RPMsg link"
        );
        let mut handle = match remote {
            RemoteKind::Thread => {
                let h = std::thread::Builder::new()
                    .name("rpmsg-remote".into())
                    .spawn(move || {
                        if let Some(cpu) = pin {
                            xferbench_probes::affinity::pin_current_thread(cpu)
                                .map_err(|e| format!("cannot pin the remote to CPU {cpu}: {e}"))?;
                        }
                        let mut r = RemoteLink::attach(&name).map_err(|e| e.to_string())?;
                        r.serve().map(|_| ()).map_err(|e| e.to_string())
                    })
                    .expect("spawning a thread");
                RemoteHandle::Thread(Some(h))
            }
            RemoteKind::Process(launcher) => {
                let child = launcher
                    .spawn(Role::RpmsgRemote, [&name], Streams::QUIET)
                    .map_err(|e| failed("could not start the rpmsg remote", e))?;
                tracing::info!(pid = child.pid(), "started the rpmsg remote process");
                RemoteHandle::Process(child)
            }
        };
        let attached = link.wait_attached(Duration::from_secs(10), || match &mut handle {
            RemoteHandle::Thread(h) => {
                if h.as_ref().is_some_and(|h| h.is_finished()) {
                    let r = h.take().expect("checked").join();
                    Err(format!("the remote thread ended: {r:?}"))
                } else {
                    Ok(())
                }
            }
            RemoteHandle::Process(child) => match child.exited() {
                Some(e) => Err(format!("before attaching, the rpmsg remote {e}")),
                None => Ok(()),
            },
        });
        match &attached {
            Ok(()) => tracing::info!(remote_pid = link.remote_pid(), "the rpmsg remote attached"),
            Err(e) => tracing::warn!(error = %e, "the rpmsg remote did not attach"),
        }
        let mut s = Session {
            channels: link.take_channels(),
            remote_pid: link.remote_pid(),
            link,
            remote: handle,
        };
        if let Err(e) = attached {
            s.kill_remote();
            return Err(failed("the RPMsg link", e));
        }
        if let (Some(cpu), RemoteHandle::Process(child)) = (pin, &s.remote)
            && let Err(e) = xferbench_probes::affinity::pin_process(child.pid(), cpu)
        {
            s.kill_remote();
            return Err(failed(
                &format!("cannot pin the rpmsg remote to CPU {cpu}"),
                e,
            ));
        }
        Ok(s)
    }

    /// The remote's process id (this process's for a thread remote).
    pub fn remote_pid(&self) -> i32 {
        self.remote_pid
    }

    /// Whether the remote is a process of its own.
    pub fn remote_is_process(&self) -> bool {
        matches!(self.remote, RemoteHandle::Process(_))
    }

    fn kill_remote(&mut self) {
        if let RemoteHandle::Process(child) = &mut self.remote {
            child.kill();
        }
    }

    /// If the remote process died, how.
    fn remote_death(&mut self) -> Option<RunError> {
        match &mut self.remote {
            RemoteHandle::Process(child) => child
                .exited_within(Duration::from_millis(500))
                .map(|e| RunError::Participant(format!("the rpmsg remote {e}"))),
            RemoteHandle::Thread(_) => None,
        }
    }

    fn counters(&self) -> LinkCounters {
        let (kicks_to_remote, kicks_to_host) = self.link.kicks();
        LinkCounters {
            kicks_to_remote,
            kicks_to_host,
            // Counters in shared memory: a remote can write anything into them.
            faults: self
                .link
                .host_faults()
                .total()
                .saturating_add(self.link.remote_faults().total()),
            dropped: self.link.dropped(),
        }
    }

    /// Stops the remote and reaps it; reports a remote that failed.
    pub fn finish(mut self) -> Result<(), RunError> {
        tracing::debug!(remote_pid = self.remote_pid, "stopping the RPMsg link");
        self.link.stop();
        match &mut self.remote {
            RemoteHandle::Thread(h) => {
                if let Some(h) = h.take() {
                    match h.join() {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => return Err(failed("the rpmsg remote", e)),
                        Err(_) => return Err(failed("the rpmsg remote", "panicked")),
                    }
                }
            }
            RemoteHandle::Process(child) => match child.exited_within(Duration::from_secs(2)) {
                Some(e) if e.success() => {}
                Some(e) => return Err(RunError::Participant(format!("the rpmsg remote {e}"))),
                None => {
                    child.kill();
                }
            },
        }
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.link.stop();
        if let RemoteHandle::Process(child) = &mut self.remote {
            // The stopped link ends the remote; kill it if it does not end in time.
            if child.exited_within(Duration::from_millis(500)).is_none() {
                child.kill();
            }
        }
    }
}

/// One link and its remote, running one point.
#[derive(Debug)]
pub struct RpmsgRig {
    session: Option<Session>,
    point: RpmsgPoint,
    /// With `--pin`: the CPU of each channel's driver thread.
    driver_cpus: Option<Vec<usize>>,
}

impl RpmsgRig {
    /// Starts the link and its remote for `point`.
    pub fn start(point: RpmsgPoint, remote: &RemoteKind) -> Result<RpmsgRig, RunError> {
        RpmsgRig::start_pinned(point, remote, false)
    }

    /// Starts the link and its remote for `point`; with `pin`, as `run`'s peers are
    /// pinned (`--pin`): channel i's driver thread on the 2i-th allowed CPU, and the
    /// remote (the firmware's core, serving every channel) on the CPU after the
    /// first driver's.
    pub fn start_pinned(
        point: RpmsgPoint,
        remote: &RemoteKind,
        pin: bool,
    ) -> Result<RpmsgRig, RunError> {
        let cpus = xferbench_probes::affinity::allowed_cpus();
        let remote_cpu = pin.then(|| xferbench_probes::affinity::pin_plan(0, &cpus).1);
        let driver_cpus = pin.then(|| {
            (0..point.channels as usize)
                .map(|i| xferbench_probes::affinity::pin_plan(i, &cpus).0)
                .collect()
        });
        Ok(RpmsgRig {
            session: Some(Session::start(&point, remote, remote_cpu)?),
            point,
            driver_cpus,
        })
    }

    /// The CPUs of the remote's threads, as the system reports them (`None` for a
    /// thread remote).
    pub fn remote_cpus(&self) -> Option<Vec<usize>> {
        let s = self.session.as_ref().filter(|s| s.remote_is_process())?;
        xferbench_probes::affinity::cpus_of_thread(s.remote_pid() as u32).ok()
    }

    /// The remote's process id (this process's for a thread remote).
    pub fn remote_pid(&self) -> i32 {
        self.session.as_ref().map_or(0, Session::remote_pid)
    }
}

/// The one way to RPMsg rigs: a plan of RPMsg points, each started as an
/// [`RpmsgRig`] with the same remote and pinning. `xferbench rpmsg` runs one point of
/// it, the RPMsg study its plan, and `run -t rpmsg` hands its `rpmsg` points to one.
#[derive(Debug, Clone)]
pub struct RpmsgBench {
    planned: Vec<PlannedPoint>,
    points: Vec<RpmsgPoint>,
    remote: RemoteKind,
    pin: bool,
}

impl RpmsgBench {
    /// An empty plan whose links start their remote as `remote`; with `pin`, pinned
    /// as [`RpmsgRig::start_pinned`] pins them.
    pub fn new(remote: RemoteKind, pin: bool) -> RpmsgBench {
        RpmsgBench {
            planned: Vec::new(),
            points: Vec::new(),
            remote,
            pin,
        }
    }

    /// Appends a point: how it is planned (parameters, rules) and what its rig runs.
    /// Returns its index in this bench.
    pub fn push(&mut self, planned: PlannedPoint, point: RpmsgPoint) -> usize {
        self.planned.push(planned);
        self.points.push(point);
        self.points.len() - 1
    }

    /// The same bench with `points` appended.
    pub fn with(mut self, points: impl IntoIterator<Item = (PlannedPoint, RpmsgPoint)>) -> Self {
        for (planned, point) in points {
            self.push(planned, point);
        }
        self
    }
}

impl Bench for RpmsgBench {
    fn points(&self) -> &[PlannedPoint] {
        &self.planned
    }

    fn rig(
        &mut self,
        index: usize,
        _source: Option<&dyn CounterSource>,
    ) -> Result<Box<dyn Rig>, RunError> {
        Ok(Box::new(RpmsgRig::start_pinned(
            self.points[index],
            &self.remote,
            self.pin,
        )?))
    }
}

type Driven = Result<ChannelDrive, DriveError>;

impl Rig for RpmsgRig {
    /// `main`, then `remote` when it is a process.
    fn participants(&self) -> Vec<Participant> {
        let mut all = vec![Participant::main()];
        if let Some(s) = self.session.as_ref().filter(|s| s.remote_is_process()) {
            all.push(Participant {
                name: "remote".into(),
                pid: s.remote_pid() as u32,
            });
        }
        all
    }

    fn finish(mut self: Box<Self>) -> Result<(), RunError> {
        match self.session.take() {
            Some(s) => s.finish(),
            None => Ok(()),
        }
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        let point = self.point;
        let session = self
            .session
            .as_mut()
            .ok_or_else(|| failed("the RPMsg link", "already stopped"))?;
        let before = session.counters();
        let mut chans = std::mem::take(&mut session.channels);
        let remote_pid = session
            .remote_is_process()
            .then_some(session.remote_pid as u32);
        let driven = drive_channels(
            &mut chans,
            &point,
            self.driver_cpus.as_deref(),
            remote_pid,
            ctl,
        );
        session.channels = chans;
        let drives = succeeded(driven.results, session, ctl.stop)?;
        let after = session.counters();
        let round_trips: u64 = drives.iter().map(|d| d.round_trips).sum();
        let sum_of_rates: f64 = drives
            .iter()
            .map(|d| d.bytes as f64 * 1e9 / d.end.since(d.start).max(1) as f64)
            .sum();
        let channels = drives.into_iter().map(|d| outcome(d, &point)).collect();
        let mut cpu = vec![driven.main_cpu];
        cpu.extend(driven.remote_cpu);
        let mut rec = aggregate(channels, cpu);
        let per_rt = |x: u64| x as f64 / round_trips.max(1) as f64;
        for (name, v) in [
            (SUM_OF_RATES, sum_of_rates),
            (
                KICKS_TO_REMOTE,
                per_rt(after.kicks_to_remote.saturating_sub(before.kicks_to_remote)),
            ),
            (
                KICKS_TO_HOST,
                per_rt(after.kicks_to_host.saturating_sub(before.kicks_to_host)),
            ),
            (
                LINK_FAULTS,
                after.faults.saturating_sub(before.faults) as f64,
            ),
            (
                DROPPED_REPLIES,
                after.dropped.saturating_sub(before.dropped) as f64,
            ),
        ] {
            rec.figures.insert(name.to_string(), v);
        }
        rec.counters = ctl.take_counters();
        Ok(rec)
    }
}

/// What one window of all channels brought back.
struct DrivenChannels {
    results: Vec<Driven>,
    main_cpu: ProcessCpu,
    remote_cpu: Option<ProcessCpu>,
}

/// One window: a driver thread per channel (pinned where `driver_cpus` says),
/// released together at a barrier; Ctrl-C halts them. The CPU of this process and
/// of a remote process is taken around the window.
fn drive_channels(
    chans: &mut [Channel],
    point: &RpmsgPoint,
    driver_cpus: Option<&[usize]>,
    remote_pid: Option<u32>,
    ctl: &mut RunControl<'_>,
) -> DrivenChannels {
    let n = chans.len();
    let barrier = Barrier::new(n + 1);
    let halt = AtomicBool::new(false);
    let progress: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let reply_timeout = ctl.hang_timeout;
    let stop = ctl.stop;
    std::thread::scope(|scope| {
        let handles: Vec<_> = chans
            .iter_mut()
            .zip(&progress)
            .enumerate()
            .map(|(i, (ch, prog))| {
                let (barrier, halt) = (&barrier, &halt);
                let cpu = driver_cpus.and_then(|c| c.get(i).copied());
                scope.spawn(move || {
                    if let Some(cpu) = cpu
                        && let Err(e) = xferbench_probes::affinity::pin_current_thread(cpu)
                    {
                        tracing::warn!(channel = i, cpu, error = %e, "cannot pin the driver");
                    }
                    drive(
                        ch,
                        point,
                        || {
                            barrier.wait();
                        },
                        halt,
                        prog,
                        reply_timeout,
                    )
                })
            })
            .collect();
        ctl.window_started();
        let cpu0 = CpuSnapshot::now();
        let remote0 = remote_pid.and_then(CpuSnapshot::of_pid);
        barrier.wait();
        while !handles.iter().all(|h| h.is_finished()) {
            if stop.load(Ordering::Relaxed) {
                halt.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let remote1 = remote_pid.and_then(CpuSnapshot::of_pid);
        let cpu1 = CpuSnapshot::now();
        ctl.window_ended();
        let results: Vec<Driven> = handles
            .into_iter()
            .map(|h| h.join().expect("channel threads do not panic"))
            .collect();
        DrivenChannels {
            results,
            main_cpu: cpu0.until(&cpu1, "main (drivers)", std::process::id()),
            remote_cpu: match (remote0, remote1, remote_pid) {
                (Some(a), Some(b), Some(pid)) => Some(a.until(&b, "remote", pid)),
                _ => None,
            },
        }
    })
}

/// Every channel's drive, or why the window failed: the remote's death first, then
/// Ctrl-C, then the first channel's own error.
fn succeeded(
    results: Vec<Driven>,
    session: &mut Session,
    stop: &AtomicBool,
) -> Result<Vec<ChannelDrive>, RunError> {
    let mut drives = Vec::with_capacity(results.len());
    let mut first_err = None;
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Ok(d) => drives.push(d),
            Err(e) => {
                first_err.get_or_insert((i, e));
            }
        }
    }
    if let Some((channel, e)) = first_err {
        if let Some(d) = session.remote_death() {
            return Err(d);
        }
        if stop.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        return Err(match e {
            DriveError::Link(e) => RunError::Participant(format!("channel {channel}: {e}")),
            DriveError::Stopped => RunError::Interrupted,
        });
    }
    if stop.load(Ordering::Relaxed) {
        return Err(RunError::Interrupted);
    }
    Ok(drives)
}

/// A channel's drive as the point loop records it; paced, with its offered rate
/// over its schedule.
fn outcome(d: ChannelDrive, point: &RpmsgPoint) -> ChannelOutcome {
    ChannelOutcome {
        start: d.start,
        end: d.end,
        messages: d.round_trips,
        bytes: d.bytes,
        latency: Some(d.latency),
        integrity: d.integrity,
        schedule: point.pace_ns.map(|gap| crate::record::ScheduleOutcome {
            offered_per_s: 1e9 / gap as f64,
            lag: None,
            stalls: None,
            unsent: 0,
            lost: 0,
            span_ns: match point.limit {
                crate::workload::Limit::Duration(ns) => ns,
                crate::workload::Limit::Count(n) => n.saturating_mul(gap),
            },
        }),
    }
}

/// The body of the [`Role::RpmsgRemote`] process: attach to the region at `name` and
/// serve until stopped. Returns the exit code.
pub fn serve_remote(name: &str) -> i32 {
    xferbench_probes::process::die_with_parent();
    let mut r = match RemoteLink::attach(name) {
        Ok(r) => {
            tracing::info!(region = %name, pid = std::process::id(), "rpmsg remote attached");
            r
        }
        Err(e) => {
            eprintln!("rpmsg remote: region {name}: {e}");
            return 1;
        }
    };
    match r.serve() {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("rpmsg remote: region {name}: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::figure;
    use crate::workload::Limit;
    use xferbench_transports::rpmsg::{Buffers, Notify};

    fn point(channels: u32, packet: usize, round_trips: u64) -> RpmsgPoint {
        RpmsgPoint {
            channels,
            packet,
            limit: Limit::Count(round_trips),
            notify: Notify::Kick,
            buffers: Buffers::Copy,
            suffix: false,
            verify: false,
            zero_copy: false,
            pace_ns: None,
        }
    }

    fn run(rig: &mut RpmsgRig) -> Result<RunRecord, RunError> {
        let stop = AtomicBool::new(false);
        rig.run_once(&mut RunControl::new(&stop, Duration::from_secs(10), None))
    }

    #[test]
    fn pinned_runs_pin_the_drivers_and_the_remote() {
        let p = point(2, 64, RpmsgPoint::round_trips_for(4096, 64));
        let mut rig = RpmsgRig::start_pinned(p, &RemoteKind::Thread, true).unwrap();
        let cpus = xferbench_probes::affinity::allowed_cpus();
        assert_eq!(
            rig.driver_cpus.as_deref(),
            Some(
                &[
                    xferbench_probes::affinity::pin_plan(0, &cpus).0,
                    xferbench_probes::affinity::pin_plan(1, &cpus).0
                ][..]
            )
        );
        let r = run(&mut rig).unwrap();
        assert_eq!(r.channels.len(), 2);
        // The drivers are threads of their own: this thread keeps every CPU.
        assert_eq!(xferbench_probes::affinity::allowed_cpus(), cpus);
        Box::new(rig).finish().unwrap();
    }

    #[test]
    fn a_run_makes_the_round_trips_of_every_channel() {
        let p = point(3, 496, RpmsgPoint::round_trips_for(10_000, 496));
        let mut rig = RpmsgRig::start(p, &RemoteKind::Thread).unwrap();
        let r = run(&mut rig).unwrap();
        assert_eq!(r.channels.len(), 3);
        for c in &r.channels {
            assert_eq!(c.messages, 21); // ⌈10000 / 496⌉
            assert_eq!(c.bytes, 21 * 496);
        }
        assert_eq!(r.latency.as_ref().unwrap().count, 63);
        let f = |n: &str| r.figures[n];
        assert!(f(SUM_OF_RATES) >= f(figure::THROUGHPUT) * 0.999);
        assert!(f(figure::FAIRNESS) > 0.0 && f(figure::FAIRNESS) <= 1.0);
        assert!(f(KICKS_TO_REMOTE) > 0.0);
        assert_eq!(f(LINK_FAULTS), 0.0);
        assert_eq!(r.cpu.len(), 1, "a thread remote has no process of its own");
        assert_eq!(rig.participants().len(), 1);
        Box::new(rig).finish().unwrap();
    }

    #[test]
    fn suffixed_echoes_are_checked_to_be_the_packet_and_the_suffix() {
        // 16 B: the reply is 36 B; 480 B: cut at 496; 496 B: no room for the suffix.
        for (packet, buffers) in [
            (16, Buffers::Copy),
            (480, Buffers::Copy),
            (496, Buffers::Copy),
            (64, Buffers::ZeroCopy),
        ] {
            let p = RpmsgPoint {
                suffix: true,
                buffers,
                ..point(2, packet, 300)
            };
            let mut rig = RpmsgRig::start(p, &RemoteKind::Thread).unwrap();
            let r = run(&mut rig).unwrap();
            let i = r.integrity.unwrap();
            assert_eq!((i.checked, i.corrupt), (600, 0), "{packet} B {buffers:?}");
            Box::new(rig).finish().unwrap();
        }
        // The check fails a reply that is not the packet and the suffix.
        let mut c = crate::workload::rpmsg::SuffixCheck::new(4);
        c.check(b"abcd", b"abcd => echo from Core1\n");
        c.check(b"abcd", b"abce => echo from Core1\n");
        c.check(b"abcd", b"abcd");
        c.check_tail(b"xxxx => echo from Core1\n");
        c.check_tail(b"xxxx => echo from Core2\n");
        assert_eq!((c.checked, c.corrupt), (5, 3));
    }

    #[test]
    fn thirty_two_channels_verify_clean_in_every_mode() {
        for (notify, buffers) in [
            (Notify::Kick, Buffers::Copy),
            (Notify::EventIdx, Buffers::ZeroCopy),
        ] {
            let p = RpmsgPoint {
                verify: true,
                zero_copy: false,
                pace_ns: None,
                notify,
                buffers,
                ..point(32, 64, 300)
            };
            let mut rig = RpmsgRig::start(p, &RemoteKind::Thread).unwrap();
            let r = run(&mut rig).unwrap();
            let i = r.integrity.unwrap();
            assert_eq!(i.checked, 32 * 300);
            assert!(i.is_clean(), "{i:?}");
            assert_eq!(r.figures[LINK_FAULTS] + r.figures[DROPPED_REPLIES], 0.0);
            Box::new(rig).finish().unwrap();
        }
    }

    #[test]
    fn a_timed_run_stops_on_time() {
        let p = RpmsgPoint {
            limit: Limit::Duration(30_000_000),
            ..point(2, 16, 0)
        };
        let mut rig = RpmsgRig::start(p, &RemoteKind::Thread).unwrap();
        let r = run(&mut rig).unwrap();
        assert!(r.messages > 0);
        assert!(r.window_ns >= 30_000_000 && r.window_ns < 2_000_000_000);
        Box::new(rig).finish().unwrap();
    }

    #[test]
    fn bad_points_are_refused_with_the_reason() {
        let e = RpmsgRig::start(point(1, 497, 1), &RemoteKind::Thread).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("1 to 496"), "{e}");
        let p = RpmsgPoint {
            verify: true,
            zero_copy: false,
            pace_ns: None,
            ..point(1, 8, 1)
        };
        let e = RpmsgRig::start(p, &RemoteKind::Thread).unwrap_err();
        assert!(e.to_string().contains("at least 16"), "{e}");
    }
}
