//! The operating system's own transports, the baselines every other transport is
//! measured against: [`pipe`], [`unix`] (stream sockets) and [`tcp`] (loopback by default).

pub mod pipe;
pub mod socket;
pub mod tcp;
pub mod unix;

pub use pipe::Pipe;
pub use socket::{RCVBUF, SNDBUF, SocketEndpoint};
pub use tcp::Tcp;
pub use unix::Unix;
