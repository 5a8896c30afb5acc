//! Appending runs and reading them back: list, show, the stored document, baselines.

use crate::db::History;
use crate::error::HistoryError;
use crate::origin::GitState;
use rusqlite::{OptionalExtension, Row, TransactionBehavior, params};
use serde::Serialize;
use std::collections::BTreeMap;
use xferbench_lab::plan::describe_params;
use xferbench_lab::result::{Outcome, ResultDoc};

/// A hidden testing aid: `FILE:MS` makes an append create FILE and sleep MS
/// milliseconds inside its transaction, after writing its rows and before committing
/// (to test concurrent writers and a writer killed mid-append).
pub const TEST_HOOK_ENV: &str = "XFERBENCH_HISTORY_TEST_HOOK";

/// One recorded run, as `history list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunRow {
    /// The run's id in this history.
    pub id: i64,
    /// When it started (RFC 3339, UTC).
    pub time: String,
    /// `run` or `study`.
    pub kind: String,
    /// The workload (`run`) or the study's name.
    pub name: String,
    /// The command line, joined with spaces.
    pub command_line: String,
    /// The machine's short id (a hash of `/etc/machine-id`).
    pub machine_id: String,
    /// The machine's host name.
    pub hostname: String,
    /// The git commit of the working directory, when it was a repository.
    pub git_commit: Option<String>,
    /// Whether tracked files differed from that commit.
    pub git_dirty: Option<bool>,
    /// `complete`, `interrupted` or `failed`.
    pub outcome: String,
    /// How many points finished.
    pub point_count: usize,
    /// Baselines that name this run.
    pub baselines: Vec<String>,
}

/// One point of a recorded run.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PointRow {
    /// 0-based position in the run.
    pub index: usize,
    /// The point's parameters, `name=value` (without the workload).
    pub label: String,
    /// The point's parameters.
    pub params: BTreeMap<String, String>,
    /// The primary figure's name.
    pub figure: String,
    /// Its median over the runs (absent when the point has no such figure).
    pub value: Option<f64>,
    /// Its unit (`bytes/s`, `ns`, ...).
    pub unit: String,
    /// Lower end of the median's confidence interval.
    pub ci_low: Option<f64>,
    /// Upper end of the median's confidence interval.
    pub ci_high: Option<f64>,
    /// Measured runs of the point.
    pub runs: usize,
    /// Whether higher values are better.
    pub higher_is_better: bool,
}

/// One recorded run in full, as `history show` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunDetail {
    /// The run.
    #[serde(flatten)]
    pub run: RunRow,
    /// The measurement context, as in the result document.
    pub context: serde_json::Value,
    /// Its points.
    pub points: Vec<PointRow>,
}

/// A named run to compare against.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Baseline {
    /// The name.
    pub name: String,
    /// When it was set (RFC 3339, UTC).
    pub set_at: String,
    /// The run it names.
    pub run: RunRow,
}

/// The unit of a figure, from its name's suffix.
pub fn unit_of(figure: &str) -> &'static str {
    [
        ("_bytes_per_s", "bytes/s"),
        ("_per_s", "1/s"),
        ("_ns", "ns"),
        ("_us", "µs"),
        ("_s", "s"),
        ("_cpus", "CPUs"),
        ("_bytes", "bytes"),
    ]
    .iter()
    .find(|(suffix, _)| figure.ends_with(suffix))
    .map_or("", |(_, unit)| unit)
}

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

fn outcome_name(o: &Outcome) -> &'static str {
    match o {
        Outcome::Complete => "complete",
        Outcome::Interrupted => "interrupted",
        Outcome::Failed { .. } => "failed",
    }
}

const RUN_COLUMNS: &str = "r.id, r.time, r.kind, r.name, r.command_line, r.machine_id, \
    r.hostname, r.git_commit, r.git_dirty, r.outcome, \
    (SELECT count(*) FROM points p WHERE p.run_id = r.id), \
    (SELECT group_concat(b.name, ',') FROM baselines b WHERE b.run_id = r.id)";

