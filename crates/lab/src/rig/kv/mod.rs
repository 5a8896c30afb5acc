//! The kv rig: a hash-table server (any architecture of
//! [`xferbench_transports::kv`], or a Redis server), its background "visitor"
//! clients, and a timed client run as a whole process, as `hyperfine -N` runs it.
//!
//! # Participants
//!
//! * `main`: this process (it only starts and times the others).
//! * `server`: the kv server, a process of [`Role::KvServer`] given a
//!   [`KvServerSpec`] (a thread of this process without a [`Launcher`], for tests),
//!   or `redis-server` on a Unix socket in a temporary directory, with no persistence.
//! * `visitor1…visitorB`: client processes of [`Role::KvClient`] with `outer = 0`,
//!   running the whole visit.
//! * The timed client: one process of [`Role::KvClient`] per timed run.
//!
//! # One visit, one run
//!
//! A visit starts the server and the visitors, waits until the visitors have been
//! served (at most 1 s, the original's `sleep 1`), and runs the discarded warm-up
//! runs of the timed client. [`Rig::run_once`] is one hyperfine invocation: timed
//! client processes one after another, each timed from spawn to `wait4` with its user
//! and system time from `wait4`'s rusage, until at least `min_runs` runs and
//! `min_time` have passed; a point slower than its budget (preopt with 16 visitors
//! on 2 CPUs) stops after [`MIN_SLOW_RUNS`] runs, and its warm-up after one run once a
//! quarter of the budget is spent. The record holds the mean, standard deviation, median,
//! minimum and maximum time per run, the mean user and system time per run, the timed
//! client's per-request latency, the **aggregate requests/s of all clients** (the
//! server's own count of served requests over the window: timed client and visitors;
//! for Redis, `total_commands_processed` of `INFO stats`), and the CPU of the server
//! and of every visitor over the window.
//!
//! That aggregate includes the timed client's start-up and exit, which dominate a short
//! client alone. With [`KvPoint::steady_ms`], each run then measures the **steady
//! aggregate** too: one more client (a visitor in all but name, standing in for the
//! timed client) starts, the rig waits until the server has served every running
//! client a few iterations' worth, and the server's count of served requests over the
//! next `steady_ms` divided by that window is [`figures::REQUESTS_PER_S_STEADY`]: the
//! request rate of all clients once all of them run, over one common window.
//!
//! # A collapse is a result
//!
//! A timed run may last at most [`KvPoint::run_limit`] (the budget, at least
//! [`HANG`]). A server so starved that the timed client cannot finish in it (the
//! seed's collapse, as ring does with 16 visitors and 16 workers on 2 loaded CPUs)
//! does not fail the point: the client stops where it is, the session ends, and the
//! record says so ([`RunRecord::collapsed`]: "the timed client completed N of M
//! requests in its 20 s limit"), with the figures it has: the requests and latency
//! of every run, times per run of the runs that finished, the aggregate and CPU. A
//! warm-up run cut short ends the warm-up.
//!
//! Every reply is checked: a mismatch of the timed client fails its run, and the
//! visitors' mismatches are reported when they are stopped ([`Rig::finish`]).
//!
//! [`client::KvClientRig`] is the other rig here: one client of a server already
//! running, in this process (`xferbench kv client`).

use super::{ChannelOutcome, Rig, RunControl, RunError, aggregate};
use crate::result::{Collapse, RunRecord};
use crate::workload::kv::{Backend, KvClientRun, KvClientSpec, run_client};
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use xferbench_probes::clock::Stamp;
use xferbench_probes::counters::Participant;
use xferbench_probes::cpu::{CpuSnapshot, ProcessCpu};
use xferbench_probes::process::{Child, Launcher, Role, Streams, Supervised};
use xferbench_probes::stats;
use xferbench_probes::verify::Integrity;
use xferbench_transports::kv::PrivateKey;

pub mod client;
mod server;
mod spec;

pub use server::redis_available;
use server::{RunningServer, start_server};
pub use spec::{
    BUCKETS, HANG, KvCpus, KvPoint, KvServerSpec, MIN_SLOW_RUNS, SERVER, ServerKind, Target,
    VISITORS, WORKERS,
};

