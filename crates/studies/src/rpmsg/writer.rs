//! The RPMsg study folder: `results.json`; one table per channel count shaped like the
//! original's (packet size, transfer size, single-channel speed, average per-channel
//! speed) plus our common-window aggregate; the two plots of the original (bandwidth
//! per channel and total bandwidth against packet size, one line per channel count,
//! with the SC598's figures beside ours); the variants table; and `summary.md`.
//!
//! Everything is read from the [`ResultDoc`]: points of `group=table` and
//! `group=variants` with the parameters `channels`, `packet`, `transfer`, `notify`
//! and `buffers`; table cells are medians with their intervals ([`figure_cell`]),
//! findings use medians.
//!
//! One file for the study's folder (tables, plots, findings), which share its point
//! helpers; its fixture-based tests are about a tenth of it.

use super::seed;
use crate::finding::{Finding, cpu_limit, section};
use crate::folder::{figure_cell, median, param, summary_header, with_interval};
use anyhow::Result;
use std::fmt::Write as _;
use xferbench_lab::axes::CHANNELS;
use xferbench_lab::params::choice;
use xferbench_lab::result::{PointResult, ResultDoc, figure};
use xferbench_lab::workload::rpmsg::{
    KICKS_TO_HOST, KICKS_TO_REMOTE, PACKET, SUM_OF_RATES, TRANSFER,
};
use xferbench_params::ParamDef;
use xferbench_probes::stats::Estimate;
use xferbench_report::chart::Unit;
use xferbench_report::plot::{LineChart, Scale, Series};
use xferbench_report::study::{ColumnUnit, StudyFolder, Table};
use xferbench_transports::rpmsg::{BUFFERS, Buffers, NOTIFY, Notify};

/// The SC598's figures at transfer size 10^5 (the seed's tables, bytes/s, sum over
/// channels): `(channels, [(packet, bytes/s)])`.
pub const ORIGINAL: [(u32, [(usize, f64); 6]); 3] = [
    (
        1,
        [
            (1, 14_554.0),
            (2, 28_722.0),
            (16, 227_375.0),
            (64, 833_525.0),
            (256, 2_314_672.0),
            (496, 5_318_444.0),
        ],
    ),
    (
        8,
        [
            (1, 15_325.0),
            (2, 29_352.0),
            (16, 237_663.0),
            (64, 1_010_483.0),
            (256, 3_407_874.0),
            (496, 7_078_932.0),
        ],
    ),
    (
        32,
        [
            (1, 12_775.0),
            (2, 25_339.0),
            (16, 197_167.0),
            (64, 753_868.0),
            (256, 2_925_997.0),
            (496, 6_907_303.0),
        ],
    ),
];

fn int(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.0}")
    } else {
        "–".into()
    }
}

fn human(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} GB/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.2} MB/s", bps / 1e6)
    } else if bps >= 1e3 {
        format!("{:.1} kB/s", bps / 1e3)
    } else {
        format!("{bps:.0} B/s")
    }
}

/// One point of the study as the tables see it.
#[derive(Debug, Clone, Copy)]
pub struct Pt<'a> {
    /// The point.
    pub result: &'a PointResult,
    /// Channels.
    pub channels: u32,
    /// Packet bytes.
    pub packet: usize,
    /// Transfer bytes per thread.
    pub transfer: u64,
}

impl<'a> Pt<'a> {
    fn of(result: &'a PointResult) -> Pt<'a> {
        let num = |d: &ParamDef| param(result, d.name()).parse::<u64>().unwrap_or(0);
        Pt {
            result,
            channels: num(&CHANNELS) as u32,
            packet: num(&PACKET) as usize,
            transfer: num(&TRANSFER),
        }
    }

    fn notify(&self) -> Option<Notify> {
        choice(&self.result.params, &NOTIFY)
    }

    fn buffers(&self) -> Option<Buffers> {
        choice(&self.result.params, &BUFFERS)
    }

    /// The median of a figure, NaN when absent.
    fn m(&self, figure: &str) -> f64 {
        median(self.result, figure).unwrap_or(f64::NAN)
    }

    /// The original's "average CH speed": the sum of per-channel rates ÷ channels.
    fn per_channel(&self) -> f64 {
        self.m(SUM_OF_RATES) / f64::from(self.channels.max(1))
    }

    fn cell(&self, figure: &str, show: impl Fn(f64) -> String) -> String {
        figure_cell(self.result, figure, show)
    }

    fn per_channel_cell(&self) -> String {
        let k = f64::from(self.channels.max(1));
        self.result
            .summary
            .get(SUM_OF_RATES)
            .map_or_else(|| "-".into(), |e| with_interval(&scaled(e, 1.0 / k), int))
    }
}

/// An estimate of a figure times `k` (its median and interval scale with it).
fn scaled(e: &Estimate, k: f64) -> Estimate {
    Estimate {
        median: e.median * k,
        min: e.min * k,
        max: e.max * k,
        mad: e.mad * k,
        ci_low: e.ci_low * k,
        ci_high: e.ci_high * k,
        ..*e
    }
}

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

fn us2(ns: f64) -> String {
    format!("{:.2}", ns / 1e3)
}

fn two(v: f64) -> String {
    format!("{v:.2}")
}

fn three(v: f64) -> String {
    format!("{v:.3}")
}

fn group<'a>(doc: &'a ResultDoc, name: &'a str) -> Vec<Pt<'a>> {
    doc.points
        .iter()
        .filter(|p| param(p, crate::params::names::GROUP) == name)
        .map(Pt::of)
        .collect()
}

/// The table points, sorted by channels, packet and transfer.
pub fn table_points(doc: &ResultDoc) -> Vec<Pt<'_>> {
    let mut v = group(doc, "table");
    v.sort_by_key(|p| (p.channels, p.packet, p.transfer));
    v
}

