//! The conformance suite every [`Transport`] must pass.
//!
//! Each check is a generic function taking a configured transport; the
//! [`conformance_suite!`](crate::conformance_suite) macro expands to one `#[test]` per
//! check, so a new transport joins with one line in its crate's tests:
//!
//! ```ignore
//! xferbench_transports::conformance_suite!(pipe, xferbench_transports::os::Pipe::default());
//! ```
//!
//! Every check bounds its waits: a transport that hangs fails the check instead of
//! hanging the test run.
//!
//! A transport with a message size limit ([`Transport::MAX_MESSAGE`], e.g. RPMsg's
//! 496 bytes) is checked only with sizes up to it: [`ordered_delivery`] skips the
//! larger sizes and [`dropped_peer_is_noticed`] sends chunks of at most the limit, so
//! the checks of transports without a limit are unchanged;
//! [`oversized_message_is_refused`] checks that the limit is enforced.

use crate::{Endpoint, Listener, Recv, Transport, TransportError};
use std::io;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How long any single check may take before it is declared hung.
pub const CHECK_LIMIT: Duration = Duration::from_secs(20);

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

/// Connects a pair in this process: the connecting side runs `peer` on its own thread.
/// Returns the listener's endpoint and the peer thread's result, waiting at most
/// [`CHECK_LIMIT`] for the peer.
pub fn with_peer<T, R, F, G>(transport: &T, peer: F, driver: G) -> R
where
    T: Transport + Clone,
    F: FnOnce(T::Endpoint) + Send + 'static,
    G: FnOnce(T::Endpoint) -> R,
{
    let listener = transport.listen().expect("listen");
    let address = listener.address().to_string();
    let t = transport.clone();
    let (done_tx, done_rx) = mpsc::channel();
    let handle = thread::spawn(move || {
        let ep = t.connect(&address, deadline()).expect("connect");
        peer(ep);
        let _ = done_tx.send(());
    });
    let ep = listener.accept(deadline()).expect("accept");
    let r = driver(ep);
    match done_rx.recv_timeout(CHECK_LIMIT) {
        Ok(()) => handle.join().expect("peer thread"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The peer thread panicked: surface its panic.
            if let Err(p) = handle.join() {
                std::panic::resume_unwind(p)
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("peer hung for {CHECK_LIMIT:?}"),
    }
    r
}

fn pattern(len: usize, seed: u64) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u64).wrapping_mul(31).wrapping_add(seed) as u8)
        .collect()
}

/// Messages of many sizes arrive whole, in order, with their contents intact, and the
/// receiver sees [`Recv::Closed`] after the last one.
/// Sizes above [`Transport::MAX_MESSAGE`] are skipped.
pub fn ordered_delivery<T: Transport + Clone>(t: &T) {
    const ALL_SIZES: [usize; 7] = [1, 2, 63, 64, 4096, 65_536, 1 << 20];
    let sizes: Vec<usize> = ALL_SIZES
        .into_iter()
        .filter(|&n| T::MAX_MESSAGE.is_none_or(|max| n <= max))
        .collect();
    let theirs = sizes.clone();
    with_peer(
        t,
        move |mut ep| {
            for (i, &n) in theirs.iter().enumerate() {
                for k in 0..8u64 {
                    ep.send(&pattern(n, i as u64 * 8 + k)).expect("send");
                }
            }
            ep.close_send().expect("close_send");
        },
        |mut ep| {
            for (i, &n) in sizes.iter().enumerate() {
                let mut buf = vec![0u8; n];
                for k in 0..8u64 {
                    assert_eq!(ep.recv(&mut buf).expect("recv"), Recv::Message);
                    assert!(
                        buf == pattern(n, i as u64 * 8 + k),
                        "message {i}/{k} of {n} B corrupted"
                    );
                }
            }
            let mut one = [0u8; 1];
            assert_eq!(ep.recv(&mut one).expect("recv after close"), Recv::Closed);
        },
    );
}

