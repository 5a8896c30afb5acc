//! Shared memory: two SPSC byte rings (one per direction) in a sealed region, with
//! spin, block or hybrid waiting.
//!
//! * [`backing`]: the sealed memfd behind every shared region of the project, its
//!   `memfd:<pid>:<fd>` address and the checks made before mapping one.
//! * [`region`]: the region, its `#[repr(C)]` header, validation on attach, and the
//!   sweep of stale named objects of earlier builds.
//! * [`ring`]: the SPSC byte ring with cached indices, batched publication and a
//!   zero-copy API.
//! * [`wait`]: the wait strategies and their lost-wake-up-free futex protocol.
//!
//! The listener creates the region and publishes its address; the connecting side
//! attaches, validates the seals and the header and publishes its pid; the listener
//! then closes its descriptor, so the address no longer opens. Ring 0 carries
//! listener → connector, ring 1 the reverse.

pub mod backing;
pub mod mapping;
pub mod region;
pub mod ring;
pub mod wait;

use crate::{
    Endpoint, Listener, ParamDef, ParamError, ParamValues, Recv, Traffic, Transport, TransportError,
};
use crate::{Hosts, Wakeup, WakeupRule};
use region::{Region, RegionError};
use ring::{Consumer, Producer};
use std::borrow::Cow;
use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use wait::{Strategy, WaitMode};
use xferbench_params::{Choices, Kind, Value};

const NAME: &str = "shm";

/// `wait`: how a side waits.
pub const WAIT: ParamDef = ParamDef::choice(
    "wait",
    Strategy::CHOICES,
    "hybrid",
    "how a side waits: busy-spin, sleep on a futex, or spin for spin_us then sleep",
);
/// `spin_us`: how long `wait=hybrid` spins, in microseconds.
pub const SPIN_US: ParamDef = ParamDef::integer(
    "spin_us",
    0,
    1_000_000,
    50,
    "how long wait=hybrid spins before sleeping, in microseconds",
);
const CAPACITY_NAME: &str = "capacity";

/// `capacity`: the bytes of each ring, or `auto` (the default): see [`auto_capacity`].
pub const CAPACITY: ParamDef = ParamDef {
    name: Cow::Borrowed(CAPACITY_NAME),
    kind: Kind::Bytes {
        min: 4 << 10,
        max: 1 << 30,
        power_of_two: true,
        multiple_of: 1,
    },
    default: Value::Auto,
    unset: None,
    help: Cow::Borrowed(
        "bytes of each ring (one per direction), a multiple of the page size; `auto`: for a ping-pong whose two rings of two messages each fit in half the L1 data cache, the smallest such ring (hot lines, lower latency), else 4 MiB (fresh lines, higher throughput)",
    ),
};

/// The ring size of `capacity=auto` when nothing says otherwise: a stream, large
/// messages, or a caller that does not tell the traffic.
pub const DEFAULT_CAPACITY: usize = 4 << 20;

/// The ring size `capacity=auto` gives `traffic` on a CPU whose L1 data cache holds
/// `l1d` bytes.
///
/// A ring of [`DEFAULT_CAPACITY`] writes every message on lines that no CPU has
/// touched for a long while, which keeps a stream's producer and consumer from
/// contending for lines. A ping-pong has one message in flight: it needs a ring of
/// only two messages, and when both rings of such size sit in the L1 data caches
/// (half of it, leaving the rest to the application's own buffers), each message
/// goes to lines both sides hold already, which costs fewer and shorter transfers
/// than fresh ones. Rings larger than that gain nothing and lose the fresh lines'
/// advantage for larger messages; `docs/transports-log.md` ("Fresh lines against
/// reused ones") has the measurements behind the rule.
pub fn auto_capacity(traffic: Traffic, l1d: usize) -> usize {
    let Some(depth) = traffic.in_flight else {
        return DEFAULT_CAPACITY;
    };
    let fit = traffic
        .largest
        .max(1)
        .saturating_mul(2 * depth.max(1))
        .checked_next_power_of_two()
        .unwrap_or(usize::MAX)
        .max(region::page_size());
    if fit.saturating_mul(2) <= l1d / 2 {
        fit
    } else {
        DEFAULT_CAPACITY
    }
}

