//! `perf stat -x,` as a counter source for named events: perf resolves model-specific
//! names (`dsb2mite_switches.penalty_cycles`, `cycle_activity.stalls_mem_any`) through
//! its own event tables, so xferbench needs no table of its own.
//!
//! * [`list_events`] reads `perf list --no-desc`: the hardware, cache, kernel-PMU and
//!   model-specific (JSON) events this CPU offers, each once. Tracepoints, software
//!   and tool events, `pmu/name/` aliases and metrics are left out: they are not CPU
//!   stalls, or repeat an event.
//! * [`run`] runs a command under `perf stat -x, -o FILE [-e LIST]` and
//!   [`parse_csv`] reads the file.
//!
//! # The CSV
//!
//! One line per event: `value,unit,event,run time,percent running,metric,metric
//! unit`. The value is a number (already scaled by perf when the event was
//! multiplexed: *percent running* < 100 then says for how much of the time it was
//! really counted), `<not supported>` (no such event here, as for every hardware
//! event in a VM without a PMU) or `<not counted>` (opened but never scheduled).
//! Event names may themselves hold commas (`cpu/event=0x3c,umask=0x0/`), so the
//! name is everything between the unit and the last four fields. Lines starting
//! with `#` and blank lines are perf's comments.
//!
//! # As figures
//!
//! A run's rows are kept as figures of its run record ([`to_figures`], read back by
//! [`from_figures`]), each name starting with [`PREFIX`]:
//!
//! * `perf_<event>`: the count, in perf's unit for it;
//! * `perf_<event>@unit=<unit>` (1): that unit, when perf gives one (`msec`);
//! * `perf_<event>@running_pct`: the percent of the time it was counted;
//! * `perf_<event>@<metric unit>`: each of perf's derived figures for it
//!   (`perf_cycles@GHz`, `perf_instructions@insn per cycle`), read back in the
//!   order of their names;
//! * `perf_<event>@not supported` or `@not counted` (1): perf's marker, for an event
//!   without a count.
//!
//! The attribute is what follows the last `@`.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

/// Events counted per `perf stat` run when there are many (a search): perf multiplexes
/// them on the few hardware counters and scales the counts.
pub const CHUNK: usize = 40;

/// What perf said about one event.
#[derive(Debug, Clone, PartialEq)]
pub enum PerfValue {
    /// A count (scaled by perf if multiplexed).
    Counted(f64),
    /// `<not supported>`.
    NotSupported,
    /// `<not counted>`.
    NotCounted,
}

/// One line of `perf stat -x,` output.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfStatRow {
    /// The event as perf names it.
    pub event: String,
    /// Its value.
    pub value: PerfValue,
    /// The unit (`msec` for task-clock), often empty.
    pub unit: String,
    /// Percent of the time the event was counted (< 100: multiplexed and scaled).
    pub running_pct: Option<f64>,
    /// perf's derived figures for this line (`3.860 GHz`, `0.03 of all branches`),
    /// continuation lines (`,,,,,0.01,stalled cycles per insn`) included.
    pub metrics: Vec<(f64, String)>,
}

impl PerfStatRow {
    /// The count, if there is one.
    pub fn count(&self) -> Option<f64> {
        match self.value {
            PerfValue::Counted(v) => Some(v),
            _ => None,
        }
    }
}

/// Why perf's output could not be read or perf could not run.
#[derive(Debug, thiserror::Error)]
pub enum PerfStatError {
    /// A line with too few fields or a value that is not a number.
    #[error("line {line} of perf stat's CSV: {reason}: {text:?}")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: &'static str,
        /// The line.
        text: String,
    },
    /// perf is not installed or could not start.
    #[error("cannot run perf: {0} (install it: apt-get install linux-perf)")]
    Spawn(std::io::Error),
    /// perf stat failed.
    #[error("perf stat {status}: {stderr}")]
    Failed {
        /// How it ended.
        status: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// A temporary file could not be made or read.
    #[error("perf stat's output file: {0}")]
    Io(std::io::Error),
}

