//! The validated header every kv object starts with, and the shared-memory objects
//! themselves.
//!
//! # Layout
//!
//! ```text
//! offset 0    KvHeader: magic, version, arch, header_len, workers, total_len,
//!             buckets, server_pid, part, served, epoch
//! offset 128  the architecture's body (see preopt.rs, ring.rs, sharded.rs)
//! ```
//!
//! The server creates each object with `O_CREAT | O_EXCL`, mode 0600, as
//! `/xferbench-u<uid>-p<pid>-kv<n>` (preopt's response object adds `-res`), so the
//! stale-region sweep of [`crate::shm::region::sweep_stale`] removes objects whose
//! server died. It writes every field, then the body, then the magic last.
//!
//! A client refuses an object unless its file holds a whole header, the magic,
//! version and header length are ours, the architecture and worker count are
//! known and in range, and `total_len` equals both the file's size and the size the
//! architecture's layout needs for that worker count. Offsets into the body are
//! computed from those checked values, never read from shared memory.

use super::{Arch, KvError};
use rustix::fd::OwnedFd;
use rustix::fs::Mode;
use rustix::mm::{MapFlags, ProtFlags};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// `"XFBKV001"` as a little-endian u64.
pub const MAGIC: u64 = u64::from_le_bytes(*b"XFBKV001");
/// Layout version; bump on any change to a kv layout.
pub const VERSION: u32 = 1;
/// Where the body starts.
pub const BODY_OFFSET: usize = 128;
/// Most workers a server may have.
pub const MAX_WORKERS: u32 = 256;

/// The header. Written by the server before `magic`, except `served` and `epoch`.
#[repr(C)]
#[derive(Debug)]
pub struct KvHeader {
    /// [`MAGIC`], stored last.
    pub magic: AtomicU64,
    /// [`VERSION`].
    pub version: u32,
    /// [`Arch::code`].
    pub arch: u32,
    /// `size_of::<KvHeader>()`.
    pub header_len: u32,
    /// Worker threads of the server.
    pub workers: u32,
    /// Bytes of the whole object.
    pub total_len: u64,
    /// Buckets of the table.
    pub buckets: u64,
    /// The server's process id.
    pub server_pid: u32,
    /// 0: the main object; 1: preopt's response object.
    pub part: u32,
    /// Requests served so far (preopt, ring; sharded counts per worker).
    pub served: AtomicU64,
    /// Sharded: bumped on every join, leave and reclaimed client.
    pub epoch: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<KvHeader>() <= BODY_OFFSET);

/// A mapped kv object.
#[derive(Debug)]
pub struct ShmObject {
    ptr: NonNull<u8>,
    len: usize,
    name: String,
    owner: bool,
    _fd: OwnedFd,
}

// SAFETY: plain shared memory; all shared mutable state in it is atomics or
// process-shared synchronisation objects, accessed under each architecture's protocol.
unsafe impl Send for ShmObject {}
// SAFETY: as above.
unsafe impl Sync for ShmObject {}

fn io(op: &'static str) -> impl FnOnce(rustix::io::Errno) -> KvError {
    move |e| KvError::Io {
        op,
        source: e.into(),
    }
}

/// The name of server object `n` of this process.
pub fn object_name(n: u64) -> String {
    format!(
        "/{}{}-p{}-kv{n}",
        crate::shm::region::NAME_PREFIX,
        rustix::process::getuid().as_raw(),
        std::process::id()
    )
}

/// What the server writes in a header.
#[derive(Debug, Clone, Copy)]
pub struct HeaderFields {
    /// The architecture.
    pub arch: Arch,
    /// Workers.
    pub workers: u32,
    /// Buckets.
    pub buckets: u64,
    /// Which object.
    pub part: u32,
}

impl ShmObject {
    /// Creates `name` (mode 0600, exclusive) for `fields`, sized by the layout;
    /// `init` initialises the body before the magic is stored.
    pub fn create(
        name: &str,
        fields: HeaderFields,
        init: impl FnOnce(*mut u8) -> Result<(), KvError>,
    ) -> Result<ShmObject, KvError> {
        let total = BODY_OFFSET + fields.arch.body_len(fields.workers, fields.part);
        let fd = rustix::shm::open(
            name,
            rustix::shm::OFlags::CREATE | rustix::shm::OFlags::EXCL | rustix::shm::OFlags::RDWR,
            Mode::from_raw_mode(0o600),
        )
        .map_err(io("shm_open (create)"))?;
        let unlink = |e| {
            let _ = rustix::shm::unlink(name);
            e
        };
        rustix::fs::ftruncate(&fd, total as u64)
            .map_err(io("ftruncate"))
            .map_err(unlink)?;
        let ptr = map(&fd, total).map_err(unlink)?;
        let obj = ShmObject {
            ptr,
            len: total,
            name: name.to_string(),
            owner: true,
            _fd: fd,
        };
        // SAFETY: a fresh zeroed mapping of `total` ≥ BODY_OFFSET bytes that nobody
        // else has mapped yet; zero is a valid KvHeader, whose plain fields we write.
        unsafe {
            let h = obj.ptr.as_ptr().cast::<KvHeader>();
            (&raw mut (*h).version).write(VERSION);
            (&raw mut (*h).arch).write(fields.arch.code());
            (&raw mut (*h).header_len).write(std::mem::size_of::<KvHeader>() as u32);
            (&raw mut (*h).workers).write(fields.workers);
            (&raw mut (*h).total_len).write(total as u64);
            (&raw mut (*h).buckets).write(fields.buckets);
            (&raw mut (*h).server_pid).write(std::process::id());
            (&raw mut (*h).part).write(fields.part);
        }
        // SAFETY: the body starts at BODY_OFFSET inside the mapping.
        init(unsafe { obj.ptr.as_ptr().add(BODY_OFFSET) })?;
        obj.header().magic.store(MAGIC, Ordering::Release);
        Ok(obj)
    }

