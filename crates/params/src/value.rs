//! A parsed parameter value.

use std::borrow::Cow;
use std::time::Duration;

/// One parameter's value, of the kind its [`crate::ParamDef`] declares.
///
/// Values are made by [`crate::ParamDef::parse`] (which checks kind and bounds) or
/// written as the default of a definition; [`crate::ParamDef::display`] and
/// [`crate::ParamDef::machine`] turn them back into text.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A whole number.
    Integer(i64),
    /// A byte count.
    Bytes(u64),
    /// A length of time.
    Duration(Duration),
    /// One of the definition's named values, by its name.
    Choice(Cow<'static, str>),
    /// A boolean.
    Bool(bool),
    /// Text the parameter's owner checks (an address, say).
    Text(Cow<'static, str>),
    /// The definition's word for "leave the system's default" (`os`).
    Unset,
    /// [`AUTO`]: the owner chooses from what the run tells it (a transport, from the
    /// size of the messages a point sends). Only a definition whose default it is
    /// accepts it ([`crate::ParamDef::bytes_auto`]).
    Auto,
}

/// How [`Value::Auto`] is written.
pub const AUTO: &str = "auto";

impl Value {
    /// A whole number of any integer type (every count a point records fits an
    /// `i64`; one that does not is stored as `i64::MAX`).
    pub fn whole(n: impl TryInto<i64>) -> Value {
        Value::Integer(n.try_into().unwrap_or(i64::MAX))
    }

    /// A choice by its name, for definitions' defaults.
    pub const fn choice(name: &'static str) -> Value {
        Value::Choice(Cow::Borrowed(name))
    }

    /// Text, for definitions' defaults.
    pub const fn text(s: &'static str) -> Value {
        Value::Text(Cow::Borrowed(s))
    }
}
