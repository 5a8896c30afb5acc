//! The definition of a parameter: its name, kind, default and help.

use crate::bytes;
use crate::duration;
use crate::error::ParamError;
use crate::rate;
use crate::value::{AUTO, Value};
use std::borrow::Cow;
use std::time::Duration;

/// One of the named values of an enumerated parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The name, as written on the command line and stored in results.
    pub name: Cow<'static, str>,
    /// One line of help.
    pub help: Cow<'static, str>,
}

impl Choice {
    /// A choice of a built-in definition.
    pub const fn new(name: &'static str, help: &'static str) -> Choice {
        Choice {
            name: Cow::Borrowed(name),
            help: Cow::Borrowed(help),
        }
    }
}

/// What values a parameter takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A whole number from `min` to `max`.
    Integer {
        /// Smallest accepted.
        min: i64,
        /// Largest accepted.
        max: i64,
    },
    /// A byte count from `min` to `max` (see [`crate::bytes`]).
    Bytes {
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
        /// Only powers of two.
        power_of_two: bool,
        /// Only multiples of this many bytes (1: any count).
        multiple_of: u64,
    },
    /// A length of time from `min` to `max` (see [`crate::duration`]).
    Duration {
        /// Shortest accepted.
        min: Duration,
        /// Longest accepted.
        max: Duration,
    },
    /// Events per second from `min` to `max`, written with an SI prefix or without
    /// (`250000`, `10k`, `2.5M`, `1G`; see [`crate::rate`]); a [`Value::Integer`].
    Rate {
        /// Smallest accepted.
        min: i64,
        /// Largest accepted.
        max: i64,
    },
    /// One of these names (ASCII case does not matter when reading).
    Enum(Cow<'static, [Choice]>),
    /// `true` or `false` (also `1`/`0`, `on`/`off`, `yes`/`no`).
    Bool,
    /// Text its owner checks (an address, say); `accepts` says what it takes.
    Text {
        /// What is accepted, in words.
        accepts: Cow<'static, str>,
    },
}

/// The one definition of a parameter.
///
/// Built-ins are constants made with the constructors (`ParamDef::bytes(...)`);
/// a definition can also be built at run time, field by field.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamDef {
    /// Name as used in `-p NAME=VALUE` and in results.
    pub name: Cow<'static, str>,
    /// The values it takes.
    pub kind: Kind,
    /// Its value when none is given.
    pub default: Value,
    /// A word that means "leave the system's default" (`os`), when it has one; it
    /// parses to [`Value::Unset`].
    pub unset: Option<Cow<'static, str>>,
    /// One line of help.
    pub help: Cow<'static, str>,
}

impl ParamDef {
    /// A whole number from `min` to `max`.
    pub const fn integer(
        name: &'static str,
        min: i64,
        max: i64,
        default: i64,
        help: &'static str,
    ) -> ParamDef {
        ParamDef {
            name: Cow::Borrowed(name),
            kind: Kind::Integer { min, max },
            default: Value::Integer(default),
            unset: None,
            help: Cow::Borrowed(help),
        }
    }

    /// A rate, events per second from `min` to `max` (see [`Kind::Rate`]).
    pub const fn rate(
        name: &'static str,
        min: i64,
        max: i64,
        default: i64,
        help: &'static str,
    ) -> ParamDef {
        ParamDef {
            name: Cow::Borrowed(name),
            kind: Kind::Rate { min, max },
            default: Value::Integer(default),
            unset: None,
            help: Cow::Borrowed(help),
        }
    }

    /// A byte count from `min` to `max`.
    pub const fn bytes(
        name: &'static str,
        min: u64,
        max: u64,
        default: u64,
        help: &'static str,
    ) -> ParamDef {
        Self::bytes_in_units(name, min, max, 1, default, help)
    }

