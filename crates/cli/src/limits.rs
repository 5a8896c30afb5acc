//! `xferbench limits`: the machine's ceilings, as a table or JSON.

use anyhow::Result;
use clap::Args;
use std::io::Write;
use xferbench_lab::limits::{self, Depth};

/// `xferbench limits`.
#[derive(Debug, Args)]
#[command(after_help = "\
Every `run` and study measures the quick set at its start and end into its result, \
gives each point's primary figure as a fraction of its natural limit, and flags points \
during which the machine changed speed (docs/limits.md).

Examples:
  xferbench limits
  xferbench limits --quick --json")]
pub struct LimitsArgs {
    /// The quick set (5 short samples per probe, well under a second) that runs and
    /// studies record, instead of the full one (15 samples, a few seconds).
    #[arg(long)]
    pub quick: bool,
    /// Print the limits as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Measures and prints the limits; returns the exit status.
pub fn run(args: &LimitsArgs) -> Result<u8> {
    let depth = if args.quick {
        Depth::Quick
    } else {
        Depth::Full
    };
    // A signal does not cut a probe short (the full set takes a few seconds): the
    // limits measured are printed, and the exit status says the run was stopped.
    let _stop = crate::stop::stop_flag()?;
    let measured = limits::measure(depth);
    if let Some(w) = measured.build.as_ref().and_then(|b| b.warning()) {
        eprintln!("warning: {w}");
    }
    let mut out = crate::out::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&measured)?)?;
    } else {
        writeln!(out, "{}", xferbench_report::limits::render(&measured))?;
        writeln!(
            out,
            "{:?} set on CPUs {:?}, measured in {:.1} s. Medians of repeated samples; ± is the robust spread. \
             memcpy copies between page-aligned buffers (dst−src ≡ 0 mod 4096); the rows \
             \"at dst−src ≡ N\" move the destination N bytes further.",
            measured.depth, measured.cpus, measured.took_s
        )?;
        for f in measured.findings() {
            writeln!(
                out,
                "finding: {f}. This machine's memcpy has a slow path at that placement; \
                 xferbench's own message buffers start on a page and avoid it."
            )?;
        }
    }
    if crate::stop::received() {
        eprintln!(
            "interrupted ({}): the limits measured are printed",
            crate::stop::received_name()
        );
        return Ok(crate::stop::interrupted_status());
    }
    Ok(0)
}