/// Figures of a kv run, beside the common ones.
pub mod figures {
    /// Mean wall time of one timed client process, seconds.
    pub const TIME_MEAN_S: &str = "time_mean_s";
    /// Standard deviation of the time per run, seconds.
    pub const TIME_SD_S: &str = "time_sd_s";
    /// Median time per run, seconds.
    pub const TIME_MEDIAN_S: &str = "time_median_s";
    /// Shortest run, seconds.
    pub const TIME_MIN_S: &str = "time_min_s";
    /// Longest run, seconds.
    pub const TIME_MAX_S: &str = "time_max_s";
    /// Mean user CPU time per run, seconds.
    pub const USER_MEAN_S: &str = "user_mean_s";
    /// Mean system CPU time per run, seconds.
    pub const SYS_MEAN_S: &str = "sys_mean_s";
    /// Timed runs in the window that finished (a run cut short by the run limit, a
    /// collapse, is not counted).
    pub const TIMED_RUNS: &str = "timed_runs";
    /// Requests served to all clients (timed and visitors) per second of the window.
    pub const REQUESTS_PER_S_ALL: &str = "requests_per_s_all";
    /// The timed client's requests per second of its own running time (a run cut
    /// short included).
    pub const REQUESTS_PER_S_TIMED: &str = "requests_per_s_timed";
    /// CPU seconds of the server over the window.
    pub const SERVER_CPU_S: &str = "server_cpu_s";
    /// CPU seconds of all visitors over the window.
    pub const VISITORS_CPU_S: &str = "visitors_cpu_s";
    /// Requests served per second to all clients (the visitors and the timed client's
    /// stand-in) over a common window once all of them run ([`KvPoint::steady_ms`](super::KvPoint::steady_ms)).
    pub const REQUESTS_PER_S_STEADY: &str = "requests_per_s_steady";
    /// Clients running during the steady window (the visitors and the stand-in).
    pub const STEADY_CLIENTS: &str = "steady_clients";
}

enum Visitor {
    Process(Child),
    Thread {
        stop: Arc<AtomicBool>,
        handle: std::thread::JoinHandle<Result<KvClientRun, String>>,
    },
}

/// A running server, its visitors, and the timed client to run.
pub struct KvRig {
    point: KvPoint,
    /// The key of the rig's private server, which its clients present.
    key: PrivateKey,
    launcher: Option<Launcher>,
    server: Option<RunningServer>,
    visitors: Vec<Visitor>,
    /// A run of this visit collapsed: participants that then hang or fail to stop
    /// in time are its consequences, not failures of the point.
    collapsed: bool,
}

/// How a client asked to stop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    /// It left the server and reported a clean run.
    Left,
    /// It did not end within [`HANG`] of its stop and was killed: a server too
    /// starved to let it leave (a collapse).
    Overdue,
}

/// One timed run of the client: wall time, rusage, what it reported.
struct Timed {
    wall_s: f64,
    user_s: f64,
    sys_s: f64,
    run: KvClientRun,
}

/// The spec of the timed client, or of a visitor, running on `pin` when given. The
/// timed client stops at the point's run limit ([`KvPoint::run_limit`]); its own hang
/// timeout is longer, so that a starved server cuts the run short (a collapse) rather
/// than failing it.
fn client_spec(
    point: &KvPoint,
    backend: Backend,
    key: PrivateKey,
    visitor: bool,
    pin: Option<usize>,
) -> KvClientSpec {
    let limit = (!visitor).then(|| point.run_limit());
    KvClientSpec {
        backend,
        outer: if visitor { 0 } else { point.outer },
        inner: point.inner,
        seed: (!visitor).then_some(point.seed),
        hang_timeout_ms: (HANG + limit.unwrap_or_default()).as_millis() as u64,
        pin,
        limit_ms: limit.map(|l| l.as_millis() as u64),
        key: Some(key),
    }
}

impl KvRig {
    /// Requests the server has served so far (0 when it does not count them).
    fn served(&mut self) -> Result<u64, RunError> {
        Ok(self
            .server
            .as_mut()
            .map(|s| s.served())
            .transpose()?
            .unwrap_or(0))
    }

    /// The timed client's runs of one window: at least the point's `min_runs` and
    /// its `min_time`, at most `max_runs`, fewer past the budget when runs are slow;
    /// a run cut short by the run limit ends them.
    fn timed_runs(&mut self, ctl: &RunControl<'_>) -> Result<Vec<Timed>, RunError> {
        let started = Instant::now();
        let mut runs: Vec<Timed> = Vec::new();
        let min_time = Duration::from_millis(self.point.min_time_ms);
        let budget = Duration::from_millis(self.point.budget_ms);
        while runs.len() < self.point.max_runs.max(1)
            && (runs.len() < self.point.min_runs || started.elapsed() < min_time)
            && !(runs.len() >= MIN_SLOW_RUNS.min(self.point.min_runs)
                && started.elapsed() >= budget)
        {
            if ctl.stop.load(Ordering::Relaxed) {
                return Err(RunError::Interrupted);
            }
            let t = self.timed_run()?;
            let cut = t.run.timed_out;
            runs.push(t);
            if cut {
                break;
            }
        }
        Ok(runs)
    }

    /// The server and the visitor processes are still well after a window.
    fn check_participants(&mut self) -> Result<(), RunError> {
        if let Some(s) = self.server.as_mut() {
            match s.check() {
                // A server that gave up waiting on its starved clients is the
                // collapse's consequence.
                Err(e) if self.collapsed => {
                    tracing::warn!(error = %e, "kv server failed after the collapse")
                }
                r => r?,
            }
        }
        for (i, v) in self.visitors.iter_mut().enumerate() {
            if let Visitor::Process(c) = v
                && let Some(e) = c.exited()
            {
                return Err(RunError::Participant(format!("visitor {} {e}", i + 1)));
            }
        }
        Ok(())
    }

