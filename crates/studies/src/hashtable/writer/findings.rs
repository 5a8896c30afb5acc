//! The seed's findings on `preopt`, each computed from the document: its seven
//! summary lines (S1–S7) by direction, the collapse once visitors join, and its
//! reading of the server's profile. A line with more than one worker thread needs a
//! CPU per worker to be judged; on fewer its figures measure the machine's CPUs.

use super::cases::{CASES, SEED_RATIOS, SENTENCES, find, sentence};
use super::profile::share;
use crate::finding::{Finding, cpu_limit};
use crate::folder::param;
use xferbench_lab::result::{PointResult, ResultDoc};
use xferbench_lab::rig::kv::{VISITORS, WORKERS};

/// A ratio within this fraction of 1 is neither faster nor slower.
pub const SAME_WITHIN: f64 = 0.05;

/// Clients "collapse" once visitors join when one client alone is at least this many
/// times faster than with 16 visitors (S4).
pub const COLLAPSE_AT_LEAST: f64 = 10.0;

/// The seed's "more than 50 %" of the server's cycles in synchronisation.
pub const SYNC_MORE_THAN: f64 = 0.5;

/// The seed's "~0.7 %" in the hash table: a share below this is as small.
pub const HASHTABLE_BELOW: f64 = 0.05;

/// Of the cycles outside synchronisation, "almost all" in the dispatching: at least
/// this share of them.
pub const DISPATCH_OF_REST: f64 = 0.8;

/// The seed's words on some lines, quoted beside them.
const QUOTES: [(usize, &str); 3] = [
    (
        1,
        "\"the overhead for dispatching requests to the worker threads is significant\"",
    ),
    (
        3,
        "\"as soon as multiple threads join the session, all clients experience severe \
         performance degradation\"",
    ),
    (5, "\"multithreading does not help\""),
];

fn word(x: f64) -> &'static str {
    if x >= 1.0 { "faster" } else { "slower" }
}

/// Line `i` (S1–S7) of `preopt`: our ratio `ours` against the seed's, by direction;
/// S4 also by size (the collapse), which must exceed what `shared` client processes
/// time-sharing `cpus` CPUs would explain on their own; `limit` when the line cannot
/// be judged here.
pub fn line_finding(
    i: usize,
    ours: f64,
    (shared, cpus): (usize, usize),
    limit: Option<String>,
) -> Finding {
    let (label, a, b) = SENTENCES[i];
    let seed = SEED_RATIOS[0][i];
    let quote = QUOTES
        .iter()
        .find(|q| q.0 == i)
        .map_or(String::new(), |q| format!("; {}", q.1));
    let statement = format!(
        "{label}, {} is {} than {}: {seed:.2}x{quote}.",
        CASES[a].1,
        word(seed),
        CASES[b].1
    );
    let collapse = i == 3;
    let (condition, ok) = if collapse {
        let timeshare = shared as f64 / cpus.max(1) as f64;
        let at_least = COLLAPSE_AT_LEAST.max(timeshare);
        (
            format!(
                "at least {COLLAPSE_AT_LEAST}× faster alone, and more than the {timeshare:.1}× \
                 that {shared} client processes sharing {cpus} CPUs would explain"
            ),
            ours >= at_least && ours > timeshare,
        )
    } else if seed >= 1.0 {
        (
            format!("{} by more than {:.0} %", word(seed), SAME_WITHIN * 100.0),
            ours > 1.0 + SAME_WITHIN,
        )
    } else {
        (
            format!("{} by more than {:.0} %", word(seed), SAME_WITHIN * 100.0),
            ours < 1.0 - SAME_WITHIN,
        )
    };
    Finding::judged(
        statement,
        format!(
            "`preopt`, {} is {} than {}: {ours:.2}x (condition: {condition})",
            CASES[a].1,
            word(ours),
            CASES[b].1
        ),
        ok,
    )
    .unless(limit)
}

/// The worker threads of a case's point, as the study asked for them.
fn workers(p: &PointResult) -> usize {
    param(p, WORKERS.name()).parse().unwrap_or(1)
}

/// The visitors of a case's point.
fn visitors(p: &PointResult) -> usize {
    param(p, VISITORS.name()).parse().unwrap_or(0)
}

