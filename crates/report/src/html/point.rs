//! One point in detail: the runs of its primary figure as a strip, every summarised
//! figure, the channels, the latency percentiles (for a `load` point p50 … p99.99 and
//! max, and how far behind its schedule the sender was), the CPU of each process, the
//! counters, integrity and the point's warnings.

use super::table::table;
use super::words::point_figure_name;
use crate::chart::{Unit, svg::strip};
use crate::format;
use crate::study::Table;
use maud::{Markup, html};
use std::collections::BTreeMap;
use xferbench_lab::names::{CHANNELS, SIZE, TRANSPORT, WORKLOAD};
use xferbench_lab::params;
use xferbench_lab::result::{PointResult, figure};
use xferbench_probes::stats::Estimate;

/// The anchor of a point's detail.
pub fn anchor(p: &PointResult) -> String {
    format!("point-{}", p.index + 1)
}

/// A figure's value in its unit, chosen by its name ([`Unit::of_figure`]): `1.45 GB/s`,
/// `12.7 µs`, `250 ms`, `830 k/s`; CPUs and the fairness index to three decimals.
pub fn show(name: &str, v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if name.ends_with("cpus") || name == figure::FAIRNESS {
        format!("{v:.3}")
    } else {
        Unit::of_figure(name).value(v)
    }
}

/// One parameter as people write it: the transport's name, `64 KiB`, `2 channels`,
/// `wait=spin`.
fn param_value(params: &BTreeMap<String, String>, key: &str, value: &str) -> String {
    match (key, value.parse::<u64>()) {
        (SIZE, Ok(b)) => format::size(b),
        (CHANNELS, Ok(1)) => "1 channel".into(),
        (CHANNELS, Ok(n)) => format!("{n} channels"),
        (TRANSPORT, _) => value.into(),
        _ => format!("{key}={}", params::display(params, key, value)),
    }
}

