//! Peers: the serving side of each channel, as a thread of this process or as a
//! re-executed copy of the binary in its peer role ([`Role::Peer`], started through
//! the [`Launcher`] the binary supplies).
//!
//! # Control protocol (process peers)
//!
//! One JSON object per line. The parent writes [`PeerCommand`]s to the peer's stdin:
//! first `hello` with the [`PeerSpec`], then one `run` per run with the address to
//! connect to, and finally `quit`. The peer answers on stdout with [`PeerReply`]s:
//! `ready` once connected (its CPU window starts there), then `done` with what it
//! measured and its CPU usage, or `failed` with a message. A peer whose stdin closes
//! exits; a peer whose parent dies is killed by the kernel
//! ([`xferbench_probes::process::die_with_parent`]).
//!
//! Thread peers run the same loop with in-process channels instead of pipes.
//!
//! The parent never waits on a peer without a bound: every wait polls the peer's
//! liveness, and a dead peer is reported with its exit status or signal and the tail
//! of its stderr.

use crate::error::PeerError;
use crate::remote::protocol::RemoteRole;
use crate::remote::{RemoteChild, Session};
use crate::replies::{self, Line};
use crate::transports::{WithTransport, dispatch};
use crate::workload::{ChannelSpec, ServeOutcome, serve};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::process::ChildStdin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};
use xferbench_probes::affinity::pin_current_thread;
use xferbench_probes::cpu::{CpuSnapshot, ProcessCpu};
use xferbench_probes::process::{Child, Launcher, Role, Streams, Supervised};
use xferbench_transports::{Endpoint, Params, Transport};

/// Everything a peer needs to serve one channel of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerSpec {
    /// Channel number.
    pub channel: usize,
    /// Transport name.
    pub transport: String,
    /// Transport parameters, in their machine form (read back by the transport's
    /// definitions).
    pub transport_params: Params,
    /// What to do on the channel.
    pub spec: ChannelSpec,
    /// CPU to pin the serving thread to.
    pub pin_cpu: Option<usize>,
    /// A plugin transport's file SHA-256 on the measuring side: a peer whose file
    /// differs (another host's build, with `--remote`) refuses to serve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin_sha256: Option<String>,
}

/// Parent → peer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum PeerCommand {
    /// First command: what to serve.
    Hello(PeerSpec),
    /// Connect to `address` and serve one run.
    Run {
        /// The listener's address.
        address: String,
    },
    /// Exit.
    Quit,
}

/// Peer → parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum PeerReply {
    /// Connected; serving starts.
    Ready,
    /// The run ended.
    Done {
        /// What the serving side measured.
        outcome: ServeOutcome,
        /// Its CPU usage (process peers only).
        cpu: Option<ProcessCpu>,
    },
    /// Something failed; the peer exits after this.
    Failed {
        /// The error.
        message: String,
    },
}

impl PeerCommand {
    /// Parses one line of the control protocol (a JSON object, without its newline),
    /// as a peer reads it from its stdin. Any text gives a command or an error.
    pub fn from_line(line: &str) -> Result<PeerCommand, serde_json::Error> {
        serde_json::from_str(line)
    }

    /// The line (JSON, without its newline) that carries the command.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("commands serialise")
    }
}

impl PeerReply {
    /// Parses one line of the control protocol (a JSON object, without its newline),
    /// as the parent reads it from a peer's stdout. Any text gives a reply or an error.
    pub fn from_line(line: &str) -> Result<PeerReply, serde_json::Error> {
        serde_json::from_str(line)
    }

    /// The line (JSON, without its newline) that carries the reply.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("replies serialise")
    }
}

/// How long a peer may take to connect, or to finish after the driver closed.
pub const PEER_TIMEOUT: Duration = Duration::from_secs(10);

type Event = Line<PeerReply>;

