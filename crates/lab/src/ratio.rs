//! Each point's primary figure as a fraction of its natural limit on this machine.
//!
//! | point | limit | fraction |
//! |---|---|---|
//! | `stream` (any transport) | the stream floor at the measured size nearest the message size (within a factor of four), copied or in place as the point; memcpy at the nearest size where there is none | throughput ÷ floor bandwidth |
//! | ping-pong that spins: `shm` `wait=spin` or `hybrid` (under load a hybrid waiter spins), `iceoryx2` `wait=spin`, RPMsg `notify=poll` | messages of 1 KiB to 256 KiB: the hand-over round trip at the nearest measured size; smaller ones: the cache-line round trip between the two CPUs | limit round trip ÷ median round trip |
//! | ping-pong that sleeps: `shm` `wait=block`, `iceoryx2` `wait=event`, RPMsg `kick` and `event-idx`, `unix`, `tcp` | the futex wake round trip across the CPUs | futex round trip ÷ median round trip |
//! | `pipe` ping-pong | the pipe round trip | pipe round trip ÷ median round trip |
//! | `load` (one way at a rate) | half the round-trip floor its ping-pong would have | half that round trip ÷ median one-way latency |
//! | a conversion kernel (`convert`, the SIS8300 study's test 3) | memcpy at the measured size nearest the input bytes | the boards' input rate over the common window ÷ memcpy bandwidth |
//!
//! The fraction is always "how much of its limit the point reached", so it is at most
//! about 1 whichever way the figure runs: a rate divided by the limit's rate, or the
//! limit's time divided by the point's time. A fraction near 1 means the transport
//! costs little beyond the machine's floor; 0.1 means nine tenths of the time goes to
//! the transport itself. Points with no natural limit here (Warp Pipe transactions,
//! which cross TCP and a protocol stack) carry none.
//!
//! The limits are the better of the start's and the end's measurement
//! ([`MachineLimits::floor`](crate::limits::MachineLimits::floor)), except the round-trip floors that the drift
//! samples between a point's runs also measure (cache-line, futex, hand-over): each
//! run is then held against the sample taken just before it, in the state the machine
//! was in while it ran, and the point's fraction is the median of its runs'
//! ([`LimitFraction::paired`]).
//!
//! A stream's limit is the stream floor ([`StreamLimit`](crate::limits::StreamLimit)): every byte handed
//! from one CPU to the other through a ring, as the point hands them. memcpy, one CPU
//! copying a buffer hot in its own cache, bounds no stream; it stays beside the
//! floor as a reference ([`LimitFraction::reference`], `memcpy 64 KiB (one CPU,
//! hot)`), never flagging a point.
//!
//! A point above [`SUSPECT`](crate::limits::fraction::SUSPECT) (110 %) beat what was meant to be its floor: the limit
//! was measured under other conditions than the point ran in (a machine that changed
//! speed, a slow copy placement, wake-ups from idle that a busy point never pays), or
//! the point is not bound by it. Such a fraction is not a result: it is marked
//! [`LimitFraction::suspect`], shown as a warning instead of a percentage, and left
//! out of `compare`'s change against the limit.
//!
//! The RPMsg study's points measure throughput of round trips; their round trip is
//! the median latency where recorded, else, for one channel, the inverse of the round
//! trip rate.

use crate::axes::{TRANSPORT, ZERO_COPY};
use crate::limits::Limits;
use crate::limits::fraction::{HALF, LimitFraction, MEMCPY_REFERENCE, Reference};
use crate::workload::RecordedWorkload;
use crate::workload::WORKLOAD;
use std::collections::BTreeMap;
use xferbench_probes::figure;
use xferbench_probes::stats::Estimate;
use xferbench_transports::Wakeup;
use xferbench_transports::rpmsg::NOTIFY;

/// The kind of floor a round trip sits on.
enum Floor<'a> {
    CacheLine,
    Handover(&'a crate::limits::HandoverLimit),
    Futex,
    Pipe,
}