/// The shares of `preopt`'s server profile the seed read, by category: synchronisation,
/// dispatching and the hash table; `None` when the run was not profiled.
pub fn profile_findings(shares: Option<(f64, f64, f64)>) -> Vec<Finding> {
    let seeds = [
        "\"more than 50% of CPU cycles are spent on communication with the clients over shared \
         memory, most of it on synchronization or waiting for progress (__new_sem_wait / \
         __new_sem_post)\".",
        "\"of the remaining 50%, almost all of the cycles are spent on internal dispatching of \
         requests from the shared memory to the worker threads, and back\".",
        "\"only ~0.7% of cycles are actually spent on processing requests to the Hash Table\".",
    ];
    let Some((sync, dispatch, table)) = shares else {
        return seeds
            .iter()
            .map(|s| {
                Finding::cannot(
                    *s,
                    "no profile of the server",
                    "this run was not profiled (`xferbench study hashtable --profile=DIR` \
                     profiles it)",
                )
            })
            .collect();
    };
    let rest = (1.0 - sync).max(f64::MIN_POSITIVE);
    vec![
        Finding::judged(
            seeds[0],
            format!(
                "`preopt`'s server, semaphore or futex wait/post: {:.1} % of the samples \
                 (condition: more than {:.0} %)",
                sync * 100.0,
                SYNC_MORE_THAN * 100.0
            ),
            sync > SYNC_MORE_THAN,
        ),
        Finding::judged(
            seeds[1],
            format!(
                "internal dispatch (channels): {:.1} % of the samples, {:.0} % of those outside \
                 synchronisation (condition: at least {:.0} % of them)",
                dispatch * 100.0,
                dispatch / rest * 100.0,
                DISPATCH_OF_REST * 100.0
            ),
            dispatch / rest >= DISPATCH_OF_REST,
        ),
        Finding::judged(
            seeds[2],
            format!(
                "the hash table: {:.1} % of the samples (condition: below {:.0} %)",
                table * 100.0,
                HASHTABLE_BELOW * 100.0
            ),
            table < HASHTABLE_BELOW,
        ),
    ]
}

