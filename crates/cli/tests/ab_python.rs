//! `ab` on real programs whose instruction counts differ while their times do not
//! tell: two Python loops of 20,000 and 23,000 iterations. Python's startup dominates
//! their time, so a few runs cannot tell them apart; their instruction counts can,
//! once the counting passes are deterministic (address-space randomisation off and a
//! fixed hash seed: with a random one, `python3`'s count moves by per cents).

mod common;

/// The interpreter itself, not a wrapper script (such as a version manager's shim)
/// that would run under callgrind too.
fn python() -> Option<String> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!path.is_empty()).then_some(path)
}

#[test]
fn python_loops_read_as_more_instructions_and_a_number_of_runs() {
    if common::skip_without_valgrind() {
        return;
    }
    let Some(python) = python() else {
        println!("skipped: python3 is not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = |name: &str, n: u32| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("s = 0\nfor i in range({n}):\n    s += i\n")).unwrap();
        // -S: without the site module, the startup is short under callgrind.
        format!("{python} -S {}", path.display())
    };
    let (a, b) = (script("c.py", 20_000), script("d.py", 23_000));
    let json = dir.path().join("ab.json");
    let out = crate::common::xferbench()
        .env("XFERBENCH_HISTORY", dir.path().join("history.sqlite"))
        // As a user would run it: the counting passes fix the seed themselves.
        .env_remove("PYTHONHASHSEED")
        .args([
            "ab",
            "--runs",
            "3",
            "--warmup",
            "0",
            "--callgrind-runs",
            "2",
            "--no-limits",
            "--threshold",
            "1000",
            "--export-json",
        ])
        .arg(&json)
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let diagnosis = r["ab"]["diagnosis"].as_str().unwrap();
    let signal = &r["ab"]["instructions"];
    let difference = signal["difference"].as_f64().unwrap();
    assert!(
        difference > 0.01 && difference < 0.5,
        "B executes more instructions: {signal}"
    );
    let pmu = xferbench_lab::context::pmu_available();
    if !pmu {
        // Deterministic passes: the counts agree to far better than the difference.
        let noise = signal["noise"].as_f64().unwrap();
        assert!(noise < 0.001, "callgrind counts vary by {noise}: {signal}");
        let notes = r["ab"]["notes"].to_string();
        assert!(
            notes.contains("counted with address-space randomisation off")
                && notes.contains("PYTHONHASHSEED=0"),
            "{notes}"
        );
    }
    if r["ab"]["significant"].as_bool().unwrap() {
        // Three runs told the times apart after all: the instructions still say why.
        println!("time was significant after 3 runs: {diagnosis}");
        assert!(diagnosis.starts_with("more instructions"), "{diagnosis}");
        return;
    }
    assert!(
        diagnosis.starts_with("time inconclusive")
            && diagnosis.contains("% more instructions")
            && diagnosis.contains("expect it slower"),
        "{diagnosis}"
    );
    let runs = signal["suggested_runs"].as_u64().unwrap();
    assert!(diagnosis.contains(&format!("--runs {runs}")), "{diagnosis}");
}