fn run_row(r: &Row) -> rusqlite::Result<RunRow> {
    let baselines: Option<String> = r.get(11)?;
    let mut baselines: Vec<String> = baselines
        .map(|b| b.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    baselines.sort();
    Ok(RunRow {
        id: r.get(0)?,
        time: r.get(1)?,
        kind: r.get(2)?,
        name: r.get(3)?,
        command_line: r.get(4)?,
        machine_id: r.get(5)?,
        hostname: r.get(6)?,
        git_commit: r.get(7)?,
        git_dirty: r.get(8)?,
        outcome: r.get(9)?,
        point_count: r.get::<_, i64>(10)? as usize,
        baselines,
    })
}

fn valid_baseline_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl History {
    /// Appends a finished (or interrupted) run with every finished point, in one
    /// transaction; returns its id. `git` is the working directory's state.
    pub fn append(&mut self, doc: &ResultDoc, git: Option<&GitState>) -> Result<i64, HistoryError> {
        let c = &doc.context;
        let (kind, name) = match &doc.study {
            Some(s) => ("study", s.name.clone()),
            None => ("run", c.settings.workload.clone()),
        };
        let context_json = serde_json::to_string(c).map_err(HistoryError::Encode)?;
        let doc_json = serde_json::to_string(doc).map_err(HistoryError::Encode)?;
        let machine = crate::origin::machine_id(&c.hostname, &c.cpu_model, c.cores);
        let path = self.path.clone();
        let at = |e| HistoryError::at(&path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(at)?;
        tx.execute(
            "INSERT INTO runs (time, recorded_at, kind, name, command_line, context_json, \
             machine_id, hostname, git_commit, git_dirty, outcome, doc_json) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                c.start_time,
                now(),
                kind,
                name,
                c.command_line.join(" "),
                context_json,
                machine,
                c.hostname,
                git.map(|g| g.commit.as_str()),
                git.map(|g| g.dirty),
                outcome_name(&doc.outcome),
                doc_json,
            ],
        )
        .map_err(at)?;
        let id = tx.last_insert_rowid();
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO points (run_id, idx, point_key, label, params_json, figure, \
                     value, unit, ci_low, ci_high, runs, higher_is_better) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )
                .map_err(at)?;
            for p in &doc.points {
                let primary = p.primary();
                let e = p.summary.get(&primary.figure);
                let key = serde_json::to_string(&p.params).map_err(HistoryError::Encode)?;
                insert
                    .execute(params![
                        id,
                        p.index as i64,
                        key,
                        describe_params(&p.params),
                        key,
                        primary.figure,
                        e.map(|e| e.median),
                        unit_of(&primary.figure),
                        e.map(|e| e.ci_low),
                        e.map(|e| e.ci_high),
                        p.runs.len() as i64,
                        primary.higher_is_better,
                    ])
                    .map_err(at)?;
            }
        }
        test_hook();
        tx.commit().map_err(at)?;
        Ok(id)
    }

    /// The newest runs first, at most `limit`.
    pub fn list(&self, limit: usize) -> Result<Vec<RunRow>, HistoryError> {
        let mut q = self.conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs r ORDER BY r.id DESC LIMIT ?1"
        ))?;
        let rows = q.query_map([limit.min(i64::MAX as usize) as i64], run_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The id of the newest run.
    pub fn newest(&self) -> Result<i64, HistoryError> {
        self.conn
            .query_row("SELECT max(id) FROM runs", [], |r| {
                r.get::<_, Option<i64>>(0)
            })?
            .ok_or(HistoryError::Empty)
    }

    /// The newest run of the same kind and name as `run` (a workload's runs, or a
    /// study's) recorded after it: the one a comparison against `run` can use.
    pub fn newest_comparable(&self, run: &RunRow) -> Result<Option<i64>, HistoryError> {
        Ok(self.conn.query_row(
            "SELECT max(id) FROM runs WHERE kind = ?1 AND name = ?2 AND id > ?3",
            params![run.kind, run.name, run.id],
            |r| r.get::<_, Option<i64>>(0),
        )?)
    }

    /// One run.
    pub fn run(&self, id: i64) -> Result<RunRow, HistoryError> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs r WHERE r.id = ?1"),
                [id],
                run_row,
            )
            .optional()?
            .ok_or(HistoryError::UnknownRun(id))
    }

    /// The points of a run, in order.
    pub fn points(&self, id: i64) -> Result<Vec<PointRow>, HistoryError> {
        let mut q = self.conn.prepare(
            "SELECT idx, label, params_json, figure, value, unit, ci_low, ci_high, runs, \
             higher_is_better FROM points WHERE run_id = ?1 ORDER BY idx",
        )?;
        let rows = q.query_map([id], |r| {
            let params: String = r.get(2)?;
            Ok(PointRow {
                index: r.get::<_, i64>(0)? as usize,
                label: r.get(1)?,
                params: serde_json::from_str(&params).unwrap_or_default(),
                figure: r.get(3)?,
                value: r.get(4)?,
                unit: r.get(5)?,
                ci_low: r.get(6)?,
                ci_high: r.get(7)?,
                runs: r.get::<_, i64>(8)? as usize,
                higher_is_better: r.get(9)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One run in full.
    pub fn show(&self, id: i64) -> Result<RunDetail, HistoryError> {
        let run = self.run(id)?;
        let context: String =
            self.conn
                .query_row("SELECT context_json FROM runs WHERE id = ?1", [id], |r| {
                    r.get(0)
                })?;
        Ok(RunDetail {
            run,
            context: serde_json::from_str(&context)
                .map_err(|source| HistoryError::StoredDoc { id, source })?,
            points: self.points(id)?,
        })
    }

    /// The whole result document of a run, as it was recorded.
    pub fn doc(&self, id: i64) -> Result<ResultDoc, HistoryError> {
        let json: String = self
            .conn
            .query_row("SELECT doc_json FROM runs WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?
            .ok_or(HistoryError::UnknownRun(id))?;
        serde_json::from_str(&json).map_err(|source| HistoryError::StoredDoc { id, source })
    }

    /// Names run `id` (default: the newest) `name`, replacing an earlier baseline of
    /// that name.
    pub fn set_baseline(&mut self, name: &str, id: Option<i64>) -> Result<Baseline, HistoryError> {
        if !valid_baseline_name(name) {
            return Err(HistoryError::BadBaselineName(name.to_string()));
        }
        let id = match id {
            Some(id) => self.run(id)?.id,
            None => self.newest()?,
        };
        self.conn.execute(
            "INSERT INTO baselines (name, run_id, set_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, set_at = excluded.set_at",
            params![name, id, now()],
        )?;
        self.baseline(name)
    }

    /// Every baseline, by name.
    pub fn baselines(&self) -> Result<Vec<Baseline>, HistoryError> {
        let names: Vec<String> = self
            .conn
            .prepare("SELECT name FROM baselines ORDER BY name")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        names.iter().map(|n| self.baseline(n)).collect()
    }

    /// The baseline called `name`.
    pub fn baseline(&self, name: &str) -> Result<Baseline, HistoryError> {
        let found: Option<(i64, String)> = self
            .conn
            .query_row(
                "SELECT run_id, set_at FROM baselines WHERE name = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((id, set_at)) = found else {
            let known: Vec<String> = self
                .conn
                .prepare("SELECT name FROM baselines ORDER BY name")?
                .query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            return Err(HistoryError::UnknownBaseline {
                name: name.to_string(),
                known: if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                },
            });
        };
        Ok(Baseline {
            name: name.to_string(),
            set_at,
            run: self.run(id)?,
        })
    }
}

/// See [`TEST_HOOK_ENV`].
fn test_hook() {
    let Some(spec) = std::env::var_os(TEST_HOOK_ENV) else {
        return;
    };
    let spec = spec.to_string_lossy();
    let (file, ms) = spec.rsplit_once(':').unwrap_or((&spec, "0"));
    let _ = std::fs::write(file, b"in the transaction\n");
    std::thread::sleep(std::time::Duration::from_millis(ms.parse().unwrap_or(0)));
}
