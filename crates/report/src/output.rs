//! Where an output file the user named goes: stdout, a file replaced atomically, or
//! something that is written where it is and never replaced.
//!
//! The rule, for every export and report file (see [`crate::write_atomic`]): `-` is
//! stdout; a symbolic link is followed to its final target and the link kept; a
//! regular file (or nothing yet) is replaced whole by renaming a temporary file over
//! it; a FIFO, a device or a socket is opened for writing and written in place. Only a
//! regular file is ever renamed over, so `--export-md /dev/null` leaves the device
//! node alone, `/dev/full` is an error, and a FIFO's reader gets every byte.

use std::io::Write;
use std::path::{Path, PathBuf};

/// How many symbolic links are followed before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Where an output path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `-`: the process's stdout.
    Stdout,
    /// A regular file, or a path where nothing exists yet (the final target of a
    /// symbolic link, when the path is one): written through a temporary file
    /// renamed over it.
    Replace(PathBuf),
    /// An existing FIFO, character or block device or socket (the final target of a
    /// symbolic link, when the path is one), or a link to an open file under `/proc`
    /// (`/dev/stdout` leads to `/proc/self/fd/1`): opened for appending and written in
    /// place.
    InPlace(PathBuf),
}

/// Where `path` leads: follows symbolic links to their final target. A folder is an
/// error (`IsADirectory`), as is a chain of more than 40 links.
pub fn target(path: &Path) -> std::io::Result<Target> {
    if path.as_os_str() == "-" {
        return Ok(Target::Stdout);
    }
    let mut at = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&at) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Target::Replace(at));
            }
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() && at.starts_with("/proc") {
            // `/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`: the kernel's links to
            // open files (a pipe's has no path to follow) are opened, not followed.
            return match std::fs::metadata(&at) {
                Ok(m) if m.is_dir() => Err(std::io::Error::new(
                    std::io::ErrorKind::IsADirectory,
                    format!("{} is a folder; give a file name", at.display()),
                )),
                _ => Ok(Target::InPlace(at)),
            };
        }
        if kind.is_symlink() {
            // A relative link is relative to the folder holding it; joining an
            // absolute one replaces the folder.
            let link = std::fs::read_link(&at)?;
            at = match at.parent() {
                Some(dir) => dir.join(link),
                None => link,
            };
        } else if kind.is_file() {
            return Ok(Target::Replace(at));
        } else if kind.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                format!("{} is a folder; give a file name", at.display()),
            ));
        } else {
            return Ok(Target::InPlace(at));
        }
    }
    Err(std::io::Error::other(format!(
        "{}: more than {MAX_LINKS} symbolic links",
        path.display()
    )))
}

