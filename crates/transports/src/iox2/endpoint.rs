//! One side of a connection: its iceoryx2 ports, the listener waiting for the
//! connector's hello, and the endpoint that sends and receives samples.

use super::domain::{LastNode, peer_alive, remove_dead_nodes};
use super::settings::{HELLO_LEN, INITIAL_SLICE, Iceoryx2, NAME, PEER_CHECK, Slices, Wait};
use crate::{Endpoint, Recv};
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
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// What a waiting side watches: the peer's process, and the flag its owner sets when
/// it gives up on the channel ([`Endpoint::abandon_when`]).
#[derive(Debug, Default)]
pub(super) struct PeerWatch {
    pid: AtomicI32,
    abandon: OnceLock<Arc<AtomicBool>>,
}

impl PeerWatch {
    pub(super) fn new(pid: i32) -> Arc<PeerWatch> {
        Arc::new(PeerWatch {
            pid: AtomicI32::new(pid),
            abandon: OnceLock::new(),
        })
    }

    pub(super) fn pid(&self) -> i32 {
        self.pid.load(Ordering::Relaxed)
    }

    pub(super) fn set_pid(&self, pid: i32) {
        self.pid.store(pid, Ordering::Relaxed);
    }

    fn abandoned(&self) -> bool {
        self.abandon
            .get()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Whether waiting for the peer can still end: its process lives and the owner
    /// has not given up.
    fn worth_waiting(&self) -> bool {
        !self.abandoned() && peer_alive(self.pid())
    }

    /// Why waiting for the peer is over (call when [`PeerWatch::worth_waiting`] said
    /// no).
    fn why(&self) -> io::Error {
        if self.abandoned() {
            io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!("{NAME}: the channel was abandoned (the run gave up on it)"),
            )
        } else {
            gone(&format!("the peer process {} died", self.pid()))
        }
    }
}

type Payload = [u8];
/// The user header of a control sample: what kind of sample it is. Data samples, on
/// services of their own, carry no user header.
type Kind = u64;
/// End of stream (`close_send`); no payload.
const END: Kind = 1;
/// The receiver took the end-of-stream mark; no payload.
const END_ACK: Kind = 2;
/// The listener took the connector's hello; no payload. The listener's first sample.
pub(super) const ACCEPTED: Kind = 3;

/// The control services' subscriber buffer: more than the control samples that can
/// be in flight one way (the acceptance, an acknowledgement and an end-of-stream mark).
const CONTROL_BUFFER: usize = 4;

/// A busy-polling receiver polls its control service once in this many empty turns
/// of the data service (a power of two that divides 1024, the turns between two
/// checks of the peer).
const CONTROL_EVERY: u32 = 64;

/// A busy-polling receiver polls this many times back to back before it separates
/// its polls with a pause hint (`pause`). An empty poll of iceoryx2 costs about a
/// thousand instructions, so these are microseconds: the whole wait of a ping-pong's
/// reply, which a pause landing in it would delay.
const EAGER_POLLS: u32 = 64;

/// How long a dropped endpoint waits for its end-of-stream mark to be taken while
/// the peer lives and keeps its subscriber: what it sent is lost once its publisher
/// goes, so a slow but live reader (a loaded machine) is waited for.
const LINGER: Duration = Duration::from_secs(10);

/// How long a dropped connector waits for an acceptance it never received.
const ACCEPT_GRACE: Duration = Duration::from_secs(1);

/// A service's user header: `()` for data, [`Kind`] for control.
trait Header: std::fmt::Debug + ZeroCopySend {}
impl<H: std::fmt::Debug + ZeroCopySend> Header for H {}

type PubSub<H> = publish_subscribe::PortFactory<ipc::Service, Payload, H>;
type Pub<H> = Publisher<ipc::Service, Payload, H>;
type Sub<H> = Subscriber<ipc::Service, Payload, H>;
type Taken = Sample<ipc::Service, Payload, ()>;
type Loaned = iceoryx2::sample_mut_uninit::SampleMutUninit<ipc::Service, [MaybeUninit<u8>], ()>;
type Filled = iceoryx2::sample_mut::SampleMut<ipc::Service, Payload, ()>;

/// Configures a service of one publisher and one subscriber, then creates it
/// (`listening`) or opens it.
fn pubsub_service<H: Header>(
    b: iceoryx2::service::builder::publish_subscribe::Builder<Payload, H, ipc::Service>,
    listening: bool,
    what: &str,
    safe_overflow: bool,
    buffer: usize,
    history: usize,
) -> Result<PubSub<H>, String> {
    let b = b
        .max_publishers(1)
        .max_subscribers(1)
        .max_nodes(2)
        .enable_safe_overflow(safe_overflow)
        .subscriber_max_buffer_size(buffer)
        .history_size(history);
    if listening {
        b.create().map_err(|e| format!("create {what}: {e:?}"))
    } else {
        b.open().map_err(|e| format!("open {what}: {e:?}"))
    }
}

