//! The built-in studies' measuring code: each study's workload, its list of points
//! and the runner that produces its results. Rendering lives in the report crate,
//! argument parsing in the CLI.

pub mod rpmsg;
pub mod warp;