/// The variants, in plan order.
pub fn variant_points(doc: &ResultDoc) -> Vec<Pt<'_>> {
    group(doc, "variants")
}

/// The table of one channel count.
pub fn channel_table(doc: &ResultDoc, channels: u32) -> Table {
    let mut headers: Vec<String> = [
        "PACKET SIZE",
        "TRANSFER SIZE",
        "Single CH speed",
        "SC598 Single CH speed",
    ]
    .map(String::from)
    .to_vec();
    if channels > 1 {
        headers.extend(["Average CH speed", "SC598 Average CH speed"].map(String::from));
    }
    headers.extend(
        [
            "Aggregate (common window)",
            "Round trips/s",
            "RTT p50 µs",
            "Jain",
            "Host CPUs",
            "Remote CPUs",
        ]
        .map(String::from),
    );
    let mut rows = Vec::new();
    let mut last_packet = None;
    for p in table_points(doc).iter().filter(|p| p.channels == channels) {
        let mut row = vec![
            if last_packet == Some(p.packet) {
                String::new()
            } else {
                p.packet.to_string()
            },
            p.transfer.to_string(),
            p.cell(SUM_OF_RATES, int),
        ];
        let seed = super::seed::cell(channels, p.packet, p.transfer);
        let seed_cell = |v: Option<u64>| v.map_or_else(|| "not measured".into(), |v| v.to_string());
        row.push(seed_cell(seed.map(|s| s.0)));
        last_packet = Some(p.packet);
        if channels > 1 {
            row.push(p.per_channel_cell());
            row.push(seed_cell(seed.and_then(|s| s.1)));
        }
        row.extend([
            p.cell(figure::THROUGHPUT, int),
            p.cell(figure::MESSAGE_RATE, int),
            p.cell(figure::LATENCY[0], us),
            p.cell(figure::FAIRNESS, three),
            p.cell(figure::CPU_MAIN, two),
            p.cell(figure::CPU_PEERS, two),
        ]);
        rows.push(row);
    }
    Table {
        title: format!(
            "{channels} channel{} (bytes/s, median [interval]; \"Single CH speed\" is the original's sum of per-thread rates; SC598 columns: the original's table)",
            if channels == 1 { "" } else { "s" }
        ),
        headers,
        rows,
    }
}

/// The variants table.
pub fn variants_table(doc: &ResultDoc) -> Table {
    let headers = [
        "Channels",
        "Notify",
        "Buffers",
        "Round trips/s",
        "Aggregate B/s",
        "RTT p50 µs",
        "RTT p99 µs",
        "Kicks→remote /RT",
        "Kicks→host /RT",
        "Jain",
        "Host CPUs",
        "Remote CPUs",
    ]
    .map(String::from)
    .to_vec();
    let rows = variant_points(doc)
        .iter()
        .map(|v| {
            vec![
                v.channels.to_string(),
                v.notify().map_or("-", Notify::name).into(),
                v.buffers().map_or("-", Buffers::name).into(),
                v.cell(figure::MESSAGE_RATE, int),
                v.cell(figure::THROUGHPUT, int),
                v.cell(figure::LATENCY[0], us2),
                v.cell(figure::LATENCY[2], us2),
                v.cell(KICKS_TO_REMOTE, two),
                v.cell(KICKS_TO_HOST, two),
                v.cell(figure::FAIRNESS, three),
                v.cell(figure::CPU_MAIN, two),
                v.cell(figure::CPU_PEERS, two),
            ]
        })
        .collect();
    Table {
        title: "Variants: 496-byte packets, notification × buffer mode (median [interval])".into(),
        headers,
        rows,
    }
}

/// For each packet size, the point with the largest kept transfer size (the steadiest).
fn longest<'a>(doc: &'a ResultDoc, channels: u32) -> Vec<Pt<'a>> {
    let mut out: Vec<Pt<'a>> = Vec::new();
    for p in table_points(doc)
        .into_iter()
        .filter(|p| p.channels == channels)
    {
        match out.last_mut() {
            Some(last) if last.packet == p.packet => {
                if p.transfer > last.transfer {
                    *last = p;
                }
            }
            _ => out.push(p),
        }
    }
    out
}

fn channel_counts(doc: &ResultDoc) -> Vec<u32> {
    let mut c: Vec<u32> = table_points(doc).iter().map(|p| p.channels).collect();
    c.dedup();
    c
}

