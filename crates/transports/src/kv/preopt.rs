//! `preopt`: the original design (branch `preopt` of the original repository).
//!
//! Two objects: the request frame (main object) and the response frame (`<name>-res`),
//! each after its [`KvHeader`](super::header::KvHeader).
//!
//! * Request frame `{ waker, busy, data }`: a one-slot channel. A client takes
//!   `busy`, writes `data`, posts `waker`; the server's input thread takes `waker`,
//!   copies `data` into an unbounded crossbeam channel and posts `busy`. One writer
//!   at a time, and everyone waits for the server to finish reading.
//! * Response frame `{ readers, num_readers, barrier1, barrier2, read_complete,
//!   write_complete, count_mutex, count, data }`: a one-slot broadcast. The output
//!   thread takes `readers`, writes `data`, posts `write_complete` once per reader
//!   and waits for `read_complete`; every client passes a reusable two-phase barrier
//!   (turnstiles `barrier1`/`barrier2`) around its read of `data`, whether the
//!   response is its own or not.
//! * Inside the server: an input thread, k workers and an output thread, joined by
//!   two unbounded crossbeam channels (the "internal dispatching"), and the fixed-size
//!   2,328-byte [`ResponseData`] on every hop.
//!
//! Deviations, all for safety: every wait is cut into 20 ms slices so that a stop,
//! the death of the server or a hang (after the hang timeout, e.g. a client killed
//! inside the barrier, which the original would wait on forever) ends it with an
//! error naming the wait; the payload tags are checked (see [`super::wire`]).

use super::config::{ClientOptions, ServerConfig};
use super::error::KvError;
use super::guard::Guard;
use super::header::{HeaderFields, ShmObject};
use super::sem::Sem;
use super::shared::ServerShared;
use super::wire::{RequestData, RequestPayload, ResponseData};
use crossbeam_channel::{RecvTimeoutError, unbounded};
use std::cell::UnsafeCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const ARCH: &str = "preopt";

/// The request frame.
#[repr(C)]
pub(crate) struct RequestFrame {
    waker: Sem,
    busy: Sem,
    data: UnsafeCell<RequestData>,
}

/// The response frame.
#[repr(C)]
pub(crate) struct ResponseFrame {
    readers: Sem,
    num_readers: AtomicU32,
    barrier1: Sem,
    barrier2: Sem,
    read_complete: Sem,
    write_complete: Sem,
    count_mutex: Sem,
    count: AtomicU32,
    data: UnsafeCell<ResponseData>,
}

/// Body bytes of object `part` (0: requests, 1: responses).
pub fn body_len(part: u32) -> usize {
    if part == 0 {
        std::mem::size_of::<RequestFrame>()
    } else {
        std::mem::size_of::<ResponseFrame>()
    }
}

fn req(o: &ShmObject) -> &RequestFrame {
    // SAFETY: the body of a validated preopt part-0 object holds a RequestFrame.
    unsafe { &*o.body().cast::<RequestFrame>() }
}

fn res(o: &ShmObject) -> &ResponseFrame {
    // SAFETY: the body of a validated preopt part-1 object holds a ResponseFrame.
    unsafe { &*o.body().cast::<ResponseFrame>() }
}

type Started = (Vec<Arc<ShmObject>>, Vec<JoinHandle<()>>);