/// Reads `perf stat -x,` output; see the module doc.
pub fn parse_csv(text: &str) -> Result<Vec<PerfStatRow>, PerfStatError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let bad = |reason| PerfStatError::BadLine {
            line: i + 1,
            reason,
            text: line.to_string(),
        };
        let f: Vec<&str> = t.split(',').collect();
        if f.len() < 3 {
            return Err(bad("fewer than 3 fields"));
        }
        let metric = |rest: &[&str]| -> Option<(f64, String)> {
            let v = rest.get(2)?.trim().parse::<f64>().ok()?;
            Some((v, rest.get(3).map_or("", |u| u.trim()).to_string()))
        };
        if f[0].trim().is_empty() && f[2].trim().is_empty() {
            // A metric of the previous event on a line of its own.
            if let (Some(prev), Some(m)) =
                (rows.last_mut(), metric(&f[f.len().saturating_sub(4)..]))
            {
                let prev: &mut PerfStatRow = prev;
                prev.metrics.push(m);
            }
            continue;
        }
        let (event, rest) = if f.len() >= 7 {
            (f[2..f.len() - 4].join(","), &f[f.len() - 4..])
        } else {
            (f[2].to_string(), &f[3..])
        };
        if event.is_empty() {
            return Err(bad("no event name"));
        }
        let value = match f[0].trim() {
            "<not supported>" => PerfValue::NotSupported,
            "<not counted>" => PerfValue::NotCounted,
            v => PerfValue::Counted(
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| bad("the value is not a number"))?,
            ),
        };
        let running_pct = rest.get(1).and_then(|p| p.trim().parse::<f64>().ok());
        rows.push(PerfStatRow {
            event,
            value,
            unit: f[1].trim().to_string(),
            running_pct,
            metrics: metric(rest).into_iter().collect(),
        });
    }
    Ok(rows)
}

