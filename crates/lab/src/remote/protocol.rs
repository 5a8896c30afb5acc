//! The control protocol between the measuring side and `xferbench serve`.
//!
//! One JSON object per line over one TCP connection, at most [`MAX_LINE`] bytes
//! with its newline. The agent speaks first:
//!
//! 1. agent → `challenge` (protocol [`VERSION`], a random nonce, whether a token is
//!    required);
//! 2. client → `hello` (its version, its own nonce and, with a token, its proof);
//! 3. agent → `welcome` (its own proof, its host) or `refused` and close.
//!
//! Only then does the agent take requests: `spawn` a role, write a line to a child's
//! `stdin`, read a child's `cpu`, `stop` a child, `time` (clock offset), `status`,
//! `ping` and `bye`. Children's output comes back as `stdout` lines and an `exited`
//! reply. Every request the agent does not understand is answered with `refused`.
//!
//! [`decode`] is the one entry point for bytes from the wire on the agent side: it
//! checks the length and the encoding and never panics.

pub use crate::hosts::HostInfo;
use serde::{Deserialize, Serialize};
use std::io::BufRead;
use xferbench_probes::cpu::CpuSnapshot;

/// The protocol version; both sides must speak the same.
pub const VERSION: u32 = 1;

/// The longest line either side accepts, newline included.
pub const MAX_LINE: usize = 64 * 1024;

/// The agent's default port (iperf3 uses 5201).
pub const DEFAULT_PORT: u16 = 5301;

/// A role the agent starts on request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemoteRole {
    /// A peer of `xferbench run` (control protocol relayed over `stdin`/`stdout`).
    Peer,
    /// The Warp Pipe memory mock; the agent chooses its listening address.
    MemoryMock,
}

/// Client → agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// The answer to the challenge.
    Hello {
        /// The client's protocol version.
        version: u32,
        /// The client's nonce, hex.
        nonce: String,
        /// HMAC-SHA256 proof, hex (absent without a token).
        mac: Option<String>,
        /// The client's host, for the agent's log and the result.
        host: HostInfo,
    },
    /// Start a child in `role`; `spec` is the role's JSON argument (the memory
    /// mock's listening address is replaced by the agent's own choice).
    Spawn {
        /// The role.
        role: RemoteRole,
        /// Its JSON argument, if the role takes one.
        spec: Option<String>,
    },
    /// Write `line` (a newline is appended) to child `id`'s stdin.
    Stdin {
        /// Child.
        id: u32,
        /// The line.
        line: String,
    },
    /// Read child `id`'s CPU usage now.
    Cpu {
        /// Child.
        id: u32,
    },
    /// Stop child `id` (SIGINT, then SIGKILL after a grace period) and reap it.
    Stop {
        /// Child.
        id: u32,
    },
    /// The agent's wall clock now, for the clock offset.
    Time,
    /// Children started and running.
    Status,
    /// Keeps the connection alive.
    Ping,
    /// The client is done: stop everything it started.
    Bye,
}

/// Agent → client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    /// First line from the agent.
    Challenge {
        /// The agent's protocol version.
        version: u32,
        /// The agent's nonce, hex.
        nonce: String,
        /// Whether the client must prove knowledge of the token.
        token: bool,
    },
    /// Authentication succeeded.
    Welcome {
        /// The agent's proof, hex (absent without a token).
        mac: Option<String>,
        /// The agent's host.
        host: HostInfo,
    },
    /// The request (or the connection) was refused; the text says why.
    Refused {
        /// Why.
        message: String,
    },
    /// A child was started.
    Spawned {
        /// Its id in this connection.
        id: u32,
        /// Its process id on the agent's host.
        pid: u32,
    },
    /// One line of a child's stdout (for the memory mock: `listening on ADDR`,
    /// with the address as the client should dial it).
    Stdout {
        /// Child.
        id: u32,
        /// The line, without its newline.
        line: String,
    },
    /// A child exited and was reaped.
    Exited {
        /// Child.
        id: u32,
        /// Raw wait status.
        status: i32,
        /// The tail of its stderr.
        stderr: String,
    },
    /// A child's CPU usage now (`None`: it is gone).
    Cpu {
        /// Child.
        id: u32,
        /// The reading, on the agent's clock.
        snapshot: Option<CpuSnapshot>,
    },
    /// The agent's wall clock, nanoseconds since the Unix epoch.
    Time {
        /// Nanoseconds.
        unix_ns: u64,
    },
    /// What the agent has started.
    Status {
        /// Children started since the agent started.
        spawned: u64,
        /// Children running now.
        running: u64,
    },
    /// Answer to `ping`.
    Pong,
}

impl HostInfo {
    /// This host (the address is filled in from the connection).
    pub fn here() -> HostInfo {
        let uname = rustix::system::uname();
        HostInfo {
            hostname: uname.nodename().to_string_lossy().into_owned(),
            kernel: uname.release().to_string_lossy().into_owned(),
            cpu_model: crate::context::cpu_model_name(),
            address: String::new(),
        }
    }
}

/// Why a control line was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// Longer than [`MAX_LINE`].
    #[error("control line longer than {MAX_LINE} bytes")]
    TooLong,
    /// Not UTF-8.
    #[error("control line is not UTF-8")]
    NotUtf8,
    /// Not a request this agent knows.
    #[error("not a valid request: {0}")]
    Invalid(String),
}