/// The two plots: (per channel, total).
pub fn plots(doc: &ResultDoc) -> (LineChart, LineChart) {
    let mut per = Vec::new();
    let mut total = Vec::new();
    for ch in channel_counts(doc) {
        let pts = longest(doc, ch);
        // Each median with the interval of the median, as the tables give it.
        let interval = |p: &Pt<'_>, figure: &str, k: f64| {
            p.result
                .summary
                .get(figure)
                .and_then(|e| Series::median_interval(&scaled(e, k)))
        };
        per.push(Series {
            intervals: pts
                .iter()
                .map(|p| interval(p, SUM_OF_RATES, 1.0 / f64::from(p.channels.max(1))))
                .collect(),
            reference: false,
            label: format!("{ch} ch (this machine)"),
            points: pts
                .iter()
                .map(|p| (p.packet as f64, p.per_channel()))
                .collect(),
        });
        total.push(Series {
            intervals: pts
                .iter()
                .map(|p| interval(p, figure::THROUGHPUT, 1.0))
                .collect(),
            reference: false,
            label: format!("{ch} ch, this machine: bytes over the common window"),
            points: pts
                .iter()
                .map(|p| (p.packet as f64, p.m(figure::THROUGHPUT)))
                .collect(),
        });
    }
    for (ch, figs) in ORIGINAL {
        per.push(Series {
            intervals: Vec::new(),
            reference: true,
            label: format!("{ch} ch (SC598)"),
            points: figs
                .iter()
                .map(|&(s, b)| (s as f64, b / f64::from(ch)))
                .collect(),
        });
        total.push(Series {
            intervals: Vec::new(),
            reference: true,
            label: format!("{ch} ch, SC598: sum of per-thread rates"),
            points: figs.iter().map(|&(s, b)| (s as f64, b)).collect(),
        });
    }
    let chart = |title: &str, y: &str, series| LineChart {
        title: title.into(),
        x_label: "packet size (bytes)".into(),
        y_label: y.into(),
        x_scale: Scale::Log,
        y_scale: Scale::Log,
        series,
    };
    (
        chart(
            "Bandwidth per channel (the sum of rates ÷ channels) vs packet size (longest kept transfer; kick per message)",
            "bandwidth per channel (bytes/s)",
            per,
        ),
        chart(
            "Total bandwidth vs packet size (longest kept transfer; kick per message)",
            "bandwidth of all channels (bytes/s)",
            total,
        ),
    )
}

fn find<'a>(doc: &'a ResultDoc, ch: u32, packet: usize) -> Option<Pt<'a>> {
    longest(doc, ch).into_iter().find(|p| p.packet == packet)
}

fn variant<'a>(doc: &'a ResultDoc, ch: u32, notify: Notify, buffers: Buffers) -> Option<Pt<'a>> {
    variant_points(doc)
        .into_iter()
        .find(|v| v.channels == ch && v.notify() == Some(notify) && v.buffers() == Some(buffers))
}

fn variant_channels(doc: &ResultDoc) -> Vec<u32> {
    let mut c: Vec<u32> = variant_points(doc).iter().map(|p| p.channels).collect();
    c.sort_unstable();
    c.dedup();
    c
}

/// The table points' echo suffix and its check, and `--full`'s estimate beside the
/// time the run took.
fn echo_and_estimate(s: &mut String, doc: &ResultDoc) {
    let (checked, bad) = doc
        .points
        .iter()
        .filter(|p| param(p, crate::params::names::GROUP) == "table")
        .filter_map(|p| p.integrity)
        .fold((0, 0), |(c, b), i| (c + i.checked, b + i.corrupt));
    if checked > 0 {
        let _ = writeln!(
            s,
            "The table points run as the firmware answers, its echo followed by `\" => echo from Core1\\n\"` \
             (20 bytes, cut at 496): {checked} replies checked to be the packet and the suffix, {bad} not.\n"
        );
    }
    if let Some(e) = doc.study.as_ref().and_then(|i| i.extras.get("estimate")) {
        let _ = writeln!(
            s,
            "`--full`: estimated {:.0} s ({}); the run took {:.0} s.\n",
            e["seconds"].as_f64().unwrap_or(f64::NAN),
            e["text"].as_str().unwrap_or("-"),
            e["actual_s"].as_f64().unwrap_or(f64::NAN)
        );
    }
}

/// A target's verdict in this run.
fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "not met" }
}

/// `summary.md`: the findings in sentences, with this run's numbers.
pub fn summary(doc: &ResultDoc) -> String {
    let mut s = summary_header(doc, "RPMsg study — summary");
    let quick = doc.study.as_ref().is_some_and(|i| i.quick);
    let _ = writeln!(
        s,
        "{}Remote: a separate process (a thread when `peer` is `thread`: {}); vrings of 256 \
         entries, 512-byte buffers, a kick (futex wake) per message unless stated.\n",
        if quick {
            "Quick plan (`--quick`). "
        } else {
            ""
        },
        doc.context.settings.peer
    );
    echo_and_estimate(&mut s, doc);
    let _ = writeln!(s, "## Findings\n");
    summary_findings(&mut s, doc);
    let _ = writeln!(s, "\n## Variants (496-byte packets)\n");
    summary_variants(&mut s, doc);
    let _ = writeln!(s, "\n## Targets\n");
    summary_targets(&mut s, doc);
    summary_skipped(&mut s, doc);
    let _ = writeln!(
        s,
        "\nFiles: `results.json` (every run, per-channel rows), `table-<N>ch.md/.csv`, \
         `variants.md/.csv`, `bandwidth-per-channel.svg`, `total-bandwidth.svg`."
    );
    s
}

