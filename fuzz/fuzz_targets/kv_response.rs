//! The hash-table response frame (`ResponseData`, 2,328 bytes), as a client reads it
//! from shared memory, including the compact copy the sharded server's clients make
//! (only the bytes `used_len` says carry information).
//!
//! Input: the frame's bytes (missing bytes are zero, extra bytes ignored).
//!
//! Checked: decoding never panics; the bytes round-trip through the frame; a bucket
//! reply has at most 32 entries; `used_len` never exceeds the frame; and a copy of
//! only the used bytes into a fresh frame decodes to the same reply (or error).

#![no_main]

use libfuzzer_sys::fuzz_target;
use xferbench_fuzz::take;
use xferbench_transports::kv::wire::{BUCKET_CAP, KEY_CAP, Reply, ResponseData};

fuzz_target!(|data: &[u8]| {
    let mut d = data;
    let bytes: [u8; ResponseData::SIZE] = take(&mut d);
    let res = ResponseData::from_bytes(&bytes);
    assert_eq!(res.to_bytes(), bytes);
    let reply = res.payload.reply();
    if let Ok(Reply::Bucket(entries)) = reply {
        assert!(entries.len() <= BUCKET_CAP);
        for e in entries {
            if let Ok(k) = e.key.as_bytes() {
                assert!(k.len() <= KEY_CAP);
            }
        }
    }
    let used = res.used_len();
    assert!(used <= ResponseData::SIZE);
    let mut compact = ResponseData::default().to_bytes();
    compact[..used].copy_from_slice(&bytes[..used]);
    let copy = ResponseData::from_bytes(&compact);
    assert_eq!(copy.payload.reply(), reply);
    assert_eq!(
        (copy.client_id, copy.request_id),
        (res.client_id, res.request_id)
    );
});
