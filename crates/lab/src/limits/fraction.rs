//! A point's primary figure as a fraction of its natural limit: the record a result
//! keeps ([`LimitFraction`]), how it reads and when it is suspect. Which limit a point
//! is held against is `ratio`'s to say.

use serde::{Deserialize, Serialize};
use xferbench_probes::stats::Estimate;

/// A point's primary figure against its natural limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LimitFraction {
    /// The limit, in words (`memcpy 64 KiB`, `futex wake round trip`).
    pub limit: String,
    /// The limit's median.
    pub limit_value: f64,
    /// The limit's unit: `bytes/s` or `ns`.
    pub unit: String,
    /// The point's figure compared with it.
    pub figure: String,
    /// That figure's median.
    pub figure_value: f64,
    /// How much of the limit the point reached: rate ÷ limit rate, or limit time ÷
    /// figure time.
    pub fraction: f64,
    /// Above [`SUSPECT`]: the limit or its mapping to this point is suspect, and the
    /// fraction is not a result (added in schema 1; `false` when absent).
    #[serde(default)]
    pub suspect: bool,
    /// Each run was held against the floor sampled just before it (a drift sample,
    /// [`super::Limits::around`]): `fraction` is the median of the runs' fractions and
    /// `limit_value` the median of their floors, not the start's and end's
    /// measurement (added within schema 1; `false` when absent).
    #[serde(default)]
    pub paired: bool,
    /// A figure set beside the limit for comparison, which does not bound the point
    /// and never makes it suspect: a stream's memcpy on one CPU (added within schema
    /// 1; absent in older files and for other points).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
}

/// A figure a point is set beside without being held against it
/// ([`LimitFraction::reference`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reference {
    /// What it is, in words: `memcpy 64 KiB (one CPU, hot)`.
    pub name: String,
    /// Its median.
    pub value: f64,
    /// Its unit: `bytes/s`.
    pub unit: String,
    /// The point's figure ÷ this value.
    pub fraction: f64,
}

impl Reference {
    /// `memcpy 64 KiB (one CPU, hot): 24 %`.
    pub fn short(&self) -> String {
        format!("{}: {}", self.name, percent(self.fraction))
    }
}

/// What a stream's memcpy reference adds to its name: one CPU copying a buffer its
/// cache holds.
pub const MEMCPY_REFERENCE: &str = "(one CPU, hot)";

/// How the limit of a one-way figure held against half a round-trip floor begins
/// (`half the cache-line round trip`).
pub const HALF: &str = "half the ";

/// The floor a limit is taken from: `cache-line round trip` for itself and for
/// `half the cache-line round trip`.
pub fn floor_of(limit: &str) -> &str {
    limit.strip_prefix(HALF).unwrap_or(limit)
}

/// A point that reaches more than this fraction of its limit makes the limit suspect.
pub const SUSPECT: f64 = 1.1;

/// How a suspect fraction's warning begins.
pub const SUSPECT_WARNING: &str = "limit suspect:";

impl LimitFraction {
    /// `42 % of cache-line round trip`, or `suspect (see warnings)` above
    /// [`SUSPECT`], followed by the reference where there is one (`85 % of stream
    /// floor 64 KiB; memcpy 64 KiB (one CPU, hot): 24 %`).
    pub fn short(&self) -> String {
        let held = if self.suspect {
            "suspect (see warnings)".into()
        } else {
            format!("{} of {}", percent(self.fraction), self.limit)
        };
        match &self.reference {
            Some(r) => format!("{held}; {}", r.short()),
            None => held,
        }
    }

    /// The fraction when it is a result (not suspect).
    pub fn trusted(&self) -> Option<f64> {
        (!self.suspect).then_some(self.fraction)
    }

