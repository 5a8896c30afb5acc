//! Bytes ⇄ [`Frame`]s: [`encode`] and the incremental [`Decoder`].
//!
//! Encoder and decoder stay in one file because they are the two directions of one
//! byte layout: a change to a field's bytes must be made to both, and the tests here
//! round-trip each kind of frame through the pair.

use super::crc::CrcKind;
use super::frame::{
    CompletionHeader, Dllp, Frame, PcieId, RequestHeader, Tlp, TlpHeader, fmt_type,
};
use super::layout::{
    DLLP_FRAME_LEN, MAX_PAYLOAD, MAX_SEQ, PREFIX_LEN, PROTO_DLLP, PROTO_TLP, TLP_OVERHEAD,
};

/// DLLP type byte of an ACK.
pub const DLLP_ACK: u8 = 0x00;
/// DLLP type byte of a NAK.
pub const DLLP_NAK: u8 = 0x10;
/// DLLP type byte of a NOP.
pub const DLLP_NOP: u8 = 0x31;

/// Why a [`Frame`] cannot be encoded: a value does not fit its field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameEncodeError {
    /// A header field holds a value outside its range.
    #[error("cannot encode {field} = {value:#x}: allowed {allowed}")]
    Field {
        /// The field ("seq", "first_be", "address", ...).
        field: &'static str,
        /// The value given.
        value: u64,
        /// The allowed values.
        allowed: &'static str,
    },
    /// The payload's length does not suit the kind of TLP.
    #[error("cannot encode a {kind} TLP with a {len}-byte payload: allowed {allowed}")]
    Payload {
        /// The kind of TLP ("MRd", "MWr", ...).
        kind: &'static str,
        /// The payload length in bytes.
        len: usize,
        /// The allowed lengths.
        allowed: &'static str,
    },
}

/// Why bytes are not a valid frame.
///
/// [`FrameDecodeError::frame_len`] tells whether the stream can go on: `Some(n)` means
/// the rejected frame is `n` bytes long (skip them, as warp-pipe does, and carry on;
/// some of them may not have arrived yet), `None` that the frame boundary is lost and
/// the connection must be dropped (warp-pipe disconnects too).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameDecodeError {
    /// The first byte is neither 2 (DLLP) nor 3 (TLP).
    #[error("bad protocol byte {value:#04x} (expected 0x02 = DLLP or 0x03 = TLP)")]
    BadProtocol {
        /// The byte found.
        value: u8,
    },
    /// The LCRC does not match the TLP's bytes: answer with a NAK.
    #[error(
        "bad LCRC in TLP seq {seq:#05x}: frame carries {received:#010x}, its bytes give {computed:#010x}"
    )]
    BadLcrc {
        /// The sequence number as received (it is part of what the LCRC failed on).
        seq: u16,
        /// The LCRC found at the end of the frame.
        received: u32,
        /// The LCRC computed over sequence number, header and payload.
        computed: u32,
        /// The frame's length in bytes.
        frame_len: usize,
    },
    /// The CRC16 does not match the DLLP's 4 bytes.
    #[error("bad DLLP CRC16: frame carries {received:#06x}, its bytes give {computed:#06x}")]
    BadDllpCrc {
        /// The CRC16 found at the end of the frame.
        received: u16,
        /// The CRC16 computed over the DLLP's 4 bytes.
        computed: u16,
    },
    /// An intact DLLP of a type this codec does not decode (flow control, power
    /// management, vendor-specific).
    #[error("unsupported DLLP type {value:#04x} (supported: ACK 0x00, NAK 0x10, NOP 0x31)")]
    UnsupportedDllpType {
        /// The DLLP type byte.
        value: u8,
    },
    /// A TLP of a Fmt/Type this codec does not decode. With a known Fmt the frame was
    /// received whole and its LCRC is good (warp-pipe ACKs such a TLP, logs and drops
    /// it); with Fmt 4 to 7 (TLP prefix) the frame's length is unknown.
    #[error(
        "unsupported TLP type: Fmt/Type byte {value:#04x} (Fmt {}, Type {:#04x}) in TLP seq {seq:#05x}; \
         supported: MRd 0x00/0x20, MWr 0x40/0x60, CfgRd0 0x04, CfgWr0 0x44, Cpl 0x0a, CplD 0x4a",
        .value >> 5,
        .value & 0x1F
    )]
    UnsupportedTlpType {
        /// Header byte 0 (Fmt in bits 7:5, Type in bits 4:0).
        value: u8,
        /// The sequence number (checked by the LCRC only when `frame_len` is `Some`).
        seq: u16,
        /// The frame's length in bytes, when the Fmt field defines it.
        frame_len: Option<usize>,
    },
    /// The Length field announces more payload than this decoder accepts. Refused as
    /// soon as the field has arrived, before anything is allocated.
    #[error(
        "bad length: TLP Length field {field:#05x} announces {bytes} payload bytes, \
         more than the maximum of {max}"
    )]
    BadLength {
        /// The 10-bit Length field (0 means 1024 DW).
        field: u16,
        /// The payload length it announces, in bytes.
        bytes: usize,
        /// The decoder's maximum payload, in bytes.
        max: usize,
        /// The frame's length in bytes.
        frame_len: usize,
    },
}

