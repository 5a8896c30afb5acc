//! RPMsg over shared memory: a "host" and a "remote" exchange 512-byte buffers through
//! two virtio split vrings, one per direction, like Linux's `virtio_rpmsg_bus` talking
//! to rpmsg-lite firmware on a DSP — with a futex standing in for the mailbox
//! interrupt.
//!
//! * [`header`]: the 16-byte RPMsg message header and the link header that both sides
//!   validate (magic, version, vring size, buffer size and count, offsets, pids).
//! * [`vring`]: the split virtqueue, its driver (host) and device (remote) roles, and
//!   the validation of every index read from shared memory.
//! * `fault.rs` (re-exported from [`header`]): the kinds of rejected input and their
//!   counters; the module below both `header` and `vring`, so that `header` depends
//!   on `vring` and never the other way round.
//! * [`link`]: the host side — [`HostLink`] creates the link and hands out channels
//!   (one endpoint each) multiplexed over the one vring pair. Its parts: `channel.rs`
//!   (a channel's endpoint and the tx path the channels share under one lock),
//!   `demux.rs` (the rx leader/follower scheme sorting replies to channels) and
//!   `mailbox.rs` (each channel's queue of received replies and its futex).
//! * [`remote`]: the remote side — one service loop dispatching by destination
//!   address to per-endpoint services (`echo`, `echo-hold`), or single messages
//!   received and sent one at a time ([`RemoteLink::recv`], [`RemoteLink::send`]).
//! * `transport.rs`: [`Rpmsg`], the link as a [`Transport`](crate::Transport) (a
//!   one-channel host link and a per-message remote, 496-byte messages, end of
//!   stream as the [`header::MSG_F_END`] flag); it passes the conformance suite.
//! * `params.rs` ([`Notify`], [`Buffers`]), `service.rs` ([`Service`]) and `error.rs`
//!   ([`LinkError`]): what both sides are set up with and fail with; `doorbell.rs`:
//!   ringing and waiting on a doorbell, and the nudger below.
//!
//! # The shared area
//!
//! The link lives in the data area of an [`shm::region::Region`](crate::shm::region):
//! the region supplies the name, the creator/attacher handshake, unlinking on attach
//! and the sweep of stale names; the RPMsg link header follows at the start of its
//! first data area (see [`header`] for the layout). The vrings are in the "tx"
//! (host → remote) and "rx" (remote → host) directions as seen from the host, which is
//! the virtio driver of both: it offers full buffers on tx and empty buffers on rx.
//!
//! # Notification
//!
//! [`Notify::Kick`] rings the other side's doorbell (bump a futex word, `FUTEX_WAKE`)
//! after every message, as the mailbox interrupt of the original does;
//! [`Notify::EventIdx`] uses virtio's event index so that a side only rings when the
//! other is about to sleep; [`Notify::Poll`] never rings and both sides busy-poll.
//! Buffer returns (tx used) and refills (rx avail) always use event-index
//! suppression (except when polling), as Linux disables the tx-complete callback
//! unless a sender is waiting for a buffer.
//!
//! Every wait ends within 10 ms of the other process dying: doorbell sleeps are
//! unbounded futex waits (a timeout's hrtimer is expensive on a VM) that a per-process
//! nudger thread wakes every 10 ms (`Nudge`); mailbox sleeps carry a 10 ms timeout.
//! After such a wake-up the sleeper re-checks that the other process is alive
//! (`kill(pid, 0)` and `/proc/<pid>/stat`), so a killed remote is reported, never
//! waited for.

mod channel;
mod demux;
mod doorbell;
mod error;
mod fault;
pub mod header;
pub mod link;
mod mailbox;
mod params;
pub mod remote;
mod service;
mod shared;
mod transport;
pub mod vring;

pub use error::LinkError;
pub use link::{Channel, HostLink, LinkConfig, TxBuf};
pub use params::{BUFFERS, Buffers, HOSTS, NOTIFY, Notify, WAKEUP};
pub use remote::{RemoteLink, RemoteMessage, RemoteStats};
pub use service::{ECHO_SUFFIX, Service};
pub use transport::{Rpmsg, RpmsgEndpoint, RpmsgListener};
