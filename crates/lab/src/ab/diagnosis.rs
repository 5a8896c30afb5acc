//! The diagnosis of `xferbench ab` in words, and the evidence it rests on.
//!
//! The evidence is every counter that moved between A and B ([`evidence`]): the
//! PMU's generic stall and miss counters, callgrind's simulated cache misses, the
//! named events and the stall search. The strongest move in the direction of the
//! time difference ([`stalls::strongest`]) names the likely cause
//! ([`stalls::cause_of`]).

use super::side::{AbSide, SAME_INSTRUCTIONS};
use super::stalls::{self, EventComparison, Move};
use std::collections::BTreeMap;
use xferbench_probes::counters::name;

/// The diagnosis in words, from the significance, the direction, the instruction
/// difference, the counters that moved and, when the time is inconclusive, what the
/// instruction counts say against their own noise ([`super::signal`]).
pub fn diagnose(
    significant: bool,
    p_value: f64,
    slower: bool,
    instructions_difference: Option<f64>,
    moves: &[Move],
    signal: Option<&super::signal::InstructionSignal>,
) -> String {
    if !significant {
        return match signal {
            Some(s) => s.inconclusive(p_value),
            None => format!("not significant: noise (p = {p_value:.3})"),
        };
    }
    let how = if slower { "slower" } else { "faster" };
    let top = stalls::strongest(moves, slower);
    let because = |m: &Move| format!("{}: {}", m.text(), m.cause().explanation);
    match instructions_difference {
        Some(d) if d.abs() <= SAME_INSTRUCTIONS => match top {
            Some(m) => format!(
                "same instructions (within 0.01 %) but {how}: {}",
                because(m)
            ),
            None => format!(
                "same instructions (within 0.01 %) but {how}: stalls, alignment or cache \
                 (no stall counter moved here; with a PMU, run ab --search-stalls)"
            ),
        },
        Some(d) if d < 0.0 && slower => match top {
            Some(m) => format!(
                "fewer instructions, slower: {} (instructions {:.1} %; {})",
                m.cause().kind,
                d * 100.0,
                m.text()
            ),
            None => format!(
                "fewer instructions, slower: slower instructions, cause not counted here \
                 (instructions {:.1} %)",
                d * 100.0
            ),
        },
        Some(d) if d > 0.0 => format!("more instructions (+{:.1} %), {how}", d * 100.0),
        Some(d) => format!("fewer instructions ({:.1} %), {how}", d * 100.0),
        None => format!("{how}; instructions unknown, so the cause cannot be told"),
    }
}

/// A CPU-time difference below this share of the wall-time difference, in absolute
/// terms and relative to A's own times, leaves the rest off the CPU.
pub const OFF_CPU: f64 = 0.5;

/// The diagnosis of two commands whose wall times differ by more than their CPU
/// times can account for ([`OFF_CPU`]): the difference is time the command spent off
/// the CPU (asleep, waiting for I/O, a lock or another process), which no instruction
/// or stall count explains. `None` when the CPU time accounts for the difference:
/// when it moves by at least [`OFF_CPU`] of the wall time's change, or by at least
/// that share of it relative to A's own times (a command that gets half a CPU on a
/// busy machine doubles its wall time when it doubles its CPU time: the extra wall
/// time is its work, waiting for a CPU).
pub fn off_cpu(a: &AbSide, b: &AbSide) -> Option<String> {
    let mean =
        |s: &AbSide| s.runs.iter().map(|r| r.cpu_s).sum::<f64>() / s.runs.len().max(1) as f64;
    let wall = b.mean_s - a.mean_s;
    let cpu = mean(b) - mean(a);
    if wall == 0.0 || cpu.abs() >= OFF_CPU * wall.abs() {
        return None;
    }
    let (a_wall, a_cpu) = (a.mean_s, mean(a));
    if a_wall > 0.0 && a_cpu > 0.0 && cpu.abs() / a_cpu >= OFF_CPU * wall.abs() / a_wall {
        return None;
    }
    let how = if wall > 0.0 { "slower" } else { "faster" };
    Some(format!(
        "{how} off the CPU: wall time {} but CPU time {} per run, so the difference is time \
         spent waiting (sleep, I/O, locks, another process), which instruction and stall \
         counts do not explain",
        signed_ms(wall),
        signed_ms(cpu)
    ))
}

