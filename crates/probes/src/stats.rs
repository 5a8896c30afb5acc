//! Robust summaries of repeated measurements.
//!
//! Every figure of a point (throughput, a latency percentile, CPUs utilised, …) is
//! measured once per run; [`Estimate::from_samples`] summarises those runs:
//!
//! * **median, min, max** of the runs;
//! * **MAD**, the median absolute deviation from the median, and the *robust
//!   coefficient of variation* `1.4826 · MAD / median` (for normal data, 1.4826·MAD
//!   estimates the standard deviation);
//! * **outliers** by the modified z-score `0.6745 · |x − median| / MAD > 3.5`
//!   (Iglewicz and Hoaglin, 1993, the rule hyperfine uses); when MAD is 0 (half
//!   the runs or more are identical) every run that differs from the median is one;
//! * a **distribution-free confidence interval of the median** from order statistics:
//!   with `K ~ Binomial(n, ½)` the interval `[x₍ₖ₎, x₍ₙ₋ₖ₊₁₎]` covers the median with
//!   probability `1 − 2·P(K < k)` (Conover, *Practical Nonparametric Statistics*,
//!   §3.2). We take the narrowest such interval reaching 95 %; with fewer than six
//!   runs 95 % is out of reach, so the interval is `[min, max]` and the level
//!   achieved (93.75 % for five runs) is reported as it is.
//!
//! Two sets of runs are compared with **Welch's t-test** ([`welch_t_test`]; Welch,
//! 1947): unequal variances allowed, degrees of freedom by the Welch–Satterthwaite
//! equation, two-sided p-value from Student's t distribution (`statrs`).
//!
//! The interval of a change between two sets of runs, `mean(new) / mean(base)`, is a
//! **percentile bootstrap** ([`bootstrap_ratio_of_means`]; Efron and Tibshirani, *An
//! Introduction to the Bootstrap*, 1993, §13.3), as criterion.rs draws the interval of
//! a change: each side is resampled with replacement on its own (the runs of two
//! documents are not paired), the ratio of the resamples' means taken
//! [`BOOTSTRAP_RESAMPLES`] times, and the interval is the middle `level` of those
//! ratios. The resampling is seeded, so the same runs always give the same interval.

use serde::{Deserialize, Serialize};

/// A finite sample value: NaN and infinities are refused at construction.
#[derive(
    Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Sample(f64);

impl Sample {
    /// Wraps `x` if it is finite.
    pub fn new(x: f64) -> Option<Sample> {
        x.is_finite().then_some(Sample(x))
    }

    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// The confidence level the median's interval aims for.
pub const TARGET_LEVEL: f64 = 0.95;

/// Robust CV above which a figure is called noisy.
pub const NOISY_RCV: f64 = 0.05;

/// Summary of one figure over the measured runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Estimate {
    /// Number of runs summarised.
    pub n: usize,
    /// Median of the runs.
    pub median: f64,
    /// Smallest run.
    pub min: f64,
    /// Largest run.
    pub max: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    /// Robust coefficient of variation, `1.4826 · MAD / |median|` (0 when the median is 0).
    pub rcv: f64,
    /// Lower end of the median's confidence interval.
    pub ci_low: f64,
    /// Upper end of the median's confidence interval.
    pub ci_high: f64,
    /// Coverage probability of `[ci_low, ci_high]`.
    pub ci_level: f64,
    /// Runs flagged as outliers by the modified z-score.
    pub outliers: usize,
}

impl Estimate {
    /// Summarises the samples; `None` when there are none.
    pub fn from_samples(samples: &[Sample]) -> Option<Estimate> {
        if samples.is_empty() {
            return None;
        }
        let mut xs: Vec<f64> = samples.iter().map(|s| s.0).collect();
        xs.sort_by(f64::total_cmp);
        let n = xs.len();
        let median = median_sorted(&xs);
        let mut dev: Vec<f64> = xs.iter().map(|x| (x - median).abs()).collect();
        dev.sort_by(f64::total_cmp);
        let mad = median_sorted(&dev);
        let outliers = if mad > 0.0 {
            xs.iter()
                .filter(|x| 0.6745 * (*x - median).abs() / mad > 3.5)
                .count()
        } else {
            // Half or more of the runs are identical: anything else is an outlier.
            xs.iter().filter(|x| **x != median).count()
        };
        let (k, level) = median_ci_rank(n);
        Some(Estimate {
            n,
            median,
            min: xs[0],
            max: xs[n - 1],
            mad,
            rcv: if median != 0.0 {
                1.4826 * mad / median.abs()
            } else {
                0.0
            },
            ci_low: xs[k - 1],
            ci_high: xs[n - k],
            ci_level: level,
            outliers,
        })
    }

