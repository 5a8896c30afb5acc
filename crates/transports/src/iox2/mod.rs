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
//! sample. Two more, `<base>/l2c.ctl` and `<base>/c2l.ctl`, carry the control samples
//! (see below). `connect()` opens the services with its own node, creates the
//! opposite ports, connects its subscribers and sends a hello sample carrying its pid;
//! `accept()` waits (bounded) for that hello and answers with an acceptance sample.
//! Each side thus knows the other's pid. The connector's first send waits for the
//! acceptance, at most until the deadline `connect()` was given (then it fails with
//! [`io::ErrorKind::TimedOut`], naming the transport and the listener's pid): iceoryx2 delivers to a subscriber only once that subscriber has
//! connected (it does when it polls), and gives up on it, rather than block, when the
//! buffer fills first, so a fast connector could otherwise find a live listener
//! "gone" before its first poll.
//!
//! # Messages
//!
//! One `send` is one sample of exactly the message's length; one `recv` takes one
//! sample, which must be exactly as long as the buffer (shorter:
//! [`io::ErrorKind::UnexpectedEof`], longer: [`io::ErrorKind::InvalidData`]; the sample
//! is consumed either way). How large a data publisher's samples are is
//! `max_message` ([`Slices`]):
//!
//! * `auto`, the default: where the run tells the size of its messages
//!   ([`Transport::size_for`]; both sides of every point of `run` do), the data
//!   publishers' segments hold slices of exactly that size and never grow
//!   (`AllocationStrategy::Static`, as iceoryx2's own benchmark configures its
//!   publishers), which spares every loan, receive and return the dynamic segment's
//!   bookkeeping. Where it does not (the conformance suite, a caller of this crate),
//!   as `grow`.
//! * `N`: the same static segment, of slices of `N` bytes.
//! * `grow`: no size limit: publishers start with slices of [`INITIAL_SLICE`] bytes
//!   and grow their data segment by powers of two (`AllocationStrategy::PowerOfTwo`)
//!   when a larger message comes, so the first large message of a run pays for one
//!   reallocation and the warm-up absorbs it.
//!
//! A static segment's limit is [`Transport::max_message`], and a longer message is
//! refused with [`io::ErrorKind::InvalidInput`] (the message says where the limit
//! came from). [`Transport::MAX_MESSAGE`] is `None`: no configuration is bounded
//! by the transport itself. Nothing is batched: every `send` publishes its sample (and
//! notifies, with `wait=event`), so `flush` has nothing to do. The control samples
//! (the acceptance, the end-of-stream mark `close_send` sends, and its
//! acknowledgement) travel on the `.ctl` services, a `u64` user header naming each
//! (data samples carry no user header, as in iceoryx2's own benchmark); a
//! receiver whose data service is empty polls its control service (busy polling,
//! once in 64 empty turns), and takes the peer's end-of-stream mark only once the
//! data service is empty after it (the data was all published before the mark).
//!
//! Delivery is lossless by default: the services disable iceoryx2's safe overflow and
//! publishers retry until delivered when the subscriber's buffer (`buffer` samples)
//! is full, through iceoryx2's own adaptive wait. `overflow=safe` turns safe overflow
//! on for the data services only: a message then replaces the oldest one the peer has
//! not taken, so it is lossless only while one message is in flight (pingpong), and
//! their publishers, whose buffers are then never full, get no retry strategy. The
//! control services never overflow safely (a buffer of four samples, retried until
//! delivered): a lost acceptance would leave the connector waiting for it for good.
//!
//! # Waiting
//!
//! * `wait=spin`: the receiver polls `Subscriber::receive` in a busy loop: the first
//!   64 polls of a wait back to back (a ping-pong's reply lands within them), later
//!   ones with a pause hint (`std::hint::spin_loop`) between two; `pause=false`
//!   never pauses, as iceoryx2's own benchmark does.
//! * `wait=event`: the sender notifies the peer's event listener after each sample;
//!   the receiver, finding nothing, sleeps in `Listener::timed_wait` (10 ms slices).
//!
//! # A peer that goes away, and what is left behind
//!
//! Dropping an endpoint sends the end-of-stream mark if `close_send` did not, and
//! lingers (at most 10 s) until the peer acknowledged it, dropped its subscriber
//! or died: a subscriber only keeps a publisher's samples once it has connected to
//! that publisher, which it does when it next polls. Then it drops its ports,
//! services and node: iceoryx2 removes a service's files when its
//! last user goes. A receiver that waits re-checks about every 10 ms that the peer
//! process lives, and a sender blocked on a full buffer does the same in its
//! backpressure handler, so both fail with [`io::ErrorKind::BrokenPipe`] instead of
//! waiting for a dead process. A peer that is a thread of the same process never dies:
//! there the owner's flag ([`Endpoint::abandon_when`]) ends the same waits, with
//! [`io::ErrorKind::ConnectionAborted`], and the endpoints drop as usual. A dead process's node, ports and services are stale
//! resources: they are removed through iceoryx2's dead-node cleanup
//! ([`remove_dead_nodes`]) when a process first uses this transport and when an
//! endpoint whose peer died is dropped. So is a node that a process killed while
//! creating it left half made (its details written, its monitor not yet): iceoryx2
//! lists nodes by their monitors and never sees it, so the same sweep removes such a
//! directory once the process its details name is gone.
//!
//! One file outlives every node: the domain's *global management segment*, 16 bytes in
//! `/dev/shm` (`xferbench_iox2_<hash>_node.<version>.global_mgmt`), a node counter
//! that iceoryx2 creates with the first node of a domain and, by design, never
//! removes. The side that drops the last node of the domain, alive or dead, removes
//! it ([`remove_idle_domain`]), so a run whose peer was killed leaves nothing either:
//! the survivor removes the dead node's resources, then its own node, then the segment.
//!
//! All of it lives under iceoryx2's usual root (`/tmp/iceoryx2/`) and `/dev/shm`, with
//! file names starting with [`FILE_PREFIX`] instead of iceoryx2's `iox2_` (iceoryx2's
//! own root directories, `/tmp/iceoryx2/nodes` and `/tmp/iceoryx2/services`, stay: other
//! iceoryx2 users share them).
//!
//! # Zero-copy
//!
//! [`Transport::ZERO_COPY`]: a send loans a sample, the caller writes the message in
//! place and it is published; a receive lends the received sample's payload to the
//! caller before it goes back; an echo writes the reply's loaned sample while the
//! request's is still held, and returns the request before it publishes the reply
//! (as iceoryx2's own benchmark does). The copying `send` and `recv` are the same calls with a
//! `memcpy` into the loan and out of the sample.
//!
//! [`io::ErrorKind::TimedOut`]: std::io::ErrorKind::TimedOut
//! [`io::ErrorKind::UnexpectedEof`]: std::io::ErrorKind::UnexpectedEof
//! [`io::ErrorKind::InvalidData`]: std::io::ErrorKind::InvalidData
//! [`io::ErrorKind::InvalidInput`]: std::io::ErrorKind::InvalidInput
//! [`io::ErrorKind::BrokenPipe`]: std::io::ErrorKind::BrokenPipe
//! [`io::ErrorKind::ConnectionAborted`]: std::io::ErrorKind::ConnectionAborted

