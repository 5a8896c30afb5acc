//! From parsed arguments to validated lab configuration. Every message names the
//! flag at fault and what it accepts.

use crate::flags::{ExportArgs, WatchArgs};
use crate::run_args::{CountersArg, PeerArg, RunArgs};
use anyhow::{Context, Result, bail, ensure};
use std::path::PathBuf;
use std::time::Duration;
use xferbench_lab::axes::ZERO_COPY;
use xferbench_lab::names;
use xferbench_lab::neighbours::{NEIGHBOURS, Neighbours};
use xferbench_lab::rate_search::SearchOptions;
use xferbench_lab::result::Settings;
use xferbench_lab::rig::peers::PeerMode;
use xferbench_lab::run::RunOptions;
use xferbench_lab::sweep::{
    self, CopyModes, ModeError, PointSpec, SweepPlanError, SweepSpec, WorkloadLists,
    parse_channels, parse_sizes, parse_words,
};
use xferbench_lab::transports;
use xferbench_lab::workload::load::{Arrivals, RATE};
use xferbench_lab::workload::{Limit, WorkloadKind};
use xferbench_params::{ParamDef, Value};
use xferbench_probes::counters::CounterMode;
use xferbench_probes::process::Launcher;
use xferbench_probes::profile::ProfileRequest;
use xferbench_probes::verify::HEADER_LEN;

/// Whether the sweep has RPMsg points.
fn spec_has_rpmsg(transports: &[String]) -> bool {
    transports.iter().any(|t| t == transports::RPMSG)
}

/// The note of a `load` run with RPMsg points.
pub const RPMSG_ECHOED: &str = "load over rpmsg: the RPMsg remote echoes every packet, so its points' latencies are round trips from each packet's intended send time, one packet in flight per channel (not one-way times)";

/// The note of a `load` run across hosts.
pub const ECHOED: &str = "load across hosts: the two hosts share no clock, so the serving side echoes every message and its latency is the round trip from the message's intended send time, one message in flight per channel (the figures are round trips, not one-way times)";

/// `--size` when not given.
pub const DEFAULT_SIZES: &str = "64,4KiB,64KiB";

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
    /// What the plan changed from what was asked, for the result's warnings.
    pub notes: Vec<String>,
    /// `--rate auto`: search each point's knee instead of running fixed rates.
    pub search: Option<SearchOptions>,
}

/// Where results go.
#[derive(Debug)]
pub struct Output {
    /// The result document's files.
    pub exports: ExportArgs,
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
        let descriptor = transports::descriptor(&p.transport)?;
        if let Some(bind) = descriptor.param("bind")
            && !p.transport_params.is_set(bind.name())
        {
            p.transport_params
                .set(bind, Value::Text(ip.to_string().into()))?;
        }
    }
    Ok(())
}

/// The user gave `run`'s `flag` (its value is not the default).
fn given(flag: &str, value: &str) -> bool {
    use clap::Args;
    let run = RunArgs::augment_args(clap::Command::new("run"));
    let default = run
        .get_arguments()
        .find(|a| a.get_long() == flag.strip_prefix("--"))
        .and_then(|a| a.get_default_values().first().cloned());
    default.is_none_or(|d| d != value)
}