/// The parameters of a point that vary across the document, for a line's legend:
/// `shm`, `shm, 2 channels`, `pipe, pipe_size=65536`.
pub fn line_label(p: &PointResult, varying: &[&str]) -> String {
    varying
        .iter()
        .map(|k| param(p, k))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One parameter of a point as people write it (see [`describe_params`]).
pub fn param(p: &PointResult, key: &str) -> String {
    match key {
        SIZE => format::size(p.size_bytes),
        CHANNELS => param_value(&p.params, key, &p.channels.to_string()),
        _ => param_value(
            &p.params,
            key,
            p.params.get(key).map_or("-", String::as_str),
        ),
    }
}

/// Parameters as people write them, the transport, size and channels first:
/// `shm, 64 KiB, 1 channel, wait=spin` (the workload is left out).
pub fn describe_params(params: &BTreeMap<String, String>) -> String {
    let first = [TRANSPORT, SIZE, CHANNELS];
    first
        .iter()
        .filter_map(|k| Some((*k, params.get(*k)?.as_str())))
        .chain(
            params
                .iter()
                .filter(|(k, _)| k.as_str() != WORKLOAD && !first.contains(&k.as_str()))
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .map(|(k, v)| param_value(params, k, v))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A point's parameters: `shm, 64 KiB, 1 channel, wait=spin`.
pub fn describe(p: &PointResult) -> String {
    describe_params(&p.params)
}

fn interval(name: &str, e: &Estimate) -> String {
    if e.n < 2 {
        "-".into()
    } else {
        format!(
            "{} – {} ({} %)",
            show(name, e.ci_low),
            show(name, e.ci_high),
            crate::format::level(e.ci_level)
        )
    }
}

/// The point's figures, its primary one first, then speed, latency and CPU in the
/// tables' order, then the rest by name.
fn ordered(p: &PointResult) -> Vec<(&String, &Estimate)> {
    let primary = p.primary().figure;
    let order: Vec<&str> = [figure::THROUGHPUT, figure::MESSAGE_RATE]
        .into_iter()
        .chain(figure::LATENCY)
        .chain([
            figure::CPU_MAIN,
            figure::CPU_PEERS,
            figure::CPU_PER_MESSAGE,
            figure::FAIRNESS,
            figure::WINDOW,
        ])
        .collect();
    let rank = |n: &str| {
        if n == primary {
            0
        } else {
            order
                .iter()
                .position(|o| *o == n)
                .map_or(usize::MAX, |i| i + 1)
        }
    };
    let mut rows: Vec<(&String, &Estimate)> = p.summary.iter().collect();
    // Stable: figures of equal rank keep the map's order, by name.
    rows.sort_by_key(|(n, _)| rank(n));
    rows
}

fn figures_table(p: &PointResult) -> Table {
    Table {
        title: "Every figure over the runs".into(),
        headers: [
            "figure",
            "median",
            "interval",
            "spread",
            "min",
            "max",
            "runs",
            "outliers",
            "in results.json",
        ]
        .map(String::from)
        .to_vec(),
        rows: ordered(p)
            .into_iter()
            .map(|(n, e)| {
                vec![
                    point_figure_name(p, n),
                    show(n, e.median),
                    interval(n, e),
                    format::spread(e),
                    show(n, e.min),
                    show(n, e.max),
                    e.n.to_string(),
                    e.outliers.to_string(),
                    n.clone(),
                ]
            })
            .collect(),
    }
}

fn channels_table(p: &PointResult) -> Option<Table> {
    if p.per_channel.len() < 2 {
        return None;
    }
    let latency = p.per_channel.iter().any(|c| c.latency_p50_ns.is_some());
    let mut headers = vec!["channel", "throughput", "interval", "spread", "messages/s"];
    if latency {
        headers.push("p50");
    }
    Some(Table {
        title: "Channels (each over its own window)".into(),
        headers: headers.into_iter().map(String::from).collect(),
        rows: p
            .per_channel
            .iter()
            .map(|c| {
                let t = &c.throughput_bytes_per_s;
                let mut row = vec![
                    c.channel.to_string(),
                    format::rate_bytes(t.median),
                    interval(figure::THROUGHPUT, t),
                    format::spread(t),
                    format::rate_count(c.messages_per_s.median),
                ];
                if latency {
                    row.push(
                        c.latency_p50_ns
                            .map_or_else(|| "-".into(), |e| format::nanos(e.median)),
                    );
                }
                row
            })
            .collect(),
    })
}

/// Percentiles of the median over the runs: one row per figure of `figures` the point
/// has, `(label, figure)`.
fn percentiles_table(p: &PointResult, title: &str, figures: &[(&str, &str)]) -> Option<Table> {
    let rows: Vec<Vec<String>> = figures
        .iter()
        .filter_map(|(label, f)| {
            let e = p.summary.get(*f)?;
            Some(vec![
                label.to_string(),
                format::nanos(e.median),
                interval(f, e),
                format::nanos(e.min),
                format::nanos(e.max),
            ])
        })
        .collect();
    (!rows.is_empty()).then(|| Table {
        title: title.into(),
        headers: ["percentile", "median", "interval", "min", "max"]
            .map(String::from)
            .to_vec(),
        rows,
    })
}

/// Whether the point was measured open loop at an offered rate (`load`).
fn open_loop(p: &PointResult) -> bool {
    p.summary.contains_key(figure::OFFERED_RATE)
}

fn latency_table(p: &PointResult) -> Option<Table> {
    let l = figure::LATENCY;
    let rows = [
        ("p50", l[0]),
        ("p90", l[1]),
        ("p99", l[2]),
        ("p99.9", l[3]),
        ("p99.99", figure::LATENCY_P9999),
        ("max", l[4]),
        ("mean", l[5]),
    ];
    let title = if open_loop(p) {
        "Latency percentiles from the intended send times (median over the runs)"
    } else {
        "Latency percentiles (median over the runs)"
    };
    percentiles_table(p, title, &rows)
}

/// How late a `load` point's sends began after their intended times.
fn behind_table(p: &PointResult) -> Option<Table> {
    let b = figure::BEHIND;
    percentiles_table(
        p,
        "Behind schedule: how late the sender began each send (median over the runs)",
        &[
            ("p50", b[0]),
            ("p99", b[1]),
            ("p99.9", b[2]),
            ("max", b[3]),
            // The floor under the lag: the sender's own CPU's stalls while it waited.
            ("its CPU's stall p99", figure::SENDER_STALL_P99),
        ],
    )
}

fn cpu_table(p: &PointResult) -> Option<Table> {
    let mut roles: Vec<&str> = Vec::new();
    for r in &p.runs {
        for c in &r.cpu {
            if !roles.contains(&c.role.as_str()) {
                roles.push(&c.role);
            }
        }
    }
    let rows: Vec<Vec<String>> = roles
        .iter()
        .map(|role| {
            let of = |f: &dyn Fn(&xferbench_probes::cpu::ProcessCpu) -> f64| {
                let values: Vec<f64> = p
                    .runs
                    .iter()
                    .flat_map(|r| r.cpu.iter().filter(|c| c.role == *role).map(f))
                    .collect();
                xferbench_probes::stats::median(&values).unwrap_or(f64::NAN)
            };
            vec![
                role.to_string(),
                format!("{:.3}", of(&|c| c.cpus_utilised)),
                Unit::Seconds.value(of(&|c| c.user_s)),
                Unit::Seconds.value(of(&|c| c.sys_s)),
                format!("{:.0}", of(&|c| c.voluntary_switches as f64)),
                format!("{:.0}", of(&|c| c.involuntary_switches as f64)),
            ]
        })
        .collect();
    (!rows.is_empty()).then(|| Table {
        title: "CPU per process (medians over the runs)".into(),
        headers: [
            "process",
            "CPUs utilised",
            "user time",
            "system time",
            "voluntary switches",
            "involuntary switches",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    })
}

fn counters_table(p: &PointResult) -> Option<(Table, String)> {
    let c = p.counters.as_ref()?;
    let mut headers = vec!["counter".to_string(), "total".to_string()];
    headers.extend(c.processes.iter().map(|p| p.role.clone()));
    let rows = c
        .total
        .iter()
        .map(|(n, e)| {
            let mut row = vec![n.clone(), exact_count(e.median)];
            row.extend(c.processes.iter().map(|pr| {
                pr.values
                    .get(n)
                    .map_or_else(|| "-".into(), |e| exact_count(e.median))
            }));
            row
        })
        .collect();
    let mut note = format!(
        "{}{}; covers {}.",
        c.source,
        if c.simulated { " (simulated)" } else { "" },
        c.covers
    );
    if !c.unsupported.is_empty() {
        note.push_str(&format!(
            " Not supported here: {}.",
            c.unsupported.join(", ")
        ));
    }
    Some((
        Table {
            title: "Counters (medians over the runs)".into(),
            headers,
            rows,
        },
        note,
    ))
}

fn exact_count(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The one-line headline of a point: `Point 3: shm, 64 KiB, 1 channel — throughput
/// 1.45 GB/s [1.40 GB/s–1.50 GB/s, 93.75 %]`.
pub fn headline(p: &PointResult) -> String {
    let primary = p.primary();
    let value = p.summary.get(&primary.figure).map_or_else(
        || "-".into(),
        |e| crate::format::with_interval(e, |v| show(&primary.figure, v)),
    );
    format!(
        "Point {}: {} — {} {value}",
        p.index + 1,
        describe(p),
        point_figure_name(p, &primary.figure)
    )
}

/// The `<details>` block of a point.
pub fn detail(p: &PointResult) -> Markup {
    let primary = p.primary();
    let runs = crate::format::run_values(p, &primary.figure);
    let id = anchor(p);
    let name = point_figure_name(p, &primary.figure);
    html! {
        details.point id=(id) {
            summary {
                (headline(p))
                @if !p.warnings.is_empty() { " " span.badge.warn { "⚠ " (p.warnings.len()) " warning(s)" } }
                @if p.integrity.is_some_and(|k| !k.is_clean()) { " " span.badge.fail { "integrity failure" } }
            }
            @if !p.warnings.is_empty() {
                ul.warnings { @for w in &p.warnings { li { (w) } } }
            }
            @if !p.defaults.is_empty() {
                p.note {
                    "Transport parameters at their defaults: "
                    (describe_params(&p.defaults))
                    "."
                }
            }
            h4 { "Runs of the " (name) (if primary.higher_is_better { " (higher is better)" } else { " (lower is better)" }) }
            (strip(&name, &runs, p.summary.get(&primary.figure), Unit::of_figure(&primary.figure)))
            p.note {
                (runs.len()) " run(s): "
                @for (i, v) in runs.iter().enumerate() {
                    @if i > 0 { ", " }
                    (show(&primary.figure, *v))
                }
            }
            (table(&figures_table(p), &format!("{id}-figures"), None))
            @if let Some(t) = latency_table(p) { (table(&t, &format!("{id}-latency"), None)) }
            @if let Some(t) = behind_table(p) { (table(&t, &format!("{id}-behind"), None)) }
            @if let Some(t) = channels_table(p) { (table(&t, &format!("{id}-channels"), None)) }
            @if let Some(t) = cpu_table(p) { (table(&t, &format!("{id}-cpu"), None)) }
            @if let Some((t, note)) = counters_table(p) {
                (table(&t, &format!("{id}-counters"), None))
                p.note { (note) }
            }
            @if let Some(k) = &p.integrity {
                p class=(if k.is_clean() { "note" } else { "note fail" }) {
                    "Integrity: " (k.checked) " checked, " (k.lost) " lost, " (k.duplicated) " duplicated, "
                    (k.reordered) " reordered, " (k.corrupt) " corrupt."
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn a_point_shows_the_transport_parameters_it_left_at_their_defaults() {
        let mut p = fixture::stream_doc().points[0].clone();
        p.defaults = [("wait".to_string(), "hybrid".to_string())].into();
        let html = detail(&p).into_string();
        assert!(
            html.contains("Transport parameters at their defaults: wait=hybrid."),
            "{html}"
        );
        p.defaults.clear();
        assert!(!detail(&p).into_string().contains("at their defaults"));
    }

    #[test]
    fn headings_speak_in_formatted_values() {
        let doc = fixture::stream_doc();
        let p = doc.points.iter().find(|p| p.size_bytes >= 1024).unwrap();
        let h = headline(p);
        assert!(h.contains(&format::size(p.size_bytes)), "{h}");
        assert!(
            h.contains(" channel") && h.contains(" — throughput "),
            "{h}"
        );
        assert!(!h.contains("size=") && !h.contains("bytes_per_s"), "{h}");
        assert!(h.contains(" GB/s") || h.contains(" MB/s"), "{h}");
    }

    #[test]
    fn the_primary_figure_comes_first_then_the_tables_order() {
        let doc = fixture::pingpong_doc();
        let names: Vec<String> = ordered(&doc.points[0])
            .into_iter()
            .map(|(n, _)| n.clone())
            .collect();
        assert_eq!(names[0], figure::LATENCY[0]);
        assert_eq!(names[1], figure::THROUGHPUT);
        assert_eq!(names.last().map(String::as_str), Some(figure::WINDOW));
    }

    #[test]
    fn values_follow_the_figure_s_unit() {
        assert_eq!(show(figure::THROUGHPUT, 1_449_053_112.601_818), "1.45 GB/s");
        assert_eq!(show(figure::LATENCY[0], 12_700.0), "12.7 µs");
        assert_eq!(show(figure::WINDOW, 0.25), "250 ms");
        assert_eq!(show(figure::CPU_MAIN, 0.5), "0.500");
        assert_eq!(show(figure::THROUGHPUT, f64::NAN), "-");
    }
}
