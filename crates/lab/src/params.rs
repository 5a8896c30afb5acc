//! The lab's parameters: the definitions of the sweep axes, and the catalog of every
//! definition a point's parameters may name.
//!
//! A point's parameters travel as text in their machine form (`size=65536`, in
//! [`crate::plan::PlannedPoint::params`] and in result files). Whatever shows them
//! to people or matches what people typed — warnings, progress lines, reports,
//! `compare`, `history` — goes through [`describe`], [`display`] and [`same_point`], which
//! find the parameter's one definition here: `size=65536` is shown as `64 KiB`, and
//! `history trend -p size=64KiB` finds it.

use crate::axes::{CHANNELS, SIZE, TRANSPORT, ZERO_COPY};
use crate::workload::WORKLOAD;
use std::collections::BTreeMap;
use std::time::Duration;
use xferbench_params::Choices;
use xferbench_transports::{Descriptor, ParamDef};

/// Every definition of bytes per message, by the name each workload records it
/// under: the sweep's `size`, RPMsg's `packet` and Warp Pipe's `payload`. All are
/// [`ParamDef::message_bytes`], so the quantity is read, shown and checked one way;
/// a point records one of them, and its result's `size_bytes` is that value.
pub const MESSAGE_SIZES: [ParamDef; 3] = [
    SIZE,
    crate::workload::rpmsg::PACKET,
    crate::workload::warp::PAYLOAD,
];
/// `timeout`: time without progress before a wait is declared hung; every command's
/// `--timeout` reads it.
pub const TIMEOUT: ParamDef = ParamDef::duration(
    "timeout",
    Duration::from_millis(100),
    Duration::from_secs(86_400),
    Duration::from_secs(10),
    "time without progress before a wait is declared hung",
);
/// `runs`: measured runs of a point; its figures are medians over these.
pub const RUNS: ParamDef = ParamDef::integer(
    "runs",
    1,
    10_000,
    5,
    "measured runs per point; figures are medians over these",
);
/// `warmup`: runs of a point before its measured ones, discarded.
pub const WARMUP: ParamDef =
    ParamDef::integer("warmup", 0, 1_000, 1, "warm-up runs per point, discarded");
/// `duration`: time per run per channel, when no message count is given.
pub const DURATION: ParamDef = ParamDef::duration(
    "duration",
    Duration::from_micros(1),
    Duration::from_secs(86_400),
    Duration::from_millis(250),
    "time per run per channel",
);

/// The definitions of the axes, of `run`'s workloads' own parameters (each
/// workload's [`Workload::PARAMS`](crate::workload::Workload::PARAMS)) and of the
/// studies' points, beside the transports'.
fn points() -> Vec<ParamDef> {
    use crate::workload::{rpmsg, warp};
    use xferbench_transports::{daq, rpmsg as link, warp as pcie};
    let mut out = vec![WORKLOAD, TRANSPORT, SIZE, CHANNELS, ZERO_COPY];
    out.extend(crate::workload::declared());
    out.extend([
        rpmsg::PACKET,
        rpmsg::TRANSFER,
        link::NOTIFY,
        link::BUFFERS,
        warp::PAYLOAD,
        warp::CONNECTION,
        warp::THREADS,
        warp::ITERATIONS,
        warp::INSTANCES,
        warp::OPS,
        warp::CONNECT,
        warp::PIGGYBACK_ACKS,
        warp::THINK_MS,
        pcie::crc::CRC,
        pcie::server::IO,
        crate::rig::kv::SERVER,
        crate::rig::kv::WORKERS,
        crate::rig::kv::VISITORS,
        crate::workload::kv::OUTER,
        crate::workload::kv::INNER,
        crate::workload::kv::SERVER_NAME,
        crate::workload::kv::SEED,
        daq::convert::KERNELS,
        crate::workload::daq::BOARDS,
        crate::workload::daq::LINKS,
        crate::workload::daq::SAMPLES,
        crate::workload::daq::READS,
        crate::workload::daq::FUNC.clone(),
        crate::workload::daq::FACTOR,
        crate::workload::daq::ACCESS,
        crate::workload::daq::DAQ,
        crate::workload::daq::LOOPS,
        crate::workload::daq::DEVICES,
        crate::workload::daq::FUNCTION,
        crate::workload::daq::OFFSET,
        crate::workload::daq::SCALE_OFFSET,
        crate::workload::daq::SCALE_FACTOR,
        crate::workload::daq::BUS,
        crate::workload::daq::TRIGGER,
        crate::neighbours::NEIGHBOURS,
        crate::ab::SIDE,
        crate::ab::COMMAND,
    ]);
    out
}

