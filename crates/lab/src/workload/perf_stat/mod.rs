//! The perf-stat study's workloads: the seed's `circular_buffer_into_byte_buffer`
//! benchmarks, each built twice with the same instructions at different code
//! alignments, and a portable pair in which B runs fewer instructions but misses
//! the cache ([`kernels`]).
//!
//! A run of the hidden role ([`xferbench_probes::process::Role::PerfStatBench`]) takes one JSON
//! [`BenchSpec`], sets the benchmark up, runs it once as warm-up and then
//! `runs` times timed (the seed's harness: one pre-heat run, ten measured runs), and
//! prints one JSON [`BenchOutput`] on stdout.
//!
//! # The seed's benchmark, in Rust
//!
//! swift-nio's `CircularBufferIntoByteBufferBenchmark`: a `CircularBuffer<UInt8>`
//! of `size` bytes filled with `i % 256`; each iteration writes the whole circular
//! buffer into a `ByteBuffer` (`writeBytes`), sets the same bytes again at index 0
//! (`setBytes`) and clears the byte buffer. Here a [`VecDeque<u8>`] and a
//! [`Vec<u8>`], with every byte copied by the variant's loop ([`kernels::CopyFn`]).

pub mod kernels;

use kernels::{COPY_A, COPY_B, CopyFn, Walk};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::time::Instant;
use xferbench_probes::clock::Stamp;
use xferbench_probes::cpu::{CpuSnapshot, ProcessCpu};

/// The benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Benchmark {
    /// The seed's 1 KiB benchmark: 10,000 iterations × 1 KiB.
    #[serde(rename = "circular_buffer_into_byte_buffer_1kb")]
    CircularBuffer1Kb,
    /// The seed's 1 MiB benchmark: 20 iterations × 1 MiB.
    #[serde(rename = "circular_buffer_into_byte_buffer_1mb")]
    CircularBuffer1Mb,
    /// The portable pair: a walk of 2^19 list nodes, contiguous (A) or shuffled over
    /// one cache line each (B).
    #[serde(rename = "list_walk_512k_nodes")]
    ListWalk,
}

impl Benchmark {
    /// Every benchmark, the seed's first.
    pub const ALL: [Benchmark; 3] = [
        Benchmark::CircularBuffer1Kb,
        Benchmark::CircularBuffer1Mb,
        Benchmark::ListWalk,
    ];

    /// The name in tables and results.
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::CircularBuffer1Kb => "circular_buffer_into_byte_buffer_1kb",
            Benchmark::CircularBuffer1Mb => "circular_buffer_into_byte_buffer_1mb",
            Benchmark::ListWalk => "list_walk_512k_nodes",
        }
    }

    /// Looks a benchmark up by name.
    pub fn from_name(name: &str) -> Option<Benchmark> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Iterations of one run (list walk: nodes visited) as in the seed.
    pub fn iterations(self) -> u64 {
        match self {
            Benchmark::CircularBuffer1Kb => 10_000,
            Benchmark::CircularBuffer1Mb => 20,
            Benchmark::ListWalk => 1 << 19,
        }
    }

    /// Bytes of the circular buffer, or list nodes.
    pub fn size(self) -> usize {
        match self {
            Benchmark::CircularBuffer1Kb => 1024,
            Benchmark::CircularBuffer1Mb => 1024 * 1024,
            Benchmark::ListWalk => 1 << 19,
        }
    }

    /// Whether this is one of the seed's benchmarks (the alignment pair).
    pub fn is_seed(self) -> bool {
        self != Benchmark::ListWalk
    }
}

/// Which build of a benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// The baseline ("before the PR").
    A,
    /// The change ("with the PR").
    B,
}

impl Variant {
    /// `a` or `b`.
    pub fn name(self) -> &'static str {
        match self {
            Variant::A => "a",
            Variant::B => "b",
        }
    }

    /// Looks a variant up by name (`a`, `b`, case-insensitive).
    pub fn from_name(s: &str) -> Option<Variant> {
        match s.to_ascii_lowercase().as_str() {
            "a" => Some(Variant::A),
            "b" => Some(Variant::B),
            _ => None,
        }
    }
}

