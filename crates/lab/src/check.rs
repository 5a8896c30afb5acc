//! `xferbench check`: the conformance suite as a command, for built-in and plugin
//! transports alike.
//!
//! The checks are those of [`xferbench_transports::conformance`] (run in one
//! process, the other end on a thread), and two that need processes and the lab:
//!
//! * [`CheckId::PeerDeath`]: a peer *process* killed with SIGKILL while the driver
//!   streams to it, and another while it answers requests, is noticed within the
//!   send/receive timeout (an error or the end of the stream, never a hang);
//! * [`CheckId::Integrity`]: 10⁵ messages of 64 B and 10⁵ of 4 KiB (or the largest,
//!   if smaller) through the `stream` workload with `--verify`, to a peer process:
//!   none lost, duplicated, reordered or corrupt.
//!
//! Each check runs in a child process of its own ([`Role::Check`], [`check_main`]),
//! given a deadline: a transport that crashes or hangs fails that check, with the
//! signal or the timeout named, and the next check runs. After each check of a
//! plugin transport, its clean-up hook runs on the check's scope.

use crate::control::{Rig, RunControl};
use crate::peer::{PEER_TIMEOUT, Peer, PeerCommand, PeerReply, PeerSpec};
use crate::plugins::{self, SCOPE_ENV, TIMEOUT_ENV};
use crate::rig::peers::{PeerMode, PeerOptions, PeerRig};
use crate::sweep::PointSpec;
use crate::transports::{RPMSG, WithTransport, dispatch};
use crate::workload::{ChannelSpec, Limit, WorkloadKind};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use xferbench_probes::leaks::{self, Found, LeakWatch};
use xferbench_probes::process::{Child, Launcher, Role, Streams, Supervised};
use xferbench_probes::verify::HEADER_LEN;
use xferbench_transports::conformance::{self, CHECK_LIMIT, Check, Verdict};
use xferbench_transports::plugin::in_flight;
use xferbench_transports::rpmsg::Rpmsg;
use xferbench_transports::{Endpoint, Listener, Params, Recv, Transport};

/// Messages of each size in [`CheckId::Integrity`].
pub const INTEGRITY_MESSAGES: u64 = 100_000;

/// One check of `xferbench check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckId {
    /// A check of the transports' suite.
    Suite(Check),
    /// A peer process that is killed is noticed.
    PeerDeath,
    /// 10⁵ messages through the `stream` workload with `--verify`, intact.
    Integrity,
}

impl CheckId {
    /// Every check, in the order they run.
    pub fn all() -> Vec<CheckId> {
        Check::ALL
            .into_iter()
            .map(CheckId::Suite)
            .chain([CheckId::PeerDeath, CheckId::Integrity])
            .collect()
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            CheckId::Suite(c) => c.name(),
            CheckId::PeerDeath => "peer-death",
            CheckId::Integrity => "integrity",
        }
    }

    /// What it checks.
    pub fn description(self) -> &'static str {
        match self {
            CheckId::Suite(c) => c.description(),
            CheckId::PeerDeath => {
                "a peer process killed (SIGKILL) mid-stream and mid-request is noticed within the timeout"
            }
            CheckId::Integrity => {
                "10^5 messages of 64 B and of 4 KiB through `stream --verify` to a peer process: none lost, duplicated, reordered or corrupt"
            }
        }
    }

    /// The check of this name.
    pub fn from_name(name: &str) -> Option<CheckId> {
        CheckId::all().into_iter().find(|c| c.name() == name)
    }
}

/// What a check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It passed.
    Pass,
    /// It failed.
    Fail,
    /// It does not apply.
    Skip,
}

/// What the check process reports (one JSON line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Pass, fail or skip.
    pub status: Status,
    /// What was exercised, what went wrong, or why it does not apply.
    pub detail: String,
}

/// What the check process is given (one JSON argument).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckSpec {
    /// The transport (a plugin's canonical name).
    pub transport: String,
    /// Its parameters.
    pub params: Params,
    /// The check's name.
    pub check: String,
    /// The send/receive timeout (and the bound on noticing a dead peer), ms.
    pub timeout_ms: u64,
    /// How the check starts peer processes.
    pub launcher: Launcher,
}

