//! `xferbench run`: plan the sweep, run it with observers, write the outputs.

pub use crate::run_args::RunArgs;

use crate::config::RunConfig;
use anyhow::{Context, Result};
use std::io::{IsTerminal, Write};
use xferbench_lab::observer::Observer;
use xferbench_lab::result::ResultDoc;
use xferbench_report::{Exporter, json::Json, jsonl::JsonLinesWriter};

/// Runs `xferbench run` and returns the exit status.
pub fn run(args: &RunArgs) -> Result<u8> {
    let config = match RunConfig::from_args(args, crate::launcher::launcher) {
        Ok(c) => c,
        Err(e) => return Ok(crate::exit::usage("run", e)),
    };
    let out = &config.output;
    if let Err(e) = check_outputs(&config).and_then(|()| args.record.check()) {
        return Ok(crate::exit::usage("run", e));
    }
    let stop = crate::stop::stop_flag()?;
    let mut context = xferbench_lab::context::collect(
        env!("CARGO_PKG_VERSION"),
        std::env::args().collect(),
        config.settings.clone(),
    );
    if let Some(t) = &config.remote {
        context.remote = Some(crate::serve::describe(t)?);
    }
    context.plugins =
        xferbench_lab::plugins::records(config.points.iter().map(|p| p.transport.as_str()));
    let mut journal = match &out.jsonl {
        Some((path, _)) => Some(
            JsonLinesWriter::create(path)
                .with_context(|| format!("cannot create the JSON Lines file {}", path.display()))?,
        ),
        None => None,
    };
    // A search's probes are one measured run each.
    let runs = if config.search.is_some() {
        1
    } else {
        config.options.runs
    };
    let runs_per_point = (runs + config.options.warmup) as u64;
    let mut progress = xferbench_report::progress::Progress::new(
        !out.quiet && std::io::stderr().is_terminal(),
        runs_per_point,
    );
    let mut observers: Vec<&mut dyn Observer> = vec![&mut progress];
    if let Some(j) = journal.as_mut() {
        observers.push(j);
    }
    let mut doc = match &config.search {
        Some(how) => xferbench_lab::rate_search::search(
            context,
            &config.points,
            &config.options,
            how,
            &stop,
            &mut observers,
        ),
        None => xferbench_lab::run_sweep(
            context,
            &config.points,
            &config.options,
            &stop,
            &mut observers,
        ),
    };
    drop(observers);
    doc.warnings.extend(config.notes.iter().cloned());

    // Outputs: files first (they matter most), then the terminal.
    let mut export_failed = !out.exports.write(&doc);
    if let Some(req) = &config.options.profile {
        export_failed |= !crate::profile::render_run_profiles(req, &doc, out.quiet);
    }
    // The journal derived from --export-json goes once the export is written; only a
    // regular file (never a link, a FIFO or a device someone put in its place).
    if let (Some((path, true)), false) = (&out.jsonl, export_failed)
        && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
    {
        let _ = std::fs::remove_file(path);
    }
    crate::history::record(&args.record, &doc, out.quiet);
    print_results(&doc, out)?;

    Ok(crate::exit::for_doc(&doc, export_failed))
}

/// Every output path, before anything is measured.
fn check_outputs(config: &RunConfig) -> Result<(), String> {
    let out = &config.output;
    out.exports.check()?;
    match (&out.jsonl, &out.exports.export_json) {
        (Some((journal, true)), Some(json)) => crate::paths::derived(
            "--export-json",
            json,
            journal,
            "its JSON Lines journal (kept while the sweep runs)",
        )?,
        (Some((journal, _)), _) => crate::paths::file_in_place("--jsonl", journal)?,
        (None, _) => {}
    }
    if let Some(req) = &config.options.profile {
        crate::paths::folder("--profile", &req.dir)?;
    }
    Ok(())
}

fn print_results(doc: &ResultDoc, out: &crate::config::Output) -> Result<()> {
    let mut w = crate::out::stdout();
    if out.stdout_json {
        Json.export(doc, &mut w)?;
    } else if !out.quiet && !doc.points.is_empty() {
        writeln!(
            w,
            "{}",
            xferbench_report::table::render(doc, out.per_channel)
        )?;
        for line in xferbench_report::format::knee_lines(doc) {
            writeln!(w, "{line}")?;
        }
    }
    w.flush()?;
    if !out.quiet {
        let mut e = std::io::stderr().lock();
        for warning in xferbench_report::warnings::lines(doc) {
            writeln!(e, "warning: {warning}")?;
        }
    }
    Ok(())
}
