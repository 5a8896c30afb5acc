//! What the stream-socket transports ([`unix`](super::unix), [`tcp`](super::tcp))
//! share: the endpoint over one connected socket, the buffer-size parameters and
//! a process-unique name fragment.

use crate::{Recv, read_exact_fd, write_all_fd};
use rustix::fd::OwnedFd;
use std::io;

/// An endpoint over one connected, full-duplex stream socket (Unix or TCP).
#[derive(Debug)]
pub struct SocketEndpoint {
    fd: OwnedFd,
}

impl SocketEndpoint {
    pub(crate) fn new(fd: OwnedFd) -> Self {
        Self { fd }
    }
}

impl crate::Endpoint for SocketEndpoint {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        write_all_fd(&self.fd, msg)
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Recv> {
        read_exact_fd(&self.fd, buf)
    }

    fn close_send(&mut self) -> io::Result<()> {
        rustix::net::shutdown(&self.fd, rustix::net::Shutdown::Write)?;
        Ok(())
    }
}

/// `sndbuf`: `SO_SNDBUF` of both sockets (unix, tcp).
pub const SNDBUF: crate::ParamDef = crate::ParamDef::bytes_or_unset(
    "sndbuf",
    1,
    1 << 30,
    "os",
    "SO_SNDBUF of both sockets; `os` keeps the kernel's default (for TCP, its autotuning)",
);
/// `rcvbuf`: `SO_RCVBUF` of both sockets (unix, tcp).
pub const RCVBUF: crate::ParamDef = crate::ParamDef::bytes_or_unset(
    "rcvbuf",
    1,
    1 << 30,
    "os",
    "SO_RCVBUF of both sockets; `os` keeps the kernel's default (for TCP, its autotuning)",
);

/// Applies the `sndbuf`/`rcvbuf` parameters to a socket.
pub(crate) fn apply_buffers(
    fd: &OwnedFd,
    sndbuf: Option<usize>,
    rcvbuf: Option<usize>,
) -> io::Result<()> {
    if let Some(n) = sndbuf {
        rustix::net::sockopt::set_socket_send_buffer_size(fd, n)?;
    }
    if let Some(n) = rcvbuf {
        rustix::net::sockopt::set_socket_recv_buffer_size(fd, n)?;
    }
    Ok(())
}

/// A process-unique name fragment: pid, a counter and the clock.
pub(crate) fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{}-{n}-{t:x}", std::process::id())
}
