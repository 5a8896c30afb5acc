//! The shared-memory transport beyond the conformance suite: header validation on
//! attach, the zero-copy API, large messages whatever the batch, and what waiting
//! costs.

use std::mem::offset_of;
use std::time::{Duration, Instant};
use xferbench_transports::shm::backing;
use xferbench_transports::shm::region::{LAYOUT_VERSION, MAGIC, RegionHeader};
use xferbench_transports::shm::{Shm, ShmEndpoint};
use xferbench_transports::{Endpoint, Listener, Params, Recv, Traffic, Transport};

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

fn with(pairs: &[(&str, &str)]) -> Shm {
    let p: Params = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Shm::from_params(&p).unwrap()
}

/// Opens the region behind `address` and overwrites `bytes` at `offset`.
fn poke(address: &str, offset: usize, bytes: &[u8]) {
    let fd = backing::open(address).unwrap().fd;
    rustix::io::pwrite(&fd, bytes, offset as u64).unwrap();
}

fn attach_error(t: &Shm, address: &str) -> String {
    match t.connect(address, deadline()) {
        Ok(_) => panic!("attach to a damaged region succeeded"),
        Err(e) => xferbench_transports_chain(&e),
    }
}

fn xferbench_transports_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut c = e.source();
    while let Some(x) = c {
        s.push_str(": ");
        s.push_str(&x.to_string());
        c = x.source();
    }
    s
}

#[test]
fn a_wrong_magic_is_refused() {
    let t = Shm::default();
    let l = t.listen().unwrap();
    poke(
        l.address(),
        offset_of!(RegionHeader, magic),
        &0xdead_beef_u64.to_le_bytes(),
    );
    let e = attach_error(&t, l.address());
    assert!(
        e.contains("not an xferbench region") && e.contains("0x00000000deadbeef"),
        "{e}"
    );
}

#[test]
fn a_wrong_version_is_refused() {
    let t = Shm::default();
    let l = t.listen().unwrap();
    poke(
        l.address(),
        offset_of!(RegionHeader, version),
        &(LAYOUT_VERSION + 1).to_le_bytes(),
    );
    let e = attach_error(&t, l.address());
    assert!(
        e.contains("layout version 2") && e.contains("same build"),
        "{e}"
    );
}

#[test]
fn sizes_that_do_not_add_up_are_refused() {
    let t = Shm::default();
    for (field, value) in [
        (offset_of!(RegionHeader, total_len), 12_345u64),
        (offset_of!(RegionHeader, ring_capacity), 3_000),
        (offset_of!(RegionHeader, data_offset), 8),
    ] {
        let l = t.listen().unwrap();
        poke(l.address(), field, &value.to_le_bytes());
        let e = attach_error(&t, l.address());
        assert!(e.contains("sizes do not match"), "{e}");
    }
    let l = t.listen().unwrap();
    poke(
        l.address(),
        offset_of!(RegionHeader, header_len),
        &7u32.to_le_bytes(),
    );
    assert!(attach_error(&t, l.address()).contains("header of 7 bytes"));
}

#[test]
fn the_region_cannot_be_resized_so_a_truncation_never_reaches_a_mapping() {
    let t = Shm::default();
    let l = t.listen().unwrap();
    let fd = backing::open(l.address()).unwrap().fd;
    for len in [0u64, 100, 4096, 1 << 30] {
        assert_eq!(
            rustix::fs::ftruncate(&fd, len),
            Err(rustix::io::Errno::PERM),
            "{len}"
        );
    }
    let peer = t.connect(l.address(), deadline()).unwrap();
    drop((l.accept(deadline()).unwrap(), peer));
}

#[test]
fn a_wrong_creator_pid_is_refused() {
    let t = Shm::default();
    let l = t.listen().unwrap();
    poke(
        l.address(),
        offset_of!(RegionHeader, creator_pid),
        &1u32.to_le_bytes(),
    );
    let e = attach_error(&t, l.address());
    assert!(e.contains("creator pid 1"), "{e}");
}

