//! The RPMsg study folder: `results.json`; one table per channel count shaped like the
//! original's (packet size, transfer size, single-channel speed, average per-channel
//! speed) plus our common-window aggregate; the two plots of the original (bandwidth
//! per channel and total bandwidth against packet size, one line per channel count,
//! with the SC598's figures beside ours); the variants table; and `summary.md`.

use crate::plot::{LineChart, Scale, Series};
use crate::study::{StudyFolder, Table};
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;
use xferbench_lab::studies::rpmsg::{PointRecord, StudyOutcome, StudyResults};

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

/// The table of one channel count.
pub fn channel_table(res: &StudyResults, channels: u32) -> Table {
    let mut headers: Vec<String> = ["PACKET SIZE", "TRANSFER SIZE", "Single CH speed"]
        .map(String::from)
        .to_vec();
    if channels > 1 {
        headers.push("Average CH speed".into());
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
    for p in res.points.iter().filter(|p| p.point.channels == channels) {
        let m = &p.medians;
        let mut row = vec![
            if last_packet == Some(p.point.packet) {
                String::new()
            } else {
                p.point.packet.to_string()
            },
            p.point.transfer.to_string(),
            int(m.sum_of_rates_bytes_per_s),
        ];
        last_packet = Some(p.point.packet);
        if channels > 1 {
            row.push(int(m.per_channel_bytes_per_s));
        }
        row.extend([
            int(m.aggregate_bytes_per_s),
            int(m.round_trips_per_s),
            format!("{:.1}", m.rtt_p50_ns / 1e3),
            format!("{:.3}", m.jain),
            format!("{:.2}", m.host_cpus),
            m.remote_cpus.map_or("–".into(), |c| format!("{c:.2}")),
        ]);
        rows.push(row);
    }
    Table {
        title: format!(
            "{channels} channel{} (bytes/s; \"Single CH speed\" is the original's sum of per-thread rates)",
            if channels == 1 { "" } else { "s" }
        ),
        headers,
        rows,
    }
}

/// The variants table.
pub fn variants_table(res: &StudyResults) -> Table {
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
    let rows = res
        .variants
        .iter()
        .map(|v| {
            let m = &v.medians;
            vec![
                v.point.channels.to_string(),
                v.point.notify.name().into(),
                v.point.buffers.name().into(),
                int(m.round_trips_per_s),
                int(m.aggregate_bytes_per_s),
                format!("{:.2}", m.rtt_p50_ns / 1e3),
                format!("{:.2}", m.rtt_p99_ns / 1e3),
                format!("{:.2}", m.kicks_to_remote_per_rt),
                format!("{:.2}", m.kicks_to_host_per_rt),
                format!("{:.3}", m.jain),
                format!("{:.2}", m.host_cpus),
                m.remote_cpus.map_or("–".into(), |c| format!("{c:.2}")),
            ]
        })
        .collect();
    Table {
        title: "Variants: 496-byte packets, notification × buffer mode (medians)".into(),
        headers,
        rows,
    }
}

/// For each packet size, the point with the largest kept transfer size (the steadiest).
fn longest(res: &StudyResults, channels: u32) -> Vec<&PointRecord> {
    let mut out: Vec<&PointRecord> = Vec::new();
    for p in res.points.iter().filter(|p| p.point.channels == channels) {
        match out.last_mut() {
            Some(last) if last.point.packet == p.point.packet => {
                if p.point.transfer > last.point.transfer {
                    *last = p;
                }
            }
            _ => out.push(p),
        }
    }
    out
}

fn channel_counts(res: &StudyResults) -> Vec<u32> {
    let mut c: Vec<u32> = res.points.iter().map(|p| p.point.channels).collect();
    c.dedup();
    c
}

/// The two plots: (per channel, total).
pub fn plots(res: &StudyResults) -> (LineChart, LineChart) {
    let mut per = Vec::new();
    let mut total = Vec::new();
    for ch in channel_counts(res) {
        let pts = longest(res, ch);
        per.push(Series {
            label: format!("{ch} ch (this machine)"),
            points: pts
                .iter()
                .map(|p| (p.point.packet as f64, p.medians.per_channel_bytes_per_s))
                .collect(),
        });
        total.push(Series {
            label: format!("{ch} ch (this machine)"),
            points: pts
                .iter()
                .map(|p| (p.point.packet as f64, p.medians.aggregate_bytes_per_s))
                .collect(),
        });
    }
    for (ch, figs) in ORIGINAL {
        per.push(Series {
            label: format!("{ch} ch (SC598)"),
            points: figs
                .iter()
                .map(|&(s, b)| (s as f64, b / f64::from(ch)))
                .collect(),
        });
        total.push(Series {
            label: format!("{ch} ch (SC598)"),
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
            "Bandwidth per channel vs packet size (longest kept transfer; kick per message)",
            "bytes/s per channel (sum of rates ÷ channels)",
            per,
        ),
        chart(
            "Total bandwidth vs packet size (longest kept transfer; kick per message)",
            "bytes/s, all channels over the common window",
            total,
        ),
    )
}

fn find(res: &StudyResults, ch: u32, packet: usize) -> Option<&PointRecord> {
    longest(res, ch)
        .into_iter()
        .find(|p| p.point.packet == packet)
}

fn variant<'a>(
    res: &'a StudyResults,
    ch: u32,
    notify: &str,
    buffers: &str,
) -> Option<&'a PointRecord> {
    res.variants.iter().find(|v| {
        v.point.channels == ch
            && v.point.notify.name() == notify
            && v.point.buffers.name() == buffers
    })
}

