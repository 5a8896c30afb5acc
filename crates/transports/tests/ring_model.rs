//! An exhaustive-interleaving model check of the index protocol of the shared-memory
//! SPSC byte ring (`crates/transports/src/shm/ring.rs`).
//!
//! No shared memory and no threads: the producer (`Producer::send` for each message,
//! then `Producer::close`) and the consumer (`Consumer::recv` for each message, then
//! one more `recv` that must report end-of-stream) are written out as two small state
//! machines. Every step of either is one atomic action on a model of the shared state:
//! one load or store of `head`, `tail` or `closed`, or the write or read of one data
//! byte. A depth-first search runs *every* interleaving of the two machines' steps
//! (visited states are memoised, so each state is expanded once) and checks:
//!
//! * in every state: `tail ≤ head ≤ tail + capacity`, `tail_local ≤ cached_head ≤
//!   head` (consumer), `cached_tail ≤ tail` (producer);
//! * on every byte write: the cell was released by the consumer (below `tail +
//!   capacity`) and holds no unread byte;
//! * on every byte read: the cell holds exactly the next byte of the stream (FIFO, no
//!   loss, no duplicate, nothing unwritten or overwritten);
//! * at the end: both sides finished, every byte was delivered exactly once, in
//!   order, and the consumer saw end-of-stream only after the last byte;
//! * no deadlock: every state other than the final one has an enabled step, and no
//!   cycle of steps exists (so every execution ends, and ends well).
//!
//! # What it found
//!
//! The first version of ring.rs could deadlock: `recv` on an empty ring waited for
//! `min(left, capacity)` readable bytes while a blocked `send` waits for
//! `min(left, capacity / 2)` free ones, so with `capacity / 2 < head - tail < min(left,
//! capacity)` both waited for ever (first with capacity 4, messages `[1, 5]`; also
//! reproduced on the real ring). ring.rs now waits for at most half the ring
//! ([`Need::UpToHalf`]); the old behaviour is kept as a broken variant
//! (`broken_recv_waiting_for_more_than_half_the_ring_deadlocks`), and every small
//! configuration is checked safe and deadlock-free.
//!
//! Pieces were once exactly `batch` bytes; now a piece is `batch` but at least
//! `MIN_PIECE`, so with a small batch every piece is published as soon as it is copied
//! and a receiver waits for more than a batch. The sweep covers every (batch, piece)
//! pair that rule gives in small rings, with floors of 1 (pieces of a batch, as
//! before), 2 and the whole ring.
//!
//! # Correspondence with ring.rs
//!
//! | ring.rs | model |
//! |---|---|
//! | `Producer::{head, published, cached_tail}` | [`Prod::head`], [`Prod::published`], [`Prod::cached_tail`] |
//! | `Consumer::{tail, published, cached_head}` | [`Cons::tail`], [`Cons::published`], [`Cons::cached_head`] |
//! | `ctl.prod.head`, `ctl.cons.tail`, `ctl.prod.closed` | [`State::head`], [`State::tail`], [`State::closed`] |
//! | the data bytes (the mirror makes no difference to indices) | [`State::cells`], index `seq % capacity` |
//! | `piece(batch, capacity)`: `max(batch, MIN_PIECE).min(capacity)` | [`Config::min_piece`] ([`Config::piece`]) |
//! | `send`: `want = min(len, capacity / 2).max(1)`, `k = min(len, free, piece)` | [`ProdPc::Top`] |
//! | `wait_free`: reload `tail`, publish, wait until `capacity - (head - tail) ≥ want` | [`ProdPc::ReloadTail`], [`ProdPc::PublishBeforeWait`], [`ProdPc::Wait`] |
//! | `copy_nonoverlapping` into the ring, then `head += k`, publish on `batch` | [`ProdPc::Write`] (one step per byte), [`ProdPc::PublishBatch`] |
//! | `close`: publish, then store `closed` | [`ProdPc::ClosePublish`], [`ProdPc::CloseFlag`] |
//! | `recv`: when `available == 0`, `wait_data(len - filled)` | [`ConsPc::Top`] |
//! | `recv`: `wait_data(min(n, capacity / 2, piece))`; `wait_data`: reload `head`, publish, wait | [`ConsPc::ReloadHead`], [`ConsPc::PublishBeforeWait`] |
//! | `wait_data`'s `ready()`: load `closed`, then `head` | [`ConsPc::WaitFirst`], [`ConsPc::WaitLoadHead`] |
//! | `copy_nonoverlapping` out of the ring, `tail += k`, publish on `batch` | [`ConsPc::Read`] (one step per byte), [`ConsPc::PublishBatch`] |
//!
//! Purely local computation (sizes, `free`, `available`, comparisons, `publish()`
//! when there is nothing new to publish) is folded into the neighbouring step, since
//! the other side cannot observe it.
//!
//! Data writes and the `head` store are separate steps, as are the `tail` store and
//! the data reads, so publishing an index before the data it covers is written (or
//! after the space it frees is read) is caught: see the deliberately broken
//! [`Variant`]s and the `broken_*` tests, which must make the checker fail.
//!
//! Waiting is modelled as a loop of `ready()` evaluations (the real loads, in the
//! real order) in which a new evaluation is enabled only once the shared values it
//! reads differ from those of the previous, failed one: a waiter that nothing will
//! ever change is stuck, which is what makes a deadlock a state with no enabled step.
//!
//! # Not modelled
//!
//! * Weak memory orderings below the step granularity: each step is sequentially
//!   consistent. The model relies on ring.rs's Release stores of `head`/`tail`/
//!   `closed` and Acquire loads of them to make the data bytes written before a store
//!   visible after the matching load; it checks that the *order of the steps* is
//!   right, not that the orderings on the atomics are strong enough.
//! * The futex sleep/wake protocol of `wait.rs` (waiter counts, fences, membarrier,
//!   timeouts): a waiter is assumed to re-evaluate its condition after any change of
//!   what it reads, i.e. no lost wake-ups. Spin, block and hybrid modes look the same.
//! * `gone`/`leave`, dead peers, the zero-copy API (`reserve`/`commit`,
//!   `peek`/`release`), `flush` and the `before_wait` callback, and index wrap-around
//!   of the `u64`s.

