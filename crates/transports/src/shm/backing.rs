//! The backing of every shared region: a sealed memfd, handed over by address.
//!
//! A region (the `shm` transport's rings, the RPMsg link, the kv server's objects,
//! the digitizer model's control block and DMA targets) lives in a memfd made with
//! `MFD_ALLOW_SEALING | MFD_CLOEXEC`, sized, backed (`fallocate`) and then sealed
//! with `F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL`. From then on nobody, the
//! creator included, can resize it, so no peer can truncate it under the other
//! side's mapping (which would kill that side with SIGBUS on its next access):
//! `ftruncate` fails with `EPERM`.
//!
//! # Address and handover
//!
//! A memfd has no name in a file system. Its address is `memfd:<pid>:<fd>:<inode>`:
//! the creating process, the descriptor it holds and the memfd's inode number.
//! Another process of the same user opens `/proc/<pid>/fd/<fd>`, which reopens the
//! same file (same inode, seals intact), and before mapping anything checks that the
//! link names one of our memfds, that the inode is the one addressed (a descriptor
//! number can be reused once closed), that the seals are all set ([`SEALS`]) and how
//! large the file is. Anything else is refused with an error that names the address.
//!
//! The memory vanishes with its last holder (descriptor or mapping), so a crash
//! leaves nothing behind; the creator closes its descriptor once the peer attached,
//! after which the address no longer opens.

use rustix::fd::{AsFd, AsRawFd, OwnedFd};
use rustix::fs::{MemfdFlags, Mode, OFlags, SealFlags};
use std::io;

/// The seals every region carries.
pub const SEALS: SealFlags = SealFlags::SHRINK
    .union(SealFlags::GROW)
    .union(SealFlags::SEAL);
/// How an address begins.
pub const ADDRESS_PREFIX: &str = "memfd:";
/// How the memfd names of regions begin (seen in `/proc/<pid>/fd` as
/// `/memfd:<name> (deleted)`).
pub const MEMFD_PREFIX: &str = "xferbench-";

/// Why a region backing could not be made or opened.
#[derive(Debug, thiserror::Error)]
pub enum BackingError {
    /// A system call failed.
    #[error("{op}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The memory could not be backed: reported at creation instead of a SIGBUS at
    /// the first touch of a page that cannot be provided.
    #[error(
        "cannot allocate a {size}-byte shared-memory region: out of memory; use a smaller ring `capacity` (e.g. -p capacity=1MiB) or fewer channels"
    )]
    NoSpace {
        /// Bytes asked for.
        size: u64,
    },
    /// The address is not of the form `memfd:<pid>:<fd>:<inode>`.
    #[error("bad region address {address:?}: {reason}")]
    Address {
        /// The address.
        address: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// Nothing (any more) at the address.
    #[error(
        "no region at {address}: process {pid} does not exist or no longer holds it (has it exited, or has its peer already attached?)"
    )]
    Gone {
        /// The address.
        address: String,
        /// The process it names.
        pid: i32,
    },
    /// The descriptor at the address is not one of our regions, or not the one
    /// addressed.
    #[error("{address} is not an xferbench region: {reason}")]
    Foreign {
        /// The address.
        address: String,
        /// What it is instead.
        reason: String,
    },
    /// The region is not sealed against resizing.
    #[error(
        "region {address} is not sealed against resizing (seals {found:#x}, need {need:#x}); refusing to map it"
    )]
    Unsealed {
        /// The address.
        address: String,
        /// Seals found.
        found: u32,
        /// Seals needed.
        need: u32,
    },
}

fn io_err(op: &'static str) -> impl FnOnce(rustix::io::Errno) -> BackingError {
    move |e| BackingError::Io {
        op,
        source: e.into(),
    }
}

/// A sized, backed, not yet sealed memfd called `xferbench-<name>`; seal it with
/// [`seal`] once its content is ready (regions whose content must also be
/// write-sealed fill it first).
pub fn memfd(name: &str, len: u64) -> Result<OwnedFd, BackingError> {
    let fd = rustix::fs::memfd_create(
        format!("{MEMFD_PREFIX}{name}"),
        MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
    )
    .map_err(io_err("memfd_create"))?;
    rustix::fs::ftruncate(&fd, len).map_err(io_err("ftruncate"))?;
    allocate(&fd, len)?;
    Ok(fd)
}

