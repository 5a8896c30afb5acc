//! The machine's own ceilings, measured beside every result: how fast this machine
//! copies memory, hands a cache line or a futex between two CPUs, enters the kernel
//! and sends a byte round a pipe.
//!
//! A figure alone does not say whether it is good: 5 GB/s is excellent for a pipe and
//! poor for a shared-memory ring. Each point's primary figure is therefore also given
//! as a fraction of its natural limit (`ratio`), and the cheapest probes are
//! repeated between points to notice a machine that changed speed under a
//! measurement ([`drift`]).
//!
//! * `xferbench limits` measures the full set ([`Depth::Full`], a few seconds).
//! * `run` and every study measure the quick set ([`Depth::Quick`], well under a
//!   second) at the start and again at the end, into the result's context.

pub mod drift;
pub mod fraction;
mod probes;

use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};
use xferbench_probes::stats::Estimate;

/// The memcpy sizes measured, bytes: within L1/L2, L2, about LLC, and far beyond it.
pub const COPY_SIZES: [u64; 4] = [4 << 10, 64 << 10, 2 << 20, 64 << 20];

/// The other placements of a copy measured beside the aligned one, as `dst − src`
/// modulo a page: inside a cache line (what two `malloc`ed buffers often have), one
/// cache line, and half a page.
pub const COPY_OFFSETS: [u64; 3] = [16, 64, 2048];

/// A placement whose copies run at less than this fraction of the aligned rate is a
/// finding of its own ([`CopyPlacement::slow`]).
pub const SLOW_PLACEMENT: f64 = 0.5;

pub use probes::{HANDOVER_SIZES, STREAM_SIZES, probe_cpus, size_words, stream_ring};

/// How thoroughly to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Depth {
    /// 15 samples per probe: `xferbench limits`.
    Full,
    /// 5 shorter samples per probe: at the start and end of every run and study.
    Quick,
}

impl Depth {
    fn samples(self) -> usize {
        match self {
            Depth::Full => 15,
            Depth::Quick => 5,
        }
    }

    /// Round trips per sample of the wake-up probes, how long a memcpy sample of a
    /// small buffer lasts, and the most any one sample may take.
    fn scale(self) -> (u64, Duration, Duration) {
        match self {
            Depth::Full => (300, Duration::from_millis(2), Duration::from_millis(40)),
            Depth::Quick => (100, Duration::from_micros(500), Duration::from_millis(4)),
        }
    }

    /// Samples of a memcpy of `size` bytes: one copy of the largest takes longer than
    /// a quick sample's budget, so the quick set takes fewer of them.
    fn copy_samples(self, size: u64) -> usize {
        match self {
            Depth::Quick if size >= 64 << 20 => 3,
            _ => self.samples(),
        }
    }

    /// How long each window of the stall probe lasts: stalls are rare events, so
    /// long windows, as few as the depth allows.
    pub fn stall_window(self) -> Duration {
        match self {
            Depth::Full => Duration::from_millis(100),
            Depth::Quick => Duration::from_millis(20),
        }
    }

    /// Messages per sample of a stream floor of `size` bytes, after its untimed lead:
    /// 64 MiB in the full set, 32 MiB in the quick one (the steady state, as a drift
    /// sample's).
    fn stream_messages(self, size: u64) -> u64 {
        let bytes: u64 = match self {
            Depth::Full => 64 << 20,
            Depth::Quick => 32 << 20,
        };
        (bytes / size.max(1)).max(1)
    }

    /// The copy sizes measured at every placement of [`COPY_OFFSETS`].
    fn placement_sizes(self) -> &'static [u64] {
        match self {
            Depth::Full => &COPY_SIZES[..3],
            Depth::Quick => &COPY_SIZES[1..2],
        }
    }
}

