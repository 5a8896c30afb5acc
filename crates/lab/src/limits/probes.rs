//! The microbenchmarks behind [`super::Limits`]: each returns one sample per call, and
//! the caller repeats it to get a median and a spread.
//!
//! Every probe is written the way the transports use the machine: `memcpy` through
//! the C library's routine (what `copy_from_slice` calls for large copies) between
//! page-aligned buffers, as the workloads place theirs, and at other placements to
//! find a slow one; a cache line handed between two pinned threads by spinning on it,
//! a futex word handed back and forth with each side asleep until woken, a system
//! call that does no work, a byte sent round two pipes, and a buffer written on one
//! CPU, copied on the other and read back (the hand-over). Threads are pinned by
//! their own affinity, never the caller's, so a probe leaves the calling thread's
//! placement alone.
//!
//! The first round trip of a two-thread probe is not timed: it waits out the
//! partner thread's start and its move to its CPU, which would otherwise dominate a
//! short sample.
//!
//! Every sample has a time budget: a probe that runs long (a slow placement, a
//! partner thread that must share its CPU with other work) stops when the budget is
//! spent and reports the rate over what it did, so a busy machine makes the probes
//! no slower than their budgets allow. A probe that needs a second CPU and has none,
//! or whose partner cannot run (or, spinning, does not answer within its deadline),
//! returns `None` rather than hanging.

use std::hint::black_box;
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use xferbench_transports::buffer::{PAGE, PageBuf};

/// How long a two-thread probe may take before it is abandoned.
const DEADLINE: Duration = Duration::from_secs(2);

/// The hand-over sizes measured, bytes: the floors of ping-pongs of large messages.
pub const HANDOVER_SIZES: [u64; 2] = [4 << 10, 64 << 10];

/// The message sizes of the stream floors, bytes (`StreamLimit`).
pub const STREAM_SIZES: [u64; 3] = [4 << 10, 16 << 10, 64 << 10];

/// Laps of the ring the stream floor's reader takes before timing starts
/// ([`stream_rate`]).
pub const STREAM_LEAD_LAPS: u64 = 4;

/// The ring a stream floor of `size`-byte messages runs through, bytes: the ring the
/// `shm` transport gives a stream of that size by default (`capacity=auto`,
/// [`xferbench_transports::shm::auto_capacity`] of a stream, which does not depend
/// on the cache).
pub fn stream_ring(size: u64) -> u64 {
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    let traffic = xferbench_transports::Traffic::stream(size);
    xferbench_transports::shm::auto_capacity(traffic, 32 << 10) as u64
}

/// Bytes of messages a side of the stream floor of `size`-byte messages through a ring
/// of `ring` bytes moves between two publications of its count ([`stream_rate`]): the
/// batch the `shm` transport gives such a stream by default (`batch=auto`,
/// [`xferbench_transports::shm::auto_batch`]). A ring that streams publishes in
/// batches: on a VM whose two CPUs sit in different core complexes, an index line
/// crossing between them for every 4 KiB message costs more than the message.
pub fn stream_batch(size: usize, ring: usize) -> usize {
    xferbench_transports::shm::auto_batch(xferbench_transports::Traffic::stream(size), ring)
}

