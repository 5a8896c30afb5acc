//! The remote side: attaches to the host's link, validates it, and runs ONE service
//! loop, like the firmware: take every offered tx buffer, validate it, dispatch by
//! destination address to the endpoint's service, give the buffer back; sleep on the
//! doorbell (or poll) when there is nothing to do.
//!
//! Services (one per endpoint, all endpoints the same):
//!
//! * `echo` replies at once (the firmware's ISR echo). With the suffix option it
//!   treats the payload as a C string and appends `" => echo from Core1\n"`, so
//!   replies differ in length from requests, as in the original.
//! * `echo-hold` holds up to 16 buffers (rpmsg-lite's `RL_HOLD`) and answers them
//!   from the idle loop, upper-cased, like the firmware's echo-cap.
//!
//! Every descriptor index, address, length and header field read from shared memory
//! is checked; a bad one is counted in the link header's fault counters and the
//! message skipped (its buffer returned when its index is valid). Only an avail index
//! that jumps by more than the ring size ends the loop, as a corrupt link.

use super::doorbell::{WaitEnd, ring_bell, wait_bell};
use super::error::LinkError;
use super::header::{BUF_SIZE, Fault, Faults, LinkHeader, MAX_PAYLOAD, MSG_HEADER_LEN, MsgHeader};
use super::link::region_code;
use super::params::Notify;
use super::service::{ECHO_SUFFIX, Service};
use super::vring::{Device, Vring, need_event};
use crate::shm::region::Region;
use std::collections::VecDeque;
use std::sync::atomic::{Ordering, fence};

/// How many buffers `echo-hold` keeps before it must answer the oldest.
pub const HOLD_CAPACITY: usize = 16;

/// What the remote did, read at the end of its loop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemoteStats {
    /// Messages delivered to services.
    pub messages: u64,
    /// Notifications sent to the host.
    pub kicks: u64,
    /// Rejected input.
    pub faults: Faults,
}

/// A message [`RemoteLink::recv`] received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteMessage {
    /// The remote endpoint it was addressed to (0-based).
    pub ept: u32,
    /// Its whole payload length (bytes beyond the caller's buffer were cut).
    pub len: usize,
    /// Its header flags.
    pub flags: u16,
}

#[derive(Debug, Clone, Copy)]
struct Held {
    id: u16,
    used_len: u32,
    from: u32,
    to: u32,
    len: usize,
    /// The tx buffer, validated when the descriptor was taken.
    buf: *mut u8,
    /// The header's flags.
    flags: u16,
}

/// The remote end of a link.
pub struct RemoteLink {
    /// First, so it is dropped (off the nudger's list) before the region is unmapped.
    _nudge: super::doorbell::Nudge,
    _region: Region,
    base: *mut u8,
    num: usize,
    buf_offset: u64,
    notify: Notify,
    service: Service,
    suffix: bool,
    ept_base: u32,
    ept_count: u32,
    /// The host's pid, or 0 when it is this process (not watched).
    host_pid: i32,
    tx: Device,
    rx: Device,
    held: VecDeque<Held>,
}

// SAFETY: `base` points into the mapping owned by `_region`, which moves with the
// struct; the remote is used by one thread at a time.
unsafe impl Send for RemoteLink {}

impl std::fmt::Debug for RemoteLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteLink")
            .field("num", &self.num)
            .field("notify", &self.notify)
            .field("service", &self.service)
            .finish()
    }
}

enum Reply {
    Echo,
    Upper,
}

