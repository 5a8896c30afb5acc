//! A hostile peer against every shared region: the `shm` transport's rings, the
//! RPMsg link, the kv server's objects and the digitizer model's control block.
//!
//! The victim runs in a child process (this test binary again, running the ignored
//! `victim` test with the role in its environment); this process plays the peer. It
//! (a) tries to truncate and to grow the region mid-run, which the seals refuse
//! with EPERM while the victim carries on, and (b) writes random bytes over the
//! header and the rings while the victim runs. The victim must end by an exit code,
//! never by a signal, and a fault it reports must name the region.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use xferbench_transports::shm::backing;

const ROLE: &str = "XFERBENCH_HOSTILE_ROLE";
const ADDRESS: &str = "XFERBENCH_HOSTILE_ADDRESS";
/// What the victim prints on stdout once its side is up.
const READY: &str = "victim ready";

/// A small xorshift generator: the bytes need not be good, only varied.
struct Noise(u64);

impl Noise {
    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            let b = self.0.to_le_bytes();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
    }
}

struct Victim {
    child: Child,
    stderr: std::thread::JoinHandle<String>,
}

impl Victim {
    /// Starts the victim `role` with `address` and waits until it says it is up.
    fn spawn(role: &str, address: &str) -> Victim {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["victim", "--exact", "--ignored", "--nocapture", "--quiet"])
            .env(ROLE, role)
            .env(ADDRESS, address)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            match lines.next() {
                Some(Ok(l)) if l.contains(READY) => break,
                Some(Ok(_)) => {}
                _ => {
                    let _ = child.wait();
                    panic!("the victim did not start: {}", stderr.join().unwrap());
                }
            }
        }
        // Keep draining stdout so the victim never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        Victim { child, stderr }
    }

    /// Tells the victim to finish (closes its stdin).
    fn finish(&mut self) {
        drop(self.child.stdin.take());
    }

    /// Waits (at most `limit`) for the exit; a victim still running is killed and
    /// the test fails.
    fn wait(mut self, limit: Duration) -> (ExitStatus, String) {
        let start = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return (st, self.stderr.join().unwrap());
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "the victim still ran after {limit:?}: {}",
                    self.stderr.join().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// An exit by a code, not a signal, with no panic; a fault, if reported, names
/// `address`.
fn assert_clean(st: ExitStatus, stderr: &str, address: &str) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    assert!(
        st.signal().is_none(),
        "the victim died of signal {:?}: {stderr}",
        st.signal()
    );
    assert!(
        !stderr.contains("panicked"),
        "the victim panicked: {stderr}"
    );
    let code = st.code().unwrap();
    eprintln!("the victim exited with {code}: {}", stderr.trim());
    assert!(code == 0 || code == 1, "exit {code}: {stderr}");
    if code == 1 {
        assert!(
            stderr.contains(address),
            "the fault does not name the region {address}: {stderr}"
        );
    }
    code
}

/// Both kinds of resize, refused by the seals.
fn assert_cannot_resize(fd: &rustix::fd::OwnedFd) {
    let len = rustix::fs::fstat(fd).unwrap().st_size as u64;
    for size in [0, len / 2, len + 4096, len * 2] {
        assert_eq!(
            rustix::fs::ftruncate(fd, size),
            Err(rustix::io::Errno::PERM),
            "ftruncate to {size}"
        );
    }
    assert_eq!(rustix::fs::fstat(fd).unwrap().st_size as u64, len);
}

/// Writes random bytes over `range` of the region behind `fd` every millisecond
/// until `done` says to stop (or 5 s pass).
fn scribble(
    fd: &rustix::fd::OwnedFd,
    range: std::ops::Range<usize>,
    mut done: impl FnMut() -> bool,
) {
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    let mut buf = vec![0u8; range.len()];
    let start = Instant::now();
    while !done() && start.elapsed() < Duration::from_secs(5) {
        noise.fill(&mut buf);
        rustix::io::pwrite(fd, &buf, range.start as u64).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Blocks until the parent closes stdin (in a thread; sets the flag).
fn watch_stdin() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let f = flag.clone();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        f.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    flag
}

fn ready() {
    println!("{READY}");
    std::io::stdout().flush().unwrap();
}

/// The victim side, in the child process.
#[test]
#[ignore = "run in a child process by the hostile-peer tests"]
fn victim() {
    let (Ok(role), Ok(address)) = (std::env::var(ROLE), std::env::var(ADDRESS)) else {
        return;
    };
    let r = match role.as_str() {
        "shm" => victims::shm(&address),
        "rpmsg" => victims::rpmsg(&address),
        "kv" => victims::kv(),
        "daq" => victims::daq(),
        other => Err(format!("unknown role {other}")),
    };
    match r {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("victim: {e}");
            std::process::exit(1);
        }
    }
}

