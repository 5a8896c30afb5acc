//! Decimation and scaling (`-o -f -O -F`): [`ScaleParams`].

/// Decimation and scaling (`-o -f -O -F`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScaleParams {
    /// Decimation offset, o.
    pub offset: usize,
    /// Decimation factor, f ≥ 1.
    pub factor: usize,
    /// Scale offset, O.
    pub scale_offset: f64,
    /// Scale factor, F.
    pub scale_factor: f64,
}

impl Default for ScaleParams {
    fn default() -> ScaleParams {
        ScaleParams {
            offset: 0,
            factor: 1,
            scale_offset: 0.0,
            scale_factor: 1.0,
        }
    }
}
