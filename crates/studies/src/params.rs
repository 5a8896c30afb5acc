//! The parameters every study's points share, defined once beside the systems'
//! own (which live with their rigs and workloads in the lab).

use xferbench_params::ParamDef;

/// The names of the study-wide parameters, for code that selects points by them
/// (a filter of name and value pairs); each is the name of its definition below.
pub mod names {
    /// [`super::GROUP`].
    pub const GROUP: &str = "group";
}

/// `group`: which group of its study a point belongs to (a table or figure of the
/// write-up the study reproduces: `threads`, `test3`, `S7`, ...).
pub const GROUP: ParamDef = ParamDef::text(
    names::GROUP,
    "a group of the study's plan",
    "",
    "the group of the study a point belongs to",
);
