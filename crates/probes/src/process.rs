//! Child processes: how the lab starts copies of the `xferbench` binary in a hidden
//! role, and how it supervises every child it starts (peers, rpmsg remotes, memory
//! mocks, warp clients, `perf record`).
//!
//! # Launching a role
//!
//! The lab never spells a command line of the CLI. The binary supplies a [`Launcher`]:
//! its own path and, for each [`Role`], the arguments that select it. The lab appends
//! only role-specific data — a region name, or one JSON argument holding a spec type
//! the lab defines — and may put a [`Wrapper`] in front (valgrind for
//! `--counters callgrind`).
//!
//! # Supervising a child
//!
//! [`Child::spawn`] starts a command in its own process group, so a Ctrl-C at the
//! terminal reaches only the parent, which then stops its children in order. A piped
//! stderr is read by a background thread that keeps the last [`STDERR_TAIL`] bytes, so
//! a child that dies is reported with its pid, how it ended and its last words
//! ([`Ended`]). Nothing here waits without a bound: [`Supervised::exited_within`] polls,
//! [`Child::stop`] interrupts, waits [`STOP_GRACE`] and then kills, and dropping a
//! [`Child`] kills and reaps it, so no child outlives its handle as a zombie.
//!
//! The child side calls [`die_with_parent`] first, so that a parent that dies
//! (`kill -9`, a crash) takes its children with it.
//!
//! One file: the launcher and the supervision of a child are used together by every
//! caller, and the unit tests on real `/bin/sh` children make up a third of it.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout, Command, ExitStatus};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Bytes of a child's stderr kept for error messages.
pub const STDERR_TAIL: usize = 4096;

/// How long [`Child::stop`] waits after SIGINT before it kills.
pub const STOP_GRACE: Duration = Duration::from_millis(500);

/// A hidden role of the `xferbench` binary, started by the lab.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Role {
    /// Serves one channel of a run; control protocol on stdin/stdout
    /// (`xferbench_lab::peer`).
    Peer,
    /// The remote side of an RPMsg link; the lab appends the region name
    /// (`xferbench_lab::rig::rpmsg`).
    RpmsgRemote,
    /// The Warp Pipe memory mock; the lab appends one JSON
    /// `xferbench_lab::rig::memory_mock::MemoryMockSpec`.
    MemoryMock,
    /// One Warp Pipe client process; the lab appends one JSON
    /// `xferbench_lab::workload::warp::ClientProcessSpec`.
    WarpClient,
    /// A hash-table server; the lab appends one JSON
    /// `xferbench_lab::rig::kv::KvServerSpec`.
    KvServer,
    /// One hash-table client process; the lab appends one JSON
    /// `xferbench_lab::workload::kv::KvClientSpec`.
    KvClient,
    /// One benchmark process of the perf-stat study; the lab appends one JSON
    /// `xferbench_lab::workload::perf_stat::BenchSpec`.
    PerfStatBench,
    /// Opens a plugin file and prints its description as JSON; the lab appends the
    /// path (`xferbench_lab::plugins`).
    PluginProbe,
    /// The measuring side of a plugin transport's point: drives its channels and
    /// starts its peers; control protocol on stdin/stdout; the lab appends one JSON
    /// `xferbench_lab::rig::plugin::DriverSpec`.
    PluginDriver,
    /// Runs a plugin's clean-up hook; the lab appends the transport and the scope.
    PluginCleanup,
    /// Runs one conformance check and prints its verdict as JSON; the lab appends
    /// one JSON `xferbench_lab::check::CheckSpec`.
    Check,
}

impl Role {
    /// Every role.
    pub const ALL: [Role; 11] = [
        Role::Peer,
        Role::RpmsgRemote,
        Role::MemoryMock,
        Role::WarpClient,
        Role::KvServer,
        Role::KvClient,
        Role::PerfStatBench,
        Role::PluginProbe,
        Role::PluginDriver,
        Role::PluginCleanup,
        Role::Check,
    ];

    /// The role's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Role::Peer => "peer",
            Role::RpmsgRemote => "rpmsg remote",
            Role::MemoryMock => "memory mock",
            Role::WarpClient => "warp client",
            Role::KvServer => "kv server",
            Role::KvClient => "kv client",
            Role::PerfStatBench => "perf-stat benchmark",
            Role::PluginProbe => "plugin probe",
            Role::PluginDriver => "plugin measuring process",
            Role::PluginCleanup => "plugin clean-up",
            Role::Check => "conformance check",
        }
    }
}

