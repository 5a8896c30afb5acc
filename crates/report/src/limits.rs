//! The machine's limits: the `xferbench limits` table, the Markdown section of a
//! result, and the sentences studies use to hold a figure against its limit.

use crate::format;
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use xferbench_lab::limits::{LimitRow, Limits, MachineLimits};
use xferbench_probes::stats::Estimate;

fn value(unit: &str, v: f64) -> String {
    format::limit_value(unit, v)
}

fn spread(row: &LimitRow<'_>) -> String {
    let e: &Estimate = row.estimate;
    format!("{} – {}", value(row.unit, e.min), value(row.unit, e.max))
}

/// The `xferbench limits` table: each probe's median, range and robust spread.
pub fn render(limits: &Limits) -> String {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(vec!["limit", "median", "min – max", "±", "samples"]);
    for i in 1..5 {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    for row in limits.rows() {
        t.add_row(vec![
            row.name.clone(),
            value(row.unit, row.estimate.median),
            spread(&row),
            format::spread(row.estimate),
            row.estimate.n.to_string(),
        ]);
    }
    t.to_string()
}

/// A `## Machine limits` Markdown section: the start and end medians side by side.
pub fn markdown(m: &MachineLimits) -> String {
    let mut s = String::from("\n## Machine limits\n\n");
    s.push_str(&format!(
        "Measured by xferbench at the start and the end ({:?} set; `xferbench limits` measures \
         the full one). A point whose probes moved by more than {:.0} % while it ran carries \
         a \"machine changed\" warning.\n\n",
        m.start.depth,
        m.drift_threshold * 100.0
    ));
    s.push_str("| limit | start | end |\n| :-- | --: | --: |\n");
    let end_rows = m.end.as_ref().map(|e| e.rows());
    for row in m.start.rows() {
        let end = end_rows
            .as_ref()
            .and_then(|rows| rows.iter().find(|r| r.name == row.name))
            .map_or_else(|| "-".into(), |r| value(r.unit, r.estimate.median));
        s.push_str(&format!(
            "| {} | {} | {} |\n",
            row.name,
            value(row.unit, row.estimate.median),
            end
        ));
    }
    let findings = m.start.findings();
    if !findings.is_empty() {
        s.push('\n');
        for f in findings {
            s.push_str(&format!(
                "- finding: {f} (a slow path of this machine's memcpy; the workloads' buffers \
                 start on a page and avoid it)\n"
            ));
        }
    }
    s
}

/// The limit in one line for a context block: `memcpy 64 KiB 29.1 GB/s, stream floor
/// 64 KiB 12.0 GB/s, cache-line round trip 190 ns, futex wake round trip 14.2 µs, pipe
/// round trip 13.0 µs` (the stream floor where it was measured).
pub fn brief(limits: &Limits) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(c) = limits.memcpy_near(64 << 10) {
        parts.push(format!(
            "memcpy {} {}",
            xferbench_lab::limits::size_words(c.size_bytes),
            format::rate_bytes(c.bytes_per_s.median)
        ));
    }
    if let Some(f) = limits.stream_near(64 << 10, false) {
        parts.push(format!(
            "{} {}",
            f.name(),
            format::rate_bytes(f.bytes_per_s.median)
        ));
    }
    for (name, e) in [
        ("cache-line round trip", &limits.cache_line_rtt_ns),
        ("futex wake round trip", &limits.futex_rtt_cross_ns),
        ("pipe round trip", &limits.pipe_rtt_ns),
    ] {
        if let Some(e) = e {
            parts.push(format!("{name} {}", format::nanos(e.median)));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn the_table_lists_every_probe_with_units() {
        let l = fixture::limits();
        let t = render(&l);
        for needle in [
            "memcpy 4 KiB",
            "memcpy 64 MiB",
            "10.0 GB/s",
            "cache-line round trip, CPU 0 ↔ 1",
            "futex wake round trip, CPU 0 ↔ 0",
            "pipe round trip",
            "system call (getppid)",
            "200 ns",
            "20.0 µs",
        ] {
            assert!(t.contains(needle), "{needle} missing from\n{t}");
        }
    }

    #[test]
    fn the_markdown_section_shows_start_and_end() {
        let mut end = fixture::limits();
        end.futex_rtt_cross_ns = Some(Estimate::from_values([60e3]).unwrap());
        let m = MachineLimits {
            start: fixture::limits(),
            end: Some(end),
            drift_threshold: 0.25,
        };
        let md = markdown(&m);
        assert!(
            md.contains("| futex wake round trip, CPU 0 ↔ 1 | 20.0 µs | 60.0 µs |"),
            "{md}"
        );
        assert!(
            md.contains("| memcpy 64 KiB at dst−src ≡ 16 (mod 4096) | 500 MB/s | 500 MB/s |"),
            "{md}"
        );
        assert!(
            md.contains(
                "- finding: memcpy 64 KiB at dst−src ≡ 16 (mod 4096): 0.50 GB/s, 20.0× below aligned"
            ),
            "{md}"
        );
        assert!(md.contains("25 %"), "{md}");
    }

    #[test]
    fn the_brief_line_names_the_main_limits() {
        let b = brief(&fixture::limits());
        assert_eq!(
            b,
            "memcpy 64 KiB 10.0 GB/s, cache-line round trip 200 ns, futex wake round trip 20.0 µs, pipe round trip 25.0 µs"
        );
    }

    #[test]
    fn a_stream_is_shown_against_its_floor_with_memcpy_beside_it() {
        use xferbench_lab::limits::StreamLimit;
        let mut limits = fixture::limits();
        limits.stream_floor = [(false, 8e9), (true, 16e9)]
            .map(|(in_place, rate)| StreamLimit {
                size_bytes: 64 << 10,
                in_place,
                ring_bytes: 4 << 20,
                bytes_per_s: Estimate::from_values([rate]).unwrap(),
            })
            .to_vec();
        assert!(
            brief(&limits).starts_with("memcpy 64 KiB 10.0 GB/s, stream floor 64 KiB 8.00 GB/s"),
            "{}",
            brief(&limits)
        );
        let t = render(&limits);
        assert!(
            t.contains("stream floor 64 KiB in place, 4 MiB ring, CPU 0 → 1"),
            "{t}"
        );
        let mut doc = fixture::stream_doc();
        for p in &mut doc.points {
            p.limit = xferbench_lab::ratio::fraction(
                &p.params,
                p.size_bytes,
                p.channels,
                &p.summary,
                &limits,
            );
        }
        // The 64 KiB pipe stream at 1.6 GB/s: 20 % of the copied floor, 16 % of memcpy.
        let f = doc.points[1].limit.clone().unwrap();
        assert_eq!(
            f.short(),
            "20 % of stream floor 64 KiB; memcpy 64 KiB (one CPU, hot): 16 %"
        );
        let table = crate::table::render(&doc, false);
        assert!(table.contains("memcpy 64 KiB (one CPU, hot)"), "{table}");
    }

    #[test]
    fn every_format_shows_each_points_fraction_of_its_limit() {
        use crate::Exporter;
        let mut doc = fixture::stream_doc();
        doc.context.limits = Some(MachineLimits {
            start: fixture::limits(),
            end: None,
            drift_threshold: 0.25,
        });
        for p in &mut doc.points {
            p.limit = xferbench_lab::ratio::fraction(
                &p.params,
                p.size_bytes,
                p.channels,
                &p.summary,
                &fixture::limits(),
            );
        }
        let first = doc.points[0]
            .limit
            .clone()
            .expect("a stream point has a limit");
        let table = crate::table::render(&doc, false);
        assert!(
            table.contains("of limit") && table.contains(&first.short()),
            "{table}"
        );
        let mut md = Vec::new();
        crate::markdown::Markdown.export(&doc, &mut md).unwrap();
        let md = String::from_utf8(md).unwrap();
        assert!(
            md.contains("| of limit |") && md.contains(&first.short()),
            "{md}"
        );
        assert!(md.contains("## Machine limits") && md.contains("machine limits at the start"));
        let mut csv = Vec::new();
        crate::csv::Csv.export(&doc, &mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        assert!(
            csv.lines().next().unwrap().contains("limit_fraction"),
            "{csv}"
        );
        assert!(csv.contains(&first.fraction.to_string()), "{csv}");
    }

    /// BASE as measured; NEW with every throughput and the machine's memcpy scaled by
    /// `code` and `machine`.
    fn slower(
        code: f64,
        machine: f64,
    ) -> (
        xferbench_lab::result::ResultDoc,
        xferbench_lab::result::ResultDoc,
    ) {
        let with_limits = |scale: f64, code: f64| {
            let mut doc = fixture::stream_doc();
            let mut l = fixture::limits();
            for c in &mut l.memcpy {
                c.bytes_per_s.median *= scale;
            }
            for p in &mut doc.points {
                for r in &mut p.runs {
                    *r.figures
                        .get_mut(xferbench_lab::result::figure::THROUGHPUT)
                        .unwrap() *= code;
                }
                p.summary
                    .get_mut(xferbench_lab::result::figure::THROUGHPUT)
                    .unwrap()
                    .median *= code;
                p.limit = xferbench_lab::ratio::fraction(
                    &p.params,
                    p.size_bytes,
                    p.channels,
                    &p.summary,
                    &l,
                );
            }
            doc.context.limits = Some(MachineLimits {
                start: l,
                end: None,
                drift_threshold: 0.25,
            });
            doc
        };
        (with_limits(1.0, 1.0), with_limits(machine, code))
    }

    #[test]
    fn compare_tells_a_slower_machine_from_slower_code() {
        // The machine's memcpy and the figures both halve: a raw regression that the
        // limit accounts for.
        let (base, new) = slower(0.5, 0.5);
        let c = xferbench_lab::compare::compare_docs(&base, &new, 0.05).unwrap();
        let p = &c.points[0];
        assert_eq!(p.verdict, "regression");
        let n = p.normalised.as_ref().expect("both sides carry limits");
        assert!((n.machine_change + 0.5).abs() < 1e-9, "{n:?}");
        assert!(n.change.abs() < 1e-9, "{n:?}");
        let text = crate::compare::render_compare(&c);
        assert!(text.contains("change vs limit"), "{text}");
        assert!(
            text.contains("the machine was slower, not the code"),
            "{text}"
        );
        // The code halves on a steady machine: the normalised change says so too.
        let (base, new) = slower(0.5, 1.0);
        let c = xferbench_lab::compare::compare_docs(&base, &new, 0.05).unwrap();
        let n = c.points[0].normalised.as_ref().unwrap();
        assert!((n.change + 0.5).abs() < 1e-9, "{n:?}");
        assert!(!crate::compare::render_compare(&c).contains("the machine was slower"));
    }

    #[test]
    fn compare_without_limits_on_one_side_shows_raw_changes_only() {
        let (base, mut new) = slower(0.5, 0.5);
        new.context.limits = None;
        new.points.iter_mut().for_each(|p| p.limit = None);
        let c = xferbench_lab::compare::compare_docs(&base, &new, 0.05).unwrap();
        assert!(c.points.iter().all(|p| p.normalised.is_none()));
        assert!(!crate::compare::render_compare(&c).contains("change vs limit"));
    }
}
