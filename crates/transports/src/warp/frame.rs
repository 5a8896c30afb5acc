//! The typed frames: what a [`Frame`] can say, independent of bytes.
//!
//! Field widths follow the wire: a value that does not fit its field is refused by
//! [`encode`](super::encode) with [`FrameEncodeError`](super::FrameEncodeError), never
//! truncated.

/// One frame of the Warp Pipe stream.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Frame {
    /// Protocol byte 2: a data link layer packet.
    Dllp(Dllp),
    /// Protocol byte 3: a transaction layer packet with its sequence number and LCRC.
    Tlp(Tlp),
}

impl Frame {
    /// The number of bytes [`encode`](super::encode) writes for this frame, protocol
    /// byte and checksum included (for a TLP whose payload is of a valid length).
    pub fn encoded_len(&self) -> usize {
        match self {
            Frame::Dllp(_) => super::layout::DLLP_FRAME_LEN,
            Frame::Tlp(tlp) => tlp.encoded_len(),
        }
    }
}

/// A data link layer packet. warp-pipe sends ACK and NAK (one per received TLP) and
/// logs any other type; NOP is part of PCIe and decoded here, but warp-pipe never
/// sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dllp {
    /// Type `0x00`: the TLP with this 12-bit sequence number arrived intact.
    Ack {
        /// Sequence number, `0..=0xFFF`.
        seq: u16,
    },
    /// Type `0x10`: a TLP arrived with a bad LCRC. warp-pipe puts the sequence number
    /// of the *bad* TLP here (PCIe would name the last good one).
    Nak {
        /// Sequence number, `0..=0xFFF`.
        seq: u16,
    },
    /// Type `0x31`: no operation. Encoded with zero contents; contents are ignored on
    /// decode.
    Nop,
}

/// A transaction layer packet as carried by Warp Pipe: sequence number, header and
/// payload (the LCRC is computed by the codec).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tlp {
    /// The data link layer sequence number, `0..=0xFFF`. warp-pipe counts from 1 per
    /// connection and wraps modulo 4096.
    pub seq: u16,
    /// The header: which kind of TLP and its fields.
    pub header: TlpHeader,
    /// The data. Must be empty for [`TlpHeader::MRd`], [`TlpHeader::CfgRd0`] and
    /// [`TlpHeader::Cpl`]; for the others a whole number of DWs (4-byte words) from 1
    /// to 1024, i.e. 4 to 4096 bytes. The Length field of the header is derived from
    /// it.
    pub payload: Vec<u8>,
}

impl Tlp {
    /// The number of bytes [`encode`](super::encode) writes for this TLP.
    pub fn encoded_len(&self) -> usize {
        super::layout::TLP_OVERHEAD + self.header.header_len() + self.payload.len()
    }
}

/// A PCIe requester or completer ID, as the two bytes sent (big-endian: bus first).
///
/// PCIe splits the low byte into a 5-bit device and a 3-bit function number, which is
/// what [`PcieId::new`], [`PcieId::device`] and [`PcieId::function`] do. warp-pipe's
/// `union pcie_id` splits it differently (7-bit `dev`, 1-bit `func`), but only ever
/// sends ID 0, and the bytes are the same either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct PcieId(pub u16);

impl PcieId {
    /// Bus, device (`0..32`) and function (`0..8`) numbers as PCIe defines them;
    /// higher bits of `device` and `function` are dropped.
    pub const fn new(bus: u8, device: u8, function: u8) -> Self {
        PcieId(((bus as u16) << 8) | (((device & 0x1F) as u16) << 3) | (function & 7) as u16)
    }

    /// The bus number (first byte on the wire).
    pub const fn bus(self) -> u8 {
        (self.0 >> 8) as u8
    }

    /// The device number in PCIe's split of the second byte (bits 7:3).
    pub const fn device(self) -> u8 {
        (self.0 as u8) >> 3
    }

    /// The function number in PCIe's split of the second byte (bits 2:0).
    pub const fn function(self) -> u8 {
        (self.0 as u8) & 7
    }
}

/// The fields common to memory and configuration requests (header bytes 4 to 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RequestHeader {
    /// Who asks; completions are routed back to this ID. warp-pipe sends 0.
    pub requester: PcieId,
    /// Matches completions to reads. The field has 8 bits; warp-pipe allocates only
    /// 5-bit tags (`0..32`, wrapping) and indexes a 32-entry table with the tag of a
    /// received completion.
    pub tag: u8,
    /// Byte enables of the first DW, `0..=0xF`; bit 0 enables the lowest-addressed byte.
    pub first_be: u8,
    /// Byte enables of the last DW, `0..=0xF`; 0 when the request is one DW long.
    pub last_be: u8,
}

/// The fields of a completion (header bytes 4 to 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CompletionHeader {
    /// Who completes. warp-pipe sends 0.
    pub completer: PcieId,
    /// Completion status, 3 bits: [`CompletionHeader::SC`], [`CompletionHeader::UR`],
    /// [`CompletionHeader::CRS`], [`CompletionHeader::CA`]. warp-pipe always sends
    /// 0 (SC), also in the data-less completion that reports a failed read.
    pub status: u8,
    /// Byte Count Modified (PCI-X legacy); warp-pipe sends `false`.
    pub bcm: bool,
    /// Bytes left to transfer, `1..=4096` (4096 is sent as 0). warp-pipe sends the
    /// request's length in bytes as its byte enables describe it, and reads the field
    /// back as the length of the data.
    pub byte_count: u16,
    /// The requester ID copied from the request. warp-pipe sends 0.
    pub requester: PcieId,
    /// The tag copied from the request.
    pub tag: u8,
    /// The low 7 bits of the address of the first byte returned, `0..=0x7F`. warp-pipe
    /// sends 0.
    pub lower_address: u8,
}

