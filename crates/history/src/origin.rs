//! Where a result came from: the git commit of the working directory and the machine.
//!
//! The commit comes from the `git` binary (`git rev-parse HEAD`, `git status
//! --porcelain`). Without `git`, outside a repository, or when `git` fails, there is
//! no commit and the run is recorded with none: the history never fails for it.

use serde::Serialize;
use std::path::Path;
use std::process::{Command, Stdio};

/// The state of a git working tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GitState {
    /// The commit checked out (`HEAD`), full hex.
    pub commit: String,
    /// Whether tracked files differ from that commit.
    pub dirty: bool,
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The commit and dirty flag of the repository containing `dir`; `None` outside a
/// repository, on a repository without commits, or without `git`.
pub fn git_state(dir: &Path) -> Option<GitState> {
    let commit = git(dir, &["rev-parse", "--verify", "-q", "HEAD"])?
        .trim()
        .to_string();
    if commit.is_empty() {
        return None;
    }
    let status = git(dir, &["status", "--porcelain", "--untracked-files=no"])?;
    Some(GitState {
        commit,
        dirty: !status.trim().is_empty(),
    })
}

/// FNV-1a, 64 bits: a stable hash (the standard library's may change between
/// releases, and machine ids must stay comparable across versions of the tool).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A short, stable id of the machine a result was measured on: a hash of
/// `/etc/machine-id` (so the id itself is not stored) with the result's host name,
/// CPU model and CPU count, so that a renamed host, a resized VM or a cloned image
/// on other hardware counts as another machine.
pub fn machine_id(hostname: &str, cpu_model: &str, cores: usize) -> String {
    let local = std::fs::read_to_string("/etc/machine-id").unwrap_or_default();
    let source = format!("{}\n{hostname}\n{cpu_model}\n{cores}", local.trim());
    format!("{:012x}", fnv1a(source.as_bytes()) >> 16)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_machine_id_is_stable_and_short() {
        let a = super::machine_id("h", "c", 2);
        assert_eq!(a, super::machine_id("h", "c", 2));
        assert_ne!(a, super::machine_id("h", "c", 4));
        assert_eq!(a.len(), 12);
        assert_eq!(super::fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn a_folder_outside_any_repository_has_no_commit() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(super::git_state(dir.path()), None);
    }
}