/// The seed's findings, each computed on this run's figures.
pub fn findings(doc: &ResultDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, (_, a, b)) in SENTENCES.iter().enumerate() {
        let (Some((_, ours)), Some(pa), Some(pb)) = (
            sentence(doc, "preopt", i),
            find(doc, "cases", CASES[*a].0, "preopt"),
            find(doc, "cases", CASES[*b].0, "preopt"),
        ) else {
            continue;
        };
        // A line with more worker threads than one needs a CPU per worker. S4's
        // condition sets the collapse against its clients time-sharing the CPUs, so the
        // visitors' point being `cpu-bound` is its premise, not a limit: only the lone
        // client's point must not be.
        let needed = workers(pa).max(workers(pb));
        let judged: &[&PointResult] = if i == 3 { &[pa] } else { &[pa, pb] };
        let limit = cpu_limit(
            doc,
            judged,
            needed,
            &format!("{needed} worker threads, a CPU each"),
        );
        let clients = 1 + visitors(pa).max(visitors(pb));
        out.push(line_finding(i, ours, (clients, doc.context.cores), limit));
    }
    let sh = |k| share(doc, "preopt", k);
    let shares = match (sh("sync"), sh("dispatch"), sh("hashtable")) {
        (Some(s), Some(d), Some(h)) => Some((s, d, h)),
        _ => None,
    };
    out.extend(profile_findings(shares));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Verdict;

    #[test]
    fn a_line_holds_in_the_seeds_direction_beyond_the_noise() {
        // S1: the seed's "slower: 0.89x".
        assert_eq!(line_finding(0, 0.83, ONE, None).verdict, Verdict::Holds);
        assert_eq!(
            line_finding(0, 0.97, ONE, None).verdict,
            Verdict::DoesNotHold
        );
        assert_eq!(
            line_finding(0, 1.2, ONE, None).verdict,
            Verdict::DoesNotHold
        );
        // S3: the seed's "faster: 1.64x".
        assert_eq!(line_finding(2, 2.73, ONE, None).verdict, Verdict::Holds);
        assert_eq!(
            line_finding(2, 0.9, ONE, None).verdict,
            Verdict::DoesNotHold
        );
        // S7: the seed's "slower: 0.89x"; ours "faster: 1.03x".
        let f = line_finding(6, 1.03, ONE, None);
        assert_eq!(f.verdict, Verdict::DoesNotHold, "{}", f.line());
        assert!(
            f.seed
                .starts_with("S7, 16 visitors at 16 threads is slower"),
            "{}",
            f.seed
        );
        assert!(
            f.figures
                .contains("faster than 16 visitors at 1 thread: 1.03x")
        );
    }

    /// One client process on a machine with a CPU to spare.
    const ONE: (usize, usize) = (1, 2);

    #[test]
    fn the_collapse_needs_ten_times_and_more_than_time_sharing_explains() {
        assert_eq!(
            line_finding(3, 123.7, (17, 2), None).verdict,
            Verdict::Holds
        );
        assert_eq!(
            line_finding(3, 3.0, ONE, None).verdict,
            Verdict::DoesNotHold
        );
        assert!(line_finding(3, 3.0, ONE, None).seed.contains("severe"));
        // 17 processes on one CPU: 12× is what sharing it explains.
        let f = line_finding(3, 12.0, (17, 1), None);
        assert_eq!(f.verdict, Verdict::DoesNotHold, "{}", f.line());
        assert!(f.figures.contains("17.0×"), "{}", f.figures);
        assert_eq!(
            line_finding(3, 12.0, (17, 64), None).verdict,
            Verdict::Holds
        );
    }

    #[test]
    fn profile_findings_need_a_profile() {
        let f = profile_findings(None);
        assert_eq!(f.len(), 3);
        assert!(f.iter().all(Finding::cannot_be_judged));
        let f = profile_findings(Some((0.534, 0.422, 0.015)));
        assert!(f.iter().all(Finding::holds), "{f:?}");
        let f = profile_findings(Some((0.3, 0.1, 0.2)));
        assert!(f.iter().all(|f| f.verdict == Verdict::DoesNotHold), "{f:?}");
    }

    #[test]
    fn lines_that_compare_worker_counts_need_a_cpu_per_worker() {
        let mut doc = super::super::tests::doc();
        doc.context.cores = 2;
        let f = findings(&doc);
        let by = |l: &str| f.iter().find(|f| f.seed.starts_with(l)).cloned();
        // S1 runs 16 workers; S3 one.
        let s1 = by("S1,").expect("S1 in the fixture");
        assert!(s1.cannot_be_judged(), "{}", s1.line());
        assert!(s1.line().contains("needs 16 CPUs"), "{}", s1.line());
        let s3 = by("S3,").expect("S3 in the fixture");
        assert!(!s3.cannot_be_judged(), "{}", s3.line());
        // S4 is judged though its 16 visitors' point is cpu-bound, as they must be on
        // 2 CPUs: its condition already sets the collapse against time-sharing. S6, by
        // contrast, needs 16 CPUs for its workers.
        let bound = |doc: &mut ResultDoc, case: &str| {
            for p in doc.points.iter_mut().filter(|p| {
                p.params.get("case").map(String::as_str) == Some(case)
                    && p.params.get("arch").map(String::as_str) == Some("preopt")
            }) {
                p.warnings.push(format!(
                    "{} 17.0 of its threads",
                    xferbench_lab::measure::CPU_BOUND
                ));
            }
        };
        bound(&mut doc, "ManyClientsST");
        let s4 = findings(&doc)
            .into_iter()
            .find(|f| f.seed.starts_with("S4,"))
            .unwrap();
        assert!(!s4.cannot_be_judged(), "{}", s4.line());
        bound(&mut doc, "AloneSingleThread");
        let s4 = findings(&doc)
            .into_iter()
            .find(|f| f.seed.starts_with("S4,"))
            .unwrap();
        assert!(s4.cannot_be_judged(), "{}", s4.line());
        doc.context.cores = 64;
        for p in &mut doc.points {
            p.warnings.clear();
        }
        assert!(
            findings(&doc)
                .iter()
                .filter(|f| f.seed.starts_with('S'))
                .all(|f| !f.cannot_be_judged())
        );
    }
}
