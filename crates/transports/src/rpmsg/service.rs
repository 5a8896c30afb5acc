//! What the remote's endpoints do with a message: [`Service`], and the firmware's
//! echo suffix.

/// What the remote's endpoints do with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Service {
    /// Reply at once with the same payload (the firmware's ISR echo).
    Echo,
    /// Hold up to 16 buffers and answer from the idle loop, upper-cased (echo-cap).
    EchoHold,
}

impl Service {
    /// The name used in results.
    pub fn name(self) -> &'static str {
        match self {
            Service::Echo => "echo",
            Service::EchoHold => "echo-hold",
        }
    }

    /// The code stored in the link header.
    pub fn code(self) -> u32 {
        match self {
            Service::Echo => 1,
            Service::EchoHold => 2,
        }
    }

    /// The service of a header code.
    pub fn from_code(c: u32) -> Option<Service> {
        [Service::Echo, Service::EchoHold]
            .into_iter()
            .find(|s| s.code() == c)
    }
}

/// The firmware's echo suffix (`" => echo from Core1\n"`).
pub const ECHO_SUFFIX: &[u8] = b" => echo from Core1\n";
