//! How the measuring binary was built: recorded in every result (the run's context,
//! the machine's limits, an A/B comparison) so that figures of an unoptimised build
//! say so.

use serde::{Deserialize, Serialize};

/// How the measuring binary was built.
///
/// A build is **optimised** when cargo compiled it at `opt-level` 2 or 3 without
/// debug assertions (`cargo build --release`). Anything else (the `dev` profile of
/// `cargo run`, opt-level 1 with debug assertions here) measures the tool's own
/// unoptimised loops as much as the transport: every run says so, and studies refuse
/// to run on one unless asked (`--allow-debug`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BuildInfo {
    /// Cargo's profile: `release`, `debug` or a custom one (`release-lto`).
    pub profile: String,
    /// The optimisation level: `0`–`3`, `s` or `z`.
    pub opt_level: String,
    /// Whether debug assertions (and overflow checks) were compiled in.
    pub debug_assertions: bool,
    /// opt-level 2 or 3 and no debug assertions.
    pub optimised: bool,
}

impl BuildInfo {
    /// This binary's build.
    pub fn current() -> Self {
        let opt_level = env!("XFERBENCH_OPT_LEVEL").to_string();
        let debug_assertions = cfg!(debug_assertions);
        BuildInfo {
            profile: env!("XFERBENCH_BUILD_PROFILE").to_string(),
            optimised: matches!(opt_level.as_str(), "2" | "3") && !debug_assertions,
            opt_level,
            debug_assertions,
        }
    }

    /// `profile debug, opt-level 1, debug assertions on`.
    pub fn describe(&self) -> String {
        format!(
            "profile {}, opt-level {}, debug assertions {}",
            self.profile,
            self.opt_level,
            if self.debug_assertions { "on" } else { "off" }
        )
    }

    /// The warning an unoptimised build carries on every run and in every output.
    pub fn warning(&self) -> Option<String> {
        (!self.optimised).then(|| {
            format!(
                "unoptimised build ({}): the figures measure unoptimised code, not what a \
                 release build does; build with `cargo build --release`",
                self.describe()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_is_described_as_cargo_made_it() {
        let b = BuildInfo::current();
        assert_eq!(b.debug_assertions, cfg!(debug_assertions));
        assert!(
            ["debug", "release", "release-lto"].contains(&b.profile.as_str()),
            "{b:?}"
        );
        assert_eq!(b.optimised, b.warning().is_none());
        if cfg!(debug_assertions) {
            // `cargo test` without --release: the dev profile.
            let w = b.warning().unwrap();
            assert!(w.starts_with("unoptimised build (profile debug"), "{w}");
            assert!(w.contains("--release"), "{w}");
        }
    }

    #[test]
    fn a_release_build_carries_no_warning() {
        let b = BuildInfo {
            profile: "release".into(),
            opt_level: "3".into(),
            debug_assertions: false,
            optimised: true,
        };
        assert_eq!(b.warning(), None);
        assert_eq!(
            b.describe(),
            "profile release, opt-level 3, debug assertions off"
        );
    }
}
