//! The host side of an RPMsg link: [`HostLink`] creates the shared area, offers the rx
//! buffers, waits for the remote and hands out the [`Channel`]s (one local endpoint
//! each, talking to one remote endpoint) that are multiplexed over the single vring
//! pair.
//!
//! The parts live next door: the state they all hold (`Shared`) in `shared.rs`, the
//! per-channel endpoint and the shared tx path in `channel.rs`, the rx
//! leader/follower demultiplexer in `demux.rs`, and each channel's mailbox of
//! received replies in `mailbox.rs`.
//!
//! # Invariants
//!
//! * The pool holds `2·num` buffers: tx buffers `0..num` (descriptor `i` of the tx
//!   ring is always buffer `i`) and rx buffers `num..2·num` (descriptor `i` of the rx
//!   ring is always buffer `num + i`).
//! * Every rx buffer is offered to the remote at creation, and the rx leader
//!   re-offers each one it takes back, so the remote never runs out of rx buffers
//!   while the host is receiving.
//! * The host writes every plain link-header field before it stores the magic
//!   (Release); the remote validates them all on attach.

use super::doorbell::ring_bell;
use super::error::LinkError;
use super::header::{
    BUF_SIZE, FaultCounters, Faults, LINK_MAGIC, LINK_VERSION, LinkHeader, layout,
};
use super::mailbox::Mailbox;
use super::params::Notify;
use super::service::Service;
use super::shared::{Shared, TryLock};
use super::vring::{DESC_F_WRITE, Driver, Vring};
use crate::shm::region::Region;
use crate::shm::wait::WaitMode;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use super::channel::{Channel, TxBuf};

pub use super::shared::{HOST_EPT_BASE, REMOTE_EPT_BASE};

/// The shape of a link, fixed when the host creates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkConfig {
    /// Entries per vring (power of two, 2..=4096; default 256).
    pub num: u32,
    /// Notification mode.
    pub notify: Notify,
    /// Channels (host endpoints, each paired with one remote endpoint).
    pub channels: u32,
    /// The remote endpoints' service.
    pub service: Service,
    /// Whether echo appends the firmware's suffix.
    pub suffix: bool,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            num: 256,
            notify: Notify::Kick,
            channels: 1,
            service: Service::Echo,
            suffix: false,
        }
    }
}

/// The region wait code both sides pass (the RPMsg link has its own doorbells).
pub(crate) fn region_code() -> u32 {
    WaitMode::Block.code()
}

/// Bytes of the region data area for a link of `num` entries.
fn area_capacity(num: u32) -> usize {
    let need = layout(num).3 as usize;
    need.next_power_of_two()
        .max(crate::shm::region::page_size())
}

/// The host side of a link. Dropping it stops the remote's service loop.
pub struct HostLink {
    shared: Arc<Shared>,
    channels_taken: bool,
}

impl std::fmt::Debug for HostLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostLink")
            .field("num", &self.shared.num)
            .field("notify", &self.shared.notify)
            .field("channels", &self.shared.mailboxes.len())
            .finish()
    }
}

impl HostLink {
    /// Creates the region and the link in it, and offers every rx buffer.
    pub fn create(cfg: &LinkConfig) -> Result<HostLink, LinkError> {
        if !cfg.num.is_power_of_two() || !(2..=super::header::MAX_VRING).contains(&cfg.num) {
            return Err(LinkError::Config(format!(
                "vring size {} is not a power of two in 2..={}",
                cfg.num,
                super::header::MAX_VRING
            )));
        }
        if cfg.channels == 0 || cfg.channels > 1024 {
            return Err(LinkError::Config(format!(
                "{} channels; 1 to 1024 are supported",
                cfg.channels
            )));
        }
        let region = Region::create(area_capacity(cfg.num), region_code())?;
        let base = region.data(0).base();
        let (tx_off, rx_off, buf_off, total) = layout(cfg.num);
        let h = base.cast::<LinkHeader>();
        // SAFETY: the area is freshly created, zeroed and at least `total` bytes
        // (area_capacity); nobody else has attached yet (the remote is started after
        // this returns). Plain fields are written before the magic (Release).
        unsafe {
            (&raw mut (*h).version).write(LINK_VERSION);
            (&raw mut (*h).header_len).write(std::mem::size_of::<LinkHeader>() as u32);
            (&raw mut (*h).num).write(cfg.num);
            (&raw mut (*h).buf_size).write(BUF_SIZE as u32);
            (&raw mut (*h).buf_count).write(2 * cfg.num);
            (&raw mut (*h).notify).write(cfg.notify.code());
            (&raw mut (*h).tx_offset).write(tx_off);
            (&raw mut (*h).rx_offset).write(rx_off);
            (&raw mut (*h).buf_offset).write(buf_off);
            (&raw mut (*h).area_len).write(total);
            (&raw mut (*h).ept_base).write(REMOTE_EPT_BASE);
            (&raw mut (*h).ept_count).write(cfg.channels);
            (&raw mut (*h).service).write(cfg.service.code());
            (&raw mut (*h).suffix).write(u32::from(cfg.suffix));
            (&raw mut (*h).host_pid).write(std::process::id());
        }
        let num = cfg.num as usize;
        // SAFETY: both rings lie inside the area at page-aligned offsets computed by
        // `layout`, and the area outlives `Shared`, which holds every copy.
        let (tx_ring, rx_ring) = unsafe {
            (
                Vring::new(base.add(tx_off as usize), num),
                Vring::new(base.add(rx_off as usize), num),
            )
        };
        // SAFETY: the host doorbell lies in the mapping owned by `region`, which
        // `Shared` drops after the guard (field order).
        let nudge = unsafe {
            super::doorbell::Nudge::register(&(*base.cast::<LinkHeader>()).host_bell.0.futex)
        };
        let shared = Shared {
            _nudge: nudge,
            region: Mutex::new(region),
            base,
            num,
            buf_offset: buf_off,
            notify: cfg.notify,
            tx_ring,
            rx_ring,
            tx: Mutex::new(Driver::new(tx_ring)),
            rx: TryLock::new(Driver::new(rx_ring)),
            mailboxes: (0..cfg.channels).map(|_| Mailbox::new()).collect(),
            remote_pid: AtomicI32::new(0),
            watch_pid: AtomicI32::new(0),
            faults: FaultCounters::default(),
            dropped: AtomicU64::new(0),
            kicks: AtomicU64::new(0),
            backpressure: AtomicBool::new(false),
        };
        {
            let mut rx = shared.rx.try_lock().expect("nobody else has the link yet");
            while let Some(id) = rx.take_free() {
                rx.add(
                    id,
                    shared.addr(num + usize::from(id)),
                    BUF_SIZE as u32,
                    DESC_F_WRITE,
                );
            }
            rx.publish();
        }
        shared.hdr().magic.store(LINK_MAGIC, Ordering::Release);
        Ok(HostLink {
            shared: Arc::new(shared),
            channels_taken: false,
        })
    }

