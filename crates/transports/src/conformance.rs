//! The conformance suite every [`Transport`] must pass, as a runtime suite.
//!
//! Each [`Check`] is a generic function over a configured transport that returns a
//! [`Verdict`] or says what went wrong; nothing here panics on a misbehaving
//! transport. `xferbench check -t TRANSPORT` runs the suite (each check in a process
//! of its own, so that a transport that crashes or hangs fails one check), and the
//! built-in transports' own tests run the same checks through
//! [`conformance_suite!`](crate::conformance_suite), one `#[test]` per check:
//!
//! ```ignore
//! xferbench_transports::conformance_suite!(pipe, xferbench_transports::os::Pipe::default());
//! ```
//!
//! Every check bounds its waits where it can: the peer side runs on a thread that is
//! given [`CHECK_LIMIT`] to finish. A call that never returns still hangs the calling
//! thread, which is why the command runs checks in child processes with a deadline.
//!
//! A transport with a message size limit ([`Transport::max_message`], e.g. RPMsg's
//! 496 bytes) is checked with sizes up to it (and at it), and
//! [`Check::OversizedRefused`] checks that the limit is enforced. Checks that need
//! processes — a peer process that is killed, and integrity through the lab's
//! `--verify` over 10⁵ messages — are the lab's (`xferbench_lab::check`).

use crate::{Endpoint, Listener, Recv, Transport, TransportError};
use std::io;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How long any single check may take before it is declared hung.
pub const CHECK_LIMIT: Duration = Duration::from_secs(20);

/// What a check found, when the transport conforms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It passed; the words say what was exercised.
    Pass(String),
    /// It does not apply to this transport; the words say why.
    Skip(String),
}

/// A check's failure: what went wrong, in words.
pub type Failure = String;

/// One check of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Check {
    /// Messages of every size up to the largest arrive whole, in order, intact,
    /// then the end of the stream.
    OrderedDelivery,
    /// Request/response in both directions.
    RoundTrips,
    /// A flushed message reaches a peer while the sender waits on something else.
    Flush,
    /// A stream that ends inside a message is an error, not a message.
    TruncatedMessage,
    /// A message above the largest is refused and the channel stays usable.
    OversizedRefused,
    /// A receiver that stops reading holds the sender back, and nothing is lost.
    BackPressure,
    /// Eight channels at once keep their messages apart.
    ChannelsIndependent,
    /// A peer that drops its endpoint is noticed by a receiver and a sender.
    DroppedPeer,
    /// `accept` without a peer times out at its deadline.
    AcceptTimeout,
    /// Garbage addresses are refused, never a crash.
    BadAddresses,
    /// Zero-copy sends and receives, or their refusal by a copying transport.
    ZeroCopyDelivery,
    /// A zero-copy request/response echo.
    ZeroCopyEcho,
}

impl Check {
    /// Every check, in the order the suite runs them.
    pub const ALL: [Check; 12] = [
        Check::OrderedDelivery,
        Check::RoundTrips,
        Check::Flush,
        Check::TruncatedMessage,
        Check::OversizedRefused,
        Check::BackPressure,
        Check::ChannelsIndependent,
        Check::DroppedPeer,
        Check::AcceptTimeout,
        Check::BadAddresses,
        Check::ZeroCopyDelivery,
        Check::ZeroCopyEcho,
    ];