/// One check's result, as the command reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The transport's name.
    pub transport: String,
    /// Its parameters, when any were given.
    #[serde(default, skip_serializing_if = "Params::is_empty")]
    pub params: Params,
    /// The check.
    pub check: String,
    /// Pass, fail or skip.
    pub status: Status,
    /// In words.
    pub detail: String,
    /// How long it took, seconds.
    pub seconds: f64,
}

/// How long one check may take before it is declared hung: the suite's limit, plus
/// twice the timeout (a dead peer may take that long to be noticed), plus slack.
pub fn check_deadline(timeout: Duration) -> Duration {
    CHECK_LIMIT + timeout * 2 + Duration::from_secs(10)
}

/// Runs `checks` on one transport configuration, each in a child process, calling
/// `on_result` as each finishes; with `fail_fast`, none after the first that fails.
#[allow(clippy::too_many_arguments)]
pub fn run_checks(
    launcher: &Launcher,
    transport: &str,
    params: &Params,
    checks: &[CheckId],
    timeout: Duration,
    fail_fast: bool,
    stop: &AtomicBool,
    on_result: &mut dyn FnMut(&CheckResult),
) -> Vec<CheckResult> {
    let mut results = Vec::new();
    for &check in checks {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let start = Instant::now();
        let outcome = run_one(launcher, transport, params, check, timeout, stop);
        let r = CheckResult {
            transport: plugins::display_name(transport),
            params: params.clone(),
            check: check.name().to_string(),
            status: outcome.status,
            detail: outcome.detail,
            seconds: start.elapsed().as_secs_f64(),
        };
        on_result(&r);
        let failed = r.status == Status::Fail;
        results.push(r);
        if failed && fail_fast {
            break;
        }
    }
    results
}

fn run_one(
    launcher: &Launcher,
    transport: &str,
    params: &Params,
    check: CheckId,
    timeout: Duration,
    stop: &AtomicBool,
) -> Outcome {
    let fail = |detail: String| Outcome {
        status: Status::Fail,
        detail,
    };
    let spec = CheckSpec {
        transport: transport.to_string(),
        params: params.clone(),
        check: check.name().to_string(),
        timeout_ms: timeout.as_millis() as u64,
        launcher: launcher.clone(),
    };
    let scope = plugins::new_scope();
    let json = serde_json::to_string(&spec).expect("the spec serialises");
    // What a plugin leaves behind is watched in a private namespace when one can be
    // made, else by snapshot.
    let mut watch = plugins::is_plugin(transport).then(|| {
        let exe = std::env::current_exe().unwrap_or_default();
        let file = xferbench_transports::plugin::PluginSpec::parse(transport)
            .map(|p| std::path::PathBuf::from(p.path))
            .unwrap_or_default();
        LeakWatch::new(&[exe.as_path(), file.as_path(), launcher.program()])
    });
    let spawn = |watch: Option<&LeakWatch>| {
        let mut cmd = launcher.command(Role::Check, [json.as_str()])?;
        cmd.env(SCOPE_ENV, &scope);
        cmd.env(TIMEOUT_ENV, spec.timeout_ms.to_string());
        let mut streams = Streams::OUTPUT;
        if let Some(w) = watch.filter(|w| w.makes_namespace()) {
            w.prepare(&mut cmd);
            // The check waits until its namespace is held: a check done in
            // milliseconds would otherwise take the namespace with it.
            cmd.env(WAIT_ENV, "1");
            streams.stdin = xferbench_probes::process::Stream::Pipe;
        }
        Child::spawn(cmd, streams)
    };
    let started = match spawn(watch.as_ref()) {
        Err(e) if watch.as_ref().is_some_and(LeakWatch::makes_namespace) => {
            if let Some(w) = watch.as_mut() {
                w.fall_back(&e);
            }
            spawn(watch.as_ref())
        }
        other => other,
    };
    let mut child = match started {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot start the check's process: {e}")),
    };
    if let Some(w) = watch.as_mut() {
        w.hold(child.pid());
    }
    // Closing its input lets the check start.
    drop(child.take_stdin());
    let check_pid = child.pid();
    let mut stdout = child.take_stdout().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        let _ = tx.send(out);
    });
    let deadline = Instant::now() + check_deadline(timeout);
    let outcome = loop {
        if let Some(ended) = child.exited_within(Duration::from_millis(50)) {
            let out = rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
            let parsed = out
                .lines()
                .rev()
                .find_map(|l| serde_json::from_str::<Outcome>(l).ok());
            break match (parsed, ended.success()) {
                (Some(o), true) => o,
                _ => fail(match in_flight::parse_report(&ended.stderr_tail) {
                    Some(calls) if !calls.is_empty() => format!(
                        "crashed in plugin call {}: the check's process {ended}",
                        calls.join(", ")
                    ),
                    _ => format!("the check's process {ended}"),
                }),
            };
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            child.stop();
            break fail("interrupted".into());
        }
        if Instant::now() >= deadline {
            let pid = child.pid();
            let calls = crate::plugins::calls_in_flight(&mut child, Duration::from_millis(500));
            child.kill();
            let during = match calls {
                Some(calls) if !calls.is_empty() => {
                    format!(" in plugin call {}", calls.join(", "))
                }
                _ => String::new(),
            };
            break fail(format!(
                "hung{during}: no verdict within {} s; the check's process (pid {pid}) was killed",
                check_deadline(timeout).as_secs()
            ));
        }
    };
    let Some(watch) = watch else { return outcome };
    if let Err(e) = plugins::clean_up_in(launcher, transport, &scope, |cmd| watch.enter(cmd)) {
        eprintln!("warning: {}: {e}", plugins::display_name(transport));
    }
    let sysv = sysv_left(&spec, &watch);
    let mut found = watch.finish(&[scope, check_pid.to_string()]);
    found.left.extend(sysv);
    with_leaks(outcome, found)
}

