//! `stream`: the driver sends messages one way as fast as the transport takes them;
//! the peer receives (and touches or verifies) them. Throughput is measured from the
//! driver's first send to the peer's end of stream.

use super::contract::{Control, DriverOutcome, ServeOutcome, Workload};
use super::message::{CLOCK_CHECK_EVERY, io_err, send_message, take_message};
use super::spec::{ChannelSpec, TOUCH};
use crate::error::WorkloadError;
use crate::record::{ChannelOutcome, FigureRules};
use crate::result::figure;
use std::sync::atomic::Ordering::Relaxed;
use xferbench_probes::clock::Stamp;
use xferbench_probes::verify::{Verifier, fill_pattern};
use xferbench_transports::buffer::PageBuf;
use xferbench_transports::{Endpoint, ParamDef};

/// One-way throughput.
#[derive(Debug)]
pub struct Stream;

impl Workload for Stream {
    const RULES: FigureRules = FigureRules {
        primary: figure::THROUGHPUT,
        higher_is_better: true,
    };
    const PARAMS: &'static [ParamDef] = &[TOUCH];

    /// The window ends when the receiver saw the end of the stream; what counts is
    /// what it received, and messages the driver sent that never reached the
    /// verifier's count are lost.
    fn channel_outcome(
        size: usize,
        driver: DriverOutcome,
        served: &ServeOutcome,
    ) -> ChannelOutcome {
        ChannelOutcome {
            start: driver.start,
            end: served.end.max(driver.start),
            messages: served.received,
            bytes: served.received * size as u64,
            latency: None,
            integrity: served.integrity.map(|mut c| {
                c.lost += driver.sent.saturating_sub(served.next_expected);
                c
            }),
            schedule: None,
        }
    }

    fn drive<E: Endpoint>(
        ep: &mut E,
        spec: &ChannelSpec,
        ctl: &Control<'_>,
    ) -> Result<DriverOutcome, WorkloadError> {
        let mut buf = PageBuf::zeroed(spec.size);
        fill_pattern(&mut buf);
        let (max, duration_ns) = spec.bounds();
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
            send_message(ep, &mut buf, spec, seq)?;
            seq += 1;
            ctl.progress.store(seq, Relaxed);
        }
        let end = Stamp::now();
        ep.close_send().map_err(io_err("close", seq))?;
        Ok(DriverOutcome {
            start,
            end,
            sent: seq,
            latency: None,
            integrity: None,
            stopped,
            schedule: None,
        })
    }

    fn serve<E: Endpoint>(ep: &mut E, spec: &ChannelSpec) -> Result<ServeOutcome, WorkloadError> {
        let mut buf = PageBuf::zeroed(spec.size);
        let mut verifier = spec.verify.then(Verifier::new);
        let mut sink = 0u64;
        let mut received = 0u64;
        while !take_message(
            ep,
            &mut buf,
            spec.in_place(),
            &mut verifier,
            &mut sink,
            received,
        )? {
            received += 1;
        }
        let end = Stamp::now();
        std::hint::black_box(sink);
        Ok(ServeOutcome {
            end,
            received,
            next_expected: verifier.as_ref().map_or(received, Verifier::next_expected),
            integrity: verifier.map(|v| v.finish(None)),
            latency: None,
        })
    }
}
