//! Names of the figures in [`RunRecord::figures`](crate::result::RunRecord::figures) and
//! [`PointResult::summary`](crate::result::PointResult::summary).
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
