//! What the numbers of an axis measure, and how they are written: in hover text and
//! headings exactly as the tables write them ([`crate::format`]: `64 KiB`,
//! `1.45 GB/s`, `12.7 µs`), on ticks compactly with the same units (`64 KiB`,
//! `1.5 GB/s`, `50 µs`).

use crate::format;

/// The unit of an axis's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    /// Plain numbers: `16`, `0.25`, `12.3 k` (ticks `12k`, `1.5M`).
    #[default]
    Number,
    /// Bytes, in binary units (`64 B`, `2 KiB`); a log axis ticks at powers of two.
    Bytes,
    /// Bytes per second, in decimal units as iperf3 and fio write them (`830 MB/s`).
    BytesPerSecond,
    /// Events per second: `12.3 M/s`.
    PerSecond,
    /// Times given in nanoseconds, written `850 ns`, `12.7 µs`, `3.10 ms`, `1.20 s`.
    Nanoseconds,
    /// Times given in microseconds (written as [`Unit::Nanoseconds`] are).
    Microseconds,
    /// Times given in milliseconds.
    Milliseconds,
    /// Times given in seconds.
    Seconds,
}

/// Decimal prefixes of rates.
const RATE: [&str; 5] = ["B/s", "kB/s", "MB/s", "GB/s", "TB/s"];
/// Prefixes of counts per second.
const PER_S: [&str; 5] = ["/s", "k/s", "M/s", "G/s", "T/s"];
/// Binary prefixes of sizes.
const SIZE: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
/// Compact prefixes of plain numbers.
const PLAIN: [&str; 5] = ["", "k", "M", "G", "T"];
/// Time units from nanoseconds.
const TIME: [(f64, &str); 4] = [(1.0, "ns"), (1e3, "µs"), (1e6, "ms"), (1e9, "s")];

impl Unit {
    /// The unit of a figure of the results, from its name's suffix
    /// (`throughput_bytes_per_s`, `latency_p99_ns`, `messages_per_s`, `window_s`).
    pub fn of_figure(name: &str) -> Unit {
        if name.ends_with("bytes_per_s") {
            Unit::BytesPerSecond
        } else if name.ends_with("_ns") || name.ends_with("_ns_per_message") {
            Unit::Nanoseconds
        } else if name.ends_with("per_s") {
            Unit::PerSecond
        } else if name.ends_with("_s") {
            Unit::Seconds
        } else if name.ends_with("_bytes") {
            Unit::Bytes
        } else {
            Unit::Number
        }
    }

    /// The unit named in parentheses at the end of an axis label, and the label
    /// without it: `packet size (bytes)` is [`Unit::Bytes`] and `packet size`. Units
    /// recognised: `bytes`, `B`, `bytes/s`, `B/s`, `ns`, `µs` (`us`), `ms`, `s`;
    /// any other label is [`Unit::Number`] and kept whole.
    pub fn from_label(label: &str) -> (Unit, &str) {
        let Some(open) = label.rfind(" (").filter(|_| label.ends_with(')')) else {
            return (Unit::Number, label);
        };
        let unit = match &label[open + 2..label.len() - 1] {
            "bytes" | "B" => Unit::Bytes,
            "bytes/s" | "B/s" => Unit::BytesPerSecond,
            "ns" => Unit::Nanoseconds,
            "µs" | "us" => Unit::Microseconds,
            "ms" => Unit::Milliseconds,
            "s" => Unit::Seconds,
            _ => return (Unit::Number, label),
        };
        (unit, &label[..open])
    }

    /// Nanoseconds per value, for the time units.
    fn nanos(self) -> Option<f64> {
        match self {
            Unit::Nanoseconds => Some(1.0),
            Unit::Microseconds => Some(1e3),
            Unit::Milliseconds => Some(1e6),
            Unit::Seconds => Some(1e9),
            _ => None,
        }
    }