    /// A byte count from `min` to `max` in whole units of `unit` bytes (1: any).
    const fn bytes_in_units(
        name: &'static str,
        min: u64,
        max: u64,
        unit: u64,
        default: u64,
        help: &'static str,
    ) -> ParamDef {
        ParamDef {
            name: Cow::Borrowed(name),
            kind: Kind::Bytes {
                min,
                max,
                power_of_two: false,
                multiple_of: unit,
            },
            default: Value::Bytes(default),
            unset: None,
            help: Cow::Borrowed(help),
        }
    }

    /// Bytes per message, from `min` to `max`: the one quantity a workload's message
    /// size is, whatever name the workload records it under (the sweep's `size`,
    /// RPMsg's `packet`, Warp Pipe's `payload`). Every such definition is built here,
    /// so they read, show, store and check the quantity one way; each keeps its own
    /// name, bounds, default and help.
    pub const fn message_bytes(
        name: &'static str,
        min: u64,
        max: u64,
        default: u64,
        help: &'static str,
    ) -> ParamDef {
        Self::bytes(name, min, max, default, help)
    }

    /// Bytes per message ([`ParamDef::message_bytes`]) that a wire format takes only
    /// in whole units: multiples of `unit` from `min` to `max` (Warp Pipe's payload,
    /// whole 4-byte words).
    pub const fn message_bytes_in_units(
        name: &'static str,
        min: u64,
        max: u64,
        unit: u64,
        default: u64,
        help: &'static str,
    ) -> ParamDef {
        Self::bytes_in_units(name, min, max, unit, default, help)
    }

    /// Whether it is a message size ([`ParamDef::message_bytes`]): a byte count,
    /// any within its bounds, with no word for "unset" or "auto".
    pub fn is_message_bytes(&self) -> bool {
        matches!(
            self.kind,
            Kind::Bytes {
                power_of_two: false,
                ..
            }
        ) && self.unset.is_none()
            && matches!(self.default, Value::Bytes(_))
    }

    /// A byte count from `min` to `max`, or `word` (the default) for the system's own.
    pub const fn bytes_or_unset(
        name: &'static str,
        min: u64,
        max: u64,
        word: &'static str,
        help: &'static str,
    ) -> ParamDef {
        Self::bytes_with_word(name, min, max, word, Value::Unset, help)
    }

    /// A byte count from `min` to `max`, `word` for "none" ([`Value::Unset`]), or
    /// [`AUTO`], the default ([`Value::Auto`]): the owner chooses from what the run
    /// tells it, and says in `help` how.
    pub const fn bytes_auto(
        name: &'static str,
        min: u64,
        max: u64,
        word: &'static str,
        help: &'static str,
    ) -> ParamDef {
        Self::bytes_with_word(name, min, max, word, Value::Auto, help)
    }

    /// A byte count from `min` to `max` that also takes `word` for [`Value::Unset`].
    const fn bytes_with_word(
        name: &'static str,
        min: u64,
        max: u64,
        word: &'static str,
        default: Value,
        help: &'static str,
    ) -> ParamDef {
        ParamDef {
            name: Cow::Borrowed(name),
            kind: Kind::Bytes {
                min,
                max,
                power_of_two: false,
                multiple_of: 1,
            },
            default,
            unset: Some(Cow::Borrowed(word)),
            help: Cow::Borrowed(help),
        }
    }

    /// Whether it accepts [`Value::Auto`]: when that is its default.
    fn takes_auto(&self) -> bool {
        matches!(self.default, Value::Auto)
    }

    /// A length of time from `min` to `max`.
    pub const fn duration(
        name: &'static str,
        min: Duration,
        max: Duration,
        default: Duration,
        help: &'static str,
    ) -> ParamDef {
        ParamDef {
            name: Cow::Borrowed(name),
            kind: Kind::Duration { min, max },
            default: Value::Duration(default),
            unset: None,
            help: Cow::Borrowed(help),
        }
    }

    /// One of `choices` (a [`crate::Choices`] type's `CHOICES`), `default` by name.
    pub const fn choice(
        name: &'static str,
        choices: &'static [Choice],
        default: &'static str,
        help: &'static str,
    ) -> ParamDef {
        ParamDef {
            name: Cow::Borrowed(name),
            kind: Kind::Enum(Cow::Borrowed(choices)),
            default: Value::choice(default),
            unset: None,
            help: Cow::Borrowed(help),
        }
    }