    /// Starts the server and the visitors, waits for them, runs the warm-up.
    pub fn start(point: KvPoint, launcher: Option<Launcher>) -> Result<KvRig, RunError> {
        if point.inner == 0 || point.outer == 0 || point.min_runs == 0 {
            return Err(RunError::Config(
                "the timed client needs OUTER, INNER and runs of at least 1".into(),
            ));
        }
        let allowed = xferbench_probes::affinity::allowed_cpus();
        let cpus = point.cpus(&allowed);
        let key = PrivateKey::random();
        let mut server = start_server(
            &point.target,
            launcher.as_ref(),
            cpus.map(|c| c.server),
            key,
        )?;
        let backend = server.backend();
        let base = server.served()?;
        let mut rig = KvRig {
            visitors: Vec::new(),
            point,
            key,
            launcher,
            server: None,
            collapsed: false,
        };
        for i in 0..rig.point.visitors {
            let pin = rig.point.visitor_cpu(i, &allowed);
            let v = start_visitor(
                &rig.point,
                rig.launcher.as_ref(),
                backend.clone(),
                rig.key,
                pin,
            )?;
            rig.visitors.push(v);
        }
        // The original sleeps 1 s; we wait until every visitor could have done an
        // iteration, at most 1 s.
        let want = base + (rig.point.visitors as u64) * u64::from(rig.point.inner) * 3;
        let give_up = Instant::now() + Duration::from_secs(1);
        while rig.point.visitors > 0 && Instant::now() < give_up && server.served()? < want {
            std::thread::sleep(Duration::from_millis(5));
        }
        rig.server = Some(server);
        let warm = Instant::now();
        for i in 0..rig.point.warmup {
            if i > 0 && warm.elapsed() >= Duration::from_millis(rig.point.budget_ms) / 4 {
                break;
            }
            // A warm-up run cut short by the run limit: the timed runs will say so.
            if rig.timed_run()?.run.timed_out {
                break;
            }
        }
        Ok(rig)
    }

    /// The steady window ([`KvPoint::steady_ms`]): the stand-in client joins the
    /// visitors; once the server has served every running client three iterations'
    /// worth since it started (at most 1 s, as the visit's start), the served requests
    /// over `steady_ms`, per second; and the stand-in's collapse when it could not leave
    /// the server within [`HANG`] of its stop (it is killed; the rate stands).
    fn steady_window(&mut self, ctl: &RunControl<'_>) -> Result<(f64, Option<Collapse>), RunError> {
        let backend = self.backend()?;
        let pin = self.timed_cpu();
        let server = self
            .server
            .as_mut()
            .ok_or_else(|| RunError::Participant("the server has stopped".into()))?;
        let base = server.served()?;
        let stand_in = start_visitor(&self.point, self.launcher.as_ref(), backend, self.key, pin)?;
        let result = (|| {
            let clients = self.point.visitors as u64 + 1;
            let want = base + clients * u64::from(self.point.inner) * 3;
            let give_up = Instant::now() + Duration::from_secs(1);
            while Instant::now() < give_up && server.served()? < want {
                std::thread::sleep(Duration::from_millis(2));
            }
            let window = Duration::from_millis(self.point.steady_ms);
            let s0 = server.served()?;
            let t0 = Instant::now();
            while t0.elapsed() < window {
                if ctl.stop.load(Ordering::Relaxed) {
                    return Err(RunError::Interrupted);
                }
                std::thread::sleep((window - t0.elapsed()).min(Duration::from_millis(50)));
            }
            let s1 = server.served()?;
            let elapsed = t0.elapsed().as_secs_f64();
            Ok(s1.saturating_sub(s0) as f64 / elapsed)
        })();
        let stopped = stop_visitor(stand_in, "the timed client's stand-in");
        let rate = result?;
        let collapse = (stopped? == Stopped::Overdue).then(|| Collapse {
            participant: "timed client's stand-in".into(),
            unit: "requests".into(),
            completed: 0,
            planned: 0,
            limit_s: HANG.as_secs_f64(),
            stuck: Some("leave the server after its stop".into()),
        });
        Ok((rate, collapse))
    }

    /// With pinning, the timed client's CPU (its stand-in's too).
    fn timed_cpu(&self) -> Option<usize> {
        self.point
            .cpus(&xferbench_probes::affinity::allowed_cpus())
            .map(|c| c.timed)
    }

    fn backend(&self) -> Result<Backend, RunError> {
        self.server
            .as_ref()
            .map(RunningServer::backend)
            .ok_or_else(|| RunError::Participant("the server has stopped".into()))
    }

    /// One timed client, from spawn to `wait4`.
    fn timed_run(&mut self) -> Result<Timed, RunError> {
        let spec = client_spec(
            &self.point,
            self.backend()?,
            self.key,
            false,
            self.timed_cpu(),
        );
        let t = match &self.launcher {
            None => {
                let t0 = Instant::now();
                let run = run_client(&spec, &Arc::new(AtomicBool::new(false)))
                    .map_err(|e| RunError::Participant(format!("timed client: {e}")))?;
                let wall_s = t0.elapsed().as_secs_f64();
                let (user_s, sys_s) = run.cpu.as_ref().map_or((0.0, 0.0), |c| (c.user_s, c.sys_s));
                Timed {
                    wall_s,
                    user_s,
                    sys_s,
                    run,
                }
            }
            Some(l) => timed_process(l, &spec)?,
        };
        if t.run.mismatches > 0 {
            return Err(RunError::Participant(format!(
                "timed client: {} mismatched replies; the first: {}",
                t.run.mismatches,
                t.run.first_mismatch.clone().unwrap_or_default()
            )));
        }
        Ok(t)
    }
}

