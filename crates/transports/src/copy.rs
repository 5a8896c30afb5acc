//! Copying bytes at the machine's speed, whatever the two addresses.
//!
//! glibc's `memcpy` (2.36 on x86-64, the `__memmove_avx_unaligned_erms` variant)
//! copies with `rep movsb` from `x86_rep_movsb_threshold` bytes (2112 on AMD Zen 3
//! with FSRM) up to the L2 size, and with a vector loop otherwise. On Zen 3 `rep
//! movsb` runs about 18× slower when the destination lies a little ahead of the
//! source modulo a page: `(dst − src) mod 4096` in 1..=31 (a 64 KiB copy falls from
//! about 45 GB/s to 2.5–3 GB/s; docs/limits.md, "Where the buffers lie: page-aligned copies and slow placements"). Every
//! other distance, and every size outside that range, copies at full speed.
//!
//! A ring position and a caller's buffer can stand at any distance, so [`copy`]
//! checks the distance and, inside the slow band (taken as 1..=63 for margin), copies
//! in pieces of [`PIECE`] bytes, below every `rep movsb` threshold, which glibc
//! copies with its vector loop at full speed. Outside the band it is one `memcpy`.
//!
//! A copy *out of* memory the other CPU has just written, as a ring's consumer makes,
//! meets a second slow regime of `rep movsb`: on the AMD EPYC (Zen 4) VM this project
//! is measured on, a reader that copies 4 KiB to 64 KiB messages out of a ring with
//! `memcpy` now and then runs for long stretches at a quarter to a third of the rate a
//! loop of vector loads reads the same lines at (docs/limits.md, "The copying reader,
//! two ways"; docs/transports.md). So [`copy_out`] copies more than [`PIECE`] and up
//! to [`VECTORS_OUT_MOST`] bytes by [`copy_by_vectors`], anything else as [`copy`].

/// Distances `(dst − src) mod 4096` that `rep movsb` copies slowly, with margin.
const SLOW_BAND: std::ops::RangeInclusive<usize> = 1..=63;

/// Bytes per piece of a copy inside the slow band: below glibc's smallest
/// `rep movsb` threshold (2048 · vector size / 16 bytes, at least 2112 with FSRM).
pub const PIECE: usize = 2048;

/// Whether a copy of `len` bytes from `src` to `dst` would meet the slow distances.
#[inline(always)]
pub fn is_slow_distance(dst: *const u8, src: *const u8, len: usize) -> bool {
    len > PIECE && SLOW_BAND.contains(&((dst as usize).wrapping_sub(src as usize) & 4095))
}

/// Copies `len` bytes from `src` to `dst` (which must not overlap): one `memcpy`,
/// or pieces of [`PIECE`] bytes at a distance `rep movsb` copies slowly.
///
/// # Safety
///
/// As for [`std::ptr::copy_nonoverlapping`]: `src` valid for `len` reads, `dst` for
/// `len` writes, the two ranges disjoint.
#[inline(always)]
pub unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    if !is_slow_distance(dst, src, len) {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
        return;
    }
    copy_in_pieces(src, dst, len);
}

/// Copies `len` bytes from `src` to `dst` as [`copy`] does, but a copy of up to 64
/// bytes (one cache line's worth, a small message) inline: two overlapping loads and
/// stores of the widest power of two not above `len`, no call. A `memcpy` call costs
/// more than the copy at these sizes, and a ring's small message pays it twice per
/// round trip.
///
/// # Safety
///
/// As for [`copy`].
#[inline(always)]
pub unsafe fn copy_short(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: the caller's contract.
    unsafe { short_or(src, dst, len, copy) }
}

/// Copies up to 64 bytes inline as [`copy_short`] describes, and longer ones with
/// `long`.
///
/// # Safety
///
/// As for [`copy`], and `long` copies `len` bytes under the same contract.
#[inline(always)]
unsafe fn short_or(
    src: *const u8,
    dst: *mut u8,
    len: usize,
    long: unsafe fn(*const u8, *mut u8, usize),
) {
    /// Copies `len` bytes, `W ≤ len ≤ 2·W`, as the first `W` and the last `W` bytes.
    ///
    /// # Safety
    ///
    /// As for [`copy`], with `W ≤ len ≤ 2·W`.
    #[inline(always)]
    unsafe fn two<const W: usize>(src: *const u8, dst: *mut u8, len: usize) {
        // SAFETY: `W ≤ len`, so both `W`-byte windows lie in the caller's `len` bytes;
        // both loads happen before the stores, and the ranges do not overlap anyway.
        unsafe {
            let a = src.cast::<[u8; W]>().read_unaligned();
            let b = src.add(len - W).cast::<[u8; W]>().read_unaligned();
            dst.cast::<[u8; W]>().write_unaligned(a);
            dst.add(len - W).cast::<[u8; W]>().write_unaligned(b);
        }
    }
    // SAFETY: the caller's contract, and in every branch that branch's bounds on `len`
    // (`two::<W>` needs `W ≤ len ≤ 2·W`).
    unsafe {
        match len {
            0 => {}
            1 => *dst = *src,
            2..=3 => two::<2>(src, dst, len),
            4..=7 => two::<4>(src, dst, len),
            8..=15 => two::<8>(src, dst, len),
            16..=31 => two::<16>(src, dst, len),
            32..=64 => two::<32>(src, dst, len),
            _ => long(src, dst, len),
        }
    }
}

