//! The rig of a plugin transport's point: the [peer rig](super::peers) run inside a
//! child process, the *measuring process*, which the xferbench process supervises.
//!
//! # Why a child
//!
//! The driver threads of the peer rig call the plugin on every message. Run in the
//! xferbench process, a plugin's crash would take the tool down with every result
//! it holds. So the measuring process ([`Role::PluginDriver`], [`driver_main`])
//! loads the plugin, starts the peers as its own children (threads of its own with
//! `--peer thread`), and runs the peer rig unchanged: the same monomorphised loops
//! (`drive::<PluginEndpoint>`: one indirect call into the plugin per message, no
//! other cost), the same supervision of its peers (a dead peer, no progress for
//! `--timeout`), the same [`RunRecord`]. This process, [`PluginRig`], only relays:
//! one control line per run, the counters' window, and the record back.
//!
//! A measuring process that dies is reported like a dead peer (its pid, the signal,
//! its last words); one that stops answering is killed after a bound and reported as
//! hung. Either way the point fails, the points finished before are kept, and the
//! plugin's clean-up hook runs on the visit's scope ([`crate::plugins::clean_up`]),
//! whatever happened.
//!
//! # Control protocol
//!
//! JSON lines. Down (stdin): `run`, `go` (after a window notice, when counters are
//! recorded), `stop` (Ctrl-C), `quit`. Up (stdout): `started {participants}` once
//! the peers are connected, then per run `window_started`, `window_ended` and
//! `record {record}`, or `failed {message, kind}`.

use super::peers::{PeerMode, PeerOptions, PeerRig};
use super::{Rig, RunControl, RunError};
use crate::error::WorkloadError;
use crate::peer::PEER_TIMEOUT;
use crate::plugins::{self, SCOPE_ENV, TIMEOUT_ENV};
use crate::replies::{self, Line};
use crate::result::RunRecord;
use crate::sweep::PointSpec;
use crate::transports::{WithTransport, dispatch};
use crate::workload::{Limit, WorkloadKind};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::process::ChildStdin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use xferbench_params::ParamValues;
use xferbench_probes::counters::{CounterSource, Participant, RunCounters};
use xferbench_probes::leaks::Snapshot;
use xferbench_probes::process::{Child, Launcher, Role, Streams, Supervised};
use xferbench_transports::{Params, Transport};

/// What the measuring process is given (one JSON argument).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriverSpec {
    /// The plugin transport, `plugin:/abs/path:NAME`.
    pub transport: String,
    /// Its parameters.
    pub transport_params: Params,
    /// Message size, bytes.
    pub size: u64,
    /// Channels.
    pub channels: usize,
    /// Zero-copy.
    pub zero_copy: bool,
    /// The workload.
    pub workload: WorkloadKind,
    /// The values of the workload's own parameters set for the point, in their
    /// machine form.
    #[serde(default, skip_serializing_if = "Params::is_empty")]
    pub workload_params: Params,
    /// Run length per channel.
    pub limit: Limit,
    /// Verify payloads.
    pub verify: bool,
    /// Peers as threads of the measuring process, rather than its children.
    pub thread_peers: bool,
    /// Pin drivers and peers.
    pub pin: bool,
    /// Fault injection for tests.
    pub corrupt_every: Option<u64>,
    /// The hang timeout, milliseconds.
    pub hang_timeout_ms: u64,
    /// How the measuring process starts its peers (under valgrind with
    /// `--counters callgrind`).
    pub peer_launcher: Launcher,
    /// Whether counters are recorded: each window notice then waits for `go`.
    pub counters: bool,
    /// The file's SHA-256 when it was probed; a file that changed since is refused.
    pub sha256: Option<String>,
    /// With `--remote`: the agent that runs the peers (its token in
    /// [`REMOTE_TOKEN_ENV`]).
    #[serde(default)]
    pub remote: Option<RemoteSpec>,
}

/// The agent of a plugin point's peers (`--remote`), as the measuring process is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteSpec {
    /// `HOST:PORT` of the agent.
    pub agent: String,
    /// The host data connections dial instead of the agent's address.
    pub data_host: Option<String>,
    /// This host's address on the route to the agent (`xb_host::listen_host`).
    pub listen_host: String,
}

/// The environment variable carrying the agent's token (hex) to the measuring process.
pub const REMOTE_TOKEN_ENV: &str = "XFERBENCH_PLUGIN_REMOTE_TOKEN";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
enum Command {
    Run,
    Go,
    Stop,
    Quit,
}