mod victims {
    use super::*;
    use xferbench_transports::shm::Shm;
    use xferbench_transports::{Endpoint, Recv, Transport};

    /// Echoes 64-byte messages until the peer closes.
    pub fn shm(address: &str) -> Result<(), String> {
        let t = Shm::default();
        let mut ep = t
            .connect(address, Instant::now() + Duration::from_secs(5))
            .map_err(|e| chain(&e))?;
        ready();
        let mut buf = [0u8; 64];
        loop {
            match ep.recv(&mut buf).map_err(|e| e.to_string())? {
                Recv::Closed => return Ok(()),
                Recv::Message => ep.send(&buf).map_err(|e| e.to_string())?,
            }
        }
    }

    /// The RPMsg remote's echo service, until the host stops it.
    pub fn rpmsg(address: &str) -> Result<(), String> {
        use xferbench_transports::rpmsg::remote::RemoteLink;
        let mut r = RemoteLink::attach(address).map_err(|e| format!("{address}: {e}"))?;
        ready();
        let stats = r
            .serve()
            .map_err(|e| format!("rpmsg region {address}: {e}"))?;
        let faults = stats.faults.total();
        if faults > 0 {
            return Err(format!(
                "rpmsg region {address}: {faults} messages refused as corrupt ({:?})",
                stats.faults
            ));
        }
        Ok(())
    }

    /// A sharded kv server until told to finish or it fails.
    pub fn kv() -> Result<(), String> {
        use xferbench_transports::kv::{Arch, Server, ServerConfig};
        let mut cfg = ServerConfig::new(Arch::Sharded);
        cfg.hang_timeout = Duration::from_secs(2);
        let server = Server::start(cfg).map_err(|e| e.to_string())?;
        let address = server.name().to_string();
        println!("address {address}");
        ready();
        let finish = watch_stdin();
        while !finish.load(std::sync::atomic::Ordering::Relaxed) && !server.failed() {
            std::thread::sleep(Duration::from_millis(2));
        }
        server
            .stop()
            .map_err(|e| format!("kv server {address}: {e}"))
    }

    /// A digitizer board's control block, read by the host as the poll loop does.
    pub fn daq() -> Result<(), String> {
        use xferbench_transports::daq::control::Control;
        let c = Control::create(0, 4096).map_err(|e| e.to_string())?;
        let mut reader = c.reader().map_err(|e| e.to_string())?;
        ready();
        let finish = watch_stdin();
        while !finish.load(std::sync::atomic::Ordering::Relaxed) {
            c.arm();
            reader
                .read()
                .map_err(|e| format!("daq control block {}: {e}", label(c.fd())))?;
            c.end_acquisition();
            reader
                .read()
                .map_err(|e| format!("daq control block {}: {e}", label(c.fd())))?;
        }
        Ok(())
    }

    fn label(fd: &rustix::fd::OwnedFd) -> String {
        backing::address_of(fd)
    }

    fn chain(e: &dyn std::error::Error) -> String {
        let mut s = e.to_string();
        let mut c = e.source();
        while let Some(x) = c {
            s.push_str(": ");
            s.push_str(&x.to_string());
            c = x.source();
        }
        s
    }
}

mod shm {
    use super::*;
    use xferbench_transports::shm::Shm;
    use xferbench_transports::shm::region::RegionHeader;
    use xferbench_transports::{Endpoint, Listener, Recv, Transport};

    fn round_trips(ep: &mut impl Endpoint, n: usize) {
        let mut buf = [0u8; 64];
        for i in 0..n {
            buf[..8].copy_from_slice(&(i as u64).to_le_bytes());
            ep.send(&buf).unwrap();
            ep.flush().unwrap();
            let mut back = [0u8; 64];
            assert_eq!(ep.recv(&mut back).unwrap(), Recv::Message);
            assert_eq!(back, buf);
        }
    }