use std::collections::HashSet;
use std::fmt;

/// A protocol to check: ring.rs as it is, or with one deliberate bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// What ring.rs does.
    Faithful,
    /// The producer stores `head` (covering a chunk) before writing the chunk's bytes.
    PublishHeadBeforeWrite,
    /// The producer waits for space without publishing `head` first.
    WaitWithoutPublish,
    /// The consumer stores `tail` (covering a chunk) before reading the chunk's bytes.
    PublishTailBeforeRead,
    /// The consumer's wait loads `head` before `closed`.
    LoadHeadBeforeClosed,
    /// `close` stores `closed` before publishing the final `head`.
    SetClosedBeforeHead,
}

/// How many bytes `recv` waits for when the ring is empty (`wait_data`'s `need`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// The first ring.rs: `min(left, capacity).max(1)`, the rest of the message up to
    /// a whole ring. Deadlocks: see `broken_recv_waiting_for_more_than_half_the_ring_deadlocks`.
    UpToCapacity,
    /// What ring.rs does: `min(left, capacity / 2, piece).max(1)`, matching the
    /// producer's `want` (and its pieces of at most `piece`).
    UpToHalf,
    /// `min(left, piece).max(1)`: a receiver waiting for a whole piece even when a
    /// piece is more than half the ring. Deadlocks: see
    /// `broken_recv_waiting_for_a_piece_above_half_the_ring_deadlocks`.
    Piece,
}

/// What to check.
#[derive(Debug, Clone)]
struct Config {
    /// Bytes of the ring (a power of two in ring.rs; any value ≥ 1 works here).
    capacity: u32,
    /// Publication batch, clamped to `1..=capacity` as ring.rs does.
    batch: u32,
    /// Most bytes copied in one piece, in `batch..=capacity`: ring.rs's `piece`.
    piece: u32,
    /// Sizes of the messages sent (and received, one `recv` each).
    messages: Vec<u32>,
    variant: Variant,
    need: Need,
    /// Whether a deadlock is a failure; when not, deadlocked states are only counted
    /// and the search goes on (to check safety on every other path).
    liveness: bool,
}

impl Config {
    /// A ring whose pieces are a batch (a floor of 1): see [`Config::min_piece`].
    fn new(capacity: u32, batch: u32, messages: &[u32]) -> Config {
        let batch = batch.clamp(1, capacity);
        Config {
            capacity,
            batch,
            piece: batch,
            messages: messages.to_vec(),
            variant: Variant::Faithful,
            need: Need::UpToHalf,
            liveness: true,
        }
    }

    /// Pieces of at least `floor` bytes (ring.rs's `MIN_PIECE`, scaled down to the
    /// model's rings), at most the ring, and at least a batch, as ring.rs's `piece`.
    fn min_piece(mut self, floor: u32) -> Config {
        self.piece = self.batch.max(floor).min(self.capacity);
        self
    }

    fn with(mut self, variant: Variant) -> Config {
        self.variant = variant;
        self
    }

    fn need(mut self, need: Need) -> Config {
        self.need = need;
        self
    }

    fn safety_only(mut self) -> Config {
        self.liveness = false;
        self
    }

    fn total(&self) -> u32 {
        self.messages.iter().sum()
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "capacity {}, batch {}, piece {}, messages {:?}, {:?}, need {:?}",
            self.capacity, self.batch, self.piece, self.messages, self.variant, self.need
        )
    }
}

/// Where the producer is in `send`/`close`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ProdPc {
    /// Top of `send`'s loop: local decisions only, never left in an explored state.
    Top,
    /// `wait_free`: load `tail` into `cached_tail`.
    ReloadTail { want: u32 },
    /// `wait_free`: `publish()` before waiting.
    PublishBeforeWait { want: u32 },
    /// `wait_free`'s `ready()`: load `tail`; `seen` is the value of the last failed try.
    Wait { want: u32, seen: Option<u32> },
    /// [`Variant::PublishHeadBeforeWrite`]: store `head + k` first.
    PublishEarly { k: u32 },
    /// Writing byte `i` of a chunk of `k` at `head`.
    Write { k: u32, i: u32 },
    /// `publish()` because `head - published ≥ batch`.
    PublishBatch,
    /// `close`: `publish()`.
    ClosePublish,
    /// `close`: store `closed`.
    CloseFlag,
    /// Closed.
    Done,
}

