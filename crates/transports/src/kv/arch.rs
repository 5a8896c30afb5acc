//! The three server architectures ([`Arch`]) and the `arch` parameter that picks one.

/// A server architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    /// The original: one-slot channels, semaphores, broadcast responses.
    Preopt,
    /// The original author's rings: MPMC requests, broadcast response ring.
    Ring,
    /// Per-client SPSC rings served by the least-loaded worker.
    Sharded,
}

xferbench_params::choices!(Arch {
    Preopt => "preopt": "the original: one-slot request channel, broadcast responses, semaphores",
    Ring => "ring": "the original author's MPMC request ring and broadcast response ring",
    Sharded => "sharded": "per-client SPSC rings served by the least-loaded worker",
});

/// `arch`: the server's architecture.
pub const ARCH: crate::ParamDef = crate::ParamDef::choice(
    "arch",
    <Arch as xferbench_params::Choices>::CHOICES,
    "sharded",
    "the hash-table server's architecture",
);

impl Arch {
    /// The code stored in the header.
    pub fn code(self) -> u32 {
        match self {
            Arch::Preopt => 1,
            Arch::Ring => 2,
            Arch::Sharded => 3,
        }
    }

    /// The architecture of a header code.
    pub fn from_code(code: u32) -> Option<Arch> {
        Arch::ALL.into_iter().find(|a| a.code() == code)
    }
}
