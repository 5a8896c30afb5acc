//! JSON Schemas of what `xferbench history ... --json` prints, generated from the
//! types that print it (`docs/schema/history-*.schema.json`; a test fails when they
//! differ).

use schemars::{JsonSchema, schema_for};

/// Every documented document: `(file name under docs/schema/, its schema)`.
pub fn all() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        (
            "history-list.schema.json",
            of::<Vec<crate::RunRow>>("The runs of `history list --json`, newest first."),
        ),
        (
            "history-show.schema.json",
            of::<crate::RunDetail>("One run of `history show ID --json`."),
        ),
        (
            "history-trend.schema.json",
            of::<crate::Trend>("One point's figure across runs, `history trend --json`."),
        ),
        (
            "history-baselines.schema.json",
            of::<Vec<crate::Baseline>>("The baselines of `history baseline list --json`."),
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