/// The largest copy [`copy_out`] makes by vector loads; larger ones go to `memcpy`.
pub const VECTORS_OUT_MOST: usize = 64 << 10;

/// Copies `len` bytes out of memory another CPU has just written (a ring's consumer
/// side): by [`copy_by_vectors`] from more than [`PIECE`] up to [`VECTORS_OUT_MOST`]
/// bytes, where `memcpy` would use `rep movsb` and can fall into its slow regime
/// (module docs), and as [`copy`] otherwise.
///
/// # Safety
///
/// As for [`copy`].
#[inline(always)]
pub unsafe fn copy_out(src: *const u8, dst: *mut u8, len: usize) {
    if len > PIECE && len <= VECTORS_OUT_MOST {
        // SAFETY: the caller's contract.
        unsafe { copy_by_vectors(src, dst, len) };
    } else {
        // SAFETY: the caller's contract.
        unsafe { copy(src, dst, len) };
    }
}

/// [`copy_short`] for a copy out of memory another CPU has just written: up to 64
/// bytes inline, longer ones by [`copy_out`].
///
/// # Safety
///
/// As for [`copy`].
#[inline(always)]
pub unsafe fn copy_short_out(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: the caller's contract.
    unsafe { short_or(src, dst, len, copy_out) }
}

/// Copies `len` bytes from `src` to `dst` (which must not overlap) with vector loads
/// and stores, a cache line per turn: 32-byte ones where the CPU has AVX2, 16-byte
/// ones otherwise on x86-64; the bytes after the last whole line, and everything on
/// other architectures, by [`copy`]. Unlike `memcpy`, never `rep movsb`.
///
/// # Safety
///
/// As for [`copy`].
#[inline]
pub unsafe fn copy_by_vectors(src: *const u8, dst: *mut u8, len: usize) {
    let lines = len / 64 * 64;
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2; `lines ≤ len` (the caller's contract).
            unsafe { vectors::lines_avx2(src, dst, lines) };
        } else {
            // SAFETY: SSE2 is part of x86-64; `lines ≤ len` (the caller's contract).
            unsafe { vectors::lines_sse2(src, dst, lines) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: `lines ≤ len` (the caller's contract).
    unsafe {
        copy(src, dst, lines)
    };
    // SAFETY: the last `len - lines` bytes of both ranges (the caller's contract).
    unsafe { copy(src.add(lines), dst.add(lines), len - lines) };
}

/// Copies `src` into `dst` (of the same length), as [`copy_by_vectors`] does.
///
/// # Panics
///
/// When the lengths differ, as [`slice::copy_from_slice`] does.
pub fn copy_slice_by_vectors(dst: &mut [u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "copy between slices of unequal length"
    );
    // SAFETY: two slices, one shared and one exclusive, cannot overlap, and each holds
    // `len` bytes.
    unsafe { copy_by_vectors(src.as_ptr(), dst.as_mut_ptr(), src.len()) };
}

/// The loops of [`copy_by_vectors`].
#[cfg(target_arch = "x86_64")]
mod vectors {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm_loadu_si128, _mm_storeu_si128, _mm256_loadu_si256,
        _mm256_storeu_si256,
    };

    /// Copies `len` bytes (a multiple of 64) from `src` to `dst`, two 32-byte loads and
    /// stores per line.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2; `src` is valid for `len` reads and `dst` for `len` writes, the
    /// two ranges disjoint.
    #[target_feature(enable = "avx2")]
    pub unsafe fn lines_avx2(src: *const u8, dst: *mut u8, len: usize) {
        let mut i = 0;
        while i < len {
            // SAFETY: `i + 64 ≤ len`, inside both ranges (the caller's contract).
            unsafe {
                let a = _mm256_loadu_si256(src.add(i).cast::<__m256i>());
                let b = _mm256_loadu_si256(src.add(i + 32).cast::<__m256i>());
                _mm256_storeu_si256(dst.add(i).cast::<__m256i>(), a);
                _mm256_storeu_si256(dst.add(i + 32).cast::<__m256i>(), b);
            }
            i += 64;
        }
    }

    /// As [`lines_avx2`], with four 16-byte loads and stores per line.
    ///
    /// # Safety
    ///
    /// As [`lines_avx2`], without the need for AVX2.
    pub unsafe fn lines_sse2(src: *const u8, dst: *mut u8, len: usize) {
        let mut i = 0;
        while i < len {
            // SAFETY: `i + 64 ≤ len`, inside both ranges (the caller's contract).
            unsafe {
                let v = [0, 16, 32, 48].map(|k| _mm_loadu_si128(src.add(i + k).cast::<__m128i>()));
                for (k, v) in [0, 16, 32, 48].into_iter().zip(v) {
                    _mm_storeu_si128(dst.add(i + k).cast::<__m128i>(), v);
                }
            }
            i += 64;
        }
    }
}

#[cold]
#[inline(never)]
fn copy_in_pieces(src: *const u8, dst: *mut u8, len: usize) {
    let mut done = 0;
    while done < len {
        let n = PIECE.min(len - done);
        // SAFETY: `done + n ≤ len`, inside both ranges of the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), n) };
        done += n;
    }
}

/// Copies `src` into `dst` (of the same length), as [`copy`] does.
///
/// # Panics
///
/// When the lengths differ, as [`slice::copy_from_slice`] does.
#[inline(always)]
pub fn copy_slice(dst: &mut [u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "copy between slices of unequal length"
    );
    // SAFETY: two slices, one shared and one exclusive, cannot overlap, and each holds
    // `len` bytes.
    unsafe { copy(src.as_ptr(), dst.as_mut_ptr(), src.len()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_distance_and_length_copies_every_byte() {
        // Each of the copies: `copy`, out of a ring (`copy_out`, vector loads from more
        // than a piece to `VECTORS_OUT_MOST`, `memcpy` beyond) and by vectors alone,
        // at lengths around each of their edges and at distances in and out of the
        // slow band; a copy must not write past the range either.
        type Copy = unsafe fn(*const u8, *mut u8, usize);
        let copies: [(&str, Copy); 4] = [
            ("copy", copy),
            ("copy_out", copy_out),
            ("copy_short_out", copy_short_out),
            ("copy_by_vectors", copy_by_vectors),
        ];
        let most = VECTORS_OUT_MOST;
        let src: Vec<u8> = (0..(most + 200) as u32)
            .map(|i| (i * 7 + 3) as u8)
            .collect();
        let mut dst = vec![0u8; most + 200 + 4096 + 1];
        for (name, f) in copies {
            for shift in [0, 1, 16, 31, 63, 64, 100, 4095] {
                for len in [
                    0,
                    1,
                    63,
                    64,
                    65,
                    PIECE,
                    PIECE + 1,
                    3 * PIECE + 5,
                    16_384,
                    most,
                    most + 1,
                    most + 100,
                ] {
                    let base = dst.as_ptr() as usize;
                    // Put the destination `shift` bytes ahead of the source modulo a page.
                    let want = (src.as_ptr() as usize + shift) & 4095;
                    let off = (want + 4096 - (base & 4095)) & 4095;
                    dst.fill(0);
                    // SAFETY: `off + len + 1 ≤ dst.len()` and `len ≤ src.len()`; two
                    // distinct vectors.
                    unsafe { f(src.as_ptr(), dst.as_mut_ptr().add(off), len) };
                    let d = &dst[off..off + len];
                    assert_eq!(d, &src[..len], "{name}: shift {shift} len {len}");
                    assert_eq!(dst[off + len], 0, "{name}: wrote past {len} bytes");
                    assert!(dst[..off].iter().all(|&b| b == 0), "{name}: wrote before");
                }
            }
        }
        let mut d = vec![0u8; 5000];
        copy_slice_by_vectors(&mut d, &src[..5000]);
        assert_eq!(d, &src[..5000]);
    }

    #[test]
    #[should_panic(expected = "unequal length")]
    fn copying_by_vectors_between_slices_of_unequal_length_panics() {
        copy_slice_by_vectors(&mut [0u8; 64], &[0u8; 65]);
    }

    #[test]
    fn short_copies_copy_every_byte_and_nothing_else() {
        let src: Vec<u8> = (0..200u32).map(|i| (i * 13 + 1) as u8).collect();
        for len in 0..=130 {
            for off in [0, 1, 7, 33] {
                let mut dst = vec![0xEEu8; 200];
                // SAFETY: `off + len ≤ 200` in both vectors, which are distinct.
                unsafe { copy_short(src.as_ptr().add(off), dst.as_mut_ptr().add(off), len) };
                assert_eq!(&dst[off..off + len], &src[off..off + len], "len {len}");
                assert!(dst[..off].iter().all(|&b| b == 0xEE), "len {len}: before");
                assert!(
                    dst[off + len..].iter().all(|&b| b == 0xEE),
                    "len {len}: after"
                );
            }
        }
    }

    #[test]
    fn only_long_copies_in_the_band_go_in_pieces() {
        let p = 0x1000 as *const u8;
        let at = |d: usize| (0x10_0000 + d) as *const u8;
        assert!(is_slow_distance(at(16), p, 65_536));
        assert!(is_slow_distance(at(4096 + 1), p, 4096));
        assert!(!is_slow_distance(at(16), p, PIECE));
        assert!(!is_slow_distance(at(0), p, 65_536));
        assert!(!is_slow_distance(at(64), p, 65_536));
        assert!(!is_slow_distance(at(4095), p, 65_536));
    }
}
