//! The plugin call each thread is in, for the reports of a hang or a crash.
//!
//! A plugin that hangs or crashes does so inside one of its calls, and the author's
//! first question is which: `connect`, `recv` of message 12, `close`. Every call into a
//! plugin marks its thread's slot here for its duration ([`enter`]: two relaxed
//! stores into a thread-local slot, no allocation, no system call), and the marks can
//! be read three ways:
//!
//! * in this process, by a watchdog thread ([`describe`]);
//! * after a crash: the handlers [`install`] sets for SIGSEGV, SIGBUS, SIGILL, SIGFPE
//!   and SIGABRT write the call of the thread that crashed to stderr, then let the
//!   signal take its course (the previous handler, or the default action);
//! * from outside, before a hung process is killed: SIGUSR1 makes it write them to
//!   stderr and go on ([`REPORT_SIGNAL`]); the parent reads them from the stderr
//!   tail it keeps ([`parse_report`]).
//!
//! The lines written are `xferbench: plugin call in flight: recv of message 12` (one
//! per busy thread) or `xferbench: plugin call in flight: none`.

use std::cell::Cell;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

/// A plugin entry point, as reports name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Call {
    /// `create`.
    Create = 1,
    /// `destroy`.
    Destroy,
    /// `listen`.
    Listen,
    /// `accept`.
    Accept,
    /// `connect`.
    Connect,
    /// `close_listener`.
    CloseListener,
    /// `send` of message N.
    Send,
    /// `recv` of message N.
    Recv,
    /// `flush`.
    Flush,
    /// `close_send`.
    CloseSend,
    /// `close`.
    Close,
    /// `loan` of message N.
    Loan,
    /// `commit` of message N.
    Commit,
    /// `borrow` of message N.
    Borrow,
    /// `release` of message N.
    Release,
    /// `cleanup`.
    Cleanup,
}

impl Call {
    const ALL: [Call; 16] = [
        Call::Create,
        Call::Destroy,
        Call::Listen,
        Call::Accept,
        Call::Connect,
        Call::CloseListener,
        Call::Send,
        Call::Recv,
        Call::Flush,
        Call::CloseSend,
        Call::Close,
        Call::Loan,
        Call::Commit,
        Call::Borrow,
        Call::Release,
        Call::Cleanup,
    ];

    /// The entry point's name in the header.
    pub fn name(self) -> &'static str {
        match self {
            Call::Create => "create",
            Call::Destroy => "destroy",
            Call::Listen => "listen",
            Call::Accept => "accept",
            Call::Connect => "connect",
            Call::CloseListener => "close_listener",
            Call::Send => "send",
            Call::Recv => "recv",
            Call::Flush => "flush",
            Call::CloseSend => "close_send",
            Call::Close => "close",
            Call::Loan => "loan",
            Call::Commit => "commit",
            Call::Borrow => "borrow",
            Call::Release => "release",
            Call::Cleanup => "cleanup",
        }
    }

    fn from_u8(v: u8) -> Option<Call> {
        Call::ALL.get(usize::from(v).checked_sub(1)?).copied()
    }
}

/// Threads whose calls are followed at once; a thread beyond them is not followed.
const SLOTS: usize = 64;
/// A slot nobody holds.
const FREE: u64 = 0;
/// A slot held by a thread that is in no plugin call.
const IDLE: u64 = 1 << 63;

/// Per slot: [`FREE`], [`IDLE`], or `IDLE | call << 56 | message` (message 0: a call
/// that carries none).
static SLOT: [AtomicU64; SLOTS] = [const { AtomicU64::new(FREE) }; SLOTS];

/// This thread's slot, released when the thread ends.
struct Held(Cell<Option<usize>>);

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(i) = self.0.get() {
            SLOT[i].store(FREE, Ordering::Relaxed);
        }
    }
}

thread_local! {
    static MINE: Held = const { Held(Cell::new(None)) };
}