/// The sweep's axes as the user gave them: each from its flag, or from `-p` (never
/// both), the workload's own parameters `-p` gave (each with its definition) and the
/// transport parameters.
struct Axes {
    transport: String,
    size: String,
    size_given: bool,
    channels: String,
    extra: Vec<(String, String)>,
    zero_copy_axis: Option<Vec<bool>>,
    rate: Option<String>,
    workload: Vec<(&'static ParamDef, String)>,
    neighbours: Option<String>,
}

/// `{flag}` names a parameter of other workloads than `run`'s: which ones, and how to
/// run the first.
fn of_other_workloads(flag: &str, name: &str) -> Option<String> {
    let owners: Vec<&str> = WorkloadKind::ALL
        .iter()
        .filter(|w| w.param(name).is_some())
        .map(|w| w.name())
        .collect();
    let first = owners.first()?;
    Some(format!(
        "{flag} applies to the {} workload{} only (`xferbench run {first} {flag} ...`)",
        owners.join(" and "),
        if owners.len() == 1 { "" } else { "s" },
    ))
}

impl Axes {
    /// Routes every `-p NAME=LIST` to its axis, refusing a name given twice or given
    /// by its own flag too.
    fn from_args(a: &RunArgs) -> Result<Axes> {
        let mut transport = a.transport.clone();
        let mut size_given = a.size.is_some();
        let mut size = a.size.clone().unwrap_or_else(|| DEFAULT_SIZES.to_string());
        let mut channels = a.channels.clone();
        let mut extra: Vec<(String, String)> = Vec::new();
        let mut zero_copy_axis: Option<Vec<bool>> = None;
        let mut rate = a.rate.clone();
        let mut workload: Vec<(&'static ParamDef, String)> = Vec::new();
        let mut neighbours = a.neighbours.clone();
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
                (
                    names::TRANSPORT,
                    "--transport",
                    Some(a.transport.as_str()).filter(|v| given("--transport", v)),
                ),
                (names::SIZE, "--size", a.size.as_deref()),
                (RATE.name(), "--rate", a.rate.as_deref()),
                (NEIGHBOURS.name(), "--neighbours", a.neighbours.as_deref()),
                (
                    names::CHANNELS,
                    "--channels",
                    Some(a.channels.as_str()).filter(|v| given("--channels", v)),
                ),
            ] {
                if let Some(value) = value {
                    ensure!(
                        name != axis,
                        "-p {name}: {flag} {value} gives it too; give one of them"
                    );
                }
            }
            match name {
                names::TRANSPORT => transport = list.to_string(),
                names::SIZE => {
                    size = list.to_string();
                    size_given = true;
                }
                names::CHANNELS => channels = list.to_string(),
                _ if name == ZERO_COPY.name() => zero_copy_axis = Some(parse_modes(list)?),
                _ if name == RATE.name() => rate = Some(list.to_string()),
                _ if name == NEIGHBOURS.name() => neighbours = Some(list.to_string()),
                _ => {
                    if let Some(def) = a.workload.param(name) {
                        workload.push((def, list.to_string()));
                    } else if let Some(e) = of_other_workloads(&format!("-p {name}"), name) {
                        bail!(e);
                    } else if let Some(e) = extra.iter_mut().find(|(n, _)| n == name) {
                        e.1 = list.to_string();
                    } else {
                        extra.push((name.to_string(), list.to_string()));
                    }
                }
            }
        }
        Ok(Axes {
            transport,
            size,
            size_given,
            channels,
            extra,
            zero_copy_axis,
            rate,
            workload,
            neighbours,
        })
    }
}

