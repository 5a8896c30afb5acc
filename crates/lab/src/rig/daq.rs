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
//!   [`ENGINES_CPU_S`], [`STATUS_READS_PER_ACQ`], [`MISMATCHES`];
//! * the host CPU split by what the readers did: [`WAIT_CPU_PERCENT`] (waiting for
//!   the end of acquisitions) and [`WORK_CPU_PERCENT`] (copies and conversions);
//! * [`READOUT_CPU_NS_PER_BYTE`]: the readout rows' CPU per byte with the DMA
//!   engine's counted, so `mmap`'s copy by the engine is not free;
//! * per board (`<what>_board<i>`, [`board_figure`]): [`CPU_PERCENT`] (its reader and
//!   its engine) and [`ENGINE_CPU_PERCENT`] (its engine alone).
//!
//! A rig started [`with_rows`](DaqRig::with_rows) also records every row and
//! aggregate whole, so that the original's table can be drawn from the result
//! ([`row_figures`]).

use super::{ChannelOutcome, Rig, RunControl, RunError, aggregate};
use crate::result::RunRecord;
use crate::workload::daq::{DaqRun, DaqRunError, DaqSpec, Readout};
use xferbench_probes::clock::Stamp;
use xferbench_probes::counters::Participant;

/// Host CPU % over the run (process − model engines − sample check).
pub const HOST_CPU_PERCENT: &str = "host_cpu_percent";
/// Mean of the host CPU % taken every 0.5 s.
pub const TOP_CPU_PERCENT: &str = "top_cpu_percent";
/// Host CPU ns per raw byte read.
pub const HOST_CPU_NS_PER_BYTE: &str = "host_cpu_ns_per_byte";
/// The model's DMA engines' CPU seconds.
pub const ENGINES_CPU_S: &str = "engines_cpu_s";
/// The readers' CPU % waiting for the end of acquisitions (over the run).
pub const WAIT_CPU_PERCENT: &str = "wait_cpu_percent";
/// The readers' CPU % in the functions: readout copies and conversions.
pub const WORK_CPU_PERCENT: &str = "work_cpu_percent";
/// CPU ns per raw byte read of the readout rows: the readers' and the engines'
/// that served them.
pub const READOUT_CPU_NS_PER_BYTE: &str = "readout_cpu_ns_per_byte";
/// A board's CPU % over the run: its reader (waiting and working) and its engine.
pub const CPU_PERCENT: &str = "cpu_percent";
/// A board's DMA engine CPU % over the run.
pub const ENGINE_CPU_PERCENT: &str = "engine_cpu_percent";
/// Status reads per acquisition (polling).
pub const STATUS_READS_PER_ACQ: &str = "status_reads_per_acq";
/// Samples that did not match the pattern.
pub const MISMATCHES: &str = "sample_mismatches";

/// The sample check's CPU seconds.
pub const VERIFY_CPU_S: &str = "verify_cpu_s";
/// The highest host CPU % taken every 0.5 s.
pub const TOP_CPU_PERCENT_MAX: &str = "top_cpu_percent_max";
/// How many 0.5 s host CPU samples were taken.
pub const TOP_CPU_SAMPLES: &str = "top_cpu_samples";
/// Acquisitions waited for (with loops).
pub const ACQUISITIONS: &str = "acquisitions";
/// Status reads of all polling waits.
pub const STATUS_READS: &str = "status_reads";
/// What [`row_figures`] records of each row, per board (`<func>_<what>_board<i>`):
/// its place in completion order, then the original's columns.
pub const ROW_FIGURES: [&str; 6] = [
    "row",
    "size_mb",
    "start_ms",
    "end_ms",
    "dur_ms",
    "out_samples_per_s",
];
/// What [`row_figures`] records of each function's aggregate beside
/// `<func>_agg_mb_s` and `<func>_out_samples_per_s` (`<func>_<what>`).
pub const AGGREGATE_FIGURES: [&str; 2] = ["agg_boards", "agg_window_ms"];

/// A figure name for function `func` and `what`.
pub fn func_figure(func: &str, what: &str) -> String {
    format!("{func}_{what}")
}

