//! Why the model failed: [`DaqError`].

use std::time::Duration;

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
