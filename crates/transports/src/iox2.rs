//! iceoryx2 publish–subscribe as a [`Transport`]: [`Iceoryx2`], through the
//! `iceoryx2` crate over its `ipc::Service`.
//!
//! # A connection: two services, one per direction
//!
//! `listen()` creates a node and two publish–subscribe services of byte slices
//! (`[u8]`), `<base>/l2c` (listener → connector) and `<base>/c2l`, each for one
//! publisher and one subscriber, with the listener's publisher on the first and its
//! subscriber on the second; `<base>` is the address,
//! `xferbench-u<uid>-p<pid>-<n>-<nonce>`, unique per listener. With `wait=event` two
//! event services (`<base>/l2c.ev`, `<base>/c2l.ev`) carry a notification after every
//! sample. `connect()` opens the four services with its own node, creates the
//! opposite ports and sends a hello sample carrying its pid; `accept()` waits
//! (bounded) for that hello. Each side thus knows the other's pid.
//!
//! # Messages
//!
//! One `send` is one sample of exactly the message's length; one `recv` takes one
//! sample, which must be exactly as long as the buffer (shorter:
//! [`io::ErrorKind::UnexpectedEof`], longer: [`io::ErrorKind::InvalidData`]; the sample
//! is consumed either way). There is no size limit ([`Transport::MAX_MESSAGE`] is
//! `None`): publishers start with slices of [`INITIAL_SLICE`] bytes and grow their data
//! segment by powers of two (`AllocationStrategy::PowerOfTwo`) when a larger message
//! comes, so the first large message of a run pays for one reallocation and the
//! warm-up absorbs it. Nothing is batched: every `send` publishes its sample (and
//! notifies, with `wait=event`), so `flush` has nothing to do. A `u64` user header
//! tells messages from the two control samples: the end-of-stream mark `close_send`
//! sends, and its acknowledgement.
//!
//! Delivery is lossless: the services disable iceoryx2's safe overflow and publishers
//! retry until delivered when the subscriber's buffer (`buffer` samples) is full,
//! through iceoryx2's own adaptive wait.
//!
//! # Waiting
//!
//! * `wait=spin`: the receiver polls `Subscriber::receive` in a busy loop.
//! * `wait=event`: the sender notifies the peer's event listener after each sample;
//!   the receiver, finding nothing, sleeps in `Listener::timed_wait` (10 ms slices).
//!
//! # A peer that goes away, and what is left behind
//!
//! Dropping an endpoint sends the end-of-stream mark if `close_send` did not, and
//! lingers (at most a second) until the peer acknowledged it, dropped its subscriber
//! or died: a subscriber only keeps a publisher's samples once it has connected to
//! that publisher, which it does when it next polls. Then it drops its ports,
//! services and node: iceoryx2 removes a service's files when its
//! last user goes. A receiver that waits re-checks about every 10 ms that the peer
//! process lives, and a sender blocked on a full buffer does the same in its
//! backpressure handler, so both fail with [`io::ErrorKind::BrokenPipe`] instead of
//! waiting for a dead process. A dead process's node, ports and services are stale
//! resources: they are removed through iceoryx2's dead-node cleanup
//! ([`remove_dead_nodes`]) when a process first uses this transport and when an
//! endpoint whose peer died is dropped.
//!
//! All of it lives under iceoryx2's usual root (`/tmp/iceoryx2/`) and `/dev/shm`, with
//! file names starting with [`FILE_PREFIX`] instead of iceoryx2's `iox2_`.

use crate::param::check_known;
use crate::{Endpoint, Listener, ParamError, ParamSpec, Params, Recv, Transport, TransportError};
use iceoryx2::port::listener::Listener as EventListener;
use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::port::{BackpressureAction, BackpressureInfo};
use iceoryx2::prelude::*;
use iceoryx2::sample::Sample;
use iceoryx2::service::port_factory::{event, publish_subscribe};
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Once, OnceLock};
use std::time::{Duration, Instant};

const NAME: &str = "iceoryx2";

