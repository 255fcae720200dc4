//! Overlap policies (table-driven, every `host-os-policy`), and property tests.

mod stream_util;

use proptest::prelude::*;
use shrike_stream::Dir::{ToClient as TC, ToServer as TS};
use shrike_stream::{HostOsPolicy, OsPolicy, StreamConfig};
use stream_util::*;

/// Runs: original `[10,20)` of 'o', then the new segment, then fills, acks everything and
/// returns the 30-byte stream seen by the app layer.
fn run(policy: OsPolicy, new: (u32, u32)) -> Vec<u8> {
    let hosts = HostOsPolicy::from_map([(policy.name(), vec!["10.0.0.2"])]).unwrap();
    let mut c = Conn::with_policy(StreamConfig::default(), hosts);
    c.handshake();
    let base = 1001u32;
    c.send(TS, ACK, base + 10, 5001, &[b'o'; 10]);
    let (s, e) = new;
    c.send(TS, ACK, base + s, 5001, &vec![b'n'; (e - s) as usize]);
    c.send(TS, ACK, base, 5001, &[b'f'; 10]);
    c.send(TS, ACK, base + 20, 5001, &[b'f'; 10]);
    c.send(TC, ACK, 5001, base + 30, b"");
    c.app[0].clone()
}

#[test]
fn every_policy_on_every_overlap_shape() {
    use OsPolicy as P;
    // (shape, new segment, policies that take the new data); from Suricata's
    // DoHandleDataOverlap.
    let shapes: [(&str, (u32, u32), &[P]); 9] = [
        ("same start, shorter", (10, 15), &[P::Last]),
        (
            "same start, same end",
            (10, 20),
            &[P::OldLinux, P::Solaris, P::Hpux11, P::Last],
        ),
        (
            "same start, longer",
            (10, 25),
            &[P::Linux, P::OldLinux, P::Solaris, P::Hpux11, P::Last],
        ),
        (
            "before, ends inside",
            (5, 15),
            &[
                P::Bsd,
                P::Hpux10,
                P::Irix,
                P::Windows,
                P::Windows2k3,
                P::OldLinux,
                P::Linux,
                P::Macos,
                P::Last,
            ],
        ),
        (
            "before, same end",
            (5, 20),
            &[
                P::Bsd,
                P::Hpux10,
                P::Irix,
                P::Windows,
                P::Windows2k3,
                P::OldLinux,
                P::Linux,
                P::Macos,
                P::Solaris,
                P::Hpux11,
                P::Last,
            ],
        ),
        (
            "before, beyond",
            (5, 25),
            &[
                P::Bsd,
                P::Hpux10,
                P::Irix,
                P::Windows,
                P::Windows2k3,
                P::OldLinux,
                P::Linux,
                P::Macos,
                P::Solaris,
                P::Hpux11,
                P::Last,
            ],
        ),
        ("after, ends inside", (12, 18), &[P::Last]),
        ("after, same end", (12, 20), &[P::Last]),
        ("after, beyond", (12, 25), &[P::Solaris, P::Hpux11, P::Last]),
    ];
    for (name, seg, takers) in shapes {
        for p in OsPolicy::ALL {
            let got = run(p, seg);
            assert_eq!(got.len(), 30, "{name} {p:?}");
            let (s, e) = seg;
            let overlap = &got[s.max(10) as usize..e.min(20) as usize];
            // Suricata's stream engine runs `bsd-right` as `bsd` and `old-solaris` as
            // `solaris` (StreamTcpSetOSPolicy).
            let eff = match p {
                P::BsdRight => P::Bsd,
                P::OldSolaris => P::Solaris,
                p => p,
            };
            let want = if takers.contains(&eff) { b'n' } else { b'o' };
            assert!(
                overlap.iter().all(|&b| b == want),
                "{name} {}: {:?}",
                p.name(),
                String::from_utf8_lossy(&got)
            );
            // Bytes outside the original segment come from the new one where it covers
            // them, from the fillers elsewhere (the fillers never win over stored data
            // except where the policy lets later data win).
            assert!(got[..5].iter().all(|&b| b == b'f'), "{name} {p:?}");
        }
    }
}

