//! AF_PACKET TPACKET_V3 sockets on a veth pair inside a private network namespace (root
//! only; every test makes and removes its own namespace). Traffic never leaves it.

mod live_util;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use live_util::{flow_key, pcap_image, seq_of, tcp_frame, udp_frame, NetNs};
use shrike_capture::afpacket::{self, AfPacketSocket, Sender};
use shrike_capture::{AfPacketConfig, ClusterType, LinkType, LiveError};

fn small_ring() -> AfPacketConfig {
    AfPacketConfig {
        block_size: 128 * 1024,
        block_count: Some(8),
        ..Default::default()
    }
}

/// Reads packets until `want` arrived (then `linger` more, to catch extras) or `deadline`.
fn collect(
    s: &mut AfPacketSocket,
    want: usize,
    deadline: Duration,
    linger: Duration,
) -> Vec<Vec<u8>> {
    let start = Instant::now();
    let mut out = Vec::new();
    let mut done_at: Option<Instant> = None;
    while start.elapsed() < deadline {
        if out.len() >= want {
            let t = *done_at.get_or_insert_with(Instant::now);
            if t.elapsed() >= linger {
                break;
            }
        }
        if let Some(mut b) = s.next_block(Duration::from_millis(20)).expect("next_block") {
            while let Some(p) = b.next_packet() {
                assert_eq!(p.link, LinkType::Ethernet);
                assert!(p.orig_len as usize >= p.data.len());
                assert!(p.ts.secs() > 1_600_000_000, "timestamp {:?}", p.ts);
                out.push(p.data.to_vec());
            }
        }
    }
    out
}

fn frames(n: u32) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            udp_frame(
                [10, 0, 0, 1],
                [10, 0, 0, 2],
                1000 + (i % 50) as u16,
                53,
                &[],
                i,
                60 + (i % 200) as usize,
            )
        })
        .collect()
}

