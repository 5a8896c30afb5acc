//! The microbenchmarks behind [`super::Limits`]: each returns one sample per call, and
//! the caller repeats it to get a median and a spread.
//!
//! Every probe is written the way the transports use the machine: `memcpy` through
//! the C library's routine (what `copy_from_slice` calls for large copies), a cache
//! line handed between two pinned threads by spinning on it, a futex word handed
//! back and forth with each side asleep until woken, a system call that does no work,
//! a byte sent round two pipes, and a buffer written on one CPU, copied on the other
//! and read back (the hand-over). Threads are pinned by their own affinity, never
//! the caller's, so a probe leaves the calling thread's placement alone.
//!
//! The first round trip of a two-thread probe is not timed: it waits out the
//! partner thread's start and its move to its CPU, which would otherwise dominate a
//! short sample.
//!
//! A probe that needs a second CPU and has none, or whose partner does not answer
//! within its deadline, returns `None` rather than hanging.

use crate::buffer::PageAligned;
use std::hint::black_box;
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a two-thread probe may take before it is abandoned.
const DEADLINE: Duration = Duration::from_secs(2);

/// Buffers for the memcpy probe at one size, touched once so page faults stay out
/// of the timing.
pub struct CopyBuffers {
    src: Vec<u8>,
    dst: Vec<u8>,
}

impl CopyBuffers {
    /// Two buffers of `size` bytes, written through.
    pub fn new(size: usize) -> Self {
        let src: Vec<u8> = (0..size).map(|i| i as u8).collect();
        let dst = vec![1u8; size];
        CopyBuffers { src, dst }
    }

    /// Bytes per second of copying the buffer `reps` times.
    pub fn sample(&mut self, reps: usize) -> f64 {
        let start = Instant::now();
        for _ in 0..reps {
            self.dst.copy_from_slice(black_box(&self.src));
            black_box(&mut self.dst);
        }
        let s = start.elapsed().as_secs_f64();
        (self.src.len() * reps) as f64 / s.max(1e-9)
    }
}

/// Copies of `size` bytes that take about `target` in all (at least one).
pub fn copies_for(size: usize, target: Duration) -> usize {
    // A conservative 20 GB/s keeps small sizes from running long; large sizes copy
    // once per sample.
    let bytes = target.as_secs_f64() * 20e9;
    ((bytes / size as f64) as usize).clamp(1, 1 << 20)
}

/// One 64-byte line, alone in its cache line.
#[repr(align(128))]
struct Line(AtomicU64);

/// Mean nanoseconds per round trip of a cache line handed between a thread on `a`
/// and one on `b` by spinning, over `trips` round trips.
pub fn cache_line_rtt(a: usize, b: usize, trips: u64) -> Option<f64> {
    let line = Arc::new(Line(AtomicU64::new(0)));
    let give_up = Arc::new(AtomicBool::new(false));
    let (l, g) = (line.clone(), give_up.clone());
    let echo = std::thread::spawn(move || {
        if crate::affinity::pin_current_thread(b).is_err() {
            g.store(true, Ordering::Relaxed);
            return;
        }
        let mut expect = 1;
        while expect < 2 * (trips + 1) {
            let mut spins = 0u32;
            while l.0.load(Ordering::Acquire) != expect {
                std::hint::spin_loop();
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(4096) && g.load(Ordering::Relaxed) {
                    return;
                }
            }
            l.0.store(expect + 1, Ordering::Release);
            expect += 2;
        }
    });
    let took = std::thread::scope(|s| {
        s.spawn(|| {
            crate::affinity::pin_current_thread(a).ok()?;
            let deadline = Instant::now() + DEADLINE;
            let mut start = Instant::now();
            let mut next = 1;
            while next < 2 * (trips + 1) {
                line.0.store(next, Ordering::Release);
                let mut spins = 0u32;
                while line.0.load(Ordering::Acquire) != next + 1 {
                    std::hint::spin_loop();
                    spins = spins.wrapping_add(1);
                    if spins.is_multiple_of(4096) && Instant::now() > deadline {
                        return None;
                    }
                }
                if next == 1 {
                    start = Instant::now();
                }
                next += 2;
            }
            Some(start.elapsed())
        })
        .join()
        .ok()
        .flatten()
    });
    give_up.store(true, Ordering::Relaxed);
    let _ = echo.join();
    took.map(|d| d.as_nanos() as f64 / trips.max(1) as f64)
}