    /// The region name the remote attaches to (until it has attached).
    pub fn name(&self) -> Option<String> {
        let r = self.shared.region.lock().unwrap_or_else(|e| e.into_inner());
        r.name().map(str::to_owned)
    }

    /// Waits until the remote attached, then unlinks the name. `check` is asked every
    /// millisecond whether the remote is still coming (`Err(message)` if not, for
    /// example because its process exited).
    pub fn wait_attached(
        &self,
        timeout: Duration,
        mut check: impl FnMut() -> Result<(), String>,
    ) -> Result<(), LinkError> {
        let start = Instant::now();
        loop {
            let pid = self.shared.hdr().remote_pid.load(Ordering::Acquire);
            if pid != 0 {
                self.shared.remote_pid.store(pid as i32, Ordering::Relaxed);
                self.shared
                    .watch_pid
                    .store(super::doorbell::watch_pid(pid as i32), Ordering::Relaxed);
                let mut r = self.shared.region.lock().unwrap_or_else(|e| e.into_inner());
                r.unlink();
                return Ok(());
            }
            check().map_err(LinkError::Config)?;
            if start.elapsed() >= timeout {
                return Err(LinkError::Timeout {
                    what: "remote attach",
                    secs: timeout.as_secs_f64(),
                });
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The channels, once (each is owned by the thread that uses it).
    pub fn take_channels(&mut self) -> Vec<Channel> {
        if std::mem::replace(&mut self.channels_taken, true) {
            return Vec::new();
        }
        (0..self.shared.mailboxes.len())
            .map(|index| Channel::new(self.shared.clone(), index))
            .collect()
    }

    /// Asks the remote to leave its service loop.
    pub fn stop(&self) {
        let h = self.shared.hdr();
        h.stop.0.store(1, Ordering::Release);
        ring_bell(&h.remote_bell.0);
        ring_bell(&h.host_bell.0);
    }

    /// Whether the link was stopped: by [`HostLink::stop`] (or dropping the host
    /// link), or by a remote that hung up ([`RemoteLink::hang_up`](super::RemoteLink::hang_up)).
    pub fn is_stopped(&self) -> bool {
        self.shared.hdr().stop.0.load(Ordering::Acquire) != 0
    }

    /// Makes receiving lossless: while a channel's mailbox is full, the rx leader
    /// leaves further replies on the used ring (so the remote waits for rx buffers)
    /// instead of dropping them and counting them in [`HostLink::dropped`]. Off by
    /// default (the measured rig keeps the original's drop); the
    /// [`Rpmsg`](super::Rpmsg) transport turns it on.
    pub fn set_backpressure(&self, on: bool) {
        self.shared.backpressure.store(on, Ordering::Relaxed);
    }

    /// The remote's process id (0 before it attached).
    pub fn remote_pid(&self) -> i32 {
        self.shared.remote_pid.load(Ordering::Relaxed)
    }

    /// Faults the host side rejected.
    pub fn host_faults(&self) -> Faults {
        self.shared.faults.get()
    }

    /// Faults the remote rejected.
    pub fn remote_faults(&self) -> Faults {
        self.shared.hdr().remote_faults.0.get()
    }

    /// Messages the remote handed to its services.
    pub fn remote_messages(&self) -> u64 {
        self.shared.hdr().remote_msgs.0.load(Ordering::Relaxed)
    }

    /// Notifications sent: (host → remote, remote → host).
    pub fn kicks(&self) -> (u64, u64) {
        (
            self.shared.kicks.load(Ordering::Relaxed),
            self.shared.hdr().remote_kicks.0.load(Ordering::Relaxed),
        )
    }

    /// Replies dropped because a channel's mailbox was full.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

impl Drop for HostLink {
    fn drop(&mut self) {
        self.stop();
    }
}
