//! Rendering of each study's results into its folder.

pub mod rpmsg;
