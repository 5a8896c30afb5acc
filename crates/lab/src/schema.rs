//! JSON Schemas of the documents xferbench writes, generated from the types that
//! write them, so the documentation cannot drift from the code: `docs/schema/*.json`
//! are these schemas, and a test fails when they differ.

use schemars::{JsonSchema, schema_for};

/// Every documented document: `(file name under docs/schema/, its schema)`.
pub fn all() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        (
            "result.schema.json",
            of::<crate::result::ResultDoc>(
                "The result document of `run --export-json`/`--json`, every study's `results.json`, and `--json` of `ab`, `rpmsg`, `daq`, `kv client` and `warp client`.",
            ),
        ),
        (
            "compare.schema.json",
            of::<crate::compare::Comparison>("The comparison of `compare --json`."),
        ),
        (
            "profile.schema.json",
            of::<xferbench_probes::profile::ProfileSummary>("The summary of `profile --json`."),
        ),
        (
            "limits.schema.json",
            of::<crate::limits::Limits>("The machine's limits of `limits --json`."),
        ),
    ]
}

fn of<T: JsonSchema>(description: &str) -> serde_json::Value {
    let mut v = serde_json::to_value(schema_for!(T)).expect("a schema serialises");
    if let Some(o) = v.as_object_mut() {
        o.insert("description".into(), description.into());
    }
    v
}
