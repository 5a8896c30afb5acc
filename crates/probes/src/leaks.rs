//! What a plugin transport leaves behind: files in `/tmp` and `/dev/shm`, and POSIX
//! message queues (`/dev/mqueue`).
//!
//! Two ways of watching, the first preferred:
//!
//! * **A private namespace** ([`LeakWatch`] in its namespace mode, for `check`): the
//!   watched processes start in a mount and IPC namespace of their own, with fresh
//!   `tmpfs` mounts on `/tmp` and `/dev/shm` and a fresh `mqueue` mount on
//!   `/dev/mqueue` (when that directory exists). Whatever is in them (and, read by a
//!   process started in the namespace, [`sysv_objects`]) once those
//!   processes have exited and the plugin's clean-up hook has run (in the same
//!   namespace) was left by them, and nothing of it reaches the host: the namespace
//!   and its mounts vanish when the watch ends. This needs `CAP_SYS_ADMIN` (root) or,
//!   for other users, unprivileged user namespaces (the processes then run as the same
//!   user mapped into a user namespace of their own).
//! * **A snapshot** ([`Snapshot`], for `run`, and for `check` when no namespace can
//!   be made): the names in the watched directories before, compared with those after.
//!   Other programs create files there too, so only a new entry whose name carries the
//!   visit's clean-up scope or the process id of one of its processes is attributed
//!   to the plugin.

use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

/// The directories watched, when they exist: files, shared memory, POSIX queues.
pub const WATCHED: [&str; 3] = ["/tmp", "/dev/shm", "/dev/mqueue"];

/// Set to `0` to make `check` watch by [`Snapshot`] instead of a private namespace
/// (for a plugin that must reach something in the host's `/tmp`, such as a broker's
/// socket).
pub const NAMESPACES_ENV: &str = "XFERBENCH_CHECK_NAMESPACES";

/// At most this many paths are named; the rest are counted.
const NAMED: usize = 8;

/// The entries of `dir` (names, without `.` and `..`).
fn entries(dir: BorrowedFd<'_>) -> std::io::Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for e in rustix::fs::Dir::read_from(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name != "." && name != ".." {
            out.insert(name);
        }
    }
    Ok(out)
}

fn open_dir(path: &str) -> std::io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Whether an `mqueue` file system is mounted on `/dev/mqueue` here.
fn mqueue_mounted() -> bool {
    std::fs::read_to_string("/proc/self/mounts").is_ok_and(|m| {
        m.lines().any(|l| {
            let mut f = l.split_whitespace();
            f.nth(1) == Some("/dev/mqueue") && f.next() == Some("mqueue")
        })
    })
}

/// Paths as a list for a message: the first few, then how many more.
pub fn shown(paths: &[String]) -> String {
    let mut s = paths
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > NAMED {
        s.push_str(&format!(", and {} more", paths.len() - NAMED));
    }
    s
}

