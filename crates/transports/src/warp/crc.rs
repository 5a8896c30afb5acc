//! The two checksums of the Warp Pipe wire format, each in three interchangeable
//! implementations selected by [`CrcKind`].
//!
//! * **LCRC32** protects a TLP: reflected polynomial `0xEDB8_8320`, initial value
//!   `0xFFFF_FFFF`, result inverted, sent little-endian. This is the common CRC-32
//!   (ISO-HDLC, the one of zlib and Ethernet): check value `"123456789"` →
//!   `0xCBF4_3926`.
//! * **CRC16** protects a DLLP: reflected polynomial `0xD008` (PCIe's `0x100B` with
//!   the bit order reversed), initial value `0xFFFF`, result inverted, sent
//!   little-endian. Check value `"123456789"` → `0x0A3D` (computed with
//!   [`bitwise::crc16`]; the catalogues of named CRCs do not list this one).
//!
//! warp-pipe (`src/crc.c`) computes both with one routine, `crc32p`, that shifts the
//! register eight times per byte. Here:
//!
//! | [`CrcKind`] | LCRC32                                  | CRC16                      |
//! |-------------|-----------------------------------------|----------------------------|
//! | `Bitwise`   | 8 shifts per byte, like `crc32p`        | the same                   |
//! | `Table`     | one 256-entry table lookup per byte     | the same                   |
//! | `Fast`      | `crc32fast` (PCLMULQDQ / ARM CRC32 when the CPU has them) | slicing-by-8 tables |
//!
//! All tables are computed at compile time by `const fn`s. The three kinds give the
//! same results on every input (unit tests here, property tests in
//! `tests/warp_codec.rs`); they differ only in speed (`benches/crc.rs`).

/// The LCRC32 polynomial in reflected (LSB-first) form, as `TLP_LCRC32_POLY` in
/// warp-pipe's `crc.h`.
pub const LCRC32_POLY: u32 = 0xEDB8_8320;

/// The DLLP CRC16 polynomial in reflected (LSB-first) form, as `DLLP_CRC16_POLY` in
/// warp-pipe's `crc.h`.
pub const CRC16_POLY: u16 = 0xD008;

/// LCRC32 of `"123456789"`: the standard CRC-32 check value.
pub const LCRC32_CHECK: u32 = 0xCBF4_3926;

/// DLLP CRC16 of `"123456789"`, as computed by [`bitwise::crc16`].
pub const CRC16_CHECK: u16 = 0x0A3D;

/// Which implementation computes the checksums (`--crc bitwise|table|fast`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CrcKind {
    /// Eight conditional shifts per byte, the algorithm of warp-pipe's `crc32p`.
    Bitwise,
    /// One lookup per byte in a 256-entry table computed at compile time.
    Table,
    /// The fastest available: `crc32fast` (carry-less multiplication where the CPU
    /// has it) for LCRC32, slicing-by-8 tables for CRC16.
    #[default]
    Fast,
}

xferbench_params::choices!(CrcKind {
    Bitwise => "bitwise": "warp-pipe's bit-at-a-time loop",
    Table => "table": "table-driven, one byte per step",
    Fast => "fast": "hardware-accelerated (crc32fast) LCRC32, slicing-by-8 CRC16",
});

/// `crc`: which implementation computes the checksums (slowest first).
pub const CRC: crate::ParamDef = crate::ParamDef::choice(
    "crc",
    <CrcKind as xferbench_params::Choices>::CHOICES,
    "fast",
    "the CRC implementation for LCRC32 and CRC16",
);

impl CrcKind {
    /// The LCRC32 of `data`: the final value, already inverted, as sent (little-endian)
    /// after a TLP.
    #[inline]
    pub fn lcrc32(self, data: &[u8]) -> u32 {
        match self {
            CrcKind::Bitwise => bitwise::lcrc32(data),
            CrcKind::Table => table::lcrc32(data),
            CrcKind::Fast => fast::lcrc32(data),
        }
    }

    /// The DLLP CRC16 of `data`: the final value, already inverted, as sent
    /// (little-endian) after a DLLP.
    #[inline]
    pub fn crc16(self, data: &[u8]) -> u16 {
        match self {
            CrcKind::Bitwise => bitwise::crc16(data),
            CrcKind::Table => table::crc16(data),
            CrcKind::Fast => fast::crc16(data),
        }
    }
}