    /// A value as the tables write it: `64 KiB`, `1.45 GB/s`, `12.7 µs`, `830 k/s`.
    pub fn value(self, v: f64) -> String {
        if !v.is_finite() {
            return "-".into();
        }
        match self {
            Unit::Number => plain(v),
            Unit::Bytes => format::size(v.round().max(0.0) as u64),
            Unit::BytesPerSecond => format::rate_bytes(v),
            Unit::PerSecond => format::rate_count(v),
            t => format::nanos(v * t.nanos().unwrap_or(1.0)),
        }
    }

    /// The prefixes of this unit: the factor between neighbours and their names, in
    /// the unit's own values.
    fn steps(self) -> Vec<(f64, &'static str)> {
        let ladder = |base: f64, names: &[&'static str]| {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (base.powi(i as i32), *n))
                .collect::<Vec<_>>()
        };
        match self {
            Unit::Number => ladder(1000.0, &PLAIN),
            Unit::Bytes => ladder(1024.0, &SIZE),
            Unit::BytesPerSecond => ladder(1000.0, &RATE),
            Unit::PerSecond => ladder(1000.0, &PER_S),
            t => {
                let per = t.nanos().unwrap_or(1.0);
                TIME.iter().map(|&(ns, n)| (ns / per, n)).collect()
            }
        }
    }

    /// The factor of the prefix linear ticks share on an axis whose largest value is
    /// `top`: ticks step in that prefix (KiB, µs), so they are round in it.
    pub(crate) fn ticks_factor(self, top: f64) -> f64 {
        self.prefix(top).0
    }

    /// The prefix for a value: the largest whose factor does not exceed it.
    fn prefix(self, v: f64) -> (f64, &'static str) {
        let steps = self.steps();
        let a = v.abs();
        steps
            .iter()
            .rev()
            .find(|(f, _)| a >= *f * (1.0 - 1e-9))
            .or(steps.first())
            .copied()
            .unwrap_or((1.0, ""))
    }

    /// Tick labels. `shared` gives every tick the prefix of the largest (a linear
    /// axis: `0`, `50 µs`, `100 µs`, with as many decimals as the step needs);
    /// otherwise each tick has its own (a log axis: `100 MB/s`, `1 GB/s`). Zero is
    /// `0`.
    pub fn ticks(self, ticks: &[f64], shared: bool) -> Vec<String> {
        let join = |n: String, name: &str| match (self, name) {
            (_, "") => n,
            (Unit::Number, p) => format!("{n}{p}"),
            (_, p) => format!("{n} {p}"),
        };
        if shared {
            let top = ticks.iter().fold(0f64, |m, v| m.max(v.abs()));
            let (f, name) = self.prefix(top);
            let step = ticks
                .windows(2)
                .map(|w| (w[1] - w[0]).abs() / f)
                .fold(f64::INFINITY, f64::min);
            // As many decimals as the step needs: 0.5 → 1, 0.25 → 2, 20 → 0.
            let decimals = (0..6)
                .find(|d| {
                    let scaled = step * 10f64.powi(*d);
                    !step.is_finite() || step <= 0.0 || (scaled - scaled.round()).abs() < 1e-6
                })
                .unwrap_or(6);
            ticks
                .iter()
                .map(|v| {
                    if *v == 0.0 {
                        "0".into()
                    } else {
                        join(format!("{:.*}", decimals as usize, v / f), name)
                    }
                })
                .collect()
        } else {
            ticks
                .iter()
                .map(|&v| {
                    let (f, name) = self.prefix(v);
                    join(trimmed(v / f), name)
                })
                .collect()
        }
    }
}

