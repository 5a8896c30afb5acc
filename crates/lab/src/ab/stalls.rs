//! Named events, the stall search and the causes of `xferbench ab`.
//!
//! * **Named events** (`--events LIST`): counted on A and B by `perf stat -x,`
//!   ([`xferbench_probes::counters::perf_stat`]), so perf's own tables resolve model-specific
//!   names; names perf does not know here are reported, not passed on (perf would
//!   refuse the whole list).
//! * **The search** (`--search-stalls`): every CPU event of `perf list` whose name
//!   matches `stall|penalty|miss` ([`search_candidates`]), counted on A and B in
//!   chunks of [`CHUNK`] (perf multiplexes them on the few hardware counters and
//!   scales the counts) and ranked by B/A ([`rank`]).
//! * **Causes**: a small table from event-name patterns to the likely cause
//!   ([`cause_of`]), used to word the diagnosis ("dsb2mite_switches.penalty_cycles
//!   9.94 M → 229 M (23.1×): front end, likely code alignment").

pub use crate::verdict::{EventComparison, EventCount};
use std::ffi::OsString;
pub use xferbench_probes::counters::perf_stat::CHUNK;
use xferbench_probes::counters::perf_stat::{self, PerfStatError, PerfStatRow, PerfValue};

/// Counts below this on both sides are too small to rank.
pub const MIN_COUNT: f64 = 1000.0;
/// A change smaller than this factor is not evidence of a cause.
pub const EVIDENCE_RATIO: f64 = 1.5;

impl EventComparison {
    /// The first row with a ratio whose counts are large enough to rank.
    pub fn top(&self) -> Option<&EventCount> {
        self.rows.iter().find(|r| r.ratio.is_some() && rankable(r))
    }

    /// Whether any event was counted at all.
    pub fn any_counted(&self) -> bool {
        self.rows.iter().any(|r| r.a.is_some() || r.b.is_some())
    }
}

fn rankable(r: &EventCount) -> bool {
    r.a.unwrap_or(0.0).max(r.b.unwrap_or(0.0)) >= MIN_COUNT
}

/// A likely cause of a stall event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cause {
    /// The kind, as the diagnosis names it (`memory stalls`).
    pub kind: &'static str,
    /// The kind with its likely reason (`front end, likely code alignment`).
    pub explanation: &'static str,
}

/// Event-name patterns (lower case, first match wins) and their causes.
pub const CAUSES: &[(&[&str], Cause)] = &[
    (
        &["dsb2mite", "dsb_miss", "dsb_switch", "dsb"],
        Cause {
            kind: "front-end stalls",
            explanation: "front end, likely code alignment (the decoded-µop cache, DSB, is missed)",
        },
    ),
    (
        &["branch-miss", "branch-load-miss", "br_misp", "mispred"],
        Cause {
            kind: "branch mispredictions",
            explanation: "branch mispredictions",
        },
    ),
    (
        &[
            "icache",
            "itlb",
            "frontend",
            "idq",
            "mite",
            "decode",
            "ild_stall",
            "baclear",
            "i1mr",
            "ilmr",
        ],
        Cause {
            kind: "front-end stalls",
            explanation: "front end: instruction fetch or decode (code layout, alignment or size)",
        },
    ),
    (
        &[
            "stalls_mem",
            "stalls_l1d",
            "stalls_l2",
            "stalls_l3",
            "l1d",
            "l2_rqsts",
            "llc",
            "l3_miss",
            "longest_lat",
            "cache-miss",
            "cache_miss",
            "mem_load",
            "dtlb",
            "offcore",
            "dc_miss",
            "l2_cache",
            "l3_",
            "dram",
            "ls_l1_d",
            "ls_dmnd",
            "ls_dc_",
            "ls_refill",
            "ls_any_fills",
            "d1mr",
            "d1mw",
            "dlmr",
            "dlmw",
            "dcache",
        ],
        Cause {
            kind: "memory stalls",
            explanation: "memory stalls: cache or TLB misses (data layout, working set)",
        },
    ),
    (
        &["resource_stalls"],
        Cause {
            kind: "back-end stalls",
            explanation: "back end: a full resource (reservation station, reorder or store buffer)",
        },
    ),
    (
        &["machine_clears", "recovery"],
        Cause {
            kind: "machine clears",
            explanation: "machine clears (memory ordering, self-modifying code)",
        },
    ),
    (
        &[
            "stalled-cycles-backend",
            "uops_executed.stall",
            "cycle_activity",
            "stall",
        ],
        Cause {
            kind: "execution stalls",
            explanation: "execution stalls (cause not told by this event: search further)",
        },
    ),
];

