//! `load`: open-loop messages on a schedule at an offered rate; the latency of each
//! message is taken from the time it was *meant* to be sent.
//!
//! The driver sends message `i` at its intended time `t0 + i × gap` (evenly spaced),
//! `burst` messages back to back at each scheduled time (`-p burst=N`), or with
//! exponentially distributed gaps of the same mean (`-p arrivals=poisson`). It never
//! waits for the receiver: when a send blocks behind a stalled receiver the schedule
//! does not move, so the messages the sender could not send on time leave late and
//! carry that delay with them. Their latency is arrival − *intended* time, so a stall
//! of the receiver shows in the tail instead of vanishing (coordinated omission, in
//! Gil Tene's words; what wrk2's `-R` and Aeron's benchmark rig correct for).
//!
//! # Clock and message layout
//!
//! Both ends read one clock shared by the host's processes: the time-stamp counter
//! where the lab trusts it ([`TripClock`]: a raw reading means the same on every CPU
//! and in every process), else `CLOCK_MONOTONIC`. The message carries its intended
//! send time as a raw reading of that clock (u64 LE) right after the sequence number
//! (offset 8), or after the `--verify` header (offset 16), so a message holds at
//! least 16 (24 with `--verify`) bytes. The receiver reads the clock as soon as a
//! message is in its hands and converts only the difference to nanoseconds with
//! its own calibration, so the two processes' calibrations never meet.
//!
//! Where no clock is shared (`--remote`), the serving side echoes and the driver
//! times the echo: the latency is then the round trip from the intended time, with
//! one message in flight per channel (wrk2's per-connection model), and the result
//! says so ([`Schedule::echo`]).
//!
//! # What a run records
//!
//! The receiver's one-way latencies (an HDR histogram, as `pingpong`'s), the
//! driver's lag behind its schedule at each send (its own histogram), the offered
//! rate, the messages the schedule called for that were never sent before the run's
//! end, and, as every workload, the delivered messages over the common window (the
//! achieved rate) and both sides' CPU.

pub use super::contract::Recorded;
use super::contract::{Control, DriverOutcome, ServeOutcome, Workload, record_set};
use super::message::{io_err, recv_or_closed};
use super::pingpong::Pingpong;
pub use super::schedule::{ARRIVALS, Arrivals, BURST, ChannelSchedule, MAX_RATE, RATE, Schedule};
use super::spec::{ChannelSpec, TOUCH};
use crate::error::WorkloadError;
use crate::record::{BEHIND_WARNING, ChannelOutcome, FigureRules, ScheduleOutcome};
use crate::result::{figure, new_histogram};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;
use xferbench_params::{ParamDef, ParamMap, ParamValues};
use xferbench_probes::clock::{StallRecorder, Stamp, TripClock};
use xferbench_probes::verify::{HEADER_LEN, Verifier, fill_pattern, read_lines, stamp, touch};
use xferbench_transports::Endpoint;
use xferbench_transports::buffer::PageBuf;

/// Where a load message carries its intended send time: after the sequence number,
/// or after the `--verify` header.
#[inline]
pub fn time_offset(verify: bool) -> usize {
    if verify { HEADER_LEN } else { 8 }
}

/// The smallest message `load` sends: its marks and its intended time.
pub fn min_size(verify: bool) -> usize {
    time_offset(verify) + 8
}

/// The waits of a paced sender: sleep while the next send is far, spin near it.
///
/// A sleep wakes tens of microseconds late on a VM, so the sender sleeps only until
/// [`SPIN_BEFORE`] ahead of its next time and spins the rest; a gap shorter than that
/// is spun whole (a busy sender, as in Aeron's and sockperf's pacing loops). The
/// sleeping is cut in slices of at most [`SLEEP_SLICE`] so that a stop is seen.
const SPIN_BEFORE: Duration = Duration::from_micros(200);
const SLEEP_SLICE: Duration = Duration::from_millis(20);
/// The last stretch before a message's time is spun on the clock alone, without the
/// CPU's spin-wait hint: on recent x86 cores a `pause` lasts over a hundred cycles,
/// and each one the sender takes there is time the message waits past its schedule.
const SPIN_HOT: Duration = Duration::from_micros(2);

/// Open-loop messages at an offered rate.
#[derive(Debug)]
pub struct Load;

impl Workload for Load {
    const RULES: FigureRules = FigureRules {
        primary: figure::LATENCY[2],
        higher_is_better: false,
    };
    const PARAMS: &'static [ParamDef] = &[RATE, BURST, ARRIVALS, TOUCH];

