//! The digitizer's control block, as the host validates the 32 bytes it `pread`s.
//!
//! Input: the board index (`u32`), the sample count (`u64`) and the last counter
//! read (`u64`) the host expects, then the bytes read (any length).
//!
//! Checked: parsing never panics; an accepted block is exactly 32 bytes with the
//! magic, version, board and sample count expected, no unknown status bits and a
//! counter that did not go back, and the status returned is what the bytes say;
//! and a block laid out from any accepted status parses back to it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xferbench_fuzz::{take_u32, take_u64};
use xferbench_transports::daq::control::{BLOCK_BYTES, MAGIC, STATUS_ARMED, VERSION, parse};

/// The block's bytes (the layout in `daq::control`).
fn block(status: u32, board: u32, acquisitions: u64, samples: u64) -> [u8; BLOCK_BYTES] {
    let mut b = [0u8; BLOCK_BYTES];
    b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    b[4..8].copy_from_slice(&VERSION.to_le_bytes());
    b[8..12].copy_from_slice(&status.to_le_bytes());
    b[12..16].copy_from_slice(&board.to_le_bytes());
    b[16..24].copy_from_slice(&acquisitions.to_le_bytes());
    b[24..32].copy_from_slice(&samples.to_le_bytes());
    b
}

fuzz_target!(|data: &[u8]| {
    let mut d = data;
    let board = take_u32(&mut d);
    let samples = take_u64(&mut d);
    let last = take_u64(&mut d);
    match parse(d, board, samples, last) {
        Ok(s) => {
            assert_eq!(d.len(), BLOCK_BYTES);
            assert_eq!(s.status & !STATUS_ARMED, 0);
            assert!(s.acquisitions >= last);
            assert_eq!(d, &block(s.status, board, s.acquisitions, samples)[..]);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    // Any valid status laid out by the model is accepted as it is.
    let status = board & STATUS_ARMED;
    let acquisitions = last.saturating_add(samples & 0xff);
    let s = parse(
        &block(status, board, acquisitions, samples),
        board,
        samples,
        last,
    )
    .expect("a well-formed block is accepted");
    assert_eq!((s.status, s.acquisitions), (status, acquisitions));
});
