//! The RPMsg link end to end with a thread remote: echo in every notification and
//! buffer mode, 32 channels multiplexed, malformed input on both sides.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use xferbench_transports::rpmsg::header::{self, MsgHeader};
use xferbench_transports::rpmsg::vring::{Device, Vring};
use xferbench_transports::rpmsg::{
    Buffers, Channel, HostLink, LinkConfig, LinkError, Notify, RemoteLink, Service,
};
use xferbench_transports::shm::region::Region;

fn deadline() -> Option<Instant> {
    Some(Instant::now() + Duration::from_secs(10))
}

/// A link with its remote serving in a thread.
fn start(cfg: LinkConfig) -> (HostLink, Vec<Channel>, std::thread::JoinHandle<()>) {
    let mut host = HostLink::create(&cfg).expect("create");
    let name = host.name().expect("a name before attach");
    let remote = std::thread::spawn(move || {
        let mut r = RemoteLink::attach(&name).expect("attach");
        r.serve().expect("serve");
    });
    host.wait_attached(Duration::from_secs(10), || Ok(()))
        .expect("attached");
    assert!(host.name().is_none(), "the name is unlinked once attached");
    let chans = host.take_channels();
    (host, chans, remote)
}

fn echo_round_trips(ch: &mut Channel, n: usize, size: usize) {
    let mut out = [0u8; 496];
    let mut scratch = [0u8; 496];
    for i in 0..n {
        let tag = (i as u32).wrapping_mul(2_654_435_761).to_le_bytes();
        ch.send_with(
            size,
            &mut scratch,
            |m| {
                for (j, b) in m.iter_mut().enumerate() {
                    *b = tag[j % 4] ^ ch_tag(j);
                }
            },
            deadline(),
        )
        .expect("send");
        let got = ch.recv(&mut out, deadline()).expect("recv");
        assert_eq!(got, size);
        for (j, &b) in out[..size].iter().enumerate() {
            assert_eq!(
                b,
                tag[j % 4] ^ ch_tag(j),
                "byte {j} of reply {i} ch {} size {size} got {:?}",
                ch.index(),
                &out[..8]
            );
        }
    }
}

fn ch_tag(j: usize) -> u8 {
    (j as u8).wrapping_mul(31)
}

#[test]
fn echo_works_in_every_notification_and_buffer_mode() {
    for notify in Notify::ALL {
        for buffers in Buffers::ALL {
            let (host, mut chans, remote) = start(LinkConfig {
                notify,
                num: 8, // small: the indices wrap many times
                ..LinkConfig::default()
            });
            let ch = &mut chans[0];
            ch.set_buffers(buffers);
            for size in [1, 2, 16, 64, 256, 496] {
                echo_round_trips(ch, 300, size);
            }
            assert_eq!(host.host_faults().total(), 0);
            assert_eq!(host.remote_faults().total(), 0);
            assert_eq!(host.remote_messages(), 1800);
            let (to_remote, to_host) = host.kicks();
            if notify == Notify::Poll {
                assert_eq!((to_remote, to_host), (0, 0));
            }
            if notify == Notify::Kick {
                assert!(
                    to_remote >= 1800 && to_host >= 1800,
                    "{to_remote} {to_host}"
                );
            }
            drop(host);
            remote.join().unwrap();
        }
    }
}

#[test]
fn thirty_two_channels_share_one_vring_pair_without_mixing_replies() {
    for notify in [Notify::Kick, Notify::EventIdx] {
        if std::env::var("ONLY").is_ok_and(|o| o != notify.name()) {
            continue;
        }
        let (host, chans, remote) = start(LinkConfig {
            channels: 32,
            notify,
            ..LinkConfig::default()
        });
        let threads: Vec<_> = chans
            .into_iter()
            .map(|mut ch| {
                std::thread::spawn(move || {
                    let size = 16 + ch.index() * 15;
                    echo_round_trips(&mut ch, 500, size);
                })
            })
            .collect();
        let mut failed = 0;
        for t in threads {
            failed += t.join().is_err() as u32;
        }
        assert_eq!(
            failed,
            0,
            "host faults {:?} remote faults {:?} dropped {} remote msgs {}",
            host.host_faults(),
            host.remote_faults(),
            host.dropped(),
            host.remote_messages()
        );
        assert_eq!(host.host_faults().total(), 0);
        assert_eq!(host.remote_faults().total(), 0);
        assert_eq!(host.dropped(), 0);
        assert_eq!(host.remote_messages(), 32 * 500);
        drop(host);
        remote.join().unwrap();
    }
}

