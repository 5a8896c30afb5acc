//! Profile outputs: from folded stacks to a folder of files a person can open.
//!
//! - `flamegraph.svg`: an interactive flame graph (`inferno`), stacks root at the
//!   bottom, width ∝ samples; kernel frames marked `_[k]` and coloured apart.
//! - `profile.speedscope.json`: the same stacks for <https://www.speedscope.app>
//!   (drop the file on the page; the "sandwich" view lists functions by self time).
//! - `top-functions.md` / `.csv`: every function's self and total share of the
//!   samples, largest total first: speedscope's sandwich table, offline.
//! - `stacks.folded`: the folded stacks themselves (for `inferno-flamegraph`, diffs).

use crate::study::Table;
use std::io::Write;
use std::path::{Path, PathBuf};
use xferbench_probes::profile::{Folded, speedscope};

/// Rows shown in `top-functions.md` (the CSV has them all).
pub const TOP_ROWS: usize = 40;

/// Writes every output for `folded` into `dir` (created if needed); returns the
/// paths written.
pub fn write_outputs(dir: &Path, folded: &Folded, title: &str) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let mut put = |name: &str, bytes: &[u8]| -> std::io::Result<()> {
        let path = dir.join(name);
        crate::write_atomic(&path, |w| w.write_all(bytes))?;
        written.push(path);
        Ok(())
    };
    put("stacks.folded", folded.lines().join("\n").as_bytes())?;
    put("flamegraph.svg", &flamegraph(folded, title)?)?;
    let ss = serde_json::to_vec(&speedscope::from_folded(folded, title, "nanoseconds"))
        .map_err(std::io::Error::other)?;
    put("profile.speedscope.json", &ss)?;
    put("top-functions.md", top_markdown(folded, title).as_bytes())?;
    put("top-functions.csv", top_csv(folded).as_bytes())?;
    Ok(written)
}

/// The flame graph SVG of `folded`; an empty profile gives inferno's "no samples"
/// picture rather than an error.
pub fn flamegraph(folded: &Folded, title: &str) -> std::io::Result<Vec<u8>> {
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = "ns of CPU".into();
    let lines = folded.lines();
    let mut svg = Vec::new();
    if lines.is_empty() {
        write!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="600" height="60"><text x="10" y="30">{}: no samples</text></svg>"#,
            escape(title)
        )?;
        return Ok(svg);
    }
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg)
        .map_err(std::io::Error::other)?;
    Ok(svg)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `top-functions.md`: the first [`TOP_ROWS`] functions by self share.
pub fn top_markdown(folded: &Folded, title: &str) -> String {
    let top = folded.top_functions();
    let table = Table {
        title: String::new(),
        headers: ["#", "function", "self", "total"]
            .map(String::from)
            .to_vec(),
        rows: top
            .iter()
            .take(TOP_ROWS)
            .enumerate()
            .map(|(i, f)| {
                vec![
                    (i + 1).to_string(),
                    format!("`{}`", f.name.replace('`', "'")),
                    format!("{:.1} %", f.self_share * 100.0),
                    format!("{:.1} %", f.total_share * 100.0),
                ]
            })
            .collect(),
    };
    let mut s = format!(
        "# Top functions: {title}\n\n{:.1} ms of CPU sampled. *Self*: the function itself \
         was running; *total*: it was on the stack (its callees included). By self share: \
         the functions that burn the CPU come first.\n\n{}",
        folded.total() as f64 / 1e6,
        table.to_markdown()
    );
    if top.len() > TOP_ROWS {
        s.push_str(&format!(
            "\n{} more in top-functions.csv.\n",
            top.len() - TOP_ROWS
        ));
    }
    s
}

/// `top-functions.csv`: every function, with weights (CPU ns) and shares.
pub fn top_csv(folded: &Folded) -> String {
    Table {
        title: String::new(),
        headers: [
            "function",
            "self_ns",
            "total_ns",
            "self_share",
            "total_share",
        ]
        .map(String::from)
        .to_vec(),
        rows: folded
            .top_functions()
            .into_iter()
            .map(|f| {
                vec![
                    f.name,
                    f.self_samples.to_string(),
                    f.total_samples.to_string(),
                    f.self_share.to_string(),
                    f.total_share.to_string(),
                ]
            })
            .collect(),
    }
    .to_csv()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_output_is_written_and_the_svg_names_the_functions() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("profile");
        let f = Folded::parse("t;main;crc32 7\nt;main;copy 3\n");
        let paths = write_outputs(&dir, &f, "test").unwrap();
        assert_eq!(paths.len(), 5);
        let svg = std::fs::read_to_string(dir.join("flamegraph.svg")).unwrap();
        assert!(svg.contains("crc32") && svg.contains("<svg"));
        let md = std::fs::read_to_string(dir.join("top-functions.md")).unwrap();
        assert!(md.contains("| 1 | `crc32` | 70.0 % | 70.0 % |"), "{md}");
        assert!(md.contains("| 3 | `main` | 0.0 % | 100.0 % |"), "{md}");
    }
}
