//! The `rpmsg` workload: the semantics of `rpmsg-xmit-p` over an RPMsg link.
//!
//! One thread per channel; each loops `write(packet)` → `read(reply)` until it has
//! sent a given number of **bytes** (the original's `-t` is bytes per thread), so a
//! run of `t` bytes with `s`-byte packets makes `⌈t/s⌉` round trips per channel.
//!
//! # Two aggregates
//!
//! The original prints the **sum of per-thread rates** (each thread's bytes over its
//! own time). Threads that do not overlap (short runs, staggered starts) each see an
//! idle link, so the sum overstates what the link carried together — the 44 MB/s of
//! the original's 32-channel, 100-byte runs. We report that sum next to the
//! **aggregate over the common window**: all bytes over earliest start → latest end.
//!
//! # The remote
//!
//! A session starts the remote once per link: in a re-executed copy of the binary in
//! its [`Role::RpmsgRemote`], given the region name (the firmware on its own core;
//! `PR_SET_PDEATHSIG`, its own process group) or, for tests, in a thread. A remote that dies is noticed by
//! the host's bounded waits (`kill(pid, 0)` every 10 ms of silence) and reported with
//! its exit status and the tail of its stderr; its region name was unlinked when it
//! attached, so nothing is left in `/dev/shm`.

use crate::clock::Stamp;
use crate::cpu::CpuSnapshot;
use crate::process::{Child, Ended, Launcher, Role, SpawnError, Streams};
use crate::verify::{self, Integrity, Verifier};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use xferbench_transports::rpmsg::header::{Faults, MAX_PAYLOAD};
use xferbench_transports::rpmsg::{
    Buffers, Channel, HostLink, LinkConfig, LinkError, Notify, RemoteLink, Service,
};

/// How long one `recv` may wait for its reply before the run is declared hung.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the remote runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteKind {
    /// A thread of this process (tests).
    Thread,
    /// A process: the launcher's [`Role::RpmsgRemote`] with the region name appended.
    Process(Launcher),
}

/// One point of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RpmsgPoint {
    /// Channels (threads), each its own endpoint pair.
    pub channels: u32,
    /// Bytes per packet (1..=496).
    pub packet: usize,
    /// Bytes each thread sends (`-t`).
    pub transfer: u64,
    /// Notification mode name (`kick`, `event-idx`, `poll`).
    #[serde(with = "notify_name")]
    pub notify: Notify,
    /// Buffer mode (`copy` or `zero-copy`).
    #[serde(with = "buffers_name")]
    pub buffers: Buffers,
    /// Whether replies carry the firmware's suffix.
    pub suffix: bool,
    /// Whether payloads are stamped and checked (needs packets ≥ 16 bytes).
    pub verify: bool,
}

mod notify_name {
    use super::Notify;
    pub fn serialize<S: serde::Serializer>(n: &Notify, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(n.name())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Notify, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        Notify::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("notify {s:?}")))
    }
}

mod buffers_name {
    use super::Buffers;
    pub fn serialize<S: serde::Serializer>(b: &Buffers, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(b.name())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Buffers, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        Buffers::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| serde::de::Error::custom(format!("buffers {s:?}")))
    }
}

impl RpmsgPoint {
    /// Round trips each channel makes: ⌈transfer / packet⌉.
    pub fn round_trips(&self) -> u64 {
        self.transfer.div_ceil(self.packet as u64)
    }

    fn check(&self) -> Result<(), RpmsgError> {
        if self.packet == 0 || self.packet > MAX_PAYLOAD {
            return Err(RpmsgError::Config(format!(
                "packet size {} must be 1 to {MAX_PAYLOAD} bytes",
                self.packet
            )));
        }
        if self.verify && self.packet < verify::HEADER_LEN {
            return Err(RpmsgError::Config(format!(
                "--verify needs packets of at least {} bytes",
                verify::HEADER_LEN
            )));
        }
        if self.verify && self.suffix {
            return Err(RpmsgError::Config(
                "--verify cannot check replies that carry the echo suffix".into(),
            ));
        }
        if self.transfer == 0 {
            return Err(RpmsgError::Config(
                "transfer size must be at least 1 byte".into(),
            ));
        }
        Ok(())
    }
}

