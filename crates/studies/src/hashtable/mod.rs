//! The hash-table study: the original's seven cases (workers 1/16/32 × 0/1/16
//! background visitors) for each server architecture, the timed client run as
//! `hyperfine -N` runs it, the same mix against a Redis server on a Unix socket, and
//! the profile's shape (2 workers, 4 visitors).
//!
//! The plan only: the workload is [`xferbench_lab::workload::kv`], the rig
//! [`xferbench_lab::rig::kv`]. Points run interleaved, round-robin across
//! architectures and cases (3 visits, 2 with `--quick`), so that every architecture
//! shares the machine's drift; each visit's run is a whole hyperfine invocation (at
//! least 10 timed runs and 3 s), so its record carries the per-run statistics
//! hyperfine prints, followed by a steady window ([`Scale::steady_ms`]) whose
//! aggregate request rate of all clients is the study's throughput figure.

pub mod bench;
pub mod profile;
pub mod writer;

use crate::params::GROUP;
use crate::study::{Study, StudyEnv, StudyPlan};
use bench::KvBench;
use std::collections::BTreeMap;
use std::time::Duration;
use xferbench_lab::measure::{LoopOptions, PlannedPoint};
use xferbench_lab::rig::FigureRules;
use xferbench_lab::rig::kv::{
    KvPoint, SERVER, ServerKind, Target, VISITORS, WORKERS, figures, redis_available,
};
use xferbench_lab::workload::kv::{INNER, OUTER};
use xferbench_params::{Choice, ParamDef, ParamError, ParamMap, PointParams, Value};
use xferbench_probes::counters::CounterMode;
use xferbench_transports::kv::Arch;

/// One of the original benchmark's cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// The CSV name of `benchmark.sh`.
    pub name: &'static str,
    /// Server workers (`-n`).
    pub workers: u32,
    /// Background clients.
    pub visitors: usize,
}

/// The seven cases of `benchmark.sh`, in its order.
pub const CASES: [Case; 7] = [
    Case {
        name: "AloneSingleThread",
        workers: 1,
        visitors: 0,
    },
    Case {
        name: "TwoSingleThread",
        workers: 1,
        visitors: 1,
    },
    Case {
        name: "AloneMultiThread",
        workers: 16,
        visitors: 0,
    },
    Case {
        name: "TwoMultiThread",
        workers: 16,
        visitors: 1,
    },
    Case {
        name: "ManyClientsST",
        workers: 1,
        visitors: 16,
    },
    Case {
        name: "ManyClientsMT",
        workers: 16,
        visitors: 16,
    },
    Case {
        name: "SCManyThreads",
        workers: 32,
        visitors: 0,
    },
];

/// The visitor counts of the Redis rows.
pub const REDIS_VISITORS: [usize; 3] = [0, 1, 16];

/// The case of the profile's shape (2 workers, 4 visitors).
pub const PROFILE_CASE: &str = "Profile2W4V";

/// The case of the Redis row with `visitors` background clients (`Redis16V`).
pub fn redis_case(visitors: usize) -> String {
    format!("Redis{visitors}V")
}

/// Every case a point of the study records: the seven of `benchmark.sh`, the
/// profile's, and the Redis rows' ([`redis_case`] of [`REDIS_VISITORS`]).
const CASE_CHOICES: &[Choice] = &[
    Choice::new(CASES[0].name, "1 worker, the timed client alone"),
    Choice::new(CASES[1].name, "1 worker, 1 visitor"),
    Choice::new(CASES[2].name, "16 workers, the timed client alone"),
    Choice::new(CASES[3].name, "16 workers, 1 visitor"),
    Choice::new(CASES[4].name, "1 worker, 16 visitors"),
    Choice::new(CASES[5].name, "16 workers, 16 visitors"),
    Choice::new(CASES[6].name, "32 workers, the timed client alone"),
    Choice::new(PROFILE_CASE, "the profile's shape: 2 workers, 4 visitors"),
    Choice::new("Redis0V", "redis, the timed client alone"),
    Choice::new("Redis1V", "redis, 1 visitor"),
    Choice::new("Redis16V", "redis, 16 visitors"),
];