#[test]
fn the_suffix_and_hold_services_answer_like_the_firmware() {
    let (host, mut chans, remote) = start(LinkConfig {
        suffix: true,
        ..LinkConfig::default()
    });
    let mut out = [0u8; 496];
    chans[0].send(b"hello\0junk", deadline()).unwrap();
    let n = chans[0].recv(&mut out, deadline()).unwrap();
    assert_eq!(&out[..n], b"hello => echo from Core1\n");
    // A full-size payload cannot grow: the reply is cut at 496 bytes.
    chans[0].send(&[b'a'; 496], deadline()).unwrap();
    assert_eq!(chans[0].recv(&mut out, deadline()).unwrap(), 496);
    drop(host);
    remote.join().unwrap();

    let (host, mut chans, remote) = start(LinkConfig {
        service: Service::EchoHold,
        channels: 2,
        ..LinkConfig::default()
    });
    for i in 0..40 {
        let ch = &mut chans[i % 2];
        ch.send(b"quiet please", deadline()).unwrap();
        let n = ch.recv(&mut out, deadline()).unwrap();
        assert_eq!(&out[..n], b"QUIET PLEASE");
    }
    drop(host);
    remote.join().unwrap();
}

#[test]
fn the_remote_counts_malformed_messages_and_keeps_serving() {
    let (host, mut chans, remote) = start(LinkConfig::default());
    let ch = &mut chans[0];
    let good = MsgHeader {
        src: ch.local_addr(),
        dst: ch.remote_addr(),
        ..MsgHeader::default()
    };
    // len > 496
    ch.send_with_header(MsgHeader { len: 497, ..good }, b"x", deadline())
        .unwrap();
    // len beyond the bytes in the buffer
    ch.send_with_header(MsgHeader { len: 400, ..good }, b"short", deadline())
        .unwrap();
    // unknown destination
    ch.send_with_header(MsgHeader { dst: 7, ..good }, b"lost", deadline())
        .unwrap();
    // A good one still gets its answer, and the bad ones got none.
    ch.send(b"ok", deadline()).unwrap();
    let mut out = [0u8; 496];
    assert_eq!(ch.recv(&mut out, deadline()).unwrap(), 2);
    assert_eq!(&out[..2], b"ok");
    let f = host.remote_faults();
    assert_eq!(
        (f.payload_too_long, f.bad_length, f.unknown_dst),
        (1, 1, 1),
        "{f:?}"
    );
    assert!(matches!(
        ch.send(&[0; 497], deadline()),
        Err(LinkError::TooLong(497))
    ));
    drop(host);
    remote.join().unwrap();
}

#[test]
fn the_host_counts_bad_replies_from_a_hostile_remote() {
    let mut host = HostLink::create(&LinkConfig::default()).unwrap();
    let name = host.name().unwrap();
    // A hand-made remote: attaches to the region and writes the rx used ring itself.
    let region = Region::attach(&name, 2).unwrap();
    let base = region.data(0).base();
    let (_, rx_off, _, _) = header::layout(256);
    // SAFETY: the link layout puts a 256-entry vring at rx_off inside the area, which
    // `region` keeps mapped for the whole test.
    let rx = unsafe { Vring::new(base.add(rx_off as usize), 256) };
    // SAFETY: the link header is at the start of the area.
    let hdr = unsafe { &*base.cast::<header::LinkHeader>() };
    hdr.remote_pid.store(std::process::id(), Ordering::Release);
    host.wait_attached(Duration::from_secs(5), || Ok(()))
        .unwrap();
    let mut dev = Device::new(rx);
    let write = |dev: &mut Device, h: MsgHeader, used: u32| {
        let (id, addr, _, _) = dev.next_avail().unwrap().unwrap();
        // SAFETY: addr is the offset of a 512-byte rx buffer inside the area (the host
        // offered it).
        unsafe { std::ptr::copy_nonoverlapping(h.encode().as_ptr(), base.add(addr as usize), 16) };
        dev.push_used(id, used);
    };
    let to0 = MsgHeader {
        src: 0x120,
        dst: 100,
        len: 4,
        ..MsgHeader::default()
    };
    write(&mut dev, MsgHeader { len: 500, ..to0 }, 512); // payload too long
    write(&mut dev, MsgHeader { dst: 5000, ..to0 }, 20); // unknown destination
    write(&mut dev, to0, 8); // used length shorter than the message
    dev.push_used(300, 20); // descriptor index outside the table
    write(&mut dev, to0, 20); // finally a good one
    dev.publish();
    let mut chans = host.take_channels();
    let mut out = [0u8; 496];
    assert_eq!(chans[0].recv(&mut out, deadline()).unwrap(), 4);
    let f = host.host_faults();
    assert_eq!(
        (
            f.payload_too_long,
            f.unknown_dst,
            f.bad_length,
            f.bad_descriptor
        ),
        (1, 1, 1, 1),
        "{f:?}"
    );
    // An index jump is a corrupt link: an error, not a hang.
    rx.used_idx().store(60_000, Ordering::Release);
    let err = chans[0].recv(&mut out, deadline()).unwrap_err();
    assert!(matches!(err, LinkError::Corrupt { .. }), "{err}");
}

