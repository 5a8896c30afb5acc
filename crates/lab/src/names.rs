//! The names of the axes, for code that matches a name against them (a `match` on a
//! parameter's name, a table's fixed columns); each is the name of its definition
//! in the parameter catalog (`params`), spelled nowhere else.

/// `workload` (`workload::WORKLOAD`).
pub const WORKLOAD: &str = "workload";
/// `transport` (`axes::TRANSPORT`).
pub const TRANSPORT: &str = "transport";
/// `size` (`axes::SIZE`).
pub const SIZE: &str = "size";
/// `channels` (`axes::CHANNELS`).
pub const CHANNELS: &str = "channels";
/// `rate` (`workload::load::RATE`).
pub const RATE: &str = "rate";
