//! Streaming builds of the improved conversions, for outputs larger than the
//! core's private cache: AVX2 arithmetic, 32 input bytes per loop trip, and
//! non-temporal stores (`vmovntps` / `vmovntpd`) that write the output to memory
//! without first reading each line into the cache (no read-for-ownership) and
//! without evicting the input. One `sfence` per call orders the streamed stores
//! before the function returns.
//!
//! Each function returns `None` when the CPU lacks AVX2 (checked once per call,
//! outside the loop), and the caller falls back to the portable loops of
//! [`super::improved`]. The head of the output up to the first 32-byte boundary
//! and the tail after the last whole block are computed by the same scalar
//! expression as the vector body, so the results are the same bits as the cached
//! loops (the property tests run both).
//!
//! The arithmetic is the improved kernels': `u16` or `i16` widened to `i32` and
//! converted exactly; a multiply by 2^−n; for the scaling functions, a double
//! multiply then a double add (never fused, as the original rounds) and one
//! rounding to float (`vcvtpd2ps`, round to nearest even like `as f32`).

use std::sync::OnceLock;

/// Output size from which [`super::improved`] streams: the core's private (level
/// 2) cache as sysfs gives it, or 1 MiB when sysfs does not say.
pub fn threshold_bytes() -> usize {
    static T: OnceLock<usize> = OnceLock::new();
    *T.get_or_init(|| private_cache_bytes().unwrap_or(1 << 20))
}

/// Whether an output of `bytes` is worth streaming past the cache.
pub fn worth_streaming(bytes: usize) -> bool {
    bytes >= threshold_bytes()
}