/// `4 KiB`, `64 KiB`, `2 MiB`, `64 MiB`.
pub fn size_words(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// The two CPUs the cross-CPU probes use: the first two this process may run on.
pub fn probe_cpus() -> Vec<usize> {
    let mut cpus = xferbench_probes::affinity::allowed_cpus();
    cpus.truncate(2);
    if cpus.is_empty() {
        cpus.push(0);
    }
    cpus
}

/// Bytes of buffers per direction the hand-over cycles through when it gives every
/// message fresh lines: the `shm` transport's ring for a stream, more than a CPU's
/// private caches hold.
pub const HANDOVER_POOL: usize = 4 << 20;

/// Buffers for the memcpy probe at one size and one placement, touched once so page
/// faults stay out of the timing.
///
/// Both start on a page, then the destination is moved `offset` bytes further: the
/// copy runs with `dst − src` ≡ `offset` (mod 4096). Offset 0 is the placement a
/// transport's buffers have ([`xferbench_transports::buffer`]) and the one the limit
/// is taken at; others show whether this machine's `memcpy` has a slow placement.
pub struct CopyBuffers {
    region: PageBuf,
    size: usize,
    dst: usize,
}

impl CopyBuffers {
    /// Two page-aligned buffers of `size` bytes, written through.
    pub fn new(size: usize) -> Self {
        Self::at_offset(size, 0)
    }

    /// Two buffers of `size` bytes with `dst − src` ≡ `offset` (mod 4096), written
    /// through. A page lies between them, so they never share one.
    pub fn at_offset(size: usize, offset: usize) -> Self {
        let dst = size.next_multiple_of(PAGE) + PAGE + offset % PAGE;
        let mut region = PageBuf::zeroed(dst + size);
        for (i, b) in region[..size].iter_mut().enumerate() {
            *b = i as u8;
        }
        region[dst..].fill(1);
        CopyBuffers { region, size, dst }
    }

    /// `dst − src` modulo a page.
    #[cfg(test)]
    fn offset(&self) -> usize {
        self.dst % PAGE
    }

    /// Bytes per second of copying the buffer `reps` times, or fewer when the copies
    /// take longer than `budget` (a slow placement): the rate over the copies made.
    pub fn sample(&mut self, reps: usize, budget: Duration) -> f64 {
        let (src, dst) = self.region.split_at_mut(self.dst);
        let (src, dst) = (&src[..self.size], &mut dst[..self.size]);
        // The clock is read between batches of up to 64 copies, which costs a small
        // copy (40 ns at 4 KiB) under 1 % and lets a slow placement stop early.
        let batch = (reps / 8).clamp(1, 64);
        let mut done = 0;
        let start = Instant::now();
        while done < reps {
            let n = batch.min(reps - done);
            for _ in 0..n {
                dst.copy_from_slice(black_box(src));
                black_box(&mut *dst);
            }
            done += n;
            if start.elapsed() > budget {
                break;
            }
        }
        let s = start.elapsed().as_secs_f64();
        (self.size * done) as f64 / s.max(1e-9)
    }

    #[cfg(test)]
    fn halves(&self) -> (&[u8], &[u8]) {
        (
            &self.region[..self.size],
            &self.region[self.dst..self.dst + self.size],
        )
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
/// and one on `b` by spinning, over `trips` round trips or as many as fit in
/// `budget`.
pub fn cache_line_rtt(a: usize, b: usize, trips: u64, budget: Duration) -> Option<f64> {
    let line = Arc::new(Line(AtomicU64::new(0)));
    let give_up = Arc::new(AtomicBool::new(false));
    let (l, g) = (line.clone(), give_up.clone());
    let echo = std::thread::spawn(move || {
        if xferbench_probes::affinity::pin_current_thread(b).is_err() {
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
            xferbench_probes::affinity::pin_current_thread(a).ok()?;
            let deadline = Instant::now() + DEADLINE;
            let mut start = Instant::now();
            let mut next = 1;
            let mut timed = 0u64;
            while next < 2 * (trips + 1) {
                line.0.store(next, Ordering::Release);
                let mut spins = 0u32;
                while line.0.load(Ordering::Acquire) != next + 1 {
                    std::hint::spin_loop();
                    spins = spins.wrapping_add(1);
                    if spins.is_multiple_of(4096) && Instant::now() > deadline {
                        return (timed > 0).then(|| (start.elapsed(), timed));
                    }
                }
                if next == 1 {
                    start = Instant::now();
                } else {
                    timed += 1;
                    if timed.is_multiple_of(256) && start.elapsed() > budget {
                        break;
                    }
                }
                next += 2;
            }
            Some((start.elapsed(), timed))
        })
        .join()
        .ok()
        .flatten()
    });
    give_up.store(true, Ordering::Relaxed);
    let _ = echo.join();
    per_trip(took)
}

/// Nanoseconds per timed round trip.
/// The clock of a round-trip probe: the first trip warms up and starts it; each
/// later one is timed until `budget` is spent.
struct TripTimer {
    start: Instant,
    timed: u64,
    budget: Duration,
}

impl TripTimer {
    fn new(budget: Duration) -> TripTimer {
        TripTimer {
            start: Instant::now(),
            timed: 0,
            budget,
        }
    }

    /// Trip `trip` (from 0) is done; whether the budget is spent.
    #[inline]
    fn done(&mut self, trip: u64) -> bool {
        if trip == 0 {
            self.start = Instant::now();
            return false;
        }
        self.timed += 1;
        self.start.elapsed() > self.budget
    }

    /// The time of the timed trips, and how many there were.
    fn took(&self) -> (Duration, u64) {
        (self.start.elapsed(), self.timed)
    }
}

fn per_trip(took: Option<(Duration, u64)>) -> Option<f64> {
    took.filter(|(_, n)| *n > 0)
        .map(|(d, n)| d.as_nanos() as f64 / n as f64)
}

/// Mean nanoseconds per round trip of a futex word handed between a thread on `a`
/// and one on `b` (the same CPU when `a == b`), each asleep until woken, over `trips`
/// round trips or as many as fit in `budget`.
///
/// Both sides sleep without a timeout, as the C reference does: arming a timer on
/// every wait costs a VM about a microsecond per round trip. Neither can be left
/// asleep: each side that leaves says so in the word and wakes the other.
pub fn futex_rtt(a: usize, b: usize, trips: u64, budget: Duration) -> Option<f64> {
    use rustix::thread::futex;
    // 0: the echo's turn is over; 1: its turn; 2: the measuring side left; 3: the
    // echo could not run and left.
    let word = Arc::new(AtomicU32::new(0));
    let w = word.clone();
    let echo = std::thread::spawn(move || {
        if xferbench_probes::affinity::pin_current_thread(b).is_err() {
            w.store(3, Ordering::Release);
            let _ = futex::wake(&w, futex::Flags::PRIVATE, 1);
            return;
        }
        for _ in 0..=trips {
            loop {
                match w.load(Ordering::Acquire) {
                    1 => break,
                    0 => {
                        let _ = futex::wait(&w, futex::Flags::PRIVATE, 0, None);
                    }
                    _ => return,
                }
            }
            w.store(0, Ordering::Release);
            let _ = futex::wake(&w, futex::Flags::PRIVATE, 1);
        }
    });
    let took = std::thread::scope(|s| {
        s.spawn(|| {
            xferbench_probes::affinity::pin_current_thread(a).ok()?;
            let mut timer = TripTimer::new(budget);
            for trip in 0..=trips {
                // Fails when the echo left (3): it could not run.
                word.compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
                    .ok()?;
                let _ = futex::wake(&word, futex::Flags::PRIVATE, 1);
                loop {
                    match word.load(Ordering::Acquire) {
                        0 => break,
                        1 => {
                            let _ = futex::wait(&word, futex::Flags::PRIVATE, 1, None);
                        }
                        _ => return None,
                    }
                }
                if timer.done(trip) {
                    break;
                }
            }
            Some(timer.took())
        })
        .join()
        .ok()
        .flatten()
    });
    // The echo is told to leave, and woken in case it sleeps.
    word.store(2, Ordering::Release);
    let _ = futex::wake(&word, futex::Flags::PRIVATE, 1);
    let _ = echo.join();
    per_trip(took)
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

/// Mean nanoseconds per read of the clock a ping-pong times each round trip with
/// (`clock`, a [`xferbench_probes::clock::TripClock`]), over `calls` reads.
pub fn clock_read_cost(clock: &xferbench_probes::clock::TripClock, calls: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        black_box(clock.read());
    }
    start.elapsed().as_nanos() as f64 / calls.max(1) as f64
}

/// Mean nanoseconds per round trip of one byte sent to a thread on `b` over a pipe
/// and back over a second pipe, from a thread on `a`, over `trips` round trips or as
/// many as fit in `budget`.
pub fn pipe_rtt(a: usize, b: usize, trips: u64, budget: Duration) -> Option<f64> {
    let (up_r, up_w) = std::io::pipe().ok()?;
    let (down_r, down_w) = std::io::pipe().ok()?;
    let echo = std::thread::spawn(move || {
        let (mut r, mut w) = (up_r, down_w);
        let _ = xferbench_probes::affinity::pin_current_thread(b);
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
            xferbench_probes::affinity::pin_current_thread(a).ok()?;
            let mut byte = [7u8; 1];
            let mut timer = TripTimer::new(budget);
            for trip in 0..=trips {
                w.write_all(&byte).ok()?;
                r.read_exact(&mut byte).ok()?;
                if timer.done(trip) {
                    break;
                }
            }
            Some(timer.took())
        })
        .join()
        .ok()
        .flatten()
    });
    let _ = echo.join();
    per_trip(took)
}