#[test]
fn sides_with_different_wait_strategies_are_refused() {
    let l = with(&[("wait", "spin")]).listen().unwrap();
    let e = attach_error(&with(&[("wait", "block")]), l.address());
    assert!(
        e.contains("wait strategy spin") && e.contains("block"),
        "{e}"
    );
}

#[test]
fn the_address_is_gone_once_the_peer_attached_and_after_a_failed_accept() {
    let t = Shm::default();
    let l = t.listen().unwrap();
    let address = l.address().to_string();
    assert!(backing::open(&address).is_ok());
    let peer = t.connect(&address, deadline()).unwrap();
    let _ep = l.accept(deadline()).unwrap();
    assert!(
        backing::open(&address).is_err(),
        "{address} outlived the attach"
    );
    drop(peer);
    let l = t.listen().unwrap();
    let address = l.address().to_string();
    assert!(
        l.accept(Instant::now() + Duration::from_millis(10))
            .is_err()
    );
    assert!(
        backing::open(&address).is_err(),
        "{address} outlived a timed-out accept"
    );
}

fn pair(t: &Shm) -> (ShmEndpoint, ShmEndpoint) {
    let l = t.listen().unwrap();
    let peer = t.connect(l.address(), deadline()).unwrap();
    (l.accept(deadline()).unwrap(), peer)
}

#[test]
fn zero_copy_reserve_commit_peek_release_across_the_wrap() {
    let t = with(&[("capacity", "8KiB"), ("batch", "1")]);
    let (mut a, mut b) = pair(&t);
    // 3000-byte records in an 8192-byte ring: most straddle the wrap, and the mirror
    // must still hand out one contiguous slice.
    for round in 0..20u8 {
        let w = a.reserve(3000).unwrap();
        w.iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = (i as u8).wrapping_add(round));
        a.commit(3000);
        a.flush().unwrap();
        let r = b.peek(3000).unwrap().expect("data");
        assert!(
            r.iter()
                .enumerate()
                .all(|(i, x)| *x == (i as u8).wrapping_add(round)),
            "round {round}"
        );
        b.release(3000);
    }
    assert!(
        a.reserve(4097).is_err(),
        "a reservation over half the ring must be refused"
    );
    assert!(
        b.peek(4097).is_err(),
        "a peek over half the ring must be refused"
    );
    a.close_send().unwrap();
    assert!(b.peek(1).unwrap().is_none());
}

/// CPU time this thread used while waiting `ms` for one message.
fn cpu_while_idle(t: &Shm, ms: u64) -> Duration {
    let (mut a, mut b) = pair(t);
    let waiter = std::thread::spawn(move || {
        let cpu = || {
            let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
            Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
        };
        let before = cpu();
        let mut buf = [0u8; 8];
        assert_eq!(b.recv(&mut buf).unwrap(), Recv::Message);
        cpu() - before
    });
    std::thread::sleep(Duration::from_millis(ms));
    a.send(&[1u8; 8]).unwrap();
    a.flush().unwrap();
    waiter.join().unwrap()
}

#[test]
fn blocking_and_hybrid_waiters_sleep_while_spinners_burn_a_cpu() {
    let block = cpu_while_idle(&with(&[("wait", "block")]), 300);
    let hybrid = cpu_while_idle(&with(&[("wait", "hybrid"), ("spin_us", "50")]), 300);
    let spin = cpu_while_idle(&with(&[("wait", "spin")]), 300);
    eprintln!(
        "CPU used while waiting 300 ms idle: block {block:?}, hybrid {hybrid:?}, spin {spin:?}"
    );
    assert!(
        block < Duration::from_millis(30),
        "block used {block:?} of CPU in 300 ms idle"
    );
    assert!(
        hybrid < Duration::from_millis(30),
        "hybrid used {hybrid:?} of CPU in 300 ms idle"
    );
    // The check above can fail: a spinner does use the CPU, as much of the 300 ms as
    // the scheduler gives it (on a busy machine, well under all of it).
    let sleepers = block.max(hybrid).max(Duration::from_millis(1));
    assert!(
        spin > Duration::from_millis(20) && spin > 10 * sleepers,
        "spin used only {spin:?} (block {block:?}, hybrid {hybrid:?})"
    );
}

