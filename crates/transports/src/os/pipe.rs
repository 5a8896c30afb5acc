//! Anonymous pipes, one per direction.
//!
//! A pipe has no name to connect to, so the listener publishes its pipes through
//! `/proc/<pid>/fd/<n>`: opening that path opens the same pipe, from this process or
//! from any other process of the same user. The address is `pid:down_fd:up_fd`. The
//! connecting side writes one hello byte on the up pipe; on seeing it, the listener
//! closes its copies of the peer's ends, so that the peer's death shows as end-of-file
//! (or `EPIPE`) instead of a read that never returns. Nothing is created in the file
//! system, so nothing can be left behind.

use crate::{
    Endpoint, Listener, ParamDef, ParamError, ParamValues, Recv, Transport, TransportError,
    read_exact_fd, wait_readable, write_all_fd,
};
use crate::{Hosts, Wakeup, WakeupRule};
use rustix::fd::{AsRawFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use rustix::pipe::{PipeFlags, pipe_with};
use std::borrow::Cow;
use std::io;
use std::time::Instant;

const NAME: &str = "pipe";
const HELLO: u8 = 0xA5;

/// `pipe_size`: the capacity of each pipe.
pub const PIPE_SIZE: ParamDef = ParamDef::bytes_or_unset(
    "pipe_size",
    1,
    1 << 30,
    "os",
    "capacity of each pipe (F_SETPIPE_SZ, at most /proc/sys/fs/pipe-max-size); `os` keeps the kernel's default (64 KiB)",
);

const PARAMS: &[ParamDef] = &[PIPE_SIZE];

/// Two anonymous pipes, one each way.
#[derive(Debug, Clone, Default)]
pub struct Pipe {
    pipe_size: Option<usize>,
}

/// A pipe pair waiting for its peer.
#[derive(Debug)]
pub struct PipeListener {
    address: String,
    down_w: OwnedFd,
    up_r: OwnedFd,
    /// The peer's ends, held (never read) until the peer opened its own copies via
    /// `/proc`, so that the address stays valid; dropped by `accept`.
    _peer_ends: (OwnedFd, OwnedFd),
}

/// One side of a pipe pair: a write end and a read end.
#[derive(Debug)]
pub struct PipeEndpoint {
    tx: Option<OwnedFd>,
    rx: OwnedFd,
}

impl Transport for Pipe {
    type Endpoint = PipeEndpoint;
    const WAKEUP: WakeupRule = WakeupRule::Always(Wakeup::Pipe);
    const HOSTS: Hosts = Hosts::One(Cow::Borrowed("is a local IPC channel of one kernel"));
    type Listener = PipeListener;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str =
        "two anonymous pipes (one per direction); peers open them via /proc";

    fn params() -> &'static [ParamDef] {
        PARAMS
    }

    fn from_values(values: &ParamValues) -> Result<Self, ParamError> {
        values.check(NAME, PARAMS)?;
        Ok(Self {
            pipe_size: values.opt_bytes(&PIPE_SIZE).map(|n| n as usize),
        })
    }

    fn listen(&self) -> Result<PipeListener, TransportError> {
        let (down_r, down_w) = pipe_with(PipeFlags::CLOEXEC)
            .map_err(|e| TransportError::io(NAME, "pipe")(e.into()))?;
        let (up_r, up_w) = pipe_with(PipeFlags::CLOEXEC)
            .map_err(|e| TransportError::io(NAME, "pipe")(e.into()))?;
        if let Some(size) = self.pipe_size {
            for fd in [&down_w, &up_w] {
                rustix::pipe::fcntl_setpipe_size(fd, size)
                    .map_err(|e| TransportError::io(NAME, "F_SETPIPE_SZ (pipe_size)")(e.into()))?;
            }
        }
        let address = format!(
            "{}:{}:{}",
            std::process::id(),
            down_r.as_raw_fd(),
            up_w.as_raw_fd()
        );
        Ok(PipeListener {
            address,
            down_w,
            up_r,
            _peer_ends: (down_r, up_w),
        })
    }

    fn connect(&self, address: &str, _deadline: Instant) -> Result<PipeEndpoint, TransportError> {
        let bad = |reason| TransportError::BadAddress {
            transport: NAME,
            address: address.to_string(),
            reason,
        };
        let mut parts = address.split(':');
        let mut next = || -> Result<u32, TransportError> {
            parts
                .next()
                .ok_or_else(|| bad("expected pid:down_fd:up_fd"))?
                .parse()
                .map_err(|_| bad("expected three decimal numbers pid:down_fd:up_fd"))
        };
        let (pid, down, up) = (next()?, next()?, next()?);
        if parts.next().is_some() {
            return Err(bad("expected pid:down_fd:up_fd"));
        }
        // The listener holds the write end of `down` and the read end of `up`, so
        // neither open blocks waiting for the other side of the pipe.
        let open = |fd: u32, flags: OFlags| {
            rustix::fs::open(
                format!("/proc/{pid}/fd/{fd}"),
                flags | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| TransportError::io(NAME, "open /proc/<pid>/fd")(e.into()))
        };
        let rx = open(down, OFlags::RDONLY)?;
        let tx = open(up, OFlags::WRONLY)?;
        write_all_fd(&tx, &[HELLO]).map_err(TransportError::io(NAME, "hello"))?;
        Ok(PipeEndpoint { tx: Some(tx), rx })
    }
}

impl Listener for PipeListener {
    type Endpoint = PipeEndpoint;

    fn address(&self) -> &str {
        &self.address
    }

    fn accept(self, deadline: Instant) -> Result<PipeEndpoint, TransportError> {
        let ready = wait_readable(&self.up_r, deadline)
            .map_err(|e| TransportError::io(NAME, "poll")(e.into()))?;
        if !ready {
            return Err(TransportError::Timeout {
                transport: NAME,
                what: "connect",
            });
        }
        let mut hello = [0u8];
        match read_exact_fd(&self.up_r, &mut hello).map_err(TransportError::io(NAME, "hello"))? {
            Recv::Message if hello[0] == HELLO => {}
            _ => {
                return Err(TransportError::Io {
                    transport: NAME,
                    op: "hello",
                    source: io::Error::new(io::ErrorKind::InvalidData, "peer sent no hello byte"),
                });
            }
        }
        // Dropping `_peer_ends` here leaves the peer as the only holder of its
        // ends, so its death is seen as EOF/EPIPE.
        Ok(PipeEndpoint {
            tx: Some(self.down_w),
            rx: self.up_r,
        })
    }
}

impl Endpoint for PipeEndpoint {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        match &self.tx {
            Some(tx) => write_all_fd(tx, msg),
            None => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "sending side already closed",
            )),
        }
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Recv> {
        read_exact_fd(&self.rx, buf)
    }

    fn close_send(&mut self) -> io::Result<()> {
        self.tx = None;
        Ok(())
    }
}
