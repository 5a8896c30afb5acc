//! What can be wrong with something read from shared memory ([`Fault`]), and the
//! counters of such faults ([`FaultCounters`] in shared memory, [`Faults`] as a
//! plain copy).
//!
//! The lowest module of the link: the vrings, the headers and both sides report
//! faults with these types, so it imports nothing from them. Its items are
//! re-exported from [`header`](super::header).
//!
//! # Invariants
//!
//! * One counter per [`Fault`] kind, in the same order in [`FaultCounters`] and
//!   [`Faults`]; counting is a relaxed increment, so a snapshot is per-counter
//!   exact but not atomic across counters.
//! * [`FaultCounters`] is `#[repr(C)]` and all atomics: it lives in the link header
//!   in shared memory, where the other side and a parent process read it.

use std::sync::atomic::AtomicU64;

/// What was wrong with something read from shared memory. Every fault is counted by
/// the side that saw it; none is fatal except [`Fault::BadIndex`] (the ring itself
/// is corrupt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// A message header's `len` exceeds 496.
    #[error("payload length above 496")]
    PayloadTooLong,
    /// A descriptor's or used element's length disagrees with the buffer.
    #[error("bad buffer length")]
    BadLength,
    /// A descriptor index outside the table, or one not in flight.
    #[error("bad descriptor index")]
    BadDescriptor,
    /// A descriptor's address is not one of the link's buffers.
    #[error("bad buffer address")]
    BadAddress,
    /// No endpoint has the destination address.
    #[error("unknown destination address")]
    UnknownDst,
    /// An avail/used index moved by more than the ring size.
    #[error("ring index moved by more than the ring size")]
    BadIndex,
}

/// Counters of rejected input, one per [`Fault`] kind, shared-memory resident so the
/// other side (and a parent process) can read them.
#[repr(C)]
#[derive(Debug, Default)]
pub struct FaultCounters {
    /// [`Fault::PayloadTooLong`].
    pub payload_too_long: AtomicU64,
    /// [`Fault::BadLength`].
    pub bad_length: AtomicU64,
    /// [`Fault::BadDescriptor`].
    pub bad_descriptor: AtomicU64,
    /// [`Fault::BadAddress`].
    pub bad_address: AtomicU64,
    /// [`Fault::UnknownDst`].
    pub unknown_dst: AtomicU64,
    /// [`Fault::BadIndex`].
    pub bad_index: AtomicU64,
}

/// A plain copy of [`FaultCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Payload length above 496.
    pub payload_too_long: u64,
    /// Bad buffer length.
    pub bad_length: u64,
    /// Bad descriptor index.
    pub bad_descriptor: u64,
    /// Bad buffer address.
    pub bad_address: u64,
    /// Unknown destination.
    pub unknown_dst: u64,
    /// Ring index jumps.
    pub bad_index: u64,
}

impl Faults {
    /// All faults together.
    pub fn total(&self) -> u64 {
        // Saturating: the counters live in shared memory, where a peer can write
        // anything into them.
        self.payload_too_long
            .saturating_add(self.bad_length)
            .saturating_add(self.bad_descriptor)
            .saturating_add(self.bad_address)
            .saturating_add(self.unknown_dst)
            .saturating_add(self.bad_index)
    }
}

impl FaultCounters {
    /// Counts one fault.
    pub fn count(&self, f: Fault) {
        use std::sync::atomic::Ordering::Relaxed;
        let c = match f {
            Fault::PayloadTooLong => &self.payload_too_long,
            Fault::BadLength => &self.bad_length,
            Fault::BadDescriptor => &self.bad_descriptor,
            Fault::BadAddress => &self.bad_address,
            Fault::UnknownDst => &self.unknown_dst,
            Fault::BadIndex => &self.bad_index,
        };
        c.fetch_add(1, Relaxed);
    }

    /// A snapshot.
    pub fn get(&self) -> Faults {
        use std::sync::atomic::Ordering::Relaxed;
        Faults {
            payload_too_long: self.payload_too_long.load(Relaxed),
            bad_length: self.bad_length.load(Relaxed),
            bad_descriptor: self.bad_descriptor.load(Relaxed),
            bad_address: self.bad_address.load(Relaxed),
            unknown_dst: self.unknown_dst.load(Relaxed),
            bad_index: self.bad_index.load(Relaxed),
        }
    }
}
