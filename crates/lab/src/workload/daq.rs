//! The readout workload of `sis8300drv_threads`: one reader thread per board runs
//! the chosen functions (`-A`) `nreads` times, once or once per trigger (`-l`), and
//! the run is timed per board and function as the original prints it.
//!
//! # What is measured
//!
//! * A [`Row`] per board and function: its first start and last end relative to
//!   `td` (taken just before the reader threads start, as the original's), the time
//!   it was busy, and its passes. With `-l 0` busy time is `end − start`, so
//!   [`Row::speed_mb_s`] is the original's `nbytes_raw × nreads / (end − start)`.
//!   With loops, busy time is the sum over loops (the trigger waits are left out).
//! * With `verify`, every sample read is checked against the model's pattern
//!   between reads; the check's time is left out of the rows, and its CPU time out
//!   of the host CPU figures.
//! * CPU: the process's user and sys time over the run; the model's share (the DMA
//!   engines, which stand for hardware) and the check's are subtracted to give the
//!   host's, which is what the original's `top` saw. A sampler takes the host CPU %
//!   every 0.5 s, as `top -d 0.5`.

use super::kind::{RecordedWorkload, WORKLOAD};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::LazyLock;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use xferbench_params::{Choice, Kind, ParamError, ParamMap, PointParams, Value};
use xferbench_probes::clock::Stamp;
use xferbench_probes::cpu::{CpuSnapshot, ProcessCpu};
use xferbench_probes::verify::Integrity;
use xferbench_transports::ParamDef;
pub use xferbench_transports::daq::convert::{Function, Kernels, ScaleParams};
use xferbench_transports::daq::convert::{Outputs, convert, improved, original};
use xferbench_transports::daq::memory::mismatches;
pub use xferbench_transports::daq::{Access, DaqEnd, Link, Trigger};
use xferbench_transports::daq::{Board, DaqError, Digitizer, DigitizerConfig};

/// The name of the memcpy row: a copy of the same input bytes on the same thread
/// right after each conversion pass (`DaqSpec::memcpy`), so that both are timed
/// under the same competition for the cores.
pub const MEMCPY: &str = "memcpy";

/// The name of the memcpy row that moves the conversion's bytes: after each
/// conversion pass, on the same thread, a copy of `(input + output bytes) / 2`
/// between two buffers of that size, so that it reads and writes as many bytes as the
/// pass (input read + output written) over the same footprint. Its speed is quoted,
/// as the conversion's, in the conversion's raw input bytes per second, so that
/// "function / this" is the conversion's time against a memcpy of the same traffic.
pub const MEMCPY_MOVED: &str = "memcpy_moved";

/// The names of a readout point's parameters, for code that matches or selects by
/// them (a table's filters); each is the name of its definition below.
pub mod names {
    /// [`super::BOARDS`].
    pub const BOARDS: &str = "boards";
    /// [`super::LINKS`].
    pub const LINKS: &str = "links";
    /// [`super::SAMPLES`].
    pub const SAMPLES: &str = "samples";
    /// [`super::READS`].
    pub const READS: &str = "reads";
    /// [`super::FUNC`].
    pub const FUNC: &str = "func";
    /// [`super::FACTOR`].
    pub const FACTOR: &str = "factor";
    /// [`super::ACCESS`].
    pub const ACCESS: &str = "access";
    /// [`super::DAQ`].
    pub const DAQ: &str = "daq";
    /// [`super::LOOPS`].
    pub const LOOPS: &str = "loops";
    /// [`super::DEVICES`].
    pub const DEVICES: &str = "devices";
    /// [`super::KERNELS`], the conversion kernels' own definition.
    pub const KERNELS: &str = "kernels";
}

pub use xferbench_transports::daq::convert::KERNELS;

/// `boards`: digitizer boards, one reader thread each.
pub const BOARDS: ParamDef =
    ParamDef::integer(names::BOARDS, 1, 10, 1, "digitizer boards, a reader each");
/// `links`: the boards' links, in words (`5l2`, `ku+5l2`) or by name (`l2,ku`).
pub const LINKS: ParamDef =
    ParamDef::text(names::LINKS, "the boards' links", "l2", "the boards' links");
/// `samples`: samples per read (`-S`).
pub const SAMPLES: ParamDef = ParamDef::integer(
    names::SAMPLES,
    16,
    i64::MAX,
    1_000_000,
    "samples per read, a multiple of 16 (-S)",
);
/// `reads`: reads or passes per function (`-N`).
pub const READS: ParamDef = ParamDef::integer(
    names::READS,
    1,
    u32::MAX as i64,
    1,
    "reads (or passes) per function (-N)",
);
/// `factor`: the decimation factor (`-f`).
pub const FACTOR: ParamDef =
    ParamDef::integer(names::FACTOR, 1, i64::MAX, 1, "the decimation factor (-f)");
/// `loops`: acquisitions (`-l`; 0: run once, no trigger).
pub const LOOPS: ParamDef = ParamDef::integer(
    names::LOOPS,
    0,
    u32::MAX as i64,
    0,
    "acquisitions (-l; 0: run once, no trigger)",
);
/// `devices`: the device names, comma-separated.
pub const DEVICES: ParamDef = ParamDef::text(
    names::DEVICES,
    "device names, comma-separated",
    "sis8300-0",
    "the device names, one board each",
);

/// The readout path of a point ([`Access`]), as its `access` records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessPath {
    /// [`Access::Read`].
    Read,
    /// [`Access::Mmap`].
    Mmap,
}

xferbench_params::choices!(AccessPath {
    Read => "read": "read(): a link transfer then a pread per 4 MiB chunk",
    Mmap => "mmap": "mmap(): the engine writes into the reader's shared mapping",
});

impl From<Access> for AccessPath {
    fn from(a: Access) -> AccessPath {
        match a {
            Access::Read => AccessPath::Read,
            Access::Mmap => AccessPath::Mmap,
        }
    }
}

