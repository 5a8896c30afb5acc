//! The memory mock: a PCIe endpoint with a type-0 configuration space and memory
//! BARs, as a state machine that turns received bytes into response bytes.
//!
//! warp-pipe's `memory-mock/main.c` is the model: a configuration header with vendor
//! ID 1 and device ID 2, BAR0 of 128 bytes (read-only, filled with `0x10..=0x8F`) and
//! BAR1 of 2048 bytes (read/write, zeroed); a BAR is sized by writing `0xFFFF_FFFF` and
//! reading back its size mask, and mapped by writing its address. Every TLP received
//! intact is answered with an ACK DLLP carrying its sequence number, a TLP with a bad
//! LCRC with a NAK (warp-pipe names the bad TLP's own sequence number); nothing is
//! retransmitted, so a NAK only tells the sender that the request was dropped. Reads
//! (MRd, CfgRd0) are answered with CplD, or with a data-less Cpl when they fail.
//!
//! Two types split the work so that both can be tested without sockets:
//!
//! * [`Device`]: configuration space and BAR memory. One device may be shared by many
//!   connections (the servers in [`super::server`] do so), like warp-pipe's globals.
//! * [`MockConn`]: one connection's protocol state (decoder, sequence numbers,
//!   counters). [`MockConn::process`] consumes whole frames from a buffer and appends
//!   the answers to an output buffer; it performs no I/O and never blocks, so the same
//!   code serves an event loop and a thread per connection.
//!
//! # Where this differs from warp-pipe (its bugs, and what we do instead)
//!
//! * A read of an address no BAR maps gets no answer in warp-pipe (the requester
//!   waits forever); here it gets a Cpl with status UR.
//! * warp-pipe reads 7 bytes, then loops on `recv` until the frame is whole, on a
//!   non-blocking socket, so a frame split across TCP segments makes it drop the
//!   client (`EAGAIN` counts as an error); its receive buffer is 2 bytes short of the
//!   largest frame and checked only by `assert`. Here the connection buffers partial
//!   frames and the [`Decoder`] refuses any Length above the maximum before reading
//!   further.
//! * A zero-length read (first BE 0) is sent by warp-pipe as a 1-DW read; the mock
//!   answers it with one DW, like warp-pipe.
//! * warp-pipe indexes its 32-entry completion table with the received tag without a
//!   bound (a tag ≥ 32 writes out of bounds); the mock copies tags and has no table.
//! * Bad input never panics: a bad protocol byte or a Length above the maximum closes
//!   the connection (the frame boundary is lost or the frame is too big to skip
//!   cheaply), an unsupported DLLP or TLP type and a bad DLLP CRC are counted and
//!   skipped. Nothing allocates more than one frame's payload.
//! * Completions can be split (`max_read_completion`, like PCIe's Max_Payload_Size,
//!   at read completion boundaries); the default, 4096, sends one completion per read
//!   as warp-pipe does, which is what warp-pipe's own client expects.

use super::codec::{Decoder, FrameDecodeError, encode};
use super::crc::CrcKind;
use super::frame::{CompletionHeader, Dllp, Frame, PcieId, RequestHeader, Tlp, TlpHeader};
use super::layout::{MAX_PAYLOAD, MAX_SEQ};

/// Size of the type-0 configuration header (bytes 0..64).
pub const CONFIG_HEADER_LEN: usize = 64;
/// Offset of BAR0 in the configuration header.
pub const BAR0_OFFSET: u16 = 0x10;
/// Number of BARs of a type-0 header.
pub const BAR_COUNT: usize = 6;
/// The low bits of a memory BAR that hold flags, not address.
pub const BAR_FLAG_MASK: u32 = 0xF;
/// The flag bits warp-pipe's memory mock reports for an active BAR
/// (`BAR_TYPE_32B | BAR_MEMORY_SPACE`).
pub const BAR_FLAGS: u32 = 0x1;
/// Read completion boundary used when splitting completions (PCIe RCB, 64 bytes).
pub const RCB: u64 = 64;

