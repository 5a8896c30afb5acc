//! The parameters every study's points share, defined once beside the systems'
//! own (which live with their rigs and workloads in the lab).

use xferbench_params::ParamDef;

/// `group`: which group of its study a point belongs to (a table or figure of the
/// write-up the study reproduces: `threads`, `test3`, `S7`, ...).
pub const GROUP: ParamDef = ParamDef::text(
    "group",
    "a group of the study's plan",
    "",
    "the group of the study a point belongs to",
);