/// A client running until stopped: a process with a launcher (on `pin`, when
/// given), else a thread (on `pin` too).
fn start_visitor(
    point: &KvPoint,
    launcher: Option<&Launcher>,
    backend: Backend,
    key: PrivateKey,
    pin: Option<usize>,
) -> Result<Visitor, RunError> {
    let spec = client_spec(point, backend, key, true, pin);
    Ok(match launcher {
        Some(l) => Visitor::Process(
            l.spawn(
                Role::KvClient,
                [serde_json::to_string(&spec).expect("serialises")],
                Streams::OUTPUT,
            )
            .map_err(|e| RunError::Participant(e.to_string()))?,
        ),
        None => {
            let stop = Arc::new(AtomicBool::new(false));
            let s = Arc::clone(&stop);
            Visitor::Thread {
                stop,
                handle: std::thread::spawn(move || {
                    if let Some(cpu) = spec.pin {
                        xferbench_probes::affinity::pin_current_thread(cpu)
                            .map_err(|e| format!("cannot pin the visitor to CPU {cpu}: {e}"))?;
                    }
                    run_client(&spec, &s).map_err(|e| e.to_string())
                }),
            }
        }
    })
}

/// Stops a visitor and reads what it reported: an error when it failed or had a
/// mismatched reply.
fn stop_visitor(v: Visitor, what: &str) -> Result<Stopped, RunError> {
    stop_signalled_visitor(signal_stop(v), what)
}

/// Asks a visitor to stop (SIGINT, or its stop flag) without waiting for it.
fn signal_stop(mut v: Visitor) -> Visitor {
    match &mut v {
        Visitor::Process(c) => c.signal(rustix::process::Signal::INT),
        Visitor::Thread { stop, .. } => stop.store(true, Ordering::Relaxed),
    }
    v
}

/// Waits for a visitor already asked to stop ([`signal_stop`]) and reads its result;
/// killed when it has not stopped within the hang timeout ([`Stopped::Overdue`]: a
/// client that cannot leave a starved server is a collapse, not a failure).
fn stop_signalled_visitor(v: Visitor, what: &str) -> Result<Stopped, RunError> {
    stop_signalled_within(v, what, HANG)
}

/// [`stop_signalled_visitor`] with its own deadline.
fn stop_signalled_within(v: Visitor, what: &str, deadline: Duration) -> Result<Stopped, RunError> {
    let r: Result<KvClientRun, String> = match v {
        Visitor::Process(mut c) => {
            // Read while it stops: a long visit's result (its latency histogram) can
            // be larger than the pipe holds, and a visitor blocked writing it would
            // never exit.
            let reader = c.take_stdout().map(|mut s| {
                std::thread::spawn(move || {
                    let mut out = Vec::new();
                    let _ = s.read_to_end(&mut out);
                    out
                })
            });
            let (ended, overdue) = match c.exited_within(deadline) {
                Some(e) => (e, false),
                None => (c.kill(), true),
            };
            let out = reader.and_then(|h| h.join().ok()).unwrap_or_default();
            if overdue {
                tracing::warn!(
                    "{what} did not stop within {:?} of its stop and was killed",
                    deadline
                );
                return Ok(Stopped::Overdue);
            }
            // Ended by the stop signal's default action: it had not yet installed its
            // handler, which a client does before it connects, so it sent no request
            // (a stand-in stopped while still starting on a starved machine).
            if out.is_empty() && ended.status.signal() == Some(libc::SIGINT) {
                return Ok(Stopped::Left);
            }
            serde_json::from_slice(&out).map_err(|_| format!("{what} {ended}"))
        }
        Visitor::Thread { stop, handle } => {
            stop.store(true, Ordering::Relaxed);
            handle.join().unwrap_or_else(|_| Err("panicked".into()))
        }
    };
    match r {
        Ok(run) if run.mismatches > 0 => Err(RunError::Participant(format!(
            "{what}: {} mismatched replies; the first: {}",
            run.mismatches,
            run.first_mismatch.unwrap_or_default()
        ))),
        Ok(_) => Ok(Stopped::Left),
        Err(e) => Err(RunError::Participant(e)),
    }
}

