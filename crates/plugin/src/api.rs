//! The safe side of the plugin ABI: the traits a plugin implements ([`Transport`],
//! [`Listener`], [`Endpoint`]), what they return ([`Recv`], [`Error`]) and what the
//! lab hands them ([`Host`]). `glue` turns them into the C ABI.

use crate::abi;
use crate::params::{Param, Values};
use std::fmt;
use std::time::Duration;

/// What [`Endpoint::recv`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recv {
    /// The buffer holds one whole message.
    Message,
    /// The peer closed its sending side; no message follows.
    Closed,
}

/// What went wrong, as the lab sorts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Nothing happened within the timeout (`XB_ERR_TIMEDOUT`).
    TimedOut,
    /// The peer died or closed its endpoint (`XB_ERR_PEER`).
    PeerGone,
    /// A message longer than the transport's largest (`XB_ERR_TOO_LARGE`).
    TooLarge,
    /// What arrived is not one message of the expected length (`XB_ERR_MESSAGE_SIZE`).
    MessageSize,
    /// An address this transport did not give out (`XB_ERR_ADDRESS`).
    Address,
    /// Not offered, such as zero-copy calls of a copying transport
    /// (`XB_ERR_UNSUPPORTED`).
    Unsupported,
    /// A parameter value the transport cannot use (`XB_ERR_PARAM`).
    Param,
    /// Anything else (`XB_ERR_IO`).
    Io,
}

impl ErrorKind {
    /// The C status code.
    pub fn code(self) -> i32 {
        match self {
            ErrorKind::TimedOut => abi::XB_ERR_TIMEDOUT,
            ErrorKind::PeerGone => abi::XB_ERR_PEER,
            ErrorKind::TooLarge => abi::XB_ERR_TOO_LARGE,
            ErrorKind::MessageSize => abi::XB_ERR_MESSAGE_SIZE,
            ErrorKind::Address => abi::XB_ERR_ADDRESS,
            ErrorKind::Unsupported => abi::XB_ERR_UNSUPPORTED,
            ErrorKind::Param => abi::XB_ERR_PARAM,
            ErrorKind::Io => abi::XB_ERR_IO,
        }
    }
}

/// An error with a message for the user (at most 255 bytes reach the lab).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// [`ErrorKind::TimedOut`].
    pub fn timed_out(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::TimedOut, message)
    }

    /// [`ErrorKind::PeerGone`].
    pub fn peer_gone(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::PeerGone, message)
    }

    /// [`ErrorKind::Address`].
    pub fn address(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Address, message)
    }

    /// [`ErrorKind::Param`].
    pub fn param(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Param, message)
    }

    /// [`ErrorKind::Io`].
    pub fn io(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Io, message)
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    /// Sorts an OS error: timeouts and would-block as [`ErrorKind::TimedOut`], a
    /// broken or reset connection as [`ErrorKind::PeerGone`], the rest as
    /// [`ErrorKind::Io`].
    fn from(e: std::io::Error) -> Error {
        use std::io::ErrorKind as K;
        let kind = match e.kind() {
            K::TimedOut | K::WouldBlock => ErrorKind::TimedOut,
            K::BrokenPipe | K::ConnectionReset | K::ConnectionAborted | K::NotConnected => {
                ErrorKind::PeerGone
            }
            K::UnexpectedEof => ErrorKind::MessageSize,
            K::Unsupported => ErrorKind::Unsupported,
            _ => ErrorKind::Io,
        };
        Error::new(kind, e.to_string())
    }
}

/// What the lab tells a transport it creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// The lab's revision of the C header (`XB_ABI_VERSION`).
    pub abi_version: u32,
    /// The clean-up scope: the same in every process of one measured point. Name what
    /// you leave in the system (queues, socket files) under it, so that your
    /// [`export!`](crate::export!) `cleanup` function can find it after a crash.
    pub scope: String,
    /// With the peers on another host (`--remote`, a transport with
    /// [`Transport::CROSSES_HOSTS`]): this host's IP address on the route to theirs,
    /// where `listen` should listen and which its address should name. `None` when
    /// every peer runs on this host.
    pub listen_host: Option<String>,
}

