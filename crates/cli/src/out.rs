//! Standard output, with errors that say where they happened.
//!
//! A closed stdout (`xferbench list | head -1`) is not an error: [`is_closed`] tells
//! `main` to exit 0 quietly, as ripgrep and hyperfine do. Any other write error (a
//! full disk: `> /dev/full`) is reported as "cannot write to standard output: …"
//! and exits 1, never a panic.

use std::io::{self, Write};

/// The process's stdout, locked; every error names standard output and keeps its
/// kind.
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

/// See [`stdout`].
pub struct Stdout(io::StdoutLock<'static>);

fn named(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("cannot write to standard output: {e}"))
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(named)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf).map_err(named)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(named)
    }
}

/// Flushes what is left in stdout's buffer before the process exits (the standard
/// library's own flush at exit drops its error).
pub fn flush() -> io::Result<()> {
    stdout().flush()
}

/// True when the error is a write into a closed pipe.
pub fn is_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let kind = c
            .downcast_ref::<io::Error>()
            .map(io::Error::kind)
            .or_else(|| c.downcast_ref::<serde_json::Error>()?.io_error_kind());
        kind == Some(io::ErrorKind::BrokenPipe)
    })
}
