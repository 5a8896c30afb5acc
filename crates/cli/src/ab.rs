//! `xferbench ab` and `xferbench compare`: turn arguments into lab calls, print
//! the report's tables, map the verdict to the exit status.

use crate::exit::EXIT_USAGE;
use crate::flags::{HistoryFileArgs, OutputArgs, WatchArgs};
use anyhow::{Context, Result};
use clap::Args;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use xferbench_lab::ab::{AbConfig, AbReport, CallgrindPlan};
use xferbench_lab::result::{Outcome, ResultDoc, Settings};

/// `xferbench ab`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench ab --runs 10 'xferbench run stream -t shm -s 64 -n 200000 -r 1 -w 0 -q --peer thread' \\
                        'xferbench run stream -t pipe -s 64 -n 200000 -r 1 -w 0 -q --peer thread'

Without a hardware PMU, instructions come from --callgrind-runs passes (3 by default) of each \
command under callgrind, interleaved.
Exit status: 0 no regression; 4 B is significantly slower than A by more than --threshold; \
1 a command failed; 2 bad usage; 130/143/129 stopped by SIGINT/SIGTERM/SIGHUP.")]
pub struct AbArgs {
    /// Measured runs of each command.
    #[arg(short, long, value_name = "N", default_value_t = 10)]
    pub runs: usize,

    /// Warm-up runs of each command, discarded.
    #[arg(short, long, value_name = "N", default_value_t = 1)]
    pub warmup: usize,

    /// Percent by which B may be slower than A before the exit status says so.
    #[arg(long, value_name = "P", default_value_t = 5.0)]
    pub threshold: f64,

    /// Skip the callgrind pass that counts instructions when there is no PMU.
    #[arg(long)]
    pub no_callgrind: bool,

    /// Callgrind passes of each command when there is no PMU (interleaved), so that
    /// the instruction counts' own run-to-run noise is measured; at least 2 for the
    /// diagnosis to tell a real instruction difference from noise.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub callgrind_runs: usize,

    /// The time all callgrind passes together may take (250ms, 1s, 2m or bare
    /// seconds): fewer passes than --callgrind-runs when they would take longer,
    /// estimated at 50× the timed runs, then from the first pass (at least one)
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = crate::flags::seconds)]
    pub callgrind_budget: f64,

    /// Also count these events on A and B with `perf stat` (comma-separated; named
    /// model-specific events such as `dsb2mite_switches.penalty_cycles` are resolved
    /// through perf's event tables).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub events: Vec<String>,

    /// Count every `stall|penalty|miss` event of `perf list` on A and B and rank them
    /// by B/A (needs a hardware PMU; skipped with a reason without one).
    #[arg(long)]
    pub search_stalls: bool,

    /// The result document (the points A and B and the verdict), its exports and
    /// the history.
    #[command(flatten)]
    pub output: OutputArgs,

    /// Machine limits and drift.
    #[command(flatten)]
    pub watch: WatchArgs,

    /// Command A, the baseline (run with `sh -c`).
    #[arg(value_name = "CMD_A")]
    pub command_a: String,

    /// Command B, the change.
    #[arg(value_name = "CMD_B")]
    pub command_b: String,
}

/// `xferbench compare`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench compare base.json new.json
  xferbench compare --threshold 2 xferbench-rpmsg-old/ xferbench-rpmsg-new/
  xferbench history baseline set main && xferbench compare --baseline main new.json
  xferbench compare --baseline main          # the newest run of the baseline's workload
  xferbench compare --baseline main 9        # run 9 of `history list` against the baseline
  xferbench compare 7 9                      # two recorded runs

Exit status: 0 no regression, 4 a significant regression beyond --threshold, 2 bad usage, \
files that cannot be read or compared, or an unknown baseline.")]
pub struct CompareArgs {
    /// The baseline: a result file (`run --export-json`), a study folder (its
    /// `results.json`) or a run ID of the history (`history list`; digits that name
    /// no file). With --baseline, the new result instead [default: the newest run of
    /// the baseline's workload or study recorded after it].
    #[arg(value_name = "BASE", required_unless_present = "baseline")]
    pub base: Option<PathBuf>,

    /// The new result: a result file, a study folder or a run ID of the history.
    #[arg(value_name = "NEW", required_unless_present = "baseline")]
    pub new: Option<PathBuf>,

    /// Compare against this baseline of the history (`history baseline set NAME`)
    /// instead of a BASE file.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,

