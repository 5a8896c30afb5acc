//! The axes of a sweep and the parameters every point may record: `transport`,
//! `size`, `channels` and `zero_copy` (`workload` and `touch` are the workloads'
//! own, `workload::WORKLOAD` and `workload::TOUCH`). The workloads name them here;
//! the catalog of every definition is `params`.

use crate::names;
use xferbench_transports::ParamDef;

/// Largest message size of a sweep.
pub const MAX_SIZE: u64 = 1 << 30;
/// Most channels in one point.
pub const MAX_CHANNELS: i64 = 1024;

/// `transport`: which transport (a name of `transports::all`).
pub const TRANSPORT: ParamDef = ParamDef::text(
    names::TRANSPORT,
    "a transport of `xferbench list`",
    "shm",
    "the transport",
);
/// `size`: bytes per message.
pub const SIZE: ParamDef =
    ParamDef::message_bytes(names::SIZE, 1, MAX_SIZE, 64, "bytes per message");
/// `channels`: concurrent, independent endpoint pairs.
pub const CHANNELS: ParamDef = ParamDef::integer(
    names::CHANNELS,
    1,
    MAX_CHANNELS,
    1,
    "concurrent channels, each an independent endpoint pair",
);
/// `zero_copy`: messages written and read in place (present, as `true`, on zero-copy
/// points only).
pub const ZERO_COPY: ParamDef = ParamDef::boolean(
    "zero_copy",
    false,
    "write and read every message in place in the transport's buffers",
);
