use super::wire::{Key, Reply, RequestPayload, ResponseData};
use super::*;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn opts(id: u32) -> ClientOptions {
    ClientOptions {
        client_id: id,
        stop: Arc::new(AtomicBool::new(false)),
        hang_timeout: Duration::from_secs(10),
        key: None,
    }
}

/// inner inserts, reads, deletes per outer round; returns mismatches.
fn workload(c: &mut Client, id: u32, outer: u32, inner: u32) -> u32 {
    let mut bad = 0;
    let mut out = ResponseData::default();
    for o in 0..outer {
        let keys: Vec<Key> = (0..inner)
            .map(|i| Key::new(format!("t{id}-{o}-{i}").as_bytes()).unwrap())
            .collect();
        for (i, k) in keys.iter().enumerate() {
            c.send(i as u32, &RequestPayload::insert(*k, i as u32))
                .unwrap();
        }
        for _ in 0..inner {
            c.recv(&mut out).unwrap();
            bad += u32::from(out.client_id != id || out.payload.reply() != Ok(Reply::Inserted));
        }
        for (i, k) in keys.iter().enumerate() {
            c.send(i as u32, &RequestPayload::read_bucket(*k)).unwrap();
        }
        for _ in 0..inner {
            c.recv(&mut out).unwrap();
            let i = out.request_id as usize;
            let ok = match out.payload.reply() {
                Ok(Reply::Bucket(e)) => e.iter().any(|e| e.key == keys[i] && e.value == i as u32),
                _ => false,
            };
            bad += u32::from(!ok || out.client_id != id);
        }
        for (i, k) in keys.iter().enumerate() {
            c.send(i as u32, &RequestPayload::delete(*k)).unwrap();
        }
        for _ in 0..inner {
            c.recv(&mut out).unwrap();
            bad += u32::from(out.payload.reply() != Ok(Reply::Deleted));
        }
    }
    bad
}