    /// The rate always (a load point is a point of a rate curve), the others where
    /// they are not their defaults.
    fn record(values: &ParamValues, map: &mut ParamMap) {
        map.put(&RATE, values.value(&RATE));
        record_set(values, Self::PARAMS, map);
    }

    /// The window is the schedule's: from the driver's first scheduled send over
    /// the span the schedule offered (longer if the sender ran late), so the
    /// achieved rate is what arrived per second of offered schedule, whatever the
    /// last message's latency; what counts is what arrived, with the receiver's
    /// latencies (or the driver's round trips, echoing) and the driver's lag.
    fn channel_outcome(
        size: usize,
        driver: DriverOutcome,
        served: &ServeOutcome,
    ) -> ChannelOutcome {
        let echo = driver.latency.is_some();
        let (messages, latency) = if echo {
            (driver.sent, driver.latency)
        } else {
            (
                served.received,
                served.latency.as_ref().map(Recorded::histogram),
            )
        };
        let span = driver.schedule.as_ref().map_or(0, |s| s.span_ns);
        ChannelOutcome {
            start: driver.start,
            end: Stamp(driver.start.0 + span).max(driver.end),
            messages,
            bytes: messages * size as u64,
            latency,
            integrity: served.integrity.or(driver.integrity).map(|mut c| {
                if !echo {
                    c.lost += driver.sent.saturating_sub(served.next_expected);
                }
                c
            }),
            schedule: driver.schedule.map(|mut s| {
                if !echo {
                    s.lost = driver.sent.saturating_sub(served.received);
                }
                s
            }),
        }
    }