impl CompletionHeader {
    /// Status: Successful Completion.
    pub const SC: u8 = 0;
    /// Status: Unsupported Request.
    pub const UR: u8 = 1;
    /// Status: Configuration Request Retry Status.
    pub const CRS: u8 = 2;
    /// Status: Completer Abort.
    pub const CA: u8 = 4;
}

/// The Fmt/Type byte (header byte 0) of each supported TLP kind.
pub mod fmt_type {
    /// Memory read, 3DW header (32-bit address).
    pub const MRD32: u8 = 0x00;
    /// Memory read, 4DW header (64-bit address).
    pub const MRD64: u8 = 0x20;
    /// Memory write, 3DW header.
    pub const MWR32: u8 = 0x40;
    /// Memory write, 4DW header.
    pub const MWR64: u8 = 0x60;
    /// Configuration read, type 0.
    pub const CFGRD0: u8 = 0x04;
    /// Configuration write, type 0.
    pub const CFGWR0: u8 = 0x44;
    /// Completion without data.
    pub const CPL: u8 = 0x0A;
    /// Completion with data.
    pub const CPLD: u8 = 0x4A;
}

/// The header of a TLP: its kind and the kind's fields. The Fmt field (3DW or 4DW,
/// with or without data) and the Length field are not stored: the codec derives them
/// from the kind, the address and the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TlpHeader {
    /// Memory read request (non-posted, answered by [`TlpHeader::CplD`] or
    /// [`TlpHeader::Cpl`]). No payload.
    MRd {
        /// Requester, tag and byte enables.
        req: RequestHeader,
        /// DW-aligned address (low 2 bits zero). Below 4 GiB it goes in a 3DW
        /// header, from 4 GiB up in a 4DW header.
        address: u64,
        /// Number of DWs to read, `1..=1024` (1024 is sent as 0).
        length_dw: u16,
    },
    /// Memory write request (posted: nothing answers it). The payload is the data.
    MWr {
        /// Requester, tag and byte enables.
        req: RequestHeader,
        /// DW-aligned address; 3DW header below 4 GiB, 4DW from 4 GiB up.
        address: u64,
    },
    /// Type 0 configuration read (always a 3DW header). No payload.
    CfgRd0 {
        /// Requester, tag and byte enables.
        req: RequestHeader,
        /// Header bytes 8 and 9: the target's ID in PCIe. warp-pipe puts bits 31:16
        /// of its "address" here, i.e. 0 for any configuration-space offset.
        target: PcieId,
        /// Header bytes 10 and 11 as a big-endian number, DW-aligned: the register's
        /// byte offset (PCIe's extended register and register numbers are its bits
        /// 11:2; bits 15:12 are reserved in PCIe and bits 15:12 of the address in
        /// warp-pipe).
        offset: u16,
        /// Number of DWs to read, `1..=1024` (PCIe allows only 1; warp-pipe any).
        length_dw: u16,
    },
    /// Type 0 configuration write (always a 3DW header). The payload is the data.
    CfgWr0 {
        /// Requester, tag and byte enables.
        req: RequestHeader,
        /// The target's ID (see [`TlpHeader::CfgRd0`]).
        target: PcieId,
        /// The register's byte offset, DW-aligned (see [`TlpHeader::CfgRd0`]).
        offset: u16,
    },
    /// Completion with data. The payload is the data.
    CplD {
        /// The completion fields.
        cpl: CompletionHeader,
    },
    /// Completion without data. warp-pipe sends it, with status SC, when the read
    /// callback failed; PCIe uses it for write completions and errors.
    Cpl {
        /// The completion fields.
        cpl: CompletionHeader,
        /// The Length field, `1..=1024` (1024 sent as 0). PCIe reserves it in a
        /// data-less completion; warp-pipe copies the request's Length into it.
        length_dw: u16,
    },
}

impl TlpHeader {
    /// The Fmt/Type byte (header byte 0) this header is sent with.
    pub fn fmt_type(&self) -> u8 {
        use fmt_type::*;
        match self {
            TlpHeader::MRd { address, .. } if needs_4dw(*address) => MRD64,
            TlpHeader::MRd { .. } => MRD32,
            TlpHeader::MWr { address, .. } if needs_4dw(*address) => MWR64,
            TlpHeader::MWr { .. } => MWR32,
            TlpHeader::CfgRd0 { .. } => CFGRD0,
            TlpHeader::CfgWr0 { .. } => CFGWR0,
            TlpHeader::CplD { .. } => CPLD,
            TlpHeader::Cpl { .. } => CPL,
        }
    }

    /// Whether this kind of TLP carries a payload (Fmt bit 1).
    pub fn has_data(&self) -> bool {
        matches!(
            self,
            TlpHeader::MWr { .. } | TlpHeader::CfgWr0 { .. } | TlpHeader::CplD { .. }
        )
    }

    /// The header length in bytes: 16 for a memory request from 4 GiB up, else 12.
    pub fn header_len(&self) -> usize {
        match self {
            TlpHeader::MRd { address, .. } | TlpHeader::MWr { address, .. }
                if needs_4dw(*address) =>
            {
                16
            }
            _ => 12,
        }
    }
}

/// Whether an address needs a 4DW header (it is 4 GiB or above), the rule of
/// warp-pipe's `tlp_req_set_addr` and of PCIe.
pub const fn needs_4dw(address: u64) -> bool {
    address >= 1 << 32
}
