//! The server's hash table, as the original: `size` buckets, each an
//! `RwLock<LinkedList>` of (key, value) nodes, indexed by SipHash-1-3 (std's
//! `RandomState`) modulo `size`.

use super::wire::{Key, Reply, ResponsePayload};
use std::collections::LinkedList;
use std::hash::{BuildHasher, RandomState};
use std::sync::RwLock;

/// One node: the key as the original's `ArrayString<64>` and a `u32` value.
#[derive(Debug, Clone, Copy)]
struct Node {
    key: Key,
    value: u32,
}

/// The table.
#[derive(Debug)]
pub struct HashTable {
    buckets: Vec<RwLock<LinkedList<Node>>>,
    hasher: RandomState,
}

impl HashTable {
    /// A table of `size` buckets (at least 1).
    pub fn new(size: usize) -> HashTable {
        HashTable {
            buckets: (0..size.max(1))
                .map(|_| RwLock::new(LinkedList::new()))
                .collect(),
            hasher: RandomState::new(),
        }
    }

    /// Buckets.
    pub fn size(&self) -> usize {
        self.buckets.len()
    }

    fn bucket(&self, key: &[u8]) -> &RwLock<LinkedList<Node>> {
        let h = self.hasher.hash_one(key);
        &self.buckets[(h % self.buckets.len() as u64) as usize]
    }

    /// Inserts `key` (updating it when present).
    pub fn insert(&self, key: &[u8], value: u32) -> Reply<'static> {
        let Some(k) = Key::new(key) else {
            return Reply::NotFound;
        };
        let mut b = self.bucket(key).write().unwrap_or_else(|e| e.into_inner());
        match b.iter_mut().find(|n| n.key == k) {
            Some(n) => n.value = value,
            None => b.push_front(Node { key: k, value }),
        }
        Reply::Inserted
    }

    /// Writes the bucket of `key` into `out` (or [`Reply::Overflow`] past 32 entries).
    pub fn read_bucket(&self, key: &[u8], out: &mut ResponsePayload) {
        let b = self.bucket(key).read().unwrap_or_else(|e| e.into_inner());
        out.begin_bucket();
        for n in b.iter() {
            let k = n.key.as_bytes().unwrap_or_default();
            if !out.push(k, n.value) {
                break;
            }
        }
    }

    /// Removes `key`.
    pub fn remove(&self, key: &[u8]) -> Reply<'static> {
        let Some(k) = Key::new(key) else {
            return Reply::NotFound;
        };
        let mut b = self.bucket(key).write().unwrap_or_else(|e| e.into_inner());
        match b.iter().position(|n| n.key == k) {
            Some(i) => {
                let mut tail = b.split_off(i);
                tail.pop_front();
                b.append(&mut tail);
                Reply::Deleted
            }
            None => Reply::NotFound,
        }
    }

    /// Serves one request into `out`; a request that fails its checks gets
    /// [`Reply::NotFound`] (the client then counts a mismatch).
    pub fn serve(&self, req: &super::wire::RequestPayload, out: &mut ResponsePayload) {
        use super::wire::Op;
        match req.op() {
            Ok(Op::Insert(k, v)) => out.set_plain(self.insert(k, v)),
            Ok(Op::ReadBucket(k)) => self.read_bucket(k, out),
            Ok(Op::Delete(k)) => out.set_plain(self.remove(k)),
            Err(_) => out.set_plain(Reply::NotFound),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_read_delete() {
        let t = HashTable::new(10);
        assert_eq!(t.insert(b"a", 1), Reply::Inserted);
        assert_eq!(t.insert(b"a", 2), Reply::Inserted);
        let mut out = ResponsePayload::default();
        t.read_bucket(b"a", &mut out);
        let Ok(Reply::Bucket(e)) = out.reply() else {
            panic!()
        };
        assert!(
            e.iter()
                .any(|e| e.key.as_bytes() == Ok(b"a") && e.value == 2)
        );
        assert_eq!(t.remove(b"a"), Reply::Deleted);
        assert_eq!(t.remove(b"a"), Reply::NotFound);
    }

    #[test]
    fn a_bucket_of_more_than_32_overflows() {
        let t = HashTable::new(1);
        for i in 0..33u32 {
            t.insert(format!("k{i}").as_bytes(), i);
        }
        let mut out = ResponsePayload::default();
        t.read_bucket(b"k0", &mut out);
        assert_eq!(out.reply(), Ok(Reply::Overflow));
    }
}