/// How file names of this transport's iceoryx2 resources begin (in `/dev/shm` and
/// under `/tmp/iceoryx2/`).
pub const FILE_PREFIX: &str = "xferbench_iox2_";

/// The address prefix (after it: uid, pid, a counter and a nonce).
pub const ADDRESS_PREFIX: &str = "xferbench-u";

/// Bytes a publisher's samples start with before they grow.
pub const INITIAL_SLICE: usize = 64;

/// How often a waiting side re-checks that its peer process lives.
const PEER_CHECK: Duration = Duration::from_millis(10);

const HELLO_MAGIC: [u8; 8] = *b"xfbiox2\0";

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "wait",
        default: "event",
        accepts: "spin or event",
        help: "how a receiver waits: busy-poll the subscriber, or sleep on an iceoryx2 \
               event the sender notifies after every sample",
    },
    ParamSpec {
        name: "buffer",
        default: "2",
        accepts: "samples, 1 to 65536",
        help: "subscriber buffer size: samples delivered but not yet received before \
               the publisher waits (iceoryx2's default)",
    },
    ParamSpec {
        name: "history",
        default: "0",
        accepts: "samples, 0 to 65536",
        help: "samples each publisher keeps for subscribers that connect late \
               (iceoryx2's default)",
    },
];

/// How a receiver waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Busy polling.
    Spin,
    /// iceoryx2 event notification.
    Event,
}

/// The iceoryx2 transport.
#[derive(Debug, Clone)]
pub struct Iceoryx2 {
    wait: Wait,
    buffer: usize,
    history: usize,
}

impl Default for Iceoryx2 {
    fn default() -> Self {
        Self::from_params(&Params::new()).expect("defaults are valid")
    }
}

impl Iceoryx2 {
    /// A transport with explicit settings.
    pub fn new(wait: Wait, buffer: usize, history: usize) -> Iceoryx2 {
        Iceoryx2 {
            wait,
            buffer,
            history,
        }
    }
}

/// The iceoryx2 configuration every node of this transport uses: iceoryx2's defaults
/// with [`FILE_PREFIX`] (ignoring any system-wide iceoryx2 configuration file, so
/// that runs compare).
pub fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let mut c = Config::default();
        c.global.prefix = FileName::new(FILE_PREFIX.as_bytes()).expect("a valid file name");
        c
    })
}

/// Removes the stale resources (node, ports, services) of every dead iceoryx2 node of
/// this transport; returns how many nodes were cleaned up.
pub fn remove_dead_nodes() -> usize {
    let mut removed = 0;
    let _ = Node::<ipc::Service>::list(config(), |state| {
        if let NodeState::Dead(view) = state
            && view.try_remove_stale_resources().is_ok()
        {
            removed += 1;
        }
        CallbackProgression::Continue
    });
    removed
}

/// Removes the domain's global management segment (a node counter iceoryx2 keeps in
/// `/dev/shm` as `xferbench_iox2_…_node.<version>.global_mgmt`) when no node of this
/// transport exists any more, alive or dead; true if it was removed.
///
/// iceoryx2 creates that segment with the first node of a domain and never removes
/// it, by design (it outlives every process, so that node ids stay unique). Node ids
/// also hold the pid and the creation time, so a counter that starts again at zero
/// after the removal cannot repeat one.
pub fn remove_idle_domain() -> bool {
    remove_dead_nodes();
    let mut nodes = 0usize;
    let listed = Node::<ipc::Service>::list(config(), |_| {
        nodes += 1;
        CallbackProgression::Continue
    });
    if listed.is_err() || nodes > 0 {
        return false;
    }
    // SAFETY: the function requires that no process uses the domain meanwhile. No
    // node of it exists (listed just now), and every user of the domain is a node: a
    // process that creates one in between keeps the counter it already took, and the
    // next creates a new segment (see above).
    unsafe { iceoryx2::testing::remove_global_mgmt_segment::<ipc::Service>(config()) }
        .unwrap_or(false)
}

/// A side's node: dropped last of its iceoryx2 handles, and then the domain is
/// cleared if it was the last ([`remove_idle_domain`]).
struct LastNode(Option<Node<ipc::Service>>);

