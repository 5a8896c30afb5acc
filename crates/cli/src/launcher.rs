//! How the lab starts this binary in each of its hidden roles: the one
//! [`Launcher`] every subcommand that starts participant processes hands to the lab.

use crate::flags::role;
use anyhow::{Context, Result};
use xferbench_probes::process::{Launcher, Role};

/// How the lab starts this binary in each of its hidden roles.
pub fn launcher() -> Result<Launcher> {
    let exe = std::env::current_exe()
        .context("cannot find the xferbench binary to start its helper processes")?;
    Ok(Launcher::new(exe)
        .with_role(Role::Peer, [role::PEER])
        .with_role(Role::RpmsgRemote, [role::RPMSG_REMOTE])
        .with_role(Role::MemoryMock, [role::MEMORY_MOCK])
        .with_role(Role::WarpClient, [role::WARP_CLIENT])
        .with_role(Role::KvServer, [role::KV_SERVER])
        .with_role(Role::KvClient, [role::KV_CLIENT])
        .with_role(Role::PerfStatBench, [role::PERFSTAT_BENCH])
        .with_role(Role::PluginProbe, [role::PLUGIN_PROBE])
        .with_role(Role::PluginDriver, [role::PLUGIN_DRIVER])
        .with_role(Role::PluginCleanup, [role::PLUGIN_CLEANUP])
        .with_role(Role::Check, [role::CHECK]))
}
