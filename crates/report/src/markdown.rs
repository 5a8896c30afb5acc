//! Markdown (`--export-md`): the context in a few lines, the same table as the
//! terminal's in GitHub-flavoured Markdown, and the warnings.

use crate::study::Table;
use crate::{Exporter, format};
use std::io::Write;
use xferbench_lab::axes;
use xferbench_lab::names::{CHANNELS, RATE, SIZE, TRANSPORT, WORKLOAD};
use xferbench_lab::result::{Outcome, ResultDoc, figure};

/// GitHub-flavoured Markdown.
#[derive(Debug, Default)]
pub struct Markdown;

impl Exporter for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }

    fn export(&self, doc: &ResultDoc, out: &mut dyn Write) -> std::io::Result<()> {
        let c = &doc.context;
        let s = &c.settings;
        writeln!(out, "# xferbench {} results\n", s.workload)?;
        writeln!(out, "- command: `{}`", c.command_line.join(" "))?;
        writeln!(
            out,
            "- host: {} — {} ({} CPUs), {} {}",
            c.hostname, c.cpu_model, c.cores, c.os, c.kernel
        )?;
        let length = match (s.count, s.duration_s) {
            (Some(n), _) => format!("{n} messages per channel"),
            (_, Some(d)) => format!("{d} s per channel"),
            _ => "?".into(),
        };
        writeln!(
            out,
            "- {} after {} warm-up, {length}, {} peers{}{}",
            crate::format::runs(s.runs),
            s.warmup,
            s.peer,
            if s.pin { ", pinned" } else { "" },
            if s.verify { ", verified" } else { "" }
        )?;
        writeln!(out, "- started {} (xferbench {})", c.start_time, c.version)?;
        if let Some(b) = crate::machine::build_line(c) {
            writeln!(out, "- build: {b}")?;
        }
        if let Some(l) = crate::machine::load_line(c) {
            writeln!(out, "- machine load: {l}")?;
        }
        if let Some(l) = &c.limits {
            writeln!(
                out,
                "- machine limits at the start: {} (below)",
                crate::limits::brief(&l.start)
            )?;
        }
        match &doc.outcome {
            Outcome::Complete => {}
            Outcome::Interrupted => {
                writeln!(out, "- **interrupted**: only the finished points are shown")?
            }
            Outcome::Failed { error } => writeln!(out, "- **failed**: {error}")?,
        }
        writeln!(out)?;
        let table = points_table(doc);
        writeln!(out, "| {} |", table.headers.join(" | "))?;
        let align: Vec<&str> = table
            .headers
            .iter()
            .map(|h| if h == TRANSPORT { ":--" } else { "--:" })
            .collect();
        writeln!(out, "| {} |", align.join(" | "))?;
        for row in &table.rows {
            writeln!(out, "| {} |", row.join(" | "))?;
        }
        let knees = format::knee_lines(doc);
        if !knees.is_empty() {
            writeln!(out, "\n## Knees\n")?;
            for k in knees {
                writeln!(out, "- {k}")?;
            }
        }
        write_counters(doc, out)?;
        if let Some(l) = &c.limits {
            write!(out, "{}", crate::limits::markdown(l))?;
        }
        let warnings: Vec<String> = doc
            .warnings
            .iter()
            .cloned()
            .chain(doc.points.iter().flat_map(|p| {
                p.warnings.iter().map(move |w| {
                    format!(
                        "point {} ({} {}): {w}",
                        p.index + 1,
                        p.param(&axes::TRANSPORT).unwrap_or_default(),
                        format::size(p.size_bytes)
                    )
                })
            }))
            .collect();
        if !warnings.is_empty() {
            writeln!(out, "\n## Warnings\n")?;
            for w in warnings {
                writeln!(out, "- {w}")?;
            }
        }
        Ok(())
    }
}

