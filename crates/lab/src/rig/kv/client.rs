//! One client of a running kv server, in this process: the rig of `xferbench kv
//! client`, a one-point plan. Each run is the whole request mix of a
//! [`KvClientSpec`]; with `outer = 0` (a background "visitor") the run lasts until
//! the stop flag and the loop runs it open-ended
//! ([`LoopOptions::until_stopped`](crate::measure::LoopOptions::until_stopped)).
//!
//! The record: the client's requests as messages over its window (first request to
//! last reply), its per-request latency, every reply checked (a mismatch is a corrupt
//! message of [`Integrity`]) and this process's CPU.

use super::super::{ChannelOutcome, Rig, RunControl, RunError, aggregate};
use crate::result::RunRecord;
use crate::workload::kv::{KvClientRun, KvClientSpec, run_client};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use xferbench_probes::counters::Participant;
use xferbench_probes::verify::Integrity;

/// A client of the server its spec names; no process is started.
pub struct KvClientRig {
    spec: KvClientSpec,
    stop: Arc<AtomicBool>,
    first_mismatch: Arc<Mutex<Option<String>>>,
}

impl KvClientRig {
    /// A rig running `spec`; `stop` is the flag of the loop's runs (the client
    /// leaves the server at a safe point once it rises).
    pub fn new(spec: KvClientSpec, stop: Arc<AtomicBool>) -> KvClientRig {
        KvClientRig {
            spec,
            stop,
            first_mismatch: Arc::default(),
        }
    }

    /// Describes the first mismatched reply of any run in `cell`, for the caller to
    /// print beside the result document (which counts mismatches, not their text).
    pub fn with_first_mismatch(mut self, cell: Arc<Mutex<Option<String>>>) -> KvClientRig {
        self.first_mismatch = cell;
        self
    }
}

/// A client's run as the loop's record: its requests over its window, latency,
/// replies checked and mismatched, and this process's CPU.
pub fn record(run: &KvClientRun) -> RunRecord {
    let mut hist = crate::result::new_histogram();
    for &(v, n) in &run.latency_buckets {
        let _ = hist.record_n(v.max(1), n);
    }
    let channel = ChannelOutcome {
        start: run.start,
        end: run.end,
        messages: run.requests,
        bytes: 0,
        latency: Some(hist),
        integrity: Some(Integrity {
            checked: run.requests,
            corrupt: run.mismatches,
            ..Integrity::default()
        }),
        schedule: None,
    };
    aggregate(vec![channel], run.cpu.clone().into_iter().collect())
}

impl Rig for KvClientRig {
    fn participants(&self) -> Vec<Participant> {
        vec![Participant::main()]
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        ctl.window_started();
        let run = run_client(&self.spec, &self.stop)
            .map_err(|e| RunError::Participant(format!("kv client: {e}")))?;
        ctl.window_ended();
        if run.interrupted && !ctl.until_stopped {
            return Err(RunError::Interrupted);
        }
        if let Some(m) = &run.first_mismatch
            && let Ok(mut first) = self.first_mismatch.lock()
        {
            first.get_or_insert_with(|| m.clone());
        }
        let mut r = record(&run);
        r.counters = ctl.take_counters();
        Ok(r)
    }

    fn finish(self: Box<Self>) -> Result<(), RunError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::kv::Backend;
    use std::sync::atomic::Ordering;
    use std::time::Duration;
    use xferbench_transports::kv::{Arch, Server, ServerConfig};

    fn spec(name: &str, outer: u64) -> KvClientSpec {
        KvClientSpec {
            backend: Backend::Shm(name.into()),
            outer,
            inner: 10,
            seed: Some(5),
            hang_timeout_ms: 10_000,
            pin: None,
            limit_ms: None,
            key: None,
        }
    }

    #[test]
    fn a_run_records_every_request_checked_and_its_latency() {
        let server = Server::start(ServerConfig::new(Arch::Sharded)).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let mut rig: Box<dyn Rig> =
            Box::new(KvClientRig::new(spec(server.name(), 4), stop.clone()));
        let mut ctl = RunControl::new(&stop, Duration::from_secs(10), None);
        let r = rig.run_once(&mut ctl).unwrap();
        rig.finish().unwrap();
        server.stop().unwrap();
        assert_eq!(r.messages, 120);
        assert_eq!(r.latency.unwrap().count, 120);
        let i = r.integrity.unwrap();
        assert_eq!((i.checked, i.corrupt), (120, 0));
    }

    #[test]
    fn a_visitor_ended_by_the_stop_keeps_its_run_only_when_open_ended() {
        let server = Server::start(ServerConfig::new(Arch::Sharded)).unwrap();
        for open_ended in [true, false] {
            let stop = Arc::new(AtomicBool::new(false));
            let raise = {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(100));
                    stop.store(true, Ordering::Relaxed);
                })
            };
            let mut rig = KvClientRig::new(spec(server.name(), 0), stop.clone());
            let mut ctl =
                RunControl::new(&stop, Duration::from_secs(10), None).open_ended(open_ended);
            let r = rig.run_once(&mut ctl);
            raise.join().unwrap();
            match r {
                Ok(r) => {
                    assert!(open_ended);
                    assert!(r.messages > 0);
                    assert!(r.integrity.unwrap().is_clean());
                }
                Err(e) => assert!(!open_ended && matches!(e, RunError::Interrupted), "{e}"),
            }
        }
        server.stop().unwrap();
    }
}
