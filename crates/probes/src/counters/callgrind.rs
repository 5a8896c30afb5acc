//! Simulated counters: the peers run under `valgrind --tool=callgrind
//! --cache-sim=yes`, and the totals of its output file become the point's counters.
//!
//! Callgrind executes the program on a synthetic CPU, so its instruction count is
//! deterministic (the same input gives the same count, run after run, machine after
//! machine) and it works where no PMU exists. The price is a slowdown of 20–100×:
//! time figures of a run with `--counters callgrind` are not representative, and the
//! runs should be short (`--count`).
//!
//! Collection is switched on only inside `xferbench_lab::workload::serve` (the measured
//! side of every run; `--toggle-collect`), so process start-up is not counted. The
//! totals cover every run of the point, warm-up included, and are divided by the
//! number of runs to give figures per run.
//!
//! Estimated cycles follow the usual first-order model (as KCachegrind's
//! "Cycle Estimation"): `Ir + 10·(I1mr + D1mr + D1mw) + 100·(ILmr + DLmr + DLmw)`: an L1
//! miss that hits the last level costs about 10 cycles, a last-level miss about 100.

pub use super::model::estimated_cycles;
use super::model::{CounterSource, Participant, ProcessCounters, RunCounters, derive};
use crate::process::{Launcher, Wrapper};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The events callgrind reports with `--cache-sim=yes`.
pub const EVENTS: [&str; 9] = [
    "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw",
];

/// The function whose calls are counted: the serving side of one run.
pub const COLLECT_PATTERN: &str = "xferbench_lab::workload::serve*";

/// Why a callgrind output file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CallgrindParseError {
    /// No `events:` line.
    #[error("no `events:` line (not a callgrind output file?)")]
    NoEvents,
    /// No `totals:` or `summary:` line.
    #[error("no `totals:` or `summary:` line (did callgrind finish?)")]
    NoTotals,
    /// A total is not a number.
    #[error("bad total {0:?}")]
    BadNumber(String),
}

/// Reads the totals of a callgrind output file: event name → count.
pub fn parse_totals(text: &str) -> Result<BTreeMap<String, f64>, CallgrindParseError> {
    let mut events: Option<Vec<&str>> = None;
    let mut totals: Option<&str> = None;
    let mut summary: Option<&str> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("events:") {
            events = Some(rest.split_whitespace().collect());
        } else if let Some(rest) = line.strip_prefix("totals:") {
            totals = Some(rest);
        } else if let Some(rest) = line.strip_prefix("summary:") {
            summary = Some(rest);
        }
    }
    let events = events.ok_or(CallgrindParseError::NoEvents)?;
    let line = totals.or(summary).ok_or(CallgrindParseError::NoTotals)?;
    let mut out = BTreeMap::new();
    // Missing trailing numbers are zero, as in the format's compressed lines.
    let mut numbers = line.split_whitespace();
    for e in events {
        let v = match numbers.next() {
            Some(n) => n
                .parse::<u64>()
                .map_err(|_| CallgrindParseError::BadNumber(n.to_string()))?,
            None => 0,
        };
        out.insert(e.to_string(), v as f64);
    }
    Ok(out)
}

/// The `valgrind` command line that runs `program` under callgrind with cache
/// simulation, writing `dir/callgrind.out.<pid>`; `collect` limits collection to
/// matching functions.
pub fn valgrind_args(dir: &Path, collect: Option<&str>) -> Vec<String> {
    let mut args = vec![
        "--tool=callgrind".to_string(),
        "--cache-sim=yes".into(),
        "--trace-children=yes".into(),
        format!("--callgrind-out-file={}/callgrind.out.%p", dir.display()),
    ];
    if let Some(c) = collect {
        args.push(format!("--toggle-collect={c}"));
    }
    args
}

/// Sums the totals of every `callgrind.out.*` file in `dir` (one per process).
pub fn sum_dir(dir: &Path) -> std::io::Result<BTreeMap<String, f64>> {
    let mut sum = BTreeMap::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let is_out = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("callgrind.out."));
        if !is_out {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        if text.trim().is_empty() {
            // A child that exec'd a program valgrind does not follow (xferbench's own
            // `perf --version` probe) leaves an empty file: nothing was simulated.
            continue;
        }
        let totals = parse_totals(&text).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        })?;
        for (k, v) in totals {
            *sum.entry(k).or_insert(0.0) += v;
        }
    }
    Ok(sum)
}

