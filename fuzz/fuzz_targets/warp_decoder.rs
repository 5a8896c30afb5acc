//! Feeds arbitrary bytes to the Warp Pipe decoder and to the memory mock's
//! connection state machine, the two places that parse untrusted bytes.
//!
//! Run with `cargo +nightly fuzz run warp_decoder` from the repository root.
//! Invariants checked: no panic; a decoded frame never claims more bytes than given;
//! a frame re-encodes to a frame of the same length; the mock never consumes more
//! than it was given.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xferbench_transports::warp::mock::{Device, MockConfig, MockConn};
use xferbench_transports::warp::{CrcKind, Decoder, encode};

fuzz_target!(|data: &[u8]| {
    let mut dec = Decoder::new(CrcKind::Fast);
    let mut at = 0;
    while at < data.len() {
        match dec.decode(&data[at..]) {
            Ok(Some((frame, n))) => {
                assert!(n > 0 && n <= data.len() - at);
                let mut out = Vec::new();
                if encode(&frame, CrcKind::Table, &mut out).is_ok() {
                    assert_eq!(out.len(), frame.encoded_len());
                }
                at += n;
            }
            Ok(None) => break,
            Err(e) => match e.frame_len() {
                Some(n) if n > 0 => at += n,
                _ => break,
            },
        }
    }
    if let Ok(mut dev) = Device::new(&MockConfig::default()) {
        let mut conn = MockConn::new(CrcKind::Fast);
        let mut out = Vec::new();
        let p = conn.process(&mut dev, data, &mut out);
        assert!(p.consumed <= data.len());
    }
});