/// A command put in front of another: `program args… <the wrapped command>`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Wrapper {
    /// The tool (`valgrind`).
    pub program: PathBuf,
    /// Its arguments, before the wrapped command.
    pub args: Vec<String>,
}

impl Wrapper {
    /// `program args…`.
    pub fn new(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Wrapper {
        Wrapper {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }
}

/// How to start the binary in each [`Role`]; supplied by the binary itself. It
/// serialises, so that a child can start roles of its own the same way (a plugin's
/// measuring process starts its peers).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Launcher {
    program: PathBuf,
    roles: BTreeMap<Role, Vec<String>>,
    /// Outermost first.
    wrappers: Vec<Wrapper>,
}

impl Launcher {
    /// A launcher for `program` with no roles yet.
    pub fn new(program: impl Into<PathBuf>) -> Launcher {
        Launcher {
            program: program.into(),
            roles: BTreeMap::new(),
            wrappers: Vec::new(),
        }
    }

    /// `role` is selected by `args` (the argv prefix after the program).
    pub fn with_role(
        mut self,
        role: Role,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Launcher {
        self.roles
            .insert(role, args.into_iter().map(Into::into).collect());
        self
    }

    /// The same launcher with every command run under `wrapper` (outside any wrapper
    /// already there).
    pub fn wrapped(mut self, wrapper: Wrapper) -> Launcher {
        self.wrappers.insert(0, wrapper);
        self
    }

    /// The binary.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Whether `role` was configured.
    pub fn has_role(&self, role: Role) -> bool {
        self.roles.contains_key(&role)
    }

    /// The command that starts `role` with `data` appended (wrappers included).
    pub fn command<S: AsRef<OsStr>>(
        &self,
        role: Role,
        data: impl IntoIterator<Item = S>,
    ) -> Result<Command, SpawnError> {
        let role_args = self.roles.get(&role).ok_or(SpawnError::NoRole(role))?;
        let mut cmd = match self.wrappers.split_first() {
            None => Command::new(&self.program),
            Some((outer, inner)) => {
                let mut cmd = Command::new(&outer.program);
                cmd.args(&outer.args);
                for w in inner {
                    cmd.arg(&w.program).args(&w.args);
                }
                cmd.arg(&self.program);
                cmd
            }
        };
        cmd.args(role_args).args(data);
        Ok(cmd)
    }

    /// Starts `role` with `data` appended; see [`Child::spawn`].
    pub fn spawn<S: AsRef<OsStr>>(
        &self,
        role: Role,
        data: impl IntoIterator<Item = S>,
        streams: Streams,
    ) -> Result<Child, SpawnError> {
        Child::spawn(self.command(role, data)?, streams)
    }
}

/// What one of a child's standard streams is connected to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// `/dev/null`.
    Null,
    /// This process's own.
    Inherit,
    /// A pipe. For stdin and stdout, take it with [`Child::take_stdin`] /
    /// [`Child::take_stdout`]; for stderr, a background thread keeps its tail.
    Pipe,
}

impl Stream {
    fn stdio(self) -> std::process::Stdio {
        match self {
            Stream::Null => std::process::Stdio::null(),
            Stream::Inherit => std::process::Stdio::inherit(),
            Stream::Pipe => std::process::Stdio::piped(),
        }
    }
}

/// The environment variable that carries the log filter to child processes (see
/// [`log_children`]).
pub const LOG_ENV: &str = "XFERBENCH_LOG";

/// The log filter children get, once logging is on.
static CHILD_LOG: OnceLock<String> = OnceLock::new();

/// Children started from now on get `filter` in [`LOG_ENV`], and whatever they write
/// to a piped stderr is also copied to ours (as well as kept for [`Ended`]), so their
/// log lines reach the terminal. Only the first call counts.
pub fn log_children(filter: impl Into<String>) {
    let _ = CHILD_LOG.set(filter.into());
}

/// A child's stdin, stdout and stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streams {
    /// Standard input.
    pub stdin: Stream,
    /// Standard output.
    pub stdout: Stream,
    /// Standard error ([`Stream::Pipe`]: its tail is kept for [`Ended`]).
    pub stderr: Stream,
}