impl RemoteLink {
    /// Attaches to the link in region `name`, validating both headers, and publishes
    /// this process's pid.
    pub fn attach(name: &str) -> Result<RemoteLink, LinkError> {
        let region = Region::attach(name, region_code())?;
        let area = region.data(0);
        let base = area.base();
        let area_len = area.capacity() as u64;
        if (area_len as usize) < std::mem::size_of::<LinkHeader>() {
            return Err(super::header::LinkHeaderError::Size(format!(
                "area of {area_len} bytes cannot hold the link header"
            ))
            .into());
        }
        // SAFETY: the area is mapped, at least a header long (checked), page aligned;
        // every field is read as it is and validated before use.
        let h = unsafe { &*base.cast::<LinkHeader>() };
        let magic = h.magic.load(Ordering::Acquire);
        h.validate(magic, area_len)?;
        let bad = |m: String| LinkError::Header(super::header::LinkHeaderError::Size(m));
        let notify = Notify::from_code(h.notify)
            .ok_or_else(|| bad(format!("unknown notification code {}", h.notify)))?;
        let service = Service::from_code(h.service)
            .ok_or_else(|| bad(format!("unknown service code {}", h.service)))?;
        let num = h.num as usize;
        // SAFETY: validate() checked that both rings lie inside the mapped area at the
        // offsets the layout requires; the region outlives the Vrings (same struct).
        let (tx, rx) = unsafe {
            (
                Vring::new(base.add(h.tx_offset as usize), num),
                Vring::new(base.add(h.rx_offset as usize), num),
            )
        };
        // SAFETY: the remote doorbell lies in the mapping owned by `region`, which
        // `RemoteLink` drops after the guard (field order); validate() checked the
        // header fits the mapping.
        let nudge = unsafe {
            super::doorbell::Nudge::register(&(*base.cast::<LinkHeader>()).remote_bell.0.futex)
        };
        let link = RemoteLink {
            _nudge: nudge,
            base,
            num,
            buf_offset: h.buf_offset,
            notify,
            service,
            suffix: h.suffix != 0,
            ept_base: h.ept_base,
            ept_count: h.ept_count,
            host_pid: super::doorbell::watch_pid(h.host_pid as i32),
            tx: Device::new(tx),
            rx: Device::new(rx),
            held: VecDeque::with_capacity(HOLD_CAPACITY),
            _region: region,
        };
        link.hdr()
            .remote_pid
            .store(std::process::id(), Ordering::Release);
        Ok(link)
    }

    #[inline]
    fn hdr(&self) -> &LinkHeader {
        // SAFETY: validated in attach; the mapping lives as long as self.
        unsafe { &*self.base.cast::<LinkHeader>() }
    }

    #[inline]
    fn stopped(&self) -> bool {
        self.hdr().stop.0.load(Ordering::Acquire) != 0
    }

    fn stats(&self) -> RemoteStats {
        let h = self.hdr();
        RemoteStats {
            messages: h.remote_msgs.0.load(Ordering::Relaxed),
            kicks: h.remote_kicks.0.load(Ordering::Relaxed),
            faults: h.remote_faults.0.get(),
        }
    }

    fn fault(&self, f: Fault) {
        self.hdr().remote_faults.0.count(f);
    }

    fn gone(&self, e: WaitEnd) -> LinkError {
        match e {
            WaitEnd::PeerGone(pid) => LinkError::PeerGone { role: "host", pid },
            WaitEnd::Timeout => LinkError::Stopped,
        }
    }

    /// Pool buffer `i`, if `addr`/`len` describe exactly one buffer of `range`.
    #[inline]
    fn buffer(&self, addr: u64, range: std::ops::Range<usize>) -> Result<*mut u8, Fault> {
        let off = addr.checked_sub(self.buf_offset).ok_or(Fault::BadAddress)?;
        if off % BUF_SIZE as u64 != 0 {
            return Err(Fault::BadAddress);
        }
        let i = usize::try_from(off / BUF_SIZE as u64).map_err(|_| Fault::BadAddress)?;
        if !range.contains(&i) {
            return Err(Fault::BadAddress);
        }
        // SAFETY: buffer i of the pool lies inside the validated area.
        Ok(unsafe { self.base.add(self.buf_offset as usize + i * BUF_SIZE) })
    }