/// What the mock device looks like. [`MockConfig::default`] is warp-pipe's memory mock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockConfig {
    /// Vendor ID (warp-pipe: 1).
    pub vendor_id: u16,
    /// Device ID (warp-pipe: 2).
    pub device_id: u16,
    /// BAR sizes in bytes, 0 for an unused BAR; each a power of two from 16.
    pub bar_sizes: [u32; BAR_COUNT],
    /// Which BARs accept writes (warp-pipe: BAR1 only).
    pub bar_writable: [bool; BAR_COUNT],
    /// The largest payload of one completion, a multiple of 4 from 64 to 4096 bytes.
    /// Longer reads are split at read completion boundaries.
    pub max_read_completion: usize,
}

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            vendor_id: 1,
            device_id: 2,
            bar_sizes: [128, 2048, 0, 0, 0, 0],
            bar_writable: [false, true, false, false, false, false],
            max_read_completion: MAX_PAYLOAD,
        }
    }
}

/// Why a [`MockConfig`] cannot make a device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MockConfigError {
    /// A BAR size is not a power of two of at least 16 bytes (or 0).
    #[error("BAR{bar} size {size} is not a power of two between 16 B and 2 GiB (or 0 for unused)")]
    BarSize {
        /// The BAR index.
        bar: usize,
        /// The size given.
        size: u32,
    },
    /// The maximum completion payload is out of range.
    #[error("max read completion {0} B is not a multiple of 64 between 64 and 4096")]
    MaxReadCompletion(usize),
}

/// One BAR: its size, flags, mapped address and memory.
#[derive(Debug, Clone)]
struct Bar {
    size: u32,
    writable: bool,
    /// The register as read back (address | flags, or the size mask after probing).
    register: u32,
    /// Mapped address, once a real address was written.
    base: Option<u64>,
    mem: Vec<u8>,
}

/// The device: configuration space and BAR memory.
#[derive(Debug, Clone)]
pub struct Device {
    config: [u8; CONFIG_HEADER_LEN],
    bars: [Bar; BAR_COUNT],
    max_read_completion: usize,
}

/// Counters of one connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnStats {
    /// TLPs received intact.
    pub tlps: u64,
    /// DLLPs received intact.
    pub dllps: u64,
    /// Memory reads answered.
    pub reads: u64,
    /// Memory writes applied (also partially, or to a read-only BAR: see `dropped_writes`).
    pub writes: u64,
    /// Payload bytes sent in completions.
    pub read_bytes: u64,
    /// Payload bytes written to memory.
    pub written_bytes: u64,
    /// TLPs with a bad LCRC (each answered with a NAK).
    pub bad_lcrc: u64,
    /// Frames refused for other reasons (bad DLLP CRC, unsupported type, bad length,
    /// bad protocol byte).
    pub bad_frames: u64,
    /// Writes ignored: unmapped address or read-only BAR.
    pub dropped_writes: u64,
    /// Reads answered with a data-less completion (failure).
    pub failed_reads: u64,
}

impl ConnStats {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &ConnStats) {
        self.tlps += other.tlps;
        self.dllps += other.dllps;
        self.reads += other.reads;
        self.writes += other.writes;
        self.read_bytes += other.read_bytes;
        self.written_bytes += other.written_bytes;
        self.bad_lcrc += other.bad_lcrc;
        self.bad_frames += other.bad_frames;
        self.dropped_writes += other.dropped_writes;
        self.failed_reads += other.failed_reads;
    }
}

impl Device {
    /// A device as `cfg` describes it, BARs unmapped.
    pub fn new(cfg: &MockConfig) -> Result<Device, MockConfigError> {
        let mrc = cfg.max_read_completion;
        if !(64..=MAX_PAYLOAD).contains(&mrc) || !mrc.is_multiple_of(64) {
            return Err(MockConfigError::MaxReadCompletion(mrc));
        }
        let mut config = [0u8; CONFIG_HEADER_LEN];
        config[0..2].copy_from_slice(&cfg.vendor_id.to_le_bytes());
        config[2..4].copy_from_slice(&cfg.device_id.to_le_bytes());
        // Header type (offset 0x0E) 0: a type-0 endpoint.
        let mut bars = Vec::with_capacity(BAR_COUNT);
        for (i, (&size, &writable)) in cfg.bar_sizes.iter().zip(&cfg.bar_writable).enumerate() {
            if size != 0 && (!size.is_power_of_two() || !(16..=1 << 31).contains(&size)) {
                return Err(MockConfigError::BarSize { bar: i, size });
            }
            let mut mem = vec![0u8; size as usize];
            if i == 0 {
                // warp-pipe's BAR0 pattern: 0x10, 0x11, ...
                for (j, b) in mem.iter_mut().enumerate() {
                    *b = 0x10u8.wrapping_add(j as u8);
                }
            }
            bars.push(Bar {
                size,
                writable,
                register: if size == 0 { 0 } else { BAR_FLAGS },
                base: None,
                mem,
            });
        }
        let bars: [Bar; BAR_COUNT] = bars.try_into().expect("six BARs");
        Ok(Device {
            config,
            bars,
            max_read_completion: mrc,
        })
    }

