//! Where the hash-table server's CPU goes, in the seed's words: semaphore or futex
//! wait/post, internal dispatch, the hash table, and the rest; beside them the busy
//! polling of a spinning wait, which the seed's server never does. The `profile`
//! group's points (2 workers, 4 visitors, per architecture) are classified by
//! [`xferbench_probes::profile::classify`] with [`CATEGORIES`]; the shares go into the study's
//! extras as `profile_shares`.
//!
//! # The symbol table
//!
//! | category | what the seed calls it | frames (substrings, nearest the leaf wins) |
//! |---|---|---|
//! | `sync` | "synchronization or waiting for progress (`__new_sem_wait` / `__new_sem_post`)" | glibc's `sem_*` (`sem_wait`, `sem_timedwait`, `sem_clockwait`, `sem_post`, `sem_trywait`, `__new_sem_*`, `__futex_abstimed_wait*`), process-shared `pthread_mutex_*`/`pthread_rwlock_*` and `pthread_cond_*`, our wrappers `kv::sem::`, the futex waits of `shm::wait::`; in the kernel, `futex` frames (only when no user frame matched) |
//! | `spin` | — (the seed's server never spins) | the busy poll before a futex sleep: `kv::sharded::settle` and `shm::wait::spin_until`. It is CPU spent looking for work, not a semaphore or futex operation, so it is a category of its own |
//! | `dispatch` | "internal dispatching of requests from the shared memory to the worker threads, and back" | `crossbeam_channel::`, `crossbeam_utils::`, `std::sync::mpmc::` (the channels between input thread, workers and output thread) |
//! | `hashtable` | "processing requests to the Hash Table (including waiting for locks on the buckets)" | `kv::table::`, SipHash (`core::hash::sip::`, `std::hash::random::`), `alloc::collections::linked_list::` |
//! | `other` | — | everything else: copying frames to and from the shared memory, the workers' loops, the kernel's scheduler, exits |
//!
//! A stack is counted once, in the category of the frame nearest its leaf that
//! matches: a futex sleep under `sem_timedwait` is `sync`, under a channel's
//! `park` it is `dispatch`, under a bucket's `RwLock` inside `kv::table::` it is
//! `hashtable`.

use crate::params::GROUP;
use std::collections::BTreeMap;
use xferbench_lab::result::ResultDoc;
use xferbench_lab::rig::kv::{SERVER, VISITORS, WORKERS};
use xferbench_probes::profile::Folded;
use xferbench_probes::profile::classify::{self, Category, CategoryShare};

/// The categories of the seed's profile reading.
pub const CATEGORIES: [Category; 4] = [
    Category {
        key: "sync",
        label: "semaphore or futex wait/post",
        user: &[
            "sem_wait",
            "sem_timedwait",
            "sem_clockwait",
            "sem_post",
            "sem_trywait",
            "__new_sem",
            "__futex_abstimed_wait",
            "pthread_mutex_",
            "pthread_rwlock_",
            "pthread_cond_",
            "kv::sem::",
            "shm::wait::wait_until",
            "shm::wait::wake",
        ],
        kernel: &["futex"],
    },
    Category {
        key: "spin",
        label: "spinning for work (busy poll before a sleep)",
        user: &["kv::sharded::settle", "shm::wait::spin_until"],
        kernel: &[],
    },
    Category {
        key: "dispatch",
        label: "internal dispatch (channels)",
        user: &[
            "crossbeam_channel::",
            "crossbeam_utils::",
            "std::sync::mpmc::",
        ],
        kernel: &[],
    },
    Category {
        key: "hashtable",
        label: "hash table",
        user: &[
            "kv::table::",
            "core::hash::sip::",
            "std::hash::random::",
            "alloc::collections::linked_list::",
        ],
        kernel: &[],
    },
];

/// The seed's figures for `preopt`: more than 50 % in semaphores, almost all of
/// the rest in dispatch, ~0.7 % in the hash table.
pub const SEED: [(&str, &str); 5] = [
    ("sync", "> 50 %"),
    ("spin", "— (never spins)"),
    ("dispatch", "almost all of the rest (≈ 50 %)"),
    ("hashtable", "≈ 0.7 %"),
    ("other", "—"),
];

/// The shares of one profile.
pub fn shares(folded: &Folded) -> Vec<CategoryShare> {
    classify::shares(folded, &CATEGORIES)
}

