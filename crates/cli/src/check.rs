//! `xferbench check`: the conformance suite as a command (see
//! `xferbench_lab::check`), for built-in transports and plugins alike.

use anyhow::{Context, Result, bail};
use clap::Args;
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use std::io::IsTerminal;
use std::io::Write;
use xferbench_lab::check::{CheckId, CheckResult, Status, run_checks};
use xferbench_lab::sweep::{SweepSpec, parse_words};
use xferbench_lab::transports;
use xferbench_transports::Params;

/// The transports `check` checks when none are named.
pub const DEFAULT_TRANSPORTS: &str = "shm,pipe,unix,tcp,iceoryx2,rpmsg";

/// `xferbench check`.
#[derive(Debug, Args)]
#[command(after_help = "\
Every check runs in a process of its own: a transport that crashes or hangs fails that check \
(the signal or the timeout named, and for a plugin the call it was in: `connect`, `recv of \
message 12`, `close`) and the others still run, unless --fail-fast. A check is declared hung \
when it has no verdict after 20 s plus twice --timeout plus 10 s (50 s at the default \
--timeout 10s; the table's header line says how long).

For a plugin transport, a check also fails when its processes leave something behind in /tmp, \
/dev/shm or /dev/mqueue, or SysV IPC objects, once the plugin's clean-up hook has run, naming it. The check's processes \
run in a private mount and IPC namespace with fresh mounts there, so nothing reaches this \
machine; where no namespace can be made (or with XFERBENCH_CHECK_NAMESPACES=0), new files are \
found by listing those folders before and after, and the check's detail says so.

Examples:
  xferbench check
  xferbench check -t plugin:./libxb_posix_mq.so
  xferbench check -t plugin:./libxb_posix_mq.so -p depth=1,10 --only back-pressure,integrity
  xferbench check -t shm -p wait=spin,block --json

Exit status: 0 every check passed (or does not apply), 5 a check failed, 2 bad usage (a plugin \
file that cannot be used, an unknown transport, check or parameter), 1 the checks could not run, \
128+N stopped by signal N.")]
pub struct CheckArgs {
    /// Transports to check: built-in names (see `xferbench list`) or `plugin:PATH[:NAME]`
    /// [default: shm,pipe,unix,tcp,iceoryx2,rpmsg].
    #[arg(short, long, value_name = "LIST")]
    pub transport: Option<String>,
    /// A transport parameter, as in `run`; a list checks each value. Repeatable.
    #[arg(short = 'p', long = "param", value_name = "NAME=LIST")]
    pub params: Vec<String>,
    /// Run only these checks (comma-separated names, as the table shows them).
    #[arg(long, value_name = "LIST")]
    pub only: Option<String>,
    /// How long a send or receive may wait; also the bound on noticing a dead peer.
    #[command(flatten)]
    pub hang: crate::flags::TimeoutArgs,
    /// Stop at the first check that fails or hangs (for a plugin's own CI).
    #[arg(long)]
    pub fail_fast: bool,
    /// Print the results as one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Print no table and no progress; the exit status tells.
    #[arg(short, long)]
    pub quiet: bool,
}

/// The configurations to check: (transport, parameters).
fn configurations(
    args: &CheckArgs,
    launcher: &xferbench_probes::process::Launcher,
) -> Result<Vec<(String, Params)>> {
    let words = parse_words(args.transport.as_deref().unwrap_or(DEFAULT_TRANSPORTS))
        .context("--transport")?;
    let names = crate::config::expand_plugins(words, launcher)?;
    for t in &names {
        transports::descriptor(t).context("--transport")?;
    }
    let mut extra: Vec<(String, String)> = Vec::new();
    for p in &args.params {
        let (name, list) = p
            .split_once('=')
            .with_context(|| format!("-p {p:?}: expected NAME=LIST, for example -p depth=1,10"))?;
        extra.push((name.trim().to_string(), list.to_string()));
    }
    let spec = SweepSpec {
        transports: names,
        sizes: vec![1],
        channels: vec![1],
        params: extra,
        workload_params: Vec::new(),
        neighbours: Vec::new(),
    };
    let points = spec.plan().map_err(|e| anyhow::anyhow!("-p: {e}"))?;
    let mut out = Vec::with_capacity(points.len());
    for p in points {
        transports::validate(&p.transport, &p.transport_params)
            .map_err(|e| anyhow::anyhow!("-p: {e}"))?;
        let defs = transports::descriptor(&p.transport)?.params;
        out.push((p.transport.clone(), p.transport_params.machine(&defs)));
    }
    Ok(out)
}

fn checks(only: Option<&str>) -> Result<Vec<CheckId>> {
    let Some(list) = only else {
        return Ok(CheckId::all());
    };
    let mut out = Vec::new();
    for name in parse_words(list).context("--only")? {
        match CheckId::from_name(&name) {
            Some(c) => out.push(c),
            None => {
                let known: Vec<&str> = CheckId::all().iter().map(|c| c.name()).collect();
                bail!(
                    "--only: no check `{name}`; choose from: {}",
                    known.join(", ")
                );
            }
        }
    }
    Ok(out)
}

fn shown(r: &CheckResult) -> String {
    let mut s = r.transport.clone();
    for (k, v) in &r.params {
        s.push_str(&format!(" {k}={v}"));
    }
    s
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Fail => "FAIL",
        Status::Skip => "skip",
    }
}