/// Two rates are level when neither is more than this many times the other.
pub const LEVEL_WITHIN: f64 = 1.5;

/// Whether `a` and `b` are level: both positive, neither more than [`LEVEL_WITHIN`]
/// times the other.
fn level(a: f64, b: f64) -> bool {
    a > 0.0 && b > 0.0 && (a / b).max(b / a) <= LEVEL_WITHIN
}

/// The SC598's round trips per second in one cell: its sum of rates ÷ channels ÷ packet.
fn seed_rate(channels: u32, packet: usize, transfer: u64) -> Option<f64> {
    let (sum, _) = seed::cell(channels, packet, transfer)?;
    Some(sum as f64 / f64::from(channels) / packet as f64)
}

/// "The rate barely depends on the packet size": one channel's round trips per second
/// at 1 B and at 496 B, ours (`ours`, the longest runs) and the SC598's (`seed`,
/// 10^7 B transfers), each pair level.
pub fn packet_size_finding(ours: (f64, f64), seed: (f64, f64), limit: Option<String>) -> Finding {
    Finding::judged(
        format!(
            "one channel's round-trip rate barely depends on the packet size, so bandwidth \
             grows about linearly with it (its tables: {:.0} round trips/s at 1 B, {:.0} at \
             496 B, {:.2}×).",
            seed.0,
            seed.1,
            seed.1 / seed.0
        ),
        format!(
            "one channel, the longest runs: {:.0} round trips/s at 1 B, {:.0} at 496 B, {:.2}× \
             (condition: within {LEVEL_WITHIN}× either way)",
            ours.0,
            ours.1,
            ours.1 / ours.0
        ),
        level(ours.0, ours.1),
    )
    .unless(limit)
}

