//! The agent (`xferbench serve`): authenticates each control connection, then starts
//! the serving side of points on this host and relays their output.
//!
//! * It listens on loopback unless told otherwise; without a token it refuses to
//!   listen on, or accept from, anything but loopback.
//! * One client at a time: another client is told the agent is busy (the measuring
//!   side retries for a while) and its connection closed.
//! * Nothing is started before the client proved it knows the token. A bad request
//!   gets a `refused` reply and a log line; a line longer than
//!   [`MAX_LINE`](crate::remote::protocol::MAX_LINE), a failed authentication or a client
//!   silent for the idle timeout ends the connection.
//! * When the client says `bye`, closes the connection, or vanishes, everything it
//!   started is stopped and reaped before the next client is served.

#[cfg(test)]
mod tests;

use crate::peer::PeerCommand;
use crate::plugins;
use crate::remote::auth::{NONCE_LEN, Token, hex, nonce, unhex};
use crate::remote::protocol::{
    HostInfo, Line, ProtocolError, RemoteRole, Reply, Request, VERSION, decode, encode, read_line,
    read_line_into,
};
use crate::rig::memory_mock::MemoryMockSpec;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::ExitStatusExt;
use std::process::ChildStdin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use xferbench_probes::cpu::CpuSnapshot;
use xferbench_probes::process::{Child, Launcher, Role, Streams};

/// How long a client may take to authenticate.
pub const AUTH_TIMEOUT: Duration = Duration::from_secs(10);

/// A client silent for this long is taken as gone (clients ping every few seconds).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// How the agent is set up.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Control address.
    pub listen: SocketAddr,
    /// The shared token (`None`: loopback only).
    pub token: Option<Token>,
    /// How to start this binary's roles.
    pub launcher: Launcher,
    /// Ports data listeners (the memory mock) bind, inclusive; `None`: any free port.
    pub data_ports: Option<(u16, u16)>,
    /// Idle timeout of a control connection.
    pub idle_timeout: Duration,
}

/// Counts shared by the accept loop and the sessions.
#[derive(Debug, Default)]
struct Counts {
    spawned: AtomicU64,
    running: AtomicU64,
    busy: AtomicBool,
}

/// A bound agent.
#[derive(Debug)]
pub struct Agent {
    listener: TcpListener,
    cfg: AgentConfig,
    counts: Arc<Counts>,
}

impl Agent {
    /// Binds the control address; refuses a non-loopback address without a token.
    pub fn bind(cfg: AgentConfig) -> Result<Agent, String> {
        if cfg.token.is_none() && !cfg.listen.ip().is_loopback() {
            return Err(format!(
                "refusing to listen on {} without a token: give --token-file FILE, or listen on loopback",
                cfg.listen
            ));
        }
        if let Some((lo, hi)) = cfg.data_ports
            && (lo == 0 || lo > hi)
        {
            return Err(format!("--data-ports {lo}-{hi}: not a range of ports"));
        }
        let listener = TcpListener::bind(cfg.listen)
            .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
        Ok(Agent {
            listener,
            cfg,
            counts: Arc::default(),
        })
    }

