//! Payload integrity: sequence numbers and checksums stamped by the sender and
//! checked by the receiver (`--verify`).
//!
//! # Message layout with `--verify`
//!
//! ```text
//! offset 0   u64 LE  sequence number, 0, 1, 2, … per channel and run
//! offset 8   u32 LE  CRC-32 (IEEE polynomial, computed by crc32fast) of bytes
//!                    0..8 and 12..len of the message
//! offset 12  u32 LE  message length
//! offset 16  …       payload pattern
//! ```
//!
//! So `--verify` needs messages of at least [`HEADER_LEN`] bytes. The receiver
//! classifies every message: a checksum or length mismatch is *corrupt*; a sequence
//! number above the expected one means the ones in between are *lost* (for now); one
//! below it is *reordered* if it was counted lost before, else *duplicated*.
//!
//! Without `--verify` the sender still writes the sequence number into the first
//! bytes and the receiver still reads them, so every payload is touched at both ends.
//!
//! # Zero-copy mode: how both sides touch a payload
//!
//! With `--zero-copy` the sender writes each message in place in the transport's
//! buffer and the receiver reads it there, so no copy touches the bytes for them. The
//! rule, the same on every transport:
//!
//! * the sender writes **every byte** ([`write_in_place`]): the message is the low
//!   byte of its sequence number, stamped as above; without `--verify` the stamp is
//!   written first and the rest after it, each line once, and with it the header's
//!   CRC-32 covers every byte, so the header is written last;
//! * the receiver, with `--verify`, computes the checksum over every byte
//!   ([`Verifier::check`]); without, it reads **every cache line**: one 8-byte load
//!   per 64 bytes ([`read_lines`]);
//! * a `pingpong` echo copies the request into the reply, in place, so the request is
//!   read and the reply written in full.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Bytes of the verification header.
pub const HEADER_LEN: usize = 16;

/// How many lost sequence numbers are remembered to tell "reordered" from
/// "duplicated"; beyond that, late arrivals count as duplicates.
const MISSING_MEMORY: usize = 65_536;

/// Counters of what the receiver saw.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Integrity {
    /// Messages checked.
    pub checked: u64,
    /// Sequence numbers that never arrived.
    pub lost: u64,
    /// Messages whose sequence number had been seen already.
    pub duplicated: u64,
    /// Messages that arrived after a later one.
    pub reordered: u64,
    /// Messages whose checksum or length did not match.
    pub corrupt: u64,
}

impl Integrity {
    /// True when nothing was lost, duplicated, reordered or corrupt.
    pub fn is_clean(&self) -> bool {
        self.lost == 0 && self.duplicated == 0 && self.reordered == 0 && self.corrupt == 0
    }

    /// Adds another set of counters to this one.
    pub fn add(&mut self, other: &Integrity) {
        self.checked += other.checked;
        self.lost += other.lost;
        self.duplicated += other.duplicated;
        self.reordered += other.reordered;
        self.corrupt += other.corrupt;
    }
}

/// Writes the sender's mark into `msg` for message `seq`.
///
/// With `verify`, the full header (needs `msg.len() >= HEADER_LEN`); without it, the
/// low bytes of `seq` into the first (up to 8) bytes, so the payload is touched.
#[inline]
pub fn stamp(msg: &mut [u8], seq: u64, verify: bool) {
    if verify {
        msg[0..8].copy_from_slice(&seq.to_le_bytes());
        let len = msg.len() as u32;
        msg[12..16].copy_from_slice(&len.to_le_bytes());
        let sum = checksum(msg);
        msg[8..12].copy_from_slice(&sum.to_le_bytes());
    } else if let Some(head) = msg.first_chunk_mut::<8>() {
        // A fixed-size copy is one store; a variable-length one is a memcpy call.
        *head = seq.to_le_bytes();
    } else {
        let n = msg.len();
        msg.copy_from_slice(&seq.to_le_bytes()[..n]);
    }
}

/// Reads the first (up to 8) bytes of a message: the receiver's touch of the payload
/// when not verifying. Returned so the caller can fold it into a sink.
#[inline]
pub fn touch(msg: &[u8]) -> u64 {
    if let Some(head) = msg.first_chunk::<8>() {
        return u64::from_le_bytes(*head);
    }
    let mut b = [0u8; 8];
    b[..msg.len()].copy_from_slice(msg);
    u64::from_le_bytes(b)
}