    /// The check's name (`xferbench check --only NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Check::OrderedDelivery => "ordered-delivery",
            Check::RoundTrips => "round-trips",
            Check::Flush => "flush",
            Check::TruncatedMessage => "truncated-message",
            Check::OversizedRefused => "oversized-refused",
            Check::BackPressure => "back-pressure",
            Check::ChannelsIndependent => "channels-independent",
            Check::DroppedPeer => "dropped-peer",
            Check::AcceptTimeout => "accept-timeout",
            Check::BadAddresses => "bad-addresses",
            Check::ZeroCopyDelivery => "zero-copy-delivery",
            Check::ZeroCopyEcho => "zero-copy-echo",
        }
    }

    /// What it checks, in one line.
    pub fn description(self) -> &'static str {
        match self {
            Check::OrderedDelivery => {
                "every size up to the largest arrives whole, in order and intact; then the end of the stream"
            }
            Check::RoundTrips => "2000 request/response round trips, both directions at once",
            Check::Flush => "a flushed message reaches the peer while the sender waits on nothing",
            Check::TruncatedMessage => {
                "a stream that ends inside a message is an error, not a message"
            }
            Check::OversizedRefused => {
                "a message above the largest is refused, the channel stays usable"
            }
            Check::BackPressure => {
                "a receiver that pauses holds the sender back, and nothing is lost"
            }
            Check::ChannelsIndependent => "eight channels at once keep their messages apart",
            Check::DroppedPeer => {
                "a peer that drops its endpoint is noticed by a receiver and by a sender"
            }
            Check::AcceptTimeout => "accept without a peer times out at its deadline",
            Check::BadAddresses => "garbage addresses are refused, never a crash",
            Check::ZeroCopyDelivery => {
                "zero-copy and copied messages mix in order (or a copying transport refuses zero-copy calls)"
            }
            Check::ZeroCopyEcho => "a zero-copy request/response echo",
        }
    }

    /// The check of this name.
    pub fn from_name(name: &str) -> Option<Check> {
        Check::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Runs one check against a configured transport.
pub fn run<T: Transport + Clone>(check: Check, t: &T) -> Result<Verdict, Failure> {
    match check {
        Check::OrderedDelivery => ordered_delivery(t),
        Check::RoundTrips => echo_round_trips(t),
        Check::Flush => flush_makes_a_message_visible(t),
        Check::TruncatedMessage => truncated_message_is_an_error(t),
        Check::OversizedRefused => oversized_message_is_refused(t),
        Check::BackPressure => back_pressure_loses_nothing(t),
        Check::ChannelsIndependent => channels_are_independent(t),
        Check::DroppedPeer => dropped_peer_is_noticed(t),
        Check::AcceptTimeout => accept_times_out(t),
        Check::BadAddresses => bad_addresses_are_errors(t),
        Check::ZeroCopyDelivery => in_place_delivery(t),
        Check::ZeroCopyEcho => in_place_echo(t),
    }
}

fn pass(words: impl Into<String>) -> Result<Verdict, Failure> {
    Ok(Verdict::Pass(words.into()))
}

fn ensure(cond: bool, failure: impl FnOnce() -> String) -> Result<(), Failure> {
    if cond { Ok(()) } else { Err(failure()) }
}

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

/// `r` with the operation named in its error.
fn op<V, E: std::fmt::Display>(r: Result<V, E>, what: &str) -> Result<V, Failure> {
    r.map_err(|e| format!("{what}: {e}"))
}

fn expect_message(r: io::Result<Recv>, what: &str) -> Result<(), Failure> {
    match op(r, what)? {
        Recv::Message => Ok(()),
        Recv::Closed => Err(format!("{what}: the stream ended early (closed)")),
    }
}

fn expect_closed(r: io::Result<Recv>, what: &str) -> Result<(), Failure> {
    match op(r, what)? {
        Recv::Closed => Ok(()),
        Recv::Message => Err(format!(
            "{what}: a message where the end of the stream was due"
        )),
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// Connects a pair in this process: the connecting side runs `peer` on its own
/// thread, the listening side runs `driver` here. Waits at most [`CHECK_LIMIT`] for
/// the peer; the first failure of either side is the result.
pub fn with_peer<T, R, F, G>(transport: &T, peer: F, driver: G) -> Result<R, Failure>
where
    T: Transport + Clone,
    F: FnOnce(T::Endpoint) -> Result<(), Failure> + Send + 'static,
    G: FnOnce(T::Endpoint) -> Result<R, Failure>,
{
    let listener = op(transport.listen(), "listen")?;
    let address = listener.address().to_string();
    let t = transport.clone();
    let (done_tx, done_rx) = mpsc::channel();
    let handle = thread::spawn(move || {
        let r = match t.connect(&address, deadline()) {
            Ok(ep) => peer(ep),
            Err(e) => Err(format!("connect: {e}")),
        };
        let _ = done_tx.send(r);
    });
    let ep = match listener.accept(deadline()) {
        Ok(ep) => ep,
        Err(e) => {
            // The peer's own failure to connect says more, when it has one.
            return Err(match done_rx.recv_timeout(Duration::from_secs(6)) {
                Ok(Err(peer_err)) => format!("accept: {e} (the peer: {peer_err})"),
                _ => format!("accept: {e}{}", calls_now()),
            });
        }
    };
    let r = driver(ep);
    let peer_result = match done_rx.recv_timeout(CHECK_LIMIT) {
        Ok(p) => {
            let _ = handle.join();
            p
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(p) => Err(format!("the peer panicked: {}", panic_text(&*p))),
            Ok(()) => Err("the peer ended without a result".into()),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!(
            "the peer did not finish within {CHECK_LIMIT:?}{}",
            calls_now()
        )),
    };
    match (r, peer_result) {
        (Ok(r), Ok(())) => Ok(r),
        // The driver's failure is often the symptom of the peer's: say both.
        (Err(d), Err(p)) => Err(format!("{d} (the peer: {p})")),
        (Err(d), Ok(())) => Err(d),
        (Ok(_), Err(p)) => Err(format!("peer: {p}")),
    }
}

/// The plugin calls this process's threads are in, for a check that gave up waiting:
/// ` (in plugin call connect)`, or empty.
fn calls_now() -> String {
    let calls: Vec<String> = crate::plugin::in_flight::describe()
        .iter()
        .map(|c| c.to_string())
        .collect();
    if calls.is_empty() {
        String::new()
    } else {
        format!(" (in plugin call {})", calls.join(", "))
    }
}

fn pattern(len: usize, seed: u64) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u64).wrapping_mul(31).wrapping_add(seed) as u8)
        .collect()
}

