//! The Rust mirror of `include/xferbench/plugin.h` has the header's layout: a C
//! compiler prints every structure's size and every member's offset, and they must
//! equal Rust's. Skips, saying why, when no C compiler is installed.

use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::Command;
use xferbench_plugin::abi::*;

fn c_layout() -> Option<Vec<(String, usize)>> {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = dir.join("layout.c");
    let mut body = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <xferbench/plugin.h>\n\
         #define S(t) printf(#t \" %zu\\n\", sizeof(t));\n\
         #define O(t, m) printf(#t \".\" #m \" %zu\\n\", offsetof(t, m));\n\
         int main(void) {\n",
    );
    for line in C_CHECKS {
        body.push_str(line);
        body.push('\n');
    }
    body.push_str("printf(\"XB_ABI_VERSION %d\\n\", XB_ABI_VERSION); return 0; }\n");
    std::fs::write(&src, body).unwrap();
    let exe = dir.join("layout");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = match Command::new(&cc)
        .arg("-std=c99")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-I")
        .arg(&include)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: no C compiler ({cc}: {e}); install gcc to check the ABI layout");
            return None;
        }
    };
    assert!(
        built.status.success(),
        "the header does not compile: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let (k, v) = l.rsplit_once(' ').unwrap();
                (k.to_string(), v.parse().unwrap())
            })
            .collect(),
    )
}

const C_CHECKS: &[&str] = &[
    "S(xb_error)",
    "S(xb_choice) O(xb_choice, name) O(xb_choice, help)",
    "S(xb_param) O(xb_param, name) O(xb_param, kind) O(xb_param, default_value) O(xb_param, help) O(xb_param, min) O(xb_param, max) O(xb_param, choices) O(xb_param, choice_count)",
    "S(xb_value) O(xb_value, name) O(xb_value, text) O(xb_value, number)",
    "S(xb_host) O(xb_host, abi_version) O(xb_host, scope) O(xb_host, listen_host)",
    "S(xb_transport) O(xb_transport, name) O(xb_transport, description) O(xb_transport, max_message) O(xb_transport, flags) O(xb_transport, params) O(xb_transport, param_count)",
    "O(xb_transport, create) O(xb_transport, destroy) O(xb_transport, listen) O(xb_transport, accept) O(xb_transport, close_listener) O(xb_transport, connect)",
    "O(xb_transport, send) O(xb_transport, flush) O(xb_transport, recv) O(xb_transport, close_send) O(xb_transport, close)",
    "O(xb_transport, loan) O(xb_transport, commit) O(xb_transport, borrow) O(xb_transport, release) O(xb_transport, reach)",
    "S(xb_plugin) O(xb_plugin, abi_version) O(xb_plugin, name) O(xb_plugin, version) O(xb_plugin, transports) O(xb_plugin, transport_count) O(xb_plugin, cleanup)",
];

