//! Blocking round trip of the shm transport against the machine's futex round trip,
//! measured interleaved: this machine's wake-up cost drifts over minutes (vCPU
//! placement; see docs/transports-log.md, "Noise"), so the two are alternated in short
//! rounds and the figure of merit is the median of the per-round ratios.
//!
//! `cargo bench -p xferbench-transports --bench wake`

mod common;
use common::{futex_rtt, median};

const ROUNDS: usize = 15;
const TRIPS: u64 = 2_000;

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing: run briefly.
    let quick = !std::env::args().any(|a| a == "--bench");
    let (rounds, trips) = if quick { (1, 50) } else { (ROUNDS, TRIPS) };
    let block = common::shm(&[("wait", "block")]);
    let (mut f, mut s, mut r) = (Vec::new(), Vec::new(), Vec::new());
    // XFERBENCH_WAKE_ONLY=futex|shm runs one side only (to count its events with perf).
    let only = std::env::var("XFERBENCH_WAKE_ONLY").unwrap_or_default();
    for _ in 0..rounds {
        let a = if only == "shm" {
            f64::NAN
        } else {
            futex_rtt(trips).as_secs_f64() * 1e6
        };
        let b = if only == "futex" {
            f64::NAN
        } else {
            (common::pingpong(&block, trips) / trips as u32).as_secs_f64() * 1e6
        };
        f.push(a);
        s.push(b);
        r.push(b / a);
    }
    println!(
        "futex round trip {:.2} µs, shm wait=block round trip {:.2} µs, ratio (median of {rounds} interleaved rounds) {:.2}",
        median(f),
        median(s),
        median(r)
    );
}
