//! Shared mappings of a file: the one place the project maps a memfd (or any file)
//! into memory, for the shm region's header, the kv objects and the digitizer model's
//! memories and control block. The ring data's double ("mirrored") mapping is the
//! region's own (`region.rs`, `Mirror`).

use rustix::fd::AsFd;
use rustix::mm::{MapFlags, ProtFlags};
use std::ptr::NonNull;

/// A shared mapping of a file's first `len` bytes, unmapped when dropped.
#[derive(Debug)]
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory; who may write it when is its owner's protocol
// (atomics, process-shared locks, or one writer at a time).
unsafe impl Send for Mapping {}
// SAFETY: as above; shared access goes through raw pointers or atomics.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd` from offset 0, shared, readable and, if `write`,
    /// writable. The bytes must exist in the file (a caller checks or sizes it).
    pub fn new(fd: impl AsFd, len: usize, write: bool) -> Result<Mapping, rustix::io::Errno> {
        let prot = if write {
            ProtFlags::READ | ProtFlags::WRITE
        } else {
            ProtFlags::READ
        };
        // SAFETY: a fresh mapping chosen by the kernel (null hint) of a file we hold
        // open; it aliases no Rust object.
        let p = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len.max(1),
                prot,
                MapFlags::SHARED,
                fd,
                0,
            )
        }?;
        Ok(Mapping {
            ptr: NonNull::new(p.cast()).expect("mmap returns non-null"),
            len,
        })
    }

    /// The first byte.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Length, bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: our own mapping of this length; no reference into it outlives self.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len.max(1)) };
    }
}