/// The sizes a check sends: those of `all` up to the transport's largest message,
/// and the largest itself.
fn sizes_up_to<T: Transport>(t: &T, all: &[usize]) -> Vec<usize> {
    let mut sizes: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&n| t.max_message().is_none_or(|max| n <= max))
        .collect();
    if let Some(max) = t.max_message()
        && !sizes.contains(&max)
        && max <= 1 << 20
    {
        sizes.push(max);
    }
    sizes
}

/// Messages of many sizes arrive whole, in order, with their contents intact, and the
/// receiver sees [`Recv::Closed`] after the last one. Sizes above
/// [`Transport::max_message`] are skipped; the largest itself is sent.
pub fn ordered_delivery<T: Transport + Clone>(t: &T) -> Result<Verdict, Failure> {
    const ALL_SIZES: [usize; 7] = [1, 2, 63, 64, 4096, 65_536, 1 << 20];
    let sizes = sizes_up_to(t, &ALL_SIZES);
    let theirs = sizes.clone();
    with_peer(
        t,
        move |mut ep| {
            for (i, &n) in theirs.iter().enumerate() {
                for k in 0..8u64 {
                    op(ep.send(&pattern(n, i as u64 * 8 + k)), "send")?;
                }
            }
            op(ep.close_send(), "close_send")
        },
        |mut ep| {
            for (i, &n) in sizes.iter().enumerate() {
                let mut buf = vec![0u8; n];
                for k in 0..8u64 {
                    let what = format!("recv of message {k} of {n} B");
                    match op(ep.recv(&mut buf), &what)? {
                        Recv::Message => {}
                        // XB_CLOSED is 1: a plugin's recv that returns the bytes it
                        // read, as read() does, says "closed" for every 1-byte message.
                        Recv::Closed if n == 1 => {
                            return Err(format!(
                                "{what}: the stream ended at a 1-byte message; {}",
                                crate::plugin::CLOSED_IS_ONE
                            ));
                        }
                        Recv::Closed => {
                            return Err(format!("{what}: the stream ended early (closed)"));
                        }
                    }
                    ensure(buf == pattern(n, i as u64 * 8 + k), || {
                        format!("message {k} of {n} B arrived corrupted or out of order")
                    })?;
                }
            }
            let mut one = [0u8; 1];
            expect_closed(ep.recv(&mut one), "recv after the last message")
        },
    )?;
    let shown: Vec<String> = sizes.iter().map(|n| n.to_string()).collect();
    pass(format!(
        "8 messages each of {} B, then the end of the stream",
        shown.join(", ")
    ))
}