/// Runs the peers under callgrind; see the module doc.
#[derive(Debug)]
pub struct CallgrindSource {
    dir: PathBuf,
    windows: usize,
}

impl CallgrindSource {
    /// A source writing its files under a fresh temporary directory.
    pub fn new() -> CallgrindSource {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("xferbench-callgrind-{}-{n}", std::process::id()));
        CallgrindSource { dir, windows: 0 }
    }
}

impl Default for CallgrindSource {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for CallgrindSource {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl CounterSource for CallgrindSource {
    fn wrap_peer(&self, launcher: Launcher) -> Launcher {
        let _ = std::fs::create_dir_all(&self.dir);
        launcher.wrapped(Wrapper::new(
            "valgrind",
            valgrind_args(&self.dir, Some(COLLECT_PATTERN)),
        ))
    }

    fn window_started(&mut self, _: &[Participant]) {
        self.windows += 1;
    }

    fn window_ended(&mut self) -> Option<RunCounters> {
        None
    }

    fn point_finished(
        &mut self,
        participants: &[Participant],
        warnings: &mut Vec<String>,
    ) -> Option<RunCounters> {
        let runs = self.windows.max(1) as f64;
        warnings.push(
            "counters: the peers ran under callgrind (20-100x slower): this point's time and \
             throughput figures are not representative"
                .into(),
        );
        let mut processes = Vec::new();
        for p in participants.iter().filter(|p| p.name != "main") {
            let path = self.dir.join(format!("callgrind.out.{}", p.pid));
            let parsed = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| parse_totals(&t).map_err(|e| e.to_string()));
            match parsed {
                Ok(totals) => {
                    let mut values: BTreeMap<String, f64> =
                        totals.into_iter().map(|(k, v)| (k, v / runs)).collect();
                    derive(&mut values);
                    processes.push(ProcessCounters {
                        role: p.name.clone(),
                        pid: p.pid,
                        values,
                    });
                }
                Err(e) => warnings.push(format!(
                    "counters: no callgrind totals for {} ({}): {e}",
                    p.name,
                    path.display()
                )),
            }
            let _ = std::fs::remove_file(&path);
        }
        self.windows = 0;
        if participants.iter().all(|p| p.name == "main") {
            warnings.push(
                "counters: --counters callgrind simulates the peer processes; use --peer process"
                    .into(),
            );
        }
        (!processes.is_empty()).then(|| RunCounters {
            source: "callgrind".into(),
            simulated: true,
            processes,
            unsupported: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "\
# callgrind format
version: 1
creator: callgrind-3.19.0
cmd:  ./xferbench __peer
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
fl=(1) ???
fn=(1) main
0 10 2 1
summary: 1000 300 200 10 20 5 3 4 1
totals: 1000 300 200 10 20 5 3 4 1
";

    #[test]
    fn a_directory_sums_every_process_and_skips_empty_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("callgrind.out.1"), FIXTURE).unwrap();
        std::fs::write(dir.join("callgrind.out.2"), FIXTURE).unwrap();
        std::fs::write(dir.join("callgrind.out.3"), "").unwrap();
        std::fs::write(dir.join("unrelated.txt"), "x").unwrap();
        let sum = sum_dir(dir);
        let sum = sum.unwrap();
        assert_eq!(sum["Ir"], 2000.0);
        assert_eq!(sum["DLmw"], 2.0);
    }

    #[test]
    fn totals_are_read_by_event_name() {
        let t = parse_totals(FIXTURE).unwrap();
        assert_eq!(t["Ir"], 1000.0);
        assert_eq!(t["D1mw"], 5.0);
        assert_eq!(t["DLmw"], 1.0);
        // 1000 + 10·(10+20+5) + 100·(3+4+1)
        assert_eq!(estimated_cycles(&t), Some(1000.0 + 350.0 + 800.0));
    }

    #[test]
    fn short_totals_lines_pad_with_zero_and_garbage_is_an_error() {
        let t = parse_totals("events: Ir Dr\ntotals: 7\n").unwrap();
        assert_eq!(t["Dr"], 0.0);
        assert!(matches!(
            parse_totals("totals: 1"),
            Err(CallgrindParseError::NoEvents)
        ));
        assert!(matches!(
            parse_totals("events: Ir\n"),
            Err(CallgrindParseError::NoTotals)
        ));
        assert!(matches!(
            parse_totals("events: Ir\ntotals: x\n"),
            Err(CallgrindParseError::BadNumber(_))
        ));
    }
}
