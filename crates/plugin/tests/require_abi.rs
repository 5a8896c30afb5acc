//! `XB_REQUIRE_ABI(n)` of `include/xferbench/plugin.h` stops a build against an
//! older header with its message, lets one against this header through, and the
//! header still compiles as C99 (the macro's fallback too) and as C++. Skips, saying
//! why, when no C (or C++) compiler is installed.

use std::path::Path;
use std::process::Command;

/// Compiles `source` (a file named `name`) with `compiler` and `flags` against the
/// repository's header: `None` when the compiler is missing, else the status and
/// stderr.
fn compile(compiler: &str, name: &str, flags: &[&str], source: &str) -> Option<(bool, String)> {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join(name);
    std::fs::write(&src, source).unwrap();
    let out = Command::new(compiler)
        .args(flags)
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "-I"])
        .arg(&include)
        .arg(&src)
        .arg("-o")
        .arg(tmp.path().join("out.o"))
        .output();
    match out {
        Err(e) => {
            println!("skipped: no {compiler} ({e})");
            None
        }
        Ok(o) => Some((
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )),
    }
}

fn requiring(revision: u32) -> String {
    format!(
        "#include <xferbench/plugin.h>\nXB_REQUIRE_ABI({revision});\nXB_REQUIRE_ABI(1);\n\
         int xb_test_symbol(void);\nint xb_test_symbol(void) {{ return XB_OK; }}\n"
    )
}

#[test]
fn a_plugin_that_requires_a_newer_revision_fails_to_compile_with_the_message() {
    let Some((ok, stderr)) = compile("cc", "new.c", &["-std=c11"], &requiring(99)) else {
        return;
    };
    assert!(!ok, "XB_REQUIRE_ABI(99) compiled");
    assert!(
        stderr.contains("xferbench/plugin.h is older than ABI revision 99"),
        "{stderr}"
    );
    let (ok, stderr) = compile("cc", "new.c", &["-std=c99"], &requiring(99)).unwrap();
    assert!(!ok, "XB_REQUIRE_ABI(99) compiled as C99");
    assert!(stderr.contains("xb_abi_revision_too_old"), "{stderr}");
}

#[test]
fn a_plugin_that_requires_this_revision_compiles_as_c11_c99_and_cxx() {
    for std in ["-std=c11", "-std=c99"] {
        let Some((ok, stderr)) = compile("cc", "this.c", &[std], &requiring(2)) else {
            return;
        };
        assert!(ok, "{std}: {stderr}");
    }
    for std in ["-std=c++17", "-std=c++98"] {
        let Some((ok, stderr)) = compile("c++", "this.cc", &[std], &requiring(2)) else {
            return;
        };
        assert!(ok, "{std}: {stderr}");
    }
    let Some((ok, stderr)) = compile("c++", "new.cc", &["-std=c++17"], &requiring(99)) else {
        return;
    };
    assert!(!ok);
    assert!(stderr.contains("older than ABI revision 99"), "{stderr}");
}

#[test]
fn the_header_compiles_as_c99_without_the_macro() {
    let Some((ok, stderr)) = compile(
        "cc",
        "plain.c",
        &["-std=c99"],
        "#include <xferbench/plugin.h>\nint xb_test_symbol(void);\n\
         int xb_test_symbol(void) { return XB_ABI_VERSION; }\n",
    ) else {
        return;
    };
    assert!(ok, "{stderr}");
}
