//! Records how this build was made, for the result's `context.build`: the profile
//! (`debug`, `release` or a custom one such as `release-lto`) and the optimisation
//! level cargo compiled it with.

use std::path::Path;

fn main() {
    println!("cargo:rustc-env=XFERBENCH_BUILD_PROFILE={}", profile());
    let opt_level = std::env::var("OPT_LEVEL").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=XFERBENCH_OPT_LEVEL={opt_level}");
    println!("cargo:rerun-if-changed=build.rs");
}

/// Cargo tells a build script only `debug` or `release` (`PROFILE`), also for a
/// custom profile that inherits one of them; the profile's own name is the directory
/// cargo builds into: `<target>/[<triple>/]<profile>/build/<package>-<hash>/out`.
fn profile() -> String {
    let from_dir = std::env::var("OUT_DIR").ok().and_then(|out| {
        let mut up = Path::new(&out).ancestors().skip(2);
        let build = up.next()?;
        (build.file_name()? == "build")
            .then(|| up.next()?.file_name()?.to_str().map(String::from))
            .flatten()
    });
    from_dir
        .or_else(|| std::env::var("PROFILE").ok())
        .unwrap_or_else(|| "unknown".into())
}
