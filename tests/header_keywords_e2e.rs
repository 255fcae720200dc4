//! End to end for `icmpv6.mtu` and `flow.age` (Suricata 7 keywords that were reported "not
//! enforced"): the shrike binary alerts on the same (sid, packet) pairs as Suricata 7.0.10
//! (`suricata -r <pcap> -S <rules> -k none --runmode single`, pairs copied from its
//! `eve.json`) on generated ICMPv6 messages and on a corpus capture with TCP and UDP flows.

mod common;
mod hostile_util;

use common::TempDir;
use hostile_util::{eth, ipv6, Pcap};

/// An ICMPv6 message (checksum left 0: read with `-k none`).
fn icmp6(ty: u8, code: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![ty, code, 0, 0];
    m.extend_from_slice(body);
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    let mut b = a;
    a[15] = 1;
    b[15] = 2;
    eth(0x86dd, &ipv6(a, b, 58, &m))
}

#[test]
fn icmpv6_mtu_on_packet_too_big_only() {
    let dir = TempDir::new("icmpv6-mtu");
    let mut cap = Pcap::new(1);
    let quoted = [0u8; 48];
    let with = |mtu: u32| [&mtu.to_be_bytes()[..], &quoted[..]].concat();
    cap.push(1_700_000_000_000_000, &icmp6(2, 0, &with(1280)));
    cap.push(1_700_000_001_000_000, &icmp6(2, 0, &with(9000)));
    // Code 1, another type, a message too short for the MTU: no MTU.
    cap.push(1_700_000_002_000_000, &icmp6(2, 1, &with(1280)));
    cap.push(1_700_000_003_000_000, &icmp6(1, 0, &with(1280)));
    cap.push(1_700_000_004_000_000, &icmp6(2, 0, &[0, 0]));
    let pcap = dir.path().join("mtu.pcap");
    cap.write(&pcap);
    let rules = "\
alert icmp any any -> any any (msg:\"1280\"; icmpv6.mtu:1280; sid:1;)
alert icmp any any -> any any (msg:\">1500\"; icmpv6.mtu:>1500; sid:2;)
alert ip any any -> any any (msg:\"any\"; icmpv6.mtu:>0; sid:3;)
";
    assert_eq!(
        common::alert_pairs(&pcap, rules, &dir),
        vec![(1, 1), (2, 2), (3, 1), (3, 2)]
    );
}

#[test]
fn flow_age_in_whole_seconds_as_suricata() {
    let Some(pcap) = common::shared_file("corpus/pcaps/zeek/wikipedia-filtered-plus-udp.pcap")
    else {
        eprintln!("skipped: the shared corpus is not there");
        return;
    };
    let dir = TempDir::new("flow-age");
    let rules = "\
alert ip any any -> any any (msg:\"age>20\"; flow.age:>20; sid:4;)
alert tcp any any -> any any (msg:\"age 0\"; flow.age:0; flowbits:isnotset,a0; flowbits:set,a0; sid:5;)
alert ip any any -> any any (msg:\"age 5-100\"; flow.age:5-100; flowbits:isnotset,a5; flowbits:set,a5; sid:6;)
alert udp any any -> any any (msg:\"age>=2\"; flow.age:>=2; sid:7;)
";
    let mut want = vec![
        (5, 4),
        (5, 12),
        (5, 13),
        (5, 20),
        (5, 27),
        (5, 28),
        (5, 35),
        (5, 40),
        (5, 48),
        (7, 57),
        (7, 58),
        (7, 64),
        (7, 65),
    ];
    want.sort_unstable();
    assert_eq!(common::alert_pairs(&pcap, rules, &dir), want);
}
