//! A shared-memory region holding the two rings of one channel.
//!
//! # Layout (version 1)
//!
//! ```text
//! offset 0            RegionHeader (#[repr(C)], 128-byte aligned fields)
//!                       magic, version, header_len, total_len, ring_capacity,
//!                       data_offset, creator_pid, attacher_pid, wait_mode,
//!                       rings[2]: RingControl (head, tail, wait lines)
//! data_offset         ring 0 data (A → B), ring_capacity bytes
//! data_offset + cap   ring 1 data (B → A), ring_capacity bytes
//! ```
//!
//! `data_offset` is the header rounded up to the page size; `ring_capacity` is a
//! power of two and a multiple of the page size, so each ring's data can be mapped
//! twice back to back ([`Mirror`]): a view of up to `capacity` bytes starting anywhere
//! in the ring is contiguous, which is what makes the zero-copy API possible.
//!
//! # Life cycle
//!
//! The creator makes a sealed memfd ([`super::backing`]: nobody can resize it, so no
//! peer can truncate it under the other side's mapping), initialises the header and
//! stores the magic last; its address is `memfd:<pid>:<fd>:<inode>`. The attacher reopens it
//! through `/proc`, checks the seals and the file size, then the magic, version,
//! header length, total length, geometry and creator pid before touching anything
//! else, and publishes its pid. As soon as the creator sees that pid it closes its
//! descriptor: from then on the region lives only as long as the two mappings, and
//! no crash can leave it behind.
//!
//! The header's ring indices stay writable by both sides: a peer can still scribble
//! over them. The rings check every index they read from the other side
//! ([`super::ring`]) and report a corrupt one as an error that names the region.
//!
//! Earlier builds made named objects `/dev/shm/xferbench-u<uid>-p<pid>-...`;
//! [`sweep_stale`] still removes those whose creator died, once per process.

use crate::shm::backing::{self, BackingError};
use crate::shm::mapping::Mapping;
use crate::shm::wait::WaitLine;
use rustix::fd::OwnedFd;
use rustix::mm::{MapFlags, ProtFlags};
use std::ffi::c_void;
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// `"XFBSHM01"` as a little-endian u64.
pub const MAGIC: u64 = u64::from_le_bytes(*b"XFBSHM01");
/// Layout version; bump on any change to [`RegionHeader`] or the data layout.
pub const LAYOUT_VERSION: u32 = 1;
/// Both processes use `membarrier` (see `wait::Fences::Asymmetric`).
pub const FLAG_ASYMMETRIC_FENCES: u32 = 1;
/// Prefix of the named objects earlier builds made in `/dev/shm` (and the kv
/// server's memfd names).
pub const NAME_PREFIX: &str = "xferbench-u";

/// One cache line pair (128 bytes: adjacent-line prefetchers fetch pairs) per field
/// group, so the producer's and consumer's writes never share a line.
#[repr(C, align(128))]
#[derive(Debug, Default)]
pub struct Padded<T>(pub T);

/// The producer's line: its published write position and its "closed" flag.
#[repr(C)]
#[derive(Debug, Default)]
pub struct ProducerLine {
    /// Bytes ever published (monotonic).
    pub head: AtomicU64,
    /// Set (after the final `head`) when the producer will send no more.
    pub closed: AtomicU32,
}

/// The consumer's line: its published read position and its "gone" flag.
#[repr(C)]
#[derive(Debug, Default)]
pub struct ConsumerLine {
    /// Bytes ever released (monotonic).
    pub tail: AtomicU64,
    /// Set when the consumer will read no more.
    pub gone: AtomicU32,
}

/// Shared state of one ring.
#[repr(C)]
#[derive(Debug, Default)]
pub struct RingControl {
    /// Written by the producer only.
    pub prod: Padded<ProducerLine>,
    /// Written by the consumer only.
    pub cons: Padded<ConsumerLine>,
    /// The consumer sleeps here waiting for data; the producer wakes it.
    pub data_wait: Padded<WaitLine>,
    /// The producer sleeps here waiting for room; the consumer wakes it.
    pub space_wait: Padded<WaitLine>,
}

