//! The example plugins (`examples/plugins/`), built with the one-line commands of
//! their READMEs, pass every check of the conformance suite in this process, through
//! the loader and the C ABI. Skips, saying why, when no C compiler (or, for ZeroMQ,
//! no libzmq headers) is installed; CI installs both.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use xferbench_transports::conformance::{Check, Verdict, run};
use xferbench_transports::plugin::{PluginHost, PluginTransport};
use xferbench_transports::{Params, Transport};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds `examples/plugins/<dir>/*.c` into a shared library, once per test binary.
fn build(dir: &str, libs: &[&str]) -> Option<PathBuf> {
    static OUT: OnceLock<PathBuf> = OnceLock::new();
    let out = OUT.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("xb-plugins-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    });
    let lib = out.join(format!("libxb_{}.so", dir.replace('-', "_")));
    if lib.exists() {
        return Some(lib);
    }
    let sources: Vec<PathBuf> = std::fs::read_dir(root().join("examples/plugins").join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    let tmp = out.join(format!("{dir}.tmp.so"));
    let r = Command::new("cc")
        .args([
            "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-I",
        ])
        .arg(root().join("include"))
        .arg("-o")
        .arg(&tmp)
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
        Ok(_) => {
            std::fs::rename(&tmp, &lib).unwrap();
            Some(lib)
        }
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
    if let Some(lib) = build("pipe", &[]) {
        suite(&lib, &[]);
        suite(&lib, &[("wait", "poll")]);
    }
}

#[test]
fn the_posix_mq_example_conforms() {
    if let Some(lib) = build("posix-mq", &["-lrt"]) {
        suite(&lib, &[]);
        suite(&lib, &[("depth", "2"), ("max_message", "64")]);
    }
}

#[test]
fn the_zeromq_example_conforms() {
    if let Some(lib) = build("zeromq", &["-lzmq"]) {
        suite(&lib, &[]);
        suite(&lib, &[("hwm", "4")]);
    }
}