#[test]
fn header_constants_are_what_the_docs_say() {
    assert_eq!(MAGIC.to_le_bytes(), *b"XFBSHM01");
    assert_eq!(offset_of!(RegionHeader, magic), 0);
    assert_eq!(std::mem::align_of::<RegionHeader>() % 128, 0);
}

/// Regression (found by the model check in ring_model.rs): a receiver waiting for more
/// than half the ring while the sender waits for half the ring free deadlocked both.
#[test]
fn regression_a_receive_larger_than_half_the_ring_does_not_deadlock_the_sender() {
    for wait in ["block", "spin"] {
        let t = with(&[("capacity", "4KiB"), ("batch", "1"), ("wait", wait)]);
        let (mut a, mut b) = pair(&t);
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut one = [0u8; 1];
            assert_eq!(b.recv(&mut one).unwrap(), Recv::Message);
            let mut big = vec![0u8; 4097];
            assert_eq!(b.recv(&mut big).unwrap(), Recv::Message);
            assert!(big.iter().all(|x| *x == 9));
            done_tx.send(()).unwrap();
        });
        // The sender runs on its own thread too, so a deadlock fails the test below
        // instead of hanging it.
        std::thread::spawn(move || {
            a.send(&[1]).unwrap();
            a.flush().unwrap();
            // Let the receiver take the byte and start waiting for the 4097 before
            // they come: a receiver that finds data already there never waits.
            std::thread::sleep(Duration::from_millis(100));
            a.send(&[9u8; 4097]).unwrap();
            a.flush().unwrap();
            std::thread::sleep(Duration::from_secs(1));
        });
        done_rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("wait={wait}: sender and receiver deadlocked"));
    }
}

