//! RPMsg round trips (one channel, 496-byte payloads, remote in a thread) per
//! notification mode, the kick-per-message mode interleaved with the machine's futex
//! round trip as in `wake.rs` (this machine's wake-up cost drifts over minutes, so the
//! figure of merit is the median of per-round ratios).
//!
//! `cargo bench -p xferbench-transports --bench rpmsg`

mod common;
use common::{futex_rtt, median};
use std::time::{Duration, Instant};
use xferbench_transports::rpmsg::{HostLink, LinkConfig, Notify, RemoteLink};

const ROUNDS: usize = 15;
const TRIPS: u64 = 2_000;

/// Per round trip, over `n` round trips of `notify` mode.
fn rpmsg_rtt(notify: Notify, n: u64) -> Duration {
    let mut host = HostLink::create(&LinkConfig {
        notify,
        ..LinkConfig::default()
    })
    .unwrap();
    let name = host.name().unwrap();
    let remote = std::thread::spawn(move || RemoteLink::attach(&name).unwrap().serve().unwrap());
    host.wait_attached(Duration::from_secs(5), || Ok(()))
        .unwrap();
    let mut ch = host.take_channels().pop().unwrap();
    let msg = [7u8; 496];
    let mut out = [0u8; 496];
    let mut trip = |ch: &mut xferbench_transports::rpmsg::Channel| {
        ch.send(&msg, None).unwrap();
        ch.recv(&mut out, None).unwrap();
    };
    for _ in 0..100 {
        trip(&mut ch);
    }
    let start = Instant::now();
    for _ in 0..n {
        trip(&mut ch);
    }
    let d = start.elapsed();
    drop(ch);
    drop(host);
    remote.join().unwrap();
    d / n as u32
}

fn main() {
    let quick = !std::env::args().any(|a| a == "--bench");
    let (rounds, trips) = if quick { (1, 50) } else { (ROUNDS, TRIPS) };
    let (mut f, mut k, mut r) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let a = futex_rtt(trips).as_secs_f64() * 1e6;
        let b = rpmsg_rtt(Notify::Kick, trips).as_secs_f64() * 1e6;
        f.push(a);
        k.push(b);
        r.push(b / a);
    }
    println!(
        "futex round trip {:.2} µs, rpmsg notify=kick round trip {:.2} µs, ratio (median of {rounds} interleaved rounds) {:.2}",
        median(f),
        median(k),
        median(r)
    );
    for notify in [Notify::EventIdx, Notify::Poll] {
        let n = if notify == Notify::Poll {
            trips * 50
        } else {
            trips
        };
        let per: Vec<f64> = (0..rounds.min(5))
            .map(|_| rpmsg_rtt(notify, n).as_secs_f64() * 1e6)
            .collect();
        let m = median(per);
        println!(
            "rpmsg notify={} round trip {m:.2} µs ({:.0} round trips/s)",
            notify.name(),
            1e6 / m
        );
    }
}
