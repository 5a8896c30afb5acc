//! `xferbench history ...`, recording runs and studies in the history, and
//! `compare --baseline`.

use crate::exit::{EXIT_FAILURE, EXIT_USAGE};
use crate::flags::{HistoryFileArgs, RecordArgs};
use anyhow::Result;
use clap::{Args, Subcommand};
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use xferbench_history::{History, HistoryError, RunRow, Trend, TrendFilter};
use xferbench_lab::result::ResultDoc;
use xferbench_report::html::point::show as show_value;

/// `xferbench history ...`.
#[derive(Debug, Subcommand)]
#[command(after_help = "\
Examples:
  xferbench history list
  xferbench history show 12
  xferbench history trend --name stream -p transport=pipe -p size=64 --html trend.html
  xferbench history baseline set main
  xferbench compare --baseline main new.json

See docs/history.md.")]
pub enum HistoryCommand {
    /// List the recorded runs, newest first.
    List(HistoryListArgs),
    /// Show one recorded run: its context and every point's primary figure.
    Show(HistoryShowArgs),
    /// Follow one point's primary figure across the recorded runs (table, and a plot
    /// with --html), marking runs from other machines.
    Trend(HistoryTrendArgs),
    /// Name runs as baselines for `compare --baseline NAME`.
    #[command(subcommand)]
    Baseline(BaselineCommand),
}

/// `xferbench history list`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench history list
  xferbench history list --limit 100 --json")]