/// `access`: the readout path (`-B`).
pub const ACCESS: ParamDef = ParamDef::choice(
    names::ACCESS,
    <AccessPath as xferbench_params::Choices>::CHOICES,
    "read",
    "the readout path (-B)",
);

/// How a point's acquisitions end, as its `daq` records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DaqMode {
    /// No loop: one run, no trigger.
    None,
    /// [`DaqEnd::Poll`].
    Poll,
    /// [`DaqEnd::Irq`].
    Irq,
}

xferbench_params::choices!(DaqMode {
    None => "none": "no loop: the reads run once, no trigger",
    Poll => "poll": "each acquisition's end polled, a status read per system call",
    Irq => "irq": "each acquisition's end awaited on the board's interrupt",
});

/// `daq`: how acquisitions end.
pub const DAQ: ParamDef = ParamDef::choice(
    names::DAQ,
    <DaqMode as xferbench_params::Choices>::CHOICES,
    "none",
    "how acquisitions end (none: no loop)",
);

/// `func`: a point's primary function, by its C name (`func_readout`,
/// `func_umn2double`): every function of [`Function`].
pub static FUNC: LazyLock<ParamDef> = LazyLock::new(|| {
    let choices: Vec<Choice> = [Function::Readout, Function::WritePattern]
        .into_iter()
        .chain(Function::CONVERSIONS)
        .map(|f| Choice {
            name: Cow::Borrowed(f.c_name()),
            help: Cow::Owned(format!("-A {}", f.code())),
        })
        .collect();
    ParamDef {
        name: Cow::Borrowed(names::FUNC),
        kind: Kind::Enum(Cow::Owned(choices)),
        default: Value::choice(Function::Readout.c_name()),
        unset: None,
        help: Cow::Borrowed("the point's primary function, by its C name"),
    }
});

/// The readout settings every SIS8300 point records (`xferbench daq`'s and the
/// SIS8300 study's alike): boards and their links, samples, reads, the primary
/// function and decimation factor, kernels, readout path, how acquisitions end and
/// how many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaqParams {
    /// Boards.
    pub boards: usize,
    /// The links, as the caller writes them.
    pub links: String,
    /// Samples per read.
    pub samples: usize,
    /// Reads per function.
    pub nreads: u32,
    /// The primary function.
    pub func: Function,
    /// Decimation factor.
    pub factor: usize,
    /// Kernels.
    pub kernels: Kernels,
    /// Readout path.
    pub access: AccessPath,
    /// How acquisitions end.
    pub daq: DaqMode,
    /// Acquisitions.
    pub loops: u32,
}

impl DaqParams {
    /// The settings of `spec` whose primary function is `func`, its links written
    /// `links`.
    pub fn of(spec: &DaqSpec, func: Function, links: String) -> DaqParams {
        DaqParams {
            boards: spec.links.len(),
            links,
            samples: spec.samples,
            nreads: spec.nreads,
            func,
            factor: spec.scale.factor,
            kernels: spec.kernels,
            access: spec.access.into(),
            daq: spec.daq(),
            loops: spec.loops,
        }
    }
}

impl PointParams for DaqParams {
    fn definitions() -> Vec<ParamDef> {
        vec![
            BOARDS,
            LINKS,
            SAMPLES,
            READS,
            FUNC.clone(),
            FACTOR,
            KERNELS,
            ACCESS,
            DAQ,
            LOOPS,
        ]
    }

    fn write(&self, map: &mut ParamMap) {
        map.put(&BOARDS, &Value::whole(self.boards));
        map.put_text(&LINKS, &self.links);
        map.put(&SAMPLES, &Value::whole(self.samples));
        map.put(&READS, &Value::whole(self.nreads));
        map.put(&FUNC, &Value::choice(self.func.c_name()));
        map.put(&FACTOR, &Value::whole(self.factor));
        map.put_text(&KERNELS, self.kernels.name());
        map.put_text(&ACCESS, self.access.name());
        map.put_text(&DAQ, self.daq.name());
        map.put(&LOOPS, &Value::whole(self.loops));
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        let func = FUNC.machine(&map.value(&FUNC)?);
        Ok(DaqParams {
            boards: map.whole(&BOARDS)?,
            links: map
                .text(&LINKS)
                .map_or_else(|| LINKS.machine(&LINKS.default), str::to_string),
            samples: map.whole(&SAMPLES)?,
            nreads: map.whole(&READS)?,
            func: Function::parse(&func).unwrap_or(Function::Readout),
            factor: map.whole(&FACTOR)?,
            kernels: map.choice(&KERNELS)?,
            access: map.choice(&ACCESS)?,
            daq: map.choice(&DAQ)?,
            loops: map.whole(&LOOPS)?,
        })
    }
}

/// `function`: the original's `-A` code (0-8, 99: all, 100: write a pattern).
pub const FUNCTION: ParamDef = ParamDef::integer(
    "function",
    0,
    100,
    0,
    "the functions run, as the original's -A (0-8, 99: all, 100: write a pattern)",
);
/// `offset`: the decimation offset (`-o`).
pub const OFFSET: ParamDef =
    ParamDef::integer("offset", 0, i64::MAX, 0, "the decimation offset (-o)");
/// `scale_offset`: the scale offset (`-O`).
pub const SCALE_OFFSET: ParamDef = ParamDef::text(
    "scale_offset",
    "a finite number",
    "0",
    "the scale offset (-O)",
);
/// `scale_factor`: the scale factor (`-F`).
pub const SCALE_FACTOR: ParamDef = ParamDef::text(
    "scale_factor",
    "a finite number",
    "1",
    "the scale factor (-F)",
);
/// `bus`: the crate's shared bus limit, MB/s, or `none`.
pub const BUS: ParamDef = ParamDef::text(
    "bus",
    "a rate in MB/s, or `none`",
    NO_BUS,
    "the crate's shared bus limit, MB/s",
);
/// [`BUS`] without a limit.
const NO_BUS: &str = "none";
/// `trigger`: the rate of the crate's trigger, Hz, or `software`.
pub const TRIGGER: ParamDef = ParamDef::text(
    "trigger",
    "a rate in Hz, or `software`",
    SOFTWARE,
    "the trigger that ends acquisitions when looping",
);
/// [`TRIGGER`] for [`Trigger::Software`].
const SOFTWARE: &str = "software";

