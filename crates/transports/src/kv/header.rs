//! The validated header every kv object starts with, and the shared-memory objects
//! themselves.
//!
//! # Layout
//!
//! ```text
//! offset 0    KvHeader: magic, version, arch, header_len, workers, total_len,
//!             buckets, server_pid, part, served, epoch, companion_fd,
//!             companion_ino
//! offset 128  the architecture's body (see preopt.rs, ring.rs, sharded.rs)
//! ```
//!
//! The server creates each object as a sealed memfd ([`crate::shm::backing`]) called
//! `xferbench-kv<n>` (preopt's response object adds `-res`): nobody can resize it,
//! and it vanishes with the server. Its address is `memfd:<server pid>:<fd>:<inode>`;
//! preopt's main header names the response object's descriptor and inode.
//! The server writes every field, then the body, then the magic last.
//!
//! A client refuses an object unless it is one of our memfds with all seals, the
//! server pid of the address matches the header, its file holds a whole header, the magic,
//! version and header length are ours, the architecture and worker count are
//! known and in range, and `total_len` equals both the file's size and the size the
//! architecture's layout needs for that worker count. Offsets into the body are
//! computed from those checked values, never read from shared memory.

use super::arch::Arch;
use super::error::KvError;
use crate::shm::mapping::Mapping;
use rustix::fd::OwnedFd;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// `"XFBKV001"` as a little-endian u64.
pub const MAGIC: u64 = u64::from_le_bytes(*b"XFBKV001");
/// Layout version; bump on any change to a kv layout.
pub const VERSION: u32 = 3;
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
    /// Preopt's main object: the server's descriptor of the response object.
    pub companion_fd: u32,
    /// Preopt's main object: the response object's inode.
    pub companion_ino: u64,
    /// 0: a public server, which [`running_servers`] lists and any client may join;
    /// else the key of a private server ([`PrivateKey`](super::config::PrivateKey)), which only
    /// a client presenting it joins and which is listed nowhere.
    pub key: u64,
}

const _: () = assert!(std::mem::size_of::<KvHeader>() <= BODY_OFFSET);

/// A mapped kv object.
#[derive(Debug)]
pub struct ShmObject {
    map: Mapping,
    /// `memfd:<server pid>:<fd>:<inode>`.
    address: String,
    fd: OwnedFd,
    /// Private copies of the validated header fields the layout depends on: a peer
    /// can rewrite the shared header at any time, so offsets are never computed from
    /// it after validation.
    arch: Arch,
    workers: u32,
    server_pid: u32,
    /// The header's key, read once on open ([`KvHeader::key`]).
    key: u64,
}

fn io(op: &'static str) -> impl FnOnce(rustix::io::Errno) -> KvError {
    move |e| KvError::Io {
        op,
        source: e.into(),
    }
}

/// The memfd name of server object `n` of this process (after the `xferbench-`
/// prefix).
pub fn object_name(n: u64) -> String {
    format!("kv{n}")
}

fn backing_err(e: crate::shm::backing::BackingError) -> KvError {
    use crate::shm::backing::BackingError;
    match e {
        e @ (BackingError::Gone { .. } | BackingError::Address { .. }) => {
            KvError::NoServer(format!("{e}: is the server running?"))
        }
        BackingError::Io { op, source } => KvError::Io { op, source },
        other => KvError::Header(other.to_string()),
    }
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
    /// The descriptor and inode of a companion object (preopt's response object),
    /// or zeros.
    pub companion: (u32, u64),
    /// A private server's key ([`KvHeader::key`]), or 0.
    pub key: u64,
}

