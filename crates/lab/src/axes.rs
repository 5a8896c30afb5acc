//! The axes of a sweep and the parameters every point may record: `transport`,
//! `size`, `channels`, `workload`, `zero_copy` and `touch`. The workloads name them
//! here; the catalog of every definition is `params`.

use crate::names;
use crate::workload::{RecordedWorkload, Touch};
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
/// `touch`: what the ends of an in-place message do with its payload (present on
/// zero-copy points whose rule is not `all`).
pub const TOUCH: ParamDef = ParamDef::choice(
    "touch",
    <Touch as xferbench_params::Choices>::CHOICES,
    "all",
    "what the ends of a message written and read in place do with its payload",
);
/// `workload`: what the two ends of a channel do; every name a point records
/// ([`RecordedWorkload`]: `run`'s workloads and the clients and
/// readouts of the other commands and studies).
pub const WORKLOAD: ParamDef = ParamDef::choice(
    names::WORKLOAD,
    <RecordedWorkload as xferbench_params::Choices>::CHOICES,
    "stream",
    "what the two ends of a channel do",
);