    /// The bound control address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves clients until `stop` is set; then stops whatever is running.
    pub fn serve(&self, stop: &AtomicBool) -> std::io::Result<()> {
        self.listener.set_nonblocking(true)?;
        let mut current: Option<thread::JoinHandle<()>> = None;
        let session_stop = Arc::new(AtomicBool::new(false));
        while !stop.load(Ordering::Relaxed) {
            let (stream, peer) = match self.listener.accept() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    thread::sleep(Duration::from_millis(50));
                    continue;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            let _ = stream.set_nonblocking(false);
            if self.cfg.token.is_none() && !peer.ip().is_loopback() {
                tracing::warn!(%peer, "refused a non-loopback client: the agent has no token");
                refuse(
                    stream,
                    "this agent has no token and accepts loopback clients only",
                );
                continue;
            }
            if self.counts.busy.swap(true, Ordering::SeqCst) {
                tracing::info!(%peer, "refused a client: busy with another");
                refuse(
                    stream,
                    "busy: the agent serves one client at a time; try again when the other is done",
                );
                continue;
            }
            if let Some(h) = current.take() {
                let _ = h.join();
            }
            let cfg = self.cfg.clone();
            let counts = Arc::clone(&self.counts);
            let st = Arc::clone(&session_stop);
            current = Some(thread::spawn(move || {
                tracing::info!(%peer, "client connected");
                let mut s = Session::new(stream, peer, cfg, Arc::clone(&counts), st);
                let why = s.run();
                let n = s.children.lock().map(|c| c.len()).unwrap_or(0);
                s.stop_all();
                tracing::info!(%peer, reason = %why, stopped = n, "client gone; its children are stopped and reaped");
                counts.busy.store(false, Ordering::SeqCst);
            }));
        }
        session_stop.store(true, Ordering::Relaxed);
        if let Some(h) = current.take() {
            let _ = h.join();
        }
        Ok(())
    }
}

fn refuse(mut stream: TcpStream, message: &str) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
    let _ = stream.write_all(&encode(&Reply::Refused {
        message: message.into(),
    }));
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    /// A peer's plugin clean-up scope (set in its environment), and the plugin
    /// transport it serves once its hello names one.
    plugin: Option<PluginScope>,
}

/// What the clean-up hook of a plugin transport served on this host needs.
struct PluginScope {
    scope: String,
    transport: Option<String>,
}

impl Running {
    /// Reads a line sent to the child's stdin: a peer's hello names its transport.
    fn note_stdin(&mut self, line: &str) {
        let Some(p) = self.plugin.as_mut().filter(|p| p.transport.is_none()) else {
            return;
        };
        if let Ok(PeerCommand::Hello(spec)) = serde_json::from_str::<PeerCommand>(line)
            && plugins::is_plugin(&spec.transport)
        {
            p.transport = Some(spec.transport);
        }
    }
}

/// Once a peer that served a plugin transport has ended, whatever the way, runs the
/// plugin's clean-up hook on its scope on this host (the measuring host runs it on its
/// own processes' scope), so that a peer killed mid-run leaves nothing here either.
fn clean_up_after(launcher: &Launcher, plugin: Option<PluginScope>) {
    let Some(PluginScope {
        scope,
        transport: Some(transport),
    }) = plugin
    else {
        return;
    };
    if let Err(e) = plugins::clean_up(launcher, &transport, &scope) {
        tracing::warn!(transport, scope, "plugin clean-up on the agent's host: {e}");
    }
}

struct Session {
    reader: BufReader<TcpStream>,
    writer: Arc<Mutex<TcpStream>>,
    peer: SocketAddr,
    local: SocketAddr,
    cfg: AgentConfig,
    counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
    children: Arc<Mutex<BTreeMap<u32, Running>>>,
    next_id: u32,
}

fn send(writer: &Mutex<TcpStream>, reply: &Reply) -> bool {
    let mut w = writer.lock().unwrap_or_else(|e| e.into_inner());
    w.write_all(&encode(reply)).and_then(|()| w.flush()).is_ok()
}