fn end_to_end(arch: Arch, workers: u32, clients: u32) {
    let server = Server::start(ServerConfig {
        workers,
        ..ServerConfig::new(arch)
    })
    .unwrap();
    let name = server.name().to_string();
    let bad: u32 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..clients)
            .map(|id| {
                let name = &name;
                s.spawn(move || {
                    let mut c = Client::connect(name, opts(id + 1)).unwrap();
                    // 40 requests in flight: more than a sharded ring holds.
                    let b = workload(&mut c, id + 1, 5, 40);
                    c.leave().unwrap();
                    b
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(bad, 0, "{arch:?}");
    assert_eq!(server.served(), u64::from(clients) * 5 * 40 * 3, "{arch:?}");
    let stats = ServerStats::open(&name).unwrap();
    assert_eq!(stats.arch(), arch);
    drop(stats);
    server.stop().unwrap();
    assert!(ServerStats::open(&name).is_err(), "{name} still opens");
}

#[test]
fn preopt_serves_several_clients_without_a_mismatch() {
    end_to_end(Arch::Preopt, 2, 3);
}

#[test]
fn ring_serves_several_clients_without_a_mismatch() {
    end_to_end(Arch::Ring, 2, 3);
}

#[test]
fn sharded_serves_more_clients_than_workers_without_a_mismatch() {
    end_to_end(Arch::Sharded, 2, 5);
}

#[test]
fn a_corrupt_or_truncated_header_is_refused_with_a_message() {
    let server = Server::start(ServerConfig::new(Arch::Sharded)).unwrap();
    let name = server.name().to_string();
    // A second holder of the region, as a hostile client would open it.
    let fd = crate::shm::backing::open(&name).unwrap().fd;
    let len = rustix::fs::fstat(&fd).unwrap().st_size as usize;
    let mut original = vec![0u8; len];
    assert_eq!(rustix::io::pread(&fd, &mut original, 0).unwrap(), len);
    let write = |bytes: &[u8]| {
        assert_eq!(rustix::io::pwrite(&fd, bytes, 0).unwrap(), bytes.len());
    };
    let refused = |what: &str| {
        let e = Client::connect(&name, opts(1)).unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    };
    let mut b = original.clone();
    b[0] ^= 0xff;
    write(&b);
    refused("magic");
    let mut b = original.clone();
    b[8] = 99;
    write(&b);
    refused("layout version 99");
    let mut b = original.clone();
    b[12] = 77;
    write(&b);
    refused("unknown architecture code 77");
    let mut b = original.clone();
    b[20..24].copy_from_slice(&100_000u32.to_le_bytes());
    write(&b);
    refused("100000 workers");
    let mut b = original.clone();
    b[20..24].copy_from_slice(&3u32.to_le_bytes());
    write(&b);
    refused("needs");
    let mut b = original.clone();
    b[40..44].copy_from_slice(&1u32.to_le_bytes());
    write(&b);
    refused("server pid 1, the address pid");
    // Sealed: neither shrinking nor growing is possible.
    for size in [100, len as u64 - 4096, len as u64 + 4096] {
        assert_eq!(
            rustix::fs::ftruncate(&fd, size),
            Err(rustix::io::Errno::PERM)
        );
    }
    write(&original);
    let c = Client::connect(&name, opts(1)).unwrap();
    c.leave().unwrap();
    drop(server);
}

#[test]
fn a_missing_server_is_named() {
    for address in ["/xferbench-nonexistent-kv0", "memfd:2147483647:3:1"] {
        let e = Client::connect(address, opts(1)).unwrap_err();
        assert!(matches!(e, KvError::NoServer(_)), "{e}");
    }
}

#[test]
fn bad_configurations_are_refused() {
    let mut c = ServerConfig::new(Arch::Ring);
    c.workers = 0;
    assert!(
        Server::start(c)
            .unwrap_err()
            .to_string()
            .contains("workers")
    );
    c.workers = 1;
    c.buckets = 0;
    assert!(Server::start(c).is_err());
    assert!(
        "nope"
            .parse::<Arch>()
            .unwrap_err()
            .to_string()
            .contains("preopt, ring, sharded")
    );
}

#[test]
fn a_stopped_client_leaves_preopt_without_hanging_the_others() {
    let server = Server::start(ServerConfig::new(Arch::Preopt)).unwrap();
    let name = server.name().to_string();
    let o = opts(9);
    let mut idle = Client::connect(&name, o.clone()).unwrap();
    let mut busy = Client::connect(&name, opts(2)).unwrap();
    std::thread::scope(|s| {
        let h = s.spawn(|| workload(&mut busy, 2, 3, 10));
        // The idle client takes part in every broadcast until stopped.
        let stopper = s.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            o.stop.store(true, Ordering::Relaxed);
        });
        let mut out = ResponseData::default();
        assert!(matches!(idle.recv(&mut out), Err(KvError::Interrupted)));
        stopper.join().unwrap();
        assert_eq!(h.join().unwrap(), 0);
    });
    idle.leave().unwrap();
    busy.leave().unwrap();
    server.stop().unwrap();
}

#[test]
fn a_private_server_is_joined_only_with_its_key_and_listed_as_private() {
    for arch in Arch::ALL {
        let key = PrivateKey::random();
        let server = Server::start(ServerConfig {
            key: Some(key),
            ..ServerConfig::new(arch)
        })
        .unwrap();
        let name = server.name().to_string();
        // Without the key, or with another one: refused, naming the server.
        for wrong in [None, Some(PrivateKey::random())] {
            let e = Client::connect(
                &name,
                ClientOptions {
                    key: wrong,
                    ..opts(1)
                },
            )
            .unwrap_err();
            assert!(matches!(e, KvError::Private { .. }), "{arch:?}: {e}");
            let text = e.to_string();
            assert!(
                text.contains(&name) && text.contains("xferbench kv serve"),
                "{text}"
            );
        }
        // Discovery marks it private, so that no client picks it by default.
        let listed: Vec<_> = running_servers()
            .into_iter()
            .filter(|s| s.address == name)
            .collect();
        assert_eq!(listed.len(), 1, "{arch:?}");
        assert!(listed[0].private, "{arch:?}");
        // With the key: served as any client.
        let mut c = Client::connect(
            &name,
            ClientOptions {
                key: Some(key),
                ..opts(2)
            },
        )
        .unwrap();
        assert_eq!(workload(&mut c, 2, 2, 5), 0, "{arch:?}");
        c.leave().unwrap();
        server.stop().unwrap();
    }
}

#[test]
fn a_public_server_is_listed_as_public_and_joined_without_a_key() {
    let server = Server::start(ServerConfig::new(Arch::Sharded)).unwrap();
    let name = server.name().to_string();
    let listed: Vec<_> = running_servers()
        .into_iter()
        .filter(|s| s.address == name)
        .collect();
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].private);
    let c = Client::connect(&name, opts(1)).unwrap();
    c.leave().unwrap();
    server.stop().unwrap();
}
