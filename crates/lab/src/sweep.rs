//! Sweep axes and the plan of points they span.
//!
//! An axis is a list as its parameter's definition reads it
//! ([`xferbench_params::ParamDef::parse_list`]): items are single values or, for
//! numbers and sizes, ranges (`64,2KiB,64KiB`, `1..64KiB:x4`, `1..32`,
//! `100..500:+100`).
//!
//! Every combination of the axes is one point. Transport parameters (`-p NAME=LIST`)
//! only multiply the points of transports that declare them, each read by that
//! transport's own definition. The workload's own parameters
//! ([`Workload::PARAMS`](crate::workload::Workload::PARAMS)) multiply every point,
//! innermost, in the order the workload declares them; those of in-place messages
//! ([`workload::IN_PLACE`]) multiply the in-place points once the copy modes are
//! chosen ([`with_in_place_params`]).

use crate::axes::{CHANNELS, SIZE, TRANSPORT, ZERO_COPY};
use crate::neighbours::Neighbours;
use crate::workload::load::Schedule;
use crate::workload::{self, TOUCH, Touch, WORKLOAD, WorkloadKind};
use std::collections::BTreeMap;
use xferbench_params::{MAX_LIST, ParamMap, PointParams, Value};
use xferbench_transports::{ParamDef, ParamError, ParamValues};

/// Largest number of points a sweep may expand to.
pub const MAX_POINTS: usize = MAX_LIST;

/// One point of a sweep: every parameter fixed.
#[derive(Debug, Clone, PartialEq)]
pub struct PointSpec {
    /// Transport name.
    pub transport: String,
    /// Transport parameters set explicitly for this point (defaults are omitted).
    pub transport_params: ParamValues,
    /// Message size, bytes.
    pub size: u64,
    /// Concurrent channels.
    pub channels: usize,
    /// Messages written and read in place (`--zero-copy`); copied when false.
    pub zero_copy: bool,
    /// The values of the workload's own parameters set for this point (`-p
    /// NAME=LIST` of a name the workload declares, `--rate`); the others take their
    /// defaults.
    pub workload_params: ParamValues,
    /// Background work beside the point (`--neighbours`).
    pub neighbours: Neighbours,
}

impl PointSpec {
    /// A point of `transport` with `size`-byte messages on `channels` channels,
    /// copying, its workload's parameters at their defaults, with no neighbours.
    pub fn new(transport: &str, size: u64, channels: usize) -> PointSpec {
        PointSpec {
            transport: transport.to_string(),
            transport_params: ParamValues::new(),
            size,
            channels,
            zero_copy: false,
            workload_params: ParamValues::new(),
            neighbours: Neighbours::default(),
        }
    }

    /// What the point's in-place messages' ends do with the payload.
    pub fn touch(&self) -> Touch {
        self.workload_params.choice(&TOUCH)
    }

    /// The point's `load` schedule.
    pub fn schedule(&self) -> Schedule {
        Schedule::of(&self.workload_params)
    }

    /// The point's parameters as results store them (machine form), each written
    /// through its definition.
    pub fn params(&self, workload: WorkloadKind) -> BTreeMap<String, String> {
        let mut p = ParamMap::new();
        p.put_text(&WORKLOAD, workload.name());
        p.put_text(&TRANSPORT, &crate::plugins::display_name(&self.transport));
        p.put(&SIZE, &Value::Bytes(self.size));
        p.put(&CHANNELS, &Value::Integer(self.channels as i64));
        let defs = crate::transports::descriptor(&self.transport)
            .map(|d| d.params.into_owned())
            .unwrap_or_default();
        p.put_all(&self.transport_params, &defs);
        if self.zero_copy {
            p.put(&ZERO_COPY, &Value::Bool(true));
        }
        workload.record(&self.workload_params, &mut p);
        self.neighbours.write(&mut p);
        p.into_params()
    }
}

/// The names `-p` takes besides transport parameters (the axes, which the command
/// line reads itself, and the workloads' own parameters): offered for a misspelt
/// `-p` name.
pub fn axes() -> Vec<ParamDef> {
    workload::lab_params()
}

