//! What the iceoryx2 transport is set up with: its parameters and their values
//! ([`Wait`], [`Overflow`], [`Slices`]) held by [`Iceoryx2`], and the fixed names and
//! sizes its endpoints share.

use crate::{ParamDef, ParamValues, Transport};
use std::time::Duration;
use xferbench_params::Choices;

pub(super) const NAME: &str = "iceoryx2";

/// How file names of this transport's iceoryx2 resources begin (in `/dev/shm` and
/// under `/tmp/iceoryx2/`).
pub const FILE_PREFIX: &str = "xferbench_iox2_";

/// The address prefix (after it: uid, pid, a counter and a nonce).
pub const ADDRESS_PREFIX: &str = "xferbench-u";

/// Bytes a publisher's samples start with before they grow.
pub const INITIAL_SLICE: usize = 64;

/// How often a waiting side re-checks that its peer process lives.
pub(super) const PEER_CHECK: Duration = Duration::from_millis(10);

pub(super) const HELLO_MAGIC: [u8; 8] = *b"xfbiox2\0";
/// The connector's hello: the magic, then its pid.
pub(super) const HELLO_LEN: usize = 12;

/// `wait`: how a receiver waits.
pub const WAIT: ParamDef = ParamDef::choice(
    "wait",
    Wait::CHOICES,
    "event",
    "how a receiver waits: busy-poll the subscriber, or sleep on an iceoryx2 event the sender notifies after every sample",
);
/// `buffer`: the subscriber's buffer, in samples.
pub const BUFFER: ParamDef = ParamDef::integer(
    "buffer",
    1,
    65_536,
    2,
    "subscriber buffer size: samples delivered but not yet received before the publisher waits (iceoryx2's default)",
);
/// `history`: samples kept for late subscribers.
pub const HISTORY: ParamDef = ParamDef::integer(
    "history",
    0,
    65_536,
    0,
    "samples each publisher keeps for subscribers that connect late (iceoryx2's default)",
);

/// `overflow`: what a publisher does when the subscriber's buffer is full.
pub const OVERFLOW: ParamDef = ParamDef::choice(
    "overflow",
    Overflow::CHOICES,
    "wait",
    "a full subscriber buffer: the publisher waits until the sample is delivered (lossless), or replaces the oldest sample with iceoryx2's safe overflow (what iceoryx2's own benchmark uses; lossless only while one message is in flight, as in pingpong)",
);

/// `max_message`: the largest message, for a static data segment.
pub const MAX_MESSAGE_SIZE: ParamDef = ParamDef::bytes_auto(
    "max_message",
    1,
    1 << 30,
    "grow",
    "largest message: each publisher's data segment holds slices of this size and never grows (iceoryx2's static allocation, as its own benchmark configures it); a longer message is refused. `auto`: the run's message size where the run has one (every point of `run`), else `grow`; `grow`: slices start at 64 bytes and the segment grows by powers of two",
);

/// `pause`: a pause hint between two empty polls of a busy-polling receiver, after
/// its first polls of a wait.
pub const PAUSE: ParamDef = ParamDef::boolean(
    "pause",
    true,
    "wait=spin: a pause hint (x86 `pause`) between two empty polls once a wait has polled 64 times back to back; false never pauses, as iceoryx2's own benchmark does",
);

pub(super) const PARAMS: &[ParamDef] = &[WAIT, BUFFER, HISTORY, OVERFLOW, MAX_MESSAGE_SIZE, PAUSE];

/// How a receiver waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Busy polling.
    Spin,
    /// iceoryx2 event notification.
    Event,
}

xferbench_params::choices!(Wait {
    Spin => "spin": "busy-poll the subscriber",
    Event => "event": "sleep on an iceoryx2 event the sender notifies after every sample",
});

/// What a publisher does when the subscriber's buffer is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Wait until delivered (`RetryUntilDelivered`, safe overflow off).
    Wait,
    /// iceoryx2's safe overflow: the oldest sample in the buffer is replaced.
    Safe,
}

xferbench_params::choices!(Overflow {
    Wait => "wait": "the publisher waits until the sample is delivered",
    Safe => "safe": "the oldest buffered sample is replaced (iceoryx2's safe overflow)",
});

/// The data publishers' samples: how large, and whether their segment grows
/// (`max_message`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slices {
    /// `auto`: [`Slices::Sized`] once the run tells the message size
    /// ([`Transport::size_for`]); until then, and without it, as [`Slices::Grow`].
    Auto,
    /// `grow`: slices of [`INITIAL_SLICE`] bytes at first, the segment growing by
    /// powers of two (`AllocationStrategy::PowerOfTwo`) when a longer message comes.
    Grow,
    /// A static segment of slices of this many bytes, never growing
    /// (`AllocationStrategy::Static`): `max_message=N`.
    Static(usize),
    /// A static segment sized to the run's messages (`auto` told by
    /// [`Transport::size_for`]).
    Sized(usize),
}

impl Slices {
    /// The longest message a static segment carries; `None` when it grows.
    pub fn limit(self) -> Option<usize> {
        match self {
            Slices::Static(n) | Slices::Sized(n) => Some(n),
            Slices::Auto | Slices::Grow => None,
        }
    }
}

/// The iceoryx2 transport.
#[derive(Debug, Clone)]
pub struct Iceoryx2 {
    pub(super) wait: Wait,
    pub(super) buffer: usize,
    pub(super) history: usize,
    /// iceoryx2's safe overflow: a full buffer drops its oldest sample.
    pub(super) safe_overflow: bool,
    /// The data publishers' samples.
    pub(super) slices: Slices,
    /// Busy polling: a pause hint between two empty polls.
    pub(super) pause: bool,
}

impl Default for Iceoryx2 {
    fn default() -> Self {
        Self::from_values(&ParamValues::new()).expect("defaults are valid")
    }
}

impl Iceoryx2 {
    /// A transport with explicit settings.
    pub fn new(wait: Wait, buffer: usize, history: usize) -> Iceoryx2 {
        Iceoryx2 {
            wait,
            buffer,
            history,
            safe_overflow: false,
            slices: Slices::Auto,
            pause: true,
        }
    }

    /// How the data publishers' samples are sized.
    pub fn slices(&self) -> Slices {
        self.slices
    }
}
