//! How the machine and the binary were while a result was measured, in words shared
//! by every output: the build (an unoptimised one says so) and the load (how busy
//! the machine was with other work, and how many points were contended).

use xferbench_lab::result::Context;
use xferbench_probes::contention::PointContention;

/// `release (opt-level 3)`, or `UNOPTIMISED: profile debug, opt-level 1, debug
/// assertions on; …`; `None` for files that predate the record.
pub fn build_line(c: &Context) -> Option<String> {
    let b = c.build.as_ref()?;
    Some(if b.optimised {
        format!("{} (opt-level {})", b.profile, b.opt_level)
    } else {
        format!(
            "UNOPTIMISED: {}; the figures measure unoptimised code",
            b.describe()
        )
    })
}

/// `load average 1.52 → 2.10; none of the 4 points was contended: …`; `None` for
/// files that predate the record.
pub fn load_line(c: &Context) -> Option<String> {
    let l = c.load.as_ref()?;
    let avg = |v: Option<f64>| v.map_or_else(|| "?".to_string(), |v| format!("{v:.2}"));
    Some(format!(
        "load average {} → {}; {}",
        avg(l.load_1m_start),
        avg(l.load_1m_end),
        l.sentence()
    ))
}

/// A point's column: CPUs used by processes outside the run, `contended` when it
/// was; `-` without a reading.
pub fn others_cell(c: Option<&PointContention>) -> String {
    match c {
        None => "-".into(),
        Some(c) if c.contended => format!("{:.2} contended", c.others_cpus),
        Some(c) => format!("{:.2}", c.others_cpus),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;
    use xferbench_probes::build::BuildInfo;

    #[test]
    fn an_unoptimised_build_says_so_and_a_release_one_is_one_line() {
        let mut c = fixture::context("stream", false, "process");
        assert_eq!(build_line(&c), None);
        c.build = Some(BuildInfo {
            profile: "debug".into(),
            opt_level: "1".into(),
            debug_assertions: true,
            optimised: false,
        });
        assert_eq!(
            build_line(&c).unwrap(),
            "UNOPTIMISED: profile debug, opt-level 1, debug assertions on; the figures measure \
             unoptimised code"
        );
        c.build = Some(BuildInfo {
            profile: "release".into(),
            opt_level: "3".into(),
            debug_assertions: false,
            optimised: true,
        });
        assert_eq!(build_line(&c).unwrap(), "release (opt-level 3)");
    }

    #[test]
    fn the_load_line_counts_contended_points() {
        let doc = fixture::contended_doc();
        let line = load_line(&doc.context).unwrap();
        assert!(
            line.starts_with("load average 3.10 → 3.40; contended: 1 of 2 points"),
            "{line}"
        );
        assert_eq!(others_cell(doc.points[0].contention.as_ref()), "0.01");
        assert_eq!(
            others_cell(doc.points[1].contention.as_ref()),
            "1.85 contended"
        );
        assert_eq!(others_cell(None), "-");
    }
}