/// The natural limit of a point, when it has one.
pub fn fraction(
    params: &BTreeMap<String, String>,
    size_bytes: u64,
    channels: usize,
    summary: &BTreeMap<String, Estimate>,
    limits: &Limits,
) -> Option<LimitFraction> {
    let p = |k: &str| params.get(k).map(String::as_str);
    let median = |f: &str| summary.get(f).map(|e| e.median);
    // The median p50 held against the round-trip floor of the point's transport: the
    // hand-over at the nearest size where spinning would hand over a cache line.
    let round_trip = || {
        let floor = match floor(p(TRANSPORT.name())?, params)? {
            Floor::CacheLine => match limits.handover_near(size_bytes) {
                Some(h) => Floor::Handover(h),
                None => Floor::CacheLine,
            },
            other => other,
        };
        round_trip_fraction(
            figure::LATENCY[0],
            median(figure::LATENCY[0])?,
            floor,
            limits,
        )
    };
    // A workload its definition does not read is a point of no known limit.
    let workload = p(WORKLOAD.name()).map(RecordedWorkload::from_name);
    match workload {
        Some(Some(RecordedWorkload::Stream)) => {
            let rate = median(figure::THROUGHPUT)?;
            let in_place = xferbench_params::ParamMap::from_params(params.clone())
                .boolean(&ZERO_COPY)
                .unwrap_or(false);
            stream_fraction(
                rate,
                limits.stream_near(size_bytes, in_place),
                limits,
                size_bytes,
            )
        }
        Some(Some(RecordedWorkload::Convert)) => {
            let copy = limits.memcpy_near(size_bytes)?;
            rate_fraction(
                figure::THROUGHPUT,
                median(figure::THROUGHPUT)?,
                copy.size_bytes,
                copy.bytes_per_s.median,
            )
        }
        Some(Some(RecordedWorkload::Pingpong)) => round_trip(),
        // One way at a rate: half the floor of the same transport's round trip.
        Some(Some(RecordedWorkload::Load)) => {
            let whole = round_trip()?;
            Some(LimitFraction::new(
                format!("{HALF}{}", whole.limit),
                whole.limit_value / 2.0,
                "ns",
                figure::LATENCY[0],
                whole.figure_value,
                whole.fraction / 2.0,
            ))
        }
        // RPMsg study points: packets echoed over a link.
        None if p(NOTIFY.name()).is_some() => {
            let floor = floor(crate::transports::RPMSG, params)?;
            let (name, rt) = match median(figure::LATENCY[0]) {
                Some(ns) => (figure::LATENCY[0], ns),
                None if channels == 1 => (
                    "round trip (1 / messages_per_s)",
                    1e9 / median(figure::MESSAGE_RATE)?,
                ),
                None => return None,
            };
            round_trip_fraction(name, rt, floor, limits)
        }
        _ => None,
    }
}

/// The floor of a round trip of `transport`, whose waits (shm's `wait`, RPMsg's
/// `notify`) are read through their definitions, defaults included.
fn floor(transport: &str, params: &BTreeMap<String, String>) -> Option<Floor<'static>> {
    let d = crate::transports::descriptor(transport).ok()?;
    Some(match d.wakeup.at(params)? {
        Wakeup::CacheLine => Floor::CacheLine,
        Wakeup::Futex => Floor::Futex,
        Wakeup::Pipe => Floor::Pipe,
    })
}

/// A stream's `rate` held against `floor`, with memcpy at the nearest size as its
/// reference; against memcpy itself where no floor was measured (one CPU, results of
/// earlier versions, a message size far from every probed one).
fn stream_fraction(
    rate: f64,
    floor: Option<&crate::limits::StreamLimit>,
    limits: &Limits,
    size_bytes: u64,
) -> Option<LimitFraction> {
    let copy = limits.memcpy_near(size_bytes);
    let memcpy = copy
        .and_then(|c| rate_fraction(figure::THROUGHPUT, rate, c.size_bytes, c.bytes_per_s.median));
    let Some(floor) = floor.filter(|f| f.bytes_per_s.median > 0.0 && rate > 0.0) else {
        return memcpy;
    };
    let mut f = LimitFraction::new(
        floor.name(),
        floor.bytes_per_s.median,
        "bytes/s",
        figure::THROUGHPUT,
        rate,
        rate / floor.bytes_per_s.median,
    );
    f.reference = memcpy.map(|m| Reference {
        name: format!("{} {MEMCPY_REFERENCE}", m.limit),
        value: m.limit_value,
        unit: m.unit,
        fraction: m.fraction,
    });
    Some(f)
}

