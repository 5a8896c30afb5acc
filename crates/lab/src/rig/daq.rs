//! The digitizer rig: a [`Readout`] (the model's boards, engines and trigger, in
//! this process) per visit, one [`Readout::run`] per run.
//!
//! The run's record has one channel per board for the point's primary function
//! (`func`), so the common-window aggregate is that function's, and these figures
//! beside the usual ones (all per run):
//!
//! * `<func>_mb_s_board<i>`: each row's speed in the original's formula, for every
//!   function the run timed (`memcpy` included);
//! * `<func>_agg_mb_s`, `<func>_out_samples_per_s`: the common-window aggregates;
//! * [`HOST_CPU_PERCENT`], [`TOP_CPU_PERCENT`], [`HOST_CPU_NS_PER_BYTE`],
//!   [`ENGINES_CPU_S`], [`STATUS_READS_PER_ACQ`], [`MISMATCHES`].

use super::{ChannelOutcome, Rig, RunControl, RunError, aggregate};
use crate::clock::Stamp;
use crate::counters::Participant;
use crate::result::RunRecord;
use crate::workload::daq::{DaqRun, DaqRunError, DaqSpec, Readout};

/// Host CPU % over the run (process − model engines − sample check).
pub const HOST_CPU_PERCENT: &str = "host_cpu_percent";
/// Mean of the host CPU % taken every 0.5 s.
pub const TOP_CPU_PERCENT: &str = "top_cpu_percent";
/// Host CPU ns per raw byte read.
pub const HOST_CPU_NS_PER_BYTE: &str = "host_cpu_ns_per_byte";
/// The model's DMA engines' CPU seconds.
pub const ENGINES_CPU_S: &str = "engines_cpu_s";
/// Status reads per acquisition (polling).
pub const STATUS_READS_PER_ACQ: &str = "status_reads_per_acq";
/// Samples that did not match the pattern.
pub const MISMATCHES: &str = "sample_mismatches";

/// A figure name for function `func` and `what`.
pub fn func_figure(func: &str, what: &str) -> String {
    format!("{func}_{what}")
}

/// The rig of one point.
#[derive(Debug)]
pub struct DaqRig {
    readout: Readout,
    primary: String,
}

impl DaqRig {
    /// Builds the digitizer of `spec`; `primary` names the function whose rows are
    /// the record's channels.
    pub fn start(spec: DaqSpec, primary: &str) -> Result<DaqRig, RunError> {
        let readout = Readout::new(spec).map_err(|e| match e {
            DaqRunError::Config(m) => RunError::Config(m),
            DaqRunError::Model(e) => RunError::Participant(format!("digitizer model: {e}")),
        })?;
        Ok(DaqRig {
            readout,
            primary: primary.to_string(),
        })
    }
}

/// Turns a run into a record whose channels are `primary`'s rows.
pub fn record(run: &DaqRun, primary: &str) -> RunRecord {
    let channels = run
        .rows
        .iter()
        .filter(|r| r.func == primary)
        .map(|r| ChannelOutcome {
            start: Stamp(run.td.0 + r.start_ns),
            end: Stamp(run.td.0 + r.end_ns),
            messages: r.passes,
            bytes: r.bytes_raw * r.passes,
            latency: None,
            integrity: None,
        })
        .collect();
    let mut rec = aggregate(channels, vec![run.cpu.process.clone()]);
    for r in &run.rows {
        rec.figures.insert(
            func_figure(&r.func, &format!("mb_s_board{}", r.board)),
            r.speed_mb_s(),
        );
    }
    for a in run.aggregates() {
        rec.figures
            .insert(func_figure(&a.func, "agg_mb_s"), a.speed_mb_s());
        rec.figures.insert(
            func_figure(&a.func, "out_samples_per_s"),
            a.output_samples_per_s(),
        );
    }
    let read_bytes: u64 = run
        .rows
        .iter()
        .filter(|r| r.func == "func_readout")
        .map(|r| r.bytes_raw * r.passes)
        .sum();
    let host_s = run.cpu.host_percent / 100.0 * run.cpu.process.window_s;
    for (name, v) in [
        (HOST_CPU_PERCENT, run.cpu.host_percent),
        (TOP_CPU_PERCENT, run.cpu.top_mean()),
        (ENGINES_CPU_S, run.cpu.engines_s),
        (MISMATCHES, run.integrity.map_or(0.0, |i| i.corrupt as f64)),
    ] {
        rec.figures.insert(name.to_string(), v);
    }
    if read_bytes > 0 {
        rec.figures.insert(
            HOST_CPU_NS_PER_BYTE.to_string(),
            host_s * 1e9 / read_bytes as f64,
        );
    }
    if run.acquisitions > 0 {
        rec.figures.insert(
            STATUS_READS_PER_ACQ.to_string(),
            run.status_reads as f64 / run.acquisitions as f64,
        );
    }
    // Samples, not messages: `checked` counts samples, `corrupt` those that differ.
    rec.integrity = run.integrity;
    rec
}

impl Rig for DaqRig {
    fn participants(&self) -> Vec<Participant> {
        vec![Participant {
            name: "main".into(),
            pid: std::process::id(),
        }]
    }

    fn run_once(&mut self, ctl: &mut RunControl<'_>) -> Result<RunRecord, RunError> {
        ctl.window_started();
        let run = self.readout.run(ctl.stop);
        ctl.window_ended();
        let run = run.map_err(|e| RunError::Participant(format!("digitizer model: {e}")))?;
        if run.interrupted {
            return Err(RunError::Interrupted);
        }
        let mut rec = record(&run, &self.primary);
        rec.counters = ctl.take_counters();
        Ok(rec)
    }

    fn finish(self: Box<Self>) -> Result<(), RunError> {
        Ok(())
    }
}
