//! The messages of every architecture, as they lie in shared memory.
//!
//! The layouts are the original's (`#[repr(C)]`, x86-64): a [`Key`] is an
//! `ArrayString<64>` (a `u32` length and 64 bytes, 68 B), a [`RequestData`] 84 B and a
//! [`ResponseData`] about 2.3 KB, because the original's response enum is fixed-size
//! and carries room for 32 bucket entries even when it says "Inserted".
//!
//! The original declared the payloads as `#[repr(C, u8)]` enums. Reading an enum from
//! memory another process writes is undefined behaviour when the tag is invalid, so
//! here the tag is a plain `u8` and every read goes through a checked accessor
//! ([`RequestPayload::op`], [`ResponsePayload::reply`]): a bad tag, a key length over
//! 64 or an entry count over 32 is a [`WireError`], never a panic or an out-of-bounds
//! read.

/// Longest key, bytes.
pub const KEY_CAP: usize = 64;
/// Most entries a bucket reply carries; a longer bucket gets [`Reply::Overflow`].
pub const BUCKET_CAP: usize = 32;

/// A key: up to [`KEY_CAP`] bytes.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Key {
    len: u32,
    bytes: [u8; KEY_CAP],
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.as_bytes() {
            Ok(b) => write!(f, "{:?}", String::from_utf8_lossy(b)),
            Err(e) => write!(f, "<{e}>"),
        }
    }
}

impl Default for Key {
    fn default() -> Self {
        Key {
            len: 0,
            bytes: [0; KEY_CAP],
        }
    }
}

impl Key {
    /// A key from `bytes`, or `None` when longer than [`KEY_CAP`].
    pub fn new(bytes: &[u8]) -> Option<Key> {
        if bytes.len() > KEY_CAP {
            return None;
        }
        let mut k = Key::default();
        k.bytes[..bytes.len()].copy_from_slice(bytes);
        k.len = bytes.len() as u32;
        Some(k)
    }

    /// The key's bytes, once its length is checked.
    pub fn as_bytes(&self) -> Result<&[u8], WireError> {
        let n = self.len as usize;
        if n > KEY_CAP {
            return Err(WireError::KeyLength(self.len));
        }
        Ok(&self.bytes[..n])
    }
}

/// What is wrong with bytes read from shared memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// A key length over 64.
    #[error("key length {0} over the 64-byte limit")]
    KeyLength(u32),
    /// An unknown request or reply tag.
    #[error("unknown {what} tag {tag}")]
    Tag {
        /// `request` or `reply`.
        what: &'static str,
        /// The tag found.
        tag: u8,
    },
    /// A bucket reply claiming more than 32 entries.
    #[error("bucket reply with {0} entries, more than the 32 a reply holds")]
    BucketLength(u64),
}

/// A request's operation, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    /// Insert or update `key` with `value`.
    Insert(&'a [u8], u32),
    /// Read the bucket `key` falls in.
    ReadBucket(&'a [u8]),
    /// Delete `key`.
    Delete(&'a [u8]),
}

const REQ_INSERT: u8 = 0;
const REQ_READ: u8 = 1;
const REQ_DELETE: u8 = 2;

/// The original's `RequestPayload` (76 B): a tag, a key and a value (used by inserts).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestPayload {
    tag: u8,
    _pad: [u8; 3],
    key: Key,
    value: u32,
}

impl RequestPayload {
    /// `Insert(key, value)`.
    pub fn insert(key: Key, value: u32) -> Self {
        RequestPayload {
            tag: REQ_INSERT,
            _pad: [0; 3],
            key,
            value,
        }
    }
    /// `ReadBucket(key)`.
    pub fn read_bucket(key: Key) -> Self {
        RequestPayload {
            tag: REQ_READ,
            key,
            ..Default::default()
        }
    }
    /// `Delete(key)`.
    pub fn delete(key: Key) -> Self {
        RequestPayload {
            tag: REQ_DELETE,
            key,
            ..Default::default()
        }
    }
    /// The operation, after checking the tag and the key length.
    pub fn op(&self) -> Result<Op<'_>, WireError> {
        let k = self.key.as_bytes()?;
        match self.tag {
            REQ_INSERT => Ok(Op::Insert(k, self.value)),
            REQ_READ => Ok(Op::ReadBucket(k)),
            REQ_DELETE => Ok(Op::Delete(k)),
            tag => Err(WireError::Tag {
                what: "request",
                tag,
            }),
        }
    }
}

/// The original's `RequestData` (84 B).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestData {
    /// The sending client.
    pub client_id: u32,
    /// The client's number for this request.
    pub request_id: u32,
    /// What to do.
    pub payload: RequestPayload,
}

