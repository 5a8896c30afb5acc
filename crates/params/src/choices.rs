//! Rust enums whose values are parameter values: one place for their names and help.

use crate::def::{Choice, Kind};
use std::borrow::Cow;

/// An enum whose values are the choices of a parameter (`Notify`, `Arch`,
/// `CrcKind`, …). Implement it with [`crate::choices!`], which also gives the type
/// `Display` and `FromStr` by name; a definition takes its kind from
/// [`Choices::CHOICES`], and the command line builds its value parser from it.
pub trait Choices: Copy + PartialEq + Send + Sync + 'static {
    /// Every value, in the order lists and help show them.
    const ALL: &'static [Self];
    /// The name and help of every value of [`Choices::ALL`], in the same order.
    const CHOICES: &'static [Choice];

    /// The name, as written on the command line and stored in results.
    fn name(self) -> &'static str {
        let i = Self::ALL.iter().position(|v| *v == self).unwrap_or(0);
        match &Self::CHOICES[i].name {
            Cow::Borrowed(s) => s,
            Cow::Owned(_) => "",
        }
    }

    /// One line of help.
    fn help(self) -> &'static str {
        let i = Self::ALL.iter().position(|v| *v == self).unwrap_or(0);
        match &Self::CHOICES[i].help {
            Cow::Borrowed(s) => s,
            Cow::Owned(_) => "",
        }
    }

    /// The value of a name (ASCII case does not matter).
    fn from_name(name: &str) -> Option<Self> {
        Self::CHOICES
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name.trim()))
            .map(|i| Self::ALL[i])
    }

    /// The kind of a definition whose values these are.
    fn kind() -> Kind {
        Kind::Enum(Cow::Borrowed(Self::CHOICES))
    }

    /// The names, comma-separated.
    fn names() -> String {
        Self::CHOICES
            .iter()
            .map(|c| &*c.name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A name that is none of a [`Choices`] type's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {value:?}; choose from: {names}")]
pub struct ChoiceError {
    /// The name given.
    pub value: String,
    /// The names accepted.
    pub names: String,
}

impl ChoiceError {
    /// The error for `value` as a name of `T`.
    pub fn new<T: Choices>(value: &str) -> ChoiceError {
        ChoiceError {
            value: value.to_string(),
            names: T::names(),
        }
    }
}

/// Implements [`Choices`], `Display` and `FromStr` for an enum of unit variants:
///
/// ```
/// #[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// pub enum Wait { Spin, Block }
/// xferbench_params::choices!(Wait {
///     Spin => "spin": "busy-spin",
///     Block => "block": "sleep on a futex",
/// });
/// use xferbench_params::Choices;
/// assert_eq!(Wait::Block.name(), "block");
/// assert_eq!("spin".parse::<Wait>(), Ok(Wait::Spin));
/// assert_eq!(Wait::Spin.to_string(), "spin");
/// ```
#[macro_export]
macro_rules! choices {
    ($ty:ident { $($variant:ident => $name:literal : $help:expr),+ $(,)? }) => {
        impl $crate::Choices for $ty {
            const ALL: &'static [Self] = &[$($ty::$variant),+];
            const CHOICES: &'static [$crate::Choice] = &[$($crate::Choice::new($name, $help)),+];
        }

        #[allow(dead_code)]
        impl $ty {
            /// Every value, in the order lists and help show them.
            pub const ALL: [Self; $crate::__count!($($variant)+)] = [$($ty::$variant),+];

            /// The name, as written on the command line and stored in results.
            pub fn name(self) -> &'static str {
                <Self as $crate::Choices>::name(self)
            }

            /// The value of a name.
            pub fn from_name(name: &str) -> ::std::option::Option<Self> {
                <Self as $crate::Choices>::from_name(name)
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::Choices::name(*self))
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::ChoiceError;
            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                <Self as $crate::Choices>::from_name(s)
                    .ok_or_else(|| $crate::ChoiceError::new::<Self>(s))
            }
        }
    };
}

/// The number of identifiers given (for [`crate::choices!`]).
#[doc(hidden)]
#[macro_export]
macro_rules! __count {
    ($($x:ident)*) => { 0usize $(+ { let _ = stringify!($x); 1usize })* };
}

/// Serialises a [`Choices`] value as its name: `#[serde(with = "xferbench_params::by_name")]`.
pub mod by_name {
    use super::{ChoiceError, Choices};
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the name.
    pub fn serialize<T: Choices, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.name())
    }

    /// Reads a name, refusing unknown ones with the list of known ones.
    pub fn deserialize<'de, T: Choices, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        let name = String::deserialize(d)?;
        T::from_name(&name).ok_or_else(|| serde::de::Error::custom(ChoiceError::new::<T>(&name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Notify {
        Kick,
        EventIdx,
        Poll,
    }
    crate::choices!(Notify {
        Kick => "kick": "a kick per message",
        EventIdx => "event-idx": "kicks only when the other side sleeps",
        Poll => "poll": "no kicks",
    });

    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Spec {
        #[serde(with = "by_name")]
        notify: Notify,
    }

    #[test]
    fn names_help_and_parsing_come_from_one_table() {
        assert_eq!(Notify::EventIdx.name(), "event-idx");
        assert_eq!(Notify::Poll.help(), "no kicks");
        assert_eq!(Notify::from_name("kick"), Some(Notify::Kick));
        assert_eq!("poll".parse::<Notify>(), Ok(Notify::Poll));
        let e = "irq".parse::<Notify>().unwrap_err().to_string();
        assert!(e.contains("kick, event-idx, poll"), "{e}");
        assert_eq!(Notify::names(), "kick, event-idx, poll");
        let d = crate::ParamDef::choice("notify", Notify::CHOICES, "kick", "");
        assert_eq!(d.kind, Notify::kind());
        d.self_check().unwrap();
    }

    #[test]
    fn serde_by_name() {
        let s = Spec {
            notify: Notify::EventIdx,
        };
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"notify":"event-idx"}"#);
        assert_eq!(serde_json::from_str::<Spec>(&json).unwrap(), s);
        let e = serde_json::from_str::<Spec>(r#"{"notify":"irq"}"#).unwrap_err();
        assert!(e.to_string().contains("choose from"), "{e}");
    }
}