impl RunConfig {
    /// Validates the arguments.
    pub fn from_args(
        a: &RunArgs,
        launcher: impl FnOnce() -> Result<Launcher>,
    ) -> Result<RunConfig> {
        let workload = a.workload;
        let Axes {
            transport,
            size,
            size_given,
            channels,
            extra,
            zero_copy_axis,
            rate,
            workload: workload_given,
            neighbours,
        } = Axes::from_args(a)?;
        let launcher = launcher()?;
        let transports =
            expand_plugins(parse_words(&transport).context("--transport")?, &launcher)?;
        let mut selected = Vec::with_capacity(transports.len());
        for t in &transports {
            selected.push(transports::descriptor(t).context("--transport")?);
        }
        let sizes = parse_sizes(&size).context("--size")?;
        if transports.iter().any(|t| t == transports::RPMSG) {
            ensure!(
                workload != WorkloadKind::Stream,
                "--transport rpmsg: the RPMsg remote echoes every message back; use the pingpong or load workload (`xferbench run pingpong -t rpmsg`)"
            );
        }
        check_sizes(a, &sizes, &selected, size_given)?;
        let channel_counts = parse_channels(&channels).context("--channels")?;
        let limit = run_limit(a)?;
        let (workload_params, search) =
            workload_lists(workload, rate.as_deref(), &workload_given, a.search_budget)?;
        let rpmsg = spec_has_rpmsg(&transports);
        let neighbours = match &neighbours {
            Some(list) => Neighbours::parse_list(list).context("--neighbours")?,
            None => Vec::new(),
        };
        let spec = SweepSpec {
            transports,
            sizes,
            channels: channel_counts,
            params: extra,
            workload_params,
            neighbours,
        };
        let mut notes = Vec::new();
        if workload == WorkloadKind::Load && rpmsg {
            notes.push(RPMSG_ECHOED.to_string());
        }
        let modes = Modes {
            zero_copy: a.zero_copy,
            zero_copy_axis,
            verify: a.verify,
        };
        let mut points = expand(&spec, size_given, modes, &mut notes)?;
        if workload == WorkloadKind::Load && rpmsg {
            ensure!(
                points
                    .iter()
                    .filter(|p| p.transport == transports::RPMSG)
                    .map(PointSpec::schedule)
                    .all(|s| s.burst == 1 && s.arrivals == Arrivals::Uniform),
                "--transport rpmsg: the RPMsg remote echoes one packet at a time, so its load is evenly spaced one packet at a time; drop -p burst and -p arrivals"
            );
        }
        let remote = crate::serve::target(&a.remote).map_err(|e| anyhow::anyhow!(e))?;
        if let Some(t) = &remote {
            remote_points(t, a, &mut points)?;
            if workload == WorkloadKind::Load {
                notes.push(ECHOED.to_string());
            }
        }
        let peer = match (&remote, a.peer) {
            (Some(t), _) => PeerMode::Remote(t.clone()),
            (None, PeerArg::Thread) => PeerMode::Thread,
            (None, PeerArg::Process) => PeerMode::Process(launcher.clone()),
        };
        let options = run_options(a, limit, peer, counter_mode(a)?, launcher)?;
        let settings = settings(a, limit, remote.is_some());
        let jsonl = jsonl_path(a);
        Ok(RunConfig {
            search,
            remote,
            notes,
            points,
            options,
            settings,
            output: Output {
                exports: a.export.clone(),
                jsonl,
                stdout_json: a.json,
                per_channel: a.per_channel,
                quiet: a.quiet,
            },
        })
    }
}

/// The run's limit per channel (a count or a duration), after the checks of the
/// flags that shape every run.
fn run_limit(a: &RunArgs) -> Result<Limit> {
    ensure!(
        !(a.interleave && a.profile.is_some()),
        "--profile records one point at a time; it cannot be combined with --interleave"
    );
    let limit = match (a.count, a.duration) {
        (Some(n), _) => {
            ensure!(n >= 1, "--count: at least one message is needed");
            Limit::Count(n)
        }
        (None, d) => Limit::Duration(d.as_nanos() as u64),
    };
    if let Some(n) = a.inject_corruption {
        ensure!(n >= 1, "--inject-corruption: N must be at least 1");
    }
    Ok(limit)
}

/// How the points' copy modes are chosen (`--zero-copy`, and the `zero_copy` axis of
/// `-p`), and whether `--verify` checks their payloads (which the workload's
/// parameters of in-place messages may not leave unwritten).
struct Modes {
    zero_copy: bool,
    zero_copy_axis: Option<Vec<bool>>,
    verify: bool,
}

/// The sweep's points, each transport's parameters validated, rpmsg's default sizes
/// fitted to its packet (said in `notes`), in the copy modes asked for.
fn expand(
    spec: &SweepSpec,
    size_given: bool,
    modes: Modes,
    notes: &mut Vec<String>,
) -> Result<Vec<PointSpec>> {
    let mut points = spec.plan().map_err(|e| match e {
        SweepPlanError::Param { .. } => anyhow::anyhow!("-p {e}"),
        e => anyhow::anyhow!("-p: {e}"),
    })?;
    for p in &points {
        transports::validate(&p.transport, &p.transport_params)
            .map_err(|e| anyhow::anyhow!("-p: {e}"))?;
    }
    if !size_given {
        notes.extend(sweep::fit_default_sizes_to_rpmsg(&mut points));
    }
    let points = copy_modes(
        points,
        &spec.transports,
        modes.zero_copy,
        modes.zero_copy_axis,
    )?;
    sweep::with_in_place_params(points, &spec.workload_params, modes.verify).map_err(|e| {
        if e.no_point_in_place {
            anyhow::anyhow!("-p {e}; add --zero-copy")
        } else {
            anyhow::anyhow!("-p {e}")
        }
    })
}

