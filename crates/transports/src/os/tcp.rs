//! TCP, on loopback unless told otherwise, with `TCP_NODELAY` by default.
//!
//! The listener binds an ephemeral port on `bind` (default `127.0.0.1`); the address
//! is `ip:port`.

use super::socket::{RCVBUF, SNDBUF, SocketEndpoint, apply_buffers};
use crate::{Hosts, Wakeup, WakeupRule};
use crate::{
    Listener, ParamDef, ParamError, ParamValues, Transport, TransportError, wait_readable,
};
use std::net::{IpAddr, SocketAddr, TcpListener as StdListener, TcpStream};
use std::time::Instant;

const NAME: &str = "tcp";

/// `nodelay`: `TCP_NODELAY` on both sockets.
pub const NODELAY: ParamDef = ParamDef::boolean(
    "nodelay",
    true,
    "set TCP_NODELAY (disable Nagle's algorithm) on both sockets",
);
/// `bind`: the address the listening side binds.
pub const BIND: ParamDef = ParamDef::text(
    "bind",
    "an IPv4 or IPv6 address of this host",
    "127.0.0.1",
    "address the listening side binds (an ephemeral port is chosen)",
);

const PARAMS: &[ParamDef] = &[NODELAY, BIND, SNDBUF, RCVBUF];

/// A TCP connection.
#[derive(Debug, Clone)]
pub struct Tcp {
    nodelay: bool,
    bind: IpAddr,
    sndbuf: Option<usize>,
    rcvbuf: Option<usize>,
}

impl Default for Tcp {
    fn default() -> Self {
        Self::from_values(&ParamValues::new()).expect("defaults are valid")
    }
}

/// A listening TCP socket.
#[derive(Debug)]
pub struct TcpListener {
    address: String,
    listener: StdListener,
    transport: Tcp,
}

impl Tcp {
    fn configure(&self, stream: TcpStream) -> Result<SocketEndpoint, TransportError> {
        stream
            .set_nodelay(self.nodelay)
            .map_err(TransportError::io(NAME, "TCP_NODELAY"))?;
        let fd = stream.into();
        apply_buffers(&fd, self.sndbuf, self.rcvbuf)
            .map_err(TransportError::io(NAME, "setsockopt"))?;
        Ok(SocketEndpoint::new(fd))
    }
}

impl Transport for Tcp {
    type Endpoint = SocketEndpoint;
    const WAKEUP: WakeupRule = WakeupRule::Always(Wakeup::Futex);
    const HOSTS: Hosts = Hosts::Any;
    type Listener = TcpListener;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "TCP over loopback (or -p bind=ADDR), TCP_NODELAY by default";

    fn params() -> &'static [ParamDef] {
        PARAMS
    }

    fn from_values(values: &ParamValues) -> Result<Self, ParamError> {
        values.check(NAME, PARAMS)?;
        let bind_value = values.text(&BIND);
        let bind = bind_value.parse().map_err(|_| ParamError::Invalid {
            name: BIND.name.to_string(),
            value: bind_value.clone(),
            accepts: BIND.accepts(),
        })?;
        Ok(Self {
            nodelay: values.boolean(&NODELAY),
            bind,
            sndbuf: values.opt_bytes(&SNDBUF).map(|n| n as usize),
            rcvbuf: values.opt_bytes(&RCVBUF).map(|n| n as usize),
        })
    }

    fn listen(&self) -> Result<TcpListener, TransportError> {
        let listener =
            StdListener::bind((self.bind, 0)).map_err(TransportError::io(NAME, "bind"))?;
        listener
            .set_nonblocking(true)
            .map_err(TransportError::io(NAME, "listen"))?;
        let address = listener
            .local_addr()
            .map_err(TransportError::io(NAME, "listen"))?
            .to_string();
        Ok(TcpListener {
            address,
            listener,
            transport: self.clone(),
        })
    }

    fn connect(&self, address: &str, deadline: Instant) -> Result<SocketEndpoint, TransportError> {
        let addr: SocketAddr = address.parse().map_err(|_| TransportError::BadAddress {
            transport: NAME,
            address: address.to_string(),
            reason: "expected ip:port",
        })?;
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(TransportError::Timeout {
                transport: NAME,
                what: "connect",
            });
        }
        let stream = TcpStream::connect_timeout(&addr, left).map_err(|e| {
            if e.kind() == std::io::ErrorKind::TimedOut {
                TransportError::Timeout {
                    transport: NAME,
                    what: "connect",
                }
            } else {
                TransportError::io(NAME, "connect")(e)
            }
        })?;
        self.configure(stream)
    }
}

impl Listener for TcpListener {
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
                    return self.transport.configure(stream);
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