/// Decodes one request line (with or without its newline). Never panics.
pub fn decode(line: &[u8]) -> Result<Request, ProtocolError> {
    if line.len() > MAX_LINE {
        return Err(ProtocolError::TooLong);
    }
    let text = std::str::from_utf8(line).map_err(|_| ProtocolError::NotUtf8)?;
    let text = text.trim_end_matches(['\n', '\r']);
    let mut msg = serde_json::from_str::<Request>(text).map_err(|e| {
        let mut s = e.to_string();
        truncate_chars(&mut s, 200);
        ProtocolError::Invalid(s)
    })?;
    if let Request::Hello { host, .. } = &mut msg {
        // Only for logs: keep it short.
        for f in [
            &mut host.hostname,
            &mut host.kernel,
            &mut host.cpu_model,
            &mut host.address,
        ] {
            truncate_chars(f, 256);
        }
    }
    Ok(msg)
}

/// Decodes one reply line (the measuring side).
pub fn decode_reply(line: &[u8]) -> Result<Reply, ProtocolError> {
    if line.len() > MAX_LINE {
        return Err(ProtocolError::TooLong);
    }
    let text = std::str::from_utf8(line).map_err(|_| ProtocolError::NotUtf8)?;
    serde_json::from_str(text.trim_end_matches(['\n', '\r'])).map_err(|e| {
        let mut s = e.to_string();
        truncate_chars(&mut s, 200);
        ProtocolError::Invalid(s)
    })
}

fn truncate_chars(s: &mut String, max: usize) {
    if let Some((i, _)) = s.char_indices().nth(max) {
        s.truncate(i);
    }
}

/// One message as a line, newline included.
pub fn encode<T: Serialize>(msg: &T) -> Vec<u8> {
    let mut v = serde_json::to_vec(msg).expect("protocol messages serialise");
    v.push(b'\n');
    v
}

/// What [`read_line`] found.
#[derive(Debug)]
pub enum Line {
    /// A line, without its newline.
    Line(Vec<u8>),
    /// The other side closed the connection.
    Eof,
}

/// Reads one line of at most [`MAX_LINE`] bytes; a longer one is an error
/// (`InvalidData`), a read timeout is returned as the I/O error it is.
pub fn read_line(r: &mut impl BufRead) -> std::io::Result<Line> {
    read_line_into(r, &mut Vec::new())
}

/// [`read_line`] keeping a partial line in `pending` across calls, so that a read
/// timeout in the middle of a line loses nothing.
pub fn read_line_into(r: &mut impl BufRead, pending: &mut Vec<u8>) -> std::io::Result<Line> {
    let too_long = || std::io::Error::new(std::io::ErrorKind::InvalidData, ProtocolError::TooLong);
    loop {
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            // Closed (a partial last line is dropped).
            pending.clear();
            return Ok(Line::Eof);
        }
        if let Some(i) = avail.iter().position(|&b| b == b'\n') {
            if pending.len() + i + 1 > MAX_LINE {
                return Err(too_long());
            }
            pending.extend_from_slice(&avail[..i]);
            r.consume(i + 1);
            return Ok(Line::Line(std::mem::take(pending)));
        }
        let n = avail.len();
        pending.extend_from_slice(avail);
        r.consume(n);
        if pending.len() >= MAX_LINE {
            return Err(too_long());
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_parse_error_cut_inside_a_multibyte_character_is_an_error_not_a_panic() {
        // A line the fuzzer found: serde's message about it has a multibyte character
        // across byte 200, where the message is cut for the log.
        let line = include_bytes!("testdata/invalid-request-multibyte-error.bin");
        for l in line.split(|&b| b == b'\n') {
            let _ = decode(l);
            let _ = decode_reply(l);
        }
        let long = format!("{{\"{}\": 1}}", "é".repeat(300));
        assert!(matches!(
            decode(long.as_bytes()),
            Err(ProtocolError::Invalid(_))
        ));
        assert!(matches!(
            decode_reply(long.as_bytes()),
            Err(ProtocolError::Invalid(_))
        ));
    }

    use super::*;

    #[test]
    fn requests_round_trip_and_garbage_is_refused() {
        for r in [
            Request::Spawn {
                role: RemoteRole::Peer,
                spec: None,
            },
            Request::Stdin {
                id: 3,
                line: "{\"cmd\":\"quit\"}".into(),
            },
            Request::Time,
            Request::Bye,
        ] {
            assert_eq!(decode(&encode(&r)).unwrap(), r);
        }
        for bad in [
            &b""[..],
            b"\xff\xfe",
            b"{}",
            b"[1,2]",
            b"{\"op\":\"spawn\",\"role\":\"shell\"}",
            b"null",
        ] {
            assert!(decode(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            decode(&vec![b' '; MAX_LINE + 1]),
            Err(ProtocolError::TooLong)
        );
    }

    #[test]
    fn a_line_longer_than_the_limit_is_an_error() {
        let mut long = vec![b'a'; MAX_LINE + 10];
        long.push(b'\n');
        let mut r = std::io::BufReader::new(&long[..]);
        assert!(read_line(&mut r).is_err());
        let mut r = std::io::BufReader::new(&b"{\"op\":\"ping\"}\nrest"[..]);
        assert!(matches!(read_line(&mut r).unwrap(), Line::Line(l) if l == b"{\"op\":\"ping\"}"));
        assert!(matches!(read_line(&mut r).unwrap(), Line::Eof));
    }
}