impl FrameDecodeError {
    /// How many bytes the rejected frame occupies, so that the caller can skip it and
    /// go on with the next frame; `None` when the stream cannot be resynchronised.
    pub fn frame_len(&self) -> Option<usize> {
        match *self {
            FrameDecodeError::BadProtocol { .. } => None,
            FrameDecodeError::BadLcrc { frame_len, .. }
            | FrameDecodeError::BadLength { frame_len, .. } => Some(frame_len),
            FrameDecodeError::BadDllpCrc { .. } | FrameDecodeError::UnsupportedDllpType { .. } => {
                Some(DLLP_FRAME_LEN)
            }
            FrameDecodeError::UnsupportedTlpType { frame_len, .. } => frame_len,
        }
    }

    /// The sequence number to NAK, for a TLP whose LCRC failed (warp-pipe NAKs the
    /// received sequence number).
    pub fn nak_seq(&self) -> Option<u16> {
        match *self {
            FrameDecodeError::BadLcrc { seq, .. } => Some(seq),
            _ => None,
        }
    }
}

fn field_err(field: &'static str, value: u64, allowed: &'static str) -> FrameEncodeError {
    FrameEncodeError::Field {
        field,
        value,
        allowed,
    }
}

fn check_max(field: &'static str, value: u64, max: u64, allowed: &'static str) -> EncResult {
    if value > max {
        Err(field_err(field, value, allowed))
    } else {
        Ok(())
    }
}

type EncResult = Result<(), FrameEncodeError>;

fn check_seq(seq: u16) -> EncResult {
    check_max("seq", seq.into(), MAX_SEQ.into(), "0..=0xfff")
}

fn check_req(req: &RequestHeader) -> EncResult {
    check_max("first_be", req.first_be.into(), 0xF, "0..=0xf")?;
    check_max("last_be", req.last_be.into(), 0xF, "0..=0xf")
}

fn check_length_dw(length_dw: u16) -> EncResult {
    if (1..=1024).contains(&length_dw) {
        Ok(())
    } else {
        Err(field_err("length_dw", length_dw.into(), "1..=1024"))
    }
}

fn check_aligned(field: &'static str, value: u64) -> EncResult {
    if value & 3 == 0 {
        Ok(())
    } else {
        Err(field_err(field, value, "a multiple of 4 (DW-aligned)"))
    }
}

fn check_cpl(cpl: &CompletionHeader) -> EncResult {
    check_max("status", cpl.status.into(), 7, "0..=7")?;
    if !(1..=4096).contains(&cpl.byte_count) {
        return Err(field_err("byte_count", cpl.byte_count.into(), "1..=4096"));
    }
    check_max("lower_address", cpl.lower_address.into(), 0x7F, "0..=0x7f")
}