fn claim() -> Option<usize> {
    (0..SLOTS).find(|&i| {
        SLOT[i]
            .compare_exchange(FREE, IDLE, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    })
}

/// Marks this thread as in `call` (of message `message`, counted from 1; 0 for a
/// call that carries none) until the guard drops.
#[inline]
pub fn enter(call: Call, message: u64) -> Guard {
    let slot = MINE
        .try_with(|m| match m.0.get() {
            Some(i) => Some(i),
            None => {
                let i = claim();
                m.0.set(i);
                i
            }
        })
        .ok()
        .flatten();
    if let Some(i) = slot {
        let mark = IDLE | (u64::from(call as u8) << 56) | (message & ((1 << 56) - 1));
        SLOT[i].store(mark, Ordering::Relaxed);
    }
    Guard { slot }
}

/// Clears a thread's mark when the call returns.
#[must_use = "the mark lasts as long as the guard"]
pub struct Guard {
    slot: Option<usize>,
}

impl Drop for Guard {
    #[inline]
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            SLOT[i].store(IDLE, Ordering::Relaxed);
        }
    }
}

/// One call in flight: the entry point and the message it carries (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    /// The entry point.
    pub call: Call,
    /// The message, counted from 1 on its endpoint and direction; 0 for a call that
    /// carries none.
    pub message: u64,
}

impl std::fmt::Display for InFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.message {
            0 => f.write_str(self.call.name()),
            n => write!(f, "{} of message {n}", self.call.name()),
        }
    }
}

fn decode(mark: u64) -> Option<InFlight> {
    if mark & IDLE == 0 {
        return None;
    }
    let call = Call::from_u8(((mark >> 56) & 0x7f) as u8)?;
    Some(InFlight {
        call,
        message: mark & ((1 << 56) - 1),
    })
}

/// The plugin calls this process's threads are in now.
pub fn describe() -> Vec<InFlight> {
    SLOT.iter()
        .filter_map(|s| decode(s.load(Ordering::Relaxed)))
        .collect()
}

/// The signal that makes a process write its calls in flight to stderr and go on.
pub const REPORT_SIGNAL: i32 = libc::SIGUSR1;

/// What each line written begins with.
pub const PREFIX: &str = "xferbench: plugin call in flight: ";

/// The calls in flight a process wrote to its stderr (the last report in `tail`):
/// `Some(vec![])` when it wrote that it was in none, `None` when it wrote no report.
pub fn parse_report(tail: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = tail
        .lines()
        .filter_map(|l| l.trim().strip_prefix(PREFIX))
        .collect();
    let last_none = lines.iter().rposition(|l| *l == "none");
    let from = match last_none {
        Some(i) if i + 1 == lines.len() => return Some(Vec::new()),
        Some(i) => i + 1,
        None => 0,
    };
    let calls: Vec<String> = lines[from..].iter().map(|l| l.to_string()).collect();
    (!calls.is_empty()).then_some(calls)
}

const FATAL: [i32; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
];

/// The handlers in place before [`install`], per signal number (for the fatal ones).
static PREVIOUS: [AtomicU64; 32] = [const { AtomicU64::new(0) }; 32];
static mut PREVIOUS_ACTIONS: [std::mem::MaybeUninit<libc::sigaction>; 32] =
    [const { std::mem::MaybeUninit::uninit() }; 32];

/// Installs the report handlers, once per process: SIGUSR1 writes the calls in
/// flight and returns; a crash writes them, then restores the handler that was there
/// before and returns, so that the fault repeats and takes its course.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: sigaction with a handler that only reads atomics and calls
        // write(2) and sigaction(2), both async-signal-safe; the previous actions are
        // written here, once, before the handlers that read them are installed.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_report as *const () as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(REPORT_SIGNAL, &sa, std::ptr::null_mut());
            for sig in FATAL {
                let mut old: libc::sigaction = std::mem::zeroed();
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_crash as *const () as usize;
                sa.sa_flags = libc::SA_ONSTACK | libc::SA_NODEFER;
                libc::sigemptyset(&mut sa.sa_mask);
                let idx = sig as usize;
                if libc::sigaction(sig, std::ptr::null(), &mut old) == 0 {
                    let actions = &raw mut PREVIOUS_ACTIONS;
                    (*actions)[idx].write(old);
                    PREVIOUS[idx].store(1, Ordering::Release);
                    libc::sigaction(sig, &sa, std::ptr::null_mut());
                }
            }
        }
    });
}

extern "C" fn on_report(_sig: i32) {
    write_report(None);
}

