//! Exit statuses, the same for every subcommand, and the one usage-error path.
//!
//! | status | meaning |
//! |---:|---|
//! | 0 | success |
//! | 1 | a point, a command or an output failed (finished points are kept) |
//! | 2 | bad usage: a flag, a value or a file the user gave (a value a flag does not take, a negative number included, is refused with a message naming the flag) |
//! | 3 | `--verify` found lost, duplicated, reordered or corrupt data |
//! | 4 | `ab`, `compare` (also `compare --baseline NAME`, against a run of the history): B (NEW) is slower beyond the threshold, significantly |
//! | 5 | `check`: a transport failed a conformance check |
//! | 128 + N | stopped by signal N: 130 SIGINT (Ctrl-C), 143 SIGTERM, 129 SIGHUP; finished points and every output are kept ([`crate::stop`]) |

use xferbench_lab::result::{Outcome, ResultDoc};

/// A point, a command or an output failed.
pub const EXIT_FAILURE: u8 = 1;
/// Invalid arguments (as clap's own).
pub const EXIT_USAGE: u8 = 2;
/// `--verify` found faults.
pub const EXIT_INTEGRITY: u8 = 3;
/// A regression: `ab`'s B or `compare`'s NEW is significantly slower beyond the
/// threshold (distinct from a command that failed, 1).
pub const EXIT_REGRESSION: u8 = 4;
/// `check`: a conformance check failed (distinct from a command that could not run
/// its checks, 1, and from bad usage, 2).
pub const EXIT_CHECK_FAILED: u8 = 5;

/// An error and its causes, each said once: a cause whose text the message before
/// it already includes (`warp link: Connection refused` and then `Connection
/// refused`) is left out.
pub fn chain(e: &anyhow::Error) -> String {
    let mut said = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || said.contains(&text) {
            continue;
        }
        if !said.is_empty() {
            said.push_str(": ");
        }
        said.push_str(&text);
    }
    said
}

/// Prints a usage error with a pointer to the subcommand's help, and returns
/// [`EXIT_USAGE`].
pub fn usage(subcommand: &str, message: impl std::fmt::Display) -> u8 {
    eprintln!("error: {message:#}");
    eprintln!("\nFor more information, try 'xferbench {subcommand} --help' or 'xferbench list'.");
    EXIT_USAGE
}

/// The exit status of a finished plan (a `run` or a study), after its outputs were
/// written: how it ended first, then integrity. Says why on stderr.
pub fn for_doc(doc: &ResultDoc, outputs_failed: bool) -> u8 {
    // A plan that runs until stopped (`kv client 0 10`) completes on the signal.
    let stopped = matches!(doc.outcome, Outcome::Complete) && crate::stop::received();
    match &doc.outcome {
        _ if stopped => {
            eprintln!(
                "stopped ({}): {} finished point(s) kept",
                crate::stop::received_name(),
                doc.points.len()
            );
            crate::stop::interrupted_status()
        }
        Outcome::Interrupted => {
            eprintln!(
                "interrupted ({}): {} finished point(s) kept",
                crate::stop::received_name(),
                doc.points.len()
            );
            crate::stop::interrupted_status()
        }
        Outcome::Failed { error } => {
            eprintln!("error: {error}");
            if !doc.points.is_empty() {
                eprintln!("note: {} finished point(s) kept", doc.points.len());
            }
            EXIT_FAILURE
        }
        Outcome::Complete if outputs_failed => EXIT_FAILURE,
        Outcome::Complete
            if doc
                .points
                .iter()
                .any(|p| p.integrity.is_some_and(|c| !c.is_clean())) =>
        {
            eprintln!(
                "error: {} found lost, duplicated, reordered or corrupt messages (see the integrity column and the points' warnings)",
                if doc.study.is_some() {
                    "the study's verification"
                } else {
                    "--verify"
                }
            );
            EXIT_INTEGRITY
        }
        Outcome::Complete => 0,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_chain_says_each_cause_once() {
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let e = anyhow::Error::new(io).context("warp link: connection refused");
        let e = e.context("warp client: warp link: connection refused");
        assert_eq!(
            super::chain(&e),
            "warp client: warp link: connection refused"
        );
        let e = anyhow::anyhow!("reason").context("what failed");
        assert_eq!(super::chain(&e), "what failed: reason");
    }
}