/// The machine's ceilings: each a median with its spread over repeated samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Limits {
    /// How thoroughly they were measured.
    pub depth: Depth,
    /// The two CPUs the cross-CPU probes ran on (one when only one is allowed).
    pub cpus: Vec<usize>,
    /// memcpy bandwidth, bytes/s, per buffer size, between page-aligned buffers
    /// (`dst − src` ≡ 0 mod 4096): the limit.
    pub memcpy: Vec<CopyLimit>,
    /// memcpy bandwidth at other placements of the two buffers ([`COPY_OFFSETS`]),
    /// each against the aligned figure; a slow one is a finding (added in schema 1;
    /// empty in older files).
    #[serde(default)]
    pub placements: Vec<CopyPlacement>,
    /// A cache line handed between the two CPUs by spinning, ns per round trip
    /// (absent with one CPU).
    pub cache_line_rtt_ns: Option<Estimate>,
    /// A futex word handed between the two CPUs, each side asleep until woken, ns per
    /// round trip (absent with one CPU).
    pub futex_rtt_cross_ns: Option<Estimate>,
    /// The same on one CPU, ns per round trip.
    pub futex_rtt_same_ns: Option<Estimate>,
    /// One `getppid` system call, ns.
    pub syscall_ns: Estimate,
    /// One read of the clock a ping-pong times each round trip with
    /// ([`xferbench_probes::clock::TripClock`]), ns: about what each timed round trip of a
    /// ping-pong carries of the measurement itself (absent in results of earlier
    /// versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_read_ns: Option<Estimate>,
    /// Which clock [`Limits::clock_read_ns`] read (absent in results of earlier
    /// versions, whose clock was `monotonic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_source: Option<xferbench_probes::clock::TripSource>,
    /// One byte round two pipes between the two CPUs, ns per round trip.
    pub pipe_rtt_ns: Option<Estimate>,
    /// A buffer written on one CPU, copied into a second one on the other and read
    /// back, ns per round trip, per size ([`HANDOVER_SIZES`]; empty with one CPU, and
    /// in results of earlier versions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handover_rtt_ns: Vec<HandoverLimit>,
    /// A one-way stream between the two CPUs through the ring a stream of that size
    /// gets by default, bytes/s, per message size ([`STREAM_SIZES`]) and way of
    /// taking a message (copied out or read in place): the floor a stream point is
    /// held against (empty with one CPU, and in results of earlier versions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stream_floor: Vec<StreamLimit>,
    /// What a thread that only reads the clock loses of each probe CPU while every
    /// one of them is busy, as under a spinning transport: the CPU's own stalls, the
    /// floor under a load sender's lag behind its schedule (empty in results of
    /// earlier versions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stalls: Vec<StallLimit>,
    /// Seconds the measurement took.
    pub took_s: f64,
    /// How the measuring binary was built (added in schema 1; absent in older
    /// files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<xferbench_probes::build::BuildInfo>,
}

/// One CPU's stalls (the `stalls` probe), over windows of [`Depth::stall_window`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StallLimit {
    /// The CPU.
    pub cpu: usize,
    /// The fraction of each window taken from the thread, in stalls longer than 1 µs.
    pub lost_fraction: Estimate,
    /// The p99 of the wait for the CPU of a moment drawn at random from a window, ns
    /// (the probe's `StallSample::wait_quantile`): no sender on this CPU begins 99 % of
    /// its sends closer to their time.
    pub wait_p99_ns: Estimate,
    /// The longest stall seen in any window, ns.
    pub longest_ns: f64,
}

/// memcpy bandwidth at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CopyLimit {
    /// Bytes per copy.
    pub size_bytes: u64,
    /// Bytes copied per second.
    pub bytes_per_s: Estimate,
}

/// memcpy bandwidth at one size and one placement of the two buffers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CopyPlacement {
    /// Bytes per copy.
    pub size_bytes: u64,
    /// `dst − src` modulo 4096, bytes.
    pub offset: u64,
    /// Bytes copied per second.
    pub bytes_per_s: Estimate,
    /// This placement's median against the aligned one at the same size.
    pub vs_aligned: f64,
    /// Below [`SLOW_PLACEMENT`] of the aligned rate: this machine's `memcpy` has a
    /// slow path here, which the workloads' buffers are placed to avoid.
    pub slow: bool,
}

impl CopyPlacement {
    /// `memcpy 64 KiB at dst−src ≡ 16 (mod 4096): 2.40 GB/s, 18.3× below aligned`.
    pub fn finding(&self) -> String {
        format!(
            "memcpy {} at dst−src ≡ {} (mod 4096): {:.2} GB/s, {:.1}× below aligned",
            size_words(self.size_bytes),
            self.offset,
            self.bytes_per_s.median / 1e9,
            1.0 / self.vs_aligned.max(1e-12)
        )
    }
}

/// The hand-over round trip at one size: the floor of a ping-pong of that size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HandoverLimit {
    /// Bytes of the buffer handed over (and of its copy handed back).
    pub size_bytes: u64,
    /// Nanoseconds per round trip.
    pub rtt_ns: Estimate,
}

/// The stream floor at one message size and one way of taking a message: the least
/// any ring between the two CPUs does per message (the `probes::stream_rate` probe).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StreamLimit {
    /// Bytes per message.
    pub size_bytes: u64,
    /// The reader reads each message in place (one word per cache line, the writer
    /// having written every byte there), as a zero-copy stream does; else the writer
    /// copies it in and the reader copies it out, as a copying stream does.
    pub in_place: bool,
    /// Bytes of the ring the messages go through ([`stream_ring`]).
    pub ring_bytes: u64,
    /// Bytes handed over per second.
    pub bytes_per_s: Estimate,
}

impl StreamLimit {
    /// `stream floor 64 KiB` or `stream floor 64 KiB in place`: how a point's limit
    /// and a drift sample name it.
    pub fn name(&self) -> String {
        drift::stream(self.size_bytes, self.in_place)
    }
}

/// Limits with the floors sampled next to a run ([`Limits::around`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Around {
    /// The limits.
    pub limits: Limits,
    /// The floors taken from the samples, in the words a point's limit uses (`cache-line round trip`, `hand-over round trip 64 KiB`).
    pub replaced: Vec<String>,
}