fn timed_process(l: &Launcher, spec: &KvClientSpec) -> Result<Timed, RunError> {
    let fail = |m: String| RunError::Participant(format!("timed client: {m}"));
    let mut cmd = l
        .command(
            Role::KvClient,
            [serde_json::to_string(spec).expect("serialises")],
        )
        .map_err(|e| fail(e.to_string()))?;
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let t0 = Instant::now();
    let mut child = cmd.spawn().map_err(|e| fail(e.to_string()))?;
    let mut out = Vec::new();
    let mut err = Vec::new();
    let _ = child.stdout.take().map(|mut s| s.read_to_end(&mut out));
    let _ = child.stderr.take().map(|mut s| s.read_to_end(&mut err));
    let mut status = 0;
    // SAFETY: zeroed rusage is valid; wait4 writes it and the status for our child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for the child we spawned (std's handle is not used to wait).
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    let wall_s = t0.elapsed().as_secs_f64();
    if r < 0 {
        return Err(fail(format!("wait4: {}", std::io::Error::last_os_error())));
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    let run: Option<KvClientRun> = serde_json::from_slice(&out).ok();
    match (ok, run) {
        (true, Some(run)) => Ok(Timed {
            wall_s,
            user_s: tv(ru.ru_utime),
            sys_s: tv(ru.ru_stime),
            run,
        }),
        (_, run) => Err(fail(format!(
            "exited with status {}{}: {}",
            if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128 + libc::WTERMSIG(status)
            },
            run.map(|r| format!(" ({} mismatches)", r.mismatches))
                .unwrap_or_default(),
            String::from_utf8_lossy(&err).trim()
        ))),
    }
}

