//! Authentication of a control connection: a shared token, never sent.
//!
//! Each side sends a fresh 32-byte nonce from the OS (`getrandom`). The client
//! proves knowledge of the token with `HMAC-SHA256(token, "xferbench client" ‖
//! agent nonce ‖ client nonce)`, the agent with `HMAC-SHA256(token, "xferbench
//! agent" ‖ client nonce ‖ agent nonce)`; proofs are checked in constant time
//! (`Mac::verify_slice`). Neither proof can be replayed on another connection,
//! since the other side's nonce is new each time.
//!
//! A token file holds the token (surrounding whitespace ignored, at least
//! [`MIN_TOKEN`] bytes). Like ssh with a private key, a file that its group or
//! others may read is refused.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Bytes of a nonce.
pub const NONCE_LEN: usize = 32;

/// The shortest token accepted.
pub const MIN_TOKEN: usize = 16;

const CLIENT_LABEL: &[u8] = b"xferbench client";
const AGENT_LABEL: &[u8] = b"xferbench agent";

/// A shared secret.
#[derive(Clone)]
pub struct Token(Vec<u8>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

impl Token {
    /// A token from its bytes (at least [`MIN_TOKEN`]).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Token, String> {
        let bytes = bytes.into();
        if bytes.len() < MIN_TOKEN {
            return Err(format!(
                "the token is {} bytes long; use at least {MIN_TOKEN} (e.g. `head -c 32 /dev/urandom | base64`)",
                bytes.len()
            ));
        }
        Ok(Token(bytes))
    }

    /// The token's bytes (to hand it to a child process of this user).
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// Reads a token file, refusing one that its group or others can access.
    pub fn from_file(path: &Path) -> Result<Token, String> {
        let meta = std::fs::metadata(path)
            .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "the token file {} is accessible by others (mode {:o}); run `chmod 600 {}`",
                path.display(),
                mode & 0o777,
                path.display()
            ));
        }
        let text = std::fs::read(path)
            .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
        let trimmed = text.trim_ascii();
        Token::new(trimmed).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn mac(&self, label: &[u8], first: &[u8], second: &[u8]) -> Hmac<Sha256> {
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0)
            .expect("HMAC takes keys of any length");
        m.update(label);
        m.update(first);
        m.update(second);
        m
    }

    /// The client's proof.
    pub fn client_proof(&self, agent_nonce: &[u8], client_nonce: &[u8]) -> Vec<u8> {
        self.mac(CLIENT_LABEL, agent_nonce, client_nonce)
            .finalize()
            .into_bytes()
            .to_vec()
    }

    /// Checks the client's proof in constant time.
    pub fn check_client(&self, agent_nonce: &[u8], client_nonce: &[u8], proof: &[u8]) -> bool {
        self.mac(CLIENT_LABEL, agent_nonce, client_nonce)
            .verify_slice(proof)
            .is_ok()
    }

    /// The agent's proof.
    pub fn agent_proof(&self, client_nonce: &[u8], agent_nonce: &[u8]) -> Vec<u8> {
        self.mac(AGENT_LABEL, client_nonce, agent_nonce)
            .finalize()
            .into_bytes()
            .to_vec()
    }

    /// Checks the agent's proof in constant time.
    pub fn check_agent(&self, client_nonce: &[u8], agent_nonce: &[u8], proof: &[u8]) -> bool {
        self.mac(AGENT_LABEL, client_nonce, agent_nonce)
            .verify_slice(proof)
            .is_ok()
    }
}

/// A fresh nonce from the OS.
pub fn nonce() -> Result<[u8; NONCE_LEN], String> {
    let mut n = [0u8; NONCE_LEN];
    getrandom::fill(&mut n).map_err(|e| format!("no random numbers from the OS: {e}"))?;
    Ok(n)
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses hex of exactly `len` bytes.
pub fn unhex(s: &str, len: usize) -> Option<Vec<u8>> {
    if s.len() != 2 * len || !s.is_ascii() {
        return None;
    }
    (0..len)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_proofs_check_only_with_the_same_token_and_nonces() {
        let t = Token::new(*b"0123456789abcdef0123").unwrap();
        let other = Token::new(*b"0123456789abcdef0124").unwrap();
        let (a, c) = (nonce().unwrap(), nonce().unwrap());
        assert_ne!(a, c);
        let p = t.client_proof(&a, &c);
        assert!(t.check_client(&a, &c, &p));
        assert!(!other.check_client(&a, &c, &p));
        assert!(!t.check_client(&c, &a, &p));
        assert!(!t.check_client(&a, &c, &p[..31]));
        let q = t.agent_proof(&c, &a);
        assert_ne!(p, q, "the two directions differ");
        assert!(t.check_agent(&c, &a, &q));
        assert!(!t.check_client(&a, &c, &q));
        assert_eq!(unhex(&hex(&p), 32).unwrap(), p);
        assert!(unhex("zz", 1).is_none() && unhex("0", 1).is_none() && unhex("é0", 1).is_none());
        assert!(Token::new(*b"short").is_err());
        assert_eq!(format!("{t:?}"), "Token(…)");
    }

    #[test]
    fn a_token_file_others_can_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("token");
        std::fs::write(&p, "  a-long-enough-secret-token\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = Token::from_file(&p).unwrap_err();
        assert!(e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let t = Token::from_file(&p).unwrap();
        assert_eq!(t.0, b"a-long-enough-secret-token");
    }
}