/// Mean nanoseconds per round trip of a futex word handed between a thread on `a`
/// and one on `b` (the same CPU when `a == b`), each asleep until woken.
pub fn futex_rtt(a: usize, b: usize, trips: u64) -> Option<f64> {
    use rustix::thread::futex;
    let word = Arc::new(AtomicU32::new(0));
    let give_up = Arc::new(AtomicBool::new(false));
    let (w, g) = (word.clone(), give_up.clone());
    // Sleeps are bounded so an abandoned partner notices and leaves.
    let nap = rustix::fs::Timespec {
        tv_sec: 0,
        tv_nsec: 50_000_000,
    };
    let echo = std::thread::spawn(move || {
        if crate::affinity::pin_current_thread(b).is_err() {
            return;
        }
        for _ in 0..=trips {
            while w.load(Ordering::Acquire) != 1 {
                if g.load(Ordering::Relaxed) {
                    return;
                }
                let _ = futex::wait(&w, futex::Flags::PRIVATE, 0, Some(&nap));
            }
            w.store(0, Ordering::Release);
            let _ = futex::wake(&w, futex::Flags::PRIVATE, 1);
        }
    });
    let took = std::thread::scope(|s| {
        s.spawn(|| {
            crate::affinity::pin_current_thread(a).ok()?;
            let deadline = Instant::now() + DEADLINE;
            let mut start = Instant::now();
            for trip in 0..=trips {
                word.store(1, Ordering::Release);
                let _ = futex::wake(&word, futex::Flags::PRIVATE, 1);
                while word.load(Ordering::Acquire) != 0 {
                    if Instant::now() > deadline {
                        return None;
                    }
                    let _ = futex::wait(&word, futex::Flags::PRIVATE, 1, Some(&nap));
                }
                if trip == 0 {
                    start = Instant::now();
                }
            }
            Some(start.elapsed())
        })
        .join()
        .ok()
        .flatten()
    });
    give_up.store(true, Ordering::Relaxed);
    let _ = echo.join();
    took.map(|d| d.as_nanos() as f64 / trips.max(1) as f64)
}

/// Mean nanoseconds of a `getppid` system call, over `calls` calls.
pub fn syscall_cost(calls: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        // SAFETY: getppid takes no arguments, cannot fail and touches no memory.
        black_box(unsafe { libc::syscall(libc::SYS_getppid) });
    }
    start.elapsed().as_nanos() as f64 / calls.max(1) as f64
}

/// Mean nanoseconds per round trip of one byte sent to a thread on `b` over a pipe
/// and back over a second pipe, from a thread on `a`.
pub fn pipe_rtt(a: usize, b: usize, trips: u64) -> Option<f64> {
    let (up_r, up_w) = std::io::pipe().ok()?;
    let (down_r, down_w) = std::io::pipe().ok()?;
    let echo = std::thread::spawn(move || {
        let (mut r, mut w) = (up_r, down_w);
        let _ = crate::affinity::pin_current_thread(b);
        let mut byte = [0u8; 1];
        // Ends when the measuring side closes its end of the pipe.
        while r.read_exact(&mut byte).is_ok() {
            if w.write_all(&byte).is_err() {
                break;
            }
        }
    });
    let took = std::thread::scope(|s| {
        s.spawn(move || {
            let (mut w, mut r) = (up_w, down_r);
            crate::affinity::pin_current_thread(a).ok()?;
            let mut byte = [7u8; 1];
            let mut start = Instant::now();
            for trip in 0..=trips {
                w.write_all(&byte).ok()?;
                r.read_exact(&mut byte).ok()?;
                if trip == 0 {
                    start = Instant::now();
                }
            }
            Some(start.elapsed())
        })
        .join()
        .ok()
        .flatten()
    });
    let _ = echo.join();
    took.map(|d| d.as_nanos() as f64 / trips.max(1) as f64)
}