/// A fixed size of a check, or the transport's largest message if smaller.
fn at_most<T: Transport>(t: &T, size: usize) -> usize {
    t.max_message().map_or(size, |max| max.min(size))
}

/// Request/response in both directions (full duplex), many round trips.
pub fn echo_round_trips<T: Transport + Clone>(t: &T) -> Result<Verdict, Failure> {
    const N: u64 = 2_000;
    let size = at_most(t, 48);
    with_peer(
        t,
        move |mut ep| {
            let mut buf = vec![0u8; size];
            while op(ep.recv(&mut buf), "recv")? == Recv::Message {
                buf.reverse();
                op(ep.send(&buf), "send")?;
                op(ep.flush(), "flush")?;
            }
            Ok(())
        },
        |mut ep| {
            let mut back = vec![0u8; size];
            for i in 0..N {
                let msg = pattern(size, i);
                op(ep.send(&msg), "send")?;
                op(ep.flush(), "flush")?;
                expect_message(ep.recv(&mut back), "recv")?;
                back.reverse();
                ensure(back.as_slice() == msg.as_slice(), || {
                    format!("round trip {i}: the reply does not match the request")
                })?;
            }
            op(ep.close_send(), "close_send")
        },
    )?;
    pass(format!("{N} round trips of {size} B"))
}

/// After `flush`, one small message reaches a peer while the sender waits on
/// something else entirely (no `recv`, no `close_send`).
pub fn flush_makes_a_message_visible<T: Transport + Clone>(t: &T) -> Result<Verdict, Failure> {
    let (seen_tx, seen_rx) = mpsc::channel();
    let size = at_most(t, 24);
    with_peer(
        t,
        move |mut ep| {
            let mut buf = vec![0u8; size];
            expect_message(ep.recv(&mut buf), "recv")?;
            ensure(buf == pattern(size, 99), || {
                "the flushed message arrived corrupted".into()
            })?;
            let _ = seen_tx.send(());
            Ok(())
        },
        |mut ep| {
            op(ep.send(&pattern(size, 99)), "send")?;
            op(ep.flush(), "flush")?;
            let seen = seen_rx.recv_timeout(Duration::from_secs(10));
            drop(ep);
            ensure(seen.is_ok(), || {
                "the flushed message did not arrive within 10 s".into()
            })
        },
    )?;
    pass(format!("one {size}-byte message, flushed"))
}