/// The largest cache of level ≤ 2 of CPU 0, from sysfs.
fn private_cache_bytes() -> Option<usize> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| {
        let p = e.ok()?.path();
        let level: u32 = std::fs::read_to_string(p.join("level"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let size = std::fs::read_to_string(p.join("size")).ok()?;
        let size = size.trim();
        let kib: usize = size.strip_suffix('K')?.parse().ok()?;
        (level <= 2).then_some(kib * 1024)
    })
    .max()
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// A streaming `u16 → f32` loop: `$widen` turns 8 samples into what
    /// `$vector` takes (`$v`, 8 `i32` or the samples as they are), and `$vector`
    /// turns that into 8 floats; `$r → $scalar` is the same per
    /// sample for the head and tail.
    macro_rules! f32_loop {
        ($name:ident ($($p:ident : $t:ty),*), $widen:ident,
         |$r:ident| $scalar:expr, |$v:ident| $vector:expr) => {
            #[target_feature(enable = "avx2")]
            pub(super) fn $name(raw: &[u16], out: &mut [f32], $($p: $t),*) -> usize {
                let n = raw.len();
                let out = &mut out[..n];
                let head = out.as_ptr().align_offset(32).min(n);
                for (d, &$r) in out[..head].iter_mut().zip(&raw[..head]) {
                    *d = $scalar;
                }
                let body = (n - head) / 16 * 16;
                let src = raw[head..].as_ptr();
                let dst = out[head..].as_mut_ptr();
                // SAFETY: every block reads raw[head + i .. head + i + 16] and writes
                // out[head + i .. head + i + 16] with i + 16 ≤ body ≤ n − head, so
                // both stay in bounds; `dst + i` is 32-byte aligned (head aligns
                // dst, and i is a multiple of 8 floats), as `vmovntps` needs.
                unsafe {
                    let mut i = 0;
                    while i < body {
                        let w = _mm256_loadu_si256(src.add(i).cast());
                        let $v = $widen(_mm256_castsi256_si128(w));
                        _mm256_stream_ps(dst.add(i), $vector);
                        let $v = $widen(_mm256_extracti128_si256::<1>(w));
                        _mm256_stream_ps(dst.add(i + 8), $vector);
                        i += 16;
                    }
                    _mm_sfence();
                }
                for (d, &$r) in out[head + body..].iter_mut().zip(&raw[head + body..]) {
                    *d = $scalar;
                }
                n
            }
        };
    }

    /// A streaming `u16 → f64` loop: `$widen` as above, `$vector` turns 4 `i32`
    /// (`$v`, an `__m128i`) into 4 doubles.
    macro_rules! f64_loop {
        ($name:ident ($($p:ident : $t:ty),*), $widen:ident,
         |$r:ident| $scalar:expr, |$v:ident| $vector:expr) => {
            #[target_feature(enable = "avx2")]
            pub(super) fn $name(raw: &[u16], out: &mut [f64], $($p: $t),*) -> usize {
                let n = raw.len();
                let out = &mut out[..n];
                let head = out.as_ptr().align_offset(32).min(n);
                for (d, &$r) in out[..head].iter_mut().zip(&raw[..head]) {
                    *d = $scalar;
                }
                let body = (n - head) / 16 * 16;
                let src = raw[head..].as_ptr();
                let dst = out[head..].as_mut_ptr();
                // SAFETY: as in `f32_loop`; `dst + i` is 32-byte aligned because i
                // is a multiple of 4 doubles.
                unsafe {
                    let mut i = 0;
                    while i < body {
                        let w = _mm256_loadu_si256(src.add(i).cast());
                        let lo = $widen(_mm256_castsi256_si128(w));
                        let hi = $widen(_mm256_extracti128_si256::<1>(w));
                        let $v = _mm256_castsi256_si128(lo);
                        _mm256_stream_pd(dst.add(i), $vector);
                        let $v = _mm256_extracti128_si256::<1>(lo);
                        _mm256_stream_pd(dst.add(i + 4), $vector);
                        let $v = _mm256_castsi256_si128(hi);
                        _mm256_stream_pd(dst.add(i + 8), $vector);
                        let $v = _mm256_extracti128_si256::<1>(hi);
                        _mm256_stream_pd(dst.add(i + 12), $vector);
                        i += 16;
                    }
                    _mm_sfence();
                }
                for (d, &$r) in out[head + body..].iter_mut().zip(&raw[head + body..]) {
                    *d = $scalar;
                }
                n
            }
        };
    }

    /// 8 `u16` → 8 floats of `(x as f64 * sf + so) as f32`. Each sample becomes
    /// a double exactly by placing it in the low mantissa bits of 2^52 and
    /// subtracting 2^52 (one integer widening, an `or` and a `sub` per 4 samples,
    /// cheaper than `vcvtdq2pd`'s shuffle); then a multiply, an add, a rounding.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn scale8(v: __m128i, sf: f64, so: f64) -> __m256 {
        let (f, o) = (_mm256_set1_pd(sf), _mm256_set1_pd(so));
        let a = exact(_mm256_cvtepu16_epi64(v));
        let b = exact(_mm256_cvtepu16_epi64(_mm_srli_si128::<8>(v)));
        let a = _mm256_cvtpd_ps(_mm256_add_pd(_mm256_mul_pd(a, f), o));
        let b = _mm256_cvtpd_ps(_mm256_add_pd(_mm256_mul_pd(b, f), o));
        _mm256_set_m128(b, a)
    }

    /// 4 integers below 2^52 → 4 doubles, exactly.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn exact(w: __m256i) -> __m256d {
        let two52 = _mm256_set1_pd(4_503_599_627_370_496.0);
        let bits = _mm256_castpd_si256(two52);
        _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(w, bits)), two52)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn samples(v: __m128i) -> __m128i {
        v
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn unsigned(v: __m128i) -> __m256i {
        _mm256_cvtepu16_epi32(v)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn signed(v: __m128i) -> __m256i {
        _mm256_cvtepi16_epi32(v)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn to_f32(v: __m256i) -> __m256 {
        _mm256_cvtepi32_ps(v)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn to_f32_times(v: __m256i, s: f32) -> __m256 {
        _mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_set1_ps(s))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn to_f64_times(v: __m128i, s: f64) -> __m256d {
        _mm256_mul_pd(_mm256_cvtepi32_pd(v), _mm256_set1_pd(s))
    }

    f32_loop!(scale(sf: f64, so: f64), samples,
        |r| (r as f64 * sf + so) as f32, |v| scale8(v, sf, so));
    f32_loop!(cast(), unsigned, |r| r as f32, |v| to_f32(v));
    f32_loop!(umn2float(s: f32), unsigned, |r| r as f32 * s, |v| to_f32_times(v, s));
    f32_loop!(smn2float(s: f32), signed,
        |r| (r as i16) as f32 * s, |v| to_f32_times(v, s));
    f64_loop!(umn2double(s: f64), unsigned, |r| r as f64 * s, |v| to_f64_times(v, s));
    f64_loop!(smn2double(s: f64), signed,
        |r| (r as i16) as f64 * s, |v| to_f64_times(v, s));
}

/// Runs `$f` when the CPU has AVX2; `None` otherwise.
macro_rules! with_avx2 {
    ($f:ident($($a:expr),*)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above.
                return Some(unsafe { avx2::$f($($a),*) });
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = ($(&$a),*);
        None
    }};
}

/// `out[j] = (raw[j] as f64 · sf + so) as f32`: `func_sca`, and `func_decsca` at
/// f = 1 over `raw[o..]`.
pub fn scale(raw: &[u16], out: &mut [f32], sf: f64, so: f64) -> Option<usize> {
    with_avx2!(scale(raw, out, sf, so))
}

/// `out[j] = raw[j] as f32`: `func_no_decsca`, and `func_dec` at f = 1.
pub fn cast(raw: &[u16], out: &mut [f32]) -> Option<usize> {
    with_avx2!(cast(raw, out))
}

/// `out[j] = raw[j] as f32 · s`.
pub fn umn2float(raw: &[u16], out: &mut [f32], s: f32) -> Option<usize> {
    with_avx2!(umn2float(raw, out, s))
}

/// `out[j] = (raw[j] as i16) as f32 · s`.
pub fn smn2float(raw: &[u16], out: &mut [f32], s: f32) -> Option<usize> {
    with_avx2!(smn2float(raw, out, s))
}

/// `out[j] = raw[j] as f64 · s`.
pub fn umn2double(raw: &[u16], out: &mut [f64], s: f64) -> Option<usize> {
    with_avx2!(umn2double(raw, out, s))
}

/// `out[j] = (raw[j] as i16) as f64 · s`.
pub fn smn2double(raw: &[u16], out: &mut [f64], s: f64) -> Option<usize> {
    with_avx2!(smn2double(raw, out, s))
}