/// `case`: the case of `benchmark.sh` a hash-table point measures (or the profile's
/// shape, or a Redis row).
pub const CASE: ParamDef = ParamDef::choice(
    "case",
    CASE_CHOICES,
    "AloneSingleThread",
    "the case of the original's benchmark.sh a point measures",
);

/// The parameters a hash-table study point records: its group and case, the server
/// (`arch`) and its workers, the visitors and the timed client's mix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashtableParams {
    /// The group of the study (`cases`, `profile`, `redis`).
    pub group: String,
    /// The case (a name of [`CASE`]).
    pub case: String,
    /// The server.
    pub server: ServerKind,
    /// Its worker threads.
    pub workers: u32,
    /// Background clients.
    pub visitors: usize,
    /// The timed client's outer iterations.
    pub outer: u64,
    /// Keys per iteration.
    pub inner: u32,
}

impl HashtableParams {
    /// The parameters of `p`, a point of `group` and `case` on `target`.
    pub fn of(group: &str, case: &str, target: &Target, p: &KvPoint) -> HashtableParams {
        HashtableParams {
            group: group.to_string(),
            case: case.to_string(),
            server: target.kind(),
            workers: target.workers(),
            visitors: p.visitors,
            outer: p.outer,
            inner: p.inner,
        }
    }
}

impl PointParams for HashtableParams {
    fn definitions() -> Vec<ParamDef> {
        vec![GROUP, CASE, SERVER, WORKERS, VISITORS, OUTER, INNER]
    }

    fn write(&self, map: &mut ParamMap) {
        let int = |n: i64| Value::Integer(n);
        map.put_text(&GROUP, &self.group);
        map.put(&CASE, &Value::Choice(self.case.clone().into()));
        map.put_text(&SERVER, self.server.name());
        map.put(&WORKERS, &int(i64::from(self.workers)));
        map.put(
            &VISITORS,
            &int(i64::try_from(self.visitors).unwrap_or(i64::MAX)),
        );
        map.put(&OUTER, &int(i64::try_from(self.outer).unwrap_or(i64::MAX)));
        map.put(&INNER, &int(i64::from(self.inner)));
    }

    fn read(map: &ParamMap) -> Result<Self, ParamError> {
        Ok(HashtableParams {
            group: map.text(&GROUP).unwrap_or_default().to_string(),
            case: CASE.machine(&map.value(&CASE)?),
            server: map.choice(&SERVER)?,
            workers: u32::try_from(map.integer(&WORKERS)?).unwrap_or(u32::MAX),
            visitors: usize::try_from(map.integer(&VISITORS)?).unwrap_or_default(),
            outer: u64::try_from(map.integer(&OUTER)?).unwrap_or_default(),
            inner: u32::try_from(map.integer(&INNER)?).unwrap_or(u32::MAX),
        })
    }
}

/// The study's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    /// The timed client's outer iterations (100: 3,000 requests).
    pub outer: u64,
    /// Keys per iteration.
    pub inner: u32,
    /// Warm-up runs (the 16-visitor cases use `warmup_many`).
    pub warmup: usize,
    /// Warm-up runs of the 16-visitor cases.
    pub warmup_many: usize,
    /// At least this many timed runs…
    pub min_runs: usize,
    /// …and at least this long, milliseconds.
    pub min_time_ms: u64,
    /// At most this many timed runs.
    pub max_runs: usize,
    /// A point's time budget, milliseconds (see [`KvPoint::budget_ms`]).
    pub budget_ms: u64,
    /// The profile points' timed client: outer iterations (the seed recorded
    /// `client 1000 10`)…
    pub profile_outer: u64,
    /// …and at least this long, milliseconds, so that `perf record` (which needs
    /// a moment to attach) samples the server long enough.
    pub profile_min_time_ms: u64,
    /// The steady window of every run, milliseconds (see [`KvPoint::steady_ms`]).
    pub steady_ms: u64,
    /// Measured runs (visits) per point, interleaved.
    pub runs: usize,
}