    /// Runs the service loop until the host stops it or goes away.
    pub fn serve(&mut self) -> Result<RemoteStats, LinkError> {
        loop {
            if self.stopped() {
                return Ok(self.stats());
            }
            let mut worked = false;
            loop {
                match self.tx.next_avail() {
                    Ok(None) => break,
                    Ok(Some((id, addr, len, _))) => {
                        worked = true;
                        self.handle(id, addr, len)?;
                    }
                    Err(Fault::BadIndex) => {
                        self.fault(Fault::BadIndex);
                        return Err(LinkError::Corrupt {
                            ring: "tx",
                            fault: Fault::BadIndex,
                        });
                    }
                    Err(f) => {
                        worked = true;
                        self.fault(f);
                    }
                }
            }
            if !self.held.is_empty() {
                while let Some(h) = self.held.pop_front() {
                    self.reply(h, Reply::Upper)?;
                }
                worked = true;
            }
            if worked {
                continue;
            }
            self.wait_for_host()?;
        }
    }

    /// Sleeps until the host offers a message or stops (bounded by the host's
    /// liveness: a host that dies ends the wait with an error).
    fn wait_for_host(&self) -> Result<(), LinkError> {
        self.wait_for_avail(&self.tx)
    }

    /// Sleeps until the host makes a descriptor of `ring` available or stops.
    fn wait_for_avail(&self, ring: &Device) -> Result<(), LinkError> {
        let hdr = self.hdr();
        wait_bell(
            &hdr.remote_bell.0,
            self.notify,
            self.host_pid,
            None,
            || ring.arm_avail_event(),
            || ring.avail_pending() || hdr.stop.0.load(Ordering::Relaxed) != 0,
        )
        .map_err(|e| self.gone(e))
    }