/// Mean nanoseconds per hand-over round trip of `size` bytes between a thread on `a`
/// and one on `b`, over `trips` round trips or as many as fit in `budget`: the floor
/// of a ping-pong at that size.
///
/// The thread on `a` writes every byte of a request buffer and raises a flag; the
/// thread on `b`, spinning on the flag, copies the request into a reply buffer
/// (reading every byte of the one, writing every byte of the other) and lowers the
/// flag; the first reads every cache line of the reply. These are the bytes a
/// zero-copy ping-pong moves and the way its workload touches them (the sender
/// writes every byte, the echo copies request into reply, the receiver reads every
/// line), with no ring, index or copy in or out: what any transport must pay at
/// least. Every buffer starts on a page ([`PageBuf`]), so the copy never meets
/// glibc's slow `rep movsb` distances.
///
/// Each round trip uses the next request and reply buffer of a pool of `pool` bytes
/// per direction (at least two buffers), as a ring transport writes each message at
/// the next place in its ring. A pool of [`HANDOVER_POOL`] gives every message lines
/// that have aged out of the two CPUs' private caches; a pool of two buffers re-uses
/// lines both CPUs hold, as a small ring does. Which costs less depends on the size
/// and the machine, so the floor of a ping-pong is the lower of the two
/// ([`handover_floor`]).
pub fn handover_rtt(
    a: usize,
    b: usize,
    size: usize,
    pool: usize,
    trips: u64,
    budget: Duration,
) -> Option<f64> {
    /// The two pools of buffers, each buffer owned in turn by one side, as the flag
    /// says.
    struct Shared {
        flag: Line,
        request: std::cell::UnsafeCell<PageBuf>,
        reply: std::cell::UnsafeCell<PageBuf>,
    }
    // SAFETY: the buffers are touched only by the side the flag hands them to: the
    // measuring side between lowering and raising it (odd values are the echo's),
    // with Release on every hand-over and Acquire before every access.
    unsafe impl Sync for Shared {}
    // Buffers of the pool, each on a page; a trip's buffers are slot `trip % slots`.
    let stride = size.max(1).next_multiple_of(PAGE);
    // A batch of fewer trips than the pool has slots never comes back to a slot, so
    // it needs only as many (the first trip, untimed, takes one more).
    let trips_slots = usize::try_from(trips)
        .unwrap_or(usize::MAX)
        .saturating_add(1);
    let slots = (pool / stride).min(trips_slots).max(2);
    let pool = |fill: u8| {
        let mut p = PageBuf::zeroed(stride * slots);
        // Written through once, so page faults stay out of the timing.
        p.fill(fill);
        std::cell::UnsafeCell::new(p)
    };
    let shared = Arc::new(Shared {
        flag: Line(AtomicU64::new(0)),
        request: pool(1),
        reply: pool(2),
    });
    // The byte range of slot `flag / 2 % slots` (both sides derive it from the flag).
    let slot = move |flag: u64| {
        let at = (flag / 2 % slots as u64) as usize * stride;
        at..at + size
    };
    let give_up = Arc::new(AtomicBool::new(false));
    let (sh, g) = (shared.clone(), give_up.clone());
    let echo = std::thread::spawn(move || {
        if xferbench_probes::affinity::pin_current_thread(b).is_err() {
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
            let r = slot(expect);
            // SAFETY: the flag handed both buffers to this side (see `Shared`).
            let (reply, request) = unsafe { (&mut *sh.reply.get(), &*sh.request.get()) };
            reply[r.clone()].copy_from_slice(&request[r]);
            sh.flag.0.store(expect + 1, Ordering::Release);
            expect += 2;
        }
    });
    let took = std::thread::scope(|s| {
        s.spawn(|| {
            xferbench_probes::affinity::pin_current_thread(a).ok()?;
            let deadline = Instant::now() + DEADLINE;
            let mut start = Instant::now();
            let mut sink = 0u64;
            let mut timed = 0u64;
            let mut next = 1;
            while next < 2 * (trips + 1) {
                let r = slot(next);
                // SAFETY: the echo has lowered the flag: both buffers are ours.
                let request = unsafe { &mut *shared.request.get() };
                request[r.clone()].fill(next as u8);
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
                let reply = unsafe { &*shared.reply.get() };
                sink ^= xferbench_probes::verify::read_lines(&reply[r]);
                if next == 1 {
                    start = Instant::now();
                } else {
                    timed += 1;
                    if start.elapsed() > budget {
                        break;
                    }
                }
                next += 2;
            }
            black_box(sink);
            Some((start.elapsed(), timed))
        })
        .join()
        .ok()
        .flatten()
    });
    give_up.store(true, Ordering::Relaxed);
    let _ = echo.join();
    per_trip(took)
}

