//! `xferbench kv serve` and `xferbench kv client`: the hash-table server and the
//! original client's verified request mix; and the hidden roles the study starts
//! (`__kv-server`, `__kv-client`), which take the lab's spec as one JSON argument.

use crate::exit::{EXIT_INTEGRITY, EXIT_USAGE};
use crate::flags::{OutputArgs, TimeoutArgs, choice, count_of, default_of};
use crate::one_point::{Control, OnePoint};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use xferbench_lab::measure::PlannedPoint;
use xferbench_lab::record::FigureRules;
use xferbench_lab::result::{ResultDoc, figure};
use xferbench_lab::rig::Rig;
use xferbench_lab::rig::kv::KvServerSpec;
use xferbench_lab::rig::kv::client::KvClientRig;
use xferbench_lab::rig::kv::{BUCKETS, WORKERS};
use xferbench_lab::workload::RecordedWorkload;
use xferbench_lab::workload::kv::{
    Backend, INNER, KvClientParams, KvClientSpec, OUTER, run_client,
};
use xferbench_params::PointParams;
use xferbench_probes::process::die_with_parent;
use xferbench_transports::kv::{Arch, Server, ServerConfig, running_servers};

/// `xferbench kv ...`.
#[derive(Debug, Subcommand)]
pub enum KvCommand {
    /// Serve a hash table over shared memory until Ctrl-C (the original's `server`).
    #[command(after_help = "\
Examples:
  xferbench kv serve --arch preopt -s 10000 -n 1
  xferbench kv serve --arch sharded -n 4")]
    Serve(KvServeArgs),
    /// Run the original client's mix: OUTER × (INNER inserts, INNER bucket reads,
    /// INNER deletes), verifying every reply.
    #[command(after_help = "\
Examples:
  xferbench kv client 100 10 --seed 42
  xferbench kv client 0 10 --server memfd:4242:5:1035

OUTER 0 runs until Ctrl-C, which ends the run and keeps it (exit 130). The summary line \
and --json are drawn from the result document: the requests are its messages, the \
mismatched replies its corrupt ones.

Exit status: 0 success, 1 failure, 2 bad usage, 3 a reply failed verification, 128+N \
stopped by signal N (130 SIGINT, 143 SIGTERM), a visitor (OUTER 0) included.")]
    Client(KvClientArgs),
}

/// `xferbench kv serve`.
#[derive(Debug, Args)]
pub struct KvServeArgs {
    /// Server architecture.
    #[arg(long, value_parser = choice::<Arch>(), default_value_t = Arch::Sharded)]
    pub arch: Arch,
    /// Table size in buckets (the original's -s).
    #[arg(
        short,
        long,
        value_name = "BUCKETS",
        default_value = default_of(BUCKETS),
        value_parser = count_of::<usize>(BUCKETS)
    )]
    pub size: usize,
    /// Worker threads (the original's -n).
    #[arg(
        short = 'n',
        long,
        value_name = "WORKERS",
        default_value = default_of(WORKERS),
        value_parser = count_of::<u32>(WORKERS)
    )]
    pub workers: u32,
    /// A wait on a client with no progress for this long is reported as a hang.
    #[command(flatten)]
    pub hang: TimeoutArgs,
    /// Pin every thread of the server to the second allowed CPU, where `run --pin`
    /// puts the first peer (`kv client --pin` runs on the first).
    #[arg(long)]
    pub pin: bool,
}

