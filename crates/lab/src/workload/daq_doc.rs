//! The JSON document of `xferbench daq --json`: the original's parameters, its
//! per-board and per-function rows with the original's columns, and the figures it
//! did not have (output samples/s, the common-window aggregates, CPU, integrity).
//! Its schema is `docs/schema/daq.schema.json`.

use super::daq::{Aggregate, DaqCpu, DaqRun, DaqSpec, Row};
use crate::verify::Integrity;
use serde::{Deserialize, Serialize};
use xferbench_transports::daq::{Access, DaqEnd, Link, Trigger};

/// Layout version of [`DaqDoc`]; raised on any change that is not a pure addition.
pub const DAQ_DOC_VERSION: u32 = 1;

/// What one `daq` run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DaqDoc {
    /// Layout version, [`DAQ_DOC_VERSION`].
    pub schema_version: u32,
    /// The original's "Parameters:" block and the model's settings.
    pub parameters: DaqParameters,
    /// One row per board and function, in completion order.
    pub rows: Vec<DaqRowDoc>,
    /// Per function, all boards over the common window.
    pub aggregates: Vec<DaqAggregateDoc>,
    /// CPU of the run.
    pub cpu: DaqCpuDoc,
    /// Acquisitions waited for (with `-l`).
    pub acquisitions: u64,
    /// Status reads of all polling waits.
    pub status_reads: u64,
    /// Samples checked and mismatched (with `--verify`), else null.
    pub integrity: Option<Integrity>,
    /// Stopped early by a signal: the rows hold what was done.
    pub interrupted: bool,
}

/// The original's parameters (same names) and the model's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DaqParameters {
    /// `-A`.
    pub function: u32,
    /// `-B`: 0 read, 1 mmap.
    pub access: u32,
    /// `-S`, rounded up to a multiple of 16.
    pub nsamples: u64,
    /// Raw bytes per read, 2 × nsamples.
    pub nbytes_raw: u64,
    /// The original's float output size, 4 × nsamples.
    pub nbytes: u64,
    /// `-N`.
    pub nreads: u32,
    /// `-o`.
    pub dec_offset: u64,
    /// `-f`.
    pub dec_factor: u64,
    /// `-O`.
    pub scale_offset: f64,
    /// `-F`.
    pub scale_factor: f64,
    /// `-l` (0: once, no trigger).
    pub loops: u32,
    /// `-i`.
    pub daq_intr: bool,
    /// The devices, one board each.
    pub devices: Vec<String>,
    /// `--link`, one per board: `l2`, `ku`, `unthrottled` or MB/s.
    pub links: Vec<String>,
    /// `--bus` in MB/s, null for none.
    pub bus_mb_s: Option<f64>,
    /// `--trigger`: a rate in Hz, or null for `software`.
    pub trigger_hz: Option<f64>,
    /// `--kernels`: `original` or `improved`.
    pub kernels: String,
    /// `--verify`.
    pub verify: bool,
}

impl DaqParameters {
    /// The parameters of `s`.
    pub fn of(s: &DaqSpec) -> DaqParameters {
        DaqParameters {
            function: s.function,
            access: u32::from(s.access == Access::Mmap),
            nsamples: s.samples as u64,
            nbytes_raw: s.nbytes_raw(),
            nbytes: s.samples as u64 * 4,
            nreads: s.nreads,
            dec_offset: s.scale.offset as u64,
            dec_factor: s.scale.factor as u64,
            scale_offset: s.scale.scale_offset,
            scale_factor: s.scale.scale_factor,
            loops: s.loops,
            daq_intr: s.end == DaqEnd::Irq,
            devices: s.devices.clone(),
            links: s.links.iter().map(Link::name).collect(),
            bus_mb_s: s.bus.map(|b| b / 1e6),
            trigger_hz: match s.trigger {
                Trigger::Internal(hz) => Some(hz),
                Trigger::Software => None,
            },
            kernels: s.kernels.name().to_string(),
            verify: s.verify,
        }
    }
}

/// A row: the original's seven columns, output samples/s, and the counts they
/// come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DaqRowDoc {
    /// `size [MB]`: raw bytes per pass / 10^6.
    pub size_mb: f64,
    /// `start [ms]` after the reader threads were started.
    pub start_ms: f64,
    /// `end [ms]`.
    pub end_ms: f64,
    /// `dur [ms]`: busy time per pass.
    pub dur_ms: f64,
    /// `speed [MB/s]`: raw bytes of all passes over the busy time (the original's
    /// formula, also for conversions).
    pub speed_mb_s: f64,
    /// Output samples per second of busy time.
    pub output_samples_per_s: f64,
    /// The counts.
    #[serde(flatten)]
    pub row: Row,
}

impl DaqRowDoc {
    /// The document row of `r`.
    pub fn of(r: &Row) -> DaqRowDoc {
        DaqRowDoc {
            size_mb: r.size_mb(),
            start_ms: r.start_ns as f64 / 1e6,
            end_ms: r.end_ns as f64 / 1e6,
            dur_ms: r.dur_ms(),
            speed_mb_s: r.speed_mb_s(),
            output_samples_per_s: r.output_samples_per_s(),
            row: r.clone(),
        }
    }
}

/// One function over all boards and the common window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DaqAggregateDoc {
    /// Raw bytes of all boards and passes over the window, MB/s.
    pub speed_mb_s: f64,
    /// Output samples/s over the window.
    pub output_samples_per_s: f64,
    /// The counts.
    #[serde(flatten)]
    pub aggregate: Aggregate,
}

/// CPU of the run, and the mean of the 0.5 s samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DaqCpuDoc {
    /// Mean of `top_percent`, or `host_percent` when the run was shorter than one
    /// sample.
    pub top_mean_percent: f64,
    /// The figures.
    #[serde(flatten)]
    pub cpu: DaqCpu,
}

impl DaqDoc {
    /// The document of `run` of `spec`.
    pub fn new(spec: &DaqSpec, run: &DaqRun) -> DaqDoc {
        DaqDoc {
            schema_version: DAQ_DOC_VERSION,
            parameters: DaqParameters::of(spec),
            rows: run.rows.iter().map(DaqRowDoc::of).collect(),
            aggregates: run
                .aggregates()
                .into_iter()
                .map(|a| DaqAggregateDoc {
                    speed_mb_s: a.speed_mb_s(),
                    output_samples_per_s: a.output_samples_per_s(),
                    aggregate: a,
                })
                .collect(),
            cpu: DaqCpuDoc {
                top_mean_percent: run.cpu.top_mean(),
                cpu: run.cpu.clone(),
            },
            acquisitions: run.acquisitions,
            status_reads: run.status_reads,
            integrity: run.integrity,
            interrupted: run.interrupted,
        }
    }
}
