//! Figures and parameters in words, as the pages name them.

use std::collections::{BTreeMap, BTreeSet};
use xferbench_lab::names;
use xferbench_lab::result::{PointResult, ResultDoc, figure};

/// A figure as people say it: `throughput`, `round-trip latency p99`, `CPU main`;
/// unknown names lose their unit suffix and underscores.
pub fn figure_name(name: &str) -> String {
    figure_name_of(name, false)
}

/// [`figure_name`] of a point's figure: a `load` point's latencies are one-way, from
/// each message's intended send time.
pub fn point_figure_name(p: &PointResult, name: &str) -> String {
    figure_name_of(name, p.summary.contains_key(figure::OFFERED_RATE))
}

fn figure_name_of(name: &str, open_loop: bool) -> String {
    if open_loop && name == figure::LATENCY_P9999 {
        return "latency p99.99 from the intended send time".into();
    }
    let latency = ["p50", "p90", "p99", "p99.9", "max", "mean"];
    if let Some(i) = figure::LATENCY.iter().position(|f| *f == name) {
        if open_loop {
            return format!("latency {} from the intended send time", latency[i]);
        }
        return format!("round-trip latency {}", latency[i]);
    }
    match name {
        figure::THROUGHPUT => "throughput".into(),
        figure::MESSAGE_RATE => "message rate".into(),
        figure::WINDOW => "common window".into(),
        figure::FAIRNESS => "fairness (Jain's index)".into(),
        figure::CPU_MAIN => "CPU main".into(),
        figure::CPU_PEERS => "CPU peers".into(),
        figure::CPU_PER_MESSAGE => "CPU time per message".into(),
        _ => {
            let stem = ["_bytes_per_s", "_ns_per_message", "_ns", "_s", "_cpus"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
                .unwrap_or(name);
            let stem = if name.ends_with("_ns_per_message") {
                format!("{stem} per message")
            } else {
                stem.to_string()
            };
            stem.replace("_per_s", "/s").replace('_', " ")
        }
    }
}

/// The parameters whose values differ between the points of `doc`, other than
/// `except` (the x axis) and the workload; the transport first, as the tables have it.
pub(super) fn varying<'a>(doc: &'a ResultDoc, except: &str) -> Vec<&'a str> {
    let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in &doc.points {
        for (k, v) in &p.params {
            values.entry(k).or_default().insert(v);
        }
    }
    let mut varying: Vec<&str> = values
        .iter()
        .filter(|(k, v)| v.len() > 1 && **k != except && **k != names::WORKLOAD)
        .map(|(k, _)| *k)
        .collect();
    varying.sort_by_key(|k| *k != names::TRANSPORT);
    varying
}