/// The L1 data cache of the CPU this runs on, in bytes, from sysfs; 32 KiB (every
/// x86-64 core since 2006 has at least that) where sysfs does not say.
fn l1_data_cache() -> usize {
    fn read() -> Option<usize> {
        let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
        for entry in std::fs::read_dir(dir).ok()?.flatten() {
            let path = entry.path();
            let field = |name: &str| std::fs::read_to_string(path.join(name)).ok();
            if field("level")?.trim() == "1" && field("type")?.trim() == "Data" {
                // `32K`, as the byte sizes of parameters are written.
                return usize::try_from(xferbench_params::bytes::parse(&field("size")?)?).ok();
            }
        }
        None
    }
    static L1D: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *L1D.get_or_init(|| read().filter(|&n| n > 0).unwrap_or(32 << 10))
}

const BATCH_NAME: &str = "batch";

/// `batch`: bytes moved before an index is published, or `auto` (the default): see
/// [`auto_batch`].
pub const BATCH: ParamDef = ParamDef {
    name: Cow::Borrowed(BATCH_NAME),
    kind: Kind::Bytes {
        min: 1,
        max: 1 << 30,
        power_of_two: false,
        multiple_of: 1,
    },
    default: Value::Auto,
    unset: None,
    help: Cow::Borrowed(
        "bytes written (read) before the producer (consumer) publishes its index; 1 publishes every message at once; a larger message is copied and published in pieces of this size, but of at least 4 KiB; `auto`: for a stream, its whole message when larger than 16 KiB, up to 64 KiB (and a quarter of the ring), else 16 KiB",
    ),
};

/// The batch of `batch=auto` for anything but a stream of messages larger than it.
pub const DEFAULT_BATCH: usize = 16 << 10;

/// The largest batch `batch=auto` gives a stream: a larger message is published in
/// pieces of this size.
pub const STREAM_BATCH_MOST: usize = 64 << 10;

/// The batch `batch=auto` gives `traffic` in rings of `capacity` bytes.
///
/// A ping-pong has one message in flight, and a large one copied in pieces lets the
/// reader copy out each piece while the writer copies in the next: the two copies of
/// one message overlap ([`DEFAULT_BATCH`]). A stream's successive messages overlap
/// already, the writer copying in one while the reader copies out another, so pieces
/// gain it nothing; they only let the reader follow the writer a piece behind, on
/// lines still in the writer's cache, which costs throughput when the two CPUs sit in
/// different core complexes. A stream's message is therefore published whole up to
/// [`STREAM_BATCH_MOST`] (and a quarter of the ring), the largest size the streaming
/// floor measures; a larger one in pieces of that size. `docs/transports.md` ("`shm`
/// streams against the streaming floor") has the measurements behind the rule.
pub fn auto_batch(traffic: Traffic, capacity: usize) -> usize {
    if traffic.in_flight.is_some() {
        return DEFAULT_BATCH;
    }
    traffic
        .largest
        .min(STREAM_BATCH_MOST)
        .min(capacity / 4)
        .max(DEFAULT_BATCH)
}

const PARAMS: &[ParamDef] = &[WAIT, SPIN_US, CAPACITY, BATCH];

/// The shared-memory transport.
#[derive(Debug, Clone)]
pub struct Shm {
    mode: WaitMode,
    capacity: usize,
    /// `capacity=auto`: [`Transport::size_for`] may choose another size.
    auto: bool,
    batch: usize,
    /// `batch=auto`: [`Transport::size_for`] may choose another batch.
    auto_batch: bool,
}

impl Default for Shm {
    fn default() -> Self {
        Self::from_values(&ParamValues::new()).expect("defaults are valid")
    }
}

impl Shm {
    /// A transport with explicit settings.
    pub fn new(mode: WaitMode, capacity: usize, batch: usize) -> Shm {
        Shm {
            mode,
            capacity,
            auto: false,
            batch,
            auto_batch: false,
        }
    }

