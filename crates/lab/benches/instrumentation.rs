//! What the harness costs per message, next to what a message costs.
//!
//! * `null/*`: the workload loops over an endpoint that does nothing, so all that is
//!   left is the harness's own per-message work (stamping the sequence number, the
//!   stop-flag load, the progress store, the loop; on the receiving side the touch
//!   and the count). `null/bare-*` is the same loop without any of it.
//! * `pipe/stream-64B`: a real 64-byte stream over a pipe, driver and serving side on
//!   two threads, through the same `Stream::drive`/`Stream::serve` the tool runs.
//!
//! The harness's share is `(null/harness-send − null/bare-send + null/harness-recv −
//! null/bare-recv) / pipe/stream-64B`; the target is under 1 %.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::{Duration, Instant};
use xferbench_lab::workload::{ChannelSpec, Control, Limit, Stream, Workload, WorkloadKind};
use xferbench_transports::os::Pipe;
use xferbench_transports::{Endpoint, Listener, Recv, Transport};

/// Messages per iteration of the pipe benchmark.
const MESSAGES: u64 = 20_000;

/// An endpoint that moves nothing: sends vanish, and `left` messages can be received.
struct Null {
    left: u64,
}

impl Endpoint for Null {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        black_box(msg);
        Ok(())
    }
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Recv> {
        black_box(&mut *buf);
        if self.left == 0 {
            return Ok(Recv::Closed);
        }
        self.left -= 1;
        Ok(Recv::Message)
    }
    fn close_send(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn spec(n: u64) -> ChannelSpec {
    ChannelSpec {
        workload: WorkloadKind::Stream,
        size: 64,
        limit: Limit::Count(n),
        verify: false,
        corrupt_every: None,
        zero_copy: false,
        touch: Default::default(),
        load: None,
        params: Default::default(),
    }
}

fn null(c: &mut Criterion) {
    let mut g = c.benchmark_group("null");
    g.throughput(Throughput::Elements(1));
    let stop = AtomicBool::new(false);
    let progress = AtomicU64::new(0);
    g.bench_function("harness-send", |b| {
        b.iter_custom(|iters| {
            let ctl = Control {
                stop: &stop,
                progress: &progress,
            };
            let mut ep = Null { left: 0 };
            let t = Instant::now();
            Stream::drive(&mut ep, &spec(iters), &ctl).unwrap();
            t.elapsed()
        })
    });
    g.bench_function("bare-send", |b| {
        b.iter_custom(|iters| {
            let mut ep = Null { left: 0 };
            let buf = [0u8; 64];
            let t = Instant::now();
            for _ in 0..iters {
                ep.send(&buf).unwrap();
            }
            ep.close_send().unwrap();
            t.elapsed()
        })
    });
    g.bench_function("harness-recv", |b| {
        b.iter_custom(|iters| {
            let mut ep = Null { left: iters };
            let t = Instant::now();
            Stream::serve(&mut ep, &spec(iters)).unwrap();
            t.elapsed()
        })
    });
    g.bench_function("bare-recv", |b| {
        b.iter_custom(|iters| {
            let mut ep = Null { left: iters };
            let mut buf = [0u8; 64];
            let t = Instant::now();
            while ep.recv(&mut buf).unwrap() == Recv::Message {}
            t.elapsed()
        })
    });
    g.finish();
}

fn pipe(c: &mut Criterion) {
    let mut g = c.benchmark_group("pipe");
    g.throughput(Throughput::Elements(MESSAGES));
    g.measurement_time(Duration::from_secs(8));
    let stop = AtomicBool::new(false);
    let progress = AtomicU64::new(0);
    g.bench_function("stream-64B", |b| {
        b.iter_batched(
            || {
                let t = Pipe::default();
                let l = t.listen().unwrap();
                let addr = l.address().to_string();
                let peer = std::thread::spawn(move || {
                    let mut ep = t
                        .connect(&addr, Instant::now() + Duration::from_secs(5))
                        .unwrap();
                    Stream::serve(&mut ep, &spec(0)).unwrap()
                });
                (
                    l.accept(Instant::now() + Duration::from_secs(5)).unwrap(),
                    peer,
                )
            },
            |(mut ep, peer)| {
                let ctl = Control {
                    stop: &stop,
                    progress: &progress,
                };
                Stream::drive(&mut ep, &spec(MESSAGES), &ctl).unwrap();
                drop(ep);
                peer.join().unwrap()
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, null, pipe);
criterion_main!(benches);
