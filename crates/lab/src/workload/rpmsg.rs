//! The `rpmsg` workload: the semantics of `rpmsg-xmit-p` over an RPMsg link.
//!
//! One thread per channel; each loops `write(packet)` → `read(reply)`. The original
//! runs until a thread has sent a given number of **bytes** (`-t` is bytes per
//! thread), so a run of `t` bytes with `s`-byte packets makes `⌈t/s⌉` round trips per
//! channel ([`RpmsgPoint::round_trips_for`]); `xferbench run -t rpmsg` gives a count of
//! round trips or a duration instead ([`Limit`]).
//!
//! # Two aggregates
//!
//! The original prints the **sum of per-thread rates** (each thread's bytes over its
//! own time). Threads that do not overlap (short runs, staggered starts) each see an
//! idle link, so the sum overstates what the link carried together — the 44 MB/s of
//! the original's 32-channel, 100-byte runs. The rig reports that sum
//! ([`SUM_OF_RATES`]) beside the aggregate over the common window.

use super::spec::Limit;
use crate::axes::CHANNELS;
use crate::result::new_histogram;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use xferbench_params::{ParamError, ParamMap, PointParams, Value};
use xferbench_probes::clock::Stamp;
use xferbench_probes::verify::{self, Integrity, Verifier};
use xferbench_transports::ParamDef;
use xferbench_transports::rpmsg::header::MAX_PAYLOAD;
use xferbench_transports::rpmsg::{
    BUFFERS, Buffers, Channel, ECHO_SUFFIX, LinkConfig, LinkError, NOTIFY, Notify, Service,
};

/// `packet`: bytes per packet (the original's `-s`).
pub const PACKET: ParamDef = ParamDef::message_bytes(
    "packet",
    1,
    MAX_PAYLOAD as u64,
    MAX_PAYLOAD as u64,
    "bytes per packet: one RPMsg buffer of 512 bytes less its 16-byte header at most",
);
/// `transfer`: bytes each channel sends (the original's `-t`).
pub const TRANSFER: ParamDef = ParamDef::bytes(
    "transfer",
    1,
    1 << 40,
    1_000_000,
    "bytes each channel sends",
);

/// The parameters an RPMsg point records, as `rpmsg-xmit-p` takes them: channels,
/// packet size, bytes per channel, notification and buffer modes. `xferbench rpmsg`
/// and the RPMsg study write and read them through this one type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RpmsgParams {
    /// Channels (the original's threads).
    pub channels: u32,
    /// Bytes per packet (`-s`).
    pub packet: usize,
    /// Bytes each channel sends (`-t`).
    pub transfer: u64,
    /// Notification mode.
    pub notify: Notify,
    /// Buffer mode.
    pub buffers: Buffers,
}

impl RpmsgParams {
    /// The parameters of `point` sending `transfer` bytes per channel.
    pub fn of(point: &RpmsgPoint, transfer: u64) -> RpmsgParams {
        RpmsgParams {
            channels: point.channels,
            packet: point.packet,
            transfer,
            notify: point.notify,
            buffers: point.buffers,
        }
    }
}

impl PointParams for RpmsgParams {
    fn definitions() -> Vec<ParamDef> {
        vec![CHANNELS, PACKET, TRANSFER, NOTIFY, BUFFERS]
    }

    fn write(&self, map: &mut ParamMap) {
        map.put(&CHANNELS, &Value::Integer(i64::from(self.channels)));
        map.put(&PACKET, &Value::Bytes(self.packet as u64));
        map.put(&TRANSFER, &Value::Bytes(self.transfer));
        map.put_text(&NOTIFY, self.notify.name());
        map.put_text(&BUFFERS, self.buffers.name());
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        Ok(RpmsgParams {
            channels: u32::try_from(map.integer(&CHANNELS)?).unwrap_or(u32::MAX),
            packet: map.bytes(&PACKET)? as usize,
            transfer: map.bytes(&TRANSFER)?,
            notify: map.choice(&NOTIFY)?,
            buffers: map.choice(&BUFFERS)?,
        })
    }
}

/// The original's aggregate: the sum of per-channel rates, bytes/s.
pub const SUM_OF_RATES: &str = "sum_of_rates_bytes_per_s";
/// Host → remote kicks per round trip.
pub const KICKS_TO_REMOTE: &str = "kicks_to_remote_per_round_trip";
/// Remote → host kicks per round trip.
pub const KICKS_TO_HOST: &str = "kicks_to_host_per_round_trip";
/// Messages the host and the remote rejected as malformed.
pub const LINK_FAULTS: &str = "link_faults";
/// Replies dropped for a full mailbox.
pub const DROPPED_REPLIES: &str = "dropped_replies";