/// The points of a `run` as a table: the parameters, the primary figure (with the
/// interval of its median for throughput), message rate and CPU; shared by the
/// Markdown and HTML reports.
pub fn points_table(doc: &ResultDoc) -> Table {
    let open_loop = crate::format::load_points(doc);
    let pingpong = !open_loop && crate::format::latency_primary(doc);
    let mut extra: Vec<&str> = doc
        .points
        .iter()
        .flat_map(|p| p.params.keys().chain(p.chosen.keys()).map(String::as_str))
        .filter(|k| ![WORKLOAD, TRANSPORT, SIZE, CHANNELS].contains(k))
        .filter(|k| !(open_loop && *k == RATE))
        .collect();
    extra.sort();
    extra.dedup();
    let mut header = vec![TRANSPORT, SIZE, CHANNELS];
    header.extend(&extra);
    if open_loop {
        header.extend(format::LOAD_COLUMNS);
    } else if pingpong {
        header.extend(["p50", "p90", "p99", "p99.9", "max", "round trips/s"]);
    } else {
        header.extend([
            "throughput (median)",
            "interval of the median (level)",
            "spread",
            "messages/s",
        ]);
    }
    header.extend(["CPU main", "CPU peers"]);
    let limits = doc.points.iter().any(|p| p.limit.is_some());
    if limits {
        header.push("of limit");
    }
    let load = doc.points.iter().any(|p| p.contention.is_some());
    if load {
        header.push("others' CPU");
    }
    let mut rows = Vec::new();
    for p in &doc.points {
        let m = |name: &str| p.summary.get(name);
        let mut row = vec![
            p.params.get(TRANSPORT).cloned().unwrap_or_default(),
            format::size(p.size_bytes),
            p.channels.to_string(),
        ];
        row.extend(extra.iter().map(|k| {
            format::chosen(p, k)
                .or_else(|| p.params.get(*k).cloned())
                .unwrap_or_else(|| "-".into())
        }));
        let dash = || "-".to_string();
        if open_loop {
            row.extend(format::load_cells(p));
        } else if pingpong {
            for name in &figure::LATENCY[..5] {
                row.push(m(name).map_or_else(dash, |e| format::nanos(e.median)));
            }
            row.push(m(figure::MESSAGE_RATE).map_or_else(dash, |e| format::rate_count(e.median)));
        } else {
            let t = m(figure::THROUGHPUT);
            row.push(t.map_or_else(dash, |e| format::rate_bytes(e.median)));
            row.push(t.map_or_else(dash, |e| {
                format!(
                    "{} – {} ({:.1} %)",
                    format::rate_bytes(e.ci_low),
                    format::rate_bytes(e.ci_high),
                    e.ci_level * 100.0
                )
            }));
            row.push(t.map_or_else(dash, format::spread));
            row.push(m(figure::MESSAGE_RATE).map_or_else(dash, |e| format::rate_count(e.median)));
        }
        row.push(m(figure::CPU_MAIN).map_or_else(dash, |e| format!("{:.2}", e.median)));
        row.push(m(figure::CPU_PEERS).map_or_else(dash, |e| format!("{:.2}", e.median)));
        if limits {
            row.push(p.limit.as_ref().map_or_else(dash, |l| l.short()));
        }
        if load {
            row.push(crate::machine::others_cell(p.contention.as_ref()));
        }
        rows.push(row);
    }
    Table {
        title: String::new(),
        headers: header.into_iter().map(String::from).collect(),
        rows,
    }
}

/// A `## Counters` section: every counter of every process, medians over the runs.
fn write_counters(doc: &ResultDoc, out: &mut dyn Write) -> std::io::Result<()> {
    let with: Vec<_> = doc
        .points
        .iter()
        .filter_map(|p| Some((p, p.counters.as_ref()?)))
        .collect();
    if with.is_empty() {
        return Ok(());
    }
    writeln!(out, "\n## Counters\n")?;
    for (p, c) in with {
        writeln!(
            out,
            "### Point {} ({} {}, {} ch): {}{}\n",
            p.index,
            p.param(&axes::TRANSPORT).unwrap_or_default(),
            format::size(p.size_bytes),
            p.channels,
            c.source,
            if c.simulated { ", simulated" } else { "" }
        )?;
        writeln!(out, "Covers {}.", c.covers)?;
        if let Some(b) = format::counters_brief(p) {
            writeln!(out, "Per message: {b}.")?;
        }
        if !c.unsupported.is_empty() {
            writeln!(out, "Not supported here: {}.", c.unsupported.join(", "))?;
        }
        let names: Vec<&String> = c.total.keys().collect();
        let roles: Vec<&str> = c.processes.iter().map(|p| p.role.as_str()).collect();
        writeln!(out, "\n| counter | total | {} |", roles.join(" | "))?;
        writeln!(out, "| :-- | --: |{}", " --: |".repeat(roles.len()))?;
        for n in names {
            let fmt = |v: f64| {
                if n == xferbench_probes::counters::name::IPC {
                    format!("{v:.2}")
                } else {
                    format!("{v:.0}")
                }
            };
            let mut row = vec![n.clone(), fmt(c.total[n].median)];
            for pr in &c.processes {
                row.push(pr.values.get(n).map_or("-".into(), |e| fmt(e.median)));
            }
            writeln!(out, "| {} |", row.join(" | "))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn stream_markdown() {
        let mut buf = Vec::new();
        Markdown.export(&fixture::stream_doc(), &mut buf).unwrap();
        insta::assert_snapshot!(String::from_utf8(buf).unwrap());
    }

    #[test]
    fn stream_markdown_with_counters() {
        let mut buf = Vec::new();
        Markdown.export(&fixture::counters_doc(), &mut buf).unwrap();
        insta::assert_snapshot!(String::from_utf8(buf).unwrap());
    }

    #[test]
    fn pingpong_markdown() {
        let mut buf = Vec::new();
        Markdown.export(&fixture::pingpong_doc(), &mut buf).unwrap();
        insta::assert_snapshot!(String::from_utf8(buf).unwrap());
    }
}