/// Up to three significant digits, without trailing zeros: `1`, `2.5`, `0.125`, `512`.
fn trimmed(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A plain number: integers below 10 000 in full, larger ones with a suffix as the
/// tables write them (`12.3 k`), others to three significant digits.
fn plain(v: f64) -> String {
    if v.abs() >= 1e4 {
        format::count(v)
    } else if v == v.trunc() {
        format!("{v:.0}")
    } else {
        trimmed(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_the_tables_write_them() {
        assert_eq!(Unit::Bytes.value(65536.0), "64 KiB");
        assert_eq!(
            Unit::BytesPerSecond.value(1_449_053_112.601_818),
            "1.45 GB/s"
        );
        assert_eq!(Unit::Nanoseconds.value(12_700.0), "12.7 µs");
        assert_eq!(Unit::Milliseconds.value(3.1), "3.10 ms");
        assert_eq!(Unit::Seconds.value(0.25), "250 ms");
        assert_eq!(Unit::PerSecond.value(830_000.0), "830 k/s");
        assert_eq!(Unit::Number.value(16.0), "16");
        assert_eq!(Unit::Number.value(0.125), "0.125");
        assert_eq!(Unit::Number.value(123_456.0), "123 k");
        assert_eq!(Unit::Number.value(f64::NAN), "-");
    }

    #[test]
    fn figures_have_units_by_their_names() {
        assert_eq!(
            Unit::of_figure("throughput_bytes_per_s"),
            Unit::BytesPerSecond
        );
        assert_eq!(Unit::of_figure("latency_p999_ns"), Unit::Nanoseconds);
        assert_eq!(Unit::of_figure("cpu_ns_per_message"), Unit::Nanoseconds);
        assert_eq!(Unit::of_figure("messages_per_s"), Unit::PerSecond);
        assert_eq!(Unit::of_figure("window_s"), Unit::Seconds);
        assert_eq!(Unit::of_figure("fairness_jain"), Unit::Number);
    }

    #[test]
    fn a_label_names_its_unit_in_parentheses() {
        assert_eq!(
            Unit::from_label("packet size (bytes)"),
            (Unit::Bytes, "packet size")
        );
        assert_eq!(
            Unit::from_label("mean time per run (ms)"),
            (Unit::Milliseconds, "mean time per run")
        );
        assert_eq!(
            Unit::from_label("requests/s (all clients)"),
            (Unit::Number, "requests/s (all clients)")
        );
        assert_eq!(Unit::from_label("threads"), (Unit::Number, "threads"));
    }

    #[test]
    fn shared_ticks_have_one_prefix_and_the_step_s_decimals() {
        assert_eq!(
            Unit::Nanoseconds.ticks(&[0.0, 50e3, 100e3, 150e3], true),
            ["0", "50 µs", "100 µs", "150 µs"]
        );
        assert_eq!(
            Unit::BytesPerSecond.ticks(&[0.0, 0.5e9, 1e9, 1.5e9], true),
            ["0", "0.5 GB/s", "1.0 GB/s", "1.5 GB/s"]
        );
        assert_eq!(Unit::Number.ticks(&[1.0, 2.0, 3.0], true), ["1", "2", "3"]);
        assert_eq!(
            Unit::Number.ticks(&[0.25, 0.5, 0.75], true),
            ["0.25", "0.50", "0.75"]
        );
        assert_eq!(
            Unit::Number.ticks(&[0.0, 20e3, 40e3], true),
            ["0", "20k", "40k"]
        );
        assert_eq!(
            Unit::Milliseconds.ticks(&[0.0, 1000.0, 2000.0], true),
            ["0", "1 s", "2 s"]
        );
    }

    #[test]
    fn own_ticks_have_their_own_prefix() {
        assert_eq!(
            Unit::Bytes.ticks(&[64.0, 256.0, 1024.0, 65536.0], false),
            ["64 B", "256 B", "1 KiB", "64 KiB"]
        );
        assert_eq!(
            Unit::BytesPerSecond.ticks(&[1e8, 2e8, 5e8, 1e9, 2e9], false),
            ["100 MB/s", "200 MB/s", "500 MB/s", "1 GB/s", "2 GB/s"]
        );
        assert_eq!(
            Unit::Nanoseconds.ticks(&[500.0, 1e3, 1e4], false),
            ["500 ns", "1 µs", "10 µs"]
        );
        assert_eq!(Unit::Number.ticks(&[1e3, 1.5e6], false), ["1k", "1.5M"]);
    }
}
