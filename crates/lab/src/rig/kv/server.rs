//! The server of a kv point: a kv server thread, a kv server process of
//! [`Role::KvServer`], or `redis-server` on a Unix socket; started, asked how many
//! requests it served, checked and stopped.

use super::spec::{HANG, KvServerSpec, Target};
use crate::rig::RunError;
use crate::workload::kv::Backend;
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};
use xferbench_probes::process::{Child, Launcher, Role, Streams};
use xferbench_transports::kv::{PrivateKey, Server, ServerStats};

pub(super) enum RunningServer {
    Thread(Server, ServerStats),
    Process(Child, ServerStats),
    Redis {
        child: Child,
        socket: String,
        con: Box<redis::Connection>,
        _dir: tempfile::TempDir,
    },
}

impl RunningServer {
    pub(super) fn pid(&self) -> Option<u32> {
        match self {
            RunningServer::Thread(..) => None,
            RunningServer::Process(c, _) | RunningServer::Redis { child: c, .. } => Some(c.pid()),
        }
    }

    pub(super) fn backend(&self) -> Backend {
        match self {
            RunningServer::Thread(s, _) => Backend::Shm(s.name().into()),
            RunningServer::Process(_, st) => Backend::Shm(st.name().into()),
            RunningServer::Redis { socket, .. } => Backend::Redis(socket.clone()),
        }
    }

    pub(super) fn served(&mut self) -> Result<u64, RunError> {
        match self {
            RunningServer::Thread(_, st) | RunningServer::Process(_, st) => Ok(st.served()),
            RunningServer::Redis { con, .. } => {
                let info: String = redis::cmd("INFO")
                    .arg("stats")
                    .query(con.as_mut())
                    .map_err(|e| RunError::Participant(format!("redis INFO: {e}")))?;
                info.lines()
                    .find_map(|l| l.strip_prefix("total_commands_processed:"))
                    .and_then(|v| v.trim().parse().ok())
                    .ok_or_else(|| {
                        RunError::Participant("redis INFO has no total_commands_processed".into())
                    })
            }
        }
    }

    /// A failed or vanished server, described.
    pub(super) fn check(&mut self) -> Result<(), RunError> {
        match self {
            RunningServer::Thread(s, _) if s.failed() => {
                Err(RunError::Participant("the kv server thread failed".into()))
            }
            RunningServer::Process(c, _) | RunningServer::Redis { child: c, .. } => {
                match c.exited() {
                    Some(e) => Err(RunError::Participant(format!("the server {e}"))),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    pub(super) fn stop(self) -> Result<(), RunError> {
        match self {
            RunningServer::Thread(s, _) => s
                .stop()
                .map_err(|e| RunError::Participant(format!("kv server: {e}"))),
            RunningServer::Process(mut c, _) | RunningServer::Redis { child: mut c, .. } => {
                let e = c.stop();
                // Stopped by our SIGINT (exit 130 from the tool, a signal from Redis).
                if e.success() || e.status.code() == Some(130) || e.status.code().is_none() {
                    Ok(())
                } else {
                    Err(RunError::Participant(format!("the server {e}")))
                }
            }
        }
    }
}

/// Whether `redis-server` can be started here, or why not.
pub fn redis_available() -> Result<String, String> {
    let out = std::process::Command::new("redis-server")
        .arg("--version")
        .output()
        .map_err(|e| format!("redis-server is not installed ({e})"))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn start_redis() -> Result<RunningServer, RunError> {
    let fail = |m: String| RunError::Participant(format!("redis-server: {m}"));
    let dir = tempfile::Builder::new()
        .prefix("xferbench-redis")
        .tempdir()
        .map_err(|e| fail(e.to_string()))?;
    let socket = dir.path().join("redis.sock").to_string_lossy().into_owned();
    let mut cmd = std::process::Command::new("redis-server");
    cmd.args([
        "--port",
        "0",
        "--unixsocket",
        &socket,
        "--unixsocketperm",
        "700",
    ])
    .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
    .arg("--dir")
    .arg(dir.path());
    let mut child = Child::spawn(cmd, Streams::QUIET).map_err(|e| fail(e.to_string()))?;
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(e) = child.exited() {
            return Err(fail(format!("{e}")));
        }
        if std::path::Path::new(&socket).exists()
            && let Ok(c) = redis::Client::open(format!("redis+unix://{socket}"))
            && let Ok(mut con) = c.get_connection_with_timeout(Duration::from_secs(2))
            && redis::cmd("PING").query::<String>(&mut con).is_ok()
        {
            return Ok(RunningServer::Redis {
                child,
                socket,
                con: Box::new(con),
                _dir: dir,
            });
        }
        if Instant::now() >= give_up {
            child.stop();
            return Err(fail("did not answer PING within 10 s".into()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts the server of `target`: a process with a `launcher` (pinned to `pin`, every
/// thread), else a thread (not pinned); Redis is always a process. A kv server is
/// private: only clients presenting `key` join it, and `xferbench kv client` neither
/// finds nor joins it.
pub(super) fn start_server(
    target: &Target,
    launcher: Option<&Launcher>,
    pin: Option<usize>,
    key: PrivateKey,
) -> Result<RunningServer, RunError> {
    let Target::Kv {
        arch,
        workers,
        buckets,
    } = target
    else {
        let redis = start_redis()?;
        if let (Some(cpu), Some(pid)) = (pin, redis.pid()) {
            xferbench_probes::affinity::pin_process(pid, cpu).map_err(|e| {
                RunError::Participant(format!("cannot pin redis-server to CPU {cpu}: {e}"))
            })?;
        }
        return Ok(redis);
    };
    let spec = KvServerSpec {
        arch: *arch,
        buckets: *buckets,
        workers: *workers,
        hang_timeout_ms: HANG.as_millis() as u64,
        pin,
        key: Some(key),
    };
    let cfg = spec.config().map_err(RunError::Config)?;
    let kv =
        |e: xferbench_transports::kv::KvError| RunError::Participant(format!("kv server: {e}"));
    let Some(launcher) = launcher else {
        let s = Server::start(cfg).map_err(kv)?;
        let st = ServerStats::open(s.name()).map_err(kv)?;
        return Ok(RunningServer::Thread(s, st));
    };
    let json = serde_json::to_string(&spec).expect("the spec serialises");
    let mut child = launcher
        .spawn(Role::KvServer, [json], Streams::OUTPUT)
        .map_err(|e| RunError::Participant(e.to_string()))?;
    let stdout = child.take_stdout().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
    match line.trim().strip_prefix("serving on ") {
        Some(name) => {
            let st = ServerStats::open(name).map_err(kv)?;
            Ok(RunningServer::Process(child, st))
        }
        None => {
            let e = child.stop();
            Err(RunError::Participant(format!(
                "the kv server did not announce its name: {e}"
            )))
        }
    }
}
