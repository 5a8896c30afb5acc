//! The systems under test: transports that move fixed-size messages between two
//! endpoints, in one process (threads) or across processes.
//!
//! This crate knows nothing of the measurement lab, the command line or reports. It
//! offers one extension point, the [`Transport`] trait, and one file per
//! implementation (`os/pipe.rs`, `os/unix.rs`, `os/tcp.rs`, `shm/mod.rs`,
//! `rpmsg/transport.rs`, `iox2/`, behind the default `iceoryx2` feature), and [`plugin`], which loads a user's shared library
//! (the C ABI of `include/xferbench/plugin.h`) as a transport.
//!
//! # The transport contract
//!
//! Every implementation must pass the generic suite in [`conformance`]. In words:
//!
//! 1. [`Transport::listen`] creates a [`Listener`] whose [`Listener::address`] is a
//!    plain string. Any thread *or any process of the same user on the same host* can
//!    pass that string to [`Transport::connect`]; the listener's
//!    [`Listener::accept`] then yields the other end. Both calls honour a deadline and
//!    fail with [`TransportError::Timeout`] instead of waiting forever.
//! 2. The two [`Endpoint`]s form a reliable, ordered, full-duplex message channel for
//!    messages of a size both sides agree on out of band, up to
//!    [`Transport::MAX_MESSAGE`] where a transport has a limit. [`Endpoint::send`] delivers
//!    the whole message or fails; [`Endpoint::recv`] fills the whole buffer or reports
//!    [`Recv::Closed`] when the peer called [`Endpoint::close_send`] (or dropped its
//!    endpoint) at a message boundary. A stream that ends inside a message is an
//!    error of kind [`std::io::ErrorKind::UnexpectedEof`]. Sends may be batched until
//!    [`Endpoint::flush`] or until the sender has to wait (see [`Endpoint::send`]).
//! 3. When the peer process dies, blocked calls return an error or
//!    [`Recv::Closed`]; they never block forever.
//! 4. Endpoints are `Send`: they may be moved to the thread that uses them. The hot
//!    calls (`send`, `recv`) do not allocate.
//! 5. A transport with [`Transport::ZERO_COPY`] also moves messages in place: the
//!    `*_in_place` calls of [`Endpoint`] hand out the transport's own memory, to be
//!    written before sending and read before it goes back, with the same ordering,
//!    end-of-stream and peer-death rules as `send` and `recv`, and without allocating.
//!    Others refuse them with [`std::io::ErrorKind::Unsupported`].
//!
//! Transports are configured by parameters (`-p NAME=VALUE` on the command line),
//! each with one typed definition ([`ParamDef`], from `xferbench-params`), so that
//! the CLI can list and validate them and a peer process can rebuild the same
//! transport from the same text. What the lab and the command line know of a
//! transport before running it — its name, description, parameters, whether it has a
//! zero-copy mode, its largest message — is its [`Descriptor`], plain data that a
//! transport loaded at run time can build too.

#![deny(missing_docs)]

#[cfg(not(target_os = "linux"))]
compile_error!("xferbench runs on Linux only: futex, membarrier, memfd and /dev/shm");

pub mod buffer;
pub mod conformance;
pub mod copy;
pub mod daq;
#[cfg(feature = "iceoryx2")]
pub mod iox2;
pub mod kv;
pub mod os;
pub mod plugin;
pub mod rpmsg;
pub mod shm;
pub mod warp;

pub use xferbench_params::{self as params, ParamDef, ParamError, ParamValues, Params};

use std::borrow::Cow;
use std::io;
use std::time::Instant;

/// What [`Endpoint::recv`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recv {
    /// The buffer holds one whole message.
    Message,
    /// The peer closed its sending side at a message boundary; no more messages.
    Closed,
}

/// One end of an established channel.
pub trait Endpoint: Send {
    /// Sends the whole of `msg`. Blocks until the transport accepted it.
    ///
    /// A transport may batch: what was sent becomes visible to the peer at the latest
    /// at the next [`Endpoint::flush`], [`Endpoint::close_send`], or call that has to
    /// wait for the peer (a `recv` finding nothing, a `send` finding no room).
    fn send(&mut self, msg: &[u8]) -> io::Result<()>;

    /// Makes everything sent so far visible to the peer now. Request/response loops
    /// call it after each request; transports that never batch need not override it.
    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Receives exactly `buf.len()` bytes, or reports that the peer closed.
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Recv>;

    /// Tells the peer that no more messages follow; its `recv` then reports
    /// [`Recv::Closed`] after the messages already sent. Receiving stays possible.
    fn close_send(&mut self) -> io::Result<()>;