/// How a failure is to be reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FailKind {
    Usage,
    Interrupted,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
enum Reply {
    Started { participants: Vec<(String, u32)> },
    WindowStarted,
    WindowEnded,
    Record { record: Box<RunRecord> },
    Failed { message: String, kind: FailKind },
}

type Event = Line<Reply>;

/// The xferbench process's side: a measuring process per visit of a plugin point.
pub struct PluginRig {
    child: Child,
    stdin: ChildStdin,
    events: Receiver<Event>,
    participants: Vec<Participant>,
    name: String,
    spec: String,
    scope: String,
    launcher: Launcher,
    limit: Limit,
    counters: bool,
    cleaned: bool,
    /// The host's `/tmp`, `/dev/shm` and `/dev/mqueue` before the visit.
    before: Snapshot,
    /// What the visit left behind, once its clean-up ran.
    left: Vec<String>,
}

impl std::fmt::Debug for PluginRig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginRig")
            .field("transport", &self.name)
            .field("pid", &self.child.pid())
            .finish()
    }
}

/// How long the measuring process may take to start its peers and connect.
fn start_limit(hang: Duration) -> Duration {
    PEER_TIMEOUT * 2 + hang
}

/// Where the measuring process of a remote run sends its peers (the agent, the data
/// host, and this host's address towards the agent, which its listeners bind), and
/// the token in hex.
fn remote_spec(
    transport: &str,
    target: &crate::remote::RemoteTarget,
) -> Result<(RemoteSpec, Option<String>), RunError> {
    crate::remote::crosses_hosts(transport).map_err(RunError::Config)?;
    let agent = target
        .resolve()
        .map_err(|e| RunError::Participant(format!("--remote: {e}")))?;
    let ip = crate::remote::source_ip_towards(agent)
        .map_err(|e| RunError::Participant(format!("--remote: no route to {agent}: {e}")))?;
    let spec = RemoteSpec {
        agent: target.agent.clone(),
        data_host: target.data_host.clone(),
        listen_host: ip.to_string(),
    };
    let token = target
        .token
        .as_ref()
        .map(|t| crate::remote::auth::hex(t.bytes()));
    Ok((spec, token))
}

impl PluginRig {
    /// Starts the measuring process of `point` and waits until its peers are up.
    pub fn start(
        point: &PointSpec,
        opts: &PeerOptions,
        source: Option<&dyn CounterSource>,
    ) -> Result<PluginRig, RunError> {
        let name = plugins::display_name(&point.transport);
        let launcher = opts.launcher.clone().ok_or_else(|| {
            RunError::Config(format!(
                "plugin transport `{name}` runs in a process of its own, and this caller gave no launcher"
            ))
        })?;
        let thread_peers = opts.peer == PeerMode::Thread;
        let remote = match &opts.peer {
            PeerMode::Remote(target) => Some(remote_spec(&point.transport, target)?),
            _ => None,
        };
        let peer_launcher = match (&opts.peer, source) {
            (PeerMode::Process(l), Some(src)) => src.wrap_peer(l.clone()),
            (PeerMode::Process(l), None) => l.clone(),
            _ => launcher.clone(),
        };
        let defs = crate::transports::descriptor(&point.transport)?.params;
        let spec = DriverSpec {
            transport: point.transport.clone(),
            transport_params: point.transport_params.machine(&defs),
            size: point.size,
            channels: point.channels,
            zero_copy: point.zero_copy,
            workload: opts.workload,
            workload_params: point.workload_params.machine(opts.workload.params()),
            limit: opts.limit,
            verify: opts.verify,
            thread_peers,
            pin: opts.pin,
            corrupt_every: opts.corrupt_every,
            hang_timeout_ms: opts.hang_timeout.as_millis() as u64,
            peer_launcher,
            counters: source.is_some(),
            sha256: plugins::sha256_of(&point.transport),
            remote: remote.as_ref().map(|(r, _)| r.clone()),
        };
        let json = serde_json::to_string(&spec).expect("the spec serialises");
        let scope = plugins::new_scope();
        let before = Snapshot::take();
        let mut cmd = launcher
            .command(Role::PluginDriver, [json])
            .map_err(|e| RunError::Participant(e.to_string()))?;
        cmd.env(SCOPE_ENV, &scope);
        cmd.env(TIMEOUT_ENV, spec.hang_timeout_ms.to_string());
        if let Some((r, token)) = &remote {
            cmd.env(plugins::LISTEN_HOST_ENV, &r.listen_host);
            // The token travels in the environment, which only this user can read,
            // never on a command line.
            if let Some(token) = token {
                cmd.env(REMOTE_TOKEN_ENV, token);
            }
        }
        let mut child = Child::spawn(cmd, Streams::PIPED).map_err(|e| {
            RunError::Participant(format!(
                "cannot start the measuring process of `{name}`: {e}"
            ))
        })?;
        tracing::info!(transport = %name, pid = child.pid(), scope, "started the measuring process of a plugin transport");
        let stdin = child.take_stdin().expect("piped stdin");
        let stdout = child.take_stdout().expect("piped stdout");
        let mut rig = PluginRig {
            child,
            stdin,
            events: replies::read(replies::lines_of(stdout)),
            participants: Vec::new(),
            name,
            spec: point.transport.clone(),
            scope,
            launcher,
            limit: opts.limit,
            counters: source.is_some(),
            cleaned: false,
            before,
            left: Vec::new(),
        };
        let limit = start_limit(opts.hang_timeout);
        match rig.next_reply("start its peers", Instant::now() + limit, None)? {
            Reply::Started { participants } => {
                rig.participants = participants
                    .into_iter()
                    .map(|(name, pid)| Participant { name, pid })
                    .collect();
                Ok(rig)
            }
            other => Err(rig.protocol(&format!("expected started, got {other:?}"))),
        }
    }