/// The reference: eight conditional shifts per byte.
pub mod bitwise {
    use super::{CRC16_POLY, LCRC32_POLY};

    /// Runs the reflected CRC register `crc` over `data` with polynomial `poly`, one
    /// bit at a time; neither the initial value nor the final inversion is applied.
    /// Works for any register width up to 32 bits as long as `crc` and `poly` fit in
    /// it (a 16-bit register never grows past 16 bits: each step shifts right and
    /// XORs a 16-bit polynomial). Named so that a profile's symbol (which may lose its
    /// module path when inlined) still reads as a CRC function.
    #[inline]
    pub fn crc_update(mut crc: u32, poly: u32, data: &[u8]) -> u32 {
        for &byte in data {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                let lsb = crc & 1;
                crc >>= 1;
                if lsb != 0 {
                    crc ^= poly;
                }
            }
        }
        crc
    }

    /// LCRC32 of `data` (initial value `!0`, inverted result).
    pub fn lcrc32(data: &[u8]) -> u32 {
        !crc_update(!0, LCRC32_POLY, data)
    }

    /// DLLP CRC16 of `data` (initial value `0xFFFF`, inverted result).
    pub fn crc16(data: &[u8]) -> u16 {
        // The register never exceeds 16 bits (see `update`), so the cast keeps it all.
        !(crc_update(0xFFFF, u32::from(CRC16_POLY), data) as u16)
    }
}

/// One table lookup per byte.
pub mod table {
    use super::{CRC16_POLY, LCRC32_POLY};

    /// The 256-entry table of a reflected CRC: entry `i` is the register after
    /// shifting the byte `i` through it alone (eight bitwise steps from `i`).
    pub const fn make_table(poly: u32) -> [u32; 256] {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut crc = i as u32;
            let mut bit = 0;
            while bit < 8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ poly
                } else {
                    crc >> 1
                };
                bit += 1;
            }
            table[i] = crc;
            i += 1;
        }
        table
    }

    const fn narrow(wide: [u32; 256]) -> [u16; 256] {
        let mut table = [0u16; 256];
        let mut i = 0;
        while i < 256 {
            // Entries of a table made from a 16-bit polynomial fit in 16 bits.
            table[i] = wide[i] as u16;
            i += 1;
        }
        table
    }

    /// The LCRC32 table.
    pub static LCRC32_TABLE: [u32; 256] = make_table(LCRC32_POLY);

    /// The DLLP CRC16 table.
    pub static CRC16_TABLE: [u16; 256] = narrow(make_table(CRC16_POLY as u32));

    /// LCRC32 of `data`.
    pub fn lcrc32(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in data {
            crc = (crc >> 8) ^ LCRC32_TABLE[usize::from((crc as u8) ^ byte)];
        }
        !crc
    }

    /// DLLP CRC16 of `data`.
    pub fn crc16(data: &[u8]) -> u16 {
        let mut crc = 0xFFFFu16;
        for &byte in data {
            crc = (crc >> 8) ^ CRC16_TABLE[usize::from((crc as u8) ^ byte)];
        }
        !crc
    }
}

/// The fast paths.
pub mod fast {
    use super::table::CRC16_TABLE;

    /// LCRC32 of `data` by `crc32fast`, which picks carry-less multiplication
    /// (x86 PCLMULQDQ) or the ARMv8 CRC32 instructions at run time when the CPU has
    /// them and falls back to slicing-by-16 tables. warp-pipe's LCRC32 is exactly the
    /// CRC-32 that crate computes.
    #[inline]
    pub fn lcrc32(data: &[u8]) -> u32 {
        crc32fast::hash(data)
    }

    const fn slicing_tables() -> [[u16; 256]; 8] {
        let mut t = [[0u16; 256]; 8];
        t[0] = CRC16_TABLE;
        let mut k = 1;
        while k < 8 {
            let mut i = 0;
            while i < 256 {
                // Table k: the register after byte i followed by k zero bytes.
                let prev = t[k - 1][i];
                t[k][i] = (prev >> 8) ^ t[0][(prev & 0xFF) as usize];
                i += 1;
            }
            k += 1;
        }
        t
    }