/// Set for a check's process that waits for the end of its input before it starts.
const WAIT_ENV: &str = "XFERBENCH_CHECK_WAIT";

/// The name of the internal "check" that lists the SysV IPC objects of the
/// namespace its process starts in, as one JSON array.
const LIST_SYSV: &str = "list-sysv-ipc";

/// The SysV IPC objects left in the namespace `watch` holds (none without one).
fn sysv_left(spec: &CheckSpec, watch: &LeakWatch) -> Vec<String> {
    if !watch.holds_namespace() {
        return Vec::new();
    }
    let list = CheckSpec {
        check: LIST_SYSV.into(),
        ..spec.clone()
    };
    let json = serde_json::to_string(&list).expect("the spec serialises");
    let Ok(mut cmd) = spec.launcher.command(Role::Check, [json]) else {
        return Vec::new();
    };
    watch.enter(&mut cmd);
    let Ok(mut child) = Child::spawn(cmd, Streams::OUTPUT) else {
        return Vec::new();
    };
    let mut stdout = child.take_stdout().expect("piped stdout");
    let mut out = String::new();
    let _ = stdout.read_to_string(&mut out);
    if child.exited_within(Duration::from_secs(5)).is_none() {
        child.kill();
    }
    serde_json::from_str(out.trim()).unwrap_or_default()
}

/// A check's outcome with what its processes left behind: a failure naming the
/// paths, and how they were watched when not in a private namespace.
fn with_leaks(mut outcome: Outcome, found: Found) -> Outcome {
    if !found.left.is_empty() {
        let left = format!("left behind: {}", leaks::shown(&found.left));
        outcome.detail = match outcome.status {
            Status::Fail => format!("{}; {left}", outcome.detail),
            _ => format!("{left} (after: {})", outcome.detail),
        };
        outcome.status = Status::Fail;
    }
    if let Some(note) = found.note {
        outcome.detail = format!("{} [{note}]", outcome.detail);
    }
    outcome
}