/// The producer's private state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Prod {
    /// The message being sent.
    msg: usize,
    /// Its bytes not yet written.
    left: u32,
    /// Bytes written (`Producer::head`).
    head: u32,
    /// Last `head` stored.
    published: u32,
    cached_tail: u32,
    pc: ProdPc,
}

/// Where the consumer is in `recv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ConsPc {
    /// Top of `recv`'s loop: local decisions only, never left in an explored state.
    Top,
    /// `wait_data`: load `head` into `cached_head`.
    ReloadHead { need: u32 },
    /// `wait_data`: `publish()` before waiting.
    PublishBeforeWait { need: u32 },
    /// `wait_data`'s `ready()`, first load (`closed`; `head` in
    /// [`Variant::LoadHeadBeforeClosed`]); `seen` is what the last failed try read.
    WaitFirst {
        need: u32,
        seen: Option<(bool, u32)>,
    },
    /// `ready()` loaded `closed`, now loads `head`.
    WaitLoadHead { need: u32, closed: bool },
    /// [`Variant::LoadHeadBeforeClosed`]: `ready()` loaded `head`, now loads `closed`.
    WaitLoadClosed { need: u32, head: u32 },
    /// [`Variant::PublishTailBeforeRead`]: store `tail + k` first.
    PublishEarly { k: u32 },
    /// Reading byte `i` of a chunk of `k` at `tail`.
    Read { k: u32, i: u32 },
    /// `publish()` because `tail - published ≥ batch`.
    PublishBatch,
    /// Saw end-of-stream at the right place.
    Done,
}

/// The consumer's private state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Cons {
    /// The `recv` in progress: `messages.len()` is the final one, which must see
    /// end-of-stream.
    msg: usize,
    /// Bytes of its buffer still to fill.
    left: u32,
    /// Bytes of its buffer filled.
    filled: u32,
    /// Bytes read (`Consumer::tail`).
    tail: u32,
    /// Last `tail` stored.
    published: u32,
    cached_head: u32,
    pc: ConsPc,
}

/// Shared and private state: a node of the search.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct State {
    /// Shared `head` (stored by the producer only).
    head: u32,
    /// Shared `tail` (stored by the consumer only).
    tail: u32,
    /// Shared `closed`.
    closed: bool,
    /// The data: `Some(v)` holds the unread byte of value `v` (byte `n` of the stream
    /// has value `n % 256`), `None` holds nothing to read (never written, or read).
    cells: Vec<Option<u8>>,
    p: Prod,
    c: Cons,
}

/// Which side took a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Producer,
    Consumer,
}

impl State {
    fn initial(cfg: &Config) -> State {
        let first = cfg.messages.first().copied().unwrap_or(0);
        let mut s = State {
            head: 0,
            tail: 0,
            closed: false,
            cells: vec![None; cfg.capacity as usize],
            p: Prod {
                msg: 0,
                left: first,
                head: 0,
                published: 0,
                cached_tail: 0,
                pc: ProdPc::Top,
            },
            c: Cons {
                msg: 0,
                left: first,
                filled: 0,
                tail: 0,
                published: 0,
                cached_head: 0,
                pc: ConsPc::Top,
            },
        };
        if cfg.messages.is_empty() {
            // The only recv is the final one.
            s.c.left = 1;
        }
        s.settle(cfg);
        s
    }

    fn free(&self, cfg: &Config) -> u32 {
        cfg.capacity - (self.p.head - self.p.cached_tail)
    }

    fn available(&self) -> u32 {
        self.c.cached_head - self.c.tail
    }

    /// Runs both sides through their purely local transitions.
    fn settle(&mut self, cfg: &Config) {
        self.settle_producer(cfg);
        self.settle_consumer(cfg);
    }

    fn settle_producer(&mut self, cfg: &Config) {
        loop {
            match self.p.pc {
                ProdPc::Top => {
                    if self.p.left == 0 {
                        self.p.msg += 1;
                        if let Some(&len) = cfg.messages.get(self.p.msg) {
                            self.p.left = len;
                        } else {
                            self.p.pc = if cfg.variant == Variant::SetClosedBeforeHead {
                                ProdPc::CloseFlag
                            } else {
                                ProdPc::ClosePublish
                            };
                        }
                        continue;
                    }
                    let want = self.p.left.min(cfg.capacity / 2).max(1);
                    if self.free(cfg) >= want {
                        let k = self.p.left.min(self.free(cfg)).min(cfg.piece);
                        self.p.pc = if cfg.variant == Variant::PublishHeadBeforeWrite {
                            ProdPc::PublishEarly { k }
                        } else {
                            ProdPc::Write { k, i: 0 }
                        };
                    } else {
                        self.p.pc = ProdPc::ReloadTail { want };
                    }
                }
                // `publish()` with nothing new is a no-op.
                ProdPc::PublishBeforeWait { want } if self.p.head == self.p.published => {
                    self.p.pc = ProdPc::Wait { want, seen: None };
                }
                ProdPc::ClosePublish if self.p.head == self.p.published => {
                    self.p.pc = self.after_close_publish(cfg);
                }
                _ => return,
            }
        }
    }

