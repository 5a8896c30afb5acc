//! The memory mock: the device and the per-connection state machine without
//! sockets, then the server and the client over loopback in both I/O models.
//!
//! * Configuration space: IDs, header type, BAR probing and mapping, command register.
//! * Reads answered with completions, split at the maximum completion size; writes
//!   applied; BAR0 read-only; unmapped reads answered with UR.
//! * Bad input: bad LCRC → NAK of that sequence number, bad DLLP CRC and unsupported
//!   types skipped and counted, a bad protocol byte closes, a partial frame waits,
//!   random bytes never panic.
//! * End to end: enumeration and verified reads/writes with [`Link`] and
//!   [`Pipeline`] against both server I/O models.

use proptest::prelude::*;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use xferbench_transports::warp::client::{AckPolicy, Link, Pipeline};
use xferbench_transports::warp::mock::{Device, MockConfig, MockConn};
use xferbench_transports::warp::server::{IoModel, Server, ServerConfig};
use xferbench_transports::warp::{
    CompletionHeader, CrcKind, Decoder, Dllp, Frame, FrameDecodeError, PcieId, RequestHeader, Tlp,
    TlpHeader, encode,
};

const CRC: CrcKind = CrcKind::Fast;

fn req(tag: u8) -> RequestHeader {
    RequestHeader {
        requester: PcieId(0),
        tag,
        first_be: 0xF,
        last_be: 0xF,
    }
}

fn tlp(seq: u16, header: TlpHeader, payload: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::new();
    encode(
        &Frame::Tlp(Tlp {
            seq,
            header,
            payload,
        }),
        CRC,
        &mut out,
    )
    .expect("valid frame");
    out
}

fn cfg_rd(seq: u16, offset: u16) -> Vec<u8> {
    let mut r = req(1);
    r.last_be = 0;
    tlp(
        seq,
        TlpHeader::CfgRd0 {
            req: r,
            target: PcieId(0),
            offset,
            length_dw: 1,
        },
        vec![],
    )
}

fn cfg_wr(seq: u16, offset: u16, value: u32) -> Vec<u8> {
    let mut r = req(0);
    r.last_be = 0;
    tlp(
        seq,
        TlpHeader::CfgWr0 {
            req: r,
            target: PcieId(0),
            offset,
        },
        value.to_le_bytes().to_vec(),
    )
}

fn mrd(seq: u16, tag: u8, address: u64, len: usize) -> Vec<u8> {
    tlp(
        seq,
        TlpHeader::MRd {
            req: req(tag),
            address,
            length_dw: (len / 4) as u16,
        },
        vec![],
    )
}

fn mwr(seq: u16, address: u64, data: Vec<u8>) -> Vec<u8> {
    tlp(
        seq,
        TlpHeader::MWr {
            req: req(0),
            address,
        },
        data,
    )
}

/// Feeds `input` to a connection and decodes every answer.
fn exchange(conn: &mut MockConn, dev: &mut Device, input: &[u8]) -> (Vec<Frame>, usize, bool) {
    let mut out = Vec::new();
    let p = conn.process(dev, input, &mut out);
    let mut frames = Vec::new();
    let mut dec = Decoder::new(CRC);
    let mut at = 0;
    while let Some((f, n)) = dec.decode(&out[at..]).expect("the mock sends valid frames") {
        frames.push(f);
        at += n;
    }
    assert_eq!(at, out.len(), "the mock sends whole frames");
    (frames, p.consumed, p.close.is_some())
}

fn completions(frames: &[Frame]) -> Vec<(CompletionHeader, Vec<u8>)> {
    frames
        .iter()
        .filter_map(|f| match f {
            Frame::Tlp(Tlp {
                header: TlpHeader::CplD { cpl },
                payload,
                ..
            }) => Some((*cpl, payload.clone())),
            _ => None,
        })
        .collect()
}