    /// Summarises raw values, skipping non-finite ones.
    pub fn from_values(values: impl IntoIterator<Item = f64>) -> Option<Estimate> {
        let samples: Vec<Sample> = values.into_iter().filter_map(Sample::new).collect();
        Self::from_samples(&samples)
    }

    /// True when the spread says the machine was noisy for this figure.
    pub fn is_noisy(&self) -> bool {
        self.n >= 3 && self.rcv > NOISY_RCV
    }
}

/// The ratio `numerator / denominator` of two points' figure, run by run.
///
/// Runs are paired by position: in an interleaved plan run `r` of both points ran in
/// the same round, so each pair saw the same state of the machine and the drift
/// between rounds cancels out of the ratio. The estimate's median and interval are
/// those of the paired ratios ([`Estimate::from_values`]); `None` without a pair
/// with a non-zero denominator.
pub fn paired_ratio(numerator: &[f64], denominator: &[f64]) -> Option<Estimate> {
    Estimate::from_values(
        numerator
            .iter()
            .zip(denominator)
            .filter(|(_, d)| **d != 0.0)
            .map(|(n, d)| n / d),
    )
}

/// The median of `xs` (the mean of the middle two for an even count); `None` for no
/// values.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(median_sorted(&sorted))
}

/// The arithmetic mean of `xs`; `None` for no values.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

fn median_sorted(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The 1-based rank `k` of the median's interval `[x₍ₖ₎, x₍ₙ₋ₖ₊₁₎]` and its level.
fn median_ci_rank(n: usize) -> (usize, f64) {
    // P(K < k) for K ~ Binomial(n, 1/2), accumulated in log space for large n.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut best = (1, 0.0);
    let mut cdf = 0.0; // P(K < k)
    let mut ln_binom = 0.0; // ln C(n, j)
    for k in 1..=n.div_ceil(2) {
        let j = k - 1;
        if j > 0 {
            ln_binom += ((n - j + 1) as f64).ln() - (j as f64).ln();
        }
        cdf += (ln_binom + ln_half_n).exp();
        let level = 1.0 - 2.0 * cdf;
        if k == 1 {
            best = (1, level.max(0.0));
        } else if level >= TARGET_LEVEL {
            best = (k, level);
        } else {
            break;
        }
    }
    best
}

/// The outcome of [`welch_t_test`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WelchTest {
    /// The t statistic of `mean(b) − mean(a)`.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value: the chance of a difference at least this large if the
    /// means were equal.
    pub p: f64,
}

/// Mean and sample standard deviation (n − 1); `None` for fewer than two values.
pub fn mean_sd(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 {
        return None;
    }
    let n = xs.len() as f64;
    let mean = mean(xs)?;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((mean, var.sqrt()))
}

/// Welch's two-sample t-test of `a` against `b` (see the module doc). `None` with
/// fewer than two values on a side. Two constant samples give p = 1 when equal and
/// p = 0 when not.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Option<WelchTest> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let (ma, sa) = mean_sd(a)?;
    let (mb, sb) = mean_sd(b)?;
    let (va, vb) = (sa * sa / a.len() as f64, sb * sb / b.len() as f64);
    let se = (va + vb).sqrt();
    if se == 0.0 || !se.is_finite() {
        let p = if ma == mb { 1.0 } else { 0.0 };
        return Some(WelchTest {
            t: 0.0,
            df: (a.len() + b.len() - 2) as f64,
            p,
        });
    }
    let t = (mb - ma) / se;
    let df =
        (va + vb).powi(2) / (va * va / (a.len() as f64 - 1.0) + vb * vb / (b.len() as f64 - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = (2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0);
    Some(WelchTest { t, df, p })
}

/// Resamples drawn by [`bootstrap_ratio_of_means`].
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// A two-sided interval of a ratio and its nominal coverage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RatioInterval {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Nominal coverage (0.99 for a 99 % interval).
    pub level: f64,
}