fn rate_fraction(figure: &str, rate: f64, copy_size: u64, copy_rate: f64) -> Option<LimitFraction> {
    (rate > 0.0 && copy_rate > 0.0).then(|| {
        LimitFraction::new(
            format!("memcpy {}", crate::limits::size_words(copy_size)),
            copy_rate,
            "bytes/s",
            figure,
            rate,
            rate / copy_rate,
        )
    })
}

fn round_trip_fraction(
    figure: &str,
    rt_ns: f64,
    floor: Floor<'_>,
    limits: &Limits,
) -> Option<LimitFraction> {
    let (limit, e) = match floor {
        Floor::CacheLine => (
            "cache-line round trip".to_string(),
            limits.cache_line_rtt_ns.as_ref()?,
        ),
        Floor::Handover(h) => (
            format!(
                "hand-over round trip {}",
                crate::limits::size_words(h.size_bytes)
            ),
            &h.rtt_ns,
        ),
        Floor::Futex => (
            "futex wake round trip".to_string(),
            limits.futex_rtt_cross_ns.as_ref()?,
        ),
        Floor::Pipe => ("pipe round trip".to_string(), limits.pipe_rtt_ns.as_ref()?),
    };
    (rt_ns > 0.0 && e.median > 0.0)
        .then(|| LimitFraction::new(limit, e.median, "ns", figure, rt_ns, e.median / rt_ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::fraction::percent;
    use crate::limits::tests::{est, machine};

    fn point(pairs: &[(&str, &str)], figures: &[(&str, f64)]) -> Option<LimitFraction> {
        point_of_size(64, pairs, figures)
    }

    fn point_of_size(
        size: u64,
        pairs: &[(&str, &str)],
        figures: &[(&str, f64)],
    ) -> Option<LimitFraction> {
        let params = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let summary = figures
            .iter()
            .map(|(k, v)| (k.to_string(), est(*v)))
            .collect();
        fraction(&params, size, 1, &summary, &machine())
    }

    #[test]
    fn a_stream_is_held_against_the_stream_floor_of_its_size_and_copy_mode() {
        let stream = |size: u64, zero_copy: &str, rate: f64| {
            point_of_size(
                size,
                &[
                    ("workload", "stream"),
                    ("transport", "shm"),
                    ("zero_copy", zero_copy),
                ],
                &[(figure::THROUGHPUT, rate)],
            )
            .unwrap()
        };
        // Copied: 5 GB/s against the 12.5 GB/s floor; memcpy's 10 GB/s beside it.
        let f = stream(64 << 10, "false", 5e9);
        assert_eq!(f.limit, "stream floor 64 KiB");
        assert_eq!((f.unit.as_str(), f.limit_value), ("bytes/s", 12.5e9));
        assert!((f.fraction - 0.4).abs() < 1e-12 && !f.suspect);
        let r = f.reference.as_ref().unwrap();
        assert_eq!(r.name, "memcpy 64 KiB (one CPU, hot)");
        assert!((r.fraction - 0.5).abs() < 1e-12);
        assert_eq!(
            f.short(),
            "40 % of stream floor 64 KiB; memcpy 64 KiB (one CPU, hot): 50 %"
        );
        // In place: against the in-place floor, 20 GB/s.
        let f = stream(64 << 10, "true", 5e9);
        assert_eq!(f.limit, "stream floor 64 KiB in place");
        assert!((f.fraction - 0.25).abs() < 1e-12);
        // The nearest probed size by ratio, within a factor of four.
        assert_eq!(stream(1 << 10, "false", 1e9).limit, "stream floor 4 KiB");
        assert_eq!(
            stream(16 << 10, "true", 1e9).limit,
            "stream floor 16 KiB in place"
        );
        assert_eq!(
            stream(8 << 10, "true", 1e9).limit,
            "stream floor 16 KiB in place"
        );
        assert_eq!(stream(256 << 10, "false", 1e9).limit, "stream floor 64 KiB");
        // Beyond it, memcpy as before, with no reference.
        let far = stream(2 << 20, "false", 5e9);
        assert_eq!((far.limit.as_str(), far.reference), ("memcpy 2 MiB", None));
    }

    #[test]
    fn a_stream_above_its_floor_is_suspect_whatever_memcpy_says() {
        let stream = |zero_copy: &str, rate: f64| {
            point_of_size(
                64 << 10,
                &[("workload", "stream"), ("zero_copy", zero_copy)],
                &[(figure::THROUGHPUT, rate)],
            )
            .unwrap()
        };
        // 13.5 GB/s is 108 % of the copied floor: a result, though it beats memcpy.
        let f = stream("false", 13.5e9);
        assert!(!f.suspect && f.reference.as_ref().unwrap().fraction > 1.0);
        // 14 GB/s is 112 %: suspect, and the reference does not change that.
        let f = stream("false", 14e9);
        assert!(f.suspect);
        assert_eq!(
            f.short(),
            "suspect (see warnings); memcpy 64 KiB (one CPU, hot): 140 %"
        );
        assert!(
            f.warning()
                .unwrap()
                .contains("is above the stream floor 64 KiB, 12.5 GB/s (112 % of it)")
        );
        // 14 GB/s in place is 70 % of the in-place floor.
        assert!(!stream("true", 14e9).suspect);
    }

    #[test]
    fn a_stream_without_a_floor_is_held_against_memcpy() {
        let mut l = machine();
        l.stream_floor.clear();
        let params = [("workload", "stream")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let summary = [(figure::THROUGHPUT.to_string(), est(5e9))].into();
        let f = fraction(&params, 64 << 10, 1, &summary, &l).unwrap();
        assert_eq!((f.limit.as_str(), f.reference), ("memcpy 64 KiB", None));
        assert!((f.fraction - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_small_message_stream_is_held_against_memcpy() {
        let f = point(
            &[("workload", "stream"), ("transport", "shm")],
            &[(figure::THROUGHPUT, 5e9)],
        )
        .unwrap();
        assert_eq!(f.limit, "memcpy 4 KiB");
        assert!((f.fraction - 0.5).abs() < 1e-12);
        assert_eq!(f.short(), "50 % of memcpy 4 KiB");
    }

    #[test]
    fn one_way_at_a_rate_is_held_against_half_its_round_trip_floor() {
        let one_way = [(figure::LATENCY[0], 100.0)];
        let l = point(
            &[("workload", "load"), ("transport", "shm"), ("wait", "spin")],
            &one_way,
        )
        .unwrap();
        assert!(
            l.limit.starts_with("half the cache-line round trip"),
            "{}",
            l.limit
        );
        let pp = point(
            &[
                ("workload", "pingpong"),
                ("transport", "shm"),
                ("wait", "spin"),
            ],
            &[(figure::LATENCY[0], 200.0)],
        )
        .unwrap();
        // A one-way trip of half a round trip is as far from its floor as the round trip.
        assert!((l.fraction - pp.fraction).abs() < 1e-12);
        assert!((l.limit_value * 2.0 - pp.limit_value).abs() < 1e-9);
    }

    #[test]
    fn each_ping_pong_is_held_against_the_floor_it_waits_on() {
        let rt = [(figure::LATENCY[0], 400.0)];
        let pp = |t, k, v| point(&[("workload", "pingpong"), ("transport", t), (k, v)], &rt);
        let spin = pp("shm", "wait", "spin").unwrap();
        assert_eq!(spin.limit, "cache-line round trip");
        assert!((spin.fraction - 0.5).abs() < 1e-12);
        assert_eq!(
            pp("shm", "wait", "hybrid").unwrap().limit,
            "cache-line round trip"
        );
        assert_eq!(
            pp("shm", "wait", "block").unwrap().limit,
            "futex wake round trip"
        );
        assert_eq!(
            pp("rpmsg", "notify", "kick").unwrap().limit,
            "futex wake round trip"
        );
        assert_eq!(
            pp("rpmsg", "notify", "poll").unwrap().limit,
            "cache-line round trip"
        );
        assert_eq!(pp("pipe", "x", "y").unwrap().limit, "pipe round trip");
        assert_eq!(pp("tcp", "x", "y").unwrap().limit, "futex wake round trip");
        assert_eq!(pp("warp", "x", "y"), None);
    }

    #[test]
    fn a_spinning_ping_pong_of_a_large_message_is_held_against_the_hand_over() {
        let pp = |t: &str, wait: &str, size: u64, rt: f64| {
            point_of_size(
                size,
                &[("workload", "pingpong"), ("transport", t), ("wait", wait)],
                &[(figure::LATENCY[0], rt)],
            )
        };
        // The machine's hand-over at 64 KiB takes 8192 ns.
        let f = pp("shm", "spin", 64 << 10, 16_384.0).unwrap();
        assert_eq!(f.limit, "hand-over round trip 64 KiB");
        assert!((f.fraction - 0.5).abs() < 1e-12);
        assert_eq!(
            pp("iceoryx2", "spin", 4 << 10, 1e3).unwrap().limit,
            "hand-over round trip 4 KiB"
        );
        // Small messages keep the cache line; sleeping ones the futex at any size.
        assert_eq!(
            pp("shm", "spin", 512, 400.0).unwrap().limit,
            "cache-line round trip"
        );
        assert_eq!(
            pp("shm", "block", 64 << 10, 1e5).unwrap().limit,
            "futex wake round trip"
        );
        assert_eq!(
            pp("iceoryx2", "event", 64, 1e5).unwrap().limit,
            "futex wake round trip"
        );
    }

    #[test]
    fn an_rpmsg_study_point_uses_its_round_trip_rate_on_one_channel() {
        let f = point(
            &[("notify", "kick"), ("packet", "496")],
            &[(figure::MESSAGE_RATE, 25_000.0)],
        )
        .unwrap();
        // 40 µs per round trip against a 20 µs futex round trip.
        assert!((f.fraction - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_conversion_kernel_is_held_against_memcpy_and_a_readout_has_no_limit() {
        let f = point(
            &[("workload", "convert"), ("func", "func_umn2double")],
            &[(figure::THROUGHPUT, 2.5e9)],
        )
        .unwrap();
        assert!(f.limit.starts_with("memcpy"));
        assert!((f.fraction - 0.25).abs() < 1e-12);
        let readout = [("workload", "readout"), ("func", "func_readout")];
        assert_eq!(point(&readout, &[(figure::THROUGHPUT, 6e8)]), None);
    }

    #[test]
    fn a_point_without_a_natural_limit_or_its_figure_has_none() {
        assert_eq!(point(&[("workload", "warp")], &[]), None);
        assert_eq!(point(&[("workload", "stream")], &[]), None);
    }

    #[test]
    fn latency_is_held_the_right_way_round_and_above_110_percent_is_suspect() {
        // A round trip twice the futex floor reached half of it.
        let pp = |ns| {
            point(
                &[("workload", "pingpong"), ("transport", "unix")],
                &[(figure::LATENCY[0], ns)],
            )
            .unwrap()
        };
        let slow = pp(40e3);
        assert!((slow.fraction - 0.5).abs() < 1e-12 && !slow.suspect);
        assert_eq!(slow.trusted(), Some(0.5));
        assert_eq!(slow.warning(), None);
        // 21 µs against a 20 µs floor: within the probes' noise, still a result.
        assert!(!pp(20e3 / 1.09).suspect);
        // 1.6 µs against a 20 µs floor: the floor is not one.
        let fast = pp(1.6e3);
        assert!(fast.suspect);
        assert_eq!(fast.trusted(), None);
        assert_eq!(fast.short(), "suspect (see warnings)");
        let w = fast.warning().unwrap();
        assert!(
            w.starts_with(
                "limit suspect: the point's latency_p50_ns, 1.60 µs, is under the futex wake \
                 round trip, 20.0 µs (1/12 of it), which was meant to bound it"
            ),
            "{w}"
        );
        // A stream faster than memcpy likewise.
        let f = point(
            &[("workload", "stream"), ("transport", "shm")],
            &[(figure::THROUGHPUT, 48.9e9)],
        )
        .unwrap();
        assert!(f.suspect, "{f:?}");
        let w = f.warning().unwrap();
        assert!(w.contains(", 48.9 GB/s, is above the "), "{w}");
        assert!(
            w.contains("(489 % of it), which was meant to bound it"),
            "{w}"
        );
    }

    #[test]
    fn percentages_keep_two_significant_digits() {
        assert_eq!(percent(0.456), "46 %");
        assert_eq!(percent(0.0456), "4.6 %");
        assert_eq!(percent(0.00456), "0.46 %");
        assert_eq!(percent(78.87), "79×");
    }
}