/// Creates both objects and starts input, k workers and output.
pub(crate) fn start(
    name: &str,
    cfg: &ServerConfig,
    shared: &Arc<ServerShared>,
) -> Result<Started, KvError> {
    let fields = |part, companion| HeaderFields {
        arch: cfg.arch,
        workers: cfg.workers,
        buckets: cfg.buckets as u64,
        part,
        companion,
        key: cfg.key.map_or(0, super::config::PrivateKey::get),
    };
    let res_obj = ShmObject::create(&format!("{name}-res"), fields(1, (0, 0)), |body| {
        let f = body.cast::<ResponseFrame>();
        // SAFETY: the fresh zeroed body holds a ResponseFrame; the values are the
        // original's.
        unsafe {
            Sem::init(&raw mut (*f).readers, 1)?;
            Sem::init(&raw mut (*f).barrier1, 0)?;
            Sem::init(&raw mut (*f).barrier2, 1)?;
            Sem::init(&raw mut (*f).read_complete, 0)?;
            Sem::init(&raw mut (*f).write_complete, 0)?;
            Sem::init(&raw mut (*f).count_mutex, 1)?;
        }
        Ok(())
    })?;
    let req_obj = ShmObject::create(name, fields(0, res_obj.fd_and_inode()), |body| {
        let f = body.cast::<RequestFrame>();
        // SAFETY: as above, for the RequestFrame.
        unsafe {
            Sem::init(&raw mut (*f).waker, 0)?;
            Sem::init(&raw mut (*f).busy, 1)?;
        }
        Ok(())
    })?;
    let req_obj = Arc::new(req_obj);
    let res_obj = Arc::new(res_obj);
    let (in_tx, in_rx) = unbounded::<RequestData>();
    let (out_tx, out_rx) = unbounded::<ResponseData>();
    let mut threads = Vec::new();
    let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name)
            .spawn(f)
            .map_err(|e| KvError::Io {
                op: "spawn a server thread",
                source: e,
            })
    };
    {
        let (o, s) = (Arc::clone(&req_obj), Arc::clone(shared));
        threads.push(spawn(
            "kv-input".into(),
            Box::new(move || {
                if let Err(e) = input(&o, &s, &in_tx) {
                    s.fail(e);
                }
            }),
        )?);
    }
    for w in 0..cfg.workers {
        let (s, rx, tx) = (Arc::clone(shared), in_rx.clone(), out_tx.clone());
        threads.push(spawn(
            format!("kv-worker{w}"),
            Box::new(move || worker(&s, &rx, &tx)),
        )?);
    }
    drop(out_tx);
    {
        let (main, o, s) = (
            Arc::clone(&req_obj),
            Arc::clone(&res_obj),
            Arc::clone(shared),
        );
        threads.push(spawn(
            "kv-output".into(),
            Box::new(move || {
                if let Err(e) = output(&main, &o, &s, &out_rx) {
                    s.fail(e);
                }
            }),
        )?);
    }
    Ok((vec![req_obj, res_obj], threads))
}

fn server_guard(s: &ServerShared, hang: bool) -> Guard<'_> {
    Guard {
        arch: ARCH,
        stop: &s.stop,
        interruptible: true,
        peer: 0,
        hang: hang.then_some(s.hang),
    }
}

/// `loop { sem_wait(waker); data = *req.data; send(data); sem_post(busy) }`.
fn input(
    o: &ShmObject,
    s: &ServerShared,
    tx: &crossbeam_channel::Sender<RequestData>,
) -> Result<(), KvError> {
    let f = req(o);
    let idle = server_guard(s, false);
    loop {
        match f.waker.wait(&idle, "a request (waker)") {
            Ok(()) => {}
            Err(KvError::Interrupted) => return Ok(()),
            Err(e) => return Err(e),
        }
        // SAFETY: the client that posted `waker` finished writing `data` and holds
        // `busy`, so nobody writes it now; a plain copy of 84 bytes of POD.
        let data = unsafe { f.data.get().read_volatile() };
        let _ = tx.send(data);
        f.busy.post();
    }
}

/// `while let Ok(req) = input.recv() { out.send(serve(req)) }`.
fn worker(
    s: &ServerShared,
    rx: &crossbeam_channel::Receiver<RequestData>,
    tx: &crossbeam_channel::Sender<ResponseData>,
) {
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(r) => {
                let mut out = ResponseData {
                    client_id: r.client_id,
                    request_id: r.request_id,
                    ..ResponseData::default()
                };
                s.table.serve(&r.payload, &mut out.payload);
                let _ = tx.send(out);
            }
            Err(RecvTimeoutError::Timeout) if !s.stop.load(Ordering::Relaxed) => {}
            Err(_) => return,
        }
    }
}

/// The broadcast: `sem_wait(readers); data = msg; post write_complete × readers;
/// sem_wait(read_complete); sem_post(readers)`.
fn output(
    main: &ShmObject,
    o: &ShmObject,
    s: &ServerShared,
    rx: &crossbeam_channel::Receiver<ResponseData>,
) -> Result<(), KvError> {
    let f = res(o);
    let g = server_guard(s, true);
    loop {
        let msg = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) if !s.stop.load(Ordering::Relaxed) => continue,
            Err(_) => return Ok(()),
        };
        let done = |r: Result<(), KvError>| match r {
            Err(KvError::Interrupted) => Err(None),
            Err(e) => Err(Some(e)),
            Ok(()) => Ok(()),
        };
        let step = (|| {
            done(f.readers.wait(&g, "the readers semaphore"))?;
            let nr = f.num_readers.load(Ordering::Acquire);
            // SAFETY: we hold `readers` and the previous broadcast completed, so no
            // client reads `data` now.
            unsafe { f.data.get().write_volatile(msg) };
            for _ in 0..nr {
                f.write_complete.post();
            }
            if nr > 0 {
                done(
                    f.read_complete
                        .wait(&g, "every client to read the response (read_complete)"),
                )?;
            }
            f.readers.post();
            main.header().served.fetch_add(1, Ordering::Relaxed);
            Ok::<(), Option<KvError>>(())
        })();
        match step {
            Ok(()) => {}
            Err(None) => return Ok(()),
            Err(Some(e)) => return Err(e),
        }
    }
}

