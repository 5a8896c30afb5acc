//! A 64-byte spin ping-pong over the `shm` transport between two threads, without the
//! lab: the ring's own round trip, as `run` measures it but with no clock read per
//! round trip (see docs/transports-log.md, "The 64 B spin round trip, line by line"):
//!
//! ```sh
//! cargo build --release -p xferbench-transports --example shm_pingpong
//! target/release/examples/shm_pingpong 2000000 copy
//! ```
//!
//! Arguments: the number of round trips, `copy` (send/recv) or `in-place`
//! (send_in_place/recv_in_place, echo_in_place on the other side), and optionally the
//! bytes of each ring (a power of two from 4096; `run`'s default 4 MiB gives every
//! message fresh lines, a small ring writes the same lines again). It prints the mean
//! round trip. Pin it (`taskset -c 0,1`) to compare builds.

use std::time::{Duration, Instant};
use xferbench_transports::shm::{Shm, wait::WaitMode};
use xferbench_transports::{Endpoint, Listener, Recv, Transport};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = match args.next().map(|a| a.parse()) {
        Some(Ok(n)) => n,
        _ => {
            eprintln!("usage: shm_pingpong ROUND_TRIPS [copy|in-place] [RING_BYTES]");
            std::process::exit(2);
        }
    };
    let in_place = match args.next().as_deref() {
        None | Some("copy") => false,
        Some("in-place") => true,
        Some(other) => {
            eprintln!("unknown mode {other:?}: expected copy or in-place");
            std::process::exit(2);
        }
    };
    let capacity: usize = match args.next().map(|a| a.parse::<usize>()) {
        None => 4 << 20,
        Some(Ok(c)) if c >= 4096 && c.is_power_of_two() => c,
        Some(_) => {
            eprintln!("RING_BYTES must be a power of two from 4096");
            std::process::exit(2);
        }
    };
    // `run`'s defaults but for the wait (and the ring when given): 4 MiB rings, 16 KiB
    // batches.
    let t = Shm::new(WaitMode::Spin, capacity, 16 << 10);
    let l = t.listen().expect("listen");
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut b = t.connect(l.address(), deadline).expect("connect");
    let mut a = l.accept(deadline).expect("accept");
    let echo = std::thread::spawn(move || {
        if in_place {
            while b
                .echo_in_place(64, |req, reply| reply.copy_from_slice(req))
                .expect("echo")
                .is_some()
            {
                b.flush().expect("flush");
            }
        } else {
            let mut buf = [0u8; 64];
            while b.recv(&mut buf).expect("recv") == Recv::Message {
                b.send(&buf).expect("send");
                b.flush().expect("flush");
            }
        }
    });
    let mut buf = [0u8; 64];
    let start = Instant::now();
    for i in 0..n {
        if in_place {
            a.send_in_place(64, |w| w[0] = i as u8).expect("send");
            a.flush().expect("flush");
            a.recv_in_place(64, |r| r[0]).expect("recv");
        } else {
            buf[0] = i as u8;
            a.send(&buf).expect("send");
            a.flush().expect("flush");
            a.recv(&mut buf).expect("recv");
        }
    }
    let took = start.elapsed();
    a.close_send().expect("close");
    echo.join().expect("echo thread");
    println!(
        "{n} round trips, {:.1} ns each",
        took.as_nanos() as f64 / n as f64
    );
}
