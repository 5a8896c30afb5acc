//! The virtio split virtqueue ("vring") over shared memory, and the two roles that
//! use it: the **driver** (the host: owns the descriptors, offers buffers in the avail
//! ring, takes them back from the used ring) and the **device** (the remote: takes
//! buffers from the avail ring, returns them in the used ring).
//!
//! # Layout (`num` entries, virtio 1.x §2.7 "split virtqueues", legacy alignment)
//!
//! ```text
//! desc[num]   { u64 addr, u32 len, u16 flags, u16 next }        16·num bytes
//! avail       { u16 flags, u16 idx, u16 ring[num], u16 used_event }
//! (aligned to 4096)
//! used        { u16 flags, u16 idx, { u32 id, u32 len }[num], u16 avail_event }
//! ```
//!
//! Descriptor `addr` is the buffer's byte offset in the shared area (the "bus
//! address" both sides agree on); chains (`next`) are not used: every message fits
//! one 512-byte buffer, as in RPMsg.
//!
//! # Untrusted indices
//!
//! Everything the other side writes is read through atomics and validated before use:
//! an avail or used `idx` may move forward by at most the ring size (else
//! [`Fault::BadIndex`], which the caller treats as a broken link), a descriptor index
//! must lie in the table (and, on the driver side, be one it has in flight), and
//! lengths and addresses are checked by the caller against the buffer pool. No value
//! read from shared memory is ever used as an index without a bound check, so a
//! corrupt or hostile peer can cause faults to be counted, never undefined behaviour.
//!
//! # Event index (`VIRTIO_F_EVENT_IDX`)
//!
//! A side about to sleep writes the index it has consumed up to into the other
//! ring's event field (`used_event` in avail for the driver, `avail_event` in used for
//! the device), issues a SeqCst fence and re-checks; a side that published from `old`
//! to `new` issues a SeqCst fence, reads the event field and notifies only if
//! [`need_event`] says the sleeper's index lies in `[old, new)`.
//!
//! # Dependencies
//!
//! The vring owns its layout ([`vring_size`], [`VRING_ALIGN`]) and imports only the
//! fault kinds (`fault.rs`), so the link header can build on it without a cycle.

use super::fault::Fault;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

/// The virtio "legacy" alignment of the used ring.
pub const VRING_ALIGN: usize = 4096;

/// A descriptor (`struct vring_desc`).
#[repr(C)]
#[derive(Debug)]
pub struct Desc {
    /// Buffer address (offset in the shared area).
    pub addr: AtomicU64,
    /// Buffer length.
    pub len: AtomicU32,
    /// `VRING_DESC_F_*`.
    pub flags: AtomicU16,
    /// Next descriptor of a chain (unused).
    pub next: AtomicU16,
}

/// `VRING_DESC_F_WRITE`: the device writes this buffer.
pub const DESC_F_WRITE: u16 = 2;

/// A used element (`struct vring_used_elem`).
#[repr(C)]
#[derive(Debug)]
pub struct UsedElem {
    /// Head descriptor index.
    pub id: AtomicU32,
    /// Bytes written into the buffer.
    pub len: AtomicU32,
}

/// Bytes of a vring with `num` entries.
pub fn vring_size(num: usize) -> usize {
    used_offset(num) + 4 + 8 * num + 2
}

fn avail_offset(num: usize) -> usize {
    16 * num
}

fn used_offset(num: usize) -> usize {
    (avail_offset(num) + 4 + 2 * num + 2).div_ceil(VRING_ALIGN) * VRING_ALIGN
}

/// `vring_need_event`: whether a side that moved an index from `old` to `new` must
/// notify a sleeper that asked to be woken past `event`.
#[inline]
pub fn need_event(event: u16, new: u16, old: u16) -> bool {
    new.wrapping_sub(event).wrapping_sub(1) < new.wrapping_sub(old)
}

