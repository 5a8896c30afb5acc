//! A `perf script` recording (16 samples of `xferbench run stream -t pipe`, DWARF
//! call graphs, taken on a VM without a PMU) folded and written as speedscope.

use xferbench_probes::profile::{fold, speedscope};

const SCRIPT: &[u8] = include_bytes!("fixtures/perf-script-stream-pipe.txt");

#[test]
fn the_recorded_script_folds_into_weighted_stacks() {
    let folded = fold::collapse_perf_script(SCRIPT).unwrap();
    // 16 cpu-clock samples of period 1001001 ns.
    assert_eq!(folded.total(), 16 * 1_001_001);
    assert!(!folded.stacks.is_empty());
    // Roots are thread names; the serving loop is on a stack.
    assert!(folded.stacks.iter().all(|(f, _)| f.len() > 1));
    let top = folded.top_functions();
    assert!(
        top.iter().any(|f| f.name.contains("workload::serve")),
        "{:?}",
        top.iter().map(|f| &f.name).collect::<Vec<_>>()
    );
    // Kernel frames are marked.
    assert!(top.iter().any(|f| f.name.ends_with("_[k]")));
    // No frame name was cut at a `;` inside a type (`[u8; 4]`).
    assert!(folded.lines().iter().all(|l| !l.contains("; ")));
    for f in &top {
        assert!(f.self_samples <= f.total_samples);
        assert!(f.total_share <= 1.0 + 1e-12);
    }
    let self_sum: u64 = top.iter().map(|f| f.self_samples).sum();
    assert_eq!(
        self_sum,
        folded.total(),
        "every sample has exactly one leaf"
    );
}

#[test]
fn the_speedscope_file_validates_against_the_schema() {
    let folded = fold::collapse_perf_script(SCRIPT).unwrap();
    let file = speedscope::from_folded(&folded, "fixture", "nanoseconds");
    let json = serde_json::to_value(&file).unwrap();
    speedscope::validate(&json).unwrap();
    let p = &json["profiles"][0];
    assert_eq!(
        p["samples"].as_array().unwrap().len(),
        p["weights"].as_array().unwrap().len()
    );
    assert_eq!(p["endValue"].as_u64(), Some(folded.total()));
    // Round trip through the typed model.
    let back: speedscope::File = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, file);
}

#[test]
fn validation_catches_broken_files() {
    let folded = fold::Folded::parse("t;a;b 2\nt;a 1\n");
    let good = serde_json::to_value(speedscope::from_folded(&folded, "x", "none")).unwrap();
    speedscope::validate(&good).unwrap();
    let mut bad = good.clone();
    bad["profiles"][0]["weights"] = serde_json::json!([1]);
    assert!(speedscope::validate(&bad).unwrap_err().contains("weights"));
    let mut bad = good.clone();
    bad["profiles"][0]["samples"][0] = serde_json::json!([0, 99]);
    assert!(
        speedscope::validate(&bad)
            .unwrap_err()
            .contains("out of range")
    );
    let mut bad = good;
    bad["$schema"] = serde_json::json!("nope");
    assert!(speedscope::validate(&bad).is_err());
}
