//! What a run measured, and the one way every rig turns it into a [`RunRecord`].
//!
//! A workload reports what each of its channels did ([`ChannelOutcome`]) and
//! declares its primary figure ([`FigureRules`]); [`aggregate`] applies the rules
//! every rig shares: aggregate throughput is all bytes over the common window of all
//! channels, never a sum of per-channel rates.

use crate::result::{ChannelRun, Latency, RunRecord, figure};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use xferbench_probes::clock::{StallSample, Stamp};
use xferbench_probes::cpu::ProcessCpu;
use xferbench_probes::stats::jain_index;
use xferbench_probes::verify::Integrity;

/// What a workload declares about its figures: which one is primary (the one the
/// noisy check, `compare` and the tables use) and which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FigureRules {
    /// The primary figure's name (see [`figure`]).
    pub primary: &'static str,
    /// Whether higher values of the primary figure are better.
    pub higher_is_better: bool,
}

/// What one channel (or one client process) did in one run, on the shared clock.
#[derive(Debug)]
pub struct ChannelOutcome {
    /// First message sent.
    pub start: Stamp,
    /// Last delivery (stream: the receiver's end of stream; request/response: the
    /// last reply).
    pub end: Stamp,
    /// Messages (or round trips, or transactions) delivered.
    pub messages: u64,
    /// Payload bytes delivered.
    pub bytes: u64,
    /// Per-message latency, nanoseconds, when the workload measures it.
    pub latency: Option<Histogram<u64>>,
    /// What verification found.
    pub integrity: Option<Integrity>,
    /// What a `load` driver measured of its schedule.
    pub schedule: Option<ScheduleOutcome>,
}

/// Builds a run's record from what each channel did and the CPU of every process,
/// by the rules every rig shares.
///
/// * The common window runs from the earliest start to the latest end.
/// * Throughput and message rate are totals over the common window.
/// * Per-channel rates use each channel's own window; Jain's index is over them.
/// * Latency percentiles come from all channels' histograms merged.
/// * `cpu[0]` is the main process; the others' CPU time is expressed in CPUs over
///   the common window (`cpu_peers_cpus`), and all of it per message.
pub fn aggregate(channels: Vec<ChannelOutcome>, cpu: Vec<ProcessCpu>) -> RunRecord {
    let first = channels.iter().map(|c| c.start).min().unwrap_or(Stamp(0));
    let last = channels
        .iter()
        .map(|c| c.end.max(c.start))
        .max()
        .unwrap_or(Stamp(0));
    let window_ns = last.since(first).max(1);
    let mut merged = crate::result::new_histogram();
    let mut integrity_total: Option<Integrity> = None;
    let mut schedules = Schedules::default();
    let mut rows = Vec::with_capacity(channels.len());
    for (i, c) in channels.into_iter().enumerate() {
        let end = c.end.max(c.start);
        let own = end.since(c.start).max(1) as f64 / 1e9;
        if let Some(k) = &c.integrity {
            integrity_total
                .get_or_insert_with(Integrity::default)
                .add(k);
        }
        if let Some(h) = &c.latency {
            let _ = merged.add(h);
        }
        if let Some(s) = &c.schedule {
            schedules.add(s);
        }
        rows.push(ChannelRun {
            channel: i,
            start_offset_ns: c.start.since(first),
            end_offset_ns: end.since(first),
            messages: c.messages,
            bytes: c.bytes,
            throughput_bytes_per_s: c.bytes as f64 / own,
            messages_per_s: c.messages as f64 / own,
            latency: c
                .latency
                .as_ref()
                .filter(|h| !h.is_empty())
                .map(Latency::of),
            integrity: c.integrity,
        });
    }
    let messages: u64 = rows.iter().map(|c| c.messages).sum();
    let bytes: u64 = rows.iter().map(|c| c.bytes).sum();
    let window_s = window_ns as f64 / 1e9;
    let mut figures = BTreeMap::new();
    figures.insert(figure::THROUGHPUT.to_string(), bytes as f64 / window_s);
    figures.insert(figure::MESSAGE_RATE.to_string(), messages as f64 / window_s);
    figures.insert(figure::WINDOW.to_string(), window_s);
    if rows.len() > 1 {
        let shares: Vec<f64> = rows.iter().map(|c| c.throughput_bytes_per_s).collect();
        if let Some(j) = jain_index(&shares) {
            figures.insert(figure::FAIRNESS.to_string(), j);
        }
    }
    let latency = (!merged.is_empty()).then(|| Latency::of(&merged));
    if let Some(l) = &latency {
        for (name, v) in l.figures() {
            figures.insert(name.to_string(), v);
        }
    }
    schedules.insert_figures(&mut figures, &merged);
    insert_cpu_figures(&mut figures, &cpu, window_s, messages);
    RunRecord {
        run: 0,
        sequence: None,
        window_ns,
        messages,
        bytes,
        figures,
        latency,
        channels: rows,
        cpu,
        integrity: integrity_total,
        counters: None,
        contention: None,
        collapsed: None,
    }
}