/// Whether `name` carries `token` as a whole word: not next to a letter or digit
/// (so that pid 12 is not found in `x123`).
fn carries(name: &str, token: &str) -> bool {
    if token.is_empty() {
        return false;
    }
    name.match_indices(token).any(|(i, _)| {
        let before = name[..i].chars().next_back();
        let after = name[i + token.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric())
            && !after.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// The names of the watched directories at one moment ([`Snapshot::take`]).
#[derive(Debug, Clone)]
pub struct Snapshot {
    taken: SystemTime,
    before: Vec<(&'static str, BTreeSet<String>)>,
}

impl Snapshot {
    /// Lists `/tmp`, `/dev/shm` and, when an `mqueue` is mounted there,
    /// `/dev/mqueue`; a directory that cannot be read is left out.
    pub fn take() -> Snapshot {
        let mqueue = mqueue_mounted();
        let before = WATCHED
            .into_iter()
            .filter(|d| *d != "/dev/mqueue" || mqueue)
            .filter_map(|d| {
                let fd = open_dir(d).ok()?;
                Some((d, entries(fd.as_fd()).ok()?))
            })
            .collect();
        Snapshot {
            taken: SystemTime::now(),
            before,
        }
    }

    /// The entries that are there now, were not at the snapshot, were changed since
    /// (created during the watch), and carry one of `tokens` in their names (the
    /// visit's scope, its processes' ids); full paths, sorted.
    pub fn left_since(&self, tokens: &[String]) -> Vec<String> {
        // File times are coarser than the clock: allow a little before.
        let since = self.taken - Duration::from_secs(1);
        let mut out = Vec::new();
        for (dir, before) in &self.before {
            let Ok(fd) = open_dir(dir) else { continue };
            let Ok(now) = entries(fd.as_fd()) else {
                continue;
            };
            for name in now.difference(before) {
                if !tokens.iter().any(|t| carries(name, t)) {
                    continue;
                }
                let path = format!("{dir}/{name}");
                let recent = std::fs::symlink_metadata(&path)
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t >= since);
                if recent {
                    out.push(path);
                }
            }
        }
        out
    }
}

/// The SysV IPC objects of this process's IPC namespace (`/proc/sysvipc`), in
/// words: `SysV shared memory (key 0, id 3)`.
pub fn sysv_objects() -> Vec<String> {
    let mut out = Vec::new();
    for (file, what) in [
        ("shm", "SysV shared memory"),
        ("sem", "SysV semaphores"),
        ("msg", "SysV message queue"),
    ] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/sysvipc/{file}")) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let mut f = line.split_whitespace();
            if let (Some(key), Some(id)) = (f.next(), f.next()) {
                out.push(format!("{what} (key {key}, id {id})"));
            }
        }
    }
    out
}

/// What a [`LeakWatch`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// What was left behind, full paths (as the watched processes saw them).
    pub left: Vec<String>,
    /// How the watch was made, when not in a private namespace, and why.
    pub note: Option<String>,
}

/// The namespace a watch made: its mount and IPC namespaces (and user namespace)
/// held open, and its watched directories.
#[derive(Debug)]
struct Held {
    user: Option<OwnedFd>,
    mnt: OwnedFd,
    ipc: OwnedFd,
    dirs: Vec<(&'static str, OwnedFd)>,
}

#[derive(Debug)]
enum Watching {
    /// The next process starts a private namespace.
    Namespace { shm: bool, mqueue: bool },
    /// It did; held until the watch ends.
    Held(Held),
    /// A snapshot of the host's directories.
    Snapshot { snapshot: Snapshot, why: String },
    /// Nothing could be watched, for the reason given.
    Unwatched(String),
}

/// Watches what a check's processes leave behind: in a private namespace when one
/// can be made, else by [`Snapshot`]. See the module's documentation.
#[derive(Debug)]
pub struct LeakWatch {
    mode: Watching,
}

impl LeakWatch {
    /// A watch for processes that need `needed` (the program, a plugin's file): a
    /// private namespace, unless [`NAMESPACES_ENV`] is `0` or one of them lies where a
    /// fresh mount would hide it.
    pub fn new(needed: &[&Path]) -> LeakWatch {
        if std::env::var(NAMESPACES_ENV).is_ok_and(|v| v == "0") {
            return LeakWatch::snapshot(format!("{NAMESPACES_ENV}=0"));
        }
        for p in needed {
            let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
            if let Some(d) = WATCHED.iter().find(|d| p.starts_with(d)) {
                return LeakWatch::snapshot(format!(
                    "{} lies in {d}, which a private namespace would hide",
                    p.display()
                ));
            }
        }
        LeakWatch {
            mode: Watching::Namespace {
                shm: Path::new("/dev/shm").is_dir(),
                mqueue: Path::new("/dev/mqueue").is_dir(),
            },
        }
    }

    /// A watch by snapshot, for the reason given.
    pub fn snapshot(why: String) -> LeakWatch {
        LeakWatch {
            mode: Watching::Snapshot {
                snapshot: Snapshot::take(),
                why,
            },
        }
    }