/// Request/response in both directions (full duplex), many round trips.
pub fn echo_round_trips<T: Transport + Clone>(t: &T) {
    const N: u64 = 2_000;
    with_peer(
        t,
        |mut ep| {
            let mut buf = [0u8; 48];
            while ep.recv(&mut buf).expect("peer recv") == Recv::Message {
                buf.reverse();
                ep.send(&buf).expect("peer send");
                ep.flush().expect("peer flush");
            }
        },
        |mut ep| {
            let mut back = [0u8; 48];
            for i in 0..N {
                let msg = pattern(48, i);
                ep.send(&msg).expect("send");
                ep.flush().expect("flush");
                assert_eq!(ep.recv(&mut back).expect("recv"), Recv::Message);
                back.reverse();
                assert_eq!(back.as_slice(), msg.as_slice(), "round trip {i}");
            }
            ep.close_send().expect("close_send");
        },
    );
}

/// After `flush`, one small message reaches a peer while the sender waits on
/// something else entirely (no `recv`, no `close_send`).
pub fn flush_makes_a_message_visible<T: Transport + Clone>(t: &T) {
    let (seen_tx, seen_rx) = mpsc::channel();
    with_peer(
        t,
        move |mut ep| {
            let mut buf = [0u8; 24];
            assert_eq!(ep.recv(&mut buf).expect("recv"), Recv::Message);
            assert_eq!(buf.as_slice(), pattern(24, 99).as_slice());
            seen_tx.send(()).expect("report");
        },
        |mut ep| {
            ep.send(&pattern(24, 99)).expect("send");
            ep.flush().expect("flush");
            seen_rx
                .recv_timeout(Duration::from_secs(10))
                .expect("the flushed message never arrived");
            drop(ep);
        },
    );
}

/// A stream that ends inside a message is an `UnexpectedEof` error, not a message.
pub fn truncated_message_is_an_error<T: Transport + Clone>(t: &T) {
    with_peer(
        t,
        |mut ep| {
            ep.send(&[7u8; 10]).expect("send");
            ep.close_send().expect("close_send");
        },
        |mut ep| {
            let mut buf = [0u8; 20];
            let err = ep
                .recv(&mut buf)
                .expect_err("a 10-byte tail must not pass as a 20-byte message");
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        },
    );
}

/// When the peer drops its endpoint, a blocked receiver wakes up (closed or error)
/// and a sender eventually gets an error instead of blocking forever. The chunks sent
/// are 64 KiB, or [`Transport::MAX_MESSAGE`] if that is smaller.
pub fn dropped_peer_is_noticed<T: Transport + Clone>(t: &T) {
    let chunk_len = T::MAX_MESSAGE.map_or(64 * 1024, |max| max.min(64 * 1024));
    with_peer(
        t,
        |ep| {
            thread::sleep(Duration::from_millis(50));
            drop(ep);
        },
        |mut ep| {
            let mut buf = [0u8; 64];
            match ep.recv(&mut buf) {
                Ok(Recv::Closed) | Err(_) => {}
                Ok(Recv::Message) => panic!("a message from a peer that sent none"),
            }
            let chunk = vec![0u8; chunk_len];
            let mut failed = false;
            for _ in 0..10_000 {
                if ep.send(&chunk).is_err() {
                    failed = true;
                    break;
                }
            }
            assert!(
                failed,
                "sending 10 000 messages of {chunk_len} B to a dropped peer never failed"
            );
        },
    );
}

