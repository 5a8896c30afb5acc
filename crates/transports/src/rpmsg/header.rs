//! The two headers of an RPMsg link: the 16-byte message header carried in every
//! buffer, and the link header at the start of the shared area that both sides
//! validate before touching anything else.
//!
//! # Link layout (version 1), offsets from the start of the shared area
//!
//! ```text
//! 0                LinkHeader (#[repr(C)], 128-byte aligned groups)
//! tx_offset        vring "tx" (host → remote), split layout, `num` entries
//! rx_offset        vring "rx" (remote → host), split layout, `num` entries
//! buf_offset       2·num buffers of 512 bytes: tx buffers 0..num, rx num..2·num
//! ```
//!
//! Every offset is recomputed by the attaching side from `num` and compared with what
//! the header says, so a header that lies cannot make either side read outside the
//! area.
//!
//! This module sits above [`vring`](super::vring), whose size and alignment it uses
//! for the layout; the fault kinds both report are in the module below both
//! (`fault.rs`, re-exported here). Nothing in `vring` or `fault` imports from here.

pub use super::fault::{Fault, FaultCounters, Faults};
pub use super::vring::VRING_ALIGN;
use super::vring::vring_size;
use crate::shm::wait::WaitLine;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// Bytes of every message buffer (Linux's `MAX_RPMSG_BUF_SIZE`).
pub const BUF_SIZE: usize = 512;
/// Bytes of the message header.
pub const MSG_HEADER_LEN: usize = 16;
/// Largest payload: a buffer minus the header.
pub const MAX_PAYLOAD: usize = BUF_SIZE - MSG_HEADER_LEN;
/// [`MsgHeader::flags`] bit marking the end of a sender's stream: a message with no
/// payload after which that sender sends nothing more (the [`Rpmsg`](super::Rpmsg)
/// transport's `close_send`). The service loop ignores flags.
pub const MSG_F_END: u16 = 1;
/// `"XFBRPMSG"` as a little-endian u64.
pub const LINK_MAGIC: u64 = u64::from_le_bytes(*b"XFBRPMSG");
/// Link layout version; bump on any change to [`LinkHeader`] or the layout.
pub const LINK_VERSION: u32 = 1;
/// Largest vring size accepted.
pub const MAX_VRING: u32 = 4096;

/// The RPMsg header in front of every payload (`struct rpmsg_hdr`, little endian).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MsgHeader {
    /// Source endpoint address.
    pub src: u32,
    /// Destination endpoint address.
    pub dst: u32,
    /// Unused, zero.
    pub reserved: u32,
    /// Payload bytes that follow.
    pub len: u16,
    /// Flags: zero, or [`MSG_F_END`].
    pub flags: u16,
}

const _: () = assert!(std::mem::size_of::<MsgHeader>() == MSG_HEADER_LEN);

impl MsgHeader {
    /// The 16 wire bytes.
    #[inline]
    pub fn encode(&self) -> [u8; MSG_HEADER_LEN] {
        let mut b = [0u8; MSG_HEADER_LEN];
        b[0..4].copy_from_slice(&self.src.to_le_bytes());
        b[4..8].copy_from_slice(&self.dst.to_le_bytes());
        b[8..12].copy_from_slice(&self.reserved.to_le_bytes());
        b[12..14].copy_from_slice(&self.len.to_le_bytes());
        b[14..16].copy_from_slice(&self.flags.to_le_bytes());
        b
    }

    /// Parses 16 wire bytes (any bytes parse; [`MsgHeader::check`] validates).
    #[inline]
    pub fn decode(b: &[u8; MSG_HEADER_LEN]) -> MsgHeader {
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        MsgHeader {
            src: u32_at(0),
            dst: u32_at(4),
            reserved: u32_at(8),
            len: u16::from_le_bytes([b[12], b[13]]),
            flags: u16::from_le_bytes([b[14], b[15]]),
        }
    }

    /// Checks the header against the `used_len` bytes the buffer was said to hold:
    /// the payload must fit both the buffer and [`MAX_PAYLOAD`].
    #[inline]
    pub fn check(&self, used_len: usize) -> Result<usize, Fault> {
        let len = usize::from(self.len);
        if len > MAX_PAYLOAD {
            return Err(Fault::PayloadTooLong);
        }
        if MSG_HEADER_LEN + len > used_len.min(BUF_SIZE) {
            return Err(Fault::BadLength);
        }
        Ok(len)
    }
}

/// Padding to keep each side's hot words on their own cache-line pair.
#[repr(C, align(128))]
#[derive(Debug, Default)]
pub struct Line<T>(pub T);