/// The parameters of an `xferbench daq` point: the readout settings every SIS8300
/// point records ([`DaqParams`], its links by name), and the original's settings
/// that the study fixes, under `workload=daq`.
#[derive(Debug, Clone, PartialEq)]
pub struct DaqCommandParams {
    /// The readout settings.
    pub daq: DaqParams,
    /// Device names.
    pub devices: Vec<String>,
    /// `-A`.
    pub function: u32,
    /// `-o`.
    pub offset: usize,
    /// `-O`.
    pub scale_offset: f64,
    /// `-F`.
    pub scale_factor: f64,
    /// The bus limit, MB/s.
    pub bus_mb_s: Option<f64>,
    /// The trigger.
    pub trigger: Trigger,
}

impl DaqCommandParams {
    /// The parameters of `spec` whose primary function is `func`.
    pub fn of(spec: &DaqSpec, func: Function) -> DaqCommandParams {
        let links: Vec<String> = spec.links.iter().map(|l| l.name()).collect();
        DaqCommandParams {
            daq: DaqParams::of(spec, func, links.join(",")),
            devices: spec.devices.clone(),
            function: spec.function,
            offset: spec.scale.offset,
            scale_offset: spec.scale.scale_offset,
            scale_factor: spec.scale.scale_factor,
            bus_mb_s: spec.bus.map(|b| b / 1e6),
            trigger: spec.trigger,
        }
    }
}

/// A number stored as text by `def`, read back.
fn number(map: &ParamMap, def: &ParamDef) -> Result<f64, ParamError> {
    let text = map
        .text(def)
        .map_or_else(|| def.machine(&def.default), str::to_string);
    text.parse().map_err(|_| ParamError::Invalid {
        name: def.name().to_string(),
        value: text.clone(),
        accepts: def.accepts(),
    })
}

impl PointParams for DaqCommandParams {
    fn definitions() -> Vec<ParamDef> {
        let mut defs = DaqParams::definitions();
        defs.extend([
            WORKLOAD,
            DEVICES,
            FUNCTION,
            OFFSET,
            SCALE_OFFSET,
            SCALE_FACTOR,
            BUS,
            TRIGGER,
        ]);
        defs
    }

    fn write(&self, map: &mut ParamMap) {
        self.daq.write(map);
        map.put_text(&WORKLOAD, RecordedWorkload::Daq.name());
        map.put_text(&DEVICES, &self.devices.join(","));
        map.put(&FUNCTION, &Value::whole(self.function));
        map.put(&OFFSET, &Value::whole(self.offset));
        map.put_text(&SCALE_OFFSET, &self.scale_offset.to_string());
        map.put_text(&SCALE_FACTOR, &self.scale_factor.to_string());
        match self.bus_mb_s {
            Some(b) => map.put_text(&BUS, &b.to_string()),
            None => map.put_text(&BUS, NO_BUS),
        }
        match self.trigger {
            Trigger::Internal(hz) => map.put_text(&TRIGGER, &hz.to_string()),
            Trigger::Software => map.put_text(&TRIGGER, SOFTWARE),
        }
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        Ok(DaqCommandParams {
            daq: DaqParams::read(map)?,
            devices: map
                .text(&DEVICES)
                .map_or_else(Vec::new, |d| d.split(',').map(str::to_string).collect()),
            function: map.whole(&FUNCTION)?,
            offset: map.whole(&OFFSET)?,
            scale_offset: number(map, &SCALE_OFFSET)?,
            scale_factor: number(map, &SCALE_FACTOR)?,
            bus_mb_s: match map.text(&BUS) {
                None | Some(NO_BUS) => None,
                Some(_) => Some(number(map, &BUS)?),
            },
            trigger: match map.text(&TRIGGER) {
                None | Some(SOFTWARE) => Trigger::Software,
                Some(_) => Trigger::Internal(number(map, &TRIGGER)?),
            },
        })
    }
}

/// One readout configuration: the original's flags and ours.
#[derive(Debug, Clone, PartialEq)]
pub struct DaqSpec {
    /// Device names, one board each.
    pub devices: Vec<String>,
    /// One link per board.
    pub links: Vec<Link>,
    /// Samples per read (a multiple of 16).
    pub samples: usize,
    /// Reads (or passes) per function, `-N`.
    pub nreads: u32,
    /// Decimation and scaling, `-o -f -O -F`.
    pub scale: ScaleParams,
    /// `-B`.
    pub access: Access,
    /// `-A`.
    pub function: u32,
    /// `-l` (0: run once, no trigger).
    pub loops: u32,
    /// `-i`: interrupt instead of polling.
    pub end: DaqEnd,
    /// The trigger that ends acquisitions when looping.
    pub trigger: Trigger,
    /// The crate's bus limit, bytes/s.
    pub bus: Option<f64>,
    /// Original or improved functions.
    pub kernels: Kernels,
    /// Check every sample read.
    pub verify: bool,
    /// Also time a memcpy of the same input bytes after each conversion pass, and a
    /// memcpy of the same bytes moved ([`MEMCPY_MOVED`]).
    pub memcpy: bool,
    /// `--pin`: board `i`'s reader thread on the 2i-th allowed CPU and its DMA engine
    /// on the next, wrapping around ([`xferbench_probes::affinity::pin_plan`], as `run --pin`
    /// places a driver and its peer).
    pub pin: bool,
}

