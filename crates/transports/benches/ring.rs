//! The shared-memory ring alone (two threads, no lab), next to the machine's own
//! limits measured the same way:
//!
//! * `shm/stream-64B`, `shm/stream-64KiB`: one-way copy-in/copy-out throughput;
//! * `shm/zero-copy-64B`: the same with reserve/commit and peek/release;
//! * `shm/pingpong-64B-{spin,block}`: round trips.
//!
//! The floor for a blocking round trip, a bare futex ping-pong, is measured against
//! `wait=block` interleaved by the `wake` benchmark, since it drifts over minutes here.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::time::{Duration, Instant};
mod common;

use common::{pair, pingpong, shm};
use xferbench_transports::shm::Shm;
use xferbench_transports::{Endpoint, Recv};

/// Time to push `n` messages of `size` bytes through, first send to last receive.
fn stream(t: &Shm, size: usize, n: u64, zero_copy: bool) -> Duration {
    let (mut a, mut b) = pair(t);
    let consumer = std::thread::spawn(move || {
        let mut buf = vec![0u8; size];
        let mut got = 0u64;
        if zero_copy {
            while let Some(m) = b.peek(size).unwrap() {
                std::hint::black_box(m[0]);
                b.release(size);
                got += 1;
            }
        } else {
            while b.recv(&mut buf).unwrap() == Recv::Message {
                got += 1;
            }
        }
        assert_eq!(got, n);
        Instant::now()
    });
    let msg = vec![7u8; size];
    let start = Instant::now();
    for i in 0..n {
        if zero_copy {
            let w = a.reserve(size).unwrap();
            w[0] = i as u8;
            a.commit(size);
        } else {
            a.send(&msg).unwrap();
        }
    }
    a.close_send().unwrap();
    consumer.join().unwrap() - start
}

fn benches(c: &mut Criterion) {
    let spin = shm(&[("wait", "spin")]);
    let block = shm(&[("wait", "block")]);
    let mut g = c.benchmark_group("shm");
    g.measurement_time(Duration::from_secs(4));
    g.throughput(Throughput::Elements(1));
    g.bench_function("stream-64B", |b| {
        b.iter_custom(|n| stream(&spin, 64, n, false))
    });
    g.bench_function("zero-copy-64B", |b| {
        b.iter_custom(|n| stream(&spin, 64, n, true))
    });
    g.throughput(Throughput::Bytes(65536));
    g.bench_function("stream-64KiB", |b| {
        b.iter_custom(|n| stream(&spin, 65536, n, false))
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("pingpong-64B-spin", |b| {
        b.iter_custom(|n| pingpong(&spin, n))
    });
    g.sample_size(20);
    g.bench_function("pingpong-64B-block", |b| {
        b.iter_custom(|n| pingpong(&block, n))
    });
    g.finish();
}

criterion_group!(ring, benches);
criterion_main!(ring);
