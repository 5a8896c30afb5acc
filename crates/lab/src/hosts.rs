//! What a remote run records in its result's context: both hosts, how windows were
//! timed and the clock offset. Plain data, shared by the result and the protocol.

use serde::{Deserialize, Serialize};

/// One host of a remote run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// Kernel release.
    pub kernel: String,
    /// CPU model.
    pub cpu_model: String,
    /// The address of this host on the control connection.
    #[serde(default)]
    pub address: String,
}

/// The agent's clock offset, estimated over the control connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClockOffset {
    /// Agent's clock minus the measuring side's, nanoseconds.
    pub offset_ns: i64,
    /// Half the smallest round trip, nanoseconds.
    pub uncertainty_ns: u64,
    /// The smallest round trip, nanoseconds.
    pub min_rtt_ns: u64,
    /// Round trips sampled.
    pub samples: u32,
}

/// How windows are timed in a remote run (recorded in the result).
pub const WINDOWS_ON_MEASURING_SIDE: &str = "every window is measured on the measuring side's clock only; the clock offset is informational";

/// The remote part of a result's context: both hosts and the clocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RemoteContext {
    /// The agent's control address.
    pub agent: String,
    /// The host that measured (this one).
    pub measuring_host: HostInfo,
    /// The agent's host.
    pub agent_host: HostInfo,
    /// The host data connections dialled, when not the agent's (a relay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_host: Option<String>,
    /// How windows were timed.
    pub windows: String,
    /// The estimated clock offset.
    pub clock: ClockOffset,
}