/// `profile_shares`: per architecture, the shares of its `profile` point's server
/// profile, with the point and the CPU time sampled. Nothing when the server was
/// not the participant profiled.
pub fn extras(
    doc: &ResultDoc,
    participant: &str,
    profiles: &BTreeMap<usize, Folded>,
) -> BTreeMap<String, serde_json::Value> {
    let mut out = BTreeMap::new();
    if participant != "server" {
        out.insert(
            "profile_shares".into(),
            serde_json::json!({
                "skipped": format!(
                    "the shares are read off the server's profile; this run profiled `{participant}` \
                     (use --profile-peer server)"
                )
            }),
        );
        return out;
    }
    let mut per_arch = serde_json::Map::new();
    for p in doc
        .points
        .iter()
        .filter(|p| p.param(&GROUP) == Some("profile"))
    {
        let (Some(arch), Some(folded)) = (p.param(&SERVER), profiles.get(&p.index)) else {
            continue;
        };
        per_arch.insert(
            arch.to_string(),
            serde_json::json!({
                "point": p.index + 1,
                WORKERS.name(): p.param(&WORKERS),
                VISITORS.name(): p.param(&VISITORS),
                "sampled_cpu_ms": folded.total() as f64 / 1e6,
                "shares": shares(folded),
            }),
        );
    }
    out.insert("profile_shares".into(), serde_json::Value::Object(per_arch));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Folded stacks as `perf script` and inferno give them for the three servers
    /// (abridged names, real shapes).
    const FIXTURE: &str = "\
kv-input;std::sys::pal::unix::thread::Thread::new::thread_start;xferbench_transports::kv::preopt::input;xferbench_transports::kv::sem::Sem::wait;sem_timedwait;__futex_abstimed_wait_common;entry_SYSCALL_64_[k];do_futex_[k] 40
kv-output;xferbench_transports::kv::preopt::output;xferbench_transports::kv::sem::Sem::post;__new_sem_post;syscall_[k] 12
kv-worker;xferbench_transports::kv::preopt::worker;crossbeam_channel::channel::Receiver<T>::recv_timeout;crossbeam_channel::context::Context::wait_until;std::thread::park_timeout;syscall;do_futex_[k] 25
kv-input;xferbench_transports::kv::preopt::input;crossbeam_channel::channel::Sender<T>::send 9
kv-worker;xferbench_transports::kv::preopt::worker;xferbench_transports::kv::table::HashTable::serve;xferbench_transports::kv::table::HashTable::insert;std::sys::sync::rwlock::futex::RwLock::write_contended;syscall;do_futex_[k] 2
kv-worker;xferbench_transports::kv::preopt::worker;xferbench_transports::kv::table::HashTable::serve;core::hash::sip::Hasher<S>::write 1
kv-output;xferbench_transports::kv::preopt::output;__memmove_avx_unaligned_erms 6
kv-w0;xferbench_transports::kv::sharded::worker;xferbench_transports::kv::sharded::settle 3
kv-w0;xferbench_transports::kv::sharded::worker;xferbench_transports::shm::wait::wait_until;syscall;do_futex_[k] 1
kv-w0;[unknown];do_futex_[k] 1
";

    #[test]
    fn the_classifier_puts_each_stack_where_the_seed_would() {
        let folded = Folded::parse(FIXTURE);
        let s = shares(&folded);
        let w = |k: &str| s.iter().find(|c| c.category == k).unwrap().weight;
        // sem wait 40 + sem post 12 + futex wait 1 + a bare futex 1.
        assert_eq!(w("sync"), 54);
        // sharded's spin phase is not a semaphore or futex operation.
        assert_eq!(w("spin"), 3);
        // The worker parked in recv, and the input thread's send.
        assert_eq!(w("dispatch"), 34);
        // A bucket's write lock counts as the table, as the seed counts it.
        assert_eq!(w("hashtable"), 3);
        assert_eq!(w("other"), 6);
        let keys: Vec<&str> = s.iter().map(|c| c.category.as_str()).collect();
        assert_eq!(keys, ["sync", "spin", "dispatch", "hashtable", "other"]);
        assert_eq!(SEED.map(|(k, _)| k), keys.as_slice());
        assert!((s.iter().map(|c| c.share).sum::<f64>() - 1.0).abs() < 1e-9);
    }
}
