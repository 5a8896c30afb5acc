//! The warnings of a result as a person reads them on the terminal: one line per
//! cause, with the points it covers, instead of one line per point and cause.
//!
//! A warning names its cause before its first colon (`contended: …`, `noisy: …`,
//! `machine changed during measurement: …`). The run's own warnings come first, each
//! once. The points' warnings are grouped by cause, in the order the causes first
//! appear: a cause that the run's warnings already state (the run's `contended: 4 of
//! 4 points …`, `noisy: some points …`) gains the points it covers on that line; any
//! other cause gets one line naming its points, with the detail they share, or the
//! first point's as an example when theirs differ. Every warning of every point stays in the
//! result document and its exports; only the terminal folds them.

use std::collections::BTreeMap;
use xferbench_lab::result::{PointResult, ResultDoc};

/// The lines to print after `warning: `, in order.
pub fn lines(doc: &ResultDoc) -> Vec<String> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for p in &doc.points {
        for w in &p.warnings {
            let (cause, detail) = split(w);
            let key = key(cause);
            match groups.iter_mut().find(|g| g.key == key) {
                Some(g) => g.members.push((p, cause, detail)),
                None => groups.push(Group {
                    key,
                    members: vec![(p, cause, detail)],
                }),
            }
        }
    }
    let mut out = Vec::new();
    let mut folded = vec![false; groups.len()];
    for w in &doc.warnings {
        let key = key(split(w).0);
        match groups.iter().position(|g| g.key == key) {
            Some(i) if !folded[i] => {
                folded[i] = true;
                out.push(format!(
                    "{} ({})",
                    w.replacen(" (see their warnings)", "", 1),
                    groups[i].points()
                ));
            }
            _ => out.push(w.clone()),
        }
    }
    for (g, _) in groups.iter().zip(&folded).filter(|(_, f)| !**f) {
        out.push(g.line(doc.points.len()));
    }
    out
}

/// A cause and the warnings of it, by point.
struct Group<'a> {
    key: String,
    members: Vec<(&'a PointResult, &'a str, &'a str)>,
}

impl Group<'_> {
    /// `point 3 (shm size=64 KiB …)` for one point, `points 1–4` for several.
    fn points(&self) -> String {
        let mut indices: Vec<usize> = self.members.iter().map(|(p, _, _)| p.index + 1).collect();
        indices.dedup();
        match indices.as_slice() {
            [one] => format!("point {one} ({})", describe(self.members[0].0)),
            many => format!("points {}", ranges(many)),
        }
    }

    /// `noisy at points 1, 3 of 4, e.g. point 1: …`; `… at points 1–4 of 4: …` when
    /// they say the same; `… at point 3 (shm size=64 B …): …` alone.
    fn line(&self, of: usize) -> String {
        let (first, cause, detail) = self.members[0];
        if self.members.iter().all(|(p, _, _)| p.index == first.index) {
            return format!("{cause} at {}: {detail}", self.points());
        }
        if self.members.iter().any(|(_, c, _)| *c != cause) {
            // Causes that differ in their numbers (`collapsed in 1 of 5 runs`, `… 2 of
            // 5 …`): named by their first word, the first point's warning whole.
            let word = cause.split_whitespace().next().unwrap_or(cause);
            format!(
                "{word} at {} of {of}, e.g. point {}: {cause}: {detail}",
                self.points(),
                first.index + 1
            )
        } else if self.members.iter().all(|(_, _, d)| *d == detail) {
            format!("{cause} at {} of {of}: {detail}", self.points())
        } else {
            format!(
                "{cause} at {} of {of}, e.g. point {}: {detail}",
                self.points(),
                first.index + 1
            )
        }
    }
}

/// A warning's cause and its detail: before and after its first `: `.
fn split(w: &str) -> (&str, &str) {
    w.split_once(": ").unwrap_or((w, ""))
}

