//! A 64-byte spin ping-pong over the `iceoryx2` transport between two threads, without
//! the lab: the endpoint's own round trip, configured as iceoryx2's publish-subscribe
//! benchmark configures iceoryx2 (subscriber buffer 1, safe overflow, samples neither
//! written nor read, a static segment of 64-byte slices), with no clock read per round
//! trip (see docs/transports-log.md, "Measured the way iceoryx2 measures itself"):
//!
//! ```sh
//! cargo build --release -p xferbench-transports --example iox2_pingpong
//! taskset -c 0,1 target/release/examples/iox2_pingpong 2000000
//! ```
//!
//! Arguments: the number of round trips and optionally `pause=false` (the receivers
//! poll back to back, as the benchmark's do). It prints the mean round trip. The two
//! threads are pinned to CPUs 0 and 1 when the machine has them. Beside iceoryx2's
//! benchmark it separates the endpoint's share of a round trip from the lab's
//! (`run`'s clock reads and histogram).

use std::time::{Duration, Instant};
use xferbench_transports::iox2::{self, Iceoryx2};
use xferbench_transports::{Endpoint, Listener, ParamValues, Params, Traffic, Transport};

fn pin(cpu: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    // Best effort: a machine with one CPU runs both threads unpinned.
    let _ = rustix::thread::sched_setaffinity(None, &set);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = match args.next().map(|a| a.parse()) {
        Some(Ok(n)) => n,
        _ => {
            eprintln!("usage: iox2_pingpong ROUND_TRIPS [pause=false]");
            std::process::exit(2);
        }
    };
    let mut raw = Params::new();
    for (def, v) in [
        (&iox2::WAIT, "spin"),
        (&iox2::BUFFER, "1"),
        (&iox2::OVERFLOW, "safe"),
    ] {
        raw.insert(def.name.to_string(), v.to_string());
    }
    if let Some(p) = args.next() {
        let Some(v) = p
            .strip_prefix(&*iox2::PAUSE.name)
            .and_then(|rest| rest.strip_prefix('='))
        else {
            eprintln!("unknown argument {p:?}: expected pause=true or pause=false");
            std::process::exit(2);
        };
        raw.insert(iox2::PAUSE.name.to_string(), v.to_string());
    }
    let values = match ParamValues::parse(Iceoryx2::NAME, Iceoryx2::params(), &raw) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut t = Iceoryx2::from_values(&values).expect("parameters");
    t.size_for(Traffic::round_trips(64));
    let l = t.listen().expect("listen");
    let deadline = Instant::now() + Duration::from_secs(5);
    let address = l.address().to_string();
    let connector = t.clone();
    // Each side builds its ports on its own thread, as the benchmark's participants do.
    let echo = std::thread::spawn(move || {
        pin(1);
        let mut b = connector.connect(&address, deadline).expect("connect");
        for _ in 0..n {
            b.echo_in_place(64, |_req, _reply| ())
                .expect("echo")
                .expect("a request");
        }
    });
    let mut a = l.accept(deadline).expect("accept");
    pin(0);
    let start = Instant::now();
    for _ in 0..n {
        a.send_in_place(64, |_w| ()).expect("send");
        a.recv_in_place(64, |_r| ()).expect("recv");
    }
    let took = start.elapsed();
    a.close_send().expect("close");
    drop(a);
    echo.join().expect("echo thread");
    println!(
        "{n} round trips, {:.1} ns each",
        took.as_nanos() as f64 / n as f64
    );
}
