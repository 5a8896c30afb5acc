//! One typed definition per parameter.
//!
//! Every parameter of xferbench — a transport's (`capacity`, `wait`, `nodelay`), a
//! sweep axis (`size`, `channels`), a workload's or a study's (`notify`, `arch`,
//! `kernels`) — is described once by a [`ParamDef`]: its name, its [`Kind`] (a whole
//! number, a byte size or a duration with bounds, one of named values, a boolean, or
//! text its owner checks), its default, and one line of help. The definition is the
//! only place that knows how the parameter is written:
//!
//! * [`ParamDef::parse`] reads what a user wrote, with one syntax per unit (sizes
//!   `64`, `4KiB`, `4 KiB`, `1MB`; durations `250ms`, `1s`, `2m` or bare seconds)
//!   and [`ParamDef::parse_list`] a sweep list with ranges (`1..64KiB:x4`);
//! * [`ParamDef::display`] shows a value the one way people read it (`64 KiB`,
//!   `250 ms`), and [`ParamDef::machine`] the way result files store it (`65536`);
//! * [`ParamDef::accepts`] says what is accepted, for help and error messages.
//!
//! A definition is plain data, so it can be built at run time too (a plugin
//! describes its parameters through a C struct and gets the same treatment as a
//! built-in). Rust enums that are parameter values implement [`Choices`] through the
//! [`choices!`] macro: their names, help and the [`Kind`] of their definition come
//! from that one place, and the command line parses them through it.
//!
//! [`ParamValues`] is a set of parsed values checked against the definitions of
//! their owner (a transport, say), with typed getters that fall back to defaults.

#![deny(missing_docs)]

pub mod bytes;
mod choices;
mod def;
pub mod duration;
mod list;
pub mod point;
pub mod rate;
pub mod suggest;
mod value;
mod values;

pub use choices::{ChoiceError, Choices, by_name};
pub use def::{Choice, Kind, ParamDef};
pub use list::MAX_LIST;
pub use point::{ParamMap, PointParams};
pub use value::{AUTO, Value};
pub use values::{ParamValues, Params};

/// A value or a parameter name that its definitions refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// The value does not parse, or is out of range.
    #[error("invalid value {value:?} for parameter `{name}`: expected {accepts}")]
    Invalid {
        /// Parameter name.
        name: String,
        /// The value given.
        value: String,
        /// What is accepted.
        accepts: String,
    },
    /// The owner has no parameter of that name.
    #[error("unknown parameter `{name}` for {owner}; it accepts: {known}")]
    Unknown {
        /// Parameter name.
        name: String,
        /// Transport, workload or study name.
        owner: String,
        /// Comma-separated list of accepted names.
        known: String,
    },
    /// A list or range of values that does not expand (an empty item, a range that
    /// runs backwards, a bad step, too many values).
    #[error("parameter `{name}`: {problem}")]
    List {
        /// Parameter name.
        name: String,
        /// What is wrong with the list.
        problem: String,
    },
}
