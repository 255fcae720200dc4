//! Packet keywords and payload buffers, table-driven: each case is one rule and one packet
//! with the expected verdict (checked against Suricata 7 semantics).

mod engine_common;

use engine_common::*;

fn tcp_plain(payload: &[u8]) -> Vec<u8> {
    tcp4(C4, S4, 40000, 80, 100, 200, ACK | PSH, payload)
}

fn syn() -> Vec<u8> {
    tcp4(C4, S4, 40000, 80, 100, 0, SYN, b"")
}

fn synack() -> Vec<u8> {
    tcp4(S4, C4, 80, 40000, 100, 101, SYN | ACK, b"")
}

fn with_opts(opts: &[u8]) -> Vec<u8> {
    eth(
        0x0800,
        &ipv4_opts(C4, S4, 17, opts, &udp(&C4, &S4, 1000, 53, b"hello")),
    )
}

fn tcp_mss(mss: u16) -> Vec<u8> {
    let o = [2, 4, (mss >> 8) as u8, mss as u8];
    eth(
        0x0800,
        &ipv4(C4, S4, 6, &tcp_full(&C4, &S4, 1, 2, 7, 0, SYN, &o, b"")),
    )
}

fn bad_tcp_csum() -> Vec<u8> {
    let mut f = tcp_plain(b"data");
    let n = f.len();
    // Payload byte changed after the checksum was computed.
    f[n - 1] ^= 0xff;
    f
}

fn truncated_ipv4() -> Vec<u8> {
    let mut f = udp4(C4, S4, 1, 2, b"abcdef");
    // IP total length larger than the frame.
    f[14 + 2] = 0x05;
    f[14 + 3] = 0x00;
    fix_ipv4_csum(&mut f[14..]);
    f
}

fn v6_udp(payload: &[u8]) -> Vec<u8> {
    let (a, b) = (v6(1), v6(2));
    eth(0x86dd, &ipv6(a, b, 17, &udp(&a, &b, 5000, 53, payload)))
}

fn check(cases: &[(&str, Vec<u8>, bool)]) {
    for (i, (opts, frame, want)) in cases.iter().enumerate() {
        let rule = if opts.starts_with("alert") {
            opts.to_string()
        } else {
            format!("alert ip any any -> any any ({opts} sid:1;)")
        };
        let mut sim = Sim::new(&rule);
        let got = sim.feed(&at(frame.clone(), 0.0));
        assert_eq!(!got.is_empty(), *want, "case {i}: {rule}");
    }
}