impl Scale {
    /// The original's: `client 100 10`, warm-up 40 (2), ≥ 10 runs and ≥ 3 s; a point
    /// slower than 40 s stops at 3 runs (preopt's 16-visitor cases on 2 CPUs). The
    /// profile points run the seed's recorded client, `client 1000 10`, after 2
    /// warm-up runs. Each run ends with a 1 s steady window; 3 visits per point.
    pub const FULL: Scale = Scale {
        outer: 100,
        inner: 10,
        warmup: 40,
        warmup_many: 2,
        min_runs: 10,
        min_time_ms: 3000,
        max_runs: 100_000,
        budget_ms: 40_000,
        profile_outer: 1000,
        profile_min_time_ms: 3000,
        steady_ms: 1000,
        runs: 3,
    };
    /// `--quick`: `client 10 10`, warm-up 2 (1), ≥ 3 runs and ≥ 0.2 s (1 s for the
    /// profile points), 2 s budget; 0.3 s steady windows, 2 visits per point.
    pub const QUICK: Scale = Scale {
        outer: 10,
        inner: 10,
        warmup: 2,
        warmup_many: 1,
        min_runs: 3,
        min_time_ms: 200,
        max_runs: 200,
        budget_ms: 2_000,
        profile_outer: 10,
        profile_min_time_ms: 1000,
        steady_ms: 300,
        runs: 2,
    };
}

/// The timed client's `--seed`.
pub const SEED: u32 = 42;
/// The original's table size (`-s 10000`).
pub const BUCKETS: usize = 10_000;

/// Time per run, lower is better.
pub const RULES: FigureRules = FigureRules {
    primary: figures::TIME_MEAN_S,
    higher_is_better: false,
};

fn planned(group: &str, case: &str, target: &Target, p: &KvPoint) -> PlannedPoint {
    let params = HashtableParams::of(group, case, target, p).to_map();
    PlannedPoint {
        verify: true,
        ..PlannedPoint::from_params(params.into_params(), RULES)
    }
}

fn point(scale: &Scale, target: Target, visitors: usize) -> KvPoint {
    KvPoint {
        target,
        visitors,
        outer: scale.outer,
        inner: scale.inner,
        warmup: if visitors >= 16 {
            scale.warmup_many
        } else {
            scale.warmup
        },
        min_runs: scale.min_runs,
        min_time_ms: scale.min_time_ms,
        max_runs: scale.max_runs,
        budget_ms: scale.budget_ms,
        seed: SEED,
        steady_ms: scale.steady_ms,
        pin: false,
        run_limit_ms: 0,
    }
}

/// The study's points: the seven cases per architecture, the profile's shape per
/// architecture, and (when `redis` is true) the Redis rows.
pub fn study_points(scale: &Scale, redis: bool) -> Vec<(PlannedPoint, KvPoint)> {
    let mut v = Vec::new();
    for arch in Arch::ALL {
        for c in CASES {
            let t = Target::Kv {
                arch,
                workers: c.workers,
                buckets: BUCKETS,
            };
            let p = point(scale, t.clone(), c.visitors);
            v.push((planned("cases", c.name, &t, &p), p));
        }
    }
    for arch in Arch::ALL {
        let t = Target::Kv {
            arch,
            workers: 2,
            buckets: BUCKETS,
        };
        let mut p = point(scale, t.clone(), 4);
        p.outer = scale.profile_outer;
        p.min_time_ms = p.min_time_ms.max(scale.profile_min_time_ms);
        p.warmup = p.warmup.min(2);
        v.push((planned("profile", PROFILE_CASE, &t, &p), p));
    }
    if redis {
        for visitors in REDIS_VISITORS {
            let p = point(scale, Target::Redis, visitors);
            let case = redis_case(visitors);
            v.push((planned("redis", &case, &Target::Redis, &p), p));
        }
    }
    v
}

/// `scale.runs` visits per point, interleaved round-robin; each visit's one run is a
/// hyperfine invocation and a steady window (the visit's own warm-up is the timed
/// client's, [`KvPoint::warmup`]).
pub fn loop_options(scale: &Scale) -> LoopOptions {
    LoopOptions {
        judge: &xferbench_lab::judge::LAB,
        runs: scale.runs,
        warmup: 0,
        interleave: true,
        hang_timeout: Duration::from_secs(300),
        counters: CounterMode::Off,
        profile: None,
        watch: None,
        until_stopped: false,
    }
}

/// The study: `xferbench study hashtable`.
#[derive(Debug, Clone, Copy)]
pub struct Hashtable;

