//! The RPMsg link as a [`Transport`]: [`Rpmsg`].
//!
//! `listen()` creates a one-channel [`HostLink`] (its region address is the address);
//! `connect()` attaches the remote role ([`RemoteLink::attach`]) and receives and
//! sends single messages on the device side of the vrings
//! ([`RemoteLink::recv`]/[`RemoteLink::send`]) instead of running the echo service
//! loop; `accept()` waits (bounded) until the remote attached — which also withdraws
//! the region address — and returns the host [`Channel`]. Both are wrapped in
//! [`RpmsgEndpoint`].
//!
//! # Messages
//!
//! Every message is one 512-byte buffer: at most [`MAX_PAYLOAD`] (496) bytes, which
//! is [`Transport::MAX_MESSAGE`]; a longer `send` fails with
//! [`io::ErrorKind::InvalidInput`]. A `recv` whose buffer is longer than the message
//! fails with [`io::ErrorKind::UnexpectedEof`], one that is shorter with
//! [`io::ErrorKind::InvalidData`] (the message is consumed either way). Nothing is
//! batched: every `send` publishes its buffer and notifies by the `notify` mode, so
//! `flush` has nothing to do. The host receives with back-pressure
//! ([`HostLink::set_backpressure`]): a reader that falls behind makes the remote wait
//! for rx buffers instead of losing replies, as the measured rig's mailboxes would.
//!
//! # End of stream: an in-band flag
//!
//! `close_send` sends one more message, with no payload and the header flag
//! [`MSG_F_END`] set; it travels the same vring behind the data, so the receiver
//! reports [`Recv::Closed`] exactly after the last message. (A reserved destination
//! address would have worked from host to remote, but the host's demultiplexer
//! routes by destination and would have had to learn an exception; the flag rides
//! along with any address.)
//!
//! # A peer that goes away
//!
//! Dropping an endpoint hangs up: the host side drops its [`HostLink`], which sets
//! the link's `stop` flag and rings both doorbells; the remote side calls
//! [`RemoteLink::hang_up`], which does the same. `stop` is stored after everything
//! the side published (Release, read with Acquire), so the other side first receives
//! what was sent, then its `recv` reports [`Recv::Closed`] and its `send` fails with
//! [`io::ErrorKind::BrokenPipe`] (checked before every send, so no buffer is written
//! for a peer that hung up). A peer *process* that dies without dropping anything is
//! caught by the link's pid watch: every doorbell sleep is nudged every 10 ms and
//! re-checks that the other process lives, and a wait then fails with an error of kind
//! [`io::ErrorKind::BrokenPipe`] naming the pid.

use super::error::LinkError;
use super::header::{MAX_PAYLOAD, MSG_F_END, MSG_HEADER_LEN, MsgHeader};
use super::link::{Channel, HostLink, LinkConfig};
use super::params::{Buffers, Notify};
use super::remote::RemoteLink;
use crate::{
    Endpoint, Listener, ParamDef, ParamError, ParamValues, Recv, Transport, TransportError,
};
use crate::{Hosts, WakeupRule};
use std::io;
use std::time::Instant;

const NAME: &str = "rpmsg";

/// `num`: entries of each vring.
pub const NUM: ParamDef = ParamDef::integer(
    "num",
    2,
    super::header::MAX_VRING as i64,
    256,
    "entries of each vring (buffers per direction), a power of two",
);

const PARAMS: &[ParamDef] = &[super::params::NOTIFY, super::params::BUFFERS, NUM];

/// The RPMsg link as a transport: a one-channel [`HostLink`] on the listening side,
/// a per-message [`RemoteLink`] on the connecting side (see the module doc).
#[derive(Debug, Clone)]
pub struct Rpmsg {
    num: u32,
    notify: Notify,
    buffers: Buffers,
}

impl Default for Rpmsg {
    fn default() -> Self {
        Self::from_values(&ParamValues::new()).expect("defaults are valid")
    }
}