enum Kind {
    Thread {
        commands: Sender<PeerCommand>,
        /// Set by [`Peer::kill`]: the thread's endpoint stops waiting
        /// ([`Endpoint::abandon_when`]), so that the thread ends and drops it.
        abandon: Arc<AtomicBool>,
        /// Joined by [`Peer::quit`], so that its endpoint is gone when the rig is.
        handle: Option<thread::JoinHandle<()>>,
    },
    Process {
        // Stdin first: dropped (closed) before the child is killed and reaped.
        stdin: ChildStdin,
        child: Child,
    },
    Remote {
        child: RemoteChild,
    },
}

/// How long a hung peer is given to write the plugin calls it is in.
const CALLS_GRACE: Duration = Duration::from_millis(500);

/// The parent's handle on one peer.
pub struct Peer {
    channel: usize,
    kind: Kind,
    events: Receiver<Event>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("channel", &self.channel)
            .field("pid", &self.pid())
            .finish()
    }
}

impl Peer {
    /// Starts a thread peer.
    pub fn thread(spec: PeerSpec) -> Peer {
        let (cmd_tx, cmd_rx) = mpsc::channel::<PeerCommand>();
        let (ev_tx, ev_rx) = mpsc::channel();
        let channel = spec.channel;
        tracing::info!(
            channel,
            transport = %spec.transport,
            pid = std::process::id(),
            "starting thread peer"
        );
        let abandon = Arc::new(AtomicBool::new(false));
        let flag = abandon.clone();
        let handle = thread::Builder::new()
            .name(format!("peer-{channel}"))
            .spawn(move || {
                let mut reply = |r: PeerReply| ev_tx.send(Event::Reply(r)).is_ok();
                serve_commands(spec, || cmd_rx.recv().ok(), &mut reply, false, Some(flag));
            })
            .expect("spawning a thread");
        Peer {
            channel,
            kind: Kind::Thread {
                commands: cmd_tx,
                abandon,
                handle: Some(handle),
            },
            events: ev_rx,
        }
    }

    /// Starts a process peer: the launcher's [`Role::Peer`].
    pub fn process(spec: PeerSpec, launcher: &Launcher) -> Result<Peer, PeerError> {
        let channel = spec.channel;
        let none: [&str; 0] = [];
        let mut child = launcher
            .spawn(Role::Peer, none, Streams::PIPED)
            .map_err(PeerError::Spawn)?;
        tracing::info!(
            channel,
            transport = %spec.transport,
            pid = child.pid(),
            "started peer process"
        );
        let stdin = child.take_stdin().expect("piped stdin");
        let stdout = child.take_stdout().expect("piped stdout");
        let mut peer = Peer {
            channel,
            kind: Kind::Process { stdin, child },
            events: replies::read(replies::lines_of(stdout)),
        };
        peer.send(&PeerCommand::Hello(spec))?;
        Ok(peer)
    }

    /// Starts a peer on the agent's host ([`crate::remote`]): the agent starts its
    /// [`Role::Peer`] and relays the control protocol.
    pub fn remote(spec: PeerSpec, session: &std::sync::Arc<Session>) -> Result<Peer, PeerError> {
        let channel = spec.channel;
        let mut child = session
            .spawn(RemoteRole::Peer, None)
            .map_err(|source| PeerError::Remote { channel, source })?;
        tracing::info!(
            channel,
            transport = %spec.transport,
            agent = %session.agent(),
            pid = child.pid(),
            "started a peer on the agent's host"
        );
        let lines = child.take_stdout().expect("stdout taken once");
        let mut peer = Peer {
            channel,
            kind: Kind::Remote { child },
            events: replies::read(lines),
        };
        peer.send(&PeerCommand::Hello(spec))?;
        Ok(peer)
    }

    /// The channel this peer serves.
    pub fn channel(&self) -> usize {
        self.channel
    }

    /// The peer's process id (this process's for a thread peer).
    pub fn pid(&self) -> u32 {
        match &self.kind {
            Kind::Thread { .. } => std::process::id(),
            Kind::Process { child, .. } => child.pid(),
            Kind::Remote { child } => child.pid(),
        }
    }