/// One channel's figures for one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelFigures {
    /// Channel number.
    pub channel: usize,
    /// Payload bytes sent.
    pub bytes: u64,
    /// Round trips completed.
    pub round_trips: u64,
    /// First send.
    pub start: Stamp,
    /// Last reply.
    pub end: Stamp,
    /// Bytes per second over the channel's own window.
    pub bytes_per_s: f64,
    /// What `--verify` found in the replies.
    pub integrity: Option<Integrity>,
}

/// Round-trip latency percentiles, nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RoundTrip {
    /// Round trips recorded.
    pub count: u64,
    /// Mean.
    pub mean_ns: f64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

/// Notifications and rejected input over a run (deltas).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkCounters {
    /// Kicks host → remote.
    pub kicks_to_remote: u64,
    /// Kicks remote → host.
    pub kicks_to_host: u64,
    /// Faults the host rejected.
    pub host_faults: u64,
    /// Faults the remote rejected.
    pub remote_faults: u64,
    /// Replies dropped for a full mailbox.
    pub dropped: u64,
}

/// One run of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    /// Per channel.
    pub channels: Vec<ChannelFigures>,
    /// Earliest start → latest end, nanoseconds.
    pub window_ns: u64,
    /// All bytes over the common window.
    pub aggregate_bytes_per_s: f64,
    /// The original's figure: the sum of per-channel rates.
    pub sum_of_rates_bytes_per_s: f64,
    /// All round trips over the common window.
    pub round_trips_per_s: f64,
    /// Jain's fairness index over per-channel rates.
    pub jain: f64,
    /// Round-trip latency over all channels.
    pub latency: RoundTrip,
    /// CPUs the host process used over the window (all its threads).
    pub host_cpus: f64,
    /// CPUs the remote process used (from `/proc/PID/schedstat`; none for a thread).
    pub remote_cpus: Option<f64>,
    /// Notifications and faults.
    pub counters: LinkCounters,
    /// Merged `--verify` counters.
    pub integrity: Option<Integrity>,
}