/// The widest spread of round-trip rates across transfer sizes among packet sizes:
/// `(max ÷ min, packet, min, max)`, from `(packet, rate)` pairs.
fn widest_spread(rates: &[(usize, f64)]) -> Option<(f64, usize, f64, f64)> {
    let mut packets: Vec<usize> = rates.iter().map(|r| r.0).collect();
    packets.sort_unstable();
    packets.dedup();
    packets
        .into_iter()
        .filter_map(|packet| {
            let v: Vec<f64> = rates
                .iter()
                .filter(|r| r.0 == packet)
                .map(|r| r.1)
                .collect();
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (v.len() > 1 && lo > 0.0).then_some((hi / lo, packet, lo, hi))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// "The rate does not depend on the transfer size": one channel's round trips per
/// second by `(packet, rate)`, ours and the SC598's; at every packet size the rates
/// across transfer sizes are level. `trips` is the range of our runs' round trips.
pub fn transfer_size_finding(
    ours: &[(usize, f64)],
    seed: &[(usize, f64)],
    trips: (u64, u64),
    limit: Option<String>,
) -> Option<Finding> {
    let (w, packet, lo, hi) = widest_spread(ours)?;
    let seed_text = widest_spread(seed).map_or(String::new(), |(sw, sp, ..)| {
        format!(" (its tables: within {sw:.2}× at every packet size, the widest at {sp} B)")
    });
    Some(
        Finding::judged(
            format!(
                "one channel's round-trip rate does not depend on the transfer size{seed_text}."
            ),
            format!(
                "one channel, runs of {} to {} round trips: the widest spread across transfer \
                 sizes is {w:.2}× at {packet} B ({lo:.0} to {hi:.0} round trips/s) (condition: \
                 within {LEVEL_WITHIN}× at every packet size)",
                trips.0, trips.1
            ),
            w <= LEVEL_WITHIN,
        )
        .unless(limit),
    )
}

/// "The total stays level as channels grow": 496 B, the total with each channel
/// count against one channel's, ours (`ours`: channels, total ÷ one channel's,
/// per channel, with `one` one channel's total) and the SC598's (`seed`: channels,
/// its sum of rates ÷ one channel's at the same transfer).
pub fn channels_finding(
    one: f64,
    ours: &[(u32, f64, f64)],
    seed: &[(u32, f64)],
    limit: Option<String>,
) -> Finding {
    let seed_text: Vec<String> = seed
        .iter()
        .map(|(ch, r)| format!("with {ch} channels {r:.2}×"))
        .collect();
    let ours_text: Vec<String> = ours
        .iter()
        .map(|(ch, r, per)| format!("{r:.2}× with {ch} channels ({} per channel)", human(*per)))
        .collect();
    Finding::judged(
        format!(
            "the total stays level as channels grow, so the bandwidth per channel falls about \
             as 1/channels (its tables, 496 B: the sum of per-thread rates {} one channel's at \
             the same transfer).",
            seed_text.join(", ")
        ),
        format!(
            "496 B, the longest runs: against one channel's {}, the total over the common \
             window is {} (condition: within {LEVEL_WITHIN}× either way)",
            human(one),
            ours_text.join(", ")
        ),
        !ours.is_empty() && ours.iter().all(|(_, r, _)| level(*r, 1.0)),
    )
    .unless(limit)
}

/// The seed's findings from its tables, each computed on this run's figures.
pub fn findings(doc: &ResultDoc) -> Vec<Finding> {
    let rate = figure::MESSAGE_RATE;
    let mut out = Vec::new();
    let two = "the host's channel thread and the remote";
    if let (Some(p1), Some(p496)) = (find(doc, 1, 1), find(doc, 1, 496)) {
        let seed = (
            seed_rate(1, 1, 10_000_000).unwrap_or(f64::NAN),
            seed_rate(1, 496, 10_000_000).unwrap_or(f64::NAN),
        );
        let limit = cpu_limit(doc, &[p1.result, p496.result], 2, two);
        out.push(packet_size_finding((p1.m(rate), p496.m(rate)), seed, limit));
    }
    let one: Vec<Pt<'_>> = table_points(doc)
        .into_iter()
        .filter(|p| p.channels == 1)
        .collect();
    let ours: Vec<(usize, f64)> = one.iter().map(|p| (p.packet, p.m(rate))).collect();
    let seed: Vec<(usize, f64)> = seed::CELLS
        .iter()
        .filter(|c| c.0 == 1)
        .map(|c| (c.1, c.3 as f64 / c.1 as f64))
        .collect();
    let trips: Vec<u64> = one
        .iter()
        .map(|p| p.transfer.div_ceil(p.packet.max(1) as u64))
        .collect();
    let pts: Vec<&PointResult> = one.iter().map(|p| p.result).collect();
    out.extend(transfer_size_finding(
        &ours,
        &seed,
        (
            trips.iter().copied().min().unwrap_or(0),
            trips.iter().copied().max().unwrap_or(0),
        ),
        cpu_limit(doc, &pts, 2, two),
    ));
    let counts = channel_counts(doc);
    if let (Some(base), true) = (find(doc, 1, 496), counts.len() > 1) {
        let b = base.m(figure::THROUGHPUT);
        let many: Vec<Pt<'_>> = counts
            .iter()
            .filter(|c| **c > 1)
            .filter_map(|c| find(doc, *c, 496))
            .collect();
        let ours: Vec<(u32, f64, f64)> = many
            .iter()
            .map(|p| (p.channels, p.m(figure::THROUGHPUT) / b, p.per_channel()))
            .collect();
        let seed: Vec<(u32, f64)> = many
            .iter()
            .filter_map(|p| {
                let (n, _) = seed::cell(p.channels, 496, p.transfer)?;
                let (one, _) = seed::cell(1, 496, p.transfer)?;
                Some((p.channels, n as f64 / one as f64))
            })
            .collect();
        let most = many.iter().map(|p| p.channels).max().unwrap_or(1);
        let pts: Vec<&PointResult> = many.iter().map(|p| p.result).collect();
        let limit = cpu_limit(
            doc,
            &pts,
            most as usize + 1,
            &format!("{most} channel threads and the remote, a CPU each"),
        );
        out.push(channels_finding(b, &ours, &seed, limit));
    }
    out
}

/// The tables' findings: the seed's, computed, then the packet-rate ceiling and the
/// inflated aggregates.
fn summary_findings(s: &mut String, doc: &ResultDoc) {
    s.push_str(&section(&findings(doc)));
    let rate = figure::MESSAGE_RATE;
    let ceiling = table_points(doc)
        .into_iter()
        .filter(|p| p.channels == 1)
        .max_by(|a, b| a.m(rate).total_cmp(&b.m(rate)));
    if let Some(c) = ceiling
        && let Some(l) = find(doc, 1, c.packet)
    {
        let _ = writeln!(
            s,
            "- Beyond the seed: **Packet-rate ceiling.** One channel peaks at {:.0} round trips/s \
             ({} B packets, {} B transfer: {} round trips per run); the longest run at that \
             packet size ({} B transfer, {} round trips) makes {:.0}/s.",
            c.m(rate),
            c.packet,
            c.transfer,
            c.transfer.div_ceil(c.packet.max(1) as u64),
            l.transfer,
            l.transfer.div_ceil(l.packet.max(1) as u64),
            l.m(rate),
        );
    }
    let inflated: Vec<Pt<'_>> = table_points(doc)
        .into_iter()
        .filter(|p| p.channels > 1 && p.m(SUM_OF_RATES) > 1.5 * p.m(figure::THROUGHPUT))
        .collect();
    let inflation = |p: &Pt<'_>| p.m(SUM_OF_RATES) / p.m(figure::THROUGHPUT);
    if let Some(worst) = inflated
        .iter()
        .max_by(|a, b| inflation(a).total_cmp(&inflation(b)))
    {
        let _ = writeln!(
            s,
            "- Beyond the seed: **the original's aggregate is inflated on short runs.** In {} points the sum of \
             per-thread rates exceeds the common-window aggregate by more than 1.5×; worst: \
             {} ch × {} B × {} B, {} summed vs {} actually carried. The SC598's 44 MB/s for \
             32 × 496 B × 100 B is the same effect.",
            inflated.len(),
            worst.channels,
            worst.packet,
            worst.transfer,
            human(worst.m(SUM_OF_RATES)),
            human(worst.m(figure::THROUGHPUT)),
        );
    }
}

/// The variants at 496-byte packets: the notifications, zero-copy against copy.
fn summary_variants(s: &mut String, doc: &ResultDoc) {
    let rate = figure::MESSAGE_RATE;
    for ch in variant_channels(doc) {
        let get = |n| variant(doc, ch, n, Buffers::Copy);
        if let (Some(k), Some(e), Some(p)) =
            (get(Notify::Kick), get(Notify::EventIdx), get(Notify::Poll))
        {
            let _ = writeln!(
                s,
                "- {ch} channel{}: kick {:.0} round trips/s ({:.2}+{:.2} kicks per round trip), \
                 event-idx {:.0}/s ({:.2}+{:.2}), poll {:.0}/s (p50 {:.2} µs, {:.2} host + {} \
                 remote CPUs).",
                if ch == 1 { "" } else { "s" },
                k.m(rate),
                k.m(KICKS_TO_REMOTE),
                k.m(KICKS_TO_HOST),
                e.m(rate),
                e.m(KICKS_TO_REMOTE),
                e.m(KICKS_TO_HOST),
                p.m(rate),
                p.m(figure::LATENCY[0]) / 1e3,
                p.m(figure::CPU_MAIN),
                median(p.result, figure::CPU_PEERS).map_or("–".into(), two),
            );
        }
        if let (Some(z), Some(c)) = (
            variant(doc, ch, Notify::Kick, Buffers::ZeroCopy),
            variant(doc, ch, Notify::Kick, Buffers::Copy),
        ) {
            let ratio = crate::folder::speedup(z.result, c.result, rate);
            let verdict = match &ratio {
                Some(r) if r.n >= 2 && r.ci_low <= 1.0 && 1.0 <= r.ci_high => format!(
                    "zero-copy/copy {:.2}× in paired runs, interval {:.2}–{:.2}× ({:.0} % level): \
                     no difference beyond the noise, as expected when a 496-byte copy is tens \
                     of nanoseconds next to a wake-up",
                    r.median,
                    r.ci_low,
                    r.ci_high,
                    r.ci_level * 100.0
                ),
                Some(r) if r.n >= 2 && (r.median - 1.0).abs() < 0.1 => format!(
                    "zero-copy/copy {:.2}× in paired runs, interval {:.2}–{:.2}× ({:.0} % level): \
                     a small difference (under 10 %) beyond the runs' spread",
                    r.median,
                    r.ci_low,
                    r.ci_high,
                    r.ci_level * 100.0
                ),
                Some(r) if r.n >= 2 => format!(
                    "zero-copy/copy {:.2}× in paired runs, interval {:.2}–{:.2}× ({:.0} % level): \
                     a difference beyond the runs' spread, far more than a 496-byte copy costs, \
                     so it comes from the notification path or the machine, not the copy",
                    r.median,
                    r.ci_low,
                    r.ci_high,
                    r.ci_level * 100.0
                ),
                _ => "one run each: no comparison".to_string(),
            };
            let _ = writeln!(
                s,
                "  Zero-copy vs copy with kicks: {:.0} vs {:.0} round trips/s ({verdict}).",
                z.m(rate),
                c.m(rate)
            );
        }
    }
}

/// The targets' verdicts in this run, against the machine's floors.
fn summary_targets(s: &mut String, doc: &ResultDoc) {
    let rate = figure::MESSAGE_RATE;
    let limits = doc.context.limits.as_ref().map(|l| &l.start);
    if let Some(p) = variant(doc, 1, Notify::Poll, Buffers::Copy) {
        let floor = limits
            .and_then(|l| l.cache_line_rtt_ns.as_ref())
            .map_or(String::new(), |c| {
                format!(
                    "; its median round trip, {}, is {:.1}× the cache-line round trip this machine \
                     measured at the start ({})",
                    xferbench_report::format::nanos(p.m(figure::LATENCY[0])),
                    p.m(figure::LATENCY[0]) / c.median,
                    xferbench_report::format::nanos(c.median)
                )
            });
        let _ = writeln!(
            s,
            "- One channel, 496 B, polling: {:.0} round trips/s (target ≥ 1 000 000: {}){floor}.",
            p.m(rate),
            met(p.m(rate) >= 1e6)
        );
    }
    if let Some(k) = variant(doc, 1, Notify::Kick, Buffers::Copy) {
        let rt = k.m(figure::LATENCY[0]);
        let against = match limits.and_then(|l| l.futex_rtt_cross_ns.as_ref()) {
            Some(f) => format!(
                "{:.2}× the cross-CPU futex wake round trip this machine measured at the start \
                 of the study ({}; target within 1.2×: {})",
                rt / f.median,
                xferbench_report::format::nanos(f.median),
                // Below the floor the floor does not bound it: no verdict.
                if rt / f.median < 1.0 / xferbench_lab::limits::fraction::SUSPECT {
                    "suspect, below the floor it is held against (measured under other \
                     conditions, or not this path's floor)"
                } else {
                    met(rt / f.median <= 1.2)
                }
            ),
            None => "the futex wake round trip was not measured (`--no-limits`); \
                     `xferbench limits` measures it"
                .to_string(),
        };
        let _ = writeln!(
            s,
            "- Kick per message: median round trip {:.1} µs, {against}.",
            rt / 1e3
        );
    }
    let pair = match (
        variant(doc, 1, Notify::Kick, Buffers::Copy),
        variant(doc, 32, Notify::Kick, Buffers::Copy),
    ) {
        (Some(a), Some(b)) => Some((a, b, "variants")),
        _ => match (find(doc, 1, 496), find(doc, 32, 496)) {
            (Some(a), Some(b)) => Some((a, b, "tables")),
            _ => None,
        },
    };
    if let Some((one, many, from)) = pair {
        let _ = writeln!(
            s,
            "- 32 channels vs one (496 B, kick; {from}): total {:.2}× (target ≥ 0.8: {}), Jain \
             {:.3} (target ≥ 0.9: {}).",
            many.m(figure::THROUGHPUT) / one.m(figure::THROUGHPUT),
            met(many.m(figure::THROUGHPUT) / one.m(figure::THROUGHPUT) >= 0.8),
            many.m(figure::FAIRNESS),
            met(many.m(figure::FAIRNESS) >= 0.9)
        );
    }
}

/// The points the plan's budget skipped, if any.
fn summary_skipped(s: &mut String, doc: &ResultDoc) {
    let extras = doc.study.as_ref().map(|i| &i.extras);
    let skipped = extras
        .and_then(|e| e.get("skipped"))
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default();
    if !skipped.is_empty() {
        let budget = extras
            .and_then(|e| e.get("scale"))
            .and_then(|v| v["budget"].as_u64())
            .map_or("the budget's".into(), |b| b.to_string());
        let _ = writeln!(
            s,
            "\n## Skipped points\n\nTo keep the study to a few minutes on two CPUs, points \
             above {budget} round trips (all channels) were skipped: {}.",
            skipped
                .iter()
                .map(|k| format!(
                    "{}ch×{}B×{}B",
                    k[CHANNELS.name()],
                    k[PACKET.name()],
                    k[TRANSFER.name()]
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// The units of [`channel_table`]'s columns of quantities, for the HTML page (the
/// average columns only where the table has several channels).
pub fn channel_units(channels: u32) -> Vec<ColumnUnit> {
    let mut units: Vec<ColumnUnit> = [
        "Single CH speed",
        "SC598 Single CH speed",
        "Average CH speed",
        "SC598 Average CH speed",
        "Aggregate (common window)",
    ]
    .into_iter()
    .map(|c| ColumnUnit::new(c, Unit::BytesPerSecond))
    .collect();
    if channels == 1 {
        units.retain(|u| !u.column.starts_with("Average") && !u.column.contains(" Average"));
    }
    units.extend([
        ColumnUnit::new("PACKET SIZE", Unit::Bytes),
        ColumnUnit::new("Round trips/s", Unit::PerSecond),
        ColumnUnit::new("RTT p50 µs", Unit::Microseconds),
    ]);
    units
}

/// The units of [`variants_table`]'s columns of quantities, for the HTML page.
pub fn variants_units() -> Vec<ColumnUnit> {
    vec![
        ColumnUnit::new("Round trips/s", Unit::PerSecond),
        ColumnUnit::new("Aggregate B/s", Unit::BytesPerSecond),
        ColumnUnit::new("RTT p50 µs", Unit::Microseconds),
        ColumnUnit::new("RTT p99 µs", Unit::Microseconds),
    ]
}

/// Writes the study's tables, plots and summary (`results.json` is the caller's).
pub fn write(folder: &StudyFolder, doc: &ResultDoc) -> Result<()> {
    for ch in channel_counts(doc) {
        folder.write_table_in(
            &format!("table-{ch}ch"),
            &channel_table(doc, ch),
            channel_units(ch),
        )?;
    }
    if !variant_points(doc).is_empty() {
        folder.write_table_in("variants", &variants_table(doc), variants_units())?;
    }
    if !table_points(doc).is_empty() {
        let (per, total) = plots(doc);
        folder.write_plot("bandwidth-per-channel", &per)?;
        folder.write_plot("total-bandwidth", &total)?;
    }
    folder.write_text("summary.md", &summary(doc))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::fixture::rpmsg_doc;
    use super::*;

    #[test]
    fn the_folder_of_a_small_study_has_its_tables_plots_and_findings() {
        let doc = rpmsg_doc();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("study");
        crate::write_folder(&out, &doc).unwrap();
        for f in [
            "results.json",
            "summary.md",
            "table-1ch.md",
            "table-1ch.csv",
            "table-8ch.md",
            "variants.md",
            "variants.csv",
            "bandwidth-per-channel.svg",
            "total-bandwidth.svg",
        ] {
            assert!(out.join(f).is_file(), "{f} missing");
        }
        let t8 = channel_table(&doc, 8);
        assert_eq!(t8.rows.len(), 2);
        assert_eq!(
            &t8.headers[..6],
            [
                "PACKET SIZE",
                "TRANSFER SIZE",
                "Single CH speed",
                "SC598 Single CH speed",
                "Average CH speed",
                "SC598 Average CH speed"
            ]
        );
        // Medians with their intervals; the average is the sum of rates ÷ channels.
        assert!(t8.rows[0][2].contains(" ["), "{:?}", t8.rows[0]);
        let sum: f64 = t8.rows[1][2].split(' ').next().unwrap().parse().unwrap();
        let avg: f64 = t8.rows[1][4].split(' ').next().unwrap().parse().unwrap();
        // Each cell beside the SC598's own, or says the original did not measure it.
        let seed = |row: &Vec<String>, col: usize| {
            let (packet, transfer) = (row[0].parse().ok(), row[1].parse().unwrap());
            (packet, transfer, row[col].clone())
        };
        for row in &t8.rows {
            let (packet, transfer, cell) = seed(row, 3);
            if let Some(packet) = packet {
                let want = super::super::seed::cell(8, packet, transfer)
                    .map_or("not measured".to_string(), |c| c.0.to_string());
                assert_eq!(cell, want, "{row:?}");
            }
        }
        assert!((sum / 8.0 - avg).abs() <= 1.0, "{sum} / 8 vs {avg}");
        let v = variants_table(&doc);
        assert_eq!(v.rows.len(), 4);
        assert_eq!(v.rows[2][1], "poll");
        let (per, total) = plots(&doc);
        assert_eq!(per.series.len(), 2 + 3, "ours and the SC598's");
        assert_eq!(total.series[0].points.len(), 2);
        let s = summary(&doc);
        for needle in [
            "interleaved",
            "## Findings",
            "barely depends on the packet size",
            "Packet-rate ceiling",
            "SC598",
            "inflated on short runs",
            "poll 1530000/s",
            "Zero-copy vs copy",
            "## Skipped points",
            "above 12000 round trips",
            "8ch×1B×100000B",
        ] {
            assert!(s.contains(needle), "{needle}: {s}");
        }
    }

    #[test]
    fn the_packet_size_finding_holds_on_level_rates_and_not_on_diverging_ones() {
        let seed = (14_627.0, 10_892.0);
        assert!(packet_size_finding((17_000.0, 19_000.0), seed, None).holds());
        let f = packet_size_finding((17_000.0, 40_000.0), seed, None);
        assert_eq!(f.verdict, crate::finding::Verdict::DoesNotHold);
        assert!(f.line().contains("2.35×"), "{}", f.line());
        let f = packet_size_finding((17_000.0, 19_000.0), seed, Some("one CPU".into()));
        assert!(f.cannot_be_judged());
    }

    #[test]
    fn the_transfer_size_finding_takes_the_widest_spread() {
        let seed = [
            (1, 14_600.0),
            (1, 14_400.0),
            (496, 9_300.0),
            (496, 10_900.0),
        ];
        let level = [(1, 17_000.0), (1, 16_000.0), (64, 18_000.0), (64, 20_000.0)];
        let f = transfer_size_finding(&level, &seed, (100, 40_000), None).unwrap();
        assert!(f.holds(), "{}", f.line());
        assert!(f.seed.contains("the widest at 496 B"), "{}", f.seed);
        let apart = [(1, 17_000.0), (1, 16_000.0), (64, 18_000.0), (64, 84_000.0)];
        let f = transfer_size_finding(&apart, &seed, (100, 40_000), None).unwrap();
        assert!(!f.holds() && !f.cannot_be_judged());
        assert!(f.figures.contains("4.67× at 64 B"), "{}", f.figures);
        // One transfer size per packet size: nothing to compare.
        assert_eq!(
            transfer_size_finding(&[(1, 1.0)], &seed, (1, 1), None),
            None
        );
    }

    #[test]
    fn the_channels_finding_holds_on_a_level_total_and_needs_a_cpu_per_thread() {
        let seed = [(8, 1.33), (32, 1.30)];
        let level = [(8, 1.2, 1.4e6), (32, 0.9, 0.3e6)];
        assert!(channels_finding(9.6e6, &level, &seed, None).holds());
        let rising = [(8, 4.4, 5.6e6), (32, 5.1, 1.8e6)];
        let f = channels_finding(9.6e6, &rising, &seed, None);
        assert_eq!(f.verdict, crate::finding::Verdict::DoesNotHold);
        // The committed machine's two CPUs for 32 channel threads and the remote.
        let mut doc = rpmsg_doc();
        doc.context.cores = 2;
        let f = findings(&doc).pop().unwrap();
        assert!(f.seed.starts_with("the total stays level"), "{}", f.seed);
        assert!(f.cannot_be_judged(), "{}", f.line());
        assert!(f.line().contains("needs 9 CPUs"), "{}", f.line());
        assert!(f.line().contains("not the design"), "{}", f.line());
        doc.context.cores = 16;
        assert!(!findings(&doc).pop().unwrap().cannot_be_judged());
    }

    #[test]
    fn rpmsg_channel_table() {
        insta::assert_snapshot!(channel_table(&rpmsg_doc(), 8).to_markdown());
    }

    #[test]
    fn rpmsg_variants_table() {
        insta::assert_snapshot!(variants_table(&rpmsg_doc()).to_markdown());
    }

    #[test]
    fn rpmsg_summary() {
        insta::assert_snapshot!(summary(&rpmsg_doc()));
    }
}
