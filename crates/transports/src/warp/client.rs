//! The requester side: enumerate a device over Warp Pipe, then read and write its
//! memory.
//!
//! * [`Link`]: one TCP connection with one transaction in flight. It does what
//!   warp-pipe's `client.c` and the Zephyr samples' `common.c` do: configuration
//!   reads and writes, BAR sizing ([`Link::enumerate`]: read, write `0xFFFF_FFFF`, read
//!   the size mask back, map BAR *i* at `(0x10 + 4i) << 16` like `enumerate()`), MRd
//!   answered by CplD (possibly split into several completions), posted MWr. Every TLP
//!   received is ACKed; with [`AckPolicy::Piggyback`] the ACK waits in the output
//!   buffer and leaves with the next request instead of costing a `send` of its own.
//! * [`Pipeline`]: one connection with up to 32 reads outstanding (one per tag),
//!   driven by one thread that multiplexes logical threads over the tags: requests
//!   are queued and sent in one `send`, completions are matched by tag.
//!
//! warp-pipe's Zephyr sample shares one [`Link`]-like client between all threads
//! under a lock: one transaction in flight. The workload in the lab builds all three
//! arrangements (shared, per-thread, pipelined) from these two types.
//!
//! Errors never panic and never hang: a completion with a failure status, a NAK
//! (warp-pipe does not retransmit, so the request is lost), a closed connection and a
//! garbled frame end the transaction with a [`ClientError`]; a read timeout bounds
//! every wait.
//!
//! Both types stay in this one file because they are built from the same private
//! connection halves (`Wire`, `Sender`, `Receiver`, `ReadState`) and differ only in
//! how many reads they keep in flight; splitting would move that shared half away
//! from both of its users.

use super::codec::{Decoder, FrameDecodeError, encode};
use super::crc::CrcKind;
use super::frame::{Dllp, Frame, PcieId, RequestHeader, Tlp, TlpHeader};
use super::layout::{MAX_FRAME_LEN, MAX_PAYLOAD, MAX_SEQ};
use super::mock::{BAR_COUNT, BAR0_OFFSET, request_span};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long a transaction may wait for its completion, and a send for the socket to
/// take it, unless the caller gives its own ([`Link::connect_within`]).
pub const TRANSACTION_TIMEOUT: Duration = Duration::from_secs(10);

/// When to send the ACK of a received TLP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AckPolicy {
    /// At once, in a `send` of its own (warp-pipe).
    #[default]
    Immediate,
    /// With the next request (or when the link is dropped).
    Piggyback,
}

/// Why a transaction failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Socket error, or the server closed the connection.
    #[error("warp link: {0}")]
    Io(#[from] io::Error),
    /// The server sent bytes that are not a valid frame.
    #[error("warp link: bad frame from server: {0}")]
    Frame(#[from] FrameDecodeError),
    /// The server NAKed a request (it is lost: nothing is retransmitted).
    #[error("warp link: server NAKed TLP seq {0:#05x}")]
    Nak(u16),
    /// The read failed at the completer (data-less completion).
    #[error("warp link: read of {len} B at {addr:#x} failed (completion status {status})")]
    ReadFailed {
        /// Address read.
        addr: u64,
        /// Bytes asked for.
        len: usize,
        /// The completion status (0 = SC: warp-pipe's failure signal).
        status: u8,
    },
    /// The device does not look like what was expected.
    #[error("warp enumerate: {0}")]
    Enumerate(String),
    /// An argument is out of range.
    #[error("warp request: {0}")]
    Request(String),
}

/// A BAR found by [`Link::enumerate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarInfo {
    /// The BAR index.
    pub index: usize,
    /// The address it was mapped at.
    pub address: u64,
    /// Its size in bytes.
    pub size: u32,
}

/// What [`Link::enumerate`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Vendor ID.
    pub vendor_id: u16,
    /// Device ID.
    pub device_id: u16,
    /// The active BARs.
    pub bars: Vec<BarInfo>,
}

