//! The deterministic signal: when the time of A and B does not differ significantly,
//! their instruction counts may still.
//!
//! Instruction counts (callgrind's, or the PMU's) vary far less from run to run than
//! time does: a loop of 230,000 iterations executes 8.6 % more instructions than one
//! of 200,000 in every run, while five runs of each may not tell their times apart.
//! Throwing that away as "noise" would hide a real change. So `ab` counts every
//! side more than once (each timed run with a PMU; `--callgrind-runs` passes under
//! callgrind without one) and measures the counts' own run-to-run noise
//! ([`InstructionSignal::noise`]: the larger relative range of the two sides). When
//! the counts differ beyond that noise, the difference is real, and the diagnosis
//! says which way to expect the time to go and how many runs would show it
//! ([`runs_to_resolve`]). "Beyond" is judged robustly, as counts are not always
//! exact (an interpreter's hash seed, or the PMU's counts of the timed runs, move
//! them by per cents): either the difference exceeds [`NOISE_FACTOR`] times the
//! noise, or A's and B's ranges do not overlap and the difference exceeds the larger
//! of the two ranges.
//!
//! The number of runs is the usual two-sample estimate for a test at the significance
//! level `ab` uses ([`ALPHA`](super::side::ALPHA), two-sided) with 80 % power,
//! `n = 2 (z₁₋α/₂ + z₀.₈)² σ² / δ²` per side, where δ is the relative time difference
//! the instructions predict (time following instructions at the same rate) and σ the
//! observed relative spread of the wall times, pooled over A and B.

use super::side::{AbSide, SAME_INSTRUCTIONS};
pub use crate::verdict::InstructionSignal;

/// Counts that differ by more than this many times their run-to-run noise differ.
pub const NOISE_FACTOR: f64 = 3.0;

/// z for a two-sided test at [`ALPHA`](super::side::ALPHA) (1 %).
const Z_ALPHA: f64 = 2.575_829;
/// z for 80 % power.
const Z_POWER: f64 = 0.841_621;

/// The signal of two sides' instruction counts; `None` unless both were counted.
pub fn instruction_signal(a: &AbSide, b: &AbSide) -> Option<InstructionSignal> {
    let (ia, source) = a.instructions()?;
    let (ib, _) = b.instructions()?;
    if ia <= 0.0 {
        return None;
    }
    let counts = |s: &AbSide, mean: f64| -> Vec<f64> {
        if s.instruction_runs.is_empty() {
            vec![mean]
        } else {
            s.instruction_runs.clone()
        }
    };
    let (ca, cb) = (counts(a, ia), counts(b, ib));
    let min = |c: &[f64]| c.iter().copied().fold(f64::MAX, f64::min);
    let max = |c: &[f64]| c.iter().copied().fold(f64::MIN, f64::max);
    let range = |c: &[f64]| -> Option<f64> {
        if c.len() < 2 {
            return None;
        }
        let mean = c.iter().sum::<f64>() / c.len() as f64;
        (mean > 0.0).then(|| (max(c) - min(c)) / mean)
    };
    let noise = match (range(&ca), range(&cb)) {
        (Some(x), Some(y)) => Some(x.max(y)),
        _ => None,
    };
    let difference = ib / ia - 1.0;
    let disjoint = max(&ca) < min(&cb) || max(&cb) < min(&ca);
    let beyond_noise = noise.is_some_and(|n| {
        let d = difference.abs();
        d > SAME_INSTRUCTIONS && (d > NOISE_FACTOR * n || (disjoint && d > n))
    });
    let time_spread = if a.mean_s > 0.0 {
        ((a.sd_s.powi(2) + b.sd_s.powi(2)) / 2.0).sqrt() / a.mean_s
    } else {
        0.0
    };
    Some(InstructionSignal {
        source: source.to_string(),
        a_counts: ca.len(),
        b_counts: cb.len(),
        difference,
        noise,
        beyond_noise,
        time_spread,
        suggested_runs: beyond_noise.then(|| runs_to_resolve(difference.abs(), time_spread)),
    })
}

/// Runs of each side that resolve a relative time difference `delta` at a relative
/// spread `spread`, for a two-sided test at [`ALPHA`](super::side::ALPHA) with 80 % power (at
/// least 2).
pub fn runs_to_resolve(delta: f64, spread: f64) -> usize {
    if delta <= 0.0 {
        return usize::MAX;
    }
    let n = 2.0 * (Z_ALPHA + Z_POWER).powi(2) * (spread / delta).powi(2);
    (n.ceil() as usize).max(2)
}

