//! Two network namespaces joined by a veth pair, an agent in one of them, and a
//! delaying relay: the harness of the tests across hosts (tests/remote.rs).
//!
//! The measuring namespace has 192.0.2.1/24, the agent's 192.0.2.2/24 (TEST-NET-1,
//! never routed). Namespace names carry the test process's id; a guard deletes
//! them (and with them the veth pair) when dropped, also when a test fails.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// The measuring side's address.
pub const MEASURE_IP: &str = "192.0.2.1";
/// The agent's address.
pub const AGENT_IP: &str = "192.0.2.2";
/// The agent's control address.
pub const AGENT: &str = "192.0.2.2:5301";
/// The measuring side's veth.
pub const MEASURE_DEV: &str = "xfb-m";

static NEXT: AtomicUsize = AtomicUsize::new(0);

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The two namespaces; dropping it deletes them.
pub struct Netns {
    /// The measuring side's namespace.
    pub measure: String,
    /// The agent's namespace.
    pub agent: String,
}

impl Netns {
    /// Creates both namespaces, or prints why the test skips and returns `None`.
    pub fn create() -> Option<Netns> {
        if !rustix::process::geteuid().is_root() {
            println!("skipped: the namespace tests need root (CI runs them as root)");
            return None;
        }
        if Command::new("ip").arg("-V").output().is_err() {
            println!("skipped: `ip` (iproute2) is missing");
            return None;
        }
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let ns = Netns {
            measure: format!("xfb-m-{pid}-{n}"),
            agent: format!("xfb-a-{pid}-{n}"),
        };
        let setup = || -> Result<(), String> {
            ip(&["netns", "add", &ns.measure])?;
            ip(&["netns", "add", &ns.agent])?;
            ip(&[
                "-n",
                &ns.measure,
                "link",
                "add",
                MEASURE_DEV,
                "type",
                "veth",
                "peer",
                "name",
                "xfb-a",
                "netns",
                &ns.agent,
            ])?;
            for (n, dev, addr) in [
                (&ns.measure, MEASURE_DEV, MEASURE_IP),
                (&ns.agent, "xfb-a", AGENT_IP),
            ] {
                ip(&["-n", n, "addr", "add", &format!("{addr}/24"), "dev", dev])?;
                ip(&["-n", n, "link", "set", dev, "up"])?;
                ip(&["-n", n, "link", "set", "lo", "up"])?;
            }
            Ok(())
        };
        match setup() {
            Ok(()) => Some(ns),
            Err(e) => {
                println!("skipped: cannot set up network namespaces here: {e}");
                None
            }
        }
    }

    /// `ip netns exec NS program args…`.
    pub fn command(&self, ns: &str, program: &Path) -> Command {
        let mut c = Command::new("ip");
        crate::common::isolate(&mut c);
        c.args(["netns", "exec", ns]).arg(program);
        c
    }

    /// Runs `f` on a thread inside namespace `ns`.
    pub fn within<R: Send + 'static>(&self, ns: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
        let path = format!("/run/netns/{ns}");
        thread::spawn(move || {
            enter(&path);
            f()
        })
        .join()
        .expect("the thread in the namespace panicked")
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.measure]);
        let _ = ip(&["netns", "del", &self.agent]);
    }
}

/// Moves the calling thread into the network namespace at `path`.
pub fn enter(path: &str) {
    let f = std::fs::File::open(path).expect("the namespace exists");
    rustix::thread::move_into_link_name_space(
        f.as_fd(),
        Some(rustix::thread::LinkNameSpaceType::Network),
    )
    .expect("setns");
}

/// The xferbench binary under test.
pub fn bin() -> PathBuf {
    std::path::PathBuf::from(crate::common::BIN)
}

/// A token file (mode 600) holding `token`.
pub fn token_file(dir: &Path, name: &str, token: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, token).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p
}

/// An agent running in the agent's namespace; dropping it kills it.
pub struct AgentProc {
    child: Child,
    /// Its log (stderr).
    pub log: PathBuf,
}

impl AgentProc {
    /// Starts `xferbench serve --listen AGENT extra…` and waits for it to listen.
    pub fn start(ns: &Netns, dir: &Path, extra: &[&str]) -> AgentProc {
        AgentProc::start_seeing(ns, dir, None, extra)
    }