/// Every size fits: the verifying header, each transport's largest message (rpmsg's
/// default sizes are fitted to its packet later), and the load workload's stamps.
fn check_sizes(
    a: &RunArgs,
    sizes: &[u64],
    selected: &[xferbench_transports::Descriptor],
    size_given: bool,
) -> Result<()> {
    for &s in sizes {
        ensure!(
            !a.verify || s >= HEADER_LEN as u64,
            "--verify needs --size of at least {HEADER_LEN} bytes (sequence number and checksum); got {s}"
        );
    }
    for d in selected {
        let Some(max) = d.max_message else { continue };
        // rpmsg's default sizes are fitted to its packet below; sizes the user
        // gave are never changed.
        if let Some(&s) = sizes.iter().find(|&&s| s > max as u64)
            && (size_given || d.name != transports::RPMSG)
        {
            bail!(
                "--size: {s} bytes does not fit a{} {} message: at most {max} bytes{}; use a smaller --size or leave {} out of --transport",
                if d.name == transports::RPMSG { "n" } else { "" },
                if d.name == transports::RPMSG {
                    "RPMsg".to_string()
                } else {
                    xferbench_lab::plugins::display_name(&d.name)
                },
                if d.name == transports::RPMSG {
                    " (a 512-byte vring buffer less its 16-byte header)"
                } else {
                    ""
                },
                xferbench_lab::plugins::display_name(&d.name)
            );
        }
    }
    if a.workload == WorkloadKind::Load {
        let min = xferbench_lab::workload::load::min_size(a.verify) as u64;
        if let Some(&s) = sizes.iter().find(|&&s| s < min) {
            bail!(
                "--size: the load workload needs messages of at least {min} bytes (sequence number{} and intended send time); got {s}",
                if a.verify { ", checksum" } else { "" }
            );
        }
    }
    Ok(())
}

/// How the plan runs: repetition, the limit, the peers, counters, profile and watch.
fn run_options(
    a: &RunArgs,
    limit: Limit,
    peer: PeerMode,
    counters: CounterMode,
    launcher: Launcher,
) -> Result<RunOptions> {
    Ok(RunOptions {
        workload: a.workload,
        runs: a.repeat.runs,
        warmup: a.repeat.warmup,
        interleave: a.interleave,
        limit,
        verify: a.verify,
        peer,
        pin: a.pin,
        hang_timeout: a.hang.timeout,
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
        launcher: Some(launcher),
        fail_fast: a.fail_fast,
    })
}

/// The run's settings as its result records them.
fn settings(a: &RunArgs, limit: Limit, remote: bool) -> Settings {
    Settings {
        workload: a.workload.name().to_string(),
        runs: a.repeat.runs,
        warmup: a.repeat.warmup,
        count: match limit {
            Limit::Count(n) => Some(n),
            Limit::Duration(_) => None,
        },
        duration_s: match limit {
            Limit::Duration(ns) => Some(ns as f64 / 1e9),
            Limit::Count(_) => None,
        },
        peer: match (remote, a.peer) {
            (true, _) => "remote",
            (false, PeerArg::Thread) => "thread",
            (false, PeerArg::Process) => "process",
        }
        .to_string(),
        pin: a.pin,
        verify: a.verify,
        interleave: a.interleave,
    }
}

/// How `--counters` counts, refused where it cannot.
fn counter_mode(a: &RunArgs) -> Result<CounterMode> {
    Ok(match a.counters {
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
    })
}

/// Where the journal goes, and whether it sits beside `--export-json` (removed once
/// the export is written) rather than where `--jsonl` asked.
fn jsonl_path(a: &RunArgs) -> Option<(PathBuf, bool)> {
    match (&a.jsonl, &a.export.export_json) {
        (Some(p), _) => Some((p.clone(), false)),
        // Only beside a file: not `-.jsonl` for stdout, nor `/dev/null.jsonl`.
        (None, Some(j))
            if matches!(
                xferbench_report::output::target(j),
                Ok(xferbench_report::output::Target::Replace(_))
            ) =>
        {
            let mut p = j.clone().into_os_string();
            p.push(".jsonl");
            Some((PathBuf::from(p), true))
        }
        (None, _) => None,
    }
}

