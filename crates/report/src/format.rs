//! Human-readable numbers: rates in decimal units (as iperf3 and fio print them),
//! sizes in binary units, times scaled from ns to s; estimates as a median with its
//! interval.

use xferbench_lab::result::PointResult;
use xferbench_probes::stats::Estimate;

/// `1.62 GB/s`, `830 MB/s`, `12.0 kB/s`.
pub fn rate_bytes(bps: f64) -> String {
    scaled(bps, &["B/s", "kB/s", "MB/s", "GB/s", "TB/s"], 1000.0)
}

/// `12.3 M/s`, `80.1 k/s`.
pub fn rate_count(per_s: f64) -> String {
    scaled(per_s, &["/s", "k/s", "M/s", "G/s"], 1000.0)
}

/// `64 B`, `2 KiB`, `1 MB`, `1500 B`: exactly, as every size is shown
/// ([`xferbench_params::bytes`]).
pub fn size(bytes: u64) -> String {
    xferbench_params::bytes::display(bytes)
}

/// `850 ns`, `12.7 µs`, `3.10 ms`, `1.20 s`.
pub fn nanos(ns: f64) -> String {
    let ns = round3(ns);
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{} µs", sig3(ns / 1e3))
    } else if ns < 1e9 {
        format!("{} ms", sig3(ns / 1e6))
    } else {
        format!("{} s", sig3(ns / 1e9))
    }
}

