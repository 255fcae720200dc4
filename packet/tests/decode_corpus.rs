//! Decodes every packet of every capture in the shared corpus (no panic, every packet
//! read), prints what was decoded, and checks addresses, ports and protocols against the
//! `etherparse` crate where both decode the packet.

mod decode_util;

use std::collections::BTreeMap;
use std::net::IpAddr;

use decode_util::pcap;
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use shrike_capture::LinkType;
use shrike_packet::decode::{decode, flags, DecodeConfig, DecodeStats, PacketKind, PacketMeta};

/// Manifest packet counts by relative path.
fn manifest(dir: &std::path::Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?.to_string(), f.nth(1)?.parse().ok()?))
        })
        .collect()
}

/// What etherparse makes of a frame: (src, dst, Some((proto, sport, dport))).
type Oracle = (IpAddr, IpAddr, Option<(u8, u16, u16)>);

fn etherparse_view(link: LinkType, data: &[u8]) -> Option<Oracle> {
    let s = match link {
        LinkType::Ethernet => SlicedPacket::from_ethernet(data),
        LinkType::Raw | LinkType::Ipv4 | LinkType::Ipv6 => SlicedPacket::from_ip(data),
        LinkType::LinuxSll => SlicedPacket::from_linux_sll(data),
        _ => return None,
    }
    .ok()?;
    let (src, dst): (IpAddr, IpAddr) = match s.net? {
        NetSlice::Ipv4(v) => (
            v.header().source_addr().into(),
            v.header().destination_addr().into(),
        ),
        NetSlice::Ipv6(v) => (
            v.header().source_addr().into(),
            v.header().destination_addr().into(),
        ),
        NetSlice::Arp(_) => return None,
    };
    let l4 = match s.transport {
        Some(TransportSlice::Tcp(t)) => Some((6, t.source_port(), t.destination_port())),
        Some(TransportSlice::Udp(u)) => Some((17, u.source_port(), u.destination_port())),
        _ => None,
    };
    Some((src, dst, l4))
}

/// Frames where our meta describes the same (outermost, plain) IP packet etherparse sees.
fn comparable(m: &PacketMeta) -> bool {
    m.is_ip() && m.tunnel_depth == 0 && !m.is_invalid()
}

#[test]
fn corpus_decodes_without_panic_and_matches_etherparse() {
    let Some(dir) = pcap::corpus_dir() else {
        eprintln!("corpus not found (set SHRIKE_SHARED); skipping");
        return;
    };
    let man = manifest(&dir);
    let cfg = DecodeConfig {
        checksum_validation: true,
        ..Default::default()
    };
    let mut stats = DecodeStats::default();
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let mut links: BTreeMap<String, u64> = BTreeMap::new();
    let (mut files, mut unreadable, mut compared, mut ports_compared) = (0, 0, 0u64, 0u64);
    let mut mismatches = Vec::new();
    let mut count_diffs = Vec::new();
    for path in pcap::capture_files(&dir) {
        let rel = path
            .strip_prefix(&dir)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let Some(pkts) = pcap::read(&path) else {
            unreadable += 1;
            continue;
        };
        files += 1;
        if let Some(want) = man.get(&rel) {
            if pkts.len() as u64 != *want {
                count_diffs.push(format!("{rel}: read {} manifest {want}", pkts.len()));
            }
        }
        for (i, p) in pkts.iter().enumerate() {
            let link = LinkType::from_linktype(p.linktype);
            *links.entry(format!("{link}")).or_default() += 1;
            let m = decode(link, &p.data, &cfg, &mut stats);
            *kinds.entry(format!("{:?}", m.kind)).or_default() += 1;
            if !comparable(&m) {
                continue;
            }
            let Some((src, dst, l4)) = etherparse_view(link, &p.data) else {
                continue;
            };
            compared += 1;
            if m.src_addr() != Some(src) || m.dst_addr() != Some(dst) {
                mismatches.push(format!(
                    "{rel}#{i}: addrs {:?}->{:?} vs {src}->{dst}",
                    m.src_addr(),
                    m.dst_addr()
                ));
                continue;
            }
            if let Some((proto, sp, dp)) = l4 {
                if m.kind == PacketKind::L4 && !m.has(flags::FRAGMENT) {
                    ports_compared += 1;
                    if (m.proto, m.sport, m.dport) != (proto, sp, dp) {
                        mismatches.push(format!(
                            "{rel}#{i}: l4 {}/{}/{} vs {proto}/{sp}/{dp}",
                            m.proto, m.sport, m.dport
                        ));
                    }
                }
            }
        }
    }
    println!(
        "files {files} (unreadable {unreadable}), packets {}",
        stats.pkts
    );
    println!("link types {links:?}");
    println!("kinds {kinds:?}");
    println!("compared with etherparse: {compared} packets, {ports_compared} with ports");
    let mut nonzero = Vec::new();
    stats.visit(&mut |n, v| {
        if v > 0 {
            nonzero.push(format!("{n}={v}"));
        }
    });
    println!("{}", nonzero.join("\n"));
    for m in mismatches.iter().take(20) {
        println!("MISMATCH {m}");
    }
    println!("packet-count differences: {count_diffs:?}");
    assert!(count_diffs.is_empty());
    assert!(files > 1000, "corpus looks incomplete: {files} files");
    assert_eq!(unreadable, 0);
    assert!(
        compared > 100_000 && ports_compared > 100_000,
        "too little overlap with etherparse"
    );
    assert!(
        mismatches.is_empty(),
        "{} mismatches with etherparse",
        mismatches.len()
    );
}

/// Prints our non-zero decoder counters for the capture in `$SHRIKE_STATS_PCAP` (used to
/// compare with Suricata's `stats.decoder` by hand): `cargo test --test decode_corpus --
/// --ignored --nocapture`.
#[test]
#[ignore]
fn print_decoder_stats_of_one_capture() {
    let Some(p) = std::env::var_os("SHRIKE_STATS_PCAP") else {
        return;
    };
    let pkts = pcap::read(std::path::Path::new(&p)).expect("readable capture");
    let mut st = DecodeStats::default();
    for p in &pkts {
        decode(
            LinkType::from_linktype(p.linktype),
            &p.data,
            &DecodeConfig::default(),
            &mut st,
        );
    }
    st.visit(&mut |n, v| {
        if v > 0 {
            println!("OURS {n} {v}");
        }
    });
}