/// A transport with a [`Transport::MAX_MESSAGE`] carries a message of exactly that
/// size and refuses a longer one with [`io::ErrorKind::InvalidInput`], the channel
/// staying usable; without a limit there is nothing to check.
pub fn oversized_message_is_refused<T: Transport + Clone>(t: &T) {
    let Some(max) = T::MAX_MESSAGE else {
        return;
    };
    with_peer(
        t,
        move |mut ep| {
            let err = ep
                .send(&vec![1u8; max + 1])
                .expect_err("a message above the limit must be refused");
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
            assert!(err.to_string().contains(&max.to_string()), "{err}");
            ep.send(&pattern(max, 5)).expect("send at the limit");
            ep.close_send().expect("close_send");
        },
        move |mut ep| {
            let mut buf = vec![0u8; max];
            assert_eq!(ep.recv(&mut buf).expect("recv"), Recv::Message);
            assert!(buf == pattern(max, 5), "the message at the limit corrupted");
            assert_eq!(ep.recv(&mut buf).expect("recv"), Recv::Closed);
        },
    );
}

/// `accept` with no peer returns [`TransportError::Timeout`] at its deadline.
pub fn accept_times_out<T: Transport>(t: &T) {
    let listener = t.listen().expect("listen");
    let start = Instant::now();
    match listener.accept(Instant::now() + Duration::from_millis(100)) {
        Err(TransportError::Timeout { .. }) => {}
        Err(e) => panic!("expected a timeout, got {e}"),
        Ok(_) => panic!("accept succeeded with no peer"),
    }
    assert!(start.elapsed() < CHECK_LIMIT);
}

/// Garbage addresses are refused with an error, never a panic.
pub fn bad_addresses_are_errors<T: Transport>(t: &T) {
    for address in [
        "",
        ":",
        "garbage",
        "1:2:3:4:5",
        "@",
        "999999999:1:2",
        "127.0.0.1:1",
        "@no-such-xferbench-socket",
    ] {
        let _ = t.connect(address, Instant::now() + Duration::from_millis(200));
    }
}

/// Eight channels run concurrently without mixing their messages.
pub fn channels_are_independent<T: Transport + Clone>(t: &T) {
    let handles: Vec<_> = (0..8u64)
        .map(|c| {
            let t = t.clone();
            thread::spawn(move || {
                with_peer(
                    &t,
                    move |mut ep| {
                        for i in 0..500u64 {
                            ep.send(&pattern(256, c * 1_000 + i)).expect("send");
                        }
                        ep.close_send().expect("close_send");
                    },
                    move |mut ep| {
                        let mut buf = [0u8; 256];
                        for i in 0..500u64 {
                            assert_eq!(ep.recv(&mut buf).expect("recv"), Recv::Message);
                            assert!(
                                buf.as_slice() == pattern(256, c * 1_000 + i),
                                "channel {c} message {i}"
                            );
                        }
                        assert_eq!(ep.recv(&mut buf).expect("recv"), Recv::Closed);
                    },
                )
            })
        })
        .collect();
    for h in handles {
        h.join().expect("channel thread");
    }
}

/// Sizes of the zero-copy checks: within half of the smallest ring the suite uses.
const IN_PLACE_SIZES: [usize; 6] = [1, 2, 63, 64, 1024, 2048];