fn config_dw(conn: &mut MockConn, dev: &mut Device, offset: u16) -> u32 {
    let (frames, _, _) = exchange(conn, dev, &cfg_rd(1, offset));
    let c = completions(&frames);
    assert_eq!(c.len(), 1, "one CplD for a config read: {frames:?}");
    u32::from_le_bytes(c[0].1[..4].try_into().unwrap())
}

/// A device with BARs mapped where warp-pipe's enumeration puts them.
fn mapped(cfg: &MockConfig) -> (Device, MockConn) {
    let mut dev = Device::new(cfg).unwrap();
    let mut conn = MockConn::new(CRC);
    exchange(&mut conn, &mut dev, &cfg_wr(1, 0x10, 0x10_0000));
    exchange(&mut conn, &mut dev, &cfg_wr(2, 0x14, 0x14_0000));
    (dev, conn)
}

#[test]
fn config_space_has_warp_pipes_ids_and_a_type0_header() {
    let mut dev = Device::new(&MockConfig::default()).unwrap();
    let mut conn = MockConn::new(CRC);
    assert_eq!(config_dw(&mut conn, &mut dev, 0), 0x0002_0001);
    assert_eq!(config_dw(&mut conn, &mut dev, 0x0C) >> 16 & 0xFF, 0);
    // The command register is writable.
    exchange(&mut conn, &mut dev, &cfg_wr(3, 0x04, 0x0006));
    assert_eq!(config_dw(&mut conn, &mut dev, 0x04) & 0xFFFF, 0x0006);
}

#[test]
fn bar_probing_reads_back_the_size_mask_and_mapping_the_address() {
    let mut dev = Device::new(&MockConfig::default()).unwrap();
    let mut conn = MockConn::new(CRC);
    for (bar, size) in [(0u16, 128u32), (1, 2048)] {
        let off = 0x10 + 4 * bar;
        exchange(&mut conn, &mut dev, &cfg_wr(1, off, u32::MAX));
        let mask = config_dw(&mut conn, &mut dev, off);
        assert_eq!(mask & !0xF, !(size - 1), "BAR{bar}");
        assert_eq!((mask & !0xF).wrapping_neg(), size);
        assert_eq!(dev.bar(bar as usize), None, "probing does not map");
        exchange(&mut conn, &mut dev, &cfg_wr(2, off, 0x20_0000));
        assert_eq!(config_dw(&mut conn, &mut dev, off) & !0xF, 0x20_0000);
        assert_eq!(dev.bar(bar as usize), Some((0x20_0000, size)));
    }
    // Unused BARs read 0 and stay 0.
    exchange(&mut conn, &mut dev, &cfg_wr(1, 0x18, u32::MAX));
    assert_eq!(config_dw(&mut conn, &mut dev, 0x18), 0);
}

#[test]
fn concurrent_probing_on_two_connections_does_not_interfere() {
    let mut dev = Device::new(&MockConfig::default()).unwrap();
    let (mut a, mut b) = (MockConn::new(CRC), MockConn::new(CRC));
    exchange(&mut a, &mut dev, &cfg_wr(1, 0x14, u32::MAX));
    exchange(&mut b, &mut dev, &cfg_wr(1, 0x14, u32::MAX));
    exchange(&mut b, &mut dev, &cfg_wr(2, 0x14, 0x14_0000));
    // b mapped BAR1 between a's probe and a's read-back: a still sees the mask.
    assert_eq!(config_dw(&mut a, &mut dev, 0x14) & !0xF, !(2048 - 1) & !0xF);
    assert_eq!(config_dw(&mut b, &mut dev, 0x14) & !0xF, 0x14_0000);
}

