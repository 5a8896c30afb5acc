//! The memory mock of a point: a thread of this process, a process of
//! [`Role::MemoryMock`], or a process the agent starts on another host; started,
//! watched and stopped. Or a mock already running at an address (`warp client
//! --connect`), which is only connected to: neither watched nor stopped.

use super::spec::MemoryMockSpec;
use crate::workload::warp::WarpRunError;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use xferbench_probes::cpu::CpuSnapshot;
use xferbench_probes::process::{Child, Launcher, Role, Streams, Supervised};
use xferbench_transports::warp::CrcKind;
use xferbench_transports::warp::server::IoModel;

/// A running memory mock.
pub struct RunningServer {
    /// Its address.
    pub addr: SocketAddr,
    kind: ServerKind,
}

enum ServerKind {
    Thread {
        stop: Arc<AtomicBool>,
        handle: Option<std::thread::JoinHandle<()>>,
    },
    Process {
        child: Child,
    },
    Remote {
        child: crate::remote::RemoteChild,
    },
    /// Someone else's mock: nothing of it to watch or stop.
    Existing,
}

/// How long a memory mock process may take to announce its address.
const ANNOUNCE_TIMEOUT: Duration = Duration::from_secs(10);

impl RunningServer {
    /// Starts a memory mock on a free loopback port.
    /// A process when a `launcher` is given, else a thread; with `pin`, every thread
    /// of it on that CPU.
    pub fn start(
        launcher: Option<&Launcher>,
        crc: CrcKind,
        bar1: u32,
        io: IoModel,
        pin: Option<usize>,
    ) -> Result<RunningServer, WarpRunError> {
        let spec = MemoryMockSpec {
            pin,
            ..MemoryMockSpec::loopback(crc, bar1, io)
        };
        match launcher {
            None => {
                let server = spec.bind()?;
                let addr = server
                    .local_addr()
                    .map_err(|e| WarpRunError::Process(e.to_string()))?;
                let stop = Arc::new(AtomicBool::new(false));
                let s = Arc::clone(&stop);
                tracing::info!(%addr, %crc, bar1, %io, ?pin, "started the memory mock thread");
                let handle = std::thread::spawn(move || {
                    // Threads the server starts inherit the CPU.
                    if let Some(cpu) = pin
                        && let Err(e) = xferbench_probes::affinity::pin_current_thread(cpu)
                    {
                        tracing::error!(cpu, error = %e, "cannot pin the memory mock thread");
                        return;
                    }
                    let _ = server.run(&s);
                });
                Ok(RunningServer {
                    addr,
                    kind: ServerKind::Thread {
                        stop,
                        handle: Some(handle),
                    },
                })
            }
            Some(launcher) => {
                // Refuse bad names here, with the same message as a thread server.
                spec.config()?;
                let json = serde_json::to_string(&spec).expect("the spec serialises");
                let mut child = launcher
                    .spawn(Role::MemoryMock, [json], Streams::OUTPUT)
                    .map_err(|source| WarpRunError::Spawn {
                        role: Role::MemoryMock,
                        source,
                    })?;
                let stdout = child.take_stdout().expect("piped stdout");
                let (tx, rx) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    let mut line = String::new();
                    let _ = BufReader::new(stdout).read_line(&mut line);
                    let _ = tx.send(line);
                });
                let line = rx.recv_timeout(ANNOUNCE_TIMEOUT).unwrap_or_default();
                let addr = line
                    .trim()
                    .strip_prefix("listening on ")
                    .and_then(|a| a.parse::<SocketAddr>().ok());
                match addr {
                    Some(addr) => {
                        tracing::info!(
                            %addr,
                            pid = child.pid(),
                            %crc,
                            bar1,
                            %io,
                            "started the memory mock process"
                        );
                        Ok(RunningServer {
                            addr,
                            kind: ServerKind::Process { child },
                        })
                    }
                    None => match child.exited_within(Duration::from_millis(200)) {
                        Some(ended) => Err(WarpRunError::Ended {
                            what: "the memory mock".into(),
                            ended,
                        }),
                        None => {
                            child.stop();
                            Err(WarpRunError::Process(format!(
                                "the memory mock did not announce its address within {} s \
                                 (got {line:?})",
                                ANNOUNCE_TIMEOUT.as_secs()
                            )))
                        }
                    },
                }
            }
        }
    }

    /// Starts a memory mock on the agent's host ([`crate::remote`]); its address is
    /// the data host's with the port the mock bound there.
    pub fn start_remote(
        session: &Arc<crate::remote::Session>,
        crc: CrcKind,
        bar1: u32,
        io: IoModel,
    ) -> Result<RunningServer, WarpRunError> {
        let spec = MemoryMockSpec::loopback(crc, bar1, io);
        spec.config()?;
        let json = serde_json::to_string(&spec).expect("the spec serialises");
        let mut child = session
            .spawn(crate::remote::protocol::RemoteRole::MemoryMock, Some(json))
            .map_err(|e| WarpRunError::Process(format!("the memory mock: {e}")))?;
        let lines = child.take_stdout().expect("stdout taken once");
        let line = lines.recv_timeout(ANNOUNCE_TIMEOUT).unwrap_or_default();
        let port = line
            .trim()
            .strip_prefix("listening on ")
            .and_then(|a| a.parse::<SocketAddr>().ok())
            .map(|a| a.port());
        let Some(port) = port else {
            let why = match child.exited_within(Duration::from_millis(500)) {
                Some(ended) => format!("the memory mock on the agent's host {ended}"),
                None => format!(
                    "the memory mock on the agent's host did not announce its address within {} s (got {line:?})",
                    ANNOUNCE_TIMEOUT.as_secs()
                ),
            };
            child.halt();
            return Err(WarpRunError::Process(why));
        };
        // Later lines (none expected) are drained so the relay never blocks.
        std::thread::spawn(move || for _ in lines {});
        let host = session.data_host();
        let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| WarpRunError::Process(format!("cannot resolve the data host {host}")))?;
        tracing::info!(%addr, pid = child.pid(), agent = %session.agent(), "started the memory mock on the agent's host");
        Ok(RunningServer {
            addr,
            kind: ServerKind::Remote { child },
        })
    }

    /// A mock already serving on `addr`, started by someone else: the rig connects to
    /// it and leaves it running.
    pub fn existing(addr: SocketAddr) -> RunningServer {
        RunningServer {
            addr,
            kind: ServerKind::Existing,
        }
    }

    /// True for a mock this rig did not start ([`RunningServer::existing`]).
    pub fn is_existing(&self) -> bool {
        matches!(self.kind, ServerKind::Existing)
    }

    /// The server process's id on this host, when it is a process here.
    pub fn pid(&self) -> Option<u32> {
        match &self.kind {
            ServerKind::Process { child } => Some(child.pid()),
            ServerKind::Thread { .. } | ServerKind::Remote { .. } | ServerKind::Existing => None,
        }
    }

    /// The server process's id (on its own host) and its CPU usage now, when it is
    /// a process.
    pub(super) fn cpu(&self) -> Option<(u32, CpuSnapshot)> {
        match &self.kind {
            ServerKind::Process { child } => {
                CpuSnapshot::of_pid(child.pid()).map(|c| (child.pid(), c))
            }
            ServerKind::Remote { child } => child.cpu().map(|c| (child.pid(), c)),
            ServerKind::Thread { .. } | ServerKind::Existing => None,
        }
    }

    /// The server's process, here or on the agent's host (none for a thread).
    fn child(&mut self) -> Option<&mut dyn Supervised> {
        match &mut self.kind {
            ServerKind::Process { child } => Some(child),
            ServerKind::Remote { child } => Some(child),
            ServerKind::Thread { .. } | ServerKind::Existing => None,
        }
    }

    /// How the server ended, if it is a process that did.
    pub(super) fn ended(&mut self) -> Option<String> {
        self.child()?.exited().map(|e| e.to_string())
    }

    /// Stops the server (SIGINT to a process, so it shuts down cleanly) and waits.
    pub fn stop(mut self) {
        self.shutdown();
    }

    pub(super) fn shutdown(&mut self) {
        tracing::debug!(addr = %self.addr, pid = ?self.pid(), "stopping the memory mock");
        if let ServerKind::Thread { stop, handle } = &mut self.kind {
            stop.store(true, Ordering::Relaxed);
            if let Some(h) = handle.take() {
                let _ = h.join();
            }
        } else if let Some(child) = self.child() {
            child.halt();
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}
