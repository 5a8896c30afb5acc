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
//! * [`Pipelined`]: one connection shared by up to 32 threads, each with its own tag,
//!   so that up to 32 reads are outstanding at once; a reader thread matches
//!   completions to tags and wakes their owners.
//!
//! warp-pipe's Zephyr sample shares one [`Link`]-like client between all threads
//! under a lock: one transaction in flight. The workload in the lab builds all three
//! arrangements (shared, per-thread, pipelined) from these two types.
//!
//! Errors never panic and never hang: a completion with a failure status, a NAK
//! (warp-pipe does not retransmit, so the request is lost), a closed connection and a
//! garbled frame end the transaction with a [`ClientError`]; a read timeout bounds
//! every wait.

use super::codec::{Decoder, FrameDecodeError, encode};
use super::crc::CrcKind;
use super::frame::{Dllp, Frame, PcieId, RequestHeader, Tlp, TlpHeader};
use super::mock::{BAR_COUNT, BAR0_OFFSET, request_span};
use super::{MAX_FRAME_LEN, MAX_PAYLOAD, MAX_SEQ};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long a transaction may wait for its completion.
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
    stream: TcpStream,
    tx: Sender,
    rx: Receiver,
    ack: AckPolicy,
    tag: u8,
    stats: LinkStats,
}

