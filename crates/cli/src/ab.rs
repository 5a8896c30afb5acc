//! `xferbench ab` and `xferbench compare`: turn arguments into lab calls, print
//! the report's tables, map the verdict to the exit status.

use crate::exit::EXIT_USAGE;
use crate::flags::{HistoryFileArgs, WatchArgs};
use anyhow::{Context, Result};
use clap::Args;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use xferbench_lab::ab::{AbConfig, AbProgress};

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

    /// Write the whole comparison as JSON.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Print the whole comparison as JSON on stdout instead of the tables.
    #[arg(long)]
    pub json: bool,

    /// No progress line and no tables; only errors and the exit status.
    #[arg(short, long)]
    pub quiet: bool,

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

/// Runs `xferbench ab`.
pub fn run(a: &AbArgs) -> Result<u8> {
    if let Some(path) = &a.export_json
        && let Err(e) = crate::paths::file("--export-json", path)
    {
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
    let start = watch.as_ref().map(|w| w.probe.limits());
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

    let tty = !a.quiet && std::io::stderr().is_terminal();
    let stop = crate::stop::stop_flag()?;
    let quiet = a.quiet;
    let mut progress = progress(tty, quiet);
    let report = match xferbench_lab::ab::run(&cfg, caps.pmu, &stop, &mut progress) {
        Ok(r) => r,
        Err(xferbench_lab::ab::AbError::Interrupted) => {
            eprintln!("\ninterrupted ({})", crate::stop::received_name());
            return Ok(crate::stop::interrupted_status());
        }
        Err(e) => return Err(e.into()),
    };
    let mut report = report;
    report.notes.extend(search_skipped);
    if tty {
        eprint!("\r\x1b[K");
    }
    if let (Some(w), Some(start)) = (&watch, start) {
        hold_against_the_machine(&mut report, w, start);
    }
    if let Some(path) = &a.export_json {
        xferbench_report::write_atomic(path, |w| {
            serde_json::to_writer_pretty(&mut *w, &report)?;
            w.write_all(b"\n")
        })
        .with_context(|| format!("cannot write --export-json {}", path.display()))?;
    }
    print_report(a, &caps, &report)
}

/// What `ab` says while it runs: the run count on a terminal, and callgrind's
/// passes with their estimate unless `--quiet`.
fn progress(tty: bool, quiet: bool) -> impl FnMut(AbProgress) {
    move |p| match p {
        AbProgress::Run { done, total } => {
            if tty {
                eprint!("\rab: run {done}/{total}");
            }
        }
        AbProgress::Callgrind {
            passes,
            asked,
            estimate_s,
        } => {
            if !quiet {
                let fewer = if passes < asked {
                    format!(" (of {asked} asked: --callgrind-budget)")
                } else {
                    String::new()
                };
                eprintln!(
                    "{}ab: counting instructions under callgrind: {passes} pass(es) of each{fewer}, \
                     about {} s per pass of both (50× the timed runs)",
                    if tty { "\r\x1b[K" } else { "" },
                    estimate_s.ceil()
                );
            }
        }
    }
}

/// The machine's limits at the start and end of an `ab` run, and a note on whether
/// they moved.
fn hold_against_the_machine(
    report: &mut xferbench_lab::ab::AbReport,
    w: &xferbench_lab::limits::Watch,
    start: xferbench_lab::limits::Limits,
) {
    let machine = xferbench_lab::limits::MachineLimits {
        start,
        end: Some(w.probe.limits()),
        drift_threshold: w.drift_threshold,
    };
    // A command's time may hang on any of the probes.
    let bearing = xferbench_lab::limits::drift::DRIFT_PROBES;
    report.notes.push(match machine.drift(true, &bearing) {
        Some(d) => format!(
            "machine changed between the start and the end: {}; A and B ran interleaved, \
             so it touched both alike: the difference held against the machine's limits \
             is the raw difference",
            d.movement()
        ),
        None => format!(
            "machine steady: its limits moved by less than {:.0} % between the start and the end \
             ({})",
            w.drift_threshold * 100.0,
            xferbench_report::limits::brief(&machine.start)
        ),
    });
    report.machine = Some(machine);
}

/// Prints an `ab` report as `--json`, `--quiet` or the table ask, and returns the
/// exit status: the regression's when B is slower beyond the threshold.
fn print_report(
    a: &AbArgs,
    caps: &xferbench_lab::result::Capabilities,
    report: &xferbench_lab::ab::AbReport,
) -> Result<u8> {
    let mut out = crate::out::stdout();
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(report)?)?;
        out.flush()?;
        return Ok(if report.regression {
            crate::exit::EXIT_REGRESSION
        } else {
            0
        });
    }
    if a.quiet {
        return Ok(if report.regression {
            crate::exit::EXIT_REGRESSION
        } else {
            0
        });
    }
    write!(out, "{}", xferbench_report::compare::render_ab(report))?;
    if !caps.pmu
        && let Some(note) = &caps.pmu_note
    {
        writeln!(out, "note: {note}")?;
    }
    Ok(if report.regression {
        writeln!(
            out,
            "B is slower than A by {:.1} %, beyond the {:.1} % threshold",
            report.difference * 100.0,
            a.threshold
        )?;
        crate::exit::EXIT_REGRESSION
    } else {
        0
    })
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