/// A stream that ends inside a message is an error, not a message: a 10-byte message
/// and the end of the stream, received as 20 bytes (half the largest message and the
/// largest, when that is smaller).
pub fn truncated_message_is_an_error<T: Transport + Clone>(t: &T) -> Result<Verdict, Failure> {
    let long = at_most(t, 20);
    let short = long / 2;
    if short == 0 {
        return Ok(Verdict::Skip("the largest message is 1 byte".into()));
    }
    with_peer(
        t,
        move |mut ep| {
            op(ep.send(&vec![7u8; short]), "send")?;
            op(ep.close_send(), "close_send")
        },
        move |mut ep| {
            let mut buf = vec![0u8; long];
            match ep.recv(&mut buf) {
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(()),
                Err(e) => Err(format!(
                    "a {short}-byte message read as {long} bytes failed, but as {:?} ({e}), not as a message of another length (UnexpectedEof, XB_ERR_MESSAGE_SIZE)",
                    e.kind()
                )),
                Ok(Recv::Message) => Err(format!(
                    "a {short}-byte message and the end of the stream passed as one {long}-byte message"
                )),
                Ok(Recv::Closed) => Err(format!(
                    "a {short}-byte message was dropped: recv reported the end of the stream"
                )),
            }
        },
    )?;
    pass(format!("{short} bytes received as {long}: an error"))
}

/// When the peer drops its endpoint, a blocked receiver wakes up (closed or error)
/// and a sender eventually gets an error instead of blocking forever. The chunks sent
/// are 64 KiB, or [`Transport::max_message`] if that is smaller.
pub fn dropped_peer_is_noticed<T: Transport + Clone>(t: &T) -> Result<Verdict, Failure> {
    let chunk_len = t.max_message().map_or(64 * 1024, |max| max.min(64 * 1024));
    let sent = with_peer(
        t,
        |ep| {
            thread::sleep(Duration::from_millis(50));
            drop(ep);
            Ok(())
        },
        |mut ep| {
            let mut buf = [0u8; 64];
            if let Ok(Recv::Message) = ep.recv(&mut buf) {
                return Err("a message from a peer that sent none".into());
            }
            let chunk = vec![0u8; chunk_len];
            for i in 0..10_000 {
                if ep.send(&chunk).is_err() {
                    return Ok(i);
                }
            }
            Err(format!(
                "sending 10 000 messages of {chunk_len} B to a peer that dropped its endpoint never failed"
            ))
        },
    )?;
    pass(format!(
        "the receiver woke; the sender failed after {sent} messages of {chunk_len} B"
    ))
}

/// A transport with a [`Transport::max_message`] carries a message of exactly that
/// size and refuses a longer one with [`io::ErrorKind::InvalidInput`], the channel
/// staying usable; without a limit there is nothing to check.
pub fn oversized_message_is_refused<T: Transport + Clone>(t: &T) -> Result<Verdict, Failure> {
    let Some(max) = t.max_message() else {
        return Ok(Verdict::Skip("no largest message".into()));
    };
    with_peer(
        t,
        move |mut ep| {
            match ep.send(&vec![1u8; max + 1]) {
                Ok(()) => {
                    return Err(format!(
                        "a message of {} B (above the largest, {max} B) was accepted",
                        max + 1
                    ));
                }
                Err(e) => ensure(e.kind() == io::ErrorKind::InvalidInput, || {
                    format!(
                        "the oversized message was refused as {:?} ({e}), not as too large (InvalidInput, XB_ERR_TOO_LARGE)",
                        e.kind()
                    )
                })?,
            }
            op(ep.send(&pattern(max, 5)), "send at the limit")?;
            op(ep.close_send(), "close_send")
        },
        move |mut ep| {
            let mut buf = vec![0u8; max];
            expect_message(ep.recv(&mut buf), "recv")?;
            ensure(buf == pattern(max, 5), || {
                "the message at the limit arrived corrupted".into()
            })?;
            expect_closed(ep.recv(&mut buf), "recv after the last message")
        },
    )?;
    pass(format!("{} B refused, {max} B carried", max + 1))
}

