//! `xferbench study NAME`: one module per study turns the arguments into the lab's
//! study config, runs it and writes its folder.

mod warp_pipe;

use crate::cli::{StudyArgs, StudyName};
use anyhow::Result;
use std::path::PathBuf;

/// Runs a study and returns the exit status.
pub fn run(args: &StudyArgs) -> Result<u8> {
    match args.name {
        StudyName::WarpPipe => warp_pipe::run(args),
    }
}

/// The folder to write into: `--out`, or `xferbench-<study>-<YYYYmmdd-HHMMSS>` (UTC).
pub fn out_dir(args: &StudyArgs, study: &str) -> PathBuf {
    if let Some(o) = &args.out {
        return o.clone();
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    PathBuf::from(format!(
        "xferbench-{study}-{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    ))
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's
/// algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20_414), (2025, 11, 22));
        assert_eq!(super::civil_from_days(11_016), (2000, 2, 29));
    }
}