#[test]
fn payload_content_and_modifiers() {
    check(&[
        ("content:\"abc\";", tcp_plain(b"xxabcxx"), true),
        ("content:\"abc\";", tcp_plain(b"xxABCxx"), false),
        ("content:\"abc\"; nocase;", tcp_plain(b"xxABCxx"), true),
        ("content:\"abc\"; offset:3;", tcp_plain(b"xxabcxx"), false),
        ("content:\"abc\"; depth:4;", tcp_plain(b"xxabcxx"), false),
        ("content:\"abc\"; depth:5;", tcp_plain(b"xxabcxx"), true),
        (
            "content:\"xx\"; content:\"xx\"; distance:3;",
            tcp_plain(b"xxabcxx"),
            true,
        ),
        (
            "content:\"xx\"; content:\"xx\"; distance:4;",
            tcp_plain(b"xxabcxx"),
            false,
        ),
        (
            "content:\"|61 62|c\"; startswith;",
            tcp_plain(b"abcd"),
            true,
        ),
        ("content:\"bcd\"; endswith;", tcp_plain(b"abcd"), true),
        ("content:\"abc\"; endswith;", tcp_plain(b"abcd"), false),
        // A negated content alone still needs payload (Suricata's payload mask).
        ("content:!\"zzz\";", tcp_plain(b"abcd"), true),
        ("content:!\"zzz\";", syn(), false),
        ("content:!\"bc\";", tcp_plain(b"abcd"), false),
        ("pcre:\"/a.c/\";", tcp_plain(b"xxabcxx"), true),
        ("pcre:\"/^abc/\";", tcp_plain(b"xxabcxx"), false),
        (
            "content:\"ab\"; pcre:\"/^c/R\";",
            tcp_plain(b"xxabcxx"),
            true,
        ),
        (
            "content:\"|00 05|\"; byte_test:1,=,5,-1,relative;",
            tcp_plain(b"\x00\x05zz"),
            true,
        ),
        ("byte_test:2,>,4,0;", tcp_plain(b"\x00\x05zz"), true),
        ("byte_test:2,<,4,0;", tcp_plain(b"\x00\x05zz"), false),
        (
            "byte_jump:1,0; content:\"Z\"; within:1;",
            tcp_plain(b"\x02abZ"),
            true,
        ),
        // byte_jump with a byte_extract variable as its byte count (Suricata 7).
        (
            "content:\"|00 00 00|\"; byte_extract:1,0,n,relative; byte_jump:n,0,relative; content:\"Z\"; within:1;",
            tcp_plain(b"\x00\x00\x00\x02\x00\x01xZ"),
            true,
        ),
        (
            "content:\"|00 00 00|\"; byte_extract:1,0,n,relative; byte_jump:n,0,relative; content:\"Z\"; within:1;",
            tcp_plain(b"\x00\x00\x00\x01\x00\x01xZ"),
            false,
        ),
        // A variable count over 8 never matches.
        (
            "content:\"|00 00 00|\"; byte_extract:1,0,n,relative; byte_jump:n,0,relative;",
            tcp_plain(b"\x00\x00\x00\x09abcdefghijklmnop"),
            false,
        ),
        // A count of 0 reads nothing and jumps by 0 (Suricata 7; sv detect-bytejump-02).
        (
            "content:\"|00 00 00|\"; byte_extract:1,0,n,relative; byte_jump:n,0,relative; content:\"a\"; within:1;",
            tcp_plain(b"\x00\x00\x00\x00abcdefghijklmnop"),
            true,
        ),
        (
            "content:\"|00 00 00|\"; byte_extract:1,4,n,relative; byte_jump:n,0,relative; isdataat:1,relative;",
            tcp_plain(b"\x00\x00\x00\x054#\x06\x00!\n"),
            true,
        ),
        // ... but not from past the end of the buffer.
        ("byte_jump:0,6;", tcp_plain(b"abcde"), false),
        ("byte_jump:0,5; isdataat:!1,relative;", tcp_plain(b"abcde"), true),
        ("isdataat:10;", tcp_plain(b"short"), false),
        ("isdataat:!10;", tcp_plain(b"short"), true),
        (
            "content:\"sh\"; isdataat:3,relative;",
            tcp_plain(b"short"),
            true,
        ),
        (
            "content:\"sh\"; isdataat:4,relative;",
            tcp_plain(b"short"),
            false,
        ),
        (
            "content:\"abc\"; fast_pattern; content:\"zz\";",
            tcp_plain(b"abc zz"),
            true,
        ),
        (
            "content:\"abc\"; fast_pattern; content:\"zz\";",
            tcp_plain(b"abc z"),
            false,
        ),
    ]);
}

#[test]
fn dsize_forms() {
    let p = || tcp_plain(&[b'x'; 10]);
    check(&[
        ("dsize:10;", p(), true),
        ("dsize:9;", p(), false),
        ("dsize:<11;", p(), true),
        ("dsize:>10;", p(), false),
        ("dsize:>=10;", p(), true),
        ("dsize:<=9;", p(), false),
        ("dsize:5<>20;", p(), true),
        ("dsize:10<>20;", p(), false),
        ("dsize:!9;", p(), true),
        ("dsize:0;", syn(), true),
        ("dsize:0;", p(), false),
    ]);
}