    /// The point's warning when the fraction is suspect, in the figure's own
    /// direction: a latency *under* the floor meant to bound it from below
    /// (`the point's latency_p50_ns, 1.60 µs, is under the futex wake round trip,
    /// 20 µs (1/12 of it)`), a rate *above* the ceiling meant to bound it from above.
    pub fn warning(&self) -> Option<String> {
        self.suspect.then(|| {
            let (v, l) = (
                shown(self.figure_value, &self.unit),
                shown(self.limit_value, &self.unit),
            );
            // A fraction above 1 is a figure better than its limit: for a time, a
            // value below it.
            let (side, by) = if self.figure_value < self.limit_value {
                let times = self.limit_value / self.figure_value;
                ("under", format!("1/{} of it", ratio(times)))
            } else {
                let by = match percent(self.fraction) {
                    p if p.ends_with('×') => format!("{p} it"),
                    p => format!("{p} of it"),
                };
                ("above", by)
            };
            format!(
                "{SUSPECT_WARNING} the point's {}, {v}, is {side} the {}, {l} ({by}), which \
                 was meant to bound it (suspect beyond {}); the limit was measured under \
                 other conditions than the point ran in, or does not bound it, so no \
                 fraction is reported",
                self.figure,
                self.limit,
                percent(SUSPECT)
            )
        })
    }

    /// The point's fraction from its runs', each held against the floor sampled
    /// just before it (`runs`): their median fraction and floor, with `whole`'s names
    /// and figure.
    pub fn paired(whole: &LimitFraction, runs: &[LimitFraction]) -> LimitFraction {
        let median = |f: fn(&LimitFraction) -> f64| {
            Estimate::from_values(runs.iter().map(f)).map_or(f64::NAN, |e| e.median)
        };
        let fraction = median(|r| r.fraction);
        LimitFraction {
            limit_value: median(|r| r.limit_value),
            fraction,
            suspect: fraction > SUSPECT,
            paired: true,
            ..whole.clone()
        }
    }

    pub(crate) fn new(
        limit: String,
        limit_value: f64,
        unit: &str,
        figure: &str,
        figure_value: f64,
        fraction: f64,
    ) -> Self {
        LimitFraction {
            limit,
            limit_value,
            unit: unit.into(),
            figure: figure.into(),
            figure_value,
            fraction,
            suspect: fraction > SUSPECT,
            paired: false,
            reference: None,
        }
    }
}

/// `12`, `1.4`: a ratio of two figures, two significant digits.
fn ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// A limit's or figure's value in its unit (`ns` or `bytes/s`), as people read it:
/// `1.60 µs`, `48.9 GB/s`.
fn shown(v: f64, unit: &str) -> String {
    let scaled = |v: f64, steps: &[(f64, &str)]| {
        let (div, name) = steps
            .iter()
            .rev()
            .find(|(d, _)| v.abs() >= *d)
            .copied()
            .unwrap_or(steps[0]);
        let x = v / div;
        // Three significant digits.
        match x {
            x if x >= 100.0 => format!("{x:.0} {name}"),
            x if x >= 10.0 => format!("{x:.1} {name}"),
            x => format!("{x:.2} {name}"),
        }
    };
    match unit {
        "ns" => scaled(v, &[(1.0, "ns"), (1e3, "µs"), (1e6, "ms"), (1e9, "s")]),
        "bytes/s" => scaled(
            v,
            &[(1.0, "B/s"), (1e3, "kB/s"), (1e6, "MB/s"), (1e9, "GB/s")],
        ),
        other => format!("{v} {other}"),
    }
}

/// `42 %`, `4.2 %`, `0.42 %`: two significant digits below 10 %.
pub fn percent(f: f64) -> String {
    let p = f * 100.0;
    if f >= 10.0 {
        // `79×`: a ratio that large reads as a multiple.
        format!("{f:.0}×")
    } else if p >= 10.0 {
        format!("{p:.0} %")
    } else if p >= 1.0 {
        format!("{p:.1} %")
    } else {
        format!("{p:.2} %")
    }
}