impl Rpmsg {
    /// A transport with explicit settings.
    pub fn new(num: u32, notify: Notify, buffers: Buffers) -> Rpmsg {
        Rpmsg {
            num,
            notify,
            buffers,
        }
    }
}

/// A host link waiting for its remote.
#[derive(Debug)]
pub struct RpmsgListener {
    address: String,
    link: HostLink,
    buffers: Buffers,
}

/// One side of an RPMsg channel: the host's [`Channel`] or the remote's device role.
#[derive(Debug)]
pub struct RpmsgEndpoint {
    side: Side,
    tx_closed: bool,
    rx_closed: bool,
}

#[derive(Debug)]
enum Side {
    Host {
        /// Before `link`: the channel goes first, then the link, whose drop hangs up.
        ch: Channel,
        link: HostLink,
        buffers: Buffers,
    },
    Remote(RemoteLink),
}

fn link_err(e: LinkError) -> io::Error {
    let kind = match e {
        LinkError::TooLong(_) => io::ErrorKind::InvalidInput,
        LinkError::PeerGone { .. } | LinkError::Stopped => io::ErrorKind::BrokenPipe,
        LinkError::Corrupt { .. } | LinkError::Header(_) => io::ErrorKind::InvalidData,
        LinkError::Timeout { .. } => io::ErrorKind::TimedOut,
        LinkError::Region(_) | LinkError::Config(_) => io::ErrorKind::Other,
    };
    match e {
        LinkError::Stopped => io::Error::new(kind, "rpmsg: the peer hung up"),
        e => io::Error::new(kind, e.to_string()),
    }
}

fn setup_err(op: &'static str) -> impl FnOnce(LinkError) -> TransportError {
    move |e| TransportError::Io {
        transport: NAME,
        op,
        source: link_err(e),
    }
}

impl RpmsgEndpoint {
    fn new(side: Side) -> RpmsgEndpoint {
        RpmsgEndpoint {
            side,
            tx_closed: false,
            rx_closed: false,
        }
    }

    /// Sends one message with header `flags`, refusing a peer that hung up.
    fn send_flagged(&mut self, msg: &[u8], flags: u16) -> io::Result<()> {
        match &mut self.side {
            Side::Host { ch, link, buffers } => {
                if link.is_stopped() {
                    return Err(link_err(LinkError::Stopped));
                }
                if flags != 0 {
                    let h = MsgHeader {
                        src: ch.local_addr(),
                        dst: ch.remote_addr(),
                        reserved: 0,
                        len: msg.len() as u16,
                        flags,
                    };
                    return ch.send_with_header(h, msg, None).map_err(link_err);
                }
                match buffers {
                    Buffers::Copy => ch.send(msg, None),
                    Buffers::ZeroCopy => ch.reserve(None).and_then(|mut b| {
                        b.payload_mut()[..msg.len()].copy_from_slice(msg);
                        ch.send_reserved(b, msg.len())
                    }),
                }
                .map_err(link_err)
            }
            Side::Remote(link) => link.send(0, msg, flags).map_err(link_err),
        }
    }
}

impl Endpoint for RpmsgEndpoint {
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        if msg.len() > MAX_PAYLOAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "rpmsg: a {}-byte message does not fit; at most {MAX_PAYLOAD} bytes \
                     follow the {MSG_HEADER_LEN}-byte header in a 512-byte buffer",
                    msg.len()
                ),
            ));
        }
        if self.tx_closed {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "sending side already closed",
            ));
        }
        self.send_flagged(msg, 0)
    }

    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Recv> {
        if self.rx_closed {
            return Ok(Recv::Closed);
        }
        let got = match &mut self.side {
            Side::Host { ch, .. } => ch.recv_message(buf, None),
            Side::Remote(link) => link.recv(buf).map(|m| (m.len, m.flags)),
        };
        let (len, flags) = match got {
            Ok(g) => g,
            Err(LinkError::Stopped) => {
                // The peer hung up at a message boundary, everything it sent received.
                self.rx_closed = true;
                return Ok(Recv::Closed);
            }
            Err(e) => return Err(link_err(e)),
        };
        if flags & MSG_F_END != 0 {
            self.rx_closed = true;
            return Ok(Recv::Closed);
        }
        if len < buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "rpmsg: a {len}-byte message where {} bytes were expected",
                    buf.len()
                ),
            ));
        }
        if len > buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "rpmsg: a {len}-byte message for a {}-byte buffer",
                    buf.len()
                ),
            ));
        }
        Ok(Recv::Message)
    }

    fn close_send(&mut self) -> io::Result<()> {
        if !self.tx_closed {
            self.tx_closed = true;
            self.send_flagged(&[], MSG_F_END)?;
        }
        Ok(())
    }
}

