//! The measuring side of a control connection: [`Session`] (authenticated, with a
//! reader thread that routes each child's output) and [`RemoteChild`] (a child the
//! agent started, handled like a local [`xferbench_probes::process::Child`]).

use super::auth::{NONCE_LEN, Token, hex, nonce, unhex};
use super::protocol::{
    HostInfo, Line, RemoteRole, Reply, Request, VERSION, decode_reply, encode, read_line,
};
use crate::error::RemoteError;
use crate::hosts::ClockOffset;
use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::process::ExitStatusExt;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, Weak};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use xferbench_probes::cpu::CpuSnapshot;
use xferbench_probes::process::{Ended, Supervised};

/// How long a request may wait for its reply.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// How long connecting retries an agent that is busy with another client.
pub const BUSY_RETRY: Duration = Duration::from_secs(20);

/// How often an idle session pings the agent.
pub const PING_EVERY: Duration = Duration::from_secs(5);

/// Where the agent is and how to reach it.
#[derive(Debug, Clone)]
pub struct RemoteTarget {
    /// `HOST:PORT` of the agent's control connection.
    pub agent: String,
    /// The shared token.
    pub token: Option<Token>,
    /// The host data connections dial instead of the agent's address (a relay).
    pub data_host: Option<String>,
}

impl PartialEq for RemoteTarget {
    /// The same agent, data host and whether a token is used (tokens are not compared).
    fn eq(&self, other: &Self) -> bool {
        self.agent == other.agent
            && self.data_host == other.data_host
            && self.token.is_some() == other.token.is_some()
    }
}

impl Eq for RemoteTarget {}

type Slot = Arc<Mutex<Option<Ended>>>;

#[derive(Default)]
struct Routes {
    open: HashMap<u32, (Sender<String>, Slot)>,
    pending: HashMap<u32, (Receiver<String>, Slot)>,
    lost: Option<String>,
}

/// An authenticated control connection.
pub struct Session {
    agent: SocketAddr,
    local: SocketAddr,
    agent_host: HostInfo,
    data_host: Option<String>,
    writer: Mutex<TcpStream>,
    calls: Mutex<Receiver<Reply>>,
    routes: Arc<Mutex<Routes>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("agent", &self.agent)
            .field("local", &self.local)
            .finish()
    }
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn lost_ended(why: &str) -> Ended {
    Ended {
        pid: 0,
        status: std::process::ExitStatus::from_raw(libc::SIGKILL),
        stderr_tail: why.to_string(),
    }
}

