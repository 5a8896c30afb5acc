//! The peer control protocol's JSON lines: commands a peer reads from its stdin and
//! replies the parent reads from the peer's stdout.
//!
//! Input: text; each line is parsed as a command and as a reply (bytes that are not
//! UTF-8 are replaced, as a lossy reader would).
//!
//! Checked: parsing never panics; whatever parses serialises again (the sending side
//! never panics on a value the receiving side accepted), the line it gives parses
//! to the same value, and that line is stable under a second round trip.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xferbench_lab::peer::{PeerCommand, PeerReply};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        if let Ok(cmd) = PeerCommand::from_line(line) {
            let out = cmd.to_line();
            let back = PeerCommand::from_line(&out).expect("a command's own line parses");
            assert_eq!(back, cmd);
            assert_eq!(back.to_line(), out);
        }
        if let Ok(reply) = PeerReply::from_line(line) {
            let out = reply.to_line();
            let back = PeerReply::from_line(&out).expect("a reply's own line parses");
            assert_eq!(back, reply);
            assert_eq!(back.to_line(), out);
        }
    }
});
