//! Shares of a profile by category: every sampled stack goes to one category, chosen
//! by the symbols on it, so a study can state "x % in synchronisation, y % in the
//! hash table" the way a seed read them off a flame graph.
//!
//! # The rule
//!
//! A stack is read from its leaf towards its root, user-space frames first: the
//! first frame whose name contains a pattern of some category decides (at one frame
//! the categories are tried in table order). A kernel frame (`_[k]`) decides only
//! when no user-space frame matched, so a futex sleep under `sem_timedwait` is
//! semaphore time while one under a channel's `park` is dispatch time. A stack no
//! pattern matches is `other`. The thread-name root frame is never matched.

use super::Folded;
use serde::Serialize;

/// One category of a classification table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Category {
    /// Its key in results (`sync`, `dispatch`, …).
    pub key: &'static str,
    /// What it holds, in words for tables.
    pub label: &'static str,
    /// Substrings of user-space frame names that put a stack in this category.
    pub user: &'static [&'static str],
    /// Substrings of kernel frame names (without the `_[k]` mark) that do, when
    /// no user-space frame matched.
    pub kernel: &'static [&'static str],
}

/// The key of the stacks no category claims.
pub const OTHER: &str = "other";

/// One category's share of a profile.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CategoryShare {
    /// The category's key (`other` for the unclaimed stacks).
    pub category: String,
    /// Its sample weight (CPU nanoseconds for `cpu-clock`).
    pub weight: u64,
    /// `weight` / the profile's total weight.
    pub share: f64,
}

const KERNEL_MARK: &str = "_[k]";

/// The category of one stack (root first, thread-name frame first), or [`OTHER`].
pub fn category_of<'a>(frames: &[String], table: &'a [Category]) -> &'a str {
    let body = if frames.len() > 1 {
        &frames[1..]
    } else {
        frames
    };
    let find = |kernel: bool| {
        body.iter().rev().find_map(|f| {
            let is_kernel = f.ends_with(KERNEL_MARK);
            if is_kernel != kernel {
                return None;
            }
            let name = f.strip_suffix(KERNEL_MARK).unwrap_or(f);
            table.iter().find_map(|c| {
                let pats = if kernel { c.kernel } else { c.user };
                pats.iter().any(|p| name.contains(p)).then_some(c.key)
            })
        })
    };
    find(false).or_else(|| find(true)).unwrap_or(OTHER)
}

/// The share of every category of `table` (in table order, then [`OTHER`]), zero
/// shares included.
pub fn shares(folded: &Folded, table: &[Category]) -> Vec<CategoryShare> {
    let mut weights: Vec<u64> = vec![0; table.len() + 1];
    for (frames, w) in &folded.stacks {
        let key = category_of(frames, table);
        let i = table
            .iter()
            .position(|c| c.key == key)
            .unwrap_or(table.len());
        weights[i] += w;
    }
    let total = folded.total().max(1) as f64;
    table
        .iter()
        .map(|c| c.key)
        .chain([OTHER])
        .zip(weights)
        .map(|(k, w)| CategoryShare {
            category: k.to_string(),
            weight: w,
            share: w as f64 / total,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: [Category; 2] = [
        Category {
            key: "sync",
            label: "semaphores",
            user: &["sem_timedwait", "sem_post"],
            kernel: &["futex"],
        },
        Category {
            key: "dispatch",
            label: "channels",
            user: &["crossbeam_channel::"],
            kernel: &[],
        },
    ];

    #[test]
    fn the_frame_nearest_the_leaf_decides_and_kernel_frames_only_as_a_fallback() {
        let f = Folded::parse(
            "srv;main;input;sem_timedwait;do_futex_[k] 5\n\
             srv;main;worker;crossbeam_channel::recv;std::thread::park;do_futex_[k] 3\n\
             srv;main;worker;serve 1\n\
             srv;[unknown];do_futex_[k] 1\n",
        );
        let s = shares(&f, &TABLE);
        let get = |k: &str| s.iter().find(|c| c.category == k).unwrap().weight;
        assert_eq!((get("sync"), get("dispatch"), get(OTHER)), (6, 3, 1));
        assert_eq!(s.len(), 3);
        assert!((s.iter().map(|c| c.share).sum::<f64>() - 1.0).abs() < 1e-12);
        // The thread-name root is not a frame of the code.
        let root_only = vec!["sem_post".to_string(), "x".to_string()];
        assert_eq!(category_of(&root_only, &TABLE), OTHER);
    }
}
