//! Running `perf record` and `perf script`, with errors that say how to fix them.

use crate::process::{Child, SpawnError, Streams, Supervised};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// Sampling frequency, Hz: odd, so it does not beat with periodic work.
pub const FREQUENCY_HZ: u32 = 999;

/// Why a profile could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// `perf` is not installed.
    #[error(
        "perf is not installed: install it with `apt-get install linux-perf` (Debian) or \
         `apt-get install linux-tools-$(uname -r)` (Ubuntu)"
    )]
    PerfMissing,
    /// The kernel forbids profiling.
    #[error(
        "perf may not profile here (kernel.perf_event_paranoid = {paranoid}): run \
         `sudo sysctl kernel.perf_event_paranoid=1`, or run xferbench as root or with CAP_PERFMON"
    )]
    Forbidden {
        /// The current setting.
        paranoid: String,
    },
    /// A participant name that the run does not have.
    #[error("--profile-peer {name}: no such participant; this point has: {known}")]
    UnknownParticipant {
        /// The name asked for.
        name: String,
        /// The names there are.
        known: String,
    },
    /// `perf` failed.
    #[error("{what} failed: {stderr}")]
    Failed {
        /// The command.
        what: String,
        /// The tail of its error output.
        stderr: String,
    },
    /// An I/O error.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

fn paranoid() -> String {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Checks that `perf` runs and that the kernel lets this user profile its own
/// processes (`perf_event_paranoid` ≤ 2, or root).
pub fn preflight() -> Result<(), ProfileError> {
    let ok = Command::new("perf")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return Err(ProfileError::PerfMissing);
    }
    let level: i32 = paranoid().parse().unwrap_or(2);
    if level > 2 && !rustix::process::geteuid().is_root() {
        return Err(ProfileError::Forbidden {
            paranoid: level.to_string(),
        });
    }
    Ok(())
}

/// The `perf record` options: cpu-clock (no PMU needed), DWARF call graphs.
pub fn record_args(out: &Path) -> Vec<String> {
    vec![
        "record".into(),
        "-q".into(),
        "-e".into(),
        "cpu-clock".into(),
        "-F".into(),
        FREQUENCY_HZ.to_string(),
        "--call-graph".into(),
        "dwarf".into(),
        "-o".into(),
        out.display().to_string(),
    ]
}

/// Turns a failed perf's error output into the most useful error.
fn failure(what: &str, stderr: &[u8]) -> ProfileError {
    let text = String::from_utf8_lossy(stderr);
    if text.contains("perf_event_paranoid") || text.contains("Permission denied") {
        return ProfileError::Forbidden {
            paranoid: paranoid(),
        };
    }
    let tail: Vec<&str> = text.lines().rev().take(6).collect();
    ProfileError::Failed {
        what: what.into(),
        stderr: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
    }
}

/// Records `command` (run directly, not through a shell) into `out` until it
/// exits, or until `stop` is set (SIGTERM, SIGHUP or Ctrl-C reached only this
/// process): perf then gets SIGINT, ends the command and writes what it recorded.
/// Returns the command's exit status as perf reports it.
pub fn record_command(
    command: &[String],
    out: &Path,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<ExitStatus, ProfileError> {
    preflight()?;
    let io = |what: &str| {
        let what = what.to_string();
        move |source| ProfileError::Io { what, source }
    };
    let mut child = Command::new("perf")
        .args(record_args(out))
        .arg("--")
        .args(command)
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io("starting perf record"))?;
    let mut stderr = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut buf);
        buf
    });
    let mut signalled = false;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(io("waiting for perf record"))? {
            break status;
        }
        if !signalled && stop.load(std::sync::atomic::Ordering::Relaxed) {
            signalled = true;
            if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = reader.join().unwrap_or_default();
    // Pass the command's own error output through.
    let _ = std::io::Write::write_all(&mut std::io::stderr(), &err);
    if !out.exists() {
        return Err(failure("perf record", &err));
    }
    Ok(status)
}

/// A `perf record` attached to a running process (in its own process group, so a
/// Ctrl-C reaches it only through [`Attached::stop`]).
/// Dropping it stops perf as [`Attached::stop`] does.
#[derive(Debug)]
pub struct Attached {
    child: Child,
    out: PathBuf,
    stopped: bool,
}

/// How long perf may take to write its file after SIGINT.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Time `perf record -p` needs before it samples; what runs earlier is missed.
pub const ATTACH_DELAY: Duration = Duration::from_millis(300);

/// Starts `perf record -p pid` into `out`; waits [`ATTACH_DELAY`] for it to start.
pub fn attach(pid: u32, out: &Path) -> Result<Attached, ProfileError> {
    preflight()?;
    let mut cmd = Command::new("perf");
    cmd.args(record_args(out)).args(["-p", &pid.to_string()]);
    let mut child = Child::spawn(cmd, Streams::QUIET).map_err(|e| ProfileError::Io {
        what: "starting perf record".into(),
        source: match e {
            SpawnError::Io { source, .. } => source,
            other => std::io::Error::other(other),
        },
    })?;
    if let Some(ended) = child.exited_within(ATTACH_DELAY) {
        let said = if ended.stderr_tail.is_empty() {
            // perf -q says nothing about a pid that is gone.
            format!(
                "perf {} without a message (is process {pid} running, and yours?)",
                ended.status_text()
            )
        } else {
            ended.stderr_tail
        };
        return Err(failure(&format!("perf record -p {pid}"), said.as_bytes()));
    }
    Ok(Attached {
        child,
        out: out.to_path_buf(),
        stopped: false,
    })
}

impl Attached {
    /// Stops recording (SIGINT, as Ctrl-C would) and waits for perf to write its file.
    pub fn stop(&mut self) -> Result<PathBuf, ProfileError> {
        self.stopped = true;
        let ended = self.child.stop_within(STOP_TIMEOUT);
        if !self.out.exists() {
            return Err(failure("perf record", ended.stderr_tail.as_bytes()));
        }
        Ok(self.out.clone())
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        if !self.stopped {
            let _ = self.stop();
        }
    }
}

/// `perf script` on a recording: the samples with their stacks, as text.
pub fn script(data: &Path) -> Result<Vec<u8>, ProfileError> {
    let output = Command::new("perf")
        .args(["script", "-i"])
        .arg(data)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => ProfileError::PerfMissing,
            _ => ProfileError::Io {
                what: "starting perf script".into(),
                source,
            },
        })?;
    if !output.status.success() {
        return Err(failure("perf script", &output.stderr));
    }
    Ok(output.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_how_to_fix_them() {
        let e = failure(
            "perf record",
            b"Error:\nAccess to performance monitoring and observability operations is limited.\n\
              Consider adjusting /proc/sys/kernel/perf_event_paranoid setting\n",
        );
        assert!(matches!(e, ProfileError::Forbidden { .. }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains("sysctl kernel.perf_event_paranoid=1") && text.contains("CAP_PERFMON")
        );
        assert!(
            ProfileError::PerfMissing
                .to_string()
                .contains("apt-get install linux-perf")
        );
        let other = failure("perf script", b"line 1\nsomething broke\n");
        assert!(other.to_string().contains("something broke"), "{other}");
    }

    #[test]
    fn record_uses_cpu_clock_and_dwarf_stacks() {
        let a = record_args(Path::new("/tmp/x.data")).join(" ");
        assert!(
            a.contains("-e cpu-clock") && a.contains("--call-graph dwarf"),
            "{a}"
        );
    }
}