/// A publisher that retries a full buffer while the peer is worth waiting for. Its
/// data segment holds slices of `slice` bytes at most and never grows
/// (`AllocationStrategy::Static`, as iceoryx2's own benchmark configures it), or,
/// without `slice`, starts at [`INITIAL_SLICE`] bytes and grows by powers of two.
///
/// On a service with safe overflow (`safe_overflow`) a buffer is never full (its
/// oldest sample is replaced), so the publisher gets no backpressure strategy nor
/// handler: iceoryx2's default, as its own benchmark has it, whose send takes the
/// short path (`try_send`) instead of the blocking one that would only find the
/// buffer not full.
fn publisher<H: Header>(
    service: &PubSub<H>,
    peer: &Arc<PeerWatch>,
    slice: Option<usize>,
    safe_overflow: bool,
) -> Result<Pub<H>, String> {
    let b = service.publisher_builder();
    let b = match slice {
        Some(n) => b
            .initial_max_slice_len(n)
            .allocation_strategy(AllocationStrategy::Static),
        None => b
            .initial_max_slice_len(INITIAL_SLICE)
            .allocation_strategy(AllocationStrategy::PowerOfTwo),
    };
    let b = if safe_overflow {
        b
    } else {
        let watched = peer.clone();
        b.backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
            .set_backpressure_handler(move |info: &BackpressureInfo| {
                if info.elapsed_time < PEER_CHECK || watched.worth_waiting() {
                    BackpressureAction::Retry
                } else {
                    BackpressureAction::DiscardDataAndFail
                }
            })
    };
    b.create().map_err(|e| format!("publisher: {e:?}"))
}

fn subscriber<H: Header>(service: &PubSub<H>, buffer: usize) -> Result<Sub<H>, String> {
    service
        .subscriber_builder()
        .buffer_size(buffer)
        .create()
        .map_err(|e| format!("subscriber: {e:?}"))
}

/// Everything iceoryx2 of one side: ports first (they drop first), then the services,
/// then the node.
pub(super) struct Ports {
    tx: Pub<()>,
    pub(super) rx: Sub<()>,
    /// Control samples out: never safe overflow, always retried until delivered.
    ctl_tx: Pub<Kind>,
    /// Control samples in.
    pub(super) ctl_rx: Sub<Kind>,
    notifier: Option<Notifier<ipc::Service>>,
    listener: Option<EventListener<ipc::Service>>,
    tx_service: PubSub<()>,
    _rx_service: PubSub<()>,
    _ctl_services: [PubSub<Kind>; 2],
    _events: Option<[event::PortFactory<ipc::Service>; 2]>,
    _node: LastNode,
}

impl Ports {
    /// Builds one side: `listening` creates the services, else opens them.
    pub(super) fn new(
        t: &Iceoryx2,
        base: &str,
        listening: bool,
        peer: &Arc<PeerWatch>,
    ) -> Result<Ports, String> {
        let last = LastNode::create()?;
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
        let data = |suffix: &str| {
            let b = node
                .service_builder(&service_name(suffix)?)
                .publish_subscribe::<Payload>();
            pubsub_service(b, listening, suffix, t.safe_overflow, t.buffer, t.history)
        };
        // Control services never overflow safely, whatever the data services do: a
        // control sample replaced before it was taken would stop the channel.
        let control = |suffix: &str| {
            let suffix = format!("{suffix}.ctl");
            let b = node
                .service_builder(&service_name(&suffix)?)
                .publish_subscribe::<Payload>()
                .user_header::<Kind>();
            pubsub_service(b, listening, &suffix, false, CONTROL_BUFFER, 0)
        };
        let tx_service = data(out)?;
        let rx_service = data(inn)?;
        let ctl_tx_service = control(out)?;
        let ctl_rx_service = control(inn)?;
        // The data publisher's slices also fit the connector's hello.
        let tx = publisher(
            &tx_service,
            peer,
            t.slices.limit().map(|n| n.max(HELLO_LEN)),
            t.safe_overflow,
        )?;
        let rx = subscriber(&rx_service, t.buffer)?;
        let ctl_tx = publisher(&ctl_tx_service, peer, None, false)?;
        let ctl_rx = subscriber(&ctl_rx_service, CONTROL_BUFFER)?;
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
            ctl_tx,
            ctl_rx,
            notifier,
            listener,
            tx_service,
            _rx_service: rx_service,
            _ctl_services: [ctl_tx_service, ctl_rx_service],
            _events: events,
            _node: last,
        })
    }
}

