//! `xferbench completions` and `xferbench man`: shell completion scripts and man
//! pages generated from the clap definitions.

use anyhow::{Context, Result};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// `xferbench completions`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench completions bash > ~/.local/share/bash-completion/completions/xferbench
  xferbench completions zsh > ~/.zfunc/_xferbench
  xferbench completions fish > ~/.config/fish/completions/xferbench.fish")]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `xferbench man`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench man | man -l -
  xferbench man --out ~/.local/share/man/man1")]
pub struct ManArgs {
    /// Write xferbench.1 and xferbench-SUBCOMMAND.1 pages to DIR instead of printing the
    /// main page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Prints the completion script for the shell.
pub fn completions(args: &CompletionsArgs, cmd: clap::Command, out: &mut dyn Write) -> Result<u8> {
    let mut cmd = without_hidden(cmd);
    // clap_complete panics when its writer fails: it writes into memory, we write out.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "xferbench", &mut script);
    out.write_all(&script)?;
    Ok(0)
}

/// The command without its hidden subcommands (the lab's process roles, all at the
/// top level), which the shells' scripts would otherwise offer.
fn without_hidden(cmd: clap::Command) -> clap::Command {
    let shown = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect::<Vec<_>>();
    clap::Command::new("xferbench")
        .version(env!("CARGO_PKG_VERSION"))
        .args(cmd.get_arguments().cloned())
        .subcommands(shown)
}

/// Prints the main page, or writes every page to `--out`.
pub fn man(args: &ManArgs, cmd: clap::Command, out: &mut dyn Write) -> Result<u8> {
    match &args.out {
        None => {
            clap_mangen::Man::new(cmd).render(out)?;
            writeln!(out)?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            // xferbench.1 and xferbench-run.1, xferbench-warp-serve.1, ...: hidden
            // subcommands (the lab's process roles) get none.
            clap_mangen::generate_to(cmd, dir)
                .with_context(|| format!("cannot write the man pages to {}", dir.display()))?;
            let mut err = std::io::stderr().lock();
            writeln!(err, "wrote the man pages to {}", dir.display())?;
        }
    }
    Ok(0)
}
