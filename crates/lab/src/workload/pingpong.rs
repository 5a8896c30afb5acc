//! `pingpong`: the driver sends a message and waits for the peer's echo before the
//! next one; every round trip is timed into an HDR histogram (1 ns to 1 h, 3
//! significant digits). With `verify`, the driver checks each echo.

use super::contract::{Control, DriverOutcome, ServeOutcome, Workload};
use super::message::{CLOCK_CHECK_EVERY, io_err, recv_or_closed, send_message, take_message};
use super::spec::{ChannelSpec, TOUCH};
use crate::error::WorkloadError;
use crate::record::{ChannelOutcome, FigureRules};
use crate::result::{figure, new_histogram};
use std::sync::atomic::Ordering::Relaxed;
use xferbench_probes::clock::{Stamp, TripClock};
use xferbench_probes::verify::{Verifier, fill_pattern, touch};
use xferbench_transports::buffer::PageBuf;
use xferbench_transports::{Endpoint, ParamDef};

/// Request/response latency.
#[derive(Debug)]
pub struct Pingpong;

impl Workload for Pingpong {
    const RULES: FigureRules = FigureRules {
        primary: figure::LATENCY[0],
        higher_is_better: false,
    };
    const PARAMS: &'static [ParamDef] = &[TOUCH];

    /// The window is the driver's, from its first request to its last reply; the
    /// driver counts the round trips and verifies the echoes.
    fn channel_outcome(
        size: usize,
        driver: DriverOutcome,
        _served: &ServeOutcome,
    ) -> ChannelOutcome {
        ChannelOutcome {
            start: driver.start,
            end: driver.end,
            messages: driver.sent,
            bytes: driver.sent * size as u64,
            latency: driver.latency,
            integrity: driver.integrity,
            schedule: None,
        }
    }

    fn drive<E: Endpoint>(
        ep: &mut E,
        spec: &ChannelSpec,
        ctl: &Control<'_>,
    ) -> Result<DriverOutcome, WorkloadError> {
        let mut out = PageBuf::zeroed(spec.size);
        let mut back = PageBuf::zeroed(spec.size);
        fill_pattern(&mut out);
        let mut hist = new_histogram();
        let mut verifier = spec.verify.then(Verifier::new);
        let (max, duration_ns) = spec.bounds();
        let clock = TripClock::new();
        let mut sink = 0u64;
        let mut stopped = false;
        let start = Stamp::now();
        let mut seq = 0u64;
        while seq < max {
            if let Some(ns) = duration_ns
                && seq.is_multiple_of(CLOCK_CHECK_EVERY)
                && Stamp::now().since(start) >= ns
            {
                break;
            }
            if ctl.stop.load(Relaxed) {
                stopped = true;
                break;
            }
            let t0 = clock.read();
            send_message(ep, &mut out, spec, seq)?;
            ep.flush().map_err(io_err("flush", seq))?;
            // In place, the reply is read (or checked) where it lies, inside the round
            // trip; copied out, it is read after the clock stops.
            let closed = if spec.zero_copy {
                take_message(
                    ep,
                    &mut back,
                    spec.in_place(),
                    &mut verifier,
                    &mut sink,
                    seq,
                )?
            } else {
                recv_or_closed(ep, &mut back, seq)?
            };
            if closed {
                return Err(WorkloadError::PeerClosed { seq });
            }
            let t1 = clock.read();
            hist.saturating_record(clock.nanos(t0, t1).max(1));
            if !spec.zero_copy {
                match &mut verifier {
                    Some(v) => v.check(&back),
                    None => sink ^= touch(&back),
                }
            }
            seq += 1;
            ctl.progress.store(seq, Relaxed);
        }
        let end = Stamp::now();
        ep.close_send().map_err(io_err("close", seq))?;
        std::hint::black_box(sink);
        Ok(DriverOutcome {
            start,
            end,
            sent: seq,
            latency: Some(hist),
            integrity: verifier.map(|v| v.finish(Some(seq))),
            stopped,
            schedule: None,
        })
    }

    fn serve<E: Endpoint>(ep: &mut E, spec: &ChannelSpec) -> Result<ServeOutcome, WorkloadError> {
        let mut buf = PageBuf::zeroed(spec.size);
        let mut received = 0u64;
        let mut sink = 0u64;
        loop {
            if spec.zero_copy {
                let touch = spec.touch;
                let echoed = ep
                    .echo_in_place(spec.size, |request, reply| touch.echo(request, reply))
                    .map_err(io_err("echo", received))?;
                match echoed {
                    Some(read) => sink ^= read,
                    None => break,
                }
            } else {
                if recv_or_closed(ep, &mut buf, received)? {
                    break;
                }
                ep.send(&buf).map_err(io_err("echo", received))?;
            }
            ep.flush().map_err(io_err("flush", received))?;
            received += 1;
        }
        std::hint::black_box(sink);
        Ok(ServeOutcome {
            end: Stamp::now(),
            received,
            next_expected: received,
            integrity: None,
            latency: None,
        })
    }
}