    /// Gives the endpoint a flag that its owner sets when it gives up on the channel
    /// (a run declared hung). Once it is set, a call waiting for the peer fails with
    /// an error instead of waiting on: a peer that is a thread of the same process
    /// never dies, so the peer-death rule alone would leave both sides waiting for
    /// good. Transports whose waits end by themselves need not override it.
    fn abandon_when(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        let _ = flag;
    }

    /// Zero-copy send: lets `fill` write a `len`-byte message in place, in the
    /// transport's own buffer, then sends it as [`Endpoint::send`] would. Transports
    /// with [`Transport::ZERO_COPY`] false fail with [`io::ErrorKind::Unsupported`].
    #[inline]
    fn send_in_place<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> io::Result<()>
    where
        Self: Sized,
    {
        let _ = (len, fill);
        Err(no_zero_copy())
    }

    /// Zero-copy receive: waits for the next message, which must be `len` bytes long
    /// (as for [`Endpoint::recv`]), and lets `read` read it in place; `None` when the
    /// peer closed. Unsupported as for [`Endpoint::send_in_place`].
    #[inline]
    fn recv_in_place<R, F: FnOnce(&[u8]) -> R>(
        &mut self,
        len: usize,
        read: F,
    ) -> io::Result<Option<R>>
    where
        Self: Sized,
    {
        let _ = (len, read);
        Err(no_zero_copy())
    }

    /// Zero-copy echo: waits for the next `len`-byte message and lets `f` read it in
    /// place and write a reply of the same length in place, then sends the reply;
    /// `None` when the peer closed. Unsupported as for [`Endpoint::send_in_place`].
    #[inline]
    fn echo_in_place<R, F: FnOnce(&[u8], &mut [u8]) -> R>(
        &mut self,
        len: usize,
        f: F,
    ) -> io::Result<Option<R>>
    where
        Self: Sized,
    {
        let _ = (len, f);
        Err(no_zero_copy())
    }
}

fn no_zero_copy() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "this transport has no zero-copy mode",
    )
}

/// The listening side of a transport, waiting for one peer.
pub trait Listener: Send {
    /// The endpoint type this listener produces.
    type Endpoint: Endpoint;

    /// The address a peer passes to [`Transport::connect`].
    fn address(&self) -> &str;

    /// Waits until the peer connected, at most until `deadline`.
    fn accept(self, deadline: Instant) -> Result<Self::Endpoint, TransportError>;
}