#[test]
fn attaching_to_something_else_is_refused_with_the_reason() {
    // A region whose data area holds no link header (zeros): bad magic.
    let region = Region::create(1 << 20, 2).unwrap();
    let name = region.name().unwrap().to_owned();
    let err = RemoteLink::attach(&name).unwrap_err();
    assert!(
        err.to_string().contains("not an xferbench RPMsg link"),
        "{err}"
    );
}

#[test]
fn a_remote_that_never_answers_is_a_timeout_not_a_hang() {
    let (host, mut chans, remote) = start(LinkConfig::default());
    let ch = &mut chans[0];
    let h = MsgHeader {
        src: ch.local_addr(),
        dst: 9,
        ..MsgHeader::default()
    };
    ch.send_with_header(h, b"nobody", deadline()).unwrap();
    let mut out = [0u8; 16];
    let err = ch
        .recv(&mut out, Some(Instant::now() + Duration::from_millis(50)))
        .unwrap_err();
    assert!(matches!(err, LinkError::Timeout { .. }), "{err}");
    drop(host);
    remote.join().unwrap();
}

/// The `Rpmsg` transport in the direction the conformance suite does not drive: the
/// host side hangs up (drops its endpoint) and the remote side notices, after
/// receiving what was sent; and a message longer than the receive buffer is an error.
#[test]
fn transport_remote_notices_a_host_that_hung_up() {
    use xferbench_transports::rpmsg::Rpmsg;
    use xferbench_transports::{Endpoint, Listener, Recv, Transport};
    let t = Rpmsg::default();
    let listener = t.listen().expect("listen");
    let address = listener.address().to_string();
    let mut remote = t
        .connect(&address, Instant::now() + Duration::from_secs(5))
        .expect("connect");
    let mut host = listener
        .accept(Instant::now() + Duration::from_secs(5))
        .expect("accept");
    host.send(&[1u8; 32]).expect("send");
    host.send(&[2u8; 8]).expect("send");
    drop(host);
    let mut small = [0u8; 16];
    let err = remote.recv(&mut small).expect_err("32 bytes into 16");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{err}");
    let mut buf = [0u8; 8];
    assert_eq!(remote.recv(&mut buf).expect("recv"), Recv::Message);
    assert_eq!(buf, [2u8; 8]);
    assert_eq!(remote.recv(&mut buf).expect("recv"), Recv::Closed);
    let err = remote.send(&buf).expect_err("send to a host that hung up");
    assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
}

#[test]
fn zero_copy_writes_and_reads_packets_in_place() {
    for notify in Notify::ALL {
        let (host, mut chans, remote) = start(LinkConfig {
            notify,
            num: 8,
            ..LinkConfig::default()
        });
        let ch = &mut chans[0];
        ch.set_buffers(Buffers::ZeroCopy);
        let mut scratch = [0u8; 496];
        for size in [1, 16, 64, 496] {
            for i in 0..200u32 {
                let tag = i.wrapping_mul(2_654_435_761).to_le_bytes();
                let byte = |j: usize| tag[j % 4] ^ ch_tag(j);
                ch.send_with(
                    size,
                    &mut scratch,
                    |m| m.iter_mut().enumerate().for_each(|(j, b)| *b = byte(j)),
                    deadline(),
                )
                .expect("send");
                let same = ch
                    .recv_in_place(deadline(), |m| {
                        m.len() == size && m.iter().enumerate().all(|(j, &b)| b == byte(j))
                    })
                    .expect("recv_in_place");
                assert!(same, "reply {i} of size {size} ({notify:?})");
            }
        }
        assert_eq!(host.host_faults().total(), 0);
        drop(chans);
        drop(host);
        remote.join().expect("remote");
    }
}