impl RemoteTarget {
    /// The agent's socket address (the default port when none is given).
    pub fn resolve(&self) -> Result<SocketAddr, RemoteError> {
        let with_port = if self.agent.parse::<SocketAddr>().is_ok()
            || self.agent.rsplit_once(':').is_some_and(|(h, p)| {
                !h.is_empty() && !h.ends_with(':') && p.parse::<u16>().is_ok()
            }) {
            self.agent.clone()
        } else {
            format!("{}:{}", self.agent, super::protocol::DEFAULT_PORT)
        };
        with_port
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| RemoteError::Connect(format!("cannot resolve {}", self.agent)))
    }

    /// Connects and authenticates, retrying while the agent is busy.
    pub fn connect(&self) -> Result<Arc<Session>, RemoteError> {
        let addr = self.resolve()?;
        let give_up = Instant::now() + BUSY_RETRY;
        loop {
            match self.try_connect(addr) {
                Err(RemoteError::Refused(m))
                    if m.starts_with("busy") && Instant::now() < give_up =>
                {
                    thread::sleep(Duration::from_millis(200));
                }
                other => return other,
            }
        }
    }

    /// One attempt, without retrying a busy agent (for tests).
    #[cfg(test)]
    pub(crate) fn try_connect_once(&self) -> Result<Arc<Session>, RemoteError> {
        self.try_connect(self.resolve()?)
    }

    fn try_connect(&self, addr: SocketAddr) -> Result<Arc<Session>, RemoteError> {
        let connect_err = |e: std::io::Error| {
            RemoteError::Connect(format!("cannot reach the agent at {addr}: {e}"))
        };
        let stream =
            TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(connect_err)?;
        stream
            .set_read_timeout(Some(CALL_TIMEOUT))
            .map_err(connect_err)?;
        stream
            .set_write_timeout(Some(CALL_TIMEOUT))
            .map_err(connect_err)?;
        let _ = stream.set_nodelay(true);
        let local = stream.local_addr().map_err(connect_err)?;
        let mut writer = stream.try_clone().map_err(connect_err)?;
        let mut reader = BufReader::new(stream);
        let mut next = || -> Result<Reply, RemoteError> {
            match read_line(&mut reader) {
                Ok(Line::Line(l)) => decode_reply(&l)
                    .map_err(|e| RemoteError::Protocol(format!("the agent at {addr} sent {e}"))),
                Ok(Line::Eof) => Err(RemoteError::Lost(format!(
                    "the agent at {addr} closed the connection"
                ))),
                Err(e) => Err(RemoteError::Lost(format!("the agent at {addr}: {e}"))),
            }
        };
        let agent_nonce = match next()? {
            Reply::Challenge {
                version,
                nonce,
                token,
            } => {
                if version != VERSION {
                    return Err(RemoteError::Protocol(format!(
                        "the agent at {addr} speaks protocol {version}, this side {VERSION}: use the same xferbench version on both hosts"
                    )));
                }
                if token && self.token.is_none() {
                    return Err(RemoteError::Auth(format!(
                        "the agent at {addr} requires a token: give --token-file FILE"
                    )));
                }
                if !token && self.token.is_some() {
                    return Err(RemoteError::Auth(format!(
                        "the agent at {addr} has no token, so it cannot prove who it is: start it with --token-file, or drop --token-file here"
                    )));
                }
                unhex(&nonce, NONCE_LEN).ok_or_else(|| {
                    RemoteError::Protocol(format!("the agent at {addr} sent a bad nonce"))
                })?
            }
            Reply::Refused { message } => return Err(RemoteError::Refused(message)),
            other => {
                return Err(RemoteError::Protocol(format!(
                    "the agent at {addr} began with {other:?}"
                )));
            }
        };
        let client_nonce = nonce().map_err(RemoteError::Auth)?;
        let mac = self
            .token
            .as_ref()
            .map(|t| hex(&t.client_proof(&agent_nonce, &client_nonce)));
        let mut me = HostInfo::here();
        me.address = local.ip().to_string();
        writer
            .write_all(&encode(&Request::Hello {
                version: VERSION,
                nonce: hex(&client_nonce),
                mac,
                host: me,
            }))
            .map_err(connect_err)?;
        let mut agent_host = match next()? {
            Reply::Welcome { mac, host } => {
                if let Some(token) = &self.token {
                    let ok = mac
                        .as_deref()
                        .and_then(|m| unhex(m, 32))
                        .is_some_and(|p| token.check_agent(&client_nonce, &agent_nonce, &p));
                    if !ok {
                        return Err(RemoteError::Auth(format!(
                            "the agent at {addr} could not prove it knows the token"
                        )));
                    }
                }
                host
            }
            Reply::Refused { message } => return Err(RemoteError::Auth(message)),
            other => {
                return Err(RemoteError::Protocol(format!(
                    "the agent at {addr} answered hello with {other:?}"
                )));
            }
        };
        agent_host.address = addr.ip().to_string();
        reader
            .get_ref()
            .set_read_timeout(None)
            .map_err(connect_err)?;
        let (tx, rx) = mpsc::channel();
        let routes: Arc<Mutex<Routes>> = Arc::default();
        let r = Arc::clone(&routes);
        thread::Builder::new()
            .name("remote-reader".into())
            .spawn(move || read_replies(reader, addr, &tx, &r))
            .map_err(connect_err)?;
        let session = Arc::new(Session {
            agent: addr,
            local,
            agent_host,
            data_host: self.data_host.clone(),
            writer: Mutex::new(writer),
            calls: Mutex::new(rx),
            routes,
        });
        let weak = Arc::downgrade(&session);
        thread::spawn(move || keepalive(&weak));
        tracing::info!(agent = %addr, "connected to the agent");
        Ok(session)
    }
}

fn keepalive(session: &Weak<Session>) {
    let mut last = Instant::now();
    loop {
        thread::sleep(Duration::from_millis(100));
        let Some(s) = session.upgrade() else { return };
        if s.lost().is_some() {
            return;
        }
        if last.elapsed() >= PING_EVERY {
            let _ = s.send(&Request::Ping);
            last = Instant::now();
        }
    }
}

