//! Unix-domain stream sockets in Linux's abstract namespace.
//!
//! The listener binds `@xferbench-<pid>-<n>-<t>`: an abstract name has no file behind
//! it, so a crashed run leaves nothing to clean up. The address is that name.

use super::socket::{RCVBUF, SNDBUF, SocketEndpoint, apply_buffers, unique_suffix};
use crate::{Hosts, Wakeup, WakeupRule};
use crate::{
    Listener, ParamDef, ParamError, ParamValues, Transport, TransportError, wait_readable,
};
use std::borrow::Cow;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener as StdListener, UnixStream};
use std::time::{Duration, Instant};

const NAME: &str = "unix";

const PARAMS: &[ParamDef] = &[SNDBUF, RCVBUF];

/// A Unix-domain stream socket pair.
#[derive(Debug, Clone, Default)]
pub struct Unix {
    sndbuf: Option<usize>,
    rcvbuf: Option<usize>,
}

/// A listening abstract-namespace socket.
#[derive(Debug)]
pub struct UnixListener {
    address: String,
    listener: StdListener,
    transport: Unix,
}

impl Transport for Unix {
    type Endpoint = SocketEndpoint;
    const WAKEUP: WakeupRule = WakeupRule::Always(Wakeup::Futex);
    const HOSTS: Hosts = Hosts::One(Cow::Borrowed("is a local IPC channel of one kernel"));
    type Listener = UnixListener;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "Unix-domain stream socket (abstract namespace)";

    fn params() -> &'static [ParamDef] {
        PARAMS
    }

    fn from_values(values: &ParamValues) -> Result<Self, ParamError> {
        values.check(NAME, PARAMS)?;
        Ok(Self {
            sndbuf: values.opt_bytes(&SNDBUF).map(|n| n as usize),
            rcvbuf: values.opt_bytes(&RCVBUF).map(|n| n as usize),
        })
    }

    fn listen(&self) -> Result<UnixListener, TransportError> {
        let name = format!("xferbench-{}", unique_suffix());
        let addr = SocketAddr::from_abstract_name(name.as_bytes())
            .map_err(TransportError::io(NAME, "address"))?;
        let listener = StdListener::bind_addr(&addr).map_err(TransportError::io(NAME, "bind"))?;
        listener
            .set_nonblocking(true)
            .map_err(TransportError::io(NAME, "listen"))?;
        Ok(UnixListener {
            address: format!("@{name}"),
            listener,
            transport: self.clone(),
        })
    }

    fn connect(&self, address: &str, deadline: Instant) -> Result<SocketEndpoint, TransportError> {
        let name = address
            .strip_prefix('@')
            .ok_or_else(|| TransportError::BadAddress {
                transport: NAME,
                address: address.to_string(),
                reason: "expected @name (an abstract socket name)",
            })?;
        let addr = SocketAddr::from_abstract_name(name.as_bytes())
            .map_err(TransportError::io(NAME, "address"))?;
        let stream = loop {
            match UnixStream::connect_addr(&addr) {
                Ok(s) => break s,
                // A full backlog answers EAGAIN; retry until the deadline.
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => return Err(TransportError::io(NAME, "connect")(e)),
            }
        };
        let fd = stream.into();
        apply_buffers(&fd, self.sndbuf, self.rcvbuf)
            .map_err(TransportError::io(NAME, "setsockopt"))?;
        Ok(SocketEndpoint::new(fd))
    }
}

impl Listener for UnixListener {
    type Endpoint = SocketEndpoint;

    fn address(&self) -> &str {
        &self.address
    }

    fn accept(self, deadline: Instant) -> Result<SocketEndpoint, TransportError> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    stream
                        .set_nonblocking(false)
                        .map_err(TransportError::io(NAME, "accept"))?;
                    let fd = stream.into();
                    apply_buffers(&fd, self.transport.sndbuf, self.transport.rcvbuf)
                        .map_err(TransportError::io(NAME, "setsockopt"))?;
                    return Ok(SocketEndpoint::new(fd));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let ready = wait_readable(&self.listener, deadline)
                        .map_err(|e| TransportError::io(NAME, "poll")(e.into()))?;
                    if !ready {
                        return Err(TransportError::Timeout {
                            transport: NAME,
                            what: "connect",
                        });
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TransportError::io(NAME, "accept")(e)),
            }
        }
    }
}
