//! The improved conversion functions: the same results as [`super::original`]
//! (bit for bit, see the property tests), computed so that the compiler vectorises
//! them.
//!
//! * The Q-format divisions by 2^n become multiplications by 2^−n, which is exact:
//!   every u16 and every i16 is exact in `f32` and `f64`, and scaling by a power of
//!   two only changes the exponent.
//! * The signed Q3.13 test-and-subtract is the two's-complement reinterpretation
//!   `val as i16`, the same value without a branch.
//! * Decimation and scaling are one pass; `f = 1` takes the contiguous path.
//! * Plain slice stores (no `volatile`), and an AVX2 build of every loop chosen at
//!   run time when the CPU has it (the baseline build is SSE2).
//! * Outputs larger than the core's private cache go through [`super::stream`]:
//!   AVX2 with non-temporal stores, so the output is written to memory without
//!   being read into the cache first. Smaller outputs stay in the cache, where
//!   the next step would read them.
//! * The scaling keeps the original's double arithmetic, multiply then add, never
//!   fused, so it rounds the same.

use super::qmn::Qmn;
use super::scale::ScaleParams;
use super::stream;

macro_rules! dispatch {
    ($(#[$doc:meta])* $name:ident, $body:ident, ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $(#[$doc])*
        pub fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                fn avx2($($arg: $ty),*) -> $ret {
                    $body($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2, checked just above.
                    return unsafe { avx2($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}

#[inline(always)]
fn decsca_body(raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize {
    let (f, o, sf, so) = (p.factor.max(1), p.offset, p.scale_factor, p.scale_offset);
    let src = raw.get(o..).unwrap_or(&[]);
    let n = src.len() / f;
    let out = &mut out[..n];
    if f == 1 {
        for (d, &r) in out.iter_mut().zip(src) {
            *d = (r as f64 * sf + so) as f32;
        }
    } else {
        for (d, c) in out.iter_mut().zip(src.chunks_exact(f)) {
            *d = (c[0] as f64 * sf + so) as f32;
        }
    }
    n
}

#[inline(always)]
fn dec_body(raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize {
    let f = p.factor.max(1);
    let src = raw.get(p.offset..).unwrap_or(&[]);
    let n = src.len() / f;
    let out = &mut out[..n];
    if f == 1 {
        for (d, &r) in out.iter_mut().zip(src) {
            *d = r as f32;
        }
    } else {
        for (d, c) in out.iter_mut().zip(src.chunks_exact(f)) {
            *d = c[0] as f32;
        }
    }
    n
}

#[inline(always)]
fn sca_body(raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize {
    let (sf, so) = (p.scale_factor, p.scale_offset);
    for (d, &r) in out[..raw.len()].iter_mut().zip(raw) {
        *d = (r as f64 * sf + so) as f32;
    }
    raw.len()
}

#[inline(always)]
fn no_decsca_body(raw: &[u16], out: &mut [f32]) -> usize {
    for (d, &r) in out[..raw.len()].iter_mut().zip(raw) {
        *d = r as f32;
    }
    raw.len()
}

#[inline(always)]
fn umn2double_body(raw: &[u16], out: &mut [f64], scale: f64) -> usize {
    for (d, &r) in out[..raw.len()].iter_mut().zip(raw) {
        *d = r as f64 * scale;
    }
    raw.len()
}

#[inline(always)]
fn smn2double_body(raw: &[u16], out: &mut [f64], scale: f64) -> usize {
    for (d, &r) in out[..raw.len()].iter_mut().zip(raw) {
        *d = (r as i16) as f64 * scale;
    }
    raw.len()
}

#[inline(always)]
fn umn2float_body(raw: &[u16], out: &mut [f32], scale: f32) -> usize {
    for (d, &r) in out[..raw.len()].iter_mut().zip(raw) {
        *d = r as f32 * scale;
    }
    raw.len()
}

#[inline(always)]
fn smn2float_body(raw: &[u16], out: &mut [f32], scale: f32) -> usize {
    for (d, &r) in out[..raw.len()].iter_mut().zip(raw) {
        *d = (r as i16) as f32 * scale;
    }
    raw.len()
}

dispatch!(
    /// `func_decsca` through the cache, fused and vectorised.
    decsca_cached, decsca_body, (raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize
);
dispatch!(
    /// `func_dec` through the cache, vectorised.
    dec_cached, dec_body, (raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize
);
dispatch!(
    /// `func_sca` through the cache, vectorised.
    sca_cached, sca_body, (raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize
);
dispatch!(
    /// `func_no_decsca` through the cache, vectorised.
    no_decsca_cached, no_decsca_body, (raw: &[u16], out: &mut [f32]) -> usize
);
dispatch!(
    /// The vectorised loop of `umn2double`, through the cache.
    umn2double_cached, umn2double_body, (raw: &[u16], out: &mut [f64], scale: f64) -> usize);
dispatch!(
    /// The vectorised loop of `smn2double`, through the cache.
    smn2double_cached, smn2double_body, (raw: &[u16], out: &mut [f64], scale: f64) -> usize);
dispatch!(
    /// The vectorised loop of `umn2float`, through the cache.
    umn2float_cached, umn2float_body, (raw: &[u16], out: &mut [f32], scale: f32) -> usize);
dispatch!(
    /// The vectorised loop of `smn2float`, through the cache.
    smn2float_cached, smn2float_body, (raw: &[u16], out: &mut [f32], scale: f32) -> usize);

/// Whether `n` outputs of `T` go past the cache ([`stream::worth_streaming`]).
fn streams<T>(n: usize) -> bool {
    stream::worth_streaming(n * std::mem::size_of::<T>())
}

/// `func_decsca`: fused; streamed at f = 1 when the output is larger than the
/// cache.
pub fn decsca(raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize {
    let src = raw.get(p.offset..).unwrap_or(&[]);
    if p.factor <= 1
        && streams::<f32>(src.len())
        && let Some(n) = stream::scale(src, out, p.scale_factor, p.scale_offset)
    {
        return n;
    }
    decsca_cached(raw, out, p)
}

/// `func_dec`; streamed at f = 1 when the output is larger than the cache.
pub fn dec(raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize {
    let src = raw.get(p.offset..).unwrap_or(&[]);
    if p.factor <= 1
        && streams::<f32>(src.len())
        && let Some(n) = stream::cast(src, out)
    {
        return n;
    }
    dec_cached(raw, out, p)
}

/// `func_sca`; streamed when the output is larger than the cache.
pub fn sca(raw: &[u16], out: &mut [f32], p: &ScaleParams) -> usize {
    if streams::<f32>(raw.len())
        && let Some(n) = stream::scale(raw, out, p.scale_factor, p.scale_offset)
    {
        return n;
    }
    sca_cached(raw, out, p)
}

/// `func_no_decsca`; streamed when the output is larger than the cache.
pub fn no_decsca(raw: &[u16], out: &mut [f32]) -> usize {
    if streams::<f32>(raw.len())
        && let Some(n) = stream::cast(raw, out)
    {
        return n;
    }
    no_decsca_cached(raw, out)
}

fn umn2double_v(raw: &[u16], out: &mut [f64], scale: f64) -> usize {
    if streams::<f64>(raw.len())
        && let Some(n) = stream::umn2double(raw, out, scale)
    {
        return n;
    }
    umn2double_cached(raw, out, scale)
}

fn smn2double_v(raw: &[u16], out: &mut [f64], scale: f64) -> usize {
    if streams::<f64>(raw.len())
        && let Some(n) = stream::smn2double(raw, out, scale)
    {
        return n;
    }
    smn2double_cached(raw, out, scale)
}

fn umn2float_v(raw: &[u16], out: &mut [f32], scale: f32) -> usize {
    if streams::<f32>(raw.len())
        && let Some(n) = stream::umn2float(raw, out, scale)
    {
        return n;
    }
    umn2float_cached(raw, out, scale)
}

fn smn2float_v(raw: &[u16], out: &mut [f32], scale: f32) -> usize {
    if streams::<f32>(raw.len())
        && let Some(n) = stream::smn2float(raw, out, scale)
    {
        return n;
    }
    smn2float_cached(raw, out, scale)
}

/// 2^−n, exactly.
fn inv_pow2(n: u32) -> f64 {
    f64::from_bits((1023 - n as u64) << 52)
}

/// `mn_2_double` per sample as a multiply by 2^−n (signed: reinterpret as i16 when
/// m + n = 16).
pub fn mn2double(raw: &[u16], out: &mut [f64], q: Qmn) -> usize {
    let scale = inv_pow2(q.frac_bits);
    if !q.signed {
        umn2double_v(raw, out, scale)
    } else if q.int_bits + q.frac_bits == 16 {
        smn2double_v(raw, out, scale)
    } else {
        // Other widths: the original's test-and-subtract, still branch-free.
        let full = (1u64 << (q.int_bits + q.frac_bits)) as f64;
        let half = full / 2.0 - 1.0;
        for (d, &r) in out[..raw.len()].iter_mut().zip(raw) {
            let x = r as f64;
            *d = if x > half { x - full } else { x } * scale;
        }
        raw.len()
    }
}

/// `mn_2_float` per sample as a multiply by 2^−n.
pub fn mn2float(raw: &[u16], out: &mut [f32], q: Qmn) -> usize {
    let scale = inv_pow2(q.frac_bits) as f32;
    if !q.signed {
        umn2float_v(raw, out, scale)
    } else if q.int_bits + q.frac_bits == 16 {
        smn2float_v(raw, out, scale)
    } else {
        let full = (1u64 << (q.int_bits + q.frac_bits)) as f32;
        let half = (full as f64) / 2.0 - 1.0;
        for (d, &r) in out[..raw.len()].iter_mut().zip(raw) {
            let x = r as f32;
            *d = if (x as f64) > half { x - full } else { x } * scale;
        }
        raw.len()
    }
}

/// `func_writepatt`'s fill, byte `i` = `i % 127`, vectorisable.
pub fn write_pattern(raw: &mut [u16]) {
    // SAFETY: a byte view of exactly `raw`.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(raw.as_mut_ptr().cast::<u8>(), raw.len() * 2) };
    let period: Vec<u8> = (0..127u8).collect();
    for c in bytes.chunks_mut(127) {
        c.copy_from_slice(&period[..c.len()]);
    }
}
