//! The seed's findings, each computed from the document: the CRC as the first target
//! (by wall time, and by the original workload's own profile when it was profiled),
//! and the testing plan's threads and single-threaded instances, read as "more of
//! them raise throughput", judged only where the machine has a CPU per busy thread.

use super::points::{find, group, num, tps, wall};
use crate::finding::{Finding, cpu_limit};
use crate::folder::param;
use xferbench_lab::result::{PointResult, ResultDoc};
use xferbench_lab::workload::warp::{CONNECTION, INSTANCES, THREADS, names};
use xferbench_transports::warp::client::MAX_TAGS;
use xferbench_transports::warp::crc::CRC;

/// The CRC is a target worth optimising when the bitwise CRC costs at least this
/// share of the original design's wall time.
pub const CRC_SHARE: f64 = 0.25;

/// More threads (or instances) raise throughput when the most of them make at least
/// this many times the transactions per second of the fewest.
pub const SCALING_GAIN: f64 = 1.5;

/// The seed's words on the CRC.
const CRC_SEED: &str = "the perf profile of its sample \"points to the implementation of CRC32 \
                        as a potential target of optimization process\"";

/// The CRC's share of the original's wall time: the workload on the original's one
/// shared connection with the bitwise CRC (`bitwise_s`) and the fast one (`fast_s`).
pub fn crc_time_finding(bitwise_s: f64, fast_s: f64) -> Finding {
    let share = (bitwise_s - fast_s) / bitwise_s;
    Finding::judged(
        format!("{CRC_SEED}."),
        format!(
            "the original workload on the original's one shared connection takes {bitwise_s:.3} s \
             with the bitwise CRC and {fast_s:.3} s with the fast one, so the CRC is {:.0} % of its \
             wall time (condition: at least {:.0} %)",
            share * 100.0,
            CRC_SHARE * 100.0
        ),
        share >= CRC_SHARE,
    )
}

/// What the original workload's own profile says of the CRC.
#[derive(Debug, Clone, Copy)]
pub struct Profiled<'a> {
    /// The top function outside the kernel, with its self share.
    pub top_user: Option<(&'a str, f64)>,
    /// The first CRC function, with its rank by self time (kernel included).
    pub crc: Option<(&'a str, u64)>,
}

/// The CRC in the original workload's own profile; `None` when the run was not
/// profiled.
pub fn crc_profile_finding(profiled: Option<Profiled<'_>>) -> Finding {
    let seed = format!("{CRC_SEED}: CRC32 on top of speedscope's sandwich view.");
    let Some(Profiled { top_user, crc }) = profiled else {
        return Finding::cannot(
            seed,
            "no profile of the original workload",
            "this run was not profiled (`xferbench study warp-pipe --profile=DIR` profiles it)",
        );
    };
    let top_text = top_user.map_or(
        "no function outside the kernel was sampled".into(),
        |(n, s)| {
            format!(
                "the top function outside the kernel is `{n}` ({:.1} % of the samples)",
                s * 100.0
            )
        },
    );
    let crc_text = crc.map_or("no CRC function was sampled".into(), |(n, r)| {
        format!("the first CRC function, `{n}`, ranks {r} by self time, kernel included")
    });
    Finding::judged(
        seed,
        format!(
            "the original workload profiled on its own: {top_text}; {crc_text} (condition: the \
             top function outside the kernel is a CRC function)"
        ),
        matches!((top_user, crc), (Some((t, _)), Some((c, _))) if t == c),
    )
}

/// "More of them raise throughput": `what` (`threads`, `instances`) of `variant`,
/// transactions per second by count; the fewest against the most.
pub fn scaling_finding(
    seed: &str,
    what: &str,
    variant: &str,
    rates: &[(u64, f64)],
    limit: Option<String>,
) -> Option<Finding> {
    let lo = rates.iter().min_by_key(|r| r.0)?;
    let hi = rates.iter().max_by_key(|r| r.0)?;
    (hi.0 > lo.0).then(|| {
        let gain = hi.1 / lo.1;
        let one = what.trim_end_matches('s');
        let fewest = if lo.0 == 1 { one } else { what };
        Finding::judged(
            format!("{seed}; read here as: more {what} raise throughput."),
            format!(
                "`{variant}`: {:.0} transactions/s with {} {fewest}, {:.0} with {}, {gain:.2}× \
                 (condition: at least {SCALING_GAIN}×)",
                lo.1, lo.0, hi.1, hi.0
            ),
            gain >= SCALING_GAIN,
        )
        .unless(limit)
    })
}

/// The threads a variant keeps busy at `threads` client threads, with the memory
/// mock's: one transaction in flight on a shared connection, a thread per
/// connection, or one per [`MAX_TAGS`] threads when pipelined.
fn busy_threads(connection: &str, threads: u64) -> (usize, String) {
    match connection {
        "shared" => (
            2,
            "one client thread holding the shared connection's one transaction, and the mock"
                .into(),
        ),
        "pipelined" => {
            let c = threads.div_ceil(MAX_TAGS as u64) as usize;
            (
                c + 1,
                format!("{c} pipelined connections' threads and the mock, a CPU each"),
            )
        }
        _ => (
            threads as usize + 1,
            format!("{threads} client threads and the mock, a CPU each"),
        ),
    }
}

/// The variants of a group's points, in order of first appearance.
fn variants<'a>(points: &[&'a PointResult]) -> Vec<&'a str> {
    let mut v: Vec<&str> = Vec::new();
    for p in points {
        let name = param(p, crate::warp_pipe::VARIANT.name());
        if !v.contains(&name) {
            v.push(name);
        }
    }
    v
}

