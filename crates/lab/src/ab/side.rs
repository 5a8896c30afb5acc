//! One side of a comparison as the diagnosis reads it: a command's runs, their
//! means and spread, its counters and its callgrind passes; and the thresholds the
//! diagnosis holds them to.

use super::point::COMMAND;
use crate::result::{PointResult, RunRecord};
use crate::rig::command::{self, figures};
use std::collections::BTreeMap;
use xferbench_probes::counters::name;
use xferbench_probes::stats::mean_sd;

/// Significance level of the time comparison. 1 % rather than 5 %: `ab` is run
/// often, and a false "slower" costs more than a missed small change.
pub const ALPHA: f64 = 0.01;
/// Instruction counts closer than this (relative) are "the same".
pub const SAME_INSTRUCTIONS: f64 = 1e-4;
/// A coefficient of variation above this makes a command "unstable".
pub const UNSTABLE_CV: f64 = 0.05;
/// Fewer CPUs utilised than this: not CPU-bound.
pub const CPU_BOUND: f64 = 0.9;

/// One run of one command, as the diagnosis reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct AbRun {
    /// Wall time, seconds.
    pub wall_s: f64,
    /// User + system CPU time of the command and its children, seconds.
    pub cpu_s: f64,
    /// User CPU time, seconds.
    pub user_s: f64,
    /// System CPU time, seconds.
    pub sys_s: f64,
    /// Counters by name (see [`xferbench_probes::counters::name`]).
    pub counters: BTreeMap<String, f64>,
}

impl AbRun {
    /// The run of a command's run record ([`crate::rig::command`]).
    pub fn of(record: &RunRecord) -> AbRun {
        let f = |k: &str| record.figures.get(k).copied().unwrap_or(0.0);
        AbRun {
            wall_s: f(figures::WALL_S),
            cpu_s: f(figures::CPU_S),
            user_s: f(figures::USER_S),
            sys_s: f(figures::SYS_S),
            counters: record
                .counters
                .as_ref()
                .and_then(|c| c.processes.iter().find(|p| p.role == command::ROLE))
                .map(|p| p.values.clone())
                .unwrap_or_default(),
        }
    }
}

/// Everything measured of one command: its point's runs and its counting passes.
#[derive(Debug, Clone, PartialEq)]
pub struct AbSide {
    /// The command.
    pub command: String,
    /// Every measured run.
    pub runs: Vec<AbRun>,
    /// Mean wall time, seconds.
    pub mean_s: f64,
    /// Standard deviation of the wall time, seconds.
    pub sd_s: f64,
    /// Coefficient of variation of the wall time.
    pub cv: f64,
    /// Mean CPUs utilised, `(user + sys) / wall`.
    pub cpus_utilised: f64,
    /// Mean user CPU time per run, seconds.
    pub user_s: f64,
    /// Mean system CPU time per run, seconds.
    pub sys_s: f64,
    /// Mean of every counter over the runs.
    pub counters: BTreeMap<String, f64>,
    /// Callgrind totals (instructions and simulated cache misses), the mean over its
    /// passes.
    pub callgrind: Option<BTreeMap<String, f64>>,
    /// Every independent instruction count: one per timed run with a PMU, one per
    /// callgrind pass without.
    pub instruction_runs: Vec<f64>,
}

impl AbSide {
    /// Instructions: from the PMU if counted, else from callgrind; with the source.
    pub fn instructions(&self) -> Option<(f64, &'static str)> {
        if let Some(i) = self.counters.get(name::INSTRUCTIONS) {
            return Some((*i, "PMU"));
        }
        self.callgrind
            .as_ref()
            .and_then(|c| c.get(name::IR))
            .map(|i| (*i, "callgrind"))
    }

    /// The side of a point of `ab`'s document, with the callgrind passes counted of
    /// it.
    pub fn of_point(point: &PointResult, passes: &[BTreeMap<String, f64>]) -> AbSide {
        let command = point
            .params
            .get(COMMAND.name())
            .cloned()
            .unwrap_or_default();
        side(
            &command,
            point.runs.iter().map(AbRun::of).collect(),
            passes.to_vec(),
        )
    }
}

/// The side of `command` from its runs and callgrind passes.
pub(crate) fn side(command: &str, runs: Vec<AbRun>, passes: Vec<BTreeMap<String, f64>>) -> AbSide {
    let walls: Vec<f64> = runs.iter().map(|r| r.wall_s).collect();
    let (mean_s, sd_s) = mean_sd(&walls).unwrap_or((walls.first().copied().unwrap_or(0.0), 0.0));
    let cpus: Vec<f64> = runs
        .iter()
        .map(|r| {
            if r.wall_s > 0.0 {
                r.cpu_s / r.wall_s
            } else {
                0.0
            }
        })
        .collect();
    let mut counters = BTreeMap::new();
    for n in runs.iter().flat_map(|r| r.counters.keys()) {
        if counters.contains_key(n) {
            continue;
        }
        let vals: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.counters.get(n))
            .copied()
            .collect();
        counters.insert(n.clone(), vals.iter().sum::<f64>() / vals.len() as f64);
    }
    let mean = |f: fn(&AbRun) -> f64| runs.iter().map(f).sum::<f64>() / runs.len().max(1) as f64;
    // Counted per run by the PMU, else once per callgrind pass.
    let mut instruction_runs: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.counters.get(name::INSTRUCTIONS).copied())
        .collect();
    if instruction_runs.is_empty() {
        instruction_runs = passes
            .iter()
            .filter_map(|p| p.get(name::IR).copied())
            .collect();
    }
    let callgrind = (!passes.is_empty()).then(|| {
        let mut mean = BTreeMap::new();
        for k in passes.iter().flat_map(|p| p.keys()) {
            if !mean.contains_key(k) {
                let v: Vec<f64> = passes.iter().filter_map(|p| p.get(k).copied()).collect();
                mean.insert(k.clone(), v.iter().sum::<f64>() / v.len() as f64);
            }
        }
        mean
    });
    AbSide {
        command: command.into(),
        instruction_runs,
        user_s: mean(|r| r.user_s),
        sys_s: mean(|r| r.sys_s),
        mean_s,
        sd_s,
        cv: if mean_s > 0.0 { sd_s / mean_s } else { 0.0 },
        cpus_utilised: cpus.iter().sum::<f64>() / cpus.len().max(1) as f64,
        counters,
        callgrind,
        runs,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A side of `walls` seconds, each run counting `instr` instructions.
    pub(crate) fn fake(command: &str, walls: &[f64], instr: Option<f64>) -> AbSide {
        let runs = walls
            .iter()
            .map(|w| AbRun {
                wall_s: *w,
                cpu_s: *w,
                user_s: *w,
                sys_s: 0.0,
                counters: instr
                    .map(|i| BTreeMap::from([(name::INSTRUCTIONS.to_string(), i)]))
                    .unwrap_or_default(),
            })
            .collect();
        side(command, runs, Vec::new())
    }
}