    /// Whether the next process started with [`LeakWatch::prepare`] makes a
    /// private namespace.
    pub fn makes_namespace(&self) -> bool {
        matches!(self.mode, Watching::Namespace { .. })
    }

    /// Makes `cmd` start in a private namespace with fresh mounts, when this watch
    /// is to make one. Starting the command then fails when the namespace cannot be
    /// made: call [`LeakWatch::fall_back`] and start it again.
    pub fn prepare(&self, cmd: &mut Command) {
        let Watching::Namespace { shm, mqueue } = self.mode else {
            return;
        };
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        let uid_map = format!("{uid} {uid} 1");
        let gid_map = format!("{gid} {gid} 1");
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe work is allowed: it makes system calls on C strings that
        // are literals or were made before the fork, and allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                private_namespace(uid_map.as_bytes(), gid_map.as_bytes(), shm, mqueue)
            });
        }
    }

    /// After starting a command with [`LeakWatch::prepare`] failed: watch by
    /// snapshot instead, saying why.
    pub fn fall_back(&mut self, error: &dyn std::fmt::Display) {
        *self = LeakWatch::snapshot(format!("no private namespace can be made here ({error})"));
    }

    /// Holds the namespace the process `pid`, started with [`LeakWatch::prepare`],
    /// made, so that it outlives the process.
    pub fn hold(&mut self, pid: u32) {
        let Watching::Namespace { shm, mqueue } = self.mode else {
            return;
        };
        let open = |what: &str| {
            rustix::fs::open(
                format!("/proc/{pid}/{what}"),
                OFlags::RDONLY | OFlags::CLOEXEC,
                Mode::empty(),
            )
        };
        let held = (|| -> std::io::Result<Held> {
            let mine = rustix::fs::stat("/proc/self/ns/user")?.st_ino;
            let user = open("ns/user")?;
            let user = (rustix::fs::fstat(&user)?.st_ino != mine).then_some(user);
            let mut dirs = vec![("/tmp", open_dir(&format!("/proc/{pid}/root/tmp"))?)];
            if shm {
                dirs.push(("/dev/shm", open_dir(&format!("/proc/{pid}/root/dev/shm"))?));
            }
            if mqueue {
                dirs.push((
                    "/dev/mqueue",
                    open_dir(&format!("/proc/{pid}/root/dev/mqueue"))?,
                ));
            }
            Ok(Held {
                user,
                mnt: open("ns/mnt")?,
                ipc: open("ns/ipc")?,
                dirs,
            })
        })();
        self.mode = match held {
            Ok(h) => Watching::Held(h),
            // It ended at once: its namespace went with it, leaving nothing to see.
            Err(e) => Watching::Unwatched(format!(
                "its process ended before its namespace could be held ({e})"
            )),
        };
    }

    /// Whether this watch holds a private namespace ([`LeakWatch::enter`] starts a
    /// command in it).
    pub fn holds_namespace(&self) -> bool {
        matches!(self.mode, Watching::Held(_))
    }

    /// Makes `cmd` (the plugin's clean-up) start in the held namespace.
    pub fn enter(&self, cmd: &mut Command) {
        let Watching::Held(h) = &self.mode else {
            return;
        };
        let user = h.user.as_ref().map(|f| f.as_raw_fd());
        let (mnt, ipc) = (h.mnt.as_raw_fd(), h.ipc.as_raw_fd());
        // SAFETY: between fork and exec; setns on descriptors this process holds
        // open (inherited by the child) allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                use rustix::thread::{LinkNameSpaceType, move_into_link_name_space};
                if let Some(u) = user {
                    move_into_link_name_space(
                        BorrowedFd::borrow_raw(u),
                        Some(LinkNameSpaceType::User),
                    )?;
                }
                move_into_link_name_space(
                    BorrowedFd::borrow_raw(mnt),
                    Some(LinkNameSpaceType::Mount),
                )?;
                move_into_link_name_space(
                    BorrowedFd::borrow_raw(ipc),
                    Some(LinkNameSpaceType::InterProcessCommunication),
                )?;
                Ok(())
            });
        }
    }

    /// What was left: in the namespace, everything in its fresh mounts; by
    /// snapshot, the new entries that carry one of `tokens`. Ends the watch (the
    /// namespace vanishes).
    pub fn finish(self, tokens: &[String]) -> Found {
        match self.mode {
            Watching::Namespace { .. } => Found::default(),
            Watching::Held(h) => {
                let mut left = Vec::new();
                for (dir, fd) in &h.dirs {
                    if let Ok(names) = entries(fd.as_fd()) {
                        left.extend(names.into_iter().map(|n| format!("{dir}/{n}")));
                    }
                }
                Found { left, note: None }
            }
            Watching::Unwatched(why) => Found {
                left: Vec::new(),
                note: Some(format!("leftovers not watched: {why}")),
            },
            Watching::Snapshot { snapshot, why } => Found {
                left: snapshot.left_since(tokens),
                note: Some(format!(
                    "leftovers watched by snapshot, counting only names that carry the scope or a pid: {why}"
                )),
            },
        }
    }
}