    /// The mapped address and size of BAR `i`, once mapped.
    pub fn bar(&self, i: usize) -> Option<(u64, u32)> {
        let bar = self.bars.get(i)?;
        bar.base.map(|b| (b, bar.size))
    }

    /// BAR `i`'s memory (for tests and inspection).
    pub fn bar_memory(&self, i: usize) -> Option<&[u8]> {
        self.bars.get(i).map(|b| &b.mem[..])
    }

    /// The configuration-space DW at byte `offset` (DW-aligned), as sent on the wire
    /// (little-endian bytes). `None` outside the header.
    pub fn config_read(&self, offset: u16) -> Option<[u8; 4]> {
        let off = usize::from(offset);
        if off % 4 != 0 {
            return None;
        }
        if let Some(i) = bar_index(offset) {
            return Some(self.bars[i].register.to_le_bytes());
        }
        let dw = self.config.get(off..off + 4)?;
        Some([dw[0], dw[1], dw[2], dw[3]])
    }

    /// Writes the configuration-space DW at `offset`. The command register (0x04,
    /// low half) and the BARs are writable; other writes are ignored and return false.
    pub fn config_write(&mut self, offset: u16, value: [u8; 4]) -> bool {
        let v = u32::from_le_bytes(value);
        if let Some(i) = bar_index(offset) {
            let bar = &mut self.bars[i];
            if bar.size == 0 {
                return false;
            }
            // Probing (0xFFFF_FFFF) reads back the size mask; any other value maps the
            // BAR at that address, aligned to its size.
            let addr = v & !(bar.size - 1) & !BAR_FLAG_MASK;
            bar.register = addr | BAR_FLAGS;
            if v != u32::MAX {
                bar.base = Some(u64::from(addr));
            }
            return true;
        }
        if offset == 4 {
            // Command register: writable; status (upper half) read-only.
            self.config[4..6].copy_from_slice(&value[..2]);
            return true;
        }
        false
    }

    /// Which BAR maps `addr`, and the offset into it.
    fn map(&self, addr: u64) -> Option<(usize, usize)> {
        self.bars.iter().enumerate().find_map(|(i, bar)| {
            let base = bar.base?;
            (addr >= base && addr - base < u64::from(bar.size)).then(|| (i, (addr - base) as usize))
        })
    }

    /// What BAR `i` reads back after `0xFFFF_FFFF` was written to it: the size mask
    /// and flags, or 0 for an unused BAR.
    pub fn bar_probe_value(&self, i: usize) -> u32 {
        match self.bars.get(i) {
            Some(bar) if bar.size != 0 => !(bar.size - 1) & !BAR_FLAG_MASK | BAR_FLAGS,
            _ => 0,
        }
    }

    /// Copies memory at `addr` into `out`; false when no BAR maps all of it.
    pub fn mem_read(&self, addr: u64, out: &mut [u8]) -> bool {
        match self.map(addr) {
            Some((i, off)) if off + out.len() <= self.bars[i].mem.len() => {
                out.copy_from_slice(&self.bars[i].mem[off..off + out.len()]);
                true
            }
            _ => false,
        }
    }

    /// Writes `data` at `addr`; bytes beyond the BAR's end are dropped (like
    /// warp-pipe). Returns the number of bytes written (0: unmapped or read-only).
    pub fn mem_write(&mut self, addr: u64, data: &[u8]) -> usize {
        let Some((i, off)) = self.map(addr) else {
            return 0;
        };
        let bar = &mut self.bars[i];
        if !bar.writable {
            return 0;
        }
        let n = data.len().min(bar.mem.len() - off);
        bar.mem[off..off + n].copy_from_slice(&data[..n]);
        n
    }
}

