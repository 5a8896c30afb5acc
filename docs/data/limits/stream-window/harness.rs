use std::time::Duration;
use xferbench_lab::limits::probes::{stream_rate, stream_ring, StreamMode};
fn main() {
    let size: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let ring = stream_ring(size as u64) as usize;
    let mut line = String::new();
    for (name, mode) in [("copy", StreamMode::Copy), ("inplace", StreamMode::InPlace)] {
        for mib in [1u64, 8, 64, 256] {
            let mut g: Vec<f64> = (0..3).filter_map(|_| stream_rate(0, 1, size, ring, mode, (mib << 20) / size as u64, Duration::from_millis(if mib > 64 {200} else {4}))).collect();
            g.sort_by(|a, b| a.partial_cmp(b).unwrap());
            line += &format!(" {name}{mib}M={:.1}", g[g.len() / 2] / 1e9);
        }
    }
    println!("{line}");
}