    fn after_close_publish(&self, cfg: &Config) -> ProdPc {
        if cfg.variant == Variant::SetClosedBeforeHead {
            ProdPc::Done
        } else {
            ProdPc::CloseFlag
        }
    }

    fn settle_consumer(&mut self, cfg: &Config) {
        loop {
            match self.c.pc {
                ConsPc::Top => {
                    if self.c.left == 0 {
                        self.c.msg += 1;
                        self.c.filled = 0;
                        // Past the last message comes the end-of-stream recv, with a
                        // one-byte buffer.
                        self.c.left = cfg.messages.get(self.c.msg).copied().unwrap_or(1);
                        continue;
                    }
                    if self.available() > 0 {
                        let k = self.available().min(self.c.left);
                        self.c.pc = if cfg.variant == Variant::PublishTailBeforeRead {
                            ConsPc::PublishEarly { k }
                        } else {
                            ConsPc::Read { k, i: 0 }
                        };
                    } else {
                        // `wait_data(left)`; with `available == 0` its first check fails.
                        let up_to = match cfg.need {
                            Need::UpToCapacity => cfg.capacity,
                            Need::UpToHalf => (cfg.capacity / 2).min(cfg.piece),
                            Need::Piece => cfg.piece,
                        };
                        let need = self.c.left.min(up_to).max(1);
                        self.c.pc = ConsPc::ReloadHead { need };
                    }
                }
                ConsPc::PublishBeforeWait { need } if self.c.tail == self.c.published => {
                    self.c.pc = ConsPc::WaitFirst { need, seen: None };
                }
                _ => return,
            }
        }
    }

    /// The state after the producer's next step, `Ok(None)` when it has none enabled.
    fn producer_step(&self, cfg: &Config) -> Result<Option<State>, String> {
        let mut s = self.clone();
        let p = &mut s.p;
        match p.pc {
            ProdPc::Top | ProdPc::Done => return Ok(None),
            ProdPc::ReloadTail { want } => {
                p.cached_tail = self.tail;
                p.pc = if cfg.capacity - (p.head - p.cached_tail) >= want {
                    ProdPc::Top
                } else if cfg.variant == Variant::WaitWithoutPublish {
                    ProdPc::Wait { want, seen: None }
                } else {
                    ProdPc::PublishBeforeWait { want }
                };
            }
            ProdPc::PublishBeforeWait { want } => {
                s.head = p.head;
                p.published = p.head;
                p.pc = ProdPc::Wait { want, seen: None };
            }
            ProdPc::Wait { want, seen } => {
                if seen == Some(self.tail) {
                    return Ok(None);
                }
                let tail = self.tail;
                if cfg.capacity - (p.head - tail) >= want {
                    p.cached_tail = tail;
                    p.pc = ProdPc::Top;
                } else {
                    p.pc = ProdPc::Wait {
                        want,
                        seen: Some(tail),
                    };
                }
            }
            ProdPc::PublishEarly { k } => {
                s.head = p.head + k;
                p.published = p.head + k;
                p.pc = ProdPc::Write { k, i: 0 };
            }
            ProdPc::Write { k, i } => {
                let seq = p.head + i;
                let cell = (seq % cfg.capacity) as usize;
                if seq >= self.tail + cfg.capacity {
                    return Err(format!(
                        "the producer wrote byte #{seq} into cell {cell}, which the consumer \
                         has not released (tail = {})",
                        self.tail
                    ));
                }
                if let Some(old) = self.cells[cell] {
                    return Err(format!(
                        "the producer overwrote unread byte #{old} in cell {cell} with byte #{seq}"
                    ));
                }
                s.cells[cell] = Some(seq as u8);
                if i + 1 < k {
                    p.pc = ProdPc::Write { k, i: i + 1 };
                } else {
                    p.head += k;
                    p.left -= k;
                    p.pc = if p.head - p.published >= cfg.batch {
                        ProdPc::PublishBatch
                    } else {
                        ProdPc::Top
                    };
                }
            }
            ProdPc::PublishBatch => {
                s.head = p.head;
                p.published = p.head;
                p.pc = ProdPc::Top;
            }
            ProdPc::ClosePublish => {
                s.head = p.head;
                p.published = p.head;
                s.p.pc = s.after_close_publish(cfg);
            }
            ProdPc::CloseFlag => {
                s.closed = true;
                p.pc = if cfg.variant == Variant::SetClosedBeforeHead {
                    ProdPc::ClosePublish
                } else {
                    ProdPc::Done
                };
            }
        }
        s.settle(cfg);
        Ok(Some(s))
    }

