//! From parsed arguments to validated lab configuration. Every message names the
//! flag at fault and what it accepts.

use crate::cli::{CountersArg, PeerArg, RunArgs, WatchArgs, WorkloadArg};
use anyhow::{Context, Result, bail, ensure};
use std::path::PathBuf;
use std::time::Duration;
use xferbench_lab::counters::CounterMode;
use xferbench_lab::process::Launcher;
use xferbench_lab::profile::ProfileRequest;
use xferbench_lab::result::Settings;
use xferbench_lab::rig::peers::PeerMode;
use xferbench_lab::run::RunOptions;
use xferbench_lab::sweep::{self, PointSpec, SweepSpec, parse_counts, parse_sizes, parse_words};
use xferbench_lab::transports;
use xferbench_lab::verify::HEADER_LEN;
use xferbench_lab::workload::{Limit, WorkloadKind};

/// Largest message size.
pub const MAX_SIZE: u64 = 1 << 30;
/// Most channels in one point.
pub const MAX_CHANNELS: u64 = 1024;
/// Default seconds per run.
pub const DEFAULT_DURATION_S: f64 = 0.25;

/// The machine watch of `--no-limits` and `--drift-threshold`.
pub fn watch(a: &WatchArgs) -> Result<Option<xferbench_lab::limits::Watch>> {
    ensure!(
        a.drift_threshold.is_finite() && a.drift_threshold > 0.0 && a.drift_threshold <= 1000.0,
        "--drift-threshold: {} is not a percentage above 0 and at most 1000",
        a.drift_threshold
    );
    Ok((!a.no_limits).then(|| xferbench_lab::limits::Watch {
        drift_threshold: a.drift_threshold / 100.0,
        ..xferbench_lab::limits::Watch::real()
    }))
}