/// Why a session or run failed.
#[derive(Debug, thiserror::Error)]
pub enum RpmsgError {
    /// The link failed.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// Bad configuration.
    #[error("{0}")]
    Config(String),
    /// The remote process could not be started.
    #[error("could not start the rpmsg remote")]
    Spawn(#[source] SpawnError),
    /// The remote process died.
    #[error("the rpmsg remote {0}")]
    RemoteDied(Ended),
    /// Ctrl-C.
    #[error("interrupted")]
    Interrupted,
}

enum RemoteHandle {
    Thread(Option<std::thread::JoinHandle<Result<(), String>>>),
    Process(Child),
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

impl Session {
    /// Creates the link, starts the remote and waits until it attached.
    pub fn start(cfg: &LinkConfig, remote: &RemoteKind) -> Result<Session, RpmsgError> {
        let mut link = HostLink::create(cfg)?;
        let name = link.name().expect("a new link has a name");
        let mut handle = match remote {
            RemoteKind::Thread => {
                let h = std::thread::Builder::new()
                    .name("rpmsg-remote".into())
                    .spawn(move || {
                        let mut r = RemoteLink::attach(&name).map_err(|e| e.to_string())?;
                        r.serve().map(|_| ()).map_err(|e| e.to_string())
                    })
                    .expect("spawning a thread");
                RemoteHandle::Thread(Some(h))
            }
            RemoteKind::Process(launcher) => RemoteHandle::Process(
                launcher
                    .spawn(Role::RpmsgRemote, [&name], Streams::QUIET)
                    .map_err(RpmsgError::Spawn)?,
            ),
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
        let mut s = Session {
            channels: link.take_channels(),
            remote_pid: link.remote_pid(),
            link,
            remote: handle,
        };
        if let Err(e) = attached {
            s.kill_remote();
            return Err(e.into());
        }
        Ok(s)
    }

    /// The remote's process id (this process's for a thread remote).
    pub fn remote_pid(&self) -> i32 {
        self.remote_pid
    }

    fn kill_remote(&mut self) {
        if let RemoteHandle::Process(child) = &mut self.remote {
            child.kill();
        }
    }

    /// If the remote process died, how.
    fn remote_death(&mut self) -> Option<RpmsgError> {
        match &mut self.remote {
            RemoteHandle::Process(child) => child
                .exited_within(Duration::from_millis(500))
                .map(RpmsgError::RemoteDied),
            RemoteHandle::Thread(_) => None,
        }
    }

    fn counters(&self) -> LinkCounters {
        let (kicks_to_remote, kicks_to_host) = self.link.kicks();
        LinkCounters {
            kicks_to_remote,
            kicks_to_host,
            host_faults: self.link.host_faults().total(),
            remote_faults: self.link.remote_faults().total(),
            dropped: self.link.dropped(),
        }
    }

    /// Faults seen so far: (host, remote).
    pub fn faults(&self) -> (Faults, Faults) {
        (self.link.host_faults(), self.link.remote_faults())
    }

    /// One run of `point` on this session's link (its channel count must match).
    pub fn run(&mut self, point: &RpmsgPoint, stop: &AtomicBool) -> Result<RunFigures, RpmsgError> {
        point.check()?;
        if point.channels as usize != self.channels.len() {
            return Err(RpmsgError::Config(format!(
                "the link has {} channels, the point {}",
                self.channels.len(),
                point.channels
            )));
        }
        let before = self.counters();
        let remote_pid = self.remote_pid;
        let n = self.channels.len();
        let barrier = Barrier::new(n + 1);
        let halt = AtomicBool::new(false);
        let mut chans = std::mem::take(&mut self.channels);
        let (results, cpu, window) = std::thread::scope(|scope| {
            let handles: Vec<_> = chans
                .iter_mut()
                .map(|ch| {
                    let barrier = &barrier;
                    let halt = &halt;
                    scope.spawn(move || drive(ch, point, barrier, halt, stop))
                })
                .collect();
            barrier.wait();
            let cpu0 = CpuSnapshot::now();
            let remote0 = remote_cpu_ns(remote_pid);
            let results: Vec<_> = handles
                .into_iter()
                .map(|h| h.join().expect("channel threads do not panic"))
                .collect();
            let remote1 = remote_cpu_ns(remote_pid);
            let cpu1 = CpuSnapshot::now();
            (results, (cpu0, cpu1), (remote0, remote1))
        });
        self.channels = chans;
        let mut figures = Vec::with_capacity(n);
        let mut hist = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3)
            .expect("valid histogram bounds");
        let mut first_err = None;
        for r in results {
            match r {
                Ok((f, h)) => {
                    let _ = hist.add(&h);
                    figures.push(f);
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_err {
            if let Some(d) = self.remote_death() {
                return Err(d);
            }
            if matches!(e, RpmsgError::Interrupted) || stop.load(Ordering::Relaxed) {
                return Err(RpmsgError::Interrupted);
            }
            return Err(e);
        }
        let start = figures.iter().map(|f| f.start).min().expect("≥ 1 channel");
        let end = figures.iter().map(|f| f.end).max().expect("≥ 1 channel");
        let window_ns = end.since(start).max(1);
        let bytes: u64 = figures.iter().map(|f| f.bytes).sum();
        let rts: u64 = figures.iter().map(|f| f.round_trips).sum();
        let rates: Vec<f64> = figures.iter().map(|f| f.bytes_per_s).collect();
        let host = cpu.0.until(&cpu.1, "host", std::process::id());
        let remote_cpus = match window {
            (Some(a), Some(b)) if self.remote_pid as u32 != std::process::id() => {
                Some(b.saturating_sub(a) as f64 / host.window_s.max(1e-9) / 1e9)
            }
            _ => None,
        };
        let after = self.counters();
        let integrity = point.verify.then(|| {
            let mut all = Integrity::default();
            for f in &figures {
                if let Some(i) = &f.integrity {
                    all.add(i);
                }
            }
            all
        });
        Ok(RunFigures {
            window_ns,
            aggregate_bytes_per_s: bytes as f64 * 1e9 / window_ns as f64,
            sum_of_rates_bytes_per_s: rates.iter().sum(),
            round_trips_per_s: rts as f64 * 1e9 / window_ns as f64,
            jain: crate::stats::jain_index(&rates).unwrap_or(1.0),
            latency: RoundTrip {
                count: hist.len(),
                mean_ns: hist.mean(),
                p50_ns: hist.value_at_quantile(0.5),
                p90_ns: hist.value_at_quantile(0.9),
                p99_ns: hist.value_at_quantile(0.99),
                max_ns: hist.max(),
            },
            host_cpus: host.cpus_utilised,
            remote_cpus,
            counters: LinkCounters {
                kicks_to_remote: after.kicks_to_remote - before.kicks_to_remote,
                kicks_to_host: after.kicks_to_host - before.kicks_to_host,
                host_faults: after.host_faults - before.host_faults,
                remote_faults: after.remote_faults - before.remote_faults,
                dropped: after.dropped - before.dropped,
            },
            integrity,
            channels: figures,
        })
    }

    /// Stops the remote and reaps it; reports a remote that failed.
    pub fn finish(mut self) -> Result<(), RpmsgError> {
        self.link.stop();
        match &mut self.remote {
            RemoteHandle::Thread(h) => {
                if let Some(h) = h.take() {
                    match h.join() {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => return Err(RpmsgError::Config(format!("remote: {e}"))),
                        Err(_) => return Err(RpmsgError::Config("the remote panicked".into())),
                    }
                }
            }
            RemoteHandle::Process(child) => match child.exited_within(Duration::from_secs(2)) {
                Some(e) if e.success() => {}
                Some(e) => return Err(RpmsgError::RemoteDied(e)),
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

/// CPU time of a process's main thread so far, from `/proc/PID/schedstat` (ns).
fn remote_cpu_ns(pid: i32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
    s.split_whitespace().next()?.parse().ok()
}

type DriveResult = Result<(ChannelFigures, Histogram<u64>), RpmsgError>;

/// One channel's loop: write → read until `transfer` bytes were sent.
fn drive(
    ch: &mut Channel,
    p: &RpmsgPoint,
    barrier: &Barrier,
    halt: &AtomicBool,
    stop: &AtomicBool,
) -> DriveResult {
    let mut hist =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds");
    let mut scratch = [0u8; MAX_PAYLOAD];
    verify::fill_pattern(&mut scratch);
    let mut reply = [0u8; MAX_PAYLOAD];
    let mut verifier = p.verify.then(Verifier::new);
    ch.set_buffers(p.buffers);
    let packet = p.packet;
    let verify = p.verify;
    let mut sink = 0u64;
    barrier.wait();
    let start = Stamp::now();
    let mut t0 = Instant::now();
    let mut sent = 0u64;
    let mut seq = 0u64;
    let fail = |e: LinkError| {
        halt.store(true, Ordering::Relaxed);
        RpmsgError::Link(e)
    };
    while sent < p.transfer {
        if seq & 255 == 0 && (halt.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed)) {
            return Err(if stop.load(Ordering::Relaxed) {
                RpmsgError::Interrupted
            } else {
                RpmsgError::Config("another channel failed".into())
            });
        }
        let deadline = Some(t0 + REPLY_TIMEOUT);
        ch.send_with(
            packet,
            &mut scratch,
            |m| verify::stamp(m, seq, verify),
            deadline,
        )
        .map_err(fail)?;
        let n = ch.recv(&mut reply, deadline).map_err(fail)?;
        let t1 = Instant::now();
        let _ = hist.record(t1.duration_since(t0).as_nanos() as u64);
        t0 = t1;
        match &mut verifier {
            Some(v) => v.check(&reply[..n]),
            None => sink = sink.wrapping_add(verify::touch(&reply[..n])),
        }
        sent += packet as u64;
        seq += 1;
    }
    let end = Stamp::now();
    std::hint::black_box(sink);
    let ns = end.since(start).max(1);
    Ok((
        ChannelFigures {
            channel: ch.index(),
            bytes: sent,
            round_trips: seq,
            start,
            end,
            bytes_per_s: sent as f64 * 1e9 / ns as f64,
            integrity: verifier.map(|v| v.finish(Some(seq))),
        },
        hist,
    ))
}

/// The link configuration a point needs.
pub fn link_config(p: &RpmsgPoint, service: Service) -> LinkConfig {
    LinkConfig {
        num: 256,
        notify: p.notify,
        channels: p.channels,
        service,
        suffix: p.suffix,
    }
}

/// The body of the [`Role::RpmsgRemote`] process: attach to the region `name` and
/// serve until stopped. Returns the exit code.
pub fn serve_remote(name: &str) -> i32 {
    crate::process::die_with_parent();
    let mut r = match RemoteLink::attach(name) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rpmsg remote: {e}");
            return 1;
        }
    };
    match r.serve() {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("rpmsg remote: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(channels: u32, packet: usize, transfer: u64) -> RpmsgPoint {
        RpmsgPoint {
            channels,
            packet,
            transfer,
            notify: Notify::Kick,
            buffers: Buffers::Copy,
            suffix: false,
            verify: false,
        }
    }

    #[test]
    fn a_run_sends_transfer_bytes_per_channel_in_whole_packets() {
        let stop = AtomicBool::new(false);
        let p = point(3, 496, 10_000);
        let mut s = Session::start(&link_config(&p, Service::Echo), &RemoteKind::Thread).unwrap();
        let r = s.run(&p, &stop).unwrap();
        assert_eq!(r.channels.len(), 3);
        for c in &r.channels {
            assert_eq!(c.round_trips, 21); // ⌈10000 / 496⌉
            assert_eq!(c.bytes, 21 * 496);
        }
        assert_eq!(r.latency.count, 63);
        assert!(r.sum_of_rates_bytes_per_s >= r.aggregate_bytes_per_s * 0.999);
        assert!(r.jain > 0.0 && r.jain <= 1.0);
        assert!(r.remote_cpus.is_none());
        s.finish().unwrap();
    }

    #[test]
    fn thirty_two_channels_verify_clean_in_every_mode() {
        let stop = AtomicBool::new(false);
        for (notify, buffers) in [
            (Notify::Kick, Buffers::Copy),
            (Notify::EventIdx, Buffers::ZeroCopy),
        ] {
            let p = RpmsgPoint {
                verify: true,
                notify,
                buffers,
                ..point(32, 64, 64 * 300)
            };
            let mut s =
                Session::start(&link_config(&p, Service::Echo), &RemoteKind::Thread).unwrap();
            let r = s.run(&p, &stop).unwrap();
            let i = r.integrity.unwrap();
            assert_eq!(i.checked, 32 * 300);
            assert!(i.is_clean(), "{i:?}");
            assert_eq!(r.counters.host_faults + r.counters.remote_faults, 0);
            s.finish().unwrap();
        }
    }

    #[test]
    fn bad_points_are_refused_with_the_reason() {
        let stop = AtomicBool::new(false);
        let p = point(1, 16, 100);
        let mut s = Session::start(&link_config(&p, Service::Echo), &RemoteKind::Thread).unwrap();
        let e = s.run(&point(1, 497, 100), &stop).unwrap_err();
        assert!(e.to_string().contains("1 to 496"), "{e}");
        let e = s
            .run(
                &RpmsgPoint {
                    verify: true,
                    ..point(1, 8, 100)
                },
                &stop,
            )
            .unwrap_err();
        assert!(e.to_string().contains("at least 16"), "{e}");
        let e = s.run(&point(2, 16, 100), &stop).unwrap_err();
        assert!(e.to_string().contains("1 channels"), "{e}");
        s.finish().unwrap();
    }
}