/// A receiver that does not read for a while holds the sender back (its sends wait
/// for room, or the transport buffers), and when it reads, every message arrives in
/// order and intact: 16 MiB in 4 KiB messages (or the largest, if smaller).
pub fn back_pressure_loses_nothing<T: Transport + Clone>(t: &T) -> Result<Verdict, Failure> {
    let size = t.max_message().map_or(4096, |m| m.min(4096));
    let count = ((16usize << 20) / size).clamp(2_000, 40_000) as u64;
    let (started_tx, started_rx) = mpsc::channel();
    let stamp = |buf: &mut [u8], i: u64| {
        buf.fill(i as u8 ^ 0x5a);
        let n = buf.len().min(8);
        buf[..n].copy_from_slice(&i.to_le_bytes()[..n]);
    };
    let held = with_peer(
        t,
        move |mut ep| {
            let mut buf = vec![0u8; size];
            let start = Instant::now();
            let _ = started_tx.send(start);
            for i in 0..count {
                stamp(&mut buf, i);
                op(ep.send(&buf), &format!("send of message {i}"))?;
            }
            op(ep.close_send(), "close_send")
        },
        move |mut ep| {
            let start = op(
                started_rx.recv_timeout(Duration::from_secs(10)),
                "waiting for the sender",
            )?;
            thread::sleep(Duration::from_millis(300));
            let mut buf = vec![0u8; size];
            let mut want = vec![0u8; size];
            for i in 0..count {
                expect_message(ep.recv(&mut buf), &format!("recv of message {i}"))?;
                stamp(&mut want, i);
                if buf != want {
                    let seq = if size >= 8 {
                        format!(
                            " (it holds message {})",
                            u64::from_le_bytes(buf[..8].try_into().expect("8 bytes"))
                        )
                    } else {
                        String::new()
                    };
                    return Err(format!(
                        "message {i} of {count} arrived lost, reordered or corrupted{seq}"
                    ));
                }
            }
            let mut one = [0u8; 1];
            expect_closed(ep.recv(&mut one), "recv after the last message")?;
            Ok(start.elapsed())
        },
    )?;
    pass(format!(
        "{count} messages of {size} B behind a 300 ms pause, all in order ({:.0} ms)",
        held.as_secs_f64() * 1e3
    ))
}

/// `accept` with no peer returns [`TransportError::Timeout`] at its deadline.
pub fn accept_times_out<T: Transport>(t: &T) -> Result<Verdict, Failure> {
    let listener = op(t.listen(), "listen")?;
    let start = Instant::now();
    match listener.accept(Instant::now() + Duration::from_millis(100)) {
        Err(TransportError::Timeout { .. }) => {}
        Err(e) => return Err(format!("expected a timeout, got: {e}")),
        Ok(_) => return Err("accept succeeded with no peer".into()),
    }
    let took = start.elapsed();
    ensure(took < Duration::from_secs(5), || {
        format!("a 100 ms accept took {took:?}")
    })?;
    pass(format!(
        "100 ms deadline, returned after {} ms",
        took.as_millis()
    ))
}

/// Garbage addresses are refused with an error, never a panic or a success.
pub fn bad_addresses_are_errors<T: Transport>(t: &T) -> Result<Verdict, Failure> {
    let garbage = [
        "",
        ":",
        "garbage",
        "1:2:3:4:5",
        "@",
        "999999999:1:2",
        "127.0.0.1:1",
        "@no-such-xferbench-socket",
        "/no/such/xferbench/path",
    ];
    for address in garbage {
        // A transport may reach something at an address of its own syntax (tcp at
        // 127.0.0.1:1 finds nothing; a file path transport may create): only a
        // success at pure garbage is wrong.
        if t.connect(address, Instant::now() + Duration::from_millis(200))
            .is_ok()
            && ["", ":", "garbage", "1:2:3:4:5", "@"].contains(&address)
        {
            return Err(format!(
                "connect to the garbage address {address:?} succeeded"
            ));
        }
    }
    pass(format!("{} garbage addresses refused", garbage.len()))
}

