//! Folded stacks: `perf script` output collapsed by `inferno`, and the
//! self/total share of each function.

use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

/// Distinct stacks with their weights; frames are root first, the first frame
/// being the thread's command name (as `perf script` prints it). inferno weighs each
/// sample by its event period, so for `cpu-clock` a weight is CPU nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Folded {
    /// `(frames, weight)`, in the order inferno wrote them (sorted by stack).
    pub stacks: Vec<(Vec<String>, u64)>,
}

/// One function's share of the samples.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FunctionShare {
    /// Function (frame) name.
    pub name: String,
    /// Weight of the samples in which it was the leaf (running itself).
    pub self_samples: u64,
    /// Weight of the samples in which it was on the stack at all (once per sample).
    pub total_samples: u64,
    /// `self_samples` / total weight.
    pub self_share: f64,
    /// `total_samples` / total weight.
    pub total_share: f64,
}

/// Collapses `perf script` output (stacks of any event) into folded stacks.
pub fn collapse_perf_script(script: &[u8]) -> std::io::Result<Folded> {
    use inferno::collapse::Collapse;
    let mut opts = inferno::collapse::perf::Options::default();
    // Kernel frames get `_[k]`, so they stand out in tables and flame graphs.
    opts.annotate_kernel = true;
    opts.nthreads = 1;
    // `;` separates frames in folded stacks, but demangled Rust names can hold one
    // (`[u8; 4]`): make it a comma first.
    let script: Vec<u8> = script
        .iter()
        .map(|&b| if b == b';' { b',' } else { b })
        .collect();
    let mut out = Vec::new();
    inferno::collapse::perf::Folder::from(opts).collapse(script.as_slice(), &mut out)?;
    Ok(Folded::parse(&String::from_utf8_lossy(&out)))
}

impl Folded {
    /// Parses folded lines (`a;b;c 12`); malformed lines are skipped.
    pub fn parse(text: &str) -> Folded {
        let stacks = text
            .lines()
            .filter_map(|l| {
                let (stack, n) = l.trim_end().rsplit_once(' ')?;
                let n: u64 = n.parse().ok()?;
                let frames: Vec<String> = stack.split(';').map(str::to_string).collect();
                (!stack.is_empty() && n > 0).then_some((frames, n))
            })
            .collect();
        Folded { stacks }
    }

    /// The folded lines, as inferno's flame graph reads them.
    pub fn lines(&self) -> Vec<String> {
        self.stacks
            .iter()
            .map(|(f, n)| format!("{} {n}", f.join(";")))
            .collect()
    }

    /// The sum of the weights (CPU nanoseconds for `cpu-clock`).
    pub fn total(&self) -> u64 {
        self.stacks.iter().map(|(_, n)| n).sum()
    }

    /// Every function with its self and total share, by self share, then total
    /// share, descending (ties by name): the functions that burn the CPU first.
    /// The thread-name root frame is left out.
    pub fn top_functions(&self) -> Vec<FunctionShare> {
        let total = self.total().max(1) as f64;
        let mut by: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
        for (frames, n) in &self.stacks {
            let body = if frames.len() > 1 {
                &frames[1..]
            } else {
                &frames[..]
            };
            let mut seen = HashSet::new();
            for f in body {
                if seen.insert(f.as_str()) {
                    by.entry(f).or_default().1 += n;
                }
            }
            if let Some(leaf) = body.last() {
                by.entry(leaf).or_default().0 += n;
            }
        }
        let mut v: Vec<FunctionShare> = by
            .into_iter()
            .map(|(name, (s, t))| FunctionShare {
                name: name.to_string(),
                self_samples: s,
                total_samples: t,
                self_share: s as f64 / total,
                total_share: t as f64 / total,
            })
            .collect();
        v.sort_by(|a, b| {
            b.self_samples
                .cmp(&a.self_samples)
                .then(b.total_samples.cmp(&a.total_samples))
                .then(a.name.cmp(&b.name))
        });
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_and_total_shares_count_recursion_once() {
        let f = Folded::parse("t;main;a;b 3\nt;main;a 1\nt;main;r;r 4\nbad line\n");
        assert_eq!(f.total(), 8);
        let top = f.top_functions();
        let get = |n: &str| top.iter().find(|s| s.name == n).unwrap();
        assert_eq!(get("main").total_samples, 8);
        assert_eq!(get("main").self_samples, 0);
        assert_eq!(get("a").total_samples, 4);
        assert_eq!(get("a").self_samples, 1);
        assert_eq!(
            get("r").total_samples,
            4,
            "recursion counted once per sample"
        );
        assert_eq!(get("r").self_samples, 4);
        assert_eq!(top[0].name, "r", "most self weight first");
        assert!((get("b").self_share - 3.0 / 8.0).abs() < 1e-12);
        assert!(top.iter().all(|s| s.name != "t"));
    }
}