#[test]
fn live_tcpreplay_exact_count() {
    let Some(ns) = NetNs::new("replay") else {
        return;
    };
    let sent = frames(5000);
    let dir = std::env::temp_dir().join(format!("shrk-replay-{}.pcap", std::process::id()));
    std::fs::write(&dir, pcap_image(&sent)).unwrap();
    // 4 MiB holds the whole replay, so the count is exact even if the reader is starved.
    let cfg = AfPacketConfig {
        block_count: Some(32),
        ..small_ring()
    };
    let mut sock = ns.run(move || AfPacketSocket::open("veth0", &cfg, None).unwrap());
    let info = sock.info();
    assert_eq!(info.geometry.ring_bytes(), 4 << 20);
    assert!(info.ifindex > 0);
    assert_eq!(info.link, LinkType::Ethernet);
    // The reader runs while tcpreplay sends.
    let want = sent.len();
    let reader = std::thread::spawn(move || {
        let got = collect(
            &mut sock,
            want,
            Duration::from_secs(20),
            Duration::from_millis(300),
        );
        (got, sock)
    });
    std::thread::sleep(Duration::from_millis(50));
    let out = ns.exec(
        "tcpreplay",
        &["-q", "-i", "veth1", "--topspeed", dir.to_str().unwrap()],
    );
    let _ = std::fs::remove_file(&dir);
    assert!(
        out.status.success(),
        "tcpreplay: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (got, mut sock) = reader.join().unwrap();
    assert_eq!(got.len(), sent.len(), "received");
    assert_eq!(got, sent, "bytes and order");
    let st = sock.stats();
    assert_eq!(st.packets, 5000, "kernel packets: {st:?}");
    assert_eq!(st.drops, 0);
    assert_eq!(st.delivered, 5000);
    assert!(st.blocks >= 1 && st.polls >= 1, "{st:?}");
}

#[test]
fn live_fanout_hash_keeps_both_directions_together() {
    let Some(ns) = NetNs::new("fanout") else {
        return;
    };
    // A distinct group id per mode: a concurrent test's fork can keep the previous sockets
    // (and so their group) alive for a moment after they were closed.
    for (i, ct) in [
        ClusterType::Hash,
        ClusterType::Lb,
        ClusterType::Qm,
        ClusterType::Cpu,
    ]
    .into_iter()
    .enumerate()
    {
        let cfg = AfPacketConfig {
            cluster_type: ct,
            cluster_id: 4242 + i as u16,
            ..small_ring()
        };
        let mut socks = ns.run(move || afpacket::open_fanout("veth0", 2, &cfg).unwrap());
        // 100 UDP flows, 5 packets each way, interleaved.
        let sender = ns.spawn(|| {
            let mut tx = Sender::open("veth1").unwrap();
            let mut n = 0u32;
            for round in 0..5u32 {
                for f in 0..100u16 {
                    let a = [10, 1, (f >> 8) as u8, f as u8];
                    let b = [10, 2, 0, 1];
                    tx.send(&udp_frame(a, b, 20000 + f, 80, &[], round, 40))
                        .unwrap();
                    tx.send(&udp_frame(b, a, 80, 20000 + f, &[], round, 40))
                        .unwrap();
                    n += 2;
                }
            }
            n
        });
        let sent = sender.join().unwrap() as usize;
        let mut per: Vec<Vec<Vec<u8>>> = vec![Vec::new(), Vec::new()];
        let start = Instant::now();
        while per.iter().map(Vec::len).sum::<usize>() < sent
            && start.elapsed() < Duration::from_secs(10)
        {
            for (i, s) in socks.iter_mut().enumerate() {
                if let Some(mut b) = s.next_block(Duration::from_millis(5)).unwrap() {
                    while let Some(p) = b.next_packet() {
                        per[i].push(p.data.to_vec());
                    }
                }
            }
        }
        let counts: Vec<usize> = per.iter().map(Vec::len).collect();
        assert_eq!(counts.iter().sum::<usize>(), sent, "{ct:?}: {counts:?}");
        let kernel: u64 = socks.iter_mut().map(|s| s.stats().packets).sum();
        assert_eq!(kernel, sent as u64, "{ct:?}");
        let sets: Vec<HashSet<_>> = per
            .iter()
            .map(|v| v.iter().map(|f| flow_key(f).unwrap()).collect())
            .collect();
        match ct {
            ClusterType::Hash => {
                assert_eq!(
                    sets[0].intersection(&sets[1]).count(),
                    0,
                    "a flow on both sockets"
                );
                assert_eq!(sets[0].len() + sets[1].len(), 100);
                assert!(
                    counts[0] > 0 && counts[1] > 0,
                    "hash used one socket only: {counts:?}"
                );
                // Every flow's 10 packets (both directions) on one socket.
                for v in &per {
                    let mut c = std::collections::HashMap::new();
                    for f in v {
                        *c.entry(flow_key(f).unwrap()).or_insert(0) += 1;
                    }
                    assert!(c.values().all(|&n| n == 10), "{c:?}");
                }
            }
            ClusterType::Lb => assert_eq!(counts, vec![sent / 2, sent / 2], "round robin"),
            _ => {}
        }
        eprintln!("{ct:?}: {counts:?}");
    }
}

#[test]
fn live_slow_reader_drops_are_counted() {
    let Some(ns) = NetNs::new("drops") else {
        return;
    };
    let cfg = AfPacketConfig {
        block_size: 4096,
        block_count: Some(4),
        frame_size: 2048,
        ..Default::default()
    };
    let mut sock = ns.run(move || AfPacketSocket::open("veth0", &cfg, None).unwrap());
    let n = 3000u32;
    ns.run(move || {
        let mut tx = Sender::open("veth1").unwrap();
        for f in frames(n) {
            tx.send(&f).unwrap();
        }
    });
    // Nobody read while sending: the ring (4 blocks of 4 KiB) overflowed.
    let got = collect(
        &mut sock,
        n as usize,
        Duration::from_secs(2),
        Duration::ZERO,
    );
    let st = sock.stats();
    assert!(st.drops > 0, "{st:?}");
    assert!(st.freeze_q >= 1, "{st:?}");
    assert_eq!(
        got.len() as u64 + st.drops,
        n as u64,
        "received + dropped == sent: {st:?}"
    );
    assert_eq!(st.packets, n as u64);
    assert_eq!(st.delivered, got.len() as u64);
    // What did arrive is in order.
    let seqs: Vec<u32> = got.iter().map(|f| seq_of(f).unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));
    // Kernel counters reset on read, ours accumulate.
    assert_eq!(sock.stats().drops, st.drops);
}