    /// The state after the consumer's next step, `Ok(None)` when it has none enabled.
    fn consumer_step(&self, cfg: &Config) -> Result<Option<State>, String> {
        let mut s = self.clone();
        let c = &mut s.c;
        match c.pc {
            ConsPc::Top | ConsPc::Done => return Ok(None),
            ConsPc::ReloadHead { need } => {
                c.cached_head = self.head;
                c.pc = if c.cached_head - c.tail >= need {
                    ConsPc::Top
                } else {
                    ConsPc::PublishBeforeWait { need }
                };
            }
            ConsPc::PublishBeforeWait { need } => {
                s.tail = c.tail;
                c.published = c.tail;
                c.pc = ConsPc::WaitFirst { need, seen: None };
            }
            ConsPc::WaitFirst { need, seen } => {
                if seen == Some((self.closed, self.head)) {
                    return Ok(None);
                }
                c.pc = if cfg.variant == Variant::LoadHeadBeforeClosed {
                    ConsPc::WaitLoadClosed {
                        need,
                        head: self.head,
                    }
                } else {
                    ConsPc::WaitLoadHead {
                        need,
                        closed: self.closed,
                    }
                };
            }
            ConsPc::WaitLoadHead { need, closed } => {
                s.wait_ready(cfg, need, closed, self.head)?;
            }
            ConsPc::WaitLoadClosed { need, head } => {
                s.wait_ready(cfg, need, self.closed, head)?;
            }
            ConsPc::PublishEarly { k } => {
                s.tail = c.tail + k;
                c.published = c.tail + k;
                c.pc = ConsPc::Read { k, i: 0 };
            }
            ConsPc::Read { k, i } => {
                let seq = c.tail + i;
                let cell = (seq % cfg.capacity) as usize;
                if seq >= cfg.total() {
                    return Err(format!(
                        "the consumer read byte #{seq} from cell {cell}, but only {} bytes were sent",
                        cfg.total()
                    ));
                }
                match self.cells[cell] {
                    Some(v) if v == seq as u8 => {}
                    Some(v) => {
                        return Err(format!(
                            "the consumer expected byte #{seq} in cell {cell} and found byte #{v}"
                        ));
                    }
                    None => {
                        return Err(format!(
                            "the consumer read byte #{seq} from cell {cell}, which holds no unread \
                             data (never written, or already read)"
                        ));
                    }
                }
                s.cells[cell] = None;
                if i + 1 < k {
                    c.pc = ConsPc::Read { k, i: i + 1 };
                } else {
                    c.tail += k;
                    c.left -= k;
                    c.filled += k;
                    c.pc = if c.tail - c.published >= cfg.batch {
                        ConsPc::PublishBatch
                    } else {
                        ConsPc::Top
                    };
                }
            }
            ConsPc::PublishBatch => {
                s.tail = c.tail;
                c.published = c.tail;
                c.pc = ConsPc::Top;
            }
        }
        s.settle(cfg);
        Ok(Some(s))
    }

    /// The end of one `ready()` evaluation of `wait_data`, which read `closed` and
    /// `head`; then the rest of `wait_data` and `recv`'s end-of-stream handling.
    fn wait_ready(
        &mut self,
        cfg: &Config,
        need: u32,
        closed: bool,
        head: u32,
    ) -> Result<(), String> {
        let c = &mut self.c;
        if head - c.tail < need && !closed {
            c.pc = ConsPc::WaitFirst {
                need,
                seen: Some((closed, head)),
            };
            return Ok(());
        }
        c.cached_head = head;
        if c.cached_head > c.tail {
            c.pc = ConsPc::Top;
            return Ok(());
        }
        // `Available::Closed`.
        if c.msg == cfg.messages.len() && c.filled == 0 {
            c.pc = ConsPc::Done;
            return Ok(());
        }
        Err(format!(
            "the consumer saw end-of-stream after {} of {} bytes ({} bytes into recv #{} of {:?})",
            c.tail,
            cfg.total(),
            c.filled,
            c.msg,
            cfg.messages
        ))
    }

    /// Violations of the invariants that hold in every state.
    fn check_invariants(&self, cfg: &Config) -> Result<(), String> {
        let fail = |what: &str| Err(format!("invariant {what} broken"));
        if !(self.tail <= self.head && self.head <= self.tail + cfg.capacity) {
            return fail("tail ≤ head ≤ tail + capacity");
        }
        if !(self.c.tail <= self.c.cached_head && self.c.cached_head <= self.head) {
            return fail("tail_local ≤ cached_head ≤ head (consumer)");
        }
        if self.p.cached_tail > self.tail {
            return fail("cached_tail ≤ tail (producer)");
        }
        if self.p.published != self.head || self.c.published != self.tail {
            return fail("published == shared index (model bookkeeping)");
        }
        Ok(())
    }

    fn deadlocked(&self) -> bool {
        self.p.pc != ProdPc::Done || self.c.pc != ConsPc::Done
    }