fn kind_name(header: &TlpHeader) -> &'static str {
    match header {
        TlpHeader::MRd { .. } => "MRd",
        TlpHeader::MWr { .. } => "MWr",
        TlpHeader::CfgRd0 { .. } => "CfgRd0",
        TlpHeader::CfgWr0 { .. } => "CfgWr0",
        TlpHeader::CplD { .. } => "CplD",
        TlpHeader::Cpl { .. } => "Cpl",
    }
}

/// Checks every field of a TLP and returns the 10-bit Length field to send.
fn check_tlp(tlp: &Tlp) -> Result<u16, FrameEncodeError> {
    check_seq(tlp.seq)?;
    let no_data_length = match &tlp.header {
        TlpHeader::MRd {
            req,
            address,
            length_dw,
        } => {
            check_req(req)?;
            check_aligned("address", *address)?;
            check_length_dw(*length_dw)?;
            Some(*length_dw)
        }
        TlpHeader::MWr { req, address } => {
            check_req(req)?;
            check_aligned("address", *address)?;
            None
        }
        TlpHeader::CfgRd0 {
            req,
            offset,
            length_dw,
            ..
        } => {
            check_req(req)?;
            check_aligned("offset", (*offset).into())?;
            check_length_dw(*length_dw)?;
            Some(*length_dw)
        }
        TlpHeader::CfgWr0 { req, offset, .. } => {
            check_req(req)?;
            check_aligned("offset", (*offset).into())?;
            None
        }
        TlpHeader::CplD { cpl } => {
            check_cpl(cpl)?;
            None
        }
        TlpHeader::Cpl { cpl, length_dw } => {
            check_cpl(cpl)?;
            check_length_dw(*length_dw)?;
            Some(*length_dw)
        }
    };
    let len = tlp.payload.len();
    let length_dw = match no_data_length {
        Some(length_dw) if len == 0 => length_dw,
        Some(_) => {
            return Err(FrameEncodeError::Payload {
                kind: kind_name(&tlp.header),
                len,
                allowed: "none (this kind carries no data)",
            });
        }
        None if len == 0 || !len.is_multiple_of(4) || len > MAX_PAYLOAD => {
            return Err(FrameEncodeError::Payload {
                kind: kind_name(&tlp.header),
                len,
                allowed: "4 to 4096 bytes in whole DWs",
            });
        }
        // len ≤ 4096, so this fits in u16.
        None => (len / 4) as u16,
    };
    // 1024 DW is sent as 0.
    Ok(length_dw & 0x3FF)
}

fn id_bytes(id: PcieId) -> [u8; 2] {
    id.0.to_be_bytes()
}

fn push_request(out: &mut Vec<u8>, req: &RequestHeader) {
    out.extend_from_slice(&id_bytes(req.requester));
    out.push(req.tag);
    out.push(req.first_be | (req.last_be << 4));
}

fn push_completion(out: &mut Vec<u8>, cpl: &CompletionHeader) {
    let byte_count = cpl.byte_count & 0xFFF; // 4096 is sent as 0
    out.extend_from_slice(&id_bytes(cpl.completer));
    out.push((cpl.status << 5) | (u8::from(cpl.bcm) << 4) | (byte_count >> 8) as u8);
    out.push(byte_count as u8);
    out.extend_from_slice(&id_bytes(cpl.requester));
    out.push(cpl.tag);
    out.push(cpl.lower_address);
}

fn push_address(out: &mut Vec<u8>, address: u64) {
    if super::frame::needs_4dw(address) {
        out.extend_from_slice(&address.to_be_bytes());
    } else {
        // Below 4 GiB: the low 32 bits are the whole address.
        out.extend_from_slice(&(address as u32).to_be_bytes());
    }
}

