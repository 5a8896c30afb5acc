//! `xferbench list`: transports, workloads and their parameters.

use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;
use std::io::Write;
use xferbench_lab::params::{DURATION, RUNS, TIMEOUT, WARMUP};
use xferbench_lab::transports;
use xferbench_lab::workload::WorkloadKind;
use xferbench_params::Choice;

/// `xferbench list`.
// The field docs are `--help` text (`[default: …]`), not rustdoc's links.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench list
  xferbench list --json
  xferbench list -t plugin:./libxb_posix_mq.so")]
pub struct ListArgs {
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also list these plugin transports (plugin:PATH[:NAME], comma-separated) with
    /// their parameters.
    #[arg(short, long, value_name = "LIST")]
    pub transport: Option<String>,
}

/// One line per named value that has help, under its parameter's `accepts`.
fn write_choices(out: &mut dyn Write, choices: &[Choice]) -> std::io::Result<()> {
    let width = choices.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in choices.iter().filter(|c| !c.help.is_empty()) {
        writeln!(out, "      {:<10}   {:<width$}  {}", "", c.name, c.help)?;
    }
    Ok(())
}

/// A parameter's lines: name, default and help; what it accepts; its choices.
fn write_param(out: &mut dyn Write, p: &xferbench_params::ParamDef) -> std::io::Result<()> {
    writeln!(
        out,
        "      {:<10} default {:<10} {}",
        p.name,
        p.default_display(),
        p.help
    )?;
    writeln!(out, "      {:<10} accepts {}", "", p.accepts())?;
    write_choices(out, p.choices())
}

/// A parameter as `list --json` shows it.
fn param_json(p: &xferbench_params::ParamDef) -> serde_json::Value {
    json!({
        "name": p.name,
        "default": p.default_display(),
        "accepts": p.accepts(),
        "help": p.help,
        "values": p.values(),
        "choices": p.choices().iter().map(|c| json!({
            "name": c.name, "help": c.help,
        })).collect::<Vec<_>>(),
    })
}

/// Prints the list.
pub fn run(args: &ListArgs, out: &mut dyn Write) -> Result<u8> {
    if let Some(list) = &args.transport {
        let words = xferbench_lab::sweep::parse_words(list).context("--transport")?;
        if let Err(e) = crate::config::expand_plugins(words, &crate::launcher::launcher()?) {
            return Ok(crate::exit::usage("list", e));
        }
    }
    let ts = transports::all();
    if args.json {
        let doc = json!({
            "transports": ts.iter().map(|t| json!({
                "name": xferbench_lab::plugins::display_name(&t.name),
                "plugin": xferbench_lab::plugins::is_plugin(&t.name).then_some(&t.name),
                "description": t.description,
                "zero_copy": t.zero_copy,
                "params": t.params.iter().map(param_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "workloads": WorkloadKind::ALL.iter().map(|w| json!({
                "name": w.name(), "description": w.description(),
                "params": w.params().iter().map(param_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "studies": studies().iter().map(|(n, h)| json!({
                "name": n, "description": h,
            })).collect::<Vec<_>>(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(0);
    }
    writeln!(
        out,
        "Transports (--transport LIST; parameters with -p NAME=LIST):"
    )?;
    for t in &ts {
        let name = xferbench_lab::plugins::display_name(&t.name);
        writeln!(out, "  {name:<10} {}", t.description)?;
        if xferbench_lab::plugins::is_plugin(&t.name) {
            writeln!(out, "  {:<10} -t {}", "", t.name)?;
        }
        for p in t.params.iter() {
            write_param(out, p)?;
        }
    }
    writeln!(
        out,
        "\nWorkloads (xferbench run WORKLOAD; parameters with -p NAME=LIST):"
    )?;
    for w in WorkloadKind::ALL {
        writeln!(out, "  {:<10} {}", w.name(), w.description())?;
        for p in w.params() {
            write_param(out, p)?;
        }
    }
    writeln!(
        out,
        "\nStudies (xferbench study NAME [--quick] [--out DIR]):"
    )?;
    for (name, help) in studies() {
        writeln!(out, "  {name:<10} {help}")?;
    }
    writeln!(
        out,
        "\nSweep axes (every combination is one point):\n  \
         --transport LIST   default shm,pipe,unix,tcp\n  \
         --size LIST        default {sizes:<16}(64, 4KiB, 1MiB; ranges 1..64KiB:x4, 100..500:+100)\n  \
         --channels LIST    default 1               (1..{max_channels})\n  \
         -p NAME=LIST       any transport parameter above, or one of the workload's, or\n                     \
         transport/size/channels, or zero_copy=false,true (both copy modes where a\n                     \
         transport has zero-copy)\n\n\
         Run control: --count N | --duration D (default {duration}), --runs N (default {runs}), --warmup N (default {warmup}),\n  \
         --peer thread|process (default process), --pin, --verify, --zero-copy ({}), --timeout D (default {timeout}).\n\
         See `xferbench run --help` for outputs and exit codes.\n\n\
         Your own transport: -t plugin:PATH[:NAME], a shared library built against\n  \
         include/xferbench/plugin.h (list its parameters with `xferbench list -t plugin:PATH`;\n  \
         check it with `xferbench check -t plugin:PATH`; see docs/plugins.md).",
        ts.iter()
            .filter(|t| t.zero_copy)
            .map(|t| xferbench_lab::plugins::display_name(&t.name))
            .collect::<Vec<_>>()
            .join(", "),
        sizes = crate::config::DEFAULT_SIZES,
        max_channels = xferbench_lab::axes::MAX_CHANNELS,
        duration = DURATION.default_display(),
        runs = RUNS.default_display(),
        warmup = WARMUP.default_display(),
        timeout = TIMEOUT.default_display(),
    )?;
    Ok(0)
}

/// The built-in studies with their one-line descriptions, from the lab's registry.
fn studies() -> Vec<(String, String)> {
    xferbench_studies::registry()
        .iter()
        .map(|s| (s.name().to_string(), s.description().to_string()))
        .collect()
}
