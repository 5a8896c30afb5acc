//! The terminal table: one row per point (optionally one per channel under it),
//! columns chosen for the workload, and where recorded each point's fraction of its
//! limit and the CPU that processes outside the run used while it ran.

use crate::format;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use std::collections::BTreeSet;
use xferbench_lab::names::{CHANNELS, RATE, SIZE, TRANSPORT, WORKLOAD};
use xferbench_lab::result::{PointResult, ResultDoc, figure};

/// Parameters shown in their own columns; any others go in the `params` column.
const FIXED: [&str; 5] = [WORKLOAD, TRANSPORT, SIZE, CHANNELS, RATE];

/// Renders the points of `doc` as a table (`per_channel` adds a row per channel).
pub fn render(doc: &ResultDoc, per_channel: bool) -> String {
    let open_loop = crate::format::load_points(doc);
    let pingpong = !open_loop && crate::format::latency_primary(doc);
    let peers = doc
        .points
        .iter()
        .any(|p| p.summary.contains_key(figure::CPU_PEERS));
    let extra = doc
        .points
        .iter()
        .any(|p| !p.chosen.is_empty() || p.params.keys().any(|k| !FIXED.contains(&k.as_str())));
    let mut header = vec![TRANSPORT, SIZE, "ch"];
    if extra {
        header.push("params");
    }
    if open_loop {
        header.extend(format::LOAD_COLUMNS);
    } else if pingpong {
        header.extend(["p50", "p90", "p99", "p99.9", "max", "round trips/s"]);
    } else {
        header.extend(["throughput", "±", "messages/s"]);
    }
    header.push("CPU main");
    if peers {
        header.push("CPU peers");
    }
    if doc.context.settings.verify {
        header.push("integrity");
    }
    let limits = doc.points.iter().any(|p| p.limit.is_some());
    if limits {
        header.push("of limit");
    }
    let load = doc.points.iter().any(|p| p.contention.is_some());
    if load {
        header.push("others' CPU");
    }
    let counters = doc.points.iter().any(|p| p.counters.is_some());
    if counters {
        header.push("counters");
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.clone());
    for (i, h) in header.iter().enumerate() {
        if !matches!(
            *h,
            TRANSPORT | "params" | "integrity" | "counters" | "of limit" | "others' CPU"
        ) && let Some(c) = t.column_mut(i)
        {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    for p in &doc.points {
        let mut row = point_row(
            p,
            open_loop,
            pingpong,
            extra,
            peers,
            doc.context.settings.verify,
        );
        if limits {
            row.push(Cell::new(
                p.limit.as_ref().map_or_else(|| "-".into(), |l| l.short()),
            ));
        }
        if load {
            row.push(Cell::new(crate::machine::others_cell(
                p.contention.as_ref(),
            )));
        }
        if counters {
            row.push(Cell::new(
                format::counters_brief(p).unwrap_or_else(|| "-".into()),
            ));
        }
        t.add_row(row);
        if per_channel {
            for c in &p.per_channel {
                let mut row = vec![
                    format!("  └ channel {}", c.channel),
                    String::new(),
                    String::new(),
                ];
                if extra {
                    row.push(String::new());
                }
                if open_loop {
                    row.extend(format::load_cells_of_channel(c));
                } else if pingpong {
                    let p50 = c
                        .latency_p50_ns
                        .map(|e| format::nanos(e.median))
                        .unwrap_or_default();
                    row.extend([
                        p50,
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                    ]);
                    row.push(format::rate_count(c.messages_per_s.median));
                } else {
                    row.push(format::rate_bytes(c.throughput_bytes_per_s.median));
                    row.push(format::spread(&c.throughput_bytes_per_s));
                    row.push(format::rate_count(c.messages_per_s.median));
                }
                while row.len() < header.len() {
                    row.push(String::new());
                }
                t.add_row(row);
            }
        }
    }
    t.to_string()
}

fn point_row(
    p: &PointResult,
    open_loop: bool,
    pingpong: bool,
    extra: bool,
    peers: bool,
    verify: bool,
) -> Vec<Cell> {
    let median = |name: &str| p.summary.get(name).map(|e| e.median);
    let mut row = vec![
        Cell::new(p.params.get(TRANSPORT).cloned().unwrap_or_default()),
        Cell::new(format::size(p.size_bytes)),
        Cell::new(p.channels),
    ];
    if extra {
        let params: BTreeSet<String> = p
            .params
            .iter()
            .filter(|(k, _)| !FIXED.contains(&k.as_str()) && !p.chosen.contains_key(*k))
            .map(|(k, v)| format!("{k}={}", xferbench_lab::params::display(&p.params, k, v)))
            .chain(
                p.chosen
                    .keys()
                    .filter_map(|k| Some(format!("{k}={}", format::chosen(p, k)?))),
            )
            .collect();
        row.push(Cell::new(params.into_iter().collect::<Vec<_>>().join(" ")));
    }
    let or_dash = |v: Option<String>| Cell::new(v.unwrap_or_else(|| "-".into()));
    if open_loop {
        row.extend(format::load_cells(p).into_iter().map(Cell::new));
    } else if pingpong {
        for name in &figure::LATENCY[..5] {
            row.push(or_dash(median(name).map(format::nanos)));
        }
        row.push(or_dash(
            median(figure::MESSAGE_RATE).map(format::rate_count),
        ));
    } else {
        row.push(or_dash(median(figure::THROUGHPUT).map(format::rate_bytes)));
        row.push(or_dash(
            p.summary.get(figure::THROUGHPUT).map(format::spread),
        ));
        row.push(or_dash(
            median(figure::MESSAGE_RATE).map(format::rate_count),
        ));
    }
    row.push(or_dash(median(figure::CPU_MAIN).map(|c| format!("{c:.2}"))));
    if peers {
        row.push(or_dash(
            median(figure::CPU_PEERS).map(|c| format!("{c:.2}")),
        ));
    }
    if verify {
        row.push(Cell::new(match &p.integrity {
            Some(c) if c.is_clean() => format!("ok ({} checked)", c.checked),
            Some(c) => format!(
                "FAIL: {} lost, {} dup, {} reord, {} corrupt",
                c.lost, c.duplicated, c.reordered, c.corrupt
            ),
            None => "-".into(),
        }));
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn stream_table() {
        insta::assert_snapshot!(render(&fixture::stream_doc(), false));
    }

    #[test]
    fn stream_table_per_channel() {
        insta::assert_snapshot!(render(&fixture::stream_doc(), true));
    }

    #[test]
    fn stream_table_with_counters() {
        insta::assert_snapshot!(render(&fixture::counters_doc(), false));
    }

    #[test]
    fn stream_table_with_the_machines_load() {
        insta::assert_snapshot!(render(&fixture::contended_doc(), false));
    }

    #[test]
    fn pingpong_table() {
        insta::assert_snapshot!(render(&fixture::pingpong_doc(), false));
    }
}