/// Runs `xferbench check` and returns the exit status.
pub fn run(args: &CheckArgs) -> Result<u8> {
    let launcher = crate::launcher::launcher()?;
    let configs = match configurations(args, &launcher) {
        Ok(c) => c,
        Err(e) => return Ok(crate::exit::usage("check", e)),
    };
    let checks = match checks(args.only.as_deref()) {
        Ok(c) => c,
        Err(e) => return Ok(crate::exit::usage("check", e)),
    };
    let timeout = args.hang.timeout;
    let stop = crate::stop::stop_flag()?;
    let mut results: Vec<CheckResult> = Vec::new();
    // Each result once: in the table at the end. On a terminal the check that just
    // finished shows on one line, overwritten by the next and cleared before the table.
    let progress = !args.quiet && !args.json && std::io::stderr().is_terminal();
    if !args.quiet && !args.json {
        eprintln!(
            "{} check(s) of {} configuration(s); each is declared hung after {} s without a verdict",
            checks.len(),
            configs.len(),
            xferbench_lab::check::check_deadline(timeout).as_secs()
        );
    }
    for (transport, params) in &configs {
        if args.fail_fast && results.iter().any(|r| r.status == Status::Fail) {
            break;
        }
        let mut on_result = |r: &CheckResult| {
            if progress {
                eprint!(
                    "\r\x1b[K{} {} {} ({:.1} s)",
                    status_word(r.status),
                    shown(r),
                    r.check,
                    r.seconds
                );
            }
        };
        results.extend(run_checks(
            &launcher,
            transport,
            params,
            &checks,
            timeout,
            args.fail_fast,
            &stop,
            &mut on_result,
        ));
    }
    if progress {
        eprint!("\r\x1b[K");
    }
    let count = |s: Status| results.iter().filter(|r| r.status == s).count();
    let (passed, failed, skipped) = (
        count(Status::Pass),
        count(Status::Fail),
        count(Status::Skip),
    );
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let doc = serde_json::json!({
            "results": results,
            "passed": passed,
            "failed": failed,
            "skipped": skipped,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else if !args.quiet {
        let mut t = Table::new();
        t.load_style(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_header([
                xferbench_lab::names::TRANSPORT,
                "check",
                "result",
                "what it found",
            ]);
        for r in &results {
            t.add_row([
                shown(r),
                r.check.clone(),
                status_word(r.status).to_string(),
                r.detail.clone(),
            ]);
        }
        writeln!(out, "{t}")?;
        writeln!(
            out,
            "{} checks: {passed} passed, {failed} failed, {skipped} did not apply",
            results.len()
        )?;
    }
    out.flush()?;
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "interrupted ({}): {} check(s) done",
            crate::stop::received_name(),
            results.len()
        );
        return Ok(crate::stop::interrupted_status());
    }
    Ok(if failed > 0 {
        crate::exit::EXIT_CHECK_FAILED
    } else {
        0
    })
}
