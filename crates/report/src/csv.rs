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
use xferbench_lab::result::ResultDoc;

/// Comma-separated values.
#[derive(Debug, Default)]
pub struct Csv;

const STATS: [&str; 8] = [
    "median", "min", "max", "ci_low", "ci_high", "ci_level", "rcv", "outliers",
];

impl Exporter for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn export(&self, doc: &ResultDoc, out: &mut dyn Write) -> std::io::Result<()> {
        let params: BTreeSet<&str> = doc
            .points
            .iter()
            .flat_map(|p| p.params.keys().map(String::as_str))
            .collect();
        // What `auto` parameters chose, a column each (`chosen_capacity`).
        let chosen: BTreeSet<&str> = doc
            .points
            .iter()
            .flat_map(|p| p.chosen.keys().map(String::as_str))
            .collect();
        let figures: BTreeSet<&str> = doc
            .points
            .iter()
            .flat_map(|p| p.summary.keys().map(String::as_str))
            .collect();
        let verify = doc.context.settings.verify;
        let mut w = ::csv::Writer::from_writer(out);
        let mut header: Vec<String> = vec!["index".into()];
        header.extend(params.iter().map(|p| p.to_string()));
        header.extend(chosen.iter().map(|c| format!("chosen_{c}")));
        header.push("runs".into());
        for f in &figures {
            header.extend(STATS.iter().map(|s| format!("{f}_{s}")));
        }
        if verify {
            header.extend(
                ["checked", "lost", "duplicated", "reordered", "corrupt"].map(String::from),
            );
        }
        let counters: BTreeSet<&str> = doc
            .points
            .iter()
            .filter_map(|p| p.counters.as_ref())
            .flat_map(|c| c.total.keys().map(String::as_str))
            .collect();
        header.extend(counters.iter().map(|c| format!("counter_{c}_median")));
        let limits = doc.points.iter().any(|p| p.limit.is_some());
        if limits {
            header.extend(
                [
                    "limit",
                    "limit_value",
                    "limit_unit",
                    "limit_fraction",
                    "limit_suspect",
                ]
                .map(String::from),
            );
        }
        let load = doc.points.iter().any(|p| p.contention.is_some());
        if load {
            header.extend(
                [
                    "others_cpus",
                    "kernel_cpus",
                    "steal",
                    "load_1m",
                    "contended",
                ]
                .map(String::from),
            );
        }
        header.push("warnings".into());
        w.write_record(&header)?;
        for p in &doc.points {
            let mut row: Vec<String> = vec![p.index.to_string()];
            row.extend(
                params
                    .iter()
                    .map(|k| p.params.get(*k).cloned().unwrap_or_default()),
            );
            row.extend(
                chosen
                    .iter()
                    .map(|k| p.chosen.get(*k).cloned().unwrap_or_default()),
            );
            row.push(p.runs.len().to_string());
            for f in &figures {
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
            if verify {
                let c = p.integrity.unwrap_or_default();
                row.extend(
                    [c.checked, c.lost, c.duplicated, c.reordered, c.corrupt]
                        .map(|v| v.to_string()),
                );
            }
            for c in &counters {
                row.push(
                    p.counters
                        .as_ref()
                        .and_then(|pc| pc.total.get(*c))
                        .map(|e| e.median.to_string())
                        .unwrap_or_default(),
                );
            }
            if limits {
                match &p.limit {
                    Some(l) => row.extend([
                        l.limit.clone(),
                        l.limit_value.to_string(),
                        l.unit.clone(),
                        l.trusted().map(|f| f.to_string()).unwrap_or_default(),
                        l.suspect.to_string(),
                    ]),
                    None => row.extend(std::iter::repeat_n(String::new(), 5)),
                }
            }
            if load {
                match &p.contention {
                    Some(c) => row.extend([
                        c.others_cpus.to_string(),
                        c.kernel_cpus.to_string(),
                        c.steal.to_string(),
                        c.load_1m.map(|l| l.to_string()).unwrap_or_default(),
                        c.contended.to_string(),
                    ]),
                    None => row.extend(std::iter::repeat_n(String::new(), 5)),
                }
            }
            row.push(p.warnings.join("; "));
            w.write_record(&row)?;
        }
        w.flush()?;
        Ok(())
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
