//! `xferbench serve`: the agent for runs across hosts ([`xferbench_lab::remote`]),
//! and the measuring side's options (`--remote`, `--token-file`, `--data-host`).

use crate::flags::RemoteArgs;
use anyhow::Result;
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use xferbench_lab::agent::{Agent, AgentConfig, IDLE_TIMEOUT};
use xferbench_lab::remote::auth::Token;
use xferbench_lab::remote::{RemoteContext, RemoteTarget};

/// `xferbench serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The control address to listen on (any other than loopback needs --token-file).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:5301")]
    pub listen: String,
    /// The file holding the token shared with the measuring side (mode 600; at least
    /// 16 bytes). Every client must prove it knows it.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Ports the memory mock listens on (`LO-HI`, inclusive), so that a firewall
    /// or a relay can let them through [default: any free port].
    #[arg(long, value_name = "LO-HI")]
    pub data_ports: Option<String>,
}

/// Runs the agent until SIGINT/SIGTERM/SIGHUP; returns the exit status.
pub fn run(args: &ServeArgs) -> Result<u8> {
    let listen: SocketAddr = match args.listen.parse() {
        Ok(a) => a,
        Err(_) => {
            return Ok(crate::exit::usage(
                "serve",
                format!(
                    "--listen {}: expected ADDR:PORT, e.g. 127.0.0.1:5301",
                    args.listen
                ),
            ));
        }
    };
    let token = match &args.token_file {
        None => None,
        Some(p) => match Token::from_file(p) {
            Ok(t) => Some(t),
            Err(e) => return Ok(crate::exit::usage("serve", format!("--token-file: {e}"))),
        },
    };
    let data_ports = match args.data_ports.as_deref().map(parse_ports).transpose() {
        Ok(p) => p,
        Err(e) => return Ok(crate::exit::usage("serve", e)),
    };
    let cfg = AgentConfig {
        listen,
        token,
        launcher: crate::launcher::launcher()?,
        data_ports,
        idle_timeout: IDLE_TIMEOUT,
    };
    let agent = match Agent::bind(cfg) {
        Ok(a) => a,
        Err(e) => return Ok(crate::exit::usage("serve", e)),
    };
    let stop = crate::stop::stop_flag()?;
    let addr = agent.local_addr()?;
    // The announcement is the one line on stdout, for scripts and tests.
    {
        use std::io::Write;
        let mut out = crate::out::stdout();
        writeln!(out, "listening on {addr}")?;
        out.flush()?;
    }
    tracing::info!(%addr, "agent listening");
    agent.serve(&stop)?;
    Ok(crate::stop::interrupted_status())
}

fn parse_ports(s: &str) -> Result<(u16, u16), String> {
    let bad = || format!("--data-ports {s}: expected LO-HI, e.g. 5310-5319");
    let (lo, hi) = s.split_once('-').ok_or_else(bad)?;
    let lo: u16 = lo.trim().parse().map_err(|_| bad())?;
    let hi: u16 = hi.trim().parse().map_err(|_| bad())?;
    if lo == 0 || lo > hi {
        return Err(bad());
    }
    Ok((lo, hi))
}

/// The agent to use, from `--remote`, `--token-file` and `--data-host`.
pub fn target(args: &RemoteArgs) -> Result<Option<RemoteTarget>, String> {
    let Some(agent) = &args.remote else {
        return Ok(None);
    };
    let token = match &args.token_file {
        None => None,
        Some(p) => Some(Token::from_file(p).map_err(|e| format!("--token-file: {e}"))?),
    };
    Ok(Some(RemoteTarget {
        agent: agent.clone(),
        token,
        data_host: args.data_host.clone(),
    }))
}

/// Both hosts and the clock offset, for the result's context; a message on failure.
pub fn describe(target: &RemoteTarget) -> Result<RemoteContext> {
    xferbench_lab::remote::describe(target).map_err(|e| anyhow::anyhow!("--remote: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn data_ports_are_a_range() {
        assert_eq!(super::parse_ports("5310-5319"), Ok((5310, 5319)));
        for bad in ["", "5310", "0-4", "9-3", "a-b", "1-70000"] {
            assert!(super::parse_ports(bad).is_err(), "{bad}");
        }
    }
}
