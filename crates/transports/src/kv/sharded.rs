//! `sharded`: per-client SPSC rings served by the least-loaded worker.
//!
//! # Layout (after the [`KvHeader`](super::header::KvHeader))
//!
//! ```text
//! WorkerBlock × workers      doorbell (futex), served, assigned clients
//! ClientSlot × CLIENT_SLOTS  state, pid, worker, client id;
//!                            request ring (client → worker), RING slots of 84 B;
//!                            response ring (worker → client), RING slots of 2,328 B;
//!                            head/tail of each on their own cache-line pairs;
//!                            the client's futex for responses
//! ```
//!
//! This is the seed's proposal (one region, a `{MAGIC, num_workers}` header, one
//! block per worker) made to work for any number of clients per worker: the rings
//! belong to a client slot, not to a worker, and a slot is given to a worker when a
//! client attaches.
//!
//! # Protocol
//!
//! * **Attach.** A client claims a free slot (CAS `FREE → CLAIMED`), stores its pid
//!   and id, resets the slot's indices, picks the worker with the fewest assigned
//!   clients (a CAS on its count, so simultaneous attaches spread out), stores it,
//!   marks the slot `ACTIVE`, bumps the header's `epoch` and rings the worker's
//!   doorbell.
//! * **Requests.** The client writes `requests[head % RING]` and publishes `head`
//!   once per batch (when it turns to read replies, or its ring is full), with one
//!   doorbell check, so the worker finds the whole batch at once; the worker reads up to as many requests as the client's response ring has room
//!   for, answers each straight into `responses[head % RING]` (only the used part:
//!   an "Inserted" writes 24 bytes, not 2.3 KB) and publishes both indices. No client
//!   ever sees another's responses, and no lock is taken.
//! * **Round-robin.** A worker serves each of its clients in turn, at most a ring's
//!   worth per turn, so any number of clients share a worker.
//! * **Waits** poll briefly, then poll with `sched_yield` between polls
//!   ([`CLIENT_SPIN`], [`WORKER_SPIN`]), then sleep on a futex
//!   in bounded slices with the lost-wake-up-free protocol of [`crate::shm::wait`].
//!   17 clients on 2 CPUs therefore sleep instead of burning the machine.
//! * **Workers.** A server runs at most one worker per CPU
//!   ([`serving_workers`]): `-n 16` on 2 CPUs serves with 2.
//! * **Leave.** The client marks its slot `LEAVING`; the worker drops it and frees it.
//! * **Death.** Every [`HOUSEKEEPING`] a worker checks that the pid of each of its
//!   clients is alive; a dead client's slot is dropped and freed, whatever it was
//!   doing (a request half written is never published; a published one is answered
//!   into a ring nobody reads). The worker never waits for a client, so a client
//!   killed by SIGKILL at any moment cannot stop the server or another client.
//!
//! Every index read from shared memory is bounded: ring positions are taken modulo
//! the ring, a head more than a ring ahead of its tail is clamped, a worker number out
//! of range is ignored and the slot freed.

use super::config::{ClientOptions, ServerConfig};
use super::error::KvError;
use super::header::{HeaderFields, ShmObject};
use super::shared::ServerShared;
use super::wire::{RequestData, RequestPayload, ResponseData};
use crate::shm::region::Padded;
use crate::shm::wait::{self, Fences, WaitLine, WaitMode};
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Client slots of a region.
pub const CLIENT_SLOTS: usize = 64;
/// Slots of each ring.
pub const RING: usize = 32;
/// How long a client spins for a response before sleeping.
pub const CLIENT_SPIN: Duration = Duration::from_micros(20);
/// How long an idle worker spins before sleeping.
pub const WORKER_SPIN: Duration = Duration::from_micros(50);
/// How often a worker checks that its clients are alive.
pub const HOUSEKEEPING: Duration = Duration::from_millis(50);

const FREE: u32 = 0;
const CLAIMED: u32 = 1;
const ACTIVE: u32 = 2;
const LEAVING: u32 = 3;