/// The body of the [`Role::Check`] process: runs one check here and prints its
/// [`Outcome`] as one JSON line. Returns the exit status.
pub fn check_main(spec_json: &str) -> i32 {
    xferbench_probes::process::die_with_parent();
    plugins::may_load_plugins();
    let spec: CheckSpec = match serde_json::from_str(spec_json) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("check: bad spec: {e} (this is an internal role)");
            return 2;
        }
    };
    if std::env::var_os(WAIT_ENV).is_some() {
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
    }
    if spec.check == LIST_SYSV {
        let objects = leaks::sysv_objects();
        println!(
            "{}",
            serde_json::to_string(&objects).expect("strings serialise")
        );
        return 0;
    }
    let Some(check) = CheckId::from_name(&spec.check) else {
        eprintln!("check: no check `{}`", spec.check);
        return 2;
    };
    let outcome = run_here(&spec, check);
    println!(
        "{}",
        serde_json::to_string(&outcome).expect("outcomes serialise")
    );
    0
}

fn verdict(r: Result<Verdict, String>) -> Outcome {
    match r {
        Ok(Verdict::Pass(d)) => Outcome {
            status: Status::Pass,
            detail: d,
        },
        Ok(Verdict::Skip(d)) => Outcome {
            status: Status::Skip,
            detail: d,
        },
        Err(d) => Outcome {
            status: Status::Fail,
            detail: d,
        },
    }
}

/// Runs one check in this process.
pub fn run_here(spec: &CheckSpec, check: CheckId) -> Outcome {
    struct Run<'a> {
        spec: &'a CheckSpec,
        check: CheckId,
    }
    impl WithTransport for Run<'_> {
        type Output = Result<Verdict, String>;
        fn with<T: Transport + Clone>(self, t: T) -> Self::Output {
            let timeout = Duration::from_millis(self.spec.timeout_ms);
            match self.check {
                CheckId::Suite(c) => conformance::run(c, &t),
                CheckId::PeerDeath => peer_death(&t, self.spec, timeout),
                CheckId::Integrity => integrity(&t, self.spec, timeout),
            }
        }
    }
    if spec.transport == RPMSG {
        // RPMsg is a Transport, but the lab runs it on its own rig: the suite's
        // checks apply, the lab's do not.
        return match check {
            CheckId::Suite(c) => match Rpmsg::from_params(&spec.params) {
                Ok(t) => verdict(conformance::run(c, &t)),
                Err(e) => Outcome {
                    status: Status::Fail,
                    detail: e.to_string(),
                },
            },
            _ => Outcome {
                status: Status::Skip,
                detail: "rpmsg runs on its own rig, not on peers".into(),
            },
        };
    }
    let values = match crate::transports::resolve(&spec.transport, &spec.params) {
        Ok(v) => v,
        Err(e) => {
            return Outcome {
                status: Status::Fail,
                detail: e.to_string(),
            };
        }
    };
    match dispatch(&spec.transport, &values, Run { spec, check }) {
        Ok(r) => verdict(r),
        Err(e) => Outcome {
            status: Status::Fail,
            detail: e.to_string(),
        },
    }
}

fn size_for<T: Transport>(t: &T, want: usize) -> usize {
    t.max_message().map_or(want, |m| m.min(want))
}

