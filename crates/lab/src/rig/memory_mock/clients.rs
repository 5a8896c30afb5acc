//! Warp clients as processes of [`Role::WarpClient`], started at once against one
//! memory mock.

use crate::workload::warp::{ClientProcessSpec, ClientRun, ClientSpec, WarpRunError};
use std::io::Read;
use std::net::SocketAddr;
use std::time::Duration;
use xferbench_probes::process::{Launcher, Role, Streams, Supervised};

/// Starts `k` client processes ([`Role::WarpClient`]) at once (process `i` uses BAR1
/// slots from `i × threads` and, when `spec` pins, the CPU `spec.pin_cpus[i]`) and
/// collects their results.
pub fn run_instances(
    launcher: &Launcher,
    addr: SocketAddr,
    spec: &ClientSpec,
    k: usize,
) -> Result<Vec<ClientRun>, WarpRunError> {
    let mut children = Vec::with_capacity(k);
    for i in 0..k {
        let json = serde_json::to_string(&ClientProcessSpec {
            connect: addr,
            client: ClientSpec {
                first_slot: i * spec.threads,
                slots: k * spec.threads,
                pin_cpus: if spec.pin_cpus.is_empty() {
                    Vec::new()
                } else {
                    vec![spec.pin_cpus[i % spec.pin_cpus.len()]]
                },
                ..spec.clone()
            },
        })
        .expect("the spec serialises");
        let child = launcher
            .spawn(Role::WarpClient, [json], Streams::OUTPUT)
            .map_err(|source| WarpRunError::Spawn {
                role: Role::WarpClient,
                source,
            })?;
        children.push(child);
    }
    let mut runs = Vec::with_capacity(k);
    let mut failure = None;
    for (i, mut child) in children.into_iter().enumerate() {
        let mut out = Vec::new();
        let read = child
            .take_stdout()
            .expect("piped stdout")
            .read_to_end(&mut out);
        // Its output is closed: it is exiting (or kill it).
        let ended = child
            .exited_within(Duration::from_secs(10))
            .unwrap_or_else(|| child.stop());
        let what = format!("client {i}");
        let result = match (read, ended.success()) {
            (Ok(_), true) => serde_json::from_slice::<ClientRun>(&out)
                .map_err(|e| WarpRunError::Process(format!("{what} printed no result: {e}"))),
            (Err(e), true) => Err(WarpRunError::Process(format!("{what}: {e}"))),
            (_, false) => Err(WarpRunError::Ended { what, ended }),
        };
        match result {
            Ok(r) => runs.push(r),
            Err(e) => failure = failure.or(Some(e)),
        }
    }
    match failure {
        Some(f) => Err(f),
        None => Ok(runs),
    }
}
