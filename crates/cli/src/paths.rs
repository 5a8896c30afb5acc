//! Output paths checked before anything is measured: a sweep that runs for an hour
//! must not find out at the end that its `--export-html` folder does not exist.
//!
//! Every check names the flag and the path as the user gave them. Nothing is created
//! or changed: a probe file with a random name is made in the folder and removed at
//! once, as the atomic writes of the exports will make theirs.

use std::path::{Path, PathBuf};

/// An output file of `flag` (`--export-json`), where it leads
/// ([`xferbench_report::output::target`]): `-` (stdout) is always fine; a regular file
/// (or a new one, or a symbolic link's target) is refused when its folder does not
/// exist or takes no new file; an existing FIFO, device or socket when it cannot be
/// opened for writing; a folder always.
pub fn file(flag: &str, given: &Path) -> Result<(), String> {
    use xferbench_report::output::{Target, target};
    let at = |why: String| format!("{flag} {}: {why}", given.display());
    match target(given) {
        Ok(Target::Stdout) => Ok(()),
        Ok(Target::Replace(path)) => probe_folder(parent(&path)).map_err(at),
        Ok(Target::InPlace(path)) => writable_in_place(&path).map_err(at),
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
            Err(at("is a folder; give a file name".into()))
        }
        Err(e) => Err(at(e.to_string())),
    }
}

/// An existing FIFO, device or socket that is written in place. A FIFO is not
/// opened (that waits for its reader, who may come later); a socket cannot be
/// opened at all.
fn writable_in_place(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = std::fs::metadata(path)
        .map_err(|e| e.to_string())?
        .file_type();
    if kind.is_socket() {
        return Err("is a socket; give a file, a FIFO or a device".into());
    }
    if kind.is_fifo() {
        return Ok(());
    }
    appendable(path)
}

/// A file the program derives from the user's `given` path for `flag` (the JSON Lines
/// journal `r.json.jsonl` beside `--export-json r.json`): the message says which
/// file it is, since the user never typed its name.
pub fn derived(flag: &str, given: &Path, derived: &Path, what: &str) -> Result<(), String> {
    let at = |why: String| {
        format!(
            "{flag} {}: cannot write {what} {} beside it: {why}",
            given.display(),
            derived.display()
        )
    };
    if derived.is_dir() {
        return Err(at("it is a folder".into()));
    }
    probe_folder(parent(derived)).map_err(at)?;
    appendable(derived).map_err(at)
}

/// A file written in place (not replaced atomically), such as `--jsonl FILE`: its
/// folder takes new files and, when it exists, it may be written.
pub fn file_in_place(flag: &str, given: &Path) -> Result<(), String> {
    file(flag, given)?;
    match xferbench_report::output::target(given) {
        Ok(xferbench_report::output::Target::Replace(path)) => {
            appendable(&path).map_err(|why| format!("{flag} {}: {why}", given.display()))
        }
        _ => Ok(()),
    }
}

/// An output folder of `flag` (`--out DIR`): an existing folder that takes new files,
/// or one that can be created (its nearest existing ancestor is a folder that takes
/// new files).
pub fn folder(flag: &str, given: &Path) -> Result<(), String> {
    let at = |why: String| format!("{flag} {}: {why}", given.display());
    if given.exists() {
        if !given.is_dir() {
            return Err(at("exists and is not a folder".into()));
        }
        return probe_folder(given).map_err(at);
    }
    let mut ancestor: PathBuf = given.to_path_buf();
    loop {
        ancestor = match ancestor.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if ancestor.exists() {
            break;
        }
    }
    if !ancestor.is_dir() {
        return Err(at(format!(
            "cannot be created: {} is not a folder",
            ancestor.display()
        )));
    }
    probe_folder(&ancestor).map_err(|why| at(format!("cannot be created: {why}")))
}

fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The folder exists and a new file can be made in it.
fn probe_folder(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        return Err(format!("the folder {} does not exist", dir.display()));
    }
    if !dir.is_dir() {
        return Err(format!("{} is not a folder", dir.display()));
    }
    tempfile::Builder::new()
        .prefix(".xferbench-probe-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| format!("cannot create a file in {}: {e}", dir.display()))
}

/// An existing file may be opened for writing (without changing it).
fn appendable(path: &Path) -> Result<(), String> {
    if !path.exists() {
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map(drop)
        .map_err(|e| format!("cannot be written: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_folder_is_named_with_the_flag_and_the_given_path() {
        let dir = tempfile::tempdir().unwrap();
        let given = dir.path().join("nope/r.html");
        let e = file("--export-html", &given).unwrap_err();
        assert!(
            e.starts_with(&format!("--export-html {}: ", given.display())),
            "{e}"
        );
        assert!(e.contains("does not exist"), "{e}");
        assert!(file("--export-html", &dir.path().join("r.html")).is_ok());
        let e = file("--export-csv", dir.path()).unwrap_err();
        assert!(e.contains("is a folder"), "{e}");
        // Nothing is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_derived_file_says_it_is_derived() {
        let dir = tempfile::tempdir().unwrap();
        let given = dir.path().join("r.json");
        let journal = dir.path().join("r.json.jsonl");
        std::fs::create_dir(&journal).unwrap();
        let e = derived("--export-json", &given, &journal, "its journal").unwrap_err();
        assert!(
            e.starts_with(&format!(
                "--export-json {}: cannot write its journal",
                given.display()
            )),
            "{e}"
        );
    }

    #[test]
    fn a_folder_to_create_needs_a_writable_ancestor() {
        let dir = tempfile::tempdir().unwrap();
        assert!(folder("--out", &dir.path().join("a/b/c")).is_ok());
        assert!(!dir.path().join("a").exists(), "nothing is created");
        let file_there = dir.path().join("f");
        std::fs::write(&file_there, "").unwrap();
        let e = folder("--out", &file_there).unwrap_err();
        assert!(e.contains("not a folder"), "{e}");
        let e = folder("--out", &file_there.join("sub")).unwrap_err();
        assert!(e.contains("is not a folder"), "{e}");
        let e = folder("--out", Path::new("/proc/xferbench-out")).unwrap_err();
        assert!(
            e.starts_with("--out /proc/xferbench-out: cannot be created"),
            "{e}"
        );
    }
}