impl LastNode {
    fn node(&self) -> &Node<ipc::Service> {
        self.0.as_ref().expect("the node lives until drop")
    }
}

impl Drop for LastNode {
    fn drop(&mut self) {
        drop(self.0.take());
        remove_idle_domain();
    }
}

/// Once per process: iceoryx2 logs only fatal errors (unless `IOX2_LOG_LEVEL` says
/// otherwise; its errors reach the caller as ours), and what dead processes left is
/// removed.
fn prepare_process() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        set_log_level_from_env_or(LogLevel::Fatal);
        remove_dead_nodes();
    });
}

fn io_err(op: &'static str) -> impl FnOnce(String) -> TransportError {
    move |msg| TransportError::Io {
        transport: NAME,
        op,
        source: io::Error::other(msg),
    }
}

fn peer_alive(pid: i32) -> bool {
    if pid <= 0 {
        return true;
    }
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return true;
    };
    // EPERM means it exists (another user's): only ESRCH means gone.
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

type Payload = [u8];
/// The user header of every sample: what kind of sample it is.
type Kind = u64;
/// A message.
const DATA: Kind = 0;
/// End of stream (`close_send`); no payload.
const END: Kind = 1;
/// The receiver took the end-of-stream mark; no payload.
const END_ACK: Kind = 2;

/// How long a dropped endpoint waits for its end-of-stream mark to be taken.
const LINGER: Duration = Duration::from_secs(1);

type Pub = Publisher<ipc::Service, Payload, Kind>;
type Sub = Subscriber<ipc::Service, Payload, Kind>;
type Taken = Sample<ipc::Service, Payload, Kind>;

/// Everything iceoryx2 of one side: ports first (they drop first), then the services,
/// then the node.
struct Ports {
    tx: Pub,
    rx: Sub,
    notifier: Option<Notifier<ipc::Service>>,
    listener: Option<EventListener<ipc::Service>>,
    tx_service: publish_subscribe::PortFactory<ipc::Service, Payload, Kind>,
    _rx_service: publish_subscribe::PortFactory<ipc::Service, Payload, Kind>,
    _events: Option<[event::PortFactory<ipc::Service>; 2]>,
    _node: LastNode,
}

impl Ports {
    /// Builds one side: `listening` creates the services, else opens them.
    fn new(
        t: &Iceoryx2,
        base: &str,
        listening: bool,
        peer: &Arc<AtomicI32>,
    ) -> Result<Ports, String> {
        let last = LastNode(Some(
            NodeBuilder::new()
                .config(config())
                .signal_handling_mode(SignalHandlingMode::Disabled)
                .create::<ipc::Service>()
                .map_err(|e| format!("node: {e:?}"))?,
        ));
        let node = last.node();
        let (out, inn) = if listening {
            ("l2c", "c2l")
        } else {
            ("c2l", "l2c")
        };
        let service_name = |suffix: &str| {
            ServiceName::new(&format!("{base}/{suffix}"))
                .map_err(|e| format!("service name {base}/{suffix}: {e:?}"))
        };
        let pubsub = |suffix: &str| {
            let b = node
                .service_builder(&service_name(suffix)?)
                .publish_subscribe::<Payload>()
                .user_header::<Kind>()
                .max_publishers(1)
                .max_subscribers(1)
                .max_nodes(2)
                .enable_safe_overflow(false)
                .subscriber_max_buffer_size(t.buffer)
                .history_size(t.history);
            if listening {
                b.create().map_err(|e| format!("create {suffix}: {e:?}"))
            } else {
                b.open().map_err(|e| format!("open {suffix}: {e:?}"))
            }
        };
        let tx_service = pubsub(out)?;
        let rx_service = pubsub(inn)?;
        let watched = peer.clone();
        let tx = tx_service
            .publisher_builder()
            .initial_max_slice_len(INITIAL_SLICE)
            .allocation_strategy(AllocationStrategy::PowerOfTwo)
            .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
            .set_backpressure_handler(move |info: &BackpressureInfo| {
                if info.elapsed_time < PEER_CHECK || peer_alive(watched.load(Ordering::Relaxed)) {
                    BackpressureAction::Retry
                } else {
                    BackpressureAction::DiscardDataAndFail
                }
            })
            .create()
            .map_err(|e| format!("publisher: {e:?}"))?;
        let rx = rx_service
            .subscriber_builder()
            .buffer_size(t.buffer)
            .create()
            .map_err(|e| format!("subscriber: {e:?}"))?;
        let (notifier, listener, events) = match t.wait {
            Wait::Spin => (None, None, None),
            Wait::Event => {
                let ev = |suffix: &str| {
                    let b = node
                        .service_builder(&service_name(&format!("{suffix}.ev"))?)
                        .event()
                        .max_notifiers(1)
                        .max_listeners(1)
                        .max_nodes(2);
                    if listening {
                        b.create().map_err(|e| format!("create {suffix}.ev: {e:?}"))
                    } else {
                        b.open().map_err(|e| format!("open {suffix}.ev: {e:?}"))
                    }
                };
                let (out_ev, in_ev) = (ev(out)?, ev(inn)?);
                let notifier = out_ev
                    .notifier_builder()
                    .create()
                    .map_err(|e| format!("notifier: {e:?}"))?;
                let listener = in_ev
                    .listener_builder()
                    .create()
                    .map_err(|e| format!("listener: {e:?}"))?;
                (Some(notifier), Some(listener), Some([out_ev, in_ev]))
            }
        };
        Ok(Ports {
            tx,
            rx,
            notifier,
            listener,
            tx_service,
            _rx_service: rx_service,
            _events: events,
            _node: last,
        })
    }
}

