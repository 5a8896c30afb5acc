//! `xferbench warp serve` and `xferbench warp client`: clap arguments turned into the
//! transports' server config and the lab's client spec; and the hidden roles the lab
//! starts for the study and `--instances` (`__memory-mock`, `__warp-client`), which
//! take the lab's spec as one JSON argument.

use crate::exit::EXIT_USAGE;
use crate::flags::{OutputArgs, TimeoutArgs, bytes_of, choice, count_of, default_of};
use crate::one_point::{Control, OnePoint};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::collections::BTreeMap;
use std::io::Write;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use xferbench_lab::measure::PlannedPoint;
use xferbench_lab::record::FigureRules;
use xferbench_lab::result::ResultDoc;
use xferbench_lab::rig::Rig;
use xferbench_lab::rig::memory_mock::{MemoryMockRig, MemoryMockSpec, MockPoint, figures};
use xferbench_lab::workload::RecordedWorkload;
use xferbench_lab::workload::warp::{
    ClientProcessSpec, ClientSpec, ConnectionMode, INSTANCES, ITERATIONS, Ops, PAYLOAD, THREADS,
    WarpClientParams, names, run_client,
};
use xferbench_params::PointParams;
use xferbench_probes::process::die_with_parent;
use xferbench_transports::warp::CrcKind;
use xferbench_transports::warp::mock::MockConfig;
use xferbench_transports::warp::server::{IoModel, Server, ServerConfig};

/// `xferbench warp ...`.
#[derive(Debug, Subcommand)]
pub enum WarpCommand {
    /// Serve the memory mock (warp-pipe's memory-mock, wire-compatible).
    Serve(WarpServeArgs),
    /// Enumerate the device, then run C channels (threads) × N iterations of read →
    /// write → read.
    Client(WarpClientArgs),
}

/// `xferbench warp serve`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench warp serve
  xferbench warp serve --port 0 --io threads --crc table")]
pub struct WarpServeArgs {
    /// Address to listen on (IP or IP:PORT); loopback by default.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub listen: String,
    /// TCP port, when --listen has none (0: any free port).
    #[arg(long, default_value_t = 2115)]
    pub port: u16,
    /// CRC implementation for LCRC/CRC16.
    #[arg(long, value_parser = choice::<CrcKind>(), default_value_t = CrcKind::Fast)]
    pub crc: CrcKind,
    /// BAR1 size in bytes (a power of two, 16 B .. 1 GiB).
    #[arg(long, value_name = "BYTES", default_value_t = 2048)]
    pub bar1: u32,
    /// Largest payload of one read completion (multiple of 64, 64..4096); longer
    /// reads are split.
    #[arg(long, value_name = "BYTES", default_value_t = 4096)]
    pub max_read_completion: usize,
    /// I/O model.
    #[arg(long, value_parser = choice::<IoModel>(), default_value_t = IoModel::Epoll)]
    pub io: IoModel,
    /// Pin every thread of the mock to the second allowed CPU, where `run --pin`
    /// puts the first peer (`warp client --pin` puts its first thread on the first).
    #[arg(long)]
    pub pin: bool,
}

/// `xferbench warp client`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench warp client --connect 127.0.0.1:2115 --threads 4 --iterations 1000
  xferbench warp client --instances 8 --reads-only --json

The lines and --json are drawn from the result document: one run whose channels are \
the clients (with --instances, the client processes). A failed transaction fails the \
run (exit 1, the first error named).