    fn protocol(&mut self, what: &str) -> RunError {
        self.child.kill();
        RunError::Participant(format!(
            "the measuring process of `{}` broke the control protocol: {what}",
            self.name
        ))
    }

    fn died(&mut self) -> Option<RunError> {
        self.child
            .exited_within(Duration::from_millis(500))
            .map(|ended| {
                RunError::Participant(format!(
                    "the measuring process of plugin transport `{}` {ended}",
                    self.name
                ))
            })
    }

    fn send(&mut self, cmd: &Command) -> Result<(), RunError> {
        let mut line = serde_json::to_string(cmd).expect("commands serialise");
        line.push('\n');
        if self
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
            .is_err()
        {
            return Err(self.died().unwrap_or_else(|| {
                RunError::Participant(format!(
                    "the measuring process of `{}` stopped reading commands",
                    self.name
                ))
            }));
        }
        Ok(())
    }

    /// The next reply, failing on a dead process, garbage, a deadline, or a `failed`
    /// reply. With `stop`, a Ctrl-C is forwarded once.
    fn next_reply(
        &mut self,
        what: &str,
        deadline: Instant,
        stop: Option<&AtomicBool>,
    ) -> Result<Reply, RunError> {
        let mut stop_sent: Option<Instant> = None;
        loop {
            match self.events.recv_timeout(Duration::from_millis(20)) {
                Ok(Event::Reply(Reply::Failed { message, kind })) => {
                    return Err(failure(message, kind));
                }
                Ok(Event::Reply(r)) => return Ok(r),
                Ok(Event::Garbage(line)) => {
                    return Err(self.protocol(&format!("unexpected output {line:?}")));
                }
                Ok(Event::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.died().unwrap_or_else(|| {
                        RunError::Participant(format!(
                            "the measuring process of `{}` closed its output while expected to {what}",
                            self.name
                        ))
                    }));
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Some(e) = self.child.exited() {
                        // A process that reports a failure and exits does both at once:
                        // its last reply can still be on its way from the reader, and it
                        // says more than the exit status.
                        if let Some(failed) = self.reply_left_after_exit() {
                            return Err(failed);
                        }
                        return Err(RunError::Participant(format!(
                            "the measuring process of plugin transport `{}` {e}",
                            self.name
                        )));
                    }
                    if let Some(stop) = stop
                        && stop.load(Ordering::Relaxed)
                    {
                        match stop_sent {
                            None => {
                                let _ = self.send(&Command::Stop);
                                stop_sent = Some(Instant::now());
                            }
                            Some(t) if t.elapsed() > Duration::from_secs(3) => {
                                self.child.kill();
                                return Err(RunError::Interrupted);
                            }
                            Some(_) => {}
                        }
                    }
                    if Instant::now() >= deadline {
                        let pid = self.child.pid();
                        let during = match crate::plugins::calls_in_flight(
                            &mut self.child,
                            Duration::from_millis(500),
                        ) {
                            Some(calls) if !calls.is_empty() => {
                                format!(" in plugin call {}", calls.join(", "))
                            }
                            _ => String::new(),
                        };
                        self.child.kill();
                        return Err(RunError::Participant(format!(
                            "the measuring process of plugin transport `{}` (pid {pid}) did not {what} in time: hung{during}, killed",
                            self.name
                        )));
                    }
                }
            }
        }
    }

    /// After the measuring process exited: a `failed` reply it wrote before it went
    /// ([`replies::last_words`]).
    fn reply_left_after_exit(&mut self) -> Option<RunError> {
        replies::last_words(&self.events, |r| match r {
            Reply::Failed { message, kind } => Some(failure(message, kind)),
            _ => None,
        })
    }

    fn clean_up(&mut self) {
        if self.cleaned {
            return;
        }
        self.cleaned = true;
        if let Err(e) = plugins::clean_up(&self.launcher, &self.spec, &self.scope) {
            tracing::warn!(transport = %self.name, error = %e, "plugin clean-up failed");
            eprintln!("warning: plugin transport `{}`: {e}", self.name);
        }
        // Files of other programs appear too: only names that carry the scope or
        // the pid of one of the visit's processes count.
        let mut tokens = vec![self.scope.clone(), self.child.pid().to_string()];
        tokens.extend(self.participants.iter().map(|p| p.pid.to_string()));
        self.left = self.before.left_since(&tokens);
        if !self.left.is_empty() {
            eprintln!("warning: {}", self.left_warning());
        }
    }

    /// The warning about what the visit left behind.
    fn left_warning(&self) -> String {
        format!(
            "plugin transport `{}` left behind {} file(s) created during the point: {}; \
             remove them when done, or name them under the clean-up scope and remove \
             them in the clean-up hook",
            self.name,
            self.left.len(),
            xferbench_probes::leaks::shown(&self.left)
        )
    }
}