/// A view of one vring in mapped memory.
#[derive(Debug, Clone, Copy)]
pub struct Vring {
    base: *mut u8,
    num: usize,
}

// SAFETY: a Vring is a pair (pointer, size) into a shared mapping whose fields are all
// atomics; whoever creates it guarantees the mapping outlives every copy.
unsafe impl Send for Vring {}
// SAFETY: as above; all access goes through atomics.
unsafe impl Sync for Vring {}

impl Vring {
    /// A view of the vring at `base`.
    ///
    /// # Safety
    ///
    /// `base` must be aligned to 8 and point to at least `vring_size(num)` bytes of
    /// mapped, zero-initialised or vring-formatted memory that stays mapped as long as
    /// the `Vring` (and its copies) is used; `num` must be a power of two ≤ 32768.
    pub unsafe fn new(base: *mut u8, num: usize) -> Vring {
        debug_assert!(num.is_power_of_two() && num <= 1 << 15);
        Vring { base, num }
    }

    /// Entries.
    #[inline]
    pub fn num(&self) -> usize {
        self.num
    }

    #[inline]
    fn at<T>(&self, off: usize) -> &T {
        debug_assert!(off + std::mem::size_of::<T>() <= vring_size(self.num));
        // SAFETY: `off` is computed from the layout within vring_size(num), which `new`'s
        // contract guarantees is mapped; every T used here is an atomic (valid for any
        // bit pattern) at its natural alignment given the 8-aligned base.
        unsafe { &*self.base.add(off).cast::<T>() }
    }

    /// Descriptor `i` (`i < num`, masked).
    #[inline]
    pub fn desc(&self, i: usize) -> &Desc {
        self.at(16 * (i & (self.num - 1)))
    }

    /// `avail.idx`.
    #[inline]
    pub fn avail_idx(&self) -> &AtomicU16 {
        self.at(avail_offset(self.num) + 2)
    }

    /// `avail.ring[i mod num]`.
    #[inline]
    pub fn avail_ring(&self, i: u16) -> &AtomicU16 {
        self.at(avail_offset(self.num) + 4 + 2 * (usize::from(i) & (self.num - 1)))
    }

    /// `avail.used_event`: the driver wants a notification once used idx passes it.
    #[inline]
    pub fn used_event(&self) -> &AtomicU16 {
        self.at(avail_offset(self.num) + 4 + 2 * self.num)
    }

    /// `used.idx`.
    #[inline]
    pub fn used_idx(&self) -> &AtomicU16 {
        self.at(used_offset(self.num) + 2)
    }

    /// `used.ring[i mod num]`.
    #[inline]
    pub fn used_ring(&self, i: u16) -> &UsedElem {
        self.at(used_offset(self.num) + 4 + 8 * (usize::from(i) & (self.num - 1)))
    }

    /// `used.avail_event`: the device wants a notification once avail idx passes it.
    #[inline]
    pub fn avail_event(&self) -> &AtomicU16 {
        self.at(used_offset(self.num) + 4 + 8 * self.num)
    }
}

/// The driver's private state of one vring. Descriptor `i` always describes buffer
/// `i` of the driver's half of the pool (a fixed mapping, as Linux's rpmsg does), so
/// the free list holds descriptor indices.
#[derive(Debug)]
pub struct Driver {
    ring: Vring,
    avail: u16,
    last_used: u16,
    used_seen: u16,
    in_flight: Vec<bool>,
    in_flight_count: usize,
    free: Vec<u16>,
}

impl Driver {
    /// A driver with every descriptor free.
    pub fn new(ring: Vring) -> Driver {
        let num = ring.num();
        Driver {
            ring,
            avail: 0,
            last_used: 0,
            used_seen: 0,
            in_flight: vec![false; num],
            in_flight_count: 0,
            free: (0..num as u16).rev().collect(),
        }
    }

    /// The ring.
    pub fn ring(&self) -> &Vring {
        &self.ring
    }

