//! Boards, their DMA engines, the crate's bus and trigger: see the [module
//! docs](super) for the model.

use super::config::{CHUNK_BYTES, DigitizerConfig, Link, Trigger};
use super::control::{Control, ControlReader};
use super::error::DaqError;
use super::memory::{DeviceMemory, Mapping, SAMPLE_BYTES, map, memfd};
use rustix::event::{EventfdFlags, PollFd, PollFlags};
use rustix::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The crate's shared bus: when the boards transferring at the same time ask for
/// more than its rate, each gets its link rate scaled by the same factor
/// (`bus / Σ link rates of the boards in a transfer`), so a faster board (KU) keeps
/// the larger share and slows the others more, as in the seed's six-board rows.
#[derive(Debug)]
pub struct Bus {
    rate: Option<f64>,
    demand: Mutex<f64>,
}

impl Bus {
    /// A bus of `rate` bytes/s (`None`: no limit).
    pub fn new(rate: Option<f64>) -> Bus {
        Bus {
            rate,
            demand: Mutex::new(0.0),
        }
    }

    fn demand(&self) -> std::sync::MutexGuard<'_, f64> {
        self.demand.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A board with `link` bytes/s starts a transfer.
    fn join(&self, link: f64) {
        *self.demand() += link;
    }

    /// It ends it.
    fn leave(&self, link: f64) {
        let mut d = self.demand();
        *d = (*d - link).max(0.0);
    }

    /// The rate a board with `link` gets now.
    pub fn share(&self, link: f64) -> f64 {
        match self.rate {
            Some(bus) => {
                let d = *self.demand();
                if d > bus { link * bus / d } else { link }
            }
            None => link,
        }
    }
}

enum Job {
    /// A link transfer of `bytes` (the copy path's DMA into the bounce buffer, or a
    /// write's DMA out of it), the `before` bytes of the same read having started
    /// at `since`.
    Pace {
        bytes: usize,
        before: usize,
        total: usize,
        since: Instant,
    },
    /// Samples `0..n` of the device memory into the zero-copy target.
    Copy(usize),
}

fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn sleep_until(deadline: Instant) {
    let now = Instant::now();
    if deadline > now {
        std::thread::sleep(deadline - now);
    }
}

struct Engine {
    link: Option<f64>,
    bus: Arc<Bus>,
    memory: Arc<DeviceMemory>,
    target: Option<Arc<Mapping>>,
    cpu: Arc<AtomicU64>,
}

impl Engine {
    /// Paces one chunk of a transfer of `total` bytes that began at `since`, `before`
    /// bytes of it done: the transfer follows a schedule, each chunk adding
    /// `bytes / rate` with the rate the bus allows when the chunk starts, and the
    /// chunk completes when the schedule says so. The host's copy of one chunk thus
    /// overlaps the link time of the next, and a read runs at the preset as long as
    /// the host copies faster than the link.
    fn pace(&self, sched: &mut Instant, bytes: usize, before: usize, total: usize, since: Instant) {
        let Some(link) = self.link else { return };
        if before == 0 {
            *sched = since;
            self.bus.join(link);
        }
        *sched += Duration::from_secs_f64(bytes as f64 / self.bus.share(link));
        if before + bytes >= total {
            self.bus.leave(link);
        }
        sleep_until(*sched);
    }

    fn run(self, jobs: Receiver<Job>, done: SyncSender<()>) {
        let mut sched = Instant::now();
        while let Ok(job) = jobs.recv() {
            match job {
                Job::Pace {
                    bytes,
                    before,
                    total,
                    since,
                } => self.pace(&mut sched, bytes, before, total, since),
                Job::Copy(samples) => {
                    let target = self.target.as_ref().expect("checked by the board");
                    let total = samples * SAMPLE_BYTES;
                    let mut off = 0;
                    let since = Instant::now();
                    while off < total {
                        let n = CHUNK_BYTES.min(total - off);
                        // SAFETY: both mappings hold at least `total` bytes (checked by
                        // the board), do not overlap, and the reader does not touch the
                        // target while it waits for this job.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                self.memory.view().as_ptr().add(off),
                                target.as_ptr().add(off),
                                n,
                            );
                        }
                        self.pace(&mut sched, n, off, total, since);
                        off += n;
                    }
                }
            }
            self.cpu.store(thread_cpu_ns(), Ordering::Relaxed);
            if done.send(()).is_err() {
                break;
            }
        }
    }
}