/// The countable CPU events in `perf list --no-desc` output; see the module doc.
pub fn parse_list(text: &str) -> Vec<String> {
    const SKIP: [&str; 6] = [
        "[Tracepoint event]",
        "[Software event]",
        "[Tool event]",
        "[Raw hardware event descriptor]",
        "[Hardware breakpoint]",
        "[SDT event]",
    ];
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if !line.starts_with(char::is_whitespace) {
            if line.trim_end().eq_ignore_ascii_case("metric groups:") {
                break; // Metrics (`-M`) follow: not events.
            }
            continue; // A section heading.
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('[') || SKIP.iter().any(|s| t.contains(s)) {
            continue;
        }
        let names = t.split('[').next().unwrap_or("");
        for name in names.split(" OR ").map(str::trim) {
            let name = name.split_whitespace().next().unwrap_or("");
            // `cpu/cache-misses/` repeats `cache-misses`; raw terms are not events.
            let ok = !name.is_empty() && !name.contains([':', '<', '=', '/']);
            if ok && !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// Names `perf stat -e` accepts without a table: raw codes (`r1a8`) and PMU terms
/// (`cpu/event=0x3c,umask=0x0/`).
pub fn is_raw(name: &str) -> bool {
    name.contains('/')
        || (name.len() > 1
            && name.starts_with('r')
            && name[1..].chars().all(|c| c.is_ascii_hexdigit()))
}

/// The CPU events of this machine (`perf list --no-desc`), or why not.
pub fn list_events() -> Result<Vec<String>, PerfStatError> {
    let out = Command::new("perf")
        .args(["list", "--no-desc"])
        .stdin(Stdio::null())
        .output()
        .map_err(PerfStatError::Spawn)?;
    if !out.status.success() {
        return Err(PerfStatError::Failed {
            status: crate::process::describe_status(out.status),
            stderr: tail(&out.stderr),
        });
    }
    Ok(parse_list(&String::from_utf8_lossy(&out.stdout)))
}

/// The software events perf always has, which `--events` may name too.
pub const SOFTWARE: [&str; 8] = [
    "task-clock",
    "cpu-clock",
    "context-switches",
    "cs",
    "cpu-migrations",
    "migrations",
    "page-faults",
    "faults",
];

/// Splits `names` into those perf knows here (in `known`, software events or raw
/// codes) and those it does not.
pub fn resolve(names: &[String], known: &[String]) -> (Vec<String>, Vec<String>) {
    names.iter().cloned().partition(|n| {
        is_raw(n)
            || SOFTWARE.contains(&n.as_str())
            || known.iter().any(|k| k.eq_ignore_ascii_case(n))
    })
}

/// The prefix of the figures of [`to_figures`].
pub const PREFIX: &str = "perf_";

const UNIT: &str = "unit=";
const RUNNING: &str = "running_pct";
const NOT_SUPPORTED: &str = "not supported";
const NOT_COUNTED: &str = "not counted";

/// `rows` as figures of a run record; see the module doc.
pub fn to_figures(rows: &[PerfStatRow]) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for r in rows {
        let name = format!("{PREFIX}{}", r.event);
        let attr = |a: &str| format!("{name}@{a}");
        match r.value {
            PerfValue::Counted(v) => {
                out.insert(name.clone(), v);
            }
            PerfValue::NotSupported => {
                out.insert(attr(NOT_SUPPORTED), 1.0);
            }
            PerfValue::NotCounted => {
                out.insert(attr(NOT_COUNTED), 1.0);
            }
        }
        if !r.unit.is_empty() {
            out.insert(attr(&format!("{UNIT}{}", r.unit)), 1.0);
        }
        if let Some(p) = r.running_pct {
            out.insert(attr(RUNNING), p);
        }
        for (v, unit) in &r.metrics {
            out.insert(attr(unit), *v);
        }
    }
    out
}

/// The rows [`to_figures`] wrote among `figures` (other figures are left out), in
/// the order of the events' names.
pub fn from_figures(figures: &BTreeMap<String, f64>) -> Vec<PerfStatRow> {
    let mut rows: BTreeMap<&str, PerfStatRow> = BTreeMap::new();
    for (name, &v) in figures {
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let (event, attr) = match rest.rsplit_once('@') {
            Some((e, a)) => (e, Some(a)),
            None => (rest, None),
        };
        let row = rows.entry(event).or_insert_with(|| PerfStatRow {
            event: event.to_string(),
            value: PerfValue::NotCounted,
            unit: String::new(),
            running_pct: None,
            metrics: Vec::new(),
        });
        match attr {
            None => row.value = PerfValue::Counted(v),
            Some(NOT_SUPPORTED) => row.value = PerfValue::NotSupported,
            Some(NOT_COUNTED) => row.value = PerfValue::NotCounted,
            Some(RUNNING) => row.running_pct = Some(v),
            Some(a) => match a.strip_prefix(UNIT) {
                Some(unit) => row.unit = unit.to_string(),
                None => row.metrics.push((v, a.to_string())),
            },
        }
    }
    rows.into_values().collect()
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().rev().take(3).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" / ")
}

/// Runs `argv` under `perf stat -x,` with `events` (perf's default set when
/// empty) and returns its rows. The command's own output is discarded.
pub fn run<S: AsRef<OsStr>>(
    events: &[String],
    argv: &[S],
) -> Result<Vec<PerfStatRow>, PerfStatError> {
    let tmp = tempfile::Builder::new()
        .prefix("xferbench-perf-stat-")
        .tempdir()
        .map_err(PerfStatError::Io)?;
    let file = tmp.path().join("stat.csv");
    let out = command(events, &file, argv)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .map_err(PerfStatError::Spawn)?;
    if !out.status.success() {
        return Err(PerfStatError::Failed {
            status: crate::process::describe_status(out.status),
            stderr: tail(&out.stderr),
        });
    }
    let text = std::fs::read_to_string(&file).map_err(PerfStatError::Io)?;
    parse_csv(&text)
}

/// The `perf stat` command line of [`run`].
pub fn command<S: AsRef<OsStr>>(events: &[String], file: &Path, argv: &[S]) -> Command {
    let mut cmd = Command::new("perf");
    cmd.args(["stat", "-x,", "-o"]).arg(file);
    if !events.is_empty() {
        cmd.arg("-e").arg(events.join(","));
    }
    cmd.arg("--");
    for a in argv {
        cmd.arg(a);
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_values_markers_multiplexing_and_commas_in_names_are_read() {
        let text = "\
# started on Mon Nov 23 12:00:00 2026

450.12,msec,task-clock,450120000,100.00,1.001,CPUs utilized
<not supported>,,instructions,0,100.00,,
<not counted>,,cycle_activity.stalls_mem_any,0,0.00,,
229285609,,dsb2mite_switches.penalty_cycles,101000000,49.87,,
12345,,cpu/event=0x3c,umask=0x0/,450000000,100.00,,
5927885177,,instructions,450000000,100.00,3.41,insn per cycle
,,,,,0.01,stalled cycles per insn
";
        let rows = parse_csv(text).unwrap();
        assert_eq!(rows.len(), 6);
        assert_eq!(
            rows[5].metrics,
            [
                (3.41, "insn per cycle".into()),
                (0.01, "stalled cycles per insn".into())
            ]
        );
        assert_eq!(rows[0].metrics, [(1.001, "CPUs utilized".into())]);
        assert_eq!(rows[0].count(), Some(450.12));
        assert_eq!(rows[0].unit, "msec");
        assert_eq!(rows[1].value, PerfValue::NotSupported);
        assert_eq!(rows[2].value, PerfValue::NotCounted);
        assert_eq!(rows[3].event, "dsb2mite_switches.penalty_cycles");
        assert_eq!(rows[3].running_pct, Some(49.87));
        assert_eq!(rows[4].event, "cpu/event=0x3c,umask=0x0/");
        assert_eq!(rows[4].count(), Some(12345.0));
    }

    #[test]
    fn rows_survive_the_trip_through_figures() {
        let text = "\
450.12,msec,task-clock,450120000,100.00,1.001,CPUs utilized
<not supported>,,instructions,0,100.00,,
<not counted>,,cycle_activity.stalls_mem_any,0,0.00,,
229285609,,dsb2mite_switches.penalty_cycles,101000000,49.87,,
5927885177,,cpu/event=0x3c,umask=0x0/,450000000,100.00,3.41,insn per cycle
,,,,,0.01,stalled cycles per insn
";
        let mut rows = parse_csv(text).unwrap();
        let mut figures = to_figures(&rows);
        assert_eq!(figures["perf_task-clock"], 450.12);
        assert_eq!(figures["perf_task-clock@unit=msec"], 1.0);
        assert_eq!(figures["perf_task-clock@CPUs utilized"], 1.001);
        assert!(!figures.contains_key("perf_instructions"));
        figures.insert("time_s".into(), 1.0);
        let back = from_figures(&figures);
        rows.sort_by(|a, b| a.event.cmp(&b.event));
        assert_eq!(back, rows);
    }

    #[test]
    fn bad_csv_is_an_error_naming_the_line() {
        let e = parse_csv("# c\nabc,,instructions,0,100.00,,\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(parse_csv("1,2\n").is_err());
    }

    #[test]
    fn the_list_keeps_cpu_events_and_drops_tracepoints_software_and_metrics() {
        let text = include_str!("../../../lab/testdata/perf-stat/perf-list-skylake.txt");
        let ev = parse_list(text);
        for e in [
            "branch-misses",
            "stalled-cycles-frontend",
            "idle-cycles-frontend",
            "L1-dcache-load-misses",
            "dsb2mite_switches.penalty_cycles",
            "cycle_activity.stalls_mem_any",
        ] {
            assert!(ev.iter().any(|n| n == e), "{e} missing from {ev:?}");
        }
        for e in [
            "task-clock",
            "rcu:rcu_stall_warning",
            "tma_dsb_switches",
            "mem:<addr>[/len][:access]",
        ] {
            assert!(!ev.iter().any(|n| n == e), "{e} kept");
        }
        let (known, unknown) = resolve(
            &[
                "dsb2mite_switches.penalty_cycles".into(),
                "task-clock".into(),
                "r1a8".into(),
                "no_such.event".into(),
            ],
            &ev,
        );
        assert_eq!(known.len(), 3);
        assert_eq!(unknown, ["no_such.event"]);
    }
}