impl DaqSpec {
    /// The functions `-A` runs, or an error naming `-A`.
    pub fn functions(&self) -> Result<Vec<Function>, String> {
        Function::for_code(self.function).ok_or_else(|| {
            format!(
                "-A {}: unknown function; choose 0-8, 99 (all) or 100 (write pattern)",
                self.function
            )
        })
    }

    /// Checks what the model and the functions need; errors name the flag.
    pub fn check(&self) -> Result<(), String> {
        self.functions()?;
        if self.devices.is_empty() {
            return Err("DEVICES: give at least one device".into());
        }
        if self.devices.len() > 10 {
            return Err(format!(
                "DEVICES: {} given; at most 10, as the original",
                self.devices.len()
            ));
        }
        if self.links.len() != self.devices.len() {
            return Err(format!(
                "--link: {} links for {} devices; give one, or one per device",
                self.links.len(),
                self.devices.len()
            ));
        }
        if self.samples == 0 || !self.samples.is_multiple_of(16) {
            return Err(format!(
                "-S {}: must be a positive multiple of 16",
                self.samples
            ));
        }
        if self.nreads == 0 {
            return Err("-N 0: at least one read".into());
        }
        if self.scale.factor == 0 {
            return Err("-f 0: the decimation factor must be at least 1".into());
        }
        if self.scale.offset >= self.samples {
            return Err(format!(
                "-o {}: the decimation offset must be below -S {}",
                self.scale.offset, self.samples
            ));
        }
        if !(self.scale.scale_factor.is_finite() && self.scale.scale_offset.is_finite()) {
            return Err("-F/-O: scale factor and offset must be finite numbers".into());
        }
        Ok(())
    }

    /// The access as a point parameter: `read` or `mmap`.
    pub fn access_name(&self) -> &'static str {
        AccessPath::from(self.access).name()
    }

    /// How acquisitions end: no loop, polled or by interrupt.
    pub fn daq(&self) -> DaqMode {
        match (self.loops, self.end) {
            (0, _) => DaqMode::None,
            (_, DaqEnd::Poll) => DaqMode::Poll,
            (_, DaqEnd::Irq) => DaqMode::Irq,
        }
    }

    /// How acquisitions end, as a point parameter: `none` (no loop), `poll` or `irq`.
    pub fn daq_mode(&self) -> &'static str {
        self.daq().name()
    }

    /// With [`pin`](Self::pin): each board's reader and DMA engine CPUs; else none.
    pub fn pin_cpus(&self) -> Vec<(usize, usize)> {
        if !self.pin {
            return Vec::new();
        }
        let cpus = xferbench_probes::affinity::allowed_cpus();
        (0..self.devices.len())
            .map(|i| xferbench_probes::affinity::pin_plan(i, &cpus))
            .collect()
    }

    /// The digitizer this spec needs.
    pub fn digitizer(&self) -> DigitizerConfig {
        DigitizerConfig {
            links: self.links.clone(),
            samples: self.samples,
            bus: self.bus,
            trigger: self.trigger,
            mapped: self.access == Access::Mmap,
            engine_cpus: self
                .pin_cpus()
                .into_iter()
                .map(|(_, engine)| engine)
                .collect(),
        }
    }

    /// Raw bytes per read.
    pub fn nbytes_raw(&self) -> u64 {
        self.samples as u64 * 2
    }
}

/// One board and function's figures, as the original's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Row {
    /// The function's C name, or `memcpy`.
    pub func: String,
    /// Board index.
    pub board: usize,
    /// Device name.
    pub dev: String,
    /// Raw bytes per pass.
    pub bytes_raw: u64,
    /// Passes (reads × loops).
    pub passes: u64,
    /// First start, ns after `td`.
    pub start_ns: u64,
    /// Last end, ns after `td`.
    pub end_ns: u64,
    /// Time busy, ns (`end − start` without loops).
    pub busy_ns: u64,
    /// Output samples of all passes.
    pub output_samples: u64,
    /// The reader thread's CPU time over the passes, ns (the sample check left
    /// out).
    #[serde(default)]
    pub cpu_ns: u64,
    /// The board's DMA engine thread's CPU time serving these passes, ns: the
    /// `mmap` readout's copy into the reader's mapping (the `read` path's engine
    /// only paces and sleeps).
    #[serde(default)]
    pub engine_cpu_ns: u64,
}

impl Row {
    /// CPU time of the passes, ns: the reader's and the engine's that served it.
    pub fn total_cpu_ns(&self) -> u64 {
        self.cpu_ns + self.engine_cpu_ns
    }
    /// `size [MB]`.
    pub fn size_mb(&self) -> f64 {
        self.bytes_raw as f64 / 1e6
    }
    /// `dur [ms]`: busy time per pass.
    pub fn dur_ms(&self) -> f64 {
        self.busy_ns as f64 / 1e6 / self.passes.max(1) as f64
    }
    /// `speed [MB/s]`: raw bytes of all passes over the busy time.
    pub fn speed_mb_s(&self) -> f64 {
        (self.bytes_raw * self.passes) as f64 / (self.busy_ns.max(1) as f64 / 1e9) / 1e6
    }
    /// Output samples per second of busy time.
    pub fn output_samples_per_s(&self) -> f64 {
        self.output_samples as f64 / (self.busy_ns.max(1) as f64 / 1e9)
    }
}

/// The common-window aggregate of one function over all boards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Aggregate {
    /// The function.
    pub func: String,
    /// Boards.
    pub boards: usize,
    /// Raw bytes of all boards and passes.
    pub bytes: u64,
    /// Earliest start to latest end, ns.
    pub window_ns: u64,
    /// Output samples of all boards.
    pub output_samples: u64,
}

impl Aggregate {
    /// MB/s over the common window.
    pub fn speed_mb_s(&self) -> f64 {
        self.bytes as f64 / (self.window_ns.max(1) as f64 / 1e9) / 1e6
    }
    /// Output samples/s over the common window.
    pub fn output_samples_per_s(&self) -> f64 {
        self.output_samples as f64 / (self.window_ns.max(1) as f64 / 1e9)
    }
}