#[test]
fn ip_header_keywords() {
    let p = || udp4(C4, S4, 1000, 53, b"q");
    check(&[
        ("ttl:64;", p(), true),
        ("ttl:<10;", p(), false),
        ("ttl:60-70;", p(), true),
        ("tos:0;", p(), true),
        ("tos:!0;", p(), false),
        ("id:4660;", p(), true),
        ("id:4661;", p(), false),
        ("fragbits:D;", p(), true),
        ("fragbits:M;", p(), false),
        ("fragbits:!M;", p(), true),
        ("fragbits:*MD;", p(), true),
        ("fragoffset:0;", p(), true),
        ("fragoffset:>0;", p(), false),
        ("ip_proto:17;", p(), true),
        ("ip_proto:udp;", p(), true),
        ("ip_proto:!17;", p(), false),
        ("ipopts:any;", p(), false),
        ("ipopts:rr;", with_opts(&[7, 7, 4, 0, 0, 0, 0, 0]), true),
        ("ipopts:any;", with_opts(&[7, 7, 4, 0, 0, 0, 0, 0]), true),
        ("ipopts:ts;", with_opts(&[7, 7, 4, 0, 0, 0, 0, 0]), false),
        ("sameip;", p(), false),
        (
            "sameip;",
            eth(0x0800, &ipv4(C4, C4, 17, &udp(&C4, &C4, 1, 2, b"x"))),
            true,
        ),
        ("ttl:64;", v6_udp(b"x"), true),
        ("tos:0;", v6_udp(b"x"), false),
        ("id:4660;", v6_udp(b"x"), false),
    ]);
}

#[test]
fn tcp_keywords() {
    check(&[
        ("flags:S;", syn(), true),
        ("flags:S;", synack(), false),
        ("flags:SA;", synack(), true),
        ("flags:S+;", synack(), true),
        ("flags:*SF;", synack(), true),
        ("flags:!S;", synack(), false),
        ("flags:!F;", synack(), true),
        ("flags:!SA;", synack(), false),
        ("flags:A,S;", synack(), true),
        ("flags:AP;", tcp_plain(b"x"), true),
        ("flags:S;", udp4(C4, S4, 1, 2, b"x"), false),
        ("seq:100;", syn(), true),
        ("seq:101;", syn(), false),
        ("ack:101;", synack(), true),
        ("window:65535;", syn(), true),
        ("window:!65535;", syn(), false),
        ("tcp.mss:1460;", tcp_mss(1460), true),
        ("tcp.mss:>1460;", tcp_mss(1460), false),
        ("tcp.mss:1460;", syn(), false),
        ("tcpv4-csum:valid;", tcp_plain(b"data"), true),
        ("tcpv4-csum:invalid;", tcp_plain(b"data"), false),
        ("tcpv4-csum:invalid;", bad_tcp_csum(), true),
    ]);
}

#[test]
fn icmp_keywords() {
    let echo = || icmp4_echo(C4, S4, 8, 0x1234, 7, b"ping");
    let reply = || icmp4_echo(S4, C4, 0, 0x1234, 7, b"ping");
    check(&[
        ("itype:8;", echo(), true),
        ("itype:0;", echo(), false),
        ("itype:>7;", echo(), true),
        ("itype:7<>20;", echo(), true),
        ("icode:0;", echo(), true),
        ("icmp_id:4660;", echo(), true),
        ("icmp_id:4660;", reply(), true),
        ("icmp_seq:7;", echo(), true),
        ("icmp_seq:8;", echo(), false),
        ("itype:8;", udp4(C4, S4, 1, 2, b"x"), false),
        (
            "alert icmp any any -> any any (itype:8; sid:1;)",
            echo(),
            true,
        ),
        (
            "alert icmpv6 any any -> any any (itype:8; sid:1;)",
            echo(),
            false,
        ),
        (
            "alert icmp any any -> any any (icmpv4.hdr; content:\"|08 00|\"; depth:2; sid:1;)",
            echo(),
            true,
        ),
        (
            "alert icmp any any -> any any (icmpv4.hdr; content:\"ping\"; sid:1;)",
            echo(),
            false,
        ),
    ]);
}