/// A listener's services, waiting for the connector's hello.
pub struct Iceoryx2Listener {
    address: String,
    ports: Ports,
    peer: Arc<AtomicI32>,
    wait: Wait,
}

impl std::fmt::Debug for Iceoryx2Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iceoryx2Listener")
            .field("address", &self.address)
            .finish()
    }
}

// SAFETY: iceoryx2's `ipc::Service` ports, services and node share their state
// through non-atomic reference counts (`Rc`), which is why they are not `Send`. Every
// handle of one side (node, services, ports, and the samples, which never outlive a
// call) is owned by this one value and none is cloned out of it, so moving the value
// moves all of them together: no two threads ever touch one reference count. The
// state they point to is `Send` (iceoryx2 requires it of what its `Rc`s hold).
unsafe impl Send for Iceoryx2Listener {}

/// One side of an iceoryx2 channel.
pub struct Iceoryx2Endpoint {
    ports: Ports,
    wait: Wait,
    peer: Arc<AtomicI32>,
    tx_closed: bool,
    rx_closed: bool,
    /// The peer took our end-of-stream mark.
    acked: bool,
}

impl std::fmt::Debug for Iceoryx2Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iceoryx2Endpoint")
            .field("wait", &self.wait)
            .field("peer", &self.peer.load(Ordering::Relaxed))
            .finish()
    }
}

// SAFETY: as for `Iceoryx2Listener`: the endpoint owns every iceoryx2 handle of its
// side, and the samples it takes are dropped before each call returns.
unsafe impl Send for Iceoryx2Endpoint {}

fn gone(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, format!("{NAME}: {what}"))
}

impl Iceoryx2Endpoint {
    fn peer_pid(&self) -> i32 {
        self.peer.load(Ordering::Relaxed)
    }

    /// Publishes a filled sample and notifies; a sample nobody received means the
    /// peer's subscriber has gone.
    #[inline]
    fn publish(
        &mut self,
        sample: iceoryx2::sample_mut::SampleMut<ipc::Service, Payload, Kind>,
    ) -> io::Result<()> {
        let delivered = sample.send().map_err(|e| match e {
            iceoryx2::port::SendError::UnableToDeliver => {
                gone(&format!("the peer process {} died", self.peer_pid()))
            }
            e => io::Error::other(format!("{NAME}: send failed: {e:?}")),
        })?;
        if delivered == 0 {
            return Err(gone("the peer's subscriber has gone"));
        }
        if let Some(n) = &self.ports.notifier {
            n.notify()
                .map_err(|e| io::Error::other(format!("{NAME}: notify failed: {e:?}")))?;
        }
        Ok(())
    }

