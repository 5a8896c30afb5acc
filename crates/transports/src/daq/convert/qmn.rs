//! The fixed-point formats of the samples: [`Qmn`] and the two the original uses.

/// A fixed-point format: `m` integer bits, `n` fraction bits, signed or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qmn {
    /// Integer bits, m.
    pub int_bits: u32,
    /// Fraction bits, n.
    pub frac_bits: u32,
    /// Two's complement.
    pub signed: bool,
}

/// Magnitude: Q1.15 unsigned, range [0, 2).
pub const Q1_15_UNSIGNED: Qmn = Qmn {
    int_bits: 1,
    frac_bits: 15,
    signed: false,
};

/// Phase: Q3.13 signed, range [−4, 4).
pub const Q3_13_SIGNED: Qmn = Qmn {
    int_bits: 3,
    frac_bits: 13,
    signed: true,
};
