//! The shm region header, as an attaching process validates it before touching the
//! rings, over a zeroed buffer standing in for the object's first page.
//!
//! Input: a `u64` object size (what `fstat` said), a `u32` wait mode (this side's),
//! then the header's bytes as they lie in shared memory (missing bytes are zero).
//!
//! Checked: validation never panics, and an accepted header describes two rings of a
//! valid capacity (a power-of-two multiple of the page size, at most 1 GiB) that lie
//! after the header, back to back, exactly filling the object, with the wait mode
//! this side asked for.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xferbench_fuzz::{Shared, take_u32, take_u64};
use xferbench_transports::shm::region::{
    Geometry, LAYOUT_VERSION, MAGIC, RegionHeader, page_size, valid_capacity,
};

fuzz_target!(|data: &[u8]| {
    let mut d = data;
    let file_len = take_u64(&mut d);
    let wait_mode = take_u32(&mut d);
    // SAFETY: a RegionHeader is integers and atomics only: any bytes are one.
    let header = unsafe { Shared::<RegionHeader>::from_bytes(d) };
    let h = header.get();
    match h.validate(file_len, wait_mode) {
        Ok(Geometry {
            data_offset,
            ring_capacity,
            total_len,
        }) => {
            assert_eq!(h.magic.load(std::sync::atomic::Ordering::Relaxed), MAGIC);
            assert_eq!(h.version, LAYOUT_VERSION);
            assert_eq!(h.wait_mode, wait_mode);
            assert!(valid_capacity(ring_capacity));
            assert!(ring_capacity >= page_size() as u64 && ring_capacity <= 1 << 30);
            assert!(data_offset >= size_of::<RegionHeader>() as u64);
            assert!(data_offset.is_multiple_of(page_size() as u64));
            assert_eq!(data_offset + 2 * ring_capacity, total_len);
            assert_eq!(total_len, file_len);
        }
        Err(e) => {
            // Every refusal explains itself.
            assert!(!e.to_string().is_empty());
        }
    }
});