#[repr(C)]
struct WorkerBlock {
    doorbell: Padded<WaitLine>,
    served: Padded<AtomicU64>,
    assigned: Padded<AtomicU32>,
}

#[repr(C)]
#[derive(Default)]
struct SlotCtl {
    state: AtomicU32,
    pid: AtomicU32,
    worker: AtomicU32,
    client_id: AtomicU32,
}

#[repr(C)]
struct ClientSlot {
    ctl: Padded<SlotCtl>,
    req_head: Padded<AtomicU64>,
    req_tail: Padded<AtomicU64>,
    resp_head: Padded<AtomicU64>,
    resp_tail: Padded<AtomicU64>,
    resp_wait: Padded<WaitLine>,
    requests: [UnsafeCell<RequestData>; RING],
    responses: [UnsafeCell<ResponseData>; RING],
}

/// Body bytes for `workers` workers.
pub fn body_len(workers: u32) -> usize {
    workers as usize * std::mem::size_of::<WorkerBlock>()
        + CLIENT_SLOTS * std::mem::size_of::<ClientSlot>()
}

/// A validated sharded object, seen as its blocks.
struct View<'a> {
    obj: &'a ShmObject,
    workers: u32,
}

impl<'a> View<'a> {
    fn new(obj: &'a ShmObject) -> View<'a> {
        View {
            obj,
            workers: obj.workers(),
        }
    }

    fn worker(&self, w: u32) -> &'a WorkerBlock {
        assert!(w < self.workers, "worker index checked by the caller");
        // SAFETY: the body holds `workers` (validated against the object's size)
        // WorkerBlocks first; `w` is in range.
        unsafe {
            &*self
                .obj
                .body()
                .add(w as usize * std::mem::size_of::<WorkerBlock>())
                .cast::<WorkerBlock>()
        }
    }

    fn slot(&self, i: usize) -> &'a ClientSlot {
        assert!(i < CLIENT_SLOTS, "slot index is ours");
        // SAFETY: CLIENT_SLOTS ClientSlots follow the worker blocks inside the
        // validated body; `i` is in range; 128-byte alignment holds because the
        // body starts 128 bytes into a page-aligned mapping and every block is a
        // multiple of 128 bytes.
        unsafe {
            &*self
                .obj
                .body()
                .add(
                    self.workers as usize * std::mem::size_of::<WorkerBlock>()
                        + i * std::mem::size_of::<ClientSlot>(),
                )
                .cast::<ClientSlot>()
        }
    }
}

/// Requests served by all workers.
pub(crate) fn served(obj: &ShmObject) -> u64 {
    let v = View::new(obj);
    (0..v.workers)
        .map(|w| v.worker(w).served.0.load(Ordering::Relaxed))
        .sum()
}

type Started = (Vec<Arc<ShmObject>>, Vec<JoinHandle<()>>);

pub(crate) fn start(
    name: &str,
    cfg: &ServerConfig,
    shared: &Arc<ServerShared>,
) -> Result<Started, KvError> {
    let serving = serving_workers(cfg.workers);
    let fields = HeaderFields {
        arch: cfg.arch,
        workers: serving,
        buckets: cfg.buckets as u64,
        part: 0,
        companion: (0, 0),
        key: cfg.key.map_or(0, super::config::PrivateKey::get),
    };
    // Zeroed memory is the initial state: every slot FREE, every count 0.
    let obj = Arc::new(ShmObject::create(name, fields, |_| Ok(()))?);
    let mut threads = Vec::new();
    for w in 0..serving {
        let (o, s) = (Arc::clone(&obj), Arc::clone(shared));
        threads.push(
            std::thread::Builder::new()
                .name(format!("kv-worker{w}"))
                .spawn(move || worker(&o, &s, w))
                .map_err(|e| KvError::Io {
                    op: "spawn a server thread",
                    source: e,
                })?,
        );
    }
    Ok((vec![obj], threads))
}