    /// A boolean.
    pub const fn boolean(name: &'static str, default: bool, help: &'static str) -> ParamDef {
        ParamDef {
            name: Cow::Borrowed(name),
            kind: Kind::Bool,
            default: Value::Bool(default),
            unset: None,
            help: Cow::Borrowed(help),
        }
    }

    /// Text its owner checks; `accepts` says what it takes.
    pub const fn text(
        name: &'static str,
        accepts: &'static str,
        default: &'static str,
        help: &'static str,
    ) -> ParamDef {
        ParamDef {
            name: Cow::Borrowed(name),
            kind: Kind::Text {
                accepts: Cow::Borrowed(accepts),
            },
            default: Value::text(default),
            unset: None,
            help: Cow::Borrowed(help),
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn invalid(&self, value: &str, accepts: impl Into<String>) -> ParamError {
        ParamError::Invalid {
            name: self.name.to_string(),
            value: value.to_string(),
            accepts: accepts.into(),
        }
    }

    /// Reads one value as a user writes it, checking its kind and bounds.
    pub fn parse(&self, text: &str) -> Result<Value, ParamError> {
        let t = text.trim();
        if self.unset.as_deref() == Some(t) {
            return Ok(Value::Unset);
        }
        if self.takes_auto() && t == AUTO {
            return Ok(Value::Auto);
        }
        let bad = || self.invalid(t, self.accepts());
        let v = match &self.kind {
            Kind::Integer { .. } => Value::Integer(t.parse().map_err(|_| bad())?),
            Kind::Rate { .. } => Value::Integer(rate::parse(t).ok_or_else(bad)?),
            Kind::Bytes { .. } => {
                Value::Bytes(bytes::parse(t).ok_or_else(|| self.invalid(t, self.accepts_given(t)))?)
            }
            Kind::Duration { .. } => Value::Duration(duration::parse(t).ok_or_else(bad)?),
            Kind::Enum(choices) => {
                let c = choices
                    .iter()
                    .find(|c| c.name.eq_ignore_ascii_case(t))
                    .ok_or_else(bad)?;
                Value::Choice(c.name.clone())
            }
            Kind::Bool => Value::Bool(match t {
                "true" | "1" | "on" | "yes" => true,
                "false" | "0" | "off" | "no" => false,
                _ => return Err(bad()),
            }),
            Kind::Text { .. } => {
                if t.is_empty() {
                    return Err(bad());
                }
                Value::Text(Cow::Owned(t.to_string()))
            }
        };
        self.check_as(&v, t)?;
        Ok(v)
    }

    /// Checks a value made in code: its kind and its bounds.
    pub fn check(&self, v: &Value) -> Result<(), ParamError> {
        self.check_as(v, &self.machine(v))
    }

    fn check_as(&self, v: &Value, written: &str) -> Result<(), ParamError> {
        let out_of = |what: String| Err(self.invalid(written, what));
        match (&self.kind, v) {
            (_, Value::Unset) if self.unset.is_some() => Ok(()),
            (_, Value::Auto) if self.takes_auto() => Ok(()),
            (Kind::Rate { min, max }, Value::Integer(n)) => {
                if n < min {
                    out_of(format!("at least {}", rate::display(*min)))
                } else if n > max {
                    out_of(format!("at most {}", rate::display(*max)))
                } else {
                    Ok(())
                }
            }
            (Kind::Integer { min, max }, Value::Integer(n)) => {
                if n < min {
                    out_of(format!("at least {min}"))
                } else if n > max {
                    out_of(format!("at most {max}"))
                } else {
                    Ok(())
                }
            }
            (
                Kind::Bytes {
                    min,
                    max,
                    power_of_two,
                    multiple_of,
                },
                Value::Bytes(n),
            ) => {
                if *power_of_two && !(n.is_power_of_two() && (min..=max).contains(&n)) {
                    out_of(format!(
                        "a power of two from {} to {}",
                        bytes::display(*min),
                        bytes::display(*max)
                    ))
                } else if *multiple_of > 1 && !n.is_multiple_of(*multiple_of) {
                    out_of(format!(
                        "a multiple of {multiple_of} from {} to {}",
                        bytes::display(*min),
                        bytes::display(*max)
                    ))
                } else if n < min {
                    out_of(format!("at least {}", bytes::display(*min)))
                } else if n > max {
                    out_of(format!(
                        "at most {}: {} is above the maximum",
                        bytes::display(*max),
                        bytes::display(*n)
                    ))
                } else {
                    Ok(())
                }
            }
            (Kind::Duration { min, max }, Value::Duration(d)) => {
                if d < min {
                    out_of(format!("at least {}", duration::display(*min)))
                } else if d > max {
                    out_of(format!("at most {}", duration::display(*max)))
                } else {
                    Ok(())
                }
            }
            (Kind::Enum(choices), Value::Choice(name))
                if choices.iter().any(|c| c.name == *name) =>
            {
                Ok(())
            }
            (Kind::Bool, Value::Bool(_)) | (Kind::Text { .. }, Value::Text(_)) => Ok(()),
            _ => out_of(self.accepts()),
        }
    }

    /// A value the way people read it: `64 KiB`, `250 ms`, `kick`, `true`.
    pub fn display(&self, v: &Value) -> String {
        match v {
            Value::Integer(n) if matches!(self.kind, Kind::Rate { .. }) => {
                format!("{}/s", rate::display(*n))
            }
            Value::Bytes(n) => bytes::display(*n),
            Value::Duration(d) => duration::display(*d),
            other => self.machine(other),
        }
    }

    /// A value the way result files store it: `65536`, `0.25` (seconds), `kick`.
    pub fn machine(&self, v: &Value) -> String {
        match v {
            Value::Integer(n) => n.to_string(),
            Value::Bytes(n) => n.to_string(),
            Value::Duration(d) => duration::machine(*d),
            Value::Choice(c) => c.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Text(t) => t.to_string(),
            Value::Unset => self.unset.as_deref().unwrap_or("os").to_string(),
            Value::Auto => AUTO.to_string(),
        }
    }

    /// The default, the way people read it.
    pub fn default_display(&self) -> String {
        self.display(&self.default)
    }

    /// Text as written (by a user, or as a result file stores it) shown the way
    /// people read it; text that does not parse is shown as it is.
    pub fn display_text(&self, text: &str) -> String {
        self.parse(text)
            .map_or_else(|_| text.to_string(), |v| self.display(&v))
    }

    /// Whether two texts mean the same value (`64KiB` and `65536`); texts that do not
    /// parse are compared as they are.
    pub fn same(&self, a: &str, b: &str) -> bool {
        match (self.parse(a), self.parse(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => a.trim() == b.trim(),
        }
    }

    /// The named values of an enumerated parameter, with their help; empty for
    /// any other kind.
    pub fn choices(&self) -> &[Choice] {
        match &self.kind {
            Kind::Enum(choices) => choices,
            _ => &[],
        }
    }

    /// The names of its values, when it has a fixed set (an enum, a boolean).
    pub fn values(&self) -> Option<Vec<&str>> {
        match &self.kind {
            Kind::Enum(choices) => Some(choices.iter().map(|c| &*c.name).collect()),
            Kind::Bool => Some(vec!["false", "true"]),
            _ => None,
        }
    }

    /// What it accepts, in words, for help and error messages.
    pub fn accepts(&self) -> String {
        let mut s = match &self.kind {
            Kind::Integer { min, max } => format!("a whole number from {min} to {max}"),
            Kind::Rate { min, max } => format!(
                "a rate per second such as 250000, 10k or 1M, from {} to {}",
                rate::display(*min),
                rate::display(*max)
            ),
            Kind::Bytes {
                min,
                max,
                power_of_two,
                multiple_of,
            } => format!(
                "a byte size such as 64, 4KiB or 1MB, from {} to {}{}",
                bytes::display(*min),
                bytes::display(*max),
                if *power_of_two {
                    ", a power of two".to_string()
                } else if *multiple_of > 1 {
                    format!(", a multiple of {multiple_of}")
                } else {
                    String::new()
                }
            ),
            Kind::Duration { min, max } => format!(
                "a duration such as 250ms, 1s or 2m (a bare number is seconds), from {} to {}",
                duration::display(*min),
                duration::display(*max)
            ),
            Kind::Enum(choices) => words(choices.iter().map(|c| &*c.name)),
            Kind::Bool => "true or false".into(),
            Kind::Text { accepts } => accepts.to_string(),
        };
        match (&self.unset, self.takes_auto()) {
            (Some(word), true) => s.push_str(&format!(", `{word}` or `{AUTO}`")),
            (Some(word), false) => s.push_str(&format!(", or `{word}`")),
            (None, true) => s.push_str(&format!(", or `{AUTO}`")),
            (None, false) => {}
        }
        s
    }

    /// What it accepts, for the error on `text` that did not parse: [`Self::accepts`],
    /// and for a byte size whose unit is only in the wrong case (`64kb`), the two
    /// sizes it may mean.
    pub(crate) fn accepts_given(&self, text: &str) -> String {
        let accepts = self.accepts();
        match (&self.kind, bytes::unit_case_hint(text)) {
            (Kind::Bytes { .. }, Some(hint)) => format!("{accepts}; {hint}"),
            _ => accepts,
        }
    }

    /// Checks that the definition is whole: a name, and a default of its own kind
    /// within its bounds. Tests of every owner call it on every definition.
    pub fn self_check(&self) -> Result<(), String> {
        if self.name.is_empty() || self.name.contains(['=', ',', ' ']) {
            return Err(format!("bad parameter name {:?}", self.name));
        }
        if let Kind::Enum(c) = &self.kind
            && c.is_empty()
        {
            return Err(format!("`{}` has no values", self.name));
        }
        self.check(&self.default)
            .map_err(|e| format!("the default of `{}`: {e}", self.name))?;
        let shown = self.machine(&self.default);
        match self.parse(&shown) {
            Ok(v) if v == self.default => Ok(()),
            _ => Err(format!(
                "the default of `{}` does not read back from {shown:?}",
                self.name
            )),
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn words<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: ParamDef = ParamDef::bytes("size", 1, 1 << 30, 64, "message size");
    const SNDBUF: ParamDef = ParamDef::bytes_or_unset("sndbuf", 1, 1 << 30, "os", "SO_SNDBUF");
    const CHOICES: &[Choice] = &[
        Choice::new("spin", "busy-spin"),
        Choice::new("block", "sleep"),
        Choice::new("hybrid", "both"),
    ];
    const WAIT: ParamDef = ParamDef::choice("wait", CHOICES, "hybrid", "how a side waits");
    const SPIN: ParamDef = ParamDef::integer("spin_us", 0, 1_000_000, 50, "spin time");
    const TIMEOUT: ParamDef = ParamDef::duration(
        "timeout",
        Duration::from_millis(1),
        Duration::from_secs(3600),
        Duration::from_secs(10),
        "hang timeout",
    );

    #[test]
    fn values_parse_by_kind_and_show_one_way() {
        assert_eq!(SIZE.parse("64KiB"), Ok(Value::Bytes(65536)));
        assert_eq!(SIZE.display(&Value::Bytes(65536)), "64 KiB");
        assert_eq!(SIZE.machine(&Value::Bytes(65536)), "65536");
        assert_eq!(SIZE.display_text("65536"), "64 KiB");
        assert!(SIZE.same("64KiB", "65536"));
        assert!(SIZE.same("64 KiB", "64K"));
        assert!(!SIZE.same("64KB", "65536"));
        assert_eq!(SNDBUF.parse("os"), Ok(Value::Unset));
        assert_eq!(SNDBUF.machine(&Value::Unset), "os");
        assert_eq!(WAIT.parse("spin"), Ok(Value::choice("spin")));
        assert_eq!(SPIN.parse("64"), Ok(Value::Integer(64)));
        assert_eq!(
            TIMEOUT.parse("250ms"),
            Ok(Value::Duration(Duration::from_millis(250)))
        );
        assert_eq!(TIMEOUT.default_display(), "10 s");
    }

    #[test]
    fn refusals_name_the_parameter_and_what_it_accepts() {
        let e = SIZE.parse("0").unwrap_err().to_string();
        assert!(e.contains("`size`") && e.contains("at least 1 B"), "{e}");
        let e = SIZE.parse("2GiB").unwrap_err().to_string();
        assert!(e.contains("1 GiB"), "{e}");
        let e = SIZE.parse("big").unwrap_err().to_string();
        assert!(e.contains("byte size"), "{e}");
        let e = WAIT.parse("nap").unwrap_err().to_string();
        assert!(e.contains("spin, block or hybrid"), "{e}");
        let e = SNDBUF.parse("lots").unwrap_err().to_string();
        assert!(e.contains("or `os`"), "{e}");
        let e = ParamDef::boolean("nodelay", true, "")
            .parse("maybe")
            .unwrap_err()
            .to_string();
        assert!(e.contains("true or false"), "{e}");
        assert!(SPIN.parse("-1").is_err() && SPIN.parse("1000001").is_err());
        assert!(TIMEOUT.parse("0").is_err());
    }

    #[test]
    fn auto_is_a_value_only_where_it_is_the_default() {
        const SLICE: ParamDef = ParamDef::bytes_auto("slice", 1, 1 << 30, "grow", "");
        assert_eq!(SLICE.parse("auto"), Ok(Value::Auto));
        assert_eq!(SLICE.parse("grow"), Ok(Value::Unset));
        assert_eq!(SLICE.parse("64"), Ok(Value::Bytes(64)));
        assert_eq!(SLICE.machine(&Value::Auto), "auto");
        assert_eq!(SLICE.default_display(), "auto");
        let e = SLICE.parse("big").unwrap_err().to_string();
        assert!(e.contains("`grow` or `auto`"), "{e}");
        SLICE.self_check().unwrap();
        assert!(SNDBUF.parse("auto").is_err());
        assert!(SNDBUF.check(&Value::Auto).is_err());
        assert!(SIZE.check(&Value::Auto).is_err());
    }

    #[test]
    fn a_power_of_two_is_checked_when_asked() {
        let capacity = ParamDef {
            kind: Kind::Bytes {
                min: 4096,
                max: 1 << 30,
                power_of_two: true,
                multiple_of: 1,
            },
            ..ParamDef::bytes("capacity", 0, 0, 4 << 20, "ring bytes")
        };
        assert!(capacity.parse("64KiB").is_ok());
        assert!(
            capacity
                .parse("96KiB")
                .unwrap_err()
                .to_string()
                .contains("power of two")
        );
        capacity.self_check().unwrap();
    }

    #[test]
    fn a_size_in_units_takes_whole_units_only() {
        let payload = ParamDef::message_bytes_in_units("payload", 4, 4096, 4, 2048, "bytes");
        payload.self_check().unwrap();
        assert!(payload.is_message_bytes());
        assert_eq!(payload.parse("4KiB").unwrap(), Value::Bytes(4096));
        let e = payload.parse("6").unwrap_err().to_string();
        assert!(e.contains("a multiple of 4 from 4 B to 4 KiB"), "{e}");
        assert!(payload.check(&Value::Bytes(8192)).is_err());
        assert!(payload.accepts().ends_with(", a multiple of 4"));
    }

    #[test]
    fn every_definition_here_is_whole() {
        for d in [&SIZE, &SNDBUF, &WAIT, &SPIN, &TIMEOUT] {
            d.self_check().unwrap();
        }
        let bad = ParamDef::choice("wait", CHOICES, "nap", "");
        assert!(bad.self_check().is_err());
        let bad = ParamDef::integer("n", 1, 10, 0, "");
        assert!(bad.self_check().is_err());
    }
}
