//! Tables for the HTML report: a [`Table`] as an HTML `<table class="sortable">`.
//! Each cell that reads as a number (with a unit such as `kB/s`, `µs` or `KiB`) carries
//! that number in a `data-v` attribute, so the page's script sorts by value rather than
//! by text.

use crate::study::{ColumnUnit, Table};
use maud::{Markup, html};

/// A number of `cell` at the start of `s`: digits with an optional sign, point and
/// exponent; the rest after it.
fn leading_number(s: &str) -> Option<(f64, &str)> {
    let end = s
        .char_indices()
        .find(|&(i, ch)| {
            !(ch.is_ascii_digit()
                || ch == '.'
                || ((ch == '-' || ch == '+') && i == 0)
                || ((ch == 'e' || ch == 'E') && i > 0))
        })
        .map_or(s.len(), |(i, _)| i);
    let v: f64 = s[..end].parse().ok()?;
    v.is_finite().then_some((v, &s[end..]))
}

/// A cell of a column of `unit` written in it: a bare number (`489600`), or one with
/// the interval the study tables give (`489600 [480000–499200, 75 %]`), becomes
/// `489.6 kB/s` or `489.6 kB/s [480.0 kB/s–499.2 kB/s, 75 %]`, and one with a spread
/// (`1.25 ± 0.03`) both sides in the unit; any other cell (`-`,
/// `not measured`, a number followed by other text) is kept as it is.
pub fn in_unit(cell: &str, unit: &ColumnUnit) -> String {
    let show = |v: f64| unit.unit.value(v * unit.scale);
    let c = cell.trim();
    let Some((v, rest)) = leading_number(c) else {
        return cell.to_string();
    };
    if rest.is_empty() {
        return show(v);
    }
    // ` ± sd`
    if let Some((sd, "")) = rest.strip_prefix(" ± ").and_then(leading_number) {
        return format!("{} ± {}", show(v), show(sd));
    }
    // ` [low–high, level %]`
    let interval = rest
        .strip_prefix(" [")
        .and_then(|r| r.strip_suffix(" %]"))
        .and_then(|r| {
            let (range, level) = r.split_once(", ")?;
            let (lo, hi) = range.split_once('–')?;
            let (lo, hi) = (leading_number(lo)?, leading_number(hi)?);
            (lo.1.is_empty() && hi.1.is_empty() && leading_number(level)?.1.is_empty())
                .then_some((lo.0, hi.0, level))
        });
    match interval {
        Some((lo, hi, level)) => format!("{} [{}–{}, {level} %]", show(v), show(lo), show(hi)),
        None => cell.to_string(),
    }
}

/// `t` with each column that has a unit in `units` written in it ([`in_unit`]); its
/// header unchanged.
pub fn with_units(t: &Table, units: &[ColumnUnit]) -> Table {
    let mut out = t.clone();
    for u in units {
        let Some(i) = t.headers.iter().position(|h| *h == u.column) else {
            continue;
        };
        for row in &mut out.rows {
            if let Some(cell) = row.get_mut(i) {
                *cell = in_unit(cell, u);
            }
        }
    }
    out
}