/// The counters of a point in a few words, per message (round trip) where that
/// means something: `2.41k instr/msg, IPC 1.32, 0.2 cs/msg` with instructions (PMU or
/// callgrind, marked `sim.`), else `1.20 µs CPU/msg, 0.2 cs/msg`.
pub fn counters_brief(p: &xferbench_lab::result::PointResult) -> Option<String> {
    use xferbench_probes::counters::name;
    let c = p.counters.as_ref()?;
    let msgs: Vec<f64> = p.runs.iter().map(|r| r.messages as f64).collect();
    let per_msg = xferbench_probes::stats::median(&msgs).filter(|m| *m > 0.0)?;
    let total = |k: &str| c.total.get(k).map(|e| e.median);
    let mut parts = Vec::new();
    if let Some(i) = total(name::INSTRUCTIONS).or(total(name::IR)) {
        let sim = if c.simulated { " (sim.)" } else { "" };
        parts.push(format!("{} instr/msg{sim}", count(i / per_msg)));
    } else if let Some(ns) = total(name::TASK_CLOCK) {
        parts.push(format!("{} CPU/msg", nanos(ns / per_msg)));
    }
    if let Some(ipc) = total(name::IPC) {
        parts.push(format!("IPC {ipc:.2}"));
    }
    if let Some(cs) = total(name::CONTEXT_SWITCHES) {
        parts.push(format!("{:.2} cs/msg", cs / per_msg));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// A limit's value in its unit (`bytes/s`, `fraction` or `ns`).
pub fn limit_value(unit: &str, v: f64) -> String {
    match unit {
        "bytes/s" => rate_bytes(v),
        "fraction" => format!("{:.2} %", v * 100.0),
        _ => nanos(v),
    }
}

/// `950`, `12.3k`, `4.56M`, `7.89G`: a count with a decimal suffix.
pub fn count(v: f64) -> String {
    scaled(v, &["", "k", "M", "G", "T"], 1000.0)
        .trim_end()
        .to_string()
}

/// `1 run`, `5 runs`.
pub fn runs(n: usize) -> String {
    if n == 1 {
        "1 run".into()
    } else {
        format!("{n} runs")
    }
}

/// `±2.1%`: the robust spread of an estimate, or `-` for a single run, which has
/// none.
pub fn spread(e: &Estimate) -> String {
    if e.n < 2 {
        return "-".into();
    }
    format!("±{:.1}%", e.rcv * 100.0)
}

fn scaled(v: f64, units: &[&str], step: f64) -> String {
    // Round first, then choose the unit: 999.7 B/s is "1.00 kB/s", not "1000 B/s".
    let mut v = round3(v);
    let mut u = 0;
    while v.abs() >= step && u + 1 < units.len() {
        v /= step;
        u += 1;
    }
    // `7.42/s`, as `7.42 k/s` reads: a bare per-second unit hangs on its number.
    let gap = if units[u].starts_with('/') { "" } else { " " };
    format!("{}{gap}{}", sig3(v), units[u])
}

/// `v` rounded to three significant digits.
fn round3(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(2 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

/// Three significant digits, without scientific notation.
fn sig3(v: f64) -> String {
    let v = round3(v);
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Whether the document holds `load` points (open loop at an offered rate), whose
/// tables show the offered and achieved rates and the one-way percentiles.
pub fn load_points(doc: &xferbench_lab::result::ResultDoc) -> bool {
    doc.points.iter().any(|p| {
        p.summary
            .contains_key(xferbench_lab::result::figure::OFFERED_RATE)
    })
}

/// The headers of a `load` point's columns, in the order of [`load_cells`].
pub const LOAD_COLUMNS: [&str; 7] = [
    "offered",
    "achieved",
    "p50",
    "p99",
    "p99.9",
    "max",
    "behind p99",
];

/// A `load` point's cells: offered and achieved rates, latency percentiles from the
/// intended send times, and how far the sender fell behind its schedule (p99).
pub fn load_cells(p: &PointResult) -> Vec<String> {
    use xferbench_lab::result::figure;
    let m = |name: &str| p.summary.get(name).map(|e| e.median);
    let dash = || "-".to_string();
    let mut row = vec![
        m(figure::OFFERED_RATE).map_or_else(dash, rate_count),
        m(figure::MESSAGE_RATE).map_or_else(dash, rate_count),
    ];
    for name in [
        figure::LATENCY[0],
        figure::LATENCY[2],
        figure::LATENCY[3],
        figure::LATENCY[4],
        figure::BEHIND[1],
    ] {
        row.push(m(name).map_or_else(dash, nanos));
    }
    row
}

/// A `load` point's channel row under [`load_cells`]: its achieved rate and p50.
pub fn load_cells_of_channel(c: &xferbench_lab::result::ChannelSummary) -> Vec<String> {
    let mut row = vec![String::new(), rate_count(c.messages_per_s.median)];
    row.push(
        c.latency_p50_ns
            .map(|e| nanos(e.median))
            .unwrap_or_default(),
    );
    row.extend(std::iter::repeat_n(String::new(), LOAD_COLUMNS.len() - 3));
    row
}

/// Rates as people read them, joined by commas: `311 k/s, 448 k/s`; `None` for none.
pub fn rate_list(rates: &[f64]) -> Option<String> {
    (!rates.is_empty()).then(|| {
        rates
            .iter()
            .map(|&r| rate_count(r))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// One line per knee of `doc` (`load` curves): the knee, the rate above it, the
/// reference it was held against, and any rate below it that was not sustained.
pub fn knee_lines(doc: &xferbench_lab::result::ResultDoc) -> Vec<String> {
    doc.knees
        .iter()
        .map(|k| {
            let curve = xferbench_lab::params::describe(&k.params);
            let knee = match k.knee_per_s {
                Some(r) => rate_count(r),
                None => "below the lowest rate".into(),
            };
            let above = match k.above_per_s {
                Some(r) => format!("not sustained at {}", rate_count(r)),
                None => "sustained at every rate measured (it may lie higher)".into(),
            };
            let how = match k.method.as_str() {
                "search" => format!("searched in {} probes", k.points),
                _ => format!("sweep of {} rates", k.points),
            };
            let dips = match rate_list(&k.unsustained_below_per_s) {
                Some(rates) => format!("; below it not sustained at {rates}"),
                None => String::new(),
            };
            format!(
                "knee of {curve}: {knee}, {above} ({how}; reference p99 {} at {}{dips})",
                nanos(k.low_p99_ns),
                rate_count(k.low_rate_per_s)
            )
        })
        .collect()
}

/// Whether the document's points are measured by their round trip (their workload
/// declared a latency as the primary figure), so tables show percentiles.
pub fn latency_primary(doc: &xferbench_lab::result::ResultDoc) -> bool {
    doc.points
        .first()
        .is_some_and(|p| p.primary().figure == xferbench_lab::result::figure::LATENCY[0])
}

/// The per-run values of a figure, in run order.
pub fn run_values(p: &PointResult, figure: &str) -> Vec<f64> {
    p.runs
        .iter()
        .filter_map(|r| r.figures.get(figure).copied())
        .collect()
}

/// `median [low–high, 75 %]`: the order-statistic interval of the median with its
/// real level; `show` formats each number. A lone run shows its value only.
pub fn with_interval(e: &Estimate, show: impl Fn(f64) -> String) -> String {
    if e.n < 2 {
        show(e.median)
    } else {
        format!(
            "{} [{}–{}, {} %]",
            show(e.median),
            show(e.ci_low),
            show(e.ci_high),
            level(e.ci_level)
        )
    }
}

/// A coverage level in percent, without trailing zeros: `75`, `93.75`.
pub fn level(l: f64) -> String {
    let s = format!("{:.2}", l * 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod rounding_tests {
    use super::*;

    #[test]
    fn rounding_comes_before_the_choice_of_unit() {
        assert_eq!(rate_bytes(999.7), "1.00 kB/s");
        assert_eq!(rate_bytes(999.4), "999 B/s");
        assert_eq!(rate_count(999_960.0), "1.00 M/s");
        assert_eq!(nanos(999.7), "1.00 µs");
        assert_eq!(nanos(999_950.0), "1.00 ms");
        assert_eq!(rate_bytes(99.96), "100 B/s");
        assert_eq!(rate_bytes(0.0), "0.00 B/s");
        assert_eq!(rate_bytes(1.62e9), "1.62 GB/s");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_scale() {
        assert_eq!(rate_bytes(1.62e9), "1.62 GB/s");
        assert_eq!(rate_bytes(830e6), "830 MB/s");
        assert_eq!(rate_bytes(999.0), "999 B/s");
        assert_eq!(rate_count(12_345_678.0), "12.3 M/s");
        assert_eq!(size(64), "64 B");
        assert_eq!(size(2048), "2 KiB");
        assert_eq!(size(1536 * 1024), "1536 KiB");
        assert_eq!(size(1_000_000), "1 MB");
        assert_eq!(nanos(850.0), "850 ns");
        assert_eq!(nanos(12_700.0), "12.7 µs");
        assert_eq!(nanos(3.1e6), "3.10 ms");
        let mut e = Estimate::from_values([1.0, 1.0, 1.0]).unwrap();
        e.rcv = 0.021;
        assert_eq!(spread(&e), "±2.1%");
        // One run has no spread.
        assert_eq!(spread(&Estimate::from_values([1.0]).unwrap()), "-");
        assert_eq!(
            (runs(1), runs(5)),
            ("1 run".to_string(), "5 runs".to_string())
        );
        // A bare per-second unit hangs on its number, as the scaled ones read.
        assert_eq!(
            (rate_count(7.42), rate_count(7420.0)),
            ("7.42/s".into(), "7.42 k/s".into())
        );
    }

    #[test]
    fn a_knee_line_names_the_rates_below_it_that_were_not_sustained() {
        let mut doc = crate::fixture::load_doc();
        let plain = knee_lines(&doc);
        assert!(
            plain[1].starts_with("knee of ")
                && plain[1].contains(": 100 k/s, not sustained at 1.00 M/s"),
            "{plain:?}"
        );
        assert!(!plain[1].contains("below it"), "{plain:?}");
        doc.knees[1].unsustained_below_per_s = vec![2e4, 5e4];
        let line = &knee_lines(&doc)[1];
        assert!(
            line.ends_with("; below it not sustained at 20.0 k/s, 50.0 k/s)"),
            "{line}"
        );
    }
}

/// The value `auto` chose for parameter `name` of a point, the way people read it:
/// `4 KiB (auto)`; `None` where nothing was chosen for it.
pub fn chosen(p: &xferbench_lab::result::PointResult, name: &str) -> Option<String> {
    let v = p.chosen.get(name)?;
    Some(format!(
        "{} (auto)",
        xferbench_lab::params::display(&p.params, name, v)
    ))
}
