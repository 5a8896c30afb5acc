//! Durations: one syntax to read them, one way to show them.
//!
//! Read: a number with a unit, with or without a space — `100ns`, `10us` (or `µs`),
//! `250ms`, `1s`, `1.5s`, `2m` (or `min`), `1h` — or a bare number of seconds
//! (`0.25`).
//!
//! Shown: exactly, in the largest unit that divides it (`250 ms`, `1 s`, `2 min`,
//! `10 µs`). What [`display`] prints, [`parse`] reads back.

use std::time::Duration;

/// Parses a duration (see the module doc); `None` when it does not parse, is
/// negative, not finite or too long to hold.
pub fn parse(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    if number.is_empty() || number.starts_with('.') {
        return None;
    }
    let x: f64 = number.parse().ok()?;
    let seconds_per_unit: f64 = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    // Whole numbers of a unit are exact; fractions are rounded to the nanosecond.
    if let Ok(whole) = number.parse::<u64>() {
        let ns_per_unit = (seconds_per_unit * 1e9).round() as u64;
        return whole.checked_mul(ns_per_unit).map(Duration::from_nanos);
    }
    let secs = x * seconds_per_unit;
    (secs.is_finite() && secs >= 0.0 && secs < u64::MAX as f64 / 1e9)
        .then(|| Duration::from_nanos((secs * 1e9).round() as u64))
}

const UNITS: [(u128, &str); 6] = [
    (3_600_000_000_000, "h"),
    (60_000_000_000, "min"),
    (1_000_000_000, "s"),
    (1_000_000, "ms"),
    (1_000, "µs"),
    (1, "ns"),
];

/// A duration the way people read it: `250 ms`, `1 s`, `2 min`, `0 s`.
pub fn display(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        return "0 s".into();
    }
    let (unit, name) = UNITS
        .iter()
        .find(|(u, _)| ns.is_multiple_of(*u))
        .expect("every whole number of nanoseconds divides by 1");
    format!("{} {name}", ns / unit)
}

/// A duration as result files store it: seconds, as a plain decimal number.
pub fn machine(d: Duration) -> String {
    format!("{}", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn durations_parse_with_units_or_as_bare_seconds() {
        assert_eq!(parse("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse("250 ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse("1s"), Some(Duration::from_secs(1)));
        assert_eq!(parse("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse("2 min"), Some(Duration::from_secs(120)));
        assert_eq!(parse("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse("10us"), Some(Duration::from_micros(10)));
        assert_eq!(parse("10µs"), Some(Duration::from_micros(10)));
        assert_eq!(parse("100ns"), Some(Duration::from_nanos(100)));
        assert_eq!(parse("0.25"), Some(Duration::from_millis(250)));
        assert_eq!(parse("10"), Some(Duration::from_secs(10)));
        for bad in ["", "s", "-1", "NaN", "inf", "1y", ".5", "1e9999"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn durations_show_in_the_largest_exact_unit() {
        assert_eq!(display(Duration::from_millis(250)), "250 ms");
        assert_eq!(display(Duration::from_secs(1)), "1 s");
        assert_eq!(display(Duration::from_millis(1500)), "1500 ms");
        assert_eq!(display(Duration::from_secs(120)), "2 min");
        assert_eq!(display(Duration::from_micros(10)), "10 µs");
        assert_eq!(display(Duration::ZERO), "0 s");
        assert_eq!(machine(Duration::from_millis(250)), "0.25");
    }

    proptest! {
        #[test]
        fn what_is_shown_reads_back(ns in 0u64..(1 << 60)) {
            let d = Duration::from_nanos(ns);
            prop_assert_eq!(parse(&display(d)), Some(d));
        }
    }
}
