//! The conversion kernels at the seed's 6 MB (3,000,000 samples), original and
//! improved, beside a memcpy of the same input bytes. Throughput is input bytes.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use xferbench_transports::daq::convert::{Function, Kernels, Outputs, ScaleParams, convert};
use xferbench_transports::daq::memory::{sample, seed_of};

const SAMPLES: usize = 3_000_000;

fn kernels(c: &mut Criterion) {
    let raw: Vec<u16> = (0..SAMPLES as u64).map(|i| sample(seed_of(0), i)).collect();
    let mut out = Outputs::for_functions(SAMPLES, &Function::CONVERSIONS);
    let mut copy = vec![0u16; SAMPLES];
    let mut g = c.benchmark_group("daq_convert");
    g.throughput(Throughput::Bytes((SAMPLES * 2) as u64));
    g.sample_size(20);
    g.bench_function("memcpy", |b| {
        b.iter(|| copy.copy_from_slice(black_box(&raw)))
    });
    for f in Function::CONVERSIONS {
        for k in [Kernels::Original, Kernels::Improved] {
            for factor in [1, 10] {
                if factor == 10 && !matches!(f, Function::Dec | Function::DecSca) {
                    continue;
                }
                let p = ScaleParams {
                    factor,
                    ..ScaleParams::default()
                };
                let id = BenchmarkId::new(format!("{}/f{factor}", f.c_name()), k.name());
                g.bench_function(id, |b| {
                    b.iter(|| convert(k, f, black_box(&raw), &p, &mut out))
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