    /// Loans a sample of `len` bytes of kind `kind`, lets `fill` write it in place and
    /// publishes it.
    #[inline]
    fn send_kind<F: FnOnce(&mut [u8])>(
        &mut self,
        kind: Kind,
        len: usize,
        fill: F,
    ) -> io::Result<()> {
        let mut sample =
            self.ports.tx.loan_slice_uninit(len).map_err(|e| {
                io::Error::other(format!("{NAME}: loan of {len} bytes failed: {e}"))
            })?;
        *sample.user_header_mut() = kind;
        let raw: *mut [MaybeUninit<u8>] = sample.payload_mut();
        // SAFETY: the slice lies in a shared-memory data segment that the kernel
        // zero-filled when it was mapped and that earlier samples wrote: its bytes are
        // initialised, and every bit pattern is a valid `u8`. The sample is ours until
        // sent, and the reference does not outlive it.
        fill(unsafe { &mut *(raw as *mut [u8]) });
        // SAFETY: as above, every byte of the payload is initialised.
        let sample = unsafe { sample.assume_init() };
        self.publish(sample)
    }

    /// Handles a control sample: an end-of-stream mark is acknowledged (so that the
    /// peer's publisher, which lingers until then, may go), an acknowledgement noted.
    /// True for an end-of-stream mark.
    fn control(&mut self, kind: Kind) -> bool {
        match kind {
            END => {
                self.rx_closed = true;
                // A peer that went meanwhile needs no acknowledgement.
                let _ = self.send_kind(END_ACK, 0, |_| {});
                true
            }
            _ => {
                self.acked = true;
                false
            }
        }
    }

    /// Waits for the next message; `None` when the peer closed.
    #[inline]
    fn next_sample(&mut self) -> io::Result<Option<Taken>> {
        if self.rx_closed {
            return Ok(None);
        }
        let mut polls = 0u32;
        let mut last_check = None;
        loop {
            let got = self
                .ports
                .rx
                .receive()
                .map_err(|e| io::Error::other(format!("{NAME}: receive failed: {e:?}")))?;
            if let Some(s) = got {
                let kind = *s.user_header();
                if kind == DATA {
                    return Ok(Some(s));
                }
                drop(s);
                if self.control(kind) {
                    return Ok(None);
                }
                continue;
            }
            match (self.wait, &self.ports.listener) {
                (Wait::Event, Some(l)) => {
                    l.timed_wait(|_| {}, PEER_CHECK)
                        .map_err(|e| io::Error::other(format!("{NAME}: wait failed: {e:?}")))?;
                }
                _ => {
                    std::hint::spin_loop();
                    polls = polls.wrapping_add(1);
                    if !polls.is_multiple_of(1024) {
                        continue;
                    }
                }
            }
            let now = Instant::now();
            let since = *last_check.get_or_insert(now);
            if now.duration_since(since) >= PEER_CHECK {
                last_check = Some(now);
                if !peer_alive(self.peer_pid()) && !self.ports.rx.has_samples().unwrap_or(false) {
                    return Err(gone(&format!("the peer process {} died", self.peer_pid())));
                }
            }
        }
    }

    /// After `close_send`, waits (at most [`LINGER`]) until the peer took the
    /// end-of-stream mark, dropped its subscriber or died: a subscriber that had not
    /// yet connected to this publisher would otherwise lose what it sent.
    fn linger(&mut self) {
        let until = Instant::now() + LINGER;
        let mut polls = 0u32;
        while !self.acked && Instant::now() < until {
            if let Ok(Some(s)) = self.ports.rx.receive() {
                let kind = *s.user_header();
                drop(s);
                if kind != DATA {
                    self.control(kind);
                }
                continue;
            }
            polls = polls.wrapping_add(1);
            if polls.is_multiple_of(64)
                && (self
                    .ports
                    .tx_service
                    .dynamic_config()
                    .number_of_subscribers()
                    == 0
                    || !peer_alive(self.peer_pid()))
            {
                return;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

fn check_len(got: usize, want: usize) -> io::Result<()> {
    if got < want {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("{NAME}: a {got}-byte message where {want} bytes were expected"),
        ));
    }
    if got > want {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{NAME}: a {got}-byte message for a {want}-byte buffer"),
        ));
    }
    Ok(())
}