/// How often [`seal`] tries a write seal again that the kernel refused as busy.
const SEAL_BUSY_TRIES: u32 = 20;

/// Adds [`SEALS`] and `extra` to `fd`.
///
/// A write seal fails with `EBUSY` while the kernel holds one of the file's pages for
/// a moment (page migration, memory monitoring): such a seal is tried again, up to
/// `SEAL_BUSY_TRIES` times 10 ms apart, before the refusal is an error.
pub fn seal(fd: impl AsFd, extra: SealFlags) -> Result<(), BackingError> {
    let fd = fd.as_fd();
    let mut tries = 1;
    loop {
        match rustix::fs::fcntl_add_seals(fd, SEALS | extra) {
            Err(rustix::io::Errno::BUSY) if tries < SEAL_BUSY_TRIES => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            r => return r.map_err(io_err("F_ADD_SEALS")),
        }
    }
}

/// A sealed memfd of `len` bytes called `xferbench-<name>`, and its address.
pub fn create(name: &str, len: u64) -> Result<(OwnedFd, String), BackingError> {
    let fd = memfd(name, len)?;
    seal(&fd, SealFlags::empty())?;
    let address = address_of(&fd);
    Ok((fd, address))
}

/// The address of `fd` held by this process.
pub fn address_of(fd: &OwnedFd) -> String {
    let ino = rustix::fs::fstat(fd).map_or(0, |st| st.st_ino);
    address(std::process::id() as i32, fd.as_raw_fd(), ino)
}

/// The address of descriptor `fd` of process `pid`, inode `ino`.
pub fn address(pid: i32, fd: i32, ino: u64) -> String {
    format!("{ADDRESS_PREFIX}{pid}:{fd}:{ino}")
}

/// Backs all `len` bytes now, so that memory that cannot be provided is an error
/// here rather than a SIGBUS when a page is first touched.
fn allocate(fd: &OwnedFd, len: u64) -> Result<(), BackingError> {
    use rustix::io::Errno;
    if len == 0 {
        return Ok(());
    }
    match rustix::fs::fallocate(fd, rustix::fs::FallocateFlags::empty(), 0, len) {
        Ok(()) => Ok(()),
        Err(Errno::NOSPC | Errno::NOMEM) => Err(BackingError::NoSpace { size: len }),
        Err(Errno::OPNOTSUPP | Errno::NOSYS) => Ok(()),
        Err(e) => Err(io_err("fallocate")(e)),
    }
}

/// Splits `memfd:<pid>:<fd>:<inode>`.
pub fn parse(address: &str) -> Result<(i32, i32, u64), BackingError> {
    let bad = |reason| BackingError::Address {
        address: address.to_string(),
        reason,
    };
    const FORM: &str = "expected memfd:<pid>:<fd>:<inode>";
    let rest = address
        .strip_prefix(ADDRESS_PREFIX)
        .ok_or_else(|| bad(FORM))?;
    let mut parts = rest.split(':');
    let (Some(pid), Some(fd), Some(ino), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(FORM));
    };
    let pid: i32 = pid
        .parse()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| bad("the pid is not a positive number"))?;
    let fd: i32 = fd
        .parse()
        .ok()
        .filter(|f| *f >= 0)
        .ok_or_else(|| bad("the descriptor is not a number"))?;
    let ino: u64 = ino
        .parse()
        .ok()
        .ok_or_else(|| bad("the inode is not a number"))?;
    Ok((pid, fd, ino))
}

/// An opened region backing: the descriptor, its length and the creator's pid.
#[derive(Debug)]
pub struct Opened {
    /// The reopened memfd (read-write, close-on-exec).
    pub fd: OwnedFd,
    /// Its size, bytes (sealed: it cannot change).
    pub len: u64,
    /// The process that holds the original.
    pub pid: i32,
}

