//! {{name}}: an xferbench transport plugin.
//!
//! Written by `xferbench plugin new {{name}} --lang rust` as a start that works: it
//! moves messages over Unix-domain `SOCK_SEQPACKET` sockets in the abstract namespace
//! (no file is created, so nothing is left behind when a process dies) and passes
//! `xferbench check`. Replace what the "YOUR TRANSPORT" comments mark with your own
//! code, keep the check passing, and measure:
//!
//! ```sh
//! cargo build --release
//! xferbench check -t plugin:target/release/lib{{ident}}.so --fail-fast
//! xferbench run stream -t unix,plugin:target/release/lib{{ident}}.so -s 64,4KiB --verify
//! ```
//!
//! The traits' docs (`Transport`, `Listener`, `Endpoint` of `xferbench_plugin`) say
//! what every call must do; the C header `xferbench/plugin.h` is the whole contract.

#![deny(unsafe_code)]

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use rustix::net::{
    AddressFamily, RecvFlags, SendFlags, Shutdown, SocketAddrUnix, SocketFlags, SocketType,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use xferbench_plugin::{
    Endpoint, Error, ErrorKind, Host, Listener, Param, Recv, Transport, Values,
};

/// YOUR TRANSPORT: the largest message it carries.
const MAX_MESSAGE: usize = 64 * 1024;
/// The start of every address this transport gives out (after `@`).
const PREFIX: &str = "xb-";

/// YOUR TRANSPORT: one configuration (parameter values, shared state).
pub struct {{Camel}}Transport {
    scope: String,
}

/// YOUR TRANSPORT: one listening address, waiting for one peer.
pub struct {{Camel}}Listener {
    socket: OwnedFd,
    address: String,
}

/// YOUR TRANSPORT: one end of one channel.
pub struct {{Camel}}Endpoint {
    socket: OwnedFd,
}

fn errno(what: &str, e: Errno) -> Error {
    let kind = match e {
        Errno::PIPE | Errno::CONNRESET | Errno::NOTCONN => ErrorKind::PeerGone,
        Errno::MSGSIZE => ErrorKind::TooLarge,
        Errno::CONNREFUSED | Errno::NOENT => ErrorKind::Address,
        _ => ErrorKind::Io,
    };
    Error::new(kind, format!("{what}: {e}"))
}

/// Waits until `fd` is ready for `flags`, at most until `deadline`.
fn wait(fd: impl AsFd, flags: PollFlags, deadline: Instant, what: &str) -> Result<(), Error> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::timed_out(what));
        }
        let ts = Timespec {
            tv_sec: left.as_secs().min(60) as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&fd, flags)];
        match poll(&mut fds, Some(&ts)) {
            Ok(0) | Err(Errno::INTR) => {}
            Ok(_) => return Ok(()),
            Err(e) => return Err(errno("poll", e)),
        }
    }
}

fn socket() -> Result<OwnedFd, Error> {
    rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )
    .map_err(|e| errno("socket", e))
}

impl Transport for {{Camel}}Transport {
    type Listener = {{Camel}}Listener;
    type Endpoint = {{Camel}}Endpoint;
    const NAME: &'static str = "{{transport}}";
    const DESCRIPTION: &'static str =
        "{{name}}: Unix-domain SOCK_SEQPACKET sockets (a stub to replace)";
    const MAX_MESSAGE: Option<usize> = Some(MAX_MESSAGE);

    /// YOUR TRANSPORT: its parameters, swept with `-p NAME=LIST`, for example
    /// `vec![Param::integer("depth", 1, 4096, "64", "messages in flight")]`, read in
    /// `create` with `values.integer("depth")`.
    fn params() -> Vec<Param> {
        Vec::new()
    }

    fn create(_values: &Values, host: &Host) -> Result<Self, Error> {
        Ok({{Camel}}Transport {
            scope: host.scope.clone(),
        })
    }

    fn listen(&self) -> Result<{{Camel}}Listener, Error> {
        // YOUR TRANSPORT: make something a peer can find, and say its address. The
        // abstract namespace: a name, not a file.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{PREFIX}{}-{}-{}",
            self.scope,
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let socket = socket()?;
        let addr =
            SocketAddrUnix::new_abstract_name(name.as_bytes()).map_err(|e| errno("address", e))?;
        rustix::net::bind(&socket, &addr).map_err(|e| errno("bind", e))?;
        rustix::net::listen(&socket, 1).map_err(|e| errno("listen", e))?;
        Ok({{Camel}}Listener {
            socket,
            address: format!("@{name}"),
        })
    }

