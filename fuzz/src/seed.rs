//! The seed inputs of every target: small valid inputs built with the crates' own
//! encoders and constants, in each target's input format.

use crate::Shared;
use std::sync::atomic::Ordering;
use xferbench_probes::cpu::ProcessCpu;
use xferbench_lab::peer::{PeerCommand, PeerReply, PeerSpec};
use xferbench_probes::verify::Integrity;
use xferbench_lab::workload::{ChannelSpec, Limit, ServeOutcome, WorkloadKind};
use xferbench_transports::daq::control::{BLOCK_BYTES, MAGIC as DAQ_MAGIC, VERSION};
use xferbench_transports::kv::wire::{Key, RequestData, RequestPayload, ResponseData};
use xferbench_transports::rpmsg::header::{
    BUF_SIZE, LINK_MAGIC, LINK_VERSION, LinkHeader, MSG_HEADER_LEN, MsgHeader, layout,
};
use xferbench_transports::shm::region::{LAYOUT_VERSION, MAGIC, RegionHeader, page_size};
use xferbench_transports::warp::{
    CrcKind, Dllp, Frame, PcieId, RequestHeader, Tlp, TlpHeader, encode,
};

/// One seed: its file name and bytes.
pub type Seed = (String, Vec<u8>);

/// Every target's seeds, by target name.
pub fn seeds() -> Vec<(&'static str, Vec<Seed>)> {
    vec![
        ("warp_decoder", warp()),
        ("rpmsg_header", rpmsg_header()),
        ("rpmsg_vring", rpmsg_vring()),
        ("shm_region", shm_region()),
        ("shm_ring", shm_ring()),
        ("kv_request", kv_request()),
        ("kv_response", kv_response()),
        ("daq_control", daq_control()),
        ("peer_control", peer_control()),
    ]
}

fn named(prefix: &str, items: impl IntoIterator<Item = Vec<u8>>) -> Vec<Seed> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, b)| (format!("{prefix}-{i}"), b))
        .collect()
}

fn warp() -> Vec<Seed> {
    let req = RequestHeader {
        requester: PcieId::new(0, 0, 0),
        tag: 3,
        first_be: 0xF,
        last_be: 0,
    };
    let frames = [
        vec![Frame::Dllp(Dllp::Ack { seq: 1 })],
        vec![Frame::Tlp(Tlp {
            seq: 1,
            header: TlpHeader::MRd {
                req,
                address: 0x1000,
                length_dw: 1,
            },
            payload: vec![],
        })],
        vec![
            Frame::Tlp(Tlp {
                seq: 2,
                header: TlpHeader::MWr {
                    req,
                    address: 0x2000,
                },
                payload: (0..16).collect(),
            }),
            Frame::Dllp(Dllp::Nak { seq: 2 }),
        ],
    ];
    let mut out = Vec::new();
    for (i, fs) in frames.iter().enumerate() {
        let mut b = Vec::new();
        for f in fs {
            encode(f, CrcKind::Table, &mut b).expect("seed frames encode");
        }
        out.push((format!("frames-{i}"), b));
    }
    out
}

fn bytes_of<T>(s: &Shared<T>) -> Vec<u8> {
    s.bytes().to_vec()
}

fn rpmsg_header() -> Vec<Seed> {
    let mut seeds = Vec::new();
    for (num, len) in [(4u32, 16u16), (256, 496)] {
        let msg = MsgHeader {
            src: 0x400,
            dst: 0x35,
            reserved: 0,
            len,
            flags: 0,
        };
        // SAFETY: a LinkHeader is integers and atomics only.
        let mut link = unsafe { Shared::<LinkHeader>::from_bytes(&[]) };
        let (tx, rx, buf, total) = layout(num);
        let l = link.get_mut();
        l.version = LINK_VERSION;
        l.header_len = size_of::<LinkHeader>() as u32;
        l.num = num;
        l.buf_size = BUF_SIZE as u32;
        l.buf_count = 2 * num;
        l.tx_offset = tx;
        l.rx_offset = rx;
        l.buf_offset = buf;
        l.area_len = total;
        l.ept_base = 0x400;
        l.ept_count = 1;
        l.magic.store(LINK_MAGIC, Ordering::Release);
        let mut b = msg.encode().to_vec();
        b.extend_from_slice(&(MSG_HEADER_LEN as u32 + u32::from(len)).to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(&bytes_of(&link));
        seeds.push(b);
    }
    named("link", seeds)
}

fn rpmsg_vring() -> Vec<Seed> {
    // Ring size byte, then operations (see the target): offer, publish, take,
    // return, publish, take back; a full ring; and an index wrap of a 2-entry ring.
    let round = [0u8, 16, 1, 2, 3, 16, 4, 5];
    let mut full = vec![2u8];
    for _ in 0..8 {
        full.extend_from_slice(&[0, 32]);
    }
    full.push(1);
    for _ in 0..8 {
        full.extend_from_slice(&[2, 3, 64]);
    }
    full.push(4);
    full.extend(std::iter::repeat_n(5, 8));
    let mut wrap = vec![0u8];
    for _ in 0..300 {
        wrap.extend_from_slice(&round);
    }
    let mut one = vec![1u8];
    one.extend_from_slice(&round);
    named("ops", [one, full, wrap])
}

fn shm_region() -> Vec<Seed> {
    let page = page_size();
    let mut seeds = Vec::new();
    for (cap, mode) in [(page, 0u32), (16 * page, 1), (1 << 20, 2)] {
        // SAFETY: a RegionHeader is integers and atomics only.
        let mut header = unsafe { Shared::<RegionHeader>::from_bytes(&[]) };
        let data_offset = size_of::<RegionHeader>().div_ceil(page) * page;
        let total = (data_offset + 2 * cap) as u64;
        let h = header.get_mut();
        h.version = LAYOUT_VERSION;
        h.header_len = size_of::<RegionHeader>() as u32;
        h.total_len = total;
        h.ring_capacity = cap as u64;
        h.data_offset = data_offset as u64;
        h.creator_pid = 1;
        h.wait_mode = mode;
        h.magic.store(MAGIC, Ordering::Release);
        let mut b = total.to_le_bytes().to_vec();
        b.extend_from_slice(&mode.to_le_bytes());
        b.extend_from_slice(&bytes_of(&header));
        seeds.push(b);
    }
    named("region", seeds)
}

fn shm_ring() -> Vec<Seed> {
    // Capacity byte, then operations: write/read in steps that wrap the ring, fill it
    // completely, and read it empty.
    let mut wrap = vec![0u8];
    for n in [3u8, 2, 4, 1, 4, 4, 2, 3] {
        wrap.extend_from_slice(&[0, n, 1, n]);
    }
    let full = vec![2u8, 0, 255, 0, 1, 1, 255, 0, 7, 1, 3];
    named("ops", [wrap, full])
}

fn kv_request() -> Vec<Seed> {
    let key = Key::new(b"user:42").expect("short key");
    [
        RequestPayload::insert(key, 7),
        RequestPayload::read_bucket(key),
        RequestPayload::delete(key),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, payload)| {
        let r = RequestData {
            client_id: 1,
            request_id: i as u32,
            payload,
        };
        (format!("request-{i}"), r.to_bytes().to_vec())
    })
    .collect()
}

