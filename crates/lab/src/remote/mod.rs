//! Runs across hosts: an agent (`xferbench serve`) on the far host starts the
//! serving side of each point there, driven over one authenticated control
//! connection by the measuring side.
//!
//! * [`protocol`]: the JSON-lines control protocol and its decoder.
//! * [`auth`]: the token and the HMAC-SHA256 challenge–response.
//! * `agent` (the crate's `agent` module, above the peers it starts): the agent.
//! * [`client`]: the measuring side's [`Session`] and [`RemoteChild`].
//!
//! # Clocks
//!
//! Every measured window is opened and closed on the measuring side's clock: a
//! stream's window ends when the measuring side has received (or the peer has
//! acknowledged) the last byte, a ping-pong's latencies are round trips, Warp Pipe's
//! transactions are timed by the clients. No figure compares the two hosts' clocks.
//! The clock offset between the hosts is still estimated over the control
//! connection ([`Session::clock_offset`]) and recorded with its uncertainty, for
//! anyone correlating logs or the agent's own timestamps. Only figures taken on the
//! agent (the CPU of its children, over their own window) use its clock.

pub mod auth;
pub mod client;
pub mod protocol;

use crate::error::RemoteError;
pub use crate::hosts::{ClockOffset, HostInfo, RemoteContext, WINDOWS_ON_MEASURING_SIDE};
pub use client::{RemoteChild, RemoteTarget, Session};

/// Connects once to record both hosts and the clock offset.
pub fn describe(target: &RemoteTarget) -> Result<RemoteContext, RemoteError> {
    let session = target.connect()?;
    let clock = session.clock_offset(16)?;
    let mut me = HostInfo::here();
    me.address = session.local_ip().to_string();
    Ok(RemoteContext {
        agent: session.agent().to_string(),
        measuring_host: me,
        agent_host: session.agent_host().clone(),
        data_host: target.data_host.clone(),
        windows: WINDOWS_ON_MEASURING_SIDE.into(),
        clock,
    })
}

/// The address of this host on the route to `agent` (no packet is sent).
pub fn source_ip_towards(agent: std::net::SocketAddr) -> std::io::Result<std::net::IpAddr> {
    let any: std::net::SocketAddr = if agent.is_ipv4() {
        ([0, 0, 0, 0], 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let s = std::net::UdpSocket::bind(any)?;
    s.connect(agent)?;
    Ok(s.local_addr()?.ip())
}

/// `Ok` when `transport` can run its peers on another host, else why not.
pub fn crosses_hosts(transport: &str) -> Result<(), String> {
    if crate::plugins::is_plugin(transport) {
        return crate::plugins::crosses_hosts(transport);
    }
    let why = match crate::transports::descriptor(transport).map(|d| d.hosts) {
        Ok(xferbench_transports::Hosts::Any) => return Ok(()),
        Ok(xferbench_transports::Hosts::One(why)) => why,
        Err(_) => "is not a network transport".into(),
    };
    Err(format!(
        "--remote: `{transport}` cannot cross hosts: it {why}; use -t tcp"
    ))
}