/// One point of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RpmsgPoint {
    /// Channels (threads), each its own endpoint pair.
    pub channels: u32,
    /// Bytes per packet (1..=496).
    pub packet: usize,
    /// How long each channel runs: round trips, or nanoseconds.
    pub limit: Limit,
    /// Notification mode.
    pub notify: Notify,
    /// Buffer mode.
    pub buffers: Buffers,
    /// Whether replies carry the firmware's suffix. The firmware echoes the
    /// payload as a C string, so packets are then text without a NUL (the
    /// sequence number in letters), and every reply is checked to be the packet
    /// followed by the suffix, cut at 496 bytes ([`SuffixCheck`]).
    pub suffix: bool,
    /// Whether payloads are stamped and checked (needs packets ≥ 16 bytes).
    pub verify: bool,
    /// Write each packet in place in its tx buffer and read each reply in place, by
    /// the zero-copy rule of [`xferbench_probes::verify`] (`--zero-copy`; implies
    /// [`Buffers::ZeroCopy`]).
    pub zero_copy: bool,
    /// Open loop (`run load -t rpmsg`): each channel sends its packet `n` at
    /// `n × pace_ns` after its start, and a round trip is timed from that intended
    /// time, not from the previous reply; `None`: back to back, as the original.
    pub pace_ns: Option<u64>,
}

impl RpmsgPoint {
    /// The round trips of `transfer` bytes per channel: ⌈transfer / packet⌉.
    pub fn round_trips_for(transfer: u64, packet: usize) -> u64 {
        transfer.div_ceil(packet.max(1) as u64)
    }

    /// Whether the point can run, and why not.
    pub fn check(&self) -> Result<(), String> {
        if self.packet == 0 || self.packet > MAX_PAYLOAD {
            return Err(format!(
                "packet size {} must be 1 to {MAX_PAYLOAD} bytes (one RPMsg buffer of 512 bytes less its 16-byte header)",
                self.packet
            ));
        }
        if self.verify && self.packet < verify::HEADER_LEN {
            return Err(format!(
                "--verify needs packets of at least {} bytes",
                verify::HEADER_LEN
            ));
        }
        if self.verify && self.suffix {
            return Err("--verify cannot check replies that carry the echo suffix".into());
        }
        if self.channels == 0 {
            return Err("an RPMsg point needs at least one channel".into());
        }
        match self.limit {
            Limit::Count(0) => Err("a run needs at least one round trip".into()),
            Limit::Duration(0) => Err("a run needs a duration above zero".into()),
            _ => Ok(()),
        }
    }

    /// The link configuration the point needs.
    pub fn link_config(&self, service: Service) -> LinkConfig {
        LinkConfig {
            num: 256,
            notify: self.notify,
            channels: self.channels,
            service,
            suffix: self.suffix,
        }
    }
}

/// What one channel did in one run.
#[derive(Debug)]
pub struct ChannelDrive {
    /// First send.
    pub start: Stamp,
    /// Last reply.
    pub end: Stamp,
    /// Round trips completed.
    pub round_trips: u64,
    /// Payload bytes sent.
    pub bytes: u64,
    /// Round-trip latency, nanoseconds.
    pub latency: Histogram<u64>,
    /// What `verify` found in the replies.
    pub integrity: Option<Integrity>,
}

/// Why a channel's loop ended early.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// The link failed (or no reply came in time).
    #[error(transparent)]
    Link(#[from] LinkError),
    /// Another channel failed, or Ctrl-C.
    #[error("stopped")]
    Stopped,
}