impl Session {
    fn new(
        stream: TcpStream,
        peer: SocketAddr,
        cfg: AgentConfig,
        counts: Arc<Counts>,
        stop: Arc<AtomicBool>,
    ) -> Session {
        let local = stream
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)));
        let _ = stream.set_nodelay(true);
        let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
        let writer = Arc::new(Mutex::new(
            stream.try_clone().expect("cloning a socket handle"),
        ));
        Session {
            reader: BufReader::new(stream),
            writer,
            peer,
            local,
            cfg,
            counts,
            stop,
            children: Arc::default(),
            next_id: 0,
        }
    }

    fn reply(&self, r: &Reply) -> bool {
        send(&self.writer, r)
    }

    fn refuse(&self, message: String) {
        tracing::warn!(peer = %self.peer, %message, "refused a request");
        self.reply(&Reply::Refused { message });
    }

    /// Serves the connection; returns why it ended.
    fn run(&mut self) -> String {
        if let Err(why) = self.authenticate() {
            tracing::warn!(peer = %self.peer, reason = %why, "authentication failed");
            self.reply(&Reply::Refused {
                message: format!("authentication failed: {why}"),
            });
            return format!("not authenticated: {why}");
        }
        let _ = self
            .reader
            .get_ref()
            .set_read_timeout(Some(Duration::from_millis(500)));
        let mut last = Instant::now();
        let mut pending = Vec::new();
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return "the agent is stopping".into();
            }
            let line = match read_line_into(&mut self.reader, &mut pending) {
                Ok(Line::Line(l)) => l,
                Ok(Line::Eof) => return "the connection closed".into(),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    if last.elapsed() >= self.cfg.idle_timeout {
                        return format!("silent for {} s", self.cfg.idle_timeout.as_secs_f64());
                    }
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    self.refuse(format!(
                        "{}; closing the connection",
                        ProtocolError::TooLong
                    ));
                    return "a line too long".into();
                }
                Err(e) => return format!("read error: {e}"),
            };
            last = Instant::now();
            match decode(&line) {
                Ok(Request::Bye) => return "the client said bye".into(),
                Ok(req) => self.handle(req),
                Err(e) => self.refuse(e.to_string()),
            }
        }
    }

    fn authenticate(&mut self) -> Result<(), String> {
        let _ = self.reader.get_ref().set_read_timeout(Some(AUTH_TIMEOUT));
        let agent_nonce = nonce()?;
        if !self.reply(&Reply::Challenge {
            version: VERSION,
            nonce: hex(&agent_nonce),
            token: self.cfg.token.is_some(),
        }) {
            return Err("cannot write the challenge".into());
        }
        let line = match read_line(&mut self.reader) {
            Ok(Line::Line(l)) => l,
            Ok(Line::Eof) => return Err("the client closed the connection".into()),
            Err(e) => return Err(format!("no answer to the challenge: {e}")),
        };
        let (version, client_nonce, mac, mut host) = match decode(&line) {
            Ok(Request::Hello {
                version,
                nonce,
                mac,
                host,
            }) => (version, nonce, mac, host),
            Ok(other) => return Err(format!("expected hello, got {}", op_name(&other))),
            Err(e) => return Err(e.to_string()),
        };
        if version != VERSION {
            return Err(format!(
                "protocol version {version}; this agent speaks {VERSION} (use the same xferbench version on both hosts)"
            ));
        }
        let client_nonce =
            unhex(&client_nonce, NONCE_LEN).ok_or("the client's nonce is not 32 hex bytes")?;
        let mac = match &self.cfg.token {
            None => {
                if !self.peer.ip().is_loopback() {
                    return Err("no token on the agent: loopback clients only".into());
                }
                None
            }
            Some(token) => {
                let proof = mac
                    .as_deref()
                    .and_then(|m| unhex(m, 32))
                    .ok_or("the agent requires a token (--token-file)")?;
                if !token.check_client(&agent_nonce, &client_nonce, &proof) {
                    return Err("wrong token".into());
                }
                Some(hex(&token.agent_proof(&client_nonce, &agent_nonce)))
            }
        };
        host.address = self.peer.ip().to_string();
        tracing::info!(peer = %self.peer, client = %host.hostname, "client authenticated");
        let mut me = HostInfo::here();
        me.address = self.local.ip().to_string();
        if !self.reply(&Reply::Welcome { mac, host: me }) {
            return Err("cannot write the welcome".into());
        }
        Ok(())
    }

    fn handle(&mut self, req: Request) {
        match req {
            Request::Hello { .. } => self.refuse("already authenticated".into()),
            Request::Spawn { role, spec } => self.spawn(role, spec),
            Request::Stdin { id, line } => {
                let mut children = self.children.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(r) = children.get_mut(&id) {
                    r.note_stdin(&line);
                }
                let ok = children
                    .get_mut(&id)
                    .and_then(|r| r.stdin.as_mut())
                    .map(|s| {
                        s.write_all(line.as_bytes())
                            .and_then(|()| s.write_all(b"\n"))
                            .and_then(|()| s.flush())
                            .is_ok()
                    });
                drop(children);
                match ok {
                    Some(true) => {}
                    // The child is exiting: its `exited` reply tells the client.
                    Some(false) => {}
                    None => self.refuse(format!("no child {id}")),
                }
            }
            Request::Cpu { id } => {
                let pid = self.pid_of(id);
                let snapshot = pid.and_then(CpuSnapshot::of_pid);
                self.reply(&Reply::Cpu { id, snapshot });
            }
            Request::Stop { id } => {
                let running = self
                    .children
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                match running {
                    Some(mut r) => {
                        drop(r.stdin.take());
                        let ended = r.child.stop();
                        self.counts.running.fetch_sub(1, Ordering::Relaxed);
                        clean_up_after(&self.cfg.launcher, r.plugin.take());
                        self.reply(&Reply::Exited {
                            id,
                            status: ended.status.into_raw(),
                            stderr: ended.stderr_tail,
                        });
                    }
                    None => self.refuse(format!("no child {id}")),
                }
            }
            Request::Time => {
                let unix_ns = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                self.reply(&Reply::Time { unix_ns });
            }
            Request::Status => {
                self.reply(&Reply::Status {
                    spawned: self.counts.spawned.load(Ordering::Relaxed),
                    running: self.counts.running.load(Ordering::Relaxed),
                });
            }
            Request::Ping => {
                self.reply(&Reply::Pong);
            }
            Request::Bye => {}
        }
    }

    fn pid_of(&self, id: u32) -> Option<u32> {
        self.children
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .map(|r| r.child.pid())
    }

    fn data_port(&self) -> u16 {
        let Some((lo, hi)) = self.cfg.data_ports else {
            return 0;
        };
        (lo..=hi)
            .find(|&p| TcpListener::bind((self.local.ip(), p)).is_ok())
            .unwrap_or(lo)
    }

    fn spawn(&mut self, role: RemoteRole, spec: Option<String>) {
        let (lab_role, data) = match role {
            RemoteRole::Peer => (Role::Peer, Vec::new()),
            RemoteRole::MemoryMock => {
                let Some(mut mock) = spec
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<MemoryMockSpec>(s).ok())
                else {
                    return self.refuse("spawn memory_mock: spec is not a memory mock spec".into());
                };
                if let Err(e) = mock.config() {
                    return self.refuse(format!("spawn memory_mock: {e}"));
                }
                // The mock listens where the client reached us, in the data port range.
                mock.listen = SocketAddr::new(self.local.ip(), self.data_port());
                (
                    Role::MemoryMock,
                    vec![serde_json::to_string(&mock).expect("the spec serialises")],
                )
            }
        };
        // A peer gets a plugin clean-up scope of its own, as the measuring host's
        // processes do.
        let plugin = (lab_role == Role::Peer).then(|| PluginScope {
            scope: plugins::new_scope(),
            transport: None,
        });
        let spawned = self
            .cfg
            .launcher
            .command(lab_role, &data)
            .and_then(|mut cmd| {
                if let Some(p) = &plugin {
                    cmd.env(plugins::SCOPE_ENV, &p.scope);
                }
                Child::spawn(cmd, Streams::PIPED)
            });
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => return self.refuse(format!("cannot start the {}: {e}", lab_role.name())),
        };
        self.counts.spawned.fetch_add(1, Ordering::Relaxed);
        self.counts.running.fetch_add(1, Ordering::Relaxed);
        let id = self.next_id;
        self.next_id += 1;
        let pid = child.pid();
        tracing::info!(peer = %self.peer, id, pid, role = lab_role.name(), "started a child");
        let stdout = child.take_stdout().expect("piped stdout");
        let stdin = child.take_stdin();
        self.children
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                id,
                Running {
                    child,
                    stdin,
                    plugin,
                },
            );
        self.reply(&Reply::Spawned { id, pid });
        let writer = Arc::clone(&self.writer);
        let children = Arc::clone(&self.children);
        let counts = Arc::clone(&self.counts);
        let launcher = self.cfg.launcher.clone();
        thread::spawn(move || pump(id, stdout, &writer, &children, &counts, &launcher));
    }

    fn stop_all(&mut self) {
        let all = std::mem::take(&mut *self.children.lock().unwrap_or_else(|e| e.into_inner()));
        for (id, mut r) in all {
            drop(r.stdin.take());
            let ended = r.child.stop();
            self.counts.running.fetch_sub(1, Ordering::Relaxed);
            tracing::info!(id, pid = ended.pid, status = %ended.status_text(), "stopped a child");
            clean_up_after(&self.cfg.launcher, r.plugin.take());
        }
        // Our last words first, then what the client still sends is read and
        // dropped for a moment, so that closing does not reset the connection
        // before the client has read a refusal.
        let w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let _ = w.shutdown(std::net::Shutdown::Write);
        let _ = w.set_read_timeout(Some(Duration::from_millis(100)));
        let mut drained = 0usize;
        let mut buf = [0u8; 4096];
        let give_up = Instant::now() + Duration::from_millis(500);
        while drained < (1 << 20) && Instant::now() < give_up {
            match std::io::Read::read(&mut &*w, &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            }
        }
        let _ = w.shutdown(std::net::Shutdown::Both);
    }
}

