//! Device memory and DMA targets: memfd-backed buffers.
//!
//! [`DeviceMemory`] is a board's sample memory: a memfd filled once with the
//! deterministic pattern of [`sample`] and then sealed (`F_SEAL_SHRINK`,
//! `F_SEAL_GROW`, `F_SEAL_WRITE`), so nothing, the model included, can change or
//! resize it afterwards, and every sample a reader gets can be checked. The copy
//! readout `pread`s it (the kernel's user-copy routine moves the bytes, as the
//! driver's `copy_to_user` does); the DMA engine reads it through a read-only
//! mapping.
//!
//! [`Mapping`] (the project's one, [`crate::shm::mapping`]) is a shared memfd mapping: the zero-copy target the DMA engine writes
//! into and the reader sees, and the control block's page.
//!
//! Every memfd here comes from [`crate::shm::backing`]: sealed against shrinking and
//! growing, so another process of the user that reopens one through
//! `/proc/<pid>/fd` cannot truncate it under the model's mappings.

use super::error::DaqError;
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::SealFlags;

/// Bytes per sample.
pub const SAMPLE_BYTES: usize = 2;

/// The pattern's sample `i` of the board with `seed`: a multiplicative hash, so
/// neighbouring samples differ in many bits and an offset or a stale chunk shows.
#[inline(always)]
pub fn sample(seed: u32, i: u64) -> u16 {
    let x = (i as u32).wrapping_add(seed).wrapping_mul(0x9E37_79B1);
    ((x >> 16) ^ (x & 0xFFFF)) as u16 ^ ((i >> 32) as u16)
}

/// The pattern seed of board `index`.
pub fn seed_of(index: usize) -> u32 {
    (index as u32)
        .wrapping_mul(0x0100_0193)
        .wrapping_add(0x5EED)
}

#[inline(always)]
fn mismatches_body(seed: u32, first: u64, got: &[u16]) -> u64 {
    let mut bad = 0u64;
    for (k, &v) in got.iter().enumerate() {
        bad += u64::from(v != sample(seed, first + k as u64));
    }
    bad
}

/// How many of `got` (samples `first..`) differ from the pattern of `seed`
/// (vectorised with AVX2 when the CPU has it, so checking costs less than reading).
pub fn mismatches(seed: u32, first: u64, got: &[u16]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2")]
        fn avx2(seed: u32, first: u64, got: &[u16]) -> u64 {
            mismatches_body(seed, first, got)
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { avx2(seed, first, got) };
        }
    }
    mismatches_body(seed, first, got)
}

fn io(what: &'static str) -> impl FnOnce(rustix::io::Errno) -> DaqError {
    move |e| DaqError::Memory {
        what,
        source: e.into(),
    }
}

pub use crate::shm::mapping::Mapping;

/// Maps `len` bytes of `fd` ([`Mapping::new`]), a failure named as the model's.
pub fn map(fd: impl AsFd, len: usize, write: bool) -> Result<Mapping, DaqError> {
    Mapping::new(fd, len, write).map_err(io("mmap"))
}

fn backing(what: &'static str) -> impl FnOnce(crate::shm::backing::BackingError) -> DaqError {
    move |e| DaqError::Memory {
        what,
        source: std::io::Error::other(e.to_string()),
    }
}

/// Creates an anonymous memfd `xferbench-<name>` of `bytes`, sealed against resizing.
pub fn memfd(name: &str, bytes: usize) -> Result<OwnedFd, DaqError> {
    crate::shm::backing::create(name, bytes as u64)
        .map(|(fd, _)| fd)
        .map_err(backing("memfd_create"))
}

/// A board's sample memory: a sealed memfd holding the pattern of [`sample`].
#[derive(Debug)]
pub struct DeviceMemory {
    fd: OwnedFd,
    samples: usize,
    seed: u32,
    view: Mapping,
}