impl DeviceInfo {
    /// BAR `index`, if active.
    pub fn bar(&self, index: usize) -> Option<BarInfo> {
        self.bars.iter().copied().find(|b| b.index == index)
    }
}

/// Counters of a link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// TLPs sent.
    pub tlps_sent: u64,
    /// TLPs received.
    pub tlps_received: u64,
    /// Bytes sent on the wire.
    pub bytes_sent: u64,
    /// Bytes received from the wire.
    pub bytes_received: u64,
    /// NAKs received.
    pub naks: u64,
}

/// Sends frames: sequence numbers, encoding into a reused buffer, ACK batching.
struct Sender {
    crc: CrcKind,
    seq: u16,
    out: Vec<u8>,
    tlp: Tlp,
}

impl Sender {
    fn new(crc: CrcKind) -> Self {
        Sender {
            crc,
            seq: 0,
            out: Vec::with_capacity(2 * MAX_FRAME_LEN),
            tlp: Tlp {
                seq: 0,
                header: TlpHeader::Cpl {
                    cpl: super::frame::CompletionHeader {
                        completer: PcieId(0),
                        status: 0,
                        bcm: false,
                        byte_count: 1,
                        requester: PcieId(0),
                        tag: 0,
                        lower_address: 0,
                    },
                    length_dw: 1,
                },
                payload: Vec::with_capacity(MAX_PAYLOAD),
            },
        }
    }

    fn push_ack(&mut self, seq: u16) {
        // A 12-bit sequence number always encodes.
        let _ = encode(&Frame::Dllp(Dllp::Ack { seq }), self.crc, &mut self.out);
    }

    /// Appends a TLP with `header`; the payload is `self.tlp.payload`.
    fn push_tlp(&mut self, header: TlpHeader) -> Result<(), ClientError> {
        self.seq = (self.seq + 1) & MAX_SEQ;
        self.tlp.seq = self.seq;
        self.tlp.header = header;
        let frame = Frame::Tlp(std::mem::replace(
            &mut self.tlp,
            Tlp {
                seq: 0,
                header,
                payload: Vec::new(),
            },
        ));
        let r = encode(&frame, self.crc, &mut self.out);
        let Frame::Tlp(back) = frame else {
            unreachable!("built as a TLP above")
        };
        self.tlp = back;
        r.map(|_| ())
            .map_err(|e| ClientError::Request(e.to_string()))
    }

    fn flush(&mut self, stream: &mut TcpStream, stats: &mut LinkStats) -> io::Result<()> {
        if !self.out.is_empty() {
            stream.write_all(&self.out)?;
            stats.bytes_sent += self.out.len() as u64;
            self.out.clear();
        }
        Ok(())
    }
}

fn request(tag: u8, first_be: u8, last_be: u8) -> RequestHeader {
    RequestHeader {
        requester: PcieId(0),
        tag,
        first_be,
        last_be,
    }
}

/// Receives frames: a buffer and a decoder.
struct Receiver {
    decoder: Decoder,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Receiver {
    fn new(crc: CrcKind) -> Self {
        Receiver {
            decoder: Decoder::new(crc),
            buf: vec![0; 4 * MAX_FRAME_LEN],
            start: 0,
            end: 0,
        }
    }

    /// The next frame, reading from `stream` as needed.
    fn next(
        &mut self,
        stream: &mut TcpStream,
        stats: &mut LinkStats,
    ) -> Result<Frame, ClientError> {
        loop {
            match self.decoder.decode(&self.buf[self.start..self.end]) {
                Ok(Some((frame, n))) => {
                    self.start += n;
                    return Ok(frame);
                }
                Ok(None) => {}
                Err(e) => return Err(e.into()),
            }
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            let n = stream.read(&mut self.buf[self.end..])?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "server closed the connection",
                )
                .into());
            }
            stats.bytes_received += n as u64;
            self.end += n;
        }
    }

    /// Whether a whole frame is already buffered (no `read` needed).
    fn has_frame(&self) -> bool {
        let avail = self.end - self.start;
        avail >= 7
            && super::codec::frame_len(&self.buf[self.start..self.end])
                .ok()
                .flatten()
                .is_some_and(|n| n <= avail)
    }
}

