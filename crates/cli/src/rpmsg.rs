//! `xferbench rpmsg`: one point of the RPMsg workload (`rpmsg-xmit-p`'s semantics), run
//! `--runs` times against a remote process, summarised as medians.

use crate::cli::{BuffersArg, NotifyArg, RpmsgArgs};
use crate::run::{EXIT_INTEGRITY, EXIT_INTERRUPTED, EXIT_USAGE};
use anyhow::{Context, Result};
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use std::io::Write;
use xferbench_lab::rpmsg::{RemoteKind, RpmsgError, RpmsgPoint, RunFigures, Session, link_config};
use xferbench_lab::stats::Estimate;
use xferbench_report::format;
use xferbench_transports::param::parse_byte_size;
use xferbench_transports::rpmsg::{Buffers, Notify, Service};

fn usage(msg: impl std::fmt::Display) -> Result<u8> {
    eprintln!("error: {msg}");
    eprintln!("\nFor more information, try 'xferbench rpmsg --help'.");
    Ok(EXIT_USAGE)
}

/// The point the arguments describe, or a usage error naming the flag.
fn point(a: &RpmsgArgs) -> Result<RpmsgPoint, String> {
    let packet = parse_byte_size(&a.size)
        .ok_or_else(|| format!("--size {:?}: expected a byte count such as 496", a.size))?;
    let transfer = parse_byte_size(&a.transfer).ok_or_else(|| {
        format!(
            "--transfer {:?}: expected a byte count such as 1MB",
            a.transfer
        )
    })?;
    if !(1..=1024).contains(&a.channels) {
        return Err(format!("--channels {}: must be 1 to 1024", a.channels));
    }
    if a.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    Ok(RpmsgPoint {
        channels: a.channels,
        packet,
        transfer: transfer as u64,
        notify: match a.notify {
            NotifyArg::Kick => Notify::Kick,
            NotifyArg::EventIdx => Notify::EventIdx,
            NotifyArg::Poll => Notify::Poll,
        },
        buffers: match a.buffers {
            BuffersArg::Copy => Buffers::Copy,
            BuffersArg::ZeroCopy => Buffers::ZeroCopy,
        },
        suffix: a.suffix,
        verify: a.verify,
    })
}

/// Runs `xferbench rpmsg` and returns the exit status.
pub fn run(a: &RpmsgArgs) -> Result<u8> {
    let p = match point(a) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let remote = RemoteKind::Process(crate::launcher()?);
    let stop = crate::run::stop_flag()?;
    let mut session = Session::start(&link_config(&p, Service::Echo), &remote)
        .context("cannot start the RPMsg link")?;
    let mut runs: Vec<RunFigures> = Vec::with_capacity(a.runs);
    let mut out = std::io::stdout().lock();
    let mut failure = None;
    for i in 0..=a.runs {
        match session.run(&p, &stop) {
            // Run 0 warms up: page faults, first wake-ups.
            Ok(_) if i == 0 => {}
            Ok(r) => {
                if a.json {
                    serde_json::to_writer(&mut out, &r)?;
                    writeln!(out)?;
                }
                runs.push(r);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    match failure {
        None => session.finish().context("stopping the RPMsg remote")?,
        Some(RpmsgError::Config(msg)) => return usage(msg),
        Some(RpmsgError::Interrupted) => {
            drop(session);
            if !a.json && !runs.is_empty() {
                writeln!(out, "{}", table(&p, &runs))?;
            }
            return Ok(EXIT_INTERRUPTED);
        }
        Some(e) => {
            drop(session);
            return Err(e).context(format!("{} of {} runs finished", runs.len(), a.runs));
        }
    }
    if !a.json {
        writeln!(out, "{}", table(&p, &runs))?;
    }
    let dirty = runs
        .iter()
        .filter_map(|r| r.integrity.as_ref())
        .any(|i| !i.is_clean());
    let faults = runs
        .iter()
        .any(|r| r.counters.host_faults + r.counters.remote_faults + r.counters.dropped > 0);
    if dirty || faults {
        eprintln!("error: data verification failed or messages were rejected; see the table");
        return Ok(EXIT_INTEGRITY);
    }
    Ok(0)
}

/// A table row: its name, the figure of one run, and how to show the median.
type Row = (&'static str, fn(&RunFigures) -> f64, fn(f64) -> String);

/// Medians over the runs, with their spread.
fn table(p: &RpmsgPoint, runs: &[RunFigures]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        format!(
            "{} ch × {} B × {} per channel ({}, {})",
            p.channels,
            p.packet,
            format!("{} B", p.transfer),
            p.notify.name(),
            p.buffers.name()
        ),
        "median".into(),
        "spread".into(),
    ]);
    let rows: [Row; 9] = [
        ("round trips/s", |r| r.round_trips_per_s, format::rate_count),
        (
            "aggregate (common window)",
            |r| r.aggregate_bytes_per_s,
            format::rate_bytes,
        ),
        (
            "sum of per-thread rates (original)",
            |r| r.sum_of_rates_bytes_per_s,
            format::rate_bytes,
        ),
        ("round trip p50", |r| r.latency.p50_ns as f64, format::nanos),
        ("round trip p99", |r| r.latency.p99_ns as f64, format::nanos),
        ("Jain fairness", |r| r.jain, |v| format!("{v:.3}")),
        ("host CPUs", |r| r.host_cpus, |v| format!("{v:.2}")),
        (
            "remote CPUs",
            |r| r.remote_cpus.unwrap_or(f64::NAN),
            |v| format!("{v:.2}"),
        ),
        (
            "kicks per round trip (to remote + to host)",
            |r| {
                let trips: u64 = r.channels.iter().map(|c| c.round_trips).sum();
                (r.counters.kicks_to_remote + r.counters.kicks_to_host) as f64 / trips.max(1) as f64
            },
            |v| format!("{v:.2}"),
        ),
    ];
    for (name, get, show) in rows {
        let e = Estimate::from_values(runs.iter().map(get).filter(|v| v.is_finite()));
        let (median, spread) = match e {
            Some(e) => (show(e.median), format::spread(e.rcv)),
            None => ("—".into(), String::new()),
        };
        t.add_row(vec![
            Cell::new(name),
            Cell::new(median).set_alignment(CellAlignment::Right),
            Cell::new(spread).set_alignment(CellAlignment::Right),
        ]);
    }
    let faults: u64 = runs
        .iter()
        .map(|r| r.counters.host_faults + r.counters.remote_faults + r.counters.dropped)
        .sum();
    t.add_row(vec![
        Cell::new("rejected or dropped messages (all runs)"),
        Cell::new(faults).set_alignment(CellAlignment::Right),
        Cell::new(""),
    ]);
    if p.verify {
        let mut all = xferbench_lab::verify::Integrity::default();
        for i in runs.iter().filter_map(|r| r.integrity.as_ref()) {
            all.add(i);
        }
        t.add_row(vec![
            Cell::new("verify: lost / dup / reordered / corrupt"),
            Cell::new(format!(
                "{} / {} / {} / {}",
                all.lost, all.duplicated, all.reordered, all.corrupt
            ))
            .set_alignment(CellAlignment::Right),
            Cell::new(""),
        ]);
    }
    t
}