/// Eight channels run concurrently without mixing their messages.
pub fn channels_are_independent<T: Transport + Clone>(t: &T) -> Result<Verdict, Failure> {
    let size = at_most(t, 256);
    let handles: Vec<_> = (0..8u64)
        .map(|c| {
            let t = t.clone();
            thread::spawn(move || {
                with_peer(
                    &t,
                    move |mut ep| {
                        for i in 0..500u64 {
                            op(ep.send(&pattern(size, c * 1_000 + i)), "send")?;
                        }
                        op(ep.close_send(), "close_send")
                    },
                    move |mut ep| {
                        let mut buf = vec![0u8; size];
                        for i in 0..500u64 {
                            expect_message(ep.recv(&mut buf), "recv")?;
                            ensure(buf == pattern(size, c * 1_000 + i), || {
                                format!("channel {c}: message {i} is not its own")
                            })?;
                        }
                        expect_closed(ep.recv(&mut buf), "recv after the last message")
                    },
                )
                .map_err(|e| format!("channel {c}: {e}"))
            })
        })
        .collect();
    let mut first = None;
    for h in handles {
        let r = h
            .join()
            .unwrap_or_else(|p| Err(format!("a channel panicked: {}", panic_text(&*p))));
        if let Err(e) = r {
            first.get_or_insert(e);
        }
    }
    match first {
        Some(e) => Err(e),
        None => pass(format!("8 channels × 500 messages of {size} B")),
    }
}

/// Sizes of the zero-copy checks: within half of the smallest ring the suite uses.
const IN_PLACE_SIZES: [usize; 6] = [1, 2, 63, 64, 1024, 2048];

/// Zero-copy ([`Transport::zero_copy`]): messages written in place and copied ones
/// arrive in order and intact, read in place or copied out alike, and an in-place
/// receive sees the end of the stream. A transport without the mode refuses each
/// in-place call with [`io::ErrorKind::Unsupported`].
pub fn in_place_delivery<T: Transport + Clone>(t: &T) -> Result<Verdict, Failure> {
    if !t.zero_copy() {
        with_peer(
            t,
            |mut ep| {
                let mut buf = [0u8; 1];
                while op(ep.recv(&mut buf), "recv")? == Recv::Message {}
                Ok(())
            },
            |mut ep| {
                let unsupported = |r: io::Result<Option<()>>, call: &str| match r {
                    Err(e) if e.kind() == io::ErrorKind::Unsupported => Ok(()),
                    Err(e) => Err(format!(
                        "{call} on a copying transport failed as {:?} ({e}), not as unsupported",
                        e.kind()
                    )),
                    Ok(_) => Err(format!("{call} succeeded on a transport without zero-copy")),
                };
                unsupported(ep.send_in_place(1, |_| {}).map(Some), "send_in_place")?;
                unsupported(ep.recv_in_place(1, |_| ()), "recv_in_place")?;
                unsupported(ep.echo_in_place(1, |_, _| ()), "echo_in_place")?;
                op(ep.close_send(), "close_send")
            },
        )?;
        return pass("no zero-copy mode; in-place calls refused as unsupported");
    }
    let sizes: Vec<usize> = IN_PLACE_SIZES
        .into_iter()
        .filter(|&n| t.max_message().is_none_or(|max| n <= max))
        .collect();
    let expected = sizes.clone();
    with_peer(
        t,
        move |mut ep| {
            let mut buf = vec![0u8; 1 << 12];
            for (i, &n) in expected.iter().cycle().take(expected.len() * 4).enumerate() {
                let want = pattern(n, i as u64);
                if i % 2 == 0 {
                    let same = op(
                        ep.recv_in_place(n, |m| m == want.as_slice()),
                        "recv_in_place",
                    )?;
                    ensure(same == Some(true), || {
                        format!("message {i} ({n} B, read in place) is not what was sent")
                    })?;
                } else {
                    expect_message(ep.recv(&mut buf[..n]), "recv")?;
                    ensure(&buf[..n] == want.as_slice(), || {
                        format!("message {i} ({n} B, copied out) is not what was sent")
                    })?;
                }
            }
            let end = op(ep.recv_in_place(1, |_| ()), "recv_in_place at the end")?;
            ensure(end.is_none(), || {
                "a message where the end of the stream was due".into()
            })
        },
        |mut ep| {
            for (i, &n) in sizes.iter().cycle().take(sizes.len() * 4).enumerate() {
                let msg = pattern(n, i as u64);
                if i % 3 == 0 {
                    op(ep.send(&msg), "send")?;
                } else {
                    op(
                        ep.send_in_place(n, |m| m.copy_from_slice(&msg)),
                        "send_in_place",
                    )?;
                }
            }
            op(ep.close_send(), "close_send")
        },
    )?;
    pass(format!(
        "{} messages, in place and copied, each way of reading",
        sizes.len() * 4
    ))
}