/// Opens the region at `address` and checks that it is one of our memfds with all
/// of [`SEALS`]; the caller checks the length against its layout before mapping.
pub fn open(address: &str) -> Result<Opened, BackingError> {
    let (pid, fd_no, ino) = parse(address)?;
    let link = format!("/proc/{pid}/fd/{fd_no}");
    let gone = || BackingError::Gone {
        address: address.to_string(),
        pid,
    };
    // What the descriptor is, before opening it: a memfd reads "/memfd:<name> (deleted)".
    let target = match std::fs::read_link(&link) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(gone()),
        Err(e) => {
            return Err(BackingError::Io {
                op: "readlink /proc/<pid>/fd",
                source: e,
            });
        }
    };
    let target = target.to_string_lossy();
    if !target.starts_with(&format!("/memfd:{MEMFD_PREFIX}")) {
        return Err(BackingError::Foreign {
            address: address.to_string(),
            reason: format!("the descriptor is {target}"),
        });
    }
    let fd = rustix::fs::open(
        link.as_str(),
        OFlags::RDWR | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| match e {
        rustix::io::Errno::NOENT => gone(),
        e => io_err("open /proc/<pid>/fd")(e),
    })?;
    let seals = rustix::fs::fcntl_get_seals(&fd).map_err(|e| BackingError::Foreign {
        address: address.to_string(),
        reason: format!("F_GET_SEALS: {e}"),
    })?;
    if !seals.contains(SEALS) {
        return Err(BackingError::Unsealed {
            address: address.to_string(),
            found: seals.bits(),
            need: SEALS.bits(),
        });
    }
    let st = rustix::fs::fstat(&fd).map_err(io_err("fstat"))?;
    if st.st_ino != ino {
        return Err(BackingError::Foreign {
            address: address.to_string(),
            reason: format!(
                "descriptor {fd_no} of process {pid} now holds inode {}, another region (a stale address?)",
                st.st_ino
            ),
        });
    }
    Ok(Opened {
        fd,
        len: st.st_size.max(0) as u64,
        pid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_region_cannot_be_resized_and_reopens_with_its_seals() {
        let (fd, address) = create("test-backing", 8192).unwrap();
        assert_eq!(
            rustix::fs::ftruncate(&fd, 4096),
            Err(rustix::io::Errno::PERM)
        );
        assert_eq!(
            rustix::fs::ftruncate(&fd, 1 << 20),
            Err(rustix::io::Errno::PERM)
        );
        let o = open(&address).unwrap();
        assert_eq!(o.len, 8192);
        assert_eq!(o.pid, std::process::id() as i32);
        assert_eq!(
            rustix::fs::ftruncate(&o.fd, 0),
            Err(rustix::io::Errno::PERM)
        );
        drop(fd);
        drop(o);
        assert!(matches!(open(&address), Err(BackingError::Gone { .. })));
    }

    #[test]
    fn a_reused_descriptor_number_is_not_taken_for_the_region_addressed() {
        let (fd, address) = create("test-reuse", 4096).unwrap();
        let (pid, n, ino) = parse(&address).unwrap();
        let other = super::address(pid, n, ino + 1);
        let err = open(&other).unwrap_err();
        assert!(err.to_string().contains("stale address"), "{err}");
        drop(fd);
    }

    #[test]
    fn an_unsealed_memfd_is_refused() {
        let fd = memfd("test-unsealed", 4096).unwrap();
        let err = open(&address_of(&fd)).unwrap_err();
        assert!(matches!(err, BackingError::Unsealed { .. }), "{err}");
        assert!(err.to_string().contains("not sealed"), "{err}");
    }

    #[test]
    fn other_descriptors_and_bad_addresses_are_refused() {
        let f = std::fs::File::open("/proc/self/stat").unwrap();
        let address = address(std::process::id() as i32, f.as_raw_fd(), 1);
        let err = open(&address).unwrap_err();
        assert!(matches!(err, BackingError::Foreign { .. }), "{err}");
        for bad in [
            "",
            "memfd:",
            "memfd:1:3",
            "memfd:x:3:1",
            "memfd:0:3:1",
            "memfd:1:-2:1",
            "memfd:1:2:x",
            "memfd:1:2:3:4",
            "/xferbench-u1",
        ] {
            assert!(
                matches!(parse(bad), Err(BackingError::Address { .. })),
                "{bad}"
            );
        }
    }
}