    /// Slicing-by-8 tables for the DLLP CRC16: `CRC16_SLICES[k][i]` is the register
    /// after the byte `i` and then `k` zero bytes.
    pub static CRC16_SLICES: [[u16; 256]; 8] = slicing_tables();

    /// DLLP CRC16 of `data`, eight bytes per step.
    pub fn crc16(data: &[u8]) -> u16 {
        let t = &CRC16_SLICES;
        let mut crc = 0xFFFFu16;
        let mut chunks = data.chunks_exact(8);
        for c in &mut chunks {
            // The 16-bit register overlaps the first two bytes of the chunk.
            let x = crc ^ u16::from_le_bytes([c[0], c[1]]);
            crc = t[7][usize::from(x as u8)]
                ^ t[6][usize::from(x >> 8)]
                ^ t[5][usize::from(c[2])]
                ^ t[4][usize::from(c[3])]
                ^ t[3][usize::from(c[4])]
                ^ t[2][usize::from(c[5])]
                ^ t[1][usize::from(c[6])]
                ^ t[0][usize::from(c[7])];
        }
        for &byte in chunks.remainder() {
            crc = (crc >> 8) ^ t[0][usize::from((crc as u8) ^ byte)];
        }
        !crc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECK_INPUT: &[u8] = b"123456789";

    #[test]
    fn lcrc32_check_value_every_kind() {
        for kind in CrcKind::ALL {
            assert_eq!(kind.lcrc32(CHECK_INPUT), LCRC32_CHECK, "{kind}");
        }
    }

    #[test]
    fn crc16_check_value_every_kind() {
        for kind in CrcKind::ALL {
            assert_eq!(kind.crc16(CHECK_INPUT), CRC16_CHECK, "{kind}");
        }
    }

    /// The expected values of warp-pipe's own `tests/test_crc.cc`: the LCRC of a TLP
    /// of 14 zero bytes (sequence number 0 and an all-zero 3DW MRd header) and the
    /// CRC16 of an ACK DLLP for sequence number 0 (4 zero bytes).
    #[test]
    fn warp_pipe_unit_test_values() {
        for kind in CrcKind::ALL {
            assert_eq!(kind.lcrc32(&[0; 14]), 0xD1BB_79C7, "{kind}");
            assert_eq!(kind.crc16(&[0; 4]), 0x62B3, "{kind}");
        }
    }

    #[test]
    fn empty_input() {
        for kind in CrcKind::ALL {
            assert_eq!(kind.lcrc32(&[]), 0, "{kind}");
            assert_eq!(kind.crc16(&[]), 0, "{kind}");
        }
    }

    #[test]
    fn kinds_agree_on_every_length_up_to_64() {
        let data: Vec<u8> = (0..64u32)
            .map(|i| (i.wrapping_mul(167) ^ 0x5A) as u8)
            .collect();
        for len in 0..=data.len() {
            let d = &data[..len];
            let (l, c) = (bitwise::lcrc32(d), bitwise::crc16(d));
            for kind in CrcKind::ALL {
                assert_eq!(kind.lcrc32(d), l, "{kind} len {len}");
                assert_eq!(kind.crc16(d), c, "{kind} len {len}");
            }
        }
    }

    #[test]
    fn tables_match_the_bitwise_register() {
        for i in 0..=255u8 {
            assert_eq!(
                table::LCRC32_TABLE[usize::from(i)],
                bitwise::crc_update(u32::from(i), LCRC32_POLY, &[0])
            );
            assert_eq!(
                u32::from(table::CRC16_TABLE[usize::from(i)]),
                bitwise::crc_update(u32::from(i), u32::from(CRC16_POLY), &[0])
            );
        }
    }

    #[test]
    fn parse_and_display() {
        for kind in CrcKind::ALL {
            assert_eq!(kind.to_string().parse::<CrcKind>(), Ok(kind));
        }
        assert_eq!("FAST".parse::<CrcKind>(), Ok(CrcKind::Fast));
        let err = "crc64".parse::<CrcKind>().unwrap_err();
        assert!(err.to_string().contains("\"crc64\""), "{err}");
    }
}