    fn connect(&self, address: &str, timeout: Duration) -> Result<{{Camel}}Endpoint, Error> {
        // Any string may arrive here: refuse what this transport did not give out.
        let name = address
            .strip_prefix('@')
            .filter(|n| n.starts_with(PREFIX) && n.len() < 100)
            .ok_or_else(|| Error::address(format!("{address:?} is not an address of {{name}}")))?;
        // YOUR TRANSPORT: reach the listener within `timeout`.
        let socket = socket()?;
        let addr =
            SocketAddrUnix::new_abstract_name(name.as_bytes()).map_err(|e| errno("address", e))?;
        let deadline = Instant::now() + timeout;
        loop {
            match rustix::net::connect(&socket, &addr) {
                Ok(()) => return Ok({{Camel}}Endpoint { socket }),
                // A full backlog: try again until the deadline.
                Err(Errno::AGAIN | Errno::INTR) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => return Err(errno("connect", e)),
            }
        }
    }
}

impl Listener for {{Camel}}Listener {
    type Endpoint = {{Camel}}Endpoint;

    fn address(&self) -> &str {
        &self.address
    }

    fn accept(&mut self, timeout: Duration) -> Result<{{Camel}}Endpoint, Error> {
        // YOUR TRANSPORT: wait for the peer, at most `timeout`.
        let deadline = Instant::now() + timeout;
        wait(&self.socket, PollFlags::IN, deadline, "no peer connected")?;
        let socket = rustix::net::accept_with(&self.socket, SocketFlags::CLOEXEC)
            .map_err(|e| errno("accept", e))?;
        Ok({{Camel}}Endpoint { socket })
    }
}

impl Endpoint for {{Camel}}Endpoint {
    fn send(&mut self, msg: &[u8], timeout: Duration) -> Result<(), Error> {
        if msg.len() > MAX_MESSAGE {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!("a {}-byte message; the largest is {MAX_MESSAGE}", msg.len()),
            ));
        }
        // YOUR TRANSPORT: one message, waiting at most `timeout` for room. Try first
        // and wait only when that would block: no system call that is not needed.
        let mut deadline = None;
        loop {
            match rustix::net::send(&self.socket, msg, SendFlags::DONTWAIT | SendFlags::NOSIGNAL) {
                Ok(_) => return Ok(()),
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => {
                    let d = *deadline.get_or_insert_with(|| Instant::now() + timeout);
                    wait(&self.socket, PollFlags::OUT, d, "the socket stayed full")?;
                }
                Err(e) => return Err(errno("send", e)),
            }
        }
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> Result<Recv, Error> {
        // YOUR TRANSPORT: exactly one message of exactly `buf.len()` bytes, or
        // `Recv::Closed` once the peer closed its sending side. `TRUNC` gives the
        // message's real length, so one of another length is reported, never cut.
        let mut deadline = None;
        loop {
            match rustix::net::recv(
                &self.socket,
                &mut *buf,
                RecvFlags::DONTWAIT | RecvFlags::TRUNC,
            ) {
                Ok((_, 0)) => return Ok(Recv::Closed),
                Ok((_, n)) if n == buf.len() => return Ok(Recv::Message),
                Ok((_, n)) => {
                    return Err(Error::new(
                        ErrorKind::MessageSize,
                        format!("a {n}-byte message where {} were expected", buf.len()),
                    ));
                }
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => {
                    let d = *deadline.get_or_insert_with(|| Instant::now() + timeout);
                    wait(&self.socket, PollFlags::IN, d, "no message arrived")?;
                }
                Err(e) => return Err(errno("recv", e)),
            }
        }
    }

    fn close_send(&mut self) -> Result<(), Error> {
        // YOUR TRANSPORT: the end of the stream; the peer's `recv` returns
        // `Recv::Closed` after the messages already sent.
        match rustix::net::shutdown(&self.socket, Shutdown::Write) {
            Ok(()) | Err(Errno::NOTCONN) => Ok(()),
            Err(e) => Err(errno("shutdown", e)),
        }
    }
}

// Nothing is left outside the processes (abstract sockets vanish with them).
// YOUR TRANSPORT: if it leaves files, queues or shared memory named under
// `Host::scope`, add `cleanup: remove_leftovers,` with a `fn remove_leftovers(scope:
// &str)` that removes them.
xferbench_plugin::export! {
    name: "{{name}}",
    // Your version: recorded with every result, so `xferbench compare` tells builds
    // apart.
    version: env!("CARGO_PKG_VERSION"),
    transports: [{{Camel}}Transport],
}
