//! Parameters: what a transport declares, and the parsed values it is created with.

use std::time::Duration;

/// One named value of an enumerated parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// As written on the command line.
    pub name: &'static str,
    /// One line of help.
    pub help: &'static str,
}

/// What values a parameter takes; the lab parses and checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A whole number from `min` to `max`.
    Integer {
        /// Smallest accepted.
        min: i64,
        /// Largest accepted.
        max: i64,
    },
    /// A byte size (`64`, `4KiB`, `1MB`) from `min` to `max`.
    Bytes {
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// A length of time (`250ms`, `10us`, `2s`) from `min` to `max`.
    Duration {
        /// Shortest accepted.
        min: Duration,
        /// Longest accepted.
        max: Duration,
    },
    /// One of these names.
    Enum(&'static [Choice]),
    /// `true` or `false`.
    Bool,
}

/// One parameter of a transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// As in `-p NAME=VALUE`: `[a-z][a-z0-9_]*`.
    pub name: &'static str,
    /// Its values.
    pub kind: Kind,
    /// The default, as a user writes it (`"10"`, `"64KiB"`, `"1ms"`, `"spin"`).
    pub default: &'static str,
    /// One line of help.
    pub help: &'static str,
}

impl Param {
    /// A whole number from `min` to `max`.
    pub const fn integer(
        name: &'static str,
        min: i64,
        max: i64,
        default: &'static str,
        help: &'static str,
    ) -> Param {
        Param {
            name,
            kind: Kind::Integer { min, max },
            default,
            help,
        }
    }

    /// A byte size from `min` to `max`.
    pub const fn bytes(
        name: &'static str,
        min: u64,
        max: u64,
        default: &'static str,
        help: &'static str,
    ) -> Param {
        Param {
            name,
            kind: Kind::Bytes { min, max },
            default,
            help,
        }
    }

    /// A length of time from `min` to `max`.
    pub const fn duration(
        name: &'static str,
        min: Duration,
        max: Duration,
        default: &'static str,
        help: &'static str,
    ) -> Param {
        Param {
            name,
            kind: Kind::Duration { min, max },
            default,
            help,
        }
    }

    /// One of `choices`.
    pub const fn choice(
        name: &'static str,
        choices: &'static [Choice],
        default: &'static str,
        help: &'static str,
    ) -> Param {
        Param {
            name,
            kind: Kind::Enum(choices),
            default,
            help,
        }
    }

    /// `true` or `false`.
    pub const fn boolean(name: &'static str, default: &'static str, help: &'static str) -> Param {
        Param {
            name,
            kind: Kind::Bool,
            default,
            help,
        }
    }
}

/// The parsed values a transport is created with: one per declared parameter.
///
/// The getters take the parameter's name; asking for a name that was not declared,
/// or with the getter of another kind, panics (a mistake in the plugin, which the
/// export glue turns into an error the lab prints).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Values {
    pub(crate) items: Vec<(String, String, i64)>,
}

impl Values {
    /// Values from `(name, text, number)` triples, as the lab passes them (see
    /// `xb_value` in the header). For tests of a transport outside the lab.
    pub fn from_triples(items: impl IntoIterator<Item = (String, String, i64)>) -> Values {
        Values {
            items: items.into_iter().collect(),
        }
    }

    fn find(&self, name: &str) -> &(String, String, i64) {
        self.items
            .iter()
            .find(|(n, _, _)| n == name)
            .unwrap_or_else(|| panic!("parameter `{name}` was not declared in params()"))
    }

    /// A whole number.
    pub fn integer(&self, name: &str) -> i64 {
        self.find(name).2
    }

    /// A byte size.
    pub fn bytes(&self, name: &str) -> u64 {
        self.find(name).2 as u64
    }

    /// A length of time.
    pub fn duration(&self, name: &str) -> Duration {
        Duration::from_nanos(self.find(name).2 as u64)
    }

    /// The name of the chosen value of an enumerated parameter.
    pub fn choice(&self, name: &str) -> &str {
        &self.find(name).1
    }

    /// The index of the chosen value among the declared choices.
    pub fn choice_index(&self, name: &str) -> usize {
        self.find(name).2 as usize
    }

    /// A boolean.
    pub fn boolean(&self, name: &str) -> bool {
        self.find(name).2 != 0
    }

    /// The value as the lab shows it.
    pub fn text(&self, name: &str) -> &str {
        &self.find(name).1
    }
}