/// The participants a profile can record: this process and the server.
pub const PARTICIPANTS: [&str; 2] = ["main", "server"];

impl Study for Hashtable {
    fn name(&self) -> &'static str {
        "hashtable"
    }

    fn description(&self) -> &'static str {
        "shared-memory hash-table server, alone vs visitors: preopt, ring and sharded, beside Redis"
    }

    fn participants(&self) -> &'static [&'static str] {
        &PARTICIPANTS
    }

    fn pins(&self) -> bool {
        true
    }

    fn profile_peer(&self) -> &'static str {
        "server"
    }

    fn profile_extras(
        &self,
        doc: &xferbench_lab::result::ResultDoc,
        participant: &str,
        profiles: &BTreeMap<usize, xferbench_probes::profile::Folded>,
    ) -> BTreeMap<String, serde_json::Value> {
        profile::extras(doc, participant, profiles)
    }

    fn plan(&self, quick: bool, env: &StudyEnv) -> StudyPlan {
        let scale = if quick { Scale::QUICK } else { Scale::FULL };
        let redis = redis_available();
        let options = loop_options(&scale);
        let points = study_points(&scale, redis.is_ok())
            .into_iter()
            .map(|(planned, point)| {
                let point = KvPoint {
                    pin: env.pin,
                    ..point
                };
                (planned, point)
            })
            .collect();
        let bench = KvBench::new(points, env.launcher.clone());
        let mut extras = BTreeMap::new();
        extras.insert(
            "redis".into(),
            match &redis {
                Ok(v) => serde_json::json!({"available": true, "version": v}),
                Err(reason) => serde_json::json!({"available": false, "reason": reason}),
            },
        );
        if let Err(reason) = &redis {
            extras.insert(
                "skipped".into(),
                serde_json::json!([format!("the Redis rows: {reason}")]),
            );
        }
        extras.insert(
            "timing".into(),
            serde_json::json!({
                "outer": scale.outer,
                "inner": scale.inner,
                "warmup": scale.warmup,
                "warmup_16_visitors": scale.warmup_many,
                "min_runs": scale.min_runs,
                "min_time_s": scale.min_time_ms as f64 / 1e3,
                "buckets": BUCKETS,
                "seed": SEED,
                "steady_s": scale.steady_ms as f64 / 1e3,
            }),
        );
        StudyPlan {
            bench: Box::new(bench),
            settings: env.settings("kv", &options, true),
            options,
            extras,
            watch: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_holds_the_seven_cases_per_architecture_and_the_redis_rows() {
        let pts = study_points(&Scale::FULL, true);
        assert_eq!(pts.len(), 3 * 7 + 3 + 3);
        let many = pts
            .iter()
            .find(|(pp, _)| pp.params["case"] == "ManyClientsST" && pp.params["arch"] == "preopt")
            .unwrap();
        assert_eq!((many.1.visitors, many.1.warmup), (16, 2));
        assert_eq!(many.0.params["workers"], "1");
        let alone = &pts[0].1;
        assert_eq!((alone.outer, alone.inner, alone.warmup), (100, 10, 40));
        assert_eq!((alone.min_runs, alone.min_time_ms), (10, 3000));
        assert_eq!(study_points(&Scale::QUICK, false).len(), 24);
        let profile = pts
            .iter()
            .find(|(pp, _)| pp.params["group"] == "profile")
            .unwrap();
        assert_eq!((profile.1.outer, profile.1.warmup), (1000, 2));
        assert_eq!(profile.0.params["outer"], "1000");
        assert!(super::super::find("hashtable").is_ok());
        assert_eq!(alone.steady_ms, 1000);
        let o = loop_options(&Scale::FULL);
        assert!(o.interleave && o.runs == 3 && o.warmup == 0);
        assert_eq!(loop_options(&Scale::QUICK).runs, 2);
        for (pp, _) in &pts {
            let map = ParamMap::from_params(pp.params.clone());
            let read = HashtableParams::read(&map).unwrap();
            xferbench_params::point::round_trips(&read).unwrap();
            assert_eq!(read.to_map().into_params(), pp.params);
        }
        for v in REDIS_VISITORS {
            assert!(CASE.parse(&redis_case(v)).is_ok(), "{v}");
        }
        CASE.self_check().unwrap();
    }
}