Exit status: 0 success, 1 failure, 2 bad usage, 3 a second read differed from what \
was written, 128+N stopped by signal N.")]
pub struct WarpClientArgs {
    /// The memory mock's address.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:2115")]
    pub connect: String,
    /// Concurrent channels: client threads (warp-pipe's --threads).
    #[arg(
        short,
        long,
        visible_alias = names::THREADS,
        value_name = "N",
        default_value = default_of(THREADS),
        value_parser = count_of::<usize>(THREADS)
    )]
    pub channels: usize,
    /// Iterations per channel (warp-pipe's --iterations).
    #[arg(
        short = 'n',
        long,
        visible_alias = names::ITERATIONS,
        value_name = "N",
        default_value = default_of(ITERATIONS),
        value_parser = count_of::<u64>(ITERATIONS)
    )]
    pub count: u64,
    /// Payload bytes per read/write (multiple of 4, 4..4096; 2048, 4KiB).
    #[arg(
        short,
        long,
        visible_alias = names::PAYLOAD,
        value_name = "BYTES",
        default_value = default_of(PAYLOAD),
        value_parser = bytes_of(PAYLOAD)
    )]
    pub size: usize,
    /// CRC implementation.
    #[arg(long, value_parser = choice::<CrcKind>(), default_value_t = CrcKind::Fast)]
    pub crc: CrcKind,
    /// Connection arrangement.
    #[arg(long, value_parser = choice::<ConnectionMode>(), default_value_t = ConnectionMode::PerThread)]
    pub connection: ConnectionMode,
    /// ACK each received TLP with the next request instead of at once.
    #[arg(long)]
    pub piggyback_acks: bool,
    /// Sleep between iterations in ms (warp-pipe's sample: 200).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub think: u64,
    /// Only read (one 2048-byte read per iteration with the default payload): the
    /// memory mock's read throughput.
    #[arg(long)]
    pub reads_only: bool,
    /// Run K single-threaded client processes at once (overrides --channels).
    #[arg(
        long,
        value_name = "K",
        default_value = default_of(INSTANCES),
        value_parser = count_of::<usize>(INSTANCES)
    )]
    pub instances: usize,
    /// Pin client thread i (with --instances, client process i) to the 2i-th
    /// allowed CPU, wrapping around, as `run --pin` pins drivers; the result records
    /// each thread's CPU (figures `thread_cpu_client<i>_thread<j>`).
    #[arg(long)]
    pub pin: bool,
    /// Connecting, every send and every wait for a completion fail after this long.
    #[command(flatten)]
    pub hang: TimeoutArgs,
    /// The lines, the result document (each client, or client process with
    /// --instances, is a channel of its run) and its files.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs a `warp` subcommand and returns the exit status.
pub fn run(cmd: &WarpCommand) -> Result<u8> {
    match cmd {
        WarpCommand::Serve(a) => serve(a),
        WarpCommand::Client(a) => client(a),
    }
}

fn usage(msg: impl std::fmt::Display) -> Result<u8> {
    eprintln!("error: {msg}");
    eprintln!("\nFor more information, try '--help'.");
    Ok(EXIT_USAGE)
}

fn listen_addr(a: &WarpServeArgs) -> Option<SocketAddr> {
    if let Ok(sa) = a.listen.parse::<SocketAddr>() {
        return Some(sa);
    }
    a.listen
        .parse::<IpAddr>()
        .ok()
        .map(|ip| SocketAddr::new(ip, a.port))
}

fn serve(a: &WarpServeArgs) -> Result<u8> {
    let Some(listen) = listen_addr(a) else {
        return usage(format_args!(
            "--listen {}: expected an IP address or IP:PORT",
            a.listen
        ));
    };
    let mut device = MockConfig::default();
    device.bar_sizes[1] = a.bar1;
    device.max_read_completion = a.max_read_completion;
    let server = match Server::bind(ServerConfig {
        listen,
        crc: a.crc,
        device,
        io: a.io,
    }) {
        Ok(s) => s,
        Err(e @ xferbench_transports::warp::server::ServerError::Config(_)) => {
            return usage(format_args!("--bar1/--max-read-completion: {e}"));
        }
        Err(e) => return Err(e).with_context(|| format!("cannot serve on {listen}")),
    };
    let addr = server.local_addr()?;
    let stop = crate::stop::stop_flag()?;
    if a.pin {
        let cpu =
            xferbench_probes::affinity::pin_plan(0, &xferbench_probes::affinity::allowed_cpus()).1;
        pin_self(cpu)?;
        eprintln!("memory mock pinned to CPU {cpu}");
    }
    eprintln!("memory mock listening on {addr} (Ctrl-C to stop)");
    let stats = server.run(&stop)?;
    let t = &stats.totals;
    eprintln!(
        "served {} connections: {} reads, {} writes, {} bad LCRC, {} bad frames, {} closed on bad input",
        stats.connections, t.reads, t.writes, t.bad_lcrc, t.bad_frames, stats.closed_on_error
    );
    Ok(crate::stop::interrupted_status())
}

/// Pins every thread of this process to `cpu` (threads started later inherit it).
fn pin_self(cpu: usize) -> Result<()> {
    xferbench_probes::affinity::pin_process(std::process::id(), cpu)
        .with_context(|| format!("cannot pin the memory mock to CPU {cpu}"))
}

/// A hidden role's argument that is not the lab's spec: a usage error.
fn bad_spec(role: &str, e: serde_json::Error) -> Result<u8> {
    usage(format_args!(
        "xferbench {role}: bad spec ({e}); this is an internal role"
    ))
}