/// Appends the bytes of `frame` to `out`, checksum computed with `crc`, and returns
/// how many were appended. On error `out` is left as it was.
///
/// Fields that warp-pipe neither sets nor reads (traffic class, attributes, TH, TD,
/// EP, AT, reserved bits, NOP contents) are sent as 0.
pub fn encode(frame: &Frame, crc: CrcKind, out: &mut Vec<u8>) -> Result<usize, FrameEncodeError> {
    let start = out.len();
    match frame {
        Frame::Dllp(dllp) => {
            let (ty, seq) = match *dllp {
                Dllp::Ack { seq } => (DLLP_ACK, seq),
                Dllp::Nak { seq } => (DLLP_NAK, seq),
                Dllp::Nop => (DLLP_NOP, 0),
            };
            check_seq(seq)?;
            let body = [ty, 0, (seq >> 8) as u8, seq as u8];
            out.reserve(DLLP_FRAME_LEN);
            out.push(PROTO_DLLP);
            out.extend_from_slice(&body);
            out.extend_from_slice(&crc.crc16(&body).to_le_bytes());
        }
        Frame::Tlp(tlp) => {
            let length = check_tlp(tlp)?;
            out.reserve(tlp.encoded_len());
            out.push(PROTO_TLP);
            out.extend_from_slice(&tlp.seq.to_be_bytes());
            out.push(tlp.header.fmt_type());
            out.push(0); // T9, TC, T8, Attr[2], LN, TH
            out.push((length >> 8) as u8); // TD, EP, Attr, AT zero
            out.push(length as u8);
            match &tlp.header {
                TlpHeader::MRd { req, address, .. } | TlpHeader::MWr { req, address } => {
                    push_request(out, req);
                    push_address(out, *address);
                }
                TlpHeader::CfgRd0 {
                    req,
                    target,
                    offset,
                    ..
                }
                | TlpHeader::CfgWr0 {
                    req,
                    target,
                    offset,
                } => {
                    push_request(out, req);
                    out.extend_from_slice(&id_bytes(*target));
                    out.extend_from_slice(&offset.to_be_bytes());
                }
                TlpHeader::CplD { cpl } | TlpHeader::Cpl { cpl, .. } => push_completion(out, cpl),
            }
            out.extend_from_slice(&tlp.payload);
            let lcrc = crc.lcrc32(&out[start + 1..]);
            out.extend_from_slice(&lcrc.to_le_bytes());
        }
    }
    debug_assert_eq!(out.len() - start, frame.encoded_len());
    Ok(out.len() - start)
}

/// The total length of the frame that starts `buf`, known once its first
/// [`PREFIX_LEN`] (7) bytes are there — the way warp-pipe's receiver reads 7 bytes
/// and then the rest. `Ok(None)`: fewer than 7 bytes. A bad protocol byte or a TLP
/// prefix is an error. Does not check the maximum payload ([`Decoder`] does).
pub fn frame_len(buf: &[u8]) -> Result<Option<usize>, FrameDecodeError> {
    match buf.first() {
        None => Ok(None),
        Some(&PROTO_DLLP) => Ok((buf.len() >= DLLP_FRAME_LEN).then_some(DLLP_FRAME_LEN)),
        Some(&PROTO_TLP) => match tlp_shape(buf)? {
            None => Ok(None),
            Some(shape) => Ok(Some(shape.frame_len)),
        },
        Some(&value) => Err(FrameDecodeError::BadProtocol { value }),
    }
}

/// What the first 7 bytes of a TLP frame say about it.
struct TlpShape {
    fmt_type: u8,
    seq: u16,
    length_field: u16,
    header_len: usize,
    payload_len: usize,
    frame_len: usize,
}

