//! The wire codec of Warp Pipe.
//!
//! [Warp Pipe](https://github.com/antmicro/warp-pipe) (Antmicro) connects simulated
//! PCIe devices and hosts — QEMU, Zephyr's `native_sim`, memory mocks — over a TCP
//! stream (port 2115 by default). Each side sends PCIe transaction layer packets
//! (TLPs: memory and configuration reads and writes, completions) wrapped the way the
//! PCIe data link layer wraps them (sequence number and LCRC), and data link layer
//! packets (DLLPs: ACK and NAK of each TLP). This module turns [`Frame`]s into those
//! bytes and back, byte for byte as warp-pipe's C library (`inc/warppipe/proto.h`,
//! `src/proto.c`, `src/crc.c`, `src/client.c`) does; the submodules [`mock`],
//! [`server`] and [`client`] build the memory mock and the requester on top of it.
//!
//! * [`crc`]: LCRC32 and the DLLP CRC16, each in three implementations ([`CrcKind`]).
//! * [`frame`]: the typed frames.
//! * [`codec`]: [`encode`], the incremental [`Decoder`] and the errors.
//! * [`mock`]: the memory mock's device and per-connection state machine.
//! * [`server`]: the mock's TCP server (event loop or thread per connection).
//! * [`client`]: the requester: enumeration, reads and writes, pipelined tags.
//!
//! # Frame layout
//!
//! Every frame starts with one protocol byte; all multi-byte header fields are
//! big-endian, the checksums little-endian. Bit 7 is a byte's most significant bit.
//!
//! ```text
//! DLLP frame, 7 bytes (frame offsets):
//!        0        1          2          3             4          5..=6
//!     +------+----------+----------+-------------+----------+------------+
//!     | 0x02 |   type   | reserved | 7:4 rsvd    | seq[7:0] | CRC16 (LE) |
//!     |      | 0x00 ACK |          | 3:0 seq     |          |            |
//!     |      | 0x10 NAK |          |   [11:8]    |          |            |
//!     |      | 0x31 NOP |   (bytes 2..=4: 0 in a NOP)       |            |
//!     +------+----------+----------+-------------+----------+------------+
//!             \______ CRC16 covers offsets 1..=4 _______/
//!
//! TLP frame, 7 + 12 or 16 + payload bytes (frame offsets):
//!        0        1..=2        3..=14 (3DW)      next           last 4
//!                              3..=18 (4DW)
//!     +------+-------------+-----------------+-------------+-------------+
//!     | 0x03 | 15:12 rsvd  | header          | payload     | LCRC32 (LE) |
//!     |      | 11:0 seq    |                 | 0..=4096 B  |             |
//!     +------+-------------+-----------------+-------------+-------------+
//!             \______ LCRC32 covers seq, header and payload ______/
//!
//! TLP header, bytes 0..4 (all kinds):
//!   0: Fmt[7:5] Type[4:0]       Fmt: bit 0 = 4DW header, bit 1 = has data;
//!                               4..7 (TLP prefix) is not supported
//!   1: T9 TC TC TC T8 Attr LN TH          (ignored, sent as 0)
//!   2: [7:2] TD EP Attr AT (ignored, 0) | Length[9:8]
//!   3: Length[7:0]              in DW, 0 means 1024; payload only if Fmt bit 1
//!
//! Requests (MRd, MWr, CfgRd0, CfgWr0), bytes 4..:
//!   4-5: requester ID   6: tag   7: last BE[7:4] | first BE[3:0]
//!   MRd/MWr 3DW (address < 4 GiB):  8-11: address[31:2], bits 1:0 reserved
//!   MRd/MWr 4DW (address >= 4 GiB): 8-15: address[63:2], bits 1:0 reserved
//!   CfgRd0/CfgWr0 (3DW only):       8-9: target ID   10-11: register offset
//!
//! Completions (Cpl, CplD; 3DW only), bytes 4..11:
//!   4-5: completer ID   6: status[7:5] BCM[4] byte count[11:8]   7: byte count[7:0]
//!   8-9: requester ID   10: tag   11: reserved[7] | lower address[6:0]
//! ```
//!
//! A receiver learns the length of any frame from its first 7 bytes (warp-pipe reads
//! 7 bytes, then the rest): see [`frame_len`] and [`Decoder::needed`].
//!
//! # Supported
//!
//! * DLLPs ACK, NAK, NOP.
//! * TLPs MRd (3DW and 4DW), MWr (posted; 3DW and 4DW), CfgRd0, CfgWr0, CplD, and Cpl
//!   (no data; warp-pipe's way of saying the read failed). The header is chosen like
//!   warp-pipe's `tlp_req_set_addr`: 4DW exactly when the address is 4 GiB or above.
//! * Payloads of 1 to 1024 DW (4096 bytes, warp-pipe's `CLIENT_MAX_PACKET_DATA_SIZE`
//!   and the most a Length field can say); [`Decoder::with_max_payload`] lowers the
//!   limit.
//! * Every [`CrcKind`] on both sides; they produce identical bytes.
//!
//! # Not supported
//!
//! * Other DLLPs (flow control, power management, vendor) and TLPs (MRdLk, IORd, IOWr,
//!   type 1 configuration, messages, atomics, TLP prefixes, 4DW completions or
//!   configuration requests): refused with [`FrameDecodeError::UnsupportedDllpType`]
//!   and [`FrameDecodeError::UnsupportedTlpType`], telling how long the frame is so
//!   the stream can go on. warp-pipe handles IORd/IOWr like memory requests and
//!   accepts flow-control DLLPs, but never sends either.
//! * Header fields warp-pipe neither sets nor reads — TC, TH, LN, the attributes, AT,
//!   EP, TD (so no ECRC), the reserved bits, the low 2 address bits, NOP contents —
//!   are sent as 0 and ignored when received. warp-pipe's own MWr sender leaves some
//!   of them uninitialised (`malloc`), so refusing non-zero values would refuse real
//!   traffic. Decoding then encoding therefore reproduces warp-pipe's frames exactly
//!   only where those bits were 0 (always, except for that MWr case), and a 4DW
//!   request for an address below 4 GiB is re-encoded with a 3DW header.
//! * Byte enables, byte counts and lower addresses are carried as given: the codec
//!   does not check them against each other or against the Length field.
//! * Nothing of the data link layer's protocol (replay, sequence tracking, ACK
//!   coalescing) or of warp-pipe's BAR and callback logic.
//!
//! # Faithful to the bytes, not to every PCIe rule
//!
//! warp-pipe's header bit-fields differ from PCIe in two places that do not change
//! what it sends (it sends those fields as 0): its `struct pcie_tlp` makes AT one bit
//! wide, shifting Attr, EP and TD one bit down in byte 2, and its `union pcie_id`
//! splits the low ID byte 7:1 (device:function) instead of 5:3. The checksums are
//! plain reflected CRCs ([`crc`]), not PCIe's bit-mapped ones.

pub mod client;
pub mod codec;
pub mod crc;
pub mod frame;
pub mod layout;
pub mod mock;
pub mod server;

pub use codec::{Decoder, FrameDecodeError, FrameEncodeError, encode, frame_len};
pub use crc::CrcKind;
pub use frame::{CompletionHeader, Dllp, Frame, PcieId, RequestHeader, Tlp, TlpHeader};
pub use layout::{
    DLLP_FRAME_LEN, MAX_FRAME_LEN, MAX_PAYLOAD, MAX_SEQ, PREFIX_LEN, PROTO_DLLP, PROTO_TLP,
    TLP_OVERHEAD,
};