/// One board: device memory, control block, DMA engine and interrupt line.
pub struct Board {
    index: usize,
    link: Link,
    trigger: Trigger,
    memory: Arc<DeviceMemory>,
    control: Arc<Control>,
    reader: ControlReader,
    irq: Arc<OwnedFd>,
    target: Option<Arc<Mapping>>,
    write_area: Option<OwnedFd>,
    jobs: Option<SyncSender<Job>>,
    done: Receiver<()>,
    engine: Option<JoinHandle<()>>,
    engine_cpu: Arc<AtomicU64>,
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("index", &self.index)
            .field("link", &self.link)
            .field("samples", &self.memory.samples())
            .finish()
    }
}

impl Board {
    fn start(
        index: usize,
        link: Link,
        cfg: &DigitizerConfig,
        bus: Arc<Bus>,
    ) -> Result<Board, DaqError> {
        let memory = Arc::new(DeviceMemory::create(index, cfg.samples)?);
        let control = Arc::new(Control::create(index, cfg.samples)?);
        let reader = control.reader()?;
        let irq = Arc::new(
            rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK).map_err(
                |e| DaqError::Memory {
                    what: "eventfd",
                    source: e.into(),
                },
            )?,
        );
        let target = if cfg.mapped {
            let bytes = cfg.samples * SAMPLE_BYTES;
            let fd = memfd(&format!("daq-dma{index}"), bytes)?;
            Some(Arc::new(map(&fd, bytes, true)?))
        } else {
            None
        };
        let (jobs, job_rx) = sync_channel(1);
        let (done_tx, done) = sync_channel(1);
        let engine_cpu = Arc::new(AtomicU64::new(0));
        let e = Engine {
            link: link.rate(),
            bus,
            memory: memory.clone(),
            target: target.clone(),
            cpu: engine_cpu.clone(),
        };
        let pin =
            (!cfg.engine_cpus.is_empty()).then(|| cfg.engine_cpus[index % cfg.engine_cpus.len()]);
        let engine = std::thread::Builder::new()
            .name(format!("daq-dma{index}"))
            .spawn(move || {
                if let Some(cpu) = pin {
                    let mut set = rustix::thread::CpuSet::new();
                    set.set(cpu);
                    // A CPU this process may not use leaves the engine unpinned: the
                    // lab plans pins among the allowed CPUs only.
                    let _ = rustix::thread::sched_setaffinity(None, &set);
                }
                e.run(job_rx, done_tx)
            })
            .map_err(|e| DaqError::Memory {
                what: "spawning the DMA engine",
                source: e,
            })?;
        Ok(Board {
            index,
            link,
            trigger: cfg.trigger,
            memory,
            control,
            reader,
            irq,
            target,
            write_area: None,
            jobs: Some(jobs),
            done,
            engine: Some(engine),
            engine_cpu,
        })
    }

    /// The board's index in the crate.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Its link.
    pub fn link(&self) -> Link {
        self.link
    }

    /// Samples of device memory.
    pub fn samples(&self) -> usize {
        self.memory.samples()
    }

    /// Its pattern seed (for [`super::memory::mismatches`]).
    pub fn seed(&self) -> u32 {
        self.memory.seed()
    }

    /// CPU time the DMA engine thread has used (the model's, not the host's).
    pub fn engine_cpu(&self) -> Duration {
        Duration::from_nanos(self.engine_cpu.load(Ordering::Relaxed))
    }

    fn dma(&mut self, job: Job) -> Result<(), DaqError> {
        let jobs = self.jobs.as_ref().ok_or(DaqError::Engine(self.index))?;
        jobs.send(job).map_err(|_| DaqError::Engine(self.index))?;
        self.done.recv().map_err(|_| DaqError::Engine(self.index))
    }

    fn check(&self, samples: usize) -> Result<(), DaqError> {
        if self.control.armed() {
            return Err(DaqError::Armed(self.index));
        }
        if samples > self.samples() {
            return Err(DaqError::Range {
                first: 0,
                len: samples,
                samples: self.samples(),
            });
        }
        Ok(())
    }

    /// The copy readout of samples `0..dst.len()`: per 4 MiB chunk, the link
    /// transfer, then a `pread` into `dst`.
    pub fn read(&mut self, dst: &mut [u16]) -> Result<(), DaqError> {
        self.check(dst.len())?;
        let per = CHUNK_BYTES / SAMPLE_BYTES;
        let mut first = 0;
        let since = Instant::now();
        let total_bytes = dst.len() * SAMPLE_BYTES;
        for chunk in dst.chunks_mut(per) {
            self.dma(Job::Pace {
                bytes: chunk.len() * SAMPLE_BYTES,
                before: first * SAMPLE_BYTES,
                total: total_bytes,
                since,
            })?;
            self.memory.pread(first, chunk)?;
            first += chunk.len();
        }
        Ok(())
    }

    /// The zero-copy readout of samples `0..samples`: the engine writes them into the
    /// shared target, which the reader then sees in place.
    pub fn read_mapped(&mut self, samples: usize) -> Result<&[u16], DaqError> {
        self.check(samples)?;
        if self.target.is_none() {
            return Err(DaqError::Config(format!(
                "board {}: no zero-copy target (the digitizer was made for read access)",
                self.index
            )));
        }
        self.dma(Job::Copy(samples))?;
        let t = self.target.as_ref().expect("checked above");
        // SAFETY: the target holds `samples() * 2` bytes, page aligned; the engine
        // finished writing it (the done message orders its writes before this) and
        // writes again only on the next job, which needs `&mut self`.
        Ok(unsafe { std::slice::from_raw_parts(t.as_ptr().cast::<u16>(), samples) })
    }

    /// The write path (`func_writepatt`): per 4 MiB chunk the link transfer, then a
    /// `pwrite` into the board's write area (the sealed sample memory stays as it
    /// is, so reads remain verifiable).
    pub fn write(&mut self, src: &[u16]) -> Result<(), DaqError> {
        self.check(src.len())?;
        if self.write_area.is_none() {
            self.write_area = Some(memfd(
                &format!("daq-wr{}", self.index),
                self.samples() * SAMPLE_BYTES,
            )?);
        }
        let per = CHUNK_BYTES / SAMPLE_BYTES;
        let mut off = 0u64;
        let since = Instant::now();
        let total_bytes = src.len() * SAMPLE_BYTES;
        for chunk in src.chunks(per) {
            self.dma(Job::Pace {
                bytes: chunk.len() * SAMPLE_BYTES,
                before: off as usize,
                total: total_bytes,
                since,
            })?;
            // SAFETY: a byte view of exactly `chunk`.
            let bytes = unsafe {
                std::slice::from_raw_parts(chunk.as_ptr().cast::<u8>(), chunk.len() * SAMPLE_BYTES)
            };
            let fd = self.write_area.as_ref().expect("created above");
            let mut done = 0;
            while done < bytes.len() {
                done += rustix::io::pwrite(fd, &bytes[done..], off + done as u64).map_err(|e| {
                    DaqError::Memory {
                        what: "pwrite to the write area",
                        source: e.into(),
                    }
                })?;
            }
            off += bytes.len() as u64;
        }
        Ok(())
    }

    /// The zero-copy target's first `samples` samples as the last
    /// [`Board::read_mapped`] left them (`None` without a target or beyond it).
    pub fn mapped(&self, samples: usize) -> Option<&[u16]> {
        let t = self.target.as_ref().filter(|_| samples <= self.samples())?;
        // SAFETY: as in `read_mapped`: no job is in flight while we hold `&self`
        // (jobs need `&mut self` and complete before returning).
        Some(unsafe { std::slice::from_raw_parts(t.as_ptr().cast::<u16>(), samples) })
    }

    /// Reads back what [`Board::write`] wrote, for verification.
    pub fn read_written(&self, dst: &mut [u16]) -> Result<(), DaqError> {
        let Some(fd) = &self.write_area else {
            return Err(DaqError::Config("nothing was written".into()));
        };
        // SAFETY: a byte view of exactly `dst`; u16 accepts any bits.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<u8>(), dst.len() * SAMPLE_BYTES)
        };
        let want = bytes.len();
        let n = rustix::io::pread(fd, bytes, 0).map_err(|e| DaqError::Memory {
            what: "pread of the write area",
            source: e.into(),
        })?;
        if n != want {
            return Err(DaqError::Config("short read of the write area".into()));
        }
        Ok(())
    }

    /// Arms an acquisition; the software trigger ends it at once.
    pub fn arm(&mut self) {
        let mut buf = [0u8; 8];
        let _ = rustix::io::read(&*self.irq, &mut buf);
        self.control.arm();
        if self.trigger == Trigger::Software {
            end_acquisition(&self.control, &self.irq);
        }
    }

    /// Waits for the end of the acquisition by polling: a validated status read (one
    /// `pread`) and `usleep(1)` until the armed bits clear. Returns the status reads.
    pub fn wait_poll(&mut self, timeout: Duration) -> Result<u64, DaqError> {
        let start = Instant::now();
        let mut reads = 0;
        loop {
            reads += 1;
            if !self.reader.read()?.armed() {
                return Ok(reads);
            }
            std::thread::sleep(Duration::from_micros(1));
            if start.elapsed() > timeout {
                return Err(DaqError::Timeout {
                    board: self.index,
                    waited: timeout,
                });
            }
        }
    }

    /// Waits for the end of the acquisition on the interrupt line (a blocking
    /// `poll(2)` of the eventfd), then validates the status once.
    pub fn wait_irq(&mut self, timeout: Duration) -> Result<(), DaqError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ts = rustix::time::Timespec {
                tv_sec: left.as_secs() as _,
                tv_nsec: left.subsec_nanos() as _,
            };
            let mut fds = [PollFd::new(&*self.irq, PollFlags::IN)];
            match rustix::event::poll(&mut fds, Some(&ts)) {
                Ok(0) => {
                    return Err(DaqError::Timeout {
                        board: self.index,
                        waited: timeout,
                    });
                }
                Ok(_) => break,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    return Err(DaqError::Memory {
                        what: "poll of the interrupt eventfd",
                        source: e.into(),
                    });
                }
            }
        }
        let mut buf = [0u8; 8];
        let _ = rustix::io::read(&*self.irq, &mut buf);
        if self.reader.read()?.armed() {
            return Err(DaqError::ControlBlock {
                field: "status",
                detail: "still armed after the end-of-acquisition interrupt".into(),
            });
        }
        Ok(())
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(h) = self.engine.take() {
            let _ = h.join();
        }
    }
}