impl ShmObject {
    /// Creates the sealed memfd `xferbench-<name>` for `fields`, sized by the
    /// layout; `init` initialises the body before the magic is stored.
    pub fn create(
        name: &str,
        fields: HeaderFields,
        init: impl FnOnce(*mut u8) -> Result<(), KvError>,
    ) -> Result<ShmObject, KvError> {
        let total = BODY_OFFSET + fields.arch.body_len(fields.workers, fields.part);
        let (fd, address) = crate::shm::backing::create(name, total as u64).map_err(backing_err)?;
        let map = Mapping::new(&fd, total, true).map_err(io("mmap"))?;
        let obj = ShmObject {
            map,
            address,
            fd,
            arch: fields.arch,
            workers: fields.workers,
            server_pid: std::process::id(),
            key: fields.key,
        };
        // SAFETY: a fresh zeroed mapping of `total` ≥ BODY_OFFSET bytes that nobody
        // else has mapped yet; zero is a valid KvHeader, whose plain fields we write.
        unsafe {
            let h = obj.map.as_ptr().cast::<KvHeader>();
            (&raw mut (*h).version).write(VERSION);
            (&raw mut (*h).arch).write(fields.arch.code());
            (&raw mut (*h).header_len).write(std::mem::size_of::<KvHeader>() as u32);
            (&raw mut (*h).workers).write(fields.workers);
            (&raw mut (*h).total_len).write(total as u64);
            (&raw mut (*h).buckets).write(fields.buckets);
            (&raw mut (*h).server_pid).write(std::process::id());
            (&raw mut (*h).part).write(fields.part);
            (&raw mut (*h).companion_fd).write(fields.companion.0);
            (&raw mut (*h).companion_ino).write(fields.companion.1);
            (&raw mut (*h).key).write(fields.key);
        }
        // SAFETY: the body starts at BODY_OFFSET inside the mapping.
        init(unsafe { obj.map.as_ptr().add(BODY_OFFSET) })?;
        obj.header().magic.store(MAGIC, Ordering::Release);
        Ok(obj)
    }

    /// Opens the object at `name` (`memfd:<pid>:<fd>:<inode>`) and validates its seals and
    /// header (see the module doc); `part` is the object expected.
    pub fn open(name: &str, part: u32) -> Result<ShmObject, KvError> {
        let opened = crate::shm::backing::open(name).map_err(backing_err)?;
        let (fd, pid) = (opened.fd, opened.pid);
        let file_len = usize::try_from(opened.len).unwrap_or(usize::MAX);
        if file_len < BODY_OFFSET {
            return Err(KvError::Header(format!(
                "{name} has {file_len} bytes, less than the {BODY_OFFSET}-byte header (truncated, or not a kv server)"
            )));
        }
        let map = Mapping::new(&fd, file_len, true).map_err(io("mmap"))?;
        let mut obj = ShmObject {
            map,
            address: name.to_string(),
            fd,
            arch: Arch::Preopt,
            workers: 0,
            server_pid: 0,
            key: 0,
        };
        let (arch, workers) = obj.validate(part, pid).map_err(|e| match e {
            KvError::Header(m) => KvError::Header(format!("{name}: {m}")),
            other => other,
        })?;
        obj.arch = arch;
        obj.workers = workers;
        obj.server_pid = pid as u32;
        obj.key = obj.header().key;
        Ok(obj)
    }

    /// Checks the header; returns the architecture and worker count it validated
    /// (read once: the shared fields may change under us).
    fn validate(&self, part: u32, pid: i32) -> Result<(Arch, u32), KvError> {
        let h = self.header();
        let (arch_code, workers) = (h.arch, h.workers);
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
        let arch = Arch::from_code(arch_code)
            .ok_or_else(|| KvError::Header(format!("unknown architecture code {arch_code}")))?;
        if workers == 0 || workers > MAX_WORKERS {
            return Err(KvError::Header(format!(
                "{workers} workers, expected 1 to {MAX_WORKERS}"
            )));
        }
        if h.server_pid as i32 != pid {
            return Err(KvError::Header(format!(
                "the header names server pid {}, the address pid {pid}",
                h.server_pid
            )));
        }
        if h.part != part {
            return Err(KvError::Header(format!(
                "object part {}, expected {part}",
                h.part
            )));
        }
        let want = BODY_OFFSET + arch.body_len(workers, part);
        if h.total_len != want as u64 || self.map.len() != want {
            return Err(KvError::Header(format!(
                "header says {} bytes, the {} layout with {} workers needs {want}, and the object has {}",
                h.total_len,
                arch.name(),
                workers,
                self.map.len()
            )));
        }
        Ok((arch, workers))
    }

    /// The header.
    pub fn header(&self) -> &KvHeader {
        // SAFETY: the mapping holds at least BODY_OFFSET ≥ size_of::<KvHeader>() bytes
        // and lives as long as `self`; every field is valid for any bit pattern.
        unsafe { &*self.map.as_ptr().cast::<KvHeader>() }
    }

    /// The architecture (validated on open; a private copy).
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// Worker threads of the server (validated on open; a private copy).
    pub fn workers(&self) -> u32 {
        self.workers
    }

    /// The server's pid (the address's, checked against the header on open).
    pub fn server_pid(&self) -> u32 {
        self.server_pid
    }

    /// A private server's key, or 0 (read once on open: [`KvHeader::key`]).
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Start of the body.
    pub fn body(&self) -> *mut u8 {
        // SAFETY: BODY_OFFSET is inside the mapping (checked on create and open).
        unsafe { self.map.as_ptr().add(BODY_OFFSET) }
    }