fn rust_layout() -> Vec<(String, usize)> {
    macro_rules! s {
        ($c:literal, $t:ty) => {
            ($c.to_string(), size_of::<$t>())
        };
    }
    macro_rules! o {
        ($c:literal, $t:ty, $m:ident) => {
            (format!("{}.{}", $c, stringify!($m)), offset_of!($t, $m))
        };
    }
    vec![
        s!("xb_error", XbError),
        s!("xb_choice", XbChoice),
        o!("xb_choice", XbChoice, name),
        o!("xb_choice", XbChoice, help),
        s!("xb_param", XbParam),
        o!("xb_param", XbParam, name),
        o!("xb_param", XbParam, kind),
        o!("xb_param", XbParam, default_value),
        o!("xb_param", XbParam, help),
        o!("xb_param", XbParam, min),
        o!("xb_param", XbParam, max),
        o!("xb_param", XbParam, choices),
        o!("xb_param", XbParam, choice_count),
        s!("xb_value", XbValue),
        o!("xb_value", XbValue, name),
        o!("xb_value", XbValue, text),
        o!("xb_value", XbValue, number),
        s!("xb_host", XbHost),
        o!("xb_host", XbHost, abi_version),
        o!("xb_host", XbHost, scope),
        o!("xb_host", XbHost, listen_host),
        s!("xb_transport", XbTransport),
        o!("xb_transport", XbTransport, name),
        o!("xb_transport", XbTransport, description),
        o!("xb_transport", XbTransport, max_message),
        o!("xb_transport", XbTransport, flags),
        o!("xb_transport", XbTransport, params),
        o!("xb_transport", XbTransport, param_count),
        o!("xb_transport", XbTransport, create),
        o!("xb_transport", XbTransport, destroy),
        o!("xb_transport", XbTransport, listen),
        o!("xb_transport", XbTransport, accept),
        o!("xb_transport", XbTransport, close_listener),
        o!("xb_transport", XbTransport, connect),
        o!("xb_transport", XbTransport, send),
        o!("xb_transport", XbTransport, flush),
        o!("xb_transport", XbTransport, recv),
        o!("xb_transport", XbTransport, close_send),
        o!("xb_transport", XbTransport, close),
        o!("xb_transport", XbTransport, loan),
        o!("xb_transport", XbTransport, commit),
        o!("xb_transport", XbTransport, borrow),
        o!("xb_transport", XbTransport, release),
        o!("xb_transport", XbTransport, reach),
        s!("xb_plugin", XbPlugin),
        o!("xb_plugin", XbPlugin, abi_version),
        o!("xb_plugin", XbPlugin, name),
        o!("xb_plugin", XbPlugin, version),
        o!("xb_plugin", XbPlugin, transports),
        o!("xb_plugin", XbPlugin, transport_count),
        o!("xb_plugin", XbPlugin, cleanup),
        ("XB_ABI_VERSION".to_string(), XB_ABI_VERSION as usize),
    ]
}

#[test]
fn every_structure_has_the_headers_size_and_offsets() {
    let Some(c) = c_layout() else { return };
    let rust = rust_layout();
    assert_eq!(c.len(), rust.len(), "C printed {c:?}");
    for ((cn, cv), (rn, rv)) in c.iter().zip(&rust) {
        assert_eq!(cn, rn, "the checks are listed in the same order");
        assert_eq!(cv, rv, "{cn}: C says {cv}, Rust says {rv}");
    }
}

#[test]
fn the_header_compiles_as_c_plus_plus_and_pedantic_c() {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = dir.join("only.c");
    std::fs::write(
        &src,
        "#include <xferbench/plugin.h>\nint main(void) { return XB_OK; }\n",
    )
    .unwrap();
    for (compiler, extra) in [
        ("cc", vec!["-std=c99", "-pedantic"]),
        ("c++", vec!["-x", "c++"]),
    ] {
        let out = match Command::new(compiler)
            .args(&extra)
            .args(["-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
            .arg(&include)
            .arg(&src)
            .output()
        {
            Ok(o) => o,
            Err(e) => {
                eprintln!("skipped {compiler}: {e}");
                continue;
            }
        };
        assert!(
            out.status.success(),
            "{compiler}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_revision_1_transport_is_read_with_its_own_size_and_reaches_this_host_only() {
    // Revision 1's xb_transport ended with `release`; `reach` was appended after it.
    assert_eq!(
        transport_size(1),
        Some(offset_of!(XbTransport, release) + size_of::<Option<ReleaseFn>>())
    );
    assert_eq!(transport_size(2), Some(size_of::<XbTransport>()));
    assert_eq!(transport_size(3), None);
    // Two revision-1 elements packed back to back, the second's bytes all 0xff where
    // the revision-2 `reach` would lie if the stride were wrong.
    let stride = transport_size(1).unwrap();
    let mut bytes = vec![0u8; 2 * stride + 8];
    bytes[stride + offset_of!(XbTransport, max_message)..][..8]
        .copy_from_slice(&77u64.to_ne_bytes());
    bytes[2 * stride..].fill(0xff);
    let array = bytes.as_ptr().cast::<XbTransport>();
    // SAFETY: two elements of revision 1's stride (plus slack) are there.
    let second = unsafe { read_transport(array, 1, 1) };
    assert_eq!(second.max_message, 77);
    assert_eq!(second.reach, XB_REACH_HOST);
}