/// A way of moving messages between two endpoints.
pub trait Transport: Send + Sync + Sized + 'static {
    /// The endpoint type, used by the measuring loops as a generic parameter.
    type Endpoint: Endpoint + 'static;
    /// The listener type.
    type Listener: Listener<Endpoint = Self::Endpoint>;

    /// The name used on the command line (`--transport NAME`).
    const NAME: &'static str;
    /// One line for `xferbench list`.
    const DESCRIPTION: &'static str;
    /// The largest message this transport carries, if it has a limit (`None`, the
    /// default: any size). A longer `send` fails with
    /// [`std::io::ErrorKind::InvalidInput`]; the [`conformance`] checks skip sizes
    /// above it (RPMsg: `Some(496)`, one 512-byte buffer minus its header).
    const MAX_MESSAGE: Option<usize> = None;
    /// Whether its endpoints write and read messages in place in the transport's own
    /// buffers ([`Endpoint::send_in_place`], [`Endpoint::recv_in_place`],
    /// [`Endpoint::echo_in_place`]); `false`, the default, for transports that can only
    /// copy (a socket's or a pipe's kernel buffer is not the caller's to write).
    const ZERO_COPY: bool = false;

    /// The definitions of the parameters this transport accepts.
    fn params() -> &'static [ParamDef];

    /// What wakes its receiver ([`Descriptor::wakeup`]); unknown by default.
    const WAKEUP: WakeupRule = WakeupRule::Unknown;

    /// Whether its sides may run on two hosts ([`Descriptor::hosts`]).
    const HOSTS: Hosts;

    /// Builds a transport from values checked against [`Transport::params`]; what is
    /// not set takes its default.
    fn from_values(values: &ParamValues) -> Result<Self, ParamError>;

    /// Builds a transport from parameters as text (a command line's, a peer's
    /// hello); every name must be one of [`Transport::params`].
    fn from_params(params: &Params) -> Result<Self, ParamError> {
        Self::from_values(&ParamValues::parse(Self::NAME, Self::params(), params)?)
    }

    /// What the lab and the command line know of this transport.
    fn descriptor() -> Descriptor {
        Descriptor {
            name: Cow::Borrowed(Self::NAME),
            description: Cow::Borrowed(Self::DESCRIPTION),
            params: Cow::Borrowed(Self::params()),
            zero_copy: Self::ZERO_COPY,
            max_message: Self::MAX_MESSAGE,
            wakeup: Self::WAKEUP,
            hosts: Self::HOSTS,
        }
    }

    /// This transport's name: [`Transport::NAME`], except for transports known only
    /// at run time (a plugin's, [`plugin::PluginTransport`]).
    fn name(&self) -> &str {
        Self::NAME
    }

    /// The largest message this configuration carries: [`Transport::MAX_MESSAGE`],
    /// except where it is known only at run time.
    fn max_message(&self) -> Option<usize> {
        Self::MAX_MESSAGE
    }

    /// Whether this configuration moves messages in place: [`Transport::ZERO_COPY`],
    /// except where it is known only at run time.
    fn zero_copy(&self) -> bool {
        Self::ZERO_COPY
    }

    /// Tells the transport, before it listens or connects, what every channel will
    /// carry: messages of at most [`Traffic::largest`] bytes, and at most
    /// [`Traffic::in_flight`] of them at a time in each direction. Both sides of a
    /// point of `run` call it with the point's message size and workload. A
    /// transport may size its buffers to it (an `iceoryx2` data segment of exactly
    /// that many bytes per sample, a small `shm` ring for a ping-pong of small
    /// messages, unless a parameter says otherwise); one that sizes a buffer to
    /// `largest` carries no longer message: it reports the limit through
    /// [`Transport::max_message`] and refuses a longer `send` as one above that.
    /// Callers whose message sizes vary or are not known in advance (the
    /// [`conformance`] suite, studies, a plugin's own code) do not call it, so a
    /// transport works without it; the default ignores it.
    fn size_for(&mut self, traffic: Traffic) {
        let _ = traffic;
    }

    /// The values this configuration has chosen for its parameters set to `auto`
    /// (after [`Transport::size_for`], or without it), by parameter name, each as
    /// result files store values (`4096`); empty where it has no such parameter.
    /// Results record them beside the point's parameters, so that a figure says which
    /// ring or segment it was measured with.
    fn chosen(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// Creates a listener for one connection.
    fn listen(&self) -> Result<Self::Listener, TransportError>;

    /// Connects to a listener's address, at most until `deadline`.
    fn connect(&self, address: &str, deadline: Instant) -> Result<Self::Endpoint, TransportError>;
}

/// What a point will carry on each channel ([`Transport::size_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traffic {
    /// The longest message, in bytes.
    pub largest: usize,
    /// The most messages in flight at once in each direction: `Some(1)` for a
    /// ping-pong (a request waits for its reply), `None` for a stream (as many as the
    /// transport's buffers hold).
    pub in_flight: Option<usize>,
}

impl Traffic {
    /// A stream of messages of at most `largest` bytes.
    pub fn stream(largest: usize) -> Traffic {
        Traffic {
            largest,
            in_flight: None,
        }
    }

    /// Request/reply round trips of messages of at most `largest` bytes, one in
    /// flight.
    pub fn round_trips(largest: usize) -> Traffic {
        Traffic {
            largest,
            in_flight: Some(1),
        }
    }
}

/// What tells a transport's receiver that a message arrived, and so bounds one round
/// trip from below: the floor the lab holds its latencies against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wakeup {
    /// The receiver spins on shared memory: a cache line's round trip between CPUs.
    CacheLine,
    /// The receiver sleeps in the kernel and is woken: a futex wake's round trip.
    Futex,
    /// A pipe's write wakes the reader: a pipe's round trip.
    Pipe,
}

/// Which [`Wakeup`] a transport uses: one always, or one per value of a choice
/// parameter (shm's `wait`, RPMsg's `notify`).
#[derive(Debug, Clone, PartialEq)]
pub enum WakeupRule {
    /// Not known (a plugin's transport): no floor.
    Unknown,
    /// Always this one.
    Always(Wakeup),
    /// By the value of choice parameter `param` (its default when unset): each listed
    /// value's wakeup; a value not listed has no floor.
    ByChoice {
        /// The parameter (one of the transport's definitions).
        param: ParamDef,
        /// Each value with its wakeup.
        cases: &'static [(&'static str, Wakeup)],
    },
}

