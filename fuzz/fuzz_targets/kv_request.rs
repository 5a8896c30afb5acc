//! The hash-table request frame (`RequestData`, 84 bytes), as a server reads it from
//! the shared request ring, and the server's handling of it.
//!
//! Input: the frame's bytes (missing bytes are zero, extra bytes ignored).
//!
//! Checked: decoding never panics; the bytes round-trip through the frame; an
//! accepted operation's key is at most 64 bytes and re-encoding the operation gives
//! the same operation; a table serving the request always writes a reply that
//! itself decodes, and an accepted insert is then found by a bucket read of its key.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xferbench_fuzz::take;
use xferbench_transports::kv::table::HashTable;
use xferbench_transports::kv::wire::{
    KEY_CAP, Key, Op, Reply, RequestData, RequestPayload, ResponsePayload,
};

fuzz_target!(|data: &[u8]| {
    let mut d = data;
    let bytes: [u8; RequestData::SIZE] = take(&mut d);
    let req = RequestData::from_bytes(&bytes);
    assert_eq!(req.to_bytes(), bytes);
    let op = req.payload.op();
    let table = HashTable::new(8);
    let mut out = ResponsePayload::default();
    table.serve(&req.payload, &mut out);
    let reply = out.reply().expect("the server's reply decodes");
    let Ok(op) = op else {
        assert_eq!(reply, Reply::NotFound);
        return;
    };
    let rebuilt = match op {
        Op::Insert(k, v) => RequestPayload::insert(key(k), v),
        Op::ReadBucket(k) => RequestPayload::read_bucket(key(k)),
        Op::Delete(k) => RequestPayload::delete(key(k)),
    };
    assert_eq!(rebuilt.op(), Ok(op));
    match op {
        Op::Insert(k, v) => {
            assert_eq!(reply, Reply::Inserted);
            let mut read = ResponsePayload::default();
            table.read_bucket(k, &mut read);
            let Ok(Reply::Bucket(entries)) = read.reply() else {
                panic!("no bucket after an insert")
            };
            assert!(
                entries
                    .iter()
                    .any(|e| e.key.as_bytes() == Ok(k) && e.value == v)
            );
        }
        // An empty table: nothing to delete, and an empty bucket.
        Op::Delete(_) => assert_eq!(reply, Reply::NotFound),
        Op::ReadBucket(_) => assert_eq!(reply, Reply::Bucket(&[])),
    }
});

fn key(k: &[u8]) -> Key {
    assert!(k.len() <= KEY_CAP);
    Key::new(k).expect("an accepted key fits")
}