impl Drop for RpmsgEndpoint {
    fn drop(&mut self) {
        // The host side hangs up when its `HostLink` drops (it stops the link).
        if let Side::Remote(link) = &self.side {
            link.hang_up();
        }
    }
}

impl Transport for Rpmsg {
    type Endpoint = RpmsgEndpoint;
    const WAKEUP: WakeupRule = super::params::WAKEUP;
    const HOSTS: Hosts = super::params::HOSTS;
    type Listener = RpmsgListener;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str =
        "RPMsg over two virtio vrings in shared memory (496-byte messages)";
    const MAX_MESSAGE: Option<usize> = Some(MAX_PAYLOAD);

    fn params() -> &'static [ParamDef] {
        PARAMS
    }

    fn from_values(values: &ParamValues) -> Result<Self, ParamError> {
        values.check(NAME, PARAMS)?;
        let num = values.integer(&NUM);
        if !(num as u64).is_power_of_two() {
            return Err(ParamError::Invalid {
                name: NUM.name.to_string(),
                value: num.to_string(),
                accepts: format!("a power of two from 2 to {}", super::header::MAX_VRING),
            });
        }
        Ok(Rpmsg::new(
            num as u32,
            values.choice(&super::params::NOTIFY),
            values.choice(&super::params::BUFFERS),
        ))
    }

    fn listen(&self) -> Result<RpmsgListener, TransportError> {
        let link = HostLink::create(&LinkConfig {
            num: self.num,
            notify: self.notify,
            channels: 1,
            ..LinkConfig::default()
        })
        .map_err(setup_err("listen"))?;
        link.set_backpressure(true);
        let address = link.name().expect("a new link has its region name");
        Ok(RpmsgListener {
            address,
            link,
            buffers: self.buffers,
        })
    }

    fn connect(&self, address: &str, _deadline: Instant) -> Result<RpmsgEndpoint, TransportError> {
        if crate::shm::backing::parse(address).is_err() {
            return Err(TransportError::BadAddress {
                transport: NAME,
                address: address.to_string(),
                reason: "expected a region address memfd:<pid>:<fd>:<inode>",
            });
        }
        let link = RemoteLink::attach(address).map_err(setup_err("attach"))?;
        Ok(RpmsgEndpoint::new(Side::Remote(link)))
    }
}

impl Listener for RpmsgListener {
    type Endpoint = RpmsgEndpoint;

    fn address(&self) -> &str {
        &self.address
    }

    fn accept(mut self, deadline: Instant) -> Result<RpmsgEndpoint, TransportError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.link.wait_attached(left, || Ok(())) {
            Ok(()) => {}
            Err(LinkError::Timeout { .. }) => {
                return Err(TransportError::Timeout {
                    transport: NAME,
                    what: "accept",
                });
            }
            Err(e) => return Err(setup_err("accept")(e)),
        }
        let ch = self
            .link
            .take_channels()
            .pop()
            .expect("a one-channel link has its channel");
        Ok(RpmsgEndpoint::new(Side::Host {
            ch,
            link: self.link,
            buffers: self.buffers,
        }))
    }
}