/// The floor of a ping-pong of `size` bytes: the lower of the hand-over round trip
/// through two re-used buffers and the one through a pool of fresh ones
/// ([`handover_rtt`]), each over `trips` round trips or `budget`.
pub fn handover_floor(
    a: usize,
    b: usize,
    size: usize,
    trips: u64,
    budget: Duration,
) -> Option<f64> {
    let reused = handover_rtt(a, b, size, 0, trips, budget)?;
    let fresh = handover_rtt(a, b, size, HANDOVER_POOL, trips, budget)?;
    Some(reused.min(fresh))
}

/// How a stream probe's reader takes each message ([`stream_rate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamMode {
    /// As a copying stream: the writer copies its message from a buffer of its own
    /// into the ring, the reader copies it out into a buffer of its own and reads its
    /// first word.
    Copy,
    /// As a zero-copy stream with the default `touch` rule: the writer writes every
    /// byte in the ring ([`xferbench_probes::verify::write_in_place`]), the reader reads one
    /// word of every cache line there ([`xferbench_probes::verify::read_lines`]).
    InPlace,
}

/// How a copying stream probe's reader copies each message out of the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyOut {
    /// The C library's `memcpy`, as a transport's copy is: `rep movsb` for a few KiB
    /// and more on the CPUs this project runs on.
    Memcpy,
    /// A loop of vector loads and stores
    /// ([`xferbench_transports::copy::copy_by_vectors`]), never `rep movsb`.
    Vectors,
}