/// The link header at offset 0 of the shared area. The host writes every plain
/// field before storing `magic` (Release); the remote validates them all on attach.
#[repr(C)]
#[derive(Debug)]
pub struct LinkHeader {
    /// [`LINK_MAGIC`], stored last.
    pub magic: AtomicU64,
    /// [`LINK_VERSION`].
    pub version: u32,
    /// `size_of::<LinkHeader>()`.
    pub header_len: u32,
    /// Entries per vring (power of two).
    pub num: u32,
    /// Bytes per buffer ([`BUF_SIZE`]).
    pub buf_size: u32,
    /// Buffers in the pool (`2 · num`).
    pub buf_count: u32,
    /// Notification mode code (`Notify::code`).
    pub notify: u32,
    /// Offset of the tx vring.
    pub tx_offset: u64,
    /// Offset of the rx vring.
    pub rx_offset: u64,
    /// Offset of the buffer pool.
    pub buf_offset: u64,
    /// Bytes of the whole area the layout needs.
    pub area_len: u64,
    /// Remote endpoints: `ept_count` addresses from `ept_base`.
    pub ept_base: u32,
    /// Number of remote endpoints.
    pub ept_count: u32,
    /// Service code of the remote endpoints (`Service::code`).
    pub service: u32,
    /// Nonzero: the echo service appends the firmware's suffix.
    pub suffix: u32,
    /// Host process id.
    pub host_pid: u32,
    /// Remote process id, 0 until attached.
    pub remote_pid: AtomicU32,
    /// The host sets it to ask the remote to stop.
    pub stop: Line<AtomicU32>,
    /// The host sleeps here; the remote rings it.
    pub host_bell: Line<WaitLine>,
    /// The remote sleeps here; the host rings it.
    pub remote_bell: Line<WaitLine>,
    /// Faults seen by the remote.
    pub remote_faults: Line<FaultCounters>,
    /// Messages the remote delivered to its services.
    pub remote_msgs: Line<AtomicU64>,
    /// Notifications the remote sent to the host.
    pub remote_kicks: Line<AtomicU64>,
}

/// Offsets of a link with `num`-entry vrings: (tx, rx, buffers, total).
pub fn layout(num: u32) -> (u64, u64, u64, u64) {
    let align = |x: usize, a: usize| x.div_ceil(a) * a;
    let hdr = align(std::mem::size_of::<LinkHeader>(), VRING_ALIGN);
    let vr = align(vring_size(num as usize), VRING_ALIGN);
    let tx = hdr;
    let rx = tx + vr;
    let buf = rx + vr;
    let total = buf + 2 * num as usize * BUF_SIZE;
    (tx as u64, rx as u64, buf as u64, total as u64)
}

/// Why a link header was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkHeaderError {
    /// Not an RPMsg link.
    #[error("not an xferbench RPMsg link: magic {0:#018x}")]
    BadMagic(u64),
    /// Another layout version.
    #[error("RPMsg link layout version {0}, this xferbench speaks {LINK_VERSION}")]
    Version(u32),
    /// Sizes or offsets that do not add up.
    #[error("RPMsg link sizes do not match: {0}")]
    Size(String),
}

impl LinkHeader {
    /// Validates every plain field against the layout recomputed from `num` and the
    /// `area_len` bytes actually mapped.
    pub fn validate(&self, magic: u64, area_len: u64) -> Result<(), LinkHeaderError> {
        if magic != LINK_MAGIC {
            return Err(LinkHeaderError::BadMagic(magic));
        }
        if self.version != LINK_VERSION {
            return Err(LinkHeaderError::Version(self.version));
        }
        let size = |m: String| Err(LinkHeaderError::Size(m));
        if self.header_len as usize != std::mem::size_of::<LinkHeader>() {
            return size(format!("header of {} bytes", self.header_len));
        }
        if !self.num.is_power_of_two() || self.num < 2 || self.num > MAX_VRING {
            return size(format!(
                "vring size {} is not a power of two in 2..={MAX_VRING}",
                self.num
            ));
        }
        if self.buf_size as usize != BUF_SIZE {
            return size(format!(
                "buffer size {}, expected {BUF_SIZE}",
                self.buf_size
            ));
        }
        if self.buf_count != 2 * self.num {
            return size(format!(
                "{} buffers for vrings of {}",
                self.buf_count, self.num
            ));
        }
        let (tx, rx, buf, total) = layout(self.num);
        if (
            self.tx_offset,
            self.rx_offset,
            self.buf_offset,
            self.area_len,
        ) != (tx, rx, buf, total)
        {
            return size(format!(
                "offsets {}/{}/{} of {} bytes, the layout needs {tx}/{rx}/{buf} of {total}",
                self.tx_offset, self.rx_offset, self.buf_offset, self.area_len
            ));
        }
        if total > area_len {
            return size(format!(
                "the layout needs {total} bytes, the area has {area_len}"
            ));
        }
        if self.ept_count == 0 || self.ept_count > 1024 {
            return size(format!("{} endpoints (1..=1024)", self.ept_count));
        }
        if self.ept_base.checked_add(self.ept_count).is_none() {
            return size("endpoint addresses overflow".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_headers_round_trip_and_are_checked() {
        let h = MsgHeader {
            src: 0x400,
            dst: 0x120,
            reserved: 0,
            len: 496,
            flags: 0,
        };
        assert_eq!(MsgHeader::decode(&h.encode()), h);
        assert_eq!(h.check(512), Ok(496));
        assert_eq!(h.check(511), Err(Fault::BadLength));
        let long = MsgHeader { len: 497, ..h };
        assert_eq!(long.check(512), Err(Fault::PayloadTooLong));
        let small = MsgHeader { len: 1, ..h };
        assert_eq!(small.check(17), Ok(1));
        assert_eq!(small.check(16), Err(Fault::BadLength));
    }
}
