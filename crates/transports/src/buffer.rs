//! Message buffers placed so that copying between them and a transport's memory takes
//! the C library's fast path.
//!
//! How fast `memcpy` runs can depend on where the two buffers lie relative to each
//! other, not only on their size. On some CPUs a copy of a few KiB or more whose
//! destination lies a little after its source within a page (`dst − src` ≡ 1–63
//! mod 4096, as two `malloc`ed buffers often do: `malloc` returns 16-byte aligned
//! blocks) runs an order of magnitude slower than the same copy between page-aligned
//! buffers; `xferbench limits` measures this machine's behaviour and reports a slow
//! placement as a finding of its own.
//!
//! The rule that keeps every copy on the fast path on the CPUs this project runs on
//! (Intel Xeon and AMD EPYC): **the source and the destination of a copy differ by a
//! multiple of a cache line** ([`placed_for_copy`]). A transport's shared memory
//! starts on a page, and a stream of messages whose size is a multiple of 64 bytes
//! keeps every message on a cache line within it; a [`PageBuf`] on the other side of
//! the copy then meets the rule for every message.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// A page, bytes: the alignment of a [`PageBuf`].
pub const PAGE: usize = 4096;

/// Copies whose source and destination differ by a multiple of this many bytes take
/// the fast path ([`placed_for_copy`]).
pub const COPY_ALIGN: usize = 64;

/// `dst − src` modulo a page: what decides whether a copy between them takes a slow
/// path.
pub fn relative_offset(dst: *const u8, src: *const u8) -> usize {
    (dst as usize).wrapping_sub(src as usize) % PAGE
}

/// Whether a copy from `src` to `dst` keeps to the fast path: their distance is a
/// multiple of [`COPY_ALIGN`].
pub fn placed_for_copy(dst: *const u8, src: *const u8) -> bool {
    relative_offset(dst, src).is_multiple_of(COPY_ALIGN)
}

/// A zeroed heap buffer that starts on a page boundary.
///
/// Invariant: `ptr` is the start of an allocation of `max(len, 1)` bytes with
/// [`PAGE`] alignment, owned by this value.
pub struct PageBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a PageBuf owns its bytes exclusively, like a Vec<u8>.
unsafe impl Send for PageBuf {}
// SAFETY: shared access only reads the bytes, like &Vec<u8>.
unsafe impl Sync for PageBuf {}

impl PageBuf {
    /// `len` zero bytes starting on a page.
    pub fn zeroed(len: usize) -> PageBuf {
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size (at least one byte).
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        PageBuf { ptr, len }
    }

    fn layout(len: usize) -> Layout {
        Layout::from_size_align(len.max(1), PAGE).expect("a buffer smaller than isize::MAX")
    }
}

impl std::ops::Deref for PageBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` holds `len` initialised (zeroed, then written) bytes owned by
        // self, and the shared borrow of self keeps them from being written.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for PageBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and the mutable borrow of self makes it exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for PageBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this very layout, freed once.
        unsafe { dealloc(self.ptr.as_ptr(), Self::layout(self.len)) }
    }
}

impl std::fmt::Debug for PageBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageBuf").field("len", &self.len).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_buffers_start_on_a_page_and_hold_zeroes() {
        for len in [0, 1, 64, 4096, 65536 + 3] {
            let b = PageBuf::zeroed(len);
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % PAGE, 0, "{len}");
            assert!(b.iter().all(|&x| x == 0));
        }
        let mut b = PageBuf::zeroed(10);
        b[9] = 7;
        assert_eq!(b[9], 7);
    }

    #[test]
    fn the_relative_offset_is_taken_modulo_a_page() {
        let base = 0x10_0000usize as *const u8;
        let at = |off: usize| base.wrapping_add(off);
        assert_eq!(relative_offset(at(4096 * 3 + 16), base), 16);
        assert_eq!(relative_offset(base, at(16)), PAGE - 16);
        assert!(placed_for_copy(at(4096 * 5 + 128), base));
        assert!(!placed_for_copy(at(16), base));
        assert!(!placed_for_copy(at(65536 + 8), base));
    }
}
