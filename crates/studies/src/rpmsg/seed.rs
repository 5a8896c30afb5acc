//! Every cell of the SC598's tables (`rpmsg-benchmark.rst`): the original's "Single
//! CH speed" (the sum of per-thread rates, bytes/s) and, with several channels, its
//! "Average CH Speed", by channels, packet size and transfer size. 80 cells: the
//! original measured 30 with one channel, 27 with 8 and 23 with 32.

/// `(channels, packet bytes, transfer bytes, Single CH speed, Average CH speed)`.
pub const CELLS: [(u32, usize, u64, u64, Option<u64>); 80] = [
    (1, 1, 100, 14593, None),
    (1, 1, 10000, 14429, None),
    (1, 1, 100000, 14554, None),
    (1, 1, 1000000, 14521, None),
    (1, 1, 10000000, 14627, None),
    (1, 2, 100, 29262, None),
    (1, 2, 10000, 29015, None),
    (1, 2, 100000, 28722, None),
    (1, 2, 1000000, 28828, None),
    (1, 2, 10000000, 29160, None),
    (1, 16, 100, 244307, None),
    (1, 16, 10000, 233222, None),
    (1, 16, 100000, 227375, None),
    (1, 16, 1000000, 228350, None),
    (1, 16, 10000000, 228385, None),
    (1, 64, 100, 839190, None),
    (1, 64, 10000, 855061, None),
    (1, 64, 100000, 833525, None),
    (1, 64, 1000000, 824475, None),
    (1, 64, 10000000, 821174, None),
    (1, 256, 100, 2611392, None),
    (1, 256, 10000, 2498536, None),
    (1, 256, 100000, 2314672, None),
    (1, 256, 1000000, 2290975, None),
    (1, 256, 10000000, 2278242, None),
    (1, 496, 100, 4598496, None),
    (1, 496, 10000, 4904841, None),
    (1, 496, 100000, 5318444, None),
    (1, 496, 1000000, 5358093, None),
    (1, 496, 10000000, 5402480, None),
    (8, 1, 100, 15383, Some(1923)),
    (8, 1, 10000, 15379, Some(1922)),
    (8, 1, 100000, 15325, Some(1916)),
    (8, 2, 100, 18300, Some(2288)),
    (8, 2, 10000, 28289, Some(3536)),
    (8, 2, 100000, 29352, Some(3669)),
    (8, 2, 1000000, 29794, Some(3724)),
    (8, 16, 100, 251359, Some(31420)),
    (8, 16, 10000, 232645, Some(29081)),
    (8, 16, 100000, 237663, Some(29708)),
    (8, 16, 1000000, 245774, Some(30722)),
    (8, 16, 10000000, 236035, Some(29504)),
    (8, 64, 100, 1514642, Some(189330)),
    (8, 64, 10000, 1061882, Some(132735)),
    (8, 64, 100000, 1010483, Some(126310)),
    (8, 64, 1000000, 957566, Some(119696)),
    (8, 64, 10000000, 997557, Some(124695)),
    (8, 256, 100, 5835056, Some(729382)),
    (8, 256, 10000, 4184189, Some(523024)),
    (8, 256, 100000, 3407874, Some(425984)),
    (8, 256, 1000000, 3532256, Some(441532)),
    (8, 256, 10000000, 2505826, Some(313228)),
    (8, 496, 100, 12892509, Some(1611564)),
    (8, 496, 10000, 8742713, Some(1092839)),
    (8, 496, 100000, 7078932, Some(884867)),
    (8, 496, 1000000, 7143015, Some(892877)),
    (8, 496, 10000000, 7184777, Some(898097)),
    (32, 1, 100, 12464, Some(390)),
    (32, 1, 10000, 12790, Some(400)),
    (32, 1, 100000, 12775, Some(399)),
    (32, 2, 100, 26479, Some(827)),
    (32, 2, 10000, 25364, Some(793)),
    (32, 2, 100000, 25339, Some(792)),
    (32, 16, 100, 351299, Some(10978)),
    (32, 16, 10000, 205900, Some(6434)),
    (32, 16, 100000, 197167, Some(6161)),
    (32, 64, 100, 13584233, Some(424507)),
    (32, 64, 10000, 877851, Some(27433)),
    (32, 64, 100000, 753868, Some(23558)),
    (32, 64, 1000000, 742513, Some(23204)),
    (32, 256, 100, 23018872, Some(719340)),
    (32, 256, 10000, 8198836, Some(256214)),
    (32, 256, 100000, 2925997, Some(91437)),
    (32, 256, 1000000, 2768895, Some(86528)),
    (32, 256, 10000000, 25052788426826, Some(87138)),
    (32, 496, 100, 44478888, Some(1389965)),
    (32, 496, 10000, 33994508, Some(1062328)),
    (32, 496, 100000, 6907303, Some(215853)),
    (32, 496, 1000000, 6170902, Some(192841)),
    (32, 496, 10000000, 6076338, Some(189886)),
];

/// The SC598's cell for `channels` × `packet` × `transfer`, when it measured one.
pub fn cell(channels: u32, packet: usize, transfer: u64) -> Option<(u64, Option<u64>)> {
    CELLS
        .iter()
        .find(|c| (c.0, c.1, c.2) == (channels, packet, transfer))
        .map(|c| (c.3, c.4))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_is_there_once_and_agrees_with_the_summary_figures() {
        for ch in [1, 8, 32] {
            let n = CELLS.iter().filter(|c| c.0 == ch).count();
            assert_eq!(
                n,
                [30, 27, 23][[1, 8, 32].iter().position(|&c| c == ch).unwrap()]
            );
        }
        let mut keys: Vec<_> = CELLS.iter().map(|c| (c.0, c.1, c.2)).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), CELLS.len());
        // The figures at 10^5 that the summary and plots quote.
        for (ch, row) in super::super::writer::ORIGINAL {
            for (packet, bytes_per_s) in row {
                assert_eq!(cell(ch, packet, 100_000).unwrap().0 as f64, bytes_per_s);
            }
        }
        assert!(CELLS.iter().all(|c| (c.0 == 1) == c.4.is_none()));
        // The original stopped its 32-channel sweep of small packets early.
        assert_eq!(cell(32, 1, 1_000_000), None);
        assert_eq!(cell(32, 496, 10_000_000), Some((6_076_338, Some(189_886))));
    }
}
