//! The iceoryx2 domain of this transport: its configuration and file prefix, and the
//! removal of what dead processes and the last node leave behind.

use super::settings::{FILE_PREFIX, NAME};
use crate::TransportError;
use iceoryx2::prelude::*;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Once, OnceLock};

/// The iceoryx2 configuration every node of this transport uses: iceoryx2's defaults
/// with [`FILE_PREFIX`] (ignoring any system-wide iceoryx2 configuration file, so
/// that runs compare).
///
/// [`PREFIX_ENV`] may name a longer prefix, a private iceoryx2 domain: tests use it to
/// check that a run leaves none of its files behind, whatever else runs meanwhile.
pub fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let mut c = Config::default();
        let prefix = std::env::var(PREFIX_ENV)
            .ok()
            .filter(|p| valid_prefix(p))
            .unwrap_or_else(|| FILE_PREFIX.to_string());
        c.global.prefix = FileName::new(prefix.as_bytes()).expect("a valid file name");
        c
    })
}

/// The environment variable that may name another file prefix (see [`config`]): it
/// is used only if it is [`FILE_PREFIX`] followed by 1 to 32 ASCII letters, digits or
/// underscores.
pub const PREFIX_ENV: &str = "XFERBENCH_IOX2_PREFIX";

pub(super) fn valid_prefix(p: &str) -> bool {
    p.strip_prefix(FILE_PREFIX).is_some_and(|rest| {
        (1..=32).contains(&rest.len())
            && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// Removes the stale resources (node, ports, services) of every dead iceoryx2 node of
/// this transport; returns how many nodes were cleaned up.
pub fn remove_dead_nodes() -> usize {
    let mut removed = 0;
    let _ = Node::<ipc::Service>::list(config(), |state| {
        if let NodeState::Dead(view) = state
            && view.try_remove_stale_resources().is_ok()
        {
            removed += 1;
        }
        CallbackProgression::Continue
    });
    removed + remove_orphaned_nodes()
}

/// Removes the node directories of this transport's prefix that iceoryx2 cannot see:
/// a process killed while creating its node, after writing the node's details and
/// before creating its monitor, leaves `nodes/<id>/<prefix>node.details` with no
/// `nodes/<prefix><id>.node_monitor`. iceoryx2 lists nodes by their monitors, so
/// [`Node::list`] never reports such a node, dead or alive, and nothing else would
/// remove it. A directory is removed only when its details name a process that no
/// longer exists (a live process may be between the two steps right now); returns how
/// many were removed.
fn remove_orphaned_nodes() -> usize {
    let global = &config().global;
    let prefix = global.prefix.as_bytes();
    let nodes = Path::new(global.root_path().as_str()).join("nodes");
    let Ok(dir) = std::fs::read_dir(&nodes) else {
        return 0;
    };
    let mut details_name = prefix.to_vec();
    details_name.extend_from_slice(b"node.details");
    let mut removed = 0;
    for entry in dir.flatten() {
        let id = entry.file_name();
        let id = id.as_encoded_bytes();
        if id.is_empty() || !id.iter().all(u8::is_ascii_digit) {
            continue;
        }
        let node_dir = entry.path();
        let details = node_dir.join(std::ffi::OsStr::from_bytes(&details_name));
        let mut monitor = prefix.to_vec();
        monitor.extend_from_slice(id);
        monitor.extend_from_slice(b".node_monitor");
        if nodes.join(std::ffi::OsStr::from_bytes(&monitor)).exists() {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&details) else {
            continue;
        };
        let Some(pid) = details_process(&text) else {
            continue;
        };
        if peer_alive(pid) {
            continue;
        }
        // Only files of this prefix: another domain's files in the same node
        // directory (not something iceoryx2 writes) are left alone, and so the
        // directory.
        let Ok(files) = std::fs::read_dir(&node_dir) else {
            continue;
        };
        for f in files.flatten() {
            if f.file_name().as_encoded_bytes().starts_with(prefix) {
                let _ = std::fs::remove_file(f.path());
            }
        }
        if std::fs::remove_dir(&node_dir).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The `process = <pid>` line of a node's details file.
fn details_process(text: &str) -> Option<i32> {
    text.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        (key.trim() == "process").then(|| value.trim().parse().ok())?
    })
}

/// Removes the domain's global management segment (a node counter iceoryx2 keeps in
/// `/dev/shm` as `xferbench_iox2_…_node.<version>.global_mgmt`) when no node of this
/// transport exists any more, alive or dead; true if it was removed.
///
/// iceoryx2 creates that segment with the first node of a domain and never removes
/// it, by design (it outlives every process, so that node ids stay unique). Node ids
/// also hold the pid and the creation time, so a counter that starts again at zero
/// after the removal cannot repeat one.
pub fn remove_idle_domain() -> bool {
    remove_dead_nodes();
    let mut nodes = 0usize;
    let listed = Node::<ipc::Service>::list(config(), |_| {
        nodes += 1;
        CallbackProgression::Continue
    });
    if listed.is_err() || nodes > 0 {
        return false;
    }
    // SAFETY: the function requires that no process uses the domain meanwhile. No
    // node of it exists (listed just now), and every user of the domain is a node: a
    // process that creates one in between keeps the counter it already took, and the
    // next creates a new segment (see above).
    unsafe { iceoryx2::testing::remove_global_mgmt_segment::<ipc::Service>(config()) }
        .unwrap_or(false)
}

/// A side's node: dropped last of its iceoryx2 handles, and then the domain is
/// cleared if it was the last ([`remove_idle_domain`]).
pub(super) struct LastNode(pub(super) Option<Node<ipc::Service>>);

impl LastNode {
    pub(super) fn node(&self) -> &Node<ipc::Service> {
        self.0.as_ref().expect("the node lives until drop")
    }
}

/// This process's live nodes. Creating a node and dropping one (with the check for
/// the last) hold the lock, so one side's clean-up never removes the domain while
/// another channel of this process is creating its node.
static LIVE_NODES: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

impl LastNode {
    /// A new node of the domain.
    pub(super) fn create() -> Result<LastNode, String> {
        let mut live = LIVE_NODES.lock().unwrap_or_else(|e| e.into_inner());
        let node = NodeBuilder::new()
            .config(config())
            .signal_handling_mode(SignalHandlingMode::Disabled)
            .create::<ipc::Service>()
            .map_err(|e| {
                let root = Path::new(config().global.root_path().as_str()).to_path_buf();
                match unwritable_hint(Path::new("/dev/shm"), &root, may_write) {
                    Some(hint) => format!("node: {e:?}: {hint}"),
                    None => format!("node: {e:?}"),
                }
            })?;
        *live += 1;
        Ok(LastNode(Some(node)))
    }
}

/// A hint for a node that could not be created: which of `shm` (iceoryx2's shared
/// memory) and `root` (its nodes' files) this user cannot write to, by `writable`;
/// `None` when it can write to both. A directory that does not exist yet counts as its
/// nearest existing ancestor, where iceoryx2 would create it.
fn unwritable_hint(shm: &Path, root: &Path, writable: impl Fn(&Path) -> bool) -> Option<String> {
    let blocked: Vec<String> = [shm, root]
        .into_iter()
        .filter(|d| {
            let there = d.ancestors().find(|a| a.exists()).unwrap_or(Path::new("/"));
            !writable(there)
        })
        .map(|d| d.display().to_string())
        .collect();
    (!blocked.is_empty()).then(|| {
        format!(
            "this user cannot write to {} (iceoryx2 keeps its shared memory in {} and its \
             nodes' files under {}): check that it is mounted read-write and that this user may write there",
            blocked.join(" and "),
            shm.display(),
            root.display(),
        )
    })
}

/// Whether this user may write to `dir` (`access(W_OK)`: a read-only mount refuses).
fn may_write(dir: &Path) -> bool {
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_ok()
}

impl Drop for LastNode {
    fn drop(&mut self) {
        let mut live = LIVE_NODES.lock().unwrap_or_else(|e| e.into_inner());
        drop(self.0.take());
        *live = live.saturating_sub(1);
        if *live == 0 {
            remove_idle_domain();
        }
    }
}

/// Once per process: iceoryx2 logs only fatal errors (unless `IOX2_LOG_LEVEL` says
/// otherwise; its errors reach the caller as ours), and what dead processes left is
/// removed.
pub(super) fn prepare_process() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        set_log_level_from_env_or(LogLevel::Fatal);
        remove_dead_nodes();
    });
}