extern "C" fn on_crash(sig: i32) {
    // A fault is delivered to the thread that caused it: its own call is the one to
    // name (other threads' calls, an accept waiting for it, are not the cause).
    let mine = MINE.try_with(|m| m.0.get()).ok().flatten();
    write_report(Some(mine));
    let idx = sig as usize;
    if idx < PREVIOUS.len() && PREVIOUS[idx].load(Ordering::Acquire) == 1 {
        // SAFETY: written once by `install` before this handler was set; sigaction is
        // async-signal-safe.
        unsafe {
            let actions = &raw const PREVIOUS_ACTIONS;
            libc::sigaction(sig, (*actions)[idx].as_ptr(), std::ptr::null_mut());
        }
    } else {
        // SAFETY: as above.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    // Returning repeats the faulting instruction (or abort's raise) under the
    // restored handler.
}

/// Writes the report lines to stderr with write(2) only (async-signal-safe): every
/// thread's call, or with `only`, the one thread's (`Some(None)`: a thread that holds
/// no slot, so in no call).
fn write_report(only: Option<Option<usize>>) {
    let mut any = false;
    for (i, s) in SLOT.iter().enumerate() {
        if only.is_some_and(|mine| mine != Some(i)) {
            continue;
        }
        if let Some(f) = decode(s.load(Ordering::Relaxed)) {
            any = true;
            let mut buf = [0u8; 96];
            let mut n = 0;
            for part in [PREFIX.as_bytes(), f.call.name().as_bytes()] {
                buf[n..n + part.len()].copy_from_slice(part);
                n += part.len();
            }
            if f.message != 0 {
                let of = b" of message ";
                buf[n..n + of.len()].copy_from_slice(of);
                n += of.len();
                n += digits(f.message, &mut buf[n..]);
            }
            buf[n] = b'\n';
            n += 1;
            raw_write(&buf[..n]);
        }
    }
    if !any {
        let mut buf = [0u8; 64];
        let line = [PREFIX.as_bytes(), b"none\n"];
        let mut n = 0;
        for part in line {
            buf[n..n + part.len()].copy_from_slice(part);
            n += part.len();
        }
        raw_write(&buf[..n]);
    }
}

/// Writes `v` in decimal at the start of `out`; returns the digits written.
fn digits(mut v: u64, out: &mut [u8]) -> usize {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let len = tmp.len() - i;
    out[..len].copy_from_slice(&tmp[i..]);
    len
}

fn raw_write(bytes: &[u8]) {
    // SAFETY: write(2) on stderr from a valid buffer; async-signal-safe.
    unsafe {
        libc::write(2, bytes.as_ptr().cast(), bytes.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_in_a_call_is_described_until_the_call_returns() {
        std::thread::spawn(|| {
            {
                let _g = enter(Call::Recv, 12);
                let mine: Vec<String> = describe().iter().map(|f| f.to_string()).collect();
                assert!(mine.contains(&"recv of message 12".to_string()), "{mine:?}");
            }
            {
                let _g = enter(Call::Connect, 0);
                assert!(describe().iter().any(|f| f.to_string() == "connect"));
            }
            // Out of the call: not in flight (other tests' threads may be).
            assert!(!describe().iter().any(|f| f.to_string() == "connect"));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_thread_that_ends_gives_its_slot_back() {
        for _ in 0..3 * SLOTS {
            std::thread::spawn(|| {
                let _g = enter(Call::Send, 1);
            })
            .join()
            .unwrap();
        }
        // Every one of those threads found a slot and gave it back: one more does.
        std::thread::spawn(|| {
            let _g = enter(Call::Flush, 0);
            assert!(describe().iter().any(|f| f.call == Call::Flush));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn digits_and_reports_read_back() {
        let mut b = [0u8; 20];
        let n = digits(18_446_744_073_709_551_615, &mut b);
        assert_eq!(&b[..n], b"18446744073709551615");
        let n = digits(0, &mut b);
        assert_eq!(&b[..n], b"0");
        let tail = "noise\nxferbench: plugin call in flight: none\n\
                    xferbench: plugin call in flight: close\n\
                    xferbench: plugin call in flight: recv of message 3\n";
        assert_eq!(
            parse_report(tail),
            Some(vec!["close".to_string(), "recv of message 3".to_string()])
        );
        assert_eq!(
            parse_report("xferbench: plugin call in flight: none"),
            Some(vec![])
        );
        assert_eq!(parse_report("something else"), None);
    }

    #[test]
    fn every_call_has_a_name_and_reads_back_from_its_number() {
        for c in Call::ALL {
            assert_eq!(Call::from_u8(c as u8), Some(c));
            assert!(!c.name().is_empty());
        }
        assert_eq!(Call::from_u8(0), None);
        assert_eq!(Call::from_u8(200), None);
    }
}