    #[test]
    fn a_truncation_mid_run_is_refused_and_the_victim_carries_on() {
        let l = Shm::default().listen().unwrap();
        let address = l.address().to_string();
        let fd = backing::open(&address).unwrap().fd;
        let victim = Victim::spawn("shm", &address);
        let mut ep = l.accept(Instant::now() + Duration::from_secs(10)).unwrap();
        round_trips(&mut ep, 1000);
        assert_cannot_resize(&fd);
        round_trips(&mut ep, 1000);
        ep.close_send().unwrap();
        let (st, stderr) = victim.wait(Duration::from_secs(20));
        assert_eq!(assert_clean(st, &stderr, &address), 0, "{stderr}");
    }

    #[test]
    fn scribbled_indices_are_a_reported_fault_not_a_crash() {
        let l = Shm::default().listen().unwrap();
        let address = l.address().to_string();
        let fd = backing::open(&address).unwrap().fd;
        let mut victim = Victim::spawn("shm", &address);
        let mut ep = l.accept(Instant::now() + Duration::from_secs(10)).unwrap();
        round_trips(&mut ep, 1000);
        // The header with both rings' control lines, and the start of ring 0's data.
        let header = std::mem::size_of::<RegionHeader>();
        let page = rustix::param::page_size();
        let data = header.div_ceil(page) * page;
        scribble(&fd, 0..data + 4096, || {
            victim.child.try_wait().unwrap().is_some()
        });
        victim.finish();
        let (st, stderr) = victim.wait(Duration::from_secs(20));
        assert_eq!(assert_clean(st, &stderr, &address), 1, "{stderr}");
        assert!(stderr.contains("corrupt"), "{stderr}");
        drop(ep);
    }
}

mod rpmsg {
    use super::*;
    use xferbench_transports::rpmsg::link::{HostLink, LinkConfig};

    fn start() -> (HostLink, String, rustix::fd::OwnedFd, Victim) {
        let host = HostLink::create(&LinkConfig::default()).unwrap();
        let address = host.name().unwrap();
        let fd = backing::open(&address).unwrap().fd;
        let victim = Victim::spawn("rpmsg", &address);
        host.wait_attached(Duration::from_secs(10), || Ok(()))
            .unwrap();
        (host, address, fd, victim)
    }

    fn echo(host: &mut HostLink, n: usize) {
        let mut chans = host.take_channels();
        let ch = &mut chans[0];
        let deadline = || Some(Instant::now() + Duration::from_secs(10));
        let mut out = [0u8; 496];
        for i in 0..n {
            let msg = format!("message {i}");
            ch.send(msg.as_bytes(), deadline()).unwrap();
            let k = ch.recv(&mut out, deadline()).unwrap();
            assert!(k >= msg.len());
        }
    }

    #[test]
    fn a_truncation_mid_run_is_refused_and_the_victim_carries_on() {
        let (mut host, address, fd, victim) = start();
        let mut chans = host.take_channels();
        let ch = &mut chans[0];
        let deadline = || Some(Instant::now() + Duration::from_secs(10));
        let mut out = [0u8; 496];
        for round in 0..2 {
            for i in 0..500 {
                ch.send(format!("{round}:{i}").as_bytes(), deadline())
                    .unwrap();
                ch.recv(&mut out, deadline()).unwrap();
            }
            if round == 0 {
                assert_cannot_resize(&fd);
            }
        }
        drop(chans);
        drop(host);
        let (st, stderr) = victim.wait(Duration::from_secs(20));
        assert_eq!(assert_clean(st, &stderr, &address), 0, "{stderr}");
    }

    #[test]
    fn scribbled_vrings_end_the_victim_cleanly() {
        let (mut host, address, fd, mut victim) = start();
        echo(&mut host, 200);
        let len = rustix::fs::fstat(&fd).unwrap().st_size as usize;
        // The region header, the link header and both vrings (the buffers follow).
        let page = rustix::param::page_size();
        scribble(&fd, 0..len.min(16 * page), || {
            victim.child.try_wait().unwrap().is_some()
        });
        victim.finish();
        drop(host);
        let (st, stderr) = victim.wait(Duration::from_secs(20));
        assert_clean(st, &stderr, &address);
    }
}

mod kv {
    use super::*;
    use xferbench_transports::kv::{Client, ClientOptions};