#[test]
fn reads_are_answered_with_acks_and_the_data_in_one_completion() {
    let (mut dev, mut conn) = mapped(&MockConfig::default());
    let (frames, consumed, close) = exchange(&mut conn, &mut dev, &mrd(7, 3, 0x10_0000, 128));
    assert!(!close);
    assert_eq!(consumed, mrd(7, 3, 0x10_0000, 128).len());
    assert_eq!(frames[0], Frame::Dllp(Dllp::Ack { seq: 7 }));
    let c = completions(&frames);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].0.tag, 3);
    assert_eq!(c[0].0.byte_count, 128);
    let want: Vec<u8> = (0x10..0x90).collect();
    assert_eq!(c[0].1, want, "BAR0 holds warp-pipe's 0x10.. pattern");
}

#[test]
fn long_reads_are_split_at_the_maximum_completion_size() {
    let cfg = MockConfig {
        max_read_completion: 256,
        ..MockConfig::default()
    };
    let (mut dev, mut conn) = mapped(&cfg);
    let data: Vec<u8> = (0..2048u32).map(|i| (i * 13) as u8).collect();
    exchange(&mut conn, &mut dev, &mwr(3, 0x14_0000, data.clone()));
    let (frames, _, _) = exchange(&mut conn, &mut dev, &mrd(4, 9, 0x14_0000, 2048));
    let c = completions(&frames);
    assert_eq!(c.len(), 8);
    let mut got = Vec::new();
    for (i, (cpl, payload)) in c.iter().enumerate() {
        assert_eq!(cpl.tag, 9);
        assert_eq!(
            usize::from(cpl.byte_count),
            2048 - 256 * i,
            "bytes remaining"
        );
        assert_eq!(payload.len(), 256);
        got.extend_from_slice(payload);
    }
    assert_eq!(got, data);
    // Sequence numbers of the mock's TLPs count up from 1.
    let seqs: Vec<u16> = frames
        .iter()
        .filter_map(|f| match f {
            Frame::Tlp(t) => Some(t.seq),
            _ => None,
        })
        .collect();
    assert_eq!(
        seqs,
        (1..9).collect::<Vec<u16>>(),
        "the first TLPs the mock sends"
    );
}

#[test]
fn writes_are_applied_and_bar0_is_read_only() {
    let (mut dev, mut conn) = mapped(&MockConfig::default());
    exchange(
        &mut conn,
        &mut dev,
        &mwr(1, 0x14_0010, vec![1, 2, 3, 4, 5, 6, 7, 8]),
    );
    assert_eq!(
        &dev.bar_memory(1).unwrap()[0x10..0x18],
        &[1, 2, 3, 4, 5, 6, 7, 8]
    );
    exchange(&mut conn, &mut dev, &mwr(2, 0x10_0000, vec![0; 4]));
    assert_eq!(dev.bar_memory(0).unwrap()[0], 0x10, "BAR0 unchanged");
    assert_eq!(conn.stats().dropped_writes, 1);
    // A write running past the BAR's end is cut there.
    exchange(&mut conn, &mut dev, &mwr(3, 0x14_07FC, vec![9; 8]));
    assert_eq!(&dev.bar_memory(1).unwrap()[0x7FC..], &[9; 4]);
}

#[test]
fn a_read_of_an_unmapped_address_gets_an_unsupported_request_completion() {
    let (mut dev, mut conn) = mapped(&MockConfig::default());
    let (frames, _, close) = exchange(&mut conn, &mut dev, &mrd(1, 4, 0x9000_0000, 64));
    assert!(!close);
    let cpl = frames.iter().find_map(|f| match f {
        Frame::Tlp(Tlp {
            header: TlpHeader::Cpl { cpl, .. },
            ..
        }) => Some(*cpl),
        _ => None,
    });
    let cpl = cpl.expect("a Cpl answers the read (warp-pipe sends nothing and hangs)");
    assert_eq!((cpl.tag, cpl.status), (4, CompletionHeader::UR));
}

