//! A progress bar with ETA on stderr, counting runs (warm-up included) over the
//! whole sweep. Hidden when stderr is not a terminal or with `--quiet`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use xferbench_lab::measure::{PlannedPoint, RunProgress};
use xferbench_lab::observer::Observer;
use xferbench_lab::result::{Context, PointResult, ResultDoc};

/// The progress bar observer.
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    runs_per_point: u64,
}

impl Progress {
    /// A bar over `runs_per_point` runs per point, drawn only if `visible`.
    pub fn new(visible: bool, runs_per_point: u64) -> Self {
        let bar = ProgressBar::with_draw_target(
            Some(0),
            if visible {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            },
        );
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs, ETA {eta}  {msg}",
            )
            .expect("valid template"),
        );
        Self {
            bar,
            runs_per_point,
        }
    }
}

impl Observer for Progress {
    fn sweep_started(&mut self, _: &Context, points: &[PlannedPoint]) -> std::io::Result<()> {
        self.bar
            .set_length(points.len() as u64 * self.runs_per_point);
        Ok(())
    }

    fn point_started(&mut self, index: usize, point: &PlannedPoint) -> std::io::Result<()> {
        self.bar
            .set_message(format!("point {}: {}", index + 1, point.describe()));
        Ok(())
    }

    fn run_finished(&mut self, _: usize, _: RunProgress) {
        self.bar.inc(1);
    }

    fn point_finished(&mut self, _: &PointResult) -> std::io::Result<()> {
        Ok(())
    }

    fn sweep_finished(&mut self, _: &ResultDoc) -> std::io::Result<()> {
        self.bar.finish_and_clear();
        Ok(())
    }
}

/// One line on stderr per finished point: `[3/52] group=threads …: throughput
/// 1.20 GB/s [1.10 GB/s–1.30 GB/s]`, for long plans such as studies.
#[derive(Debug, Default)]
pub struct PointLines {
    total: usize,
    done: usize,
}

impl PointLines {
    /// A printer; the plan's size is learnt when it starts.
    pub fn new() -> PointLines {
        PointLines { total: 0, done: 0 }
    }
}

/// A figure's value in its unit, chosen by its name.
pub fn figure_value(figure: &str, v: f64) -> String {
    if figure.ends_with("_ns") {
        crate::format::nanos(v)
    } else if figure.ends_with("bytes_per_s") {
        crate::format::rate_bytes(v)
    } else if figure.ends_with("_per_s") {
        crate::format::rate_count(v)
    } else if figure.ends_with("_s") {
        crate::format::nanos(v * 1e9)
    } else {
        crate::format::count(v)
    }
}

impl Observer for PointLines {
    fn sweep_started(&mut self, _: &Context, points: &[PlannedPoint]) -> std::io::Result<()> {
        self.total = points.len();
        Ok(())
    }

    fn point_finished(&mut self, p: &PointResult) -> std::io::Result<()> {
        self.done += 1;
        let primary = p.primary();
        let value = p.summary.get(&primary.figure).map_or_else(
            || "-".to_string(),
            |e| crate::format::with_interval(e, |v| figure_value(&primary.figure, v)),
        );
        let width = self.total.to_string().len();
        eprintln!(
            "[{:>width$}/{}] {}: {} {value}",
            self.done,
            self.total,
            xferbench_lab::params::describe(&p.params),
            primary.figure,
        );
        Ok(())
    }
}