/// Bytes per second of a one-way stream of `size`-byte messages from a thread on `a`
/// to one on `b` through a ring of `ring` bytes, over `messages` messages after
/// [`STREAM_LEAD_LAPS`] untimed laps of the ring, or as many as fit in `budget`: the
/// floor of a stream of that size.
///
/// The ring holds `ring / size` slots (at least two), each starting on a cache line
/// (on a page for sizes that are multiples of one). The writer puts message `i` in
/// slot `i % slots` and publishes how many it has written (`head`, Release) once per
/// [`stream_batch`] bytes of messages (at least once a message) and before it waits;
/// the reader waits for it (Acquire), takes the message ([`StreamMode`]) and publishes
/// its own count (`tail`) to free slots, alike. Each side keeps the other's last count
/// and reads it again only when it must wait: the least a single-producer ring that
/// streams does, with no header, length or wake-up. The copies run between
/// page-aligned buffers ([`PageBuf`]), away from glibc's slow `rep movsb` distances.
///
/// Timing starts once the reader has taken [`STREAM_LEAD_LAPS`] laps of the ring, so
/// that every timed message lands on lines the ring has used before, the start of the
/// partner thread stays out of it, and so does the pair's way into its steady state
/// (the reader starts a ring behind and catches up, or falls back, over the first few
/// MiB).
///
/// A copying stream is timed twice, its reader copying out once with `memcpy` and
/// once with vector loads ([`CopyOut`]), and the faster counts: a floor is the best
/// the machine does, and on some machines a `memcpy` reader that keeps pace with the
/// writer falls into a slow regime of its own for long stretches (docs/limits.md,
/// "The copying reader, two ways").
pub fn stream_rate(
    a: usize,
    b: usize,
    size: usize,
    ring: usize,
    mode: StreamMode,
    messages: u64,
    budget: Duration,
) -> Option<f64> {
    let by = |out| stream_rate_by(a, b, size, ring, mode, out, messages, budget);
    match mode {
        StreamMode::InPlace => by(CopyOut::Memcpy),
        StreamMode::Copy => [CopyOut::Memcpy, CopyOut::Vectors]
            .into_iter()
            .filter_map(by)
            .max_by(f64::total_cmp),
    }
}

/// [`stream_rate`] with a copying reader that copies out as `out` says (an in-place
/// reader copies nothing, whatever `out`).
#[allow(clippy::too_many_arguments)]
pub fn stream_rate_by(
    a: usize,
    b: usize,
    size: usize,
    ring: usize,
    mode: StreamMode,
    out: CopyOut,
    messages: u64,
    budget: Duration,
) -> Option<f64> {
    let shared = Arc::new(StreamRing::new(size, ring, messages));
    let stop = Arc::new(AtomicBool::new(false));
    let (sh, st) = (shared.clone(), stop.clone());
    let writer = std::thread::spawn(move || {
        if xferbench_probes::affinity::pin_current_thread(a).is_err() {
            st.store(true, Ordering::Relaxed);
            return;
        }
        sh.write(mode, &st);
    });
    let took = std::thread::scope(|s| {
        s.spawn(|| {
            xferbench_probes::affinity::pin_current_thread(b).ok()?;
            shared.read(mode, out, &stop, budget)
        })
        .join()
        .ok()
        .flatten()
    });
    stop.store(true, Ordering::Relaxed);
    let _ = writer.join();
    let (d, n) = took.filter(|(_, n)| *n > 0)?;
    Some((n * shared.size as u64) as f64 / d.as_secs_f64().max(1e-9))
}

/// The ring of [`stream_rate`] and its two indices; a slot belongs to the writer
/// until `head` passes it, then to the reader until `tail` does.
struct StreamRing {
    head: Line,
    tail: Line,
    /// The start of `_ring`'s bytes, through which each side makes the slice of the
    /// one slot it owns.
    base: *mut u8,
    _ring: PageBuf,
    /// Bytes per message.
    size: usize,
    /// Bytes from one slot's start to the next's (whole cache lines).
    stride: usize,
    /// Slots in the ring: messages per lap.
    lap: u64,
    /// Messages a side moves between two publications of its count.
    every: u64,
    /// Untimed messages before the timed ones: [`STREAM_LEAD_LAPS`] laps.
    lead: u64,
    /// Messages in all: the untimed lead and the timed ones.
    total: u64,
}

/// One side's count in [`StreamRing`] and how far it has been published: once per
/// `every` messages, and whenever the side is about to wait.
struct Count<'a> {
    line: &'a AtomicU64,
    published: u64,
    every: u64,
}

impl Count<'_> {
    /// `done` messages are done: published once a batch of them is.
    #[inline(always)]
    fn done(&mut self, done: u64) {
        if done - self.published >= self.every {
            self.publish(done);
        }
    }

    /// Publishes `done` unless it is already (before a wait: the other side may be
    /// waiting for it).
    #[inline(always)]
    fn publish(&mut self, done: u64) {
        if self.published < done {
            self.line.store(done, Ordering::Release);
            self.published = done;
        }
    }
}

// SAFETY: a slot is written only by the writer while `head` has not passed it and
// `tail` has (it waits for `tail` with Acquire), and read only by the reader after
// `head` passed it (Acquire) and before it publishes `tail` (Release); no reference
// to the whole ring is made while both run.
unsafe impl Sync for StreamRing {}
// SAFETY: as above; the ring's memory is owned by `_ring`, freed when the last of
// the two sides drops it.
unsafe impl Send for StreamRing {}