/// The definition of parameter `name` of a point whose parameters are `params`: the
/// point's transport's own first, then the axes' and the studies'.
pub fn definition(params: &BTreeMap<String, String>, name: &str) -> Option<ParamDef> {
    let transport: Option<Descriptor> = params
        .get(TRANSPORT.name())
        .and_then(|t| crate::transports::descriptor(t).ok());
    if let Some(d) = transport.as_ref().and_then(|t| t.param(name)) {
        return Some(d.clone());
    }
    if let Some(d) = points().into_iter().find(|d| d.name == name) {
        return Some(d);
    }
    crate::transports::all()
        .into_iter()
        .find_map(|t| t.param(name).cloned())
}

/// Value `text` of parameter `name` of a point, the way people read it (`64 KiB`);
/// text of no known parameter, or that does not parse, is shown as it is.
pub fn display(params: &BTreeMap<String, String>, name: &str, text: &str) -> String {
    definition(params, name).map_or_else(|| text.to_string(), |d| d.display_text(text))
}

/// A point's parameters in words, shown through their definitions, `workload` left
/// out: `channels=1 pipe_size=1 MiB size=64 KiB transport=pipe`.
pub fn describe(params: &BTreeMap<String, String>) -> String {
    params
        .iter()
        .filter(|(k, _)| k.as_str() != WORKLOAD.name())
        .map(|(k, v)| format!("{k}={}", display(params, k, v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a point with parameters `params` has value `want` for `name`, as its
/// definition reads both (`64KiB` matches `65536`).
pub fn matches(params: &BTreeMap<String, String>, name: &str, want: &str) -> bool {
    params
        .get(name)
        .is_some_and(|have| match definition(params, name) {
            Some(d) => d.same(have, want),
            None => have == want,
        })
}

/// The value of parameter `def` of a point as the [`Choices`] type its definition
/// names (`choice::<Notify>(&p.params, &NOTIFY)`), or `None` when the point has
/// none, or one that is not a name of `T`.
pub fn choice<T: Choices>(params: &BTreeMap<String, String>, def: &ParamDef) -> Option<T> {
    params.get(def.name()).and_then(|v| T::from_name(v))
}

/// Whether two points' parameters are the same point: the same names, each value
/// the same as its definition reads it (a result file that stored `64KiB` and one
/// that stored `65536` name the same point).
pub fn same_point(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> bool {
    a.len() == b.len() && a.iter().all(|(k, v)| matches(b, k, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_definition_is_whole() {
        for d in points().iter().chain(&[TIMEOUT, RUNS, WARMUP, DURATION]) {
            d.self_check().unwrap();
        }
        for t in crate::transports::all() {
            for d in t.params.iter() {
                d.self_check().unwrap();
            }
            t.wakeup.self_check().unwrap();
        }
    }

    #[test]
    fn every_recorded_workload_and_message_size_is_defined_once() {
        for w in crate::workload::WorkloadKind::ALL {
            let recorded = crate::workload::RecordedWorkload::from(w);
            assert_eq!(recorded.name(), w.name());
            assert!(WORKLOAD.parse(w.name()).is_ok(), "{w}");
        }
        for w in crate::workload::RecordedWorkload::ALL {
            assert!(WORKLOAD.parse(w.name()).is_ok(), "{w}");
        }
        for d in &MESSAGE_SIZES {
            assert!(d.is_message_bytes(), "{}", d.name);
            assert_eq!(d.machine(&xferbench_params::Value::Bytes(496)), "496");
            assert_eq!(d.display_text("256"), "256 B");
        }
    }

    #[test]
    fn sizes_show_one_way_and_match_as_written() {
        let p = point(&[
            ("workload", "stream"),
            ("transport", "pipe"),
            ("size", "65536"),
            ("channels", "1"),
            ("pipe_size", "1048576"),
        ]);
        assert_eq!(
            describe(&p),
            "channels=1 pipe_size=1 MiB size=64 KiB transport=pipe"
        );
        assert!(matches(&p, "size", "64KiB"));
        assert!(matches(&p, "size", "65536"));
        assert!(!matches(&p, "size", "64"));
        assert!(matches(&p, "pipe_size", "1MiB"));
        assert!(!matches(&p, "nosuch", "1"));
        let written = point(&[
            ("workload", "stream"),
            ("transport", "pipe"),
            ("size", "64KiB"),
            ("channels", "1"),
            ("pipe_size", "1MiB"),
        ]);
        assert!(same_point(&p, &written) && same_point(&written, &p));
        assert!(!same_point(&p, &point(&[("size", "65536")])));
        let rpmsg = point(&[("packet", "496"), ("transfer", "1000000")]);
        assert_eq!(describe(&rpmsg), "packet=496 B transfer=1 MB");
    }
}