fn end_acquisition(control: &Control, irq: &OwnedFd) {
    if control.end_acquisition() {
        let _ = rustix::io::write(irq, &1u64.to_ne_bytes());
    }
}

/// Reads the DMA engines' CPU time while the boards are in use elsewhere.
#[derive(Debug, Clone)]
pub struct EngineMeter(Vec<Arc<AtomicU64>>);

impl EngineMeter {
    /// CPU time of all engines so far.
    pub fn total(&self) -> Duration {
        Duration::from_nanos(self.0.iter().map(|c| c.load(Ordering::Relaxed)).sum())
    }
}

struct TriggerThread {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

/// N boards on a bus, with the crate's trigger.
pub struct Digitizer {
    boards: Vec<Board>,
    trigger: Option<TriggerThread>,
}

impl std::fmt::Debug for Digitizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Digitizer")
            .field("boards", &self.boards)
            .finish()
    }
}

impl Digitizer {
    /// Creates the boards (filling and sealing their memories) and starts their
    /// engines and, for an internal trigger, the trigger thread.
    pub fn new(cfg: &DigitizerConfig) -> Result<Digitizer, DaqError> {
        if cfg.links.is_empty() {
            return Err(DaqError::Config(
                "a digitizer needs at least one board".into(),
            ));
        }
        if cfg.samples == 0 {
            return Err(DaqError::Config("boards need at least one sample".into()));
        }
        if let Trigger::Internal(hz) = cfg.trigger
            && !(hz.is_finite() && hz > 0.0 && hz <= 100_000.0)
        {
            return Err(DaqError::Config(format!(
                "trigger rate {hz} Hz: expected 0 < rate ≤ 100000"
            )));
        }
        let bus = Arc::new(Bus::new(cfg.bus));
        let boards = cfg
            .links
            .iter()
            .enumerate()
            .map(|(i, &l)| Board::start(i, l, cfg, bus.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        let trigger = match cfg.trigger {
            Trigger::Software => None,
            Trigger::Internal(hz) => {
                let lines: Vec<(Arc<Control>, Arc<OwnedFd>)> = boards
                    .iter()
                    .map(|b| (b.control.clone(), b.irq.clone()))
                    .collect();
                let stop = Arc::new(AtomicBool::new(false));
                let s = stop.clone();
                let period = Duration::from_secs_f64(1.0 / hz);
                let handle = std::thread::Builder::new()
                    .name("daq-trigger".into())
                    .spawn(move || {
                        let mut next = Instant::now() + period;
                        while !s.load(Ordering::Acquire) {
                            let now = Instant::now();
                            if now < next {
                                std::thread::park_timeout(next - now);
                                continue;
                            }
                            for (c, irq) in &lines {
                                end_acquisition(c, irq);
                            }
                            next += period;
                        }
                    })
                    .map_err(|e| DaqError::Memory {
                        what: "spawning the trigger",
                        source: e,
                    })?;
                Some(TriggerThread { stop, handle })
            }
        };
        Ok(Digitizer { boards, trigger })
    }

    /// The boards.
    pub fn boards(&self) -> &[Board] {
        &self.boards
    }

    /// The boards, for reader threads.
    pub fn boards_mut(&mut self) -> &mut [Board] {
        &mut self.boards
    }

    /// CPU time of all DMA engines (the model's share of this process).
    pub fn engine_cpu(&self) -> Duration {
        self.boards.iter().map(Board::engine_cpu).sum()
    }

    /// A handle that reads the engines' CPU time from any thread.
    pub fn engine_meter(&self) -> EngineMeter {
        EngineMeter(self.boards.iter().map(|b| b.engine_cpu.clone()).collect())
    }
}

impl Drop for Digitizer {
    fn drop(&mut self) {
        if let Some(t) = self.trigger.take() {
            t.stop.store(true, Ordering::Release);
            t.handle.thread().unpark();
            let _ = t.handle.join();
        }
        self.boards.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::{Access, DaqEnd};
    use super::super::memory::mismatches;
    use super::*;

    fn config(boards: usize, samples: usize, trigger: Trigger, mapped: bool) -> DigitizerConfig {
        DigitizerConfig {
            links: vec![Link::Unthrottled; boards],
            samples,
            bus: None,
            trigger,
            mapped,
            engine_cpus: Vec::new(),
        }
    }

    #[test]
    fn every_path_and_end_mode_reads_verified_samples() {
        for access in [Access::Read, Access::Mmap] {
            for end in [DaqEnd::Poll, DaqEnd::Irq] {
                let samples = 3 * CHUNK_BYTES / 2 / SAMPLE_BYTES * 2 + 48;
                let mut d = Digitizer::new(&config(
                    2,
                    samples,
                    Trigger::Internal(200.0),
                    access == Access::Mmap,
                ))
                .unwrap();
                let mut buf = vec![0u16; samples];
                for b in d.boards_mut() {
                    for _ in 0..2 {
                        b.arm();
                        assert!(b.read(&mut buf).is_err(), "a read while armed is refused");
                        match end {
                            DaqEnd::Poll => {
                                assert!(b.wait_poll(Duration::from_secs(2)).unwrap() >= 1)
                            }
                            DaqEnd::Irq => b.wait_irq(Duration::from_secs(2)).unwrap(),
                        }
                        let seed = b.seed();
                        let got: &[u16] = match access {
                            Access::Read => {
                                b.read(&mut buf).unwrap();
                                &buf
                            }
                            Access::Mmap => b.read_mapped(samples).unwrap(),
                        };
                        assert_eq!(mismatches(seed, 0, got), 0, "{access:?} {end:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_link_and_the_bus_pace_transfers() {
        let samples = 2_000_000; // 4 MB
        let mut cfg = config(1, samples, Trigger::Software, false);
        cfg.links = vec![Link::Rate(200e6)];
        let mut d = Digitizer::new(&cfg).unwrap();
        let mut buf = vec![0u16; samples];
        let t = Instant::now();
        d.boards_mut()[0].read(&mut buf).unwrap();
        assert!(
            t.elapsed() >= Duration::from_millis(19),
            "4 MB at 200 MB/s takes 20 ms"
        );
        let bus = Bus::new(Some(3000e6));
        bus.join(1250e6);
        assert_eq!(bus.share(1250e6), 1250e6);
        for _ in 0..5 {
            bus.join(620e6);
        }
        let (ku, l2) = (bus.share(1250e6), bus.share(620e6));
        assert!(
            (ku + 5.0 * l2 - 3000e6).abs() < 1.0,
            "the bus is shared out"
        );
        assert!(
            (ku / l2 - 1250.0 / 620.0).abs() < 1e-9,
            "in proportion to the links"
        );
        bus.leave(1250e6);
        assert!(bus.share(620e6) < 620e6);
    }

    #[test]
    fn software_trigger_and_timeouts() {
        let mut d = Digitizer::new(&config(1, 64, Trigger::Software, false)).unwrap();
        let b = &mut d.boards_mut()[0];
        b.arm();
        b.wait_irq(Duration::from_secs(1)).unwrap();
        assert!(matches!(
            b.wait_irq(Duration::from_millis(20)),
            Err(DaqError::Timeout { .. })
        ));
        let mut d = Digitizer::new(&config(1, 64, Trigger::Internal(0.5), false)).unwrap();
        let b = &mut d.boards_mut()[0];
        b.arm();
        assert!(matches!(
            b.wait_poll(Duration::from_millis(20)),
            Err(DaqError::Timeout { .. })
        ));
    }

    #[test]
    fn the_write_path_lands_in_the_write_area() {
        let mut d = Digitizer::new(&config(1, 5000, Trigger::Software, false)).unwrap();
        let b = &mut d.boards_mut()[0];
        let src: Vec<u16> = (0..5000u16).map(|i| i.wrapping_mul(7)).collect();
        b.write(&src).unwrap();
        let mut back = vec![0u16; 5000];
        b.read_written(&mut back).unwrap();
        assert_eq!(back, src);
        let mut got = vec![0u16; 5000];
        b.read(&mut got).unwrap();
        assert_eq!(mismatches(b.seed(), 0, &got), 0);
    }
}