    fn start() -> (Victim, String) {
        // The server prints its address before it says it is ready.
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["victim", "--exact", "--ignored", "--nocapture", "--quiet"])
            .env(ROLE, "kv")
            .env(ADDRESS, "-")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut address = None;
        for l in lines.by_ref() {
            let l = l.unwrap();
            if let Some(a) = l.strip_prefix("address ") {
                address = Some(a.to_string());
            }
            if l.contains(READY) {
                break;
            }
        }
        std::thread::spawn(move || for _ in lines {});
        let address = address.expect("the kv victim printed its address");
        (Victim { child, stderr }, address)
    }

    fn opts() -> ClientOptions {
        ClientOptions {
            client_id: 7,
            stop: Default::default(),
            hang_timeout: Duration::from_secs(2),
            key: None,
        }
    }

    fn workload(c: &mut Client, n: u32) -> Result<(), xferbench_transports::kv::KvError> {
        use xferbench_transports::kv::wire::{Key, RequestPayload, ResponseData};
        let mut out = ResponseData::default();
        for i in 0..n {
            let key = Key::new(format!("k{}", i % 64).as_bytes()).expect("a short key");
            c.send(i, &RequestPayload::insert(key, i))?;
            c.recv(&mut out)?;
        }
        Ok(())
    }

    #[test]
    fn a_truncation_mid_run_is_refused_and_the_server_carries_on() {
        let (mut victim, address) = start();
        let fd = backing::open(&address).unwrap().fd;
        let mut c = Client::connect(&address, opts()).unwrap();
        workload(&mut c, 500).unwrap();
        assert_cannot_resize(&fd);
        workload(&mut c, 500).unwrap();
        c.leave().unwrap();
        victim.finish();
        let (st, stderr) = victim.wait(Duration::from_secs(20));
        assert_eq!(assert_clean(st, &stderr, &address), 0, "{stderr}");
    }

    #[test]
    fn scribbled_frames_do_not_crash_the_server() {
        let (mut victim, address) = start();
        let fd = backing::open(&address).unwrap().fd;
        let len = rustix::fs::fstat(&fd).unwrap().st_size as usize;
        let mut c = Client::connect(&address, opts()).unwrap();
        workload(&mut c, 200).unwrap();
        // The client goes on sending while the region is scribbled; its own errors
        // do not matter here, only how the server ends.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s2 = stop.clone();
        let client = std::thread::spawn(move || {
            while !s2.load(std::sync::atomic::Ordering::Relaxed) {
                if workload(&mut c, 50).is_err() {
                    break;
                }
            }
        });
        scribble(&fd, 0..len, || victim.child.try_wait().unwrap().is_some());
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        client.join().unwrap();
        victim.finish();
        let (st, stderr) = victim.wait(Duration::from_secs(20));
        assert_clean(st, &stderr, &address);
    }
}

mod daq {
    use super::*;

    /// The address of the victim's control block, found in its descriptors.
    fn control_block(pid: u32) -> String {
        use std::os::unix::fs::MetadataExt;
        for f in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .flatten()
        {
            let Ok(target) = std::fs::read_link(f.path()) else {
                continue;
            };
            if target
                .to_string_lossy()
                .starts_with("/memfd:xferbench-daq-ctl0")
            {
                let fd: i32 = f.file_name().to_str().unwrap().parse().unwrap();
                let ino = std::fs::metadata(f.path()).unwrap().ino();
                return backing::address(pid as i32, fd, ino);
            }
        }
        panic!("no control block among the victim's descriptors");
    }

    #[test]
    fn a_truncation_mid_run_is_refused_and_the_host_carries_on() {
        let mut victim = Victim::spawn("daq", "-");
        let address = control_block(victim.child.id());
        let fd = backing::open(&address).unwrap().fd;
        std::thread::sleep(Duration::from_millis(50));
        assert_cannot_resize(&fd);
        std::thread::sleep(Duration::from_millis(50));
        victim.finish();
        let (st, stderr) = victim.wait(Duration::from_secs(20));
        assert_eq!(assert_clean(st, &stderr, "memfd"), 0, "{stderr}");
    }

    #[test]
    fn a_scribbled_control_block_is_a_reported_fault() {
        let mut victim = Victim::spawn("daq", "-");
        let address = control_block(victim.child.id());
        let fd = backing::open(&address).unwrap().fd;
        scribble(&fd, 0..32, || victim.child.try_wait().unwrap().is_some());
        victim.finish();
        let (st, stderr) = victim.wait(Duration::from_secs(20));
        assert_eq!(
            assert_clean(st, &stderr, "daq control block"),
            1,
            "{stderr}"
        );
        assert!(stderr.contains("control block"), "{stderr}");
    }
}