#[test]
fn header_buffers() {
    check(&[
        (
            "ipv4.hdr; content:\"|40 11|\"; offset:8; depth:2;",
            udp4(C4, S4, 1, 2, b"x"),
            true,
        ),
        (
            "ipv4.hdr; content:\"|40 06|\"; offset:8; depth:2;",
            udp4(C4, S4, 1, 2, b"x"),
            false,
        ),
        (
            "udp.hdr; content:\"|00 35|\"; offset:2; depth:2;",
            udp4(C4, S4, 1000, 53, b"x"),
            true,
        ),
        (
            "tcp.hdr; content:\"|ff ff|\"; offset:14; depth:2;",
            syn(),
            true,
        ),
        (
            "ipv6.hdr; content:\"|11 40|\"; offset:6; depth:2;",
            v6_udp(b"x"),
            true,
        ),
        (
            "ipv6.hdr; content:\"|11 40|\"; offset:6; depth:2;",
            udp4(C4, S4, 1, 2, b"x"),
            false,
        ),
        // Byte variables flow between keywords of a header buffer.
        (
            "ipv4.hdr; byte_extract:1,8,ttl_v; byte_test:1,=,ttl_v,8;",
            udp4(C4, S4, 1, 2, b"x"),
            true,
        ),
    ]);
}

#[test]
fn rule_header_matching() {
    let out = || udp4(C4, S4, 1000, 53, b"q");
    check(&[
        ("alert udp any any -> any 53 (sid:1;)", out(), true),
        ("alert udp any any -> any 54 (sid:1;)", out(), false),
        ("alert udp any 1000 -> any any (sid:1;)", out(), true),
        ("alert udp any !1000 -> any any (sid:1;)", out(), false),
        (
            "alert udp any [900:1100] -> any [53,80] (sid:1;)",
            out(),
            true,
        ),
        (
            "alert udp 192.168.0.0/16 any -> any any (sid:1;)",
            out(),
            true,
        ),
        (
            "alert udp !192.168.0.0/16 any -> any any (sid:1;)",
            out(),
            false,
        ),
        (
            "alert udp $HOME_NET any -> $EXTERNAL_NET any (sid:1;)",
            out(),
            true,
        ),
        (
            "alert udp $EXTERNAL_NET any -> $HOME_NET any (sid:1;)",
            out(),
            false,
        ),
        (
            "alert udp $EXTERNAL_NET any <> $HOME_NET any (sid:1;)",
            out(),
            true,
        ),
        ("alert udp any 53 <> any 1000 (sid:1;)", out(), true),
        ("alert tcp any any -> any any (sid:1;)", out(), false),
        ("alert ip any any -> any 53 (sid:1;)", out(), true),
        (
            "alert ip any any -> any 53 (sid:1;)",
            icmp4_echo(C4, S4, 8, 1, 1, b""),
            false,
        ),
        ("alert ipv4 any any -> any any (sid:1;)", out(), true),
        ("alert ipv6 any any -> any any (sid:1;)", out(), false),
        ("alert ipv6 any any -> any any (sid:1;)", v6_udp(b"x"), true),
        (
            "alert udp any any -> 2001:db8::2 53 (sid:1;)",
            v6_udp(b"x"),
            true,
        ),
        (
            "alert udp any any -> 2001:db8::3 53 (sid:1;)",
            v6_udp(b"x"),
            false,
        ),
        (
            "alert tcp-pkt any any -> any any (content:\"q\"; sid:1;)",
            tcp_plain(b"q"),
            true,
        ),
    ]);
}

#[test]
fn decoder_events() {
    check(&[
        (
            "alert pkthdr any any -> any any (decode-event:ipv4.trunc_pkt; sid:1;)",
            truncated_ipv4(),
            true,
        ),
        (
            "alert pkthdr any any -> any any (decode-event:ipv4.trunc_pkt; sid:1;)",
            udp4(C4, S4, 1, 2, b"ok"),
            false,
        ),
        (
            "alert pkthdr any any -> any any (decode-event:ipv4.pkt_too_small; sid:1;)",
            truncated_ipv4(),
            false,
        ),
    ]);
}
