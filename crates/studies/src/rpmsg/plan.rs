//! The RPMsg study's plan: the original's 80 cells, the scales that measure them (or a
//! budgeted subset) and the points each scale makes.

use serde::{Deserialize, Serialize};
use xferbench_lab::workload::Limit;
use xferbench_lab::workload::rpmsg::RpmsgPoint;
use xferbench_transports::rpmsg::{Buffers, Notify};

/// How much to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scale {
    /// Channel counts.
    pub channels: Vec<u32>,
    /// Packet sizes, bytes.
    pub packets: Vec<usize>,
    /// Transfer sizes, bytes per thread.
    pub transfers: Vec<u64>,
    /// Largest number of round trips (all channels) of a kept point.
    pub budget: u64,
    /// Channel counts of the variants.
    pub variant_channels: Vec<u32>,
    /// Round trips of a variant run, shared among its channels (packets of 496
    /// bytes; ×10 when polling, which is about ten times faster).
    pub variant_round_trips: u64,
    /// Only the cells the original measured ([`ORIGINAL_CELLS`]).
    #[serde(default)]
    pub original_only: bool,
}

/// The 80 cells of the SC598's tables: `(channels, packet, transfer)`. The original
/// measured 30 with one channel, 27 with 8 and 23 with 32.
pub const ORIGINAL_CELLS: [(u32, usize, u64); 80] = [
    (1, 1, 100),
    (1, 1, 10000),
    (1, 1, 100000),
    (1, 1, 1000000),
    (1, 1, 10000000),
    (1, 2, 100),
    (1, 2, 10000),
    (1, 2, 100000),
    (1, 2, 1000000),
    (1, 2, 10000000),
    (1, 16, 100),
    (1, 16, 10000),
    (1, 16, 100000),
    (1, 16, 1000000),
    (1, 16, 10000000),
    (1, 64, 100),
    (1, 64, 10000),
    (1, 64, 100000),
    (1, 64, 1000000),
    (1, 64, 10000000),
    (1, 256, 100),
    (1, 256, 10000),
    (1, 256, 100000),
    (1, 256, 1000000),
    (1, 256, 10000000),
    (1, 496, 100),
    (1, 496, 10000),
    (1, 496, 100000),
    (1, 496, 1000000),
    (1, 496, 10000000),
    (8, 1, 100),
    (8, 1, 10000),
    (8, 1, 100000),
    (8, 2, 100),
    (8, 2, 10000),
    (8, 2, 100000),
    (8, 2, 1000000),
    (8, 16, 100),
    (8, 16, 10000),
    (8, 16, 100000),
    (8, 16, 1000000),
    (8, 16, 10000000),
    (8, 64, 100),
    (8, 64, 10000),
    (8, 64, 100000),
    (8, 64, 1000000),
    (8, 64, 10000000),
    (8, 256, 100),
    (8, 256, 10000),
    (8, 256, 100000),
    (8, 256, 1000000),
    (8, 256, 10000000),
    (8, 496, 100),
    (8, 496, 10000),
    (8, 496, 100000),
    (8, 496, 1000000),
    (8, 496, 10000000),
    (32, 1, 100),
    (32, 1, 10000),
    (32, 1, 100000),
    (32, 2, 100),
    (32, 2, 10000),
    (32, 2, 100000),
    (32, 16, 100),
    (32, 16, 10000),
    (32, 16, 100000),
    (32, 64, 100),
    (32, 64, 10000),
    (32, 64, 100000),
    (32, 64, 1000000),
    (32, 256, 100),
    (32, 256, 10000),
    (32, 256, 100000),
    (32, 256, 1000000),
    (32, 256, 10000000),
    (32, 496, 100),
    (32, 496, 10000),
    (32, 496, 100000),
    (32, 496, 1000000),
    (32, 496, 10000000),
];

impl Scale {
    /// The full plan: every size of the original.
    pub fn full() -> Scale {
        Scale {
            channels: vec![1, 8, 32],
            packets: vec![1, 2, 16, 64, 256, 496],
            transfers: vec![100, 10_000, 100_000, 1_000_000, 10_000_000],
            budget: 50_000,
            variant_channels: vec![1, 8, 32],
            variant_round_trips: 20_000,
            original_only: false,
        }
    }

    /// `--full`: every cell the original measured, whatever its round trips.
    pub fn every_cell() -> Scale {
        Scale {
            budget: u64::MAX,
            original_only: true,
            ..Scale::full()
        }
    }

    /// The quick plan: a subset that runs in about a minute.
    pub fn quick() -> Scale {
        Scale {
            channels: vec![1, 8, 32],
            packets: vec![1, 16, 496],
            transfers: vec![100, 10_000, 100_000],
            budget: 12_000,
            variant_channels: vec![1, 8],
            variant_round_trips: 4_000,
            original_only: false,
        }
    }

    /// Whether a table point fits the budget.
    pub fn keeps(&self, channels: u32, packet: usize, transfer: u64) -> bool {
        u64::from(channels) * RpmsgPoint::round_trips_for(transfer, packet) <= self.budget
    }
}

/// A table point left out by the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedPoint {
    /// Channels.
    pub channels: u32,
    /// Packet bytes.
    pub packet: usize,
    /// Transfer bytes per thread.
    pub transfer: u64,
    /// Round trips it would have taken (all channels).
    pub round_trips: u64,
}

/// One planned point: its group, transfer and workload point.
#[derive(Debug, Clone, Copy)]
pub struct Planned {
    /// `table` or `variants`.
    pub group: &'static str,
    /// Bytes per thread.
    pub transfer: u64,
    /// The workload's point.
    pub point: RpmsgPoint,
}

/// The points of a scale and the table points it skipped.
pub fn points(scale: &Scale) -> (Vec<Planned>, Vec<SkippedPoint>) {
    let base = |channels, packet, transfer, notify, buffers, suffix| RpmsgPoint {
        channels,
        packet,
        limit: Limit::Count(RpmsgPoint::round_trips_for(transfer, packet)),
        notify,
        buffers,
        suffix,
        verify: false,
        zero_copy: false,
        pace_ns: None,
    };
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for &channels in &scale.channels {
        for &packet in &scale.packets {
            for &transfer in &scale.transfers {
                if scale.original_only && !ORIGINAL_CELLS.contains(&(channels, packet, transfer)) {
                    continue;
                }
                if !scale.keeps(channels, packet, transfer) {
                    skipped.push(SkippedPoint {
                        channels,
                        packet,
                        transfer,
                        round_trips: u64::from(channels)
                            * RpmsgPoint::round_trips_for(transfer, packet),
                    });
                    continue;
                }
                out.push(Planned {
                    group: "table",
                    transfer,
                    // As the firmware answers: the echo with its suffix.
                    point: base(
                        channels,
                        packet,
                        transfer,
                        Notify::Kick,
                        Buffers::Copy,
                        true,
                    ),
                });
            }
        }
    }
    for &channels in &scale.variant_channels {
        for notify in Notify::ALL {
            for buffers in Buffers::ALL {
                // The round trips are shared among the channels, so every run
                // carries about as many messages whatever the channel count.
                let total = scale.variant_round_trips * if notify == Notify::Poll { 10 } else { 1 };
                let rts = (total / u64::from(channels)).max(200);
                out.push(Planned {
                    group: "variants",
                    transfer: 496 * rts,
                    point: base(channels, 496, 496 * rts, notify, buffers, false),
                });
            }
        }
    }
    (out, skipped)
}