/// The percentile-bootstrap interval of `mean(new) / mean(base)` at `level` (see the
/// module doc). `None` when a side has fewer than two values, when `level` is not
/// within (0, 1), or when a resample of `base` has a mean of 0.
pub fn bootstrap_ratio_of_means(base: &[f64], new: &[f64], level: f64) -> Option<RatioInterval> {
    if base.len() < 2 || new.len() < 2 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    // A fixed seed: the interval is a function of the runs, not of the moment.
    let mut rng = fastrand::Rng::with_seed(0x0b00_75ed);
    let mut resample_mean = |xs: &[f64]| {
        let sum: f64 = (0..xs.len()).map(|_| xs[rng.usize(..xs.len())]).sum();
        sum / xs.len() as f64
    };
    let mut ratios = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        let b = resample_mean(base);
        let n = resample_mean(new);
        if b == 0.0 {
            return None;
        }
        ratios.push(n / b);
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    let at = |q: f64| {
        let i = (q * (ratios.len() - 1) as f64).round() as usize;
        ratios[i.min(ratios.len() - 1)]
    };
    Some(RatioInterval {
        low: at(tail),
        high: at(1.0 - tail),
        level,
    })
}

/// Jain's fairness index of per-channel shares, `(Σx)² / (n · Σx²)`: 1 when all are
/// equal, `1/n` when one channel gets everything.
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    (!xs.is_empty() && sq > 0.0).then(|| sum * sum / (xs.len() as f64 * sq))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn est(xs: &[f64]) -> Estimate {
        Estimate::from_values(xs.iter().copied()).unwrap()
    }

    #[test]
    fn welch_matches_a_textbook_value() {
        // Two samples of five, variance 2.5 each: se = 1, t = 2, df = 8;
        // R: t.test(b, a) gives p = 0.08052.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [3.0, 4.0, 5.0, 6.0, 7.0];
        let w = welch_t_test(&a, &b).unwrap();
        assert!((w.t - 2.0).abs() < 1e-9);
        assert!((w.df - 8.0).abs() < 1e-9);
        assert!((w.p - 0.08052).abs() < 1e-4, "{w:?}");
        assert_eq!(welch_t_test(&[1.0], &b), None);
        assert_eq!(welch_t_test(&[2.0, 2.0], &[2.0, 2.0]).unwrap().p, 1.0);
    }

    #[test]
    fn the_bootstrap_interval_of_a_ratio_brackets_it_and_narrows_with_agreement() {
        // Constant sides: every resample gives the same ratio.
        let r = bootstrap_ratio_of_means(&[100.0, 100.0, 100.0], &[80.0, 80.0], 0.99).unwrap();
        assert_eq!((r.low, r.high, r.level), (0.8, 0.8, 0.99));
        // Spread sides: the interval holds the ratio of the means, and the same runs
        // give the same interval (seeded).
        let base = [100.0, 101.0, 99.0, 100.5, 99.5];
        let new = [80.0, 80.8, 79.2, 80.4, 79.6];
        let r = bootstrap_ratio_of_means(&base, &new, 0.99).unwrap();
        assert!(r.low < 0.8 && 0.8 < r.high, "{r:?}");
        // The extreme resamples: all of NEW's lowest over all of BASE's highest, and
        // the reverse, bound every ratio.
        assert!(r.low >= 79.2 / 101.0 && r.high <= 80.8 / 99.0, "{r:?}");
        assert_eq!(r, bootstrap_ratio_of_means(&base, &new, 0.99).unwrap());
        // A wider level gives an interval at least as wide.
        let narrow = bootstrap_ratio_of_means(&base, &new, 0.5).unwrap();
        assert!(
            narrow.low >= r.low && narrow.high <= r.high,
            "{narrow:?} {r:?}"
        );
        assert_eq!(bootstrap_ratio_of_means(&[1.0], &new, 0.99), None);
        assert_eq!(bootstrap_ratio_of_means(&base, &new, 1.0), None);
        assert_eq!(bootstrap_ratio_of_means(&[0.0, 0.0], &new, 0.99), None);
    }

    proptest! {
        #[test]
        fn the_bootstrap_interval_is_ordered_and_scales_with_new(
            base in proptest::collection::vec(1.0f64..1e3, 2..12),
            new in proptest::collection::vec(1.0f64..1e3, 2..12),
            c in 0.5f64..100.0,
        ) {
            let r = bootstrap_ratio_of_means(&base, &new, 0.95).unwrap();
            prop_assert!(r.low <= r.high);
            let lo = new.iter().copied().fold(f64::INFINITY, f64::min)
                / base.iter().copied().fold(0.0, f64::max);
            let hi = new.iter().copied().fold(0.0, f64::max)
                / base.iter().copied().fold(f64::INFINITY, f64::min);
            prop_assert!(r.low >= lo * (1.0 - 1e-12) && r.high <= hi * (1.0 + 1e-12));
            let scaled: Vec<f64> = new.iter().map(|x| x * c).collect();
            let s = bootstrap_ratio_of_means(&base, &scaled, 0.95).unwrap();
            let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs();
            prop_assert!(close(r.low * c, s.low) && close(r.high * c, s.high));
        }

        #[test]
        fn welch_p_is_a_probability_and_symmetric(
            a in proptest::collection::vec(0.0f64..1e3, 2..20),
            b in proptest::collection::vec(0.0f64..1e3, 2..20),
        ) {
            let ab = welch_t_test(&a, &b).unwrap();
            let ba = welch_t_test(&b, &a).unwrap();
            prop_assert!((0.0..=1.0).contains(&ab.p));
            prop_assert!((ab.p - ba.p).abs() < 1e-9);
            prop_assert!((ab.t + ba.t).abs() < 1e-9);
        }
    }

    #[test]
    fn five_runs_give_min_max_at_93_75_percent() {
        let e = est(&[5.0, 1.0, 4.0, 2.0, 3.0]);
        assert_eq!((e.median, e.min, e.max), (3.0, 1.0, 5.0));
        assert_eq!((e.ci_low, e.ci_high), (1.0, 5.0));
        assert!((e.ci_level - 0.9375).abs() < 1e-12);
    }

    #[test]
    fn many_runs_give_an_interval_of_at_least_95_percent() {
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        let e = est(&xs);
        // Binomial(20, 1/2): P(K <= 5) = 0.0207, so k = 6 reaches 95.86 %.
        assert_eq!((e.ci_low, e.ci_high), (6.0, 15.0));
        assert!((e.ci_level - 0.958611).abs() < 1e-5, "{}", e.ci_level);
    }

    #[test]
    fn paired_ratios_cancel_drift_shared_by_a_round() {
        // The machine halves its speed in round 2; B is always twice as fast as A.
        let a = [100.0, 50.0, 100.0];
        let b = [200.0, 100.0, 200.0];
        let r = paired_ratio(&b, &a).unwrap();
        assert_eq!((r.median, r.ci_low, r.ci_high), (2.0, 2.0, 2.0));
        assert_eq!(r.n, 3);
        assert!(paired_ratio(&b, &[0.0, 0.0]).is_none());
    }

    #[test]
    fn an_outlier_is_flagged_and_does_not_move_the_median() {
        let e = est(&[10.0, 10.1, 9.9, 10.05, 9.95, 50.0]);
        assert_eq!(e.outliers, 1);
        assert!((e.median - 10.025).abs() < 1e-9);
    }

    #[test]
    fn noise_is_called_by_the_robust_cv() {
        assert!(!est(&[100.0, 101.0, 99.0, 100.5, 99.5]).is_noisy());
        assert!(est(&[100.0, 130.0, 70.0, 115.0, 85.0]).is_noisy());
    }

    #[test]
    fn no_samples_no_estimate_and_nan_is_refused() {
        assert!(Estimate::from_values([]).is_none());
        assert!(Sample::new(f64::NAN).is_none());
        assert_eq!(est(&[f64::NAN, 2.0]).n, 1);
    }

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain_index(&[3.0, 3.0, 3.0]), Some(1.0));
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]).unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
    }

    proptest! {
        #[test]
        fn estimates_are_ordered(xs in prop::collection::vec(-1e12f64..1e12, 1..60)) {
            let e = est(&xs);
            prop_assert!(e.min <= e.ci_low && e.ci_low <= e.median);
            prop_assert!(e.median <= e.ci_high && e.ci_high <= e.max);
            prop_assert!(e.mad >= 0.0 && e.outliers <= e.n);
            prop_assert!(e.ci_level >= 0.0 && e.ci_level <= 1.0);
            prop_assert!(e.n < 6 || e.ci_level >= TARGET_LEVEL);
        }

        #[test]
        fn estimates_ignore_order(mut xs in prop::collection::vec(0f64..1e9, 1..40), seed in any::<u64>()) {
            let a = est(&xs);
            // A deterministic shuffle.
            let mut s = seed;
            for i in (1..xs.len()).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                xs.swap(i, (s >> 33) as usize % (i + 1));
            }
            prop_assert_eq!(a, est(&xs));
        }

        #[test]
        fn scaling_the_data_scales_the_estimate(xs in prop::collection::vec(1f64..1e6, 1..40), c in 0.5f64..1000.0) {
            let a = est(&xs);
            let b = est(&xs.iter().map(|x| x * c).collect::<Vec<_>>());
            let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs().max(1.0);
            prop_assert!(close(a.median * c, b.median));
            prop_assert!(close(a.mad * c, b.mad));
            prop_assert!(close(a.ci_low * c, b.ci_low) && close(a.ci_high * c, b.ci_high));
            prop_assert_eq!(a.outliers, b.outliers);
        }
    }
}
