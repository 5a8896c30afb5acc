//! The workload contract: the [`Workload`] trait, the state a driver shares with
//! its supervisor ([`Control`]) and what each side measured ([`DriverOutcome`],
//! [`ServeOutcome`]).

use super::spec::ChannelSpec;
use crate::error::WorkloadError;
use crate::record::{ChannelOutcome, FigureRules};
use crate::result::new_histogram;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64};
use xferbench_params::{ParamDef, ParamMap, ParamValues};
use xferbench_probes::clock::Stamp;
use xferbench_probes::verify::Integrity;
use xferbench_transports::Endpoint;

/// Shared state between a driver thread and the run's supervisor.
#[derive(Debug)]
pub struct Control<'a> {
    /// Set to stop early (Ctrl-C).
    pub stop: &'a AtomicBool,
    /// Messages done so far on this channel.
    pub progress: &'a AtomicU64,
}

/// What the driver side measured.
#[derive(Debug)]
pub struct DriverOutcome {
    /// Just before the first message.
    pub start: Stamp,
    /// After the last message (pingpong: its reply).
    pub end: Stamp,
    /// Messages sent (pingpong: round trips completed).
    pub sent: u64,
    /// Round-trip times in nanoseconds (pingpong).
    pub latency: Option<hdrhistogram::Histogram<u64>>,
    /// What the driver verified (pingpong with `verify`).
    pub integrity: Option<Integrity>,
    /// True if [`Control::stop`] ended the run early.
    pub stopped: bool,
    /// What a `load` driver measured of its schedule.
    pub schedule: Option<crate::record::ScheduleOutcome>,
}

/// What the serving side measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServeOutcome {
    /// When the serving side saw the end of the stream.
    pub end: Stamp,
    /// Messages received.
    pub received: u64,
    /// The next sequence number the verifier expected (tail losses are `sent − this`).
    pub next_expected: u64,
    /// What the serving side verified (stream with `verify`).
    pub integrity: Option<Integrity>,
    /// One-way latencies the serving side measured (`load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Recorded>,
}

/// One workload: a driver loop and a serving loop, and the rules of its figures.
pub trait Workload {
    /// Its primary figure and which way is better.
    const RULES: FigureRules;
    /// Its own parameters (`-p NAME=LIST` when it runs): the sweep multiplies its
    /// points by their lists in this order (the first outermost), a point records
    /// them ([`Workload::record`]), the catalog of definitions and `list` show them,
    /// and a plugin may not take their names. A workload reads them from
    /// [`Workload::values`] by definition.
    const PARAMS: &'static [ParamDef];

    /// Writes a point's `values` of [`Workload::PARAMS`] as its result records them:
    /// by default each value set that is not its definition's default.
    fn record(values: &ParamValues, map: &mut ParamMap) {
        record_set(values, Self::PARAMS, map);
    }

    /// A channel's values of [`Workload::PARAMS`], each read by its definition; a
    /// parameter not set takes its default.
    fn values(spec: &ChannelSpec) -> Result<ParamValues, WorkloadError> {
        ParamValues::parse(spec.workload.name(), Self::PARAMS, &spec.params)
            .map_err(|e| WorkloadError::Config(e.to_string()))
    }

    /// A channel's window, count and integrity from what its two ends measured.
    fn channel_outcome(size: usize, driver: DriverOutcome, served: &ServeOutcome)
    -> ChannelOutcome;

    /// Runs the driver side of one channel for one run.
    fn drive<E: Endpoint>(
        ep: &mut E,
        spec: &ChannelSpec,
        ctl: &Control<'_>,
    ) -> Result<DriverOutcome, WorkloadError>;

    /// Runs the serving side of one channel for one run, until the driver closes.
    fn serve<E: Endpoint>(ep: &mut E, spec: &ChannelSpec) -> Result<ServeOutcome, WorkloadError>;
}

/// Writes every value of `values` set for one of `defs` that differs from its
/// definition's default: how a workload records its parameters unless it says
/// otherwise ([`Workload::record`]), so a point that leaves a parameter at its
/// default keeps the parameters it always had.
pub fn record_set(values: &ParamValues, defs: &[ParamDef], map: &mut ParamMap) {
    for d in defs {
        if let Some(v) = values.get(d.name())
            && *v != d.default
        {
            map.put(d, v);
        }
    }
}

/// A histogram as its recorded values and counts: how a peer process sends the
/// latencies it measured to the driver's process in its `done` reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Recorded(pub Vec<[u64; 2]>);

impl Recorded {
    /// The non-empty buckets of `h`.
    pub fn of(h: &Histogram<u64>) -> Recorded {
        Recorded(
            h.iter_recorded()
                .map(|v| [v.value_iterated_to(), v.count_at_value()])
                .collect(),
        )
    }

    /// The histogram again (values beyond its range are clamped to it).
    pub fn histogram(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        for &[value, count] in &self.0 {
            h.saturating_record_n(value.max(1), count);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_histogram_keeps_its_percentiles() {
        let mut h = new_histogram();
        for v in 1..10_000u64 {
            h.record(v * 37).unwrap();
        }
        let back = Recorded::of(&h).histogram();
        for q in [0.5, 0.99, 0.999, 1.0] {
            assert_eq!(h.value_at_quantile(q), back.value_at_quantile(q));
        }
        assert_eq!(h.len(), back.len());
        let json = serde_json::to_string(&Recorded::of(&h)).unwrap();
        let again: Recorded = serde_json::from_str(&json).unwrap();
        assert_eq!(again.histogram().len(), h.len());
    }
}