/// `xferbench kv client`.
// The field docs are `--help` text (`memfd:<pid>:…`), not rustdoc's HTML.
#[allow(rustdoc::invalid_html_tags)]
#[derive(Debug, Args)]
pub struct KvClientArgs {
    /// Outer iterations; 0 runs until Ctrl-C (a background "visitor").
    #[arg(value_name = "OUTER", default_value = default_of(OUTER), value_parser = count_of::<u64>(OUTER))]
    pub outer: u64,
    /// Keys per iteration: requests in flight.
    #[arg(value_name = "INNER", default_value = default_of(INNER), value_parser = count_of::<u32>(INNER))]
    pub inner: u32,
    /// Key prefix and random stream (random when absent).
    #[arg(long, value_name = "N")]
    pub seed: Option<u32>,
    /// The server's shared-memory address (memfd:<pid>:<fd>:<inode>), as `kv serve` prints
    /// it (default: the one kv server of this user that is running; a study's servers
    /// are private to it, never picked and never joined).
    #[arg(long, value_name = "ADDRESS")]
    pub server: Option<String>,
    /// A wait with no progress for this long fails the client.
    #[command(flatten)]
    pub hang: TimeoutArgs,
    /// Pin the client to the first allowed CPU, where `run --pin` puts the first
    /// driver (`kv serve --pin` runs on the second).
    #[arg(long)]
    pub pin: bool,
    /// The summary line, the result document and its files.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs a `kv` subcommand and returns the exit status.
pub fn run(cmd: &KvCommand) -> Result<u8> {
    match cmd {
        KvCommand::Serve(a) => serve(a),
        KvCommand::Client(a) => client(a),
    }
}

/// Pins every thread of this process to `cpu` (threads started later inherit it).
fn pin_self(what: &str, cpu: usize) -> Result<()> {
    xferbench_probes::affinity::pin_process(std::process::id(), cpu)
        .with_context(|| format!("cannot pin the {what} to CPU {cpu}"))
}

/// With `pin`, this role's CPU in `run --pin`'s plan: a peer's (`peer`) or a
/// driver's.
fn plan_cpu(pin: bool, peer: bool) -> Option<usize> {
    let (driver, peer_cpu) =
        xferbench_probes::affinity::pin_plan(0, &xferbench_probes::affinity::allowed_cpus());
    pin.then_some(if peer { peer_cpu } else { driver })
}

fn usage(msg: impl std::fmt::Display) -> Result<u8> {
    eprintln!("error: {msg}");
    eprintln!("\nFor more information, try '--help'.");
    Ok(EXIT_USAGE)
}

/// Serves until `stop`, announcing the name on stdout; 0, or 1 when the server failed.
fn serve_until(cfg: ServerConfig, stop: &AtomicBool, quiet: bool) -> Result<u8> {
    let server = Server::start(cfg).context("cannot start the kv server")?;
    let mut out = crate::out::stdout();
    writeln!(out, "serving on {}", server.name())?;
    out.flush()?;
    drop(out);
    if !quiet {
        let workers = if server.workers() == cfg.workers {
            format!("{} worker(s)", cfg.workers)
        } else {
            format!(
                "{} worker(s) ({} asked for; one per CPU at most)",
                server.workers(),
                cfg.workers
            )
        };
        eprintln!(
            "{} kv server, {} buckets, {workers}, on {} (Ctrl-C to stop)",
            cfg.arch.name(),
            cfg.buckets,
            server.name()
        );
    }
    while !stop.load(Ordering::Relaxed) && !server.failed() {
        std::thread::sleep(Duration::from_millis(20));
    }
    server.stop().context("the kv server failed")?;
    Ok(0)
}

fn serve(a: &KvServeArgs) -> Result<u8> {
    let hang_timeout = a.hang.timeout;
    let stop = crate::stop::stop_flag()?;
    if let Some(cpu) = plan_cpu(a.pin, true) {
        pin_self("kv server", cpu)?;
        eprintln!("kv server pinned to CPU {cpu}");
    }
    let cfg = ServerConfig {
        arch: a.arch,
        buckets: a.size,
        workers: a.workers,
        hang_timeout,
        key: None,
    };
    let code = serve_until(cfg, &stop, false)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(crate::stop::interrupted_status());
    }
    Ok(code)
}

fn bad_spec(role: &str, e: serde_json::Error) -> Result<u8> {
    eprintln!("error: {role}: bad spec: {e}");
    Ok(EXIT_USAGE)
}

