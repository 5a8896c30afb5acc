//! How the lab starts this binary in each of its hidden roles: the one
//! [`Launcher`] every subcommand that starts participant processes hands to the lab.

use crate::cli;
use anyhow::{Context, Result};
use xferbench_lab::process::{Launcher, Role};

/// How the lab starts this binary in each of its hidden roles.
pub fn launcher() -> Result<Launcher> {
    let exe = std::env::current_exe()
        .context("cannot find the xferbench binary to start its helper processes")?;
    Ok(Launcher::new(exe)
        .with_role(Role::Peer, [cli::role::PEER])
        .with_role(Role::RpmsgRemote, [cli::role::RPMSG_REMOTE])
        .with_role(Role::MemoryMock, [cli::role::MEMORY_MOCK])
        .with_role(Role::WarpClient, [cli::role::WARP_CLIENT])
        .with_role(Role::KvServer, [cli::role::KV_SERVER])
        .with_role(Role::KvClient, [cli::role::KV_CLIENT])
        .with_role(Role::PerfStatBench, [cli::role::PERFSTAT_BENCH])
        .with_role(Role::PluginProbe, [cli::role::PLUGIN_PROBE])
        .with_role(Role::PluginDriver, [cli::role::PLUGIN_DRIVER])
        .with_role(Role::PluginCleanup, [cli::role::PLUGIN_CLEANUP])
        .with_role(Role::Check, [cli::role::CHECK]))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_launcher_starts_every_role_with_its_hidden_subcommand() {
        let launcher = super::launcher().unwrap();
        let names: Vec<String> = crate::cli::Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        for role in xferbench_lab::process::Role::ALL {
            let cmd = launcher.command(role, ["DATA"]).unwrap();
            let args: Vec<String> = cmd
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            assert_eq!(args.len(), 2, "{role:?}: {args:?}");
            assert!(names.contains(&args[0]), "{role:?}: {args:?}");
            assert_eq!(args[1], "DATA");
        }
    }
}