/// The region header. Every field is written by the creator before `magic`, except
/// `attacher_pid` (the attacher) and the ring controls (the two sides at run time).
#[repr(C)]
#[derive(Debug)]
pub struct RegionHeader {
    /// [`MAGIC`], stored last by the creator.
    pub magic: AtomicU64,
    /// [`LAYOUT_VERSION`].
    pub version: u32,
    /// `size_of::<RegionHeader>()`.
    pub header_len: u32,
    /// Size of the whole object, bytes.
    pub total_len: u64,
    /// Data bytes of each ring.
    pub ring_capacity: u64,
    /// Offset of ring 0's data; ring 1's follows it.
    pub data_offset: u64,
    /// Process that created the region.
    pub creator_pid: u32,
    /// Process that attached, 0 until then.
    pub attacher_pid: AtomicU32,
    /// The wait strategy both sides must use (see `WaitMode::code`).
    pub wait_mode: u32,
    /// [`FLAG_ASYMMETRIC_FENCES`]: set by the creator if it can use membarrier,
    /// cleared by the attacher (before it publishes its pid) if it cannot.
    pub flags: AtomicU32,
    /// The two rings: 0 carries creator → attacher, 1 attacher → creator.
    pub rings: [RingControl; 2],
}

/// Why a region could not be created or attached.
#[derive(Debug, thiserror::Error)]
pub enum RegionError {
    /// A system call failed.
    #[error("{op}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The object is not an xferbench region (or not initialised yet).
    #[error("not an xferbench region: magic {found:#018x}, expected {MAGIC:#018x}")]
    BadMagic {
        /// The magic found.
        found: u64,
    },
    /// Made by another layout version.
    #[error(
        "region layout version {found}, this xferbench speaks {LAYOUT_VERSION}; run both sides from the same build"
    )]
    Version {
        /// The version found.
        found: u32,
    },
    /// The header's sizes do not add up, or disagree with the file.
    #[error("region sizes do not match: {0}")]
    Size(String),
    /// The backing memfd could not be made, opened or verified.
    #[error(transparent)]
    Backing(#[from] BackingError),
    /// The two sides were configured with different wait strategies.
    #[error(
        "the region uses wait strategy {found}, this side was configured with {expected}; use the same -p wait on both sides"
    )]
    WaitMode {
        /// The creator's.
        found: String,
        /// Ours.
        expected: String,
    },
}

fn io_err(op: &'static str) -> impl FnOnce(rustix::io::Errno) -> RegionError {
    move |e| RegionError::Io {
        op,
        source: e.into(),
    }
}

/// The page size.
pub fn page_size() -> usize {
    rustix::param::page_size()
}

/// A ring's data mapped twice back to back: `base[i]` and `base[i + capacity]` are
/// the same byte.
#[derive(Debug)]
pub struct Mirror {
    base: NonNull<u8>,
    capacity: usize,
}

impl Mirror {
    fn map(fd: &OwnedFd, offset: u64, capacity: usize) -> Result<Mirror, RegionError> {
        // SAFETY: an anonymous PROT_NONE reservation of fresh address space; nothing
        // else refers to it.
        let base = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                2 * capacity,
                ProtFlags::empty(),
                MapFlags::PRIVATE,
            )
        }
        .map_err(io_err("mmap (reserve)"))?;
        for half in 0..2 {
            // Populated: every page of both copies is in the page tables before the
            // first message, so no message pays a page fault when the ring first
            // reaches its page (one per page and copy, microseconds each in a VM: the
            // slowest round trips of a run through a large ring).
            // SAFETY: MAP_FIXED replaces part of the reservation we own, at a
            // page-aligned address inside it; the file range was checked to exist.
            let r = unsafe {
                rustix::mm::mmap(
                    base.cast::<u8>().add(half * capacity).cast::<c_void>(),
                    capacity,
                    ProtFlags::READ | ProtFlags::WRITE,
                    MapFlags::SHARED | MapFlags::FIXED | MapFlags::POPULATE,
                    fd,
                    offset,
                )
            };
            if let Err(e) = r {
                // SAFETY: unmapping the reservation made above, which nothing uses.
                let _ = unsafe { rustix::mm::munmap(base, 2 * capacity) };
                return Err(io_err("mmap (ring data)")(e));
            }
        }
        Ok(Mirror {
            base: NonNull::new(base.cast()).expect("mmap returns non-null"),
            capacity,
        })
    }

    /// Start of the first copy.
    pub fn base(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    /// Bytes in one copy.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `Mirror::map` and is unmapped once.
        let _ = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), 2 * self.capacity) };
    }
}