/// The worker threads a sharded server runs when `requested` are asked for: at most
/// one per CPU this process may run on (`sched_getaffinity`, cgroup quota).
///
/// A worker with clients polls before it sleeps, and each client is served by one
/// worker. With more workers than CPUs, the workers with work take turns on the
/// cores: a client's batch waits until its own worker gets a time slice, and every
/// batch costs a wake-up and a switch, while one worker per CPU serves its clients
/// round-robin, a batch after another. Clients attach to the workers that run, so
/// the object's header says how many serve.
pub fn serving_workers(requested: u32) -> u32 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    requested
        .min(u32::try_from(cpus).unwrap_or(u32::MAX))
        .max(1)
}

fn mode(spin: Duration) -> WaitMode {
    WaitMode::Hybrid { spin }
}

/// Busy-polls before a wait gives up the CPU to `yield`.
const PURE_SPINS: u32 = 256;

/// The spin phase of a wait: a short busy poll (the other side runs on another CPU
/// and answers within a microsecond or two), then `sched_yield` between polls until
/// `budget` is spent, so that when both sides share a CPU, or more clients than CPUs
/// wait, the one with work runs at once instead of after a spinner's time slice.
/// True when `ready()` held; the caller then sleeps on the futex.
///
/// Never inlined: a profile of a release build then names the spin phase (the
/// hash-table study's `spin` category) instead of folding it into the caller. It
/// runs only when there is no work, so the call costs nothing that matters.
#[inline(never)]
fn settle(mut ready: impl FnMut() -> bool, budget: Duration) -> bool {
    for _ in 0..PURE_SPINS {
        if ready() {
            return true;
        }
        std::hint::spin_loop();
    }
    let start = Instant::now();
    loop {
        if ready() {
            return true;
        }
        std::thread::yield_now();
        if start.elapsed() >= budget {
            return ready();
        }
    }
}

/// Serves up to a ring's worth of client `s`'s requests; returns how many.
fn serve_client(s: &ClientSlot, table: &super::table::HashTable) -> u64 {
    let ring = RING as u64;
    let mut t = s.req_tail.0.load(Ordering::Relaxed);
    let h = s.req_head.0.load(Ordering::Acquire);
    let mut rh = s.resp_head.0.load(Ordering::Relaxed);
    let rt = s.resp_tail.0.load(Ordering::Acquire);
    let avail = h.wrapping_sub(t).min(ring);
    let room = ring.saturating_sub(rh.wrapping_sub(rt));
    let n = avail.min(room);
    for _ in 0..n {
        // SAFETY: slot `t` is published (t < head) and the client does not write it
        // again until we advance the tail; the index is reduced modulo the ring.
        let req = unsafe { s.requests[(t % ring) as usize].get().read_volatile() };
        // SAFETY: slot `rh` is not readable by the client (rh ≥ its tail + room
        // check) until we publish the head; only the used part is written.
        let out = unsafe { &mut *s.responses[(rh % ring) as usize].get() };
        out.client_id = req.client_id;
        out.request_id = req.request_id;
        table.serve(&req.payload, &mut out.payload);
        t = t.wrapping_add(1);
        rh = rh.wrapping_add(1);
    }
    if n > 0 {
        s.req_tail.0.store(t, Ordering::Release);
        s.resp_head.0.store(rh, Ordering::Release);
        wait::wake(&s.resp_wait.0, mode(CLIENT_SPIN), Fences::Symmetric);
    }
    n
}

fn has_work(s: &ClientSlot) -> bool {
    let pending = s.req_head.0.load(Ordering::Acquire) != s.req_tail.0.load(Ordering::Relaxed);
    let full = s
        .resp_head
        .0
        .load(Ordering::Relaxed)
        .wrapping_sub(s.resp_tail.0.load(Ordering::Acquire))
        >= RING as u64;
    pending && !full
}

