//! Axis extents and ticks, the one set of rules for every chart.
//!
//! - **Extent**: the data with a little room: a fifth of a decade either side on a log
//!   axis, 5 % on a linear one. A value axis of positive figures (rates, times) keeps
//!   zero in view unless the data sit far above it; an axis of whole numbers (runs,
//!   channels, cases) gets half a step either side. One value alone is widened so it
//!   sits in the middle; no value at all gives a unit range.
//! - **Linear ticks**: steps of 1, 2 or 5 × 10^k in the axis's unit (so a size axis
//!   steps in KiB, never 48.8 KiB), at most seven; whole numbers only on an axis of
//!   whole numbers (run 1, 2, 3, never 1.2).
//! - **Log ticks**: powers of ten (with 2 and 5 when the axis spans two decades or
//!   less); on a size axis powers of two (64 B, 256 B, 1 KiB, …), at most eight.
//!   An axis too short for two such ticks gets linear ticks.

use super::unit::Unit;

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Evenly spaced powers of ten; non-positive values are left out.
    Log,
}

/// The drawn extent of an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Lowest value drawn.
    pub lo: f64,
    /// Highest value drawn.
    pub hi: f64,
    /// How values map to positions.
    pub scale: Scale,
    /// Whether only whole numbers are ticked.
    pub integer: bool,
}

/// What an axis shows, which decides how its extent is padded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The independent variable (size, channels, run): no zero added.
    Across,
    /// A measured figure: zero kept in view on a linear axis of positive values.
    Value,
}

impl Span {
    /// The extent of `values` (finite, and positive on a log axis: the caller filters).
    pub fn of(values: impl Iterator<Item = f64>, scale: Scale, role: Role) -> Span {
        let mut integer = scale == Scale::Linear;
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            integer &= v == v.trunc();
            (lo.min(v), hi.max(v))
        });
        let span = |lo, hi| Span {
            lo,
            hi,
            scale,
            integer,
        };
        if !lo.is_finite() || !hi.is_finite() {
            return match scale {
                Scale::Linear => span(0.0, 1.0),
                Scale::Log => span(1.0, 10.0),
            };
        }
        match scale {
            Scale::Log => {
                let pad = 10f64.powf(0.2);
                span(lo / pad, hi * pad)
            }
            Scale::Linear if integer && role == Role::Across => span(lo - 0.5, hi + 0.5),
            Scale::Linear if lo == hi => {
                let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
                span(lo - pad, hi + pad)
            }
            Scale::Linear => {
                let pad = (hi - lo) * 0.05;
                let low = if role == Role::Value && lo >= 0.0 && lo < hi - lo {
                    0.0
                } else {
                    lo - pad
                };
                span(low, hi + pad)
            }
        }
    }

    /// The extent of a strip of runs: the values with 8 % room, zero not forced.
    pub fn tight(values: impl Iterator<Item = f64>) -> Span {
        let s = Span::of(values, Scale::Linear, Role::Across);
        let pad = (s.hi - s.lo) * 0.08;
        Span {
            lo: s.lo - pad,
            hi: s.hi + pad,
            scale: Scale::Linear,
            integer: false,
        }
    }

    fn t(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log => v.log10(),
        }
    }

    /// Where `v` falls between the ends: 0 at `lo`, 1 at `hi`.
    pub fn fraction(&self, v: f64) -> f64 {
        let (a, b) = (self.t(self.lo), self.t(self.hi));
        if b > a {
            (self.t(v) - a) / (b - a)
        } else {
            0.5
        }
    }

    /// The tick values, lowest first.
    pub fn ticks(&self, unit: Unit) -> Vec<f64> {
        match self.scale {
            Scale::Linear => self.linear_ticks(unit),
            Scale::Log => {
                let t = if unit == Unit::Bytes {
                    binary_ticks(self.lo, self.hi)
                } else {
                    decade_ticks(self.lo, self.hi)
                };
                if t.len() >= 2 {
                    t
                } else {
                    self.linear_ticks(unit)
                        .into_iter()
                        .filter(|v| *v > 0.0)
                        .collect()
                }
            }
        }
    }

    /// Steps of 1, 2 or 5 × 10^k in the unit of the larger end.
    fn linear_ticks(&self, unit: Unit) -> Vec<f64> {
        let top = self.lo.abs().max(self.hi.abs());
        let f = unit.ticks_factor(top);
        let (lo, hi) = (self.lo / f, self.hi / f);
        let span = hi - lo;
        if span <= 0.0 || !span.is_finite() {
            return vec![self.lo];
        }
        let mag = 10f64.powf((span / 6.0).log10().floor());
        let mut step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| span / s <= 7.0)
            .unwrap_or(10.0 * mag);
        if self.integer && f == 1.0 {
            step = step.max(1.0);
        }
        let mut out = Vec::new();
        let mut k = (lo / step).ceil();
        while k * step <= hi + step * 1e-9 && out.len() < 20 {
            let v = k * step;
            out.push(if v.abs() < step * 1e-9 { 0.0 } else { v * f });
            k += 1.0;
        }
        out
    }
}