#[test]
fn live_vlan_tags_are_restored() {
    let Some(ns) = NetNs::new("vlan") else { return };
    let mut sock = ns.run(|| AfPacketSocket::open("veth0", &small_ring(), None).unwrap());
    let sent = vec![
        udp_frame(
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            1,
            2,
            &[(0x8100, 0x6064)],
            1,
            50,
        ),
        udp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, &[], 2, 50),
        udp_frame(
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            1,
            2,
            &[(0x88a8, 0x0010), (0x8100, 0x0020)],
            3,
            50,
        ),
        udp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, &[(0x8100, 4095)], 4, 50),
    ];
    let s2 = sent.clone();
    ns.run(move || {
        let mut tx = Sender::open("veth1").unwrap();
        for f in &s2 {
            tx.send(f).unwrap();
        }
    });
    let mut got = Vec::new();
    let start = Instant::now();
    while got.len() < sent.len() && start.elapsed() < Duration::from_secs(5) {
        if let Some(mut b) = sock.next_block(Duration::from_millis(20)).unwrap() {
            while let Some((p, info)) = b.next_with_info() {
                got.push((p.data.to_vec(), p.orig_len, info.vlan_tci));
            }
        }
    }
    assert_eq!(got.len(), 4);
    for (i, (g, s)) in got.iter().zip(&sent).enumerate() {
        assert_eq!(&g.0, s, "frame {i}");
        assert_eq!(g.1 as usize, s.len(), "orig_len {i}");
    }
    assert_eq!(
        got[0].2,
        Some(0x6064),
        "kernel stripped the tag into the ring header"
    );
    assert_eq!(got[1].2, None);
    assert_eq!(got[2].2, Some(0x0010));
    assert_eq!(sock.stats().vlan_restored, 3);
}

