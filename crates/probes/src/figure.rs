//! Names of the figures in `RunRecord::figures` and `PointResult::summary` of the
//! lab's result model (`xferbench_lab::result`).
/// Total payload bytes over the common window of all channels, bytes per second.
pub const THROUGHPUT: &str = "throughput_bytes_per_s";
/// Messages (stream) or round trips (pingpong) over the common window, per second.
pub const MESSAGE_RATE: &str = "messages_per_s";
/// Length of the common window, seconds.
pub const WINDOW: &str = "window_s";
/// Jain's fairness index of per-channel throughput (1 = perfectly fair).
pub const FAIRNESS: &str = "fairness_jain";
/// Round-trip latency percentiles in nanoseconds (pingpong only).
pub const LATENCY: [&str; 6] = [
    "latency_p50_ns",
    "latency_p90_ns",
    "latency_p99_ns",
    "latency_p999_ns",
    "latency_max_ns",
    "latency_mean_ns",
];
/// CPUs utilised by the main process over its window.
pub const CPU_MAIN: &str = "cpu_main_cpus";
/// CPUs utilised by all peer processes together over the common window.
pub const CPU_PEERS: &str = "cpu_peers_cpus";
/// CPU nanoseconds (user + sys) of all participating processes per message
/// (pingpong: per round trip), each process over its own window.
pub const CPU_PER_MESSAGE: &str = "cpu_ns_per_message";
/// The 99.99th latency percentile, nanoseconds (load).
pub const LATENCY_P9999: &str = "latency_p9999_ns";
/// The offered rate of a load point, messages per second (all channels).
pub const OFFERED_RATE: &str = "offered_per_s";
/// How late a load driver's sends began after their intended times: p50, p99, p99.9
/// and max, nanoseconds.
pub const BEHIND: [&str; 4] = [
    "behind_p50_ns",
    "behind_p99_ns",
    "behind_p999_ns",
    "behind_max_ns",
];
/// The p99 wait for its CPU of a moment drawn at random from a load sender's waits
/// for its messages' times, nanoseconds: the stalls of the sender's own CPU during
/// the run (as `xferbench limits` measures every CPU's), the floor under its lag.
pub const SENDER_STALL_P99: &str = "sender_stall_p99_ns";
/// The share of a load sender's waits for its messages' times its CPU was taken from
/// it (0.01 = 1 %).
pub const SENDER_STALL_FRACTION: &str = "sender_stall_fraction";
/// A sender's waits shorter than this in all, nanoseconds, say too little of its CPU's
/// stalls for the two figures above.
pub const SENDER_STALL_MIN_WINDOW_NS: f64 = 1e6;
/// Messages a load schedule called for before the run's end that were never sent.
pub const UNSENT: &str = "unsent_messages";
/// Messages a load driver sent that never arrived.
pub const LOST: &str = "lost_messages";