/// CPU of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DaqCpu {
    /// The whole process over the run.
    pub process: ProcessCpu,
    /// The DMA engines' CPU, seconds (the model's).
    pub engines_s: f64,
    /// The sample check's CPU, seconds.
    pub verify_s: f64,
    /// Host CPU % over the run: (process − engines − check) / wall.
    pub host_percent: f64,
    /// Host CPU % per 0.5 s sample, as `top -d 0.5`.
    pub top_percent: Vec<f64>,
    /// The readers' CPU seconds waiting for the end of acquisitions (the polling
    /// loop, or the blocking wait).
    #[serde(default)]
    pub wait_s: f64,
    /// The readers' CPU seconds in the functions (readout copies and conversions,
    /// the memcpy rows included): the rows' `cpu_ns`.
    #[serde(default)]
    pub work_s: f64,
    /// CPU per board: its reader's and its DMA engine's, in board order.
    #[serde(default)]
    pub boards: Vec<BoardCpu>,
}

/// One board's CPU over a run, seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BoardCpu {
    /// Board index.
    pub board: usize,
    /// Its reader waiting for the end of acquisitions.
    pub wait_s: f64,
    /// Its reader in the functions (the sample check left out).
    pub work_s: f64,
    /// Its DMA engine thread (the model's copy for `mmap`, pacing for `read`).
    pub engine_s: f64,
}

impl BoardCpu {
    /// Reader and engine together.
    pub fn total_s(&self) -> f64 {
        self.wait_s + self.work_s + self.engine_s
    }
}

impl DaqCpu {
    /// Mean of the 0.5 s samples, or the whole run's when the run was shorter.
    pub fn top_mean(&self) -> f64 {
        if self.top_percent.is_empty() {
            self.host_percent
        } else {
            self.top_percent.iter().sum::<f64>() / self.top_percent.len() as f64
        }
    }
}

/// What one run of a [`DaqSpec`] measured.
#[derive(Debug, Clone)]
pub struct DaqRun {
    /// `td`: just before the reader threads started.
    pub td: Stamp,
    /// Rows in completion order.
    pub rows: Vec<Row>,
    /// CPU.
    pub cpu: DaqCpu,
    /// Status reads of all polling waits.
    pub status_reads: u64,
    /// Acquisitions waited for.
    pub acquisitions: u64,
    /// Samples checked and mismatched, with verify.
    pub integrity: Option<Integrity>,
    /// Stopped early by the stop flag.
    pub interrupted: bool,
}

