//! Lists of values, as sweeps take them: comma-separated items, each a single value
//! or, for whole numbers and byte sizes, a range:
//!
//! * `64,2KiB,64KiB` — a list;
//! * `1..64KiB:x4` — a geometric range, 1, 4, 16, … up to and including 64 KiB if hit;
//! * `1..32` — a geometric range with factor 2;
//! * `100..500:+100` — an arithmetic range.
//!
//! Repeated values count once, in the order first given.

use crate::bytes;
use crate::def::{Kind, ParamDef};
use crate::error::ParamError;
use crate::value::Value;

/// The most values one list may expand to.
pub const MAX_LIST: usize = 100_000;

impl ParamDef {
    /// Reads a list of values (see the module doc); every value is checked as
    /// [`ParamDef::parse`] checks one.
    pub fn parse_list(&self, list: &str) -> Result<Vec<Value>, ParamError> {
        let mut out: Vec<Value> = Vec::new();
        for item in list.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(self.list_error(format!("empty item in list {list:?}")));
            }
            let ranged = matches!(
                self.kind,
                Kind::Integer { .. } | Kind::Rate { .. } | Kind::Bytes { .. }
            );
            let values = match item.split_once("..") {
                Some((lo, rest)) if ranged => self.range(item, lo, rest)?,
                _ => vec![self.parse(item)?],
            };
            for v in values {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
        }
        Ok(out)
    }

    fn list_error(&self, problem: String) -> ParamError {
        ParamError::List {
            name: self.name.to_string(),
            problem,
        }
    }

    /// A number of the definition's unit, unchecked.
    fn number(&self, text: &str) -> Result<u64, ParamError> {
        let n = match self.kind {
            Kind::Bytes { .. } => bytes::parse(text),
            Kind::Rate { .. } => crate::rate::parse(text).and_then(|n| u64::try_from(n).ok()),
            _ => text.trim().parse().ok(),
        };
        n.ok_or_else(|| ParamError::Invalid {
            name: self.name.to_string(),
            value: text.trim().to_string(),
            accepts: self.accepts_given(text),
        })
    }

    fn of_number(&self, n: u64) -> Result<Value, ParamError> {
        let v = match self.kind {
            Kind::Bytes { .. } => Value::Bytes(n),
            _ => Value::Integer(
                i64::try_from(n)
                    .map_err(|_| self.list_error(format!("{n} is too large a number")))?,
            ),
        };
        self.check(&v)?;
        Ok(v)
    }

    fn range(&self, item: &str, lo: &str, rest: &str) -> Result<Vec<Value>, ParamError> {
        let (hi, step) = match rest.split_once(':') {
            Some((hi, step)) => (hi, step),
            None => (rest, "x2"),
        };
        let lo = self.number(lo)?;
        let hi = self.number(hi)?;
        if lo > hi {
            return Err(self.list_error(format!("range {item:?} runs backwards")));
        }
        let bad_step = || {
            self.list_error(format!(
                "bad step in range {item:?}: use :xF (geometric, F ≥ 2) or :+S (arithmetic, S ≥ 1)"
            ))
        };
        enum Step {
            Times(u64),
            Plus(u64),
        }
        let step = if let Some(f) = step.strip_prefix('x') {
            let f: u64 = f.parse().map_err(|_| bad_step())?;
            if f < 2 || lo == 0 {
                return Err(bad_step());
            }
            Step::Times(f)
        } else if let Some(d) = step.strip_prefix('+') {
            let d = self
                .number(d)
                .ok()
                .filter(|d| *d > 0)
                .ok_or_else(bad_step)?;
            Step::Plus(d)
        } else {
            return Err(bad_step());
        };
        let mut out = Vec::new();
        let mut v = Some(lo);
        while let Some(x) = v.filter(|x| *x <= hi) {
            if out.len() >= MAX_LIST {
                return Err(self.list_error(format!("range {item:?} has too many values")));
            }
            out.push(self.of_number(x)?);
            v = match step {
                Step::Times(f) => x.checked_mul(f),
                Step::Plus(d) => x.checked_add(d),
            };
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::def::{Choice, ParamDef};
    use crate::value::Value;

    const SIZE: ParamDef = ParamDef::bytes("size", 1, 1 << 30, 64, "");
    const COUNT: ParamDef = ParamDef::integer("channels", 1, 1 << 40, 1, "");

    fn sizes(s: &str) -> Vec<u64> {
        SIZE.parse_list(s)
            .unwrap()
            .into_iter()
            .map(|v| match v {
                Value::Bytes(n) => n,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn lists_and_ranges_of_sizes() {
        assert_eq!(sizes("64,2KiB,64KiB"), vec![64, 2048, 65536]);
        assert_eq!(
            sizes("1..64KiB:x4"),
            vec![1, 4, 16, 64, 256, 1024, 4096, 16384, 65536]
        );
        assert_eq!(sizes("1..16"), vec![1, 2, 4, 8, 16]);
        assert_eq!(sizes("100..500:+100"), vec![100, 200, 300, 400, 500]);
        assert_eq!(sizes("64,64,1..128:x2"), vec![64, 1, 2, 4, 8, 16, 32, 128]);
        assert_eq!(sizes("64KiB..1MiB:x4"), vec![65536, 262144, 1048576]);
    }

    #[test]
    fn bad_lists_say_what_is_wrong() {
        for (bad, needle) in [
            ("", "empty item"),
            ("64,,2", "empty item"),
            ("big", "byte size"),
            ("4..1", "backwards"),
            ("1..64:x1", ":xF"),
            ("1..64:y2", ":xF"),
            ("0..64:x2", ":xF"),
            ("1..64:+0", ":xF"),
            ("0", "at least 1 B"),
        ] {
            let e = SIZE.parse_list(bad).unwrap_err().to_string();
            assert!(e.contains(needle), "{bad}: {e}");
        }
        assert_eq!(COUNT.parse_list("1..1000000000000").unwrap().len(), 40);
        assert!(
            COUNT.parse_list("1..1000000000000:+1").is_err(),
            "too many values must be refused, not allocated"
        );
    }

    #[test]
    fn words_are_single_values_even_with_dots() {
        const C: &[Choice] = &[Choice::new("a..b", ""), Choice::new("c", "")];
        let d = ParamDef::choice("x", C, "c", "");
        assert_eq!(
            d.parse_list("a..b,c").unwrap(),
            vec![Value::choice("a..b"), Value::choice("c")]
        );
    }
}