/// `+10.2 ms`, `−0.3 ms`.
fn signed_ms(s: f64) -> String {
    let sign = if s < 0.0 { "−" } else { "+" };
    format!("{sign}{:.1} ms", s.abs() * 1e3)
}

/// Every counter that can explain a difference: the PMU's stall and miss counters,
/// callgrind's simulated misses, the named events and the search.
pub fn evidence(
    a: &AbSide,
    b: &AbSide,
    events: Option<&EventComparison>,
    search: Option<&EventComparison>,
) -> Vec<Move> {
    let mut moves = Vec::new();
    for k in [
        name::STALLED_FRONTEND,
        name::STALLED_BACKEND,
        name::CACHE_MISSES,
        name::BRANCH_MISSES,
    ] {
        if let (Some(x), Some(y)) = (a.counters.get(k), b.counters.get(k)) {
            moves.push(Move {
                what: k.to_string(),
                a: *x,
                b: *y,
            });
        }
    }
    if let (Some(x), Some(y)) = (&a.callgrind, &b.callgrind) {
        moves.extend(simulated_moves(x, y));
    }
    for c in events.into_iter().chain(search) {
        for r in &c.rows {
            if let (Some(x), Some(y)) = (r.a, r.b) {
                moves.push(Move {
                    what: r.event.clone(),
                    a: x,
                    b: y,
                });
            }
        }
    }
    moves
}