    /// As [`AgentProc::start`], but with `file` showing `other`'s contents to the
    /// agent (a bind mount in a mount namespace of its own): the agent's host has
    /// another build at the same path.
    pub fn start_seeing(
        ns: &Netns,
        dir: &Path,
        file_as: Option<(&Path, &Path)>,
        extra: &[&str],
    ) -> AgentProc {
        let log = dir.join(format!(
            "agent-{}.log",
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut command = match file_as {
            None => ns.command(&ns.agent, &bin()),
            Some((file, other)) => {
                let mut c = ns.command(&ns.agent, Path::new("unshare"));
                c.args(["--mount", "--propagation", "private", "sh", "-c"])
                    .arg(format!(
                        "mount --bind '{}' '{}' && exec \"$0\" \"$@\"",
                        other.display(),
                        file.display()
                    ))
                    .arg(bin());
                c
            }
        };
        let mut child = command
            .args(["serve", "--listen", AGENT])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(20)).unwrap_or_default();
        assert!(
            line.starts_with("listening on"),
            "the agent did not start: {line:?} {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        AgentProc { child, log }
    }

    /// Its process id (`ip netns exec` execs the binary in place).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The processes it started that are still there (zombies included).
    pub fn children(&self) -> Vec<u32> {
        let mut all = Vec::new();
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.pid())) {
            for t in tasks.flatten() {
                let c = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
                all.extend(c.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
            }
        }
        all
    }

    /// Waits up to `within` for it to have no children left.
    pub fn no_children_within(&self, within: Duration) -> bool {
        let give_up = Instant::now() + within;
        loop {
            if self.children().is_empty() {
                return true;
            }
            if Instant::now() >= give_up {
                return false;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills it (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for AgentProc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits for `child` up to `limit`, killing it past that; its output.
pub fn finish(mut child: Child, limit: Duration) -> Output {
    let give_up = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() >= give_up {
            let _ = child.kill();
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Runs `xferbench args…` in the measuring namespace, at most `limit`.
pub fn measure(ns: &Netns, args: &[&str], limit: Duration) -> Output {
    let child = ns
        .command(&ns.measure, &bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish(child, limit)
}

/// A relay in the measuring namespace: listens on 127.0.0.1:PORT for each port of
/// a range and forwards to the agent's address, holding every chunk sent towards the
/// agent for `delay` (like `netem delay` on the measuring side's egress). Stops
/// accepting when dropped.
pub struct Relay {
    stop: Arc<AtomicBool>,
}

impl Relay {
    /// Starts forwarding `ports` of 127.0.0.1 in `ns.measure` to the agent.
    pub fn start(ns: &Netns, ports: std::ops::RangeInclusive<u16>, delay: Duration) -> Relay {
        let stop = Arc::new(AtomicBool::new(false));
        let path = format!("/run/netns/{}", ns.measure);
        let (ready_tx, ready_rx) = mpsc::channel();
        let s = Arc::clone(&stop);
        thread::spawn(move || {
            enter(&path);
            let listeners: Vec<(u16, TcpListener)> = ports
                .map(|p| {
                    let l = TcpListener::bind(("127.0.0.1", p)).expect("relay bind");
                    l.set_nonblocking(true).unwrap();
                    (p, l)
                })
                .collect();
            let _ = ready_tx.send(());
            while !s.load(Ordering::Relaxed) {
                let mut idle = true;
                for (port, l) in &listeners {
                    if let Ok((down, _)) = l.accept() {
                        idle = false;
                        let _ = down.set_nonblocking(false);
                        // Threads inherit the namespace of the thread that starts them.
                        let up = TcpStream::connect((AGENT_IP, *port)).expect("relay connect");
                        let _ = up.set_nodelay(true);
                        let _ = down.set_nodelay(true);
                        pipe(down.try_clone().unwrap(), up.try_clone().unwrap(), delay);
                        pipe(up, down, Duration::ZERO);
                    }
                }
                if idle {
                    thread::sleep(Duration::from_millis(2));
                }
            }
        });
        ready_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the relay started");
        Relay { stop }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Forwards `from` → `to`, each chunk `delay` after it arrived, in order.
fn pipe(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx
                        .send((Instant::now() + delay, buf[..n].to_vec()))
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    });
    thread::spawn(move || {
        for (due, chunk) in rx {
            let now = Instant::now();
            if due > now {
                thread::sleep(due - now);
            }
            if to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// Limits the measuring side's link: `tbf` at `rate`, plus `netem` delay when the
/// kernel has it (then returns true; else the relay must add the delay).
pub fn shape(ns: &Netns, rate: &str, delay: Duration) -> bool {
    let tc = |args: &[&str]| {
        Command::new("tc")
            .args(["-n", &ns.measure])
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let d = format!("{}us", delay.as_micros());
    if tc(&[
        "qdisc",
        "add",
        "dev",
        MEASURE_DEV,
        "root",
        "netem",
        "delay",
        &d,
        "rate",
        rate,
    ]) {
        return true;
    }
    assert!(
        tc(&[
            "qdisc",
            "add",
            "dev",
            MEASURE_DEV,
            "root",
            "tbf",
            "rate",
            rate,
            "burst",
            "64kb",
            "latency",
            "100ms",
        ]),
        "tc tbf failed"
    );
    false
}