/// The zero-copy sender's rule: writes every byte of `msg` (the low byte of `seq`),
/// stamped ([`stamp`]).
///
/// Without `verify` the stamp goes first and every other byte after it, each line
/// once, front to back: a receiver that asks for the message's first line while it
/// waits (as `shm`'s consumer does on every turn) could otherwise take that line away
/// between the fill and a stamp written last, which would then have to fetch it back.
/// With `verify` the header's checksum covers the bytes after it, so it is written last.
#[inline]
pub fn write_in_place(msg: &mut [u8], seq: u64, verify: bool) {
    if verify {
        msg.fill(seq as u8);
        stamp(msg, seq, true);
    } else {
        stamp(msg, seq, false);
        if let Some(rest) = msg.get_mut(8..) {
            rest.fill(seq as u8);
        }
    }
}

/// Bytes between two loads of [`read_lines`]: a cache line.
pub const LINE: usize = 64;

/// The zero-copy receiver's rule without `--verify`: one 8-byte load (or fewer, at
/// the end) from every 64-byte line of `msg`, folded into one value for a sink.
///
/// A loop of one load and one `xor` per line: the loads are independent, and the
/// fewer instructions lie between them, the more of them the CPU keeps in flight, which
/// is what a reader of lines another CPU has just written waits on.
#[inline]
pub fn read_lines(msg: &[u8]) -> u64 {
    let (lines, rest) = msg.as_chunks::<LINE>();
    let mut acc = 0u64;
    for line in lines {
        let (head, _) = line.split_first_chunk::<8>().expect("a line holds 8 bytes");
        acc ^= u64::from_le_bytes(*head);
    }
    if rest.is_empty() {
        acc
    } else {
        acc ^ touch(rest)
    }
}

/// Fills a message buffer with a deterministic pattern (before stamping).
pub fn fill_pattern(msg: &mut [u8]) {
    for (i, b) in msg.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(151).wrapping_add(7);
    }
}

#[inline]
fn checksum(msg: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&msg[0..8]);
    h.update(&msg[12..]);
    h.finalize()
}

/// The receiver's bookkeeping for one channel.
#[derive(Debug, Default)]
pub struct Verifier {
    expected: u64,
    missing: BTreeSet<u64>,
    counts: Integrity,
}

impl Verifier {
    /// A verifier expecting sequence number 0 first.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks one received message.
    pub fn check(&mut self, msg: &[u8]) {
        self.counts.checked += 1;
        if msg.len() < HEADER_LEN {
            self.counts.corrupt += 1;
            self.expected = self.expected.saturating_add(1);
            return;
        }
        let seq = u64::from_le_bytes(msg[0..8].try_into().expect("8 bytes"));
        let sum = u32::from_le_bytes(msg[8..12].try_into().expect("4 bytes"));
        let len = u32::from_le_bytes(msg[12..16].try_into().expect("4 bytes"));
        if len as usize != msg.len() || sum != checksum(msg) {
            // The sequence number of a corrupt message cannot be trusted; it used
            // up one slot of the stream.
            self.counts.corrupt += 1;
            self.missing.remove(&self.expected);
            self.expected = self.expected.saturating_add(1);
            return;
        }
        if seq == self.expected {
            self.expected = self.expected.saturating_add(1);
        } else if seq > self.expected {
            let gap = seq - self.expected;
            self.counts.lost += gap;
            for s in self.expected..seq {
                if self.missing.len() >= MISSING_MEMORY {
                    break;
                }
                self.missing.insert(s);
            }
            self.expected = seq.saturating_add(1);
        } else if self.missing.remove(&seq) {
            self.counts.lost -= 1;
            self.counts.reordered += 1;
        } else {
            self.counts.duplicated += 1;
        }
    }

    /// Declares that the sender sent `sent` messages in all; any not yet seen are
    /// lost. Returns the final counters.
    pub fn finish(mut self, sent: Option<u64>) -> Integrity {
        if let Some(sent) = sent
            && sent > self.expected
        {
            self.counts.lost += sent - self.expected;
        }
        self.counts
    }

    /// The sequence number expected next.
    pub fn next_expected(&self) -> u64 {
        self.expected
    }