fn worker(o: &ShmObject, shared: &ServerShared, w: u32) {
    let v = View::new(o);
    let me = v.worker(w);
    let epoch = &o.header().epoch;
    let mut mine: Vec<usize> = Vec::new();
    let mut seen = epoch.load(Ordering::Acquire).wrapping_sub(1);
    let mut last_house = Instant::now();
    let mut passes = 0u32;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let e = epoch.load(Ordering::Acquire);
        if e != seen {
            seen = e;
            rescan(&v, w, &mut mine);
        }
        let mut did = 0;
        for &i in &mine {
            did += serve_client(v.slot(i), &shared.table);
        }
        if did > 0 {
            me.served.0.fetch_add(did, Ordering::Relaxed);
        }
        passes = passes.wrapping_add(1);
        if (did == 0 || passes.is_multiple_of(256)) && last_house.elapsed() >= HOUSEKEEPING {
            last_house = Instant::now();
            housekeeping(&v, w, &mut mine);
        }
        if did == 0 {
            let mut n = 0u32;
            let mut wake = || {
                n = n.wrapping_add(1);
                shared.stop.load(Ordering::Relaxed)
                    || epoch.load(Ordering::Relaxed) != seen
                    || mine.iter().any(|&i| has_work(v.slot(i)))
                    || (n.is_multiple_of(512) && last_house.elapsed() >= HOUSEKEEPING)
            };
            if !settle(&mut wake, WORKER_SPIN) {
                let _ = wait::wait_until(
                    &me.doorbell.0,
                    WaitMode::Block,
                    Fences::Symmetric,
                    0,
                    None,
                    wake,
                );
            }
        }
    }
}

fn free_slot(v: &View<'_>, w: u32, i: usize, mine: &mut Vec<usize>) {
    mine.retain(|&j| j != i);
    v.worker(w).assigned.0.fetch_sub(1, Ordering::Relaxed);
    v.slot(i).ctl.0.state.store(FREE, Ordering::Release);
    v.obj.header().epoch.fetch_add(1, Ordering::AcqRel);
}

/// Adopts this worker's new clients and frees those that left.
fn rescan(v: &View<'_>, w: u32, mine: &mut Vec<usize>) {
    for i in 0..CLIENT_SLOTS {
        let c = &v.slot(i).ctl.0;
        if c.worker.load(Ordering::Relaxed) != w {
            continue;
        }
        match c.state.load(Ordering::Acquire) {
            ACTIVE if !mine.contains(&i) => mine.push(i),
            LEAVING => free_slot(v, w, i, mine),
            _ => {}
        }
    }
}

/// Frees the slots of clients that died; worker 0 also frees slots claimed by a
/// process that died before attaching, or naming a worker that does not exist.
fn housekeeping(v: &View<'_>, w: u32, mine: &mut Vec<usize>) {
    for i in mine.clone() {
        let pid = v.slot(i).ctl.0.pid.load(Ordering::Relaxed) as i32;
        if !wait::process_alive(pid) {
            free_slot(v, w, i, mine);
        }
    }
    if w != 0 {
        return;
    }
    for i in 0..CLIENT_SLOTS {
        let c = &v.slot(i).ctl.0;
        let state = c.state.load(Ordering::Acquire);
        let dead = || !wait::process_alive(c.pid.load(Ordering::Relaxed) as i32);
        let stray =
            matches!(state, ACTIVE | LEAVING) && c.worker.load(Ordering::Relaxed) >= v.workers;
        if (state == CLAIMED && dead()) || (stray && dead()) {
            c.state.store(FREE, Ordering::Release);
        }
    }
}

/// A sharded client: its slot, its worker, and responses read ahead while sending.
pub struct Client {
    obj: ShmObject,
    opts: ClientOptions,
    server: i32,
    slot: usize,
    worker: u32,
    req_head: u64,
    /// The last `req_head` made visible to the worker.
    published: u64,
    resp_tail: u64,
    ahead: VecDeque<ResponseData>,
    left: bool,
}