/// `xferbench __memory-mock SPEC_JSON`: serves until SIGINT or the parent's death;
/// prints `listening on ADDR` on stdout once bound.
pub fn memory_mock(json: &str) -> Result<u8> {
    die_with_parent();
    let spec: MemoryMockSpec = match serde_json::from_str(json) {
        Ok(s) => s,
        Err(e) => return bad_spec(crate::flags::role::MEMORY_MOCK, e),
    };
    if let Some(cpu) = spec.pin {
        pin_self(cpu)?;
    }
    let server = spec.bind()?;
    let addr = server.local_addr()?;
    let stop = crate::stop::stop_flag()?;
    tracing::info!(%addr, pid = std::process::id(), "memory mock listening");
    let mut out = crate::out::stdout();
    writeln!(out, "listening on {addr}")?;
    out.flush()?;
    drop(out);
    server.run(&stop)?;
    Ok(0)
}

/// `xferbench __warp-client SPEC_JSON`: runs the client and prints its result as one
/// JSON line; the parent judges the result (exit 0 once printed).
pub fn client_process(json: &str) -> Result<u8> {
    die_with_parent();
    let spec: ClientProcessSpec = match serde_json::from_str(json) {
        Ok(s) => s,
        Err(e) => return bad_spec(crate::flags::role::WARP_CLIENT, e),
    };
    let stop = crate::stop::stop_flag()?;
    let run = run_client(spec.connect, &spec.client, &stop)?;
    let mut out = crate::out::stdout();
    serde_json::to_writer(&mut out, &run)?;
    writeln!(out)?;
    Ok(0)
}

fn client(a: &WarpClientArgs) -> Result<u8> {
    let Some(addr) = a.connect.to_socket_addrs().ok().and_then(|mut i| i.next()) else {
        return usage(format_args!("--connect {}: expected HOST:PORT", a.connect));
    };
    let payload = a.size;
    if let Err(e) = a.output.check() {
        return usage(e);
    }
    let spec = ClientSpec {
        threads: if a.instances > 1 { 1 } else { a.channels },
        iterations: a.count,
        payload,
        crc: a.crc,
        connection: a.connection,
        piggyback_acks: a.piggyback_acks,
        think_ms: a.think,
        first_slot: 0,
        slots: 0,
        ops: if a.reads_only {
            Ops::Read
        } else {
            Ops::ReadWriteRead
        },
        hang_timeout_ms: a.hang.timeout.as_millis() as u64,
        // The rig places the threads (MockPoint::pin).
        pin_cpus: Vec::new(),
    };
    let hang_timeout = std::time::Duration::from_millis(spec.hang_timeout_ms);
    let launcher = if a.instances > 1 {
        Some(crate::launcher::launcher()?)
    } else {
        None
    };
    let stop = crate::stop::stop_flag()?;
    let point = MockPoint {
        client: spec,
        instances: a.instances,
        io: IoModel::default(),
        pin: a.pin,
    };
    let verify = point.client.ops == Ops::ReadWriteRead;
    let one = OnePoint {
        workload: RecordedWorkload::WarpClient.name().into(),
        planned: PlannedPoint {
            params: params(&point, &a.connect),
            size_bytes: point.client.payload as u64,
            channels: a.instances,
            rules: RULES,
            verify,
            runs: None,
        },
        count: Some(a.count),
        peer: if a.instances > 1 { "process" } else { "thread" },
        pin: a.pin,
    };
    let doc = one.measure(&Control::once(hang_timeout), &stop, || {
        Ok(Box::new(MemoryMockRig::connect(
            point.clone(),
            launcher.clone(),
            addr,
        )?) as Box<dyn Rig>)
    });
    a.output.finish(&doc, report)
}

/// Transactions per second over the common window.
const RULES: FigureRules = FigureRules {
    primary: figures::TRANSACTIONS_PER_S,
    higher_is_better: true,
};

/// The point's parameters: the client's settings.
fn params(p: &MockPoint, connect: &str) -> BTreeMap<String, String> {
    WarpClientParams::of(&p.client, p.instances, connect)
        .to_map()
        .into_params()
}

/// One line per client (the one client, or each client process of --instances),
/// drawn from the document's run: its channels are the clients.
pub fn report(doc: &ResultDoc) -> String {
    let Some(run) = doc.points.first().and_then(|p| p.runs.first()) else {
        return String::new();
    };
    let mut out = String::new();
    for c in &run.channels {
        let wall = c.end_offset_ns.saturating_sub(c.start_offset_ns) as f64 / 1e9;
        out.push_str(&format!(
            "client {}: {} transactions in {:.3} s = {:.0} transactions/s, {:.1} MB/s; {}\n",
            c.channel,
            c.messages,
            wall,
            c.messages as f64 / wall.max(1e-9),
            c.bytes as f64 / wall.max(1e-9) / 1e6,
            match c.integrity {
                Some(i) => format!("verified, {} failures", i.corrupt),
                None => "not verified".to_string(),
            },
        ));
    }
    out
}
