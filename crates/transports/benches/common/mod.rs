//! Pieces shared by the shm benchmarks.

#![allow(dead_code)] // each bench uses a different subset

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use xferbench_transports::shm::{Shm, ShmEndpoint};
use xferbench_transports::{Endpoint, Listener, Params, Recv, Transport};

/// A shm transport with the given parameters.
pub fn shm(pairs: &[(&str, &str)]) -> Shm {
    let p: Params = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Shm::from_params(&p).unwrap()
}

/// A connected pair of endpoints in this process.
pub fn pair(t: &Shm) -> (ShmEndpoint, ShmEndpoint) {
    let l = t.listen().unwrap();
    let d = Instant::now() + Duration::from_secs(5);
    let b = t.connect(l.address(), d).unwrap();
    (l.accept(d).unwrap(), b)
}

/// Total time of `n` 64-byte round trips against an echo thread.
pub fn pingpong(t: &Shm, n: u64) -> Duration {
    let (mut a, mut b) = pair(t);
    let echo = std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        while b.recv(&mut buf).unwrap() == Recv::Message {
            b.send(&buf).unwrap();
            b.flush().unwrap();
        }
    });
    let mut buf = [0u8; 64];
    let start = Instant::now();
    for _ in 0..n {
        a.send(&buf).unwrap();
        a.flush().unwrap();
        a.recv(&mut buf).unwrap();
    }
    let took = start.elapsed();
    a.close_send().unwrap();
    echo.join().unwrap();
    took
}

/// The machine's cross-core wake-up round trip: two threads handing a futex word back
/// and forth, each sleeping until woken. Per round trip.
pub fn futex_rtt(n: u64) -> Duration {
    use rustix::thread::futex;
    let word = Arc::new(AtomicU32::new(0));
    let w = word.clone();
    let other = std::thread::spawn(move || {
        for _ in 0..n {
            while w.load(Ordering::Acquire) != 1 {
                let _ = futex::wait(&w, futex::Flags::empty(), 0, None);
            }
            w.store(0, Ordering::Release);
            let _ = futex::wake(&w, futex::Flags::empty(), 1);
        }
    });
    let start = Instant::now();
    for _ in 0..n {
        word.store(1, Ordering::Release);
        let _ = futex::wake(&word, futex::Flags::empty(), 1);
        while word.load(Ordering::Acquire) != 0 {
            let _ = futex::wait(&word, futex::Flags::empty(), 1, None);
        }
    }
    let d = start.elapsed();
    other.join().unwrap();
    d / n as u32
}

/// The median of some values.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