#[test]
fn live_interface_down_up_and_recreated_is_recovered() {
    let Some(ns) = NetNs::new("flap") else { return };
    let name = ns.name.clone();
    let cfg = AfPacketConfig {
        reopen_interval: 100,
        ..small_ring()
    };
    let (mut sock, mut tx) = ns.run(move || {
        (
            AfPacketSocket::open("veth0", &cfg, None).unwrap(),
            Sender::open("veth1").unwrap(),
        )
    });
    let send = |tx: &mut Sender, base: u32| {
        for i in 0..20 {
            tx.send(&udp_frame(
                [10, 0, 0, 1],
                [10, 0, 0, 2],
                7,
                9,
                &[],
                base + i,
                30,
            ))
            .unwrap();
        }
    };
    send(&mut tx, 0);
    assert_eq!(
        collect(
            &mut sock,
            20,
            Duration::from_secs(5),
            Duration::from_millis(50)
        )
        .len(),
        20
    );
    let idx0 = sock.info().ifindex;

    // Down, then up: the socket notices, closes, and reopens on its own.
    ns.link("veth0", "down");
    // Reads happen inside the namespace: the reopen looks the interface up by name.
    let (mut sock, down_seen) = ns.run(move || {
        let t = Instant::now();
        while !sock.is_down() && t.elapsed() < Duration::from_secs(3) {
            let _ = sock.next_block(Duration::from_millis(20)).unwrap();
        }
        let seen = sock.is_down();
        // Still down: polling keeps returning None without busy-looping.
        let _ = sock.next_block(Duration::from_millis(50)).unwrap();
        (sock, seen)
    });
    assert!(down_seen, "interface down not noticed");
    ns.link("veth0", "up");
    let mut sock = ns.run(move || {
        let t = Instant::now();
        while sock.is_down() && t.elapsed() < Duration::from_secs(3) {
            let _ = sock.next_block(Duration::from_millis(20)).unwrap();
        }
        sock
    });
    assert!(!sock.is_down(), "not reopened");
    send(&mut tx, 100);
    let got = collect(
        &mut sock,
        20,
        Duration::from_secs(5),
        Duration::from_millis(50),
    );
    assert_eq!(got.len(), 20);
    assert_eq!(seq_of(&got[0]), Some(100));
    let st = sock.stats();
    assert_eq!((st.iface_down, st.reopens), (1, 1), "{st:?}");

    // Removed and created again: a new ifindex, found by name.
    ns.del_veth();
    let mut sock = ns.run(move || {
        let t = Instant::now();
        while !sock.is_down() && t.elapsed() < Duration::from_secs(3) {
            let _ = sock.next_block(Duration::from_millis(20)).unwrap();
        }
        assert!(sock.is_down());
        sock
    });
    ns.add_veth();
    let (mut sock, mut tx) = ns.run(move || {
        let t = Instant::now();
        while sock.is_down() && t.elapsed() < Duration::from_secs(3) {
            let _ = sock.next_block(Duration::from_millis(20)).unwrap();
        }
        (sock, Sender::open("veth1").unwrap())
    });
    assert!(
        !sock.is_down(),
        "not reopened after the interface came back"
    );
    assert_ne!(sock.info().ifindex, idx0);
    send(&mut tx, 200);
    let got = collect(
        &mut sock,
        20,
        Duration::from_secs(5),
        Duration::from_millis(50),
    );
    assert_eq!(got.len(), 20);
    let st = sock.stats();
    assert_eq!((st.iface_down, st.reopens), (2, 2), "{st:?}");
    drop(name);
}

#[test]
fn live_bpf_program_filters_in_kernel() {
    let Some(ns) = NetNs::new("bpf") else { return };
    // `tcpdump -ddd udp`
    let program = AfPacketConfig {
        bpf_program: Some("12\n40 0 0 12\n21 0 5 34525\n48 0 0 20\n21 6 0 17\n21 0 6 44\n48 0 0 54\n21 3 4 17\n21 0 3 2048\n48 0 0 23\n21 0 1 17\n6 0 0 262144\n6 0 0 0\n".into()),
        ..small_ring()
    };
    let mut configs = vec![program];
    if cfg!(feature = "bpf-compile") {
        configs.push(AfPacketConfig {
            bpf_filter: Some("udp and not port 9".into()),
            ..small_ring()
        });
    }
    for cfg in configs {
        let mut sock = ns.run(move || AfPacketSocket::open("veth0", &cfg, None).unwrap());
        ns.run(|| {
            let mut tx = Sender::open("veth1").unwrap();
            for i in 0..50u16 {
                tx.send(&tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1000 + i, 80))
                    .unwrap();
                tx.send(&udp_frame(
                    [10, 0, 0, 1],
                    [10, 0, 0, 2],
                    1000 + i,
                    53,
                    &[],
                    i as u32,
                    20,
                ))
                .unwrap();
            }
        });
        let got = collect(
            &mut sock,
            50,
            Duration::from_secs(5),
            Duration::from_millis(200),
        );
        assert_eq!(got.len(), 50);
        assert!(
            got.iter().all(|f| f[23] == 17),
            "only UDP passes the filter"
        );
        assert_eq!(
            sock.stats().packets,
            50,
            "the kernel counts only what the filter accepted"
        );
    }
}