/// Where the data of a read is assembled from its completions.
struct ReadState<'a> {
    buf: &'a mut [u8],
    got: usize,
    failed: Option<u8>,
}

impl ReadState<'_> {
    /// Applies one completion; true when the read is complete.
    fn complete(&mut self, header: &TlpHeader, payload: &[u8]) -> bool {
        match header {
            TlpHeader::CplD { cpl } => {
                // byte_count = bytes still to come, this completion included.
                let n = usize::from(cpl.byte_count).min(payload.len());
                let room = self.buf.len() - self.got;
                let n = n.min(room);
                self.buf[self.got..self.got + n].copy_from_slice(&payload[..n]);
                self.got += n;
                usize::from(cpl.byte_count) <= payload.len() || self.got >= self.buf.len()
            }
            TlpHeader::Cpl { cpl, .. } => {
                self.failed = Some(cpl.status);
                true
            }
            _ => false,
        }
    }
}

/// One connection, one transaction in flight.
pub struct Link {
    wire: Wire,
    ack: AckPolicy,
    tag: u8,
}

/// A connection's socket, encoder and decoder; pending ACKs are sent when dropped.
struct Wire {
    stream: TcpStream,
    tx: Sender,
    rx: Receiver,
    stats: LinkStats,
}

impl Wire {
    fn connect(addr: SocketAddr, crc: CrcKind, timeout: Duration) -> Result<Wire, ClientError> {
        // A zero timeout means "none" to the socket calls: at least a millisecond.
        let timeout = timeout.max(Duration::from_millis(1));
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        Ok(Wire {
            stream,
            tx: Sender::new(crc),
            rx: Receiver::new(crc),
            stats: LinkStats::default(),
        })
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        // Pending ACKs; the server may be gone already.
        let _ = self.tx.flush(&mut self.stream, &mut self.stats);
    }
}

impl Link {
    /// Connects to a Warp Pipe server; connecting, every send and every wait for a
    /// completion are bounded by [`TRANSACTION_TIMEOUT`].
    pub fn connect(addr: SocketAddr, crc: CrcKind, ack: AckPolicy) -> Result<Link, ClientError> {
        Self::connect_within(addr, crc, ack, TRANSACTION_TIMEOUT)
    }

    /// Connects to a Warp Pipe server; connecting, every send and every wait for a
    /// completion are bounded by `timeout` (a run's hang timeout).
    pub fn connect_within(
        addr: SocketAddr,
        crc: CrcKind,
        ack: AckPolicy,
        timeout: Duration,
    ) -> Result<Link, ClientError> {
        Ok(Link {
            wire: Wire::connect(addr, crc, timeout)?,
            ack,
            tag: 0,
        })
    }

    /// Continues on this connection with up to 32 reads in flight (after
    /// [`Link::enumerate`], for example: warp-pipe's memory mock keeps BAR mappings
    /// per connection).
    pub fn into_pipeline(self) -> Pipeline {
        Pipeline {
            wire: self.wire,
            pending: (0..MAX_TAGS).map(|_| None).collect(),
            in_flight: 0,
        }
    }

    /// The link's counters.
    pub fn stats(&self) -> LinkStats {
        self.wire.stats
    }

    fn next_tag(&mut self) -> u8 {
        // warp-pipe's tags: 5 bits, wrapping.
        let t = self.tag;
        self.tag = (self.tag + 1) & 31;
        t
    }

    /// Sends what is buffered (pending ACKs).
    pub fn flush(&mut self) -> Result<(), ClientError> {
        Ok(self
            .wire
            .tx
            .flush(&mut self.wire.stream, &mut self.wire.stats)?)
    }