impl StreamRing {
    /// A ring of `ring` bytes (at least two slots) for `size`-byte messages, written
    /// through once so that page faults stay out of the timing, for the untimed lead
    /// and `messages` more.
    fn new(size: usize, ring: usize, messages: u64) -> StreamRing {
        let size = size.max(1);
        let stride = size.next_multiple_of(xferbench_probes::verify::LINE);
        let slots = (ring / stride).max(2);
        let lap = slots as u64;
        let lead = lap.saturating_mul(STREAM_LEAD_LAPS);
        let mut buf = PageBuf::zeroed(stride * slots);
        buf.fill(1);
        StreamRing {
            head: Line(AtomicU64::new(0)),
            tail: Line(AtomicU64::new(0)),
            base: buf.as_mut_ptr(),
            _ring: buf,
            size,
            stride,
            lap,
            every: (stream_batch(size, stride * slots) / stride).max(1) as u64,
            lead,
            total: lead.saturating_add(messages.max(1)),
        }
    }

    /// The writer's side: every message into its slot as `mode` says, `head`
    /// published once per `every` messages and before each wait; returns early when
    /// `stop` rises while it waits.
    fn write(&self, mode: StreamMode, stop: &AtomicBool) {
        // The ring's shape, read once so that the loop keeps it in registers.
        let (base, size, lap, stride) = (self.base, self.size, self.lap, self.stride);
        let mut head = Count {
            line: &self.head.0,
            published: 0,
            every: self.every,
        };
        let slot = |i: u64| {
            // SAFETY: `i % lap` slots of `stride` bytes lie inside the ring.
            unsafe { base.add((i % lap) as usize * stride) }
        };
        let mut own = PageBuf::zeroed(size);
        xferbench_probes::verify::fill_pattern(&mut own);
        let mut tail = 0u64;
        for i in 0..self.total {
            let mut spins = 0u32;
            while i - tail >= lap {
                tail = self.tail.0.load(Ordering::Acquire);
                if i - tail < lap {
                    break;
                }
                head.publish(i);
                std::hint::spin_loop();
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(4096) && stop.load(Ordering::Relaxed) {
                    return;
                }
            }
            // SAFETY: `tail` has passed slot `i` and `head` not yet (see
            // `StreamRing`); the slot lies inside the ring.
            let m = unsafe { std::slice::from_raw_parts_mut(slot(i), size) };
            match mode {
                StreamMode::Copy => {
                    xferbench_probes::verify::stamp(&mut own, i, false);
                    m.copy_from_slice(&own);
                }
                StreamMode::InPlace => xferbench_probes::verify::write_in_place(m, i, false),
            }
            head.done(i + 1);
        }
        head.publish(self.total);
    }

    /// The reader's side: every message taken as `mode` says (copied out as `out`
    /// says), `tail` published once per `every` messages and before each wait, timed
    /// from the end of the lead until the last message or `budget`; the time and the
    /// messages it covers, or `None` when `stop` rises or the writer stalls past
    /// [`DEADLINE`].
    fn read(
        &self,
        mode: StreamMode,
        out: CopyOut,
        stop: &AtomicBool,
        budget: Duration,
    ) -> Option<(Duration, u64)> {
        // The ring's shape, read once so that the loop keeps it in registers.
        let (base, size, lap, stride) = (self.base, self.size, self.lap, self.stride);
        let slot = |i: u64| {
            // SAFETY: `i % lap` slots of `stride` bytes lie inside the ring.
            unsafe { base.add((i % lap) as usize * stride) }
        };
        let mut own = PageBuf::zeroed(size);
        let deadline = Instant::now() + DEADLINE;
        let mut start = Instant::now();
        let mut sink = 0u64;
        let mut head = 0u64;
        let mut timed = 0u64;
        let lead = self.lead;
        let mut tail = Count {
            line: &self.tail.0,
            published: 0,
            every: self.every,
        };
        // The writer fills the ring before the reader takes its first message, so
        // that the reader starts a ring behind, as in a running stream whose writer
        // is ahead. Started together, a copying reader can keep pace with the writer
        // slot by slot, the two fighting over each line as it is written, and stay
        // there: a second, slower regime of the same probe.
        let first = lap.min(self.total);
        let mut spins = 0u32;
        while self.head.0.load(Ordering::Acquire) < first {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(4096)
                && (stop.load(Ordering::Relaxed) || Instant::now() > deadline)
            {
                return None;
            }
        }
        for i in 0..self.total {
            let mut spins = 0u32;
            while head <= i {
                head = self.head.0.load(Ordering::Acquire);
                if head > i {
                    break;
                }
                tail.publish(i);
                std::hint::spin_loop();
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(4096)
                    && (stop.load(Ordering::Relaxed) || Instant::now() > deadline)
                {
                    return None;
                }
            }
            // SAFETY: `head` has passed slot `i` and `tail` not yet (see
            // `StreamRing`); the slot lies inside the ring.
            let m = unsafe { std::slice::from_raw_parts(slot(i), size) };
            match mode {
                StreamMode::Copy => {
                    match out {
                        CopyOut::Memcpy => own.copy_from_slice(m),
                        CopyOut::Vectors => {
                            xferbench_transports::copy::copy_slice_by_vectors(&mut own, m)
                        }
                    }
                    sink ^= xferbench_probes::verify::touch(&own);
                }
                StreamMode::InPlace => sink ^= xferbench_probes::verify::read_lines(m),
            }
            tail.done(i + 1);
            if i + 1 == lead {
                start = Instant::now();
            } else if i + 1 > lead {
                timed += 1;
                if timed.is_multiple_of(64) && start.elapsed() > budget {
                    break;
                }
            }
        }
        black_box(sink);
        Some((start.elapsed(), timed))
    }
}