    /// Receives the next message the host sent, one at a time, instead of
    /// [`RemoteLink::serve`] (do not mix the two on one link): copies at most
    /// `out.len()` payload bytes and gives the tx buffer back at once. Invalid
    /// buffers are counted and skipped as in the service loop. Waits without a
    /// deadline for a message, a stop ([`LinkError::Stopped`], once everything sent
    /// before it was received) or the death of a host in another process.
    pub fn recv(&mut self, out: &mut [u8]) -> Result<RemoteMessage, LinkError> {
        loop {
            match self.tx.next_avail() {
                Ok(Some((id, addr, len, _))) => {
                    let m = match self.take(id, addr, len) {
                        Ok(m) => m,
                        Err(f) => {
                            self.fault(f);
                            self.tx.push_used(id, 0);
                            let (old, new) = self.tx.publish();
                            self.notify_returned(old, new);
                            continue;
                        }
                    };
                    let n = m.len.min(out.len());
                    // SAFETY: `m.buf` is a validated tx buffer we hold until it is
                    // returned below; its payload follows the header, m.len ≤ 496.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            m.buf.add(MSG_HEADER_LEN),
                            out.as_mut_ptr(),
                            n,
                        )
                    };
                    self.hdr().remote_msgs.0.fetch_add(1, Ordering::Relaxed);
                    self.tx.push_used(m.id, m.used_len);
                    let (old, new) = self.tx.publish();
                    self.notify_returned(old, new);
                    return Ok(RemoteMessage {
                        ept: m.to.wrapping_sub(self.ept_base),
                        len: m.len,
                        flags: m.flags,
                    });
                }
                Ok(None) => {
                    // Acquire: a host that stopped published its last messages first.
                    if self.hdr().stop.0.load(Ordering::Acquire) != 0 && !self.tx.avail_pending() {
                        return Err(LinkError::Stopped);
                    }
                    self.wait_for_host()?;
                }
                Err(Fault::BadIndex) => {
                    self.fault(Fault::BadIndex);
                    return Err(LinkError::Corrupt {
                        ring: "tx",
                        fault: Fault::BadIndex,
                    });
                }
                Err(f) => self.fault(f),
            }
        }
    }

    /// Sends `payload` (≤ 496 bytes) with header `flags` from endpoint `ept`
    /// (0-based, address `ept_base + ept`) to the host endpoint of the same number,
    /// in the next rx buffer the host offered, waiting for one if none is (without a
    /// deadline; a stop or a dead host ends the wait). Not to be mixed with
    /// [`RemoteLink::serve`].
    pub fn send(&mut self, ept: u32, payload: &[u8], flags: u16) -> Result<(), LinkError> {
        if payload.len() > MAX_PAYLOAD {
            return Err(LinkError::TooLong(payload.len()));
        }
        if ept >= self.ept_count {
            return Err(LinkError::Config(format!(
                "remote endpoint {ept} of {}",
                self.ept_count
            )));
        }
        if self.stopped() {
            return Err(LinkError::Stopped);
        }
        let (rid, out) = self.rx_buffer()?;
        let h = MsgHeader {
            src: self.ept_base + ept,
            dst: super::link::HOST_EPT_BASE + ept,
            reserved: 0,
            len: payload.len() as u16,
            flags,
        };
        // SAFETY: `out` is a validated 512-byte rx buffer the host offered and we
        // took; the header and at most 496 payload bytes fit it.
        unsafe {
            std::ptr::copy_nonoverlapping(h.encode().as_ptr(), out, MSG_HEADER_LEN);
            std::ptr::copy_nonoverlapping(payload.as_ptr(), out.add(MSG_HEADER_LEN), payload.len());
        }
        self.rx
            .push_used(rid, (MSG_HEADER_LEN + payload.len()) as u32);
        let (old, new) = self.rx.publish();
        match self.notify {
            Notify::Kick => self.kick(),
            Notify::EventIdx => {
                fence(Ordering::SeqCst);
                if need_event(
                    self.rx.ring().used_event().load(Ordering::Relaxed),
                    new,
                    old,
                ) {
                    self.kick();
                }
            }
            Notify::Poll => {}
        }
        Ok(())
    }

    /// Tells the host that this remote is gone: sets the link's stop flag (after
    /// everything published so far, Release) and rings both doorbells, so that the
    /// host's waits end and its sends fail instead of waiting for a remote that will
    /// never take another buffer.
    pub fn hang_up(&self) {
        let h = self.hdr();
        h.stop.0.store(1, Ordering::Release);
        ring_bell(&h.host_bell.0);
        ring_bell(&h.remote_bell.0);
    }

    /// Validates one offered tx buffer: a buffer of the tx half of the pool, a length
    /// that holds the header and fits the buffer, a header whose payload fits both,
    /// and a destination among this remote's endpoints.
    fn take(&self, id: u16, addr: u64, len: u32) -> Result<Held, Fault> {
        let buf = self.buffer(addr, 0..self.num)?;
        if !(MSG_HEADER_LEN as u32..=BUF_SIZE as u32).contains(&len) {
            return Err(Fault::BadLength);
        }
        let mut raw = [0u8; MSG_HEADER_LEN];
        // SAFETY: a validated 512-byte tx buffer.
        unsafe { std::ptr::copy_nonoverlapping(buf, raw.as_mut_ptr(), MSG_HEADER_LEN) };
        let h = MsgHeader::decode(&raw);
        let n = h.check(len as usize)?;
        if h.dst.wrapping_sub(self.ept_base) >= self.ept_count {
            return Err(Fault::UnknownDst);
        }
        Ok(Held {
            buf,
            id,
            used_len: len,
            from: h.src,
            to: h.dst,
            len: n,
            flags: h.flags,
        })
    }

    /// One offered tx buffer.
    fn handle(&mut self, id: u16, addr: u64, len: u32) -> Result<(), LinkError> {
        let checked = self.take(id, addr, len);
        let msg = match checked {
            Ok(m) => m,
            Err(f) => {
                self.fault(f);
                self.tx.push_used(id, 0);
                let (old, new) = self.tx.publish();
                self.notify_returned(old, new);
                return Ok(());
            }
        };
        self.hdr().remote_msgs.0.fetch_add(1, Ordering::Relaxed);
        match self.service {
            Service::Echo => self.reply(msg, Reply::Echo),
            Service::EchoHold => {
                if self.held.len() == HOLD_CAPACITY {
                    let oldest = self.held.pop_front().expect("full");
                    self.reply(oldest, Reply::Upper)?;
                }
                self.held.push_back(msg);
                Ok(())
            }
        }
    }

    /// Notifies the host of returned tx buffers if it asked (waiting for a buffer).
    fn notify_returned(&self, old: u16, new: u16) {
        if self.notify == Notify::Poll {
            return;
        }
        fence(Ordering::SeqCst);
        if need_event(
            self.tx.ring().used_event().load(Ordering::Relaxed),
            new,
            old,
        ) {
            self.kick();
        }
    }

    fn kick(&self) {
        let h = self.hdr();
        h.remote_kicks.0.fetch_add(1, Ordering::Relaxed);
        ring_bell(&h.host_bell.0);
    }

    /// An empty rx buffer from the host, waiting for one if none is offered.
    fn rx_buffer(&mut self) -> Result<(u16, *mut u8), LinkError> {
        loop {
            match self.rx.next_avail() {
                Ok(Some((id, addr, len, _))) => {
                    match self.buffer(addr, self.num..2 * self.num) {
                        Ok(_) if (len as usize) < BUF_SIZE => self.fault(Fault::BadLength),
                        Ok(p) => return Ok((id, p)),
                        Err(f) => self.fault(f),
                    }
                    // Give the unusable descriptor back empty; the host counts it.
                    self.rx.push_used(id, 0);
                    self.rx.publish();
                }
                Ok(None) => {
                    self.wait_for_avail(&self.rx)?;
                    if self.stopped() && !self.rx.avail_pending() {
                        return Err(LinkError::Stopped);
                    }
                }
                Err(Fault::BadIndex) => {
                    self.fault(Fault::BadIndex);
                    return Err(LinkError::Corrupt {
                        ring: "rx",
                        fault: Fault::BadIndex,
                    });
                }
                Err(f) => self.fault(f),
            }
        }
    }

    /// Answers `m` and gives its tx buffer back.
    fn reply(&mut self, m: Held, how: Reply) -> Result<(), LinkError> {
        let (rid, out) = match self.rx_buffer() {
            Ok(b) => b,
            Err(LinkError::Stopped) => return Ok(()),
            Err(e) => return Err(e),
        };
        let src = m.buf;
        // SAFETY: `src` (a tx buffer we hold) and `out` (an rx buffer we took) are
        // distinct validated 512-byte buffers; m.len ≤ 496.
        let n = unsafe {
            let payload = src.add(MSG_HEADER_LEN);
            let dst = out.add(MSG_HEADER_LEN);
            match how {
                Reply::Echo if self.suffix => {
                    let text = std::slice::from_raw_parts(payload, m.len);
                    let s = text.iter().position(|&b| b == 0).unwrap_or(m.len);
                    std::ptr::copy_nonoverlapping(payload, dst, s);
                    let extra = ECHO_SUFFIX.len().min(MAX_PAYLOAD - s);
                    std::ptr::copy_nonoverlapping(ECHO_SUFFIX.as_ptr(), dst.add(s), extra);
                    s + extra
                }
                Reply::Echo => {
                    std::ptr::copy_nonoverlapping(payload, dst, m.len);
                    m.len
                }
                Reply::Upper => {
                    std::ptr::copy_nonoverlapping(payload, dst, m.len);
                    std::slice::from_raw_parts_mut(dst, m.len).make_ascii_uppercase();
                    m.len
                }
            }
        };
        let h = MsgHeader {
            src: m.to,
            dst: m.from,
            reserved: 0,
            len: n as u16,
            flags: 0,
        };
        // SAFETY: the header area of our rx buffer.
        unsafe { std::ptr::copy_nonoverlapping(h.encode().as_ptr(), out, MSG_HEADER_LEN) };
        self.tx.push_used(m.id, m.used_len);
        let (told, tnew) = self.tx.publish();
        self.rx.push_used(rid, (MSG_HEADER_LEN + n) as u32);
        let (rold, rnew) = self.rx.publish();
        match self.notify {
            Notify::Kick => self.kick(),
            Notify::EventIdx => {
                fence(Ordering::SeqCst);
                let want_rx = need_event(
                    self.rx.ring().used_event().load(Ordering::Relaxed),
                    rnew,
                    rold,
                );
                let want_tx = need_event(
                    self.tx.ring().used_event().load(Ordering::Relaxed),
                    tnew,
                    told,
                );
                if want_rx || want_tx {
                    self.kick();
                }
            }
            Notify::Poll => {}
        }
        Ok(())
    }
}