/// A per-board figure name: `what` of board `board`.
pub fn board_figure(what: &str, board: usize) -> String {
    format!("{what}_board{board}")
}

/// The rig of one point.
#[derive(Debug)]
pub struct DaqRig {
    readout: Readout,
    primary: String,
    rows: bool,
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
            rows: false,
        })
    }

    /// Also records every row and aggregate whole ([`row_figures`]).
    pub fn with_rows(mut self) -> DaqRig {
        self.rows = true;
        self
    }
}

/// Adds every row of `run` (per board: [`ROW_FIGURES`]), every aggregate
/// ([`AGGREGATE_FIGURES`]) and the CPU and acquisition counts the original's table
/// shows ([`VERIFY_CPU_S`], [`TOP_CPU_PERCENT_MAX`], [`TOP_CPU_SAMPLES`],
/// [`ACQUISITIONS`], [`STATUS_READS`]) to `rec`'s figures.
pub fn row_figures(run: &DaqRun, rec: &mut RunRecord) {
    for (place, r) in run.rows.iter().enumerate() {
        let values = [
            place as f64,
            r.size_mb(),
            r.start_ns as f64 / 1e6,
            r.end_ns as f64 / 1e6,
            r.dur_ms(),
            r.output_samples_per_s(),
        ];
        for (what, v) in ROW_FIGURES.iter().zip(values) {
            rec.figures
                .insert(func_figure(&r.func, &format!("{what}_board{}", r.board)), v);
        }
    }
    for a in run.aggregates() {
        let values = [a.boards as f64, a.window_ns as f64 / 1e6];
        for (what, v) in AGGREGATE_FIGURES.iter().zip(values) {
            rec.figures.insert(func_figure(&a.func, what), v);
        }
    }
    let top = &run.cpu.top_percent;
    for (name, v) in [
        (VERIFY_CPU_S, run.cpu.verify_s),
        (TOP_CPU_PERCENT_MAX, top.iter().cloned().fold(0.0, f64::max)),
        (TOP_CPU_SAMPLES, top.len() as f64),
        (ACQUISITIONS, run.acquisitions as f64),
        (STATUS_READS, run.status_reads as f64),
    ] {
        rec.figures.insert(name.to_string(), v);
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
            schedule: None,
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
    let window = run.cpu.process.window_s.max(1e-9);
    for (name, v) in [
        (HOST_CPU_PERCENT, run.cpu.host_percent),
        (TOP_CPU_PERCENT, run.cpu.top_mean()),
        (ENGINES_CPU_S, run.cpu.engines_s),
        (WAIT_CPU_PERCENT, run.cpu.wait_s / window * 100.0),
        (WORK_CPU_PERCENT, run.cpu.work_s / window * 100.0),
        (MISMATCHES, run.integrity.map_or(0.0, |i| i.corrupt as f64)),
    ] {
        rec.figures.insert(name.to_string(), v);
    }
    if read_bytes > 0 {
        rec.figures.insert(
            HOST_CPU_NS_PER_BYTE.to_string(),
            host_s * 1e9 / read_bytes as f64,
        );
        let readout_ns: u64 = run
            .rows
            .iter()
            .filter(|r| r.func == "func_readout")
            .map(|r| r.total_cpu_ns())
            .sum();
        rec.figures.insert(
            READOUT_CPU_NS_PER_BYTE.to_string(),
            readout_ns as f64 / read_bytes as f64,
        );
    }
    for b in &run.cpu.boards {
        rec.figures.insert(
            board_figure(CPU_PERCENT, b.board),
            b.total_s() / window * 100.0,
        );
        rec.figures.insert(
            board_figure(ENGINE_CPU_PERCENT, b.board),
            b.engine_s / window * 100.0,
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
        vec![Participant::main()]
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
        if self.rows {
            row_figures(&run, &mut rec);
        }
        rec.counters = ctl.take_counters();
        Ok(rec)
    }

    fn finish(self: Box<Self>) -> Result<(), RunError> {
        Ok(())
    }
}