pub use xferbench_probes::clock::StallSample;

/// One thread per CPU of `cpus`, all at once (every CPU busy, as while a spinning
/// transport runs), each reading the clock for `window` and keeping every gap
/// longer than [`STALL_NS`](xferbench_probes::clock::STALL_NS). `None` for a CPU whose thread could not be placed.
pub fn stalls(cpus: &[usize], window: Duration) -> Vec<Option<StallSample>> {
    let clock = xferbench_probes::clock::TripClock::new();
    let ticks = clock.ticks_per_ns();
    let span = (window.as_nanos() as f64 * ticks) as u64;
    let start = std::sync::Barrier::new(cpus.len());
    std::thread::scope(|s| {
        let threads: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let (clock, start) = (&clock, &start);
                s.spawn(move || {
                    let placed = xferbench_probes::affinity::pin_current_thread(cpu).is_ok();
                    start.wait();
                    if !placed {
                        return None;
                    }
                    let mut stalls = xferbench_probes::clock::StallRecorder::new(clock);
                    let first = clock.read();
                    let end = first + span;
                    let mut last = first;
                    while last < end {
                        let now = clock.read();
                        stalls.gap(last, now);
                        last = now;
                    }
                    Some(stalls.sample(cpu))
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().ok().flatten())
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: Duration = Duration::from_millis(50);

    fn two_cpus() -> Option<(usize, usize)> {
        let cpus = xferbench_probes::affinity::allowed_cpus();
        (cpus.len() >= 2).then(|| (cpus[0], cpus[1]))
    }

    #[test]
    fn copying_moves_every_byte_and_reports_a_rate() {
        for offset in [0, 16, 2048] {
            let mut b = CopyBuffers::at_offset(4096 + 3, offset);
            assert_eq!(b.offset(), offset);
            assert!(b.sample(3, BUDGET) > 0.0);
            let (src, dst) = b.halves();
            assert_eq!(src, dst);
        }
    }

    #[test]
    fn both_buffers_start_on_a_page_when_the_placement_is_aligned() {
        let b = CopyBuffers::new(65536);
        let (src, dst) = b.halves();
        assert_eq!(src.as_ptr() as usize % PAGE, 0);
        assert_eq!(dst.as_ptr() as usize % PAGE, 0);
        assert!(xferbench_transports::buffer::placed_for_copy(
            dst.as_ptr(),
            src.as_ptr()
        ));
    }

    #[test]
    fn a_copy_sample_stops_at_its_budget() {
        let mut b = CopyBuffers::new(2 << 20);
        let start = Instant::now();
        // A million 2 MiB copies would take minutes; the budget ends it after a batch.
        assert!(b.sample(1 << 20, Duration::from_millis(1)) > 0.0);
        assert!(start.elapsed() < Duration::from_secs(60));
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
        assert!(futex_rtt(a, b, 50, BUDGET).unwrap() > 0.0);
        assert!(futex_rtt(a, a, 50, BUDGET).unwrap() > 0.0);
        assert!(pipe_rtt(a, b, 50, BUDGET).unwrap() > 0.0);
        assert!(syscall_cost(100) > 0.0);
        for clock in [
            xferbench_probes::clock::TripClock::new(),
            xferbench_probes::clock::TripClock::monotonic(),
        ] {
            assert!(clock_read_cost(&clock, 100) > 0.0);
        }
        if a != b {
            assert!(cache_line_rtt(a, b, 500, BUDGET).unwrap() > 0.0);
            for pool in [0, HANDOVER_POOL] {
                assert!(handover_rtt(a, b, 4096, pool, 50, BUDGET).unwrap() > 0.0);
            }
            assert!(handover_floor(a, b, 4096, 50, BUDGET).unwrap() > 0.0);
            for mode in [StreamMode::Copy, StreamMode::InPlace] {
                assert!(stream_rate(a, b, 4096, 64 << 10, mode, 100, BUDGET).unwrap() > 0.0);
                // A ring of one message still has two slots.
                assert!(stream_rate(a, b, 4096, 0, mode, 10, BUDGET).unwrap() > 0.0);
            }
        }
    }

    #[test]
    fn the_stream_floor_publishes_in_batches_yet_its_sides_never_wait_for_each_other() {
        // Batches of every size against rings of every size: more messages to a batch
        // than the ring holds (64 B in two slots), a batch of a few slots, and a
        // message larger than a batch. A side that waited without publishing what it
        // had would leave the other waiting until the deadline, and the probe `None`.
        let Some((a, b)) = two_cpus() else { return };
        for (size, ring) in [
            (64, 0),
            (64, 64 << 10),
            (4096, 8192),
            (4096, 64 << 10),
            (64 << 10, 0),
        ] {
            for mode in [StreamMode::Copy, StreamMode::InPlace] {
                for out in [CopyOut::Memcpy, CopyOut::Vectors] {
                    let r = stream_rate_by(a, b, size, ring, mode, out, 1000, BUDGET);
                    assert!(
                        r.is_some_and(|r| r > 0.0),
                        "{size} B through {ring} B, {mode:?}, {out:?}"
                    );
                }
            }
        }
        let ring = StreamRing::new(4096, 4 << 20, 10);
        assert_eq!(ring.every, (16 << 10) / 4096);
        assert_eq!(ring.lead, STREAM_LEAD_LAPS * 1024);
        assert_eq!(ring.total, ring.lead + 10);
        assert_eq!(StreamRing::new(64 << 10, 4 << 20, 10).every, 1);
    }

    #[test]
    fn a_probe_that_runs_out_of_budget_reports_the_trips_it_made() {
        // A zero budget ends each probe after its first timed round trip (the
        // cache-line probe after its first 256).
        let (a, b) = two_cpus().unwrap_or((0, 0));
        assert!(futex_rtt(a, b, 1_000_000, Duration::ZERO).unwrap() > 0.0);
        assert!(pipe_rtt(a, b, 1_000_000, Duration::ZERO).unwrap() > 0.0);
        if a != b {
            assert!(cache_line_rtt(a, b, 1 << 40, Duration::ZERO).unwrap() > 0.0);
            let mode = StreamMode::Copy;
            assert!(stream_rate(a, b, 4096, 8192, mode, 1 << 40, Duration::ZERO).unwrap() > 0.0);
        }
    }

    #[test]
    fn a_probe_on_a_cpu_outside_the_allowed_set_gives_none_rather_than_hanging() {
        let bad = rustix::thread::CpuSet::MAX_CPU - 1;
        assert_eq!(futex_rtt(bad, bad, 10, BUDGET), None);
        assert_eq!(pipe_rtt(bad, 0, 10, BUDGET), None);
        assert_eq!(handover_rtt(bad, 0, 4096, HANDOVER_POOL, 10, BUDGET), None);
        assert_eq!(handover_floor(bad, 0, 4096, 10, BUDGET), None);
        for mode in [StreamMode::Copy, StreamMode::InPlace] {
            assert_eq!(stream_rate(bad, 0, 4096, 8192, mode, 10, BUDGET), None);
            assert_eq!(stream_rate(0, bad, 4096, 8192, mode, 10, BUDGET), None);
        }
    }

    #[test]
    fn a_random_moment_waits_for_what_is_left_of_its_stall() {
        let sample = |stalls: &[f64]| StallSample {
            cpu: 0,
            window_ns: 1e9,
            stalls_ns: stalls.to_vec(),
            lost_ns: stalls.iter().sum(),
        };
        // 10 ms of one second: exactly 1 % of the moments wait, so p99 waits nothing
        // and p99.5 waits for the last half of the stall.
        let one = sample(&[10e6]);
        assert_eq!(one.lost_fraction(), 0.01);
        assert_eq!(one.wait_quantile(0.99), 0.0);
        assert!((one.wait_quantile(0.995) - 5e6).abs() < 1.0);
        // 6 and 4 ms: the 0.5 % of moments that wait longest wait more than 2.5 ms
        // (3.5 ms of the first and 1.5 ms of the second lie beyond it).
        let two = sample(&[4e6, 6e6]);
        assert!((two.wait_quantile(0.995) - 2.5e6).abs() < 1.0);
        // Without a stall nothing waits.
        assert_eq!(sample(&[]).wait_quantile(0.99), 0.0);
    }

    #[test]
    fn a_spinning_thread_sees_its_window_and_no_negative_stall() {
        let cpus = xferbench_probes::affinity::allowed_cpus();
        let got = stalls(&cpus[..cpus.len().min(2)], Duration::from_millis(20));
        for s in got.into_iter().flatten() {
            // The window's end is a whole tick count: up to a tick short of 20 ms in ns.
            assert!(s.window_ns >= 20e6 - 1.0, "window {} ns", s.window_ns);
            assert!(
                s.stalls_ns
                    .iter()
                    .all(|&g| g > xferbench_probes::clock::STALL_NS)
            );
            assert!((0.0..=1.0).contains(&s.lost_fraction()));
        }
        let bad = rustix::thread::CpuSet::MAX_CPU - 1;
        assert_eq!(stalls(&[bad], Duration::from_millis(1)), vec![None]);
    }
}
