//! The sizes and limits of the frame layout (see the module documentation of
//! [`warp`](super)): protocol bytes, frame and payload lengths, sequence numbers.

/// Protocol byte of a DLLP frame.
pub const PROTO_DLLP: u8 = 2;

/// Protocol byte of a TLP frame.
pub const PROTO_TLP: u8 = 3;

/// Length of a DLLP frame: protocol byte, 4 bytes, CRC16.
pub const DLLP_FRAME_LEN: usize = 7;

/// Bytes a receiver needs to know any frame's length (protocol byte, sequence number,
/// first 4 header bytes), as warp-pipe's receiver reads first.
pub const PREFIX_LEN: usize = 7;

/// The bytes of a TLP frame besides header and payload: protocol byte, sequence
/// number, LCRC.
pub const TLP_OVERHEAD: usize = 1 + 2 + 4;

/// The largest payload: 1024 DW. warp-pipe's `CLIENT_MAX_PACKET_DATA_SIZE`.
pub const MAX_PAYLOAD: usize = 4096;

/// The largest frame: a 4DW TLP with [`MAX_PAYLOAD`] bytes of data.
pub const MAX_FRAME_LEN: usize = TLP_OVERHEAD + 16 + MAX_PAYLOAD;

/// The largest sequence number (12 bits).
pub const MAX_SEQ: u16 = 0xFFF;