/// The limits recorded in a result's context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MachineLimits {
    /// Measured before the first point.
    pub start: Limits,
    /// Measured after the last point (absent when the plan was cut short before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Limits>,
    /// A probe that moves by more than this fraction during a point flags the point.
    pub drift_threshold: f64,
}

impl MachineLimits {
    /// The limits a point is held against: the start's until the end is measured,
    /// then the better of the two ([`Limits::best_of`]).
    pub fn floor(&self) -> Limits {
        match &self.end {
            Some(end) => self.start.best_of(end),
            None => self.start.clone(),
        }
    }

    /// The probe that moved most between the start and the end, when it moved by more
    /// than the threshold.
    pub fn drift(&self, interleaved: bool, bearing: &[&str]) -> Option<drift::Drift> {
        let end = self.end.as_ref()?;
        drift::worst(
            &[self.start.as_sample(), end.as_sample()],
            self.drift_threshold,
            interleaved,
            bearing,
        )
    }
}

/// One row of a limits table: what, its unit, and its estimate.
pub struct LimitRow<'a> {
    /// What was measured, in words.
    pub name: String,
    /// `bytes/s` or `ns`.
    pub unit: &'static str,
    /// The estimate.
    pub estimate: &'a Estimate,
}

impl Limits {
    /// Each limit at the better of the two measurements: the higher memcpy rate per
    /// size, the shorter round trip or system call. Interference can only slow a
    /// probe, never speed the machine beyond what it can do, so the better reading is
    /// the nearer one to the machine's true limit; a quick set taken while the
    /// machine was briefly slow then does not make every point look faster than its
    /// floor. Everything else (placements, CPUs, depth, time) is `self`'s.
    pub fn best_of(&self, other: &Limits) -> Limits {
        fn shorter(a: &Option<Estimate>, b: &Option<Estimate>) -> Option<Estimate> {
            match (a, b) {
                (Some(a), Some(b)) => Some(if b.median < a.median { *b } else { *a }),
                (a, b) => a.or(*b),
            }
        }
        let mut best = self.clone();
        for c in &mut best.memcpy {
            if let Some(o) = other.memcpy.iter().find(|o| o.size_bytes == c.size_bytes)
                && o.bytes_per_s.median > c.bytes_per_s.median
            {
                c.bytes_per_s = o.bytes_per_s;
            }
        }
        best.cache_line_rtt_ns = shorter(&self.cache_line_rtt_ns, &other.cache_line_rtt_ns);
        best.futex_rtt_cross_ns = shorter(&self.futex_rtt_cross_ns, &other.futex_rtt_cross_ns);
        best.futex_rtt_same_ns = shorter(&self.futex_rtt_same_ns, &other.futex_rtt_same_ns);
        best.pipe_rtt_ns = shorter(&self.pipe_rtt_ns, &other.pipe_rtt_ns);
        for h in &mut best.handover_rtt_ns {
            if let Some(o) = other
                .handover_rtt_ns
                .iter()
                .find(|o| o.size_bytes == h.size_bytes)
                && o.rtt_ns.median < h.rtt_ns.median
            {
                h.rtt_ns = o.rtt_ns;
            }
        }
        for f in &mut best.stream_floor {
            if let Some(o) = other
                .stream_floor
                .iter()
                .find(|o| (o.size_bytes, o.in_place) == (f.size_bytes, f.in_place))
                && o.bytes_per_s.median > f.bytes_per_s.median
            {
                f.bytes_per_s = o.bytes_per_s;
            }
        }
        if other.syscall_ns.median < self.syscall_ns.median {
            best.syscall_ns = other.syscall_ns;
        }
        for st in &mut best.stalls {
            if let Some(o) = other.stalls.iter().find(|o| o.cpu == st.cpu)
                && o.wait_p99_ns.median < st.wait_p99_ns.median
            {
                *st = o.clone();
            }
        }
        best
    }