    /// The peer's process, here or on the agent's host (none for a thread peer).
    fn child(&mut self) -> Option<&mut dyn Supervised> {
        match &mut self.kind {
            Kind::Thread { .. } => None,
            Kind::Process { child, .. } => Some(child),
            Kind::Remote { child } => Some(child),
        }
    }

    /// Sends a command.
    pub fn send(&mut self, cmd: &PeerCommand) -> Result<(), PeerError> {
        let ok = match &mut self.kind {
            Kind::Thread { commands, .. } => commands.send(cmd.clone()).is_ok(),
            Kind::Process { stdin, .. } => {
                let mut line = cmd.to_line();
                line.push('\n');
                stdin
                    .write_all(line.as_bytes())
                    .and_then(|()| stdin.flush())
                    .is_ok()
            }
            Kind::Remote { child } => child
                .send_line(&serde_json::to_string(cmd).expect("commands serialise"))
                .is_ok(),
        };
        if ok {
            Ok(())
        } else {
            Err(self.death_or(PeerError::Protocol {
                channel: self.channel,
                message: "it stopped reading commands".into(),
            }))
        }
    }

    /// Waits for the next reply, at most `timeout`, noticing a dead peer at once.
    pub fn wait_reply(
        &mut self,
        what: &'static str,
        timeout: Duration,
    ) -> Result<PeerReply, PeerError> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.events.recv_timeout(Duration::from_millis(20)) {
                Ok(Event::Reply(PeerReply::Failed { message })) => {
                    return Err(PeerError::Failed {
                        channel: self.channel,
                        message,
                    });
                }
                Ok(Event::Reply(r)) => return Ok(r),
                Ok(Event::Garbage(line)) => {
                    return Err(PeerError::Protocol {
                        channel: self.channel,
                        message: format!("unexpected output {line:?}"),
                    });
                }
                Ok(Event::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    // The output ended: the process is exiting; wait for its status.
                    if let Some(e) = self.exited_within(Duration::from_secs(2)) {
                        return Err(e);
                    }
                    return Err(PeerError::Protocol {
                        channel: self.channel,
                        message: format!("it closed its output while expected to {what}"),
                    });
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Some(e) = self.exited() {
                        return Err(e);
                    }
                    if Instant::now() >= deadline {
                        return Err(PeerError::Timeout {
                            channel: self.channel,
                            what,
                            secs: timeout.as_secs(),
                        });
                    }
                }
            }
        }
    }

    /// If the peer process has exited, the error describing how: its own `failed`
    /// message when it sent one before exiting, else how it ended.
    pub fn exited(&mut self) -> Option<PeerError> {
        let channel = self.channel;
        let ended = self.child()?.exited()?;
        Some(
            self.said_why()
                .unwrap_or(PeerError::Died { channel, ended }),
        )
    }

    /// The `failed` message a peer that has exited sent before it went, if it sent
    /// one ([`replies::last_words`]).
    fn said_why(&mut self) -> Option<PeerError> {
        let channel = self.channel;
        replies::last_words(&self.events, |r| match r {
            PeerReply::Failed { message } => Some(PeerError::Failed { channel, message }),
            _ => None,
        })
    }

    fn death_or(&mut self, other: PeerError) -> PeerError {
        self.exited_within(Duration::from_millis(500))
            .unwrap_or(other)
    }

    /// Like [`Peer::exited`], but gives a dying process up to `within` to finish
    /// exiting (its output may close, or a transfer fail, just before it is reapable).
    pub fn exited_within(&mut self, within: Duration) -> Option<PeerError> {
        let channel = self.channel;
        let ended = self.child()?.exited_within(within)?;
        Some(
            self.said_why()
                .unwrap_or(PeerError::Died { channel, ended }),
        )
    }

    /// The plugin calls a process peer is in (see [`crate::plugins::calls_in_flight`]); `None`
    /// for a thread peer (this process's own calls hold its calls) or a remote one.
    pub fn calls_in_flight(&mut self) -> Option<Vec<String>> {
        match &mut self.kind {
            Kind::Process { child, .. } => crate::plugins::calls_in_flight(child, CALLS_GRACE),
            _ => None,
        }
    }

    /// Kills a process peer at once and reaps it (a peer on the agent's host is
    /// stopped); a thread peer's endpoint is abandoned, which ends its waits.
    pub fn kill(&mut self) {
        let channel = self.channel;
        if let Kind::Thread { abandon, .. } = &self.kind {
            tracing::info!(channel, "abandoning the thread peer's channel");
            abandon.store(true, Ordering::Relaxed);
        }
        if let Some(child) = self.child() {
            tracing::info!(channel, pid = child.pid(), "killing peer");
            child.halt_now();
        }
    }

    /// Asks the peer to exit and reaps it; kills it if it does not exit in time.
    pub fn quit(mut self) {
        tracing::info!(channel = self.channel, pid = self.pid(), "stopping peer");
        let _ = self.send(&PeerCommand::Quit);
        let channel = self.channel;
        if let Kind::Thread {
            handle, abandon, ..
        } = &mut self.kind
            && let Some(h) = handle.take()
        {
            // A thread still serving a run after the quit (and a moment for its last
            // goodbye) waits for something that will not come: its endpoint is
            // abandoned, which ends its waits within milliseconds. One still running
            // after the timeout is left detached.
            let start = Instant::now();
            while !h.is_finished() && start.elapsed() < PEER_TIMEOUT {
                if start.elapsed() >= Duration::from_secs(2) {
                    abandon.store(true, Ordering::Relaxed);
                }
                thread::sleep(Duration::from_millis(5));
            }
            if h.is_finished() {
                let _ = h.join();
            } else {
                tracing::warn!(channel, "the thread peer did not end in time; detached");
            }
        }
        if let Some(child) = self.child() {
            // Generous: a peer under valgrind writes its output file on exit.
            match child.exited_within(PEER_TIMEOUT) {
                Some(ended) => tracing::info!(
                    channel,
                    pid = ended.pid,
                    status = %ended.status_text(),
                    "peer stopped"
                ),
                None => {
                    tracing::warn!(
                        channel,
                        pid = child.pid(),
                        "peer did not exit in time; killing it"
                    );
                    child.halt_now();
                }
            }
        }
    }
}

