//! One point in detail: the runs of its primary figure as a strip, every summarised
//! figure, the channels, the latency percentiles, the CPU of each process, the
//! counters, integrity and the point's warnings.

use super::chart::{exact, strip};
use super::table::table;
use crate::format;
use crate::study::Table;
use maud::{Markup, html};
use xferbench_lab::params::describe as describe_params;
use xferbench_lab::result::{PointResult, figure};
use xferbench_lab::stats::Estimate;

/// The anchor of a point's detail.
pub fn anchor(p: &PointResult) -> String {
    format!("point-{}", p.index + 1)
}

/// A figure's value in its unit, chosen by its name.
pub fn show(name: &str, v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if name == figure::THROUGHPUT || name.ends_with("bytes_per_s") {
        format::rate_bytes(v)
    } else if name.ends_with("_ns") || name.ends_with("_ns_per_message") {
        format::nanos(v)
    } else if name.ends_with("per_s") {
        format::rate_count(v)
    } else if name.ends_with("_s") {
        format!("{v:.4} s")
    } else if name.ends_with("cpus") || name == figure::FAIRNESS {
        format!("{v:.3}")
    } else {
        format::count(v)
    }
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

fn figures_table(p: &PointResult) -> Table {
    Table {
        title: "Every figure over the runs".into(),
        headers: [
            "figure", "median", "interval", "spread", "min", "max", "runs", "outliers",
        ]
        .map(String::from)
        .to_vec(),
        rows: p
            .summary
            .iter()
            .map(|(n, e)| {
                vec![
                    n.clone(),
                    show(n, e.median),
                    interval(n, e),
                    format::spread(e.rcv),
                    show(n, e.min),
                    show(n, e.max),
                    e.n.to_string(),
                    e.outliers.to_string(),
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
                    format::spread(t.rcv),
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

fn latency_table(p: &PointResult) -> Option<Table> {
    let names = ["p50", "p90", "p99", "p99.9", "max", "mean"];
    let rows: Vec<Vec<String>> = figure::LATENCY
        .iter()
        .zip(names)
        .filter_map(|(f, label)| {
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
        title: "Latency percentiles (median over the runs)".into(),
        headers: ["percentile", "median", "interval", "min", "max"]
            .map(String::from)
            .to_vec(),
        rows,
    })
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
            let of = |f: &dyn Fn(&xferbench_lab::cpu::ProcessCpu) -> f64| {
                let values: Vec<f64> = p
                    .runs
                    .iter()
                    .flat_map(|r| r.cpu.iter().filter(|c| c.role == *role).map(f))
                    .collect();
                xferbench_lab::stats::median(&values).unwrap_or(f64::NAN)
            };
            vec![
                role.to_string(),
                format!("{:.3}", of(&|c| c.cpus_utilised)),
                format!("{:.4}", of(&|c| c.user_s)),
                format!("{:.4}", of(&|c| c.sys_s)),
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
            "user s",
            "sys s",
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

/// The one-line headline of a point: its parameters and primary figure.
pub fn headline(p: &PointResult) -> String {
    let primary = p.primary();
    let value = p.summary.get(&primary.figure).map_or_else(
        || "-".into(),
        |e| crate::format::with_interval(e, |v| show(&primary.figure, v)),
    );
    format!(
        "Point {}: {} — {} {value}",
        p.index + 1,
        describe_params(&p.params),
        primary.figure
    )
}

/// The `<details>` block of a point.
pub fn detail(p: &PointResult) -> Markup {
    let primary = p.primary();
    let runs = crate::format::run_values(p, &primary.figure);
    let id = anchor(p);
    let show_primary = |v: f64| show(&primary.figure, v);
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
            h4 { "Runs of " (primary.figure) (if primary.higher_is_better { " (higher is better)" } else { " (lower is better)" }) }
            (strip(&primary.figure, &runs, p.summary.get(&primary.figure), &show_primary))
            p.note {
                (runs.len()) " run(s): "
                @for (i, v) in runs.iter().enumerate() {
                    @if i > 0 { ", " }
                    span title=(exact(*v)) { (show_primary(*v)) }
                }
            }
            (table(&figures_table(p), &format!("{id}-figures"), None))
            @if let Some(t) = latency_table(p) { (table(&t, &format!("{id}-latency"), None)) }
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
