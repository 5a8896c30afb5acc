//! iceoryx2 channels that would wait for good: a connector the listener never
//! accepts, and two threads of one process each waiting for the other (what a run
//! declared hung with `--peer thread` leaves). Both end, and leave no file behind.
//!
//! The tests use a private iceoryx2 domain (a file prefix of their own), so that other
//! tests' files do not count.

use std::io::ErrorKind;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::thread;
use std::time::{Duration, Instant};
use xferbench_transports::iox2::{Iceoryx2, PREFIX_ENV};
use xferbench_transports::{Endpoint, Listener, Params, Recv, Transport};

fn prefix() -> String {
    format!("xferbench_iox2_s{}_", std::process::id())
}

fn transport() -> Iceoryx2 {
    static ENV: Once = Once::new();
    // SAFETY: every test sets the same value, once, before this binary touches
    // iceoryx2 (which reads it); nothing else here reads the environment.
    ENV.call_once(|| unsafe { std::env::set_var(PREFIX_ENV, prefix()) });
    Iceoryx2::from_params(&Params::from([("wait".to_string(), "spin".to_string())])).unwrap()
}

fn files_with_prefix(dir: &Path, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = e.path();
        if e.file_name().to_string_lossy().contains(prefix) {
            out.push(path.display().to_string());
        }
        if path.is_dir() {
            out.extend(files_with_prefix(&path, prefix));
        }
    }
    out
}

fn left_behind() -> Vec<String> {
    let mut left = files_with_prefix(Path::new("/dev/shm"), &prefix());
    left.extend(files_with_prefix(Path::new("/tmp/iceoryx2"), &prefix()));
    left
}

/// Both tests share the domain: one checks what is left only once the other is done.
static DOMAIN: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_connector_never_accepted_fails_at_its_connect_deadline() {
    let _domain = DOMAIN.lock().unwrap_or_else(|e| e.into_inner());
    let t = transport();
    let listener = t.listen().unwrap();
    let mut c = t
        .connect(
            listener.address(),
            Instant::now() + Duration::from_millis(300),
        )
        .unwrap();
    let start = Instant::now();
    let e = c.send(&[0u8; 64]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TimedOut, "{e}");
    assert!(e.to_string().contains("iceoryx2"), "{e}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "the wait outlived its deadline: {:?}",
        start.elapsed()
    );
    drop(c);
    drop(listener);
    assert_eq!(left_behind(), Vec::<String>::new());
}

#[test]
fn an_abandoned_in_process_channel_ends_and_leaves_nothing() {
    let _domain = DOMAIN.lock().unwrap_or_else(|e| e.into_inner());
    let t = transport();
    let listener = t.listen().unwrap();
    let far = Instant::now() + Duration::from_secs(10);
    let mut c = t.connect(listener.address(), far).unwrap();
    let mut l = listener.accept(far).unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    c.abandon_when(flag.clone());
    l.abandon_when(flag.clone());
    // Each side waits for a message the other never sends; the peer's process (this
    // one) lives, so nothing but the flag can end the waits.
    let waiters = [c, l].map(|mut ep| {
        thread::spawn(move || {
            let mut buf = [0u8; 64];
            let r = ep.recv(&mut buf).map_err(|e| e.kind());
            drop(ep);
            r
        })
    });
    thread::sleep(Duration::from_millis(300));
    assert!(
        waiters.iter().all(|w| !w.is_finished()),
        "a side stopped waiting before it was abandoned"
    );
    flag.store(true, Ordering::Relaxed);
    let until = Instant::now() + Duration::from_secs(10);
    while waiters.iter().any(|w| !w.is_finished()) {
        assert!(Instant::now() < until, "an abandoned side kept waiting");
        thread::sleep(Duration::from_millis(10));
    }
    // A side that saw the other drop its end first may find the stream closed.
    let ends = waiters.map(|w| w.join().unwrap());
    assert!(
        ends.iter()
            .all(|e| matches!(e, Err(ErrorKind::ConnectionAborted) | Ok(Recv::Closed))),
        "{ends:?}"
    );
    assert!(
        ends.contains(&Err(ErrorKind::ConnectionAborted)),
        "{ends:?}"
    );
    assert_eq!(left_behind(), Vec::<String>::new());
}