pub(super) fn io_err(op: &'static str) -> impl FnOnce(String) -> TransportError {
    move |msg| TransportError::Io {
        transport: NAME,
        op,
        source: io::Error::other(msg),
    }
}

pub(super) fn peer_alive(pid: i32) -> bool {
    if pid <= 0 {
        return true;
    }
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return true;
    };
    // EPERM means it exists (another user's): only ESRCH means gone.
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_that_cannot_be_created_names_the_directory_not_writable() {
        let tmp = std::env::temp_dir();
        let root = tmp.join("xferbench-no-such-dir").join("iceoryx2");
        assert_eq!(
            unwritable_hint(Path::new("/dev/shm"), &root, |_| true),
            None
        );
        let hint = unwritable_hint(Path::new("/dev/shm"), &root, |d| d != Path::new("/dev/shm"))
            .expect("a hint");
        assert!(
            hint.contains("cannot write to /dev/shm (") && hint.contains("mounted read-write"),
            "{hint}"
        );
        // The root does not exist: its nearest existing ancestor decides.
        let hint =
            unwritable_hint(Path::new("/dev/shm"), &root, |d| d != tmp.as_path()).expect("a hint");
        assert!(
            hint.contains(&format!("cannot write to {} (", root.display())),
            "{hint}"
        );
        assert!(may_write(&tmp));
    }
}
