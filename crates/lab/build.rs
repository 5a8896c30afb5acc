//! Records how this build was made, for the result's `context.build`: the profile
//! (`debug` or `release`) and the optimisation level cargo compiled it with.

fn main() {
    for (var, name) in [
        ("PROFILE", "XFERBENCH_BUILD_PROFILE"),
        ("OPT_LEVEL", "XFERBENCH_OPT_LEVEL"),
    ] {
        let value = std::env::var(var).unwrap_or_else(|_| "unknown".into());
        println!("cargo:rustc-env={name}={value}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
