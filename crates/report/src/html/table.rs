//! Tables for the HTML report: a [`Table`] as an HTML `<table class="sortable">`.
//! Each cell that reads as a number (with a unit such as `kB/s`, `µs` or `KiB`) carries
//! that number in a `data-v` attribute, so the page's script sorts by value rather than
//! by text.

use crate::study::Table;
use maud::{Markup, html};

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