/// `xferbench __kv-server SPEC_JSON`: serves until SIGINT/SIGTERM.
pub fn server_process(json: &str) -> Result<u8> {
    die_with_parent();
    let spec: KvServerSpec = match serde_json::from_str(json) {
        Ok(s) => s,
        Err(e) => return bad_spec(crate::flags::role::KV_SERVER, e),
    };
    if let Some(cpu) = spec.pin {
        pin_self("kv server", cpu)?;
    }
    let cfg = match spec.config() {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    let stop = crate::stop::stop_flag()?;
    serve_until(cfg, &stop, true)
}

/// `xferbench __kv-client SPEC_JSON`: runs the client and prints its result as one
/// JSON line; exits 3 when a reply failed verification.
pub fn client_process(json: &str) -> Result<u8> {
    die_with_parent();
    // First: the rig may stop a client that is still starting (SIGINT), and one
    // without the handler dies of it.
    let stop = crate::stop::stop_flag()?;
    let spec: KvClientSpec = match serde_json::from_str(json) {
        Ok(s) => s,
        Err(e) => return bad_spec(crate::flags::role::KV_CLIENT, e),
    };
    if let Some(cpu) = spec.pin {
        pin_self("kv client", cpu)?;
    }
    let run = run_client(&spec, &stop)?;
    let mut out = crate::out::stdout();
    serde_json::to_writer(&mut out, &run)?;
    writeln!(out)?;
    Ok(if run.mismatches > 0 {
        EXIT_INTEGRITY
    } else {
        0
    })
}

fn find_server(a: &KvClientArgs) -> Result<String> {
    if let Some(n) = &a.server {
        return Ok(n.clone());
    }
    // A study's server is private to its own clients: never a default.
    let (private, public): (Vec<_>, Vec<_>) =
        running_servers().into_iter().partition(|s| s.private);
    match public.as_slice() {
        [] if private.is_empty() => {
            bail!("no kv server of this user is running; start one with `xferbench kv serve`")
        }
        [] => bail!(
            "no kv server of this user is running that a client may join ({} private to \
             a running study: pid {}); start one with `xferbench kv serve`",
            if private.len() == 1 {
                "one is".to_string()
            } else {
                format!("{} are", private.len())
            },
            private
                .iter()
                .map(|s| s.pid.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        [one] => Ok(one.address.clone()),
        many => bail!(
            "{} kv servers are running ({}); choose one with --server ADDRESS",
            many.len(),
            many.iter()
                .map(|s| format!("{} of pid {}", s.address, s.pid))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Requests per second over the client's window.
const RULES: FigureRules = FigureRules {
    primary: figure::MESSAGE_RATE,
    higher_is_better: true,
};

/// The point's parameters.
fn params(spec: &KvClientSpec, server: &str) -> BTreeMap<String, String> {
    KvClientParams::of(spec, server).to_map().into_params()
}

/// The familiar line, drawn from the document's one run: requests, time, rate,
/// mismatches, and whether Ctrl-C ended it.
pub fn report(doc: &ResultDoc) -> String {
    let Some((point, run)) = doc.points.first().and_then(|p| Some((p, p.runs.first()?))) else {
        return String::new();
    };
    let secs = run.window_ns as f64 / 1e9;
    format!(
        "{} requests in {:.3} s ({:.0} requests/s), {} mismatches{}\n",
        run.messages,
        secs,
        run.messages as f64 / secs.max(1e-9),
        run.integrity.map_or(0, |i| i.corrupt),
        if point.param(&OUTER) == Some("0") {
            ", interrupted"
        } else {
            ""
        }
    )
}

fn client(a: &KvClientArgs) -> Result<u8> {
    let hang_timeout = a.hang.timeout;
    if let Err(e) = a.output.check() {
        return usage(e);
    }
    let name = find_server(a)?;
    let stop = crate::stop::stop_flag()?;
    let spec = KvClientSpec {
        backend: Backend::Shm(name.clone()),
        outer: a.outer,
        inner: a.inner,
        seed: a.seed,
        hang_timeout_ms: hang_timeout.as_millis() as u64,
        pin: plan_cpu(a.pin, false),
        limit_ms: None,
        key: None,
    };
    if let Some(cpu) = spec.pin {
        pin_self("kv client", cpu)?;
    }
    let point = OnePoint {
        workload: RecordedWorkload::KvClient.name().into(),
        planned: PlannedPoint {
            params: params(&spec, &name),
            size_bytes: 0,
            channels: 1,
            rules: RULES,
            verify: true,
            runs: None,
        },
        count: (a.outer > 0).then(|| a.outer * u64::from(a.inner) * 3),
        peer: "process",
        pin: a.pin,
    };
    let control = Control {
        until_stopped: a.outer == 0,
        ..Control::once(hang_timeout)
    };
    let first_mismatch: Arc<Mutex<Option<String>>> = Arc::default();
    let doc = point.measure(&control, &stop, || {
        Ok(Box::new(
            KvClientRig::new(spec.clone(), Arc::clone(&stop))
                .with_first_mismatch(Arc::clone(&first_mismatch)),
        ) as Box<dyn Rig>)
    });
    let written = a.output.write(&doc, report)?;
    let mismatches = doc
        .points
        .iter()
        .filter_map(|p| p.integrity)
        .map(|i| i.corrupt)
        .sum::<u64>();
    if mismatches > 0 {
        let first = first_mismatch.lock().ok().and_then(|f| f.clone());
        eprintln!(
            "error: {mismatches} mismatched replies; the first: {}",
            first.unwrap_or_default()
        );
    }
    Ok(crate::exit::for_doc(&doc, !written))
}