/// Reads Fmt and Length (frame bytes 3, 5 and 6). `Ok(None)`: fewer than 7 bytes.
fn tlp_shape(buf: &[u8]) -> Result<Option<TlpShape>, FrameDecodeError> {
    let Some(&[_, s0, s1, fmt_type, _, l0, l1]) = buf.get(..PREFIX_LEN) else {
        return Ok(None);
    };
    // The high nibble of the first sequence byte is reserved (warp-pipe's own MWr
    // leaves it uninitialised): ignored.
    let seq = u16::from_be_bytes([s0 & 0x0F, s1]);
    // Length is bits 1:0 of header byte 2 and all of byte 3; the other bits of byte
    // 2 (TD, EP, Attr, AT) are ignored like the rest of byte 1.
    let length_field = u16::from_be_bytes([l0 & 3, l1]);
    let fmt = fmt_type >> 5;
    if fmt > 3 {
        return Err(FrameDecodeError::UnsupportedTlpType {
            value: fmt_type,
            seq,
            frame_len: None,
        });
    }
    let header_len = if fmt & 1 != 0 { 16 } else { 12 };
    let payload_len = if fmt & 2 != 0 {
        usize::from(length_dw(length_field)) * 4
    } else {
        0
    };
    Ok(Some(TlpShape {
        fmt_type,
        seq,
        length_field,
        header_len,
        payload_len,
        frame_len: TLP_OVERHEAD + header_len + payload_len,
    }))
}

/// The number of DWs a 10-bit Length field announces (0 means 1024).
fn length_dw(field: u16) -> u16 {
    if field == 0 { 1024 } else { field }
}

/// An incremental decoder for a byte stream (TCP) of Warp Pipe frames.
///
/// The caller owns the buffer: it appends what it receives and calls
/// [`Decoder::decode`], which either asks for more (`Ok(None)`), returns the first
/// frame and how many bytes it took, or rejects the first frame. The decoder
/// allocates only the payload of a frame it returns, after the frame was received
/// whole and passed its checks, and never more than its maximum payload (at most
/// [`MAX_PAYLOAD`]).
///
/// Fields warp-pipe neither sets nor reads are ignored (see the
/// [module documentation](super)); the decoder does not track sequence numbers (that
/// is the data link layer's job).
#[derive(Debug, Clone)]
pub struct Decoder {
    crc: CrcKind,
    max_payload: usize,
    needed: usize,
}

impl Decoder {
    /// A decoder checking CRCs with `crc` and accepting payloads up to
    /// [`MAX_PAYLOAD`] (4096 bytes, the most a Length field can announce).
    pub fn new(crc: CrcKind) -> Self {
        Self::with_max_payload(crc, MAX_PAYLOAD)
    }

    /// A decoder that refuses TLPs announcing more than `max_payload` bytes of data
    /// (like PCIe's Max_Payload_Size) with [`FrameDecodeError::BadLength`].
    /// `max_payload` above [`MAX_PAYLOAD`] means [`MAX_PAYLOAD`].
    pub fn with_max_payload(crc: CrcKind, max_payload: usize) -> Self {
        Decoder {
            crc,
            max_payload: max_payload.min(MAX_PAYLOAD),
            needed: PREFIX_LEN,
        }
    }

    /// The CRC implementation in use.
    pub fn crc_kind(&self) -> CrcKind {
        self.crc
    }

    /// The largest payload accepted, in bytes.
    pub fn max_payload(&self) -> usize {
        self.max_payload
    }

    /// How many bytes the last [`Decoder::decode`] that returned `Ok(None)` needed in
    /// all: 7 while the length of the frame at the start of the buffer is unknown,
    /// then that length. A reader can receive until its buffer holds this many bytes.
    pub fn needed(&self) -> usize {
        self.needed
    }