/// The schedules of a run's load channels, summed: offered rate, messages unsent and
/// lost, the senders' lag behind their schedules and the stalls of their CPUs.
#[derive(Default)]
struct Schedules {
    /// Offered messages per second, unsent and lost messages; `None` when no
    /// channel ran on a schedule.
    counts: Option<(f64, u64, u64)>,
    lag: Option<Histogram<u64>>,
    stalls: Option<StallSample>,
}

impl Schedules {
    fn add(&mut self, s: &ScheduleOutcome) {
        if let Some(h) = &s.lag {
            let _ = self
                .lag
                .get_or_insert_with(crate::result::new_histogram)
                .add(h);
        }
        if let Some(st) = &s.stalls {
            let all = self.stalls.get_or_insert_with(|| StallSample {
                cpu: st.cpu,
                window_ns: 0.0,
                stalls_ns: Vec::new(),
                lost_ns: 0.0,
            });
            all.window_ns += st.window_ns;
            all.lost_ns += st.lost_ns;
            all.stalls_ns.extend_from_slice(&st.stalls_ns);
        }
        let (offered, unsent, lost) = self.counts.get_or_insert((0.0, 0, 0));
        *offered += s.offered_per_s;
        *unsent += s.unsent;
        *lost += s.lost;
    }

    /// The schedule's figures of a run whose channels' latencies are `merged`.
    fn insert_figures(self, figures: &mut BTreeMap<String, f64>, merged: &Histogram<u64>) {
        let Some((offered, unsent, lost)) = self.counts else {
            return;
        };
        figures.insert(figure::OFFERED_RATE.to_string(), offered);
        figures.insert(figure::UNSENT.to_string(), unsent as f64);
        figures.insert(figure::LOST.to_string(), lost as f64);
        if !merged.is_empty() {
            figures.insert(
                figure::LATENCY_P9999.to_string(),
                merged.value_at_quantile(0.9999) as f64,
            );
        }
        if let Some(lag) = self.lag.filter(|h| !h.is_empty()) {
            for (name, q) in figure::BEHIND.iter().zip([0.5, 0.99, 0.999, 1.0]) {
                figures.insert(name.to_string(), lag.value_at_quantile(q) as f64);
            }
        }
        let stalls = self.stalls;
        if let Some(st) = stalls.filter(|s| s.window_ns >= figure::SENDER_STALL_MIN_WINDOW_NS) {
            figures.insert(figure::SENDER_STALL_P99.to_string(), st.wait_quantile(0.99));
            figures.insert(
                figure::SENDER_STALL_FRACTION.to_string(),
                st.lost_fraction(),
            );
        }
    }
}

/// The CPU figures of a run: the main process's CPUs, the others' in CPUs over the
/// common window, and all of it per message.
fn insert_cpu_figures(
    figures: &mut BTreeMap<String, f64>,
    cpu: &[ProcessCpu],
    window_s: f64,
    messages: u64,
) {
    if let Some(main) = cpu.first() {
        figures.insert(figure::CPU_MAIN.to_string(), main.cpus_utilised);
    }
    if cpu.len() > 1 {
        let others: f64 = cpu.iter().skip(1).map(|c| c.user_s + c.sys_s).sum();
        figures.insert(figure::CPU_PEERS.to_string(), others / window_s);
    }
    let all_cpu_s: f64 = cpu.iter().map(|c| c.user_s + c.sys_s).sum();
    if messages > 0 {
        figures.insert(
            figure::CPU_PER_MESSAGE.to_string(),
            all_cpu_s / messages as f64 * 1e9,
        );
    }
}

/// How the warning of a point whose sender fell behind its schedule begins.
pub const BEHIND_WARNING: &str = "behind schedule:";

/// What a load driver measured of its schedule.
#[derive(Debug, Clone)]
pub struct ScheduleOutcome {
    /// This channel's offered rate, messages per second.
    pub offered_per_s: f64,
    /// How late each send began after its intended time, nanoseconds.
    pub lag: Option<Histogram<u64>>,
    /// The stalls of the sender's CPU seen while it waited for its messages' times.
    pub stalls: Option<StallSample>,
    /// Messages due before the run's end that were never sent.
    pub unsent: u64,
    /// Messages sent that never arrived.
    pub lost: u64,
    /// The schedule's span, nanoseconds: the run's duration, or its count at its
    /// rate.
    pub span_ns: u64,
}