/// A mapped region.
#[derive(Debug)]
pub struct Region {
    /// The header's mapping (a `RegionHeader` at its start).
    header: Mapping,
    rings: [Mirror; 2],
    /// The address, while the creator still offers the region.
    name: Option<String>,
    /// The creator's descriptor until the peer attached (the mappings keep the
    /// memory alive after that).
    fd: Option<OwnedFd>,
}

// SAFETY: the region is plain shared memory; all shared mutable state in it is atomics
// (header fields are read-only after creation), and the data rings are accessed under
// the SPSC protocol by exactly one producer and one consumer.
unsafe impl Send for Region {}
// SAFETY: as above; `&Region` only hands out the header (atomics) and raw pointers.
unsafe impl Sync for Region {}

/// Geometry of a region with rings of `capacity` bytes.
fn geometry(capacity: usize) -> (u64, u64) {
    let page = page_size();
    let data_offset = std::mem::size_of::<RegionHeader>().div_ceil(page) * page;
    (data_offset as u64, data_offset as u64 + 2 * capacity as u64)
}

/// A ring capacity is valid when it is a power of two, a multiple of the page size,
/// and at most 1 GiB.
pub fn valid_capacity(capacity: u64) -> bool {
    capacity.is_power_of_two() && capacity.is_multiple_of(page_size() as u64) && capacity <= 1 << 30
}

