//! Sweep axes and the plan of points they span.
//!
//! An axis value is a comma-separated list whose items are single values or ranges:
//!
//! * `64,2KiB,64KiB` — a list (sizes take `K`/`KiB`, `M`/`MiB`, `G`/`GiB`, binary;
//!   `kB`, `MB`, `GB`, decimal);
//! * `1..64KiB:x4` — a geometric range, 1, 4, 16, … up to and including 64 KiB if hit;
//! * `1..32` — a geometric range with factor 2;
//! * `100..500:+100` — an arithmetic range.
//!
//! Every combination of the axes is one point. Transport parameters (`-p NAME=LIST`)
//! only multiply the points of transports that declare them.

use crate::workload::Touch;
use std::collections::BTreeMap;
use xferbench_transports::{ParamSpec, Params, parse_byte_size};

/// An axis value that does not parse; the message names what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AxisParseError(String);

/// Largest number of points a sweep may expand to.
pub const MAX_POINTS: usize = 100_000;

/// Parses a list of byte sizes (`64,2KiB,1..64KiB:x4`).
pub fn parse_sizes(s: &str) -> Result<Vec<u64>, AxisParseError> {
    parse_numbers(
        s,
        |v| parse_byte_size(v).map(|n| n as u64),
        "a byte size such as 64, 4KiB or 1MiB",
    )
}

/// Parses a list of plain counts (`1,2,8`, `1..32:x2`).
pub fn parse_counts(s: &str) -> Result<Vec<u64>, AxisParseError> {
    parse_numbers(
        s,
        |v| v.trim().parse().ok(),
        "a whole number such as 1 or 32",
    )
}

/// Splits a list of words (`pipe,unix,tcp`); empty items are refused.
pub fn parse_words(s: &str) -> Result<Vec<String>, AxisParseError> {
    let items: Vec<String> = s.split(',').map(|w| w.trim().to_string()).collect();
    if items.iter().any(String::is_empty) {
        return Err(AxisParseError(format!("empty item in list {s:?}")));
    }
    Ok(dedup(items))
}

fn dedup<T: PartialEq + Clone>(items: Vec<T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

fn parse_numbers(
    s: &str,
    one: impl Fn(&str) -> Option<u64>,
    what: &str,
) -> Result<Vec<u64>, AxisParseError> {
    let mut out = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(AxisParseError(format!("empty item in list {s:?}")));
        }
        let bad = |v: &str| AxisParseError(format!("{v:?} is not {what}"));
        match item.split_once("..") {
            None => out.push(one(item).ok_or_else(|| bad(item))?),
            Some((lo, rest)) => {
                let (hi, step) = match rest.split_once(':') {
                    Some((hi, step)) => (hi, Some(step)),
                    None => (rest, None),
                };
                let lo = one(lo).ok_or_else(|| bad(lo))?;
                let hi = one(hi).ok_or_else(|| bad(hi))?;
                if lo > hi {
                    return Err(AxisParseError(format!("range {item:?} runs backwards")));
                }
                let range_err = || {
                    AxisParseError(format!(
                        "bad step in range {item:?}: use :xF (geometric, F ≥ 2) or :+S (arithmetic, S ≥ 1)"
                    ))
                };
                let step = step.unwrap_or("x2");
                let next: Box<dyn Fn(u64) -> Option<u64>> = if let Some(f) = step.strip_prefix('x')
                {
                    let f: u64 = f.parse().map_err(|_| range_err())?;
                    if f < 2 || lo == 0 {
                        return Err(range_err());
                    }
                    Box::new(move |v: u64| v.checked_mul(f))
                } else if let Some(d) = step.strip_prefix('+') {
                    let d = one(d).filter(|d| *d > 0).ok_or_else(range_err)?;
                    Box::new(move |v: u64| v.checked_add(d))
                } else {
                    return Err(range_err());
                };
                let mut v = Some(lo);
                while let Some(x) = v.filter(|x| *x <= hi) {
                    out.push(x);
                    if out.len() > MAX_POINTS {
                        return Err(AxisParseError(format!(
                            "range {item:?} has too many values"
                        )));
                    }
                    v = next(x);
                }
            }
        }
    }
    Ok(dedup(out))
}

/// The name of the zero-copy axis (`-p zero_copy=false,true`) and of its point
/// parameter, present (as `true`) on zero-copy points only.
pub const ZERO_COPY: &str = "zero_copy";

/// One point of a sweep: every parameter fixed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointSpec {
    /// Transport name.
    pub transport: String,
    /// Transport parameters set explicitly for this point (defaults are omitted).
    pub transport_params: Params,
    /// Message size, bytes.
    pub size: u64,
    /// Concurrent channels.
    pub channels: usize,
    /// Messages written and read in place (`--zero-copy`); copied when false.
    pub zero_copy: bool,
    /// What in-place messages' ends do with the payload (`-p touch=...`).
    pub touch: Touch,
}

impl PointSpec {
    /// The point's parameters as shown in results and tables.
    pub fn params(&self, workload: &str) -> BTreeMap<String, String> {
        let mut p = BTreeMap::new();
        p.insert("workload".to_string(), workload.to_string());
        p.insert("transport".to_string(), self.transport.clone());
        p.insert("size".to_string(), self.size.to_string());
        p.insert("channels".to_string(), self.channels.to_string());
        for (k, v) in &self.transport_params {
            p.insert(k.clone(), v.clone());
        }
        if self.zero_copy {
            p.insert(ZERO_COPY.to_string(), "true".to_string());
            if self.touch != Touch::All {
                p.insert(Touch::PARAM.to_string(), self.touch.name().to_string());
            }
        }
        p
    }
}

