//! A model of Struck SIS8300 digitizer boards in a MicroTCA crate, for the
//! `sis8300` study: no hardware, but the same mechanisms behind the same costs.
//!
//! # The model
//!
//! A [`Digitizer`] holds N [`Board`]s. Each board has
//!
//! * **device memory** ([`memory::DeviceMemory`]): a memfd filled with the
//!   deterministic pattern of [`memory::sample`] and sealed against writes and
//!   resizes, so every sample read can be verified;
//! * a **control block** ([`control`]): the status word and the acquisition counter,
//!   read by the host with one system call per read and validated like any bytes
//!   from a device;
//! * a **DMA engine**: a thread that performs each transfer for the reader, paced to
//!   the board's [`Link`] and to the crate's shared [`Bus`] limit, so boards slow
//!   each other down;
//! * an **interrupt line**: an eventfd the model signals when an acquisition ends.
//!
//! A [`Trigger`] ends armed acquisitions: the crate's internal trigger at a rate
//! (14 Hz by default, all boards on the same tick, like the backplane trigger line)
//! or the software trigger, which ends an acquisition as soon as it is armed.
//!
//! # Readout paths ([`Access`])
//!
//! * `read`: the driver's bounce-buffer path. For each chunk of at most
//!   [`CHUNK_BYTES`] (4 MiB) the engine performs the link transfer (time on the link
//!   and the bus, no host CPU, as a DMA), then the reader `pread`s the chunk from the
//!   device memory: the kernel's user-copy routine moves the bytes, as the driver's
//!   `copy_to_user` does. DMA and copy alternate serially, as in the driver.
//!   The link time is a schedule for the whole read (chunk k completes no earlier
//!   than `(bytes of chunks 0..=k) / rate` after the read began), because the
//!   presets are the seed's end-to-end figures, the driver's copy included: a
//!   read runs at the preset as long as this machine copies faster than the link.
//! * `mmap`: the engine copies the device memory straight into a shared mapping the
//!   reader then reads in place (zero copy for the reader). The engine's copy stands
//!   for the board's DMA writes and its CPU time is the model's, reported apart
//!   ([`Board::engine_cpu`]).
//!
//! # End of acquisition ([`DaqEnd`])
//!
//! * `poll`: a `pread` of the control block per status read, then `usleep(1)`, until
//!   the armed bits clear: the original's `ioctl` register read loop.
//! * `irq`: a blocking `poll(2)` on the board's eventfd, which the trigger signals
//!   when it ends the acquisition.
//!
//! Nothing outlives a [`Digitizer`]: the memfds have no name, and dropping it stops
//! and joins every thread.

pub mod board;
pub mod control;
pub mod convert;
pub mod memory;

pub use board::{Board, Bus, Digitizer, EngineMeter};

use std::time::Duration;

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

/// Why the model failed.
#[derive(Debug, thiserror::Error)]
pub enum DaqError {
    /// A memfd, mapping or file operation failed.
    #[error("{what}: {source}")]
    Memory {
        /// What was being done.
        what: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A read outside the device memory.
    #[error("samples {first}..{} are outside the device memory of {samples} samples", first + len)]
    Range {
        /// First sample.
        first: usize,
        /// Samples asked for.
        len: usize,
        /// Samples held.
        samples: usize,
    },
    /// The control block failed validation.
    #[error("control block: bad {field}: {detail}")]
    ControlBlock {
        /// The field.
        field: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// A read while an acquisition is armed (the driver refuses it too).
    #[error("board {0}: device memory read while an acquisition is armed")]
    Armed(usize),
    /// The acquisition did not end in time.
    #[error("board {board}: no end of acquisition within {} ms", waited.as_millis())]
    Timeout {
        /// The board.
        board: usize,
        /// How long the host waited.
        waited: Duration,
    },
    /// The DMA engine thread is gone.
    #[error("board {0}: the DMA engine stopped")]
    Engine(usize),
    /// A configuration the model cannot run.
    #[error("{0}")]
    Config(String),
}

/// Rounds `samples` up to a multiple of [`SAMPLE_QUANTUM`], as the original does.
pub fn round_up_samples(samples: usize) -> usize {
    samples.div_ceil(SAMPLE_QUANTUM) * SAMPLE_QUANTUM
}