/// One channel's loop: write → read until the point's limit, each reply awaited at
/// most `reply_timeout`. `start` is the barrier every channel passes before its
/// first message; `progress` counts round trips for the supervisor.
pub fn drive(
    ch: &mut Channel,
    p: &RpmsgPoint,
    start_gate: impl FnOnce(),
    halt: &AtomicBool,
    progress: &AtomicU64,
    reply_timeout: Duration,
) -> Result<ChannelDrive, DriveError> {
    let mut hist = new_histogram();
    let mut pay = Payloads::new(p);
    ch.set_buffers(if p.zero_copy {
        Buffers::ZeroCopy
    } else {
        p.buffers
    });
    let (max, duration) = match p.limit {
        Limit::Count(n) => (n, None),
        Limit::Duration(ns) => (u64::MAX, Some(Duration::from_nanos(ns))),
    };
    start_gate();
    let start = Stamp::now();
    let began = Instant::now();
    let mut t0 = began;
    let mut seq = 0u64;
    let fail = |e: LinkError| {
        halt.store(true, Ordering::Relaxed);
        DriveError::Link(e)
    };
    while seq < max {
        if seq & 255 == 0 {
            if halt.load(Ordering::Relaxed) {
                return Err(DriveError::Stopped);
            }
            progress.store(seq, Ordering::Relaxed);
        }
        if let Some(gap) = p.pace_ns {
            // Open loop: the packet's intended time, however late the last reply was.
            let due = began + Duration::from_nanos(seq.saturating_mul(gap));
            if duration.is_some_and(|d| due.duration_since(began) >= d) {
                break;
            }
            wait_until(due, halt)?;
            t0 = due;
        }
        if duration.is_some_and(|d| t0.duration_since(began) >= d) {
            break;
        }
        let deadline = Some(t0 + reply_timeout);
        // In place, the reply is read (or checked) where it lies, inside the round
        // trip; copied out, it is read after the clock stops.
        let copied = if p.zero_copy {
            pay.trip_in_place(ch, seq, deadline).map_err(fail)?;
            None
        } else {
            Some(pay.trip_copied(ch, seq, deadline).map_err(fail)?)
        };
        let t1 = Instant::now();
        let _ = hist.record(t1.duration_since(t0).as_nanos() as u64);
        t0 = t1;
        if let Some(n) = copied {
            pay.check_reply(n);
        }
        seq += 1;
    }
    progress.store(seq, Ordering::Relaxed);
    let end = Stamp::now();
    Ok(ChannelDrive {
        start,
        end,
        round_trips: seq,
        bytes: seq * p.packet as u64,
        latency: hist,
        integrity: pay.integrity(seq),
    })
}

