//! The server profile's shares (`--profile`), beside the seed's reading of its
//! flame graph: semaphore or futex wait/post, internal dispatch, the hash table.

use crate::hashtable::profile::{CATEGORIES, SEED};
use std::fmt::Write as _;
use xferbench_lab::result::ResultDoc;
use xferbench_report::study::Table;

/// The architectures' names, in the order of their one definition.
pub(super) fn arches() -> [&'static str; 3] {
    xferbench_transports::kv::Arch::ALL.map(xferbench_transports::kv::Arch::name)
}

fn shares(doc: &ResultDoc) -> Option<&serde_json::Value> {
    doc.study.as_ref()?.extras.get("profile_shares")
}

fn label(key: &str) -> &str {
    CATEGORIES
        .iter()
        .find(|c| c.key == key)
        .map_or("other", |c| c.label)
}

/// The share of `key` for `arch`, as a fraction.
pub fn share(doc: &ResultDoc, arch: &str, key: &str) -> Option<f64> {
    shares(doc)?
        .get(arch)?
        .get("shares")?
        .as_array()?
        .iter()
        .find(|c| c["category"] == key)?
        .get("share")?
        .as_f64()
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1} %", v * 100.0))
}

/// One row per category: the seed's figure, then each architecture's share; `None`
/// when the run was not profiled.
pub fn table(doc: &ResultDoc) -> Option<Table> {
    let s = shares(doc)?;
    if s.get("skipped").is_some() {
        return None;
    }
    let mut headers = vec!["category".to_string(), "seed (preopt)".to_string()];
    headers.extend(arches().iter().map(|a| format!("{a} here")));
    let rows = SEED
        .iter()
        .map(|(key, seed)| {
            let mut row = vec![format!("{} (`{key}`)", label(key)), seed.to_string()];
            row.extend(arches().iter().map(|a| pct(share(doc, a, key))));
            row
        })
        .collect();
    Some(Table {
        title: "Server CPU by category at 2 workers, 4 visitors (share of the profile's samples)"
            .into(),
        headers,
        rows,
    })
}

/// The summary's profile section.
pub fn summary(s: &mut String, doc: &ResultDoc) {
    s.push_str(
        "## Where the time goes (the seed's profile)\n\n\
         The seed found more than 50 % of the server's cycles in `__new_sem_wait`/`__new_sem_post`, almost all of \
         the rest in the internal dispatching (crossbeam channels between the input thread, the workers and the \
         output thread), and ~0.7 % in the hash table. `--profile=DIR` records the server of every point; the \
         `profile` group is the seed's shape (2 workers, 4 visitors), and its stacks are sorted into those \
         categories by their symbols (the table is in docs/studies/hashtable.md).\n\n",
    );
    match shares(doc) {
        None => s.push_str("This run was not profiled (run with `--profile`).\n"),
        Some(v) if v.get("skipped").is_some() => {
            let _ = writeln!(s, "No shares: {}.", v["skipped"].as_str().unwrap_or("-"));
        }
        Some(v) => {
            for a in arches() {
                let Some(p) = v.get(a) else {
                    let _ = writeln!(s, "- **{a}**: not profiled (its profile point is missing).");
                    continue;
                };
                if p["sampled_cpu_ms"].as_f64().unwrap_or(0.0) <= 0.0 {
                    let _ = writeln!(
                        s,
                        "- **{a}** (point {}): no samples (the server ran before `perf record` was attached,                          or not at all).",
                        p["point"]
                    );
                    continue;
                }
                let parts: Vec<String> = SEED
                    .iter()
                    .map(|(key, seed)| {
                        format!("{} {} (seed {seed})", label(key), pct(share(doc, a, key)))
                    })
                    .collect();
                let _ = writeln!(
                    s,
                    "- **{a}** (point {}, {:.0} ms of server CPU sampled): {}.",
                    p["point"],
                    p["sampled_cpu_ms"].as_f64().unwrap_or(0.0),
                    parts.join("; ")
                );
            }
        }
    }
}
