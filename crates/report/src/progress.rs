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