/// Waits until `due`: asleep while more than 200 µs are left (at most 20 ms at a
/// time, watching `halt`), spinning for the rest.
fn wait_until(due: Instant, halt: &AtomicBool) -> Result<(), DriveError> {
    loop {
        let now = Instant::now();
        if now >= due {
            return Ok(());
        }
        if halt.load(Ordering::Relaxed) {
            return Err(DriveError::Stopped);
        }
        let left = due - now;
        if left > Duration::from_micros(200) {
            std::thread::sleep((left - Duration::from_micros(200)).min(Duration::from_millis(20)));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// A channel's packets and replies: what it sends, where replies are copied to, and
/// how they are checked (the verify pattern, the firmware's text suffix, or only
/// read).
struct Payloads {
    packet: usize,
    verify: bool,
    scratch: [u8; MAX_PAYLOAD],
    reply: [u8; MAX_PAYLOAD],
    verifier: Option<Verifier>,
    suffixed: Option<SuffixCheck>,
    /// What unchecked replies read, kept from being optimised away.
    sink: u64,
}

impl Payloads {
    fn new(p: &RpmsgPoint) -> Payloads {
        let mut scratch = [0u8; MAX_PAYLOAD];
        verify::fill_pattern(&mut scratch);
        let suffixed = p.suffix.then(|| {
            fill_text(&mut scratch);
            SuffixCheck::new(p.packet)
        });
        Payloads {
            packet: p.packet,
            verify: p.verify,
            scratch,
            reply: [0u8; MAX_PAYLOAD],
            verifier: p.verify.then(Verifier::new),
            suffixed,
            sink: 0,
        }
    }

    /// One round trip in place: the packet written in the link's buffer, the reply
    /// checked or read where it lies.
    #[inline]
    fn trip_in_place(
        &mut self,
        ch: &mut Channel,
        seq: u64,
        deadline: Option<Instant>,
    ) -> Result<(), LinkError> {
        let (suffixed, verify) = (self.suffixed.is_some(), self.verify);
        ch.send_with(
            self.packet,
            &mut self.scratch,
            |m| {
                if suffixed {
                    m.fill(b'a' + (seq % 26) as u8);
                    stamp_text(m, seq);
                } else {
                    verify::write_in_place(m, seq, verify);
                }
            },
            deadline,
        )?;
        let Payloads {
            verifier,
            suffixed,
            sink,
            ..
        } = self;
        ch.recv_in_place(deadline, |m| match (verifier, suffixed) {
            (Some(v), _) => v.check(m),
            (None, Some(c)) => c.check_tail(m),
            (None, None) => *sink ^= verify::read_lines(m),
        })
    }

    /// One round trip copying: the packet copied into the link, the reply copied
    /// out; returns the reply's length.
    #[inline]
    fn trip_copied(
        &mut self,
        ch: &mut Channel,
        seq: u64,
        deadline: Option<Instant>,
    ) -> Result<usize, LinkError> {
        let (suffixed, verify, packet) = (self.suffixed.is_some(), self.verify, self.packet);
        ch.send_with(
            packet,
            &mut self.scratch,
            |m| {
                if suffixed {
                    // In place (zero-copy buffers) the buffer holds an older
                    // message: write the whole text.
                    fill_text(m);
                    stamp_text(m, seq);
                } else {
                    verify::stamp(m, seq, verify);
                }
            },
            deadline,
        )?;
        if suffixed {
            // What was sent, to check the echo against.
            fill_text(&mut self.scratch[..packet]);
            stamp_text(&mut self.scratch[..packet], seq);
        }
        ch.recv(&mut self.reply, deadline)
    }

    /// Checks (or reads) a reply copied out, after the clock stopped.
    #[inline]
    fn check_reply(&mut self, n: usize) {
        let reply = &self.reply[..n];
        match (&mut self.verifier, &mut self.suffixed) {
            (Some(v), _) => v.check(reply),
            (None, Some(c)) => c.check(&self.scratch[..self.packet], reply),
            (None, None) => self.sink = self.sink.wrapping_add(verify::touch(reply)),
        }
    }

    /// What the checks found over `seq` round trips (`None` when nothing was checked).
    fn integrity(self, seq: u64) -> Option<Integrity> {
        std::hint::black_box(self.sink);
        match (self.verifier, self.suffixed) {
            (Some(v), _) => Some(v.finish(Some(seq))),
            (None, Some(c)) => Some(Integrity {
                checked: c.checked,
                corrupt: c.corrupt,
                ..Integrity::default()
            }),
            (None, None) => None,
        }
    }
}

/// Fills a packet buffer with printable text (no NUL, so the firmware's
/// string echo returns all of it).
pub fn fill_text(msg: &mut [u8]) {
    for (i, b) in msg.iter_mut().enumerate() {
        *b = b'0' + (i % 75) as u8;
    }
}

/// Writes `seq` into the first (up to) 8 bytes as letters `a`…`p`, a nibble each:
/// a sequence number without a NUL.
#[inline]
pub fn stamp_text(msg: &mut [u8], seq: u64) {
    for (k, b) in msg.iter_mut().take(8).enumerate() {
        *b = b'a' + ((seq >> (4 * k)) & 15) as u8;
    }
}

/// The check of suffixed echoes: a reply is the packet as sent followed by the
/// firmware's suffix, the whole cut at [`MAX_PAYLOAD`] bytes.
#[derive(Debug, Clone, Copy)]
pub struct SuffixCheck {
    packet: usize,
    expected_len: usize,
    /// Replies checked.
    pub checked: u64,
    /// Replies that were not the packet and the suffix.
    pub corrupt: u64,
}

impl SuffixCheck {
    /// The check of replies to `packet`-byte messages.
    pub fn new(packet: usize) -> SuffixCheck {
        SuffixCheck {
            packet,
            expected_len: (packet + ECHO_SUFFIX.len()).min(MAX_PAYLOAD),
            checked: 0,
            corrupt: 0,
        }
    }

    /// Checks a reply against the packet `sent`.
    #[inline]
    pub fn check(&mut self, sent: &[u8], reply: &[u8]) {
        self.checked += 1;
        let ok = reply.len() == self.expected_len
            && reply[..self.packet] == *sent
            && reply[self.packet..] == ECHO_SUFFIX[..self.expected_len - self.packet];
        self.corrupt += u64::from(!ok);
    }

    /// Checks a reply read in place: its length and its suffix.
    #[inline]
    pub fn check_tail(&mut self, reply: &[u8]) {
        self.checked += 1;
        let ok = reply.len() == self.expected_len
            && reply[self.packet..] == ECHO_SUFFIX[..self.expected_len - self.packet];
        self.corrupt += u64::from(!ok);
    }
}

#[cfg(test)]
mod params_tests {
    use super::*;

    #[test]
    fn an_rpmsg_point_writes_and_reads_itself_through_its_definitions() {
        let p = RpmsgParams {
            channels: 8,
            packet: 496,
            transfer: 1_000_000,
            notify: Notify::Poll,
            buffers: Buffers::ZeroCopy,
        };
        xferbench_params::point::round_trips(&p).unwrap();
        let map = p.to_map();
        let keys: Vec<&str> = map.as_params().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["buffers", "channels", "notify", "packet", "transfer"]
        );
        assert_eq!(map.as_params()["transfer"], "1000000");
    }
}