/// A listener's services, waiting for the connector's hello.
pub struct Iceoryx2Listener {
    pub(super) address: String,
    pub(super) ports: Ports,
    pub(super) peer: Arc<PeerWatch>,
    pub(super) wait: Wait,
    pub(super) slices: Slices,
    pub(super) pause: bool,
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
    /// A sample loaned right after the last data sample was sent, for the next one of
    /// the same length: the loan (which reclaims the samples the peer returned) then
    /// happens while the peer works, not on the way of the next message. Declared
    /// before `ports`, so it is returned before they go. It is filled and sent where
    /// it lies, so that no copy of the sample's handle lies on a message's way.
    pub(super) spare: Option<Filled>,
    pub(super) ports: Ports,
    pub(super) wait: Wait,
    pub(super) peer: Arc<PeerWatch>,
    pub(super) tx_closed: bool,
    pub(super) rx_closed: bool,
    /// The peer's end-of-stream mark arrived; its data samples, all sent before it,
    /// are taken first.
    pub(super) end_seen: bool,
    /// The peer took our end-of-stream mark.
    pub(super) acked: bool,
    /// The peer's subscriber is connected to our publisher: always for the listener
    /// (it received the hello); for the connector, once the listener's
    /// [`ACCEPTED`] sample arrived.
    pub(super) ready: bool,
    /// How long the connector waits for the acceptance: its connect deadline.
    pub(super) accept_by: Option<Instant>,
    /// The data samples (`max_message`): a static segment refuses longer messages.
    pub(super) slices: Slices,
    /// Busy polling: a pause hint between two empty turns (`pause`).
    pub(super) pause: bool,
}

impl std::fmt::Debug for Iceoryx2Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iceoryx2Endpoint")
            .field("wait", &self.wait)
            .field("peer", &self.peer.pid())
            .finish()
    }
}

// SAFETY: as for `Iceoryx2Listener`: the endpoint owns every iceoryx2 handle of its
// side, its spare loaned sample included, and the samples it receives are dropped
// before each call returns.
unsafe impl Send for Iceoryx2Endpoint {}

#[cold]
fn too_long(len: usize, slices: Slices) -> io::Error {
    let why = match slices {
        Slices::Sized(max) => format!(
            "the {max} bytes per sample its data segment was sized for (max_message=auto: the run's message size; -p max_message=grow lets the segment grow)"
        ),
        other => format!("max_message ({} bytes)", other.limit().unwrap_or_default()),
    };
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{NAME}: a {len}-byte message is longer than {why}"),
    )
}

/// A send found no loaned sample where `spare_for` leaves one: a broken invariant,
/// reported rather than a message silently lost.
#[cold]
fn no_spare() -> io::Error {
    io::Error::other(format!("{NAME}: no loaned sample to send"))
}

fn gone(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, format!("{NAME}: {what}"))
}

impl Iceoryx2Endpoint {
    fn peer_pid(&self) -> i32 {
        self.peer.pid()
    }

