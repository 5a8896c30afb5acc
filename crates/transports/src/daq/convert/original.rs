//! The original conversion functions, as `sis8300drv_threads.c` (ed32eb3) writes
//! them: the same arithmetic in the same order, the division in `mn_2_double` and
//! `mn_2_float` (a `divsd`/`divss` per sample: the Q format reaches the loop as a
//! run-time value, so the compiler cannot turn the division into a multiply), and
//! every store volatile, as through the original's `volatile float *data`, so no
//! loop is vectorised.
//!
//! Two deliberate differences, both about memory safety:
//!
//! * `mn_2_double` wrote 8 bytes at a 4-byte stride into a `float` buffer, each
//!   store overwriting the next slot and the last overrunning the buffer. Here the
//!   double conversions store `f64` into an `f64` buffer.
//! * Indices are bounds-checked once per call (the output length), not per store.

use super::qmn::Qmn;
use super::scale::ScaleParams;
use std::hint::black_box;
use std::ptr::write_volatile;

fn out_len(raw: usize, p: &ScaleParams) -> usize {
    raw.saturating_sub(p.offset) / p.factor.max(1)
}

/// `mn_2_double(val, Qmn, &out)`: `x = val; if signed and x > 2^(m+n)/2 − 1 then
/// x −= 2^(m+n); x /= 2^n`.
#[inline(always)]
fn mn_2_double(val: u32, q: Qmn) -> f64 {
    let pow_2_frac_bits = (1u64 << q.frac_bits) as f64;
    let pow_2_frac_bits_int_bits = (1u64 << (q.int_bits + q.frac_bits)) as f64;
    let mut converted = val as f64;
    if q.signed && converted > pow_2_frac_bits_int_bits / 2.0 - 1.0 {
        converted -= pow_2_frac_bits_int_bits;
    }
    converted / pow_2_frac_bits
}

/// `mn_2_float`: the same in `float`; the comparison is in double, as the C
/// literals `2.0` and `1.0` make it.
#[inline(always)]
fn mn_2_float(val: u32, q: Qmn) -> f32 {
    let pow_2_frac_bits = (1u64 << q.frac_bits) as f32;
    let pow_2_frac_bits_int_bits = (1u64 << (q.int_bits + q.frac_bits)) as f32;
    let mut converted = val as f32;
    if q.signed && (converted as f64) > (pow_2_frac_bits_int_bits as f64) / 2.0 - 1.0 {
        converted -= pow_2_frac_bits_int_bits;
    }
    converted / pow_2_frac_bits
}

/// `func_decsca`: `data[j] = raw[j·f + o] * F + O` for `j < (n − o)/f`, in double,
/// stored as float.
pub fn decsca(raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize {
    let n = out_len(raw.len(), p);
    assert!(out.len() >= n && p.factor >= 1);
    let d = out.as_mut_ptr();
    for j in 0..n {
        let v = raw[j * p.factor + p.offset] as f64 * p.scale_factor + p.scale_offset;
        // SAFETY: j < n ≤ out.len().
        unsafe { write_volatile(d.add(j), v as f32) };
    }
    n
}

/// `func_dec`: `data[j] = raw[j·f + o]`.
pub fn dec(raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize {
    let n = out_len(raw.len(), p);
    assert!(out.len() >= n && p.factor >= 1);
    let d = out.as_mut_ptr();
    for j in 0..n {
        let v = raw[j * p.factor + p.offset] as f32;
        // SAFETY: j < n ≤ out.len().
        unsafe { write_volatile(d.add(j), v) };
    }
    n
}

/// `func_sca`: `data[j] = raw[j] * F + O` for every sample.
pub fn sca(raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize {
    assert!(out.len() >= raw.len());
    let d = out.as_mut_ptr();
    for (j, &r) in raw.iter().enumerate() {
        let v = r as f64 * p.scale_factor + p.scale_offset;
        // SAFETY: j < raw.len() ≤ out.len().
        unsafe { write_volatile(d.add(j), v as f32) };
    }
    raw.len()
}

/// `func_no_decsca`: `data[j] = raw[j]`.
pub fn no_decsca(raw: &[u16], out: &mut [f32]) -> usize {
    assert!(out.len() >= raw.len());
    let d = out.as_mut_ptr();
    for (j, &r) in raw.iter().enumerate() {
        // SAFETY: j < raw.len() ≤ out.len().
        unsafe { write_volatile(d.add(j), r as f32) };
    }
    raw.len()
}

/// `func_umn2double` / `func_smn2double`: `mn_2_double` per sample, into an `f64`
/// buffer.
pub fn mn2double(raw: &[u16], out: &mut [f64], q: Qmn) -> usize {
    assert!(out.len() >= raw.len());
    let q = black_box(q);
    let d = out.as_mut_ptr();
    for (j, &r) in raw.iter().enumerate() {
        // SAFETY: j < raw.len() ≤ out.len().
        unsafe { write_volatile(d.add(j), mn_2_double(r as u32, q)) };
    }
    raw.len()
}

/// `func_umn2float` / `func_smn2float`: `mn_2_float` per sample.
pub fn mn2float(raw: &[u16], out: &mut [f32], q: Qmn) -> usize {
    assert!(out.len() >= raw.len());
    let q = black_box(q);
    let d = out.as_mut_ptr();
    for (j, &r) in raw.iter().enumerate() {
        // SAFETY: j < raw.len() ≤ out.len().
        unsafe { write_volatile(d.add(j), mn_2_float(r as u32, q)) };
    }
    raw.len()
}

/// `func_writepatt`'s fill: byte `i` of the buffer is `i % 127` (`CHAR_MAX`).
pub fn write_pattern(raw: &mut [u16]) {
    // SAFETY: a byte view of exactly `raw`.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(raw.as_mut_ptr().cast::<u8>(), raw.len() * 2) };
    for (i, b) in bytes.iter_mut().enumerate() {
        // SAFETY: a valid element of `bytes`; volatile like the original's stores.
        unsafe { write_volatile(b, (i % 127) as u8) };
    }
}