    /// Every measured figure as a table row, in the order `xferbench limits` prints.
    pub fn rows(&self) -> Vec<LimitRow<'_>> {
        let mut rows: Vec<LimitRow<'_>> = self
            .memcpy
            .iter()
            .map(|c| LimitRow {
                name: format!("memcpy {}", size_words(c.size_bytes)),
                unit: "bytes/s",
                estimate: &c.bytes_per_s,
            })
            .collect();
        rows.extend(self.placements.iter().map(|p| LimitRow {
            name: format!(
                "memcpy {} at dst−src ≡ {} (mod 4096)",
                size_words(p.size_bytes),
                p.offset
            ),
            unit: "bytes/s",
            estimate: &p.bytes_per_s,
        }));
        let cross = match self.cpus.as_slice() {
            [a, b, ..] => format!("CPU {a} ↔ {b}"),
            _ => "one CPU".into(),
        };
        let same = format!("CPU {} ↔ {}", self.cpus[0], self.cpus[0]);
        for (name, e) in [
            (
                format!("cache-line round trip, {cross}"),
                &self.cache_line_rtt_ns,
            ),
            (
                format!("futex wake round trip, {cross}"),
                &self.futex_rtt_cross_ns,
            ),
            (
                format!("futex wake round trip, {same}"),
                &self.futex_rtt_same_ns,
            ),
            (format!("pipe round trip, {cross}"), &self.pipe_rtt_ns),
        ] {
            if let Some(estimate) = e {
                rows.push(LimitRow {
                    name,
                    unit: "ns",
                    estimate,
                });
            }
        }
        for h in &self.handover_rtt_ns {
            rows.push(LimitRow {
                name: format!("hand-over round trip {}, {cross}", size_words(h.size_bytes)),
                unit: "ns",
                estimate: &h.rtt_ns,
            });
        }
        let one_way = match self.cpus.as_slice() {
            [a, b, ..] => format!("CPU {a} → {b}"),
            _ => "one CPU".into(),
        };
        for f in &self.stream_floor {
            rows.push(LimitRow {
                name: format!("{}, {} ring, {one_way}", f.name(), size_words(f.ring_bytes)),
                unit: "bytes/s",
                estimate: &f.bytes_per_s,
            });
        }
        for st in &self.stalls {
            rows.push(LimitRow {
                name: format!("CPU {} stalls: time lost, all CPUs busy", st.cpu),
                unit: "fraction",
                estimate: &st.lost_fraction,
            });
            rows.push(LimitRow {
                name: format!("CPU {} stalls: p99 wait of a random moment", st.cpu),
                unit: "ns",
                estimate: &st.wait_p99_ns,
            });
        }
        rows.push(LimitRow {
            name: "system call (getppid)".into(),
            unit: "ns",
            estimate: &self.syscall_ns,
        });
        if let Some(estimate) = &self.clock_read_ns {
            let call = self
                .clock_source
                .unwrap_or(xferbench_probes::clock::TripSource::Monotonic)
                .call();
            rows.push(LimitRow {
                name: format!("clock read ({call}, the per-message timestamp)"),
                unit: "ns",
                estimate,
            });
        }
        rows
    }

    /// These limits with each round-trip floor that the drift samples hold (the
    /// cache-line, futex and hand-over round trips) replaced by its median over
    /// `span`, samples taken next to a run (the one just before it, for
    /// `fraction::LimitFraction::paired`): the floor in the state the machine was in
    /// while the run ran. The start's and the end's measurements can catch a machine
    /// that changes speed (a VM switching modes within minutes) in another state.
    pub fn around(&self, span: &[drift::DriftSample]) -> Around {
        let median = |name: &str| {
            xferbench_probes::stats::Estimate::from_values(
                span.iter().filter_map(|s| s.probes.get(name).copied()),
            )
        };
        let mut limits = self.clone();
        let mut replaced = Vec::new();
        let mut swap = |name: String, slot: &mut Estimate| {
            if let Some(e) = median(&name) {
                *slot = e;
                replaced.push(name);
            }
        };
        if let Some(e) = limits.cache_line_rtt_ns.as_mut() {
            swap(drift::CACHE_LINE.to_string(), e);
        }
        if let Some(e) = limits.futex_rtt_cross_ns.as_mut() {
            swap(drift::FUTEX.to_string(), e);
        }
        for h in &mut limits.handover_rtt_ns {
            swap(drift::handover(h.size_bytes), &mut h.rtt_ns);
        }
        for f in &mut limits.stream_floor {
            swap(f.name(), &mut f.bytes_per_s);
        }
        Around { limits, replaced }
    }

    /// The drift probes' values in these limits, to hold two measurements against
    /// each other ([`drift::worst`]).
    /// Each probe's spread is its median's confidence interval.
    pub fn as_sample(&self) -> drift::DriftSample {
        let mut sample = drift::DriftSample::default();
        let mut put = |name: &str, e: &Estimate| {
            sample.probes.insert(name.to_string(), e.median);
            sample
                .spread
                .insert(name.to_string(), [e.ci_low, e.ci_high]);
        };
        if let Some(e) = &self.cache_line_rtt_ns {
            put(drift::CACHE_LINE, e);
        }
        if let Some(e) = &self.futex_rtt_cross_ns {
            put(drift::FUTEX, e);
        }
        if let Some(c) = self.memcpy.iter().find(|c| c.size_bytes == 2 << 20) {
            put(drift::MEMCPY, &c.bytes_per_s);
        }
        sample
    }

    /// The p99 wait for the CPU of a random moment on `cpu` ([`StallLimit`]), or the
    /// longest of the probe CPUs' when `cpu` is not one of them or not known.
    pub fn stall_p99_ns(&self, cpu: Option<usize>) -> Option<f64> {
        let on = |st: &&StallLimit| cpu.is_none_or(|c| st.cpu == c);
        let wait = |st: &StallLimit| st.wait_p99_ns.median;
        self.stalls
            .iter()
            .filter(on)
            .map(wait)
            .reduce(f64::max)
            .or_else(|| self.stalls.iter().map(wait).reduce(f64::max))
    }

    /// The slow placements of a copy, as findings in words (empty when every
    /// placement measured runs at least at [`SLOW_PLACEMENT`] of the aligned rate).
    pub fn findings(&self) -> Vec<String> {
        self.placements
            .iter()
            .filter(|p| p.slow)
            .map(CopyPlacement::finding)
            .collect()
    }

    /// The hand-over round trip measured at the size nearest `size` (by ratio), when
    /// `size` lies within a factor of four of it: the floor of a ping-pong of `size`
    /// bytes.
    pub fn handover_near(&self, size: u64) -> Option<&HandoverLimit> {
        let ratio = |h: &HandoverLimit| (h.size_bytes as f64 / size.max(1) as f64).ln().abs();
        self.handover_rtt_ns
            .iter()
            .min_by(|a, b| ratio(a).total_cmp(&ratio(b)))
            .filter(|h| ratio(h) <= 4f64.ln() + 1e-9)
    }

    /// The stream floor measured at the size nearest `size` (by ratio) for messages
    /// taken in place or copied, when `size` lies within a factor of four of it; of
    /// two equally near, the larger (whose messages, like the point's, each fill more
    /// of a batch).
    pub fn stream_near(&self, size: u64, in_place: bool) -> Option<&StreamLimit> {
        let ratio = |f: &StreamLimit| (f.size_bytes as f64 / size.max(1) as f64).ln().abs();
        self.stream_floor
            .iter()
            .filter(|f| f.in_place == in_place)
            .min_by(|a, b| {
                if (ratio(a) - ratio(b)).abs() < 1e-9 {
                    b.size_bytes.cmp(&a.size_bytes)
                } else {
                    ratio(a).total_cmp(&ratio(b))
                }
            })
            .filter(|f| ratio(f) <= 4f64.ln() + 1e-9)
    }

    /// memcpy bandwidth at the measured size nearest `size` (by ratio), bytes/s.
    pub fn memcpy_near(&self, size: u64) -> Option<&CopyLimit> {
        let size = size.max(1) as f64;
        self.memcpy.iter().min_by(|a, b| {
            let d = |c: &CopyLimit| (c.size_bytes as f64 / size).ln().abs();
            d(a).total_cmp(&d(b))
        })
    }
}

