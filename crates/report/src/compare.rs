//! Terminal tables for `xferbench ab` and `xferbench compare`.

use crate::format;
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use xferbench_lab::ab::stalls::{self, EventComparison};
use xferbench_lab::ab::{AbReport, AbSide};
use xferbench_lab::compare::Comparison;
use xferbench_probes::counters::name;

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

/// `ab`: the original's table (benchmark, time with A, time with B, which is
/// faster, difference), the figures behind it, and the diagnosis; A always before B.
pub fn render_ab(r: &AbReport) -> String {
    let mut out = String::new();
    let mut t = table(&[
        "benchmark",
        "time with A",
        "time with B",
        "which is faster",
        "difference",
    ]);
    let faster = match r.verdict.faster.as_str() {
        "A" => "A",
        "B" => "B",
        _ => "neither (noise)",
    };
    t.add_row(vec![
        "A → B".to_string(),
        format!("{} ± {}", secs(r.a.mean_s), secs(r.a.sd_s)),
        format!("{} ± {}", secs(r.b.mean_s), secs(r.b.sd_s)),
        faster.to_string(),
        format!("{:+.1} %", r.verdict.difference * 100.0),
    ]);
    out.push_str(&t.to_string());
    out.push('\n');
    out.push_str(&default_block(r).to_string());
    out.push('\n');
    for (title, c) in [
        ("named events (perf stat)", &r.verdict.events),
        (
            "stall search: stall|penalty|miss events ranked by B/A",
            &r.verdict.search,
        ),
    ] {
        if let Some(c) = c {
            out.push_str(&format!("{title}, mean of {} run(s) each:\n", c.rounds));
            out.push_str(&events_table(c, 15).to_string());
            out.push('\n');
        }
    }
    out.push_str(&format!(
        "A: {}\nB: {}\np = {:.4} (Welch's t-test on wall time)\ndiagnosis: {}\n",
        r.a.command, r.b.command, r.verdict.p_value, r.verdict.diagnosis
    ));
    for n in &r.verdict.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

/// The figures behind the verdict, shaped like `perf stat`'s default block: every
/// row always, `not supported` where a counter could not be opened here.
pub fn default_block(r: &AbReport) -> Table {
    let mut d = table(&["", "A", "B"]);
    let unsupported = |k: &str| r.verdict.unsupported.iter().any(|u| u == k);
    let get = |s: &AbSide, k: &str| s.counters.get(k).copied();
    let missing = |keys: &[&str]| {
        if keys.iter().any(|k| unsupported(k)) {
            "not supported".to_string()
        } else {
            "-".to_string()
        }
    };
    let row =
        |label: &str, f: &dyn Fn(&AbSide) -> String| vec![label.to_string(), f(&r.a), f(&r.b)];
    d.add_row(row("runs", &|s| s.runs.len().to_string()));
    d.add_row(row("CV of wall time", &|s| {
        format!("{:.1} %", s.cv * 100.0)
    }));
    d.add_row(row("CPUs utilised", &|s| format!("{:.3}", s.cpus_utilised)));
    d.add_row(row("user", &|s| secs(s.user_s)));
    d.add_row(row("sys", &|s| secs(s.sys_s)));
    let counter = |key: &'static str, show: fn(f64) -> String| {
        move |s: &AbSide| get(s, key).map_or_else(|| missing(&[key]), show)
    };
    d.add_row(row("task-clock", &counter(name::TASK_CLOCK, format::nanos)));
    d.add_row(row(
        "context switches",
        &counter(name::CONTEXT_SWITCHES, format::count),
    ));
    d.add_row(row(
        "cpu-migrations",
        &counter(name::CPU_MIGRATIONS, format::count),
    ));
    d.add_row(row(
        "page faults",
        &counter(name::PAGE_FAULTS, format::count),
    ));
    d.add_row(row("cycles", &counter(name::CYCLES, format::count)));
    d.add_row(row("GHz (cycles / task-clock)", &|s| match (
        get(s, name::CYCLES),
        get(s, name::TASK_CLOCK),
    ) {
        (Some(c), Some(t)) if t > 0.0 => format!("{:.3}", c / t),
        _ => missing(&[name::CYCLES]),
    }));
    d.add_row(row(
        "stalled cycles, front end",
        &counter(name::STALLED_FRONTEND, format::count),
    ));
    d.add_row(row(
        "stalled cycles, back end",
        &counter(name::STALLED_BACKEND, format::count),
    ));
    d.add_row(row("instructions", &|s| {
        s.instructions().map_or_else(
            || missing(&[name::INSTRUCTIONS]),
            |(i, src)| format!("{} ({src})", format::count(i)),
        )
    }));
    d.add_row(row("IPC", &|s| {
        get(s, name::IPC).map_or_else(|| missing(&[name::CYCLES]), |v| format!("{v:.2}"))
    }));
    d.add_row(row("stalled cycles per insn", &|s| {
        let stalled = get(s, name::STALLED_FRONTEND)
            .into_iter()
            .chain(get(s, name::STALLED_BACKEND))
            .reduce(f64::max);
        match (stalled, get(s, name::INSTRUCTIONS)) {
            (Some(st), Some(i)) if i > 0.0 => format!("{:.2}", st / i),
            _ => missing(&[name::STALLED_FRONTEND, name::INSTRUCTIONS]),
        }
    }));
    d.add_row(row("branches", &counter(name::BRANCHES, format::count)));
    d.add_row(row(
        "branch misses",
        &counter(name::BRANCH_MISSES, format::count),
    ));
    d.add_row(row(
        "branch-miss %",
        &|s| match (get(s, name::BRANCH_MISSES), get(s, name::BRANCHES)) {
            (Some(m), Some(b)) if b > 0.0 => format!("{:.2} %", m / b * 100.0),
            _ => missing(&[name::BRANCHES]),
        },
    ));
    d.add_row(row(
        "cache misses",
        &counter(name::CACHE_MISSES, format::count),
    ));
    if r.a.callgrind.is_some() {
        for k in [
            "D1mr",
            "D1mw",
            "DLmr",
            "DLmw",
            "I1mr",
            name::ESTIMATED_CYCLES,
        ] {
            d.add_row(row(&format!("{k} (simulated)"), &|s| {
                s.callgrind
                    .as_ref()
                    .and_then(|c| c.get(k))
                    .map_or("-".into(), |v| format::count(*v))
            }));
        }
    }
    d
}