impl Rig for KvRig {
    fn participants(&self) -> Vec<Participant> {
        let me = std::process::id();
        let server = self.server.as_ref().and_then(RunningServer::pid);
        vec![
            Participant {
                name: "main".into(),
                pid: me,
            },
            Participant {
                name: "server".into(),
                pid: server.unwrap_or(me),
            },
        ]
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        if ctl.stop.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        let server_pid = self.server.as_ref().and_then(RunningServer::pid);
        let visitor_pids: Vec<u32> = self
            .visitors
            .iter()
            .filter_map(|v| match v {
                Visitor::Process(c) => Some(c.pid()),
                Visitor::Thread { .. } => None,
            })
            .collect();
        ctl.window_started();
        let cpu0 = CpuMarks::now(server_pid, &visitor_pids);
        let served0 = self.served()?;
        let t0 = Stamp::now();
        let runs = self.timed_runs(ctl)?;
        // A run cut short by the run limit is the collapse: its requests and latency
        // count, its time (a lower bound) does not enter the times per run.
        let collapsed = runs.last().and_then(|t| collapse_of(&t.run, &self.point));
        let served1 = self.served()?;
        let t1 = Stamp::now();
        let cpu1 = CpuMarks::now(server_pid, &visitor_pids);
        let (steady, stand_in_collapse) = if self.point.steady_ms > 0 {
            let (rate, c) = self.steady_window(ctl)?;
            (Some(rate), c)
        } else {
            (None, None)
        };
        // The timed client's collapse first: it is the point's figure.
        let collapsed = collapsed.or(stand_in_collapse);
        self.collapsed |= collapsed.is_some();
        ctl.window_ended();
        self.check_participants()?;
        let window_s = t1.since(t0).max(1) as f64 / 1e9;
        let requests: u64 = runs.iter().map(|t| t.run.requests).sum();
        let mut hist = crate::result::new_histogram();
        for t in &runs {
            for &(v, n) in &t.run.latency_buckets {
                let _ = hist.record_n(v.max(1), n);
            }
        }
        let used = cpu0.until(&cpu1, server_pid, &visitor_pids, &runs, window_s);
        let channel = ChannelOutcome {
            start: t0,
            end: t1,
            messages: requests,
            bytes: 0,
            latency: Some(hist),
            integrity: Some(Integrity {
                checked: requests,
                ..Integrity::default()
            }),
            schedule: None,
        };
        let mut record = aggregate(vec![channel], used.all);
        record.collapsed = collapsed;
        let f = &mut record.figures;
        insert_run_times(f, &runs);
        f.insert(
            figures::REQUESTS_PER_S_ALL.into(),
            served1.saturating_sub(served0) as f64 / window_s,
        );
        f.insert(
            figures::REQUESTS_PER_S_TIMED.into(),
            requests as f64 / runs.iter().map(|t| t.wall_s).sum::<f64>().max(1e-9),
        );
        if let Some(s) = used.server_s {
            f.insert(figures::SERVER_CPU_S.into(), s);
        }
        f.insert(figures::VISITORS_CPU_S.into(), used.visitors_s);
        if let Some(rate) = steady {
            f.insert(figures::REQUESTS_PER_S_STEADY.into(), rate);
            f.insert(
                figures::STEADY_CLIENTS.into(),
                (self.point.visitors + 1) as f64,
            );
        }
        record.counters = ctl.take_counters();
        Ok(record)
    }
    fn finish(mut self: Box<Self>) -> Result<(), RunError> {
        let mut failure = None;
        let mut overdue = 0;
        // All visitors are asked to stop at once, then awaited: one leaving while
        // the others still take part in a protocol round (preopt's broadcast
        // barrier) could otherwise leave the rest waiting for it.
        let stopping: Vec<Visitor> = std::mem::take(&mut self.visitors)
            .into_iter()
            .map(signal_stop)
            .collect();
        // A visitor that cannot leave a starved server in time is killed: the
        // measurement is over, and the server's starvation is what it measured.
        for (i, v) in stopping.into_iter().enumerate() {
            match stop_signalled_visitor(v, &format!("visitor {}", i + 1)) {
                Ok(Stopped::Left) => {}
                Ok(Stopped::Overdue) => overdue += 1,
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        if let Some(s) = self.server.take() {
            match s.stop() {
                // A client killed mid-protocol, or the collapse itself, leaves the
                // server waiting on it until its hang timeout: not a failure.
                Err(e) if self.collapsed || overdue > 0 => {
                    tracing::warn!(error = %e, overdue, "kv server stopped with an error after a collapse")
                }
                r => failure = failure.or(r.err()),
            }
        }
        failure.map_or(Ok(()), Err)
    }
}

impl Drop for KvRig {
    fn drop(&mut self) {
        for v in self.visitors.drain(..) {
            if let Visitor::Thread { stop, handle } = v {
                stop.store(true, Ordering::Relaxed);
                let _ = handle.join();
            }
        }
    }
}

/// The collapse of a timed run that was cut short: one cut by its run limit, with the
/// requests it completed; one that did its requests but could not leave a starved
/// server within its hang timeout, said as what it could not do.
fn collapse_of(run: &KvClientRun, point: &KvPoint) -> Option<Collapse> {
    if !run.timed_out {
        return None;
    }
    Some(match &run.stuck {
        Some(what) => Collapse {
            participant: "timed client".into(),
            unit: "requests".into(),
            completed: 0,
            planned: 0,
            limit_s: (HANG + point.run_limit()).as_secs_f64(),
            stuck: Some(what.clone()),
        },
        None => Collapse {
            participant: "timed client".into(),
            unit: "requests".into(),
            completed: run.requests,
            planned: point.outer * u64::from(point.inner) * 3,
            limit_s: point.run_limit().as_secs_f64(),
            stuck: None,
        },
    })
}

/// The CPU clocks of the main process, the server and the visitor processes at one
/// moment.
struct CpuMarks {
    main: CpuSnapshot,
    server: Option<CpuSnapshot>,
    visitors: Vec<Option<CpuSnapshot>>,
}

/// The CPU a window used: every participant's, and the server's and visitors' totals.
struct WindowCpu {
    all: Vec<ProcessCpu>,
    server_s: Option<f64>,
    visitors_s: f64,
}

impl CpuMarks {
    fn now(server: Option<u32>, visitors: &[u32]) -> CpuMarks {
        CpuMarks {
            main: CpuSnapshot::now(),
            server: server.and_then(CpuSnapshot::of_pid),
            visitors: visitors.iter().map(|&p| CpuSnapshot::of_pid(p)).collect(),
        }
    }

    /// What each participant used from these marks to `end`; the timed client's
    /// (an in-process client's own clocks, summed over its `runs`) among them.
    fn until(
        &self,
        end: &CpuMarks,
        server_pid: Option<u32>,
        visitor_pids: &[u32],
        runs: &[Timed],
        window_s: f64,
    ) -> WindowCpu {
        let mut all = vec![self.main.until(&end.main, "main", std::process::id())];
        let server = match (server_pid, &self.server, &end.server) {
            (Some(pid), Some(a), Some(b)) => Some(a.until(b, "server", pid)),
            _ => None,
        };
        let server_s = server.as_ref().map(|c| c.user_s + c.sys_s);
        all.extend(server);
        let user: f64 = runs.iter().map(|t| t.user_s).sum();
        let sys: f64 = runs.iter().map(|t| t.sys_s).sum();
        all.push(ProcessCpu {
            role: format!("timed client ({} runs)", runs.len()),
            pid: 0,
            window_s,
            user_s: user,
            sys_s: sys,
            cpus_utilised: (user + sys) / window_s,
            voluntary_switches: 0,
            involuntary_switches: 0,
            runqueue_wait_s: None,
        });
        let mut visitors_s = 0.0;
        let marks = self.visitors.iter().zip(&end.visitors);
        for (i, (&pid, (a, b))) in visitor_pids.iter().zip(marks).enumerate() {
            if let (Some(a), Some(b)) = (a, b) {
                let c = a.until(b, format!("visitor{}", i + 1), pid);
                visitors_s += c.user_s + c.sys_s;
                all.push(c);
            }
        }
        WindowCpu {
            all,
            server_s,
            visitors_s,
        }
    }
}

/// The times per timed run (of the runs that finished: none when the first
/// collapsed) and the count of finished runs.
fn insert_run_times(f: &mut std::collections::BTreeMap<String, f64>, runs: &[Timed]) {
    let complete: Vec<&Timed> = runs.iter().filter(|t| !t.run.timed_out).collect();
    let walls: Vec<f64> = complete.iter().map(|t| t.wall_s).collect();
    let n = complete.len() as f64;
    if !complete.is_empty() {
        // One timed run has no spread: its sd is 0.
        let (mean, sd) =
            stats::mean_sd(&walls).unwrap_or((stats::mean(&walls).unwrap_or(0.0), 0.0));
        f.insert(figures::TIME_MEAN_S.into(), mean);
        f.insert(figures::TIME_SD_S.into(), sd);
        f.insert(
            figures::TIME_MEDIAN_S.into(),
            stats::median(&walls).unwrap_or(0.0),
        );
        f.insert(
            figures::TIME_MIN_S.into(),
            walls.iter().copied().fold(f64::INFINITY, f64::min),
        );
        f.insert(
            figures::TIME_MAX_S.into(),
            walls.iter().copied().fold(0.0, f64::max),
        );
        let user: f64 = complete.iter().map(|t| t.user_s).sum();
        let sys: f64 = complete.iter().map(|t| t.sys_s).sum();
        f.insert(figures::USER_MEAN_S.into(), user / n);
        f.insert(figures::SYS_MEAN_S.into(), sys / n);
    }
    f.insert(figures::TIMED_RUNS.into(), n);
}

#[cfg(test)]
mod tests {
    use super::*;
    use xferbench_transports::kv::Arch;

    fn point(arch: Arch, visitors: usize) -> KvPoint {
        KvPoint {
            target: Target::Kv {
                arch,
                workers: 2,
                buckets: 1000,
            },
            visitors,
            outer: 3,
            inner: 10,
            warmup: 1,
            min_runs: 2,
            min_time_ms: 0,
            max_runs: 5,
            budget_ms: 60_000,
            seed: 1,
            steady_ms: 0,
            pin: false,
            run_limit_ms: 0,
        }
    }

    #[test]
    fn a_run_times_the_client_and_counts_every_clients_requests() {
        for arch in Arch::ALL {
            let mut rig: Box<dyn Rig> = Box::new(KvRig::start(point(arch, 2), None).unwrap());
            let stop = AtomicBool::new(false);
            let mut ctl = RunControl::new(&stop, Duration::from_secs(60), None);
            let r = rig.run_once(&mut ctl).unwrap();
            rig.finish().unwrap();
            let f = &r.figures;
            assert_eq!(f[figures::TIMED_RUNS], 2.0, "{arch:?}");
            assert_eq!(r.messages, 2 * 90);
            assert!(f[figures::TIME_MIN_S] <= f[figures::TIME_MEDIAN_S]);
            assert!(f[figures::TIME_MEDIAN_S] <= f[figures::TIME_MAX_S]);
            // The visitors were served too: more than the timed client's requests.
            let all = f[figures::REQUESTS_PER_S_ALL] * r.window_ns as f64 / 1e9;
            assert!(all >= 180.0, "{arch:?}: {all}");
            assert!(r.integrity.unwrap().is_clean());
            assert_eq!(r.latency.unwrap().count, 180);
        }
    }

    #[test]
    fn the_steady_window_counts_all_clients_once_they_run() {
        let mut p = point(Arch::Sharded, 2);
        p.steady_ms = 100;
        let mut rig: Box<dyn Rig> = Box::new(KvRig::start(p, None).unwrap());
        let stop = AtomicBool::new(false);
        let mut ctl = RunControl::new(&stop, Duration::from_secs(60), None);
        let r = rig.run_once(&mut ctl).unwrap();
        rig.finish().unwrap();
        assert_eq!(r.figures[figures::STEADY_CLIENTS], 3.0);
        // Three clients for 0.1 s: far more than the timed client's 90 requests.
        let steady = r.figures[figures::REQUESTS_PER_S_STEADY];
        assert!(steady * 0.1 > 90.0, "{steady}");
        let mut none = point(Arch::Sharded, 0);
        none.steady_ms = 0;
        let mut rig: Box<dyn Rig> = Box::new(KvRig::start(none, None).unwrap());
        let r = rig.run_once(&mut ctl).unwrap();
        rig.finish().unwrap();
        assert!(!r.figures.contains_key(figures::REQUESTS_PER_S_STEADY));
    }

    #[test]
    fn a_timed_client_that_cannot_leave_a_starved_server_is_a_collapse_not_a_failure() {
        let mut p = point(Arch::Preopt, 1);
        p.run_limit_ms = 20_000;
        let mut run = KvClientRun {
            requests: 3000,
            mismatches: 0,
            first_mismatch: None,
            start: Stamp(0),
            end: Stamp(0),
            latency_buckets: Vec::new(),
            cpu: None,
            interrupted: false,
            timed_out: true,
            stuck: Some(crate::workload::kv::STUCK_LEAVING.into()),
        };
        let c = collapse_of(&run, &p).expect("a collapse");
        assert_eq!(c.limit_s, (HANG + Duration::from_secs(20)).as_secs_f64());
        assert_eq!(
            c.describe(),
            format!(
                "the timed client could not leave the server after its last request in its {} s limit",
                c.limit_s
            )
        );
        run.stuck = None;
        assert_eq!(collapse_of(&run, &p).unwrap().completed, 3000);
        run.timed_out = false;
        assert!(collapse_of(&run, &p).is_none());
    }

    #[test]
    fn a_timed_client_past_its_run_limit_is_recorded_as_a_collapse_with_its_work() {
        // A client of a million iterations cannot finish in 50 ms: the warm-up run is
        // cut short, then the first timed run, and the session ends there.
        let mut p = point(Arch::Sharded, 1);
        p.outer = 1_000_000;
        p.run_limit_ms = 50;
        p.min_runs = 3;
        let mut rig: Box<dyn Rig> = Box::new(KvRig::start(p, None).unwrap());
        let stop = AtomicBool::new(false);
        let mut ctl = RunControl::new(&stop, Duration::from_secs(60), None);
        let r = rig.run_once(&mut ctl).unwrap();
        rig.finish().unwrap();
        let c = r.collapsed.clone().expect("collapsed");
        assert_eq!(c.participant, "timed client");
        assert_eq!(c.planned, 1_000_000 * 10 * 3);
        assert!(c.completed < c.planned);
        assert_eq!(c.limit_s, 0.05);
        assert!(
            c.describe().ends_with("requests in its 0.05 s limit"),
            "{}",
            c.describe()
        );
        // The figures it has: the requests it completed, checked; no time per run.
        assert_eq!(r.messages, c.completed);
        assert!(r.integrity.unwrap().is_clean());
        assert_eq!(r.figures[figures::TIMED_RUNS], 0.0);
        assert!(!r.figures.contains_key(figures::TIME_MEAN_S));
        assert!(r.figures.contains_key(figures::REQUESTS_PER_S_ALL));
    }

    /// A shell running `trap TRAP INT`, then `then` (once the trap is installed, so
    /// that the stop reaches it: the test waits for a file the shell touches).
    fn process(trap: &str, then: &str) -> Visitor {
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("ready");
        let mut cmd = std::process::Command::new("sh");
        cmd.arg("-c")
            .arg(format!("trap {trap} INT; touch \"$1\"; {then}"))
            .arg("sh")
            .arg(&ready);
        let child = Child::spawn(cmd, Streams::OUTPUT).unwrap();
        while !ready.exists() {
            std::thread::sleep(Duration::from_millis(5));
        }
        Visitor::Process(child)
    }

    #[test]
    fn a_client_that_cannot_leave_in_time_is_overdue_and_one_that_fails_is_an_error() {
        // Deaf to the stop, as a client blocked leaving a starved server: killed at
        // the deadline, and no failure.
        let deaf = signal_stop(process("''", "while :; do sleep 0.05; done"));
        let r = stop_signalled_within(deaf, "the stand-in", Duration::from_millis(200));
        assert_eq!(r.unwrap(), Stopped::Overdue);
        // One that ends on its own with no result failed, and says how.
        let failed = signal_stop(process("''", "exit 1"));
        let e = stop_signalled_within(failed, "visitor 1", Duration::from_secs(30)).unwrap_err();
        assert!(e.to_string().contains("visitor 1"), "{e}");
    }

    #[test]
    fn the_run_limit_is_the_budget_at_least_the_hang_timeout_unless_set() {
        let mut p = point(Arch::Sharded, 0);
        p.budget_ms = 2_000;
        assert_eq!(p.run_limit(), HANG);
        p.budget_ms = 40_000;
        assert_eq!(p.run_limit(), Duration::from_secs(40));
        p.run_limit_ms = 5;
        assert_eq!(p.run_limit(), Duration::from_millis(5));
    }

    #[test]
    fn the_rigs_server_is_private_to_its_own_clients() {
        use xferbench_transports::kv::{Client, ClientOptions, KvError, running_servers};
        for arch in Arch::ALL {
            let mut rig = KvRig::start(point(arch, 1), None).unwrap();
            let Backend::Shm(address) = rig.backend().unwrap() else {
                panic!("a kv server")
            };
            // Listed as private, so that `kv client` never picks it. (The visitor, a
            // thread here, holds the object under another descriptor of this
            // process: the inode, the address's last part, names it.)
            let inode = |a: &str| a.rsplit(':').next().map(str::to_string);
            let listed: Vec<_> = running_servers()
                .into_iter()
                .filter(|s| inode(&s.address) == inode(&address))
                .collect();
            assert!(
                listed.len() == 1 && listed[0].private,
                "{arch:?}: {listed:?}"
            );
            // A client without the rig's key is refused, by name.
            let e = Client::connect(
                &address,
                ClientOptions {
                    client_id: 9,
                    stop: Arc::new(AtomicBool::new(false)),
                    hang_timeout: Duration::from_secs(5),
                    key: None,
                },
            )
            .unwrap_err();
            assert!(matches!(e, KvError::Private { .. }), "{arch:?}: {e}");
            // The rig's own clients (the visitor, the timed client) are served.
            let stop = AtomicBool::new(false);
            let mut ctl = RunControl::new(&stop, Duration::from_secs(60), None);
            let r = rig.run_once(&mut ctl).unwrap();
            assert_eq!(r.messages, 2 * 90, "{arch:?}");
            Box::new(rig).finish().unwrap();
        }
    }

    #[test]
    fn an_impossible_point_is_a_usage_error() {
        let mut p = point(Arch::Sharded, 0);
        p.inner = 0;
        assert!(KvRig::start(p, None).err().unwrap().is_usage());
    }
}