    /// Percent by which a point's primary figure may get worse.
    #[arg(long, value_name = "P", default_value_t = 5.0)]
    pub threshold: f64,

    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,

    /// Also write the comparison as a self-contained HTML page: per point the change,
    /// its bootstrap interval, Welch's p-value and the verdict, and charts of BASE
    /// against NEW (`-`: stdout; a FIFO or device is written in place, never
    /// replaced).
    #[arg(long, value_name = "FILE")]
    pub export_html: Option<PathBuf>,

    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

fn threshold(p: f64) -> Option<f64> {
    (p.is_finite() && p >= 0.0).then_some(p / 100.0)
}

/// Runs `xferbench ab`: A and B as the points of a plan on the point loop, then
/// the counting passes and the verdict, recorded in the plan's document.
pub fn run(a: &AbArgs) -> Result<u8> {
    if let Err(e) = a.output.check() {
        return Ok(crate::exit::usage("ab", e));
    }
    let Some(threshold) = threshold(a.threshold) else {
        eprintln!(
            "error: --threshold must be a percentage ≥ 0, not {}",
            a.threshold
        );
        return Ok(EXIT_USAGE);
    };
    if a.runs < 2 {
        eprintln!("error: --runs must be at least 2 for a significance test");
        return Ok(EXIT_USAGE);
    }
    if a.callgrind_runs == 0 {
        return Ok(crate::exit::usage(
            "ab",
            "--callgrind-runs must be at least 1 (2 or more measure the counts' own noise)",
        ));
    }
    let watch = match crate::config::watch(&a.watch) {
        Ok(w) => w,
        Err(e) => return Ok(crate::exit::usage("ab", e)),
    };
    let caps = xferbench_lab::context::capabilities();
    let cfg = AbConfig {
        a: a.command_a.clone(),
        b: a.command_b.clone(),
        runs: a.runs,
        warmup: a.warmup,
        threshold,
        callgrind: !a.no_callgrind && caps.valgrind.is_some(),
        callgrind_runs: a.callgrind_runs,
        callgrind_budget_s: a.callgrind_budget,
        events: a
            .events
            .iter()
            .map(|e| e.trim().to_string())
            .filter(|e| !e.is_empty())
            .collect(),
        search_stalls: a.search_stalls && caps.pmu && caps.perf.is_some(),
    };
    if !cfg.events.is_empty() && caps.perf.is_none() {
        eprintln!("error: --events needs perf (apt-get install linux-perf)");
        return Ok(EXIT_USAGE);
    }
    // Without a PMU the search has nothing to count: one note says why, and ab carries on.
    let search_skipped = if a.search_stalls {
        xferbench_lab::ab::search_unavailable(caps.pmu, caps.perf.is_some())
    } else {
        None
    };

    let quiet = a.output.quiet || a.output.json;
    let tty = !quiet && std::io::stderr().is_terminal();
    let stop = crate::stop::stop_flag()?;
    let settings = Settings {
        workload: xferbench_lab::workload::RecordedWorkload::Command
            .name()
            .into(),
        runs: cfg.runs,
        warmup: cfg.warmup,
        count: None,
        duration_s: None,
        peer: "process".into(),
        pin: false,
        verify: false,
        interleave: true,
    };
    let context = xferbench_lab::context::collect(
        env!("CARGO_PKG_VERSION"),
        std::env::args().collect(),
        settings,
    );
    let mut bench = cfg.bench(caps.pmu);
    let mut progress =
        xferbench_report::progress::Progress::new(tty, (cfg.runs + cfg.warmup) as u64);
    let mut doc = xferbench_lab::measure::run_plan(
        context,
        &mut bench,
        &cfg.loop_options(watch),
        &stop,
        &mut [&mut progress],
    );
    if matches!(doc.outcome, Outcome::Complete) {
        judge(&mut doc, &cfg, caps.pmu, &stop, a.output.quiet, tty);
        if let Some(v) = doc.ab.as_mut() {
            v.notes.extend(search_skipped);
        }
    }
    let regression = doc.ab.as_ref().is_some_and(|v| v.regression);
    let pmu_note = (!caps.pmu).then(|| caps.pmu_note.clone()).flatten();
    let code = a
        .output
        .finish(&doc, |doc| summary(doc, pmu_note, a.threshold))?;
    Ok(if code == 0 && regression {
        crate::exit::EXIT_REGRESSION
    } else {
        code
    })
}

/// The counting passes and the verdict, into `doc.ab`; a failure or a stop during
/// them becomes the document's outcome, as a failed point's would.
fn judge(
    doc: &mut ResultDoc,
    cfg: &AbConfig,
    pmu: bool,
    stop: &std::sync::atomic::AtomicBool,
    quiet: bool,
    tty: bool,
) {
    let mut told = |p: &CallgrindPlan| {
        if quiet {
            return;
        }
        let fewer = if p.passes < p.asked {
            format!(" (of {} asked: --callgrind-budget)", p.asked)
        } else {
            String::new()
        };
        eprintln!(
            "{}ab: counting instructions under callgrind: {} pass(es) of each{fewer}, \
             about {} s per pass of both (50× the timed runs)",
            if tty { "\r\x1b[K" } else { "" },
            p.passes,
            p.estimate_s.ceil()
        );
    };
    match xferbench_lab::ab::judge(doc, cfg, pmu, stop, &mut told) {
        Ok(v) => doc.ab = Some(v),
        Err(xferbench_lab::ab::AbError::Interrupted) => doc.outcome = Outcome::Interrupted,
        Err(e) => {
            doc.outcome = Outcome::Failed {
                error: xferbench_lab::chain(&e),
            }
        }
    }
}

/// The tables of a finished comparison, and the regression in words.
fn summary(doc: &ResultDoc, pmu_note: Option<String>, threshold_pct: f64) -> String {
    let Some(report) = AbReport::of(doc) else {
        return String::new();
    };
    let mut out = xferbench_report::compare::render_ab(&report);
    if let Some(note) = pmu_note {
        out.push_str(&format!("note: {note}\n"));
    }
    for w in &doc.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    if report.verdict.regression {
        out.push_str(&format!(
            "B is slower than A by {:.1} %, beyond the {:.1} % threshold\n",
            report.verdict.difference * 100.0,
            threshold_pct
        ));
    }
    out
}

/// Runs `xferbench compare`.
pub fn compare(a: &CompareArgs) -> Result<u8> {
    let Some(threshold) = threshold(a.threshold) else {
        eprintln!(
            "error: --threshold must be a percentage ≥ 0, not {}",
            a.threshold
        );
        return Ok(EXIT_USAGE);
    };
    if let Some(path) = &a.export_html
        && let Err(e) = crate::paths::file("--export-html", path)
    {
        return Ok(crate::exit::usage("compare", e));
    }
    let docs = match (&a.baseline, &a.base, &a.new) {
        (Some(_), Some(_), Some(_)) => {
            return Ok(crate::exit::usage(
                "compare",
                "with --baseline NAME give only NEW (or nothing: the newest recorded run)",
            ));
        }
        (Some(name), new, None) => crate::history::baseline_docs(name, &a.file, new.as_deref()),
        (None, Some(base), Some(new)) => {
            let load = |what, path| crate::history::load_result(what, path, &a.file, None);
            load("BASE", base).and_then(|b| Ok((b, load("NEW", new)?)))
        }
        _ => {
            return Ok(crate::exit::usage(
                "compare",
                "give BASE and NEW, or --baseline NAME [NEW]",
            ));
        }
    };
    let (base, new) = match docs {
        Ok(d) => d,
        Err(code) => return Ok(code),
    };
    let c = match xferbench_lab::compare::compare_docs(&base, &new, threshold) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    if let Some(path) = &a.export_html {
        let label = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        let (base_label, new_label) = match &a.baseline {
            Some(name) => (
                format!("baseline {name}"),
                label(&a.base).unwrap_or_else(|| "the newest run recorded after it".into()),
            ),
            None => (
                label(&a.base).unwrap_or_default(),
                label(&a.new).unwrap_or_default(),
            ),
        };
        let page = xferbench_report::html::compare::compare_page(
            &c,
            xferbench_report::html::compare::Side {
                label: &base_label,
                doc: &base,
            },
            xferbench_report::html::compare::Side {
                label: &new_label,
                doc: &new,
            },
        );
        xferbench_report::write_atomic(path, |w| w.write_all(page.as_bytes()))
            .with_context(|| format!("cannot write --export-html {}", path.display()))?;
    }
    let mut out = crate::out::stdout();
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&c)?)?;
    } else {
        write!(out, "{}", xferbench_report::compare::render_compare(&c))?;
    }
    Ok(if c.regressions > 0 {
        crate::exit::EXIT_REGRESSION
    } else {
        0
    })
}