impl Drop for PluginRig {
    fn drop(&mut self) {
        self.child.kill();
        self.clean_up();
    }
}

/// Whether a channel failed because its other end closed or went away while
/// messages were still expected.
fn closed_early(e: &RunError) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cur {
        match c.downcast_ref::<WorkloadError>() {
            Some(WorkloadError::PeerClosed { .. }) => return true,
            Some(WorkloadError::Io { source, .. })
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
                ) =>
            {
                return true;
            }
            _ => {}
        }
        cur = c.source();
    }
    false
}

/// The error a `failed` reply stands for.
fn failure(message: String, kind: FailKind) -> RunError {
    match kind {
        FailKind::Interrupted => RunError::Interrupted,
        FailKind::Usage => RunError::Config(message),
        FailKind::Failed => RunError::Participant(message),
    }
}

impl Rig for PluginRig {
    /// `main` is the measuring process; then its peer processes.
    fn participants(&self) -> Vec<Participant> {
        self.participants.clone()
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        self.send(&Command::Run)?;
        // Until the window starts: connecting, bounded like a peer's connection.
        // After: the run's own length, then the hang timeout (the measuring process
        // detects hung channels itself; this bounds a process that stopped answering).
        let connect_limit = start_limit(ctl.hang_timeout);
        let mut deadline = Instant::now() + connect_limit;
        loop {
            let what = "finish its run";
            match self.next_reply(what, deadline, Some(ctl.stop))? {
                Reply::WindowStarted => {
                    deadline = match self.limit {
                        Limit::Duration(ns) => {
                            Instant::now()
                                + Duration::from_nanos(ns)
                                + ctl.hang_timeout
                                + PEER_TIMEOUT * 2
                        }
                        // Counted runs have no length known in advance: the
                        // measuring process's own watch over progress bounds them.
                        Limit::Count(_) => Instant::now() + Duration::from_secs(86_400 * 365),
                    };
                    // The window's notice starts what this process watches over it
                    // (the machine's load, and counters when asked); only counters
                    // make the measuring process wait for the go-ahead.
                    ctl.window_started();
                    if self.counters {
                        self.send(&Command::Go)?;
                    }
                }
                Reply::WindowEnded => {
                    deadline = Instant::now() + connect_limit;
                    ctl.window_ended();
                    if self.counters {
                        self.send(&Command::Go)?;
                    }
                }
                Reply::Record { record } => {
                    let mut record = *record;
                    record.counters = ctl.take_counters();
                    return Ok(record);
                }
                other => return Err(self.protocol(&format!("unexpected {other:?}"))),
            }
        }
    }

    fn finish(self: Box<Self>) -> Result<(), RunError> {
        self.finish_with_warnings(&mut Vec::new())
    }