/// The likely cause of a move of `event`.
pub fn cause_of(event: &str) -> Cause {
    let e = event.to_ascii_lowercase();
    CAUSES
        .iter()
        .find(|(pats, _)| pats.iter().any(|p| e.contains(p)))
        .map_or(
            Cause {
                kind: "stalls",
                explanation: "not classified",
            },
            |(_, c)| *c,
        )
}

/// The events of `events` (a `perf list`) the search counts: names matching
/// `stall|penalty|miss`, case-insensitive.
pub fn search_candidates(events: &[String]) -> Vec<String> {
    events
        .iter()
        .filter(|e| {
            let l = e.to_ascii_lowercase();
            ["stall", "penalty", "miss"].iter().any(|p| l.contains(p))
        })
        .cloned()
        .collect()
}

/// Compares per-round rows of A and B (each inner list one `perf stat` run of one
/// side) into one row per event, in the order of `events`.
pub fn compare_rows(
    events: &[String],
    a: &[Vec<PerfStatRow>],
    b: &[Vec<PerfStatRow>],
) -> Vec<EventCount> {
    events
        .iter()
        .map(|ev| {
            let side = |runs: &[Vec<PerfStatRow>]| {
                let rows: Vec<&PerfStatRow> = runs
                    .iter()
                    .filter_map(|r| r.iter().find(|x| x.event.eq_ignore_ascii_case(ev)))
                    .collect();
                let counts: Vec<f64> = rows.iter().filter_map(|r| r.count()).collect();
                let mean =
                    (!counts.is_empty()).then(|| counts.iter().sum::<f64>() / counts.len() as f64);
                let pct = rows.iter().filter_map(|r| r.running_pct).reduce(f64::min);
                let unsupported = rows.iter().any(|r| r.value == PerfValue::NotSupported);
                (mean, pct, unsupported)
            };
            let (a, pa, ua) = side(a);
            let (b, pb, ub) = side(b);
            let running_pct = match (pa, pb) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            let status = if a.is_some() && b.is_some() {
                if running_pct.is_some_and(|p| p < 99.99) {
                    "multiplexed"
                } else {
                    "counted"
                }
            } else if ua || ub {
                "not supported"
            } else {
                "not counted"
            };
            let ratio = match (a, b) {
                (Some(x), Some(y)) if x > 0.0 => Some(y / x),
                _ => None,
            };
            EventCount {
                event: ev.clone(),
                a,
                b,
                ratio,
                status: status.into(),
                running_pct,
                cause: cause_of(ev).explanation.into(),
            }
        })
        .collect()
}

/// Ranks rows by B/A, largest first: rows with large enough counts, then the
/// rest, then rows without a ratio.
pub fn rank(rows: &mut [EventCount]) {
    let key = |r: &EventCount| match r.ratio {
        Some(x) if rankable(r) => (0, -x),
        Some(x) => (1, -x),
        None => (2, 0.0),
    };
    rows.sort_by(|x, y| {
        let (kx, ky) = (key(x), key(y));
        kx.0.cmp(&ky.0).then(kx.1.total_cmp(&ky.1))
    });
}

/// Counts `events` on `a` and `b` (argv of each), `rounds` interleaved runs each,
/// in chunks of [`CHUNK`] events per `perf stat`.
pub fn count_events(
    a: &[OsString],
    b: &[OsString],
    events: &[String],
    rounds: usize,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Vec<EventCount>, PerfStatError> {
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(1) {
        let (mut one_a, mut one_b) = (Vec::new(), Vec::new());
        for chunk in events.chunks(CHUNK) {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(PerfStatError::Failed {
                    status: "interrupted".into(),
                    stderr: String::new(),
                });
            }
            one_a.extend(perf_stat::run(chunk, a)?);
            one_b.extend(perf_stat::run(chunk, b)?);
        }
        ra.push(one_a);
        rb.push(one_b);
    }
    Ok(compare_rows(events, &ra, &rb))
}