/// Mean nanoseconds per hand-over round trip of `size` bytes between a thread on `a`
/// and one on `b`, over `trips` round trips: the floor of a ping-pong at that size.
///
/// The thread on `a` writes every byte of a request buffer and raises a flag; the
/// thread on `b`, spinning on the flag, copies the request into a reply buffer
/// (reading every byte of the one, writing every byte of the other) and lowers the
/// flag; the first reads every cache line of the reply. These are the bytes a
/// zero-copy ping-pong moves and the way its workload touches them (the sender
/// writes every byte, the echo copies request into reply, the receiver reads every
/// line), with no ring, index or copy in or out: what any transport must pay at
/// least. Both buffers start on a page ([`PageAligned`]), so the copy never meets
/// glibc's slow `rep movsb` distances.
pub fn handover_rtt(a: usize, b: usize, size: usize, trips: u64) -> Option<f64> {
    /// The two buffers, owned in turn by one side, as the flag says.
    struct Shared {
        flag: Line,
        request: std::cell::UnsafeCell<PageAligned>,
        reply: std::cell::UnsafeCell<PageAligned>,
    }
    // SAFETY: the buffers are touched only by the side the flag hands them to: the
    // measuring side between lowering and raising it (odd values are the echo's),
    // with Release on every hand-over and Acquire before every access.
    unsafe impl Sync for Shared {}
    let shared = Arc::new(Shared {
        flag: Line(AtomicU64::new(0)),
        request: std::cell::UnsafeCell::new(PageAligned::zeroed(size)),
        reply: std::cell::UnsafeCell::new(PageAligned::zeroed(size)),
    });
    let give_up = Arc::new(AtomicBool::new(false));
    let (sh, g) = (shared.clone(), give_up.clone());
    let echo = std::thread::spawn(move || {
        if crate::affinity::pin_current_thread(b).is_err() {
            g.store(true, Ordering::Relaxed);
            return;
        }
        let mut expect = 1;
        while expect < 2 * (trips + 1) {
            let mut spins = 0u32;
            while sh.flag.0.load(Ordering::Acquire) != expect {
                std::hint::spin_loop();
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(4096) && g.load(Ordering::Relaxed) {
                    return;
                }
            }
            // SAFETY: the flag handed both buffers to this side (see `Shared`).
            unsafe { (*sh.reply.get()).copy_from_slice(&*sh.request.get()) };
            sh.flag.0.store(expect + 1, Ordering::Release);
            expect += 2;
        }
    });
    let took = std::thread::scope(|s| {
        s.spawn(|| {
            crate::affinity::pin_current_thread(a).ok()?;
            let deadline = Instant::now() + DEADLINE;
            let mut start = Instant::now();
            let mut sink = 0u64;
            let mut next = 1;
            while next < 2 * (trips + 1) {
                // SAFETY: the echo has lowered the flag: both buffers are ours.
                unsafe { (*shared.request.get()).fill(next as u8) };
                shared.flag.0.store(next, Ordering::Release);
                let mut spins = 0u32;
                while shared.flag.0.load(Ordering::Acquire) != next + 1 {
                    std::hint::spin_loop();
                    spins = spins.wrapping_add(1);
                    if spins.is_multiple_of(4096) && Instant::now() > deadline {
                        return None;
                    }
                }
                // SAFETY: as above, after the echo's hand-back.
                sink ^= crate::verify::read_lines(unsafe { &*shared.reply.get() });
                if next == 1 {
                    start = Instant::now();
                }
                next += 2;
            }
            black_box(sink);
            Some(start.elapsed())
        })
        .join()
        .ok()
        .flatten()
    });
    give_up.store(true, Ordering::Relaxed);
    let _ = echo.join();
    took.map(|d| d.as_nanos() as f64 / trips.max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_cpus() -> Option<(usize, usize)> {
        let cpus = crate::affinity::allowed_cpus();
        (cpus.len() >= 2).then(|| (cpus[0], cpus[1]))
    }

    #[test]
    fn copying_moves_every_byte_and_reports_a_rate() {
        let mut b = CopyBuffers::new(4096);
        assert!(b.sample(3) > 0.0);
        assert_eq!(b.dst, b.src);
    }

    #[test]
    fn copies_scale_down_with_size_and_never_reach_zero() {
        let t = Duration::from_millis(1);
        assert!(copies_for(4096, t) > copies_for(2 << 20, t));
        assert_eq!(copies_for(1 << 30, t), 1);
    }

    #[test]
    fn two_thread_probes_complete_and_give_positive_times() {
        let (a, b) = two_cpus().unwrap_or((0, 0));
        assert!(futex_rtt(a, b, 50).unwrap() > 0.0);
        assert!(futex_rtt(a, a, 50).unwrap() > 0.0);
        assert!(pipe_rtt(a, b, 50).unwrap() > 0.0);
        assert!(syscall_cost(100) > 0.0);
        if a != b {
            assert!(cache_line_rtt(a, b, 500).unwrap() > 0.0);
            assert!(handover_rtt(a, b, 4096, 50).unwrap() > 0.0);
        }
    }

    #[test]
    fn a_probe_on_a_cpu_outside_the_allowed_set_gives_none_rather_than_hanging() {
        let bad = rustix::thread::CpuSet::MAX_CPU - 1;
        assert_eq!(futex_rtt(bad, bad, 10), None);
        assert_eq!(pipe_rtt(bad, 0, 10), None);
        assert_eq!(handover_rtt(bad, 0, 4096, 10), None);
    }
}
