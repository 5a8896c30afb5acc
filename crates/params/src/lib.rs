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
mod error;
mod list;
pub mod point;
pub mod rate;
pub mod suggest;
mod value;
mod values;

pub use choices::{ChoiceError, Choices, by_name};
pub use def::{Choice, Kind, ParamDef};
pub use error::ParamError;
pub use list::MAX_LIST;
pub use point::{ParamMap, PointParams};
pub use value::{AUTO, Value};
pub use values::{ParamValues, Params};