mod domain;
mod endpoint;
mod settings;

pub use domain::{PREFIX_ENV, config, remove_dead_nodes, remove_idle_domain};
pub use endpoint::{Iceoryx2Endpoint, Iceoryx2Listener};
pub use settings::{
    ADDRESS_PREFIX, BUFFER, FILE_PREFIX, HISTORY, INITIAL_SLICE, Iceoryx2, MAX_MESSAGE_SIZE,
    OVERFLOW, Overflow, PAUSE, Slices, WAIT, Wait,
};

use domain::{io_err, prepare_process};
use endpoint::{PeerWatch, Ports};
use settings::{HELLO_LEN, HELLO_MAGIC, NAME, PARAMS};

use crate::{
    Endpoint, Listener, ParamDef, ParamError, ParamValues, Traffic, Transport, TransportError,
};
use crate::{Hosts, Wakeup, WakeupRule};
use iceoryx2::port::update_connections::UpdateConnections;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

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
    const WAKEUP: WakeupRule = WakeupRule::ByChoice {
        param: WAIT,
        cases: &[("spin", Wakeup::CacheLine), ("event", Wakeup::Futex)],
    };
    const HOSTS: Hosts = Hosts::One(Cow::Borrowed("shares memory between processes of one host"));
    type Listener = Iceoryx2Listener;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "iceoryx2 publish-subscribe (ipc::Service), one service per direction, a sample per message";
    const ZERO_COPY: bool = true;

    fn params() -> &'static [ParamDef] {
        PARAMS
    }

    fn max_message(&self) -> Option<usize> {
        self.slices.limit()
    }

    /// With `max_message=auto` (the default), a static data segment of slices of
    /// `largest` bytes.
    fn size_for(&mut self, traffic: Traffic) {
        if matches!(self.slices, Slices::Auto | Slices::Sized(_)) {
            self.slices = Slices::Sized(traffic.largest.max(1));
        }
    }

    /// With `max_message=auto`, the slice size it chose, or `grow` until told one.
    fn chosen(&self) -> Vec<(&'static str, String)> {
        let name = "max_message";
        match self.slices {
            Slices::Sized(n) => vec![(name, n.to_string())],
            Slices::Auto => vec![(name, "grow".to_string())],
            Slices::Static(_) | Slices::Grow => Vec::new(),
        }
    }

    fn from_values(values: &ParamValues) -> Result<Self, ParamError> {
        values.check(NAME, PARAMS)?;
        let overflow: Overflow = values.choice(&OVERFLOW);
        Ok(Iceoryx2 {
            safe_overflow: overflow == Overflow::Safe,
            slices: match values.value(&MAX_MESSAGE_SIZE) {
                xferbench_params::Value::Bytes(n) => Slices::Static(*n as usize),
                xferbench_params::Value::Unset => Slices::Grow,
                _ => Slices::Auto,
            },
            pause: values.boolean(&PAUSE),
            ..Iceoryx2::new(
                values.choice(&WAIT),
                values.integer(&BUFFER) as usize,
                values.integer(&HISTORY) as usize,
            )
        })
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
        let peer = PeerWatch::new(0);
        let ports = Ports::new(self, &address, true, &peer).map_err(io_err("listen"))?;
        Ok(Iceoryx2Listener {
            address,
            ports,
            peer,
            wait: self.wait,
            slices: self.slices,
            pause: self.pause,
        })
    }

    fn connect(
        &self,
        address: &str,
        deadline: Instant,
    ) -> Result<Iceoryx2Endpoint, TransportError> {
        let Some(pid) = parse_address(address) else {
            return Err(TransportError::BadAddress {
                transport: NAME,
                address: address.to_string(),
                reason: "expected xferbench-u<uid>-p<pid>-<n>-<nonce>",
            });
        };
        prepare_process();
        let peer = PeerWatch::new(pid);
        let ports = Ports::new(self, address, false, &peer).map_err(io_err("connect"))?;
        // Our subscriber connects to the listener's publisher now, before the hello,
        // so that nothing the listener sends after accepting can miss it.
        ports
            .rx
            .update_connections()
            .and_then(|()| ports.ctl_rx.update_connections())
            .map_err(|e| format!("subscriber connection: {e:?}"))
            .map_err(io_err("connect"))?;
        // The hello goes out at once (`ready`); then sending waits for the listener's
        // acceptance (see `Iceoryx2Endpoint::wait_accepted`).
        let mut ep = Iceoryx2Endpoint {
            spare: None,
            ports,
            wait: self.wait,
            peer,
            tx_closed: false,
            rx_closed: false,
            end_seen: false,
            acked: false,
            ready: true,
            accept_by: Some(deadline),
            // Set after the hello, which is longer than the smallest limits.
            slices: Slices::Grow,
            pause: self.pause,
        };
        let mut hello = [0u8; HELLO_LEN];
        hello[..8].copy_from_slice(&HELLO_MAGIC);
        hello[8..].copy_from_slice(&std::process::id().to_le_bytes());
        let sent = ep.send(&hello);
        ep.ready = false;
        ep.slices = self.slices;
        sent.map_err(|source| TransportError::Io {
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
                let pid = (p.len() == HELLO_LEN && p[..8] == HELLO_MAGIC)
                    .then(|| i32::from_le_bytes(p[8..].try_into().expect("4 bytes")))
                    .filter(|pid| *pid > 0)
                    .ok_or_else(|| "a malformed hello from the connector".to_string())
                    .map_err(io_err("accept"))?;
                drop(s);
                self.peer.set_pid(pid);
                let mut ep = Iceoryx2Endpoint {
                    spare: None,
                    ports: self.ports,
                    wait: self.wait,
                    peer: self.peer,
                    tx_closed: false,
                    rx_closed: false,
                    end_seen: false,
                    acked: false,
                    ready: true,
                    accept_by: None,
                    slices: self.slices,
                    pause: self.pause,
                };
                ep.send_control(endpoint::ACCEPTED)
                    .map_err(|e| e.to_string())
                    .map_err(io_err("accept"))?;
                return Ok(ep);
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
    use crate::{Params, Recv};
    use iceoryx2::prelude::Config;
    use std::io;

    #[test]
    fn listed_defaults_are_iceoryx2s() {
        let d = Config::default().defaults.publish_subscribe;
        assert_eq!(
            BUFFER.default,
            xferbench_params::Value::Integer(d.subscriber_max_buffer_size as i64)
        );
        assert_eq!(
            HISTORY.default,
            xferbench_params::Value::Integer(d.publisher_history_size as i64)
        );
        for def in PARAMS {
            def.self_check().unwrap();
        }
    }

    #[test]
    fn only_prefixes_of_ours_name_a_private_domain() {
        use super::domain::valid_prefix;
        assert!(valid_prefix("xferbench_iox2_t42_"));
        for bad in [
            "",
            "xferbench_iox2_",
            "iox2_",
            "xferbench_iox2_a/b",
            "xferbench_iox2_a.b",
        ] {
            assert!(!valid_prefix(bad), "{bad}");
        }
    }

    fn two_sample_buffer() -> Iceoryx2 {
        Iceoryx2::from_params(&Params::from([
            ("wait".to_string(), "spin".to_string()),
            ("buffer".to_string(), "2".to_string()),
        ]))
        .unwrap()
    }

    fn take_all(ep: &mut Iceoryx2Endpoint) -> Vec<u32> {
        let mut buf = [0u8; 4];
        let mut got = Vec::new();
        while ep.recv(&mut buf).unwrap() == Recv::Message {
            got.push(u32::from_le_bytes(buf));
        }
        got
    }

    /// A connector that sends many buffers' worth before the listener's first poll
    /// waits for the acceptance instead of taking the live listener for gone.
    #[test]
    fn a_connector_faster_than_the_listener_loses_nothing() {
        let t = two_sample_buffer();
        let listener = t.listen().unwrap();
        let address = listener.address().to_string();
        let far = Instant::now() + Duration::from_secs(10);
        let connector = std::thread::spawn(move || {
            let mut ep = t.connect(&address, far).unwrap();
            for i in 0..100u32 {
                ep.send(&i.to_le_bytes())
                    .expect("send before the listener polled");
            }
            ep.close_send().unwrap();
        });
        // The connector would have filled the two-sample buffer long before this.
        std::thread::sleep(Duration::from_millis(300));
        let mut ep = listener.accept(far).unwrap();
        assert_eq!(take_all(&mut ep), (0..100).collect::<Vec<_>>());
        connector.join().unwrap();
    }

    /// A listener that sends many buffers' worth at once after accepting reaches a
    /// connector that has not polled since connecting.
    #[test]
    fn a_listener_faster_than_the_connector_loses_nothing() {
        let t = two_sample_buffer();
        let listener = t.listen().unwrap();
        let address = listener.address().to_string();
        let far = Instant::now() + Duration::from_secs(10);
        let connector = std::thread::spawn(move || {
            let mut ep = t.connect(&address, far).unwrap();
            std::thread::sleep(Duration::from_millis(300));
            take_all(&mut ep)
        });
        let mut ep = listener.accept(far).unwrap();
        for i in 0..100u32 {
            ep.send(&i.to_le_bytes())
                .expect("send before the connector polled");
        }
        ep.close_send().unwrap();
        assert_eq!(connector.join().unwrap(), (0..100).collect::<Vec<_>>());
    }

    /// With safe overflow and a one-sample buffer, a data sample replaces one the peer
    /// has not taken yet; the control samples (the acceptance, the end-of-stream mark
    /// and its acknowledgement) must never be among them.
    #[test]
    fn safe_overflow_never_loses_a_control_sample() {
        let t = Iceoryx2::from_params(&Params::from([
            ("wait".to_string(), "spin".to_string()),
            ("buffer".to_string(), "1".to_string()),
            ("overflow".to_string(), "safe".to_string()),
        ]))
        .unwrap();
        let listener = t.listen().unwrap();
        let far = Instant::now() + Duration::from_secs(10);
        let mut c = t.connect(listener.address(), far).unwrap();
        let mut l = listener.accept(far).unwrap();
        // The listener drives: its first message goes out before the connector polled,
        // right behind the acceptance.
        l.send(&1u32.to_le_bytes()).unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(c.recv(&mut buf).unwrap(), Recv::Message);
        assert_eq!(u32::from_le_bytes(buf), 1);
        c.wait_accepted(Some(Instant::now() + Duration::from_secs(1)))
            .expect("the acceptance was lost");
        c.send(&2u32.to_le_bytes()).unwrap();
        assert_eq!(l.recv(&mut buf).unwrap(), Recv::Message);
        assert_eq!(u32::from_le_bytes(buf), 2);
        // The end: the listener's acknowledgement of the connector's mark, then its own
        // mark, both before the connector polls.
        c.close_send().unwrap();
        assert_eq!(l.recv(&mut buf).unwrap(), Recv::Closed);
        l.close_send().unwrap();
        assert_eq!(c.recv(&mut buf).unwrap(), Recv::Closed);
        assert!(
            c.acked,
            "the acknowledgement of the end-of-stream mark was lost"
        );
    }

    fn with_params(pairs: &[(&str, &str)]) -> Iceoryx2 {
        Iceoryx2::from_params(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
        .unwrap()
    }

    /// A connected pair of endpoints of `t`: the connector, then the listener.
    fn pair(t: &Iceoryx2) -> (Iceoryx2Endpoint, Iceoryx2Endpoint) {
        let listener = t.listen().unwrap();
        let far = Instant::now() + Duration::from_secs(10);
        let c = t.connect(listener.address(), far).unwrap();
        (c, listener.accept(far).unwrap())
    }

    /// By default the data segment is static and sized to the run's messages, once the
    /// run says their size: a message of that size goes through in both directions, a
    /// longer one is refused with a message that names the limit and the way out.
    #[test]
    fn the_default_segment_is_static_and_sized_to_the_run() {
        let mut t = with_params(&[("wait", "spin")]);
        assert_eq!(t.slices(), Slices::Auto);
        assert_eq!(t.max_message(), None, "unsized, auto grows");
        t.size_for(Traffic::round_trips(64));
        assert_eq!(t.slices(), Slices::Sized(64));
        assert_eq!(t.max_message(), Some(64));
        assert_eq!(t.chosen(), vec![("max_message", "64".to_string())]);
        let (mut c, mut l) = pair(&t);
        let mut buf = [0u8; 64];
        c.send(&[7; 64]).unwrap();
        assert_eq!(l.recv(&mut buf).unwrap(), Recv::Message);
        assert_eq!(buf, [7; 64]);
        l.send(&[9; 64]).unwrap();
        assert_eq!(c.recv(&mut buf).unwrap(), Recv::Message);
        assert_eq!(buf, [9; 64]);
        for ep in [&mut c, &mut l] {
            let e = ep.send(&[0; 65]).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            let e = e.to_string();
            assert!(
                e.contains("65-byte") && e.contains("64 bytes") && e.contains("max_message=grow"),
                "{e}"
            );
            let e = ep.send_in_place(65, |_| {}).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
        // The channel still works after a refusal.
        c.send(&[1; 64]).unwrap();
        assert_eq!(l.recv(&mut buf).unwrap(), Recv::Message);
        assert_eq!(buf, [1; 64]);
    }

    /// `max_message=grow` keeps the growing segment whatever the run's size, and
    /// `max_message=N` keeps its own limit.
    #[test]
    fn an_explicit_max_message_outranks_the_run_s_size() {
        let mut grow = with_params(&[("wait", "spin"), ("max_message", "grow")]);
        grow.size_for(Traffic::round_trips(64));
        assert_eq!(grow.slices(), Slices::Grow);
        assert_eq!(grow.max_message(), None);
        let (mut c, mut l) = pair(&grow);
        let mut big = vec![0u8; 4096];
        c.send(&[5; 4096]).unwrap();
        assert_eq!(l.recv(&mut big).unwrap(), Recv::Message);
        assert!(big.iter().all(|&b| b == 5));

        let mut fixed = with_params(&[("max_message", "32")]);
        fixed.size_for(Traffic::round_trips(64));
        assert_eq!(fixed.slices(), Slices::Static(32));
        assert_eq!(fixed.max_message(), Some(32));
        let (mut c, _l) = pair(&fixed);
        let e = c.send(&[0; 64]).unwrap_err().to_string();
        assert!(e.contains("longer than max_message (32 bytes)"), "{e}");
    }

    #[test]
    fn max_message_reads_auto_grow_and_sizes() {
        assert_eq!(with_params(&[]).slices(), Slices::Auto);
        assert_eq!(
            with_params(&[("max_message", "auto")]).slices(),
            Slices::Auto
        );
        assert_eq!(
            with_params(&[("max_message", "grow")]).slices(),
            Slices::Grow
        );
        assert_eq!(
            with_params(&[("max_message", "4KiB")]).slices(),
            Slices::Static(4096)
        );
        assert_eq!(MAX_MESSAGE_SIZE.default_display(), "auto");
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
