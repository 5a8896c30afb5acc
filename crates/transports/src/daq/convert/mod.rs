//! Conversion kernels.