/// What one process of the hidden role runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchSpec {
    /// The benchmark.
    pub bench: Benchmark,
    /// The build of its hot loop.
    pub variant: Variant,
    /// Iterations of one run (default: the seed's).
    pub iterations: u64,
    /// Untimed runs first (the seed: 1).
    pub warmup: usize,
    /// Timed runs (the seed: 10).
    pub runs: usize,
}

impl BenchSpec {
    /// The seed's harness for `bench`: the seed's iterations, 1 warm-up, 10 timed runs.
    pub fn seed(bench: Benchmark, variant: Variant) -> BenchSpec {
        BenchSpec {
            bench,
            variant,
            iterations: bench.iterations(),
            warmup: 1,
            runs: 10,
        }
    }

    /// Refuses specs that cannot run.
    pub fn check(&self) -> Result<(), String> {
        if self.runs == 0 {
            return Err("runs must be at least 1".into());
        }
        if self.iterations == 0 {
            return Err("iterations must be at least 1".into());
        }
        if self.runs > 10_000 || self.warmup > 10_000 {
            return Err("runs and warmup must be at most 10000".into());
        }
        Ok(())
    }
}

/// What one process of the hidden role measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchOutput {
    /// The spec it ran.
    pub spec: BenchSpec,
    /// Wall time of each timed run, seconds.
    pub times_s: Vec<f64>,
    /// First timed run's start and last one's end, on the shared clock.
    pub start: Stamp,
    /// See `start`.
    pub end: Stamp,
    /// Bytes copied (circular buffer) or nodes visited (list walk) per run.
    pub work_per_run: u64,
    /// A checksum of the work, so it cannot be optimised away.
    pub checksum: u64,
    /// Where the hot loops are, in words.
    pub placement: String,
    /// CPU of this process over the timed runs.
    pub cpu: ProcessCpu,
}

/// The set-up state of one benchmark.
enum Prepared {
    Circular {
        deque: VecDeque<u8>,
        buf: Vec<u8>,
        copy: CopyFn,
    },
    Walk(Walk),
}

fn prepare(spec: &BenchSpec) -> Prepared {
    match spec.bench {
        Benchmark::CircularBuffer1Kb | Benchmark::CircularBuffer1Mb => {
            let n = spec.bench.size();
            let mut deque = VecDeque::with_capacity(n);
            deque.extend((0..n).map(|i| (i % 256) as u8));
            let copy = match spec.variant {
                Variant::A => COPY_A,
                Variant::B => COPY_B,
            };
            Prepared::Circular {
                deque,
                buf: Vec::new(),
                copy,
            }
        }
        Benchmark::ListWalk => Prepared::Walk(match spec.variant {
            Variant::A => Walk::dense(spec.bench.size()),
            Variant::B => Walk::shuffled(spec.bench.size()),
        }),
    }
}

/// One timed run: the seed's `run()` (`iterations` × write, set at 0, clear), or a
/// walk of `iterations` nodes. Never inlined: callgrind collects inside it only.
#[inline(never)]
pub fn perfstat_timed_run(p: &mut PreparedBench, iterations: u64) -> u64 {
    match &mut p.0 {
        Prepared::Circular { deque, buf, copy } => {
            let copy = *copy;
            for _ in 0..iterations {
                let (front, back) = deque.as_slices();
                for s in [front, back] {
                    if !s.is_empty() {
                        kernels::append(copy, buf, s);
                    }
                }
                let mut at = 0;
                for s in [front, back] {
                    if !s.is_empty() {
                        kernels::copy_into(copy, &mut buf[at..at + s.len()], s);
                        at += s.len();
                    }
                }
                buf.clear();
            }
            buf.capacity() as u64
        }
        Prepared::Walk(w) => w.walk(iterations),
    }
}

/// A benchmark set up and ready to run (opaque).
pub struct PreparedBench(Prepared);

/// Sets a benchmark up (fills the buffers, links the list).
pub fn prepare_bench(spec: &BenchSpec) -> PreparedBench {
    PreparedBench(prepare(spec))
}