fn read_replies(
    mut reader: BufReader<TcpStream>,
    agent: SocketAddr,
    calls: &Sender<Reply>,
    routes: &Mutex<Routes>,
) {
    let why = loop {
        let line = match read_line(&mut reader) {
            Ok(Line::Line(l)) => l,
            Ok(Line::Eof) => break format!("the connection to the agent at {agent} closed"),
            Err(e) => break format!("the connection to the agent at {agent} failed: {e}"),
        };
        let reply = match decode_reply(&line) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(%agent, error = %e, "ignoring a bad line from the agent");
                continue;
            }
        };
        let mut r = routes.lock().unwrap_or_else(|e| e.into_inner());
        match reply {
            Reply::Spawned { id, .. } => {
                let (tx, rx) = mpsc::channel();
                let slot: Slot = Arc::default();
                r.open.insert(id, (tx, Arc::clone(&slot)));
                r.pending.insert(id, (rx, slot));
                drop(r);
                let _ = calls.send(reply);
            }
            Reply::Stdout { id, line } => {
                if let Some((tx, _)) = r.open.get(&id) {
                    let _ = tx.send(line);
                }
            }
            Reply::Exited { id, status, stderr } => {
                if let Some((_, slot)) = r.open.remove(&id) {
                    let mut s = slot.lock().unwrap_or_else(|e| e.into_inner());
                    s.get_or_insert(Ended {
                        pid: 0,
                        status: std::process::ExitStatus::from_raw(status),
                        stderr_tail: stderr,
                    });
                }
            }
            Reply::Pong => {}
            other => {
                drop(r);
                let _ = calls.send(other);
            }
        }
    };
    tracing::warn!(%agent, reason = %why, "lost the agent");
    let mut r = routes.lock().unwrap_or_else(|e| e.into_inner());
    for (_, (_, slot)) in r.open.drain() {
        slot.lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(|| lost_ended(&why));
    }
    r.lost = Some(why);
}

impl Session {
    /// The agent's control address.
    pub fn agent(&self) -> SocketAddr {
        self.agent
    }

    /// This side's address on the control connection.
    pub fn local_ip(&self) -> IpAddr {
        self.local.ip()
    }

    /// The agent's host.
    pub fn agent_host(&self) -> &HostInfo {
        &self.agent_host
    }

    /// The host data connections dial: the relay if one was given, else the agent.
    pub fn data_host(&self) -> String {
        self.data_host
            .clone()
            .unwrap_or_else(|| self.agent.ip().to_string())
    }

    /// Why the connection was lost, if it was.
    pub fn lost(&self) -> Option<String> {
        self.routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lost
            .clone()
    }

    fn send(&self, req: &Request) -> Result<(), RemoteError> {
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        w.write_all(&encode(req))
            .and_then(|()| w.flush())
            .map_err(|e| {
                RemoteError::Lost(
                    self.lost()
                        .unwrap_or_else(|| format!("the agent at {}: {e}", self.agent)),
                )
            })
    }

    /// Closes the connection without a word (as a killed process would), for tests.
    #[cfg(test)]
    pub(crate) fn sever(&self) {
        let w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let _ = w.shutdown(std::net::Shutdown::Both);
    }

    /// Sends `req` and waits for its reply.
    fn call(&self, req: &Request) -> Result<Reply, RemoteError> {
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        // Drop late answers to earlier requests (a `refused` for a stop of a child
        // that had exited, say).
        while calls.try_recv().is_ok() {}
        self.send(req)?;
        match calls.recv_timeout(CALL_TIMEOUT) {
            Ok(Reply::Refused { message }) => Err(RemoteError::Refused(message)),
            Ok(r) => Ok(r),
            Err(RecvTimeoutError::Timeout) => Err(RemoteError::Lost(format!(
                "the agent at {} did not answer within {} s",
                self.agent,
                CALL_TIMEOUT.as_secs()
            ))),
            Err(RecvTimeoutError::Disconnected) => {
                Err(RemoteError::Lost(self.lost().unwrap_or_else(|| {
                    format!("the agent at {} went away", self.agent)
                })))
            }
        }
    }