    /// Opens `name` and validates its header (see the module doc); `part` is the
    /// object expected.
    pub fn open(name: &str, part: u32) -> Result<ShmObject, KvError> {
        let fd =
            rustix::shm::open(name, rustix::shm::OFlags::RDWR, Mode::empty()).map_err(|e| {
                if e == rustix::io::Errno::NOENT {
                    KvError::NoServer(format!("{name} does not exist: is the server running?"))
                } else {
                    io("shm_open")(e)
                }
            })?;
        let st = rustix::fs::fstat(&fd).map_err(io("fstat"))?;
        let file_len = st.st_size.max(0) as usize;
        if file_len < BODY_OFFSET {
            return Err(KvError::Header(format!(
                "{name} has {file_len} bytes, less than the {BODY_OFFSET}-byte header (truncated, or not a kv server)"
            )));
        }
        let ptr = map(&fd, file_len)?;
        let obj = ShmObject {
            ptr,
            len: file_len,
            name: name.to_string(),
            owner: false,
            _fd: fd,
        };
        obj.validate(part).map_err(|e| match e {
            KvError::Header(m) => KvError::Header(format!("{name}: {m}")),
            other => other,
        })?;
        Ok(obj)
    }

    fn validate(&self, part: u32) -> Result<(), KvError> {
        let h = self.header();
        let magic = h.magic.load(Ordering::Acquire);
        if magic != MAGIC {
            return Err(KvError::Header(format!(
                "magic {magic:#018x}, expected {MAGIC:#018x} (not a kv server, or not ready yet)"
            )));
        }
        if h.version != VERSION {
            return Err(KvError::Header(format!(
                "layout version {}, this xferbench speaks {VERSION}; run server and clients from the same build",
                h.version
            )));
        }
        if h.header_len as usize != std::mem::size_of::<KvHeader>() {
            return Err(KvError::Header(format!(
                "header of {} bytes, expected {}",
                h.header_len,
                std::mem::size_of::<KvHeader>()
            )));
        }
        let arch = Arch::from_code(h.arch)
            .ok_or_else(|| KvError::Header(format!("unknown architecture code {}", h.arch)))?;
        if h.workers == 0 || h.workers > MAX_WORKERS {
            return Err(KvError::Header(format!(
                "{} workers, expected 1 to {MAX_WORKERS}",
                h.workers
            )));
        }
        if h.part != part {
            return Err(KvError::Header(format!(
                "object part {}, expected {part}",
                h.part
            )));
        }
        let want = BODY_OFFSET + arch.body_len(h.workers, part);
        if h.total_len != want as u64 || self.len != want {
            return Err(KvError::Header(format!(
                "header says {} bytes, the {} layout with {} workers needs {want}, and the object has {}",
                h.total_len,
                arch.name(),
                h.workers,
                self.len
            )));
        }
        Ok(())
    }

    /// The header.
    pub fn header(&self) -> &KvHeader {
        // SAFETY: the mapping holds at least BODY_OFFSET ≥ size_of::<KvHeader>() bytes
        // and lives as long as `self`; every field is valid for any bit pattern.
        unsafe { self.ptr.cast::<KvHeader>().as_ref() }
    }

    /// The architecture (validated on open).
    pub fn arch(&self) -> Arch {
        Arch::from_code(self.header().arch).unwrap_or(Arch::Preopt)
    }

    /// Start of the body.
    pub fn body(&self) -> *mut u8 {
        // SAFETY: BODY_OFFSET is inside the mapping (checked on create and open).
        unsafe { self.ptr.as_ptr().add(BODY_OFFSET) }
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for ShmObject {
    fn drop(&mut self) {
        if self.owner {
            let _ = rustix::shm::unlink(self.name.as_str());
        }
        // SAFETY: the mapping made in create/open, unmapped once.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

fn map(fd: &OwnedFd, len: usize) -> Result<NonNull<u8>, KvError> {
    // SAFETY: a fresh shared mapping of the object's first `len` bytes, which exist.
    let p = unsafe {
        rustix::mm::mmap(
            std::ptr::null_mut(),
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED,
            fd,
            0,
        )
    }
    .map_err(io("mmap"))?;
    Ok(NonNull::new(p.cast()).expect("mmap returns non-null"))
}

/// The kv servers of this user that are running: (name, server pid).
pub fn running_servers() -> Vec<(String, i32)> {
    let prefix = format!(
        "{}{}-p",
        crate::shm::region::NAME_PREFIX,
        rustix::process::getuid().as_raw()
    );
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return Vec::new();
    };
    let mut out: Vec<(String, i32)> = dir
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let rest = name.strip_prefix(&prefix)?;
            let (pid, kv) = rest.split_once('-')?;
            let pid: i32 = pid.parse().ok()?;
            let n = kv.strip_prefix("kv")?;
            (n.parse::<u64>().is_ok() && crate::shm::wait::process_alive(pid))
                .then(|| (format!("/{name}"), pid))
        })
        .collect();
    out.sort();
    out
}
