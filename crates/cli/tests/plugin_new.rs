//! `xferbench plugin sdk` and `xferbench plugin new`, as an author outside this
//! repository uses them: in a fresh folder, the SDK is installed, a stub written,
//! built with the very commands `plugin new` prints, and checked with `xferbench
//! check`, which it passes. Bad names, an unknown language and a folder in use are
//! usage errors that write nothing.
//!
//! The C stub needs `cc`, `make` and `pkg-config` (the test skips, saying why, when
//! one is missing; CI installs them); the Rust stub needs cargo and crates.io (for
//! `rustix`), and builds into a folder of cargo's target directory.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn xferbench_in(dir: &Path) -> assert_cmd::Command {
    let mut cmd = crate::common::xferbench();
    cmd.current_dir(dir);
    cmd
}

/// Whether `tool` runs here; says why not.
fn have(tool: &str) -> bool {
    match Command::new(tool).arg("--version").output() {
        Ok(_) => true,
        Err(e) => {
            println!("skipped: no {tool} ({e}); install it (CI does)");
            false
        }
    }
}

/// `PATH` with the binary under test first, so that printed commands naming
/// `xferbench` run it.
fn path_with_xferbench() -> std::ffi::OsString {
    let bin = Path::new(crate::common::BIN)
        .parent()
        .unwrap()
        .to_path_buf();
    let mut dirs = vec![bin];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// The commands `plugin new` printed under "Build and check it:".
fn printed_commands(stdout: &str) -> Vec<String> {
    let commands: Vec<String> = stdout
        .lines()
        .skip_while(|l| *l != "Build and check it:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_string())
        .collect();
    assert!(commands.len() >= 3, "no commands printed:\n{stdout}");
    commands
}

/// Runs the printed commands, one shell, as a user pastes them.
fn run_printed(dir: &Path, commands: &[String], env: &[(&str, &std::ffi::OsStr)]) -> String {
    let mut cmd = Command::new("sh");
    cmd.current_dir(dir)
        .arg("-ec")
        .arg(commands.join("\n"))
        .env("PATH", path_with_xferbench());
    crate::common::isolate(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{commands:?} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn install_sdk(dir: &Path) -> PathBuf {
    let out = xferbench_in(dir)
        .args(["plugin", "sdk", "--prefix", "P"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let prefix = dir.join("P").canonicalize().unwrap();
    assert!(stdout.contains(prefix.to_str().unwrap()), "{stdout}");
    for part in [
        "include/xferbench/plugin.h",
        "lib/pkgconfig/xferbench-plugin.pc",
        "share/xferbench/rust/xferbench-plugin/Cargo.toml",
        "share/xferbench/rust/xferbench-plugin/src/lib.rs",
    ] {
        assert!(prefix.join(part).is_file(), "{part} missing");
    }
    prefix
}

#[test]
fn sdk_is_found_by_pkg_config_with_xferbenchs_version() {
    if !have("pkg-config") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let prefix = install_sdk(tmp.path());
    let pc = |arg: &str| {
        let out = Command::new("pkg-config")
            .args([arg, "xferbench-plugin"])
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
            .output()
            .unwrap();
        assert!(out.status.success(), "pkg-config {arg}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(
        pc("--cflags"),
        format!("-I{}", prefix.join("include").display())
    );
    assert_eq!(pc("--modversion"), env!("CARGO_PKG_VERSION"));
    let header = std::fs::read_to_string(prefix.join("include/xferbench/plugin.h")).unwrap();
    let real = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include/xferbench/plugin.h"),
    )
    .unwrap();
    assert_eq!(header, real);
    // Written again, it replaces itself.
    install_sdk(tmp.path());
}

#[test]
fn a_c_stub_builds_with_the_printed_commands_and_passes_check() {
    if !(have("cc") && have("make") && have("pkg-config")) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let prefix = install_sdk(tmp.path());
    let out = xferbench_in(tmp.path())
        .args(["plugin", "new", "demo", "--lang", "c"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("make check"), "no CI step:\n{stdout}");
    let commands = printed_commands(&stdout);
    assert_eq!(commands[0], "cd demo");
    assert!(commands.iter().any(|c| c.contains("--fail-fast")));
    let pkg_config_path = prefix.join("lib/pkgconfig");
    let checked = run_printed(
        tmp.path(),
        &commands,
        &[("PKG_CONFIG_PATH", pkg_config_path.as_os_str())],
    );
    assert!(checked.contains("0 failed"), "{checked}");
    // Nothing but the sources and the library: the stub's sockets have no files.
    let mut files: Vec<String> = std::fs::read_dir(tmp.path().join("demo"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["Makefile", "demo.c", "libdemo.so"]);
    // The CI step.
    run_printed(
        &tmp.path().join("demo"),
        &["make check".to_string()],
        &[("PKG_CONFIG_PATH", pkg_config_path.as_os_str())],
    );
}

#[test]
fn a_c_stub_says_how_to_find_the_sdk_when_pkg_config_does_not_know_it() {
    if !(have("cc") && have("make") && have("pkg-config")) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    xferbench_in(tmp.path())
        .args(["plugin", "new", "demo", "--lang", "c"])
        .assert()
        .success();
    let out = Command::new("make")
        .current_dir(tmp.path().join("demo"))
        .env("PKG_CONFIG_PATH", tmp.path())
        .env("PKG_CONFIG_LIBDIR", tmp.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("plugin sdk --prefix DIR") && stderr.contains("PKG_CONFIG_PATH"),
        "{stderr}"
    );
}

#[test]
fn a_rust_stub_builds_against_the_sdks_crate_and_passes_check() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = install_sdk(tmp.path());
    // Its own target folder inside cargo's, shared by every run of this test.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-new-rust-stub");
    let out = xferbench_in(tmp.path())
        .env("CARGO_TARGET_DIR", &target)
        .args(["plugin", "new", "rdemo", "--lang", "rust", "--sdk", "P"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let manifest = std::fs::read_to_string(tmp.path().join("rdemo/Cargo.toml")).unwrap();
    let crate_dir = prefix.join("share/xferbench/rust/xferbench-plugin");
    assert!(
        manifest.contains(&format!("path = \"{}\"", crate_dir.display())),
        "{manifest}"
    );
    assert!(!tmp.path().join("rdemo/vendor").exists());
    let commands = printed_commands(&stdout);
    assert_eq!(commands[..2], ["cd rdemo", "cargo build --release"]);
    let checked = run_printed(
        tmp.path(),
        &commands,
        &[("CARGO_TARGET_DIR", target.as_os_str())],
    );
    assert!(checked.contains("0 failed"), "{checked}");
}

#[test]
fn a_rust_stub_without_an_sdk_gets_its_own_copy_of_the_crate() {
    let tmp = tempfile::tempdir().unwrap();
    xferbench_in(tmp.path())
        .args(["plugin", "new", "my-link", "--lang", "rust", "--dir", "x/y"])
        .assert()
        .success();
    let dir = tmp.path().join("x/y");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"my-link\""), "{manifest}");
    assert!(
        manifest.contains("path = \"vendor/xferbench-plugin\""),
        "{manifest}"
    );
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(lib.contains("pub struct MyLinkTransport"));
    assert!(lib.contains("const NAME: &'static str = \"my-link\";"));
    assert!(dir.join("vendor/xferbench-plugin/src/glue.rs").is_file());
}

#[test]
fn bad_names_languages_and_folders_are_usage_errors_that_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["", "--lang", "c"], "name is empty"),
        (vec!["a/b", "--lang", "c"], "is a path, not a name"),
        (vec!["my.link", "--lang", "c"], "C identifier"),
        (vec!["9lives", "--lang", "rust"], "start with a letter"),
        (vec!["unix", "--lang", "c"], "built-in transport"),
        (vec!["demo", "--lang", "go"], "possible values: c, rust"),
        (
            vec!["demo", "--lang", "rust", "--sdk", "nowhere"],
            "no SDK there",
        ),
    ] {
        let out = xferbench_in(tmp.path())
            .args(["plugin", "new"])
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);

    // A folder in use is left alone; an empty one is used.
    std::fs::create_dir(tmp.path().join("used")).unwrap();
    std::fs::write(tmp.path().join("used/notes.txt"), "mine").unwrap();
    let out = xferbench_in(tmp.path())
        .args(["plugin", "new", "demo", "--lang", "c", "--dir", "used"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not empty"));
    assert_eq!(
        std::fs::read_dir(tmp.path().join("used")).unwrap().count(),
        1
    );
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    xferbench_in(tmp.path())
        .args(["plugin", "new", "demo", "--lang", "c", "--dir", "empty"])
        .assert()
        .success();
    assert!(tmp.path().join("empty/demo.c").is_file());

    let out = xferbench_in(tmp.path())
        .args(["plugin", "sdk", "--prefix", "used/notes.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a folder"));
}