#[test]
fn a_bad_lcrc_is_naked_with_the_sequence_number_and_the_stream_goes_on() {
    let (mut dev, mut conn) = mapped(&MockConfig::default());
    let mut bad = mrd(0x123, 1, 0x14_0000, 64);
    let last = bad.len() - 1;
    bad[last] ^= 0x40;
    bad.extend_from_slice(&mrd(0x124, 2, 0x14_0000, 64));
    let (frames, consumed, close) = exchange(&mut conn, &mut dev, &bad);
    assert!(!close);
    assert_eq!(consumed, bad.len());
    assert_eq!(frames[0], Frame::Dllp(Dllp::Nak { seq: 0x123 }));
    assert_eq!(frames[1], Frame::Dllp(Dllp::Ack { seq: 0x124 }));
    assert_eq!(
        completions(&frames).len(),
        1,
        "only the good read is answered"
    );
    assert_eq!(conn.stats().bad_lcrc, 1);
}

#[test]
fn bad_dllps_and_unsupported_types_are_counted_and_skipped() {
    let (mut dev, mut conn) = mapped(&MockConfig::default());
    let mut input = vec![2, 0x00, 0, 0, 5, 0xDE, 0xAD]; // DLLP with a bad CRC16
    let body = [0x80u8, 0, 0, 0]; // an intact DLLP of an unsupported type
    input.push(2);
    input.extend_from_slice(&body);
    input.extend_from_slice(&CRC.crc16(&body).to_le_bytes());
    input.extend_from_slice(&mrd(5, 1, 0x14_0000, 4));
    let (frames, consumed, close) = exchange(&mut conn, &mut dev, &input);
    assert!(!close);
    assert_eq!(consumed, input.len());
    assert_eq!(conn.stats().bad_frames, 2);
    assert_eq!(completions(&frames).len(), 1);
}

#[test]
fn a_bad_protocol_byte_closes_the_connection() {
    let (mut dev, mut conn) = mapped(&MockConfig::default());
    let mut input = mrd(1, 1, 0x14_0000, 4);
    let good = input.len();
    input.extend_from_slice(b"GET / HTTP/1.1\r\n");
    let mut out = Vec::new();
    let p = conn.process(&mut dev, &input, &mut out);
    assert_eq!(p.consumed, good, "the good frame before is served");
    assert!(matches!(
        p.close,
        Some(FrameDecodeError::BadProtocol { value: b'G' })
    ));
}

#[test]
fn a_partial_frame_waits_for_the_rest_without_consuming() {
    let (mut dev, mut conn) = mapped(&MockConfig::default());
    // A 4096-byte write of which only the header arrived.
    let w = mwr(1, 0x14_0000, vec![7; 2048]);
    let (frames, consumed, close) = exchange(&mut conn, &mut dev, &w[..40]);
    assert_eq!((frames.len(), consumed, close), (0, 0, false));
    assert_eq!(conn.needed(), w.len());
    let (frames, consumed, _) = exchange(&mut conn, &mut dev, &w);
    assert_eq!((frames.len(), consumed), (1, w.len()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn random_bytes_never_panic_and_answers_stay_bounded(bytes in proptest::collection::vec(any::<u8>(), 0..6000)) {
        let (mut dev, mut conn) = mapped(&MockConfig::default());
        let mut out = Vec::new();
        let p = conn.process(&mut dev, &bytes, &mut out);
        prop_assert!(p.consumed <= bytes.len());
        // At most one answer per 7 input bytes, each at most one max-size frame.
        prop_assert!(out.len() <= (bytes.len() / 7 + 1) * (4096 + 30));
    }
}

// ---------------------------------------------------------------------------------
// Over loopback
// ---------------------------------------------------------------------------------

struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<xferbench_transports::warp::server::ServerStats>>,
}

impl Running {
    fn start(io: IoModel, bar1: u32) -> Running {
        let mut device = MockConfig::default();
        device.bar_sizes[1] = bar1;
        let server = Server::bind(ServerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            crc: CRC,
            device,
            io,
        })
        .unwrap();
        let addr = server.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let handle = std::thread::spawn(move || server.run(&s).unwrap());
        Running {
            addr,
            stop,
            handle: Some(handle),
        }
    }

    fn stop(mut self) -> xferbench_transports::warp::server::ServerStats {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().unwrap().join().unwrap()
    }
}