    /// A free descriptor, if any (does not reclaim used ones).
    #[inline]
    pub fn take_free(&mut self) -> Option<u16> {
        self.free.pop()
    }

    /// Gives an unused descriptor back to the free list.
    #[inline]
    pub fn put_free(&mut self, id: u16) {
        debug_assert!(!self.in_flight[usize::from(id)]);
        self.free.push(id);
    }

    /// Descriptors owned by the device.
    pub fn in_flight(&self) -> usize {
        self.in_flight_count
    }

    /// Offers descriptor `id` (a buffer at `addr` of `len` bytes) to the device. Not
    /// visible until [`Driver::publish`].
    #[inline]
    pub fn add(&mut self, id: u16, addr: u64, len: u32, flags: u16) {
        let i = usize::from(id);
        debug_assert!(i < self.ring.num() && !self.in_flight[i]);
        let d = self.ring.desc(i);
        d.addr.store(addr, Ordering::Relaxed);
        d.len.store(len, Ordering::Relaxed);
        d.flags.store(flags, Ordering::Relaxed);
        d.next.store(0, Ordering::Relaxed);
        self.ring
            .avail_ring(self.avail)
            .store(id, Ordering::Relaxed);
        self.avail = self.avail.wrapping_add(1);
        self.in_flight[i] = true;
        self.in_flight_count += 1;
    }

    /// Publishes everything added; returns `(old, new)` avail idx for [`need_event`].
    #[inline]
    pub fn publish(&mut self) -> (u16, u16) {
        let old = self.ring.avail_idx().load(Ordering::Relaxed);
        self.ring.avail_idx().store(self.avail, Ordering::Release);
        (old, self.avail)
    }

    /// Whether the device has returned buffers not yet taken by [`Driver::get_used`].
    #[inline]
    pub fn used_pending(&self) -> bool {
        self.last_used != self.used_seen
            || self.ring.used_idx().load(Ordering::Acquire) != self.last_used
    }

    /// Asks the device to notify once the used idx moves past what was consumed.
    #[inline]
    pub fn arm_used_event(&self) {
        self.ring
            .used_event()
            .store(self.last_used, Ordering::Relaxed);
    }

    /// Takes the next used element: `Ok(None)` when there is none, `Err` for a
    /// consumed but invalid element ([`Fault::BadDescriptor`]: not in the table or
    /// not in flight), or a used idx that jumped ([`Fault::BadIndex`], fatal).
    #[inline]
    pub fn get_used(&mut self) -> Result<Option<(u16, u32)>, Fault> {
        if self.last_used == self.used_seen {
            let idx = self.ring.used_idx().load(Ordering::Acquire);
            let delta = usize::from(idx.wrapping_sub(self.last_used));
            if delta == 0 {
                return Ok(None);
            }
            if delta > self.in_flight_count {
                return Err(Fault::BadIndex);
            }
            self.used_seen = idx;
        }
        let e = self.ring.used_ring(self.last_used);
        let id = e.id.load(Ordering::Relaxed);
        let len = e.len.load(Ordering::Relaxed);
        self.last_used = self.last_used.wrapping_add(1);
        match usize::try_from(id).ok().filter(|&i| i < self.ring.num()) {
            Some(i) if self.in_flight[i] => {
                self.in_flight[i] = false;
                self.in_flight_count -= 1;
                Ok(Some((i as u16, len)))
            }
            _ => Err(Fault::BadDescriptor),
        }
    }
}

/// The device's private state of one vring.
#[derive(Debug)]
pub struct Device {
    ring: Vring,
    last_avail: u16,
    avail_seen: u16,
    used: u16,
}

impl Device {
    /// A device at the start of the ring.
    pub fn new(ring: Vring) -> Device {
        Device {
            ring,
            last_avail: 0,
            avail_seen: 0,
            used: 0,
        }
    }

