//! Studies: fixed plans of measurements reproducing a published benchmark, each
//! returning a serialisable result that the report crate renders into a folder.

pub mod rpmsg;