impl Streams {
    /// Everything piped: a control protocol on stdin/stdout, stderr's tail kept.
    pub const PIPED: Streams = Streams {
        stdin: Stream::Pipe,
        stdout: Stream::Pipe,
        stderr: Stream::Pipe,
    };
    /// No input, output discarded, stderr's tail kept.
    pub const QUIET: Streams = Streams {
        stdin: Stream::Null,
        stdout: Stream::Null,
        stderr: Stream::Pipe,
    };
    /// No input, stdout piped (read by the caller), stderr's tail kept.
    pub const OUTPUT: Streams = Streams {
        stdin: Stream::Null,
        stdout: Stream::Pipe,
        stderr: Stream::Pipe,
    };
}

/// Why a child could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The launcher has no arguments for this role (a wiring mistake in the binary).
    #[error("the launcher has no `{}` role", .0.name())]
    NoRole(Role),
    /// The OS refused.
    #[error("could not start {program}: {source}")]
    Io {
        /// The program.
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// How a child ended: its pid, exit status and the tail of its stderr. Displayed as
/// `(pid 1234) was killed by signal 9 (SIGKILL): <stderr tail>`, to follow the name
/// of what the child was (`peer 0 (pid 1234) …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Process id.
    pub pid: u32,
    /// Exit status.
    pub status: ExitStatus,
    /// The last [`STDERR_TAIL`] bytes of its stderr, trimmed (empty when none was
    /// kept or it wrote nothing).
    pub stderr_tail: String,
}

impl Ended {
    /// Exited with status 0.
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// "exited with status N" or "was killed by signal N (NAME)".
    pub fn status_text(&self) -> String {
        describe_status(self.status)
    }
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "(pid {}) {}", self.pid, self.status_text())?;
        if !self.stderr_tail.is_empty() {
            write!(f, ": {}", self.stderr_tail)?;
        }
        Ok(())
    }
}

impl std::error::Error for Ended {}

/// The last bytes a child wrote to stderr, collected by a background thread.
#[derive(Debug)]
struct Tail {
    bytes: Arc<Mutex<Vec<u8>>>,
    reader: JoinHandle<()>,
}

impl Tail {
    fn collect(mut stderr: std::process::ChildStderr, forward: bool) -> Tail {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let b = Arc::clone(&bytes);
        let reader = thread::spawn(move || {
            let mut buf = [0u8; 1024];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if forward {
                    let _ = std::io::stderr().lock().write_all(&buf[..n]);
                }
                let mut v = b.lock().unwrap_or_else(|e| e.into_inner());
                v.extend_from_slice(&buf[..n]);
                let excess = v.len().saturating_sub(STDERR_TAIL);
                v.drain(..excess);
            }
        });
        Tail { bytes, reader }
    }

    /// The tail, after giving the reader up to `within` to reach the end of the pipe
    /// (a process that just exited may have written its last words a moment ago).
    fn text(&self, within: Duration) -> String {
        let give_up = Instant::now() + within;
        while !self.reader.is_finished() && Instant::now() < give_up {
            thread::sleep(Duration::from_millis(2));
        }
        let v = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&v).trim().to_string()
    }
}

/// A child process under supervision, wherever it runs: started here ([`Child`]) or
/// by the agent on another host (`xferbench_lab::remote::RemoteChild`). Waiting with a
/// bound, stopping and reporting how it ended are written once, against this.
pub trait Supervised {
    /// Its process id, on the host it runs on.
    fn pid(&self) -> u32;

    /// If it has ended, how (a child here is then reaped; a child of the agent
    /// whose connection was lost is reported as killed).
    fn exited(&mut self) -> Option<Ended>;

