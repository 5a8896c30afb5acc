//! `xferbench daq`: `sis8300drv_threads` on the digitizer model. Prints the
//! original's "Parameters:" block and rows, then the aggregates over the common
//! window and the CPU figures the original did not have.

use crate::exit::{EXIT_FAILURE, EXIT_INTEGRITY, usage};
use crate::flags::choice;
use anyhow::Result;
use clap::Args;
use std::io::Write;
use xferbench_lab::workload::daq::{DaqRun, DaqRunError, DaqSpec, Readout};
use xferbench_lab::workload::daq_doc::DaqDoc;
use xferbench_transports::daq::convert::Kernels;
use xferbench_transports::daq::convert::ScaleParams;
use xferbench_transports::daq::{
    Access, DEFAULT_BUS_BYTES_PER_S, DaqEnd, Link, Trigger, round_up_samples,
};

/// `xferbench daq`.
#[derive(Debug, Args)]
#[command(after_help = "\
The short flags are the original's (sis8300drv_threads) with its meanings and defaults; \
they reproduce that program and may differ from other subcommands' letters. Functions \
(-A): 0 readout only, 1 decimation+scaling, 2 decimation, 3 scaling, 4 cast to float, \
5 Q1.15 unsigned to double, 6 Q3.13 signed to double, 7 Q1.15 unsigned to float, 8 Q3.13 \
signed to float, 99 all of them, 100 write a pattern to the boards. Rows print in \
completion order; speed [MB/s] is raw input bytes x reads / (end - start), as the \
original's. The boards are a model (see docs/studies/sis8300.md): no PCIe, no interrupt \
controller.

Examples:
  xferbench daq /dev/sis8300-6 -S $((100*300000)) -N 30
  xferbench daq b0 b1 b2 b3 b4 b5 -S 30000000 -N 30 --link ku,l2,l2,l2,l2,l2
  xferbench daq b0 -S 3000000 -N 30 -A 5 --kernels improved --verify
  xferbench daq b0 -S 300000 -l 100 -i

Exit status: 0 success, 1 failure, 2 bad usage, 3 a sample did not match the model's \
pattern (--verify), 128+N stopped by signal N.")]
pub struct DaqArgs {
    /// Devices: one simulated board each (any names, at most 10).
    #[arg(value_name = "DEVICES", required = true)]
    pub devices: Vec<String>,
    /// Number of samples to read, rounded up to a multiple of 16.
    #[arg(
        short = 'S',
        long = "samples",
        value_name = "N",
        default_value_t = 0x100000
    )]
    pub samples: u64,
    /// Number of reads to perform (and passes of each conversion).
    #[arg(short = 'N', long = "reads", value_name = "N", default_value_t = 1)]
    pub nreads: u32,
    /// Decimation offset.
    #[arg(
        short = 'o',
        long = "dec-offset",
        value_name = "N",
        default_value_t = 0
    )]
    pub dec_offset: u64,
    /// Decimation factor.
    #[arg(
        short = 'f',
        long = "dec-factor",
        value_name = "N",
        default_value_t = 1
    )]
    pub dec_factor: u64,
    /// Scale offset.
    #[arg(
        short = 'O',
        long = "scale-offset",
        value_name = "X",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    pub scale_offset: f64,
    /// Scale factor.
    #[arg(
        short = 'F',
        long = "scale-factor",
        value_name = "X",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    pub scale_factor: f64,
    /// Access mode: 0 read() (DMA to a bounce buffer, then a copy to the user), 1
    /// mmap() (DMA straight into the reader's mapping).
    #[arg(short = 'B', long = "access", value_name = "0|1", default_value_t = 0)]
    pub access: u32,
    /// Which function to perform (0-8, 99 all, 100 write pattern).
    #[arg(
        short = 'A',
        long = "function",
        value_name = "FUNC",
        default_value_t = 0
    )]
    pub function: u32,
    /// Loop N times on the trigger: arm, wait for the end of the acquisition, run the
    /// function (0: run once, no trigger).
    #[arg(short = 'l', long = "loops", value_name = "N", default_value_t = 0)]
    pub loops: u32,
    /// Wait for the end of the acquisition by interrupt instead of polling.
    #[arg(short = 'i', long = "intr")]
    pub intr: bool,
    /// Link per board: l2 (621.7 MB/s), ku (1249.2 MB/s), unthrottled, or MB/s; one
    /// value for all boards or a comma list, one per device.
    #[arg(long, value_name = "LINK[,LINK...]", default_value = "l2")]
    pub link: String,
    /// The crate's shared bus limit in MB/s, `none`, or `auto` (3047 MB/s when a board
    /// is throttled, none otherwise).
    #[arg(long, value_name = "MB/S", default_value = "auto")]
    pub bus: String,
    /// Conversion kernels.
    #[arg(long, value_parser = choice::<Kernels>(), default_value_t = Kernels::Original)]
    pub kernels: Kernels,
    /// Check every sample read against the model's pattern (exit 3 on a mismatch).
    #[arg(long)]
    pub verify: bool,
    /// What ends an acquisition with -l: a rate in Hz (the crate's trigger) or
    /// `software` (at once).
    #[arg(long, value_name = "HZ|software", default_value = "14")]
    pub trigger: String,
    /// Print the parameters, rows, aggregates and CPU as one JSON document
    /// (docs/schema/daq.schema.json) instead of the tables.
    #[arg(long)]
    pub json: bool,
}