    fn finish_with_warnings(
        mut self: Box<Self>,
        warnings: &mut Vec<String>,
    ) -> Result<(), RunError> {
        let quit = self.send(&Command::Quit);
        let ended = self
            .child
            .exited_within(PEER_TIMEOUT + Duration::from_secs(2));
        let result = match ended {
            Some(e) if e.success() => quit,
            Some(e) => Err(RunError::Participant(format!(
                "the measuring process of plugin transport `{}` {e}",
                self.name
            ))),
            None => {
                self.child.kill();
                Err(RunError::Participant(format!(
                    "the measuring process of plugin transport `{}` did not exit after its point: killed",
                    self.name
                )))
            }
        };
        self.clean_up();
        if !self.left.is_empty() {
            warnings.push(self.left_warning());
        }
        result
    }
}

/// The measuring process's way of replying: one JSON line on stdout.
#[derive(Clone)]
struct Out(Arc<Mutex<std::io::Stdout>>);

impl Out {
    fn send(&self, r: &Reply) -> bool {
        let line = serde_json::to_string(r).expect("replies serialise");
        let mut o = self.0.lock().unwrap_or_else(|e| e.into_inner());
        writeln!(o, "{line}").and_then(|()| o.flush()).is_ok()
    }
}

/// Relays the counters' window of the measuring process to the xferbench process,
/// which counts: each notice waits for `go` when counters are recorded, so that the
/// counters start before the drivers are released.
struct WindowRelay {
    out: Out,
    commands: Arc<Mutex<Receiver<Command>>>,
    wait: bool,
}

impl WindowRelay {
    fn notice(&mut self, r: Reply) {
        if self.out.send(&r) && self.wait {
            // A parent that does not answer is dead or stopping: go on regardless.
            let commands = self.commands.lock().unwrap_or_else(|e| e.into_inner());
            let _ = commands.recv_timeout(PEER_TIMEOUT);
        }
    }
}

impl CounterSource for WindowRelay {
    fn window_started(&mut self, _: &[Participant]) {
        self.notice(Reply::WindowStarted);
    }

    fn window_ended(&mut self) -> Option<RunCounters> {
        self.notice(Reply::WindowEnded);
        None
    }

    fn point_finished(&mut self, _: &[Participant], _: &mut Vec<String>) -> Option<RunCounters> {
        None
    }
}

fn fail_kind(e: &RunError) -> FailKind {
    match e {
        RunError::Interrupted => FailKind::Interrupted,
        e if e.is_usage() => FailKind::Usage,
        _ => FailKind::Failed,
    }
}

/// The body of the [`Role::PluginDriver`] process. Returns the exit status.
pub fn driver_main(spec_json: &str) -> i32 {
    xferbench_probes::process::die_with_parent();
    plugins::may_load_plugins();
    let out = Out(Arc::new(Mutex::new(std::io::stdout())));
    let spec: DriverSpec = match serde_json::from_str(spec_json) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("plugin measuring process: bad spec: {e} (this is an internal role)");
            return 2;
        }
    };
    let size = spec.size;
    let fail = |e: &RunError| {
        let mut message = crate::measure::chain(e);
        if size == 1 && closed_early(e) {
            message.push_str(&format!(
                " (a 1-byte message may have been taken for the end of the stream: {})",
                xferbench_transports::plugin::CLOSED_IS_ONE
            ));
        }
        out.send(&Reply::Failed {
            message,
            kind: fail_kind(e),
        });
    };
    if let Err(e) = check_unchanged(&spec) {
        fail(&e);
        return 1;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let commands = read_commands(stop.clone());
    let mut rig = match start_rig(&spec) {
        Ok(r) => r,
        Err(e) => {
            fail(&e);
            return 1;
        }
    };
    let participants = rig.participants();
    out.send(&Reply::Started {
        participants: participants
            .iter()
            .map(|p| (p.name.clone(), p.pid))
            .collect(),
    });
    let mut status = 0;
    let mut relay = WindowRelay {
        out: out.clone(),
        commands: commands.clone(),
        wait: spec.counters,
    };
    let hang_timeout = Duration::from_millis(spec.hang_timeout_ms);
    loop {
        let next = commands.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(cmd) = next else { break };
        match cmd {
            Command::Run => {
                let mut ctl =
                    RunControl::new(&stop, hang_timeout, Some((&mut relay, &participants)));
                match rig.run_once(&mut ctl) {
                    Ok(record) => {
                        out.send(&Reply::Record {
                            record: Box::new(record),
                        });
                    }
                    Err(e) => {
                        fail(&e);
                        status = 1;
                        break;
                    }
                }
            }
            Command::Quit => break,
            Command::Go | Command::Stop => {}
        }
    }
    if let Err(e) = rig.finish()
        && status == 0
    {
        eprintln!("plugin measuring process: {}", crate::measure::chain(&e));
        status = 1;
    }
    status
}