impl DeviceMemory {
    /// Creates, fills and seals the memory of `samples` samples with `seed`'s pattern.
    pub fn create(index: usize, samples: usize) -> Result<DeviceMemory, DaqError> {
        let seed = seed_of(index);
        let bytes = samples * SAMPLE_BYTES;
        let fd = crate::shm::backing::memfd(&format!("daq-mem{index}"), bytes as u64)
            .map_err(backing("memfd_create"))?;
        const CHUNK: usize = 1 << 19;
        let mut buf = vec![0u8; CHUNK * SAMPLE_BYTES];
        let mut i = 0usize;
        while i < samples {
            let n = CHUNK.min(samples - i);
            for (k, b) in buf[..n * SAMPLE_BYTES].chunks_exact_mut(2).enumerate() {
                b.copy_from_slice(&sample(seed, (i + k) as u64).to_ne_bytes());
            }
            let mut done = 0;
            while done < n * SAMPLE_BYTES {
                done += rustix::io::pwrite(
                    &fd,
                    &buf[done..n * SAMPLE_BYTES],
                    (i * SAMPLE_BYTES + done) as u64,
                )
                .map_err(io("filling device memory"))?;
            }
            i += n;
        }
        crate::shm::backing::seal(&fd, SealFlags::WRITE)
            .map_err(backing("sealing device memory"))?;
        let view = map(&fd, bytes, false)?;
        Ok(DeviceMemory {
            fd,
            samples,
            seed,
            view,
        })
    }

    /// The memfd (for `pread`, and for tests that try to change it).
    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// Samples held.
    pub fn samples(&self) -> usize {
        self.samples
    }

    /// The pattern seed.
    pub fn seed(&self) -> u32 {
        self.seed
    }

    /// Read-only view for the DMA engine.
    pub(crate) fn view(&self) -> &Mapping {
        &self.view
    }

    /// `pread`s samples `first..first + dst.len()` into `dst` (one system call per
    /// `pread` the kernel completes; a short read continues).
    pub fn pread(&self, first: usize, dst: &mut [u16]) -> Result<(), DaqError> {
        if first + dst.len() > self.samples {
            return Err(DaqError::Range {
                first,
                len: dst.len(),
                samples: self.samples,
            });
        }
        // SAFETY: u16 has no invalid bit patterns and u8 alignment is 1; the byte view
        // covers exactly `dst`.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<u8>(), dst.len() * SAMPLE_BYTES)
        };
        let mut done = 0;
        while done < bytes.len() {
            let n = rustix::io::pread(
                &self.fd,
                &mut bytes[done..],
                (first * SAMPLE_BYTES + done) as u64,
            )
            .map_err(io("pread of device memory"))?;
            if n == 0 {
                return Err(DaqError::Range {
                    first,
                    len: dst.len(),
                    samples: self.samples,
                });
            }
            done += n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_reads_back_and_a_wrong_offset_does_not_verify() {
        let m = DeviceMemory::create(3, 100_000).unwrap();
        let mut got = vec![0u16; 50_000];
        m.pread(1000, &mut got).unwrap();
        assert_eq!(mismatches(m.seed(), 1000, &got), 0);
        assert!(mismatches(m.seed(), 1001, &got) > 49_000);
        assert!(mismatches(seed_of(4), 1000, &got) > 49_000);
        assert!(m.pread(99_000, &mut got).is_err());
    }

    #[test]
    fn sealed_memory_refuses_writes_and_resizes() {
        let m = DeviceMemory::create(0, 4096).unwrap();
        assert!(rustix::io::pwrite(m.fd(), &[1, 2], 0).is_err());
        assert!(rustix::fs::ftruncate(m.fd(), 2 * 4096 + 4096).is_err());
        assert!(rustix::fs::ftruncate(m.fd(), 16).is_err());
        assert!(Mapping::new(m.fd(), 8192, true).is_err());
        let mut got = vec![0u16; 4096];
        m.pread(0, &mut got).unwrap();
        assert_eq!(mismatches(m.seed(), 0, &got), 0);
    }
}
