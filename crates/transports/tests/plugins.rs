//! The example plugins (`examples/plugins/`), built with the one-line commands of
//! their READMEs, pass every check of the conformance suite in this process, through
//! the loader and the C ABI. Skips, saying why, when no C compiler (or, for ZeroMQ,
//! no libzmq headers) is installed; CI installs both.

use std::path::{Path, PathBuf};
use std::process::Command;
use xferbench_transports::conformance::{Check, Verdict, run};
use xferbench_transports::plugin::{PluginHost, PluginTransport};
use xferbench_transports::{Params, Transport};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds `examples/plugins/<dir>/*.c` into a shared library in a temporary folder,
/// removed when the returned guard drops (at the end of the test, passed or failed).
fn build(dir: &str, libs: &[&str]) -> Option<(tempfile::TempDir, PathBuf)> {
    let out = tempfile::Builder::new()
        .prefix("xb-plugins-test-")
        .tempdir()
        .unwrap();
    let lib = out
        .path()
        .join(format!("libxb_{}.so", dir.replace('-', "_")));
    let sources: Vec<PathBuf> = std::fs::read_dir(root().join("examples/plugins").join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    let r = Command::new("cc")
        .args([
            "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-I",
        ])
        .arg(root().join("include"))
        .arg("-o")
        .arg(&lib)
        .args(&sources)
        .args(libs)
        .output();
    match r {
        Err(e) => {
            eprintln!("skipped: no C compiler (cc: {e}); install gcc");
            None
        }
        Ok(o) if !o.status.success() => {
            let stderr = String::from_utf8_lossy(&o.stderr);
            if stderr.contains("zmq.h") {
                eprintln!("skipped: no libzmq headers; apt-get install libzmq3-dev");
                return None;
            }
            panic!("building {dir} failed:\n{stderr}");
        }
        Ok(_) => Some((out, lib)),
    }
}

fn suite(lib: &Path, params: &[(&str, &str)]) {
    let params: Params = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let host = PluginHost {
        scope: format!("xbtest{}", std::process::id()),
        io_timeout: std::time::Duration::from_secs(10),
        listen_host: None,
    };
    let t = PluginTransport::open(&format!("plugin:{}", lib.display()), &params, &host)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    for c in Check::ALL {
        match run(c, &t) {
            Ok(Verdict::Pass(_)) | Ok(Verdict::Skip(_)) => {}
            Err(e) => failures.push(format!("{} ({}): {e}", c.name(), t.name())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_pipe_example_conforms() {
    if let Some((_dir, lib)) = build("pipe", &[]) {
        suite(&lib, &[]);
        suite(&lib, &[("wait", "poll")]);
    }
}

#[test]
fn the_posix_mq_example_conforms() {
    if let Some((_dir, lib)) = build("posix-mq", &["-lrt"]) {
        suite(&lib, &[]);
        suite(&lib, &[("depth", "2"), ("max_message", "64")]);
    }
}

#[test]
fn the_zeromq_example_conforms() {
    if let Some((_dir, lib)) = build("zeromq", &["-lzmq"]) {
        suite(&lib, &[]);
        suite(&lib, &[("hwm", "4")]);
    }
}