/// The plugin's file is the one the run started with (when the parent sent its
/// digest).
fn check_unchanged(spec: &DriverSpec) -> Result<(), RunError> {
    let Some(expected) = &spec.sha256 else {
        return Ok(());
    };
    let Some(parsed) = xferbench_transports::plugin::PluginSpec::parse(&spec.transport) else {
        return Ok(());
    };
    match xferbench_transports::plugin::check_file(&parsed.path) {
        Ok((_, sha)) if &sha == expected => Ok(()),
        Ok(_) => Err(RunError::Config(format!(
            "plugin {}: the file changed since the run started (rebuilt?); run again",
            parsed.path
        ))),
        Err(e) => Err(RunError::Config(e.to_string())),
    }
}

/// Reads the parent's commands from stdin on a thread of their own: `stop` sets the
/// flag the peer rig watches; the rest are queued. A closed input (the parent is
/// gone or done with us) stops and quits.
fn read_commands(stop: Arc<AtomicBool>) -> Arc<Mutex<Receiver<Command>>> {
    let (cmd_tx, commands) = mpsc::channel::<Command>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            match serde_json::from_str::<Command>(&line) {
                Ok(Command::Stop) => stop.store(true, Ordering::Relaxed),
                Ok(c) => {
                    if cmd_tx.send(c).is_err() {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        stop.store(true, Ordering::Relaxed);
        let _ = cmd_tx.send(Command::Quit);
    });
    Arc::new(Mutex::new(commands))
}

/// Where the measuring process's peers run: on the agent's host (with the token the
/// parent passed in the environment), as threads, or as processes.
fn peer_mode(spec: &DriverSpec) -> Result<PeerMode, RunError> {
    let Some(r) = &spec.remote else {
        return Ok(if spec.thread_peers {
            PeerMode::Thread
        } else {
            PeerMode::Process(spec.peer_launcher.clone())
        });
    };
    let token = match std::env::var(REMOTE_TOKEN_ENV) {
        Ok(hex) => Some(
            crate::remote::auth::unhex(&hex, hex.len() / 2)
                .ok_or_else(|| "not hex".to_string())
                .and_then(crate::remote::auth::Token::new)
                .map_err(|e| RunError::Config(format!("--remote: the token: {e}")))?,
        ),
        Err(_) => None,
    };
    Ok(PeerMode::Remote(crate::remote::RemoteTarget {
        agent: r.agent.clone(),
        token,
        data_host: r.data_host.clone(),
    }))
}

/// The peer rig of the spec's point over the plugin transport.
fn start_rig(spec: &DriverSpec) -> Result<Box<dyn Rig>, RunError> {
    let values = crate::transports::resolve(&spec.transport, &spec.transport_params)?;
    let workload_params = ParamValues::parse(
        spec.workload.name(),
        spec.workload.params(),
        &spec.workload_params,
    )
    .map_err(|e| RunError::Config(e.to_string()))?;
    let point = PointSpec {
        transport_params: values.clone(),
        zero_copy: spec.zero_copy,
        workload_params,
        ..PointSpec::new(&spec.transport, spec.size, spec.channels)
    };
    let opts = PeerOptions {
        workload: spec.workload,
        limit: spec.limit,
        verify: spec.verify,
        peer: peer_mode(spec)?,
        pin: spec.pin,
        corrupt_every: spec.corrupt_every,
        launcher: None,
        hang_timeout: Duration::from_millis(spec.hang_timeout_ms),
    };
    struct Start<'a> {
        point: &'a PointSpec,
        opts: &'a PeerOptions,
    }
    impl WithTransport for Start<'_> {
        type Output = Result<Box<dyn Rig>, RunError>;
        fn with<T: Transport + Clone>(self, t: T) -> Self::Output {
            Ok(Box::new(PeerRig::start(t, self.point, self.opts, None)?))
        }
    }
    let start = Start {
        point: &point,
        opts: &opts,
    };
    dispatch(&spec.transport, &values, start)?
}
