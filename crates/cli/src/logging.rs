//! Logging to stderr through `tracing`, off unless asked for.
//!
//! The filter comes from, first to last: `-v` (`info`), `-vv` (`debug`), `-vvv`
//! (`trace`); `XFERBENCH_LOG`, which the lab also sets for every child process it
//! starts so peers and remotes log at the parent's level; `RUST_LOG`. Any of these
//! takes `tracing-subscriber`'s `EnvFilter` syntax (`debug`, `xferbench_lab=debug`).

use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;
use xferbench_probes::process::LOG_ENV;

/// The filter for `verbose` `-v`s and the environment, if logging is on.
fn filter(verbose: u8) -> Option<String> {
    let from_env = |name: &str| std::env::var(name).ok().filter(|s| !s.trim().is_empty());
    match verbose {
        0 => from_env(LOG_ENV).or_else(|| from_env("RUST_LOG")),
        1 => Some("info".into()),
        2 => Some("debug".into()),
        _ => Some("trace".into()),
    }
}

/// Installs the stderr logger when logging is on, and passes the filter on to child
/// processes.
pub fn init(verbose: u8) {
    init_with(verbose, None);
}

/// [`init`], logging at `default` when neither `-v` nor the environment says
/// otherwise (`xferbench serve` logs at `info`: its log records who connected and
/// what it refused).
pub fn init_with(verbose: u8, default: Option<&str>) {
    let Some(filter) = filter(verbose).or_else(|| default.map(String::from)) else {
        return;
    };
    let env_filter = EnvFilter::try_new(&filter).unwrap_or_else(|e| {
        eprintln!("warning: ignoring the log filter {filter:?} ({e}); logging at info");
        EnvFilter::new("info")
    });
    let ok = tracing_subscriber::fmt()
        .with_env_filter(env_filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init()
        .is_ok();
    if ok {
        xferbench_probes::process::log_children(filter);
    }
}
