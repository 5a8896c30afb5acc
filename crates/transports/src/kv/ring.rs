//! `ring`: the original author's later design (branch `main` of the original
//! repository): one object holding a 2048-slot MPMC request ring and a 2048-slot
//! broadcast response ring; k workers and no dispatcher threads.
//!
//! * Requests: `count` (0) and `space` (2048) semaphores and a process-shared mutex
//!   around `{write, read, buffer[2048]}`. A client: `space.wait; lock; buffer[write
//!   & 2047] = req; write += 1; unlock; count.post`. A worker takes one the same way.
//! * Responses: 2048 slots `{rwlock, rem, pos, val}` (slot `i` starts at position
//!   `i − 2048`), a `space` semaphore (2048) and a mutex-guarded tail `{pos, rx_cnt}`.
//!   A worker: `space.wait; lock tail; write-lock slot[pos & 2047]; slot = {pos,
//!   rem: rx_cnt, val}; pos += 1` (the tail stays locked during the 2.3 KB copy, as
//!   in the original). Each client joins (`rx_cnt += 1`), and a response thread polls
//!   `slot[read_next]` under its read lock, sleeping 30 ns (in practice the timer
//!   slack, ~50 µs) when it is not there yet; the last reader of a slot posts
//!   `space`. Responses for other clients are skipped; its own go to the main thread
//!   over an mpsc channel.
//!
//! The original's lost-permit bug, a response dropped when no client is joined
//! (`rx_cnt == 0`) without returning its `space` permit, is **fixed** here: the
//! permit is posted back. In the original each such drop shrinks the ring by one slot
//! for good, until the server stalls after 2048 of them.
//!
//! Every wait is cut into slices checked for a stop, the server's death and the hang
//! timeout; indices read from shared memory are masked to the ring.

use super::config::{ClientOptions, ServerConfig};
use super::error::KvError;
use super::guard::Guard;
use super::header::{HeaderFields, ShmObject};
use super::sem::{PMutex, PRwLock, Sem};
use super::shared::ServerShared;
use super::wire::{RequestData, RequestPayload, ResponseData};
use std::cell::UnsafeCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const ARCH: &str = "ring";
/// Slots of each ring.
pub const SLOTS: usize = 2048;
const MASK: u64 = SLOTS as u64 - 1;

#[repr(C)]
struct ResponseSlot {
    lock: PRwLock,
    rem: AtomicU64,
    pos: AtomicU64,
    val: UnsafeCell<ResponseData>,
}

#[repr(C)]
struct RingBody {
    count: Sem,
    space: Sem,
    queue: PMutex,
    write: AtomicU64,
    read: AtomicU64,
    buffer: [UnsafeCell<RequestData>; SLOTS],
    res_space: Sem,
    tail: PMutex,
    tail_pos: AtomicU64,
    rx_cnt: AtomicU64,
    slots: [ResponseSlot; SLOTS],
}

/// Body bytes.
pub fn body_len() -> usize {
    std::mem::size_of::<RingBody>()
}

fn body(o: &ShmObject) -> &RingBody {
    // SAFETY: the body of a validated ring object holds a RingBody.
    unsafe { &*o.body().cast::<RingBody>() }
}

type Started = (Vec<Arc<ShmObject>>, Vec<JoinHandle<()>>);

pub(crate) fn start(
    name: &str,
    cfg: &ServerConfig,
    shared: &Arc<ServerShared>,
) -> Result<Started, KvError> {
    let fields = HeaderFields {
        arch: cfg.arch,
        workers: cfg.workers,
        buckets: cfg.buckets as u64,
        part: 0,
        companion: (0, 0),
        key: cfg.key.map_or(0, super::config::PrivateKey::get),
    };
    let obj = ShmObject::create(name, fields, |p| {
        let b = p.cast::<RingBody>();
        // SAFETY: the fresh zeroed body holds a RingBody nobody else sees yet.
        unsafe {
            Sem::init(&raw mut (*b).count, 0)?;
            Sem::init(&raw mut (*b).space, SLOTS as u32)?;
            PMutex::init(&raw mut (*b).queue)?;
            Sem::init(&raw mut (*b).res_space, SLOTS as u32)?;
            PMutex::init(&raw mut (*b).tail)?;
            for i in 0..SLOTS {
                let s = &raw mut (*b).slots[i];
                PRwLock::init(&raw mut (*s).lock)?;
                (*s).pos
                    .store((i as u64).wrapping_sub(SLOTS as u64), Ordering::Relaxed);
            }
        }
        Ok(())
    })?;
    let obj = Arc::new(obj);
    let mut threads = Vec::new();
    for w in 0..cfg.workers {
        let (o, s) = (Arc::clone(&obj), Arc::clone(shared));
        threads.push(
            std::thread::Builder::new()
                .name(format!("kv-worker{w}"))
                .spawn(move || {
                    if let Err(e) = worker(&o, &s) {
                        s.fail(e);
                    }
                })
                .map_err(|e| KvError::Io {
                    op: "spawn a server thread",
                    source: e,
                })?,
        );
    }
    Ok((vec![obj], threads))
}