/// Writes to stdout directly. A closed stdout (`| head`) is not an error.
pub(crate) fn write_stdout(
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(std::io::stdout().lock());
    let written = body(&mut w).and_then(|()| w.flush());
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Opens an existing FIFO, device, socket or `/proc/*/fd/*` link for appending (a
/// file behind `/dev/stdout` keeps what came before), without creating or truncating
/// anything, and writes to it; a FIFO's open waits for its reader as a
/// shell's `>` does. Every write error is returned, the last one from the flush.
pub(crate) fn write_in_place(
    path: &Path,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new().append(true).open(path)?;
    let mut w = std::io::BufWriter::new(file);
    body(&mut w)?;
    w.into_inner()
        .map_err(std::io::IntoInnerError::into_error)
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::{Target, target};
    use crate::write_atomic;
    use std::io::Read as _;
    use std::os::unix::fs::FileTypeExt as _;
    use std::path::Path;

    fn mkfifo(path: &Path) {
        let ok = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mkfifo {}", path.display());
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }

    #[test]
    fn a_regular_file_is_replaced_through_a_rename() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.md");
        assert_eq!(target(&path).unwrap(), Target::Replace(path.clone()));
        std::fs::write(&path, "old").unwrap();
        assert_eq!(target(&path).unwrap(), Target::Replace(path.clone()));
        write_atomic(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(names(dir.path()), ["r.md"]);
    }

    #[test]
    fn a_symlink_is_kept_and_its_target_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let file = dir.path().join("real/r.json");
        std::fs::write(&file, "old").unwrap();
        // A relative link, through a second link: both are followed.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real/r.json", &link).unwrap();
        let link2 = dir.path().join("link2.json");
        std::os::unix::fs::symlink(&link, &link2).unwrap();
        write_atomic(&link2, |w| w.write_all(b"new")).unwrap();
        for l in [&link, &link2] {
            assert!(
                std::fs::symlink_metadata(l)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        // The temporary file was made beside the target, and is gone.
        assert_eq!(names(&dir.path().join("real")), ["r.json"]);
        assert_eq!(names(dir.path()), ["link.json", "link2.json", "real"]);
    }

    #[test]
    fn a_dangling_symlink_gets_its_target_created() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink("made.csv", &link).unwrap();
        write_atomic(&link, |w| w.write_all(b"a,b\n")).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("made.csv")).unwrap(),
            "a,b\n"
        );
    }

    #[test]
    fn a_symlink_loop_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(write_atomic(&a, |w| w.write_all(b"x")).is_err());
        assert_eq!(names(dir.path()), ["a", "b"]);
    }

    #[test]
    fn a_folder_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_atomic(dir.path(), |w| w.write_all(b"x")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::IsADirectory);
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_fifo_is_written_in_place_and_its_reader_gets_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("r.fifo");
        mkfifo(&fifo);
        assert_eq!(target(&fifo).unwrap(), Target::InPlace(fifo.clone()));
        let body: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                std::fs::File::open(&fifo)
                    .unwrap()
                    .read_to_end(&mut got)
                    .unwrap();
                got
            })
        };
        write_atomic(&fifo, |w| w.write_all(&body)).unwrap();
        assert_eq!(reader.join().unwrap(), body);
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(names(dir.path()), ["r.fifo"]);
    }

    #[test]
    fn a_symlink_to_a_fifo_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("r.fifo");
        mkfifo(&fifo);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        assert_eq!(target(&link).unwrap(), Target::InPlace(fifo.clone()));
        let reader = std::thread::spawn(move || {
            let mut got = String::new();
            std::fs::File::open(&fifo)
                .unwrap()
                .read_to_string(&mut got)
                .unwrap();
            got
        });
        write_atomic(&link, |w| w.write_all(b"through the link")).unwrap();
        assert_eq!(reader.join().unwrap(), "through the link");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn dev_null_is_written_and_stays_a_device() {
        let null = Path::new("/dev/null");
        assert_eq!(target(null).unwrap(), Target::InPlace(null.into()));
        write_atomic(null, |w| w.write_all(b"gone")).unwrap();
        let kind = std::fs::symlink_metadata(null).unwrap().file_type();
        assert!(kind.is_char_device());
    }

    #[test]
    fn dev_full_is_an_error_and_stays_a_device() {
        let full = Path::new("/dev/full");
        let e = write_atomic(full, |w| w.write_all(b"no room")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::StorageFull, "{e}");
        let kind = std::fs::symlink_metadata(full).unwrap().file_type();
        assert!(kind.is_char_device());
    }

    #[test]
    fn dev_stdout_is_opened_not_followed_nor_replaced() {
        let stdout = Path::new("/dev/stdout");
        assert_eq!(
            target(stdout).unwrap(),
            Target::InPlace("/proc/self/fd/1".into())
        );
        write_atomic(stdout, |w| w.write_all(b"")).unwrap();
        assert!(
            std::fs::symlink_metadata(stdout)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn a_dash_is_stdout() {
        assert_eq!(target(Path::new("-")).unwrap(), Target::Stdout);
        // A file named `-` in a folder is a file.
        assert_eq!(
            target(Path::new("./-")).unwrap(),
            Target::Replace("./-".into())
        );
        write_atomic(Path::new("-"), |w| w.write_all(b"")).unwrap();
        assert!(!Path::new("-").exists());
    }
}