pub struct HistoryListArgs {
    /// At most this many runs.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
    /// Print the runs as JSON.
    #[arg(long)]
    pub json: bool,
    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

/// `xferbench history show`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench history show 12
  xferbench history show 12 --json")]
pub struct HistoryShowArgs {
    /// The run's ID (`history list`).
    #[arg(value_name = "ID")]
    pub id: i64,
    /// Print the run as JSON.
    #[arg(long)]
    pub json: bool,
    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

/// `xferbench history trend`.
#[derive(Debug, Args)]
#[command(after_help = "\
The filters must name exactly one point; when they name several, the error lists them.

Examples:
  xferbench history trend --name stream -p transport=pipe -p size=64
  xferbench history trend --point \"channels=1 size=64 transport=shm\" --figure messages_per_s
  xferbench history trend --name rpmsg -p channels=8 --html trend.html")]
pub struct HistoryTrendArgs {
    /// Only runs of this workload (`stream`, `pingpong`) or study (`rpmsg`, ...).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The point, by its parameters exactly as `history show` prints them.
    #[arg(long, value_name = "PARAMS")]
    pub point: Option<String>,
    /// Only points with this parameter value (repeatable).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Follow this figure instead of the point's primary one (a name of the result's
    /// `summary`, such as messages_per_s or latency_p99_ns).
    #[arg(long, value_name = "NAME")]
    pub figure: Option<String>,
    /// Only the newest N runs.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Write a self-contained HTML page with the plot and the table.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Print the trend as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

/// `xferbench history baseline ...`.
#[derive(Debug, Subcommand)]
#[command(after_help = "\
Examples:
  xferbench history baseline set main
  xferbench history baseline list
  xferbench compare --baseline main")]
pub enum BaselineCommand {
    /// Name a run (default: the newest) as a baseline; an existing name moves.
    Set(BaselineSetArgs),
    /// List the baselines.
    List(BaselineListArgs),
}

/// `xferbench history baseline set`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench history baseline set main          # the newest run
  xferbench history baseline set before-fix 12
  xferbench compare --baseline main new.json")]
pub struct BaselineSetArgs {
    /// The baseline's name (letters, digits, `-`, `_`, `.`).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The run's ID [default: the newest run].
    #[arg(value_name = "ID")]
    pub id: Option<i64>,
    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

/// `xferbench history baseline list`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  xferbench history baseline list
  xferbench history baseline list --json")]
pub struct BaselineListArgs {
    /// Print the baselines as JSON.
    #[arg(long)]
    pub json: bool,
    /// The history file.
    #[command(flatten)]
    pub file: HistoryFileArgs,
}

/// Records a finished (or stopped) run or study with its finished points; a failure
/// is a warning, never an error: the result itself is already written.
pub fn record(args: &RecordArgs, doc: &ResultDoc, quiet: bool) {
    if args.no_history || doc.points.is_empty() {
        return;
    }
    let recorded = (|| -> Result<(i64, PathBuf, bool), String> {
        let (p, chosen) =
            xferbench_history::resolve(args.file.history.as_deref()).map_err(|e| e.to_string())?;
        // A file the user named follows the exports' rules (its folder must exist);
        // only the default location's folder is created.
        if let Some(how) = chosen.by_user() {
            crate::paths::file(how, &p)?;
        }
        let git = std::env::current_dir()
            .ok()
            .and_then(|d| xferbench_history::origin::git_state(&d));
        let created = !p.exists();
        let id = History::open(&p)
            .and_then(|mut h| h.append(doc, git.as_ref()))
            .map_err(|e| e.to_string())?;
        Ok((id, p, created))
    })();
    match recorded {
        // The run that creates the history says so, once, with what it is for.
        Ok((id, path, true)) if !quiet => eprintln!(
            "history: created {} and recorded this run as run {id}; every run and study is recorded there (--no-history skips it, --history PATH or XFERBENCH_HISTORY choose another file)",
            path.display()
        ),
        Ok((id, path, false)) if !quiet => {
            eprintln!("history: recorded as run {id} in {}", path.display());
        }
        Ok(_) => {}
        Err(e) => eprintln!(
            "warning: the result was not recorded in the history: {e} (the outputs are written; --no-history skips the history)"
        ),
    }
}

/// Prints a history error and returns its exit status: usage for what the user can
/// change (an unknown ID or baseline, a file that is not a history), failure else.
fn fail(e: &HistoryError) -> u8 {
    eprintln!("error: {e}");
    if e.is_usage() {
        EXIT_USAGE
    } else {
        EXIT_FAILURE
    }
}

fn open(file: &HistoryFileArgs) -> Result<History, HistoryError> {
    let path = xferbench_history::resolve_path(file.history.as_deref())?;
    History::open_existing(&path)
}

fn table(header: &[&str], right: &[usize]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.to_vec());
    for i in right {
        if let Some(c) = t.column_mut(*i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// `0123abcd45` or `0123abcd45+` (uncommitted changes), `-` outside a repository.
fn commit(c: Option<&str>, dirty: Option<bool>) -> String {
    match c {
        Some(c) => format!(
            "{}{}",
            &c[..c.len().min(10)],
            if dirty == Some(true) { "+" } else { "" }
        ),
        None => "-".into(),
    }
}

fn json(out: &mut impl Write, v: &impl serde::Serialize) -> Result<()> {
    writeln!(out, "{}", serde_json::to_string_pretty(v)?)?;
    Ok(())
}

/// Runs `xferbench history ...`.
pub fn run(cmd: &HistoryCommand) -> Result<u8> {
    let mut out = crate::out::stdout();
    let done = match cmd {
        HistoryCommand::List(a) => match open(&a.file).and_then(|h| h.list(a.limit)) {
            Ok(runs) if a.json => json(&mut out, &runs),
            Ok(runs) => list_table(&mut out, &runs),
            // Before the first run there is nothing to list: an empty list, not an error.
            Err(HistoryError::Missing { .. }) if a.json => json(&mut out, &[(); 0]),
            Err(HistoryError::Missing { path }) => writeln!(
                out,
                "no runs recorded yet: the first `xferbench run` or `xferbench study` creates the history at {}",
                path.display()
            )
            .map_err(Into::into),
            Err(e) => return Ok(fail(&e)),
        },
        HistoryCommand::Show(a) => match open(&a.file).and_then(|h| h.show(a.id)) {
            Ok(d) if a.json => json(&mut out, &d),
            Ok(d) => show_run(&mut out, &d),
            Err(e) => return Ok(fail(&e)),
        },
        HistoryCommand::Trend(a) => return trend(a, &mut out),
        HistoryCommand::Baseline(BaselineCommand::Set(a)) => {
            match open(&a.file).and_then(|mut h| h.set_baseline(&a.name, a.id)) {
                Ok(b) => writeln!(
                    out,
                    "baseline {} is run {} ({} {}, {})",
                    b.name, b.run.id, b.run.kind, b.run.name, b.run.time
                )
                .map_err(Into::into),
                Err(e) => return Ok(fail(&e)),
            }
        }
        HistoryCommand::Baseline(BaselineCommand::List(a)) => {
            let baselines = match open(&a.file).and_then(|h| h.baselines()) {
                Err(HistoryError::Missing { .. }) => Ok(Vec::new()),
                b => b,
            };
            match baselines {
                Ok(b) if a.json => json(&mut out, &b),
                Ok(b) => {
                    let mut t = table(
                        &["baseline", "run", "kind", "name", "time", "commit", "set"],
                        &[1],
                    );
                    for b in &b {
                        t.add_row(vec![
                            b.name.clone(),
                            b.run.id.to_string(),
                            b.run.kind.clone(),
                            b.run.name.clone(),
                            b.run.time.clone(),
                            commit(b.run.git_commit.as_deref(), b.run.git_dirty),
                            b.set_at.clone(),
                        ]);
                    }
                    if b.is_empty() {
                        writeln!(
                            out,
                            "no baselines yet: `xferbench history baseline set NAME [ID]`"
                        )
                    } else {
                        writeln!(out, "{t}")
                    }
                    .map_err(Into::into)
                }
                Err(e) => return Ok(fail(&e)),
            }
        }
    };
    done?;
    out.flush()?;
    Ok(0)
}

fn list_table(out: &mut impl Write, runs: &[RunRow]) -> Result<()> {
    if runs.is_empty() {
        writeln!(out, "no runs recorded yet")?;
        return Ok(());
    }
    let mut t = table(
        &[
            "ID",
            "time",
            "kind",
            "name",
            "points",
            "outcome",
            "commit",
            "host",
            "baselines",
        ],
        &[0, 4],
    );
    for r in runs {
        t.add_row(vec![
            r.id.to_string(),
            r.time.clone(),
            r.kind.clone(),
            r.name.clone(),
            r.point_count.to_string(),
            r.outcome.clone(),
            commit(r.git_commit.as_deref(), r.git_dirty),
            r.hostname.clone(),
            r.baselines.join(", "),
        ]);
    }
    writeln!(out, "{t}")?;
    Ok(())
}

fn show_run(out: &mut impl Write, d: &xferbench_history::RunDetail) -> Result<()> {
    let r = &d.run;
    writeln!(out, "run {}: {} {} ({})", r.id, r.kind, r.name, r.outcome)?;
    writeln!(out, "time:    {}", r.time)?;
    writeln!(out, "command: {}", r.command_line)?;
    let cpu = d.context["cpu_model"].as_str().unwrap_or("?");
    writeln!(out, "machine: {} ({cpu}), id {}", r.hostname, r.machine_id)?;
    match &r.git_commit {
        Some(c) => writeln!(
            out,
            "commit:  {c}{}",
            if r.git_dirty == Some(true) {
                " with uncommitted changes"
            } else {
                ""
            }
        )?,
        None => writeln!(out, "commit:  none (not run in a git repository)")?,
    }
    if !r.baselines.is_empty() {
        writeln!(out, "baselines: {}", r.baselines.join(", "))?;
    }
    let mut t = table(
        &[
            "point",
            "parameters",
            "figure",
            "median",
            "interval",
            "runs",
        ],
        &[0, 3, 4, 5],
    );
    for p in &d.points {
        let interval = match (p.ci_low, p.ci_high) {
            (Some(l), Some(h)) if p.runs >= 2 => {
                format!(
                    "{} .. {}",
                    show_value(&p.figure, l),
                    show_value(&p.figure, h)
                )
            }
            _ => "-".into(),
        };
        t.add_row(vec![
            (p.index + 1).to_string(),
            xferbench_lab::params::describe(&p.params),
            format!(
                "{} ({})",
                p.figure,
                if p.higher_is_better {
                    "higher is better"
                } else {
                    "lower is better"
                }
            ),
            p.value
                .map_or_else(|| "-".into(), |v| show_value(&p.figure, v)),
            interval,
            p.runs.to_string(),
        ]);
    }
    writeln!(out, "{t}")?;
    Ok(())
}

fn trend_filter(a: &HistoryTrendArgs) -> Result<TrendFilter, String> {
    let mut params = Vec::new();
    for p in &a.params {
        let Some((k, v)) = p
            .split_once('=')
            .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        else {
            return Err(format!(
                "-p {p}: expected NAME=VALUE, such as -p transport=pipe"
            ));
        };
        params.push((k.trim().to_string(), v.trim().to_string()));
    }
    if a.limit == Some(0) {
        return Err("--limit: at least one run".into());
    }
    Ok(TrendFilter {
        name: a.name.clone(),
        point: a.point.clone(),
        params,
        figure: a.figure.clone(),
        limit: a.limit,
    })
}

/// The change of each entry from the previous one on the same machine.
fn changes(t: &Trend) -> Vec<Option<f64>> {
    t.entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            t.entries[..i]
                .iter()
                .rev()
                .find(|p| p.machine_id == e.machine_id)
                .filter(|p| p.value != 0.0)
                .map(|p| e.value / p.value - 1.0)
        })
        .collect()
}

fn trend_table(t: &Trend) -> xferbench_report::study::Table {
    let rows = t
        .entries
        .iter()
        .zip(changes(t))
        .map(|(e, change)| {
            vec![
                e.run_id.to_string(),
                e.time.clone(),
                commit(e.git_commit.as_deref(), e.git_dirty),
                show_value(&t.figure, e.value),
                match (e.ci_low, e.ci_high) {
                    (Some(l), Some(h)) if e.runs >= 2 => {
                        format!(
                            "{} .. {}",
                            show_value(&t.figure, l),
                            show_value(&t.figure, h)
                        )
                    }
                    _ => "-".into(),
                },
                change.map_or_else(|| "-".into(), |c| format!("{:+.1} %", c * 100.0)),
                e.runs.to_string(),
                format!(
                    "{} ({}){}",
                    e.hostname,
                    e.machine_id,
                    if e.other_machine { " *" } else { "" }
                ),
            ]
        })
        .collect();
    xferbench_report::study::Table {
        title: String::new(),
        headers: [
            "run", "time", "commit", "median", "interval", "change", "runs", "machine",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

fn trend_title(t: &Trend) -> String {
    format!(
        "{} {}: {} ({} is better)",
        t.name,
        xferbench_lab::params::describe(&t.params),
        t.figure,
        if t.higher_is_better {
            "higher"
        } else {
            "lower"
        }
    )
}

/// The trend's title as people say it, for the page and its chart: `stream shm, 64 B,
/// 1 channel: throughput (higher is better)`.
fn trend_page_title(t: &Trend) -> String {
    format!(
        "{} {}: {} ({} is better)",
        t.name,
        xferbench_report::html::point::describe_params(&t.params),
        xferbench_report::html::figure_name(&t.figure),
        if t.higher_is_better {
            "higher"
        } else {
            "lower"
        }
    )
}

fn trend_notes(t: &Trend) -> Vec<String> {
    let mut notes = vec![
        "change: against the previous run on the same machine. commit: the working directory's git commit, + when it had uncommitted changes.".to_string(),
    ];
    if t.entries.iter().any(|e| e.other_machine) {
        notes.push(format!(
            "*: measured on another machine than the newest run ({}); its figures are not comparable with the others.",
            t.machine_id
        ));
    }
    notes
}

/// The trend's chart: one line per machine, the newest run's machine first, each run
/// its median with the interval of the median as a band; whole run numbers on the
/// axis.
fn trend_chart(t: &Trend) -> xferbench_report::chart::Chart {
    use xferbench_report::chart::{Axis, Chart, Interval, Intervals, Line, Point, Scale, Unit};
    let mut lines: Vec<Line> = Vec::new();
    let mut machines: Vec<&str> = vec![t.machine_id.as_str()];
    for e in &t.entries {
        if !machines.contains(&e.machine_id.as_str()) {
            machines.push(&e.machine_id);
        }
    }
    for m in machines {
        let entries: Vec<_> = t.entries.iter().filter(|e| e.machine_id == m).collect();
        let Some(first) = entries.first() else {
            continue;
        };
        lines.push(Line {
            label: format!(
                "{} ({m}){}",
                first.hostname,
                if first.other_machine {
                    ", another machine"
                } else {
                    ""
                }
            ),
            points: entries
                .iter()
                .map(|e| Point {
                    x: e.run_id as f64,
                    y: e.value,
                    interval: match (e.ci_low, e.ci_high) {
                        (Some(low), Some(high)) if e.runs >= 2 => Some(Interval {
                            low,
                            high,
                            level: None,
                        }),
                        _ => None,
                    },
                })
                .collect(),
            reference: false,
        });
    }
    Chart {
        title: trend_page_title(t),
        x: Axis::new("run (history ID)", Unit::Number, Scale::Linear),
        y: Axis::new(
            xferbench_report::html::figure_name(&t.figure),
            Unit::of_figure(&t.figure),
            Scale::Linear,
        ),
        lines,
        intervals: Intervals::Band,
        markers: Vec::new(),
    }
}

fn trend(a: &HistoryTrendArgs, out: &mut impl Write) -> Result<u8> {
    let filter = match trend_filter(a) {
        Ok(f) => f,
        Err(e) => return Ok(crate::exit::usage("history trend", e)),
    };
    let t = match open(&a.file).and_then(|h| h.trend(&filter)) {
        Ok(t) => t,
        Err(e) => return Ok(fail(&e)),
    };
    if a.name.is_none() {
        eprintln!(
            "history trend: following {} {}, the only workload or study with a matching point (--name {} names it)",
            t.name, t.label, t.name
        );
    }
    let table = trend_table(&t);
    if let Some(path) = &a.html {
        let page = xferbench_report::html::chart_page(
            &format!("xferbench history: {}", trend_page_title(&t)),
            &[
                trend_notes(&t),
                vec!["Each run is its median; the band is the interval of the median.".into()],
            ]
            .concat(),
            &trend_chart(&t),
            &table,
        );
        if let Err(e) = xferbench_report::write_atomic(path, |w| w.write_all(page.as_bytes())) {
            eprintln!("error: cannot write --html {}: {e}", path.display());
            return Ok(EXIT_FAILURE);
        }
    }
    if a.json {
        json(out, &t)?;
        return Ok(0);
    }
    let headers: Vec<&str> = table.headers.iter().map(String::as_str).collect();
    let mut tt = self::table(&headers, &[0, 3, 4, 5, 6]);
    for r in &table.rows {
        tt.add_row(r.clone());
    }
    writeln!(out, "{}\n{tt}", trend_title(&t))?;
    for n in trend_notes(&t).iter().skip(1) {
        writeln!(out, "{n}")?;
    }
    Ok(0)
}

/// A result named on the command line (`compare`'s BASE and NEW): a result file or a
/// study folder, or a run ID as `history list` prints it. A path that exists is read
/// as a file; digits that name no file are a run of the history. `what` names the
/// argument in errors (`NEW`); the error's exit status is returned.
pub fn load_result(
    what: &str,
    given: &Path,
    file: &HistoryFileArgs,
    history: Option<&History>,
) -> std::result::Result<ResultDoc, u8> {
    if let Some(id) = run_id(given) {
        let opened;
        let h = match history {
            Some(h) => h,
            None => {
                opened = open(file).map_err(|e| fail_for(what, id, &e))?;
                &opened
            }
        };
        return h.doc(id).map_err(|e| fail_for(what, id, &e));
    }
    crate::result_file::load(what, given).map_err(|e| {
        eprintln!("error: {e:#}");
        EXIT_USAGE
    })
}

/// `given` as a run ID: only digits, and no file of that name.
fn run_id(given: &Path) -> Option<i64> {
    let s = given.to_str()?;
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || given.exists() {
        return None;
    }
    s.parse().ok()
}

fn fail_for(what: &str, id: i64, e: &HistoryError) -> u8 {
    eprintln!("error: {what} {id} (a run ID of the history): {e}");
    if e.is_usage() {
        EXIT_USAGE
    } else {
        EXIT_FAILURE
    }
}

/// `stream run`, `rpmsg study`.
fn what_run(r: &RunRow) -> String {
    format!("{} {}", r.name, r.kind)
}

/// `compare --baseline NAME [NEW]`: the baseline's stored document and NEW (a file, a
/// study folder, a run ID, or by default the newest run of the baseline's workload
/// or study recorded after it), or the exit status of the error.
pub fn baseline_docs(
    name: &str,
    file: &HistoryFileArgs,
    new: Option<&Path>,
) -> std::result::Result<(ResultDoc, ResultDoc), u8> {
    let h = open(file).map_err(|e| fail(&e))?;
    let b = h.baseline(name).map_err(|e| fail(&e))?;
    let base = h.doc(b.run.id).map_err(|e| fail(&e))?;
    let new = match new {
        Some(path) => load_result("NEW", path, file, Some(&h))?,
        None => {
            let newest = h.newest().map_err(|e| fail(&e))?;
            let Some(id) = h.newest_comparable(&b.run).map_err(|e| fail(&e))? else {
                if newest == b.run.id {
                    eprintln!(
                        "error: the newest recorded run ({newest}) is baseline {name} itself; give NEW (a result file, a study folder or a run ID) or record a new run first"
                    );
                } else {
                    let n = h.run(newest).map_err(|e| fail(&e))?;
                    eprintln!(
                        "error: no {} was recorded after baseline {name} (run {}); the newest run, {newest}, is a {}: give NEW (a result file, a study folder or a run ID) or record a {} first",
                        what_run(&b.run),
                        b.run.id,
                        what_run(&n),
                        what_run(&b.run),
                    );
                }
                return Err(EXIT_USAGE);
            };
            if id == newest {
                eprintln!(
                    "comparing run {id} (the newest) against baseline {name} (run {})",
                    b.run.id
                );
            } else {
                let n = h.run(newest).map_err(|e| fail(&e))?;
                eprintln!(
                    "comparing run {id} (the newest {}; the newest run, {newest}, is a {}) against baseline {name} (run {})",
                    what_run(&b.run),
                    what_run(&n),
                    b.run.id
                );
            }
            h.doc(id).map_err(|e| fail(&e))?
        }
    };
    Ok((base, new))
}