/// What makes two causes the same: their words, numbers aside (`collapsed in 1 of 5
/// runs` and `collapsed in 2 of 5 runs` are one cause).
fn key(cause: &str) -> String {
    cause
        .split_whitespace()
        .map(|t| {
            if t.chars().any(|c| c.is_ascii_digit()) {
                "#"
            } else {
                t
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `1–4, 6, 8–9`.
fn ranges(sorted: &[usize]) -> String {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for &i in sorted {
        match spans.last_mut() {
            Some((_, hi)) if *hi + 1 == i => *hi = i,
            _ => spans.push((i, i)),
        }
    }
    spans
        .iter()
        .map(|&(lo, hi)| match hi - lo {
            0 => lo.to_string(),
            1 => format!("{lo}, {hi}"),
            _ => format!("{lo}–{hi}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A point in words: `shm size=2 KiB channels=1 wait=spin`, every value shown
/// through its definition.
pub fn describe(p: &PointResult) -> String {
    use xferbench_lab::axes::TRANSPORT;
    use xferbench_lab::names;
    use xferbench_lab::params::display;
    let mut s = format!(
        "{} {}={} {}={}",
        p.param(&TRANSPORT).unwrap_or_default(),
        names::SIZE,
        xferbench_params::bytes::display(p.size_bytes),
        names::CHANNELS,
        p.channels
    );
    let fixed = [
        names::WORKLOAD,
        names::TRANSPORT,
        names::SIZE,
        names::CHANNELS,
    ];
    let params: BTreeMap<String, String> = p.params.clone();
    for (k, v) in &params {
        if !fixed.contains(&k.as_str()) {
            s.push_str(&format!(" {k}={}", display(&params, k, v)));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(points: &[&[&str]], run: &[&str]) -> ResultDoc {
        let mut d = crate::fixture::stream_doc();
        let template = d.points[0].clone();
        d.points = points
            .iter()
            .enumerate()
            .map(|(i, ws)| PointResult {
                index: i,
                warnings: ws.iter().map(|w| w.to_string()).collect(),
                ..template.clone()
            })
            .collect();
        d.warnings = run.iter().map(|w| w.to_string()).collect();
        d
    }

    #[test]
    fn one_line_per_cause_with_the_points_it_covers() {
        let d = doc(
            &[
                &[
                    "noisy: x varies by ±22.6 %",
                    "machine changed during measurement: a → b",
                ],
                &["machine changed during measurement: a → b"],
                &[
                    "noisy: x varies by ±5.6 %",
                    "machine changed during measurement: a → b",
                ],
                &["machine changed during measurement: a → b"],
            ],
            &[],
        );
        assert_eq!(
            lines(&d),
            [
                "noisy at points 1, 3 of 4, e.g. point 1: x varies by ±22.6 %",
                "machine changed during measurement at points 1–4 of 4: a → b",
            ]
        );
    }

    #[test]
    fn a_cause_the_run_already_states_gains_its_points_on_that_line() {
        let d = doc(
            &[
                &["contended: 1.39 CPUs"],
                &[],
                &["contended: 1.51 CPUs", "noisy: ±9 %"],
            ],
            &[
                "contended: 2 of 3 points were measured while others ran (see their warnings); over all runs others used 0.5 CPUs",
                "noisy: some points vary by more than 5 % between runs (see their warnings)",
            ],
        );
        assert_eq!(
            lines(&d),
            [
                "contended: 2 of 3 points were measured while others ran; over all runs others used 0.5 CPUs (points 1, 3)",
                "noisy: some points vary by more than 5 % between runs (point 3 (pipe size=64 B channels=1))",
            ]
        );
    }

    #[test]
    fn a_lone_point_is_named_and_numbers_do_not_split_a_cause() {
        let d = doc(
            &[
                &["collapsed in 1 of 5 runs: stuck"],
                &["collapsed in 2 of 5 runs: stuck"],
                &["short runs: the median window is 0.50 ms"],
            ],
            &[],
        );
        let l = lines(&d);
        assert_eq!(l.len(), 2, "{l:?}");
        assert_eq!(
            l[0],
            "collapsed at points 1, 2 of 3, e.g. point 1: collapsed in 1 of 5 runs: stuck"
        );
        assert!(l[1].starts_with("short runs at point 3 ("), "{l:?}");
        assert!(l[1].ends_with("): the median window is 0.50 ms"), "{l:?}");
    }

    #[test]
    fn spans_of_points() {
        assert_eq!(ranges(&[1, 2, 3, 4, 6, 8, 9]), "1–4, 6, 8, 9");
        assert_eq!(ranges(&[5]), "5");
    }
}
