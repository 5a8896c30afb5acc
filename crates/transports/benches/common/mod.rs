//! Pieces shared by the shm benchmarks.

#![allow(dead_code)] // each bench uses a different subset

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