    /// Checks a state in which no step is enabled: it must be the good end.
    fn check_final(&self, cfg: &Config) -> Result<(), String> {
        if self.deadlocked() {
            return Err(format!(
                "deadlock: no step is enabled, producer at {:?} (head {}, tail seen {}), \
                 consumer at {:?} (tail {}, head seen {})",
                self.p.pc,
                self.p.head,
                self.p.cached_tail,
                self.c.pc,
                self.c.tail,
                self.c.cached_head
            ));
        }
        let total = cfg.total();
        if self.c.tail != total || self.head != total || !self.closed {
            return Err(format!(
                "finished with {} of {total} bytes read, head {}, closed {}",
                self.c.tail, self.head, self.closed
            ));
        }
        if let Some(cell) = self.cells.iter().position(Option::is_some) {
            return Err(format!("finished with unread data in cell {cell}"));
        }
        Ok(())
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cells: String = self
            .cells
            .iter()
            .map(|c| c.map_or(" .".to_string(), |v| format!("{v:2}")))
            .collect::<Vec<_>>()
            .join(" ");
        write!(
            f,
            "head {} tail {} closed {:5} [{cells}] | P msg {} left {} head {} pub {} ctail {} {:?} \
             | C msg {} left {} tail {} pub {} chead {} {:?}",
            self.head,
            self.tail,
            self.closed,
            self.p.msg,
            self.p.left,
            self.p.head,
            self.p.published,
            self.p.cached_tail,
            self.p.pc,
            self.c.msg,
            self.c.left,
            self.c.tail,
            self.c.published,
            self.c.cached_head,
            self.c.pc,
        )
    }
}

/// What a search covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stats {
    /// Distinct states expanded.
    states: usize,
    /// Longest execution, in steps.
    max_depth: usize,
    /// States with no step enabled other than the good end (only without `liveness`).
    deadlocks: usize,
}

/// A violation and the execution that reached it.
#[derive(Debug)]
struct Failure {
    what: String,
    trace: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\nexecution:\n{}", self.what, self.trace)
    }
}

/// One node on the depth-first path.
struct Frame {
    state: State,
    /// Who stepped into this state.
    by: Option<Side>,
    succ: Vec<(Side, State)>,
    next: usize,
}

/// Explores every interleaving of the producer's and the consumer's steps.
fn explore(cfg: &Config) -> Result<Stats, Failure> {
    assert!(cfg.capacity >= 1);
    assert!(
        cfg.total() < 256,
        "byte values are sequence numbers mod 256: keep the stream shorter"
    );
    let mut visited: HashSet<State> = HashSet::new();
    let mut on_path: HashSet<State> = HashSet::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut max_depth = 0;

    let fail = |stack: &[Frame], last: Option<(Side, &State)>, what: String| {
        let mut trace = String::new();
        let steps = stack
            .iter()
            .map(|f| (f.by, &f.state))
            .chain(last.map(|(by, s)| (Some(by), s)));
        for (n, (by, s)) in steps.enumerate() {
            let by = match by {
                None => "start",
                Some(Side::Producer) => "P",
                Some(Side::Consumer) => "C",
            };
            trace.push_str(&format!("{n:4} {by:>5}  {s}\n"));
        }
        Failure {
            what: format!("{cfg}: {what}"),
            trace,
        }
    };

    let mut deadlocks = 0;
    let mut enter = |stack: &mut Vec<Frame>,
                     on_path: &mut HashSet<State>,
                     state: State,
                     by: Option<Side>|
     -> Result<(), Failure> {
        let with_last = |stack: &[Frame], what: String| fail(stack, by.map(|b| (b, &state)), what);
        state
            .check_invariants(cfg)
            .map_err(|what| with_last(stack, what))?;
        let mut succ = Vec::with_capacity(2);
        for side in [Side::Producer, Side::Consumer] {
            let next = match side {
                Side::Producer => state.producer_step(cfg),
                Side::Consumer => state.consumer_step(cfg),
            };
            match next {
                Ok(Some(next)) => succ.push((side, next)),
                Ok(None) => {}
                Err(what) => {
                    let mut trace = with_last(stack, what);
                    trace.what.push_str(&format!(" (on a {side:?} step)"));
                    return Err(trace);
                }
            }
        }
        if succ.is_empty() {
            if !cfg.liveness && state.deadlocked() {
                deadlocks += 1;
            } else {
                state
                    .check_final(cfg)
                    .map_err(|what| with_last(stack, what))?;
            }
        }
        on_path.insert(state.clone());
        stack.push(Frame {
            state,
            by,
            succ,
            next: 0,
        });
        Ok(())
    };

    let init = State::initial(cfg);
    visited.insert(init.clone());
    enter(&mut stack, &mut on_path, init, None)?;
    loop {
        max_depth = max_depth.max(stack.len().saturating_sub(1));
        let Some(top) = stack.last_mut() else {
            break;
        };
        if top.next == top.succ.len() {
            let done = stack.pop().expect("non-empty");
            on_path.remove(&done.state);
            continue;
        }
        let (side, next) = top.succ[top.next].clone();
        top.next += 1;
        if on_path.contains(&next) {
            return Err(fail(
                &stack,
                Some((side, &next)),
                "livelock: a cycle of steps that makes no progress".to_string(),
            ));
        }
        if visited.insert(next.clone()) {
            enter(&mut stack, &mut on_path, next, Some(side))?;
        }
    }
    Ok(Stats {
        states: visited.len(),
        max_depth,
        deadlocks,
    })
}

