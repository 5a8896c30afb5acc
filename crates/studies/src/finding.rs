//! A study's findings, computed rather than asserted: each is the seed's statement,
//! the figures of our data it is judged on with the condition they must meet, and the
//! verdict that condition gives: it holds, it does not hold here, or it cannot be
//! judged on this machine (and why: too few CPUs for the threads it needs, points
//! that waited for a CPU, no hardware counters).
//!
//! A writer builds each [`Finding`] from its data with the thresholds it names as
//! constants and renders them with [`section`] under `## Findings` in `summary.md`.

use xferbench_lab::measure::CPU_BOUND;
use xferbench_lab::result::{PointResult, ResultDoc};

/// What a finding's condition gives on our data.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The condition holds on our data.
    Holds,
    /// The condition does not hold on our data.
    DoesNotHold,
    /// This machine cannot judge it: `why`; `on_these` is what the condition gives
    /// on the figures anyway, when there are figures.
    CannotJudge {
        /// Why the figures cannot judge the statement here.
        why: String,
        /// The condition on the figures measured anyway.
        on_these: Option<bool>,
    },
}

/// One finding: the seed's statement, our figures with the condition, the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The seed's statement (its words, or what its tables show).
    pub seed: String,
    /// Our figures and the condition they are held to (the seed's figures beside
    /// them where it has some).
    pub figures: String,
    /// The condition's verdict.
    pub verdict: Verdict,
}

impl Finding {
    /// A finding judged on our figures: `holds` is the condition's value.
    pub fn judged(seed: impl Into<String>, figures: impl Into<String>, holds: bool) -> Finding {
        Finding {
            seed: seed.into(),
            figures: figures.into(),
            verdict: if holds {
                Verdict::Holds
            } else {
                Verdict::DoesNotHold
            },
        }
    }

    /// A finding this machine cannot judge at all (no figures to judge it on).
    pub fn cannot(
        seed: impl Into<String>,
        figures: impl Into<String>,
        why: impl Into<String>,
    ) -> Finding {
        Finding {
            seed: seed.into(),
            figures: figures.into(),
            verdict: Verdict::CannotJudge {
                why: why.into(),
                on_these: None,
            },
        }
    }

    /// The same finding, not judged when `limit` says why this machine cannot
    /// (see [`cpu_limit`]); the condition's value on the figures is kept beside it.
    pub fn unless(self, limit: Option<String>) -> Finding {
        let Some(why) = limit else { return self };
        let on_these = match self.verdict {
            Verdict::Holds => Some(true),
            Verdict::DoesNotHold => Some(false),
            Verdict::CannotJudge { on_these, .. } => on_these,
        };
        Finding {
            verdict: Verdict::CannotJudge { why, on_these },
            ..self
        }
    }

    /// Whether the finding holds (false when it does not or cannot be judged).
    pub fn holds(&self) -> bool {
        self.verdict == Verdict::Holds
    }

    /// Whether this machine cannot judge it.
    pub fn cannot_be_judged(&self) -> bool {
        matches!(self.verdict, Verdict::CannotJudge { .. })
    }

    /// The finding as a line of `summary.md`.
    pub fn line(&self) -> String {
        let verdict = match &self.verdict {
            Verdict::Holds => "**holds**".to_string(),
            Verdict::DoesNotHold => "**does not hold here**".to_string(),
            Verdict::CannotJudge { why, on_these } => format!(
                "**cannot be judged here**: {why}{}",
                match on_these {
                    Some(true) => " (on these figures the condition holds)",
                    Some(false) => " (on these figures the condition does not hold)",
                    None => "",
                }
            ),
        };
        format!(
            "- The seed: {} Here: {}: {verdict}.",
            self.seed, self.figures
        )
    }
}

/// The findings as `summary.md`'s lines, with a count of each verdict first.
pub fn section(findings: &[Finding]) -> String {
    let count = |f: fn(&Finding) -> bool| findings.iter().filter(|x| f(x)).count();
    let (held, cannot) = (count(Finding::holds), count(Finding::cannot_be_judged));
    let not = findings.len() - held - cannot;
    let verb = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut s = format!(
        "Each of the seed's findings, judged on this run's figures by the condition it states: \
         {}, {}, {} on this machine.\n\n",
        verb(held, "holds", "hold"),
        verb(not, "does not hold here", "do not hold here"),
        verb(cannot, "cannot be judged", "cannot be judged")
    );
    for f in findings {
        s.push_str(&f.line());
        s.push('\n');
    }
    s
}

