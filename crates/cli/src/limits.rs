//! `xferbench limits`: the machine's ceilings, as a table or JSON.

use crate::cli::LimitsArgs;
use anyhow::Result;
use std::io::Write;
use xferbench_lab::limits::{self, Depth};

/// Measures and prints the limits; returns the exit status.
pub fn run(args: &LimitsArgs) -> Result<u8> {
    let depth = if args.quick {
        Depth::Quick
    } else {
        Depth::Full
    };
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
    Ok(0)
}