    /// The bytes of each ring this transport creates.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

/// A region waiting for its peer.
#[derive(Debug)]
pub struct ShmListener {
    address: String,
    region: Region,
    transport: Shm,
}

/// One side of a shared-memory channel.
pub struct ShmEndpoint {
    tx: Producer,
    rx: Consumer,
    tx_closed: bool,
    _region: Arc<Region>,
}

impl std::fmt::Debug for ShmEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShmEndpoint")
            .field("capacity", &self.tx.capacity())
            .finish()
    }
}

fn region_err(e: RegionError) -> TransportError {
    match e {
        RegionError::Io { op, source } => TransportError::Io {
            transport: NAME,
            op,
            source,
        },
        e @ RegionError::Backing(backing::BackingError::NoSpace { .. }) => TransportError::Io {
            transport: NAME,
            op: "create",
            source: io::Error::new(io::ErrorKind::StorageFull, e.to_string()),
        },
        other => TransportError::Io {
            transport: NAME,
            op: "attach",
            source: io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
        },
    }
}

impl ShmEndpoint {
    fn new(
        region: Region,
        address: &str,
        creator: bool,
        t: &Shm,
    ) -> Result<ShmEndpoint, TransportError> {
        let h = region.header();
        let peer = if creator {
            h.attacher_pid.load(Ordering::Acquire)
        } else {
            h.creator_pid
        } as i32;
        // The asymmetric barrier makes every sleep cost an IPI to the other CPU: worth
        // it only when sleeping is rare (hybrid). Block mode sleeps on every wait, so
        // there the waker's fence is the cheaper side. Both sides decide alike.
        let both_can = h.flags.load(Ordering::Relaxed) & region::FLAG_ASYMMETRIC_FENCES != 0;
        let fences = if both_can && matches!(t.mode, WaitMode::Hybrid { .. }) {
            wait::Fences::Asymmetric
        } else {
            wait::Fences::Symmetric
        };
        let w = ring::Waiting {
            mode: t.mode,
            fences,
            peer_pid: peer,
        };
        let (out, inn) = if creator { (0, 1) } else { (1, 0) };
        let label: Arc<str> = Arc::from(address);
        let id = |ring| ring::RingId {
            region: label.clone(),
            ring,
        };
        let corrupt = |source| TransportError::Io {
            transport: NAME,
            op: "attach",
            source,
        };
        let tx = Producer::new(id(out), region.control(out), region.data(out), t.batch, w)
            .map_err(corrupt)?;
        let rx = Consumer::new(id(inn), region.control(inn), region.data(inn), t.batch, w)
            .map_err(corrupt)?;
        Ok(ShmEndpoint {
            tx,
            rx,
            tx_closed: false,
            _region: Arc::new(region),
        })
    }

    /// Zero-copy send: waits for `n` free bytes (at most half the ring's capacity) and
    /// returns them; fill them, then call [`ShmEndpoint::commit`].
    pub fn reserve(&mut self, n: usize) -> io::Result<&mut [u8]> {
        let Self { tx, rx, .. } = self;
        tx.reserve(n, &mut || rx.publish())
    }

    /// Zero-copy send: appends the first `n` reserved bytes.
    pub fn commit(&mut self, n: usize) {
        self.tx.commit(n);
    }

    /// Zero-copy receive: waits for `n` bytes (at most half the capacity) and returns them
    /// in place; `None` when the peer closed first. Then [`ShmEndpoint::release`].
    pub fn peek(&mut self, n: usize) -> io::Result<Option<&[u8]>> {
        let Self { tx, rx, .. } = self;
        rx.peek(n, &mut || tx.publish())
    }

    /// Zero-copy receive: hands `n` peeked bytes back.
    pub fn release(&mut self, n: usize) {
        self.rx.release(n);
    }
}