    // The sender's schedule loop stays in one piece: with its wait moved into a
    // method of its own, the one-way latency of small messages rose measurably in
    // alternating release runs.
    fn drive<E: Endpoint>(
        ep: &mut E,
        spec: &ChannelSpec,
        ctl: &Control<'_>,
    ) -> Result<DriverOutcome, WorkloadError> {
        let sched = spec.load.ok_or_else(|| {
            WorkloadError::Config("the load workload needs a schedule (--rate)".into())
        })?;
        let at = time_offset(spec.verify);
        let mut out = PageBuf::zeroed(spec.size);
        let mut back = PageBuf::zeroed(spec.size);
        fill_pattern(&mut out);
        let clock = TripClock::new();
        let ticks_per_ns = clock.ticks_per_ns();
        let mean_gap = sched.mean_gap_ns() * ticks_per_ns;
        let mut rng = fastrand::Rng::with_seed(0x5eed ^ spec.size as u64);
        let mut lag = new_histogram();
        let mut stalls = StallRecorder::new(&clock);
        let mut trips = sched.echo.then(new_histogram);
        let mut verifier = (spec.verify && sched.echo).then(Verifier::new);
        let (max, duration_ns) = spec.bounds();
        let spin_before = SPIN_BEFORE.as_nanos() as f64 * ticks_per_ns;
        let spin_hot = SPIN_HOT.as_nanos() as f64 * ticks_per_ns;
        let mut sink = 0u64;
        let mut stopped = false;
        let start = Stamp::now();
        let t0 = clock.read();
        // The schedule's end in the counter's ticks: a timed run sends what falls
        // before it (late, if the sender is behind, for up to a tenth of the run
        // more); a counted one, its count.
        let end = duration_ns.map(|ns| t0 + (ns as f64 * ticks_per_ns) as u64);
        let grace = duration_ns.map_or(0, |ns| {
            ((ns / 10).max(1_000_000) as f64 * ticks_per_ns) as u64
        });
        let mut next = t0 as f64;
        let mut seq = 0u64;
        // Messages of the current burst still to send when the run gave up.
        let mut left_in_burst = 0u64;
        'schedule: while seq < max {
            let due = next as u64;
            if end.is_some_and(|e| due >= e) {
                break;
            }
            // Wait for the scheduled time: sleep while it is far, spin near it. The
            // reading that reaches it is the first message's send time: nothing but
            // the send lies between the two. The gaps between the readings of the
            // spin show the stalls of the sender's own CPU while it waits.
            let mut spun: Option<u64> = None;
            let mut reached = loop {
                if ctl.stop.load(Relaxed) {
                    stopped = true;
                    break 'schedule;
                }
                let now = clock.read();
                if let Some(before) = spun {
                    stalls.gap(before, now);
                }
                if now >= due {
                    break Some(now);
                }
                let left = (due - now) as f64;
                if left > spin_before {
                    let ns = ((left - spin_before) / ticks_per_ns) as u64;
                    std::thread::sleep(Duration::from_nanos(ns).min(SLEEP_SLICE));
                    spun = None;
                } else {
                    if left > spin_hot {
                        std::hint::spin_loop();
                    }
                    spun = Some(now);
                }
            };
            for b in 0..sched.burst {
                if seq >= max {
                    break;
                }
                // A timed run whose sender fell far behind stops at the schedule's
                // end and its grace: what was due and never sent is counted.
                let now = reached.take().unwrap_or_else(|| clock.read());
                if end.is_some_and(|e| now >= e + grace) {
                    left_in_burst = u64::from(sched.burst - b);
                    break 'schedule;
                }
                out[at..at + 8].copy_from_slice(&due.to_le_bytes());
                send_stamped(ep, &mut out, spec, seq)?;
                // The lag is recorded after the send, off the message's path.
                lag.saturating_record(clock.nanos(due, now).max(1));
                seq += 1;
                ctl.progress.store(seq, Relaxed);
                if let Some(h) = &mut trips {
                    ep.flush().map_err(io_err("flush", seq - 1))?;
                    if recv_or_closed(ep, &mut back, seq - 1)? {
                        return Err(WorkloadError::PeerClosed { seq: seq - 1 });
                    }
                    h.saturating_record(clock.nanos(due, clock.read()).max(1));
                    match &mut verifier {
                        Some(v) => v.check(&back),
                        None => sink ^= touch(&back),
                    }
                }
            }
            if !sched.echo {
                ep.flush().map_err(io_err("flush", seq))?;
            }
            next += gap(sched.arrivals, mean_gap, &mut rng);
        }
        let end_stamp = Stamp::now();
        // Messages the schedule called for before its end that were never sent: the
        // rest of the schedule, counted without sending.
        let mut unsent = 0;
        if let Some(e) = end
            && left_in_burst > 0
        {
            unsent = left_in_burst;
            next += gap(sched.arrivals, mean_gap, &mut rng);
            while (next as u64) < e && seq + unsent < max {
                unsent += u64::from(sched.burst);
                next += gap(sched.arrivals, mean_gap, &mut rng);
            }
        }
        ep.close_send().map_err(io_err("close", seq))?;
        std::hint::black_box(sink);
        Ok(DriverOutcome {
            start,
            end: end_stamp,
            sent: seq,
            latency: trips,
            integrity: verifier.map(|v| v.finish(Some(seq))),
            stopped,
            schedule: Some(ScheduleOutcome {
                offered_per_s: sched.rate,
                lag: Some(lag),
                stalls: Some(stalls.sample(xferbench_probes::affinity::current_cpu())),
                unsent,
                lost: 0,
                span_ns: duration_ns.unwrap_or((seq as f64 / sched.rate * 1e9) as u64),
            }),
        })
    }

    fn serve<E: Endpoint>(ep: &mut E, spec: &ChannelSpec) -> Result<ServeOutcome, WorkloadError> {
        if spec.load.is_some_and(|s| s.echo) {
            return Pingpong::serve(ep, spec);
        }
        let at = time_offset(spec.verify);
        let clock = TripClock::new();
        let mut buf = PageBuf::zeroed(spec.size);
        let mut verifier = spec.verify.then(Verifier::new);
        let mut hist = new_histogram();
        let mut sink = 0u64;
        let mut received = 0u64;
        loop {
            // The arrival is read as soon as the message is in hand, before it is
            // read or checked.
            let closed = if let Some(touch) = spec.in_place() {
                let taken = ep
                    .recv_in_place(spec.size, |m| {
                        let arrived = clock.read();
                        let due = u64::from_le_bytes(m[at..at + 8].try_into().expect("8 bytes"));
                        hist.saturating_record(clock.nanos(due, arrived).max(1));
                        match &mut verifier {
                            Some(v) => v.check(m),
                            None if touch.reads() => sink ^= read_lines(m),
                            None => {}
                        }
                    })
                    .map_err(io_err("receive", received))?;
                taken.is_none()
            } else {
                if recv_or_closed(ep, &mut buf, received)? {
                    true
                } else {
                    let arrived = clock.read();
                    let due = u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"));
                    hist.saturating_record(clock.nanos(due, arrived).max(1));
                    match &mut verifier {
                        Some(v) => v.check(&buf),
                        None => sink ^= touch(&buf),
                    }
                    false
                }
            };
            if closed {
                break;
            }
            received += 1;
        }
        let end = Stamp::now();
        std::hint::black_box(sink);
        Ok(ServeOutcome {
            end,
            received,
            next_expected: verifier.as_ref().map_or(received, Verifier::next_expected),
            integrity: verifier.map(|v| v.finish(None)),
            latency: Some(Recorded::of(&hist)),
        })
    }
}