/// `Ok` when this host's file of plugin transport `spec` has the SHA-256 `expected`
/// (the measuring side's), else why not, naming the file and this host.
fn same_plugin_file(spec: &str, expected: &str) -> Result<(), String> {
    let Some(parsed) = xferbench_transports::plugin::PluginSpec::parse(spec) else {
        return Ok(());
    };
    let host = || crate::remote::HostInfo::here().hostname;
    match xferbench_transports::plugin::check_file(&parsed.path) {
        Ok((_, sha)) if sha == expected => Ok(()),
        Ok((abs, sha)) => Err(format!(
            "plugin {} on host {}: its SHA-256 is {}…, the measuring side's file's is {}…: \
             install the same build at the same path on both hosts",
            abs.display(),
            host(),
            &sha[..sha.len().min(12)],
            &expected[..expected.len().min(12)]
        )),
        Err(e) => Err(format!(
            "on host {}: {e} (a plugin's peers load the same file, at the same path, on their host)",
            host()
        )),
    }
}

/// The serving loop shared by thread and process peers: takes commands from `next`
/// and answers through `reply` until `quit` or the end of commands.
fn serve_commands(
    spec: PeerSpec,
    mut next: impl FnMut() -> Option<PeerCommand>,
    reply: &mut dyn FnMut(PeerReply) -> bool,
    measure_cpu: bool,
    abandon: Option<Arc<AtomicBool>>,
) {
    struct Serve<'a, N> {
        spec: PeerSpec,
        next: N,
        reply: &'a mut dyn FnMut(PeerReply) -> bool,
        measure_cpu: bool,
        abandon: Option<Arc<AtomicBool>>,
    }
    impl<N: FnMut() -> Option<PeerCommand>> WithTransport for Serve<'_, N> {
        type Output = ();
        fn with<T: Transport + Clone>(mut self, mut transport: T) {
            // The driver's side was told the same (`PeerRig::start`).
            transport.size_for(self.spec.spec.traffic());
            if let Some(cpu) = self.spec.pin_cpu
                && let Err(e) = pin_current_thread(cpu)
            {
                (self.reply)(PeerReply::Failed {
                    message: format!("cannot pin to CPU {cpu}: {e}"),
                });
                return;
            }
            crate::workload::prepare(&self.spec.spec);
            while let Some(cmd) = (self.next)() {
                let address = match cmd {
                    PeerCommand::Run { address } => address,
                    PeerCommand::Quit => return,
                    PeerCommand::Hello(_) => {
                        (self.reply)(PeerReply::Failed {
                            message: "a second hello".into(),
                        });
                        return;
                    }
                };
                let mut ep = match transport.connect(&address, Instant::now() + PEER_TIMEOUT) {
                    Ok(ep) => ep,
                    Err(e) => {
                        (self.reply)(PeerReply::Failed {
                            message: format!("connect: {e}"),
                        });
                        return;
                    }
                };
                if let Some(flag) = &self.abandon {
                    ep.abandon_when(flag.clone());
                }
                let before = self.measure_cpu.then(CpuSnapshot::now);
                if !(self.reply)(PeerReply::Ready) {
                    return;
                }
                let outcome = serve(&mut ep, &self.spec.spec);
                let cpu = before.map(|b| {
                    b.until(
                        &CpuSnapshot::now(),
                        format!("peer {}", self.spec.channel),
                        std::process::id(),
                    )
                });
                drop(ep);
                let r = match outcome {
                    Ok(outcome) => PeerReply::Done { outcome, cpu },
                    Err(e) => PeerReply::Failed {
                        message: e.to_string(),
                    },
                };
                let failed = matches!(r, PeerReply::Failed { .. });
                if !(self.reply)(r) || failed {
                    return;
                }
            }
        }
    }
    let transport = spec.transport.clone();
    if let Some(expected) = &spec.plugin_sha256
        && let Err(message) = same_plugin_file(&transport, expected)
    {
        reply(PeerReply::Failed { message });
        return;
    }
    let params = match crate::transports::resolve(&transport, &spec.transport_params) {
        Ok(p) => p,
        Err(e) => {
            reply(PeerReply::Failed {
                message: e.to_string(),
            });
            return;
        }
    };
    let s = Serve {
        spec,
        next: &mut next,
        reply,
        measure_cpu,
        abandon,
    };
    if let Err(e) = dispatch(&transport, &params, s) {
        reply(PeerReply::Failed {
            message: e.to_string(),
        });
    }
}