/// Two threads of one process, each waiting for the other (for data that never
/// comes, or for room in a ring nobody reads): what a run declared hung with
/// `--peer thread` leaves. The peer's process lives, so only the owner's abandon flag
/// ends the waits, in every wait mode.
#[test]
fn abandoned_thread_peers_stop_waiting_in_every_mode() {
    use std::io::ErrorKind;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    fn wait_for_nothing(ep: &mut ShmEndpoint) -> Result<(), ErrorKind> {
        let mut buf = [0u8; 64];
        ep.recv(&mut buf).map(|_| ()).map_err(|e| e.kind())
    }
    fn fill_for_nobody(ep: &mut ShmEndpoint) -> Result<(), ErrorKind> {
        loop {
            ep.send(&[7u8; 64]).map_err(|e| e.kind())?;
        }
    }
    type Op = fn(&mut ShmEndpoint) -> Result<(), ErrorKind>;
    let ops: [(&str, Op); 2] = [
        ("receiving", wait_for_nothing),
        ("sending", fill_for_nobody),
    ];
    for wait in ["spin", "block", "hybrid"] {
        for (what, op) in ops {
            let t = with(&[("wait", wait), ("capacity", "4KiB")]);
            let (a, b) = pair(&t);
            let flag = Arc::new(AtomicBool::new(false));
            let waiters = [a, b].map(|mut ep| {
                ep.abandon_when(flag.clone());
                std::thread::spawn(move || {
                    let r = op(&mut ep);
                    drop(ep);
                    r
                })
            });
            std::thread::sleep(Duration::from_millis(300));
            assert!(
                waiters.iter().all(|w| !w.is_finished()),
                "{wait}, {what}: a side stopped waiting before it was abandoned"
            );
            flag.store(true, Ordering::Relaxed);
            let until = Instant::now() + Duration::from_secs(10);
            while waiters.iter().any(|w| !w.is_finished()) {
                assert!(
                    Instant::now() < until,
                    "{wait}, {what}: an abandoned side kept waiting"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            let ends = waiters.map(|w| w.join().unwrap());
            // A side that saw the other leave first may find the stream closed (a
            // receiver: `Ok`) or the consumer gone (a sender: broken pipe).
            assert!(
                ends.iter().all(|e| matches!(
                    e,
                    Ok(()) | Err(ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe)
                )),
                "{wait}, {what}: {ends:?}"
            );
            assert!(
                ends.contains(&Err(ErrorKind::ConnectionAborted)),
                "{wait}, {what}: {ends:?}"
            );
        }
    }
}

/// The ring size a region's header records.
fn ring_capacity(address: &str) -> u64 {
    let fd = backing::open(address).unwrap().fd;
    let mut b = [0u8; 8];
    rustix::io::pread(&fd, &mut b, offset_of!(RegionHeader, ring_capacity) as u64).unwrap();
    u64::from_le_bytes(b)
}

#[test]
fn an_auto_ring_is_sized_by_the_listener_and_attached_at_that_size() {
    let mut listener_side = Shm::default();
    listener_side.size_for(Traffic::round_trips(64));
    let small = listener_side.capacity();
    assert!(
        small < 4 << 20,
        "a ping-pong of 64 B gets a small ring: {small}"
    );
    let l = listener_side.listen().unwrap();
    assert_eq!(ring_capacity(l.address()), small as u64);
    // The connecting side was told a stream (or nothing): it attaches to the ring the
    // header describes, whatever its own setting.
    let mut connector_side = Shm::default();
    connector_side.size_for(Traffic::stream(64));
    let mut b = connector_side.connect(l.address(), deadline()).unwrap();
    let mut a = l.accept(deadline()).unwrap();
    // Many more messages than the ring holds, each way, in place and copied; and a
    // copied message larger than the ring, in pieces.
    let mut buf = [0u8; 64];
    for i in 0..10_000u32 {
        let msg = [i as u8; 64];
        a.send(&msg).unwrap();
        a.flush().unwrap();
        assert!(matches!(b.recv(&mut buf).unwrap(), Recv::Message));
        assert_eq!(buf, msg, "message {i}");
        let w = b.reserve(64).unwrap();
        w.fill(!(i as u8));
        b.commit(64);
        b.flush().unwrap();
        assert_eq!(a.peek(64).unwrap().expect("data"), &[!(i as u8); 64]);
        a.release(64);
    }
    let big: Vec<u8> = (0..3 * small).map(|i| (i % 251) as u8).collect();
    let sender = std::thread::spawn(move || {
        a.send(&big).unwrap();
        a.flush().unwrap();
        big
    });
    let mut got = vec![0u8; 3 * small];
    assert!(matches!(b.recv(&mut got).unwrap(), Recv::Message));
    assert_eq!(got, sender.join().unwrap());
}

/// A message of `len` bytes that differs from every other `seed`'s.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    (0..len as u64)
        .map(|i| (i.wrapping_mul(31) ^ seed.wrapping_mul(0x9e37_79b9)) as u8)
        .collect()
}

/// Runs `sender` and `receiver` on a fresh pair of `t`, each on its own thread, and
/// fails (rather than hangs) if the receiver has not finished within a minute.
fn exchange(
    t: &Shm,
    what: &str,
    sender: impl FnOnce(&mut ShmEndpoint) + Send + 'static,
    receiver: impl FnOnce(&mut ShmEndpoint) + Send + 'static,
) {
    let (mut a, mut b) = pair(t);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let rx = std::thread::spawn(move || {
        receiver(&mut b);
        let _ = done_tx.send(());
    });
    let tx = std::thread::spawn(move || {
        sender(&mut a);
        a.close_send().unwrap();
    });
    match done_rx.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => {
            rx.join().unwrap();
            tx.join().unwrap();
        }
        // A panic on either side ends up here too: show it.
        Err(_) if rx.is_finished() => rx.join().expect("receiver panicked"),
        Err(_) if tx.is_finished() => {
            tx.join().expect("sender panicked");
            panic!("{what}: the receiver never finished");
        }
        Err(_) => panic!("{what}: sender and receiver never finished"),
    }
}