/// Measures the machine's ceilings.
pub fn measure(depth: Depth) -> Limits {
    let start = Instant::now();
    let cpus = probe_cpus();
    let p = Prober::new(depth, &cpus);
    let memcpy = p.copies();
    let placements = p.placements(&memcpy);
    let cross = p.a != p.b;
    let (trips, budget) = (p.trips, p.budget);
    let (a, b) = (p.a, p.b);
    let cache_line_rtt_ns = cross
        .then(|| p.repeat(&|| probes::cache_line_rtt(a, b, trips * 20, budget)))
        .flatten();
    let futex_rtt_cross_ns = cross
        .then(|| p.repeat(&|| probes::futex_rtt(a, b, trips, budget)))
        .flatten();
    let futex_rtt_same_ns = p.repeat(&|| probes::futex_rtt(a, a, trips, budget));
    let pipe_rtt_ns = p.repeat(&|| probes::pipe_rtt(a, b, trips, budget));
    let (handover_rtt_ns, stream_floor) = if cross {
        (p.handover(), p.stream_floor())
    } else {
        (Vec::new(), Vec::new())
    };
    let n = depth.samples();
    let calls = trips * 20;
    probes::syscall_cost(calls);
    let syscall_ns = Estimate::from_values((0..n).map(|_| probes::syscall_cost(calls)))
        .expect("at least one sample");
    let clock = xferbench_probes::clock::TripClock::new();
    let clock_read_ns =
        Estimate::from_values((0..n).map(|_| probes::clock_read_cost(&clock, calls)));
    let stalls = measure_stalls(&cpus, n, depth.stall_window());
    Limits {
        depth,
        cpus,
        memcpy,
        placements,
        cache_line_rtt_ns,
        futex_rtt_cross_ns,
        futex_rtt_same_ns,
        syscall_ns,
        clock_read_ns,
        clock_source: Some(clock.source()),
        pipe_rtt_ns,
        handover_rtt_ns,
        stream_floor,
        stalls,
        took_s: start.elapsed().as_secs_f64(),
        build: Some(xferbench_probes::build::BuildInfo::current()),
    }
}

/// The probes of one measurement of the limits at one depth, between the CPUs `a`
/// and `b` (the same CPU when only one is allowed).
struct Prober {
    depth: Depth,
    a: usize,
    b: usize,
    /// Round trips per sample of the two-thread probes.
    trips: u64,
    /// Time per sample of the copy probes.
    copy_time: Duration,
    /// The longest a sample may take.
    budget: Duration,
}

impl Prober {
    fn new(depth: Depth, cpus: &[usize]) -> Prober {
        let (trips, copy_time, budget) = depth.scale();
        Prober {
            depth,
            a: cpus[0],
            b: *cpus.get(1).unwrap_or(&cpus[0]),
            trips,
            copy_time,
            budget,
        }
    }

