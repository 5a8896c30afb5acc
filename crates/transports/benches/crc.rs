//! The checksums of the Warp Pipe codec (`src/warp/crc.rs`), one benchmark per
//! [`CrcKind`]:
//!
//! * `lcrc32-2KiB/{bitwise,table,fast}`: LCRC32 over a 2 KiB buffer, the size of a
//!   mid-sized TLP payload. The goal for `fast` is at least 50 times `bitwise`.
//! * `crc16-dllp/{bitwise,table,fast}`: the DLLP CRC16 over the 4 bytes it covers in
//!   practice, per call.
//!
//! Throughput is reported in bytes.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use xferbench_transports::warp::CrcKind;

fn buffer(len: usize) -> Vec<u8> {
    // Deterministic, not all-zero, not periodic in a way a CPU could shortcut.
    let mut x = 0x9E37_79B9u32;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

fn lcrc32(c: &mut Criterion) {
    let data = buffer(2048);
    let mut group = c.benchmark_group("lcrc32-2KiB");
    group.throughput(Throughput::Bytes(data.len() as u64));
    for kind in CrcKind::ALL {
        group.bench_with_input(BenchmarkId::from_parameter(kind), &data, |b, d| {
            b.iter(|| kind.lcrc32(black_box(d)))
        });
    }
    group.finish();
}

fn crc16(c: &mut Criterion) {
    let data = buffer(4);
    let mut group = c.benchmark_group("crc16-dllp");
    group.throughput(Throughput::Bytes(data.len() as u64));
    for kind in CrcKind::ALL {
        group.bench_with_input(BenchmarkId::from_parameter(kind), &data, |b, d| {
            b.iter(|| kind.crc16(black_box(d)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Short: the machine is shared and the differences are large.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = lcrc32, crc16
}
criterion_main!(benches);
