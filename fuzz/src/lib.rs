//! Helpers shared by the fuzz targets, and the seed inputs of every target.
//!
//! Each target's input format is described in its file under `fuzz_targets/` and
//! built here by [`seeds`] from the crates' own types and constants, so a layout
//! change shows up as a drifted corpus (`tests/seeds.rs`) rather than as seeds that
//! silently stop reaching the interesting code.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// A zeroed, correctly aligned heap block holding one `T`: the stand-in for the
/// shared memory a header or control block lives in.
pub struct Shared<T> {
    ptr: NonNull<T>,
}

impl<T> Shared<T> {
    /// A zeroed block whose first bytes are `bytes` (the rest stays zero; extra bytes
    /// are ignored).
    ///
    /// # Safety
    ///
    /// Every bit pattern must be a valid `T` (integers, atomics and arrays of them),
    /// as for anything mapped from memory another process writes.
    pub unsafe fn from_bytes(bytes: &[u8]) -> Shared<T> {
        let layout = Layout::new::<T>();
        assert!(layout.size() > 0);
        // SAFETY: the layout has a nonzero size.
        let p = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(p.cast::<T>()).expect("allocation");
        let n = bytes.len().min(layout.size());
        // SAFETY: `n` bytes fit the fresh block; the source does not overlap it.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, n) };
        Shared { ptr }
    }

    /// The value.
    pub fn get(&self) -> &T {
        // SAFETY: allocated for a T, initialised (zeroed, then bytes), valid for any
        // bit pattern by `from_bytes`'s contract.
        unsafe { self.ptr.as_ref() }
    }

    /// The value, to be filled in.
    pub fn get_mut(&mut self) -> &mut T {
        // SAFETY: as for `get`; `&mut self` makes the borrow unique.
        unsafe { self.ptr.as_mut() }
    }

    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the whole block was initialised by alloc_zeroed and field writes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast(), size_of::<T>()) }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // SAFETY: allocated in `from_bytes` with this layout, freed once.
        unsafe { dealloc(self.ptr.as_ptr().cast(), Layout::new::<T>()) }
    }
}

/// Reads a little-endian integer of `N` bytes from the front of `data`, advancing it;
/// missing bytes read as zero.
pub fn take<const N: usize>(data: &mut &[u8]) -> [u8; N] {
    let mut b = [0u8; N];
    let n = data.len().min(N);
    b[..n].copy_from_slice(&data[..n]);
    *data = &data[n..];
    b
}

/// [`take`] as a `u64`.
pub fn take_u64(data: &mut &[u8]) -> u64 {
    u64::from_le_bytes(take(data))
}

/// [`take`] as a `u32`.
pub fn take_u32(data: &mut &[u8]) -> u32 {
    u32::from_le_bytes(take(data))
}

/// [`take`] as a `u16`.
pub fn take_u16(data: &mut &[u8]) -> u16 {
    u16::from_le_bytes(take(data))
}

/// [`take`] as a `u8`.
pub fn take_u8(data: &mut &[u8]) -> u8 {
    take::<1>(data)[0]
}

mod seed;
pub use seed::seeds;