    /// The ring.
    pub fn ring(&self) -> &Vring {
        &self.ring
    }

    /// Whether the driver offered buffers not yet taken.
    #[inline]
    pub fn avail_pending(&self) -> bool {
        self.last_avail != self.avail_seen
            || self.ring.avail_idx().load(Ordering::Acquire) != self.last_avail
    }

    /// Asks the driver to notify once the avail idx moves past what was consumed.
    #[inline]
    pub fn arm_avail_event(&self) {
        self.ring
            .avail_event()
            .store(self.last_avail, Ordering::Relaxed);
    }

    /// Takes the next offered descriptor: its index and `(addr, len, flags)`.
    /// `Err(BadDescriptor)` consumes an entry whose index is outside the table;
    /// `Err(BadIndex)` reports an avail idx that moved by more than the ring size.
    #[inline]
    pub fn next_avail(&mut self) -> Result<Option<(u16, u64, u32, u16)>, Fault> {
        if self.last_avail == self.avail_seen {
            let idx = self.ring.avail_idx().load(Ordering::Acquire);
            let delta = usize::from(idx.wrapping_sub(self.last_avail));
            if delta == 0 {
                return Ok(None);
            }
            if delta > self.ring.num() {
                return Err(Fault::BadIndex);
            }
            self.avail_seen = idx;
        }
        let id = self
            .ring
            .avail_ring(self.last_avail)
            .load(Ordering::Relaxed);
        self.last_avail = self.last_avail.wrapping_add(1);
        if usize::from(id) >= self.ring.num() {
            return Err(Fault::BadDescriptor);
        }
        let d = self.ring.desc(usize::from(id));
        Ok(Some((
            id,
            d.addr.load(Ordering::Relaxed),
            d.len.load(Ordering::Relaxed),
            d.flags.load(Ordering::Relaxed),
        )))
    }

    /// Returns descriptor `id` with `len` bytes written. Not visible until
    /// [`Device::publish`].
    #[inline]
    pub fn push_used(&mut self, id: u16, len: u32) {
        let e = self.ring.used_ring(self.used);
        e.id.store(u32::from(id), Ordering::Relaxed);
        e.len.store(len, Ordering::Relaxed);
        self.used = self.used.wrapping_add(1);
    }