/// Explores `cfg`, panicking with the violation and its execution if there is one.
fn check(cfg: &Config) -> Stats {
    let stats = explore(cfg).unwrap_or_else(|f| panic!("{f}"));
    eprintln!(
        "{cfg}: {} states, executions up to {} steps",
        stats.states, stats.max_depth
    );
    // Each side alone takes one step per byte plus some index steps: far more states
    // than that means the interleavings were really explored.
    let bytes = cfg.total() as usize;
    assert!(
        stats.max_depth >= 2 * bytes && stats.states > 4 * bytes,
        "{cfg}: suspiciously small search ({stats:?})"
    );
    stats
}

macro_rules! model_tests {
    ($($name:ident: capacity $cap:expr, batch $batch:expr, messages $msgs:expr;)*) => {
        $(
            #[test]
            fn $name() {
                check(&Config::new($cap, $batch, &$msgs));
            }
        )*
    };
}

model_tests! {
    capacity_4_batch_1_messages_3_5_2: capacity 4, batch 1, messages [3, 5, 2];
    capacity_4_batch_2_messages_3_5_2: capacity 4, batch 2, messages [3, 5, 2];
    capacity_4_batch_4_messages_3_5_2: capacity 4, batch 4, messages [3, 5, 2];
    capacity_4_batch_1_messages_8_1: capacity 4, batch 1, messages [8, 1];
    capacity_4_batch_2_messages_8_1: capacity 4, batch 2, messages [8, 1];
    capacity_4_batch_4_messages_8_1: capacity 4, batch 4, messages [8, 1];
    capacity_4_batch_1_message_9: capacity 4, batch 1, messages [9];
    capacity_4_batch_2_message_9: capacity 4, batch 2, messages [9];
    capacity_4_batch_4_message_9: capacity 4, batch 4, messages [9];
    capacity_8_batch_1_messages_3_5_2: capacity 8, batch 1, messages [3, 5, 2];
    capacity_8_batch_2_messages_3_5_2: capacity 8, batch 2, messages [3, 5, 2];
    capacity_8_batch_8_messages_3_5_2: capacity 8, batch 8, messages [3, 5, 2];
    capacity_8_batch_1_messages_8_1: capacity 8, batch 1, messages [8, 1];
    capacity_8_batch_2_messages_8_1: capacity 8, batch 2, messages [8, 1];
    capacity_8_batch_8_messages_8_1: capacity 8, batch 8, messages [8, 1];
    capacity_8_batch_1_message_9: capacity 8, batch 1, messages [9];
    capacity_8_batch_2_message_9: capacity 8, batch 2, messages [9];
    capacity_8_batch_8_message_9: capacity 8, batch 8, messages [9];
}

macro_rules! piece_tests {
    ($($name:ident: capacity $cap:expr, batch $batch:expr, min piece $floor:expr, messages $msgs:expr;)*) => {
        $(
            #[test]
            fn $name() {
                check(&Config::new($cap, $batch, &$msgs).min_piece($floor));
            }
        )*
    };
}

// A batch below the floor: pieces larger than a batch, each published at once.
piece_tests! {
    capacity_4_batch_1_piece_2_messages_3_5_2: capacity 4, batch 1, min piece 2, messages [3, 5, 2];
    capacity_4_batch_1_piece_4_messages_3_5_2: capacity 4, batch 1, min piece 4, messages [3, 5, 2];
    capacity_4_batch_1_piece_4_message_9: capacity 4, batch 1, min piece 4, messages [9];
    capacity_8_batch_1_piece_4_messages_3_5_2: capacity 8, batch 1, min piece 4, messages [3, 5, 2];
    capacity_8_batch_2_piece_8_messages_8_1: capacity 8, batch 2, min piece 8, messages [8, 1];
    capacity_8_batch_1_piece_8_message_9: capacity 8, batch 1, min piece 8, messages [9];
}

/// Message-size lists for the sweeps: every list of one or two messages of 1 to 9
/// bytes, and of three messages of 1 to 5 bytes.
fn small_message_lists() -> Vec<Vec<u32>> {
    let mut lists = Vec::new();
    for a in 1..=9 {
        lists.push(vec![a]);
        for b in 1..=9 {
            lists.push(vec![a, b]);
        }
    }
    for a in 1..=5 {
        for b in 1..=5 {
            for c in 1..=5 {
                lists.push(vec![a, b, c]);
            }
        }
    }
    lists
}