impl Endpoint for ShmEndpoint {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        if self.tx_closed {
            return Err(closed());
        }
        let Self { tx, rx, .. } = self;
        tx.send(msg, &mut || rx.publish())
    }

    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        self.tx.publish();
        Ok(())
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Recv> {
        let Self { tx, rx, .. } = self;
        Ok(if rx.recv(buf, &mut || tx.publish())? {
            Recv::Message
        } else {
            Recv::Closed
        })
    }

    /// Both ring ends stop waiting once `flag` is set: a thread peer never dies, so
    /// without it a side whose peer stopped answering would spin for good.
    fn abandon_when(&mut self, flag: Arc<std::sync::atomic::AtomicBool>) {
        self.tx.abandon_when(flag.clone());
        self.rx.abandon_when(flag);
    }

    fn close_send(&mut self) -> io::Result<()> {
        if !self.tx_closed {
            self.tx.close();
            self.tx_closed = true;
        }
        Ok(())
    }

    /// Reserves `len` bytes of the ring, lets `fill` write them and commits them.
    /// `len` may be at most half the ring's capacity.
    #[inline]
    fn send_in_place<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> io::Result<()> {
        if self.tx_closed {
            return Err(closed());
        }
        let Self { tx, rx, .. } = self;
        fill(tx.reserve(len, &mut || rx.publish())?);
        tx.commit(len);
        Ok(())
    }

    /// Peeks `len` bytes of the ring, lets `read` read them and releases them.
    #[inline]
    fn recv_in_place<R, F: FnOnce(&[u8]) -> R>(
        &mut self,
        len: usize,
        read: F,
    ) -> io::Result<Option<R>> {
        let Self { tx, rx, .. } = self;
        let Some(msg) = rx.peek(len, &mut || tx.publish())? else {
            return Ok(None);
        };
        let r = read(msg);
        rx.release(len);
        Ok(Some(r))
    }

    /// Peeks the request, reserves the reply, lets `f` read the one and write the
    /// other, commits the reply and releases the request.
    #[inline]
    fn echo_in_place<R, F: FnOnce(&[u8], &mut [u8]) -> R>(
        &mut self,
        len: usize,
        f: F,
    ) -> io::Result<Option<R>> {
        if self.tx_closed {
            return Err(closed());
        }
        let Self { tx, rx, .. } = self;
        let request: *const [u8] = match rx.peek(len, &mut || tx.publish())? {
            Some(msg) => msg,
            None => return Ok(None),
        };
        let reply = tx.reserve(len, &mut || rx.publish())?;
        // SAFETY: the peeked bytes lie in the region's shared mapping, which `_region`
        // keeps mapped; they stay the consumer's until `release` below, because
        // `Consumer::publish` (the only consumer call meanwhile) hands back released
        // bytes only. The reply lies in the other ring, so the two never overlap.
        let r = f(unsafe { &*request }, reply);
        tx.commit(len);
        rx.release(len);
        Ok(Some(r))
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "sending side already closed")
}

impl Drop for ShmEndpoint {
    fn drop(&mut self) {
        let _ = self.close_send();
        self.rx.leave();
    }
}

impl Transport for Shm {
    type Endpoint = ShmEndpoint;
    const WAKEUP: WakeupRule = WakeupRule::ByChoice {
        param: WAIT,
        cases: &[
            ("spin", Wakeup::CacheLine),
            ("hybrid", Wakeup::CacheLine),
            ("block", Wakeup::Futex),
        ],
    };
    const HOSTS: Hosts = Hosts::One(Cow::Borrowed("shares memory between processes of one host"));
    type Listener = ShmListener;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str =
        "shared-memory SPSC byte rings (one per direction), spin/block/hybrid waiting";
    const ZERO_COPY: bool = true;

