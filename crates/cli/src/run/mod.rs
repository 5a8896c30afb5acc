//! `xferbench run`: plan the sweep, run it with observers, write the outputs.

pub mod args;

pub use args::RunArgs;

use crate::config::RunConfig;
use anyhow::{Context, Result};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use xferbench_lab::observer::Observer;
use xferbench_lab::result::ResultDoc;
use xferbench_report::{
    Exporter, csv::Csv, export_to_path, html::Html, json::Json, jsonl::JsonLinesWriter,
    markdown::Markdown,
};

/// Runs `xferbench run` and returns the exit status.
pub fn run(args: &RunArgs) -> Result<u8> {
    let config = match RunConfig::from_args(args, crate::launcher::launcher) {
        Ok(c) => c,
        Err(e) => return Ok(crate::exit::usage("run", e)),
    };
    let out = &config.output;
    if let Err(e) = check_outputs(&config) {
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
    let runs_per_point = (config.options.runs + config.options.warmup) as u64;
    let mut progress = xferbench_report::progress::Progress::new(
        !out.quiet && std::io::stderr().is_terminal(),
        runs_per_point,
    );
    let mut observers: Vec<&mut dyn Observer> = vec![&mut progress];
    if let Some(j) = journal.as_mut() {
        observers.push(j);
    }
    let mut doc = xferbench_lab::run_sweep(
        context,
        &config.points,
        &config.options,
        &stop,
        &mut observers,
    );
    drop(observers);
    doc.warnings.extend(config.notes.iter().cloned());

    // Outputs: files first (they matter most), then the terminal.
    let mut export_failed = !export(&doc, &out.json, &out.csv, &out.markdown, &out.html);
    if let Some(req) = &config.options.profile {
        export_failed |= !crate::profile::render_run_profiles(req, &doc, out.quiet);
    }
    if let (Some((path, true)), false) = (&out.jsonl, export_failed) {
        let _ = std::fs::remove_file(path);
    }
    crate::history::record(&args.record, &doc, out.quiet);
    print_results(&doc, out)?;

    Ok(crate::exit::for_doc(&doc, export_failed))
}

/// Writes the document to each export asked for (JSON, CSV, Markdown, HTML); says
/// on stderr which could not be written and returns whether all were.
pub(crate) fn export(
    doc: &ResultDoc,
    json: &Option<PathBuf>,
    csv: &Option<PathBuf>,
    markdown: &Option<PathBuf>,
    html: &Option<PathBuf>,
) -> bool {
    let mut written = true;
    let exports: [(&Option<PathBuf>, &dyn Exporter); 4] = [
        (json, &Json),
        (csv, &Csv),
        (markdown, &Markdown),
        (html, &Html),
    ];
    for (path, exporter) in exports {
        if let Some(path) = path
            && let Err(e) = export_to_path(exporter, doc, path)
        {
            written = false;
            eprintln!(
                "error: cannot write the {} export {}: {e}",
                exporter.name(),
                path.display()
            );
        }
    }
    written
}

/// Every output path, before anything is measured.
fn check_outputs(config: &RunConfig) -> Result<(), String> {
    let out = &config.output;
    for (flag, path) in [
        ("--export-json", &out.json),
        ("--export-csv", &out.csv),
        ("--export-md", &out.markdown),
        ("--export-html", &out.html),
    ] {
        if let Some(path) = path {
            crate::paths::file(flag, path)?;
        }
    }
    match (&out.jsonl, &out.json) {
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
    }
    w.flush()?;
    if !out.quiet {
        let mut e = std::io::stderr().lock();
        for warning in &doc.warnings {
            writeln!(e, "warning: {warning}")?;
        }
        for p in &doc.points {
            for warning in &p.warnings {
                writeln!(
                    e,
                    "warning: point {} ({}): {warning}",
                    p.index + 1,
                    describe(p)
                )?;
            }
        }
    }
    Ok(())
}

/// A point in words for a warning: `shm size=2 KiB channels=1 wait=spin`, every
/// value shown through its definition.
fn describe(p: &xferbench_lab::result::PointResult) -> String {
    use xferbench_lab::params::display;
    let mut s = format!(
        "{} size={} channels={}",
        p.params["transport"],
        xferbench_params::bytes::display(p.size_bytes),
        p.channels
    );
    for (k, v) in &p.params {
        if !["workload", "transport", "size", "channels"].contains(&k.as_str()) {
            s.push_str(&format!(" {k}={}", display(&p.params, k, v)));
        }
    }
    s
}