/// The axes of a sweep, before expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepSpec {
    /// Transports, in order.
    pub transports: Vec<String>,
    /// Message sizes.
    pub sizes: Vec<u64>,
    /// Channel counts.
    pub channels: Vec<usize>,
    /// Extra parameter axes (`-p NAME=LIST`), in the order given.
    pub params: Vec<(String, Vec<String>)>,
}

/// Why a sweep cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepPlanError {
    /// A `-p` name that no selected transport declares.
    #[error("no selected transport takes parameter `{name}`; parameters of {transports}: {known}")]
    UnknownParam {
        /// The parameter.
        name: String,
        /// The selected transports.
        transports: String,
        /// What they accept.
        known: String,
    },
    /// Too many points.
    #[error("the sweep spans {0} points, more than the limit of {MAX_POINTS}; narrow an axis")]
    TooLarge(usize),
}

impl SweepSpec {
    /// Expands the axes into points, transport-major, then parameters, sizes and
    /// channel counts. `specs_of` gives each transport's parameter specs.
    pub fn plan(
        &self,
        specs_of: impl Fn(&str) -> &'static [ParamSpec],
    ) -> Result<Vec<PointSpec>, SweepPlanError> {
        for (name, _) in &self.params {
            if !self
                .transports
                .iter()
                .any(|t| specs_of(t).iter().any(|s| s.name == name))
            {
                let mut known: Vec<String> = Vec::new();
                for t in &self.transports {
                    for s in specs_of(t) {
                        known.push(format!("{}({t})", s.name));
                    }
                }
                return Err(SweepPlanError::UnknownParam {
                    name: name.clone(),
                    transports: self.transports.join(", "),
                    known: if known.is_empty() {
                        "(none)".into()
                    } else {
                        known.join(", ")
                    },
                });
            }
        }
        let mut points = Vec::new();
        for t in &self.transports {
            let axes: Vec<&(String, Vec<String>)> = self
                .params
                .iter()
                .filter(|(n, _)| specs_of(t).iter().any(|s| s.name == n))
                .collect();
            let mut combos: Vec<Params> = vec![Params::new()];
            for (name, values) in axes {
                combos = combos
                    .into_iter()
                    .flat_map(|c| {
                        values.iter().map(move |v| {
                            let mut c = c.clone();
                            c.insert(name.clone(), v.clone());
                            c
                        })
                    })
                    .collect();
            }
            for params in &combos {
                for &size in &self.sizes {
                    for &channels in &self.channels {
                        points.push(PointSpec {
                            transport: t.clone(),
                            transport_params: params.clone(),
                            size,
                            channels,
                            zero_copy: false,
                            touch: Touch::All,
                        });
                        if points.len() > MAX_POINTS {
                            return Err(SweepPlanError::TooLarge(points.len()));
                        }
                    }
                }
            }
        }
        Ok(points)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges_of_sizes() {
        assert_eq!(parse_sizes("64,2KiB,64KiB").unwrap(), vec![64, 2048, 65536]);
        assert_eq!(
            parse_sizes("1..64KiB:x4").unwrap(),
            vec![1, 4, 16, 64, 256, 1024, 4096, 16384, 65536]
        );
        assert_eq!(parse_sizes("1..16").unwrap(), vec![1, 2, 4, 8, 16]);
        assert_eq!(
            parse_sizes("100..500:+100").unwrap(),
            vec![100, 200, 300, 400, 500]
        );
        assert_eq!(
            parse_sizes("64,64,1..128:x2").unwrap(),
            vec![64, 1, 2, 4, 8, 16, 32, 128]
        );
    }

    #[test]
    fn bad_axes_say_what_is_accepted() {
        for bad in [
            "", "64,,2", "big", "4..1", "1..64:x1", "1..64:y2", "0..64:x2", "1..64:+0",
        ] {
            let e = parse_sizes(bad).unwrap_err().to_string();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(
            parse_sizes("big")
                .unwrap_err()
                .to_string()
                .contains("byte size")
        );
        assert!(
            parse_counts("1..3:x1")
                .unwrap_err()
                .to_string()
                .contains(":xF")
        );
        assert_eq!(parse_counts("1..1000000000000").unwrap().len(), 40);
        assert!(
            parse_counts("1..1000000000000:+1").is_err(),
            "too many values must be refused, not allocated"
        );
    }

    fn specs(t: &str) -> &'static [ParamSpec] {
        const PIPE: &[ParamSpec] = &[ParamSpec {
            name: "pipe_size",
            default: "os",
            accepts: "",
            help: "",
        }];
        if t == "pipe" { PIPE } else { &[] }
    }

    #[test]
    fn every_combination_is_one_point_and_params_apply_only_where_declared() {
        let spec = SweepSpec {
            transports: vec!["pipe".into(), "unix".into()],
            sizes: vec![64, 4096],
            channels: vec![1, 2],
            params: vec![("pipe_size".into(), vec!["64KiB".into(), "1MiB".into()])],
        };
        let points = spec.plan(specs).unwrap();
        assert_eq!(points.len(), 2 * 2 * 2 + 2 * 2);
        assert!(
            points
                .iter()
                .filter(|p| p.transport == "unix")
                .all(|p| p.transport_params.is_empty())
        );
        assert_eq!(points[0].transport_params["pipe_size"], "64KiB");
    }

    #[test]
    fn an_undeclared_param_is_refused_with_the_known_ones() {
        let spec = SweepSpec {
            transports: vec!["pipe".into()],
            sizes: vec![64],
            channels: vec![1],
            params: vec![("nodelay".into(), vec!["true".into()])],
        };
        let e = spec.plan(specs).unwrap_err().to_string();
        assert!(
            e.contains("nodelay") && e.contains("pipe_size(pipe)"),
            "{e}"
        );
    }
}