    fn params() -> &'static [ParamDef] {
        PARAMS
    }

    fn from_values(values: &ParamValues) -> Result<Self, ParamError> {
        values.check(NAME, PARAMS)?;
        let spin = Duration::from_micros(values.integer(&SPIN_US).unsigned_abs());
        let mode = WaitMode::new(values.choice(&WAIT), spin);
        let (capacity, auto) = match values.value(&CAPACITY) {
            Value::Bytes(n) if !region::valid_capacity(*n) => {
                return Err(ParamError::Invalid {
                    name: CAPACITY.name.to_string(),
                    value: CAPACITY.display(&Value::Bytes(*n)),
                    accepts: format!("{}, a multiple of the page size", CAPACITY.accepts()),
                });
            }
            Value::Bytes(n) => (*n as usize, false),
            _ => (DEFAULT_CAPACITY, true),
        };
        let (batch, auto_batch) = match values.value(&BATCH) {
            Value::Bytes(n) => (usize::try_from(*n).unwrap_or(usize::MAX), false),
            _ => (DEFAULT_BATCH, true),
        };
        Ok(Shm {
            mode,
            capacity,
            auto,
            batch,
            auto_batch,
        })
    }

    /// With `capacity=auto` (the default), rings of [`auto_capacity`]; with
    /// `batch=auto` (the default), the batch of [`auto_batch`].
    fn size_for(&mut self, traffic: Traffic) {
        if self.auto {
            self.capacity = auto_capacity(traffic, l1_data_cache());
        }
        if self.auto_batch {
            self.batch = auto_batch(traffic, self.capacity);
        }
    }

    /// With `capacity=auto` and `batch=auto`, the ring size and batch they chose.
    fn chosen(&self) -> Vec<(&'static str, String)> {
        let mut chosen = Vec::new();
        if self.auto {
            chosen.push((CAPACITY_NAME, self.capacity.to_string()));
        }
        if self.auto_batch {
            chosen.push((BATCH_NAME, self.batch.to_string()));
        }
        chosen
    }

    fn listen(&self) -> Result<ShmListener, TransportError> {
        let region = Region::create(self.capacity, self.mode.code()).map_err(region_err)?;
        let address = region
            .name()
            .expect("a new region has its name")
            .to_string();
        Ok(ShmListener {
            address,
            region,
            transport: self.clone(),
        })
    }

    fn connect(&self, address: &str, _deadline: Instant) -> Result<ShmEndpoint, TransportError> {
        if backing::parse(address).is_err() {
            return Err(TransportError::BadAddress {
                transport: NAME,
                address: address.to_string(),
                reason: "expected a region address memfd:<pid>:<fd>:<inode>",
            });
        }
        let region = Region::attach(address, self.mode.code()).map_err(region_err)?;
        ShmEndpoint::new(region, address, false, self)
    }
}

impl Listener for ShmListener {
    type Endpoint = ShmEndpoint;

    fn address(&self) -> &str {
        &self.address
    }

