//! Rates, events per second, as people write them: `250000`, `10k`, `2.5M`, `1G`
//! (decimal SI prefixes `k`, `M`, `G`; a fraction only with a prefix), and as they
//! are shown: the shortest of these that is exact (`250k`, `1.5M`, `999`).

/// Reads a rate; `None` for anything else (a negative or zero-free form is left to
/// the definition's bounds).
pub fn parse(text: &str) -> Option<i64> {
    let t = text.trim();
    let (number, scale) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 1_000.0),
        (i, 'M') => (&t[..i], 1_000_000.0),
        (i, 'G') => (&t[..i], 1_000_000_000.0),
        _ => return t.parse().ok(),
    };
    let number = number.trim();
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let v: f64 = number.parse().ok()?;
    let scaled = (v * scale).round();
    (scaled.is_finite() && scaled <= i64::MAX as f64).then_some(scaled as i64)
}

/// A rate the way people read it: `250k`, `1.5M`, `999`; exact, or as a plain
/// number when no prefix writes it exactly in four digits.
pub fn display(n: i64) -> String {
    for (scale, prefix) in [(1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")] {
        if n.unsigned_abs() >= scale as u64 {
            let whole = n / scale;
            let rest = (n % scale).unsigned_abs();
            if rest == 0 {
                return format!("{whole}{prefix}");
            }
            // Up to three decimals, when they are exact.
            for decimals in 1..=3u32 {
                let unit = scale as u64 / 10u64.pow(decimals);
                if unit > 0 && rest.is_multiple_of(unit) {
                    let frac = rest / unit;
                    return format!("{whole}.{frac:0width$}{prefix}", width = decimals as usize);
                }
            }
            return n.to_string();
        }
    }
    n.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_with_and_without_prefixes() {
        assert_eq!(parse("250000"), Some(250_000));
        assert_eq!(parse("10k"), Some(10_000));
        assert_eq!(parse("10K"), Some(10_000));
        assert_eq!(parse("2.5M"), Some(2_500_000));
        assert_eq!(parse("1G"), Some(1_000_000_000));
        assert_eq!(parse(" 1M "), Some(1_000_000));
        assert_eq!(parse("-5"), Some(-5));
        for bad in ["fast", "", "k", "1.5", "1e3", "-1k", "1m", "1..2k", "10kk"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn rates_show_exactly_and_read_back() {
        for (n, shown) in [
            (999, "999"),
            (1_000, "1k"),
            (1_500, "1.5k"),
            (250_000, "250k"),
            (1_234_567, "1234567"),
            (2_500_000, "2.5M"),
            (1_000_000_000, "1G"),
            (12_345, "12.345k"),
        ] {
            assert_eq!(display(n), shown);
            assert_eq!(parse(shown), Some(n));
        }
    }
}