/// A number in a few digits: `9.94 M`, `229 M`, `1.05 K`, `512`.
pub fn short(v: f64) -> String {
    let (x, unit) = match v.abs() {
        a if a >= 1e9 => (v / 1e9, " G"),
        a if a >= 1e6 => (v / 1e6, " M"),
        a if a >= 1e3 => (v / 1e3, " K"),
        _ => (v, ""),
    };
    let digits = match x.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    };
    if unit.is_empty() && x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.digits$}{unit}")
    }
}

/// A ratio in words: `23.1×`, `0.06×`.
pub fn ratio_text(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.1}×")
    } else {
        format!("{r:.2}×")
    }
}

/// One piece of evidence: an event that moved between A and B.
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    /// What moved (`dsb2mite_switches.penalty_cycles`, `simulated D1mr`).
    pub what: String,
    /// On A.
    pub a: f64,
    /// On B.
    pub b: f64,
}

impl Move {
    /// `b / a`.
    pub fn ratio(&self) -> f64 {
        if self.a > 0.0 {
            self.b / self.a
        } else {
            f64::INFINITY
        }
    }

    /// The likely cause.
    pub fn cause(&self) -> Cause {
        cause_of(&self.what)
    }

    /// `what a → b (r×)`.
    pub fn text(&self) -> String {
        format!(
            "{} {} → {} ({})",
            self.what,
            short(self.a),
            short(self.b),
            ratio_text(self.ratio())
        )
    }
}

/// The move that best explains B being slower (`slower`) or faster: the largest
/// rise (or fall) by at least [`EVIDENCE_RATIO`] among counts of at least
/// [`MIN_COUNT`].
pub fn strongest(moves: &[Move], slower: bool) -> Option<&Move> {
    let ok = |m: &&Move| {
        m.a > 0.0
            && m.a.max(m.b) >= MIN_COUNT
            && if slower {
                m.ratio() >= EVIDENCE_RATIO
            } else {
                m.ratio() <= 1.0 / EVIDENCE_RATIO
            }
    };
    let it = moves.iter().filter(ok);
    if slower {
        it.max_by(|x, y| x.ratio().total_cmp(&y.ratio()))
    } else {
        it.min_by(|x, y| x.ratio().total_cmp(&y.ratio()))
    }
}