/// `summary.md`: the findings in sentences, with this run's numbers.
pub fn summary(res: &StudyResults) -> String {
    let mut s = String::new();
    let c = &res.context;
    let _ = writeln!(s, "# RPMsg study — summary\n");
    let _ = writeln!(
        s,
        "Machine: {} ({} CPUs), kernel {}, {}. Started {}. {}Remote: a separate process; \
         vrings of 256 entries, 512-byte buffers, a kick (futex wake) per message unless \
         stated.\n",
        c.cpu_model,
        c.cores,
        c.kernel,
        c.os,
        c.start_time,
        if res.quick {
            "Quick plan (`--quick`). "
        } else {
            ""
        }
    );
    match &res.outcome {
        StudyOutcome::Complete => {}
        StudyOutcome::Interrupted => {
            let _ = writeln!(s, "**Interrupted:** only the points below finished.\n");
        }
        StudyOutcome::Failed { error } => {
            let _ = writeln!(s, "**Failed:** {error}. Only the points below finished.\n");
        }
    }
    let _ = writeln!(s, "## Findings\n");
    let ceiling = res
        .points
        .iter()
        .filter(|p| p.point.channels == 1)
        .max_by(|a, b| {
            a.medians
                .round_trips_per_s
                .total_cmp(&b.medians.round_trips_per_s)
        });
    if let (Some(c), Some(p1), Some(p496)) = (ceiling, find(res, 1, 1), find(res, 1, 496)) {
        let _ = writeln!(
            s,
            "- **Packet-rate ceiling.** One channel peaks at {:.0} round trips/s ({} B packets, \
             {} B transfer). In the longest runs it makes {:.0} round trips/s with 1-byte \
             packets and {:.0}/s with 496-byte packets (median round trip {:.1} µs and {:.1} µs). \
             The SC598 made about 14.5k/s (about 69 µs per round trip at 1 B, 92 µs at 496 B): \
             this machine makes {:.0}× as many. As on the SC598, the rate barely depends on the packet size, so \
             bandwidth grows about linearly with it: {} at 1 B, {} at 496 B (SC598: 14.5 kB/s \
             and 5.3 MB/s).",
            c.medians.round_trips_per_s,
            c.point.packet,
            c.point.transfer,
            p1.medians.round_trips_per_s,
            p496.medians.round_trips_per_s,
            p1.medians.rtt_p50_ns / 1e3,
            p496.medians.rtt_p50_ns / 1e3,
            c.medians.round_trips_per_s / 14_500.0,
            human(p1.medians.aggregate_bytes_per_s),
            human(p496.medians.aggregate_bytes_per_s),
        );
    }
    let counts = channel_counts(res);
    if counts.len() > 1 {
        let mut line = String::from("- **Adding channels** (496-byte packets): ");
        let base = find(res, 1, 496).map(|p| p.medians.aggregate_bytes_per_s);
        let mut parts = Vec::new();
        for ch in &counts {
            if let Some(p) = find(res, *ch, 496) {
                parts.push(format!(
                    "{ch} ch: total {} ({}), {} per channel, Jain {:.3}",
                    human(p.medians.aggregate_bytes_per_s),
                    base.map_or(String::new(), |b| format!(
                        "{:.2}× one channel",
                        p.medians.aggregate_bytes_per_s / b
                    )),
                    human(p.medians.per_channel_bytes_per_s),
                    p.medians.jain
                ));
            }
        }
        line.push_str(&parts.join("; "));
        let most = counts.last().and_then(|c| find(res, *c, 496));
        let ratio = match (base, most) {
            (Some(b), Some(m)) => m.medians.aggregate_bytes_per_s / b,
            _ => f64::NAN,
        };
        line.push_str(&if ratio >= 0.9 {
            format!(
                ". The total stays level or rises ({ratio:.2}× with the most channels) while the \
                 per-channel bandwidth falls about as 1/channels — the SC598's pattern (7.1 MB/s \
                 with 8 channels, 6.1–6.9 MB/s with 32, from 5.3 MB/s with one). With many \
                 channels one kick carries several replies."
            )
        } else {
            format!(
                ". Here the total falls to {ratio:.2}× with the most channels, unlike the \
                 SC598 (7.1 MB/s with 8 channels, 6.1–6.9 MB/s with 32, from 5.3 MB/s with \
                 one); these points ran minutes apart on a machine whose wake-up cost drifts, \
                 so compare with the variants below, measured back to back."
            )
        });
        let _ = writeln!(s, "{line}");
    }
    let inflated: Vec<&PointRecord> = res
        .points
        .iter()
        .filter(|p| {
            p.point.channels > 1
                && p.medians.sum_of_rates_bytes_per_s > 1.5 * p.medians.aggregate_bytes_per_s
        })
        .collect();
    if let Some(worst) = inflated.iter().max_by(|a, b| {
        (a.medians.sum_of_rates_bytes_per_s / a.medians.aggregate_bytes_per_s)
            .total_cmp(&(b.medians.sum_of_rates_bytes_per_s / b.medians.aggregate_bytes_per_s))
    }) {
        let _ = writeln!(
            s,
            "- **The original's aggregate is inflated on short runs.** In {} points the sum of \
             per-thread rates exceeds the common-window aggregate by more than 1.5×; worst: \
             {} ch × {} B × {} B, {} summed vs {} actually carried. The SC598's 44 MB/s for \
             32 × 496 B × 100 B is the same effect.",
            inflated.len(),
            worst.point.channels,
            worst.point.packet,
            worst.point.transfer,
            human(worst.medians.sum_of_rates_bytes_per_s),
            human(worst.medians.aggregate_bytes_per_s),
        );
    }
    let _ = writeln!(s, "\n## Variants (496-byte packets)\n");
    for ch in &res.plan.variant_channels {
        let get = |n: &str| variant(res, *ch, n, "copy");
        if let (Some(k), Some(e), Some(p)) = (get("kick"), get("event-idx"), get("poll")) {
            let _ = writeln!(
                s,
                "- {ch} channel{}: kick {:.0} round trips/s ({:.2}+{:.2} kicks per round trip), \
                 event-idx {:.0}/s ({:.2}+{:.2}), poll {:.0}/s (p50 {:.2} µs, {:.2} host + {} \
                 remote CPUs).",
                if *ch == 1 { "" } else { "s" },
                k.medians.round_trips_per_s,
                k.medians.kicks_to_remote_per_rt,
                k.medians.kicks_to_host_per_rt,
                e.medians.round_trips_per_s,
                e.medians.kicks_to_remote_per_rt,
                e.medians.kicks_to_host_per_rt,
                p.medians.round_trips_per_s,
                p.medians.rtt_p50_ns / 1e3,
                p.medians.host_cpus,
                p.medians
                    .remote_cpus
                    .map_or("–".into(), |c| format!("{c:.2}")),
            );
        }
        let zc = variant(res, *ch, "kick", "zero-copy");
        let cp = variant(res, *ch, "kick", "copy");
        if let (Some(z), Some(c)) = (zc, cp) {
            let _ = writeln!(
                s,
                "  Zero-copy vs copy with kicks: {:.0} vs {:.0} round trips/s (a 496-byte copy \
                 is tens of nanoseconds, small next to a wake-up).",
                z.medians.round_trips_per_s, c.medians.round_trips_per_s
            );
        }
    }
    let _ = writeln!(s, "\n## Targets\n");
    if let Some(p) = variant(res, 1, "poll", "copy") {
        let _ = writeln!(
            s,
            "- One channel, 496 B, polling: {:.0} round trips/s (target ≥ 1 000 000).",
            p.medians.round_trips_per_s
        );
    }
    if let Some(k) = variant(res, 1, "kick", "copy") {
        let _ = writeln!(
            s,
            "- Kick per message: median round trip {:.1} µs; compare with the cross-core \
             futex wake-up round trip from `cargo bench -p xferbench-transports --bench wake` \
             (target: within 1.2×).",
            k.medians.rtt_p50_ns / 1e3
        );
    }
    let pair = match (
        variant(res, 1, "kick", "copy"),
        variant(res, 32, "kick", "copy"),
    ) {
        (Some(a), Some(b)) => Some((a, b, "variants, measured back to back")),
        _ => match (find(res, 1, 496), find(res, 32, 496)) {
            (Some(a), Some(b)) => Some((a, b, "tables")),
            _ => None,
        },
    };
    if let Some((one, many, from)) = pair {
        let _ = writeln!(
            s,
            "- 32 channels vs one (496 B, kick; {from}): total {:.2}× (target ≥ 0.8), Jain \
             {:.3} (target ≥ 0.9).",
            many.medians.aggregate_bytes_per_s / one.medians.aggregate_bytes_per_s,
            many.medians.jain
        );
    }
    if !res.skipped.is_empty() {
        let _ = writeln!(
            s,
            "\n## Skipped points\n\nTo keep the study to a few minutes on two CPUs, points \
             above {} round trips (all channels) were skipped: {}.",
            res.plan.budget,
            res.skipped
                .iter()
                .map(|k| format!("{}ch×{}B×{}B", k.channels, k.packet, k.transfer))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(
        s,
        "\nFiles: `results.json` (every run, per-channel rows), `table-<N>ch.md/.csv`, \
         `variants.md/.csv`, `bandwidth-per-channel.svg`, `total-bandwidth.svg`."
    );
    s
}

/// Writes the whole folder.
pub fn write(dir: &Path, res: &StudyResults) -> Result<()> {
    let folder = StudyFolder::create(dir)?;
    folder.write_json("results.json", res)?;
    for ch in channel_counts(res) {
        folder.write_table(&format!("table-{ch}ch"), &channel_table(res, ch))?;
    }
    if !res.variants.is_empty() {
        folder.write_table("variants", &variants_table(res))?;
    }
    if !res.points.is_empty() {
        let (per, total) = plots(res);
        folder.write_plot("bandwidth-per-channel", &per)?;
        folder.write_plot("total-bandwidth", &total)?;
    }
    folder.write_text("summary.md", &summary(res))?;
    Ok(())
}