    /// Decodes the frame at the start of `buf`.
    ///
    /// * `Ok(Some((frame, n)))`: the first `n` bytes of `buf` were `frame`.
    /// * `Ok(None)`: `buf` is a prefix of a frame that may still be valid; call again
    ///   with more bytes (at least [`Decoder::needed`] in all).
    /// * `Err(e)`: the first frame is invalid; see [`FrameDecodeError::frame_len`] for
    ///   whether and how to go on. Errors are reported as soon as the bytes that show
    ///   them have arrived (protocol byte: 1 byte; Fmt and Length: 7 bytes).
    ///
    /// Never panics, whatever `buf` holds.
    pub fn decode(&mut self, buf: &[u8]) -> Result<Option<(Frame, usize)>, FrameDecodeError> {
        let Some(&proto) = buf.first() else {
            self.needed = PREFIX_LEN;
            return Ok(None);
        };
        let frame = match proto {
            PROTO_DLLP => {
                let Some(&[_, b0, b1, b2, b3, c0, c1]) = buf.get(..DLLP_FRAME_LEN) else {
                    self.needed = DLLP_FRAME_LEN;
                    return Ok(None);
                };
                let dllp = self.decode_dllp([b0, b1, b2, b3], u16::from_le_bytes([c0, c1]))?;
                (Frame::Dllp(dllp), DLLP_FRAME_LEN)
            }
            PROTO_TLP => {
                let Some(shape) = tlp_shape(buf)? else {
                    self.needed = PREFIX_LEN;
                    return Ok(None);
                };
                if shape.payload_len > self.max_payload {
                    return Err(FrameDecodeError::BadLength {
                        field: shape.length_field,
                        bytes: shape.payload_len,
                        max: self.max_payload,
                        frame_len: shape.frame_len,
                    });
                }
                let Some(bytes) = buf.get(..shape.frame_len) else {
                    self.needed = shape.frame_len;
                    return Ok(None);
                };
                (Frame::Tlp(self.decode_tlp(bytes, &shape)?), shape.frame_len)
            }
            value => return Err(FrameDecodeError::BadProtocol { value }),
        };
        self.needed = PREFIX_LEN;
        Ok(Some(frame))
    }

    fn decode_dllp(&self, body: [u8; 4], received: u16) -> Result<Dllp, FrameDecodeError> {
        // Like warp-pipe: the CRC first, then the type.
        let computed = self.crc.crc16(&body);
        if computed != received {
            return Err(FrameDecodeError::BadDllpCrc { received, computed });
        }
        // Byte 1 and the high nibble of byte 2 are reserved: ignored.
        let seq = u16::from_be_bytes([body[2] & 0x0F, body[3]]);
        match body[0] {
            DLLP_ACK => Ok(Dllp::Ack { seq }),
            DLLP_NAK => Ok(Dllp::Nak { seq }),
            DLLP_NOP => Ok(Dllp::Nop),
            value => Err(FrameDecodeError::UnsupportedDllpType { value }),
        }
    }

    /// `bytes` is the whole frame, `shape.frame_len` long.
    fn decode_tlp(&self, bytes: &[u8], shape: &TlpShape) -> Result<Tlp, FrameDecodeError> {
        let Some((covered, lcrc)) = bytes.get(1..).and_then(|b| b.split_last_chunk::<4>()) else {
            // Unreachable: a TLP frame is at least 19 bytes long.
            return Err(FrameDecodeError::UnsupportedTlpType {
                value: shape.fmt_type,
                seq: shape.seq,
                frame_len: None,
            });
        };
        let received = u32::from_le_bytes(*lcrc);
        let computed = self.crc.lcrc32(covered);
        if computed != received {
            return Err(FrameDecodeError::BadLcrc {
                seq: shape.seq,
                received,
                computed,
                frame_len: shape.frame_len,
            });
        }
        // covered = seq (2) + header (12 or 16) + payload.
        let (header, payload) = covered[2..].split_at(shape.header_len);
        let unsupported = || FrameDecodeError::UnsupportedTlpType {
            value: shape.fmt_type,
            seq: shape.seq,
            frame_len: Some(shape.frame_len),
        };
        let length_dw = length_dw(shape.length_field);
        let header = match shape.fmt_type {
            fmt_type::MRD32 | fmt_type::MRD64 => TlpHeader::MRd {
                req: request(header),
                address: address(header),
                length_dw,
            },
            fmt_type::MWR32 | fmt_type::MWR64 => TlpHeader::MWr {
                req: request(header),
                address: address(header),
            },
            fmt_type::CFGRD0 => TlpHeader::CfgRd0 {
                req: request(header),
                target: id_at(header, 8),
                offset: u16::from_be_bytes([header[10], header[11] & !3]),
                length_dw,
            },
            fmt_type::CFGWR0 => TlpHeader::CfgWr0 {
                req: request(header),
                target: id_at(header, 8),
                offset: u16::from_be_bytes([header[10], header[11] & !3]),
            },
            fmt_type::CPLD => TlpHeader::CplD {
                cpl: completion(header),
            },
            fmt_type::CPL => TlpHeader::Cpl {
                cpl: completion(header),
                length_dw,
            },
            _ => return Err(unsupported()),
        };
        Ok(Tlp {
            seq: shape.seq,
            header,
            payload: payload.to_vec(),
        })
    }
}