    /// Like [`Supervised::exited`], but gives a dying child up to `within` to finish
    /// exiting (its output may close, or a transfer fail, just before it is reapable).
    fn exited_within(&mut self, within: Duration) -> Option<Ended> {
        let give_up = Instant::now() + within;
        loop {
            if let Some(e) = self.exited() {
                return Some(e);
            }
            if Instant::now() >= give_up {
                return None;
            }
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// Stops it as Ctrl-C would (SIGINT, a grace period, then SIGKILL) and waits
    /// for its end; `None` when that end cannot be learned in time (the agent's
    /// connection was lost).
    fn halt(&mut self) -> Option<Ended>;

    /// Ends it at once: SIGKILL here; the agent, which offers no more than a stop,
    /// stops it. Waits for its end as [`Supervised::halt`] does.
    fn halt_now(&mut self) -> Option<Ended> {
        self.halt()
    }
}

/// A supervised child process; see the module doc. Dropping it kills and reaps it.
#[derive(Debug)]
pub struct Child {
    inner: std::process::Child,
    tail: Option<Tail>,
    status: Option<ExitStatus>,
}

impl Child {
    /// Starts `cmd` in its own process group with `streams`.
    pub fn spawn(mut cmd: Command, streams: Streams) -> Result<Child, SpawnError> {
        let child_log = CHILD_LOG.get();
        if let Some(filter) = child_log {
            cmd.env(LOG_ENV, filter);
        }
        let mut inner = cmd
            .stdin(streams.stdin.stdio())
            .stdout(streams.stdout.stdio())
            .stderr(streams.stderr.stdio())
            // Its own process group: a Ctrl-C at the terminal reaches only the parent,
            // which then stops its children in order.
            .process_group(0)
            .spawn()
            .map_err(|source| SpawnError::Io {
                program: cmd.get_program().to_string_lossy().into_owned(),
                source,
            })?;
        tracing::debug!(
            pid = inner.id(),
            program = %cmd.get_program().to_string_lossy(),
            args = ?cmd.get_args().collect::<Vec<_>>(),
            "spawned child process"
        );
        let forward = child_log.is_some();
        let tail = inner.stderr.take().map(|e| Tail::collect(e, forward));
        Ok(Child {
            inner,
            tail,
            status: None,
        })
    }

    /// Process id.
    pub fn pid(&self) -> u32 {
        self.inner.id()
    }

    /// The piped stdin, once.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.inner.stdin.take()
    }

    /// The piped stdout, once.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.inner.stdout.take()
    }

    /// The stderr tail so far (trimmed; empty when stderr is not piped).
    pub fn stderr_tail(&self) -> String {
        self.tail
            .as_ref()
            .map(|t| t.text(Duration::ZERO))
            .unwrap_or_default()
    }

