//! An xferbench transport plugin written in Rust: Unix-domain `SOCK_SEQPACKET`
//! sockets, which keep message boundaries (one `send` is one `recv`) and report the
//! peer's close as end-of-file.
//!
//! ```sh
//! cargo build --release -p xb-seqpacket
//! xferbench check -t plugin:target/release/libxb_seqpacket.so
//! xferbench run pingpong -t unix,plugin:target/release/libxb_seqpacket.so -s 64
//! ```
//!
//! Everything here is safe Rust: the [`xferbench_plugin`] traits and one
//! [`xferbench_plugin::export!`] line; the system calls go through `rustix`.
//!
//! - listen binds an abstract-namespace socket (`@xb-seqpacket-<scope>-<pid>-<n>`):
//!   no file is created, so nothing can be left behind and no clean-up hook is
//!   needed;
//! - sends and receives are non-blocking calls first (`MSG_DONTWAIT`); only when they
//!   would block do they wait in `poll` for what is left of their timeout;
//! - a receive asks for the real length (`MSG_TRUNC`), so a message of another size
//!   is reported as one, never silently cut.

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

/// The address prefix (the abstract name, after `@`).
const PREFIX: &str = "xb-seqpacket-";
/// The largest message: well within the socket buffer this transport asks for.
const MAX_MESSAGE: usize = 64 * 1024;

/// `SOCK_SEQPACKET` sockets: one configuration.
pub struct SeqPacket {
    sndbuf: usize,
    scope: String,
}

/// A bound, listening socket waiting for one peer.
pub struct SeqListener {
    socket: OwnedFd,
    address: String,
    sndbuf: usize,
}

/// One connected socket.
pub struct SeqEndpoint {
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
            return Err(Error::timed_out(what.to_string()));
        }
        let ts = Timespec {
            tv_sec: left.as_secs().min(60) as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&fd, flags)];
        match poll(&mut fds, Some(&ts)) {
            Ok(0) => {}
            Ok(_) => return Ok(()),
            Err(Errno::INTR) => {}
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

impl Transport for SeqPacket {
    type Listener = SeqListener;
    type Endpoint = SeqEndpoint;
    const NAME: &'static str = "seqpacket";
    const DESCRIPTION: &'static str =
        "Unix-domain SOCK_SEQPACKET sockets (abstract namespace), a plugin written in Rust";
    const MAX_MESSAGE: Option<usize> = Some(MAX_MESSAGE);

    fn params() -> Vec<Param> {
        vec![Param::bytes(
            "sndbuf",
            128 * 1024,
            64 << 20,
            "256KiB",
            "SO_SNDBUF of both sockets (the kernel caps it at net.core.wmem_max)",
        )]
    }

    fn create(values: &Values, host: &Host) -> Result<Self, Error> {
        Ok(SeqPacket {
            sndbuf: values.bytes("sndbuf") as usize,
            scope: host.scope.clone(),
        })
    }

    fn listen(&self) -> Result<SeqListener, Error> {
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
        Ok(SeqListener {
            socket,
            address: format!("@{name}"),
            sndbuf: self.sndbuf,
        })
    }

    fn connect(&self, address: &str, timeout: Duration) -> Result<SeqEndpoint, Error> {
        let name = address
            .strip_prefix('@')
            .filter(|n| n.starts_with(PREFIX) && n.len() < 100)
            .ok_or_else(|| Error::address(format!("{address:?} is not a seqpacket address")))?;
        let socket = socket()?;
        let addr =
            SocketAddrUnix::new_abstract_name(name.as_bytes()).map_err(|e| errno("address", e))?;
        let deadline = Instant::now() + timeout;
        // A full backlog refuses with EAGAIN: try again until the deadline.
        loop {
            match rustix::net::connect(&socket, &addr) {
                Ok(()) => break,
                Err(Errno::AGAIN | Errno::INTR) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => return Err(errno("connect", e)),
            }
        }
        rustix::net::sockopt::set_socket_send_buffer_size(&socket, self.sndbuf)
            .map_err(|e| errno("SO_SNDBUF", e))?;
        Ok(SeqEndpoint { socket })
    }
}

impl Listener for SeqListener {
    type Endpoint = SeqEndpoint;

    fn address(&self) -> &str {
        &self.address
    }

    fn accept(&mut self, timeout: Duration) -> Result<SeqEndpoint, Error> {
        wait(
            &self.socket,
            PollFlags::IN,
            Instant::now() + timeout,
            "no peer connected",
        )?;
        let socket = rustix::net::accept_with(&self.socket, SocketFlags::CLOEXEC)
            .map_err(|e| errno("accept", e))?;
        rustix::net::sockopt::set_socket_send_buffer_size(&socket, self.sndbuf)
            .map_err(|e| errno("SO_SNDBUF", e))?;
        Ok(SeqEndpoint { socket })
    }
}

impl Endpoint for SeqEndpoint {
    fn send(&mut self, msg: &[u8], timeout: Duration) -> Result<(), Error> {
        if msg.len() > MAX_MESSAGE {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!("a {}-byte message; the largest is {MAX_MESSAGE}", msg.len()),
            ));
        }
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
                        format!("a {n}-byte message where {} bytes were expected", buf.len()),
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
        match rustix::net::shutdown(&self.socket, Shutdown::Write) {
            Ok(()) | Err(Errno::NOTCONN) => Ok(()),
            Err(e) => Err(errno("shutdown", e)),
        }
    }
}

xferbench_plugin::export! {
    name: "xb-seqpacket",
    version: env!("CARGO_PKG_VERSION"),
    transports: [SeqPacket],
}
