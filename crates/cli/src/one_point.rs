//! The pipeline of the one-point commands (`kv client`, `warp client`, `daq`,
//! `rpmsg`): a plan of one point, its run control from the shared flag groups, the
//! point loop, and the outputs, as `run` and the studies have them. Each command
//! keeps only what is its own: its arguments' meaning, its rig and its summary.

use crate::flags::OutputArgs;
use anyhow::Result;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use xferbench_lab::limits::Watch;
use xferbench_lab::measure::{Bench, LoopOptions, PlannedPoint, run_plan};
use xferbench_lab::result::{ResultDoc, Settings};
use xferbench_lab::rig::{Rig, RunError};
use xferbench_probes::counters::{CounterMode, CounterSource};
use xferbench_report::{Exporter, json::Json};

/// How the one point runs: what `run` calls its run control.
#[derive(Debug, Clone)]
pub struct Control {
    /// Measured runs.
    pub runs: usize,
    /// Discarded warm-up runs.
    pub warmup: usize,
    /// A run with no progress for this long is declared hung (`--timeout`).
    pub hang_timeout: Duration,
    /// The machine's limits and drift (`--no-limits`, `--drift-threshold`), for the
    /// commands that take them.
    pub watch: Option<Watch>,
    /// The run lasts until Ctrl-C and is kept (`kv client 0 …`).
    pub until_stopped: bool,
}

impl Control {
    /// `--timeout`'s default ([`TIMEOUT`](xferbench_lab::params::TIMEOUT)), for a
    /// command whose rig bounds its own waits.
    pub fn default_timeout() -> Duration {
        match xferbench_lab::params::TIMEOUT.default {
            xferbench_params::Value::Duration(d) => d,
            _ => unreachable!("TIMEOUT is a duration"),
        }
    }

    /// One measured run, no warm-up, no limits.
    pub fn once(hang_timeout: Duration) -> Self {
        Self {
            runs: 1,
            warmup: 0,
            hang_timeout,
            watch: None,
            until_stopped: false,
        }
    }

    /// The point loop's options.
    fn options(&self) -> LoopOptions {
        LoopOptions {
            judge: &xferbench_lab::judge::LAB,
            runs: self.runs,
            warmup: self.warmup,
            interleave: false,
            hang_timeout: self.hang_timeout,
            counters: CounterMode::Off,
            profile: None,
            watch: self.watch.clone(),
            until_stopped: self.until_stopped,
        }
    }
}

/// The one point and how the result document records its settings.
#[derive(Debug)]
pub struct OnePoint {
    /// The recorded workload's name.
    pub workload: String,
    /// The point.
    pub planned: PlannedPoint,
    /// Messages (or requests, transactions, reads) per run, when the run length is a
    /// count.
    pub count: Option<u64>,
    /// `thread` or `process`: where the participants run.
    pub peer: &'static str,
    /// Whether threads were pinned to CPUs.
    pub pin: bool,
}

impl OnePoint {
    /// Runs the point with the rig `make` stands up for each visit.
    pub fn measure<F>(self, control: &Control, stop: &AtomicBool, make: F) -> ResultDoc
    where
        F: FnMut() -> Result<Box<dyn Rig>, RunError>,
    {
        let settings = self.settings(control);
        let mut bench = OneRig {
            planned: [self.planned],
            make,
        };
        run(settings, &mut bench, control, stop)
    }

    /// Runs the point through a bench of the command's own (which must plan this one
    /// point).
    pub fn measure_on(
        self,
        bench: &mut dyn Bench,
        control: &Control,
        stop: &AtomicBool,
    ) -> ResultDoc {
        let settings = self.settings(control);
        run(settings, bench, control, stop)
    }

    fn settings(&self, control: &Control) -> Settings {
        Settings {
            workload: self.workload.clone(),
            runs: control.runs,
            warmup: control.warmup,
            count: self.count,
            duration_s: None,
            peer: self.peer.into(),
            pin: self.pin,
            verify: self.planned.verify,
            interleave: false,
        }
    }
}

fn run(
    settings: Settings,
    bench: &mut dyn Bench,
    control: &Control,
    stop: &AtomicBool,
) -> ResultDoc {
    let context = xferbench_lab::context::collect(
        env!("CARGO_PKG_VERSION"),
        std::env::args().collect(),
        settings,
    );
    run_plan(context, bench, &control.options(), stop, &mut [])
}

/// A bench of one point whose rig a closure stands up.
struct OneRig<F> {
    planned: [PlannedPoint; 1],
    make: F,
}

impl<F> Bench for OneRig<F>
where
    F: FnMut() -> Result<Box<dyn Rig>, RunError>,
{
    fn points(&self) -> &[PlannedPoint] {
        &self.planned
    }

    fn rig(&mut self, _: usize, _: Option<&dyn CounterSource>) -> Result<Box<dyn Rig>, RunError> {
        (self.make)()
    }
}

impl OutputArgs {
    /// Checks every output path before anything is measured.
    pub fn check(&self) -> Result<(), String> {
        self.export.check().and_then(|()| self.record.check())
    }

    /// Writes the exports, records the document in the history and prints it on
    /// stdout: as JSON with `--json`, else the command's `summary` unless `--quiet`.
    /// Returns whether every export was written.
    pub fn write(
        &self,
        doc: &ResultDoc,
        summary: impl FnOnce(&ResultDoc) -> String,
    ) -> Result<bool> {
        let written = self.export.write(doc);
        crate::history::record(&self.record, doc, self.quiet);
        let mut stdout = crate::out::stdout();
        if self.json {
            Json.export(doc, &mut stdout)?;
        } else if !self.quiet {
            write!(stdout, "{}", summary(doc))?;
        }
        stdout.flush()?;
        Ok(written)
    }

    /// [`write`](Self::write), then the exit status of the document
    /// ([`crate::exit::for_doc`]).
    pub fn finish(
        &self,
        doc: &ResultDoc,
        summary: impl FnOnce(&ResultDoc) -> String,
    ) -> Result<u8> {
        let written = self.write(doc, summary)?;
        Ok(crate::exit::for_doc(doc, !written))
    }
}
