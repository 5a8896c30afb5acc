//! The `xferbench` binary: parses the command line, runs the lab, writes reports.

#[cfg(not(target_os = "linux"))]
compile_error!("xferbench runs on Linux only: the transports and the lab use Linux system calls");

mod ab;
mod cli;
mod config;
mod docs;
mod exit;
mod list;
mod logging;
mod profile;
mod rpmsg;
mod run;
mod stop;
mod study;
mod warp;

use anyhow::{Context, Result};
use clap::Parser;
use std::io::Write;
use std::process::ExitCode;
use xferbench_lab::process::{Launcher, Role};

/// How the lab starts this binary in each of its hidden roles.
pub fn launcher() -> Result<Launcher> {
    let exe = std::env::current_exe()
        .context("cannot find the xferbench binary to start its helper processes")?;
    Ok(Launcher::new(exe)
        .with_role(Role::Peer, [cli::role::PEER])
        .with_role(Role::RpmsgRemote, [cli::role::RPMSG_REMOTE])
        .with_role(Role::MemoryMock, [cli::role::MEMORY_MOCK])
        .with_role(Role::WarpClient, [cli::role::WARP_CLIENT]))
}

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    logging::init(cli.verbose);
    let code = match cli.command {
        cli::Command::Peer => {
            let _span = tracing::info_span!("peer", pid = std::process::id()).entered();
            return ExitCode::from(xferbench_lab::peer::serve_stdio() as u8);
        }
        cli::Command::List(args) => {
            let stdout = std::io::stdout();
            list::run(&args, &mut stdout.lock()).map(|()| 0)
        }
        cli::Command::Run(args) => run::run(&args),
        cli::Command::Profile(args) => profile::run(&args),
        cli::Command::Ab(args) => ab::run(&args),
        cli::Command::Compare(args) => ab::compare(&args),
        cli::Command::Study(args) => study::run(&args),
        cli::Command::RpmsgRemote { name } => {
            let _span = tracing::info_span!("rpmsg-remote", pid = std::process::id()).entered();
            return ExitCode::from(xferbench_lab::rig::rpmsg::serve_remote(&name) as u8);
        }
        cli::Command::MemoryMock { spec_json } => {
            let _span = tracing::info_span!("memory-mock", pid = std::process::id()).entered();
            warp::memory_mock(&spec_json)
        }
        cli::Command::WarpClient { spec_json } => {
            let _span = tracing::info_span!("warp-client", pid = std::process::id()).entered();
            warp::client_process(&spec_json)
        }
        cli::Command::Warp(cmd) => warp::run(&cmd),
        cli::Command::Rpmsg(args) => rpmsg::run(&args),
        cli::Command::Completions(args) => docs::completions(&args, &mut std::io::stdout().lock()),
        cli::Command::Man(args) => docs::man(&args, &mut std::io::stdout().lock()),
    };
    match code {
        Ok(c) => ExitCode::from(c),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A closed stdout (`xferbench list | head -1`) is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_cli_definition_is_consistent() {
        super::cli::Cli::command().debug_assert();
    }

    #[test]
    fn the_launcher_starts_every_role_with_its_hidden_subcommand() {
        let launcher = super::launcher().unwrap();
        let names: Vec<String> = super::cli::Cli::command()
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