    /// A two-thread probe's samples: abandoned (`None`) when the partner cannot run.
    fn repeat(&self, f: &dyn Fn() -> Option<f64>) -> Option<Estimate> {
        f()?;
        Estimate::from_values((0..self.depth.samples()).filter_map(|_| f()))
    }

    /// The copy rate of `size` bytes with the destination `offset` bytes past a page.
    fn copy_rate(&self, size: u64, offset: u64) -> Option<Estimate> {
        let mut bufs = probes::CopyBuffers::at_offset(size as usize, offset as usize);
        let reps = probes::copies_for(size as usize, self.copy_time);
        bufs.sample(reps, self.budget); // warm: caches, TLB, frequency
        let n = self.depth.copy_samples(size);
        Estimate::from_values((0..n).map(|_| bufs.sample(reps, self.budget)))
    }

    /// Aligned copies of every size of [`COPY_SIZES`].
    fn copies(&self) -> Vec<CopyLimit> {
        COPY_SIZES
            .iter()
            .filter_map(|&size| {
                Some(CopyLimit {
                    size_bytes: size,
                    bytes_per_s: self.copy_rate(size, 0)?,
                })
            })
            .collect()
    }

    /// Copies at each of [`COPY_OFFSETS`] against the aligned ones, `slow` below
    /// [`SLOW_PLACEMENT`] of them.
    fn placements(&self, memcpy: &[CopyLimit]) -> Vec<CopyPlacement> {
        self.depth
            .placement_sizes()
            .iter()
            .flat_map(|&size| COPY_OFFSETS.iter().map(move |&offset| (size, offset)))
            .filter_map(|(size, offset)| {
                let aligned = memcpy.iter().find(|c| c.size_bytes == size)?;
                let bytes_per_s = self.copy_rate(size, offset)?;
                let vs_aligned = bytes_per_s.median / aligned.bytes_per_s.median.max(1e-9);
                Some(CopyPlacement {
                    size_bytes: size,
                    offset,
                    bytes_per_s,
                    vs_aligned,
                    slow: vs_aligned < SLOW_PLACEMENT,
                })
            })
            .collect()
    }

    /// The hand-over round trip of every size of [`HANDOVER_SIZES`]: `trips` round
    /// trips per sample at 64 KiB, more for smaller buffers (about the same bytes per
    /// sample).
    fn handover(&self) -> Vec<HandoverLimit> {
        let (a, b, budget) = (self.a, self.b, self.budget);
        HANDOVER_SIZES
            .iter()
            .filter_map(|&size| {
                let n = self.trips * ((64 << 10) / size).max(1);
                let rtt_ns =
                    self.repeat(&|| probes::handover_floor(a, b, size as usize, n, budget))?;
                Some(HandoverLimit {
                    size_bytes: size,
                    rtt_ns,
                })
            })
            .collect()
    }

    /// The cross-CPU stream of every size of [`STREAM_SIZES`], copying and in place,
    /// over a ring of the size a stream of that size uses.
    fn stream_floor(&self) -> Vec<StreamLimit> {
        let (a, b, budget) = (self.a, self.b, self.budget);
        STREAM_SIZES
            .iter()
            .flat_map(|&size| [false, true].map(|in_place| (size, in_place)))
            .filter_map(|(size, in_place)| {
                let ring = stream_ring(size);
                let mode = if in_place {
                    probes::StreamMode::InPlace
                } else {
                    probes::StreamMode::Copy
                };
                let messages = self.depth.stream_messages(size);
                let rate = || {
                    probes::stream_rate(a, b, size as usize, ring as usize, mode, messages, budget)
                };
                Some(StreamLimit {
                    size_bytes: size,
                    in_place,
                    ring_bytes: ring,
                    bytes_per_s: self.repeat(&rate)?,
                })
            })
            .collect()
    }
}

/// `n` windows of the stall probe on all of `cpus` at once, summarised per CPU.
fn measure_stalls(cpus: &[usize], n: usize, window: Duration) -> Vec<StallLimit> {
    let mut per_cpu: Vec<Vec<probes::StallSample>> = vec![Vec::new(); cpus.len()];
    for _ in 0..n {
        for (i, s) in probes::stalls(cpus, window).into_iter().enumerate() {
            per_cpu[i].extend(s);
        }
    }
    cpus.iter()
        .zip(per_cpu)
        .filter_map(|(&cpu, samples)| {
            Some(StallLimit {
                cpu,
                lost_fraction: Estimate::from_values(
                    samples.iter().map(probes::StallSample::lost_fraction),
                )?,
                wait_p99_ns: Estimate::from_values(samples.iter().map(|s| s.wait_quantile(0.99)))?,
                longest_ns: samples
                    .iter()
                    .flat_map(|s| s.stalls_ns.iter().copied())
                    .fold(0.0, f64::max),
            })
        })
        .collect()
}

/// Where the point loop gets the machine's limits and drift samples: the real
/// machine, or a fake one in tests.
pub trait MachineProbe: Send + Sync + std::fmt::Debug {
    /// The limits, measured now.
    fn limits(&self) -> Limits;
    /// The cheap probes, measured now.
    fn drift_sample(&self) -> drift::DriftSample;
}