/// The seed's findings, each computed on this run's figures.
pub fn findings(doc: &ResultDoc) -> Vec<Finding> {
    let mut out = Vec::new();
    let crc_fast = group(doc, "crc")
        .into_iter()
        .find(|p| param(p, CRC.name()) == "fast");
    if let (Some(o), Some(f)) = (find(doc, "original-workload", "original"), crc_fast) {
        out.push(crc_time_finding(wall(o), wall(f)));
    }
    let profile = doc
        .study
        .as_ref()
        .and_then(|i| i.extras.get("original_profile"));
    let named = |v: &serde_json::Value, n: &str| v[n]["name"].as_str().map(str::to_string);
    let top_user = profile.and_then(|p| {
        named(p, "top_user").map(|n| (n, p["top_user"]["self_share"].as_f64().unwrap_or(0.0)))
    });
    let crc = profile
        .and_then(|p| named(p, "top_crc").map(|n| (n, p["top_crc"]["rank"].as_u64().unwrap_or(0))));
    out.push(crc_profile_finding(profile.map(|_| Profiled {
        top_user: top_user.as_ref().map(|(n, s)| (n.as_str(), *s)),
        crc: crc.as_ref().map(|(n, r)| (n.as_str(), *r)),
    })));
    let threads = group(doc, names::THREADS);
    for v in variants(&threads) {
        let pts: Vec<&PointResult> = threads
            .iter()
            .filter(|p| param(p, crate::warp_pipe::VARIANT.name()) == v)
            .copied()
            .collect();
        let rates: Vec<(u64, f64)> = pts
            .iter()
            .map(|p| (num(p, &THREADS) as u64, tps(p)))
            .collect();
        let most = rates.iter().map(|r| r.0).max().unwrap_or(1);
        let connection = pts.first().map_or("", |p| param(p, CONNECTION.name()));
        let (needed, busy) = busy_threads(connection, most);
        out.extend(scaling_finding(
            "its testing plan verifies \"the impact of a number of threads\" (its sample runs \
             506 threads, \"as proved to perform stable on a regular PC\")",
            "threads",
            v,
            &rates,
            cpu_limit(doc, &pts, needed, &busy),
        ));
    }
    let inst = group(doc, names::INSTANCES);
    for v in variants(&inst) {
        let pts: Vec<&PointResult> = inst
            .iter()
            .filter(|p| param(p, crate::warp_pipe::VARIANT.name()) == v)
            .copied()
            .collect();
        let rates: Vec<(u64, f64)> = pts
            .iter()
            .map(|p| (num(p, &INSTANCES) as u64, tps(p)))
            .collect();
        let most = rates.iter().map(|r| r.0).max().unwrap_or(1);
        out.extend(scaling_finding(
            "its testing plan verifies \"the flow of multiple single-threaded Zephyr instances\"",
            "instances",
            v,
            &rates,
            cpu_limit(
                doc,
                &pts,
                most as usize + 1,
                &format!("{most} single-threaded client processes and the mock, a CPU each"),
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Verdict;

    #[test]
    fn the_crc_is_a_target_when_it_costs_a_quarter_of_the_wall_time() {
        let f = crc_time_finding(20.0, 13.0);
        assert_eq!(f.verdict, Verdict::Holds, "{}", f.line());
        assert!(f.figures.contains("35 % of its wall time"), "{}", f.figures);
        let f = crc_time_finding(20.0, 18.0);
        assert_eq!(f.verdict, Verdict::DoesNotHold, "{}", f.line());
    }

    #[test]
    fn the_profile_finding_needs_a_profile_and_a_crc_on_top_outside_the_kernel() {
        assert!(crc_profile_finding(None).cannot_be_judged());
        let p = |top_user, crc| Some(Profiled { top_user, crc });
        let on_top = p(Some(("crc_update", 0.08)), Some(("crc_update", 3)));
        assert!(crc_profile_finding(on_top).holds());
        let below = p(Some(("memcpy", 0.2)), Some(("crc_update", 5)));
        assert_eq!(crc_profile_finding(below).verdict, Verdict::DoesNotHold);
        let none = p(Some(("memcpy", 0.2)), None);
        assert_eq!(crc_profile_finding(none).verdict, Verdict::DoesNotHold);
    }

    #[test]
    fn scaling_holds_on_a_gain_and_cannot_be_judged_without_a_cpu_per_busy_thread() {
        let rising = [(1, 10_000.0), (16, 40_000.0), (506, 50_000.0)];
        let f = scaling_finding("s", "threads", "per-thread", &rising, None).unwrap();
        assert_eq!(f.verdict, Verdict::Holds, "{}", f.line());
        assert!(f.figures.contains("with 1 thread,"), "{}", f.figures);
        let flat = [(1, 10_000.0), (506, 7_500.0)];
        let f = scaling_finding("s", "threads", "original", &flat, None).unwrap();
        assert_eq!(f.verdict, Verdict::DoesNotHold, "{}", f.line());
        let f = scaling_finding("s", "threads", "x", &rising, Some("2 CPUs".into())).unwrap();
        assert!(f.cannot_be_judged());
        assert_eq!(
            scaling_finding("s", "threads", "x", &[(1, 1.0)], None),
            None
        );
        // Busy threads: the shared connection keeps two whatever the count.
        assert_eq!(busy_threads("shared", 506).0, 2);
        assert_eq!(busy_threads("pipelined", 506).0, 17);
        assert_eq!(busy_threads("per-thread", 506).0, 507);
    }

    #[test]
    fn on_the_fixture_the_shared_connection_is_judged_and_the_others_need_cpus() {
        let mut doc = super::super::tests::doc();
        doc.context.cores = 2;
        // The same threads points with one client thread each.
        let ones: Vec<PointResult> = group(&doc, names::THREADS)
            .into_iter()
            .map(|p| {
                let mut p = p.clone();
                p.params.insert(THREADS.name().into(), "1".into());
                p
            })
            .collect();
        doc.points.extend(ones);
        let threads = |doc: &ResultDoc| -> Vec<Finding> {
            findings(doc)
                .into_iter()
                .filter(|f| f.seed.contains("more threads"))
                .collect()
        };
        // 16 pipelined threads share one connection: two busy threads, two CPUs.
        let t = threads(&doc);
        assert_eq!(t.len(), 2);
        assert!(t.iter().all(|f| !f.cannot_be_judged()), "{t:?}");
        // At 64 they need two connections' threads and the mock: three CPUs.
        for p in &mut doc.points {
            if param(p, crate::warp_pipe::VARIANT.name()) == "pipelined"
                && param(p, THREADS.name()) == "16"
            {
                p.params.insert(THREADS.name().into(), "64".into());
            }
        }
        for f in threads(&doc) {
            let shared = f.figures.starts_with("`original`");
            assert_eq!(f.cannot_be_judged(), !shared, "{}", f.line());
        }
        assert!(threads(&doc)[1].line().contains("needs 3 CPUs"));
        doc.context.cores = 1024;
        assert!(threads(&doc).iter().all(|f| !f.cannot_be_judged()));
    }
}