/// Why the stall search cannot run here, in one line, or `None` when it can.
pub fn search_unavailable(pmu: bool, perf: bool) -> Option<String> {
    if !perf {
        Some("--search-stalls: perf is not installed (apt-get install linux-perf); no stall event can be counted".into())
    } else if !pmu {
        Some("--search-stalls: no hardware PMU here (a VM without PMU passthrough, a container, or perf_event_paranoid): no stall event can be counted; run the same command on bare metal".into())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xferbench_probes::counters::perf_stat::{parse_csv, parse_list};

    fn fixture(name: &str) -> String {
        let path = format!("{}/testdata/perf-stat/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn the_search_ranks_the_23x_penalty_event_first() {
        let list = parse_list(&fixture("perf-list-skylake.txt"));
        let candidates = search_candidates(&list);
        assert!(candidates.len() > 30, "{candidates:?}");
        assert!(candidates.iter().all(|c| !c.contains(':')));
        let a = parse_csv(&fixture("search-fast-a.csv")).unwrap();
        let b = parse_csv(&fixture("search-slow-b.csv")).unwrap();
        let mut rows = compare_rows(&candidates, &[a], &[b]);
        rank(&mut rows);
        let top = &rows[0];
        assert_eq!(top.event, "dsb2mite_switches.penalty_cycles");
        assert!((top.ratio.unwrap() - 23.06).abs() < 0.01, "{top:?}");
        assert_eq!(top.status, "multiplexed");
        assert!(top.running_pct.unwrap() < 11.0);
        assert!(top.cause.contains("code alignment"), "{}", top.cause);
        assert_eq!(rows[1].event, "cycle_activity.stalls_mem_any");
        let lcp = rows.iter().find(|r| r.event == "ild_stall.lcp").unwrap();
        assert_eq!((lcp.status.as_str(), lcp.ratio), ("not counted", None));
        assert_eq!(
            rows.last().unwrap().ratio,
            None,
            "rows without a ratio go last"
        );
    }

    #[test]
    fn the_seed_stall_block_compares_like_the_seed() {
        let a = parse_csv(&fixture("seed-stalls-fast-a.csv")).unwrap();
        let b = parse_csv(&fixture("seed-stalls-slow-b.csv")).unwrap();
        let names: Vec<String> = a.iter().map(|r| r.event.clone()).collect();
        let rows = compare_rows(&names, &[a], &[b]);
        let i = &rows[0];
        assert_eq!(i.event, "instructions");
        assert!((i.ratio.unwrap() - 1.0).abs() < 1e-4, "same instructions");
        let r = rows
            .iter()
            .find(|r| r.event == "resource_stalls.any")
            .unwrap();
        assert!(r.ratio.unwrap() < 1.1);
        let u = rows
            .iter()
            .find(|r| r.event == "uops_executed.stall_cycles")
            .unwrap();
        assert!(u.ratio.unwrap() > 8.9 && u.status == "counted");
    }

    #[test]
    fn unsupported_events_are_said_so_not_ranked() {
        let rows = parse_csv(&fixture("default-block-vm.csv")).unwrap();
        let names: Vec<String> = vec!["instructions".into(), "task-clock".into()];
        let one = std::slice::from_ref(&rows);
        let out = compare_rows(&names, one, one);
        assert_eq!(out[0].status, "not supported");
        assert_eq!(out[1].ratio, Some(1.0));
        let c = EventComparison {
            rounds: 1,
            rows: out,
            unknown: vec![],
        };
        assert!(c.any_counted());
        assert!(
            c.top().is_none(),
            "88 ms of task-clock is under MIN_COUNT: not ranked"
        );
    }

    #[test]
    fn causes_follow_the_event_names() {
        for (e, kind) in [
            ("dsb2mite_switches.penalty_cycles", "front-end stalls"),
            ("frontend_retired.dsb_miss", "front-end stalls"),
            ("L1-icache-load-misses", "front-end stalls"),
            ("L1-dcache-load-misses", "memory stalls"),
            ("LLC-load-misses", "memory stalls"),
            ("cache-misses", "memory stalls"),
            ("cycle_activity.stalls_mem_any", "memory stalls"),
            ("l2_cache_req_stat.ic_dc_miss_in_l2", "memory stalls"),
            ("ls_l1_d_tlb_miss.all", "memory stalls"),
            ("simulated D1mr", "memory stalls"),
            ("branch-misses", "branch mispredictions"),
            ("resource_stalls.any", "back-end stalls"),
            ("cycle_activity.stalls_total", "execution stalls"),
            ("uops_executed.stall_cycles", "execution stalls"),
            ("something_odd", "stalls"),
        ] {
            assert_eq!(cause_of(e).kind, kind, "{e}");
        }
    }

    #[test]
    fn the_strongest_move_needs_size_and_a_real_change() {
        let m = |w: &str, a: f64, b: f64| Move {
            what: w.into(),
            a,
            b,
        };
        let moves = [
            m("simulated D1mr", 65_540.0, 1_048_580.0),
            m("simulated I1mr", 36.0, 370.0),
            m("simulated DLmr", 3.0, 5.0),
            m("cache-misses", 1e6, 1.2e6),
        ];
        let s = strongest(&moves, true).unwrap();
        assert_eq!(s.what, "simulated D1mr");
        assert_eq!(s.text(), "simulated D1mr 65.5 K → 1.05 M (16.0×)");
        assert!(strongest(&moves, false).is_none());
        assert_eq!(short(229_285_609.0), "229 M");
        assert_eq!(short(9_943_811.0), "9.94 M");
        assert_eq!(short(512.0), "512");
    }
}
