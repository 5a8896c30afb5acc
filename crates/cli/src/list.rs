//! `xferbench list`: transports, workloads and their parameters.

use crate::cli::ListArgs;
use anyhow::Result;
use serde_json::json;
use std::io::Write;
use xferbench_lab::transports;
use xferbench_lab::workload::WorkloadKind;

/// Prints the list.
pub fn run(args: &ListArgs, out: &mut dyn Write) -> Result<()> {
    let ts = transports::all();
    if args.json {
        let doc = json!({
            "transports": ts.iter().map(|t| json!({
                "name": t.name,
                "description": t.description,
                "params": t.params.iter().map(|p| json!({
                    "name": p.name, "default": p.default, "accepts": p.accepts, "help": p.help,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "workloads": WorkloadKind::ALL.iter().map(|w| json!({
                "name": w.name(), "description": w.description(),
            })).collect::<Vec<_>>(),
            "studies": studies().iter().map(|(n, h)| json!({
                "name": n, "description": h,
            })).collect::<Vec<_>>(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "Transports (--transport LIST; parameters with -p NAME=LIST):"
    )?;
    for t in &ts {
        writeln!(out, "  {:<10} {}", t.name, t.description)?;
        for p in t.params {
            writeln!(
                out,
                "      {:<10} default {:<10} {}",
                p.name, p.default, p.help
            )?;
            writeln!(out, "      {:<10} accepts {}", "", p.accepts)?;
        }
    }
    writeln!(out, "\nWorkloads (xferbench run WORKLOAD):")?;
    for w in WorkloadKind::ALL {
        writeln!(out, "  {:<10} {}", w.name(), w.description())?;
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
         --size LIST        default 64,4KiB,64KiB   (64, 4KiB, 1MiB; ranges 1..64KiB:x4, 100..500:+100)\n  \
         --channels LIST    default 1               (1..1024)\n  \
         -p NAME=LIST       any transport parameter above, or transport/size/channels,\n                     \
         or zero_copy=false,true (both copy modes where a transport has zero-copy),\n                     \
         or touch=all,write,read,none (what in-place messages' ends do with the payload)\n\n\
         Run control: --count N | --duration S (default 0.25 s), --runs N (default 5), --warmup N (default 1),\n  \
         --peer thread|process (default process), --pin, --verify, --zero-copy ({}), --timeout S (default 10).\n\
         See `xferbench run --help` for outputs and exit codes.",
        xferbench_lab::transports::ZERO_COPY.join(", ")
    )?;
    Ok(())
}

/// The built-in studies with their one-line descriptions, from the lab's registry.
fn studies() -> Vec<(String, String)> {
    xferbench_lab::studies::registry()
        .iter()
        .map(|s| (s.name().to_string(), s.description().to_string()))
        .collect()
}