/// Regression: with `batch=1` ("publish every message at once") a copied message was
/// also copied and published one byte at a time. Pieces now have a floor; whatever
/// the batch and the ring, large messages arrive whole, in order and intact, copied
/// and in place, one after the other as a stream.
#[test]
fn large_messages_with_batch_1_arrive_intact_copied_and_in_place() {
    for (capacity, cap) in [
        ("4KiB", 4usize << 10),
        ("64KiB", 64 << 10),
        ("4MiB", 4 << 20),
    ] {
        let t = with(&[("capacity", capacity), ("batch", "1")]);
        // Copying: smaller and larger than a piece, than half the ring and than the
        // ring, odd sizes among them.
        let sizes = [1usize, 64, 5_000, 65_536, 100_003, 1 << 20, 3 * cap + 7, 2];
        exchange(
            &t,
            &format!("capacity {capacity}, copying"),
            move |ep| {
                for (i, &n) in sizes.iter().enumerate() {
                    ep.send(&pattern(n, i as u64)).unwrap();
                }
            },
            move |ep| {
                for (i, &n) in sizes.iter().enumerate() {
                    let mut buf = vec![0u8; n];
                    assert_eq!(ep.recv(&mut buf).unwrap(), Recv::Message, "message {i}");
                    assert!(buf == pattern(n, i as u64), "message {i} ({n} B) corrupt");
                }
                assert_eq!(ep.recv(&mut [0u8; 1]).unwrap(), Recv::Closed);
            },
        );
        // In place: a stream of reservations up to half the ring, the largest allowed.
        let sizes = [cap / 2, 1, cap / 2 - 1, cap / 2, 3_000.min(cap / 2)];
        exchange(
            &t,
            &format!("capacity {capacity}, in place"),
            move |ep| {
                for round in 0..4u64 {
                    for (i, &n) in sizes.iter().enumerate() {
                        let msg = pattern(n, round * 10 + i as u64);
                        ep.reserve(n).unwrap().copy_from_slice(&msg);
                        ep.commit(n);
                    }
                }
            },
            move |ep| {
                for round in 0..4u64 {
                    for (i, &n) in sizes.iter().enumerate() {
                        let got = ep.peek(n).unwrap().expect("a message, not the end");
                        assert!(
                            got == pattern(n, round * 10 + i as u64),
                            "round {round}, message {i} ({n} B) corrupt"
                        );
                        ep.release(n);
                    }
                }
                assert!(ep.peek(1).unwrap().is_none());
            },
        );
    }
}

/// Regression: a peek waited for only a piece of the range (the batch), so when a
/// copying sender's pieces had brought part of it, the next wait found that part
/// already there and returned at once, without reading `head` again: the receiver
/// spun for ever. Each side may use either mode.
#[test]
fn regression_a_peek_of_a_message_copied_in_pieces_sees_all_of_it() {
    for batch in ["1", "16KiB"] {
        let t = with(&[("capacity", "256KiB"), ("batch", batch)]);
        let n = 128usize << 10;
        exchange(
            &t,
            &format!("batch {batch}, copy to in place"),
            move |ep| {
                for i in 0..16 {
                    ep.send(&pattern(n, i)).unwrap();
                }
            },
            move |ep| {
                for i in 0..16 {
                    let got = ep.peek(n).unwrap().expect("a message, not the end");
                    assert!(got == pattern(n, i), "message {i} corrupt");
                    ep.release(n);
                }
            },
        );
        exchange(
            &t,
            &format!("batch {batch}, in place to copy"),
            move |ep| {
                for i in 0..16 {
                    ep.reserve(n).unwrap().copy_from_slice(&pattern(n, i));
                    ep.commit(n);
                }
            },
            move |ep| {
                let mut buf = vec![0u8; n];
                for i in 0..16 {
                    assert_eq!(ep.recv(&mut buf).unwrap(), Recv::Message);
                    assert!(buf == pattern(n, i), "message {i} corrupt");
                }
            },
        );
    }
}

/// A stream that ends inside the range a peek asks for is an error that says so, not
/// a wait for bytes that will never come.
#[test]
fn a_peek_cut_short_by_the_end_of_the_stream_is_an_error() {
    let t = with(&[("capacity", "64KiB")]);
    exchange(
        &t,
        "truncated peek",
        |ep| {
            ep.send(&[5u8; 100]).unwrap();
        },
        |ep| {
            let e = ep
                .peek(1000)
                .expect_err("a peek past the end of the stream");
            assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof, "{e}");
            assert!(
                e.to_string().contains("100 bytes into a 1000-byte peek"),
                "{e}"
            );
        },
    );
}