/// Powers of ten inside `[lo, hi]`, with 2 and 5 between them on short axes; every
/// other decade on very long ones.
fn decade_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mults: &[f64] = if b - a <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
    let stride = if b - a > 8 { 2 } else { 1 };
    let mut out = Vec::new();
    for e in a..=b {
        if e.rem_euclid(stride) != 0 {
            continue;
        }
        for m in mults {
            let v = m * 10f64.powi(e);
            if v >= lo && v <= hi {
                out.push(v);
            }
        }
    }
    out
}

/// Powers of two inside `[lo, hi]` whose exponents are multiples of 1, 2, 5 or 10,
/// the first that gives at most eight.
fn binary_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log2().ceil() as i32, hi.log2().floor() as i32);
    if b < a {
        return Vec::new();
    }
    let stride = [1, 2, 5, 10]
        .into_iter()
        .find(|s| (b.div_euclid(*s) - (a + s - 1).div_euclid(*s) + 1) <= 8)
        .unwrap_or(20);
    (a..=b)
        .filter(|e| e.rem_euclid(stride) == 0)
        .map(|e| 2f64.powi(e))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(values: &[f64], scale: Scale, role: Role) -> Span {
        Span::of(values.iter().copied(), scale, role)
    }

    #[test]
    fn extents_are_never_empty() {
        let one = span(&[5.5], Scale::Linear, Role::Value);
        assert!((one.lo - 4.95).abs() < 1e-9 && (one.hi - 6.05).abs() < 1e-9);
        let none = span(&[], Scale::Log, Role::Value);
        assert_eq!((none.lo, none.hi), (1.0, 10.0));
        let log = span(&[10.0, 1000.0], Scale::Log, Role::Value);
        assert!(log.lo < 10.0 && log.hi > 1000.0);
        assert_eq!(span(&[10.0, 1000.0], Scale::Linear, Role::Value).lo, 0.0);
        assert_eq!(span(&[10.5, 1000.5], Scale::Linear, Role::Across).lo, -39.0);
    }

    #[test]
    fn whole_numbers_get_whole_ticks() {
        // Runs 1 to 5 of a trend: never 1.2, 1.4, ….
        let s = span(&[1.0, 2.0, 3.0, 4.0, 5.0], Scale::Linear, Role::Across);
        assert!(s.integer);
        assert_eq!(s.ticks(Unit::Number), [1.0, 2.0, 3.0, 4.0, 5.0]);
        let s = span(&[7.0, 8.0], Scale::Linear, Role::Across);
        assert_eq!(s.ticks(Unit::Number), [7.0, 8.0]);
        let s = span(&[3.0], Scale::Linear, Role::Across);
        assert_eq!(s.ticks(Unit::Number), [3.0]);
        let s = span(&[1.0, 120.0], Scale::Linear, Role::Across);
        assert!(s.ticks(Unit::Number).iter().all(|t| *t == t.trunc()));
        // Fractions keep fractional ticks.
        let s = span(&[0.1, 0.9], Scale::Linear, Role::Value);
        assert!(!s.integer);
        assert!(s.ticks(Unit::Number).contains(&0.2));
    }

    #[test]
    fn linear_ticks_step_in_the_axis_unit() {
        let s = span(&[0.0, 97.0], Scale::Linear, Role::Value);
        let t = s.ticks(Unit::Number);
        assert!(t.len() >= 4 && t.len() <= 8, "{t:?}");
        assert_eq!(t[0], 0.0);
        // 0 to 200 000 bytes steps in KiB.
        let s = span(&[0.5, 200_000.0], Scale::Linear, Role::Value);
        let t = s.ticks(Unit::Bytes);
        assert!(t.iter().all(|v| (v / 1024.0).fract() == 0.0), "{t:?}");
        assert_eq!(
            Unit::Bytes.ticks(&t, true)[1..3],
            ["50 KiB".to_string(), "100 KiB".into()]
        );
    }

    #[test]
    fn log_ticks_are_decades_or_powers_of_two() {
        let s = span(&[3.0, 4000.0], Scale::Log, Role::Value);
        let t = s.ticks(Unit::Number);
        assert!(t.contains(&10.0) && t.contains(&1000.0), "{t:?}");
        let s = span(&[64.0, 2048.0, 65536.0], Scale::Log, Role::Across);
        assert_eq!(
            s.ticks(Unit::Bytes),
            [64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0]
        );
        let s = span(&[1.0, 496.0], Scale::Log, Role::Across);
        let t = s.ticks(Unit::Bytes);
        assert!(
            t.len() <= 8 && t.contains(&1.0) && t.contains(&256.0),
            "{t:?}"
        );
        // Too short for two decades: linear ticks.
        let s = span(&[2.1e9, 2.3e9], Scale::Log, Role::Value);
        assert!(s.ticks(Unit::BytesPerSecond).len() >= 2);
        // Very long: every other decade.
        let s = span(&[1.0, 1e12], Scale::Log, Role::Value);
        assert!(s.ticks(Unit::Number).len() <= 8);
    }

    #[test]
    fn fractions_map_both_scales() {
        let s = Span {
            lo: 1.0,
            hi: 100.0,
            scale: Scale::Log,
            integer: false,
        };
        assert!((s.fraction(10.0) - 0.5).abs() < 1e-12);
        let s = Span {
            lo: 0.0,
            hi: 4.0,
            scale: Scale::Linear,
            integer: false,
        };
        assert_eq!(s.fraction(1.0), 0.25);
    }
}