/// A preopt client: both frames mapped, joined as a reader.
pub struct Client {
    req: ShmObject,
    res: ShmObject,
    opts: ClientOptions,
    server: i32,
    scratch: Box<ResponseData>,
}

impl Client {
    /// Opens the response object beside `main` and joins the readers.
    pub(crate) fn connect(main: ShmObject, opts: ClientOptions) -> Result<Client, KvError> {
        let res_obj = ShmObject::open(&main.companion(), 1)?;
        let server = main.server_pid();
        if res_obj.server_pid() != server {
            return Err(KvError::Header(format!(
                "{} belongs to pid {}, the request frame to pid {server}",
                main.companion(),
                res_obj.server_pid()
            )));
        }
        let c = Client {
            req: main,
            res: res_obj,
            opts,
            server: server as i32,
            scratch: Box::default(),
        };
        let f = res(&c.res);
        f.readers
            .wait(&c.guard(true), "the readers semaphore (join)")?;
        f.num_readers.fetch_add(1, Ordering::AcqRel);
        f.readers.post();
        Ok(c)
    }

    fn guard(&self, interruptible: bool) -> Guard<'_> {
        Guard {
            arch: ARCH,
            stop: &self.opts.stop,
            interruptible,
            peer: self.server,
            hang: Some(self.opts.hang_timeout),
        }
    }

    /// `sem_wait(busy); data = …; sem_post(waker)`.
    pub fn send(&mut self, request_id: u32, payload: &RequestPayload) -> Result<(), KvError> {
        let f = req(&self.req);
        f.busy.wait(&self.guard(true), "the request slot (busy)")?;
        let d = RequestData {
            client_id: self.opts.client_id,
            request_id,
            payload: *payload,
        };
        // SAFETY: we hold `busy`: the slot is ours until we post `waker`.
        unsafe { f.data.get().write_volatile(d) };
        f.waker.post();
        Ok(())
    }

    /// One round of the two-phase barrier: `Ok(true)` when `out` holds a response
    /// for this client, `Ok(false)` on another's or after 20 ms without one.
    fn try_recv(&self, out: &mut ResponseData) -> Result<bool, KvError> {
        let f = res(&self.res);
        if !f.write_complete.timed_wait(Duration::from_millis(20)) {
            return Ok(false);
        }
        // Inside the barrier a stop must not abandon the protocol.
        let g = self.guard(false);
        f.count_mutex.wait(&g, "count_mutex")?;
        let count = f.count.fetch_add(1, Ordering::AcqRel) + 1;
        if count == f.num_readers.load(Ordering::Acquire) {
            f.barrier2.wait(&g, "barrier2 (phase 1)")?;
            f.barrier1.post();
        }
        f.count_mutex.post();
        f.barrier1.wait(&g, "barrier1 (turnstile)")?;
        f.barrier1.post();
        // SAFETY: between the phases the output thread does not write `data`.
        *out = unsafe { f.data.get().read_volatile() };
        let mine = out.client_id == self.opts.client_id;
        f.count_mutex.wait(&g, "count_mutex")?;
        let count = f.count.fetch_sub(1, Ordering::AcqRel) - 1;
        if count == 0 {
            f.barrier1.wait(&g, "barrier1 (phase 2)")?;
            f.barrier2.post();
            f.read_complete.post();
        }
        f.count_mutex.post();
        f.barrier2.wait(&g, "barrier2 (turnstile)")?;
        f.barrier2.post();
        Ok(mine)
    }

    /// Takes part in every broadcast until one for this client arrives.
    pub fn recv(&mut self, out: &mut ResponseData) -> Result<(), KvError> {
        let since = Instant::now();
        let g = self.guard(true);
        loop {
            if self.try_recv(out)? {
                return Ok(());
            }
            g.check(since, "a response for this client")?;
        }
    }

    /// `sem_trywait(readers)` and leave, or take part in one more broadcast first.
    pub fn leave(mut self) -> Result<(), KvError> {
        let since = Instant::now();
        let mut scratch = std::mem::take(&mut self.scratch);
        let f = res(&self.res);
        loop {
            if f.readers.try_wait() {
                f.num_readers.fetch_sub(1, Ordering::AcqRel);
                f.readers.post();
                return Ok(());
            }
            self.try_recv(&mut scratch)?;
            self.guard(false)
                .check(since, "the readers semaphore (leave)")?;
        }
    }
}
