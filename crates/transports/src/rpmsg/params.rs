//! The link's parameters: how each side learns of new buffers ([`Notify`], `notify`)
//! and how the host fills transmit buffers ([`Buffers`], `buffers`), with what they
//! tell a run of the transport (its wake-up and its hosts).

/// How a side tells the other that it published something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Notify {
    /// A kick per message (the original's mailbox interrupt).
    Kick,
    /// Kicks suppressed by virtio's event index: only when the other side sleeps.
    EventIdx,
    /// No kicks; both sides busy-poll.
    Poll,
}

xferbench_params::choices!(Notify {
    Kick => "kick": "a kick (futex wake) per message, like the original's mailbox interrupt",
    EventIdx => "event-idx": "kicks only when the other side sleeps (virtio's event index)",
    Poll => "poll": "no kicks: both sides busy-poll",
});

/// What wakes an RPMsg side, by `notify`: polling spins on the vring, kicks wake it.
pub const WAKEUP: crate::WakeupRule = crate::WakeupRule::ByChoice {
    param: NOTIFY,
    cases: &[
        ("poll", crate::Wakeup::CacheLine),
        ("kick", crate::Wakeup::Futex),
        ("event-idx", crate::Wakeup::Futex),
    ],
};

/// Where an RPMsg link's sides run: one host (the link is emulated in shared memory).
pub const HOSTS: crate::Hosts = crate::Hosts::One(std::borrow::Cow::Borrowed(
    "emulates an RPMsg link in shared memory on one host",
));

/// `notify`: how each side learns of new buffers.
pub const NOTIFY: crate::ParamDef = crate::ParamDef::choice(
    "notify",
    <Notify as xferbench_params::Choices>::CHOICES,
    "kick",
    "how each side learns of new buffers: a kick per message, kicks suppressed by the event index, or polling",
);

impl Notify {
    /// The code stored in the link header.
    pub fn code(self) -> u32 {
        match self {
            Notify::Kick => 1,
            Notify::EventIdx => 2,
            Notify::Poll => 3,
        }
    }

    /// The mode of a header code.
    pub fn from_code(c: u32) -> Option<Notify> {
        <Notify as xferbench_params::Choices>::ALL
            .iter()
            .copied()
            .find(|n| n.code() == c)
    }
}

/// How the host fills transmit buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Buffers {
    /// Copy the caller's bytes into a 512-byte buffer (`rpmsg_send`, the original).
    Copy,
    /// Reserve a buffer, write the payload in place, send it (`rpmsg_lite_alloc_tx_buffer`
    /// + `rpmsg_lite_send_nocopy`).
    ZeroCopy,
}

xferbench_params::choices!(Buffers {
    Copy => "copy": "copy each packet into a 512-byte vring buffer (rpmsg_send)",
    ZeroCopy => "zero-copy": "write each packet in place in a reserved buffer (rpmsg_lite_send_nocopy)",
});

/// `buffers`: how the host fills transmit buffers.
pub const BUFFERS: crate::ParamDef = crate::ParamDef::choice(
    "buffers",
    <Buffers as xferbench_params::Choices>::CHOICES,
    "copy",
    "how the host fills tx buffers: copy each packet into a vring buffer (rpmsg_send), or write it in place (rpmsg_lite_send_nocopy)",
);