/// Runs `configure` on every small configuration (capacities 2, 4, 8; batches 1, 2
/// and the capacity; piece floors 1, 2 and the capacity, each distinct (batch, piece)
/// pair once; [`small_message_lists`]) and explores each.
fn sweep(configure: impl Fn(Config) -> Config) -> (usize, Vec<Failure>, Stats) {
    let mut failures = Vec::new();
    let mut configs = 0;
    let mut sum = Stats {
        states: 0,
        max_depth: 0,
        deadlocks: 0,
    };
    let mut pairs = Vec::new();
    for capacity in [2, 4, 8] {
        for batch in [1, 2, capacity] {
            for floor in [1, 2, capacity] {
                let cfg = Config::new(capacity, batch, &[]).min_piece(floor);
                if !pairs.contains(&(capacity, cfg.batch, cfg.piece)) {
                    pairs.push((capacity, cfg.batch, cfg.piece));
                }
            }
        }
    }
    for &(capacity, batch, piece) in &pairs {
        for messages in small_message_lists() {
            configs += 1;
            let cfg = Config::new(capacity, batch, &messages).min_piece(piece);
            match explore(&configure(cfg)) {
                Ok(stats) => {
                    sum.states += stats.states;
                    sum.max_depth = sum.max_depth.max(stats.max_depth);
                    sum.deadlocks += stats.deadlocks;
                }
                Err(f) => failures.push(f),
            }
        }
    }
    eprintln!(
        "{configs} configurations, {} states in all, {} deadlocked, {} failed",
        sum.states,
        sum.deadlocks,
        failures.len()
    );
    (configs, failures, sum)
}

/// The first ring.rs's bug: `recv` on an empty ring waited in `wait_data` for
/// `min(left, capacity)` bytes, while a producer blocked in `send` waits for `min(left,
/// capacity / 2)` free bytes. With `capacity / 2 < head - tail < min(left, capacity)`
/// both wait for ever. Here: the producer sends 1 byte, then 3 of 5 (ring full at head
/// 4, tail 0 in its cache); the consumer reads the byte (tail 1); the producer needs 2
/// free and has 1; the consumer needs 4 readable and has 3.
#[test]
#[should_panic(expected = "deadlock: no step is enabled, producer at Wait")]
fn broken_recv_waiting_for_more_than_half_the_ring_deadlocks() {
    check(&Config::new(4, 1, &[1, 5]).need(Need::UpToCapacity));
}

/// ring.rs in every small configuration (capacities 2, 4, 8; batches 1, 2, capacity;
/// pieces of a batch up to the ring; up to three messages): no path loses, duplicates, reorders or corrupts a byte or
/// ends the stream early, and no state is a deadlock.
#[test]
fn ring_rs_is_safe_and_live_in_every_small_configuration() {
    let (configs, failures, sum) = sweep(|cfg| cfg);
    if let Some(f) = failures.first() {
        panic!(
            "{} of {configs} configurations failed; the first: {f}",
            failures.len()
        );
    }
    assert!(
        sum.states > 100 * configs,
        "suspiciously small search ({sum:?})"
    );
}

/// With deadlocks only counted, the first ring.rs was otherwise safe: the deadlock
/// was its only flaw.
#[test]
fn the_first_ring_rs_was_safe_apart_from_its_deadlock() {
    let (configs, failures, sum) = sweep(|cfg| cfg.need(Need::UpToCapacity).safety_only());
    if let Some(f) = failures.first() {
        panic!(
            "{} of {configs} configurations failed; the first: {f}",
            failures.len()
        );
    }
    assert!(
        sum.deadlocks > 0,
        "the known deadlock was not found ({sum:?})"
    );
}

/// A receiver must not wait for a whole piece when a piece is more than half the
/// ring: with pieces of a whole ring, the same deadlock as waiting for the rest of the
/// message (`broken_recv_waiting_for_more_than_half_the_ring_deadlocks`).
#[test]
#[should_panic(expected = "deadlock: no step is enabled, producer at Wait")]
fn broken_recv_waiting_for_a_piece_above_half_the_ring_deadlocks() {
    check(&Config::new(4, 1, &[1, 5]).min_piece(4).need(Need::Piece));
}

// The checker can fail: each deliberately broken protocol is caught.

#[test]
#[should_panic(expected = "which holds no unread data")]
fn broken_publishing_head_before_writing_is_caught() {
    check(&Config::new(4, 1, &[3, 5, 2]).with(Variant::PublishHeadBeforeWrite));
}

#[test]
#[should_panic(expected = "deadlock: no step is enabled")]
fn broken_waiting_without_publishing_head_deadlocks() {
    // Needs unpublished bytes when the ring looks full: a batch above half the ring.
    check(&Config::new(4, 4, &[3, 5, 2]).with(Variant::WaitWithoutPublish));
}

#[test]
#[should_panic(expected = "the producer overwrote unread byte")]
fn broken_publishing_tail_before_reading_is_caught() {
    check(&Config::new(4, 1, &[3, 5, 2]).with(Variant::PublishTailBeforeRead));
}

#[test]
#[should_panic(expected = "the consumer saw end-of-stream after")]
fn broken_loading_head_before_closed_is_caught() {
    check(&Config::new(4, 1, &[3, 5, 2]).with(Variant::LoadHeadBeforeClosed));
}

#[test]
#[should_panic(expected = "the consumer saw end-of-stream after")]
fn broken_closing_before_publishing_head_is_caught() {
    // Needs bytes still unpublished at close: a batch above 1.
    check(&Config::new(4, 4, &[3, 5, 2]).with(Variant::SetClosedBeforeHead));
}