impl Client {
    pub(crate) fn connect(obj: ShmObject, opts: ClientOptions) -> Result<Client, KvError> {
        let server = obj.server_pid() as i32;
        let v = View::new(&obj);
        let slot = (0..CLIENT_SLOTS)
            .find(|&i| {
                v.slot(i)
                    .ctl
                    .0
                    .state
                    .compare_exchange(FREE, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            })
            .ok_or(KvError::Full(CLIENT_SLOTS))?;
        let s = v.slot(slot);
        s.ctl.0.pid.store(std::process::id(), Ordering::Relaxed);
        s.ctl.0.client_id.store(opts.client_id, Ordering::Relaxed);
        for x in [&s.req_head, &s.req_tail, &s.resp_head, &s.resp_tail] {
            x.0.store(0, Ordering::Relaxed);
        }
        // The least-loaded worker, claimed by CAS so that simultaneous attaches spread.
        let worker = loop {
            let (w, load) = (0..v.workers)
                .map(|w| (w, v.worker(w).assigned.0.load(Ordering::Relaxed)))
                .min_by_key(|&(_, l)| l)
                .unwrap_or((0, 0));
            if v.worker(w)
                .assigned
                .0
                .compare_exchange(load, load + 1, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                break w;
            }
        };
        s.ctl.0.worker.store(worker, Ordering::Relaxed);
        s.ctl.0.state.store(ACTIVE, Ordering::Release);
        obj.header().epoch.fetch_add(1, Ordering::AcqRel);
        wait::wake_always(&v.worker(worker).doorbell.0);
        Ok(Client {
            obj,
            opts,
            server,
            slot,
            worker,
            req_head: 0,
            published: 0,
            resp_tail: 0,
            ahead: VecDeque::with_capacity(RING),
            left: false,
        })
    }

    fn view(&self) -> View<'_> {
        View::new(&self.obj)
    }

    #[cold]
    fn corrupt(&self, what: String) -> KvError {
        KvError::Corrupt {
            region: self.obj.name().to_string(),
            what,
        }
    }

    /// Copies the response at our tail (the used part only) and frees its slot.
    /// The worker's `resp_head` must not announce more responses than requests
    /// were published.
    fn take(&mut self, out: &mut ResponseData) -> Result<(), KvError> {
        let v = View::new(&self.obj);
        let s = v.slot(self.slot);
        let ring = RING as u64;
        let head = s.resp_head.0.load(Ordering::Acquire);
        let outstanding = self.published.wrapping_sub(self.resp_tail);
        let announced = head.wrapping_sub(self.resp_tail);
        if announced == 0 || announced > outstanding {
            return Err(self.corrupt(format!(
                "slot {}: response head {head} with our tail at {} and {outstanding} requests outstanding",
                self.slot, self.resp_tail
            )));
        }
        let src = s.responses[(self.resp_tail % ring) as usize].get();
        // SAFETY: the slot is published (tail < head) and the worker does not write
        // it until we advance the tail. `used_len` reads the tag and length and is at
        // most the struct's size whatever they hold, so the copy stays in bounds.
        unsafe {
            let used = (*src).used_len().min(std::mem::size_of::<ResponseData>());
            std::ptr::copy_nonoverlapping(
                src.cast::<u8>(),
                (out as *mut ResponseData).cast::<u8>(),
                used,
            );
        }
        let was_full = announced >= ring;
        self.resp_tail = self.resp_tail.wrapping_add(1);
        s.resp_tail.0.store(self.resp_tail, Ordering::Release);
        if was_full {
            // The worker may be skipping us for lack of room.
            wait::wake(
                &v.worker(self.worker).doorbell.0,
                mode(WORKER_SPIN),
                Fences::Symmetric,
            );
        }
        Ok(())
    }

    fn ready(&self) -> bool {
        self.view()
            .slot(self.slot)
            .resp_head
            .0
            .load(Ordering::Acquire)
            != self.resp_tail
    }

