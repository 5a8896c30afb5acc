//! The memory-mock rig: a Warp Pipe memory mock and the clients of the workload of
//! [`crate::workload::warp`].
//!
//! # Participants
//!
//! * `main`: this process; with one instance the client threads run here.
//! * `memory-mock`: the mock, a process of the binary's [`Role::MemoryMock`](xferbench_probes::process::Role::MemoryMock) given a
//!   [`MemoryMockSpec`], so its CPU time is its own (a thread of this process when
//!   there is no [`Launcher`], for tests; it is then listed with this process's id).
//! * With `instances > 1`, `client1…clientK`: processes of [`Role::WarpClient`](xferbench_probes::process::Role::WarpClient), each
//!   given a [`ClientProcessSpec`](crate::workload::warp::ClientProcessSpec). They are started for each run (their ids are not
//!   known beforehand), so they appear in the run's CPU rows but not in
//!   [`Rig::participants`]. Without a launcher they are threads of this process.
//!
//! With [`MemoryMockRig::connect`] (`xferbench warp client`) the mock is one already
//! serving at an address: it is not a participant, its CPU is not recorded, and it
//! keeps running after the rig.
//!
//! # One visit, one run
//!
//! The mock is started once per visit (a fresh BAR1) and stopped by
//! [`Rig::finish`] or on drop. [`Rig::run_once`] runs the clients and returns one
//! [`ChannelOutcome`] per client process: its window, its transactions as messages,
//! its payload bytes, its latency histogram and, when it verified data, an
//! [`Integrity`] with `checked` = iterations completed and `corrupt` = second reads
//! that differed from what was written. A failed transaction fails the run
//! ([`RunError::Participant`] with the first error).
//!
//! CPU rows: `cpu[0]` is this process (the clients with one instance), then the
//! client processes, then the mock process over the run's window. Besides the common
//! figures ([`aggregate`]) a run records `transactions_per_s` (the same value as
//! `messages_per_s`), `mb_per_s` (payload MB, 10^6, per second), `client_cpu_s`
//! (CPU seconds of whatever ran the clients), when the mock is a process,
//! `server_cpu_s`, and with pinning the CPU of every client thread
//! ([`figures::thread_cpu`]).

use super::{ChannelOutcome, Rig, RunControl, RunError, aggregate};
use crate::result::{RunRecord, figure};
use crate::workload::new_histogram;
use crate::workload::warp::{ClientRun, ClientSpec, Ops, WarpRunError, run_client};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use xferbench_probes::counters::Participant;
use xferbench_probes::cpu::{CpuSnapshot, ProcessCpu};
use xferbench_probes::process::Launcher;
use xferbench_probes::verify::Integrity;

mod clients;
mod server;
mod spec;

pub use clients::run_instances;
pub use server::RunningServer;
pub use spec::{MemoryMockSpec, MockPoint, bar1_for};

/// Extra figures of a memory-mock run.
pub mod figures {
    /// Transactions per second over the common window (= `messages_per_s`).
    pub const TRANSACTIONS_PER_S: &str = "transactions_per_s";
    /// Payload megabytes (10^6) per second over the common window.
    pub const MB_PER_S: &str = "mb_per_s";
    /// CPU seconds (user + sys) of the client process(es).
    pub const CLIENT_CPU_S: &str = "client_cpu_s";
    /// CPU seconds (user + sys) of the memory mock, when it is a process.
    pub const SERVER_CPU_S: &str = "server_cpu_s";

    /// With pinning: the CPU that OS thread `thread` of client `client` (a client
    /// process, or the one client) ran its transactions on.
    pub fn thread_cpu(client: usize, thread: usize) -> String {
        format!("thread_cpu_client{client}_thread{thread}")
    }
}

/// A running memory mock and the clients to run against it.
pub struct MemoryMockRig {
    point: MockPoint,
    launcher: Option<Launcher>,
    server: Option<RunningServer>,
}

fn run_error(e: WarpRunError) -> RunError {
    match e {
        WarpRunError::Spec(m) => RunError::Config(m),
        other => RunError::Participant(crate::measure::chain(&other)),
    }
}