#[test]
fn live_open_errors_name_the_interface() {
    if !live_util::is_root() {
        return;
    }
    let e = match AfPacketSocket::open("shrk-nope0", &AfPacketConfig::default(), None) {
        Err(e) => e,
        Ok(_) => panic!("opened a missing interface"),
    };
    assert!(matches!(e, LiveError::NoSuchInterface { .. }), "{e}");
    assert!(e.to_string().contains("shrk-nope0"), "{e}");

    let bad = AfPacketConfig {
        block_size: 1000,
        ..Default::default()
    };
    let e = AfPacketSocket::open("lo", &bad, None).err().unwrap();
    assert!(
        matches!(e, LiveError::Config { .. }) && e.to_string().contains("block-size"),
        "{e}"
    );

    // Without CAP_NET_RAW (dropped for this thread only): a permission error naming `lo`.
    let e = std::thread::spawn(|| {
        drop_net_raw();
        AfPacketSocket::open("lo", &AfPacketConfig::default(), None).err()
    })
    .join()
    .unwrap()
    .expect("opened without CAP_NET_RAW");
    assert!(matches!(e, LiveError::Permission { .. }), "{e}");
    assert!(
        e.to_string().contains("lo:") && e.to_string().contains("CAP_NET_RAW"),
        "{e}"
    );
}

#[test]
fn live_fanout_group_clash_is_a_clear_error() {
    let Some(ns) = NetNs::new("clash") else {
        return;
    };
    let e = ns.run(|| {
        let a = AfPacketConfig {
            cluster_id: 7,
            ..small_ring()
        };
        let _first = afpacket::open_fanout("veth0", 2, &a).unwrap();
        let b = AfPacketConfig {
            cluster_type: ClusterType::Lb,
            ..a
        };
        afpacket::open_fanout("veth0", 2, &b).err().unwrap()
    });
    assert!(
        e.to_string().contains("cluster-id") && e.to_string().contains("veth0"),
        "{e}"
    );
}

#[test]
fn live_ring_unlocked_when_memlock_is_too_low() {
    let Some(ns) = NetNs::new("memlock") else {
        return;
    };
    // This thread loses CAP_IPC_LOCK and the process limit drops to 64 KiB, so MAP_LOCKED
    // of a 1 MiB ring fails; the ring is mapped unlocked and works. (Other tests' threads
    // keep CAP_IPC_LOCK, which bypasses the limit, so they are not affected.)
    let (mut sock, locked) = ns.run(|| {
        drop_cap(14); // CAP_IPC_LOCK
        let mut old = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `old` is a writable rlimit.
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut old) },
            0
        );
        let low = libc::rlimit {
            rlim_cur: 64 * 1024,
            rlim_max: old.rlim_max,
        };
        // SAFETY: `low` is a valid rlimit.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &low) }, 0);
        let s = AfPacketSocket::open("veth0", &small_ring(), None);
        // SAFETY: restores the limit read above.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &old) }, 0);
        let s = s.unwrap();
        let locked = s.info().locked;
        (s, locked)
    });
    assert!(!locked, "MAP_LOCKED should have failed");
    ns.run(|| {
        let mut tx = Sender::open("veth1").unwrap();
        for f in frames(100) {
            tx.send(&f).unwrap();
        }
    });
    let got = collect(
        &mut sock,
        100,
        Duration::from_secs(5),
        Duration::from_millis(50),
    );
    assert_eq!(got.len(), 100);
    // With the capability (root), the same ring is locked.
    let sock = ns.run(|| AfPacketSocket::open("veth0", &small_ring(), None).unwrap());
    assert!(sock.info().locked);
}

/// Removes CAP_NET_RAW from the calling thread's effective set (capabilities are per thread).
fn drop_net_raw() {
    drop_cap(13);
}

/// Removes capability `cap` from the calling thread's effective set.
fn drop_cap(cap: u32) {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let mut h = Header {
        version: 0x2008_0522,
        pid: 0,
    };
    let mut d = [Data::default(); 2];
    // SAFETY: capget with a v3 header writes two Data structs, which `d` holds.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut h as *mut Header, d.as_mut_ptr()) };
    assert_eq!(rc, 0, "capget");
    d[0].effective &= !(1 << cap);
    // SAFETY: capset reads the header and two Data structs; pid 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &mut h as *mut Header, d.as_ptr()) };
    assert_eq!(rc, 0, "capset");
}