    fn accept(mut self, deadline: Instant) -> Result<ShmEndpoint, TransportError> {
        loop {
            if self.region.header().attacher_pid.load(Ordering::Acquire) != 0 {
                // From here on the region lives only in the two mappings.
                self.region.unlink();
                return ShmEndpoint::new(self.region, &self.address, true, &self.transport);
            }
            if Instant::now() >= deadline {
                return Err(TransportError::Timeout {
                    transport: NAME,
                    what: "attach",
                });
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L1D: usize = 32 << 10;

    #[test]
    fn auto_gives_a_ping_pong_of_small_messages_a_ring_of_two_that_fits_the_l1() {
        let rt = Traffic::round_trips;
        assert_eq!(auto_capacity(rt(1), L1D), 4 << 10);
        assert_eq!(auto_capacity(rt(64), L1D), 4 << 10);
        assert_eq!(auto_capacity(rt(2048), L1D), 4 << 10);
        assert_eq!(auto_capacity(rt(2049), L1D), 8 << 10);
        assert_eq!(auto_capacity(rt(4096), L1D), 8 << 10);
        // Two rings of 16 KiB would fill the whole L1: fresh lines instead.
        assert_eq!(auto_capacity(rt(4097), L1D), DEFAULT_CAPACITY);
        assert_eq!(auto_capacity(rt(64 << 10), L1D), DEFAULT_CAPACITY);
        assert_eq!(auto_capacity(rt(usize::MAX), L1D), DEFAULT_CAPACITY);
        // A larger L1 takes larger messages; a tiny one none.
        assert_eq!(auto_capacity(rt(8 << 10), 64 << 10), 16 << 10);
        assert_eq!(auto_capacity(rt(64), 8 << 10), DEFAULT_CAPACITY);
    }

    #[test]
    fn auto_gives_streams_and_deeper_traffic_what_they_need() {
        assert_eq!(auto_capacity(Traffic::stream(64), L1D), DEFAULT_CAPACITY);
        assert_eq!(auto_capacity(Traffic::stream(1), L1D), DEFAULT_CAPACITY);
        let deep = |n| Traffic {
            largest: 1024,
            in_flight: Some(n),
        };
        assert_eq!(auto_capacity(deep(0), L1D), 4 << 10);
        assert_eq!(auto_capacity(deep(4), L1D), 8 << 10);
        assert_eq!(auto_capacity(deep(8), L1D), DEFAULT_CAPACITY);
    }

    #[test]
    fn every_auto_capacity_is_a_valid_ring() {
        for l1d in [0, 16 << 10, 32 << 10, 48 << 10, 1 << 20] {
            for largest in [0, 1, 63, 64, 1000, 4096, 1 << 20, usize::MAX] {
                for in_flight in [None, Some(1), Some(3)] {
                    let c = auto_capacity(Traffic { largest, in_flight }, l1d);
                    assert!(region::valid_capacity(c as u64), "{c}");
                }
            }
        }
    }

    #[test]
    fn size_for_changes_an_auto_capacity_and_never_an_explicit_one() {
        let mut t = Shm::default();
        assert_eq!(t.capacity(), DEFAULT_CAPACITY);
        t.size_for(Traffic::round_trips(64));
        assert_eq!(
            t.capacity(),
            auto_capacity(Traffic::round_trips(64), l1_data_cache())
        );
        t.size_for(Traffic::stream(64));
        assert_eq!(t.capacity(), DEFAULT_CAPACITY);
        assert_eq!(
            t.chosen(),
            vec![
                ("capacity", (4u64 << 20).to_string()),
                ("batch", (16u64 << 10).to_string())
            ]
        );

        let mut values = ParamValues::new();
        values.set(&CAPACITY, Value::Bytes(64 << 10)).unwrap();
        values.set(&BATCH, Value::Bytes(4 << 10)).unwrap();
        let mut t = Shm::from_values(&values).unwrap();
        t.size_for(Traffic::round_trips(64));
        assert_eq!(t.capacity(), 64 << 10);
        t.size_for(Traffic::stream(64 << 10));
        assert_eq!(t.batch, 4 << 10);
        assert!(t.chosen().is_empty());
    }

    #[test]
    fn a_stream_publishes_its_large_messages_whole_and_a_ping_pong_in_pieces() {
        let cap = DEFAULT_CAPACITY;
        let rt = Traffic::round_trips;
        let st = Traffic::stream;
        // One message in flight: pieces of the default batch, whatever the size.
        assert_eq!(auto_batch(rt(64), cap), DEFAULT_BATCH);
        assert_eq!(auto_batch(rt(64 << 10), cap), DEFAULT_BATCH);
        assert_eq!(auto_batch(rt(1 << 20), cap), DEFAULT_BATCH);
        let load = Traffic {
            largest: 64 << 10,
            in_flight: Some(8),
        };
        assert_eq!(auto_batch(load, cap), DEFAULT_BATCH);
        // A stream: the default batch for small messages, a large one whole ...
        assert_eq!(auto_batch(st(1), cap), DEFAULT_BATCH);
        assert_eq!(auto_batch(st(4 << 10), cap), DEFAULT_BATCH);
        assert_eq!(auto_batch(st(16 << 10), cap), DEFAULT_BATCH);
        assert_eq!(auto_batch(st(20 << 10), cap), 20 << 10);
        assert_eq!(auto_batch(st(64 << 10), cap), 64 << 10);
        // ... up to the most and a quarter of the ring, never below the default.
        assert_eq!(auto_batch(st(256 << 10), cap), STREAM_BATCH_MOST);
        assert_eq!(auto_batch(st(usize::MAX), cap), STREAM_BATCH_MOST);
        assert_eq!(auto_batch(st(64 << 10), 128 << 10), 32 << 10);
        assert_eq!(auto_batch(st(64 << 10), 16 << 10), DEFAULT_BATCH);

        let mut t = Shm::default();
        t.size_for(Traffic::stream(64 << 10));
        assert_eq!(t.batch, 64 << 10);
        t.size_for(Traffic::round_trips(64 << 10));
        assert_eq!(t.batch, DEFAULT_BATCH);
    }

    #[test]
    fn the_l1_data_cache_is_read_or_assumed() {
        let l1d = l1_data_cache();
        assert!((4 << 10..=16 << 20).contains(&l1d), "{l1d}");
    }
}