impl Endpoint for Iceoryx2Endpoint {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        self.send_in_place(msg.len(), |b| b.copy_from_slice(msg))
    }

    /// Loans a sample of `len` bytes, lets `fill` write it in place and publishes it.
    #[inline]
    fn send_in_place<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> io::Result<()> {
        if self.tx_closed {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "sending side already closed",
            ));
        }
        self.send_kind(DATA, len, fill)
    }

    /// Takes a sample of exactly `len` bytes and lets `read` read it in place.
    #[inline]
    fn recv_in_place<R, F: FnOnce(&[u8]) -> R>(
        &mut self,
        len: usize,
        read: F,
    ) -> io::Result<Option<R>> {
        let Some(s) = self.next_sample()? else {
            return Ok(None);
        };
        let p = s.payload();
        check_len(p.len(), len)?;
        Ok(Some(read(p)))
    }

    /// Takes a sample of `len` bytes, loans a reply of the same length, lets `f` read
    /// the one and write the other in place, then publishes the reply.
    #[inline]
    fn echo_in_place<R, F: FnOnce(&[u8], &mut [u8]) -> R>(
        &mut self,
        len: usize,
        f: F,
    ) -> io::Result<Option<R>> {
        let Some(s) = self.next_sample()? else {
            return Ok(None);
        };
        check_len(s.payload().len(), len)?;
        let mut r = None;
        self.send_in_place(len, |out| r = Some(f(s.payload(), out)))?;
        drop(s);
        Ok(r)
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Recv> {
        Ok(
            match self.recv_in_place(buf.len(), |p| buf.copy_from_slice(p))? {
                Some(()) => Recv::Message,
                None => Recv::Closed,
            },
        )
    }

    fn close_send(&mut self) -> io::Result<()> {
        if self.tx_closed {
            return Ok(());
        }
        self.tx_closed = true;
        self.send_kind(END, 0, |_| {})
    }
}

impl Drop for Iceoryx2Endpoint {
    fn drop(&mut self) {
        if self.close_send().is_ok() {
            self.linger();
        }
        if !peer_alive(self.peer_pid()) {
            remove_dead_nodes();
        }
    }
}

/// Address counter, so that one process's listeners never share a name.
static NEXT: AtomicU64 = AtomicU64::new(0);
fn parse_address(address: &str) -> Option<i32> {
    let rest = address.strip_prefix(ADDRESS_PREFIX)?;
    if address.len() > 200 || !rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return None;
    }
    let mut parts = rest.split('-');
    let _uid: u32 = parts.next()?.parse().ok()?;
    let pid: i32 = parts.next()?.strip_prefix('p')?.parse().ok()?;
    let _n: u64 = parts.next()?.parse().ok()?;
    let _nonce = u64::from_str_radix(parts.next()?, 16).ok()?;
    (parts.next().is_none() && pid > 0).then_some(pid)
}

impl Transport for Iceoryx2 {
    type Endpoint = Iceoryx2Endpoint;
    type Listener = Iceoryx2Listener;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "iceoryx2 publish-subscribe (ipc::Service), one service per direction, a sample per message";
    const ZERO_COPY: bool = true;