fn kv_response() -> Vec<Seed> {
    let mut plain = ResponseData {
        client_id: 1,
        request_id: 2,
        ..ResponseData::default()
    };
    plain
        .payload
        .set_plain(xferbench_transports::kv::wire::Reply::Inserted);
    let mut bucket = plain;
    bucket.payload.begin_bucket();
    for i in 0..3u32 {
        bucket.payload.push(format!("key{i}").as_bytes(), i);
    }
    named(
        "response",
        [plain.to_bytes().to_vec(), bucket.to_bytes().to_vec()],
    )
}

fn daq_control() -> Vec<Seed> {
    let mut seeds = Vec::new();
    for (board, samples, last, status, acq) in
        [(0u32, 1000u64, 0u64, 0u32, 0u64), (3, 65536, 4, 3, 5)]
    {
        let mut b = board.to_le_bytes().to_vec();
        b.extend_from_slice(&samples.to_le_bytes());
        b.extend_from_slice(&last.to_le_bytes());
        let mut blk = [0u8; BLOCK_BYTES];
        blk[0..4].copy_from_slice(&DAQ_MAGIC.to_le_bytes());
        blk[4..8].copy_from_slice(&VERSION.to_le_bytes());
        blk[8..12].copy_from_slice(&status.to_le_bytes());
        blk[12..16].copy_from_slice(&board.to_le_bytes());
        blk[16..24].copy_from_slice(&acq.to_le_bytes());
        blk[24..32].copy_from_slice(&samples.to_le_bytes());
        b.extend_from_slice(&blk);
        seeds.push(b);
    }
    named("block", seeds)
}

fn peer_control() -> Vec<Seed> {
    let spec = PeerSpec {
        channel: 1,
        transport: "shm".into(),
        transport_params: [("wait".to_string(), "spin".to_string())]
            .into_iter()
            .collect(),
        spec: ChannelSpec {
            workload: WorkloadKind::Pingpong,
            size: 64,
            limit: Limit::Count(1000),
            verify: true,
            corrupt_every: None,
            zero_copy: false,
            touch: Default::default(),
            load: None,
            params: Default::default(),
        },
        pin_cpu: Some(1),
        plugin_sha256: None,
    };
    let commands = [
        PeerCommand::Hello(spec),
        PeerCommand::Run {
            address: "/xferbench-u0-p1-2-3".into(),
        },
        PeerCommand::Quit,
    ];
    let replies = [
        PeerReply::Ready,
        PeerReply::Done {
            outcome: ServeOutcome {
                end: xferbench_probes::clock::Stamp(123_456_789),
                received: 1000,
                next_expected: 1000,
                integrity: Some(Integrity {
                    checked: 1000,
                    lost: 0,
                    duplicated: 0,
                    reordered: 0,
                    corrupt: 0,
                }),
                latency: None,
            },
            cpu: Some(ProcessCpu {
                role: "peer 1".into(),
                pid: 4242,
                window_s: 0.25,
                user_s: 0.125,
                sys_s: 0.0625,
                cpus_utilised: 0.75,
                voluntary_switches: 3,
                involuntary_switches: 1,
                runqueue_wait_s: None,
            }),
        },
        PeerReply::Failed {
            message: "connect: refused".into(),
        },
    ];
    let mut session = String::new();
    for c in &commands {
        session.push_str(&c.to_line());
        session.push('\n');
    }
    let mut answers = String::new();
    for r in &replies {
        answers.push_str(&r.to_line());
        answers.push('\n');
    }
    named("lines", [session.into_bytes(), answers.into_bytes()])
}
