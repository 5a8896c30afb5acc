//! The vring's driver (host) and device (remote) state machines over a zeroed buffer
//! standing in for the shared vring, with a hostile party that scribbles on it.
//!
//! Input: one byte choosing the ring size (2 to 16 entries), then operations, each
//! an opcode byte and its arguments:
//!
//! | op | what                                                                 |
//! |----|----------------------------------------------------------------------|
//! | 0  | driver: take a free descriptor and offer it (`len` byte)             |
//! | 1  | driver: publish                                                      |
//! | 2  | device: take the next offered descriptor                             |
//! | 3  | device: return the oldest descriptor it holds (`len` byte)           |
//! | 4  | device: publish                                                      |
//! | 5  | driver: take the next used element                                   |
//! | 6  | hostile: write a byte (`u16` offset, byte) anywhere in the vring     |
//! | 7  | hostile device: return any descriptor id (`u16` id, `u32` len)       |
//!
//! Checked: nothing panics and every access stays in the vring (the vring's debug
//! bound checks are on in fuzz builds); descriptor ids handed out are in the table;
//! the driver only takes back what it has in flight and counts it right; and while
//! nobody was hostile, every buffer comes back exactly once with the length the
//! device wrote, and no fault is reported. A `BadIndex` ends the run (the link is
//! broken), as in the transport.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::VecDeque;
use xferbench_fuzz::{take_u8, take_u16, take_u32};
use xferbench_transports::rpmsg::header::Fault;
use xferbench_transports::rpmsg::vring::{Device, Driver, Vring, vring_size};

fuzz_target!(|data: &[u8]| {
    let mut d = data;
    let num = 1usize << (1 + take_u8(&mut d) % 4);
    let size = vring_size(num);
    let mut mem = vec![0u64; size.div_ceil(8)];
    let base = mem.as_mut_ptr().cast::<u8>();
    // SAFETY: `mem` is 8-aligned, zeroed, at least vring_size(num) bytes, and outlives
    // the ring and both state machines (dropped at the end of this closure).
    let ring = unsafe { Vring::new(base, num) };
    let mut drv = Driver::new(ring);
    let mut dev = Device::new(ring);
    // The model: what the driver has in flight (id → len offered), what the device
    // holds, and what the device returned (id, len) not yet taken back.
    let mut in_flight = vec![false; num];
    let mut held: VecDeque<u16> = VecDeque::new();
    let mut returned: VecDeque<(u16, u32)> = VecDeque::new();
    let mut returned_published = 0usize;
    let mut hostile = false;

    while !d.is_empty() {
        match take_u8(&mut d) % 8 {
            0 => {
                let len = u32::from(take_u8(&mut d));
                if let Some(id) = drv.take_free() {
                    assert!(usize::from(id) < num && !in_flight[usize::from(id)]);
                    drv.add(id, u64::from(id) * 512, len, 0);
                    in_flight[usize::from(id)] = true;
                }
            }
            1 => {
                drv.publish();
            }
            2 => match dev.next_avail() {
                Ok(Some((id, ..))) => {
                    assert!(usize::from(id) < num);
                    held.push_back(id);
                }
                Ok(None) => {}
                Err(Fault::BadIndex) => {
                    assert!(hostile, "avail index jump without a hostile write");
                    return;
                }
                Err(e) => assert!(hostile, "device fault {e} without a hostile write"),
            },
            3 => {
                let len = u32::from(take_u8(&mut d));
                if let Some(id) = held.pop_front() {
                    dev.push_used(id, len);
                    returned.push_back((id, len));
                }
            }
            4 => {
                dev.publish();
                returned_published = returned.len();
            }
            5 => match drv.get_used() {
                Ok(Some((id, len))) => {
                    let i = usize::from(id);
                    assert!(
                        i < num && in_flight[i],
                        "a descriptor not in flight came back"
                    );
                    in_flight[i] = false;
                    drv.put_free(id);
                    if !hostile {
                        assert!(returned_published > 0);
                        assert_eq!(returned.pop_front(), Some((id, len)));
                        returned_published -= 1;
                    }
                }
                Ok(None) => {
                    if !hostile {
                        assert_eq!(returned_published, 0, "a published buffer was not seen");
                    }
                }
                Err(Fault::BadIndex) => {
                    assert!(hostile, "used index jump without a hostile write");
                    return;
                }
                Err(e) => assert!(hostile, "driver fault {e} without a hostile write"),
            },
            6 => {
                let off = usize::from(take_u16(&mut d)) % size;
                let byte = take_u8(&mut d);
                // SAFETY: `off < size` bytes of `mem`; single-threaded, so the plain
                // write races with nothing.
                unsafe { base.add(off).write(byte) };
                hostile = true;
            }
            _ => {
                let id = take_u16(&mut d);
                let len = take_u32(&mut d);
                dev.push_used(id, len);
                hostile = true;
            }
        }
        assert_eq!(drv.in_flight(), in_flight.iter().filter(|&&f| f).count());
        assert!(drv.in_flight() <= num);
    }
    drop(mem);
});