/// The time to the next scheduled burst, in the clock's ticks.
#[inline]
fn gap(arrivals: Arrivals, mean: f64, rng: &mut fastrand::Rng) -> f64 {
    match arrivals {
        Arrivals::Uniform => mean,
        // Inverse transform of a uniform draw in (0, 1]: an exponential gap.
        Arrivals::Poisson => -(1.0 - rng.f64()).ln() * mean,
    }
}

/// Sends message `seq` of a load run whose intended time is already in `buf`: in
/// place, the whole buffer is copied in (the time must travel), else copied out;
/// stamped by the `--verify` rule.
#[inline]
fn send_stamped<E: Endpoint>(
    ep: &mut E,
    buf: &mut [u8],
    spec: &ChannelSpec,
    seq: u64,
) -> Result<(), WorkloadError> {
    let corrupt = spec.corrupts(seq);
    let last = buf.len() - 1;
    stamp(buf, seq, spec.verify);
    if corrupt {
        buf[last] ^= 0xFF;
    }
    let r = if spec.zero_copy {
        let at = time_offset(spec.verify);
        let writes = spec.touch.writes();
        ep.send_in_place(buf.len(), |m| {
            if writes {
                m.copy_from_slice(buf);
            } else {
                // Only the marks and the time: the rest goes as the buffer holds it.
                m[..at + 8].copy_from_slice(&buf[..at + 8]);
            }
        })
    } else {
        ep.send(buf)
    };
    if corrupt {
        buf[last] ^= 0xFF;
    }
    r.map_err(io_err("send", seq))
}

/// The share of the gap between a channel's messages its sender may begin 99 % of
/// its sends behind their time and still be on schedule.
pub const PACING: f64 = 0.10;

/// The warning of a load point whose sender began 1 % of its sends later than
/// [`PACING`] of the gap between a channel's messages, from the point's `summary`
/// figures, or `None` on schedule (or not a load point). `stall_p99_ns` is the
/// machine's own p99 wait for a CPU ([`crate::limits::Limits::stall_p99_ns`]): when it
/// reaches the allowance too, no sender keeps closer on this machine, and the warning
/// says so.
pub fn pacing_warning(
    summary: &std::collections::BTreeMap<String, xferbench_probes::stats::Estimate>,
    channels: usize,
    stall_p99_ns: Option<f64>,
) -> Option<String> {
    let offered = summary.get(figure::OFFERED_RATE)?.median;
    let lag = summary.get(figure::BEHIND[1])?.median;
    let gap = channels.max(1) as f64 * 1e9 / offered.max(1e-9);
    let allowed = PACING * gap;
    if lag <= allowed {
        return None;
    }
    // The sender's own CPU during the run, read between its sends, and the
    // machine's CPUs as the stall probe saw them: the longer wait bounds the lag.
    let own = summary.get(figure::SENDER_STALL_P99).map(|e| e.median);
    let lost = summary.get(figure::SENDER_STALL_FRACTION).map(|e| e.median);
    let floor = match (own, stall_p99_ns) {
        (Some(o), Some(p)) if p > o => Some((p, false)),
        (Some(o), _) => Some((o, true)),
        (None, p) => p.map(|p| (p, false)),
    };
    let why = match floor {
        Some((stall, own)) if stall >= allowed && lag <= MACHINE_LAG * stall => {
            let whose = if own {
                format!(
                    "the sender's own CPU, read while it waited for its messages' times, \
                     was taken from it for {} of that time and kept a random moment waiting \
                     {} at p99",
                    percent(lost.unwrap_or(0.0)),
                    words_ns(stall)
                )
            } else {
                format!(
                    "a thread that only reads the clock on this machine's busy CPUs waits {} \
                     for its CPU at p99 (the stalls of `xferbench limits`)",
                    words_ns(stall)
                )
            };
            format!("; {whose}: the lag is what the CPU allows, no sender keeps closer here")
        }
        Some((stall, own)) => format!(
            "; {} {} at p99, so the sends themselves fall behind: the latencies include \
             the time each message waited for its sender",
            if own {
                "the sender's own CPU stalled"
            } else {
                "the CPUs' own stalls are"
            },
            words_ns(stall)
        ),
        None => String::new(),
    };
    let share = lag / gap;
    let share = if share >= 10.0 {
        format!("{share:.0}× the")
    } else {
        format!("{:.0} % of the", share * 100.0)
    };
    Some(format!(
        "{BEHIND_WARNING} the sender began 1 % of its sends {} or more after their time, \
         {share} {} between a channel's messages (on schedule: within {:.0} %){why}",
        words_ns(lag),
        words_ns(gap),
        PACING * 100.0
    ))
}

