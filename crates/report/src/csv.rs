//! CSV (`--export-csv`): one row per point, the same figures as the JSON summary,
//! flat. Columns: `index`, every parameter, `runs` (measured runs), then for every figure
//! `<figure>_median`, `_min`, `_max`, `_ci_low`, `_ci_high`, `_ci_level`, `_rcv`, `_outliers`, then
//! the integrity counters (with `--verify`), `counter_<name>_median` for every counter
//! summed over the processes (with `--counters`), the point's natural limit (`limit`,
//! `limit_value`, `limit_unit`, `limit_fraction`, `limit_suspect`, when the result
//! carries machine limits; a suspect fraction is left empty), the machine's load
//! while the point ran (`others_cpus`, `kernel_cpus`, `steal`, `load_1m`,
//! `contended`, when recorded), and the warnings. Columns are the union
//! over all points; a figure a point lacks is left empty.

use crate::Exporter;
use std::collections::BTreeSet;
use std::io::Write;
use xferbench_lab::result::{PointResult, ResultDoc};

/// Comma-separated values.
#[derive(Debug, Default)]
pub struct Csv;

const STATS: [&str; 8] = [
    "median", "min", "max", "ci_low", "ci_high", "ci_level", "rcv", "outliers",
];

const INTEGRITY: [&str; 5] = ["checked", "lost", "duplicated", "reordered", "corrupt"];
const LIMIT: [&str; 5] = [
    "limit",
    "limit_value",
    "limit_unit",
    "limit_fraction",
    "limit_suspect",
];
const LOAD: [&str; 5] = [
    "others_cpus",
    "kernel_cpus",
    "steal",
    "load_1m",
    "contended",
];

impl Exporter for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn export(&self, doc: &ResultDoc, out: &mut dyn Write) -> std::io::Result<()> {
        let columns = Columns::of(doc);
        let mut w = ::csv::Writer::from_writer(out);
        w.write_record(columns.header())?;
        for p in &doc.points {
            w.write_record(columns.row(p))?;
        }
        w.flush()?;
        Ok(())
    }
}

/// The columns of a document: the union over its points.
struct Columns<'a> {
    params: BTreeSet<&'a str>,
    /// What `auto` parameters chose, a column each (`chosen_capacity`).
    chosen: BTreeSet<&'a str>,
    figures: BTreeSet<&'a str>,
    counters: BTreeSet<&'a str>,
    verify: bool,
    limits: bool,
    load: bool,
}

impl<'a> Columns<'a> {
    fn of(doc: &'a ResultDoc) -> Self {
        let points = &doc.points;
        Self {
            params: points
                .iter()
                .flat_map(|p| p.params.keys().map(String::as_str))
                .collect(),
            chosen: points
                .iter()
                .flat_map(|p| p.chosen.keys().map(String::as_str))
                .collect(),
            figures: points
                .iter()
                .flat_map(|p| p.summary.keys().map(String::as_str))
                .collect(),
            counters: points
                .iter()
                .filter_map(|p| p.counters.as_ref())
                .flat_map(|c| c.total.keys().map(String::as_str))
                .collect(),
            verify: doc.context.settings.verify,
            limits: points.iter().any(|p| p.limit.is_some()),
            load: points.iter().any(|p| p.contention.is_some()),
        }
    }

    fn header(&self) -> Vec<String> {
        let mut header: Vec<String> = vec!["index".into()];
        header.extend(self.params.iter().map(|p| p.to_string()));
        header.extend(self.chosen.iter().map(|c| format!("chosen_{c}")));
        header.push("runs".into());
        for f in &self.figures {
            header.extend(STATS.iter().map(|s| format!("{f}_{s}")));
        }
        if self.verify {
            header.extend(INTEGRITY.map(String::from));
        }
        header.extend(self.counters.iter().map(|c| format!("counter_{c}_median")));
        if self.limits {
            header.extend(LIMIT.map(String::from));
        }
        if self.load {
            header.extend(LOAD.map(String::from));
        }
        header.push("warnings".into());
        header
    }

    fn row(&self, p: &PointResult) -> Vec<String> {
        let mut row: Vec<String> = vec![p.index.to_string()];
        let text = |m: &std::collections::BTreeMap<String, String>, k: &str| {
            m.get(k).cloned().unwrap_or_default()
        };
        row.extend(self.params.iter().map(|k| text(&p.params, k)));
        row.extend(self.chosen.iter().map(|k| text(&p.chosen, k)));
        row.push(p.runs.len().to_string());
        for f in &self.figures {
            match p.summary.get(*f) {
                Some(e) => row.extend([
                    e.median.to_string(),
                    e.min.to_string(),
                    e.max.to_string(),
                    e.ci_low.to_string(),
                    e.ci_high.to_string(),
                    e.ci_level.to_string(),
                    e.rcv.to_string(),
                    e.outliers.to_string(),
                ]),
                None => row.extend(STATS.iter().map(|_| String::new())),
            }
        }
        if self.verify {
            let c = p.integrity.unwrap_or_default();
            row.extend(
                [c.checked, c.lost, c.duplicated, c.reordered, c.corrupt].map(|v| v.to_string()),
            );
        }
        for c in &self.counters {
            row.push(
                p.counters
                    .as_ref()
                    .and_then(|pc| pc.total.get(*c))
                    .map(|e| e.median.to_string())
                    .unwrap_or_default(),
            );
        }
        if self.limits {
            match &p.limit {
                Some(l) => row.extend([
                    l.limit.clone(),
                    l.limit_value.to_string(),
                    l.unit.clone(),
                    l.trusted().map(|f| f.to_string()).unwrap_or_default(),
                    l.suspect.to_string(),
                ]),
                None => row.extend(LIMIT.map(|_| String::new())),
            }
        }
        if self.load {
            match &p.contention {
                Some(c) => row.extend([
                    c.others_cpus.to_string(),
                    c.kernel_cpus.to_string(),
                    c.steal.to_string(),
                    c.load_1m.map(|l| l.to_string()).unwrap_or_default(),
                    c.contended.to_string(),
                ]),
                None => row.extend(LOAD.map(|_| String::new())),
            }
        }
        row.push(p.warnings.join("; "));
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn stream_csv() {
        let mut buf = Vec::new();
        Csv.export(&fixture::stream_doc(), &mut buf).unwrap();
        insta::assert_snapshot!(String::from_utf8(buf).unwrap());
    }

    #[test]
    fn counters_get_a_column_each() {
        let mut buf = Vec::new();
        Csv.export(&fixture::counters_doc(), &mut buf).unwrap();
        let mut r = ::csv::Reader::from_reader(buf.as_slice());
        let h = r.headers().unwrap().clone();
        let col = h
            .iter()
            .position(|c| c == "counter_instructions_median")
            .unwrap();
        assert!(h.iter().any(|c| c == "counter_ipc_median"));
        for rec in r.records() {
            let v: f64 = rec.unwrap()[col].parse().unwrap();
            assert!(v > 0.0);
        }
    }

    #[test]
    fn every_row_has_every_column() {
        let mut buf = Vec::new();
        Csv.export(&fixture::pingpong_doc(), &mut buf).unwrap();
        let mut r = ::csv::Reader::from_reader(buf.as_slice());
        let n = r.headers().unwrap().len();
        for rec in r.records() {
            assert_eq!(rec.unwrap().len(), n);
        }
    }
}