/// Why the in-place payload rule of a point cannot be `touch` (the caller names the
/// parameter): `--verify` checks every byte, and the RPMsg rig and the plugin rig
/// write and read whole messages.
fn touch_refused(touch: Touch, transport: &str, verify: bool) -> Option<String> {
    if touch == Touch::All {
        return None;
    }
    let all = format!("{}={}", TOUCH.name(), Touch::All.name());
    if verify {
        return Some(format!(
            "--verify writes and checks every byte; use {all} or drop --verify"
        ));
    }
    if transport == crate::transports::RPMSG {
        return Some(format!(
            "rpmsg's rig writes and reads every packet; use {all}"
        ));
    }
    if crate::plugins::is_plugin(transport) {
        return Some(format!(
            "{}'s in-place messages are written and read whole (the plugin rig has no other rule yet); use {all}",
            crate::plugins::display_name(transport)
        ));
    }
    None
}

/// A workload's parameters given for a sweep, each with its values as its definition
/// read them, in the order the workload declares them.
pub type WorkloadLists = Vec<(ParamDef, Vec<Value>)>;

/// The workload's values for each point: every combination of `lists`' values (the
/// first list outermost), one empty set when there are none.
fn combinations<'a>(
    lists: impl Iterator<Item = &'a (ParamDef, Vec<Value>)>,
) -> Result<Vec<ParamValues>, SweepPlanError> {
    let mut combos: Vec<ParamValues> = vec![ParamValues::new()];
    for (def, values) in lists {
        let mut next = Vec::with_capacity(combos.len() * values.len());
        for c in &combos {
            for v in values {
                let mut c = c.clone();
                c.set(def, v.clone())
                    .map_err(|source| SweepPlanError::Param {
                        name: def.name.to_string(),
                        source,
                    })?;
                next.push(c);
            }
        }
        combos = next;
        if combos.len() > MAX_POINTS {
            return Err(SweepPlanError::TooLarge(combos.len()));
        }
    }
    Ok(combos)
}

/// The axes of a sweep, before expansion.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSpec {
    /// Transports, in order.
    pub transports: Vec<String>,
    /// Message sizes.
    pub sizes: Vec<u64>,
    /// Channel counts.
    pub channels: Vec<usize>,
    /// Extra parameter axes (`-p NAME=LIST`) as written, in the order given; each
    /// transport that declares NAME reads LIST with its definition.
    pub params: Vec<(String, String)>,
    /// The workload's own parameters given, each with its values as its definition
    /// read them, in the order the workload declares them: innermost (a rate
    /// curve's points are neighbours in the plan), the first outermost. Those of
    /// in-place messages ([`workload::IN_PLACE`]) are left to
    /// [`with_in_place_params`].
    pub workload_params: WorkloadLists,
    /// Background work, one set of points per entry; empty means none.
    pub neighbours: Vec<Neighbours>,
}

/// Why a sweep cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepPlanError {
    /// A `-p` name that no selected transport declares.
    #[error("no selected transport takes parameter `{name}`{suggestion}; {known}")]
    UnknownParam {
        /// The parameter.
        name: String,
        /// ` (did you mean `NAME`?)` when a known name is close, else empty.
        suggestion: String,
        /// What the selected transports accept, per transport.
        known: String,
    },
    /// A transport is not known.
    #[error("{0}")]
    Transport(String),
    /// A value of parameter `name` that a transport's definition refuses.
    #[error("{name}: {source}")]
    Param {
        /// The parameter.
        name: String,
        /// Why.
        #[source]
        source: ParamError,
    },
    /// Too many points.
    #[error("the sweep spans {0} points, more than the limit of {MAX_POINTS}; narrow an axis")]
    TooLarge(usize),
}

/// Reads a list of sizes (`64,2KiB,1..64KiB:x4`) by the `size` definition.
pub fn parse_sizes(list: &str) -> Result<Vec<u64>, ParamError> {
    Ok(SIZE
        .parse_list(list)?
        .into_iter()
        .filter_map(|v| match v {
            Value::Bytes(n) => Some(n),
            _ => None,
        })
        .collect())
}

/// Reads a list of channel counts (`1,2,8`, `1..32`) by the `channels` definition.
pub fn parse_channels(list: &str) -> Result<Vec<usize>, ParamError> {
    Ok(CHANNELS
        .parse_list(list)?
        .into_iter()
        .filter_map(|v| match v {
            Value::Integer(n) => usize::try_from(n).ok(),
            _ => None,
        })
        .collect())
}