/// Zero-copy ([`Transport::ZERO_COPY`]): messages written in place and copied ones
/// arrive in order and intact, read in place or copied out alike, and an in-place
/// receive sees the end of the stream. A transport without the mode refuses each
/// in-place call with [`io::ErrorKind::Unsupported`].
pub fn in_place_delivery<T: Transport + Clone>(t: &T) {
    if !T::ZERO_COPY {
        with_peer(
            t,
            |mut ep| {
                let mut buf = [0u8; 1];
                while ep.recv(&mut buf).expect("peer recv") == Recv::Message {}
            },
            |mut ep| {
                let unsupported = |r: io::Result<Option<()>>| {
                    assert_eq!(r.unwrap_err().kind(), io::ErrorKind::Unsupported);
                };
                unsupported(ep.send_in_place(1, |_| {}).map(Some));
                unsupported(ep.recv_in_place(1, |_| ()));
                unsupported(ep.echo_in_place(1, |_, _| ()));
                ep.close_send().expect("close_send");
            },
        );
        return;
    }
    let sizes: Vec<usize> = IN_PLACE_SIZES
        .into_iter()
        .filter(|&n| T::MAX_MESSAGE.is_none_or(|max| n <= max))
        .collect();
    let expected = sizes.clone();
    with_peer(
        t,
        move |mut ep| {
            let mut buf = vec![0u8; 1 << 12];
            for (i, &n) in expected.iter().cycle().take(expected.len() * 4).enumerate() {
                let want = pattern(n, i as u64);
                if i % 2 == 0 {
                    let same = ep.recv_in_place(n, |m| m == want.as_slice());
                    assert_eq!(same.expect("recv_in_place"), Some(true), "message {i}");
                } else {
                    assert_eq!(ep.recv(&mut buf[..n]).expect("recv"), Recv::Message);
                    assert_eq!(&buf[..n], want.as_slice(), "message {i}");
                }
            }
            assert!(ep.recv_in_place(1, |_| ()).expect("end").is_none());
        },
        |mut ep| {
            for (i, &n) in sizes.iter().cycle().take(sizes.len() * 4).enumerate() {
                let msg = pattern(n, i as u64);
                if i % 3 == 0 {
                    ep.send(&msg).expect("send");
                } else {
                    ep.send_in_place(n, |m| m.copy_from_slice(&msg))
                        .expect("send_in_place");
                }
            }
            ep.close_send().expect("close_send");
        },
    );
}

/// Zero-copy echo: the peer reads each request and writes its reply in place
/// ([`Endpoint::echo_in_place`]); the driver writes and reads in place too.
pub fn in_place_echo<T: Transport + Clone>(t: &T) {
    if !T::ZERO_COPY {
        return;
    }
    const N: u64 = 2_000;
    with_peer(
        t,
        |mut ep| {
            let echo = |req: &[u8], rep: &mut [u8]| {
                rep.copy_from_slice(req);
                rep.reverse();
            };
            while ep.echo_in_place(48, echo).expect("peer echo").is_some() {
                ep.flush().expect("peer flush");
            }
        },
        |mut ep| {
            for i in 0..N {
                let msg = pattern(48, i);
                ep.send_in_place(48, |m| m.copy_from_slice(&msg))
                    .expect("send_in_place");
                ep.flush().expect("flush");
                let same = ep.recv_in_place(48, |m| m.iter().rev().eq(msg.iter()));
                assert_eq!(same.expect("recv_in_place"), Some(true), "round trip {i}");
            }
            ep.close_send().expect("close_send");
        },
    );
}

/// Expands to a module of `#[test]`s running every conformance check against
/// `$transport` (an expression building a configured transport).
#[macro_export]
macro_rules! conformance_suite {
    ($name:ident, $transport:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            use $crate::conformance as c;
            #[test]
            fn ordered_delivery() {
                c::ordered_delivery(&$transport);
            }
            #[test]
            fn echo_round_trips() {
                c::echo_round_trips(&$transport);
            }
            #[test]
            fn flush_makes_a_message_visible() {
                c::flush_makes_a_message_visible(&$transport);
            }
            #[test]
            fn truncated_message_is_an_error() {
                c::truncated_message_is_an_error(&$transport);
            }
            #[test]
            fn dropped_peer_is_noticed() {
                c::dropped_peer_is_noticed(&$transport);
            }
            #[test]
            fn oversized_message_is_refused() {
                c::oversized_message_is_refused(&$transport);
            }
            #[test]
            fn accept_times_out() {
                c::accept_times_out(&$transport);
            }
            #[test]
            fn bad_addresses_are_errors() {
                c::bad_addresses_are_errors(&$transport);
            }
            #[test]
            fn channels_are_independent() {
                c::channels_are_independent(&$transport);
            }
            #[test]
            fn in_place_delivery() {
                c::in_place_delivery(&$transport);
            }
            #[test]
            fn in_place_echo() {
                c::in_place_echo(&$transport);
            }
        }
    };
}