/// Starts a peer process serving `workload` on a fresh channel; returns it with the
/// driver's endpoint.
fn connected_peer<T: Transport>(
    t: &T,
    spec: &CheckSpec,
    workload: WorkloadKind,
    size: usize,
) -> Result<(Peer, T::Endpoint), String> {
    let ps = PeerSpec {
        plugin_sha256: None,
        channel: 0,
        transport: spec.transport.clone(),
        transport_params: spec.params.clone(),
        spec: ChannelSpec {
            workload,
            size,
            limit: Limit::Count(u64::MAX),
            verify: false,
            corrupt_every: None,
            zero_copy: false,
            touch: Default::default(),
            load: None,
            params: Default::default(),
        },
        pin_cpu: None,
    };
    let mut peer = Peer::process(ps, &spec.launcher).map_err(|e| e.to_string())?;
    let l = t.listen().map_err(|e| format!("listen: {e}"))?;
    peer.send(&PeerCommand::Run {
        address: l.address().to_string(),
    })
    .map_err(|e| e.to_string())?;
    match peer
        .wait_reply("connect", PEER_TIMEOUT)
        .map_err(|e| e.to_string())?
    {
        PeerReply::Ready => {}
        other => return Err(format!("the peer answered {other:?} instead of ready")),
    }
    let ep = match l.accept(Instant::now() + PEER_TIMEOUT) {
        Ok(ep) => ep,
        Err(e) => {
            let during = match peer.calls_in_flight() {
                Some(calls) if !calls.is_empty() => {
                    format!(" (the peer process is in plugin call {})", calls.join(", "))
                }
                _ => String::new(),
            };
            return Err(format!("accept: {e}{during}"));
        }
    };
    Ok((peer, ep))
}

/// Runs `work` on a thread and waits for it at most `limit`.
fn bounded<R: Send + 'static>(
    limit: Duration,
    work: impl FnOnce() -> R + Send + 'static,
) -> Option<R> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    rx.recv_timeout(limit).ok()
}

/// A peer process killed mid-stream, and one killed between requests, are noticed.
fn peer_death<T: Transport + Clone>(
    t: &T,
    spec: &CheckSpec,
    timeout: Duration,
) -> Result<Verdict, String> {
    let size = size_for(t, 4096);
    let limit = timeout + Duration::from_secs(5);
    // 1. Streaming: the sender must fail once its receiver is killed.
    let (mut peer, mut ep) = connected_peer(t, spec, WorkloadKind::Stream, size)?;
    let streaming = std::thread::spawn(move || {
        let msg = vec![0x5au8; size];
        let mut sent = 0u64;
        loop {
            if ep.send(&msg).is_err() {
                return (sent, Instant::now());
            }
            sent += 1;
        }
    });
    std::thread::sleep(Duration::from_millis(100));
    let killed = Instant::now();
    peer.kill();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(streaming.join());
    });
    let stream_noticed = match rx.recv_timeout(limit) {
        Ok(Ok((_, when))) => when.saturating_duration_since(killed),
        Ok(Err(_)) => return Err("the sending thread panicked".into()),
        Err(_) => {
            return Err(format!(
                "a sender kept going (or blocked) {} s after its peer process was killed (SIGKILL)",
                limit.as_secs()
            ));
        }
    };
    drop(peer);
    // 2. Request/response: the next round trip must fail or see the end.
    let size = size_for(t, 64);
    let (mut peer, mut ep) = connected_peer(t, spec, WorkloadKind::Pingpong, size)?;
    let mut buf = vec![0u8; size];
    for i in 0..100 {
        let msg = vec![i as u8; size];
        ep.send(&msg)
            .map_err(|e| format!("round trip {i}: send: {e}"))?;
        ep.flush()
            .map_err(|e| format!("round trip {i}: flush: {e}"))?;
        match ep.recv(&mut buf) {
            Ok(Recv::Message) => {}
            Ok(Recv::Closed) => return Err(format!("round trip {i}: the peer closed")),
            Err(e) => return Err(format!("round trip {i}: recv: {e}")),
        }
    }
    peer.kill();
    let killed = Instant::now();
    let answer = bounded(limit, move || {
        let msg = vec![1u8; size];
        let sent = ep.send(&msg).and_then(|()| ep.flush());
        let r = match sent {
            Err(e) => Err(e),
            Ok(()) => ep.recv(&mut buf),
        };
        (r.map_err(|e| e.to_string()), Instant::now())
    });
    let request_noticed = match answer {
        Some((Ok(Recv::Message), _)) => {
            return Err("a reply arrived from a peer process that was killed".into());
        }
        Some((_, when)) => when.saturating_duration_since(killed),
        None => {
            return Err(format!(
                "a request to a killed peer process neither failed nor ended within {} s",
                limit.as_secs()
            ));
        }
    };
    Ok(Verdict::Pass(format!(
        "noticed {:.0} ms after the kill mid-stream, {:.0} ms mid-request",
        stream_noticed.as_secs_f64() * 1e3,
        request_noticed.as_secs_f64() * 1e3
    )))
}