/// Zero-copy echo: the peer reads each request and writes its reply in place
/// ([`Endpoint::echo_in_place`]); the driver writes and reads in place too.
pub fn in_place_echo<T: Transport + Clone>(t: &T) -> Result<Verdict, Failure> {
    if !t.zero_copy() {
        return Ok(Verdict::Skip("no zero-copy mode".into()));
    }
    const N: u64 = 2_000;
    let size = at_most(t, 48);
    with_peer(
        t,
        move |mut ep| {
            let echo = |req: &[u8], rep: &mut [u8]| {
                rep.copy_from_slice(req);
                rep.reverse();
            };
            while op(ep.echo_in_place(size, echo), "echo_in_place")?.is_some() {
                op(ep.flush(), "flush")?;
            }
            Ok(())
        },
        |mut ep| {
            for i in 0..N {
                let msg = pattern(size, i);
                op(
                    ep.send_in_place(size, |m| m.copy_from_slice(&msg)),
                    "send_in_place",
                )?;
                op(ep.flush(), "flush")?;
                let same = op(
                    ep.recv_in_place(size, |m| m.iter().rev().eq(msg.iter())),
                    "recv_in_place",
                )?;
                ensure(same == Some(true), || {
                    format!("round trip {i}: the reply does not match the request")
                })?;
            }
            op(ep.close_send(), "close_send")
        },
    )?;
    pass(format!("{N} round trips of {size} B, in place both ways"))
}

/// Expands to a module of `#[test]`s running every check of the runtime suite
/// ([`run`]) against `$transport` (an expression building a configured transport).
/// A check passes or is skipped; a failure fails the test with its words.
#[macro_export]
macro_rules! conformance_suite {
    ($name:ident, $transport:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            use $crate::conformance::{Check, run};
            fn check(c: Check) {
                if let Err(failure) = run(c, &$transport) {
                    panic!("{}: {failure}", c.name());
                }
            }
            #[test]
            fn ordered_delivery() {
                check(Check::OrderedDelivery);
            }
            #[test]
            fn round_trips() {
                check(Check::RoundTrips);
            }
            #[test]
            fn flush() {
                check(Check::Flush);
            }
            #[test]
            fn truncated_message() {
                check(Check::TruncatedMessage);
            }
            #[test]
            fn oversized_refused() {
                check(Check::OversizedRefused);
            }
            #[test]
            fn back_pressure() {
                check(Check::BackPressure);
            }
            #[test]
            fn channels_independent() {
                check(Check::ChannelsIndependent);
            }
            #[test]
            fn dropped_peer() {
                check(Check::DroppedPeer);
            }
            #[test]
            fn accept_timeout() {
                check(Check::AcceptTimeout);
            }
            #[test]
            fn bad_addresses() {
                check(Check::BadAddresses);
            }
            #[test]
            fn zero_copy_delivery() {
                check(Check::ZeroCopyDelivery);
            }
            #[test]
            fn zero_copy_echo() {
                check(Check::ZeroCopyEcho);
            }
        }
    };
}