/// The values of a `-p NAME=LIST`: a word list, in which every range item
/// (`1..64:x4`, `64KiB..1MiB:x4`, `100..500:+100`) expands as `--size` ranges do;
/// other items (`64KiB`, `spin`, `true`) stay as written for the parameter to parse.
pub fn parse_param_list(list: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for item in parse_words(list)? {
        let expanded = if item.contains("..") {
            parse_sizes(&item)?.iter().map(u64::to_string).collect()
        } else {
            vec![item]
        };
        for v in expanded {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    Ok(out)
}

/// A validated `run`.
#[derive(Debug)]
pub struct RunConfig {
    /// Points to run, in order.
    pub points: Vec<PointSpec>,
    /// Run control.
    pub options: RunOptions,
    /// The settings as recorded in the result.
    pub settings: Settings,
    /// Outputs.
    pub output: Output,
    /// The agent, with `--remote`.
    pub remote: Option<xferbench_lab::remote::RemoteTarget>,
}

/// Where results go.
#[derive(Debug)]
pub struct Output {
    /// `--export-json`.
    pub json: Option<PathBuf>,
    /// `--export-csv`.
    pub csv: Option<PathBuf>,
    /// `--export-md`.
    pub markdown: Option<PathBuf>,
    /// `--export-html`.
    pub html: Option<PathBuf>,
    /// The JSON Lines journal, and whether to remove it after a successful export.
    pub jsonl: Option<(PathBuf, bool)>,
    /// `--json`.
    pub stdout_json: bool,
    /// `--per-channel`.
    pub per_channel: bool,
    /// `--quiet`.
    pub quiet: bool,
}

/// Checks that every point can cross hosts and makes the measuring side's listeners
/// bind the address the agent reaches this host on (unless `-p bind=` says otherwise).
fn remote_points(
    t: &xferbench_lab::remote::RemoteTarget,
    a: &RunArgs,
    points: &mut [PointSpec],
) -> Result<()> {
    ensure!(
        a.remote.data_host.is_none(),
        "--data-host: in `run` the agent's peers dial this host; choose the address they dial with -p bind=ADDR"
    );
    for p in points.iter() {
        xferbench_lab::remote::crosses_hosts(&p.transport).map_err(|e| anyhow::anyhow!(e))?;
    }
    ensure!(
        a.profile.is_none(),
        "--profile records processes of this host; it cannot follow peers on the agent's host (--remote)"
    );
    ensure!(
        !matches!(a.counters, Some(CountersArg::Callgrind)),
        "--counters callgrind runs peers under valgrind on this host; it cannot with --remote"
    );
    let agent = t.resolve().map_err(|e| anyhow::anyhow!("--remote: {e}"))?;
    let ip = xferbench_lab::remote::source_ip_towards(agent)
        .map_err(|e| anyhow::anyhow!("--remote: no route to {agent}: {e}"))?;
    for p in points.iter_mut() {
        p.transport_params
            .entry("bind".into())
            .or_insert_with(|| ip.to_string());
    }
    Ok(())
}

/// The user gave `run`'s `flag` (its value is not the default).
fn given(flag: &str, value: &str) -> bool {
    use clap::CommandFactory;
    let cmd = crate::cli::Cli::command();
    let default = cmd
        .find_subcommand("run")
        .and_then(|run| {
            run.get_arguments()
                .find(|a| a.get_long() == flag.strip_prefix("--"))
        })
        .and_then(|a| a.get_default_values().first().cloned());
    default.is_none_or(|d| d != value)
}

impl RunConfig {
    /// Validates the arguments.
    pub fn from_args(
        a: &RunArgs,
        launcher: impl FnOnce() -> Result<Launcher>,
    ) -> Result<RunConfig> {
        let workload = match a.workload {
            WorkloadArg::Stream => WorkloadKind::Stream,
            WorkloadArg::Pingpong => WorkloadKind::Pingpong,
        };
        let mut transport = a.transport.clone();
        let mut size = a.size.clone();
        let mut channels = a.channels.clone();
        let mut extra: Vec<(String, Vec<String>)> = Vec::new();
        let mut zero_copy_axis: Option<Vec<bool>> = None;
        let mut seen: Vec<&str> = Vec::new();
        for p in &a.params {
            let (name, list) = p.split_once('=').with_context(|| {
                format!("-p {p:?}: expected NAME=LIST, for example -p pipe_size=64KiB,1MiB")
            })?;
            let name = name.trim();
            ensure!(!name.is_empty(), "-p {p:?}: the parameter name is empty");
            ensure!(
                !seen.contains(&name),
                "-p {name}: given twice; give one list (-p {name}=A,B)"
            );
            seen.push(name);
            // An axis has its own flag: the two must not disagree silently.
            for (axis, flag, value) in [
                ("transport", "--transport", &a.transport),
                ("size", "--size", &a.size),
                ("channels", "--channels", &a.channels),
            ] {
                ensure!(
                    name != axis || !given(flag, value),
                    "-p {name}: {flag} {value} gives it too; give one of them"
                );
            }
            match name {
                "transport" => transport = list.to_string(),
                "size" => size = list.to_string(),
                "channels" => channels = list.to_string(),
                sweep::ZERO_COPY => zero_copy_axis = Some(parse_modes(list)?),
                _ => {
                    let values = parse_param_list(list).with_context(|| format!("-p {name}"))?;
                    if let Some(e) = extra.iter_mut().find(|(n, _)| n == name) {
                        e.1 = values;
                    } else {
                        extra.push((name.to_string(), values));
                    }
                }
            }
        }
        let transports = parse_words(&transport).context("--transport")?;
        for t in &transports {
            if !transports::all().iter().any(|i| i.name == t) {
                let known: Vec<&str> = transports::all().iter().map(|i| i.name).collect();
                bail!(
                    "--transport: unknown transport `{t}`; choose from: {}",
                    known.join(", ")
                );
            }
        }
        let sizes = parse_sizes(&size).context("--size")?;
        for &s in &sizes {
            ensure!(s >= 1, "--size: 0 bytes is not a message; use at least 1");
            ensure!(
                s <= MAX_SIZE,
                "--size: {s} bytes is above the 1 GiB maximum"
            );
            ensure!(
                !a.verify || s >= HEADER_LEN as u64,
                "--verify needs --size of at least {HEADER_LEN} bytes (sequence number and checksum); got {s}"
            );
        }
        if transports.iter().any(|t| t == transports::RPMSG) {
            ensure!(
                workload == WorkloadKind::Pingpong,
                "--transport rpmsg: the RPMsg remote echoes every message back; use the pingpong workload (`xferbench run pingpong -t rpmsg`)"
            );
            if let Some(&s) = sizes.iter().find(|&&s| s > transports::RPMSG_MAX_SIZE) {
                bail!(
                    "--size: {s} bytes does not fit an RPMsg packet: at most {} bytes (a 512-byte vring buffer less its 16-byte header); use a smaller --size or leave rpmsg out of --transport",
                    transports::RPMSG_MAX_SIZE
                );
            }
        }
        let channel_counts = parse_counts(&channels).context("--channels")?;
        for &c in &channel_counts {
            ensure!(
                (1..=MAX_CHANNELS).contains(&c),
                "--channels: {c} is out of range; use 1 to {MAX_CHANNELS}"
            );
        }
        ensure!(a.runs >= 1, "--runs: at least one measured run is needed");
        ensure!(
            !(a.interleave && a.profile.is_some()),
            "--profile records one point at a time; it cannot be combined with --interleave"
        );
        ensure!(
            a.warmup <= 1000,
            "--warmup: {} is above the 1000 maximum",
            a.warmup
        );
        ensure!(
            a.runs <= 10_000,
            "--runs: {} is above the 10000 maximum",
            a.runs
        );
        ensure!(
            a.timeout.is_finite() && a.timeout >= 0.1 && a.timeout <= 86_400.0,
            "--timeout: {} is not a number of seconds between 0.1 and 86400",
            a.timeout
        );
        let limit = match (a.count, a.duration) {
            (Some(n), _) => {
                ensure!(n >= 1, "--count: at least one message is needed");
                Limit::Count(n)
            }
            (None, d) => {
                let d = d.unwrap_or(DEFAULT_DURATION_S);
                ensure!(
                    d.is_finite() && d > 0.0 && d <= 86_400.0,
                    "--duration: {d} is not a number of seconds between 0 and 86400"
                );
                Limit::Duration((d * 1e9) as u64)
            }
        };
        if let Some(n) = a.inject_corruption {
            ensure!(n >= 1, "--inject-corruption: N must be at least 1");
        }
        let spec = SweepSpec {
            transports,
            sizes,
            channels: channel_counts.iter().map(|&c| c as usize).collect(),
            params: extra,
        };
        let points = spec
            .plan(transports::params_of)
            .map_err(|e| anyhow::anyhow!("-p: {e}"))?;
        for p in &points {
            transports::validate(&p.transport, &p.transport_params)
                .map_err(|e| anyhow::anyhow!("-p: {e}"))?;
        }
        let mut points = zero_copy_points(points, &spec.transports, a.zero_copy, zero_copy_axis)?;
        let remote = crate::serve::target(&a.remote).map_err(|e| anyhow::anyhow!(e))?;
        if let Some(t) = &remote {
            remote_points(t, a, &mut points)?;
        }
        let peer = match (&remote, a.peer) {
            (Some(t), _) => PeerMode::Remote(t.clone()),
            (None, PeerArg::Thread) => PeerMode::Thread,
            (None, PeerArg::Process) => PeerMode::Process(launcher()?),
        };
        let counters = match a.counters {
            None => CounterMode::Off,
            Some(CountersArg::Perf) => CounterMode::PerfEvent,
            Some(CountersArg::Callgrind) => {
                ensure!(
                    a.peer == PeerArg::Process,
                    "--counters callgrind runs the peer processes under valgrind; use --peer process"
                );
                ensure!(
                    std::process::Command::new("valgrind")
                        .arg("--version")
                        .output()
                        .is_ok_and(|o| o.status.success()),
                    "--counters callgrind needs valgrind: install it (`apt-get install valgrind`)"
                );
                CounterMode::Callgrind
            }
        };
        let options = RunOptions {
            workload,
            runs: a.runs,
            warmup: a.warmup,
            interleave: a.interleave,
            limit,
            verify: a.verify,
            peer,
            pin: a.pin,
            hang_timeout: Duration::from_secs_f64(a.timeout),
            corrupt_every: a.inject_corruption,
            counters,
            profile: a.profile.as_ref().map(|dir| ProfileRequest {
                dir: dir.clone().unwrap_or_else(|| {
                    PathBuf::from(format!(
                        "xferbench-profile-{}",
                        xferbench_lab::context::compact_timestamp()
                    ))
                }),
                participant: a.profile_peer.clone(),
            }),
            watch: watch(&a.watch)?,
        };
        let settings = Settings {
            workload: workload.name().to_string(),
            runs: a.runs,
            warmup: a.warmup,
            count: match limit {
                Limit::Count(n) => Some(n),
                Limit::Duration(_) => None,
            },
            duration_s: match limit {
                Limit::Duration(ns) => Some(ns as f64 / 1e9),
                Limit::Count(_) => None,
            },
            peer: match (&remote, a.peer) {
                (Some(_), _) => "remote",
                (None, PeerArg::Thread) => "thread",
                (None, PeerArg::Process) => "process",
            }
            .to_string(),
            pin: a.pin,
            verify: a.verify,
            interleave: a.interleave,
        };
        let jsonl = match (&a.jsonl, &a.export_json) {
            (Some(p), _) => Some((p.clone(), false)),
            (None, Some(j)) => {
                let mut p = j.clone().into_os_string();
                p.push(".jsonl");
                Some((PathBuf::from(p), true))
            }
            (None, None) => None,
        };
        Ok(RunConfig {
            remote,
            points,
            options,
            settings,
            output: Output {
                json: a.export_json.clone(),
                csv: a.export_csv.clone(),
                markdown: a.export_md.clone(),
                html: a.export_html.clone(),
                jsonl,
                stdout_json: a.json,
                per_channel: a.per_channel,
                quiet: a.quiet,
            },
        })
    }
}

/// `-p zero_copy=LIST`: `false` (copy) and `true` (in place).
fn parse_modes(list: &str) -> Result<Vec<bool>> {
    let mut modes = Vec::new();
    for w in parse_words(list).context("-p zero_copy")? {
        let m = match w.as_str() {
            "false" => false,
            "true" => true,
            other => bail!("-p zero_copy: `{other}` is not a mode; choose from: false, true"),
        };
        if !modes.contains(&m) {
            modes.push(m);
        }
    }
    Ok(modes)
}

/// The points in each copy mode: `--zero-copy` runs every point in place and refuses
/// transports without a zero-copy mode; the axis `-p zero_copy=false,true`, like
/// other parameters, applies where a transport has the mode (the others run copying).
fn zero_copy_points(
    points: Vec<PointSpec>,
    selected: &[String],
    flag: bool,
    axis: Option<Vec<bool>>,
) -> Result<Vec<PointSpec>> {
    let modes = match (axis, flag) {
        (Some(_), true) => {
            bail!("--zero-copy and -p zero_copy both choose the copy mode; give one of them")
        }
        (Some(modes), false) => {
            ensure!(
                !modes.contains(&true) || selected.iter().any(|t| transports::has_zero_copy(t)),
                "-p zero_copy: no selected transport has a zero-copy mode; {}",
                transports::no_zero_copy(&selected.join(", "))
            );
            modes
        }
        (None, flag) => {
            if flag && let Some(t) = selected.iter().find(|t| !transports::has_zero_copy(t)) {
                bail!("--zero-copy: {}", transports::no_zero_copy(t));
            }
            vec![flag]
        }
    };
    let mut out = Vec::with_capacity(points.len() * modes.len());
    for p in points {
        for &zero_copy in &modes {
            if zero_copy
                && p.transport_params
                    .get("buffers")
                    .is_some_and(|b| b == "copy")
            {
                bail!("--zero-copy writes RPMsg packets in place: drop -p buffers=copy");
            }
            if !zero_copy || transports::has_zero_copy(&p.transport) {
                out.push(PointSpec {
                    zero_copy,
                    ..p.clone()
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse_param_list;

    #[test]
    fn param_lists_expand_ranges_like_size_and_keep_words() {
        assert_eq!(
            parse_param_list("1..64:x4").unwrap(),
            ["1", "4", "16", "64"]
        );
        assert_eq!(
            parse_param_list("64KiB..1MiB:x4").unwrap(),
            ["65536", "262144", "1048576"]
        );
        assert_eq!(
            parse_param_list("100..300:+100,64KiB").unwrap(),
            ["100", "200", "300", "64KiB"]
        );
        assert_eq!(parse_param_list("spin,hybrid").unwrap(), ["spin", "hybrid"]);
        assert!(parse_param_list("1..lots").is_err());
        assert!(parse_param_list("a,,b").is_err());
    }

    fn config(argv: &[&str]) -> anyhow::Result<super::RunConfig> {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(argv).unwrap();
        let crate::cli::Command::Run(args) = cli.command else {
            unreachable!()
        };
        super::RunConfig::from_args(&args, crate::launcher)
    }

    #[test]
    fn a_value_given_twice_is_a_usage_error() {
        for (argv, want) in [
            (
                &["xferbench", "run", "stream", "-s", "64", "-p", "size=128"][..],
                "-p size: --size 64 gives it too",
            ),
            (
                &[
                    "xferbench",
                    "run",
                    "stream",
                    "-t",
                    "pipe",
                    "-p",
                    "transport=tcp",
                ],
                "-p transport: --transport pipe gives it too",
            ),
            (
                &[
                    "xferbench",
                    "run",
                    "stream",
                    "-c",
                    "2",
                    "-p",
                    "channels=1,2",
                ],
                "-p channels: --channels 2 gives it too",
            ),
            (
                &[
                    "xferbench",
                    "run",
                    "stream",
                    "-p",
                    "pipe_size=64KiB",
                    "-p",
                    "pipe_size=1MiB",
                ],
                "-p pipe_size: given twice",
            ),
        ] {
            let e = config(argv).err().map(|e| format!("{e:#}"));
            assert!(
                e.as_deref().is_some_and(|e| e.contains(want)),
                "{argv:?}: {e:?}"
            );
        }
        // Either one alone is fine.
        assert!(config(&["xferbench", "run", "stream", "-p", "size=128"]).is_ok());
        assert!(config(&["xferbench", "run", "stream", "-s", "128"]).is_ok());
    }
}
