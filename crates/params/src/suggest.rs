//! The name a user probably meant: `pip` for `pipe`, `pipe_sz` for `pipe_size`.
//!
//! Error messages about an unknown name (a transport, a parameter) add "did you mean
//! `…`?" when one known name is close enough: within an edit distance of a third of
//! the name, rounded up (one for up to three letters), or when the name given is
//! a prefix of exactly one known name. Distances are Levenshtein's (insertions,
//! deletions and substitutions of one character each), case-insensitive.

/// The one candidate closest to `word`, when it is close enough to be what the user
/// meant (see the module doc); `None` when none is, or when two are equally close.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.trim().to_ascii_lowercase();
    if word.is_empty() {
        return None;
    }
    let limit = (word.chars().count().div_ceil(3)).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    let mut tied = false;
    let mut prefixed: Vec<&'a str> = Vec::new();
    for c in candidates {
        let lower = c.to_ascii_lowercase();
        if lower == word {
            return None;
        }
        if lower.starts_with(&word) {
            prefixed.push(c);
        }
        let d = distance(&word, &lower);
        if d > limit {
            continue;
        }
        match best {
            Some((b, _)) if d > b => {}
            Some((b, _)) if d == b => tied = true,
            _ => {
                best = Some((d, c));
                tied = false;
            }
        }
    }
    match best {
        Some((_, c)) if !tied => Some(c),
        _ if prefixed.len() == 1 => Some(prefixed[0]),
        _ => None,
    }
}

/// Levenshtein distance between `a` and `b`, in characters.
fn distance(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRANSPORTS: [&str; 6] = ["shm", "pipe", "unix", "tcp", "iceoryx2", "rpmsg"];

    #[test]
    fn a_typo_names_the_transport_meant() {
        assert_eq!(closest("pip", TRANSPORTS), Some("pipe"));
        assert_eq!(
            closest("Unix", TRANSPORTS),
            None,
            "the same name in another case is no typo"
        );
        assert_eq!(closest("unx", TRANSPORTS), Some("unix"));
        assert_eq!(closest("iceoryx", TRANSPORTS), Some("iceoryx2"));
        assert_eq!(closest("rpmgs", TRANSPORTS), Some("rpmsg"));
        assert_eq!(
            closest("ice", TRANSPORTS),
            Some("iceoryx2"),
            "a prefix of one name"
        );
    }

    #[test]
    fn nothing_close_or_two_as_close_suggest_nothing() {
        assert_eq!(closest("carrier-pigeon", TRANSPORTS), None);
        assert_eq!(closest("", TRANSPORTS), None);
        // `udp` is two edits from `tcp`, beyond the limit of one for three letters.
        assert_eq!(closest("udp", TRANSPORTS), None);
        // Two candidates one edit away: no guess.
        assert_eq!(closest("ab", ["abc", "abd"]), None);
    }

    #[test]
    fn parameter_names_get_the_same_help() {
        let shm = ["wait", "spin_us", "capacity", "batch"];
        assert_eq!(closest("pipe_sz", ["pipe_size"]), Some("pipe_size"));
        assert_eq!(closest("spinus", shm), Some("spin_us"));
        assert_eq!(closest("capacty", shm), Some("capacity"));
        assert_eq!(closest("depth", shm), None);
    }

    #[test]
    fn distances_count_single_character_edits() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("pip", "pipe"), 1);
    }
}