impl DaqRun {
    /// Per-function aggregates over the common window, in first-row order.
    pub fn aggregates(&self) -> Vec<Aggregate> {
        let mut names: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !names.contains(&r.func.as_str()) {
                names.push(&r.func);
            }
        }
        names
            .into_iter()
            .map(|f| {
                let rows: Vec<&Row> = self.rows.iter().filter(|r| r.func == f).collect();
                let first = rows.iter().map(|r| r.start_ns).min().unwrap_or(0);
                let last = rows.iter().map(|r| r.end_ns).max().unwrap_or(0);
                let loops = rows
                    .iter()
                    .any(|r| r.busy_ns + 1000 < r.end_ns - r.start_ns);
                Aggregate {
                    func: f.to_string(),
                    boards: rows.len(),
                    bytes: rows.iter().map(|r| r.bytes_raw * r.passes).sum(),
                    // With loops the window would hold the trigger waits; the
                    // longest busy time stands in for it.
                    window_ns: if loops {
                        rows.iter().map(|r| r.busy_ns).max().unwrap_or(0)
                    } else {
                        last - first
                    },
                    output_samples: rows.iter().map(|r| r.output_samples).sum(),
                }
            })
            .collect()
    }
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum DaqRunError {
    /// The spec is not runnable (names the flag).
    #[error("{0}")]
    Config(String),
    /// The model failed.
    #[error(transparent)]
    Model(#[from] DaqError),
}

fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[derive(Default, Clone, Copy)]
struct Acc {
    start: Option<Stamp>,
    end: Option<Stamp>,
    busy: u64,
    passes: u64,
    out: u64,
    cpu: u64,
    /// The engine's CPU serving these passes, ns.
    engine: u64,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Acc {
    fn add(&mut self, t0: Stamp, t1: Stamp, excluded: u64, passes: u64, out: u64, cpu: u64) {
        self.cpu += cpu;
        self.start.get_or_insert(t0);
        self.end = Some(Stamp(t1.0.saturating_sub(excluded)));
        self.busy += t1.since(t0).saturating_sub(excluded);
        self.passes += passes;
        self.out += out;
    }
}

struct Shared<'a> {
    spec: &'a DaqSpec,
    funcs: &'a [Function],
    td: Stamp,
    rows: Mutex<Vec<Row>>,
    stop: &'a AtomicBool,
    verify_ns: AtomicU64,
    wait_cpu_ns: AtomicU64,
    status_reads: AtomicU64,
    acquisitions: AtomicU64,
    boards: Mutex<Vec<BoardCpu>>,
}

/// A digitizer ready for runs of one spec.
#[derive(Debug)]
pub struct Readout {
    spec: DaqSpec,
    funcs: Vec<Function>,
    digitizer: Digitizer,
}

impl Readout {
    /// Checks the spec and builds its digitizer.
    pub fn new(spec: DaqSpec) -> Result<Readout, DaqRunError> {
        spec.check().map_err(DaqRunError::Config)?;
        let funcs = spec.functions().map_err(DaqRunError::Config)?;
        let digitizer = Digitizer::new(&spec.digitizer())?;
        Ok(Readout {
            spec,
            funcs,
            digitizer,
        })
    }

    /// The spec.
    pub fn spec(&self) -> &DaqSpec {
        &self.spec
    }

    /// One run: a reader thread per board, a 0.5 s CPU sampler beside them.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<DaqRun, DaqRunError> {
        let meter = self.digitizer.engine_meter();
        let engines0 = meter.total();
        let cpu0 = CpuSnapshot::now();
        let shared = Shared {
            spec: &self.spec,
            funcs: &self.funcs,
            td: Stamp::now(),
            rows: Mutex::new(Vec::new()),
            stop,
            verify_ns: AtomicU64::new(0),
            wait_cpu_ns: AtomicU64::new(0),
            status_reads: AtomicU64::new(0),
            acquisitions: AtomicU64::new(0),
            boards: Mutex::new(Vec::new()),
        };
        let done = AtomicBool::new(false);
        let host_ns = |snap: &CpuSnapshot| {
            (snap.user_us + snap.sys_us) * 1000
                - (meter.total() - engines0).as_nanos() as u64
                - shared.verify_ns.load(Ordering::Relaxed)
        };
        let (results, top) = std::thread::scope(|s| {
            let sampler = s.spawn(|| {
                let mut samples = Vec::new();
                let mut prev = CpuSnapshot::now();
                let mut prev_host = host_ns(&prev);
                loop {
                    let t = std::time::Instant::now();
                    while t.elapsed() < Duration::from_millis(500) {
                        if done.load(Ordering::Acquire) {
                            return samples;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    let now = CpuSnapshot::now();
                    let host = host_ns(&now);
                    let wall = now.at.since(prev.at).max(1) as f64;
                    samples.push(host.saturating_sub(prev_host) as f64 / wall * 100.0);
                    (prev, prev_host) = (now, host);
                }
            });
            let readers = self.spec.pin_cpus();
            let handles: Vec<std::io::Result<_>> = self
                .digitizer
                .boards_mut()
                .iter_mut()
                .enumerate()
                .map(|(i, b)| {
                    let shared = &shared;
                    let cpu = readers.get(i).map(|&(reader, _)| reader);
                    std::thread::Builder::new()
                        .name(format!("daq-read{i}"))
                        .spawn_scoped(s, move || {
                            if let Some(cpu) = cpu {
                                // Planned among the allowed CPUs: it cannot fail for
                                // want of one.
                                let _ = xferbench_probes::affinity::pin_current_thread(cpu);
                            }
                            read_board(b, shared)
                        })
                })
                .collect();
            let results: Vec<Result<Integrity, DaqError>> = handles
                .into_iter()
                .map(|h| match h {
                    Ok(h) => h.join().expect("reader threads do not panic"),
                    Err(e) => Err(DaqError::Memory {
                        what: "spawning a reader thread",
                        source: e,
                    }),
                })
                .collect();
            done.store(true, Ordering::Release);
            (results, sampler.join().expect("the sampler does not panic"))
        });
        let cpu1 = CpuSnapshot::now();
        let mut integrity = Integrity::default();
        for r in results {
            integrity.add(&r?);
        }
        let process = cpu0.until(&cpu1, "main", std::process::id());
        let engines_s = (meter.total() - engines0).as_secs_f64();
        let verify_s = shared.verify_ns.load(Ordering::Relaxed) as f64 / 1e9;
        let host_s = (process.user_s + process.sys_s - engines_s - verify_s).max(0.0);
        let host_percent = host_s / process.window_s.max(1e-9) * 100.0;
        let rows = shared.rows.into_inner().unwrap_or_else(|e| e.into_inner());
        let work_s = rows.iter().map(|r| r.cpu_ns).sum::<u64>() as f64 / 1e9;
        let mut boards = shared
            .boards
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        boards.sort_by_key(|b| b.board);
        Ok(DaqRun {
            td: shared.td,
            rows,
            cpu: DaqCpu {
                process,
                engines_s,
                verify_s,
                host_percent,
                top_percent: top,
                wait_s: shared.wait_cpu_ns.load(Ordering::Relaxed) as f64 / 1e9,
                work_s,
                boards,
            },
            status_reads: shared.status_reads.into_inner(),
            acquisitions: shared.acquisitions.into_inner(),
            integrity: self.spec.verify.then_some(integrity),
            interrupted: stop.load(Ordering::Relaxed),
        })
    }
}

/// How long a reader waits for the end of an acquisition: five seconds (the
/// original's limit is 1000 ms; on a loaded machine the trigger thread can miss that
/// and fail a run that is only late), or three trigger periods when they are longer.
fn wait_limit(trigger: Trigger) -> Duration {
    match trigger {
        Trigger::Internal(hz) => Duration::from_secs_f64((3.0 / hz).max(5.0)),
        Trigger::Software => Duration::from_secs(1),
    }
}

fn read_board(board: &mut Board, sh: &Shared<'_>) -> Result<Integrity, DaqError> {
    let spec = sh.spec;
    let loops = spec.loops.max(1);
    let engine0 = board.engine_cpu();
    let mut r = BoardReader::new(board, sh);
    let mut wait_ns = 0u64;
    let mut completed = 0;
    for l in 0..loops {
        if sh.stop.load(Ordering::Relaxed) {
            break;
        }
        let last = l + 1 == loops;
        if spec.loops > 0 {
            wait_ns += acquire(board, sh)?;
        }
        for (k, &f) in sh.funcs.iter().enumerate() {
            match f {
                Function::Readout => r.readout(board, k)?,
                Function::WritePattern => r.write_pattern(board, k)?,
                conv => r.convert(board, k, conv),
            }
            if last {
                publish(sh, board, r.row(f.c_name(), &r.acc[k]));
            }
        }
        let m = sh.funcs.len();
        if last && r.acc[m].passes > 0 {
            publish(sh, board, r.row(MEMCPY, &r.acc[m]));
            publish(sh, board, r.row(MEMCPY_MOVED, &r.acc[m + 1]));
        }
        completed += 1;
    }
    if completed < loops {
        // Rows of an interrupted run: what was done so far.
        for (k, a) in r.acc.iter().enumerate() {
            if a.passes > 0 && k < sh.funcs.len() {
                publish(sh, board, r.row(sh.funcs[k].c_name(), a));
            }
        }
    }
    sh.boards
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(BoardCpu {
            board: board.index(),
            wait_s: wait_ns as f64 / 1e9,
            work_s: r.acc.iter().map(|a| a.cpu).sum::<u64>() as f64 / 1e9,
            engine_s: board.engine_cpu().saturating_sub(engine0).as_secs_f64(),
        });
    Ok(r.integrity)
}

/// Arms the board and waits for the end of its acquisition, by polling its status
/// or for its interrupt; returns the CPU time the wait took.
fn acquire(board: &mut Board, sh: &Shared<'_>) -> Result<u64, DaqError> {
    let spec = sh.spec;
    let c0 = thread_cpu_ns();
    board.arm();
    match spec.end {
        DaqEnd::Poll => {
            let r = board.wait_poll(wait_limit(spec.trigger))?;
            sh.status_reads.fetch_add(r, Ordering::Relaxed);
        }
        DaqEnd::Irq => board.wait_irq(wait_limit(spec.trigger))?,
    }
    sh.acquisitions.fetch_add(1, Ordering::Relaxed);
    let waited = thread_cpu_ns() - c0;
    sh.wait_cpu_ns.fetch_add(waited, Ordering::Relaxed);
    Ok(waited)
}

/// One board's reader: its buffers, allocated once per run, and what each function
/// (then the two reference copies) accumulated.
struct BoardReader<'s, 'a> {
    sh: &'s Shared<'a>,
    seed: u32,
    buf: Vec<u16>,
    out: Outputs,
    scratch: Vec<u16>,
    /// The same-traffic memcpy's buffers, written once so that no pass reads the
    /// zero page or faults them in: room for the largest conversion (u16 in, f64
    /// out: (2 + 8) / 2 bytes per sample).
    moved_src: Vec<u8>,
    moved_dst: Vec<u8>,
    /// Per function, then the memcpy of the input and the same-traffic memcpy.
    acc: Vec<Acc>,
    integrity: Integrity,
}

impl<'s, 'a> BoardReader<'s, 'a> {
    fn new(board: &Board, sh: &'s Shared<'a>) -> Self {
        let spec = sh.spec;
        let n = spec.samples;
        let need_buf = spec.access == Access::Read || sh.funcs.contains(&Function::WritePattern);
        let (scratch, moved_src, moved_dst) = if spec.memcpy {
            (vec![0u16; n], vec![0x5au8; 5 * n], vec![0xa5u8; 5 * n])
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        BoardReader {
            sh,
            seed: board.seed(),
            buf: if need_buf { vec![0u16; n] } else { Vec::new() },
            out: Outputs::for_functions(n, sh.funcs),
            scratch,
            moved_src,
            moved_dst,
            acc: vec![Acc::default(); sh.funcs.len() + 2],
            integrity: Integrity::default(),
        }
    }

    /// The row of one function's (or copy's) accumulated passes.
    fn row(&self, name: &str, a: &Acc) -> Row {
        Row {
            func: name.to_string(),
            board: 0,
            dev: String::new(),
            bytes_raw: self.sh.spec.nbytes_raw(),
            passes: a.passes,
            start_ns: a.start.map_or(0, |s| s.since(self.sh.td)),
            end_ns: a.end.map_or(0, |s| s.since(self.sh.td)),
            busy_ns: a.busy,
            output_samples: a.out,
            cpu_ns: a.cpu,
            engine_cpu_ns: a.engine,
        }
    }

    /// `func_readout`: `nreads` reads of the acquisition, each checked when
    /// verifying (the check's wall and CPU time left out of the row).
    fn readout(&mut self, board: &mut Board, k: usize) -> Result<(), DaqError> {
        let (spec, n) = (self.sh.spec, self.sh.spec.samples);
        let (t0, c0) = (Stamp::now(), thread_cpu_ns());
        let e0 = board.engine_cpu();
        let (mut excluded, mut excluded_cpu) = (0, 0);
        for _ in 0..spec.nreads {
            match spec.access {
                Access::Read => board.read(&mut self.buf)?,
                Access::Mmap => {
                    board.read_mapped(n)?;
                }
            }
            if spec.verify {
                let got = match spec.access {
                    Access::Read => &self.buf[..],
                    Access::Mmap => board.mapped(n).expect("mapped above"),
                };
                let (t0, c0) = (Stamp::now(), thread_cpu_ns());
                self.integrity.checked += got.len() as u64;
                self.integrity.corrupt += mismatches(self.seed, 0, got);
                let cpu = thread_cpu_ns() - c0;
                self.sh.verify_ns.fetch_add(cpu, Ordering::Relaxed);
                excluded += Stamp::now().since(t0);
                excluded_cpu += cpu;
            }
        }
        let cpu = (thread_cpu_ns() - c0).saturating_sub(excluded_cpu);
        let acc = &mut self.acc[k];
        acc.add(t0, Stamp::now(), excluded, u64::from(spec.nreads), 0, cpu);
        acc.engine += nanos(board.engine_cpu().saturating_sub(e0));
        Ok(())
    }

    /// `func_write_pattern`: the pattern written `nreads` times, read back once
    /// when verifying.
    fn write_pattern(&mut self, board: &mut Board, k: usize) -> Result<(), DaqError> {
        let spec = self.sh.spec;
        match spec.kernels {
            Kernels::Original => original::write_pattern(&mut self.buf),
            Kernels::Improved => improved::write_pattern(&mut self.buf),
        }
        let (t0, c0) = (Stamp::now(), thread_cpu_ns());
        let e0 = board.engine_cpu();
        for _ in 0..spec.nreads {
            board.write(&self.buf)?;
        }
        let t1 = Stamp::now();
        let acc = &mut self.acc[k];
        acc.add(t0, t1, 0, u64::from(spec.nreads), 0, thread_cpu_ns() - c0);
        acc.engine += nanos(board.engine_cpu().saturating_sub(e0));
        if spec.verify {
            let mut back = vec![0u16; spec.samples];
            board.read_written(&mut back)?;
            self.integrity.checked += spec.samples as u64;
            self.integrity.corrupt +=
                back.iter().zip(&self.buf).filter(|(a, b)| a != b).count() as u64;
        }
        Ok(())
    }

    /// A conversion, `nreads` passes over the acquisition; with `memcpy`, each pass
    /// followed by a copy of its input and one of the bytes it moved, so that all
    /// three see the same competition for the cores.
    fn convert(&mut self, board: &Board, k: usize, conv: Function) {
        let (spec, n) = (self.sh.spec, self.sh.spec.samples);
        let raw: &[u16] = match spec.access {
            Access::Read => &self.buf,
            Access::Mmap => board.mapped(n).expect("a mapped digitizer"),
        };
        let m = self.sh.funcs.len();
        for _ in 0..spec.nreads {
            let (t0, c0) = (Stamp::now(), thread_cpu_ns());
            let outs = convert(spec.kernels, conv, raw, &spec.scale, &mut self.out);
            let (t1, c1) = (Stamp::now(), thread_cpu_ns());
            self.acc[k].add(t0, t1, 0, 1, outs as u64, c1 - c0);
            if spec.memcpy {
                let (t0, c0) = (Stamp::now(), thread_cpu_ns());
                self.scratch.copy_from_slice(std::hint::black_box(raw));
                std::hint::black_box(&mut self.scratch);
                let (t1, c1) = (Stamp::now(), thread_cpu_ns());
                self.acc[m].add(t0, t1, 0, 1, n as u64, c1 - c0);
                let out_bytes = outs * if conv.outputs_f64() { 8 } else { 4 };
                let len = (2 * n + out_bytes) / 2;
                let (t0, c0) = (Stamp::now(), thread_cpu_ns());
                self.moved_dst[..len].copy_from_slice(std::hint::black_box(&self.moved_src[..len]));
                std::hint::black_box(&mut self.moved_dst);
                let (t1, c1) = (Stamp::now(), thread_cpu_ns());
                self.acc[m + 1].add(t0, t1, 0, 1, n as u64, c1 - c0);
            }
        }
    }
}

fn publish(sh: &Shared<'_>, board: &Board, mut row: Row) {
    row.board = board.index();
    row.dev = sh.spec.devices[board.index()].clone();
    sh.rows.lock().unwrap_or_else(|e| e.into_inner()).push(row);
}

#[cfg(test)]
mod params_tests {
    use super::*;

    #[test]
    fn a_readout_point_writes_and_reads_itself_through_its_definitions() {
        for (func, daq, access) in [
            (Function::Readout, DaqMode::None, AccessPath::Read),
            (Function::UMn2Double, DaqMode::Irq, AccessPath::Mmap),
            (Function::SMn2Float, DaqMode::Poll, AccessPath::Read),
        ] {
            let p = DaqParams {
                boards: 5,
                links: "5l2".into(),
                samples: 3_000_000,
                nreads: 30,
                func,
                factor: 10,
                kernels: Kernels::Improved,
                access,
                daq,
                loops: 7,
            };
            xferbench_params::point::round_trips(&p).unwrap();
        }
        for f in [Function::Readout, Function::WritePattern]
            .into_iter()
            .chain(Function::CONVERSIONS)
        {
            assert!(FUNC.parse(f.c_name()).is_ok(), "{f:?}");
        }
        for d in DaqCommandParams::definitions() {
            d.self_check().unwrap();
        }
        assert_eq!(names::KERNELS, KERNELS.name());
        let spec = DaqSpec {
            devices: vec!["sis8300-0".into(), "sis8300-1".into()],
            links: vec![Link::L2, Link::Ku],
            samples: 1_000_000,
            nreads: 30,
            scale: ScaleParams {
                offset: 3,
                factor: 10,
                scale_offset: 0.25,
                scale_factor: 1.5,
            },
            access: Access::Read,
            function: 99,
            loops: 0,
            end: DaqEnd::Poll,
            trigger: Trigger::Internal(14.0),
            bus: Some(3_047e6),
            kernels: Kernels::Original,
            verify: true,
            memcpy: false,
            pin: false,
        };
        let c = DaqCommandParams::of(&spec, Function::Readout);
        xferbench_params::point::round_trips(&c).unwrap();
        let map = c.to_map();
        assert_eq!(map.as_params()["workload"], "daq");
        assert_eq!(map.as_params()["bus"], "3047");
        assert_eq!(map.as_params()["trigger"], "14");
        assert_eq!(map.as_params()["links"], "l2,ku");
        // The keys and values `xferbench daq` has always recorded.
        let want: [(&str, &str); 18] = [
            ("access", "read"),
            ("boards", "2"),
            ("bus", "3047"),
            ("daq", "none"),
            ("devices", "sis8300-0,sis8300-1"),
            ("factor", "10"),
            ("func", "func_readout"),
            ("function", "99"),
            ("kernels", "original"),
            ("links", "l2,ku"),
            ("loops", "0"),
            ("offset", "3"),
            ("reads", "30"),
            ("samples", "1000000"),
            ("scale_factor", "1.5"),
            ("scale_offset", "0.25"),
            ("trigger", "14"),
            ("workload", "daq"),
        ];
        let have: Vec<(&str, &str)> = map
            .as_params()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(have, want);
        let software = DaqCommandParams {
            bus_mb_s: None,
            trigger: Trigger::Software,
            ..c
        };
        xferbench_params::point::round_trips(&software).unwrap();
    }
}