/// Callgrind's simulated cache misses of A and B, as moves.
pub fn simulated_moves(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> Vec<Move> {
    ["D1mr", "D1mw", "DLmr", "DLmw", "I1mr", "ILmr"]
        .iter()
        .filter_map(|k| {
            Some(Move {
                what: format!("simulated {k}"),
                a: *a.get(*k)?,
                b: *b.get(*k)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::compare_with;
    use super::super::side::AbSide;
    use super::super::side::tests::fake;
    use super::*;
    use xferbench_probes::counters::perf_stat::{parse_csv, parse_list};

    fn with_callgrind(mut s: AbSide, pairs: &[(&str, f64)]) -> AbSide {
        s.callgrind = Some(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect());
        s
    }

    #[test]
    fn fewer_instructions_but_slower_with_simulated_misses_reads_memory_stalls() {
        let a = with_callgrind(
            fake("a", &[0.002, 0.0021, 0.0020, 0.0022], None),
            &[
                ("Ir", 10.5e6),
                ("D1mr", 65_540.0),
                ("DLmr", 3.0),
                ("I1mr", 30.0),
            ],
        );
        let b = with_callgrind(
            fake("b", &[0.21, 0.209, 0.212, 0.208], None),
            &[
                ("Ir", 7.3e6),
                ("D1mr", 1_048_580.0),
                ("DLmr", 5.0),
                ("I1mr", 31.0),
            ],
        );
        let r = compare_with(a, b, 0.05, vec![], None, None);
        assert!(
            r.verdict
                .diagnosis
                .starts_with("fewer instructions, slower: memory stalls"),
            "{}",
            r.verdict.diagnosis
        );
        assert!(
            r.verdict
                .diagnosis
                .contains("simulated D1mr 65.5 K → 1.05 M"),
            "{}",
            r.verdict.diagnosis
        );
    }

    #[test]
    fn same_instructions_but_slower_names_the_searched_23x_event() {
        let fixture = |n: &str| {
            std::fs::read_to_string(format!(
                "{}/testdata/perf-stat/{n}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()
        };
        let list = parse_list(&fixture("perf-list-skylake.txt"));
        let candidates = stalls::search_candidates(&list);
        let mut rows = stalls::compare_rows(
            &candidates,
            &[parse_csv(&fixture("search-fast-a.csv")).unwrap()],
            &[parse_csv(&fixture("search-slow-b.csv")).unwrap()],
        );
        stalls::rank(&mut rows);
        let search = EventComparison {
            rounds: 1,
            rows,
            unknown: vec![],
        };
        // The seed's times and instruction counts.
        let a = fake(
            "fast",
            &[0.4098, 0.4080, 0.4110, 0.4095],
            Some(5_927_396_603.0),
        );
        let b = fake(
            "slow",
            &[0.5106, 0.5110, 0.5090, 0.5120],
            Some(5_927_358_294.0),
        );
        let r = compare_with(a, b, 0.05, vec![], None, Some(search));
        assert_eq!(
            r.verdict.diagnosis,
            "same instructions (within 0.01 %) but slower: dsb2mite_switches.penalty_cycles \
             9.94 M → 229 M (23.1×): front end, likely code alignment (the decoded-µop cache, \
             DSB, is missed)"
        );
        assert_eq!(
            r.verdict
                .search
                .as_ref()
                .and_then(|s| s.top())
                .map(|t| t.event.as_str()),
            Some("dsb2mite_switches.penalty_cycles")
        );
    }

    #[test]
    fn same_instructions_without_counters_says_what_to_run() {
        let d = diagnose(true, 0.001, true, Some(1e-6), &[], None);
        assert!(d.contains("--search-stalls"), "{d}");
        let d = diagnose(false, 0.43, true, Some(1e-6), &[], None);
        assert_eq!(d, "not significant: noise (p = 0.430)");
    }

    #[test]
    fn a_difference_the_cpu_time_does_not_share_is_off_the_cpu() {
        // `sleep 0.01` against `sleep 0.02`: 10 ms more wall time, the same 1 ms of CPU.
        let sleeper = |name: &str, wall: f64| {
            let mut s = fake(
                name,
                &[wall, wall * 1.01, wall * 0.99, wall, wall * 1.005],
                None,
            );
            for r in &mut s.runs {
                (r.cpu_s, r.user_s) = (0.001, 0.001);
            }
            s
        };
        let r = compare_with(
            sleeper("a", 0.011),
            sleeper("b", 0.021),
            0.05,
            vec![],
            None,
            None,
        );
        assert!(r.verdict.significant, "{r:?}");
        assert!(
            r.verdict.diagnosis.starts_with("slower off the CPU"),
            "{}",
            r.verdict.diagnosis
        );
        assert!(
            r.verdict.diagnosis.contains("+10.0 ms") && r.verdict.diagnosis.contains("+0.0 ms"),
            "{}",
            r.verdict.diagnosis
        );
        // CPU time that grows with the wall time is on the CPU: the usual diagnosis.
        let a = fake("a", &[1.0, 1.01, 0.99, 1.0, 1.02], Some(1e9));
        let b = fake("b", &[2.0, 2.02, 1.98, 2.0, 2.01], Some(2e9));
        assert_eq!(off_cpu(&a, &b), None);
        // On a busy machine, twice the work at half a CPU: 25 → 49 ms of CPU, 48 → 98
        // ms of wall time. The CPU time grows as the wall time does: on the CPU.
        let busy = |name: &str, wall: f64, cpu: f64| {
            let mut s = fake(name, &[wall, wall * 1.01, wall * 0.99, wall], None);
            for r in &mut s.runs {
                (r.cpu_s, r.user_s) = (cpu, cpu);
            }
            s
        };
        assert_eq!(
            off_cpu(&busy("a", 0.0485, 0.0253), &busy("b", 0.0981, 0.0489)),
            None
        );
    }
}