/// The spec the arguments describe, or a message naming the flag.
pub fn spec(a: &DaqArgs) -> Result<DaqSpec, String> {
    let names: Vec<&str> = a.link.split(',').map(str::trim).collect();
    let mut links = names
        .iter()
        .map(|s| {
            Link::parse(s).ok_or_else(|| {
                format!("--link {s:?}: expected l2, ku, unthrottled or a rate in MB/s")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if links.len() == 1 {
        links = vec![links[0]; a.devices.len()];
    }
    let bus = match a.bus.as_str() {
        "auto" => links
            .iter()
            .any(|l| l.rate().is_some())
            .then_some(DEFAULT_BUS_BYTES_PER_S),
        "none" => None,
        s => Some(
            s.trim_end_matches("MB/s")
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r > 0.0)
                .ok_or_else(|| format!("--bus {s:?}: expected MB/s, none or auto"))?
                * 1e6,
        ),
    };
    let trigger = match a.trigger.as_str() {
        "software" | "soft" => Trigger::Software,
        s => Trigger::Internal(
            s.trim_end_matches("Hz")
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r > 0.0 && *r <= 100_000.0)
                .ok_or_else(|| format!("--trigger {s:?}: expected a rate in Hz or software"))?,
        ),
    };
    let access = match a.access {
        0 => Access::Read,
        1 => Access::Mmap,
        n => return Err(format!("-B {n}: expected 0 (read) or 1 (mmap)")),
    };
    if a.samples == 0 || a.samples > (1 << 30) {
        return Err(format!(
            "-S {}: expected 1 to 2^30 samples (2 GiB, the largest board memory)",
            a.samples
        ));
    }
    let spec = DaqSpec {
        devices: a.devices.clone(),
        links,
        samples: round_up_samples(a.samples as usize),
        nreads: a.nreads,
        scale: ScaleParams {
            offset: a.dec_offset as usize,
            factor: a.dec_factor as usize,
            scale_offset: a.scale_offset,
            scale_factor: a.scale_factor,
        },
        access,
        function: a.function,
        loops: a.loops,
        end: if a.intr { DaqEnd::Irq } else { DaqEnd::Poll },
        trigger,
        bus,
        kernels: a.kernels,
        verify: a.verify,
        memcpy: false,
    };
    spec.check()?;
    Ok(spec)
}

/// The original's "Parameters:" block.
pub fn parameters(s: &DaqSpec) -> String {
    let raw = s.nbytes_raw();
    let float = s.samples as u64 * 4;
    let mut out = format!(
        "Parameters:\n function        {}\n access          {}\n nsamples        {}\n \
         nbytes_raw      {raw} b ({:.1} MB)\n nbytes          {float} b ({:.1} MB)\n \
         nreads          {}\n dec_offset      {}\n dec_factor      {}\n \
         scale_offset    {:.6}\n scale_factor    {:.6}\n",
        s.function,
        u32::from(s.access == Access::Mmap),
        s.samples,
        raw as f64 / 1e6,
        float as f64 / 1e6,
        s.nreads,
        s.scale.offset,
        s.scale.factor,
        s.scale.scale_offset,
        s.scale.scale_factor,
    );
    if s.loops > 0 {
        out.push_str(&format!(" loop            {}\n", s.loops));
        if s.end == DaqEnd::Irq {
            out.push_str(" daq_intr        1\n");
        }
    }
    out.push_str(&format!(" ndevices        {}\n", s.devices.len()));
    out
}

/// The model's settings, after the original's block.
fn model(s: &DaqSpec) -> String {
    let links: Vec<String> = s.links.iter().map(Link::name).collect();
    format!(
        "Model:\n link            {}\n bus             {}\n trigger         {}\n kernels         {}\n verify          {}\n",
        links.join(","),
        s.bus
            .map_or("none".to_string(), |b| format!("{:.1} MB/s", b / 1e6)),
        match s.trigger {
            Trigger::Internal(hz) => format!("{hz} Hz"),
            Trigger::Software => "software".into(),
        },
        s.kernels.name(),
        u32::from(s.verify),
    )
}

fn cols(cells: &[String]) -> String {
    cells
        .iter()
        .map(|c| format!("{c:>15}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rows and our figures.
pub fn report(run: &DaqRun) -> String {
    let mut out = String::new();
    let head = [
        "func",
        "dev",
        "size [MB]",
        "start [ms]",
        "end [ms]",
        "dur [ms]",
        "speed [MB/s]",
        "out [MS/s]",
    ];
    out.push_str(&cols(&head.map(String::from)));
    out.push('\n');
    for r in &run.rows {
        out.push_str(&cols(&[
            r.func.clone(),
            r.dev.clone(),
            format!("{:.1}", r.size_mb()),
            format!("{:.1}", r.start_ns as f64 / 1e6),
            format!("{:.1}", r.end_ns as f64 / 1e6),
            format!("{:.1}", r.dur_ms()),
            format!("{:.1}", r.speed_mb_s()),
            format!("{:.1}", r.output_samples_per_s() / 1e6),
        ]));
        out.push('\n');
    }
    out.push_str("\nAggregate over the common window:\n");
    out.push_str(&cols(
        &[
            "func",
            "boards",
            "window [ms]",
            "speed [MB/s]",
            "out [MS/s]",
        ]
        .map(String::from),
    ));
    out.push('\n');
    for a in run.aggregates() {
        out.push_str(&cols(&[
            a.func.clone(),
            a.boards.to_string(),
            format!("{:.1}", a.window_ns as f64 / 1e6),
            format!("{:.1}", a.speed_mb_s()),
            format!("{:.1}", a.output_samples_per_s() / 1e6),
        ]));
        out.push('\n');
    }
    let c = &run.cpu;
    let top = &c.top_percent;
    out.push_str(&format!(
        "\nCPU (100 % = one core):\n user            {:.3} s\n sys             {:.3} s\n \
         process         {:.1} % over {:.3} s\n model engines   {:.3} s (the DMA engines; not host CPU)\n \
         sample check    {:.3} s\n host            {:.1} % (process - engines - check)\n \
         top (0.5 s)     {}\n",
        c.process.user_s,
        c.process.sys_s,
        c.process.cpus_utilised * 100.0,
        c.process.window_s,
        c.engines_s,
        c.verify_s,
        c.host_percent,
        if top.is_empty() {
            "no sample (the run was shorter than 0.5 s)".to_string()
        } else {
            format!(
                "mean {:.1} %, max {:.1} %, {} samples",
                c.top_mean(),
                top.iter().cloned().fold(0.0, f64::max),
                top.len()
            )
        }
    ));
    let pct = |x: f64| x / c.process.window_s.max(1e-9) * 100.0;
    out.push_str(&format!(
        " readers: work  {:.1} % (readout copies and conversions)\n",
        pct(c.work_s)
    ));
    if run.acquisitions > 0 {
        out.push_str(&format!(
            " readers: wait  {:.1} % (waiting for the end of acquisitions)\n",
            pct(c.wait_s)
        ));
        out.push_str(&format!(
            " acquisitions    {} ({} status reads)\n",
            run.acquisitions, run.status_reads
        ));
    }
    if let Some(i) = run.integrity {
        out.push_str(&format!(
            "\nVerify: {} samples checked, {} mismatches\n",
            i.checked, i.corrupt
        ));
    }
    out
}

/// Runs `daq`.
pub fn run(a: &DaqArgs) -> Result<u8> {
    let spec = match spec(a) {
        Ok(s) => s,
        Err(m) => return Ok(usage("daq", m)),
    };
    let stop = crate::stop::stop_flag()?;
    let mut stdout = crate::out::stdout();
    if !a.json {
        writeln!(stdout, "{}{}", parameters(&spec), model(&spec))?;
        stdout.flush()?;
    }
    let mut readout = match Readout::new(spec) {
        Ok(r) => r,
        Err(DaqRunError::Config(m)) => return Ok(usage("daq", m)),
        Err(e) => {
            eprintln!("error: digitizer model: {e}");
            return Ok(EXIT_FAILURE);
        }
    };
    let run = match readout.run(&stop) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_FAILURE);
        }
    };
    if a.json {
        let doc = DaqDoc::new(readout.spec(), &run);
        writeln!(stdout, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        write!(stdout, "{}", report(&run))?;
    }
    if run.interrupted {
        return Ok(crate::stop::interrupted_status());
    }
    if run.integrity.is_some_and(|i| i.corrupt > 0) {
        eprintln!("error: --verify: samples did not match the model's pattern");
        return Ok(EXIT_INTEGRITY);
    }
    Ok(0)
}