/// Which BAR register sits at configuration offset `offset`.
fn bar_index(offset: u16) -> Option<usize> {
    let rel = offset.checked_sub(BAR0_OFFSET)?;
    let i = usize::from(rel / 4);
    (rel % 4 == 0 && i < BAR_COUNT).then_some(i)
}

/// What [`MockConn::process`] did with its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the input consumed (whole frames only; keep the rest).
    pub consumed: usize,
    /// Set when the connection must be closed, with the reason.
    pub close: Option<FrameDecodeError>,
}

/// The protocol state of one connection to the mock.
#[derive(Debug, Clone)]
pub struct MockConn {
    decoder: Decoder,
    crc: CrcKind,
    /// Sequence number of the last TLP sent (warp-pipe starts at 0, sends from 1).
    seq: u16,
    stats: ConnStats,
    /// Reused for completion payloads.
    scratch: Tlp,
    /// BARs this connection wrote `0xFFFF_FFFF` to and has not mapped since: their
    /// reads return the size mask. Kept per connection so that requesters sizing
    /// BARs at the same time do not see each other's half-done probing.
    probing: [bool; BAR_COUNT],
}

impl MockConn {
    /// A fresh connection checking and computing CRCs with `crc`.
    pub fn new(crc: CrcKind) -> Self {
        MockConn {
            decoder: Decoder::new(crc),
            crc,
            seq: 0,
            stats: ConnStats::default(),
            scratch: Tlp {
                seq: 0,
                header: TlpHeader::Cpl {
                    cpl: completion(0, 0, 0, 0),
                    length_dw: 1,
                },
                payload: Vec::with_capacity(MAX_PAYLOAD),
            },
            probing: [false; BAR_COUNT],
        }
    }

    /// The connection's counters so far.
    pub fn stats(&self) -> &ConnStats {
        &self.stats
    }

    /// How many bytes the input buffer needs to hold before the next frame can be
    /// decoded (see [`Decoder::needed`]).
    pub fn needed(&self) -> usize {
        self.decoder.needed()
    }

    /// Decodes every whole frame at the start of `input`, applies it to `dev` and
    /// appends the answers to `out`. Stops at an incomplete frame or at an error that
    /// loses the frame boundary ([`Progress::close`]). Never panics.
    pub fn process(&mut self, dev: &mut Device, input: &[u8], out: &mut Vec<u8>) -> Progress {
        let mut at = 0;
        loop {
            let rest = &input[at..];
            match self.decoder.decode(rest) {
                Ok(None) => break,
                Ok(Some((frame, n))) => {
                    at += n;
                    self.handle(dev, frame, out);
                }
                Err(e) => {
                    if let Some(seq) = e.nak_seq() {
                        self.stats.bad_lcrc += 1;
                        self.push_dllp(Dllp::Nak { seq }, out);
                    } else {
                        self.stats.bad_frames += 1;
                    }
                    if let FrameDecodeError::UnsupportedTlpType {
                        seq,
                        frame_len: Some(_),
                        ..
                    } = e
                    {
                        // Intact but of a type we do not serve: ACK it, like warp-pipe.
                        self.push_dllp(Dllp::Ack { seq }, out);
                    }
                    match e.frame_len() {
                        Some(n)
                            if n <= rest.len()
                                && !matches!(e, FrameDecodeError::BadLength { .. }) =>
                        {
                            at += n;
                        }
                        _ => {
                            return Progress {
                                consumed: at,
                                close: Some(e),
                            };
                        }
                    }
                }
            }
        }
        Progress {
            consumed: at,
            close: None,
        }
    }