/// A lag up to this multiple of the CPUs' own stall p99 is put down to the stalls.
const MACHINE_LAG: f64 = 2.0;

/// `1.2 %`, `0.04 %`.
fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p >= 1.0 || p == 0.0 {
        format!("{p:.1} %")
    } else {
        format!("{p:.2} %")
    }
}

/// `870 ns`, `12.3 µs`, `1.25 ms`, `3.18 s`.
fn words_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

#[cfg(test)]
mod open_loop_tests {
    use super::*;
    use crate::workload::kind::WorkloadKind;
    use crate::workload::spec::{Limit, Touch};
    use hdrhistogram::Histogram;
    use std::sync::atomic::{AtomicBool, AtomicU64};
    use std::time::Instant;
    use xferbench_params::Value;
    use xferbench_transports::os::pipe::{PIPE_SIZE, Pipe};
    use xferbench_transports::{Listener, ParamValues, Recv, Transport};

    /// A receiving end that stops for `stall` before every `every`-th message: a
    /// receiver with a periodic pause (a garbage collector, a page fault storm).
    struct Stalling<E> {
        inner: E,
        every: u64,
        stall: Duration,
        n: u64,
    }

    impl<E: Endpoint> Endpoint for Stalling<E> {
        fn send(&mut self, msg: &[u8]) -> std::io::Result<()> {
            self.inner.send(msg)
        }
        fn recv(&mut self, buf: &mut [u8]) -> std::io::Result<Recv> {
            self.n += 1;
            if self.n.is_multiple_of(self.every) {
                std::thread::sleep(self.stall);
            }
            self.inner.recv(buf)
        }
        fn close_send(&mut self) -> std::io::Result<()> {
            self.inner.close_send()
        }
    }

    /// One channel of `load` over a pipe of one page, whose sender blocks as soon as
    /// 64 messages wait: the receiver stalls for `stall` every `every` messages.
    fn run(
        rate: u64,
        every: u64,
        stall: Duration,
        seconds: f64,
    ) -> (Histogram<u64>, ScheduleOutcome, u64) {
        let mut values = ParamValues::new();
        values.set(&PIPE_SIZE, Value::Bytes(4096)).unwrap();
        let t = Pipe::from_values(&values).unwrap();
        let spec = ChannelSpec {
            workload: WorkloadKind::Load,
            size: 64,
            limit: Limit::Duration((seconds * 1e9) as u64),
            verify: false,
            corrupt_every: None,
            zero_copy: false,
            touch: Touch::All,
            load: Some(Schedule::at(rate).channel(1)),
            params: Default::default(),
        };
        let listener = t.listen().unwrap();
        let address = listener.address().to_string();
        let far = Instant::now() + Duration::from_secs(10);
        let serving = {
            let (t, spec) = (t.clone(), spec.clone());
            std::thread::spawn(move || {
                let inner = t.connect(&address, far).unwrap();
                let mut ep = Stalling {
                    inner,
                    every,
                    stall,
                    n: 0,
                };
                Load::serve(&mut ep, &spec).unwrap()
            })
        };
        let mut ep = listener.accept(far).unwrap();
        let (stop, progress) = (AtomicBool::new(false), AtomicU64::new(0));
        let ctl = Control {
            stop: &stop,
            progress: &progress,
        };
        let driven = Load::drive(&mut ep, &spec, &ctl).unwrap();
        drop(ep);
        let served = serving.join().unwrap();
        let sent = driven.sent;
        let out = Load::channel_outcome(64, driven, &served);
        (out.latency.unwrap(), out.schedule.unwrap(), sent)
    }