/// Refuses a point its definitions do not take (`instances`, `threads`, `payload`)
/// before anything starts.
fn checked(point: &MockPoint) -> Result<(), RunError> {
    use crate::workload::warp::{INSTANCES, PAYLOAD, THREADS};
    use xferbench_params::Value;
    let whole = |n: usize| Value::Integer(i64::try_from(n).unwrap_or(i64::MAX));
    INSTANCES
        .check(&whole(point.instances))
        .and(THREADS.check(&whole(point.client.threads)))
        .and(PAYLOAD.check(&Value::Bytes(point.client.payload as u64)))
        .map_err(|e| RunError::Config(e.to_string()))
}

impl MemoryMockRig {
    /// Starts the mock of `point`, with BAR1 holding a slice for every client thread.
    pub fn start(point: MockPoint, launcher: Option<Launcher>) -> Result<Self, RunError> {
        checked(&point)?;
        let slots = point.client.threads * point.instances;
        let server = RunningServer::start(
            launcher.as_ref(),
            point.client.crc,
            bar1_for(slots, point.client.payload),
            point.io,
            point.mock_cpu(&xferbench_probes::affinity::allowed_cpus()),
        )
        .map_err(run_error)?;
        Ok(MemoryMockRig {
            point,
            launcher,
            server: Some(server),
        })
    }

    /// Starts the mock of `point` on the agent's host; the clients run here.
    pub fn start_remote(
        point: MockPoint,
        launcher: Option<Launcher>,
        target: &crate::remote::RemoteTarget,
    ) -> Result<Self, RunError> {
        checked(&point)?;
        let session = target
            .connect()
            .map_err(|e| RunError::Participant(e.to_string()))?;
        let slots = point.client.threads * point.instances;
        let server = RunningServer::start_remote(
            &session,
            point.client.crc,
            bar1_for(slots, point.client.payload),
            point.io,
        )
        .map_err(run_error)?;
        Ok(MemoryMockRig {
            point,
            launcher,
            server: Some(server),
        })
    }

    /// Connects to the mock already serving at `addr` (BAR1 is whatever it has: a
    /// client whose threads' slices do not all fit does not verify); nothing is
    /// started, and the mock is left running.
    pub fn connect(
        point: MockPoint,
        launcher: Option<Launcher>,
        addr: SocketAddr,
    ) -> Result<Self, RunError> {
        checked(&point)?;
        Ok(MemoryMockRig {
            point,
            launcher,
            server: Some(RunningServer::existing(addr)),
        })
    }

    /// The clients of one run: in this process, as client processes, or (without a
    /// launcher) as threads.
    /// Their sockets give up after `hang_timeout`, the run's.
    fn clients(
        &self,
        addr: SocketAddr,
        stop: &AtomicBool,
        hang_timeout: Duration,
    ) -> Result<Vec<ClientRun>, WarpRunError> {
        let p = &self.point;
        let cpus = p.client_cpus(&xferbench_probes::affinity::allowed_cpus());
        let client = ClientSpec {
            hang_timeout_ms: hang_timeout.as_millis().max(1) as u64,
            pin_cpus: cpus.clone(),
            ..p.client.clone()
        };
        if p.instances <= 1 {
            return Ok(vec![run_client(addr, &client, stop)?]);
        }
        if let Some(l) = &self.launcher {
            return run_instances(l, addr, &client, p.instances);
        }
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..p.instances)
                .map(|i| {
                    let spec = ClientSpec {
                        first_slot: i * client.threads,
                        slots: p.instances * client.threads,
                        pin_cpus: cpus.get(i).map(|&c| vec![c]).unwrap_or_default(),
                        ..client.clone()
                    };
                    s.spawn(move || run_client(addr, &spec, stop))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(WarpRunError::Process("a client thread panicked".into()))
                    })
                })
                .collect()
        })
    }
}

/// What one client process did, as a channel of the run.
pub fn outcome(run: &ClientRun, ops: Ops) -> ChannelOutcome {
    let mut hist = new_histogram();
    for &(v, n) in &run.latency_buckets {
        let _ = hist.record_n(v.max(1), n);
    }
    // Each completed read/write/read iteration is checked once; a failed transaction
    // fails the run, so completed iterations are a third of the transactions.
    let integrity = (run.verified && ops == Ops::ReadWriteRead).then(|| Integrity {
        checked: run.transactions / 3,
        corrupt: run.verify_failures,
        ..Integrity::default()
    });
    ChannelOutcome {
        start: run.start,
        end: run.end,
        messages: run.transactions,
        bytes: run.payload_bytes,
        latency: Some(hist),
        integrity,
        schedule: None,
    }
}