    fn handle(&mut self, dev: &mut Device, frame: Frame, out: &mut Vec<u8>) {
        let tlp = match frame {
            Frame::Dllp(_) => {
                self.stats.dllps += 1;
                return;
            }
            Frame::Tlp(tlp) => tlp,
        };
        self.stats.tlps += 1;
        self.push_dllp(Dllp::Ack { seq: tlp.seq }, out);
        match tlp.header {
            TlpHeader::MRd {
                req,
                address,
                length_dw,
            } => self.memory_read(dev, &req, address, length_dw, out),
            TlpHeader::MWr { req, address } => {
                let (skip, len) = byte_span(&req, tlp.payload.len() / 4);
                let data = tlp.payload.get(skip..skip + len).unwrap_or(&[]);
                self.stats.writes += 1;
                let n = dev.mem_write(address + skip as u64, data);
                self.stats.written_bytes += n as u64;
                if n == 0 && len != 0 {
                    self.stats.dropped_writes += 1;
                }
            }
            TlpHeader::CfgRd0 {
                req,
                offset,
                length_dw,
                ..
            } => {
                let dw = match bar_index(offset) {
                    _ if length_dw != 1 => None,
                    Some(i) if self.probing[i] => Some(dev.bar_probe_value(i).to_le_bytes()),
                    _ => dev.config_read(offset),
                };
                match dw {
                    Some(dw) => self.push_cpld(&req, 4, 0, &dw, out),
                    None => self.push_cpl(&req, length_dw, CompletionHeader::SC, out),
                }
            }
            TlpHeader::CfgWr0 { offset, .. } => {
                if let Some(&[a, b, c, d]) = tlp.payload.get(..4) {
                    let value = [a, b, c, d];
                    match bar_index(offset) {
                        Some(i) if u32::from_le_bytes(value) == u32::MAX => self.probing[i] = true,
                        Some(i) => {
                            self.probing[i] = false;
                            dev.config_write(offset, value);
                        }
                        None => {
                            dev.config_write(offset, value);
                        }
                    }
                }
            }
            // Completions and anything else addressed to a requester: nothing to do.
            TlpHeader::CplD { .. } | TlpHeader::Cpl { .. } => {}
        }
    }

    fn memory_read(
        &mut self,
        dev: &Device,
        req: &RequestHeader,
        address: u64,
        length_dw: u16,
        out: &mut Vec<u8>,
    ) {
        self.stats.reads += 1;
        let (skip, len) = byte_span(req, usize::from(length_dw));
        let start = address + skip as u64;
        // A zero-length read (first BE 0) returns one DW like warp-pipe.
        let total = len.max(1);
        if dev.map(start).is_none() {
            self.stats.failed_reads += 1;
            self.push_cpl(req, length_dw, CompletionHeader::UR, out);
            return;
        }
        let mrc = dev.max_read_completion as u64;
        let mut cur = start;
        let end = start + total as u64;
        while cur < end {
            // Each completion ends at a read completion boundary unless it is the last.
            let limit = cur + mrc;
            let chunk_end = if limit >= end {
                end
            } else {
                (limit / RCB * RCB).max(cur + 4)
            };
            let n = (chunk_end - cur) as usize;
            let remaining = (end - cur) as usize;
            let mut payload = std::mem::take(&mut self.scratch.payload);
            payload.clear();
            payload.resize(n.div_ceil(4) * 4, 0);
            // Bytes past the BAR's end read as zero (warp-pipe truncates the copy).
            let (bar, off) = dev.map(cur).unwrap_or((0, usize::MAX));
            if let Some(mem) = dev.bars.get(bar).map(|b| &b.mem) {
                let avail = mem.len().saturating_sub(off).min(n);
                if avail > 0 {
                    payload[..avail].copy_from_slice(&mem[off..off + avail]);
                }
            }
            self.stats.read_bytes += n as u64;
            self.scratch.payload = payload;
            self.push_cpld_scratch(req, remaining, (cur & 0x7F) as u8, out);
            cur = chunk_end;
        }
    }

    fn next_seq(&mut self) -> u16 {
        self.seq = (self.seq + 1) & MAX_SEQ;
        self.seq
    }

    fn push_dllp(&mut self, dllp: Dllp, out: &mut Vec<u8>) {
        // An ACK/NAK with a 12-bit sequence number always encodes.
        let _ = encode(&Frame::Dllp(dllp), self.crc, out);
    }

    fn push_cpld(
        &mut self,
        req: &RequestHeader,
        byte_count: usize,
        lower: u8,
        data: &[u8],
        out: &mut Vec<u8>,
    ) {
        self.scratch.payload.clear();
        self.scratch.payload.extend_from_slice(data);
        self.push_cpld_scratch(req, byte_count, lower, out);
    }

    /// Sends a CplD whose payload is in `self.scratch.payload`.
    fn push_cpld_scratch(
        &mut self,
        req: &RequestHeader,
        byte_count: usize,
        lower: u8,
        out: &mut Vec<u8>,
    ) {
        let seq = self.next_seq();
        let tlp = &mut self.scratch;
        tlp.seq = seq;
        tlp.header = TlpHeader::CplD {
            cpl: completion(req.tag, byte_count, lower, CompletionHeader::SC),
        };
        encode_tlp(tlp, self.crc, out);
    }