impl WakeupRule {
    /// The wakeup of a point whose parameters are `params` (a result's, as text).
    pub fn at(&self, params: &Params) -> Option<Wakeup> {
        match self {
            WakeupRule::Unknown => None,
            WakeupRule::Always(w) => Some(*w),
            WakeupRule::ByChoice { param, cases } => {
                let value = match params.get(param.name()) {
                    Some(t) => param.parse(t).ok()?,
                    None => param.default.clone(),
                };
                let name = param.machine(&value);
                cases.iter().find(|(v, _)| *v == name).map(|(_, w)| *w)
            }
        }
    }

    /// Whether every value it lists is one its parameter accepts (each transport's
    /// tests check it).
    pub fn self_check(&self) -> Result<(), String> {
        if let WakeupRule::ByChoice { param, cases } = self {
            for (v, _) in cases.iter() {
                param.parse(v).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }
}

/// Where a transport's two sides may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hosts {
    /// On two hosts (`--remote`) as well as on one.
    Any,
    /// On one host only, and why (`shares memory between processes of one host`).
    One(Cow<'static, str>),
}

/// What is known of a transport before it runs: plain data, so that a transport
/// described at run time (a plugin) is listed, validated and swept like a built-in.
/// [`Transport::descriptor`] builds it from a transport's constants.
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    /// The name used on the command line (`--transport NAME`) and in results.
    pub name: Cow<'static, str>,
    /// One line for `xferbench list`.
    pub description: Cow<'static, str>,
    /// The definitions of its parameters.
    pub params: Cow<'static, [ParamDef]>,
    /// Whether it writes and reads messages in place (`--zero-copy`); the one
    /// answer to "does this transport have a zero-copy mode".
    pub zero_copy: bool,
    /// The largest message it carries, if it has a limit.
    pub max_message: Option<usize>,
    /// What wakes its receiver: the floor of its round trip.
    pub wakeup: WakeupRule,
    /// Whether its sides may run on two hosts.
    pub hosts: Hosts,
}

impl Descriptor {
    /// Reads parameters as text against this transport's definitions.
    pub fn values(&self, params: &Params) -> Result<ParamValues, ParamError> {
        ParamValues::parse(&self.name, &self.params, params)
    }

    /// The definition of parameter `name`, if the transport has one.
    pub fn param(&self, name: &str) -> Option<&ParamDef> {
        self.params.iter().find(|d| d.name == name)
    }
}

/// Why setting up a channel failed.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The peer did not connect or accept in time.
    #[error("{transport}: timed out waiting for the peer to {what}")]
    Timeout {
        /// Transport name.
        transport: &'static str,
        /// What was waited for ("connect", "accept").
        what: &'static str,
    },
    /// An address string that this transport did not produce.
    #[error("{transport}: malformed address {address:?}: {reason}")]
    BadAddress {
        /// Transport name.
        transport: &'static str,
        /// The address as given.
        address: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A system call failed.
    #[error("{transport}: {op} failed: {source}")]
    Io {
        /// Transport name.
        transport: &'static str,
        /// The operation ("listen", "connect", ...).
        op: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl TransportError {
    pub(crate) fn io(transport: &'static str, op: &'static str) -> impl FnOnce(io::Error) -> Self {
        move |source| TransportError::Io {
            transport,
            op,
            source,
        }
    }
}

/// Writes all of `msg` to a blocking file descriptor, retrying on `EINTR`.
pub(crate) fn write_all_fd(fd: impl rustix::fd::AsFd, mut msg: &[u8]) -> io::Result<()> {
    while !msg.is_empty() {
        match rustix::io::write(&fd, msg) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => msg = &msg[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Reads exactly `buf.len()` bytes from a blocking file descriptor, or reports
/// [`Recv::Closed`] when end-of-file comes before the first byte.
pub(crate) fn read_exact_fd(fd: impl rustix::fd::AsFd, buf: &mut [u8]) -> io::Result<Recv> {
    let mut filled = 0;
    while filled < buf.len() {
        match rustix::io::read(&fd, &mut buf[filled..]) {
            Ok(0) if filled == 0 => return Ok(Recv::Closed),
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "stream ended {filled} bytes into a {}-byte message",
                        buf.len()
                    ),
                ));
            }
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Recv::Message)
}

/// Waits until `fd` is readable, at most until `deadline`.
pub(crate) fn wait_readable(
    fd: impl rustix::fd::AsFd,
    deadline: Instant,
) -> Result<bool, rustix::io::Errno> {
    use rustix::event::{PollFd, PollFlags, poll};
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let timeout = rustix::event::Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => return Ok(false),
            Ok(_) => return Ok(true),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
}
