//! A child's replies, one JSON value per line of its output, read on a thread of
//! their own so that the parent can wait for them with a bound: the peer processes,
//! the peers an agent runs for us, and a plugin's measuring process speak this way.

use serde::de::DeserializeOwned;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// How long the output of a child that has exited is read for the report it sent
/// before exiting.
pub(crate) const LAST_WORDS: Duration = Duration::from_secs(2);

/// One line of a child's output.
#[derive(Debug)]
pub(crate) enum Line<T> {
    /// A reply.
    Reply(T),
    /// A line that is no reply: the child broke the protocol.
    Garbage(String),
    /// The output ended (or could not be read further).
    Closed,
}

/// Reads `lines` on a thread of their own until they end, each as a reply of type
/// `T`; the thread stops early when the receiver is dropped.
pub(crate) fn read<T, I>(lines: I) -> Receiver<Line<T>>
where
    T: DeserializeOwned + Send + 'static,
    I: IntoIterator<Item = String> + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in lines {
            let line = match serde_json::from_str(&l) {
                Ok(r) => Line::Reply(r),
                Err(_) => Line::Garbage(l),
            };
            if tx.send(line).is_err() {
                return;
            }
        }
        let _ = tx.send(Line::Closed);
    });
    rx
}

/// The report a child that has exited sent before it went: the first reply `pick`
/// takes, read until its output closes (at most [`LAST_WORDS`]). The reader thread
/// may not have passed it on yet when the exit is seen, least of all on a busy
/// machine, so what is already queued is not enough.
pub(crate) fn last_words<T, R>(rx: &Receiver<Line<T>>, pick: impl Fn(T) -> Option<R>) -> Option<R> {
    let until = Instant::now() + LAST_WORDS;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Line::Reply(r)) => {
                if let Some(report) = pick(r) {
                    return Some(report);
                }
            }
            Ok(Line::Garbage(_)) => {}
            Ok(Line::Closed) | Err(_) => return None,
        }
    }
}

/// The lines of a child's piped output, up to its end or the first read error.
pub(crate) fn lines_of(
    out: impl std::io::Read + Send + 'static,
) -> impl Iterator<Item = String> + Send + 'static {
    use std::io::BufRead;
    std::io::BufReader::new(out).lines().map_while(Result::ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_garbage_and_the_end_arrive_in_order() {
        let rx = read::<u32, _>(vec!["1".to_string(), "two".into(), "3".into()]);
        let got: Vec<String> = rx.iter().map(|l| format!("{l:?}")).collect();
        assert_eq!(got, ["Reply(1)", "Garbage(\"two\")", "Reply(3)", "Closed"]);
    }

    #[test]
    fn last_words_wait_for_a_report_still_on_its_way() {
        let (tx, rx) = mpsc::channel();
        let late = std::thread::spawn(move || {
            tx.send(Line::Reply(1u32)).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            tx.send(Line::Reply(42)).unwrap();
            tx.send(Line::Closed).unwrap();
        });
        assert_eq!(last_words(&rx, |r| (r > 10).then_some(r)), Some(42));
        late.join().unwrap();
        let (tx, rx) = mpsc::channel::<Line<u32>>();
        tx.send(Line::Closed).unwrap();
        assert_eq!(last_words(&rx, Some), None);
    }

    #[test]
    fn a_read_error_ends_the_lines() {
        struct Broken(bool);
        impl std::io::Read for Broken {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if std::mem::replace(&mut self.0, true) {
                    return Err(std::io::Error::other("gone"));
                }
                buf[..2].copy_from_slice(b"7\n");
                Ok(2)
            }
        }
        let rx = read::<u32, _>(lines_of(Broken(false)).collect::<Vec<_>>());
        let got: Vec<String> = rx.iter().map(|l| format!("{l:?}")).collect();
        assert_eq!(got, ["Reply(7)", "Closed"]);
    }
}