    fn param_specs() -> &'static [ParamSpec] {
        PARAMS
    }

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        check_known(NAME, PARAMS, params)?;
        let value = |i: usize| {
            params
                .get(PARAMS[i].name)
                .map_or(PARAMS[i].default, String::as_str)
        };
        let invalid = |i: usize| ParamError::Invalid {
            name: PARAMS[i].name.into(),
            value: value(i).into(),
            accepts: PARAMS[i].accepts.into(),
        };
        let wait = match value(0) {
            "spin" => Wait::Spin,
            "event" => Wait::Event,
            _ => return Err(invalid(0)),
        };
        let buffer = value(1)
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=65_536).contains(n))
            .ok_or_else(|| invalid(1))?;
        let history = value(2)
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= 65_536)
            .ok_or_else(|| invalid(2))?;
        Ok(Iceoryx2::new(wait, buffer, history))
    }

    fn listen(&self) -> Result<Iceoryx2Listener, TransportError> {
        prepare_process();
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let address = format!(
            "{ADDRESS_PREFIX}{}-p{}-{}-{nonce:x}",
            rustix::process::getuid().as_raw(),
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
        );
        let peer = Arc::new(AtomicI32::new(0));
        let ports = Ports::new(self, &address, true, &peer).map_err(io_err("listen"))?;
        Ok(Iceoryx2Listener {
            address,
            ports,
            peer,
            wait: self.wait,
        })
    }

    fn connect(
        &self,
        address: &str,
        _deadline: Instant,
    ) -> Result<Iceoryx2Endpoint, TransportError> {
        let Some(pid) = parse_address(address) else {
            return Err(TransportError::BadAddress {
                transport: NAME,
                address: address.to_string(),
                reason: "expected xferbench-u<uid>-p<pid>-<n>-<nonce>",
            });
        };
        prepare_process();
        let peer = Arc::new(AtomicI32::new(pid));
        let ports = Ports::new(self, address, false, &peer).map_err(io_err("connect"))?;
        let mut ep = Iceoryx2Endpoint {
            ports,
            wait: self.wait,
            peer,
            tx_closed: false,
            rx_closed: false,
            acked: false,
        };
        let mut hello = [0u8; 12];
        hello[..8].copy_from_slice(&HELLO_MAGIC);
        hello[8..].copy_from_slice(&std::process::id().to_le_bytes());
        ep.send(&hello).map_err(|source| TransportError::Io {
            transport: NAME,
            op: "connect",
            source,
        })?;
        Ok(ep)
    }
}

impl Listener for Iceoryx2Listener {
    type Endpoint = Iceoryx2Endpoint;

    fn address(&self) -> &str {
        &self.address
    }

    fn accept(self, deadline: Instant) -> Result<Iceoryx2Endpoint, TransportError> {
        loop {
            let got = self
                .ports
                .rx
                .receive()
                .map_err(|e| format!("receive: {e:?}"))
                .map_err(io_err("accept"))?;
            if let Some(s) = got {
                let p = s.payload();
                let pid = (p.len() == 12 && p[..8] == HELLO_MAGIC)
                    .then(|| i32::from_le_bytes(p[8..].try_into().expect("4 bytes")))
                    .filter(|pid| *pid > 0)
                    .ok_or_else(|| "a malformed hello from the connector".to_string())
                    .map_err(io_err("accept"))?;
                drop(s);
                self.peer.store(pid, Ordering::Relaxed);
                return Ok(Iceoryx2Endpoint {
                    ports: self.ports,
                    wait: self.wait,
                    peer: self.peer,
                    tx_closed: false,
                    rx_closed: false,
                    acked: false,
                });
            }
            if Instant::now() >= deadline {
                return Err(TransportError::Timeout {
                    transport: NAME,
                    what: "accept",
                });
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_defaults_are_iceoryx2s() {
        let d = Config::default().defaults.publish_subscribe;
        assert_eq!(PARAMS[1].default, d.subscriber_max_buffer_size.to_string());
        assert_eq!(PARAMS[2].default, d.publisher_history_size.to_string());
    }

    #[test]
    fn addresses_parse_strictly() {
        assert_eq!(parse_address("xferbench-u0-p12-3-ff"), Some(12));
        for bad in [
            "",
            "xferbench-u0-p12-3",
            "xferbench-u0-p0-3-ff",
            "xferbench-u0-p12-3-ff/x",
            "xferbench-u0-p12-3-ff-9",
            "iox2_xferbench-u0-p12-3-ff",
        ] {
            assert_eq!(parse_address(bad), None, "{bad}");
        }
    }
}