/// Events counted by `perf stat` on A and B: at most `limit` rows.
pub fn events_table(c: &EventComparison, limit: usize) -> Table {
    let mut t = table(&["event", "A", "B", "B/A", "counted", "likely cause"]);
    for r in c.rows.iter().take(limit) {
        let v = |x: Option<f64>| x.map_or_else(|| r.status.clone(), format::count);
        t.add_row(vec![
            r.event.clone(),
            v(r.a),
            v(r.b),
            r.ratio.map_or("-".into(), stalls::ratio_text),
            match (r.status.as_str(), r.running_pct) {
                ("multiplexed", Some(p)) => format!("{p:.0} % of the time"),
                (s, _) => s.to_string(),
            },
            r.cause.clone(),
        ]);
    }
    if c.rows.len() > limit {
        t.add_row(vec![
            format!("… {} more", c.rows.len() - limit),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ]);
    }
    for u in &c.unknown {
        t.add_row(vec![
            u.clone(),
            "-".into(),
            "-".into(),
            "-".into(),
            "unknown to perf here".into(),
            String::new(),
        ]);
    }
    t
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
        let point = xferbench_lab::params::describe(&p.params);
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
                xferbench_lab::params::describe(&p.params),
                n.limit,
                n.machine_change * 100.0,
                n.change * 100.0
            ));
        }
    }
    for s in &c.cautions {
        out.push_str(&format!("caution: {s}\n"));
    }
    for s in &c.plugin_builds {
        out.push_str(&format!("note: {s}\n"));
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

#[cfg(test)]
mod tests {
    use crate::fixture;
    use xferbench_lab::compare::compare_docs;
    use xferbench_lab::result::Outcome;

    #[test]
    fn a_contended_or_cut_short_side_is_named_beside_the_verdicts() {
        // BASE quiet throughout; NEW measured its second point beside a compiler and
        // was interrupted.
        let mut base = fixture::contended_doc();
        base.points[1].contention = base.points[0].contention.clone();
        let mut new = fixture::contended_doc();
        new.outcome = Outcome::Interrupted;
        let c = compare_docs(&base, &new, 0.05).unwrap();
        assert_eq!(c.cautions.len(), 2, "{:?}", c.cautions);
        assert!(
            c.cautions[0].starts_with(
                "NEW was interrupted: it holds only the points that finished (2 of them)"
            ),
            "{:?}",
            c.cautions
        );
        let second = xferbench_lab::params::describe(&new.points[1].params);
        assert!(
            c.cautions[1].starts_with(&format!(
                "{second}: measured contended, NEW while processes outside the run used 1.85 CPUs"
            )),
            "{:?}",
            c.cautions
        );
        assert!(c.cautions[1].contains("measure again on a quiet one"));
        let text = super::render_compare(&c);
        assert!(text.contains("caution: NEW was interrupted"), "{text}");
        assert!(
            text.contains("caution: ") && text.contains("1.85 CPUs"),
            "{text}"
        );

        // Two complete, quiet documents carry no caution.
        let c = compare_docs(&base, &base, 0.05).unwrap();
        assert!(c.cautions.is_empty(), "{:?}", c.cautions);
        assert!(!super::render_compare(&c).contains("caution:"));
    }
}