fn worker(o: &ShmObject, s: &ServerShared) -> Result<(), KvError> {
    let b = body(o);
    let idle = Guard {
        arch: ARCH,
        stop: &s.stop,
        interruptible: true,
        peer: 0,
        hang: None,
    };
    let g = Guard {
        hang: Some(s.hang),
        ..idle
    };
    let stopped = |r: Result<(), KvError>| match r {
        Err(KvError::Interrupted) => Ok(false),
        Err(e) => Err(e),
        Ok(()) => Ok(true),
    };
    let mut out = Box::<ResponseData>::default();
    loop {
        if !stopped(b.count.wait(&idle, "a request (count)"))? {
            return Ok(());
        }
        if !stopped(b.queue.lock(&g, "the request queue's mutex"))? {
            return Ok(());
        }
        let r = b.read.load(Ordering::Relaxed);
        // SAFETY: under the queue mutex; `count` said slot `r` was written; the index
        // is masked to the ring.
        let req = unsafe { b.buffer[(r & MASK) as usize].get().read_volatile() };
        b.read.store(r.wrapping_add(1), Ordering::Relaxed);
        b.queue.unlock();
        b.space.post();
        *out = ResponseData {
            client_id: req.client_id,
            request_id: req.request_id,
            ..ResponseData::default()
        };
        s.table.serve(&req.payload, &mut out.payload);
        // os_push_item.
        if !stopped(
            b.res_space
                .wait(&g, "room in the response ring (the slowest client)"),
        )? {
            return Ok(());
        }
        if !stopped(b.tail.lock(&g, "the response tail's mutex"))? {
            return Ok(());
        }
        let rx = b.rx_cnt.load(Ordering::Relaxed);
        if rx == 0 {
            b.tail.unlock();
            // The original loses this permit; returned here.
            b.res_space.post();
            o.header().served.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let pos = b.tail_pos.load(Ordering::Relaxed);
        let slot = &b.slots[(pos & MASK) as usize];
        if let Err(e) = slot.lock.write(&g, "a response slot's write lock") {
            b.tail.unlock();
            return stopped(Err(e)).map(|_| ());
        }
        slot.pos.store(pos, Ordering::Relaxed);
        slot.rem.store(rx, Ordering::Relaxed);
        // SAFETY: write-locked; every reader of the previous round released it.
        unsafe { slot.val.get().write_volatile(*out) };
        b.tail_pos.store(pos.wrapping_add(1), Ordering::Relaxed);
        slot.lock.unlock();
        b.tail.unlock();
        o.header().served.fetch_add(1, Ordering::Relaxed);
    }
}

type Delivery = Result<ResponseData, KvError>;

/// A ring client: the object, its response thread and the channel it feeds.
pub struct Client {
    obj: Arc<ShmObject>,
    opts: ClientOptions,
    server: i32,
    rx: mpsc::Receiver<Delivery>,
    leaving: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Client {
    pub(crate) fn connect(main: ShmObject, opts: ClientOptions) -> Result<Client, KvError> {
        let server = main.server_pid() as i32;
        let obj = Arc::new(main);
        let b = body(&obj);
        let g = Guard {
            arch: ARCH,
            stop: &opts.stop,
            interruptible: true,
            peer: server,
            hang: Some(opts.hang_timeout),
        };
        b.tail.lock(&g, "the response tail's mutex (join)")?;
        b.rx_cnt.fetch_add(1, Ordering::Relaxed);
        let read_next = b.tail_pos.load(Ordering::Relaxed);
        b.tail.unlock();
        let (tx, rx) = mpsc::channel();
        let leaving = Arc::new(AtomicBool::new(false));
        let thread = {
            let (o, l, id, hang) = (
                Arc::clone(&obj),
                Arc::clone(&leaving),
                opts.client_id,
                opts.hang_timeout,
            );
            std::thread::Builder::new()
                .name("kv-responses".into())
                .spawn(move || {
                    if let Err(e) = responses(&o, read_next, id, server, hang, &l, &tx) {
                        let _ = tx.send(Err(e));
                    }
                })
                .map_err(|e| KvError::Io {
                    op: "spawn the response thread",
                    source: e,
                })?
        };
        Ok(Client {
            obj,
            opts,
            server,
            rx,
            leaving,
            thread: Some(thread),
        })
    }

    fn guard(&self) -> Guard<'_> {
        Guard {
            arch: ARCH,
            stop: &self.opts.stop,
            interruptible: true,
            peer: self.server,
            hang: Some(self.opts.hang_timeout),
        }
    }

    /// `space.wait; lock; buffer[write] = req; write += 1; unlock; count.post`.
    pub fn send(&mut self, request_id: u32, payload: &RequestPayload) -> Result<(), KvError> {
        let b = body(&self.obj);
        let g = self.guard();
        b.space.wait(&g, "room in the request ring")?;
        b.queue.lock(
            &Guard {
                interruptible: false,
                ..g
            },
            "the request queue's mutex",
        )?;
        let w = b.write.load(Ordering::Relaxed);
        let d = RequestData {
            client_id: self.opts.client_id,
            request_id,
            payload: *payload,
        };
        // SAFETY: under the queue mutex, with a `space` permit: slot `w` is free; the
        // index is masked.
        unsafe { b.buffer[(w & MASK) as usize].get().write_volatile(d) };
        b.write.store(w.wrapping_add(1), Ordering::Relaxed);
        b.queue.unlock();
        b.count.post();
        Ok(())
    }

    /// The next response for this client, from the response thread.
    pub fn recv(&mut self, out: &mut ResponseData) -> Result<(), KvError> {
        let since = Instant::now();
        loop {
            match self.rx.recv_timeout(Duration::from_millis(20)) {
                Ok(Ok(r)) => {
                    *out = r;
                    return Ok(());
                }
                Ok(Err(e)) => return Err(e),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(KvError::ServerGone(self.server));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    self.guard().check(since, "a response for this client")?
                }
            }
        }
    }

    /// Leaves: the response thread unregisters and drains what it still owes.
    pub fn leave(mut self) -> Result<(), KvError> {
        self.leaving.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        while let Ok(d) = self.rx.try_recv() {
            d?;
        }
        Ok(())
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.leaving.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads `slot[read_next]` once it holds position `read_next`: `Some(copy)`.
fn take(b: &RingBody, read_next: u64, g: &Guard<'_>) -> Result<Option<ResponseData>, KvError> {
    let slot = &b.slots[(read_next & MASK) as usize];
    slot.lock.read(g, "a response slot's read lock")?;
    if slot.pos.load(Ordering::Relaxed) != read_next {
        slot.lock.unlock();
        return Ok(None);
    }
    // SAFETY: read-locked and at our position: the worker finished writing it.
    let v = unsafe { slot.val.get().read_volatile() };
    let last = slot.rem.fetch_sub(1, Ordering::AcqRel) == 1;
    slot.lock.unlock();
    if last {
        b.res_space.post();
    }
    Ok(Some(v))
}

fn responses(
    o: &ShmObject,
    mut read_next: u64,
    id: u32,
    server: i32,
    hang: Duration,
    leaving: &AtomicBool,
    tx: &mpsc::Sender<Delivery>,
) -> Result<(), KvError> {
    let b = body(o);
    let never = AtomicBool::new(false);
    let g = Guard {
        arch: ARCH,
        stop: &never,
        interruptible: false,
        peer: server,
        hang: Some(hang),
    };
    let mut misses = 0u32;
    let mut last_check = Instant::now();
    loop {
        if leaving.load(Ordering::Relaxed) {
            b.tail.lock(&g, "the response tail's mutex (leave)")?;
            b.rx_cnt.fetch_sub(1, Ordering::Relaxed);
            let end = b.tail_pos.load(Ordering::Relaxed);
            b.tail.unlock();
            let since = Instant::now();
            while read_next != end {
                match take(b, read_next, &g)? {
                    Some(_) => read_next = read_next.wrapping_add(1),
                    None => g.check(since, "a response slot (leave)")?,
                }
            }
            return Ok(());
        }
        match take(b, read_next, &g)? {
            Some(v) => {
                read_next = read_next.wrapping_add(1);
                if v.client_id == id {
                    let _ = tx.send(Ok(v));
                }
            }
            None => {
                std::thread::sleep(Duration::from_nanos(30));
                misses += 1;
                if misses.is_multiple_of(64) && last_check.elapsed() >= Duration::from_millis(20) {
                    last_check = Instant::now();
                    if !crate::shm::wait::process_alive(server) {
                        return Err(KvError::ServerGone(server));
                    }
                }
            }
        }
    }
}