    fn poll(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.inner.try_wait().ok().flatten();
            if let Some(status) = self.status {
                tracing::debug!(pid = self.pid(), status = %describe_status(status), "child process exited");
            }
        }
        self.status
    }

    fn ended(&self, status: ExitStatus) -> Ended {
        Ended {
            pid: self.pid(),
            status,
            stderr_tail: self
                .tail
                .as_ref()
                .map(|t| t.text(Duration::from_millis(100)))
                .unwrap_or_default(),
        }
    }

    /// If the child has exited (it is then reaped), how.
    pub fn exited(&mut self) -> Option<Ended> {
        let status = self.poll()?;
        Some(self.ended(status))
    }

    /// Sends `signal` unless the child was already reaped.
    pub fn signal(&mut self, signal: rustix::process::Signal) {
        if self.poll().is_none()
            && let Some(pid) = rustix::process::Pid::from_raw(self.pid() as i32)
        {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }

    /// What the child reports on its stderr when sent `signal`, asked before a hung
    /// child is killed (the plugin calls it is in: `xferbench_lab::plugins::calls_in_flight`):
    /// it is sent `signal` and given up to `within` to write a report that `parse`
    /// reads from its stderr tail. `None` when it wrote none (it has exited, or
    /// `signal` is no signal).
    pub fn report_on_signal<T>(
        &mut self,
        signal: i32,
        within: Duration,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Option<T> {
        if self.poll().is_some() {
            return None;
        }
        let pid = rustix::process::Pid::from_raw(self.pid() as i32)?;
        let signal = rustix::process::Signal::from_named_raw(signal)?;
        let _ = rustix::process::kill_process(pid, signal);
        let until = std::time::Instant::now() + within;
        loop {
            if let Some(report) = parse(&self.stderr_tail()) {
                return Some(report);
            }
            if std::time::Instant::now() >= until || self.poll().is_some() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Kills the child (SIGKILL) and reaps it.
    pub fn kill(&mut self) -> Ended {
        if self.poll().is_none() {
            tracing::debug!(pid = self.pid(), "killing child process (SIGKILL)");
            let _ = self.inner.kill();
            self.status = self.inner.wait().ok();
        }
        match self.status {
            Some(status) => self.ended(status),
            // wait(2) failed: nothing left to reap. Report it as killed.
            None => self.ended(ExitStatus::from_raw(libc::SIGKILL)),
        }
    }

    /// Stops the child as Ctrl-C would: SIGINT, up to [`STOP_GRACE`] to exit, then
    /// SIGKILL; reaps it.
    pub fn stop(&mut self) -> Ended {
        self.stop_within(STOP_GRACE)
    }

    /// [`Child::stop`] with its own grace period (`perf record` needs long to write
    /// its file).
    pub fn stop_within(&mut self, grace: Duration) -> Ended {
        tracing::debug!(pid = self.pid(), ?grace, "stopping child process (SIGINT)");
        self.signal(rustix::process::Signal::INT);
        match self.exited_within(grace) {
            Some(e) => e,
            None => self.kill(),
        }
    }
}

impl Supervised for Child {
    fn pid(&self) -> u32 {
        Child::pid(self)
    }

    fn exited(&mut self) -> Option<Ended> {
        Child::exited(self)
    }

    fn halt(&mut self) -> Option<Ended> {
        Some(self.stop())
    }

    fn halt_now(&mut self) -> Option<Ended> {
        Some(self.kill())
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.poll().is_none() {
            tracing::debug!(pid = self.pid(), "killing child process on drop");
            let _ = self.inner.kill();
            let _ = self.inner.wait();
        }
    }
}

/// For the child side of every role: die (SIGKILL) when the parent dies, since nobody
/// else would ever stop or reap us.
pub fn die_with_parent() {
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
}

/// Describes an exit status: "exited with status 3", "was killed by signal 9 (SIGKILL)".
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        format!("exited with status {code}")
    } else if let Some(sig) = status.signal() {
        let name = rustix::process::Signal::from_named_raw(sig)
            .map(|s| format!(" ({})", signal_name(s)))
            .unwrap_or_default();
        format!("was killed by signal {sig}{name}")
    } else {
        format!("ended: {status}")
    }
}

fn signal_name(s: rustix::process::Signal) -> &'static str {
    use rustix::process::Signal as S;
    match s {
        S::KILL => "SIGKILL",
        S::TERM => "SIGTERM",
        S::INT => "SIGINT",
        S::SEGV => "SIGSEGV",
        S::ABORT => "SIGABRT",
        S::BUS => "SIGBUS",
        S::PIPE => "SIGPIPE",
        S::HUP => "SIGHUP",
        S::QUIT => "SIGQUIT",
        S::ILL => "SIGILL",
        S::FPE => "SIGFPE",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, streams: Streams) -> Child {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", script]);
        Child::spawn(cmd, streams).unwrap()
    }

    /// Reaped: no `/proc/PID` (a zombie still has one).
    fn gone(pid: u32) -> bool {
        !Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn an_exit_status_and_the_stderr_tail_are_reported() {
        let mut c = sh(
            "echo first >&2; echo 'last words' >&2; exit 3",
            Streams::QUIET,
        );
        let e = c.exited_within(Duration::from_secs(10)).unwrap();
        assert_eq!(e.status.code(), Some(3));
        assert!(!e.success());
        assert_eq!(e.status_text(), "exited with status 3");
        assert_eq!(e.stderr_tail, "first\nlast words");
        assert_eq!(
            e.to_string(),
            format!("(pid {}) exited with status 3: first\nlast words", c.pid())
        );
        assert!(gone(c.pid()));
    }

    #[test]
    fn the_stderr_tail_keeps_only_the_end() {
        let mut c = sh(
            "i=0; while [ $i -lt 2000 ]; do echo line-$i >&2; i=$((i+1)); done; echo END >&2",
            Streams::QUIET,
        );
        let e = c.exited_within(Duration::from_secs(10)).unwrap();
        assert!(e.success());
        assert!(e.stderr_tail.len() <= STDERR_TAIL);
        assert!(
            e.stderr_tail.ends_with("line-1999\nEND"),
            "{}",
            e.stderr_tail
        );
        assert!(!e.stderr_tail.contains("line-0\n"));
    }

    #[test]
    fn a_killed_child_is_described_with_its_signal() {
        let mut c = sh("exec sleep 30", Streams::QUIET);
        assert!(c.exited().is_none());
        let pid = rustix::process::Pid::from_raw(c.pid() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
        let e = c.exited_within(Duration::from_secs(10)).unwrap();
        assert_eq!(e.status_text(), "was killed by signal 9 (SIGKILL)");
        assert!(
            e.to_string().ends_with("was killed by signal 9 (SIGKILL)"),
            "{e}"
        );
        assert!(gone(c.pid()));
    }

    #[test]
    fn stop_interrupts_and_reaps() {
        let mut c = sh("exec sleep 30", Streams::QUIET);
        let t0 = Instant::now();
        let e = c.stop();
        // SIGINT ends it at once, unless this test runs with SIGINT ignored (then
        // the kill after the grace period does).
        assert!(e.status.signal().is_some(), "{e}");
        assert!(t0.elapsed() < STOP_GRACE + Duration::from_secs(2));
        assert!(gone(c.pid()));
        // Stopping again reports the same end.
        assert_eq!(c.stop(), e);
    }

    #[test]
    fn stop_kills_a_child_that_ignores_sigint() {
        let mut c = sh(
            "trap '' INT; echo ready >&2; while :; do sleep 1; done",
            Streams::QUIET,
        );
        let give_up = Instant::now() + Duration::from_secs(10);
        while c.stderr_tail() != "ready" && Instant::now() < give_up {
            thread::sleep(Duration::from_millis(5));
        }
        let t0 = Instant::now();
        let e = c.stop();
        assert!(t0.elapsed() >= STOP_GRACE);
        assert_eq!(e.status_text(), "was killed by signal 9 (SIGKILL)");
        assert_eq!(e.stderr_tail, "ready");
        assert!(gone(c.pid()));
    }

    #[test]
    fn dropping_a_running_child_leaves_no_zombie() {
        let c = sh("exec sleep 30", Streams::PIPED);
        let pid = c.pid();
        assert!(!gone(pid));
        drop(c);
        assert!(gone(pid));
        // And one that exited on its own but was never waited for.
        let c = sh("exit 0", Streams::QUIET);
        let pid = c.pid();
        thread::sleep(Duration::from_millis(50));
        drop(c);
        assert!(gone(pid));
    }

    #[test]
    fn a_launcher_appends_role_data_and_wraps_every_role() {
        let l = Launcher::new("/bin/xb")
            .with_role(Role::Peer, ["__peer"])
            .with_role(Role::RpmsgRemote, ["__remote", "--x"]);
        let argv = |c: Command| {
            std::iter::once(c.get_program().to_string_lossy().into_owned())
                .chain(c.get_args().map(|a| a.to_string_lossy().into_owned()))
                .collect::<Vec<_>>()
        };
        let none: [&str; 0] = [];
        assert_eq!(
            argv(l.command(Role::Peer, none).unwrap()),
            ["/bin/xb", "__peer"]
        );
        assert_eq!(
            argv(l.command(Role::RpmsgRemote, ["/r"]).unwrap()),
            ["/bin/xb", "__remote", "--x", "/r"]
        );
        assert!(matches!(
            l.command(Role::MemoryMock, none),
            Err(SpawnError::NoRole(Role::MemoryMock))
        ));
        let w = l
            .clone()
            .wrapped(Wrapper::new("inner", ["-i"]))
            .wrapped(Wrapper::new("valgrind", ["--tool=callgrind"]));
        assert_eq!(
            argv(w.command(Role::RpmsgRemote, ["/r"]).unwrap()),
            [
                "valgrind",
                "--tool=callgrind",
                "inner",
                "-i",
                "/bin/xb",
                "__remote",
                "--x",
                "/r"
            ]
        );
        assert!(w.has_role(Role::Peer) && !w.has_role(Role::WarpClient));
        assert_eq!(w.program(), Path::new("/bin/xb"));
    }

    #[test]
    fn a_program_that_does_not_exist_is_a_spawn_error() {
        let e = Launcher::new("/nonexistent/xferbench")
            .with_role(Role::Peer, ["__peer"])
            .spawn(Role::Peer, [""; 0], Streams::PIPED)
            .unwrap_err();
        assert!(e.to_string().contains("/nonexistent/xferbench"), "{e}");
    }
}
