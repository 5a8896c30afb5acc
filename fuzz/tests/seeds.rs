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

/// The seeds reach past the validators: each header or block seed is accepted.
#[test]
fn the_header_and_block_seeds_are_accepted() {
    use xferbench_fuzz::{Shared, take, take_u32, take_u64};
    use xferbench_transports::daq::control::parse;
    use xferbench_transports::rpmsg::header::LinkHeader;
    use xferbench_transports::shm::region::RegionHeader;
    let seeds: std::collections::BTreeMap<_, _> = xferbench_fuzz::seeds().into_iter().collect();
    for (_, bytes) in &seeds["shm_region"] {
        let mut d = &bytes[..];
        let (file_len, mode) = (take_u64(&mut d), take_u32(&mut d));
        // SAFETY: a RegionHeader is integers and atomics only.
        let h = unsafe { Shared::<RegionHeader>::from_bytes(d) };
        h.get().validate(file_len, mode).unwrap();
    }
    for (_, bytes) in &seeds["rpmsg_header"] {
        let mut d = &bytes[..];
        let _: [u8; 16] = take(&mut d);
        let _ = take_u32(&mut d);
        let area_len = take_u64(&mut d);
        // SAFETY: a LinkHeader is integers and atomics only.
        let l = unsafe { Shared::<LinkHeader>::from_bytes(d) };
        let magic = l.get().magic.load(std::sync::atomic::Ordering::Relaxed);
        l.get().validate(magic, area_len).unwrap();
    }
    for (_, bytes) in &seeds["daq_control"] {
        let mut d = &bytes[..];
        let (board, samples, last) = (take_u32(&mut d), take_u64(&mut d), take_u64(&mut d));
        parse(d, board, samples, last).unwrap();
    }
}