/// The value of a cell for sorting: its leading number scaled by the unit after it
/// (`1.5 kB/s` → 1500, `2 KiB` → 2048, `12 µs` → 1.2e-5, `±3.1%` → 3.1).
pub fn sort_key(cell: &str) -> Option<f64> {
    let c = cell.trim().trim_start_matches('±');
    let end = c
        .char_indices()
        .find(|&(i, ch)| {
            !(ch.is_ascii_digit()
                || ch == '.'
                || ch == ','
                || ((ch == '-' || ch == '+') && i == 0)
                || ((ch == 'e' || ch == 'E')
                    && i > 0
                    && c[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-')))
        })
        .map_or(c.len(), |(i, _)| i);
    let v: f64 = c[..end].replace(',', "").parse().ok()?;
    let rest = c[end..].trim_start();
    let binary = rest.get(1..3) == Some("iB");
    let scale = match rest.chars().next() {
        Some('k' | 'K') if binary => 1024.0,
        Some('M') if binary => 1024.0 * 1024.0,
        Some('G') if binary => 1024.0 * 1024.0 * 1024.0,
        Some('k' | 'K') => 1e3,
        Some('M') => 1e6,
        Some('G') => 1e9,
        Some('T') => 1e12,
        Some('µ' | 'u') if rest.len() > 1 => 1e-6,
        Some('m') if rest.starts_with("ms") => 1e-3,
        Some('n') if rest.starts_with("ns") => 1e-9,
        _ => 1.0,
    };
    v.is_finite().then_some(v * scale)
}

/// The cell as shown: a number and its unit never split across lines (`4 KiB`,
/// `75.0 %`): the space after a digit is a no-break space.
pub fn keep_units(cell: &str) -> String {
    let mut out = String::with_capacity(cell.len());
    let mut after_digit = false;
    for c in cell.chars() {
        out.push(if c == ' ' && after_digit { '\u{a0}' } else { c });
        after_digit = c.is_ascii_digit();
    }
    out
}

/// A sortable table with its caption; `first_links` (one per row) turns each row's
/// first cell into a link to that anchor.
pub fn table(t: &Table, id: &str, first_links: Option<&[String]>) -> Markup {
    let width = t
        .rows
        .iter()
        .map(Vec::len)
        .max()
        .unwrap_or(0)
        .max(t.headers.len());
    html! {
        div.table-wrap {
            table.sortable id=(id) {
                @if !t.title.is_empty() { caption { (t.title) } }
                thead {
                    tr {
                        @for i in 0..width {
                            th scope="col" {
                                button type="button" { (t.headers.get(i).map_or("", String::as_str)) }
                            }
                        }
                    }
                }
                tbody {
                    @for (r, row) in t.rows.iter().enumerate() {
                        tr {
                            @for i in 0..width {
                                @let raw = row.get(i).map_or("", String::as_str);
                                @let cell = keep_units(raw);
                                @let link = first_links.filter(|_| i == 0).and_then(|l| l.get(r));
                                @match sort_key(raw) {
                                    // Long cells (an interval, a share of a limit) may wrap
                                    // where the page's style allows it.
                                    Some(v) => td.num.long[raw.chars().count() > 14] data-v=(v) {
                                        @if let Some(href) = link { a href={"#" (href)} { (cell) } } @else { (cell) }
                                    },
                                    None => td {
                                        @if let Some(href) = link { a href={"#" (href)} { (cell) } } @else { (cell) }
                                    },
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_sort_by_their_value_in_their_unit() {
        assert_eq!(sort_key("1.5 kB/s"), Some(1500.0));
        assert_eq!(sort_key("2 KiB"), Some(2048.0));
        assert_eq!(sort_key("12 µs"), Some(12e-6));
        assert_eq!(sort_key("3.2 GB/s"), Some(3.2e9));
        assert_eq!(sort_key("±3.1%"), Some(3.1));
        assert_eq!(sort_key("1,024"), Some(1024.0));
        assert_eq!(sort_key("-4 %"), Some(-4.0));
        assert_eq!(sort_key("12.5 [11.0–13.0, 75 %]"), Some(12.5));
        assert_eq!(sort_key("1e5"), Some(1e5));
        assert_eq!(sort_key("shm"), None);
        assert_eq!(sort_key("-"), None);
        assert_eq!(sort_key("8ch×1B"), Some(8.0));
    }

    #[test]
    fn numbers_keep_their_units_on_one_line() {
        assert_eq!(
            keep_units("2.9 % of memcpy 4 KiB"),
            "2.9\u{a0}% of memcpy 4\u{a0}KiB"
        );
        assert_eq!(keep_units("shm a b"), "shm a b");
    }

    #[test]
    fn a_column_with_a_unit_is_written_in_it_as_the_terminal_does() {
        use crate::chart::Unit;
        let rate = ColumnUnit::new("speed", Unit::BytesPerSecond);
        assert_eq!(
            in_unit("489600", &rate),
            crate::format::rate_bytes(489600.0)
        );
        assert_eq!(
            in_unit("489600 [480000–499200, 75 %]", &rate),
            format!(
                "{} [{}–{}, 75 %]",
                crate::format::rate_bytes(489600.0),
                crate::format::rate_bytes(480000.0),
                crate::format::rate_bytes(499200.0)
            )
        );
        let mb = ColumnUnit::new("per board", Unit::BytesPerSecond).scaled(1e6);
        assert_eq!(in_unit("624.8", &mb), crate::format::rate_bytes(624.8e6));
        let us = ColumnUnit::new("p50 µs", Unit::Microseconds);
        assert_eq!(in_unit("67.0", &us), crate::format::nanos(67e3));
        let s = ColumnUnit::new("time (s)", Unit::Seconds);
        assert_eq!(
            in_unit("1.250 ± 0.030", &s),
            format!(
                "{} ± {}",
                crate::format::nanos(1.25e9),
                crate::format::nanos(0.03e9)
            )
        );
        for kept in ["-", "not measured", "12 (seed)", "1.0 [x]", "1.0 ± x", ""] {
            assert_eq!(in_unit(kept, &rate), kept);
        }
        let t = Table {
            title: String::new(),
            headers: vec!["size".into(), "speed".into()],
            rows: vec![vec!["64".into(), "1000".into()]],
        };
        let w = with_units(&t, &[rate, ColumnUnit::new("absent", Unit::Bytes)]);
        assert_eq!(w.headers, t.headers);
        assert_eq!(w.rows[0], ["64", "1.00 kB/s"]);
    }

    #[test]
    fn cells_are_escaped() {
        let t = Table {
            title: "<b>t</b>".into(),
            headers: vec!["a\"".into(), "b".into()],
            rows: vec![vec!["<script>alert(1)</script>".into(), "2 MB/s".into()]],
        };
        let h = table(&t, "t", Some(&["p&1".to_string()])).into_string();
        assert!(!h.contains("<script>") && !h.contains("<b>"), "{h}");
        assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(h.contains("href=\"#p&amp;1\""));
        assert!(h.contains("data-v=\"2000000\""));
    }
}