    /// Publishes the returned buffers; returns `(old, new)` used idx.
    #[inline]
    pub fn publish(&mut self) -> (u16, u16) {
        let old = self.ring.used_idx().load(Ordering::Relaxed);
        self.ring.used_idx().store(self.used, Ordering::Release);
        (old, self.used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Page-aligned zeroed memory for a vring.
    struct Mem(Vec<u64>);
    impl Mem {
        fn new(num: usize) -> (Mem, Vring) {
            let mut m = Mem(vec![0u64; vring_size(num).div_ceil(8)]);
            // SAFETY: the vector is 8-aligned, zeroed, vring_size(num) bytes long, and
            // outlives the Vring in every test (both are dropped together).
            let r = unsafe { Vring::new(m.0.as_mut_ptr().cast(), num) };
            (m, r)
        }
    }

    #[test]
    fn buffers_go_round_many_times_across_index_wrap() {
        let (_m, ring) = Mem::new(4);
        let mut drv = Driver::new(ring);
        let mut dev = Device::new(ring);
        // 70 000 messages: the u16 indices wrap once, the 4-entry ring 17 500 times.
        for n in 0..70_000u32 {
            let id = drv.take_free().expect("a free descriptor");
            drv.add(id, u64::from(id) * 512, n % 512, 0);
            drv.publish();
            let (got, addr, len, _) = dev.next_avail().unwrap().unwrap();
            assert_eq!((got, addr, len), (id, u64::from(id) * 512, n % 512));
            assert_eq!(dev.next_avail(), Ok(None));
            dev.push_used(got, len);
            dev.publish();
            assert_eq!(drv.get_used(), Ok(Some((id, n % 512))));
            assert_eq!(drv.get_used(), Ok(None));
            drv.put_free(id);
        }
        assert_eq!(drv.in_flight(), 0);
    }

    #[test]
    fn a_full_ring_offers_no_descriptor_until_one_is_returned() {
        let (_m, ring) = Mem::new(8);
        let mut drv = Driver::new(ring);
        let mut dev = Device::new(ring);
        let mut ids = Vec::new();
        while let Some(id) = drv.take_free() {
            drv.add(id, 0, 1, 0);
            ids.push(id);
        }
        drv.publish();
        assert_eq!(ids.len(), 8);
        assert_eq!(drv.in_flight(), 8);
        for _ in 0..8 {
            let (id, ..) = dev.next_avail().unwrap().unwrap();
            dev.push_used(id, 0);
        }
        assert_eq!(dev.next_avail(), Ok(None));
        assert!(drv.take_free().is_none());
        dev.publish();
        // Returned out of the order offered is fine; each comes back once.
        let mut back = Vec::new();
        while let Some((id, _)) = drv.get_used().unwrap() {
            back.push(id);
            drv.put_free(id);
        }
        back.sort();
        ids.sort();
        assert_eq!(back, ids);
        assert!(drv.take_free().is_some());
    }

    #[test]
    fn a_descriptor_returned_twice_is_rejected_the_second_time() {
        let (_m, ring) = Mem::new(4);
        let mut drv = Driver::new(ring);
        let mut dev = Device::new(ring);
        let id = drv.take_free().unwrap();
        drv.add(id, 0, 16, 0);
        drv.publish();
        let (got, ..) = dev.next_avail().unwrap().unwrap();
        dev.push_used(got, 16);
        dev.push_used(got, 16); // a buggy device returns it again
        dev.push_used(7, 16); // and one that does not exist
        dev.publish();
        // Three used entries but only one buffer in flight: the index jump is caught.
        assert_eq!(drv.get_used(), Err(Fault::BadIndex));
    }

    #[test]
    fn reused_or_foreign_descriptor_ids_are_counted_not_trusted() {
        let (_m, ring) = Mem::new(4);
        let mut drv = Driver::new(ring);
        let mut dev = Device::new(ring);
        for _ in 0..3 {
            let id = drv.take_free().unwrap();
            drv.add(id, 0, 16, 0);
        }
        drv.publish();
        let (a, ..) = dev.next_avail().unwrap().unwrap();
        dev.push_used(a, 16);
        dev.push_used(a, 16); // reused: no longer in flight
        dev.push_used(9, 16); // outside the table
        dev.publish();
        assert_eq!(drv.get_used(), Ok(Some((a, 16))));
        assert_eq!(drv.get_used(), Err(Fault::BadDescriptor));
        assert_eq!(drv.get_used(), Err(Fault::BadDescriptor));
        assert_eq!(drv.get_used(), Ok(None));
        assert_eq!(drv.in_flight(), 2);
    }

    #[test]
    fn the_device_rejects_bad_avail_entries_and_index_jumps() {
        let (_m, ring) = Mem::new(4);
        let mut dev = Device::new(ring);
        ring.avail_ring(0).store(4, Ordering::Relaxed); // out of the table
        ring.avail_idx().store(1, Ordering::Release);
        assert_eq!(dev.next_avail(), Err(Fault::BadDescriptor));
        assert_eq!(dev.next_avail(), Ok(None));
        ring.avail_idx().store(100, Ordering::Release);
        assert_eq!(dev.next_avail(), Err(Fault::BadIndex));
    }

    #[test]
    fn need_event_matches_virtio() {
        assert!(need_event(5, 6, 5));
        assert!(!need_event(4, 6, 5));
        assert!(need_event(65535, 0, 65535));
        assert!(!need_event(7, 6, 5));
    }
}