#[test]
fn classic_pattern_first_bsd_last() {
    // Original 'A' at [0,5) and [10,15); 'B' at [5,15) then [0,15).
    for (policy, want) in [
        (OsPolicy::Bsd, &b"AAAAABBBBBBBBBB"[..]),
        (OsPolicy::Linux, &b"BBBBBBBBBBBBBBB"[..]),
        (OsPolicy::First, &b"AAAAABBBBBAAAAA"[..]),
        (OsPolicy::Vista, &b"AAAAABBBBBAAAAA"[..]),
        (OsPolicy::Last, &b"BBBBBBBBBBBBBBB"[..]),
    ] {
        let hosts = HostOsPolicy::from_map([(policy.name(), vec!["10.0.0.2"])]).unwrap();
        let mut c = Conn::with_policy(StreamConfig::default(), hosts);
        c.handshake();
        c.send(TS, ACK, 1001, 5001, b"AAAAA");
        c.send(TS, ACK, 1011, 5001, b"AAAAA");
        c.send(TS, ACK, 1006, 5001, b"BBBBBBBBBB");
        c.send(TS, ACK, 1001, 5001, b"BBBBBBBBBBBBBBB");
        c.send(TC, ACK, 5001, 1016, b"");
        assert_eq!(c.app[0], want, "{policy:?}");
    }
}

fn reference(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Consistent data in any order, with duplicates and overlaps, reassembles to the
    /// reference stream under every policy.
    #[test]
    fn random_orders_reassemble_to_reference(
        n in 1usize..3000,
        seed in any::<u64>(),
        cuts in proptest::collection::vec(1usize..400, 1..40),
        extra in proptest::collection::vec((0usize..3000, 1usize..300), 0..20),
        order in any::<u64>(),
        pol in 0usize..15,
    ) {
        let data = reference(n, seed);
        let mut segs: Vec<(usize, usize)> = Vec::new();
        let mut at = 0;
        let mut i = 0;
        while at < n {
            let l = cuts[i % cuts.len()].min(n - at);
            segs.push((at, at + l));
            at += l;
            i += 1;
        }
        for (s, l) in extra {
            if s < n {
                segs.push((s, (s + l).min(n)));
            }
        }
        // Deterministic shuffle.
        let mut r = order | 1;
        for k in (1..segs.len()).rev() {
            r ^= r << 13; r ^= r >> 7; r ^= r << 17;
            segs.swap(k, (r % (k as u64 + 1)) as usize);
        }
        let policy = OsPolicy::ALL[pol];
        let hosts = HostOsPolicy::from_map([(policy.name(), vec!["10.0.0.2"])]).unwrap();
        let mut c = Conn::with_policy(StreamConfig::default(), hosts);
        c.handshake();
        for (s, e) in segs {
            c.send(TS, ACK, 1001 + s as u32, 5001, &data[s..e]);
        }
        c.send(TC, ACK, 5001, 1001 + n as u32, b"");
        prop_assert_eq!(&c.app[0], &data);
        c.end();
        prop_assert_eq!(&c.raw[0], &data);
    }

    /// Arbitrary segments and flags never panic and memory stays accounted.
    #[test]
    fn random_packets_never_panic(
        pkts in proptest::collection::vec(
            (any::<bool>(), any::<u8>(), 0u32..5000, 0u32..5000, proptest::collection::vec(any::<u8>(), 0..64)),
            1..60),
        midstream in any::<bool>(),
    ) {
        let cfg = StreamConfig { midstream, ..StreamConfig::default() };
        let mut c = Conn::new(cfg);
        for (to_server, flags, seq, ack, payload) in pkts {
            let d = if to_server { TS } else { TC };
            c.send(d, flags, 1000 + seq, 5000 + ack, &payload);
        }
        c.end();
        c.eng.release(&mut c.ssn);
        prop_assert_eq!(c.eng.stats.reassembly_memuse, 0);
        prop_assert_eq!(c.eng.stats.memuse, 0);
    }
}
