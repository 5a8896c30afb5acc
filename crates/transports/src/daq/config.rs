//! How a [`Digitizer`](super::board::Digitizer) is set up: each board's [`Link`], the
//! crate's bus limit, the readout path, the end of acquisition, the [`Trigger`], and
//! the fixed sizes of a transfer and of a read.

/// The largest transfer of the copy path: the driver's bounce buffer.
pub const CHUNK_BYTES: usize = 4 << 20;

/// Samples are read in multiples of this (the original's `ROUNDUP_HEX`).
pub const SAMPLE_QUANTUM: usize = 16;

/// A board's link speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Link {
    /// SIS8300-L/L2: 621.7 MB/s, the seed's one-board row (60 MB in 96.5 ms).
    L2,
    /// SIS8300-KU: 1249.2 MB/s, the seed's one-board KU row (60 MB in 48.0 ms).
    Ku,
    /// No pacing: the model moves bytes as fast as this machine copies them.
    Unthrottled,
    /// A given rate, bytes/s.
    Rate(f64),
}

impl Link {
    /// The L/L2 rate, bytes/s.
    pub const L2_BYTES_PER_S: f64 = 621.7e6;
    /// The KU rate, bytes/s.
    pub const KU_BYTES_PER_S: f64 = 1249.2e6;

    /// The rate, bytes/s, or `None` when unthrottled.
    pub fn rate(&self) -> Option<f64> {
        match *self {
            Link::L2 => Some(Self::L2_BYTES_PER_S),
            Link::Ku => Some(Self::KU_BYTES_PER_S),
            Link::Unthrottled => None,
            Link::Rate(r) => Some(r),
        }
    }

    /// Its name on the command line.
    pub fn name(&self) -> String {
        match *self {
            Link::L2 => "l2".into(),
            Link::Ku => "ku".into(),
            Link::Unthrottled => "unthrottled".into(),
            Link::Rate(r) => format!("{}MB/s", r / 1e6),
        }
    }

    /// Parses `l2`, `ku`, `unthrottled` or a rate in MB/s.
    pub fn parse(s: &str) -> Option<Link> {
        match s {
            "l2" | "l" => Some(Link::L2),
            "ku" => Some(Link::Ku),
            "unthrottled" | "none" => Some(Link::Unthrottled),
            _ => s
                .trim_end_matches("MB/s")
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r > 0.0)
                .map(|r| Link::Rate(r * 1e6)),
        }
    }
}

/// The crate's shared bus limit when any board is throttled: 3,047 MB/s, the seed's
/// six-board common-window aggregate (10,800 MB in 3.544 s), the most any run of the
/// seed moved through the crate.
pub const DEFAULT_BUS_BYTES_PER_S: f64 = 3047.0e6;

/// The readout path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `read()`: a link transfer then a `pread` per 4 MiB chunk.
    Read,
    /// `mmap()`: the engine writes into the reader's shared mapping.
    Mmap,
}

/// How the host learns that an acquisition ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DaqEnd {
    /// A status read per system call, `usleep(1)` between reads.
    Poll,
    /// A blocking wait on the board's eventfd.
    Irq,
}

/// What ends an armed acquisition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trigger {
    /// The crate's trigger at this rate, Hz.
    Internal(f64),
    /// As soon as the acquisition is armed.
    Software,
}

/// A digitizer's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct DigitizerConfig {
    /// One link per board.
    pub links: Vec<Link>,
    /// Samples of device memory per board.
    pub samples: usize,
    /// The crate's bus limit, bytes/s (`None`: none).
    pub bus: Option<f64>,
    /// The trigger.
    pub trigger: Trigger,
    /// Whether the boards need zero-copy targets (`mmap` access).
    pub mapped: bool,
    /// With `--pin`: the CPU of each board's DMA engine thread, board `i` on
    /// `engine_cpus[i % len]` (empty: not pinned).
    pub engine_cpus: Vec<usize>,
}

/// Rounds `samples` up to a multiple of [`SAMPLE_QUANTUM`], as the original does.
pub fn round_up_samples(samples: usize) -> usize {
    samples.div_ceil(SAMPLE_QUANTUM) * SAMPLE_QUANTUM
}