/// The body of the [`Role::Peer`] process: serves commands from stdin, replies on
/// stdout.
/// Returns the process exit code.
pub fn serve_stdio() -> i32 {
    xferbench_probes::process::die_with_parent();
    crate::plugins::may_load_plugins();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let stdout = std::io::stdout();
    let reply = |r: PeerReply| {
        let mut out = stdout.lock();
        let line = r.to_line();
        writeln!(out, "{line}").and_then(|()| out.flush()).is_ok()
    };
    let mut next = || -> Option<PeerCommand> {
        let line = lines.next()?.ok()?;
        PeerCommand::from_line(&line).ok()
    };
    let spec = match next() {
        Some(PeerCommand::Hello(spec)) => {
            tracing::info!(
                channel = spec.channel,
                transport = %spec.transport,
                pid = std::process::id(),
                "peer process serving"
            );
            spec
        }
        _ => {
            eprintln!("peer: expected a hello command on stdin (this is an internal role)");
            return 2;
        }
    };
    let mut failed = false;
    let mut reply_tracking = |r: PeerReply| {
        failed |= matches!(r, PeerReply::Failed { .. });
        reply(r)
    };
    serve_commands(spec, next, &mut reply_tracking, true, None);
    tracing::debug!(failed, "peer process exiting");
    if failed { 1 } else { 0 }
}
