//! The seed's figures ("SIS8300 performance", i7-3555LE, up to six SIS8300-L/L2/KU
//! boards), as the study's tables and plots show them beside ours.

/// Test 1 per-board speed, MB/s: `(config, seed per board in words, per-board
/// mean, common-window aggregate)`.
pub const TEST1: [(&str, &str, f64, f64); 4] = [
    ("l2", "621.7", 621.7, 621.7),
    ("ku", "1249.2", 1249.2, 1249.2),
    ("5l2", "575.5–583.3", 579.6, 2877.0),
    ("ku+5l2", "KU 1025.3; L2 507.9–513.4", 511.0, 3047.0),
];

/// The KU board's speed among six, MB/s.
pub const TEST1_KU_OF_6: f64 = 1025.3;

/// Test 2, 5 L/L2 boards: `(samples, dur ms range, MB/s range, mean MB/s)`.
pub const TEST2: [(usize, &str, &str, f64); 3] = [
    (300_000, "1.2–1.3", "459.9–480.5", 467.4),
    (840_000, "3.5", "480.6–482.4", 481.5),
    (3_000_000, "10.6–11.0", "545.1–565.9", 557.8),
];

/// Test 3, 6 MB on 5 boards: `(func, factor, MB/s range, mean MB/s)`.
pub const TEST3: [(&str, usize, &str, f64); 7] = [
    ("func_decsca", 1, "285.9–364.7", 305.4),
    ("func_dec", 1, "678.5–865.2", 765.2),
    ("func_dec", 10, "3582.1–4365.5", 3943.8),
    ("func_sca", 1, "279.3–335.1", 302.0),
    ("func_no_decsca", 1, "755.6–1011.0", 907.1),
    ("func_umn2double", 1, "270.4–332.2", 298.3),
    ("func_smn2double", 1, "261.0–338.0", 290.1),
];

/// The seed's readout rows in test 3, MB/s.
pub const TEST3_READOUT: &str = "526.5–568.7";

/// Test 4 CPU % (`top`, 0.5 s, 100 % = one core of four threads): `(func, boards,
/// samples, poll %, irq %)`; `None` where the seed gives no figure.
/// `(func, boards, samples, poll %, irq %)`.
pub type CpuCase = (&'static str, usize, usize, Option<f64>, Option<f64>);

/// The seed's 900000 × 10 conversion row (17 % / 100 %) repeats the readout's and
/// is left out as a probable copy-paste error.
pub const TEST4: [CpuCase; 13] = [
    ("func_readout", 1, 300_000, Some(17.0), Some(4.0)),
    ("func_readout", 1, 3_000_000, Some(17.0), None),
    ("func_readout", 1, 6_000_000, Some(17.0), None),
    ("func_readout", 1, 9_000_000, Some(17.0), None),
    // The seed's "30000 samples × 10, 5 AMCs" runs used -S 3000000 (6 MB).
    ("func_readout", 5, 3_000_000, Some(100.0), Some(44.0)),
    ("func_readout", 5, 6_000_000, Some(100.0), None),
    ("func_readout", 5, 9_000_000, Some(100.0), None),
    ("func_umn2double", 1, 30_000, Some(15.0), None),
    ("func_umn2double", 1, 300_000, Some(23.0), None),
    ("func_umn2double", 1, 3_000_000, Some(62.0), None),
    ("func_umn2double", 5, 30_000, Some(90.0), None),
    ("func_umn2double", 5, 300_000, Some(111.0), None),
    ("func_umn2double", 5, 3_000_000, Some(250.0), None),
];

/// The seed's CPU figure for a case, poll or irq.
pub fn cpu(func: &str, boards: usize, samples: usize, irq: bool) -> Option<f64> {
    TEST4
        .iter()
        .find(|(f, b, s, _, _)| *f == func && *b == boards && *s == samples)
        .and_then(|&(_, _, _, p, i)| if irq { i } else { p })
}

/// The seed's perf top symbols per case (test 4).
pub const PROFILES: [(&str, &str); 6] = [
    (
        "readout, 1 board, 0.6 MB, poll",
        "native_write_msr_safe 15.82 %, do_sync_read 6.93 %, perf_pmu_sched_task 6.86 %, copy_user_enhanced_fast_string 6.26 %, ioread32 6.08 %",
    ),
    (
        "readout, 1 board, 0.6 MB, irq",
        "copy_user_enhanced_fast_string 45.91 %, kmem_cache_alloc_node 25.17 %, sis8300_ioctl 12.48 %, cpuacct_charge 11.17 %, flush_tlb_mm_range 3.12 %",
    ),
    (
        "readout, 5 boards, 6 MB, poll",
        "copy_user_enhanced_fast_string 41.04 %, ioread32 14.21 %",
    ),
    (
        "readout, 5 boards, 6 MB, irq",
        "copy_user_enhanced_fast_string 78.40 %, do_lookup_x 6.38 %, __find_get_page 6.17 %, tg_load_down 1.75 %",
    ),
    (
        "u→double, 1 board, 0.6 MB, poll",
        "func_umn2double 37.22 %, ioread32 10.68 %, do_lookup_x 8.12 %, __audit_syscall_exit 6.45 %",
    ),
    (
        "u→double, 5 boards, 0.6 MB, poll",
        "func_umn2double 37.79 %, ioread32 14.92 %, native_write_msr_safe 3.26 %, copy_user_enhanced_fast_string 2.71 %",
    ),
];