impl Region {
    /// Creates a region with two rings of `capacity` bytes.
    pub fn create(capacity: usize, wait_mode: u32) -> Result<Region, RegionError> {
        if !valid_capacity(capacity as u64) {
            return Err(RegionError::Size(format!(
                "ring capacity {capacity} is not a power of two multiple of the page size ({}) up to 1 GiB",
                page_size()
            )));
        }
        sweep_stale_once();
        let (data_offset, total) = geometry(capacity);
        let (fd, name) = backing::create("region", total)?;
        let header = map_header(&fd, data_offset as usize)?;
        // SAFETY: we created the object and nobody else can have it mapped yet (the
        // address is not published); the memory is zeroed by ftruncate, which is a valid
        // RegionHeader except for the plain fields we write now.
        unsafe {
            let h = header.as_ptr().cast::<RegionHeader>();
            (&raw mut (*h).version).write(LAYOUT_VERSION);
            (&raw mut (*h).header_len).write(std::mem::size_of::<RegionHeader>() as u32);
            (&raw mut (*h).total_len).write(total);
            (&raw mut (*h).ring_capacity).write(capacity as u64);
            (&raw mut (*h).data_offset).write(data_offset);
            (&raw mut (*h).creator_pid).write(std::process::id());
            (&raw mut (*h).wait_mode).write(wait_mode);
        }
        // On an error the header mapping unmaps itself.
        let rings = match (
            Mirror::map(&fd, data_offset, capacity),
            Mirror::map(&fd, data_offset + capacity as u64, capacity),
        ) {
            (Ok(a), Ok(b)) => [a, b],
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        let region = Region {
            header,
            rings,
            name: Some(name),
            fd: Some(fd),
        };
        if crate::shm::wait::asymmetric_fences_available() {
            region
                .header()
                .flags
                .store(FLAG_ASYMMETRIC_FENCES, Ordering::Relaxed);
        }
        region.header().magic.store(MAGIC, Ordering::Release);
        Ok(region)
    }

    /// Attaches to the region at `address` (`memfd:<pid>:<fd>:<inode>`), validating its
    /// seals and header first.
    pub fn attach(address: &str, wait_mode: u32) -> Result<Region, RegionError> {
        let backing::Opened {
            fd,
            len: file_len,
            pid: creator,
        } = backing::open(address)?;
        let page = page_size();
        let header_len = std::mem::size_of::<RegionHeader>() as u64;
        if file_len < header_len {
            return Err(RegionError::Size(format!(
                "the object has {file_len} bytes, less than the {header_len}-byte header"
            )));
        }
        let header_map_len = (header_len as usize).div_ceil(page) * page;
        // On an error below the header mapping unmaps itself.
        let header = map_header(&fd, header_map_len.min(file_len as usize))?;
        // SAFETY: the mapping covers a whole RegionHeader (checked against the file
        // size above); its fields are read as they are, whatever the creator wrote.
        let h = unsafe { &*header.as_ptr().cast::<RegionHeader>() };
        let Geometry {
            data_offset,
            ring_capacity: cap,
            ..
        } = h.validate(file_len, wait_mode)?;
        // SAFETY: a plain read of a field the creator wrote before the magic, which
        // `validate` read with Acquire.
        let creator_pid =
            unsafe { (&raw const (*header.as_ptr().cast::<RegionHeader>()).creator_pid).read() };
        if creator_pid as i32 != creator {
            return Err(RegionError::Size(format!(
                "the header names creator pid {creator_pid}, the address {address} pid {creator}"
            )));
        }
        let rings = match (
            Mirror::map(&fd, data_offset, cap as usize),
            Mirror::map(&fd, data_offset + cap, cap as usize),
        ) {
            (Ok(a), Ok(b)) => [a, b],
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        // The mappings keep the memory; the descriptor is not needed any more.
        drop(fd);
        let region = Region {
            header,
            rings,
            name: None,
            fd: None,
        };
        if !crate::shm::wait::asymmetric_fences_available() {
            region
                .header()
                .flags
                .fetch_and(!FLAG_ASYMMETRIC_FENCES, Ordering::Relaxed);
        }
        region
            .header()
            .attacher_pid
            .store(std::process::id(), Ordering::Release);
        Ok(region)
    }

    /// The header.
    pub fn header(&self) -> &RegionHeader {
        // SAFETY: the header mapping lives as long as `self`, covers a whole
        // RegionHeader and was validated.
        unsafe { &*self.header.as_ptr().cast::<RegionHeader>() }
    }

    /// Ring `i`'s control block (0 or 1).
    pub fn control(&self, i: usize) -> &RingControl {
        &self.header().rings[i]
    }

    /// Ring `i`'s data.
    pub fn data(&self, i: usize) -> &Mirror {
        &self.rings[i]
    }

    /// The address (`memfd:<pid>:<fd>:<inode>`), while the creator still offers the region.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Withdraws the address and closes the creator's descriptor (idempotent):
    /// nobody else can attach from now on. The mappings stay valid.
    pub fn unlink(&mut self) {
        self.name = None;
        self.fd = None;
    }

    /// The creator's descriptor, while it still offers the region (for tests that
    /// play a hostile peer).
    pub fn fd(&self) -> Option<&OwnedFd> {
        self.fd.as_ref()
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        self.unlink();
        // The header mapping and the ring mirrors unmap themselves.
    }
}

fn map_header(fd: &OwnedFd, len: usize) -> Result<Mapping, RegionError> {
    Mapping::new(fd, len, true).map_err(io_err("mmap (header)"))
}

/// Where a validated header says the rings lie: ring 0's data at `data_offset`, ring
/// 1's right after it, each `ring_capacity` bytes, `total_len` bytes in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Offset of ring 0's data (the header rounded up to the page size).
    pub data_offset: u64,
    /// Data bytes of each ring: a power-of-two multiple of the page size, at most 1 GiB.
    pub ring_capacity: u64,
    /// Bytes of the whole object: `data_offset + 2 · ring_capacity`.
    pub total_len: u64,
}

impl RegionHeader {
    /// Validates a header found at the start of an object of `file_len` bytes by a side
    /// configured with `wait_mode`, before anything else in the object is touched:
    /// the magic (read with Acquire, as the creator stores it last), version, header
    /// length, ring capacity and the geometry recomputed from it, which must match the
    /// header and the object's size. On success every byte of both rings lies within
    /// `file_len`. Any bytes may be in the header: this never panics. [`Region::attach`]
    /// makes these checks (then the creator pid's against the address); the fuzz
    /// target `shm_region` drives them on arbitrary bytes.
    pub fn validate(&self, file_len: u64, wait_mode: u32) -> Result<Geometry, RegionError> {
        let magic = self.magic.load(Ordering::Acquire);
        if magic != MAGIC {
            return Err(RegionError::BadMagic { found: magic });
        }
        let (version, hlen, total, cap, data_offset, mode) = (
            self.version,
            self.header_len,
            self.total_len,
            self.ring_capacity,
            self.data_offset,
            self.wait_mode,
        );
        if version != LAYOUT_VERSION {
            return Err(RegionError::Version { found: version });
        }
        let header_len = std::mem::size_of::<RegionHeader>() as u64;
        if u64::from(hlen) != header_len {
            return Err(RegionError::Size(format!(
                "header of {hlen} bytes, expected {header_len}"
            )));
        }
        if !valid_capacity(cap) {
            return Err(RegionError::Size(format!(
                "ring capacity {cap} is not a power-of-two multiple of the page size"
            )));
        }
        let (want_offset, want_total) = geometry(cap as usize);
        if data_offset != want_offset || total != want_total || file_len != total {
            return Err(RegionError::Size(format!(
                "header says data at {data_offset} and {total} bytes in all, the geometry needs {want_offset} and \
                 {want_total}, and the object has {file_len}"
            )));
        }
        if mode != wait_mode {
            return Err(RegionError::WaitMode {
                found: crate::shm::wait::WaitMode::name_of(mode),
                expected: crate::shm::wait::WaitMode::name_of(wait_mode),
            });
        }
        Ok(Geometry {
            data_offset,
            ring_capacity: cap,
            total_len: total,
        })
    }
}

#[cfg(test)]
mod validate_tests {
    use super::*;