/// Relays a child's stdout; once it closes, reports the child's end.
fn pump(
    id: u32,
    stdout: std::process::ChildStdout,
    writer: &Mutex<TcpStream>,
    children: &Mutex<BTreeMap<u32, Running>>,
    counts: &Counts,
    launcher: &Launcher,
) {
    let mut r = BufReader::new(stdout);
    let mut buf = String::new();
    loop {
        buf.clear();
        match r.read_line(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = buf.trim_end_matches(['\n', '\r']).to_string();
                if !send(writer, &Reply::Stdout { id, line }) {
                    break;
                }
            }
        }
    }
    // Output closed: the child is exiting. Reap it (unless `stop` already did).
    let give_up = Instant::now() + Duration::from_secs(2);
    loop {
        let mut map = children.lock().unwrap_or_else(|e| e.into_inner());
        let Some(running) = map.get_mut(&id) else {
            return;
        };
        if let Some(ended) = running.child.exited() {
            let plugin = map.remove(&id).and_then(|mut r| r.plugin.take());
            drop(map);
            counts.running.fetch_sub(1, Ordering::Relaxed);
            tracing::info!(id, pid = ended.pid, status = %ended.status_text(), "a child exited");
            // Before the client hears of the end, so that a finished run left nothing.
            clean_up_after(launcher, plugin);
            send(
                writer,
                &Reply::Exited {
                    id,
                    status: ended.status.into_raw(),
                    stderr: ended.stderr_tail,
                },
            );
            return;
        }
        drop(map);
        if Instant::now() >= give_up {
            return;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

fn op_name(r: &Request) -> &'static str {
    match r {
        Request::Hello { .. } => "hello",
        Request::Spawn { .. } => "spawn",
        Request::Stdin { .. } => "stdin",
        Request::Cpu { .. } => "cpu",
        Request::Stop { .. } => "stop",
        Request::Time => "time",
        Request::Status => "status",
        Request::Ping => "ping",
        Request::Bye => "bye",
    }
}
