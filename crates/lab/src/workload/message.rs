//! The per-message steps the workloads share: send one message, take one, map an
//! I/O error to the message it failed on.

use super::spec::{ChannelSpec, Touch};
use crate::error::WorkloadError;
use xferbench_probes::verify::{Verifier, read_lines, stamp, touch, write_in_place};
use xferbench_transports::{Endpoint, Recv};

/// How often (in messages) a duration-limited loop reads the clock.
pub(crate) const CLOCK_CHECK_EVERY: u64 = 64;

#[inline]
pub(crate) fn io_err(op: &'static str, seq: u64) -> impl FnOnce(std::io::Error) -> WorkloadError {
    move |source| WorkloadError::Io { op, seq, source }
}

/// Receives into `buf`, mapping [`Recv::Closed`] to `true`.
#[inline]
pub(crate) fn recv_or_closed<E: Endpoint>(
    ep: &mut E,
    buf: &mut [u8],
    seq: u64,
) -> Result<bool, WorkloadError> {
    match ep.recv(buf).map_err(io_err("receive", seq))? {
        Recv::Message => Ok(false),
        Recv::Closed => Ok(true),
    }
}

/// Sends message `seq`: in place by the zero-copy rule, or stamped in `buf` and
/// copied; fault injection flips its last byte.
#[inline]
pub(crate) fn send_message<E: Endpoint>(
    ep: &mut E,
    buf: &mut [u8],
    spec: &ChannelSpec,
    seq: u64,
) -> Result<(), WorkloadError> {
    let corrupt = spec.corrupts(seq);
    let last = buf.len() - 1;
    let r = if spec.zero_copy {
        ep.send_in_place(buf.len(), |m| {
            if spec.touch.writes() {
                write_in_place(m, seq, spec.verify);
            }
            if corrupt {
                m[last] ^= 0xFF;
            }
        })
    } else {
        stamp(buf, seq, spec.verify);
        if corrupt {
            buf[last] ^= 0xFF;
        }
        let r = ep.send(buf);
        if corrupt {
            buf[last] ^= 0xFF;
        }
        r
    };
    r.map_err(io_err("send", seq))
}

/// Receives the next message and reads it: checked by `verifier`, or touched into
/// `sink` (in place: every cache line, unless `touch` reads nothing; copied into
/// `buf`: its first word). `true` when the peer closed instead.
#[inline]
pub(crate) fn take_message<E: Endpoint>(
    ep: &mut E,
    buf: &mut [u8],
    zero_copy: Option<Touch>,
    verifier: &mut Option<Verifier>,
    sink: &mut u64,
    seq: u64,
) -> Result<bool, WorkloadError> {
    if let Some(touch) = zero_copy {
        let read = |m: &[u8]| match verifier {
            Some(v) => v.check(m),
            None if touch.reads() => *sink ^= read_lines(m),
            None => {}
        };
        return Ok(ep
            .recv_in_place(buf.len(), read)
            .map_err(io_err("receive", seq))?
            .is_none());
    }
    if recv_or_closed(ep, buf, seq)? {
        return Ok(true);
    }
    match verifier {
        Some(v) => v.check(buf),
        None => *sink ^= touch(buf),
    }
    Ok(false)
}