/// Splits a list of names (`pipe,unix,tcp`); empty items are refused, repeats count
/// once.
pub fn parse_words(list: &str) -> Result<Vec<String>, ParamError> {
    let mut out: Vec<String> = Vec::new();
    for w in list.split(',').map(str::trim) {
        if w.is_empty() {
            return Err(ParamError::List {
                name: TRANSPORT.name.to_string(),
                problem: format!("empty item in list {list:?}"),
            });
        }
        if !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    Ok(out)
}

impl SweepSpec {
    /// Expands the axes into points, transport-major, then parameters, sizes and
    /// channel counts.
    pub fn plan(&self) -> Result<Vec<PointSpec>, SweepPlanError> {
        let mut descriptors = Vec::with_capacity(self.transports.len());
        for t in &self.transports {
            descriptors.push(
                crate::transports::descriptor(t)
                    .map_err(|e| SweepPlanError::Transport(e.to_string()))?,
            );
        }
        for (name, _) in &self.params {
            if !descriptors.iter().any(|d| d.param(name).is_some()) {
                let known: Vec<String> = descriptors
                    .iter()
                    .map(|d| {
                        let names: Vec<&str> = d.params.iter().map(|p| p.name()).collect();
                        if names.is_empty() {
                            format!("{} takes none", d.name)
                        } else {
                            format!("{} takes {}", d.name, names.join(", "))
                        }
                    })
                    .collect();
                let axes = axes();
                let candidates = descriptors
                    .iter()
                    .flat_map(|d| d.params.iter().map(|p| p.name()))
                    .chain(axes.iter().map(|a| a.name()));
                return Err(SweepPlanError::UnknownParam {
                    name: name.clone(),
                    suggestion: xferbench_params::suggest::closest(name, candidates)
                        .map(|c| format!(" (did you mean `{c}`?)"))
                        .unwrap_or_default(),
                    known: known.join("; "),
                });
            }
        }
        let mut points = Vec::new();
        for d in &descriptors {
            let mut combos: Vec<ParamValues> = vec![ParamValues::new()];
            for (name, list) in &self.params {
                let Some(def) = d.param(name) else { continue };
                let param = |source| SweepPlanError::Param {
                    name: name.clone(),
                    source,
                };
                let values = def.parse_list(list).map_err(param)?;
                let mut next = Vec::with_capacity(combos.len() * values.len());
                for c in &combos {
                    for v in &values {
                        let mut c = c.clone();
                        c.set(def, v.clone()).map_err(param)?;
                        next.push(c);
                    }
                }
                combos = next;
                if combos.len() > MAX_POINTS {
                    return Err(SweepPlanError::TooLarge(combos.len()));
                }
            }
            let workloads = combinations(
                self.workload_params
                    .iter()
                    .filter(|(d, _)| !workload::in_place_only(d)),
            )?;
            let neighbours: &[Neighbours] = if self.neighbours.is_empty() {
                &[Neighbours(None)]
            } else {
                &self.neighbours
            };
            for params in &combos {
                for &size in &self.sizes {
                    for &channels in &self.channels {
                        for &neighbours in neighbours {
                            for values in &workloads {
                                points.push(PointSpec {
                                    transport_params: params.clone(),
                                    workload_params: values.clone(),
                                    neighbours,
                                    ..PointSpec::new(&d.name, size, channels)
                                });
                                if points.len() > MAX_POINTS {
                                    return Err(SweepPlanError::TooLarge(points.len()));
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(points)
    }
}

/// How a sweep chooses its points' copy modes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyModes {
    /// Every point in one mode; in place (`true`) refuses a transport without a
    /// zero-copy mode.
    Every(bool),
    /// An axis of modes, like other parameters: the in-place points of transports
    /// that have the mode; the others run copying only.
    Axis(Vec<bool>),
}

/// Why a sweep's points cannot take a copy mode or a payload rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    /// The mode or rule asked for does not apply to the points (the caller names its
    /// flag in front of it).
    #[error("{0}")]
    Refused(String),
    /// A transport's own settings refuse the mode.
    #[error("{0}")]
    Transport(String),
}

/// The points in each copy mode of `modes`, each point once per mode that applies to
/// its transport.
pub fn with_copy_modes(
    points: Vec<PointSpec>,
    transports: &[String],
    modes: &CopyModes,
) -> Result<Vec<PointSpec>, ModeError> {
    use crate::transports::{RPMSG, has_zero_copy, no_zero_copy, rpmsg_settings};
    let modes: Vec<bool> = match modes {
        CopyModes::Axis(modes) => {
            if modes.contains(&true) && !transports.iter().any(|t| has_zero_copy(t)) {
                return Err(ModeError::Refused(format!(
                    "no selected transport has a zero-copy mode; {}",
                    no_zero_copy(&transports.join(", "))
                )));
            }
            modes.clone()
        }
        CopyModes::Every(in_place) => {
            if *in_place && let Some(t) = transports.iter().find(|t| !has_zero_copy(t)) {
                return Err(ModeError::Refused(no_zero_copy(t)));
            }
            vec![*in_place]
        }
    };
    let mut out = Vec::with_capacity(points.len() * modes.len());
    for p in points {
        for &zero_copy in &modes {
            if p.transport == RPMSG {
                rpmsg_settings(&p.transport_params, zero_copy).map_err(ModeError::Transport)?;
            }
            if !zero_copy || has_zero_copy(&p.transport) {
                out.push(PointSpec {
                    zero_copy,
                    ..p.clone()
                });
            }
        }
    }
    Ok(out)
}

/// Why a sweep's in-place points cannot take a workload parameter's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}: {problem}")]
pub struct InPlaceError {
    /// The parameter.
    pub name: String,
    /// Why.
    pub problem: String,
    /// No point of the sweep writes and reads its messages in place.
    pub no_point_in_place: bool,
}

/// The in-place points once per combination of the values of `lists`' parameters of
/// in-place messages ([`workload::IN_PLACE`]; the others are the plan's), copying
/// points once: their messages are copied whole either way. A value the point's
/// transport or `verify` refuses is an error.
pub fn with_in_place_params(
    points: Vec<PointSpec>,
    lists: &WorkloadLists,
    verify: bool,
) -> Result<Vec<PointSpec>, InPlaceError> {
    let lists: Vec<&(ParamDef, Vec<Value>)> = lists
        .iter()
        .filter(|(d, _)| workload::in_place_only(d))
        .collect();
    let Some((first, _)) = lists.first() else {
        return Ok(points);
    };
    if !points.iter().any(|p| p.zero_copy) {
        return Err(InPlaceError {
            name: first.name.to_string(),
            problem: "it applies to messages written and read in place".into(),
            no_point_in_place: true,
        });
    }
    let combos = combinations(lists.iter().copied()).map_err(|e| InPlaceError {
        name: first.name.to_string(),
        problem: e.to_string(),
        no_point_in_place: false,
    })?;
    let mut out = Vec::with_capacity(points.len() * combos.len());
    for p in points {
        if !p.zero_copy {
            out.push(p);
            continue;
        }
        for values in &combos {
            let mut point = p.clone();
            for (name, v) in values.iter() {
                if let Some((def, _)) = lists.iter().find(|(d, _)| d.name == name) {
                    point
                        .workload_params
                        .set(def, v.clone())
                        .map_err(|e| InPlaceError {
                            name: def.name.to_string(),
                            problem: e.to_string(),
                            no_point_in_place: false,
                        })?;
                }
            }
            if let Some(problem) = touch_refused(point.touch(), &point.transport, verify) {
                return Err(InPlaceError {
                    name: TOUCH.name.to_string(),
                    problem,
                    no_point_in_place: false,
                });
            }
            if out.len() >= MAX_POINTS {
                return Err(InPlaceError {
                    name: first.name.to_string(),
                    problem: SweepPlanError::TooLarge(out.len() + 1).to_string(),
                    no_point_in_place: false,
                });
            }
            out.push(point);
        }
    }
    Ok(out)
}

/// Sizes chosen by default on `rpmsg`, whose packets hold at most
/// [`RPMSG_MAX_SIZE`](crate::transports::RPMSG_MAX_SIZE) bytes: its points larger than
/// that run at that size instead (once), and the note returned says so. For sizes the
/// user did not choose: a chosen size that does not fit is an error of its own.
pub fn fit_default_sizes_to_rpmsg(points: &mut Vec<PointSpec>) -> Option<String> {
    let max = crate::transports::RPMSG_MAX_SIZE;
    let mut clamped = Vec::new();
    for p in points.iter_mut() {
        if p.transport == crate::transports::RPMSG && p.size > max {
            if !clamped.contains(&p.size) {
                clamped.push(p.size);
            }
            p.size = max;
        }
    }
    if clamped.is_empty() {
        return None;
    }
    let mut kept: Vec<PointSpec> = Vec::with_capacity(points.len());
    for p in points.drain(..) {
        if !kept.contains(&p) {
            kept.push(p);
        }
    }
    *points = kept;
    let sizes: Vec<String> = clamped
        .iter()
        .map(|&s| crate::limits::size_words(s))
        .collect();
    Some(format!(
        "rpmsg: the default size{} {} do{} not fit an RPMsg packet (at most {max} bytes); \
         rpmsg ran at {max} bytes instead (choose sizes with --size)",
        if sizes.len() == 1 { "" } else { "s" },
        sizes.join(" and "),
        if sizes.len() == 1 { "es" } else { "" },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch_list(list: &str) -> WorkloadLists {
        vec![(TOUCH, TOUCH.parse_list(list).unwrap())]
    }

    #[test]
    fn touch_rules_multiply_in_place_points_only() {
        let point = |zero_copy| PointSpec {
            zero_copy,
            ..PointSpec::new("shm", 64, 1)
        };
        let out = with_in_place_params(
            vec![point(false), point(true)],
            &touch_list("none,all"),
            false,
        )
        .unwrap();
        let got: Vec<(bool, Touch)> = out.iter().map(|p| (p.zero_copy, p.touch())).collect();
        assert_eq!(
            got,
            [
                (false, Touch::All),
                (true, Touch::Nothing),
                (true, Touch::All)
            ]
        );
        assert_eq!(out[1].params(WorkloadKind::Pingpong)["touch"], "none");
        assert!(!out[2].params(WorkloadKind::Pingpong).contains_key("touch"));
        let e = with_in_place_params(vec![point(false)], &touch_list("read"), false).unwrap_err();
        assert!(e.no_point_in_place && e.name == "touch", "{e}");
        let e = with_in_place_params(vec![point(true)], &touch_list("read"), true).unwrap_err();
        assert!(e.problem.contains("--verify"), "{e}");
        let rpmsg = PointSpec {
            zero_copy: true,
            ..PointSpec::new("rpmsg", 64, 1)
        };
        assert!(with_in_place_params(vec![rpmsg.clone()], &touch_list("read"), false).is_err());
        assert!(with_in_place_params(vec![rpmsg], &touch_list("all"), false).is_ok());
        // The plan leaves them to the in-place expansion.
        let spec = SweepSpec {
            transports: vec!["shm".into()],
            sizes: vec![64],
            channels: vec![1],
            params: Vec::new(),
            workload_params: touch_list("none,all"),
            neighbours: Vec::new(),
        };
        assert_eq!(spec.plan().unwrap(), [PointSpec::new("shm", 64, 1)]);
    }

    #[test]
    fn the_lab_keeps_its_own_names_from_plugins() {
        let names = workload::lab_param_names();
        for name in [
            "transport",
            "size",
            "channels",
            "workload",
            "zero_copy",
            "touch",
            "rate",
            "burst",
            "arrivals",
            "neighbours",
        ] {
            assert!(names.iter().any(|n| n == name), "{name}: {names:?}");
        }
        // Every workload's parameters, as each declares them.
        for w in WorkloadKind::ALL {
            for d in w.params() {
                assert!(names.iter().any(|n| *n == d.name), "{}: {names:?}", d.name);
            }
        }
    }

    #[test]
    fn rpmsg_points_above_a_packet_run_at_its_largest_size_with_a_note() {
        use super::{PointSpec, fit_default_sizes_to_rpmsg};
        use crate::transports;
        let max = transports::RPMSG_MAX_SIZE;
        let point = |transport: &str, size| PointSpec::new(transport, size, 1);
        let mut points = vec![
            point("rpmsg", 64),
            point("rpmsg", 4096),
            point("rpmsg", 65536),
            point("shm", 64),
            point("shm", 65536),
        ];
        let note = fit_default_sizes_to_rpmsg(&mut points).unwrap();
        // 4 KiB and 64 KiB both become the largest packet, which runs once.
        assert_eq!(
            points,
            [
                point("rpmsg", 64),
                point("rpmsg", max),
                point("shm", 64),
                point("shm", 65536),
            ]
        );
        assert!(
            note.starts_with(
                "rpmsg: the default sizes 4 KiB and 64 KiB do not fit an RPMsg packet"
            ),
            "{note}"
        );
        assert!(
            note.contains(&format!("rpmsg ran at {max} bytes instead")),
            "{note}"
        );
        // One size too large reads in the singular; sizes that fit leave no note.
        let mut one = vec![point("rpmsg", 4096)];
        let note = fit_default_sizes_to_rpmsg(&mut one).unwrap();
        assert!(
            note.starts_with("rpmsg: the default size 4 KiB does not fit"),
            "{note}"
        );
        let mut fits = vec![point("rpmsg", 64), point("rpmsg", max), point("shm", 65536)];
        let before = fits.clone();
        assert_eq!(fit_default_sizes_to_rpmsg(&mut fits), None);
        assert_eq!(fits, before);
    }

    #[test]
    fn copy_modes_multiply_the_points_of_transports_that_have_them() {
        use super::{CopyModes, ModeError, PointSpec, with_copy_modes};
        let points = vec![PointSpec::new("shm", 64, 1), PointSpec::new("pipe", 64, 1)];
        let names = ["shm".to_string(), "pipe".to_string()];
        let out =
            with_copy_modes(points.clone(), &names, &CopyModes::Axis(vec![false, true])).unwrap();
        let got: Vec<(&str, bool)> = out
            .iter()
            .map(|p| (p.transport.as_str(), p.zero_copy))
            .collect();
        assert_eq!(got, [("shm", false), ("shm", true), ("pipe", false)]);
        assert!(matches!(
            with_copy_modes(points.clone(), &names, &CopyModes::Every(true)),
            Err(ModeError::Refused(m)) if m.contains("pipe")
        ));
        let out = with_copy_modes(points, &names, &CopyModes::Every(false)).unwrap();
        assert!(out.iter().all(|p| !p.zero_copy) && out.len() == 2);
        let pipe_only = ["pipe".to_string()];
        assert!(matches!(
            with_copy_modes(vec![PointSpec::new("pipe", 64, 1)], &pipe_only, &CopyModes::Axis(vec![true])),
            Err(ModeError::Refused(m)) if m.starts_with("no selected transport has a zero-copy mode")
        ));
    }

    #[test]
    fn sizes_and_channels_read_by_their_definitions() {
        assert_eq!(parse_sizes("64,2KiB,64KiB").unwrap(), vec![64, 2048, 65536]);
        assert_eq!(parse_channels("1..8").unwrap(), vec![1, 2, 4, 8]);
        let e = parse_sizes("0").unwrap_err().to_string();
        assert!(e.contains("at least 1"), "{e}");
        let e = parse_sizes("2GiB").unwrap_err().to_string();
        assert!(e.contains("1 GiB"), "{e}");
        assert!(parse_channels("0").is_err() && parse_channels("1025").is_err());
        assert_eq!(parse_words("pipe, unix,pipe").unwrap(), ["pipe", "unix"]);
        assert!(parse_words("a,,b").is_err());
    }

    #[test]
    fn every_combination_is_one_point_and_params_apply_only_where_declared() {
        let spec = SweepSpec {
            transports: vec!["pipe".into(), "unix".into()],
            sizes: vec![64, 4096],
            channels: vec![1, 2],
            params: vec![("pipe_size".into(), "64KiB,1MiB".into())],
            workload_params: Vec::new(),
            neighbours: Vec::new(),
        };
        let points = spec.plan().unwrap();
        assert_eq!(points.len(), 2 * 2 * 2 + 2 * 2);
        assert!(
            points
                .iter()
                .filter(|p| p.transport == "unix")
                .all(|p| p.transport_params.is_empty())
        );
        assert_eq!(
            points[0].transport_params.get("pipe_size"),
            Some(&Value::Bytes(65536))
        );
        assert_eq!(points[0].params(WorkloadKind::Stream)["pipe_size"], "65536");
    }

    #[test]
    fn each_transport_reads_a_shared_name_with_its_own_definition() {
        let spec = SweepSpec {
            transports: vec!["shm".into(), "iceoryx2".into()],
            sizes: vec![64],
            channels: vec![1],
            params: vec![("wait".into(), "spin".into())],
            workload_params: Vec::new(),
            neighbours: Vec::new(),
        };
        assert_eq!(spec.plan().unwrap().len(), 2);
        let spec = SweepSpec {
            params: vec![("wait".into(), "block".into())],
            ..spec
        };
        let e = spec.plan().unwrap_err().to_string();
        assert!(e.contains("spin or event"), "{e}");
    }

    #[test]
    fn rates_are_the_innermost_axis_and_written_through_their_definitions() {
        use crate::workload::load::{BURST, RATE};
        let spec = SweepSpec {
            transports: vec!["shm".into()],
            sizes: vec![64],
            channels: vec![1],
            params: Vec::new(),
            workload_params: vec![(RATE, RATE.parse_list("10k,1M").unwrap())],
            neighbours: vec![
                Neighbours::default(),
                Neighbours::parse("memory:1").unwrap(),
            ],
        };
        let points = spec.plan().unwrap();
        assert_eq!(points.len(), 4);
        let p0 = points[0].params(WorkloadKind::Load);
        let p1 = points[1].params(WorkloadKind::Load);
        assert_eq!(p0["rate"], "10000");
        assert_eq!(p1["rate"], "1000000");
        assert!(!p0.contains_key("neighbours"));
        assert_eq!(
            points[2].params(WorkloadKind::Load)["neighbours"],
            "memory:1"
        );
        assert!(!points[0].params(WorkloadKind::Load).contains_key("burst"));
        assert!(crate::params::describe(&p1).contains("rate=1M/s"), "{p1:?}");
        // Rate outermost of the workload's lists, a rate left out at its default and
        // a burst of one unrecorded, as the load workload records them.
        let spec = SweepSpec {
            workload_params: vec![
                (RATE, RATE.parse_list("10k,20k").unwrap()),
                (BURST, BURST.parse_list("1,8").unwrap()),
            ],
            neighbours: Vec::new(),
            ..spec
        };
        let got: Vec<(u64, u32)> = spec
            .plan()
            .unwrap()
            .iter()
            .map(|p| (p.schedule().rate, p.schedule().burst))
            .collect();
        assert_eq!(got, [(10_000, 1), (10_000, 8), (20_000, 1), (20_000, 8)]);
        let bare = PointSpec::new("shm", 64, 1).params(WorkloadKind::Load);
        assert_eq!(bare["rate"], "10000");
        assert!(!bare.contains_key("burst") && !bare.contains_key("arrivals"));
        assert!(
            !PointSpec::new("shm", 64, 1)
                .params(WorkloadKind::Stream)
                .contains_key("rate")
        );
    }

    #[test]
    fn an_undeclared_param_is_refused_with_the_known_ones() {
        let spec = SweepSpec {
            transports: vec!["pipe".into()],
            sizes: vec![64],
            channels: vec![1],
            params: vec![("nodelay".into(), "true".into())],
            workload_params: Vec::new(),
            neighbours: Vec::new(),
        };
        let e = spec.plan().unwrap_err().to_string();
        assert!(
            e.contains("nodelay") && e.contains("pipe takes pipe_size"),
            "{e}"
        );
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn a_misspelt_param_is_refused_naming_the_one_meant() {
        let spec = SweepSpec {
            transports: vec!["shm".into(), "tcp".into()],
            sizes: vec![64],
            channels: vec![1],
            params: vec![("capacty".into(), "1MiB".into())],
            workload_params: Vec::new(),
            neighbours: Vec::new(),
        };
        let e = spec.plan().unwrap_err().to_string();
        assert!(e.contains("(did you mean `capacity`?)"), "{e}");
        assert!(
            e.contains("shm takes wait, spin_us, capacity, batch; tcp takes nodelay"),
            "{e}"
        );
        let spec = SweepSpec {
            params: vec![("chanels".into(), "1,2".into())],
            ..spec
        };
        let e = spec.plan().unwrap_err().to_string();
        assert!(e.contains("(did you mean `channels`?)"), "{e}");
    }
}