impl Link {
    /// Connects to a Warp Pipe server.
    pub fn connect(addr: SocketAddr, crc: CrcKind, ack: AckPolicy) -> Result<Link, ClientError> {
        let stream = TcpStream::connect_timeout(&addr, TRANSACTION_TIMEOUT)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(TRANSACTION_TIMEOUT))?;
        Ok(Link {
            stream,
            tx: Sender::new(crc),
            rx: Receiver::new(crc),
            ack,
            tag: 0,
            stats: LinkStats::default(),
        })
    }

    /// The link's counters.
    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    fn next_tag(&mut self) -> u8 {
        // warp-pipe's tags: 5 bits, wrapping.
        let t = self.tag;
        self.tag = (self.tag + 1) & 31;
        t
    }

    /// Sends what is buffered (pending ACKs).
    pub fn flush(&mut self) -> Result<(), ClientError> {
        Ok(self.tx.flush(&mut self.stream, &mut self.stats)?)
    }

    /// Waits for the completion(s) of the read with `tag`, ACKing TLPs as they come.
    fn wait_read(&mut self, tag: u8, state: &mut ReadState<'_>) -> Result<(), ClientError> {
        loop {
            let frame = self.rx.next(&mut self.stream, &mut self.stats)?;
            match frame {
                Frame::Dllp(Dllp::Nak { seq }) => {
                    self.stats.naks += 1;
                    return Err(ClientError::Nak(seq));
                }
                Frame::Dllp(_) => {}
                Frame::Tlp(tlp) => {
                    self.stats.tlps_received += 1;
                    self.tx.push_ack(tlp.seq);
                    let mine = match &tlp.header {
                        TlpHeader::CplD { cpl } | TlpHeader::Cpl { cpl, .. } => cpl.tag == tag,
                        _ => false,
                    };
                    let done = mine && state.complete(&tlp.header, &tlp.payload);
                    if self.ack == AckPolicy::Immediate || (!done && !self.rx.has_frame()) {
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
        self.tx.tlp.payload.clear();
        self.tx.push_tlp(header)?;
        self.stats.tlps_sent += 1;
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
        let header = write_header(addr, data, &mut self.tx.tlp.payload)?;
        self.tx.push_tlp(header)?;
        self.stats.tlps_sent += 1;
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
        self.tx.tlp.payload.clear();
        self.tx.tlp.payload.extend_from_slice(&value.to_le_bytes());
        self.tx.push_tlp(TlpHeader::CfgWr0 {
            req: request(0, 0xF, 0),
            target: PcieId(0),
            offset: offset & !3,
        })?;
        self.stats.tlps_sent += 1;
        self.flush()
    }

    /// Enumerates the device like warp-pipe's Zephyr samples: vendor ID, header type,
    /// then each BAR sized and mapped at `(0x10 + 4i) << 16`.
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
        for index in 0..BAR_COUNT {
            let offset = BAR0_OFFSET + 4 * index as u16;
            self.config_write(offset, u32::MAX)?;
            let mask = self.config_read(offset)?;
            if mask == 0 {
                continue;
            }
            let size = (mask & !0xF).wrapping_neg();
            let address = u32::from(offset) << 16;
            self.config_write(offset, address)?;
            bars.push(BarInfo {
                index,
                address: u64::from(address),
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

impl Drop for Link {
    fn drop(&mut self) {
        // Pending ACKs; the server may be gone already.
        let _ = self.flush();
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

#[derive(Default)]
struct SlotState {
    data: Vec<u8>,
    want: usize,
    got: usize,
    busy: bool,
    done: bool,
    failed: Option<u8>,
    error: Option<String>,
}

struct Slot {
    state: Mutex<SlotState>,
    ready: Condvar,
}

struct Shared {
    writer: Mutex<(TcpStream, Sender, LinkStats)>,
    slots: Vec<Slot>,
    closed: Mutex<Option<String>>,
}

/// One connection with up to [`MAX_TAGS`] reads outstanding: each tag is used by one
/// thread at a time; a reader thread routes completions to tags.
pub struct Pipelined {
    shared: Arc<Shared>,
    reader: Option<std::thread::JoinHandle<LinkStats>>,
    shutdown: TcpStream,
}

impl Pipelined {
    /// Connects and starts the reader thread.
    pub fn connect(addr: SocketAddr, crc: CrcKind) -> Result<Pipelined, ClientError> {
        let stream = TcpStream::connect_timeout(&addr, TRANSACTION_TIMEOUT)?;
        stream.set_nodelay(true)?;
        let mut read_half = stream.try_clone()?;
        let shutdown = stream.try_clone()?;
        let shared = Arc::new(Shared {
            writer: Mutex::new((stream, Sender::new(crc), LinkStats::default())),
            slots: (0..MAX_TAGS)
                .map(|_| Slot {
                    state: Mutex::new(SlotState::default()),
                    ready: Condvar::new(),
                })
                .collect(),
            closed: Mutex::new(None),
        });
        let sh = Arc::clone(&shared);
        let reader = std::thread::Builder::new()
            .name("warp-pipelined-rx".into())
            .spawn(move || reader_loop(&sh, &mut read_half, crc))?;
        Ok(Pipelined {
            shared,
            reader: Some(reader),
            shutdown,
        })
    }

    /// Reads `buf.len()` (1..=4096) bytes at `addr` using tag `tag` (`0..32`); the
    /// caller must not use one tag from two threads at once.
    pub fn read(&self, tag: u8, addr: u64, buf: &mut [u8]) -> Result<(), ClientError> {
        let slot = self
            .shared
            .slots
            .get(usize::from(tag))
            .ok_or_else(|| ClientError::Request(format!("tag {tag} outside 0..32")))?;
        if buf.is_empty() || buf.len() > MAX_PAYLOAD {
            return Err(ClientError::Request(format!(
                "read length {} outside 1..=4096",
                buf.len()
            )));
        }
        {
            let mut s = slot.state.lock().unwrap_or_else(|p| p.into_inner());
            if s.busy {
                return Err(ClientError::Request(format!("tag {tag} already in use")));
            }
            s.busy = true;
            s.done = false;
            s.got = 0;
            s.want = buf.len();
            s.failed = None;
            s.error = None;
        }
        let (aligned, first_be, last_be, length_dw) = request_span(addr, buf.len());
        let sent = self.send(|tx| {
            tx.tlp.payload.clear();
            tx.push_tlp(TlpHeader::MRd {
                req: request(tag, first_be, last_be),
                address: aligned,
                length_dw,
            })
        });
        let mut s = slot.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = sent {
            s.busy = false;
            return Err(e);
        }
        while !s.done {
            let (g, timeout) = slot
                .ready
                .wait_timeout(s, TRANSACTION_TIMEOUT)
                .unwrap_or_else(|p| p.into_inner());
            s = g;
            if timeout.timed_out() && !s.done {
                s.busy = false;
                return Err(
                    io::Error::new(io::ErrorKind::TimedOut, "no completion within 10 s").into(),
                );
            }
        }
        s.busy = false;
        if let Some(e) = s.error.take() {
            return Err(io::Error::other(e).into());
        }
        if let Some(status) = s.failed {
            return Err(ClientError::ReadFailed {
                addr,
                len: buf.len(),
                status,
            });
        }
        buf.copy_from_slice(&s.data[..buf.len()]);
        Ok(())
    }

    /// Writes `data` at `addr` (posted).
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), ClientError> {
        self.send(|tx| {
            let header = write_header(addr, data, &mut tx.tlp.payload)?;
            tx.push_tlp(header)
        })
    }

    fn send(
        &self,
        build: impl FnOnce(&mut Sender) -> Result<(), ClientError>,
    ) -> Result<(), ClientError> {
        if let Some(e) = self
            .shared
            .closed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, e).into());
        }
        let mut w = self.shared.writer.lock().unwrap_or_else(|p| p.into_inner());
        let (stream, tx, stats) = &mut *w;
        build(tx)?;
        stats.tlps_sent += 1;
        Ok(tx.flush(stream, stats)?)
    }

    /// Closes the connection and returns the counters of both directions.
    pub fn close(mut self) -> LinkStats {
        self.finish()
    }

    fn finish(&mut self) -> LinkStats {
        let _ = self.shutdown.shutdown(std::net::Shutdown::Both);
        let rx = self
            .reader
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let w = self.shared.writer.lock().unwrap_or_else(|p| p.into_inner());
        LinkStats {
            tlps_received: rx.tlps_received,
            bytes_received: rx.bytes_received,
            naks: rx.naks,
            ..w.2
        }
    }
}

impl Drop for Pipelined {
    fn drop(&mut self) {
        if self.reader.is_some() {
            self.finish();
        }
    }
}

fn reader_loop(shared: &Shared, stream: &mut TcpStream, crc: CrcKind) -> LinkStats {
    let mut rx = Receiver::new(crc);
    let mut stats = LinkStats::default();
    let mut acks = Sender::new(crc);
    let err = loop {
        let frame = match rx.next(stream, &mut stats) {
            Ok(f) => f,
            Err(e) => break e.to_string(),
        };
        match frame {
            Frame::Dllp(Dllp::Nak { seq }) => {
                stats.naks += 1;
                // The request is lost; whoever waits on it times out. Without
                // retransmission nothing better can be done: fail everyone.
                break format!("server NAKed TLP seq {seq:#05x}");
            }
            Frame::Dllp(_) => {}
            Frame::Tlp(tlp) => {
                stats.tlps_received += 1;
                acks.push_ack(tlp.seq);
                let tag = match &tlp.header {
                    TlpHeader::CplD { cpl } | TlpHeader::Cpl { cpl, .. } => Some(cpl.tag),
                    _ => None,
                };
                if let Some(slot) = tag.and_then(|t| shared.slots.get(usize::from(t))) {
                    let mut s = slot.state.lock().unwrap_or_else(|p| p.into_inner());
                    if s.busy && !s.done {
                        let want = s.want;
                        if s.data.len() < want {
                            s.data.resize(want, 0);
                        }
                        let got = s.got;
                        let mut st = ReadState {
                            buf: &mut s.data[..want],
                            got,
                            failed: None,
                        };
                        let done = st.complete(&tlp.header, &tlp.payload);
                        let (got, failed) = (st.got, st.failed);
                        s.got = got;
                        s.failed = failed;
                        if done {
                            s.done = true;
                            slot.ready.notify_one();
                        }
                    }
                }
                // ACK everything decoded from this read in one send.
                if !rx.has_frame() {
                    let mut w = shared.writer.lock().unwrap_or_else(|p| p.into_inner());
                    let (stream, tx, wstats) = &mut *w;
                    tx.out.extend_from_slice(&acks.out);
                    acks.out.clear();
                    if tx.flush(stream, wstats).is_err() {
                        break "send failed".to_string();
                    }
                }
            }
        }
    };
    *shared.closed.lock().unwrap_or_else(|p| p.into_inner()) = Some(err.clone());
    for slot in &shared.slots {
        let mut s = slot.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.busy && !s.done {
            s.error = Some(err.clone());
            s.done = true;
            slot.ready.notify_one();
        }
    }
    stats
}