    /// The target of coordinated omission: a receiver that stalls 20 ms every 2,000
    /// messages at 20,000 messages/s leaves about 400 of every 2,400 messages
    /// waiting behind a stall, so the p99 from the intended send times is at least
    /// 10 ms, though every message is sent and received within microseconds of
    /// the moment the sender gets to it.
    #[test]
    fn a_stalled_receiver_shows_in_the_tail() {
        let (latency, schedule, sent) = run(20_000, 2_000, Duration::from_millis(20), 0.6);
        let p99 = latency.value_at_quantile(0.99);
        eprintln!(
            "stalled receiver: p50 {} ns, p99 {p99} ns, max {} ns; lag p99 {} ns",
            latency.value_at_quantile(0.5),
            latency.max(),
            schedule
                .lag
                .as_ref()
                .map_or(0, |h| h.value_at_quantile(0.99))
        );
        assert!(p99 >= 10_000_000, "p99 {p99} ns: the stalls vanished");
        // The sender was held up by the full pipe: its lag shows the stalls too.
        let lag = schedule.lag.unwrap();
        assert!(lag.max() >= 10_000_000, "lag max {} ns", lag.max());
        assert_eq!(latency.len(), sent, "every message sent was timed");
        assert_eq!(schedule.lost, 0);
    }

    /// Without the stalls the same schedule keeps its tail far below them, and the
    /// sender keeps to its schedule: achieved within 1 % of offered.
    #[test]
    fn an_unstalled_receiver_keeps_the_schedule() {
        let (latency, schedule, sent) = run(20_000, u64::MAX, Duration::ZERO, 0.5);
        let p50 = latency.value_at_quantile(0.5);
        assert!(p50 < 1_000_000, "p50 {p50} ns");
        let expected = 20_000.0 * 0.5;
        assert!(
            (sent + schedule.unsent) as f64 >= 0.99 * expected && (sent as f64) <= 1.01 * expected,
            "sent {sent}, unsent {}, expected {expected}",
            schedule.unsent
        );
    }

    #[test]
    fn a_sender_behind_its_schedule_is_told_whether_the_machine_or_its_sends_hold_it_back() {
        let est = |v: f64| xferbench_probes::stats::Estimate::from_values([v]).unwrap();
        let summary = |lag: f64| {
            [(figure::OFFERED_RATE, 1e6), (figure::BEHIND[1], lag)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), est(v)))
                .collect()
        };
        // 1 M/s on one channel: a gap of 1 µs, on schedule within 100 ns.
        assert_eq!(pacing_warning(&summary(90.0), 1, Some(5e3)), None);
        let machine = pacing_warning(&summary(8e3), 1, Some(5e3)).unwrap();
        assert!(machine.starts_with(BEHIND_WARNING), "{machine}");
        assert!(
            machine.contains("8.0 µs") && machine.contains("800 % of the 1.0 µs"),
            "{machine}"
        );
        assert!(machine.contains("no sender keeps closer"), "{machine}");
        // Stalls too short to matter, or far shorter than the lag: the sends.
        for stall in [20.0, 5e3] {
            let sends = pacing_warning(&summary(3.2e9), 1, Some(stall)).unwrap();
            assert!(
                sends.contains("the sends themselves fall behind"),
                "{sends}"
            );
            assert!(
                sends.contains("3.20 s") && sends.contains("3200000× the"),
                "{sends}"
            );
        }
        // The sender's own CPU stalled during the run, where the quick probe saw
        // nothing: its own stalls bound the lag.
        let mut own = summary(3e3);
        own.insert(figure::SENDER_STALL_P99.to_string(), est(2e3));
        own.insert(figure::SENDER_STALL_FRACTION.to_string(), est(0.012));
        let w = pacing_warning(&own, 1, Some(0.0)).unwrap();
        assert!(
            w.contains("the sender's own CPU") && w.contains("1.2 %"),
            "{w}"
        );
        assert!(
            w.contains("2.0 µs at p99") && w.contains("no sender keeps"),
            "{w}"
        );
        // ... and a lag far beyond them is the sends', naming the sender's CPU.
        let mut far = summary(3e5);
        far.insert(figure::SENDER_STALL_P99.to_string(), est(2e3));
        let w = pacing_warning(&far, 1, Some(0.0)).unwrap();
        assert!(w.contains("the sender's own CPU stalled 2.0 µs"), "{w}");
        assert!(w.contains("the sends themselves fall behind"), "{w}");
        // Two channels share the rate: each one's gap is 2 µs.
        assert_eq!(pacing_warning(&summary(150.0), 2, None), None);
        // Not a load point.
        assert_eq!(pacing_warning(&Default::default(), 1, None), None);
    }
}