    /// Waits for the completion(s) of the read with `tag`, ACKing TLPs as they come.
    fn wait_read(&mut self, tag: u8, state: &mut ReadState<'_>) -> Result<(), ClientError> {
        loop {
            let frame = self
                .wire
                .rx
                .next(&mut self.wire.stream, &mut self.wire.stats)?;
            match frame {
                Frame::Dllp(Dllp::Nak { seq }) => {
                    self.wire.stats.naks += 1;
                    return Err(ClientError::Nak(seq));
                }
                Frame::Dllp(_) => {}
                Frame::Tlp(tlp) => {
                    self.wire.stats.tlps_received += 1;
                    self.wire.tx.push_ack(tlp.seq);
                    let mine = match &tlp.header {
                        TlpHeader::CplD { cpl } | TlpHeader::Cpl { cpl, .. } => cpl.tag == tag,
                        _ => false,
                    };
                    let done = mine && state.complete(&tlp.header, &tlp.payload);
                    if self.ack == AckPolicy::Immediate || (!done && !self.wire.rx.has_frame()) {
                        self.flush()?;
                    }
                    if done {
                        return Ok(());
                    }
                }
            }
        }
    }

    fn send_read(&mut self, header: TlpHeader) -> Result<(), ClientError> {
        self.wire.tx.tlp.payload.clear();
        self.wire.tx.push_tlp(header)?;
        self.wire.stats.tlps_sent += 1;
        self.flush()
    }

    /// Reads `buf.len()` (1 to 4096) bytes of memory at `addr`.
    pub fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), ClientError> {
        if buf.is_empty() || buf.len() > MAX_PAYLOAD {
            return Err(ClientError::Request(format!(
                "read length {} outside 1..=4096",
                buf.len()
            )));
        }
        let (aligned, first_be, last_be, length_dw) = request_span(addr, buf.len());
        let tag = self.next_tag();
        self.send_read(TlpHeader::MRd {
            req: request(tag, first_be, last_be),
            address: aligned,
            length_dw,
        })?;
        let len = buf.len();
        let mut state = ReadState {
            buf,
            got: 0,
            failed: None,
        };
        self.wait_read(tag, &mut state)?;
        match state.failed {
            Some(status) => Err(ClientError::ReadFailed { addr, len, status }),
            None => Ok(()),
        }
    }

    /// Writes `data` (1 to 4096 bytes, DW-aligned address) at `addr` (posted: returns
    /// once sent).
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), ClientError> {
        let header = write_header(addr, data, &mut self.wire.tx.tlp.payload)?;
        self.wire.tx.push_tlp(header)?;
        self.wire.stats.tlps_sent += 1;
        self.flush()
    }

    /// Reads the configuration DW at `offset`.
    pub fn config_read(&mut self, offset: u16) -> Result<u32, ClientError> {
        let tag = self.next_tag();
        self.send_read(TlpHeader::CfgRd0 {
            req: request(tag, 0xF, 0),
            target: PcieId(0),
            offset: offset & !3,
            length_dw: 1,
        })?;
        let mut dw = [0u8; 4];
        let mut state = ReadState {
            buf: &mut dw,
            got: 0,
            failed: None,
        };
        self.wait_read(tag, &mut state)?;
        match state.failed {
            Some(status) => Err(ClientError::ReadFailed {
                addr: u64::from(offset),
                len: 4,
                status,
            }),
            None => Ok(u32::from_le_bytes(dw)),
        }
    }

    /// Writes the configuration DW at `offset`.
    pub fn config_write(&mut self, offset: u16, value: u32) -> Result<(), ClientError> {
        self.wire.tx.tlp.payload.clear();
        self.wire
            .tx
            .tlp
            .payload
            .extend_from_slice(&value.to_le_bytes());
        self.wire.tx.push_tlp(TlpHeader::CfgWr0 {
            req: request(0, 0xF, 0),
            target: PcieId(0),
            offset: offset & !3,
        })?;
        self.wire.stats.tlps_sent += 1;
        self.flush()
    }

    /// Enumerates the device like warp-pipe's Zephyr samples: vendor ID, header type,
    /// then each BAR sized and mapped at `(0x10 + 4i) << 16` (BAR0 at 0x100000, BAR1
    /// at 0x140000), or higher when its size needs a more aligned address; the
    /// address is read back and checked.
    pub fn enumerate(&mut self) -> Result<DeviceInfo, ClientError> {
        let id = self.config_read(0)?;
        let vendor_id = id as u16;
        if vendor_id == 0xFFFF {
            return Err(ClientError::Enumerate(
                "no device (vendor ID 0xFFFF)".into(),
            ));
        }
        let header_type = (self.config_read(0x0C)? >> 16) as u8;
        if header_type & 0x7F != 0 {
            return Err(ClientError::Enumerate(format!(
                "header type {header_type:#x}, only type 0 is supported"
            )));
        }
        let mut bars = Vec::new();
        let mut next_free = 0u64;
        for index in 0..BAR_COUNT {
            let offset = BAR0_OFFSET + 4 * index as u16;
            self.config_write(offset, u32::MAX)?;
            let mask = self.config_read(offset)?;
            if mask == 0 {
                continue;
            }
            let size = (mask & !0xF).wrapping_neg();
            // warp-pipe maps BAR i at (0x10 + 4i) << 16 whatever its size; a BAR must be
            // aligned to its size, so larger BARs go to the next aligned address
            // above the previous one (the default sizes keep warp-pipe's layout).
            let want = u64::from(u32::from(offset) << 16).max(next_free);
            let address = want.next_multiple_of(u64::from(size.max(16)));
            let Ok(address32) = u32::try_from(address) else {
                return Err(ClientError::Enumerate(format!(
                    "BAR{index} of {size} B does not fit below 4 GiB"
                )));
            };
            self.config_write(offset, address32)?;
            let got = u64::from(self.config_read(offset)? & !0xF);
            if got != address {
                return Err(ClientError::Enumerate(format!(
                    "BAR{index} mapped at {address:#x} reads back {got:#x}"
                )));
            }
            next_free = address + u64::from(size);
            bars.push(BarInfo {
                index,
                address,
                size,
            });
        }
        Ok(DeviceInfo {
            vendor_id,
            device_id: (id >> 16) as u16,
            bars,
        })
    }
}

