//! The harness of run.sh (`floorexp`): a binary crate depending on xferbench-lab by
//! path, built with `limits::probes` made public for the occasion (`pub mod probes;` in
//! crates/lab/src/limits/mod.rs), which the lab does not export.
use std::time::{Duration, Instant};
use xferbench_lab::limits::probes::{cache_line_rtt, stream_rate_by, stream_ring, CopyOut, StreamMode};
fn main() {
    let size: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n: usize = std::env::args().nth(2).unwrap().parse().unwrap();
    let ring = stream_ring(size as u64) as usize;
    let messages = (32u64 << 20) / size as u64;
    let t0 = Instant::now();
    for _ in 0..n {
        let cl = cache_line_rtt(0, 1, 2000, Duration::from_millis(4)).unwrap_or(0.0);
        let mut line = format!("{:7.3}s cl={cl:4.0}ns", t0.elapsed().as_secs_f64());
        for (name, mode, out) in [("memcpy", StreamMode::Copy, CopyOut::Memcpy), ("vectors", StreamMode::Copy, CopyOut::Vectors), ("in-place", StreamMode::InPlace, CopyOut::Memcpy)] {
            let g: Vec<String> = (0..3).map(|_| stream_rate_by(0, 1, size, ring, mode, out, messages, Duration::from_millis(40)).map_or("-".into(), |r| format!("{:.1}", r / 1e9))).collect();
            line += &format!("  {name} {}", g.join(" "));
        }
        println!("{line}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