/// `header` is 12 or 16 bytes long, so every index below 12 is in range.
fn id_at(header: &[u8], at: usize) -> PcieId {
    PcieId(u16::from_be_bytes([header[at], header[at + 1]]))
}

fn request(header: &[u8]) -> RequestHeader {
    RequestHeader {
        requester: id_at(header, 4),
        tag: header[6],
        first_be: header[7] & 0x0F,
        last_be: header[7] >> 4,
    }
}

/// The address of a 3DW (bytes 8..12) or 4DW (bytes 8..16) memory request, big-endian;
/// the low 2 bits (reserved, PCIe's PH field) are ignored.
fn address(header: &[u8]) -> u64 {
    let raw = header[8..]
        .iter()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    raw & !3
}

fn completion(header: &[u8]) -> CompletionHeader {
    let byte_count = u16::from_be_bytes([header[6] & 0x0F, header[7]]);
    CompletionHeader {
        completer: id_at(header, 4),
        status: header[6] >> 5,
        bcm: header[6] & 0x10 != 0,
        byte_count: if byte_count == 0 { 4096 } else { byte_count },
        requester: id_at(header, 8),
        tag: header[10],
        // Bit 7 is reserved: ignored.
        lower_address: header[11] & 0x7F,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mrd(address: u64) -> Frame {
        Frame::Tlp(Tlp {
            seq: 0xABC,
            header: TlpHeader::MRd {
                req: RequestHeader {
                    requester: PcieId::new(1, 2, 3),
                    tag: 7,
                    first_be: 0xF,
                    last_be: 0x3,
                },
                address,
                length_dw: 1024,
            },
            payload: Vec::new(),
        })
    }

    #[test]
    fn mrd_round_trip_3dw_and_4dw() {
        for (address, len) in [(0xFFFF_FFFC, 19), (0x1_0000_0000, 23)] {
            let frame = mrd(address);
            let mut out = Vec::new();
            assert_eq!(encode(&frame, CrcKind::Table, &mut out), Ok(len));
            assert_eq!(frame_len(&out), Ok(Some(len)));
            let got = Decoder::new(CrcKind::Bitwise).decode(&out).unwrap();
            assert_eq!(got, Some((frame, len)));
        }
    }

    #[test]
    fn encode_refuses_out_of_range_fields_and_leaves_out_alone() {
        let mut out = vec![0xEE];
        let bad = Frame::Dllp(Dllp::Ack { seq: 0x1000 });
        let err = encode(&bad, CrcKind::Fast, &mut out).unwrap_err();
        assert!(err.to_string().contains("seq = 0x1000"), "{err}");
        let Frame::Tlp(mut tlp) = mrd(0x1002) else {
            unreachable!()
        };
        assert!(encode(&Frame::Tlp(tlp.clone()), CrcKind::Fast, &mut out).is_err());
        tlp.header = TlpHeader::MWr {
            req: RequestHeader::default(),
            address: 0x1000,
        };
        tlp.payload = vec![0; 6];
        let err = encode(&Frame::Tlp(tlp), CrcKind::Fast, &mut out).unwrap_err();
        assert!(err.to_string().contains("6-byte payload"), "{err}");
        assert_eq!(out, [0xEE]);
    }

    #[test]
    fn pcie_id_fields() {
        let id = PcieId::new(0xAB, 0x1F, 7);
        assert_eq!(id.0, 0xABFF);
        assert_eq!((id.bus(), id.device(), id.function()), (0xAB, 0x1F, 7));
    }
}
