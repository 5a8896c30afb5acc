//! The agent's control decoder (`xferbench serve`) on arbitrary bytes: it must
//! return a request or an error, never panic, and a decoded request must survive a
//! round trip through the encoder.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xferbench_lab::remote::protocol::{decode, encode};

fuzz_target!(|data: &[u8]| {
    if let Ok(req) = decode(data) {
        let line = encode(&req);
        assert_eq!(decode(&line).ok(), Some(req));
    }
});