/// Where the hot loops of this build are, in words.
pub fn placement(spec: &BenchSpec) -> String {
    match (spec.bench.is_seed(), kernels::ALIGNMENT_CONTROLLED) {
        (false, _) => match spec.variant {
            Variant::A => "contiguous nodes, 16 per cache line, in order".into(),
            Variant::B => "one node per cache line, shuffled".into(),
        },
        (true, true) => match spec.variant {
            Variant::A => "copy loop at a 64-byte boundary (inside one 32-byte window)".into(),
            Variant::B => format!(
                "copy loop {} bytes past a 64-byte boundary (its cmp/jb crosses a 32- and 64-byte boundary)",
                kernels::B_LOOP_OFFSET
            ),
        },
        (true, false) => {
            "the same Rust loop for A and B: code alignment is controlled on x86-64 only".into()
        }
    }
}

/// The seed's harness: set up, `warmup` untimed runs, `runs` timed ones.
pub fn run_harness(spec: &BenchSpec) -> Result<BenchOutput, String> {
    spec.check()?;
    let mut p = prepare_bench(spec);
    let mut checksum = 0u64;
    for _ in 0..spec.warmup {
        checksum ^= std::hint::black_box(perfstat_timed_run(&mut p, spec.iterations));
    }
    let mut times_s = Vec::with_capacity(spec.runs);
    let cpu_before = CpuSnapshot::now();
    let start = Stamp::now();
    for _ in 0..spec.runs {
        let t = Instant::now();
        checksum ^= std::hint::black_box(perfstat_timed_run(&mut p, spec.iterations));
        times_s.push(t.elapsed().as_secs_f64());
    }
    let end = Stamp::now();
    let cpu = cpu_before.until(&CpuSnapshot::now(), "benchmark", std::process::id());
    let work_per_run = if spec.bench.is_seed() {
        2 * spec.bench.size() as u64 * spec.iterations
    } else {
        spec.iterations
    };
    Ok(BenchOutput {
        spec: spec.clone(),
        times_s,
        start,
        end,
        work_per_run,
        checksum,
        placement: placement(spec),
        cpu,
    })
}

/// The hidden role: runs the spec given as JSON and returns the output as JSON.
pub fn serve_json(spec_json: &str) -> Result<String, String> {
    let spec: BenchSpec = serde_json::from_str(spec_json)
        .map_err(|e| format!("bad perf-stat benchmark spec: {e}"))?;
    let out = run_harness(&spec)?;
    serde_json::to_string(&out).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_harness_has_the_seed_shape() {
        let s = BenchSpec::seed(Benchmark::CircularBuffer1Kb, Variant::A);
        assert_eq!((s.iterations, s.warmup, s.runs), (10_000, 1, 10));
        let s = BenchSpec::seed(Benchmark::CircularBuffer1Mb, Variant::B);
        assert_eq!(s.iterations, 20);
        assert_eq!(Benchmark::CircularBuffer1Mb.size(), 1 << 20);
    }

    #[test]
    fn a_small_run_of_each_benchmark_and_variant_times_every_run() {
        for bench in Benchmark::ALL {
            for variant in [Variant::A, Variant::B] {
                let spec = BenchSpec {
                    iterations: if bench.is_seed() { 3 } else { 1000 },
                    warmup: 1,
                    runs: 2,
                    ..BenchSpec::seed(bench, variant)
                };
                let json = serde_json::to_string(&spec).unwrap();
                let out: BenchOutput = serde_json::from_str(&serve_json(&json).unwrap()).unwrap();
                assert_eq!(out.times_s.len(), 2);
                assert!(out.times_s.iter().all(|t| *t > 0.0));
                assert!(out.end >= out.start);
                assert!(!out.placement.is_empty());
            }
        }
    }

    #[test]
    fn bad_specs_are_refused_with_a_reason() {
        assert!(serve_json("{").unwrap_err().contains("bad perf-stat"));
        let mut s = BenchSpec::seed(Benchmark::ListWalk, Variant::A);
        s.runs = 0;
        let e = serve_json(&serde_json::to_string(&s).unwrap()).unwrap_err();
        assert!(e.contains("runs"), "{e}");
        assert_eq!(Variant::from_name("B"), Some(Variant::B));
        assert_eq!(
            Benchmark::from_name("list_walk_512k_nodes"),
            Some(Benchmark::ListWalk)
        );
    }
}