impl Rig for MemoryMockRig {
    /// `main` and `memory-mock` (this process's id when the mock is a thread; not
    /// listed when it is an existing mock).
    fn participants(&self) -> Vec<Participant> {
        let me = std::process::id();
        let mut who = vec![Participant {
            name: "main".into(),
            pid: me,
        }];
        if let Some(s) = self.server.as_ref().filter(|s| !s.is_existing()) {
            who.push(Participant {
                name: "memory-mock".into(),
                pid: s.pid().unwrap_or(me),
            });
        }
        who
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        let server = self
            .server
            .as_mut()
            .ok_or_else(|| RunError::Participant("the memory mock has stopped".into()))?;
        if let Some(ended) = server.ended() {
            return Err(RunError::Participant(format!("the memory mock {ended}")));
        }
        let addr = server.addr;
        if ctl.stop.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        let mock_before = server.cpu();
        ctl.window_started();
        let main_before = CpuSnapshot::now();
        let runs = self.clients(addr, ctl.stop, ctl.hang_timeout);
        let main_after = CpuSnapshot::now();
        ctl.window_ended();
        let server = self.server.as_mut().expect("checked above");
        let mock_after = server.cpu();
        let mock_pid = mock_before.map(|(pid, _)| pid);
        let existing = server.is_existing();
        let runs = match runs {
            Ok(r) => r,
            // A failed client is usually the symptom of a dead mock: say so.
            Err(e) => match server.ended() {
                Some(ended) => {
                    return Err(RunError::Participant(format!("the memory mock {ended}")));
                }
                None => return Err(run_error(e)),
            },
        };
        if ctl.stop.load(Ordering::Relaxed) || runs.iter().any(|r| r.interrupted) {
            return Err(RunError::Interrupted);
        }
        let errors: u64 = runs.iter().map(|r| r.errors).sum();
        if errors > 0 {
            let first = runs.iter().find_map(|r| r.first_error.clone());
            return Err(RunError::Participant(format!(
                "{errors} failed transaction(s); the first: {}",
                first.unwrap_or_default()
            )));
        }
        let me = std::process::id();
        let processes = self.launcher.is_some() && self.point.instances > 1;
        let main_role = match (processes, mock_pid.is_some() || existing) {
            (true, _) => "main",
            (false, true) => "main (clients)",
            (false, false) => "main (clients + memory mock thread)",
        };
        let mut cpu = vec![main_before.until(&main_after, main_role, me)];
        if processes {
            cpu.extend(runs.iter().enumerate().map(|(i, r)| ProcessCpu {
                role: format!("client{}", i + 1),
                ..r.cpu.clone()
            }));
        }
        let sum = |c: &[ProcessCpu]| c.iter().map(|c| c.user_s + c.sys_s).sum::<f64>();
        let client_cpu_s = if processes {
            sum(&cpu[1..])
        } else {
            sum(&cpu[..1])
        };
        let mock_cpu = match (mock_before, mock_after) {
            (Some((pid, b)), Some((_, a))) => Some(b.until(&a, "memory mock", pid)),
            _ => None,
        };
        let server_cpu_s = mock_cpu.as_ref().map(|c| c.user_s + c.sys_s);
        cpu.extend(mock_cpu);
        let ops = self.point.client.ops;
        let channels = runs.iter().map(|r| outcome(r, ops)).collect();
        let mut record = aggregate(channels, cpu);
        let f = &mut record.figures;
        let tps = f.get(figure::MESSAGE_RATE).copied().unwrap_or(0.0);
        let mbps = f.get(figure::THROUGHPUT).copied().unwrap_or(0.0) / 1e6;
        f.insert(figures::TRANSACTIONS_PER_S.into(), tps);
        f.insert(figures::MB_PER_S.into(), mbps);
        f.insert(figures::CLIENT_CPU_S.into(), client_cpu_s);
        if let Some(s) = server_cpu_s {
            f.insert(figures::SERVER_CPU_S.into(), s);
        }
        // Pinned threads may use one CPU each: that is the one they ran on.
        for (i, r) in runs.iter().enumerate() {
            for (j, cpus) in r.thread_cpus.iter().enumerate() {
                if let [cpu] = cpus.as_slice() {
                    f.insert(figures::thread_cpu(i, j), *cpu as f64);
                }
            }
        }
        record.counters = ctl.take_counters();
        Ok(record)
    }