/// Builds an MWr header for `data` at `addr`, filling `payload` (DW-padded, data at
/// the byte the first BE names).
fn write_header(addr: u64, data: &[u8], payload: &mut Vec<u8>) -> Result<TlpHeader, ClientError> {
    if data.is_empty() || data.len() > MAX_PAYLOAD || addr & 3 != 0 {
        return Err(ClientError::Request(format!(
            "write of {} B at {addr:#x}: need 1..=4096 bytes at a DW-aligned address",
            data.len()
        )));
    }
    let (aligned, first_be, last_be, length_dw) = request_span(addr, data.len());
    payload.clear();
    payload.extend_from_slice(data);
    payload.resize(usize::from(length_dw) * 4, 0);
    Ok(TlpHeader::MWr {
        req: request(0, first_be, last_be),
        address: aligned,
    })
}

/// The most reads outstanding on one pipelined connection (warp-pipe's 5-bit tags).
pub const MAX_TAGS: usize = 32;

/// A read waiting for its completion(s).
#[derive(Debug)]
struct Pending {
    addr: u64,
    want: usize,
    got: usize,
    data: Vec<u8>,
    failed: Option<u8>,
}

/// One connection with up to [`MAX_TAGS`] reads outstanding, driven by one thread:
/// queue requests ([`Pipeline::read`], [`Pipeline::write`]), then
/// [`Pipeline::wait`] sends them all in one `send` and hands back completed reads by
/// tag. ACKs of received TLPs leave with the next batch of requests.
///
/// This is the event-driven counterpart of many threads sharing a connection: the
/// caller multiplexes its logical threads (warp-pipe's Zephyr threads) over tags, so
/// no thread blocks per transaction and one system call carries many transactions.
pub struct Pipeline {
    wire: Wire,
    pending: Vec<Option<Pending>>,
    in_flight: usize,
}