    /// Publishes a filled sample and notifies; a sample nobody received means the
    /// peer's subscriber has gone.
    #[inline]
    fn publish<H: Header>(
        &mut self,
        sample: iceoryx2::sample_mut::SampleMut<ipc::Service, Payload, H>,
    ) -> io::Result<()> {
        let delivered = sample.send().map_err(|e| match e {
            iceoryx2::port::SendError::UnableToDeliver => self.peer.why(),
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

    /// Loans a data sample of `len` bytes, lets `fill` write it in place and
    /// publishes it.
    #[inline]
    fn send_data<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> io::Result<()> {
        fill(self.spare_for(len)?.payload_mut());
        self.publish_spare(len)
    }

    /// The next data sample to send, of `len` bytes: the spare when it fits, else a
    /// new loan. It is filled where it lies and published by
    /// [`Iceoryx2Endpoint::publish_spare`].
    #[inline]
    fn spare_for(&mut self, len: usize) -> io::Result<&mut Filled> {
        if !self.ready {
            self.wait_accepted(self.accept_by)?;
        }
        if !matches!(&self.spare, Some(s) if s.payload().len() == len) {
            self.loan_spare(len)?;
        }
        self.spare.as_mut().ok_or_else(no_spare)
    }

    /// Publishes the spare, filled since [`Iceoryx2Endpoint::spare_for`], then loans
    /// the next spare of the same length.
    #[inline]
    fn publish_spare(&mut self, len: usize) -> io::Result<()> {
        let sample = self.spare.take().ok_or_else(no_spare)?;
        self.publish(sample)?;
        // Best effort: without a spare the next send loans on its own.
        if let Ok(s) = self.ports.tx.loan_slice_uninit(len) {
            // SAFETY: as in `loan_spare`.
            self.spare = Some(unsafe { s.assume_init() });
        }
        Ok(())
    }

    /// Replaces the spare with a sample of `len` bytes.
    #[cold]
    fn loan_spare(&mut self, len: usize) -> io::Result<()> {
        // Returned first, so that it never counts against the publisher's loans.
        self.spare = None;
        let s = self.loan(len)?;
        // SAFETY: the slice lies in a shared-memory data segment that the kernel
        // zero-filled when it was mapped and that earlier samples wrote: its bytes are
        // initialised, and every bit pattern is a valid `u8`. The sample is ours until
        // sent.
        self.spare = Some(unsafe { s.assume_init() });
        Ok(())
    }

    /// Refuses a message longer than a static segment's slices.
    #[inline]
    fn check_size(&self, len: usize) -> io::Result<()> {
        match self.slices {
            Slices::Static(max) | Slices::Sized(max) if len > max => {
                Err(too_long(len, self.slices))
            }
            _ => Ok(()),
        }
    }

    /// Fails once `close_send` was called.
    #[inline]
    fn check_open(&self) -> io::Result<()> {
        if self.tx_closed {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "sending side already closed",
            ));
        }
        Ok(())
    }

    fn loan(&self, len: usize) -> io::Result<Loaned> {
        self.ports
            .tx
            .loan_slice_uninit(len)
            .map_err(|e| io::Error::other(format!("{NAME}: loan of {len} bytes failed: {e}")))
    }

    /// Sends a control sample (no payload) of kind `kind` on the control service,
    /// which never overflows: it waits until the peer's buffer has room.
    pub(super) fn send_control(&mut self, kind: Kind) -> io::Result<()> {
        if !self.ready {
            self.wait_accepted(self.accept_by)?;
        }
        let mut sample = self.ports.ctl_tx.loan_slice_uninit(0).map_err(|e| {
            io::Error::other(format!("{NAME}: loan of a control sample failed: {e}"))
        })?;
        *sample.user_header_mut() = kind;
        // SAFETY: the payload is empty.
        let sample = unsafe { sample.assume_init() };
        self.publish(sample)
    }

    /// Notes a control sample: the acceptance, the peer's end-of-stream mark (taken
    /// once the data before it is), or the acknowledgement of ours.
    fn control(&mut self, kind: Kind) {
        match kind {
            ACCEPTED => self.ready = true,
            END => self.end_seen = true,
            _ => self.acked = true,
        }
    }

    /// The peer's stream ended and all of it was taken: acknowledge the mark, so that
    /// the peer's publisher, which lingers until then, may go.
    fn end_taken(&mut self) {
        self.rx_closed = true;
        // A peer that went meanwhile needs no acknowledgement.
        let _ = self.send_control(END_ACK);
    }

    /// The connector's first send waits here until the listener accepted.
    ///
    /// A publisher delivers to a subscriber only once the subscriber has connected its
    /// end, which it does when it polls; until then iceoryx2 queues up to the buffer's
    /// size and then gives up on that subscriber (it reports the sample as delivered
    /// to nobody rather than block on a receiver that may never come). A connector
    /// that sent a full buffer before the listener's first poll (a busy machine, many
    /// channels) would so see a live peer as gone. The listener's [`ACCEPTED`]
    /// sample, sent after it took the hello, proves its subscriber is connected.
    /// `until` bounds the wait (the connect deadline; else only the peer's death or
    /// the owner's giving up ends it).
    #[cold]
    pub(super) fn wait_accepted(&mut self, until: Option<Instant>) -> io::Result<()> {
        let mut polls = 0u32;
        let mut last_check = Instant::now();
        while !self.ready {
            let got = self
                .ports
                .ctl_rx
                .receive()
                .map_err(|e| io::Error::other(format!("{NAME}: receive failed: {e:?}")))?;
            if let Some(s) = got {
                let kind = *s.user_header();
                drop(s);
                if kind != ACCEPTED {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "{NAME}: the listener's first control sample was not its acceptance"
                        ),
                    ));
                }
                self.ready = true;
                break;
            }
            polls = polls.wrapping_add(1);
            if polls < 1024 {
                std::hint::spin_loop();
                continue;
            }
            std::thread::sleep(Duration::from_micros(50));
            if last_check.elapsed() >= PEER_CHECK {
                last_check = Instant::now();
                if !self.peer.worth_waiting() {
                    return Err(self.peer.why());
                }
                if until.is_some_and(|t| last_check >= t) {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "{NAME}: the listener (process {}) did not accept the connection in time",
                            self.peer_pid()
                        ),
                    ));
                }
            }
        }
        Ok(())
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
                return Ok(Some(s));
            }
            // The data service is empty: every message sent before the end-of-stream
            // mark has been taken.
            if self.end_seen {
                self.end_taken();
                return Ok(None);
            }
            polls = polls.wrapping_add(1);
            // Busy polling, the control service (the acceptance and the end of the
            // stream: once a connection each) is polled every `CONTROL_EVERY` empty
            // turns only, so that waiting for a message costs one receive per turn.
            // The first `EAGER_POLLS` turns of a wait follow back to back, as in
            // iceoryx2's own benchmark: a reply is usually that close. Later ones, with
            // `pause` (the default), are separated by a pause hint.
            if self.wait == Wait::Spin && !polls.is_multiple_of(CONTROL_EVERY) {
                if self.pause && polls > EAGER_POLLS {
                    std::hint::spin_loop();
                }
                continue;
            }
            if let Some(s) = self
                .ports
                .ctl_rx
                .receive()
                .map_err(|e| io::Error::other(format!("{NAME}: receive failed: {e:?}")))?
            {
                let kind = *s.user_header();
                drop(s);
                self.control(kind);
                continue;
            }
            match (self.wait, &self.ports.listener) {
                (Wait::Event, Some(l)) => {
                    l.timed_wait(|_| {}, PEER_CHECK)
                        .map_err(|e| io::Error::other(format!("{NAME}: wait failed: {e:?}")))?;
                }
                _ => {
                    std::hint::spin_loop();
                    if !polls.is_multiple_of(1024) {
                        continue;
                    }
                }
            }
            let now = Instant::now();
            let since = *last_check.get_or_insert(now);
            if now.duration_since(since) >= PEER_CHECK {
                last_check = Some(now);
                if self.peer.abandoned()
                    || (!peer_alive(self.peer_pid())
                        && !self.ports.rx.has_samples().unwrap_or(false)
                        && !self.ports.ctl_rx.has_samples().unwrap_or(false))
                {
                    return Err(self.peer.why());
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
            if let Ok(Some(s)) = self.ports.ctl_rx.receive() {
                let kind = *s.user_header();
                drop(s);
                self.control(kind);
                // What data is left is not wanted any more.
                if self.end_seen && !self.rx_closed {
                    self.end_taken();
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
                    || !self.peer.worth_waiting())
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
        self.send_in_place(msg.len(), |b| crate::copy::copy_slice(b, msg))
    }

    /// Loans a sample of `len` bytes, lets `fill` write it in place and publishes it.
    #[inline]
    fn send_in_place<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> io::Result<()> {
        self.check_open()?;
        self.check_size(len)?;
        self.send_data(len, fill)
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
        self.check_open()?;
        self.check_size(len)?;
        let r = f(s.payload(), self.spare_for(len)?.payload_mut());
        // The request goes back to the peer's publisher before the reply is
        // published, as in iceoryx2's own benchmark: it is returned by the time the
        // peer, having taken the reply, loans again and reclaims it.
        drop(s);
        self.publish_spare(len)?;
        Ok(Some(r))
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Recv> {
        Ok(
            match self.recv_in_place(buf.len(), |p| crate::copy::copy_slice(buf, p))? {
                Some(()) => Recv::Message,
                None => Recv::Closed,
            },
        )
    }

    fn abandon_when(&mut self, flag: Arc<AtomicBool>) {
        let _ = self.peer.abandon.set(flag);
    }

    fn close_send(&mut self) -> io::Result<()> {
        if self.tx_closed {
            return Ok(());
        }
        self.tx_closed = true;
        self.send_control(END)
    }
}

impl Drop for Iceoryx2Endpoint {
    fn drop(&mut self) {
        self.spare = None;
        // A connector never accepted has nobody to say goodbye to (bounded wait).
        let accepted = self.ready
            || self
                .wait_accepted(Some(Instant::now() + ACCEPT_GRACE))
                .is_ok();
        if accepted && self.close_send().is_ok() {
            self.linger();
        }
        if !peer_alive(self.peer_pid()) {
            remove_dead_nodes();
        }
    }
}