    fn finish(mut self: Box<Self>) -> Result<(), RunError> {
        if let Some(s) = self.server.take() {
            s.stop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::warp::ConnectionMode;
    use std::time::Duration;
    use xferbench_transports::warp::CrcKind;
    use xferbench_transports::warp::mock::MockConfig;
    use xferbench_transports::warp::server::{IoModel, Server, ServerConfig};

    fn client(connection: ConnectionMode, threads: usize, crc: CrcKind) -> ClientSpec {
        ClientSpec {
            threads,
            iterations: 5,
            payload: 256,
            crc,
            connection,
            piggyback_acks: connection != ConnectionMode::Shared,
            think_ms: 0,
            first_slot: 0,
            slots: 0,
            ops: Ops::ReadWriteRead,
            hang_timeout_ms: 10_000,
            pin_cpus: Vec::new(),
        }
    }

    fn run(point: MockPoint) -> Result<RunRecord, RunError> {
        let mut rig: Box<dyn Rig> = Box::new(MemoryMockRig::start(point, None)?);
        let stop = AtomicBool::new(false);
        let mut ctl = RunControl::new(&stop, Duration::from_secs(60), None);
        let r = rig.run_once(&mut ctl);
        rig.finish()?;
        r
    }

    fn point(client: ClientSpec, instances: usize) -> MockPoint {
        MockPoint {
            client,
            instances,
            io: IoModel::Epoll,
            pin: false,
        }
    }

    #[test]
    fn every_connection_mode_completes_and_verifies_the_workload() {
        for (mode, crc) in [
            (ConnectionMode::Shared, CrcKind::Bitwise),
            (ConnectionMode::PerThread, CrcKind::Table),
            (ConnectionMode::Pipelined, CrcKind::Fast),
        ] {
            // 40 threads: two pipelined connections, one of them partly used.
            let r = run(point(client(mode, 40, crc), 1)).unwrap();
            assert_eq!(r.messages, 40 * 5 * 3, "{mode:?}");
            assert_eq!(r.latency.unwrap().count, 40 * 5 * 3, "{mode:?}");
            let k = r.integrity.expect("verified");
            assert_eq!((k.checked, k.corrupt), (40 * 5, 0), "{mode:?}");
            assert!(r.figures[figures::TRANSACTIONS_PER_S] > 0.0);
            assert_eq!(
                r.figures[figures::TRANSACTIONS_PER_S],
                r.figures[figure::MESSAGE_RATE]
            );
            assert!(r.figures[figures::MB_PER_S] > 0.0 && r.window_ns > 0);
            assert!(r.figures.contains_key(figures::CLIENT_CPU_S));
            assert_eq!(r.cpu.len(), 1, "the mock is a thread: main only");
        }
    }

    #[test]
    fn a_rig_connected_to_an_existing_mock_leaves_it_running() {
        let mock = RunningServer::start(None, CrcKind::Fast, 4096, IoModel::Epoll, None).unwrap();
        for _ in 0..2 {
            let rig = MemoryMockRig::connect(
                point(client(ConnectionMode::PerThread, 2, CrcKind::Fast), 1),
                None,
                mock.addr,
            )
            .unwrap();
            let mut rig: Box<dyn Rig> = Box::new(rig);
            let names: Vec<String> = rig.participants().into_iter().map(|p| p.name).collect();
            assert_eq!(names, ["main"], "the mock is not ours");
            let stop = AtomicBool::new(false);
            let mut ctl = RunControl::new(&stop, Duration::from_secs(60), None);
            let r = rig.run_once(&mut ctl).unwrap();
            rig.finish().unwrap();
            assert_eq!(r.messages, 2 * 5 * 3);
            assert!(r.integrity.unwrap().is_clean());
            assert!(!r.figures.contains_key(figures::SERVER_CPU_S));
        }
        mock.stop();
    }

    #[test]
    fn instances_without_a_launcher_run_as_threads_one_channel_each() {
        let mut c = client(ConnectionMode::PerThread, 2, CrcKind::Fast);
        c.iterations = 3;
        let r = run(point(c, 3)).unwrap();
        assert_eq!(r.channels.len(), 3);
        assert_eq!(r.messages, 3 * 2 * 3 * 3);
        assert!(r.integrity.unwrap().is_clean());
    }

    #[test]
    fn verification_catches_a_device_that_loses_writes() {
        // BAR1 read-only: every write is dropped, so every second read differs.
        let device = MockConfig {
            bar_writable: [false; 6],
            ..MockConfig::default()
        };
        let server = Server::bind(ServerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            crc: CrcKind::Fast,
            device,
            io: IoModel::Epoll,
        })
        .unwrap();
        let addr = server.local_addr().unwrap();
        let stop = AtomicBool::new(false);
        let server_stop = AtomicBool::new(false);
        std::thread::scope(|sc| {
            sc.spawn(|| server.run(&server_stop).unwrap());
            for connection in [ConnectionMode::Shared, ConnectionMode::Pipelined] {
                let mut s = client(connection, 4, CrcKind::Fast);
                s.iterations = 3;
                s.piggyback_acks = false;
                let r = run_client(addr, &s, &stop).unwrap();
                assert!(r.verified);
                assert_eq!(r.verify_failures, 12, "{connection:?}");
                assert_eq!(r.errors, 0);
                let k = outcome(&r, Ops::ReadWriteRead).integrity.unwrap();
                assert_eq!((k.checked, k.corrupt), (12, 12), "{connection:?}");
                assert!(!k.is_clean());
            }
            server_stop.store(true, Ordering::Relaxed);
        });
    }

    #[test]
    fn processes_whose_slices_do_not_all_fit_in_bar1_all_run_unverified() {
        // BAR1 of 2048 B holds one slice of 2048 B: the second process's slice does
        // not fit, so neither verifies (the first would otherwise see the second's
        // writes in its slice and fail).
        let server = RunningServer::start(None, CrcKind::Fast, 2048, IoModel::Epoll, None).unwrap();
        let stop = AtomicBool::new(false);
        std::thread::scope(|sc| {
            let runs: Vec<_> = (0..2)
                .map(|i| {
                    let mut s = client(ConnectionMode::PerThread, 1, CrcKind::Fast);
                    s.payload = 2048;
                    s.iterations = 50;
                    s.first_slot = i;
                    s.slots = 2;
                    let (addr, stop) = (server.addr, &stop);
                    sc.spawn(move || run_client(addr, &s, stop))
                })
                .collect();
            for h in runs {
                let r = h.join().unwrap().unwrap();
                assert!(!r.verified);
                assert_eq!((r.verify_failures, r.errors), (0, 0));
            }
        });
        // Alone, the first slice fits and is verified.
        let mut s = client(ConnectionMode::PerThread, 1, CrcKind::Fast);
        s.payload = 2048;
        let r = run_client(server.addr, &s, &stop).unwrap();
        assert!(r.verified && r.verify_failures == 0);
    }

    #[test]
    fn read_only_iterations_count_one_transaction_each() {
        let mut c = client(ConnectionMode::Pipelined, 8, CrcKind::Fast);
        c.ops = Ops::Read;
        let r = run(point(c, 1)).unwrap();
        assert_eq!(r.messages, 8 * 5);
        assert!(r.integrity.is_none(), "nothing to verify");
    }

    #[test]
    fn bad_specs_are_refused_with_a_message() {
        let server = RunningServer::start(None, CrcKind::Fast, 2048, IoModel::Epoll, None).unwrap();
        let stop = AtomicBool::new(false);
        let mut s = client(ConnectionMode::Shared, 1, CrcKind::Fast);
        s.iterations = 1;
        s.payload = 6;
        let e = run_client(server.addr, &s, &stop).unwrap_err().to_string();
        assert!(e.contains("multiple of 4"), "{e}");
        s.payload = 4;
        // Names are checked where a spec is read: a CRC or I/O model of no
        // definition never reaches a client or a mock.
        let mut json = serde_json::to_value(&s).unwrap();
        json["crc"] = "crc64".into();
        let e = serde_json::from_value::<ClientSpec>(json)
            .unwrap_err()
            .to_string();
        assert!(e.contains("bitwise, table, fast"), "{e}");
        let mock = MemoryMockSpec::loopback(CrcKind::Fast, 2048, IoModel::Epoll);
        let mut json = serde_json::to_value(mock).unwrap();
        json["io"] = "poll".into();
        let e = serde_json::from_value::<MemoryMockSpec>(json)
            .unwrap_err()
            .to_string();
        assert!(e.contains("epoll, threads"), "{e}");
        // Through the rig: usage errors, not failures.
        s.payload = 6;
        let e = run(point(s.clone(), 1)).unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("multiple of 4"),
            "{e}"
        );
        s.payload = 4;
        assert!(run(point(s, 0)).unwrap_err().is_usage());
    }
}
