//! Every transport passes the whole conformance suite, with default and with
//! non-default parameters (RPMsg with its 496-byte message limit).

#[cfg(feature = "iceoryx2")]
use xferbench_transports::iox2::Iceoryx2;
use xferbench_transports::os::{Pipe, Tcp, Unix};
use xferbench_transports::rpmsg::Rpmsg;
use xferbench_transports::shm::Shm;
use xferbench_transports::{Params, Transport, conformance_suite};

fn with(pairs: &[(&str, &str)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

conformance_suite!(pipe, Pipe::default());
conformance_suite!(
    pipe_1mib,
    Pipe::from_params(&with(&[("pipe_size", "1MiB")])).unwrap()
);
conformance_suite!(unix, Unix::default());
conformance_suite!(
    unix_small_buffers,
    Unix::from_params(&with(&[("sndbuf", "16KiB"), ("rcvbuf", "16KiB")])).unwrap()
);
conformance_suite!(tcp, Tcp::default());
conformance_suite!(
    tcp_nagle,
    Tcp::from_params(&with(&[("nodelay", "false")])).unwrap()
);
conformance_suite!(shm_hybrid, Shm::default());
conformance_suite!(
    shm_spin,
    Shm::from_params(&with(&[("wait", "spin")])).unwrap()
);
conformance_suite!(
    shm_block,
    Shm::from_params(&with(&[("wait", "block")])).unwrap()
);
// Messages larger than the ring stream through it; every message published at once.
conformance_suite!(
    shm_small_ring_unbatched,
    Shm::from_params(&with(&[("capacity", "4KiB"), ("batch", "1")])).unwrap()
);
// Every message published at once, large ones in pieces of the floor (4 KiB), far
// smaller than the ring.
conformance_suite!(
    shm_unbatched,
    Shm::from_params(&with(&[("batch", "1")])).unwrap()
);
conformance_suite!(rpmsg_kick, Rpmsg::default());
conformance_suite!(
    rpmsg_event_idx_zero_copy,
    Rpmsg::from_params(&with(&[("notify", "event-idx"), ("buffers", "zero-copy")])).unwrap()
);
// Busy-polling both ways, with 8-entry vrings: senders wait for buffers often.
conformance_suite!(
    rpmsg_poll_small_rings,
    Rpmsg::from_params(&with(&[("notify", "poll"), ("num", "8")])).unwrap()
);
#[cfg(feature = "iceoryx2")]
conformance_suite!(iceoryx2_event, Iceoryx2::default());
#[cfg(feature = "iceoryx2")]
conformance_suite!(
    iceoryx2_spin,
    Iceoryx2::from_params(&with(&[("wait", "spin")])).unwrap()
);
// A deeper subscriber buffer and a publisher history.
#[cfg(feature = "iceoryx2")]
conformance_suite!(
    iceoryx2_spin_buffered_history,
    Iceoryx2::from_params(&with(&[
        ("wait", "spin"),
        ("buffer", "64"),
        ("history", "4")
    ]))
    .unwrap()
);

// A static data segment of 64-byte slices, as iceoryx2's own benchmark configures
// its publishers: larger messages are refused.
#[cfg(feature = "iceoryx2")]
conformance_suite!(
    iceoryx2_spin_static_segment,
    Iceoryx2::from_params(&with(&[("wait", "spin"), ("max_message", "64")])).unwrap()
);

// The default `max_message=auto` once the run told its message size, as both sides
// of every point of `run` do: a static segment of slices of that size.
#[cfg(feature = "iceoryx2")]
conformance_suite!(iceoryx2_spin_sized_by_the_run, {
    let mut t = Iceoryx2::from_params(&with(&[("wait", "spin")])).unwrap();
    t.size_for(xferbench_transports::Traffic::round_trips(4096));
    t
});

#[test]
fn unknown_and_invalid_parameters_are_named_in_errors() {
    let e = Pipe::from_params(&with(&[("pipesize", "1MiB")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("pipesize") && e.contains("pipe_size"), "{e}");
    let e = Tcp::from_params(&with(&[("nodelay", "maybe")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nodelay") && e.contains("true or false"), "{e}");
    let e = Unix::from_params(&with(&[("sndbuf", "lots")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("sndbuf") && e.contains("byte size"), "{e}");
    let e = Shm::from_params(&with(&[("wait", "nap")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("spin, block or hybrid"), "{e}");
    let e = Shm::from_params(&with(&[("capacity", "3000")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("power of two"), "{e}");
    let e = Rpmsg::from_params(&with(&[("notify", "irq")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("kick, event-idx or poll"), "{e}");
    let e = Rpmsg::from_params(&with(&[("num", "100")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("power of two"), "{e}");
}