/// In the child, before exec: a mount and IPC namespace of its own (in a user
/// namespace of its own when this user may not make them), mounts private, fresh
/// mounts on `/tmp`, `/dev/shm` and `/dev/mqueue`.
fn private_namespace(
    uid_map: &[u8],
    gid_map: &[u8],
    shm: bool,
    mqueue: bool,
) -> std::io::Result<()> {
    use rustix::mount::{MountFlags, MountPropagationFlags, mount, mount_change};
    use rustix::thread::{UnshareFlags, unshare_unsafe};
    let flags = UnshareFlags::NEWNS | UnshareFlags::NEWIPC;
    // SAFETY: neither flag is FILES; the child has one thread.
    if unsafe { unshare_unsafe(flags) }.is_err() {
        // SAFETY: as above.
        unsafe { unshare_unsafe(flags | UnshareFlags::NEWUSER) }?;
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/uid_map", uid_map)?;
        write_file(c"/proc/self/gid_map", gid_map)?;
    }
    mount_change(
        c"/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )?;
    let fresh = MountFlags::NOSUID | MountFlags::NODEV;
    mount(c"tmpfs", c"/tmp", c"tmpfs", fresh, Some(c"mode=1777"))?;
    if shm {
        mount(c"tmpfs", c"/dev/shm", c"tmpfs", fresh, Some(c"mode=1777"))?;
    }
    if mqueue {
        mount(
            c"mqueue",
            c"/dev/mqueue",
            c"mqueue",
            fresh,
            None::<&std::ffi::CStr>,
        )?;
    }
    Ok(())
}

fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> std::io::Result<()> {
    let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    rustix::io::write(&fd, bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_counts_only_as_a_whole_word() {
        assert!(carries("xb-faulty-leak-123-1", "123"));
        assert!(carries("sock.xb42-0", "xb42-0"));
        assert!(!carries("x1234", "123"));
        assert!(!carries("a123b", "123"));
        assert!(!carries("anything", ""));
    }

    #[test]
    fn lists_name_the_first_few_and_count_the_rest() {
        let paths: Vec<String> = (0..10).map(|i| format!("/tmp/f{i}")).collect();
        let s = shown(&paths);
        assert!(s.starts_with("/tmp/f0, /tmp/f1"), "{s}");
        assert!(s.ends_with(", and 2 more"), "{s}");
        assert_eq!(shown(&paths[..1]), "/tmp/f0");
    }

    #[test]
    fn a_snapshot_names_new_files_that_carry_a_token() {
        let before = Snapshot::take();
        let token = format!("xbleaktest{}", std::process::id());
        let mine = format!("/tmp/{token}-a");
        let other = format!("/tmp/xbleaktest-other-{}", std::process::id());
        std::fs::write(&mine, b"").unwrap();
        std::fs::write(&other, b"").unwrap();
        let left = before.left_since(std::slice::from_ref(&token));
        let _ = std::fs::remove_file(&mine);
        let _ = std::fs::remove_file(&other);
        assert_eq!(left, vec![mine]);
    }
}