    /// Starts `role` on the agent's host.
    pub fn spawn(
        self: &Arc<Self>,
        role: RemoteRole,
        spec: Option<String>,
    ) -> Result<RemoteChild, RemoteError> {
        match self.call(&Request::Spawn { role, spec })? {
            Reply::Spawned { id, pid } => {
                let (stdout, ended) = self
                    .routes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .pending
                    .remove(&id)
                    .ok_or_else(|| RemoteError::Protocol("a child with no route".into()))?;
                Ok(RemoteChild {
                    session: Arc::clone(self),
                    id,
                    pid,
                    stdout: Some(stdout),
                    ended,
                })
            }
            other => Err(RemoteError::Protocol(format!(
                "spawn answered with {other:?}"
            ))),
        }
    }

    /// Children the agent started since it started, and running now.
    pub fn status(&self) -> Result<(u64, u64), RemoteError> {
        match self.call(&Request::Status)? {
            Reply::Status { spawned, running } => Ok((spawned, running)),
            other => Err(RemoteError::Protocol(format!(
                "status answered with {other:?}"
            ))),
        }
    }

    /// Estimates the agent's clock offset, NTP-style: over `samples` round trips,
    /// the one with the smallest round-trip time gives `offset = agent − (t0 + t3)/2`
    /// with an uncertainty of half that round trip.
    pub fn clock_offset(&self, samples: u32) -> Result<ClockOffset, RemoteError> {
        let mut best: Option<(u64, i64)> = None;
        for _ in 0..samples.max(1) {
            let t0 = now_ns();
            let agent = match self.call(&Request::Time)? {
                Reply::Time { unix_ns } => unix_ns,
                other => {
                    return Err(RemoteError::Protocol(format!(
                        "time answered with {other:?}"
                    )));
                }
            };
            let t3 = now_ns();
            let rtt = t3.saturating_sub(t0);
            let mid = t0 / 2 + t3 / 2;
            let offset = agent as i64 - mid as i64;
            if best.is_none_or(|(r, _)| rtt < r) {
                best = Some((rtt, offset));
            }
        }
        let (rtt, offset) = best.expect("at least one sample");
        Ok(ClockOffset {
            offset_ns: offset,
            uncertainty_ns: rtt / 2,
            min_rtt_ns: rtt,
            samples: samples.max(1),
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.send(&Request::Bye);
        let w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let _ = w.shutdown(std::net::Shutdown::Both);
    }
}

/// A child the agent started. Dropping it asks the agent to stop it.
pub struct RemoteChild {
    session: Arc<Session>,
    id: u32,
    pid: u32,
    stdout: Option<Receiver<String>>,
    ended: Slot,
}

impl std::fmt::Debug for RemoteChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteChild")
            .field("id", &self.id)
            .field("pid", &self.pid)
            .finish()
    }
}

impl RemoteChild {
    /// Its process id on the agent's host.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The session it belongs to.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// Its stdout, line by line, once; the channel closes when it exits.
    pub fn take_stdout(&mut self) -> Option<Receiver<String>> {
        self.stdout.take()
    }

    /// Writes one line to its stdin.
    pub fn send_line(&self, line: &str) -> Result<(), RemoteError> {
        self.session.send(&Request::Stdin {
            id: self.id,
            line: line.into(),
        })
    }

    /// How it ended, if it did (or the connection was lost).
    pub fn exited(&self) -> Option<Ended> {
        let e = self.ended.lock().unwrap_or_else(|e| e.into_inner()).clone();
        e.map(|e| Ended { pid: self.pid, ..e })
    }

    /// Its CPU usage now, on the agent's clock.
    pub fn cpu(&self) -> Option<CpuSnapshot> {
        match self.session.call(&Request::Cpu { id: self.id }) {
            Ok(Reply::Cpu { snapshot, .. }) => snapshot,
            _ => None,
        }
    }
}

impl Supervised for RemoteChild {
    fn pid(&self) -> u32 {
        self.pid
    }

    fn exited(&mut self) -> Option<Ended> {
        RemoteChild::exited(self)
    }

    /// Asks the agent to stop it (SIGINT, then SIGKILL) and waits for its end.
    fn halt(&mut self) -> Option<Ended> {
        if let Some(e) = RemoteChild::exited(self) {
            return Some(e);
        }
        let _ = self.session.send(&Request::Stop { id: self.id });
        self.exited_within(Duration::from_secs(5))
    }
}

impl Drop for RemoteChild {
    fn drop(&mut self) {
        if self.exited().is_none() {
            let _ = self.session.send(&Request::Stop { id: self.id });
        }
    }
}
