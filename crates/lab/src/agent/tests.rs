//! The agent and the measuring side over loopback, with `/bin/sh` standing in for
//! the binary's roles.

use super::{Agent, AgentConfig};
use crate::error::RemoteError;
use crate::remote::RemoteTarget;
use crate::remote::auth::Token;
use crate::remote::protocol::{Line, RemoteRole, Reply, decode_reply, read_line};
use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};
use xferbench_probes::process::{Launcher, Role, Supervised};

struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    handle: Option<thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn token(s: &str) -> Token {
    Token::new(s.as_bytes().to_vec()).unwrap()
}

/// An agent whose peer role is a shell that echoes each line it reads, prefixed.
fn agent(token: Option<Token>) -> Running {
    let launcher = Launcher::new("/bin/sh").with_role(
        Role::Peer,
        [
            "-c",
            "while read -r l; do echo \"echo:$l\"; [ \"$l\" = quit ] && exit 7; done",
        ],
    );
    let agent = Agent::bind(AgentConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        token,
        launcher,
        data_ports: None,
        idle_timeout: Duration::from_secs(5),
    })
    .unwrap();
    let addr = agent.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop);
    let handle = thread::spawn(move || agent.serve(&s).unwrap());
    Running {
        addr,
        stop,
        handle: Some(handle),
    }
}

fn target(a: &Running, token: Option<Token>) -> RemoteTarget {
    RemoteTarget {
        agent: a.addr.to_string(),
        token,
        data_host: None,
    }
}

#[test]
fn a_child_is_relayed_and_reaped_and_the_clock_offset_is_small() {
    let a = agent(Some(token("a-shared-secret-of-some-length")));
    let s = target(&a, Some(token("a-shared-secret-of-some-length")))
        .connect()
        .unwrap();
    assert_eq!(s.status().unwrap(), (0, 0));
    let mut child = s.spawn(RemoteRole::Peer, None).unwrap();
    assert!(child.pid() > 0);
    let out = child.take_stdout().unwrap();
    child.send_line("hello").unwrap();
    assert_eq!(
        out.recv_timeout(Duration::from_secs(5)).unwrap(),
        "echo:hello"
    );
    assert!(child.cpu().is_some());
    child.send_line("quit").unwrap();
    assert_eq!(
        out.recv_timeout(Duration::from_secs(5)).unwrap(),
        "echo:quit"
    );
    let ended = child.exited_within(Duration::from_secs(5)).unwrap();
    assert_eq!(ended.status.code(), Some(7), "{ended}");
    assert_eq!(s.status().unwrap(), (1, 0));
    // Same host, same clock: the offset is within its uncertainty (plus slack).
    let c = s.clock_offset(8).unwrap();
    assert!(
        c.offset_ns.unsigned_abs() <= c.uncertainty_ns + 1_000_000,
        "{c:?}"
    );
    // A child left running is stopped when the client goes.
    let left = s.spawn(RemoteRole::Peer, None).unwrap();
    let pid = left.pid();
    // The connection drops without a word, as when the measuring side is killed.
    s.sever();
    let give_up = Instant::now() + Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < give_up {
        thread::sleep(Duration::from_millis(20));
    }
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    drop(left);
    drop(s);
    // And the next client is served.
    let s = target(&a, Some(token("a-shared-secret-of-some-length")))
        .connect()
        .unwrap();
    assert_eq!(s.status().unwrap(), (2, 0));
}

#[test]
fn wrong_or_missing_tokens_and_garbage_start_nothing() {
    let a = agent(Some(token("the-right-token-0123")));
    let e = target(&a, Some(token("the-wrong-token-0123")))
        .connect()
        .unwrap_err();
    assert!(
        matches!(&e, RemoteError::Auth(m) if m.contains("wrong token")),
        "{e}"
    );
    let e = target(&a, None).connect().unwrap_err();
    assert!(e.to_string().contains("requires a token"), "{e}");
    // Garbage, and a spawn before authenticating: refused, connection closed.
    for junk in [
        &b"\xff\xfe garbage\n"[..],
        b"{\"op\":\"spawn\",\"role\":\"peer\",\"spec\":null}\n",
        b"{\"op\":\"hello\",\"version\":1,\"nonce\":\"00\",\"mac\":null,\"host\":{\"hostname\":\"h\",\"kernel\":\"k\",\"cpu_model\":\"c\"}}\n",
    ] {
        let mut c = TcpStream::connect(a.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut r = BufReader::new(c.try_clone().unwrap());
        let Line::Line(first) = read_line(&mut r).unwrap() else {
            panic!("no challenge")
        };
        assert!(matches!(decode_reply(&first), Ok(Reply::Challenge { token: true, .. })));
        c.write_all(junk).unwrap();
        let Line::Line(answer) = read_line(&mut r).unwrap() else {
            panic!("no refusal")
        };
        assert!(
            matches!(decode_reply(&answer), Ok(Reply::Refused { ref message }) if message.starts_with("authentication failed")),
            "{}",
            String::from_utf8_lossy(&answer)
        );
        assert!(matches!(read_line(&mut r), Ok(Line::Eof) | Err(_)));
    }
    let s = target(&a, Some(token("the-right-token-0123")))
        .connect()
        .unwrap();
    assert_eq!(s.status().unwrap(), (0, 0), "nothing was started");
}

#[test]
fn without_a_token_only_loopback_and_a_busy_agent_says_so() {
    let e = Agent::bind(AgentConfig {
        listen: SocketAddr::from(([0, 0, 0, 0], 0)),
        token: None,
        launcher: Launcher::new("/bin/true"),
        data_ports: None,
        idle_timeout: Duration::from_secs(5),
    })
    .unwrap_err();
    assert!(e.contains("without a token"), "{e}");
    let a = agent(None);
    let s = target(&a, None).connect().unwrap();
    let e = target(&a, Some(token("some-token-0123456")))
        .try_connect_once()
        .unwrap_err();
    assert!(e.to_string().contains("busy"), "{e}");
    drop(s);
    let s = target(&a, None).connect().unwrap();
    // A bad request after authentication is refused; the session goes on.
    assert!(matches!(
        s.spawn(RemoteRole::MemoryMock, Some("not json".into())),
        Err(RemoteError::Refused(_))
    ));
    assert_eq!(s.status().unwrap(), (0, 0));
}