    fn push_cpl(&mut self, req: &RequestHeader, length_dw: u16, status: u8, out: &mut Vec<u8>) {
        let seq = self.next_seq();
        let (_, len) = byte_span(req, usize::from(length_dw));
        let tlp = &mut self.scratch;
        tlp.seq = seq;
        tlp.payload.clear();
        tlp.header = TlpHeader::Cpl {
            cpl: completion(req.tag, len.max(1), 0, status),
            length_dw: length_dw.clamp(1, 1024),
        };
        encode_tlp(tlp, self.crc, out);
    }
}

/// Encodes a TLP that the mock built (valid by construction). Takes the TLP by
/// reference inside a temporary frame without cloning the payload.
fn encode_tlp(tlp: &mut Tlp, crc: CrcKind, out: &mut Vec<u8>) {
    let frame = Frame::Tlp(std::mem::replace(
        tlp,
        Tlp {
            seq: 0,
            header: TlpHeader::Cpl {
                cpl: completion(0, 0, 0, 0),
                length_dw: 1,
            },
            payload: Vec::new(),
        },
    ));
    let _ = encode(&frame, crc, out);
    let Frame::Tlp(back) = frame else {
        unreachable!("built as a TLP above")
    };
    *tlp = back;
}

fn completion(tag: u8, byte_count: usize, lower_address: u8, status: u8) -> CompletionHeader {
    CompletionHeader {
        completer: PcieId(0),
        status,
        bcm: false,
        // 1..=4096; 4096 goes on the wire as 0.
        byte_count: byte_count.clamp(1, MAX_PAYLOAD) as u16,
        requester: PcieId(0),
        tag,
        lower_address,
    }
}

/// The bytes a request covers as its byte enables say (warp-pipe's
/// `tlp_data_length_bytes`): offset of the first enabled byte in the first DW, and
/// the number of bytes. A first BE of 0 is a zero-length access.
pub fn byte_span(req: &RequestHeader, length_dw: usize) -> (usize, usize) {
    let total = length_dw * 4;
    if req.first_be & 0xF == 0 {
        return (0, 0);
    }
    let skip = req.first_be.trailing_zeros() as usize;
    let last_be = if length_dw <= 1 {
        req.first_be
    } else {
        req.last_be
    };
    let cut = match last_be & 0xF {
        b if b & 8 != 0 => 0,
        b if b & 4 != 0 => 1,
        b if b & 2 != 0 => 2,
        b if b & 1 != 0 => 3,
        _ => 0,
    };
    (skip, total.saturating_sub(skip + cut))
}

/// The request header fields for an access of `len` bytes at `addr` (warp-pipe's
/// `tlp_req_set_addr`): byte enables and the number of DWs. Returns
/// `(DW-aligned address, first BE, last BE, length in DW)`; `len` 0 is a zero-length
/// access (1 DW, first BE 0).
pub fn request_span(addr: u64, len: usize) -> (u64, u8, u8, u16) {
    let align = (addr & 3) as usize;
    let with_align = len + align;
    let mut first = (0xFu8 << align) & 0xF;
    let mut last = 0xFu8 >> ((4 - with_align % 4) % 4);
    if with_align <= 4 {
        first &= last;
        last = 0;
    }
    if len == 0 {
        return (addr & !3, 0, 0, 1);
    }
    (addr & !3, first, last, with_align.div_ceil(4) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_match_warp_pipe() {
        assert_eq!(request_span(0x1000, 2048), (0x1000, 0xF, 0xF, 512));
        assert_eq!(request_span(0x1001, 2), (0x1000, 0x6, 0, 1));
        assert_eq!(request_span(0x1002, 4), (0x1000, 0xC, 0x3, 2));
        assert_eq!(request_span(0x1000, 0), (0x1000, 0, 0, 1));
        let req = |first_be, last_be| RequestHeader {
            first_be,
            last_be,
            ..RequestHeader::default()
        };
        assert_eq!(byte_span(&req(0xF, 0xF), 512), (0, 2048));
        assert_eq!(byte_span(&req(0x6, 0), 1), (1, 2));
        assert_eq!(byte_span(&req(0xC, 0x3), 2), (2, 4));
        assert_eq!(byte_span(&req(0, 0), 1), (0, 0));
    }
}