    #[test]
    fn a_created_header_validates_and_a_wrong_size_or_mode_is_refused() {
        let r = Region::create(page_size(), 0).unwrap();
        let h = r.header();
        let total = h.total_len;
        let g = h.validate(total, 0).unwrap();
        assert_eq!(g.ring_capacity, page_size() as u64);
        assert_eq!(g.data_offset + 2 * g.ring_capacity, total);
        assert!(matches!(
            h.validate(total + 1, 0),
            Err(RegionError::Size(_))
        ));
        assert!(matches!(
            h.validate(total, 1),
            Err(RegionError::WaitMode { .. })
        ));
    }
}

/// Removes regions of this user whose creating process no longer exists. Returns the
/// names removed.
pub fn sweep_stale() -> Vec<String> {
    let prefix = format!("{NAME_PREFIX}{}-p", rustix::process::getuid().as_raw());
    let mut removed = Vec::new();
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return removed;
    };
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        if !crate::shm::wait::process_alive(pid)
            && rustix::shm::unlink(format!("/{name}").as_str()).is_ok()
        {
            removed.push(name);
        }
    }
    removed
}

fn sweep_stale_once() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        sweep_stale();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_cannot_be_resized_by_either_side() {
        let r = Region::create(page_size(), 0).unwrap();
        assert_eq!(r.data(0).capacity(), page_size());
        let address = r.name().unwrap().to_string();
        let o = backing::open(&address).unwrap();
        for fd in [r.fd().unwrap(), &o.fd] {
            assert_eq!(rustix::fs::ftruncate(fd, 0), Err(rustix::io::Errno::PERM));
            assert_eq!(
                rustix::fs::ftruncate(fd, o.len * 2),
                Err(rustix::io::Errno::PERM)
            );
        }
        let a = Region::attach(&address, 0).unwrap();
        assert_eq!(a.data(1).capacity(), page_size());
    }

    /// Whether the page at `addr` of this process is in its page tables
    /// (`/proc/self/pagemap`, bit 63).
    fn present(addr: usize) -> bool {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open("/proc/self/pagemap").unwrap();
        f.seek(SeekFrom::Start((addr / page_size() * 8) as u64))
            .unwrap();
        let mut entry = [0u8; 8];
        f.read_exact(&mut entry).unwrap();
        u64::from_le_bytes(entry) >> 63 == 1
    }

    #[test]
    fn both_copies_of_every_ring_are_mapped_before_the_first_message() {
        let capacity = 64 * page_size();
        let created = Region::create(capacity, 0).unwrap();
        let attached = Region::attach(created.name().unwrap(), 0).unwrap();
        for region in [&created, &attached] {
            for ring in 0..2 {
                let base = region.data(ring).base() as usize;
                let missing: Vec<usize> = (0..2 * capacity)
                    .step_by(page_size())
                    .filter(|&at| !present(base + at))
                    .collect();
                assert!(
                    missing.is_empty(),
                    "ring {ring}: pages at {missing:?} not mapped"
                );
            }
        }
    }

    #[test]
    fn a_withdrawn_address_does_not_attach() {
        let mut r = Region::create(page_size(), 0).unwrap();
        let address = r.name().unwrap().to_string();
        r.unlink();
        let err = Region::attach(&address, 0).unwrap_err();
        // Gone, or (another test of this process reused the number) another region.
        let msg = err.to_string();
        assert!(
            msg.contains("no region at") || msg.contains("stale address"),
            "{msg}"
        );
    }
}
