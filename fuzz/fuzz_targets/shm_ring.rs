//! The shm ring's index and length handling: a producer and a consumer exchanging a
//! byte stream through a ring control block and a mirrored data buffer (zeroed heap
//! memory standing in for the region), with a hostile party that overwrites the
//! indices each side reads from the other.
//!
//! Each side keeps its own index and reads the other's from the shared line, as
//! `shm::ring` does, and goes through the checks `shm::ring::{readable, writable,
//! span}` before copying.
//!
//! Input: one byte choosing the capacity (4 to 128 bytes, so the indices wrap the
//! ring often), then operations, each an opcode byte and its arguments:
//!
//! | op | what                                                          |
//! |----|---------------------------------------------------------------|
//! | 0  | producer: write up to `n` bytes (`n` byte)                    |
//! | 1  | consumer: read up to `n` bytes (`n` byte)                     |
//! | 2  | hostile: store a `u64` into the shared `head`                 |
//! | 3  | hostile: store a `u64` into the shared `tail`                 |
//!
//! Checked: nothing panics; every copy lies inside the `2 · capacity` bytes of
//! mirrored data (slicing would panic otherwise); an accepted index pair satisfies
//! `tail ≤ head ≤ tail + capacity`; and while nobody was hostile the consumer reads
//! exactly the bytes written, in order, and no index is refused.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::atomic::Ordering;
use xferbench_fuzz::{Shared, take_u8, take_u64};
use xferbench_transports::shm::region::RingControl;
use xferbench_transports::shm::ring::{readable, span, writable};

/// The byte at stream position `pos`.
fn byte_at(pos: u64) -> u8 {
    (pos.wrapping_mul(0x9e37_79b9) >> 7) as u8
}

fuzz_target!(|data: &[u8]| {
    let mut d = data;
    let cap = 4u64 << (take_u8(&mut d) % 6);
    // SAFETY: a RingControl is integers and atomics only: zero bytes are one.
    let ctl = unsafe { Shared::<RingControl>::from_bytes(&[]) };
    let ctl = ctl.get();
    let mut mirror = vec![0u8; 2 * cap as usize];
    let (mut head, mut tail) = (0u64, 0u64);
    let mut hostile = false;

    while !d.is_empty() {
        match take_u8(&mut d) % 4 {
            0 => {
                let n = u64::from(take_u8(&mut d));
                let seen_tail = ctl.cons.0.tail.load(Ordering::Acquire);
                match writable(head, seen_tail, cap) {
                    Ok(free) => {
                        assert!(free <= cap && seen_tail <= head && head - seen_tail <= cap);
                        let k = n.min(free);
                        let r = span(head, k, cap).expect("k is at most the capacity");
                        for (i, at) in r.enumerate() {
                            let b = byte_at(head + i as u64);
                            // Both copies of the mirror hold the byte.
                            let first = at % cap as usize;
                            mirror[first] = b;
                            mirror[first + cap as usize] = b;
                        }
                        head += k;
                        ctl.prod.0.head.store(head, Ordering::Release);
                    }
                    Err(_) => assert!(hostile, "tail {seen_tail} refused without a hostile write"),
                }
            }
            1 => {
                let n = u64::from(take_u8(&mut d));
                let seen_head = ctl.prod.0.head.load(Ordering::Acquire);
                match readable(tail, seen_head, cap) {
                    Ok(avail) => {
                        assert!(avail <= cap && tail <= seen_head && seen_head - tail <= cap);
                        let k = n.min(avail);
                        let r = span(tail, k, cap).expect("k is at most the capacity");
                        let got = &mirror[r];
                        if !hostile {
                            for (i, &b) in got.iter().enumerate() {
                                assert_eq!(
                                    b,
                                    byte_at(tail + i as u64),
                                    "byte {} of the stream",
                                    tail + i as u64
                                );
                            }
                        }
                        tail += k;
                        ctl.cons.0.tail.store(tail, Ordering::Release);
                    }
                    Err(_) => assert!(hostile, "head {seen_head} refused without a hostile write"),
                }
            }
            2 => {
                ctl.prod.0.head.store(take_u64(&mut d), Ordering::Release);
                hostile = true;
            }
            _ => {
                ctl.cons.0.tail.store(take_u64(&mut d), Ordering::Release);
                hostile = true;
            }
        }
    }
});