/// The machine this process runs on, measured at `depth`.
#[derive(Debug, Clone, Copy)]
pub struct RealMachine {
    /// How thoroughly the limits are measured.
    pub depth: Depth,
}

impl MachineProbe for RealMachine {
    fn limits(&self) -> Limits {
        measure(self.depth)
    }

    fn drift_sample(&self) -> drift::DriftSample {
        drift::sample_machine()
    }
}

/// The machine watch of a plan: where limits come from and the drift threshold.
#[derive(Debug, Clone)]
pub struct Watch {
    /// The probe.
    pub probe: std::sync::Arc<dyn MachineProbe>,
    /// A probe moving by more than this fraction during a point flags it (0.25).
    pub drift_threshold: f64,
}

impl Watch {
    /// The real machine, quick limits, the default threshold.
    pub fn real() -> Self {
        Watch {
            probe: std::sync::Arc::new(RealMachine {
                depth: Depth::Quick,
            }),
            drift_threshold: drift::DEFAULT_THRESHOLD,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn est(v: f64) -> Estimate {
        Estimate::from_values([v, v, v]).unwrap()
    }

    /// A machine with round numbers: memcpy 10 GB/s at every size, cache line 200 ns,
    /// futex 20 µs, pipe 25 µs, hand-overs of 1 ns per 8 bytes, stream floors of
    /// 12.5 GB/s copied and 20 GB/s in place at both sizes.
    pub(crate) fn machine() -> Limits {
        Limits {
            depth: Depth::Quick,
            cpus: vec![0, 1],
            memcpy: COPY_SIZES
                .iter()
                .map(|&s| CopyLimit {
                    size_bytes: s,
                    bytes_per_s: est(10e9),
                })
                .collect(),
            placements: vec![],
            cache_line_rtt_ns: Some(est(200.0)),
            futex_rtt_cross_ns: Some(est(20e3)),
            futex_rtt_same_ns: Some(est(5e3)),
            syscall_ns: est(80.0),
            clock_read_ns: Some(est(20.0)),
            clock_source: Some(xferbench_probes::clock::TripSource::Tsc),
            pipe_rtt_ns: Some(est(25e3)),
            handover_rtt_ns: HANDOVER_SIZES
                .iter()
                .map(|&s| HandoverLimit {
                    size_bytes: s,
                    rtt_ns: est(s as f64 / 8.0),
                })
                .collect(),
            stream_floor: STREAM_SIZES
                .iter()
                .flat_map(|&s| {
                    [(false, 12.5e9), (true, 20e9)].map(|(in_place, rate)| StreamLimit {
                        size_bytes: s,
                        in_place,
                        ring_bytes: 4 << 20,
                        bytes_per_s: est(rate),
                    })
                })
                .collect(),
            stalls: [0, 1]
                .map(|cpu| StallLimit {
                    cpu,
                    lost_fraction: est(0.012),
                    wait_p99_ns: est(2e3),
                    longest_ns: 1.5e6,
                })
                .to_vec(),
            took_s: 0.1,
            build: None,
        }
    }

    #[test]
    fn quick_limits_measure_every_probe_and_each_is_positive() {
        let l = measure(Depth::Quick);
        assert_eq!(l.memcpy.len(), COPY_SIZES.len());
        for row in l.rows() {
            // A CPU may lose no time in a window: its stall rows can be 0.
            if row.name.contains("stalls") {
                assert!(row.estimate.min >= 0.0, "{}", row.name);
            } else {
                assert!(row.estimate.median > 0.0, "{}", row.name);
            }
            assert!(row.estimate.min <= row.estimate.max, "{}", row.name);
        }
        if l.cpus.len() == 2 {
            assert!(l.cache_line_rtt_ns.is_some() && l.futex_rtt_cross_ns.is_some());
            let sizes: Vec<u64> = l.handover_rtt_ns.iter().map(|h| h.size_bytes).collect();
            assert_eq!(sizes, HANDOVER_SIZES);
            assert!(
                l.rows()
                    .iter()
                    .any(|r| r.name.starts_with("hand-over round trip 64 KiB"))
            );
            let floors: Vec<(u64, bool)> = l
                .stream_floor
                .iter()
                .map(|f| (f.size_bytes, f.in_place))
                .collect();
            let want: Vec<(u64, bool)> = STREAM_SIZES
                .iter()
                .flat_map(|&s| [(s, false), (s, true)])
                .collect();
            assert_eq!(floors, want);
            for f in &l.stream_floor {
                assert_eq!(f.ring_bytes, stream_ring(f.size_bytes));
                assert!(l.rows().iter().any(|r| r.name.starts_with(&f.name())));
            }
        }
        assert!(l.futex_rtt_same_ns.is_some() && l.pipe_rtt_ns.is_some());
    }

    #[test]
    fn the_nearest_copy_size_is_chosen_by_ratio() {
        let l = machine();
        let near = |s| l.memcpy_near(s).unwrap().size_bytes;
        assert_eq!(near(64), 4 << 10);
        assert_eq!(near(64 << 10), 64 << 10);
        assert_eq!(near(300 << 10), 64 << 10);
        assert_eq!(near(1 << 20), 2 << 20);
        assert_eq!(near(1 << 30), 64 << 20);
    }

    #[test]
    fn around_a_point_the_sampled_round_trip_floors_replace_the_start_and_end() {
        let l = machine();
        let sample = |cache: f64, futex: f64, h64: f64| drift::DriftSample {
            probes: [
                (drift::CACHE_LINE.to_string(), cache),
                (drift::FUTEX.to_string(), futex),
                (drift::handover(64 << 10), h64),
                (drift::stream(4 << 10, true), h64 * 1e6),
                (drift::MEMCPY.to_string(), 1e9),
            ]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        let span = [
            sample(400.0, 40e3, 20e3),
            sample(300.0, 50e3, 30e3),
            sample(500.0, 60e3, 25e3),
        ];
        let around = l.around(&span);
        let a = &around.limits;
        assert_eq!(a.cache_line_rtt_ns.unwrap().median, 400.0);
        assert_eq!(a.cache_line_rtt_ns.unwrap().n, 3);
        assert_eq!(a.futex_rtt_cross_ns.unwrap().median, 50e3);
        let h = |l: &Limits, size: u64| l.handover_near(size).unwrap().rtt_ns.median;
        assert_eq!(h(a, 64 << 10), 25e3);
        // A floor the samples do not hold, and every other limit, stay as measured.
        assert_eq!(h(a, 4 << 10), h(&l, 4 << 10));
        assert_eq!(a.memcpy, l.memcpy);
        assert_eq!(a.pipe_rtt_ns, l.pipe_rtt_ns);
        // The stream floor the samples hold, in place at 4 KiB; not the others.
        let stream =
            |l: &Limits, size, in_place| l.stream_near(size, in_place).unwrap().bytes_per_s;
        assert_eq!(stream(a, 4 << 10, true).median, 25e9);
        assert_eq!(stream(a, 4 << 10, false), stream(&l, 4 << 10, false));
        assert_eq!(
            around.replaced,
            [
                "cache-line round trip",
                "futex wake round trip",
                "hand-over round trip 64 KiB",
                "stream floor 4 KiB in place"
            ]
        );
        let none = l.around(&[]);
        assert_eq!((none.limits, none.replaced.len()), (l, 0));
    }

    #[test]
    fn the_nearest_handover_is_chosen_by_ratio_within_a_factor_of_four() {
        let l = machine();
        let near = |s| l.handover_near(s).map(|h| h.size_bytes);
        assert_eq!(near(1 << 10), Some(4 << 10));
        assert_eq!(near(4 << 10), Some(4 << 10));
        assert_eq!(near(32 << 10), Some(64 << 10));
        assert_eq!(near(256 << 10), Some(64 << 10));
        assert_eq!(near(512), None);
        assert_eq!(near(1 << 20), None);
    }

    #[test]
    fn a_stream_floor_runs_through_the_ring_shm_gives_a_stream() {
        for size in STREAM_SIZES {
            assert_eq!(
                stream_ring(size),
                xferbench_transports::shm::DEFAULT_CAPACITY as u64
            );
        }
    }

    #[test]
    fn the_nearest_stream_floor_is_of_the_same_copy_mode_within_a_factor_of_four() {
        let l = machine();
        let near = |s, in_place| {
            l.stream_near(s, in_place)
                .map(|f| (f.size_bytes, f.in_place))
        };
        assert_eq!(near(4 << 10, true), Some((4 << 10, true)));
        // Halfway by ratio between two probed sizes, the larger.
        assert_eq!(near(8 << 10, false), Some((16 << 10, false)));
        assert_eq!(near(16 << 10, false), Some((16 << 10, false)));
        assert_eq!(near(32 << 10, false), Some((64 << 10, false)));
        assert_eq!(near(20 << 10, false), Some((16 << 10, false)));
        assert_eq!(near(48 << 10, false), Some((64 << 10, false)));
        assert_eq!(near(256 << 10, true), Some((64 << 10, true)));
        assert_eq!(near(512, false), None);
        assert_eq!(near(1 << 20, true), None);
    }

    #[test]
    fn the_better_stream_floor_of_start_and_end_is_the_faster() {
        let start = machine();
        let mut end = start.clone();
        end.stream_floor[1].bytes_per_s = Estimate::from_values([30e9; 3]).unwrap();
        end.stream_floor[0].bytes_per_s = Estimate::from_values([1e9; 3]).unwrap();
        let best = start.best_of(&end);
        assert_eq!(best.stream_floor[1].bytes_per_s.median, 30e9);
        assert_eq!(best.stream_floor[0], start.stream_floor[0]);
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(size_words(4096), "4 KiB");
        assert_eq!(size_words(2 << 20), "2 MiB");
        assert_eq!(size_words(100), "100 B");
    }
}