fn link_end_to_end(io: IoModel) {
    let server = Running::start(io, 2048);
    let mut link = Link::connect(server.addr, CRC, AckPolicy::Immediate).unwrap();
    let info = link.enumerate().unwrap();
    assert_eq!((info.vendor_id, info.device_id), (1, 2));
    let bar0 = info.bar(0).unwrap();
    let bar1 = info.bar(1).unwrap();
    assert_eq!(
        (bar0.address, bar0.size),
        (0x10_0000, 128),
        "warp-pipe's layout"
    );
    assert_eq!((bar1.address, bar1.size), (0x14_0000, 2048));
    let mut buf = [0u8; 128];
    link.read(bar0.address, &mut buf).unwrap();
    assert_eq!(buf[0], 0x10);
    assert_eq!(buf[127], 0x8F);
    let data: Vec<u8> = (0..2048u32).map(|j| (j + 5) as u8).collect();
    link.write(bar1.address, &data).unwrap();
    let mut back = vec![0u8; 2048];
    link.read(bar1.address, &mut back).unwrap();
    assert_eq!(back, data);
    // A second connection sees the same device memory.
    let mut other = Link::connect(server.addr, CRC, AckPolicy::Piggyback).unwrap();
    let mut part = [0u8; 8];
    other.read(bar1.address + 16, &mut part).unwrap();
    assert_eq!(&part[..], &data[16..24]);
    // A read outside every BAR fails cleanly instead of hanging.
    assert!(other.read(0x7000_0000, &mut part).is_err());
    drop((link, other));
    let stats = server.stop();
    assert_eq!(stats.connections, 2);
    assert_eq!(stats.totals.bad_lcrc + stats.totals.bad_frames, 0);
}

#[test]
fn link_end_to_end_epoll() {
    link_end_to_end(IoModel::Epoll);
}

#[test]
fn link_end_to_end_thread_per_connection() {
    link_end_to_end(IoModel::Threads);
}

#[test]
fn pipeline_keeps_32_reads_in_flight_and_matches_them_by_tag() {
    let server = Running::start(IoModel::Epoll, 32 * 256);
    let info = Link::connect(server.addr, CRC, AckPolicy::Immediate)
        .unwrap()
        .enumerate()
        .unwrap();
    let bar1 = info.bar(1).unwrap();
    let mut pipe = Pipeline::connect(server.addr, CRC).unwrap();
    for tag in 0..32u8 {
        let slice = vec![tag; 256];
        pipe.write(bar1.address + u64::from(tag) * 256, &slice)
            .unwrap();
    }
    for tag in 0..32u8 {
        pipe.read(tag, bar1.address + u64::from(tag) * 256, 256)
            .unwrap();
    }
    assert_eq!(pipe.in_flight(), 32);
    assert!(pipe.read(0, bar1.address, 4).is_err(), "tag 0 is busy");
    let mut seen = [false; 32];
    while pipe.in_flight() > 0 {
        pipe.wait(|tag, data| {
            let data = data.unwrap();
            assert!(
                data.iter().all(|&b| b == tag),
                "tag {tag} got its own slice"
            );
            seen[usize::from(tag)] = true;
        })
        .unwrap();
    }
    assert!(seen.iter().all(|&s| s));
    drop(pipe);
    server.stop();
}

#[test]
fn server_stops_with_idle_clients_connected() {
    for io in [IoModel::Epoll, IoModel::Threads] {
        let server = Running::start(io, 2048);
        let _idle = std::net::TcpStream::connect(server.addr).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        // Returns although the idle client never sends or closes.
        assert_eq!(server.stop().connections, 1);
    }
}
