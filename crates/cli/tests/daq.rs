//! `xferbench daq`: the original's flags on the board model, every readout path and
//! end-of-acquisition mode with the sample check, and bad values refused with a
//! message naming the flag.

mod common;

use predicates::prelude::*;
use std::time::Duration;

fn daq(args: &[&str]) -> assert_cmd::assert::Assert {
    crate::common::xferbench()
        .arg("daq")
        .args(args)
        .timeout(Duration::from_secs(120))
        .assert()
}

#[test]
fn the_parameter_block_and_rows_are_the_originals() {
    let out = daq(&[
        "/dev/sis8300-6",
        "b7",
        "-S",
        "100001",
        "-N",
        "2",
        "-A",
        "99",
        "--link",
        "unthrottled",
        "--verify",
    ])
    .success()
    .get_output()
    .stdout
    .clone();
    let text = String::from_utf8(out).unwrap();
    for line in [
        "Parameters:",
        " function        99",
        " access          0",
        " nsamples        100016",
        " nbytes_raw      200032 b (0.2 MB)",
        " nbytes          400064 b (0.4 MB)",
        " nreads          2",
        " scale_factor    1.000000",
        " ndevices        2",
        "           func,             dev,       size [MB],      start [ms],        end [ms],        dur [ms],    speed [MB/s]",
        "Aggregate over the common window:",
        "Verify: 400064 samples checked, 0 mismatches",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    for f in [
        "func_readout",
        "func_decsca",
        "func_dec",
        "func_sca",
        "func_no_decsca",
        "func_umn2double",
        "func_smn2double",
        "func_umn2float",
        "func_smn2float",
    ] {
        assert_eq!(
            text.lines()
                .filter(|l| l.trim_start().starts_with(&format!("{f},"))
                    && (l.contains(" b7,") || l.contains("/dev/sis8300-6,")))
                .count(),
            2,
            "{f}: one row per board"
        );
    }
}

#[test]
fn every_readout_path_and_daq_end_reads_verified_samples() {
    for access in ["0", "1"] {
        for intr in [false, true] {
            let mut args = vec![
                "b0",
                "b1",
                "-S",
                "50000",
                "-B",
                access,
                "-l",
                "3",
                "--trigger",
                "100",
                "--verify",
                "-A",
                "5",
                "--kernels",
                "improved",
            ];
            if intr {
                args.push("-i");
            }
            let out = daq(&args).success().get_output().stdout.clone();
            let text = String::from_utf8(out).unwrap();
            assert!(text.contains(" loop            3"), "{text}");
            assert_eq!(text.contains(" daq_intr        1"), intr);
            assert!(text.contains("acquisitions    6"), "{text}");
            assert!(
                text.contains("Verify: 300000 samples checked, 0 mismatches"),
                "{text}"
            );
        }
    }
}

#[test]
fn the_write_pattern_function_writes_and_checks_the_boards() {
    daq(&[
        "b0",
        "-S",
        "4096",
        "-A",
        "100",
        "--link",
        "unthrottled",
        "--verify",
    ])
    .success()
    .stdout(
        predicate::str::contains("func_writepatt").and(predicate::str::contains("0 mismatches")),
    );
}

#[test]
fn bad_values_are_refused_naming_the_flag() {
    for (args, flag) in [
        (vec!["b0", "-B", "2"], "-B 2"),
        (vec!["b0", "-A", "9"], "-A 9"),
        (vec!["b0", "-f", "0"], "-f 0"),
        (vec!["b0", "-S", "100", "-o", "200"], "-o 200"),
        (vec!["b0", "-N", "0"], "-N 0"),
        (vec!["b0", "-S", "0"], "-S 0"),
        (vec!["b0", "--link", "fast"], "--link"),
        (vec!["b0", "b1", "--link", "l2,ku,ku"], "--link"),
        (vec!["b0", "--bus", "lots"], "--bus"),
        (vec!["b0", "--trigger", "0"], "--trigger"),
        (vec!["b0", "-F", "nan"], "-F"),
    ] {
        daq(&args).code(2).stderr(predicate::str::contains(flag));
    }
    daq(&[]).code(2);
}

#[test]
fn the_run_is_exported_and_recorded_as_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("daq.json");
    let csv = dir.path().join("daq.csv");
    let history = dir.path().join("history.sqlite");
    let mut cmd = crate::common::xferbench();
    cmd.env("XFERBENCH_HISTORY", &history)
        .args(["daq", "b0", "b1", "-S", "4096", "--link", "unthrottled"])
        .args(["--no-limits", "--quiet", "--export-json"])
        .arg(&json)
        .arg("--export-csv")
        .arg(&csv)
        .timeout(Duration::from_secs(120))
        .assert()
        .success()
        .stdout("");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["context"]["settings"]["workload"], "daq");
    assert_eq!(doc["points"][0]["params"]["devices"], "b0,b1");
    assert!(std::fs::read_to_string(&csv).unwrap().contains("daq"));
    crate::common::xferbench()
        .env("XFERBENCH_HISTORY", &history)
        .args(["history", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("daq"));
}