/// A reply, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply<'a> {
    /// The key was inserted (or updated).
    Inserted,
    /// The bucket's entries (at most 32).
    Bucket(&'a [Entry]),
    /// The key was deleted.
    Deleted,
    /// The key was not there.
    NotFound,
    /// The bucket holds more than 32 entries.
    Overflow,
}

/// One bucket entry of a reply.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Entry {
    /// The key.
    pub key: Key,
    /// Its value.
    pub value: u32,
}

const RES_INSERTED: u8 = 0;
const RES_BUCKET: u8 = 1;
const RES_DELETED: u8 = 2;
const RES_NOT_FOUND: u8 = 3;
const RES_OVERFLOW: u8 = 4;

/// The original's `ResponsePayload` (2,320 B whatever the reply).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ResponsePayload {
    tag: u8,
    _pad: [u8; 7],
    len: u64,
    data: [Entry; BUCKET_CAP],
}

impl Default for ResponsePayload {
    fn default() -> Self {
        ResponsePayload {
            tag: RES_NOT_FOUND,
            _pad: [0; 7],
            len: 0,
            data: [Entry::default(); BUCKET_CAP],
        }
    }
}

impl ResponsePayload {
    /// Sets a reply without entries.
    pub fn set_plain(&mut self, reply: Reply<'_>) {
        let (tag, entries) = match reply {
            Reply::Inserted => (RES_INSERTED, &[][..]),
            Reply::Deleted => (RES_DELETED, &[][..]),
            Reply::NotFound => (RES_NOT_FOUND, &[][..]),
            Reply::Overflow => (RES_OVERFLOW, &[][..]),
            Reply::Bucket(e) => (RES_BUCKET, e),
        };
        let n = entries.len().min(BUCKET_CAP);
        self.tag = tag;
        self.len = n as u64;
        self.data[..n].copy_from_slice(&entries[..n]);
    }

    /// Starts a bucket reply; entries are added with [`ResponsePayload::push`].
    pub fn begin_bucket(&mut self) {
        self.tag = RES_BUCKET;
        self.len = 0;
    }

    /// Adds an entry to a bucket reply; past 32 the reply becomes
    /// [`Reply::Overflow`] and `false` is returned.
    pub fn push(&mut self, key: &[u8], value: u32) -> bool {
        let n = self.len as usize;
        if n >= BUCKET_CAP {
            self.tag = RES_OVERFLOW;
            self.len = 0;
            return false;
        }
        self.data[n] = Entry {
            key: Key::new(key).unwrap_or_default(),
            value,
        };
        self.len += 1;
        true
    }

    /// The reply, after checking the tag and the entry count.
    pub fn reply(&self) -> Result<Reply<'_>, WireError> {
        match self.tag {
            RES_INSERTED => Ok(Reply::Inserted),
            RES_DELETED => Ok(Reply::Deleted),
            RES_NOT_FOUND => Ok(Reply::NotFound),
            RES_OVERFLOW => Ok(Reply::Overflow),
            RES_BUCKET => {
                if self.len > BUCKET_CAP as u64 {
                    return Err(WireError::BucketLength(self.len));
                }
                Ok(Reply::Bucket(&self.data[..self.len as usize]))
            }
            tag => Err(WireError::Tag { what: "reply", tag }),
        }
    }

    /// Bytes of this payload that carry information: the tag, the length and the
    /// entries in use (what a compact copy must move).
    pub fn used_len(&self) -> usize {
        let n = if self.tag == RES_BUCKET {
            (self.len as usize).min(BUCKET_CAP)
        } else {
            0
        };
        std::mem::offset_of!(ResponsePayload, data) + n * std::mem::size_of::<Entry>()
    }
}

/// The original's `ResponseData` (2,328 B).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponseData {
    /// The client the reply is for.
    pub client_id: u32,
    /// The request it answers.
    pub request_id: u32,
    /// The reply.
    pub payload: ResponsePayload,
}

impl ResponseData {
    /// Bytes from the start that carry information (see [`ResponsePayload::used_len`]).
    pub fn used_len(&self) -> usize {
        std::mem::offset_of!(ResponseData, payload) + self.payload.used_len()
    }
}

