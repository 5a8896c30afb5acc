//! The CRC's speed as points of the study's plan: one point per LCRC32
//! implementation (group [`GROUP`], parameter `crc`), whose one run computes the CRC
//! of a 2 KiB buffer a fixed number of times on this thread. The loop gives these
//! points what it gives every other: their warm-up and runs, interleaved with the
//! rest of the plan, the context and the machine's load over each run's window.
//!
//! Each point runs on the lab's CRC rig ([`xferbench_lab::rig::crc`]), whose
//! primary figure is [`CRC_MB_PER_S`](xferbench_lab::rig::crc::CRC_MB_PER_S).

use xferbench_lab::measure::PlannedPoint;
use xferbench_lab::rig::crc::{BUFFER, RULES};
use xferbench_transports::warp::CrcKind;

/// The group of the CRC points.
pub const GROUP: &str = "crc-speed";

/// The planned point of `kind`: parameters `group` and `crc`.
pub fn planned(kind: CrcKind) -> PlannedPoint {
    PlannedPoint {
        size_bytes: BUFFER as u64,
        ..PlannedPoint::from_params(
            [
                (crate::params::GROUP.name(), GROUP),
                (xferbench_transports::warp::crc::CRC.name(), kind.name()),
            ],
            RULES,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_names_its_group_and_implementation() {
        let p = planned(CrcKind::Fast);
        assert_eq!(p.params["crc"], "fast");
        assert_eq!(p.params["group"], GROUP);
    }
}