impl Pipeline {
    /// Connects to a Warp Pipe server.
    pub fn connect(addr: SocketAddr, crc: CrcKind) -> Result<Pipeline, ClientError> {
        Ok(Pipeline {
            wire: Wire::connect(addr, crc, TRANSACTION_TIMEOUT)?,
            pending: (0..MAX_TAGS).map(|_| None).collect(),
            in_flight: 0,
        })
    }

    /// The connection's counters.
    pub fn stats(&self) -> LinkStats {
        self.wire.stats
    }

    /// Reads outstanding.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Queues a read of `len` (1..=4096) bytes at `addr` with `tag` (`0..32`, not in
    /// flight).
    pub fn read(&mut self, tag: u8, addr: u64, len: usize) -> Result<(), ClientError> {
        let slot = self
            .pending
            .get_mut(usize::from(tag))
            .ok_or_else(|| ClientError::Request(format!("tag {tag} outside 0..32")))?;
        if slot.is_some() {
            return Err(ClientError::Request(format!("tag {tag} already in flight")));
        }
        if len == 0 || len > MAX_PAYLOAD {
            return Err(ClientError::Request(format!(
                "read length {len} outside 1..=4096"
            )));
        }
        let (aligned, first_be, last_be, length_dw) = request_span(addr, len);
        self.wire.tx.tlp.payload.clear();
        self.wire.tx.push_tlp(TlpHeader::MRd {
            req: request(tag, first_be, last_be),
            address: aligned,
            length_dw,
        })?;
        self.wire.stats.tlps_sent += 1;
        *slot = Some(Pending {
            addr,
            want: len,
            got: 0,
            data: vec![0; len],
            failed: None,
        });
        self.in_flight += 1;
        Ok(())
    }

    /// Queues a write of `data` at `addr` (posted).
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), ClientError> {
        let header = write_header(addr, data, &mut self.wire.tx.tlp.payload)?;
        self.wire.tx.push_tlp(header)?;
        self.wire.stats.tlps_sent += 1;
        Ok(())
    }

    /// Sends everything queued.
    pub fn flush(&mut self) -> Result<(), ClientError> {
        Ok(self
            .wire
            .tx
            .flush(&mut self.wire.stream, &mut self.wire.stats)?)
    }

    /// Sends what is queued, then waits until at least one read completed and calls
    /// `done(tag, result)` for every read completed by the bytes received so far.
    /// Returns at once when nothing is in flight.
    pub fn wait(
        &mut self,
        mut done: impl FnMut(u8, Result<&[u8], ClientError>),
    ) -> Result<(), ClientError> {
        self.flush()?;
        let mut completed = 0;
        while self.in_flight > 0 {
            if completed > 0 && !self.wire.rx.has_frame() {
                break;
            }
            let frame = self
                .wire
                .rx
                .next(&mut self.wire.stream, &mut self.wire.stats)?;
            let tlp = match frame {
                Frame::Dllp(Dllp::Nak { seq }) => {
                    self.wire.stats.naks += 1;
                    return Err(ClientError::Nak(seq));
                }
                Frame::Dllp(_) => continue,
                Frame::Tlp(tlp) => tlp,
            };
            self.wire.stats.tlps_received += 1;
            self.wire.tx.push_ack(tlp.seq);
            let tag = match &tlp.header {
                TlpHeader::CplD { cpl } | TlpHeader::Cpl { cpl, .. } => usize::from(cpl.tag),
                _ => continue,
            };
            let Some(Some(p)) = self.pending.get_mut(tag) else {
                continue;
            };
            let mut st = ReadState {
                buf: &mut p.data[..p.want],
                got: p.got,
                failed: None,
            };
            let finished = st.complete(&tlp.header, &tlp.payload);
            p.got = st.got;
            p.failed = st.failed;
            if finished {
                let p = self.pending[tag].take().expect("checked above");
                self.in_flight -= 1;
                completed += 1;
                match p.failed {
                    Some(status) => done(
                        tag as u8,
                        Err(ClientError::ReadFailed {
                            addr: p.addr,
                            len: p.want,
                            status,
                        }),
                    ),
                    None => done(tag as u8, Ok(&p.data)),
                }
            }
        }
        Ok(())
    }
}
