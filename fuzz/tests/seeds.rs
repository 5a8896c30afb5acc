//! The committed seed corpora (`fuzz/corpus/<target>/`) are what `src/seed.rs`
//! builds: `XFERBENCH_UPDATE_SEEDS=1 cargo test --manifest-path fuzz/Cargo.toml`
//! writes them; without it, a seed that differs or is missing fails the test.

use std::path::Path;

#[test]
fn the_committed_seed_corpora_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let update = std::env::var_os("XFERBENCH_UPDATE_SEEDS").is_some();
    let mut stale = Vec::new();
    for (target, seeds) in xferbench_fuzz::seeds() {
        let dir = root.join(target);
        assert!(!seeds.is_empty(), "{target} has no seeds");
        for (name, bytes) in seeds {
            let path = dir.join(&name);
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &bytes).unwrap();
            } else if std::fs::read(&path).ok().as_deref() != Some(&bytes[..]) {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "seeds missing or stale (regenerate with XFERBENCH_UPDATE_SEEDS=1): {stale:?}"
    );
}