/// 10⁵ messages of two sizes through `stream --verify` to a peer process.
fn integrity<T: Transport + Clone>(
    t: &T,
    spec: &CheckSpec,
    timeout: Duration,
) -> Result<Verdict, String> {
    let mut sizes = vec![size_for(t, 64), size_for(t, 4096)];
    sizes.dedup();
    sizes.retain(|&s| s >= HEADER_LEN);
    if sizes.is_empty() {
        return Ok(Verdict::Skip(format!(
            "--verify needs messages of at least {HEADER_LEN} bytes"
        )));
    }
    let stop = AtomicBool::new(false);
    for &size in &sizes {
        let point = PointSpec {
            transport_params: crate::transports::resolve(&spec.transport, &spec.params)
                .map_err(|e| e.to_string())?,
            ..PointSpec::new(&spec.transport, size as u64, 1)
        };
        let opts = PeerOptions {
            workload: WorkloadKind::Stream,
            limit: Limit::Count(INTEGRITY_MESSAGES),
            verify: true,
            peer: PeerMode::Process(spec.launcher.clone()),
            pin: false,
            corrupt_every: None,
            launcher: None,
            hang_timeout: timeout,
        };
        let mut rig = PeerRig::start(t.clone(), &point, &opts, None)
            .map_err(|e| crate::measure::chain(&e))?;
        let mut ctl = RunControl::new(&stop, timeout, None);
        let record = rig.run_once(&mut ctl);
        let _ = Box::new(rig).finish();
        let record = record.map_err(|e| format!("{size} B: {}", crate::measure::chain(&e)))?;
        let Some(i) = record.integrity else {
            return Err(format!("{size} B: the run recorded no integrity counts"));
        };
        if !i.is_clean() || i.checked != INTEGRITY_MESSAGES {
            return Err(format!(
                "{size} B: of {INTEGRITY_MESSAGES} messages sent, {} checked: {} lost, {} duplicated, {} reordered, {} corrupt",
                i.checked, i.lost, i.duplicated, i.reordered, i.corrupt
            ));
        }
    }
    let shown: Vec<String> = sizes.iter().map(|s| format!("{s} B")).collect();
    Ok(Verdict::Pass(format!(
        "10^5 messages each of {}, verified: none lost, duplicated, reordered or corrupt",
        shown.join(" and ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: Status, detail: &str) -> Outcome {
        Outcome {
            status,
            detail: detail.into(),
        }
    }

    #[test]
    fn a_check_that_left_files_fails_naming_them_after_what_it_found() {
        let left = Found {
            left: vec!["/tmp/a".into(), "/dev/shm/b".into()],
            note: None,
        };
        let o = with_leaks(outcome(Status::Pass, "2000 round trips"), left.clone());
        assert_eq!(o.status, Status::Fail);
        assert_eq!(
            o.detail,
            "left behind: /tmp/a, /dev/shm/b (after: 2000 round trips)"
        );
        let o = with_leaks(outcome(Status::Fail, "recv: timed out"), left);
        assert_eq!(o.status, Status::Fail);
        assert_eq!(o.detail, "recv: timed out; left behind: /tmp/a, /dev/shm/b");
    }

    #[test]
    fn a_clean_check_keeps_its_verdict_and_says_how_it_was_watched() {
        let o = with_leaks(outcome(Status::Skip, "no zero-copy mode"), Found::default());
        assert_eq!(o, outcome(Status::Skip, "no zero-copy mode"));
        let found = Found {
            left: Vec::new(),
            note: Some("watched by snapshot: why".into()),
        };
        let o = with_leaks(outcome(Status::Pass, "fine"), found);
        assert_eq!(o, outcome(Status::Pass, "fine [watched by snapshot: why]"));
    }
}