impl InstructionSignal {
    /// The diagnosis when the time is inconclusive (`p` ≥ ALPHA).
    pub fn inconclusive(&self, p_value: f64) -> String {
        let noise = |n: f64| {
            format!(
                "{} counts of A and {} of B by {}, run-to-run noise {:.2} %",
                self.a_counts,
                self.b_counts,
                self.source,
                n * 100.0
            )
        };
        match (self.noise, self.suggested_runs) {
            (Some(n), Some(runs)) if self.beyond_noise => {
                let (more, expect) = if self.difference > 0.0 {
                    ("more", "slower")
                } else {
                    ("fewer", "faster")
                };
                format!(
                    "time inconclusive (p = {p_value:.3}); B executes {:.1} % {more} instructions \
                     ({}): expect it {expect}; about {runs} runs of each (--runs {runs}) would \
                     show a {:.1} % time difference at the observed spread (±{:.1} %)",
                    self.difference.abs() * 100.0,
                    noise(n),
                    self.difference.abs() * 100.0,
                    self.time_spread * 100.0
                )
            }
            (Some(n), _) => format!(
                "not significant: noise (p = {p_value:.3}); instructions {:+.2} %, within their \
                 own noise ({})",
                self.difference * 100.0,
                noise(n)
            ),
            (None, _) => format!(
                "not significant: noise (p = {p_value:.3}); instructions {:+.2} % ({}, counted \
                 once per side, so their noise is unknown: count each more than once to tell)",
                self.difference * 100.0,
                self.source
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::side::tests::fake;
    use super::*;

    fn counted(mut s: AbSide, counts: &[f64]) -> AbSide {
        s.instruction_runs = counts.to_vec();
        s.callgrind = Some(
            [(
                xferbench_probes::counters::name::IR.to_string(),
                counts.iter().sum::<f64>() / counts.len() as f64,
            )]
            .into(),
        );
        s
    }

    #[test]
    fn the_issues_python_loops_read_as_more_instructions_and_a_number_of_runs() {
        // 200,000 vs 230,000 iterations: 522 M vs 567 M instructions under callgrind,
        // times that five runs cannot tell apart.
        let a = counted(
            fake("python3 c.py", &[0.040, 0.046, 0.052, 0.041, 0.049], None),
            &[522.0e6, 522.1e6, 521.9e6],
        );
        let b = counted(
            fake("python3 d.py", &[0.047, 0.043, 0.055, 0.044, 0.050], None),
            &[567.0e6, 567.2e6, 566.9e6],
        );
        let s = instruction_signal(&a, &b).unwrap();
        assert!((s.difference - 0.0862).abs() < 1e-3, "{s:?}");
        assert!(s.beyond_noise && s.noise.unwrap() < 0.001, "{s:?}");
        let runs = s.suggested_runs.unwrap();
        // Spread ≈ 11 %, difference 8.6 %: 23.4 × (11 / 8.6)² ≈ 38 runs.
        assert!((30..80).contains(&runs), "{runs}");
        let d = s.inconclusive(0.161);
        assert!(
            d.starts_with(
                "time inconclusive (p = 0.161); B executes 8.6 % more instructions (3 counts of A \
                 and 3 of B by callgrind"
            ),
            "{d}"
        );
        assert!(d.contains("expect it slower"), "{d}");
        assert!(d.contains(&format!("--runs {runs}")), "{d}");
    }

    #[test]
    fn counts_with_a_random_hash_seed_still_show_a_difference_beyond_their_ranges() {
        // python3 under callgrind with its hash seed random: about 5 % run to run, so
        // 3 × the noise would hide a 7 % difference that no run of B overlaps.
        let a = counted(
            fake("python3 c.py", &[0.040, 0.046, 0.052], None),
            &[366.5e6, 386.3e6, 386.6e6],
        );
        let b = counted(
            fake("python3 d.py", &[0.047, 0.043, 0.055], None),
            &[393.3e6, 414.5e6, 414.9e6],
        );
        let s = instruction_signal(&a, &b).unwrap();
        assert!(
            s.noise.unwrap() > 0.05 && s.difference < 3.0 * s.noise.unwrap(),
            "{s:?}"
        );
        assert!(s.beyond_noise && s.suggested_runs.is_some(), "{s:?}");
        assert!(s.inconclusive(0.763).contains("7.3 % more instructions"));
        // Overlapping ranges with the same means stay noise.
        let b = counted(
            fake("python3 d.py", &[0.047, 0.043, 0.055], None),
            &[380.0e6, 399.0e6, 402.0e6],
        );
        let s = instruction_signal(&a, &b).unwrap();
        assert!(!s.beyond_noise, "{s:?}");
    }

    #[test]
    fn counts_within_their_own_noise_are_noise() {
        let a = counted(fake("a", &[1.0, 1.1, 0.9], None), &[100e6, 104e6]);
        let b = counted(fake("b", &[1.0, 1.1, 0.9], None), &[103e6, 101e6]);
        let s = instruction_signal(&a, &b).unwrap();
        assert!(!s.beyond_noise && s.suggested_runs.is_none(), "{s:?}");
        assert!(
            s.inconclusive(0.5)
                .starts_with("not significant: noise (p = 0.500)")
        );
        assert!(s.inconclusive(0.5).contains("within their own noise"));
    }

    #[test]
    fn one_count_per_side_leaves_the_noise_unknown() {
        let a = counted(fake("a", &[1.0, 1.1], None), &[100e6]);
        let b = counted(fake("b", &[1.0, 1.1], None), &[120e6]);
        let s = instruction_signal(&a, &b).unwrap();
        assert_eq!(s.noise, None);
        assert!(!s.beyond_noise);
        assert!(s.inconclusive(0.3).contains("noise is unknown"));
    }

    #[test]
    fn exact_counts_need_only_differ_and_fewer_instructions_expect_faster() {
        let a = counted(fake("a", &[1.0, 1.2, 0.8], None), &[100e6, 100e6]);
        let b = counted(fake("b", &[1.0, 1.2, 0.8], None), &[95e6, 95e6]);
        let s = instruction_signal(&a, &b).unwrap();
        assert_eq!(s.noise, Some(0.0));
        assert!(s.beyond_noise);
        assert!(s.inconclusive(0.9).contains("5.0 % fewer instructions"));
        assert!(s.inconclusive(0.9).contains("expect it faster"));
    }

    #[test]
    fn more_spread_or_a_smaller_difference_needs_more_runs() {
        assert!(runs_to_resolve(0.05, 0.10) > runs_to_resolve(0.10, 0.10));
        assert!(runs_to_resolve(0.10, 0.20) > runs_to_resolve(0.10, 0.10));
        // 2 × (2.576 + 0.842)² ≈ 23.4 runs when the spread equals the difference.
        assert_eq!(runs_to_resolve(0.1, 0.1), 24);
        assert_eq!(runs_to_resolve(0.5, 0.0), 2);
    }
}
