//! Rendering of each study's results into its folder: one writer per study
//! (`<study>/writer.rs`), all with the signature [`Writer`], all reading the one
//! result document ([`ResultDoc`] with its `study` section), never live state.
//!
//! [`write_folder`](crate::write_folder) writes what every study folder has
//! (`results.json`), then the study's own tables, plots and `summary.md`. The helpers here keep the studies'
//! tables alike: a figure is shown as its median with the order-statistic interval
//! and the interval's real level, and a speed-up as the median of run-by-run ratios
//! ([`xferbench_probes::stats::paired_ratio`]).

use anyhow::Result;
use std::fmt::Write as _;
use xferbench_lab::result::{Outcome, PointResult, ResultDoc};
use xferbench_probes::stats::{Estimate, paired_ratio};
use xferbench_report::study::StudyFolder;

pub use xferbench_report::format::{level, run_values, with_interval};

/// A study's writer: its tables, plots and summary from the finished document.
pub type Writer = fn(&StudyFolder, &ResultDoc) -> Result<()>;

/// The points whose parameters include every `(name, value)` of `filter`.
pub fn select<'a>(
    doc: &'a ResultDoc,
    filter: &'a [(&'a str, &'a str)],
) -> impl Iterator<Item = &'a PointResult> + 'a {
    doc.points.iter().filter(move |p| {
        filter
            .iter()
            .all(|(k, v)| p.params.get(*k).map(String::as_str) == Some(*v))
    })
}

/// A parameter of a point, or `-`.
pub fn param<'a>(p: &'a PointResult, name: &str) -> &'a str {
    p.params.get(name).map_or("-", String::as_str)
}

/// The median of a figure of a point.
pub fn median(p: &PointResult, figure: &str) -> Option<f64> {
    p.summary.get(figure).map(|e| e.median)
}

/// A figure of a point as [`with_interval`], or `-`.
pub fn figure_cell(p: &PointResult, figure: &str, show: impl Fn(f64) -> String) -> String {
    p.summary
        .get(figure)
        .map_or_else(|| "-".into(), |e| with_interval(e, show))
}

/// How much larger `figure` is in `better` than in `base`, run by run.
pub fn speedup(better: &PointResult, base: &PointResult, figure: &str) -> Option<Estimate> {
    paired_ratio(&run_values(better, figure), &run_values(base, figure))
}

/// A speed-up in words: `54.2× (interval 50.1–58.0×, 75 % level, 3 paired runs)`.
pub fn speedup_text(e: &Estimate) -> String {
    if e.n < 2 {
        format!("{:.1}× (one run)", e.median)
    } else {
        format!(
            "{:.1}× (interval {:.1}–{:.1}×, {:.0} % level, {} paired runs)",
            e.median,
            e.ci_low,
            e.ci_high,
            e.ci_level * 100.0,
            e.n
        )
    }
}

/// The statistic of most studies' tables: the median with its interval.
pub const MEDIAN: &str = "the median of {runs} measured run(s) per point after {warmup} warm-up run(s), {order}; \
     intervals are order-statistic intervals of the median at the level they state";

/// The summary's opening: how the study ended, where it ran and how it was measured;
/// its figures are medians ([`MEDIAN`]).
pub fn summary_header(doc: &ResultDoc, title: &str) -> String {
    summary_header_with(doc, title, MEDIAN)
}

/// [`summary_header`] for a study whose tables show another statistic: `statistic`
/// says which, with `{runs}`, `{warmup}` and `{order}` filled in from the context.
pub fn summary_header_with(doc: &ResultDoc, title: &str, statistic: &str) -> String {
    let mut s = format!("# {title}\n\n");
    let c = &doc.context;
    let _ = writeln!(
        s,
        "Measured on {} ({} CPUs, {}, kernel {}) on {}.",
        c.cpu_model, c.cores, c.os, c.kernel, c.start_time
    );
    let st = &c.settings;
    let order = if st.interleave {
        "interleaved round-robin across points, so that they share the machine's drift"
    } else {
        "point by point"
    };
    let _ = writeln!(
        s,
        "Every figure is {}.",
        statistic
            .replace("{runs}", &st.runs.to_string())
            .replace("{warmup}", &st.warmup.to_string())
            .replace("{order}", order)
    );
    if let Some(b) = xferbench_report::machine::build_line(c) {
        let _ = writeln!(s, "Build: {b}.");
    }
    if let Some(l) = &c.load {
        // How many points were contended, in a sentence of its own.
        let _ = writeln!(
            s,
            "Machine load: {}.",
            xferbench_report::machine::load_line(c).unwrap_or_default()
        );
        if l.contended_points > 0 {
            let _ = writeln!(
                s,
                "\n**{} of {} points were contended**: processes outside the study used more than \
                 {:.0} % of a CPU (or steal exceeded {:.0} %) while they ran; their figures describe \
                 a shared machine.",
                l.contended_points,
                l.points,
                l.others_cpus_threshold * 100.0,
                l.steal_threshold * 100.0
            );
        }
    }
    if let Some(l) = &c.limits {
        let _ = writeln!(
            s,
            "This machine's limits at the start (`xferbench limits`, quick set): {}.",
            xferbench_report::limits::brief(&l.start)
        );
        if let Some(d) = doc.machine_drift(st.interleave) {
            let _ = writeln!(
                s,
                "\n**The machine changed speed during the study**: {}{}.",
                d.movement(),
                d.consequence()
            );
        }
    }
    match &doc.outcome {
        Outcome::Complete => {}
        Outcome::Interrupted => {
            let _ = writeln!(
                s,
                "\n**Interrupted**: {} of {} points finished; the findings below cover those.",
                doc.points.len(),
                doc.study.as_ref().map_or(0, |i| i.planned_points)
            );
        }
        Outcome::Failed { error } => {
            let _ = writeln!(
                s,
                "\n**Failed**: {error}. {} point(s) finished before it; the findings below cover those.",
                doc.points.len()
            );
        }
    }
    for w in &doc.warnings {
        let _ = writeln!(s, "\n> warning: {w}");
    }
    s.push('\n');
    s
}
