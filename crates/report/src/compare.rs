//! Terminal tables for `xferbench ab` and `xferbench compare`.

use crate::format;
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use xferbench_lab::ab::{AbReport, AbSide};
use xferbench_lab::compare::Comparison;
use xferbench_lab::counters::name;

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.to_vec());
    for i in 1..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

fn secs(s: f64) -> String {
    format::nanos(s * 1e9)
}

/// `ab`: the original's table (benchmark, time with B, time with A, which is
/// faster, difference), the figures behind it, and the diagnosis.
pub fn render_ab(r: &AbReport) -> String {
    let mut out = String::new();
    let mut t = table(&[
        "benchmark",
        "time with B",
        "time with A",
        "which is faster",
        "difference",
    ]);
    let faster = match r.faster.as_str() {
        "A" => "A",
        "B" => "B",
        _ => "neither (noise)",
    };
    t.add_row(vec![
        "B vs A".to_string(),
        format!("{} ± {}", secs(r.b.mean_s), secs(r.b.sd_s)),
        format!("{} ± {}", secs(r.a.mean_s), secs(r.a.sd_s)),
        faster.to_string(),
        format!("{:+.1} %", r.difference * 100.0),
    ]);
    out.push_str(&t.to_string());
    out.push('\n');
    let mut d = table(&["", "A", "B"]);
    let row =
        |label: &str, f: &dyn Fn(&AbSide) -> String| vec![label.to_string(), f(&r.a), f(&r.b)];
    d.add_row(row("runs", &|s| s.runs.len().to_string()));
    d.add_row(row("CV of wall time", &|s| {
        format!("{:.1} %", s.cv * 100.0)
    }));
    d.add_row(row("CPUs utilised", &|s| format!("{:.2}", s.cpus_utilised)));
    d.add_row(row("instructions", &|s| {
        s.instructions().map_or("-".into(), |(i, src)| {
            format!("{} ({src})", format::count(i))
        })
    }));
    for (label, key) in [
        ("task-clock", name::TASK_CLOCK),
        ("context switches", name::CONTEXT_SWITCHES),
        ("page faults", name::PAGE_FAULTS),
        ("cycles", name::CYCLES),
        ("IPC", name::IPC),
        ("stalled cycles, front end", name::STALLED_FRONTEND),
        ("stalled cycles, back end", name::STALLED_BACKEND),
        ("cache misses", name::CACHE_MISSES),
        ("branch misses", name::BRANCH_MISSES),
    ] {
        if r.a.counters.contains_key(key) || r.b.counters.contains_key(key) {
            d.add_row(row(label, &|s| {
                s.counters.get(key).map_or("-".into(), |v| match key {
                    name::TASK_CLOCK => format::nanos(*v),
                    name::IPC => format!("{v:.2}"),
                    _ => format::count(*v),
                })
            }));
        }
    }
    if r.a.callgrind.is_some() {
        for k in ["D1mr", "D1mw", "DLmr", "DLmw", name::ESTIMATED_CYCLES] {
            d.add_row(row(&format!("{k} (simulated)"), &|s| {
                s.callgrind
                    .as_ref()
                    .and_then(|c| c.get(k))
                    .map_or("-".into(), |v| format::count(*v))
            }));
        }
    }
    out.push_str(&d.to_string());
    out.push('\n');
    out.push_str(&format!(
        "A: {}\nB: {}\np = {:.4} (Welch's t-test on wall time)\ndiagnosis: {}\n",
        r.a.command, r.b.command, r.p_value, r.diagnosis
    ));
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

/// `compare`: one row per matched point.
pub fn render_compare(c: &Comparison) -> String {
    let normalised = c.points.iter().any(|p| p.normalised.is_some());
    let mut header = vec![
        "point",
        "figure",
        "BASE mean",
        "NEW mean",
        "change of means",
        "p (Welch)",
        "verdict",
    ];
    if normalised {
        header.extend(["machine's limit moved", "change vs limit"]);
    }
    let mut t = table(&header);
    for p in &c.points {
        let point = p
            .params
            .iter()
            .filter(|(k, _)| k.as_str() != "workload")
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let fmt = |v: f64| {
            if p.figure.starts_with("latency") {
                format::nanos(v)
            } else {
                format::rate_bytes(v)
            }
        };
        let mut row = vec![
            point,
            p.figure.clone(),
            fmt(p.base),
            fmt(p.new),
            format!("{:+.1} %", p.change * 100.0),
            p.p_value.map_or("-".into(), |p| format!("{p:.3}")),
            p.verdict.clone(),
        ];
        if normalised {
            match &p.normalised {
                Some(n) => row.extend([
                    format!("{:+.1} % ({})", n.machine_change * 100.0, n.limit),
                    format!("{:+.1} %", n.change * 100.0),
                ]),
                None => row.extend(["-".into(), "-".into()]),
            }
        }
        t.add_row(row);
    }
    let mut out = t.to_string();
    out.push('\n');
    for p in &c.points {
        // A regression that the machine's own slow-down accounts for.
        if let Some(n) = &p.normalised
            && p.verdict == "regression"
            && n.change.abs() <= c.threshold
        {
            out.push_str(&format!(
                "note: {}: the machine was slower, not the code: the {} moved by {:+.1} % \
                 between the runs, and held against it the change is {:+.1} %\n",
                p.params
                    .iter()
                    .filter(|(k, _)| k.as_str() != "workload")
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                n.limit,
                n.machine_change * 100.0,
                n.change * 100.0
            ));
        }
    }
    for s in &c.only_in_base {
        out.push_str(&format!("only in BASE: {s}\n"));
    }
    for s in &c.only_in_new {
        out.push_str(&format!("only in NEW: {s}\n"));
    }
    out.push_str(&format!(
        "{} regression(s) beyond {:.1} % (significant at p < {})\n",
        c.regressions,
        c.threshold * 100.0,
        xferbench_lab::ab::ALPHA
    ));
    out
}