/// The workload's own parameters given (`-p NAME=LIST`, and `--rate`), each list
/// read by its definition, in the order the workload declares them; with `--rate
/// auto`, the reference rate of the points whose rate the search sets, and the
/// search. A parameter of other workloads only is refused.
fn workload_lists(
    workload: WorkloadKind,
    rate: Option<&str>,
    given: &[(&'static ParamDef, String)],
    budget_s: f64,
) -> Result<(WorkloadLists, Option<SearchOptions>)> {
    if rate.is_some() && workload.param(RATE.name()).is_none() {
        bail!(
            "{}",
            of_other_workloads("--rate", RATE.name())
                .unwrap_or_else(|| format!("--rate: the {workload} workload takes no rate"))
        );
    }
    if workload == WorkloadKind::Load {
        ensure!(
            budget_s.is_finite() && (1.0..=86_400.0).contains(&budget_s),
            "--search-budget: {budget_s} is not a number of seconds between 1 and 86400"
        );
    }
    let auto = rate.is_some_and(|r| r.trim() == xferbench_params::AUTO);
    let mut lists = WorkloadLists::new();
    for def in workload.params() {
        let values = if def.name == RATE.name {
            match rate {
                None => continue,
                // The search sets each probe's rate; the plan's points carry its
                // reference.
                Some(_) if auto => vec![Value::Integer(SearchOptions::default().low_rate as i64)],
                Some(list) => RATE
                    .parse_list(list)
                    .map_err(|e| anyhow::anyhow!("--rate: {e}"))?,
            }
        } else {
            let Some((_, list)) = given.iter().find(|(d, _)| d.name == def.name) else {
                continue;
            };
            def.parse_list(list)
                .map_err(|e| anyhow::anyhow!("-p {}: {e}", def.name))?
        };
        lists.push((def.clone(), values));
    }
    let search = auto.then(|| SearchOptions {
        budget: Duration::from_secs_f64(budget_s),
        ..SearchOptions::default()
    });
    Ok((lists, search))
}

/// The transports with every `plugin:PATH[:NAME]` described (in a child process)
/// and replaced by its transports' canonical names (`plugin:/abs/path:NAME`); a
/// plugin file that cannot be used is a usage error naming it.
pub fn expand_plugins(words: Vec<String>, launcher: &Launcher) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for w in words {
        if xferbench_lab::plugins::is_plugin(&w) {
            let specs = xferbench_lab::plugins::probe(&w, launcher)
                .map_err(|e| anyhow::anyhow!("--transport: {e}"))?;
            for s in specs {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        } else if !out.contains(&w) {
            out.push(w);
        }
    }
    Ok(out)
}

/// `-p zero_copy=LIST`: `false` (copy) and `true` (in place), by the axis's
/// definition.
fn parse_modes(list: &str) -> Result<Vec<bool>> {
    let values = ZERO_COPY.parse_list(list).map_err(|e| match e {
        xferbench_params::ParamError::Invalid { value, .. } => anyhow::anyhow!(
            "-p zero_copy: `{value}` is not a mode; choose from: {}",
            ZERO_COPY.values().unwrap_or_default().join(", ")
        ),
        other => anyhow::anyhow!("-p zero_copy: {other}"),
    })?;
    Ok(values
        .into_iter()
        .filter_map(|v| match v {
            Value::Bool(b) => Some(b),
            _ => None,
        })
        .collect())
}

/// The points in each copy mode: `--zero-copy` runs every point in place and refuses
/// transports without a zero-copy mode; the axis `-p zero_copy=false,true`, like
/// other parameters, applies where a transport has the mode (the others run copying).
fn copy_modes(
    points: Vec<PointSpec>,
    selected: &[String],
    flag: bool,
    axis: Option<Vec<bool>>,
) -> Result<Vec<PointSpec>> {
    let (modes, named) = match (axis, flag) {
        (Some(_), true) => {
            bail!("--zero-copy and -p zero_copy both choose the copy mode; give one of them")
        }
        (Some(modes), false) => (CopyModes::Axis(modes), "-p zero_copy"),
        (None, flag) => (CopyModes::Every(flag), "--zero-copy"),
    };
    sweep::with_copy_modes(points, selected, &modes).map_err(|e| match e {
        ModeError::Refused(m) => anyhow::anyhow!("{named}: {m}"),
        e => anyhow::anyhow!(e),
    })
}

#[cfg(test)]
mod tests {
    /// `run`'s arguments alone, as `xferbench run ARGS` parses them.
    #[derive(clap::Parser)]
    struct Run {
        #[command(flatten)]
        args: super::RunArgs,
    }

    fn config(argv: &[&str]) -> anyhow::Result<super::RunConfig> {
        use clap::Parser;
        assert_eq!(argv[..2], ["xferbench", "run"]);
        let run = Run::try_parse_from(&argv[1..]).unwrap();
        super::RunConfig::from_args(&run.args, crate::launcher::launcher)
    }

    #[test]
    fn touch_rules_are_read_by_their_definition() {
        use xferbench_lab::workload::Touch;
        let touches = |argv: &[&str]| -> anyhow::Result<Vec<Touch>> {
            let mut all = vec!["xferbench", "run", "stream", "-t", "shm", "--zero-copy"];
            all.extend(argv);
            Ok(config(&all)?.points.iter().map(|p| p.touch()).collect())
        };
        assert_eq!(
            touches(&["-s", "64", "-p", "touch=none,all,none"]).unwrap(),
            [Touch::Nothing, Touch::All]
        );
        let e = touches(&["-p", "touch=read", "--verify"]).unwrap_err();
        assert!(e.to_string().contains("--verify"), "{e}");
        let e = touches(&["-p", "touch=some"]).unwrap_err();
        assert!(e.to_string().starts_with("-p touch: "), "{e}");
    }

    #[test]
    fn a_workload_parameter_of_another_workload_is_refused_naming_it() {
        for (argv, want) in [
            (
                &["xferbench", "run", "stream", "-p", "burst=2"][..],
                "-p burst applies to the load workload only",
            ),
            (
                &["xferbench", "run", "pingpong", "--rate", "1k"],
                "--rate applies to the load workload only",
            ),
        ] {
            let e = config(argv).err().map(|e| format!("{e:#}"));
            assert!(
                e.as_deref().is_some_and(|e| e.contains(want)),
                "{argv:?}: {e:?}"
            );
        }
    }

    #[test]
    fn copy_modes_name_the_flag_that_chose_them() {
        let e = config(&["xferbench", "run", "stream", "-t", "pipe", "--zero-copy"]).unwrap_err();
        assert!(e.to_string().starts_with("--zero-copy: "), "{e}");
        let e = config(&[
            "xferbench",
            "run",
            "stream",
            "-t",
            "pipe",
            "-p",
            "zero_copy=true",
        ])
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("-p zero_copy: no selected transport has a zero-copy mode"),
            "{e}"
        );
        let e = config(&[
            "xferbench",
            "run",
            "stream",
            "-t",
            "shm",
            "-p",
            "touch=none",
        ])
        .unwrap_err();
        assert!(e.to_string().ends_with("; add --zero-copy"), "{e}");
    }

    #[test]
    fn run_with_rpmsg_and_no_size_fits_the_default_sizes_and_says_so() {
        let c = config(&["xferbench", "run", "pingpong", "-t", "rpmsg"]).unwrap();
        let sizes: Vec<u64> = c.points.iter().map(|p| p.size).collect();
        assert_eq!(sizes, [64, super::transports::RPMSG_MAX_SIZE]);
        assert!(
            c.notes.iter().any(|n| n.starts_with(
                "rpmsg: the default sizes 4 KiB and 64 KiB do not fit an RPMsg packet"
            )),
            "{:?}",
            c.notes
        );
        // Sizes given on the command line are the user's: too large is an error.
        assert!(config(&["xferbench", "run", "pingpong", "-t", "rpmsg", "-s", "4KiB"]).is_err());
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
