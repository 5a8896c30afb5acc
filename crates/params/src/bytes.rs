//! Byte sizes: one syntax to read them, one way to show them.
//!
//! Read: a whole number with an optional unit, with or without a space: `64`,
//! `64B`, `4KiB`, `4 KiB`, `1MiB`, `1GiB`, `1TiB`; the short forms `K`, `M`, `G`, `T`
//! are binary as in iperf3 and fio (`2K` = 2048), while `kB`/`KB`, `MB`, `GB`, `TB`
//! are decimal.
//!
//! Shown: exactly, in the largest binary unit that divides the size (`64 KiB`,
//! `4 MiB`), else the largest decimal one (`1 MB`), else in bytes (`1500 B`). What
//! [`display`] prints, [`parse`] reads back to the same number.

/// Parses a byte count (see the module doc); `None` when it does not parse or
/// overflows.
pub fn parse(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    if digits.is_empty() {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "" | "B" | "b" => 1,
        "K" | "k" | "KiB" => 1 << 10,
        "KB" | "kB" => 1_000,
        "M" | "m" | "MiB" => 1 << 20,
        "MB" => 1_000_000,
        "G" | "g" | "GiB" => 1 << 30,
        "GB" => 1_000_000_000,
        "T" | "t" | "TiB" => 1 << 40,
        "TB" => 1_000_000_000_000,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// For text that fails to parse only because of the case of its unit (`64kb`,
/// `1mib`, `2GB` is fine), the two sizes it may mean, as [`parse`] reads them:
/// `did you mean 64kB (decimal) or 64KiB (binary)?`. `None` for anything else.
pub fn unit_case_hint(s: &str) -> Option<String> {
    let s = s.trim();
    if parse(s).is_some() {
        return None;
    }
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    if digits.is_empty() {
        return None;
    }
    let (decimal, binary) = match unit.trim().to_ascii_lowercase().as_str() {
        "kb" | "kib" => ("kB", "KiB"),
        "mb" | "mib" => ("MB", "MiB"),
        "gb" | "gib" => ("GB", "GiB"),
        "tb" | "tib" => ("TB", "TiB"),
        _ => return None,
    };
    Some(format!(
        "units are case-sensitive: did you mean {digits}{decimal} (decimal) or {digits}{binary} (binary)?"
    ))
}

const BINARY: [(u64, &str); 4] = [
    (1 << 40, "TiB"),
    (1 << 30, "GiB"),
    (1 << 20, "MiB"),
    (1 << 10, "KiB"),
];
const DECIMAL: [(u64, &str); 4] = [
    (1_000_000_000_000, "TB"),
    (1_000_000_000, "GB"),
    (1_000_000, "MB"),
    (1_000, "kB"),
];

/// A byte count the way people read it: `64 B`, `64 KiB`, `1 MB`, `1500 B`.
pub fn display(n: u64) -> String {
    if n > 0 {
        for table in [BINARY, DECIMAL] {
            if let Some((unit, name)) = table.iter().find(|(u, _)| n.is_multiple_of(*u)) {
                return format!("{} {name}", n / unit);
            }
        }
    }
    format!("{n} B")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_parse_binary_and_decimal_units_with_or_without_a_space() {
        assert_eq!(parse("64"), Some(64));
        assert_eq!(parse("64B"), Some(64));
        assert_eq!(parse("4KiB"), Some(4096));
        assert_eq!(parse("4 KiB"), Some(4096));
        assert_eq!(parse(" 2K "), Some(2048));
        assert_eq!(parse("1MiB"), Some(1 << 20));
        assert_eq!(parse("1MB"), Some(1_000_000));
        assert_eq!(parse("1kB"), Some(1_000));
        assert_eq!(parse("1 GiB"), Some(1 << 30));
        assert_eq!(parse("KiB"), None);
        assert_eq!(parse("12XB"), None);
        assert_eq!(parse("-1"), None);
        assert_eq!(parse("1.5MiB"), None);
        assert_eq!(parse("99999999999999999999G"), None);
    }

    #[test]
    fn a_unit_in_the_wrong_case_gets_both_readings() {
        assert_eq!(
            unit_case_hint("64kb").as_deref(),
            Some("units are case-sensitive: did you mean 64kB (decimal) or 64KiB (binary)?")
        );
        assert!(
            unit_case_hint("1 mib")
                .unwrap()
                .contains("1MB (decimal) or 1MiB (binary)")
        );
        assert!(unit_case_hint("2Gb").unwrap().contains("2GiB"));
        // Text that parses, or whose unit is no size unit in any case, gets none.
        assert_eq!(unit_case_hint("64kB"), None);
        assert_eq!(unit_case_hint("4KiB"), None);
        assert_eq!(unit_case_hint("12XB"), None);
        assert_eq!(unit_case_hint("kb"), None);
        assert_eq!(unit_case_hint("-1"), None);
    }

    #[test]
    fn sizes_show_in_the_largest_exact_unit() {
        assert_eq!(display(0), "0 B");
        assert_eq!(display(64), "64 B");
        assert_eq!(display(2048), "2 KiB");
        assert_eq!(display(65536), "64 KiB");
        assert_eq!(display(4 << 20), "4 MiB");
        assert_eq!(display(1 << 30), "1 GiB");
        assert_eq!(display(1_000_000), "1 MB");
        assert_eq!(display(3000), "3 kB");
        assert_eq!(display(1500), "1500 B");
        assert_eq!(display(496), "496 B");
    }

    proptest! {
        #[test]
        fn what_is_shown_reads_back(n in 0u64..(1 << 50)) {
            prop_assert_eq!(parse(&display(n)), Some(n));
        }
    }
}