// Each frame's size is the sum of its fields' sizes: no padding, so every byte of a
// frame is a field byte and every bit pattern is a valid frame (integers and byte
// arrays only), which is what makes the byte conversions below sound.
const _: () = assert!(std::mem::size_of::<Key>() == 4 + KEY_CAP);
const _: () = assert!(std::mem::size_of::<RequestPayload>() == 1 + 3 + 68 + 4);
const _: () = assert!(std::mem::size_of::<RequestData>() == 4 + 4 + 76);
const _: () = assert!(std::mem::size_of::<Entry>() == 68 + 4);
const _: () = assert!(std::mem::size_of::<ResponsePayload>() == 1 + 7 + 8 + 72 * BUCKET_CAP);
const _: () = assert!(std::mem::size_of::<ResponseData>() == 4 + 4 + 2320);

/// Byte conversions of a frame, as it lies in shared memory.
macro_rules! frame_bytes {
    ($t:ty) => {
        impl $t {
            /// Bytes of the frame in shared memory.
            pub const SIZE: usize = std::mem::size_of::<$t>();

            /// The frame held by `bytes`, as a side reading it from shared memory sees
            /// it. Any bytes are a frame; its contents are checked by the accessors.
            pub fn from_bytes(bytes: &[u8; Self::SIZE]) -> $t {
                // SAFETY: the frame is `repr(C)` of integers and byte arrays without
                // padding (asserted above), so any bit pattern is a valid value;
                // `read_unaligned` copes with the byte array's alignment.
                unsafe { bytes.as_ptr().cast::<$t>().read_unaligned() }
            }

            /// The frame's bytes, as written to shared memory.
            pub fn to_bytes(&self) -> [u8; Self::SIZE] {
                let mut b = [0u8; Self::SIZE];
                // SAFETY: a frame has no padding (asserted above), so all its
                // `SIZE` bytes are initialised; the two do not overlap.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        (self as *const $t).cast::<u8>(),
                        b.as_mut_ptr(),
                        Self::SIZE,
                    );
                }
                b
            }
        }
    };
}
frame_bytes!(RequestData);
frame_bytes!(ResponseData);

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    #[test]
    fn the_layouts_have_the_original_sizes() {
        assert_eq!(size_of::<Key>(), 68);
        assert_eq!(size_of::<RequestPayload>(), 76);
        assert_eq!(size_of::<RequestData>(), 84);
        assert_eq!(size_of::<Entry>(), 72);
        assert_eq!(size_of::<ResponsePayload>(), 2320);
        assert_eq!(size_of::<ResponseData>(), 2328);
    }

    #[test]
    fn bad_bytes_are_errors_not_panics() {
        let mut k = Key::new(b"abc").unwrap();
        assert_eq!(k.as_bytes().unwrap(), b"abc");
        k.len = 65;
        assert_eq!(k.as_bytes(), Err(WireError::KeyLength(65)));
        assert!(Key::new(&[0; 65]).is_none());
        let mut r = RequestPayload::insert(Key::new(b"k").unwrap(), 7);
        assert_eq!(r.op(), Ok(Op::Insert(b"k", 7)));
        r.tag = 9;
        assert!(r.op().unwrap_err().to_string().contains("tag 9"));
        let mut p = ResponsePayload::default();
        p.begin_bucket();
        assert!(p.push(b"a", 1));
        assert_eq!(p.reply().unwrap(), Reply::Bucket(&[p.data[0]]));
        p.len = 33;
        assert_eq!(p.reply(), Err(WireError::BucketLength(33)));
        p.tag = 200;
        assert!(p.reply().is_err());
    }

    #[test]
    fn a_bucket_past_32_entries_overflows() {
        let mut p = ResponsePayload::default();
        p.begin_bucket();
        for i in 0..32 {
            assert!(p.push(format!("k{i}").as_bytes(), i));
        }
        assert!(!p.push(b"k32", 32));
        assert_eq!(p.reply(), Ok(Reply::Overflow));
        assert_eq!(p.used_len(), 16);
    }

    #[test]
    fn frames_round_trip_through_their_bytes() {
        let req = RequestData {
            client_id: 3,
            request_id: 9,
            payload: RequestPayload::insert(Key::new(b"key").unwrap(), 42),
        };
        let back = RequestData::from_bytes(&req.to_bytes());
        assert_eq!((back.client_id, back.request_id), (3, 9));
        assert_eq!(back.payload.op(), Ok(Op::Insert(b"key", 42)));
        let mut res = ResponseData {
            client_id: 3,
            request_id: 9,
            ..ResponseData::default()
        };
        res.payload.begin_bucket();
        assert!(res.payload.push(b"key", 42));
        let back = ResponseData::from_bytes(&res.to_bytes());
        assert_eq!(back.to_bytes(), res.to_bytes());
        assert_eq!(back.payload.reply(), res.payload.reply());
    }
}