    /// The object's address, `memfd:<server pid>:<fd>:<inode>`.
    pub fn name(&self) -> &str {
        &self.address
    }

    /// The descriptor (the server's, or the one a client reopened).
    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// The descriptor number and inode, for a header that names this object.
    pub fn fd_and_inode(&self) -> (u32, u64) {
        let ino = rustix::fs::fstat(&self.fd).map_or(0, |st| st.st_ino);
        (rustix::fd::AsRawFd::as_raw_fd(&self.fd) as u32, ino)
    }

    /// The address of the companion object named in the header (preopt's response
    /// object), reached through the same server process.
    pub fn companion(&self) -> String {
        let h = self.header();
        crate::shm::backing::address(
            self.server_pid as i32,
            h.companion_fd as i32,
            h.companion_ino,
        )
    }
}

/// The kv servers of this user that are running, one per server, private ones
/// included ([`KvHeader::key`]).
///
/// Found by their main objects' memfds in `/proc/<pid>/fd` (`/memfd:xferbench-kv<n>`).
/// Every process that maps a server's object holds it there too (a client, a visitor,
/// a second `xferbench kv client`), so the memfds are grouped by the object's identity
/// (its inode) and each object is named once, through the process its header names
/// as the server: a client or visitor is never counted as a server. An object whose
/// header names none of its holders (its server has exited and a client still holds
/// it, or it is not initialised yet) is no running server.
pub fn running_servers() -> Vec<Running> {
    use std::collections::BTreeMap;
    use std::os::unix::fs::MetadataExt;
    let uid = rustix::process::getuid().as_raw();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let want = format!("/memfd:{}kv", crate::shm::backing::MEMFD_PREFIX);
    // inode → every (pid, fd) holding it.
    let mut holders: BTreeMap<u64, Vec<(i32, i32)>> = BTreeMap::new();
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if p.metadata().map(|m| m.uid()).ok() != Some(uid) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for f in fds.flatten() {
            let Ok(target) = std::fs::read_link(f.path()) else {
                continue;
            };
            let target = target.to_string_lossy();
            let Some(rest) = target.strip_prefix(&want) else {
                continue;
            };
            // "<n> (deleted)": the main object only, not "<n>-res (deleted)".
            let n = rest.split(' ').next().unwrap_or("");
            if n.parse::<u64>().is_err() {
                continue;
            }
            let (Some(fd), Ok(st)) = (
                f.file_name().to_str().and_then(|s| s.parse::<i32>().ok()),
                std::fs::metadata(f.path()),
            ) else {
                continue;
            };
            holders.entry(st.ino()).or_default().push((pid, fd));
        }
    }
    let mut out: Vec<Running> = holders
        .into_iter()
        .filter_map(|(ino, held)| {
            let (server, private) = held.iter().find_map(|&(p, fd)| header_server(p, fd))?;
            let &(pid, fd) = held.iter().find(|(p, _)| *p == server)?;
            Some(Running {
                address: crate::shm::backing::address(pid, fd, ino),
                pid,
                private,
            })
        })
        .collect();
    out.sort_by(|a, b| a.address.cmp(&b.address));
    out
}

/// A running kv server, as [`running_servers`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// Its address, `memfd:<server pid>:<fd>:<inode>`.
    pub address: String,
    /// The server's pid.
    pub pid: i32,
    /// A private server ([`KvHeader::key`]): only the clients its owner starts join.
    pub private: bool,
}

/// The server pid in the header of the kv object open as descriptor `fd` of process
/// `pid`, and whether the server is private, when the object is initialised (its
/// magic is set); read with `pread`, without mapping it.
fn header_server(pid: i32, fd: i32) -> Option<(i32, bool)> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(format!("/proc/{pid}/fd/{fd}")).ok()?;
    let mut h = [0u8; std::mem::size_of::<KvHeader>()];
    file.read_exact_at(&mut h, 0).ok()?;
    let field = |at: usize| h[at..at + 4].try_into().ok().map(u32::from_ne_bytes);
    let magic = u64::from_ne_bytes(h[..8].try_into().ok()?);
    let server = field(std::mem::offset_of!(KvHeader, server_pid))?;
    let at = std::mem::offset_of!(KvHeader, key);
    let key = u64::from_ne_bytes(h[at..at + 8].try_into().ok()?);
    (magic == MAGIC && server > 0).then_some((server as i32, key != 0))
}