    /// Waits until a response is published (or a stop, the server's death or a hang).
    fn wait_response(&self) -> Result<(), KvError> {
        let v = self.view();
        let s = v.slot(self.slot);
        let since = Instant::now();
        let mut n = 0u32;
        let mut hung = false;
        let stop = &self.opts.stop;
        let mut done = || {
            if self.ready() {
                return true;
            }
            n = n.wrapping_add(1);
            if n.is_multiple_of(256) {
                hung = since.elapsed() >= self.opts.hang_timeout;
            }
            hung || stop.load(Ordering::Relaxed)
        };
        let r = if settle(&mut done, CLIENT_SPIN) {
            Ok(())
        } else {
            wait::wait_until(
                &s.resp_wait.0,
                WaitMode::Block,
                Fences::Symmetric,
                self.server,
                None,
                done,
            )
        };
        if self.ready() {
            return Ok(());
        }
        r.map_err(|_| KvError::ServerGone(self.server))?;
        if hung {
            return Err(KvError::Hung {
                arch: "sharded",
                what: "a response from the worker",
                secs: self.opts.hang_timeout.as_secs(),
            });
        }
        Err(KvError::Interrupted)
    }

    /// Writes one request into our ring (reading responses ahead while it is full).
    /// The request becomes visible to the worker at the next [`Client::flush`], which
    /// [`Client::recv`] and a full ring do.
    pub fn send(&mut self, request_id: u32, payload: &RequestPayload) -> Result<(), KvError> {
        let ring = RING as u64;
        loop {
            let tail = self
                .view()
                .slot(self.slot)
                .req_tail
                .0
                .load(Ordering::Acquire);
            let used = self.req_head.wrapping_sub(tail);
            if used > ring || tail.wrapping_sub(self.resp_tail) > ring {
                return Err(self.corrupt(format!(
                    "slot {}: request tail {tail} with our head at {} in a {RING}-slot ring",
                    self.slot, self.req_head
                )));
            }
            if used < ring {
                break;
            }
            self.flush();
            self.wait_response()?;
            let mut r = ResponseData::default();
            self.take(&mut r)?;
            self.ahead.push_back(r);
        }
        let v = View::new(&self.obj);
        let s = v.slot(self.slot);
        let d = RequestData {
            client_id: self.opts.client_id,
            request_id,
            payload: *payload,
        };
        // SAFETY: slot `req_head` is free (head − tail < RING) and only we write it.
        unsafe {
            s.requests[(self.req_head % ring) as usize]
                .get()
                .write_volatile(d)
        };
        self.req_head = self.req_head.wrapping_add(1);
        Ok(())
    }

    /// Publishes the requests written since the last flush and rings the worker's
    /// doorbell (a futex call only when the worker sleeps).
    pub fn flush(&mut self) {
        if self.published == self.req_head {
            return;
        }
        self.published = self.req_head;
        let v = View::new(&self.obj);
        v.slot(self.slot)
            .req_head
            .0
            .store(self.req_head, Ordering::Release);
        wait::wake(
            &v.worker(self.worker).doorbell.0,
            mode(WORKER_SPIN),
            Fences::Symmetric,
        );
    }

    /// The next response (in request order).
    pub fn recv(&mut self, out: &mut ResponseData) -> Result<(), KvError> {
        if let Some(r) = self.ahead.pop_front() {
            *out = r;
            return Ok(());
        }
        self.flush();
        self.wait_response()?;
        self.take(out)
    }

    /// Gives the slot back.
    pub fn leave(mut self) -> Result<(), KvError> {
        self.release();
        Ok(())
    }

    fn release(&mut self) {
        if self.left {
            return;
        }
        self.left = true;
        let v = View::new(&self.obj);
        v.slot(self.slot)
            .ctl
            .0
            .state
            .store(LEAVING, Ordering::Release);
        self.obj.header().epoch.fetch_add(1, Ordering::AcqRel);
        wait::wake_always(&v.worker(self.worker).doorbell.0);
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.release();
    }
}
