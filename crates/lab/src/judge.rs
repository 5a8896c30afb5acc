//! The lab's answers to what the point loop asks of the systems it measures
//! ([`Judge`]): a transport's defaults, the point-to-limit pairing of
//! [`ratio`](crate::ratio), a load point's pacing warning.

#[cfg(test)]
mod watch_tests;

use crate::limits::Limits;
use crate::limits::fraction::LimitFraction;
use crate::plan::Judge;
use std::collections::BTreeMap;
use xferbench_probes::stats::Estimate;

/// The lab's transports, workloads and limits, as every plan of the lab and its
/// studies is judged.
pub static LAB: Lab = Lab;

/// See [`LAB`].
#[derive(Debug, Clone, Copy)]
pub struct Lab;

impl Judge for Lab {
    fn transport_defaults(&self, params: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let Some(name) = params.get(crate::names::TRANSPORT) else {
            return BTreeMap::new();
        };
        // A plugin's point names its transport by its own name (`posix-mq`), which the
        // registered plugin's `plugin:PATH:NAME` shows as.
        let Some(d) = crate::transports::all()
            .into_iter()
            .find(|d| d.name == *name || crate::plugins::display_name(&d.name) == *name)
        else {
            return BTreeMap::new();
        };
        d.params
            .iter()
            .filter(|def| !params.contains_key(def.name()))
            .map(|def| (def.name().to_string(), def.machine(&def.default)))
            .collect()
    }

    fn limit_fraction(
        &self,
        params: &BTreeMap<String, String>,
        size_bytes: u64,
        channels: usize,
        figures: &BTreeMap<String, Estimate>,
        limits: &Limits,
    ) -> Option<LimitFraction> {
        crate::ratio::fraction(params, size_bytes, channels, figures, limits)
    }

    fn pacing_warning(
        &self,
        summary: &BTreeMap<String, Estimate>,
        channels: usize,
        stall_p99_ns: Option<f64>,
    ) -> Option<String> {
        crate::workload::load::pacing_warning(summary, channels, stall_p99_ns)
    }
}
