//! Message buffers that start on a page boundary.
//!
//! Where a buffer starts decides how fast it is copied. On AMD Zen 3 with glibc 2.36,
//! `memcpy` of 2113 bytes (glibc's `rep movsb` threshold) up to the L2 size runs
//! through `rep movsb`, which is about 18× slower when `(dst − src) mod 4096` lies
//! in 1..=63 (docs/transports.md, "Where copies go slow"). A heap buffer starts
//! wherever the allocator puts it, so the speed of a copying run would depend on the
//! allocation. The workloads' buffers and the limits' probe buffers therefore start
//! on a page, as the transports' ring data does: a message whose size is a multiple
//! of 64 bytes then always copies at a distance that is a multiple of 64.

use std::ops::{Deref, DerefMut};

/// Alignment of every [`PageAligned`] buffer.
pub const PAGE: usize = 4096;

/// A zero-filled byte buffer whose first byte lies on a [`PAGE`] boundary.
pub struct PageAligned {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl PageAligned {
    /// `len` zero bytes starting on a page.
    pub fn zeroed(len: usize) -> PageAligned {
        let bytes = vec![0u8; len + PAGE];
        // For a byte pointer the offset always exists and is below `PAGE`.
        let start = bytes.as_ptr().align_offset(PAGE);
        PageAligned { bytes, start, len }
    }
}

impl Deref for PageAligned {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes[self.start..self.start + self.len]
    }
}

impl DerefMut for PageAligned {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[self.start..self.start + self.len]
    }
}

impl std::fmt::Debug for PageAligned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageAligned")
            .field("len", &self.len)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_buffer_starts_on_a_page_and_holds_its_length() {
        for len in [0, 1, 64, 4095, 4096, 65_536, 100_000] {
            let mut b = PageAligned::zeroed(len);
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % PAGE, 0, "{len}");
            assert!(b.iter().all(|&x| x == 0));
            b.fill(7);
            assert!(b.iter().all(|&x| x == 7));
        }
    }
}