    /// The counters so far.
    pub fn counts(&self) -> Integrity {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(seq: u64) -> Vec<u8> {
        let mut m = vec![0u8; 64];
        fill_pattern(&mut m);
        stamp(&mut m, seq, true);
        m
    }

    #[test]
    fn zero_copy_writes_every_byte_and_verifies() {
        let mut m = vec![0xAAu8; 200];
        let mut v = Verifier::new();
        write_in_place(&mut m, 0, true);
        assert!(m[HEADER_LEN..].iter().all(|b| *b == 0));
        v.check(&m);
        write_in_place(&mut m, 0x0101, false);
        assert!(m[8..].iter().all(|b| *b == 0x01));
        assert_eq!(m[..8], 0x0101u64.to_le_bytes());
        let mut short = [0xAAu8; 5];
        write_in_place(&mut short, 0x05_0403_0201, false);
        assert_eq!(short, [1, 2, 3, 4, 5]);
        write_in_place(&mut m, 1, true);
        m[199] ^= 1;
        v.check(&m);
        let c = v.finish(Some(2));
        assert_eq!((c.checked, c.corrupt, c.lost), (2, 1, 0));
    }

    #[test]
    fn read_lines_loads_one_word_per_line() {
        let mut m = vec![0u8; 130];
        m[0] = 1;
        m[64] = 2;
        m[128] = 4;
        assert_eq!(read_lines(&m), 7);
        m[8] = 0xFF;
        assert_eq!(read_lines(&m), 7, "only the first word of a line is read");
        assert_eq!(read_lines(&[3]), 3);
        assert_eq!(read_lines(&[]), 0);
        // Every length around a line's edges folds the first word of each line, and of
        // a short last line its bytes.
        let m: Vec<u8> = (0..300u32).map(|i| (i * 37 + 11) as u8).collect();
        for len in [1, 7, 8, 9, 63, 64, 65, 71, 72, 127, 128, 129, 300] {
            let want = m[..len].chunks(LINE).fold(0, |acc, line| acc ^ touch(line));
            assert_eq!(read_lines(&m[..len]), want, "{len} B");
        }
    }

    #[test]
    fn an_in_order_stream_is_clean() {
        let mut v = Verifier::new();
        for s in 0..1000 {
            v.check(&msg(s));
        }
        let c = v.finish(Some(1000));
        assert!(c.is_clean());
        assert_eq!(c.checked, 1000);
    }

    #[test]
    fn every_kind_of_fault_is_counted() {
        let mut v = Verifier::new();
        v.check(&msg(0));
        v.check(&msg(2)); // 1 lost (for now)
        v.check(&msg(1)); // 1 was reordered, not lost
        v.check(&msg(2)); // duplicate
        let mut bad = msg(3);
        bad[40] ^= 0x01; // corrupt payload
        v.check(&bad);
        v.check(&msg(5)); // 4 lost
        let c = v.finish(Some(8)); // 6 and 7 never came
        assert_eq!(
            c,
            Integrity {
                checked: 6,
                lost: 3,
                duplicated: 1,
                reordered: 1,
                corrupt: 1
            }
        );
    }

    #[test]
    fn a_flipped_bit_anywhere_is_corruption() {
        let good = msg(9);
        for byte in 0..good.len() {
            let mut m = good.clone();
            m[byte] ^= 0x10;
            let mut v = Verifier {
                expected: 9,
                ..Default::default()
            };
            v.check(&m);
            assert_eq!(v.counts().corrupt, 1, "flip in byte {byte} went unnoticed");
        }
    }

    proptest::proptest! {
        /// Bytes off the wire are untrusted: any message is classified, none panics,
        /// and every message is counted exactly once.
        #[test]
        fn arbitrary_bytes_never_panic(msgs in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..80), 0..50)) {
            let mut v = Verifier::new();
            for m in &msgs {
                v.check(m);
            }
            let c = v.finish(Some(u64::MAX));
            proptest::prop_assert_eq!(c.checked, msgs.len() as u64);
        }

        /// A stamped message always verifies, whatever its size and sequence number.
        #[test]
        fn stamped_messages_verify(len in HEADER_LEN..5000usize, seq in proptest::num::u64::ANY) {
            let mut m = vec![0u8; len];
            fill_pattern(&mut m);
            stamp(&mut m, seq, true);
            let mut v = Verifier { expected: seq, ..Default::default() };
            v.check(&m);
            proptest::prop_assert!(v.counts().is_clean());
        }
    }

    #[test]
    fn the_largest_sequence_number_does_not_overflow() {
        let mut v = Verifier::new();
        v.check(&msg(u64::MAX));
        v.check(&msg(u64::MAX));
        let c = v.counts();
        assert_eq!((c.checked, c.lost), (2, u64::MAX));
    }

    #[test]
    fn unverified_stamps_touch_short_messages_without_panicking() {
        for len in 1..=16 {
            let mut m = vec![0u8; len];
            stamp(&mut m, 0x0102_0304_0506_0708, false);
            assert_eq!(
                touch(&m).to_le_bytes()[..len.min(8)],
                0x0102_0304_0506_0708u64.to_le_bytes()[..len.min(8)]
            );
        }
    }
}
