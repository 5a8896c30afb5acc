//! Time: one monotonic clock, comparable across the processes of a run.
//!
//! Timestamps are `CLOCK_MONOTONIC` nanoseconds. Unlike [`std::time::Instant`] they can
//! be sent to another process and compared there: a peer process's end-of-stream
//! stamp and the driver's start stamp lie on the same axis. Reading the clock goes
//! through the vDSO (tens of nanoseconds, no system call).

use serde::{Deserialize, Serialize};

/// A `CLOCK_MONOTONIC` reading in nanoseconds.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Stamp(pub u64);

impl Stamp {
    /// Reads the clock.
    #[inline]
    pub fn now() -> Self {
        let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        Stamp(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }

    /// Nanoseconds from `earlier` to `self`, zero if `earlier` is later.
    #[inline]
    pub fn since(self, earlier: Stamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_does_not_go_backwards() {
        let mut last = Stamp::now();
        for _ in 0..10_000 {
            let now = Stamp::now();
            assert!(now >= last);
            last = now;
        }
    }
}
