//! The `xferbench` binary: parses the command line, runs the lab, writes reports.

mod ab;
mod cli;
mod config;
mod list;
mod profile;
mod rpmsg;
mod run;
mod study;
mod warp;

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let code = match cli.command {
        cli::Command::Peer => return ExitCode::from(xferbench_lab::peer::serve_stdio() as u8),
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
            return ExitCode::from(xferbench_lab::rpmsg::serve_remote(&name) as u8);
        }
        cli::Command::Warp(cmd) => warp::run(&cmd),
        cli::Command::Rpmsg(args) => rpmsg::run(&args),
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
}