/// The points among `points` that carry the `cpu-bound` warning (their threads
/// waited for a CPU: their figures measure this machine's CPUs).
pub fn cpu_bound(points: &[&PointResult]) -> usize {
    points
        .iter()
        .filter(|p| p.warnings.iter().any(|w| w.starts_with(CPU_BOUND)))
        .count()
}

/// Why a finding on `points` cannot be judged on this machine, if it cannot: the
/// points need `needed` CPUs (`what` names their busy threads) and the document's
/// machine had fewer, or some of them carry the `cpu-bound` warning. Then their
/// figures measure this machine's CPUs, not the design.
pub fn cpu_limit(
    doc: &ResultDoc,
    points: &[&PointResult],
    needed: usize,
    what: &str,
) -> Option<String> {
    let cores = doc.context.cores;
    let bound = cpu_bound(points);
    let reason = if cores < needed {
        format!("it needs {needed} CPUs ({what}) and this machine has {cores}")
    } else if bound > 0 {
        format!(
            "{bound} of its {} points carry the `cpu-bound` warning (their threads waited for a CPU)",
            points.len()
        )
    } else {
        return None;
    };
    Some(format!(
        "{reason}, so these figures measure this machine's CPUs, not the design"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc_with_cores(cores: usize) -> ResultDoc {
        let mut doc = crate::rpmsg::fixture::rpmsg_doc();
        doc.context.cores = cores;
        doc
    }

    #[test]
    fn a_finding_renders_its_verdict() {
        let f = Finding::judged("\"it is fast\".", "1.5× (condition ≥ 1.2×)", true);
        assert_eq!(
            f.line(),
            "- The seed: \"it is fast\". Here: 1.5× (condition ≥ 1.2×): **holds**."
        );
        let f = Finding::judged("\"it is fast\".", "1.1× (condition ≥ 1.2×)", false);
        assert!(
            f.line().ends_with("**does not hold here**."),
            "{}",
            f.line()
        );
        assert!(!f.holds() && !f.cannot_be_judged());
        let f = Finding::cannot("\"x\".", "no counter", "no PMU");
        assert!(
            f.line().ends_with("**cannot be judged here**: no PMU."),
            "{}",
            f.line()
        );
    }

    #[test]
    fn a_limit_turns_a_verdict_into_cannot_be_judged_and_keeps_the_figures_verdict() {
        let f = Finding::judged("s.", "f", false).unless(Some("too few CPUs".into()));
        assert!(f.cannot_be_judged());
        assert!(
            f.line()
                .ends_with("too few CPUs (on these figures the condition does not hold).")
        );
        let f = Finding::judged("s.", "f", true).unless(None);
        assert!(f.holds());
    }

    #[test]
    fn too_few_cpus_or_a_cpu_bound_point_is_a_limit() {
        let doc = doc_with_cores(2);
        let pts: Vec<&PointResult> = doc.points.iter().collect();
        let why = cpu_limit(&doc, &pts, 9, "8 channel threads and the remote").unwrap();
        assert!(
            why.contains("needs 9 CPUs") && why.contains("has 2"),
            "{why}"
        );
        assert!(why.contains("this machine's CPUs, not the design"), "{why}");
        assert_eq!(cpu_limit(&doc, &pts, 2, "two"), None);
        let mut doc = doc_with_cores(64);
        doc.points[0]
            .warnings
            .push(format!("{CPU_BOUND} 3.0 of its threads were runnable"));
        let pts: Vec<&PointResult> = doc.points.iter().collect();
        let why = cpu_limit(&doc, &pts, 9, "x").unwrap();
        assert!(why.starts_with("1 of its"), "{why}");
        assert_eq!(cpu_bound(&pts[1..]), 0);
    }

    #[test]
    fn the_section_counts_the_verdicts() {
        let s = section(&[
            Finding::judged("a.", "1", true),
            Finding::judged("b.", "2", false),
            Finding::cannot("c.", "3", "why"),
        ]);
        assert!(
            s.starts_with(
                "Each of the seed's findings, judged on this run's figures by the condition it \
                 states: 1 holds, 1 does not hold here, 1 cannot be judged on this machine."
            ),
            "{s}"
        );
        assert_eq!(
            s.lines().filter(|l| l.starts_with("- The seed: ")).count(),
            3
        );
    }
}
