//! What a memory-mock point is: the mock process's one JSON argument, BAR1's size,
//! and the point (the clients' work, their processes, the mock's I/O model).

use crate::workload::warp::{ClientSpec, WarpRunError};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use xferbench_transports::warp::CrcKind;
use xferbench_transports::warp::mock::MockConfig;
use xferbench_transports::warp::server::{IoModel, Server, ServerConfig};

/// What the memory mock process ([`Role::MemoryMock`](xferbench_probes::process::Role::MemoryMock)) serves: its one argument, as
/// JSON. It prints `listening on ADDR` on stdout once bound, serves until SIGINT and
/// dies with its parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryMockSpec {
    /// Address to listen on (port 0: any free port).
    pub listen: SocketAddr,
    /// CRC implementation.
    #[serde(with = "xferbench_params::by_name")]
    pub crc: CrcKind,
    /// BAR1 size in bytes (a power of two).
    pub bar1: u32,
    /// I/O model.
    #[serde(with = "xferbench_params::by_name")]
    pub io: IoModel,
    /// With `--pin`: the CPU every thread of the mock runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<usize>,
}

impl MemoryMockSpec {
    /// A mock on a free loopback port.
    pub fn loopback(crc: CrcKind, bar1: u32, io: IoModel) -> MemoryMockSpec {
        MemoryMockSpec {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            crc,
            bar1,
            io,
            pin: None,
        }
    }

    /// The server configuration.
    pub fn config(&self) -> Result<ServerConfig, WarpRunError> {
        let mut device = MockConfig::default();
        device.bar_sizes[1] = self.bar1;
        Ok(ServerConfig {
            listen: self.listen,
            crc: self.crc,
            device,
            io: self.io,
        })
    }

    /// Binds the server.
    pub fn bind(&self) -> Result<Server, WarpRunError> {
        Server::bind(self.config()?).map_err(|e| WarpRunError::Process(e.to_string()))
    }
}

/// BAR1 size that gives each of `slots` threads its own `payload`-byte slice (at least
/// warp-pipe's 2048 B).
pub fn bar1_for(slots: usize, payload: usize) -> u32 {
    let need = (slots as u64 * payload as u64).clamp(2048, 1 << 30);
    need.next_power_of_two() as u32
}

/// One point of the rig: what each client does, how many client processes, and the
/// mock's I/O model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MockPoint {
    /// What each client process does (`first_slot` is set per process).
    pub client: ClientSpec,
    /// Client processes (1: the client runs in this process).
    pub instances: usize,
    /// The mock's I/O model.
    #[serde(with = "xferbench_params::by_name")]
    pub io: IoModel,
    /// Pin as `run --pin` pins drivers and peers ([`MockPoint::client_cpus`],
    /// [`MockPoint::mock_cpu`]).
    #[serde(default)]
    pub pin: bool,
}

impl MockPoint {
    /// With [`MockPoint::pin`]: the CPU of client `i` (a client thread, or with
    /// `instances > 1` a client process), the 2i-th allowed CPU as a driver's,
    /// wrapping around.
    pub fn client_cpus(&self, cpus: &[usize]) -> Vec<usize> {
        let n = if self.instances > 1 {
            self.instances
        } else {
            self.client.threads
        };
        if !self.pin {
            return Vec::new();
        }
        (0..n.max(1))
            .map(|i| xferbench_probes::affinity::pin_plan(i, cpus).0)
            .collect()
    }

    /// With [`MockPoint::pin`]: the memory mock's CPU, the one after the first
    /// client's (as a peer's).
    pub fn mock_cpu(&self, cpus: &[usize]) -> Option<usize> {
        self.pin
            .then(|| xferbench_probes::affinity::pin_plan(0, cpus).1)
    }
}