/// One configuration of a transport: listens and connects. Shared by the threads of
/// a process (`Sync`): several channels listen and connect at once.
pub trait Transport: Send + Sync + Sized + 'static {
    /// The listening side.
    type Listener: Listener<Endpoint = Self::Endpoint>;
    /// One end of a channel.
    type Endpoint: Endpoint;

    /// The name in results and in `-t plugin:PATH:NAME`: `[a-z0-9][a-z0-9._-]*`, at
    /// most 32 bytes, not a built-in transport's name.
    const NAME: &'static str;
    /// One line for `xferbench list`.
    const DESCRIPTION: &'static str;
    /// The largest message any configuration carries (`None`: no limit).
    const MAX_MESSAGE: Option<usize> = None;
    /// Whether endpoints move messages in place ([`Endpoint::loan`] and friends).
    const ZERO_COPY: bool = false;
    /// Whether addresses cross hosts (`XB_REACH_NETWORK`): a peer on another host can
    /// connect to what `listen` wrote, given [`Host::listen_host`], so `xferbench run
    /// --remote` may run the serving side there. `false`: peers on this host only.
    const CROSSES_HOSTS: bool = false;

    /// The parameters, with defaults; the lab parses and checks every value against
    /// them before [`Transport::create`] sees it.
    fn params() -> Vec<Param> {
        Vec::new()
    }

    /// Makes a configuration from parameter values (every declared parameter has
    /// one). [`Error::param`] for a value you cannot use.
    fn create(values: &Values, host: &Host) -> Result<Self, Error>;

    /// The largest message this configuration carries (default
    /// [`Transport::MAX_MESSAGE`]). A longer send must fail with
    /// [`ErrorKind::TooLarge`].
    fn max_message(&self) -> Option<usize> {
        Self::MAX_MESSAGE
    }

    /// Starts listening for one peer.
    fn listen(&self) -> Result<Self::Listener, Error>;

    /// Connects to a listener's address (from this or another process), within
    /// `timeout`. Any string may arrive: refuse garbage with [`Error::address`].
    fn connect(&self, address: &str, timeout: Duration) -> Result<Self::Endpoint, Error>;
}

/// A listener waiting for one peer.
pub trait Listener: Send + 'static {
    /// The endpoint it yields.
    type Endpoint: Endpoint;
    /// The address peers connect to: printable, at most 255 bytes.
    fn address(&self) -> &str;
    /// Waits up to `timeout` for the peer; called at most once.
    fn accept(&mut self, timeout: Duration) -> Result<Self::Endpoint, Error>;
}

/// One end of a channel; used by one thread at a time.
pub trait Endpoint: Send + 'static {
    /// Sends one message, waiting up to `timeout` for room. May buffer (see
    /// [`Endpoint::flush`]).
    fn send(&mut self, msg: &[u8], timeout: Duration) -> Result<(), Error>;

    /// Makes everything sent visible to the peer now.
    fn flush(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// Receives one message of exactly `buf.len()` bytes within `timeout`, or
    /// [`Recv::Closed`] once the peer closed its sending side.
    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> Result<Recv, Error>;

    /// No more messages from this side. Receiving stays possible. Dropping the
    /// endpoint implies it.
    fn close_send(&mut self) -> Result<(), Error>;

    /// Zero-copy: a buffer of at least `len` bytes for the next message, within
    /// `timeout`; the lab writes the message and calls [`Endpoint::commit`].
    fn loan(&mut self, len: usize, timeout: Duration) -> Result<&mut [u8], Error> {
        let _ = (len, timeout);
        Err(Error::new(ErrorKind::Unsupported, "no zero-copy mode"))
    }

    /// Zero-copy: sends the first `len` bytes of the loaned buffer.
    fn commit(&mut self, len: usize) -> Result<(), Error> {
        let _ = len;
        Err(Error::new(ErrorKind::Unsupported, "no zero-copy mode"))
    }

    /// Zero-copy: waits up to `timeout` for the next message of exactly `len` bytes
    /// and lends its bytes (`None`: the peer closed); the lab reads them and calls
    /// [`Endpoint::release`].
    fn borrow(&mut self, len: usize, timeout: Duration) -> Result<Option<&[u8]>, Error> {
        let _ = (len, timeout);
        Err(Error::new(ErrorKind::Unsupported, "no zero-copy mode"))
    }

    /// Zero-copy: gives the borrowed message back.
    fn release(&mut self) -> Result<(), Error> {
        Err(Error::new(ErrorKind::Unsupported, "no zero-copy mode"))
    }
}
