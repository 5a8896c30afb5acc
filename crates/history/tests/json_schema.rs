//! The history's JSON Schemas in `docs/schema/` are the ones the code generates:
//! this test fails when they drift. `XFERBENCH_UPDATE_DOCS=1 cargo test -p
//! xferbench-history --test json_schema` rewrites them.

use std::path::PathBuf;

#[test]
fn documented_history_schemas_match_the_types() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema");
    let update = std::env::var_os("XFERBENCH_UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    for (name, schema) in xferbench_history::json_schema::all() {
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        let path = dir.join(name);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "docs/schema/{stale:?} differ from the types; run \
         `XFERBENCH_UPDATE_DOCS=1 cargo test -p xferbench-history --test json_schema` and commit the result"
    );
}
