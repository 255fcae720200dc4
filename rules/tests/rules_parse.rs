//! Table-driven parser tests: header, addresses, ports, escapes and every
//! keyword family, positive and negative.

use shrike_rules::parse::keywords::{
    BitCmd, BitsModifier, FlowintOp, Keyword, StreamSide, ThresholdType, Track,
};
use shrike_rules::parse::*;

fn vars() -> Vars {
    Vars::suricata_defaults()
}

fn rule(opts: &str) -> PResult<Rule> {
    parse_rule(
        &format!("alert tcp any any -> any any ({opts} sid:1;)"),
        &vars(),
    )
}

fn ok(opts: &str) -> Rule {
    match rule(opts) {
        Ok(r) => r,
        Err(e) => panic!("`{opts}` should parse: {e}"),
    }
}

fn contents(r: &Rule, buf: &str) -> Vec<Content> {
    let id = BufferId::by_name(buf).expect("buffer");
    r.section(id)
        .map(|s| {
            s.matches
                .iter()
                .filter_map(|m| match m {
                    Match::Content(c) => Some(c.clone()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn header_actions_protocols_directions() {
    let v = vars();
    for a in [
        "alert",
        "pass",
        "drop",
        "reject",
        "rejectsrc",
        "rejectdst",
        "rejectboth",
    ] {
        let r = parse_rule(&format!("{a} ip any any -> any any (sid:1;)"), &v).unwrap();
        assert_eq!(r.action.as_str(), a);
    }
    for p in [
        "ip",
        "tcp",
        "udp",
        "icmp",
        "icmpv4",
        "icmpv6",
        "ipv4",
        "ipv6",
        "sctp",
        "http",
        "http1",
        "http2",
        "dns",
        "tls",
        "ssh",
        "smtp",
        "ftp",
        "ftp-data",
        "smb",
        "dcerpc",
        "dhcp",
        "ntp",
        "krb5",
        "snmp",
        "sip",
        "rfb",
        "mqtt",
        "quic",
        "tcp-pkt",
        "tcp-stream",
        "pkthdr",
        "TCP",
    ] {
        assert!(
            parse_rule(&format!("alert {p} any any -> any any (sid:1;)"), &v).is_ok(),
            "{p}"
        );
    }
    let bad = [
        ("alart tcp any any -> any any (sid:1;)", ErrorKind::Action),
        ("alert foo any any -> any any (sid:1;)", ErrorKind::Protocol),
        (
            "alert tcp any any <- any any (sid:1;)",
            ErrorKind::Direction,
        ),
        (
            "alert tcp any any => any any (sid:1;)",
            ErrorKind::Direction,
        ),
        ("alert tcp any any -> any (sid:1;)", ErrorKind::Syntax),
        ("alert tcp any any -> any any (sid:1)", ErrorKind::Syntax),
        (
            "alert tcp any any -> any any (msg:\"x\";)",
            ErrorKind::MissingSid,
        ),
        (
            "alert tcp $NOPE any -> any any (sid:1;)",
            ErrorKind::UndefinedVariable,
        ),
        (
            "alert tcp any $NOPE -> any any (sid:1;)",
            ErrorKind::UndefinedVariable,
        ),
        (
            "alert tcp 1.2.3.4/33 any -> any any (sid:1;)",
            ErrorKind::Address,
        ),
        ("alert tcp !any any -> any any (sid:1;)", ErrorKind::Address),
        ("alert tcp any 70000 -> any any (sid:1;)", ErrorKind::Port),
        ("alert tcp any !any -> any any (sid:1;)", ErrorKind::Port),
        ("alert tcp any [80 -> any any (sid:1;)", ErrorKind::Syntax),
        ("alert tcp any 80:70 -> any any (sid:1;)", ErrorKind::Port),
    ];
    for (text, kind) in bad {
        let e = parse_rule(text, &v).expect_err(text);
        assert_eq!(e.kind, kind, "{text}: {e}");
    }
    let r = parse_rule("alert tcp any any <> any any (sid:1;)", &v).unwrap();
    assert_eq!(r.direction, Direction::Both);
    // Whitespace inside bracketed lists is fine.
    let r = parse_rule(
        "alert tcp [1.1.1.1, 2.2.2.2] [80, 443] -> any any (sid:1;)",
        &v,
    )
    .unwrap();
    assert!(r.src_addr.contains("2.2.2.2".parse().unwrap()));
    assert!(r.src_ports.contains(443));
}

#[test]
fn addresses_compile_with_negation_and_vars() {
    let mut v = vars();
    v.set_address("LIST", "[10.0.0.0/8,!10.1.0.0/16,192.168.1.1]");
    v.set_address("V6", "[2001:db8::/32,!2001:db8::1]");
    v.set_address("LOOP", "$LOOP");
    let cases: &[(&str, &[(&str, bool)])] = &[
        ("any", &[("1.2.3.4", true), ("::1", true)]),
        ("1.2.3.4", &[("1.2.3.4", true), ("1.2.3.5", false)]),
        ("1.2.3.0/24", &[("1.2.3.255", true), ("1.2.4.0", false)]),
        ("1.2.3.7/24", &[("1.2.3.0", true), ("1.2.3.200", true)]),
        (
            "1.2.3.0/255.255.255.0",
            &[("1.2.3.9", true), ("1.2.2.9", false)],
        ),
        ("1.2.3.4-1.2.3.6", &[("1.2.3.5", true), ("1.2.3.7", false)]),
        (
            "!1.2.3.4",
            &[("1.2.3.4", false), ("1.2.3.5", true), ("::1", false)],
        ),
        ("[!1.2.3.4]", &[("1.2.3.4", false), ("9.9.9.9", true)]),
        (
            "$HOME_NET",
            &[
                ("192.168.5.5", true),
                ("10.9.9.9", true),
                ("172.20.0.1", true),
                ("8.8.8.8", false),
            ],
        ),
        (
            "$EXTERNAL_NET",
            &[
                ("192.168.5.5", false),
                ("8.8.8.8", true),
                ("2001:db8::1", false),
            ],
        ),
        ("$HTTP_SERVERS", &[("10.0.0.1", true), ("11.0.0.1", false)]),
        ("$AIM_SERVERS", &[("8.8.8.8", true), ("10.0.0.1", false)]),
        (
            "$LIST",
            &[
                ("10.2.0.1", true),
                ("10.1.2.3", false),
                ("192.168.1.1", true),
                ("192.168.1.2", false),
            ],
        ),
        (
            "[$LIST,!10.2.0.0/16]",
            &[("10.2.0.1", false), ("10.3.0.1", true)],
        ),
        (
            "![$HOME_NET,8.8.8.8]",
            &[("8.8.8.8", false), ("9.9.9.9", true), ("10.0.0.1", false)],
        ),
        (
            "[1.0.0.0/8,![1.2.0.0/16,!1.2.3.4]]",
            &[("1.1.1.1", true), ("1.2.9.9", false), ("1.2.3.4", true)],
        ),
        (
            "$V6",
            &[
                ("2001:db8::2", true),
                ("2001:db8::1", false),
                ("2001:db9::1", false),
                ("1.1.1.1", false),
            ],
        ),
        ("::1", &[("::1", true), ("::2", false)]),
        ("[::/0]", &[("ffff::1", true), ("1.1.1.1", false)]),
        ("fe80::/10", &[("fe80::1", true), ("fec0::1", false)]),
        ("0.0.0.0/0", &[("255.255.255.255", true), ("::", false)]),
    ];
    for (spec, probes) in cases {
        let set = IpSet::parse(spec, &v).unwrap_or_else(|e| panic!("{spec}: {e}"));
        for (ip, want) in *probes {
            assert_eq!(
                set.contains(ip.parse().unwrap()),
                *want,
                "{spec} contains {ip}"
            );
        }
    }
    for bad in [
        "",
        "1.2.3",
        "1.2.3.4/40",
        "[1.2.3.4",
        "1.2.3.4]",
        "$LOOP",
        "!any",
        "[any,!any]",
        "::1/200",
        "5.5.5.5-1.1.1.1",
        "1.2.3.4/255.0.255.0",
    ] {
        assert!(IpSet::parse(bad, &v).is_err(), "`{bad}` should fail");
    }
    assert!(IpSet::parse("any", &v).unwrap().is_any());
}

#[test]
fn ports_compile_with_ranges_and_vars() {
    let mut v = vars();
    v.set_port("WEB", "[80,443,8000:8100]");
    let cases: &[(&str, &[(u16, bool)])] = &[
        ("any", &[(0, true), (65535, true)]),
        ("80", &[(80, true), (81, false)]),
        ("!80", &[(80, false), (81, true)]),
        ("1024:", &[(1023, false), (1024, true), (65535, true)]),
        (":1023", &[(0, true), (1023, true), (1024, false)]),
        ("10:20", &[(9, false), (10, true), (20, true), (21, false)]),
        ("[80,443]", &[(443, true), (444, false)]),
        ("[1:100,!50]", &[(49, true), (50, false)]),
        ("[!80,!443]", &[(80, false), (443, false), (22, true)]),
        ("$HTTP_PORTS", &[(80, true), (8080, false)]),
        ("$SHELLCODE_PORTS", &[(80, false), (81, true)]),
        (
            "$FILE_DATA_PORTS",
            &[(80, true), (110, true), (143, true), (25, false)],
        ),
        ("$ORACLE_PORTS", &[(1521, true)]),
        ("[$WEB,!8050]", &[(8001, true), (8050, false), (443, true)]),
        ("![$WEB]", &[(80, false), (22, true)]),
        ("[[80,81],[90:91]]", &[(81, true), (90, true), (85, false)]),
    ];
    for (spec, probes) in cases {
        let set = PortSet::parse(spec, &v).unwrap_or_else(|e| panic!("{spec}: {e}"));
        for (p, want) in *probes {
            assert_eq!(set.contains(*p), *want, "{spec} contains {p}");
        }
    }
    for bad in [
        "",
        "65536",
        "abc",
        "20:10",
        "[80",
        "!any",
        "[1:5,!1:5]",
        "$NOPE",
        "-1",
    ] {
        assert!(PortSet::parse(bad, &v).is_err(), "`{bad}` should fail");
    }
}

#[test]
fn option_escapes_and_content_decoding() {
    let cases: &[(&str, &[u8])] = &[
        (r#"content:"abc";"#, b"abc"),
        (r#"content:"a|42|c";"#, b"aBc"),
        (r#"content:"|41 42 43|";"#, b"ABC"),
        (r#"content:"|4142|";"#, b"AB"),
        (r#"content:"|0d 0a|Host|3a 20|";"#, b"\r\nHost: "),
        (r#"content:"a\;b";"#, b"a;b"),
        (r#"content:"a\"b";"#, b"a\"b"),
        (r#"content:"a\\b";"#, b"a\\b"),
        (r#"content:"a\:b";"#, b"a:b"),
        (r#"content:"a\|b";"#, b"a|b"),
        (r#"content: "spaced" ;"#, b"spaced"),
        (r#"content:"x|00|";"#, b"x\0"),
    ];
    for (opt, want) in cases {
        let r = ok(opt);
        let c = contents(&r, "pkt_data");
        assert_eq!(c.len(), 1, "{opt}");
        assert_eq!(c[0].pattern, *want, "{opt}");
    }
    for bad in [
        r#"content:"";"#,
        r#"content:abc;"#,
        r#"content:"|4|";"#,
        r#"content:"|4g|";"#,
        r#"content:"|41";"#,
        r#"content:"a\xb";"#,
        r#"content:"a"b";"#,
        r#"content:"a;b";"#,
    ] {
        assert!(rule(bad).is_err(), "`{bad}` should fail");
    }
    let r = ok(r#"content:!"evil";"#);
    assert!(contents(&r, "pkt_data")[0].negated);
    // msg unescaping.
    let r = ok(r#"msg:"a\;b\"c\\d\:e (^IE[\d])";"#);
    assert_eq!(r.msg, r#"a;b"c\d:e (^IE[\d])"#);
}

#[test]
fn multi_line_and_comments_in_files() {
    let text = "# comment\n\n   # indented comment\n#alert tcp any any -> any any (sid:9;)\nalert tcp any any -> any any (msg:\"a\"; \\\n  content:\"x\"; \\\n  sid:1;)\nalert tcp any any -> any any (sid:2;)\r\n";
    let set = shrike_rules::load_rules_from_str(text, "t.rules", &vars(), &Default::default());
    assert_eq!(set.summary.total, 2);
    assert_eq!(set.summary.loaded, 2);
    assert_eq!(set.rules[0].source.line, 5);
    assert_eq!(set.rules[1].source.line, 8);
    assert_eq!(set.rules[0].rule.sid, 1);
}

#[test]
fn content_modifiers() {
    let r = ok(
        r#"content:"abc"; nocase; offset:2; depth:10; content:"def"; distance:0; within:5; rawbytes; content:"gh"; startswith; endswith; fast_pattern;"#,
    );
    let c = contents(&r, "pkt_data");
    assert!(
        c[0].nocase
            && c[0].offset == Some(IntOrVar::Lit(2))
            && c[0].depth == Some(IntOrVar::Lit(10))
    );
    assert!(
        c[1].distance == Some(IntOrVar::Lit(0))
            && c[1].within == Some(IntOrVar::Lit(5))
            && c[1].rawbytes
    );
    assert!(c[1].is_relative() && !c[0].is_relative());
    assert!(c[2].startswith && c[2].endswith && c[2].fast_pattern == Some(FastPattern::default()));
    let r = ok(r#"content:"abcdef"; fast_pattern:only;"#);
    assert!(contents(&r, "pkt_data")[0].fast_pattern.unwrap().only);
    let r = ok(r#"content:"abcdef"; fast_pattern:1,3;"#);
    assert_eq!(
        contents(&r, "pkt_data")[0].fast_pattern.unwrap().chop,
        Some((1, 3))
    );
    let r = ok(r#"content:"abc"; distance:-2;"#);
    assert_eq!(
        contents(&r, "pkt_data")[0].distance,
        Some(IntOrVar::Lit(-2))
    );
    let r = ok(r#"byte_extract:2,0,len; content:"abc"; distance:len; within:len;"#);
    assert_eq!(contents(&r, "pkt_data")[0].within, Some(IntOrVar::Var(0)));
    let r = ok(r#"content:"abc"; replace:"xyz";"#);
    assert_eq!(
        contents(&r, "pkt_data")[0].replace.as_deref(),
        Some(&b"xyz"[..])
    );
    for bad in [
        "nocase;",
        r#"content:"a"; nocase; nocase;"#,
        r#"content:"abc"; depth:2;"#,
        r#"content:"abc"; depth:0;"#,
        r#"content:"abc"; within:2;"#,
        r#"content:"abc"; depth:5; distance:1;"#,
        r#"content:"abc"; within:5; offset:1;"#,
        r#"content:"abc"; depth:5; depth:6;"#,
        r#"content:"abc"; startswith; depth:5;"#,
        r#"content:"abc"; offset:1; startswith;"#,
        r#"content:"abc"; fast_pattern; content:"d"; fast_pattern;"#,
        r#"content:"abc"; fast_pattern:2,5;"#,
        r#"content:!"abc"; fast_pattern:only;"#,
        r#"content:"abc"; distance:nosuchvar;"#,
        r#"content:"abc"; offset:70000;"#,
        r#"content:"abc"; replace:"xy";"#,
        r#"content:"abc"; nocase:1;"#,
    ] {
        assert!(rule(bad).is_err(), "`{bad}` should fail");
    }
}

#[test]
fn sticky_buffers_and_legacy_modifiers() {
    // Legacy modifiers move the preceding content.
    let r = ok(
        r#"content:"GET"; http_method; content:"/x"; http_uri; content:"y"; distance:0; http_uri; content:"raw";"#,
    );
    assert_eq!(contents(&r, "http.method")[0].pattern, b"GET");
    let u = contents(&r, "http.uri");
    assert_eq!(u.len(), 2);
    assert_eq!(u[1].pattern, b"y");
    assert!(u[1].is_relative());
    assert_eq!(contents(&r, "pkt_data").len(), 1);
    // Sticky buffers and aliases; sections merge by buffer.
    let r = ok(
        r#"http.uri; content:"a"; http.host; content:"b"; http.uri; content:"c"; pkt_data; content:"d"; file_data; content:"e"; dns_query; content:"f";"#,
    );
    assert_eq!(
        contents(&r, "http.uri")
            .iter()
            .map(|c| c.pattern.clone())
            .collect::<Vec<_>>(),
        vec![b"a".to_vec(), b"c".to_vec()]
    );
    assert_eq!(contents(&r, "http.host")[0].pattern, b"b");
    assert_eq!(contents(&r, "pkt_data")[0].pattern, b"d");
    assert_eq!(contents(&r, "file.data")[0].pattern, b"e");
    assert_eq!(contents(&r, "dns.query")[0].pattern, b"f");
    // Order of sections follows first use.
    let names: Vec<&str> = r.sections.iter().map(|s| s.buffer.name()).collect();
    assert_eq!(
        names,
        [
            "http.uri",
            "http.host",
            "pkt_data",
            "file.data",
            "dns.query"
        ]
    );
    // uricontent.
    let r = ok(r#"uricontent:"/admin";"#);
    assert_eq!(contents(&r, "http.uri")[0].pattern, b"/admin");
    // http_server_body and http.response_body: the response body (Suricata's file_data,
    // to the client only).
    let r = ok(r#"content:"x"; http_server_body; http.response_body; content:"y";"#);
    assert_eq!(contents(&r, "http.response_body").len(), 2);
    assert!(contents(&r, "file.data").is_empty());
    // A multi-instance buffer selected again starts a new instance (Suricata 7's
    // DetectBufferSetActiveList); other buffers take the matches into the same one.
    let r = ok(r#"file.data; content:"a"; file.data; content:"b";"#);
    assert_eq!(
        r.sections
            .iter()
            .filter(|s| s.buffer.name() == "file.data")
            .count(),
        2
    );
    let r = ok(r#"http.uri; content:"a"; http.uri; content:"b";"#);
    assert_eq!(contents(&r, "http.uri").len(), 2);
    assert_eq!(
        r.sections
            .iter()
            .filter(|s| s.buffer.name() == "http.uri")
            .count(),
        1
    );
    // The first sticky selection takes over what a content modifier put there.
    let r = ok(r#"content:"a"; http_server_body; http.response_body; content:"b";"#);
    assert_eq!(
        r.sections
            .iter()
            .filter(|s| s.buffer.name() == "http.response_body")
            .count(),
        1
    );
    // Modifiers apply to the last content even inside sticky buffers.
    let r = ok(r#"tls.sni; content:"EVIL.com"; nocase; endswith;"#);
    let c = &contents(&r, "tls.sni")[0];
    assert!(c.nocase && c.endswith);
    for bad in [
        r#"http_uri;"#,
        r#"http.uri; content:"a"; http_header;"#,
        r#"http.uri; http.host; content:"a";"#,
        r#"http.uri;"#,
        r#"content:"a"; rawbytes; http_uri;"#,
        r#"http.uri:foo; content:"a";"#,
        r#"bsize:5;"#,
        r#"pcre:"/a/R";"#,
        r#"http.uri; pcre:"/a/H";"#,
        r#"uricontent:"a"; http.host; uricontent:"b";"#,
    ] {
        assert!(rule(bad).is_err(), "`{bad}` should fail");
    }
}

#[test]
fn transforms() {
    let r =
        ok(r#"http.uri; to_lowercase; compress_whitespace; content:"a"; http.uri; content:"b";"#);
    assert_eq!(r.sections.len(), 2);
    assert_eq!(
        r.sections[0].transforms,
        vec![Transform::ToLowercase, Transform::CompressWhitespace]
    );
    assert!(r.sections[1].transforms.is_empty());
    // A transform after matches starts a new section (ET sid 2044076 does this).
    let r = ok(
        r#"dns.query; content:"rs-"; startswith; pcre:"/[a-z]{2}/Ri"; dotprefix; content:".rustdesk.com"; endswith;"#,
    );
    assert_eq!(r.sections.len(), 2);
    assert_eq!(r.sections[0].matches.len(), 2);
    assert_eq!(r.sections[1].transforms, vec![Transform::DotPrefix]);
    let r = ok(
        r#"http.header; xor:"0d0ac8ff"; content:"a"; http.uri; pcrexform:"[a-z]+(.*)"; content:"b"; file.data; to_md5; to_sha1; to_sha256; strip_whitespace; url_decode; header_lowercase; to_uppercase; strip_pseudo_headers; content:"c";"#,
    );
    assert_eq!(
        r.sections[0].transforms,
        vec![Transform::Xor(vec![0x0d, 0x0a, 0xc8, 0xff])]
    );
    assert_eq!(
        r.sections[1].transforms,
        vec![Transform::PcreXform("[a-z]+(.*)".into())]
    );
    assert_eq!(r.sections[2].transforms.len(), 8);
    for bad in [
        r#"to_lowercase; content:"a";"#,
        r#"http.uri; xor:"0d0"; content:"a";"#,
        r#"http.uri; xor:"zz"; content:"a";"#,
        r#"http.uri; pcrexform; content:"a";"#,
    ] {
        assert!(rule(bad).is_err(), "`{bad}` should fail");
    }
}

fn first_match(r: &Rule) -> Match {
    r.sections[0].matches.last().cloned().expect("a match")
}

#[test]
fn pcre_flags_and_buffers() {
    let r = ok(r#"pcre:"/a.b/smixAEGOB";"#);
    let Match::Pcre(p) = first_match(&r) else {
        panic!()
    };
    assert!(p.opts.dotall && p.opts.multiline && p.opts.caseless && p.opts.extended);
    assert!(
        p.opts.anchored
            && p.opts.dollar_endonly
            && p.opts.ungreedy
            && p.match_limit_override
            && p.rawbytes
    );
    assert_eq!(p.pattern, "a.b");
    for (flag, buf) in [
        ("U", "http.uri"),
        ("I", "http.uri.raw"),
        ("P", "http.request_body"),
        ("Q", "file.data"),
        ("H", "http.header"),
        ("D", "http.header.raw"),
        ("M", "http.method"),
        ("C", "http.cookie"),
        ("S", "http.stat_code"),
        ("Y", "http.stat_msg"),
        ("V", "http.user_agent"),
        ("W", "http.host"),
        ("Z", "http.host.raw"),
    ] {
        let r = ok(&format!(r#"pcre:"/x/{flag}";"#));
        assert_eq!(r.sections[0].buffer.name(), buf, "flag {flag}");
    }
    let r = ok(r#"content:"a"; pcre:!"/b\/c\;/R";"#);
    let Match::Pcre(p) = first_match(&r) else {
        panic!()
    };
    assert!(p.negated && p.relative);
    assert_eq!(p.pattern, r"b\/c\;");
    let r = ok(r#"pcre:"/(?P<flow_user>\w+)/";"#);
    let Match::Pcre(p) = first_match(&r) else {
        panic!()
    };
    assert_eq!(p.captures, vec![(CaptureKind::Flow, "user".to_string())]);
    let r = ok(r#"pcre:"/(\w+)/, pkt:foo";"#);
    let Match::Pcre(p) = first_match(&r) else {
        panic!()
    };
    assert_eq!(p.captures, vec![(CaptureKind::Pkt, "foo".to_string())]);
    let r = ok(r#"http.uri; pcre:"/x/U";"#);
    assert_eq!(r.sections.len(), 1);
    for bad in [
        r#"pcre:"/blah/7";"#,
        r#"pcre:"/blah/Ui$";"#,
        r#"pcre:"/blah/UNi";"#,
        r#"pcre:"blah";"#,
        r#"pcre:"/blah";"#,
        r#"pcre:"/x/UH";"#,
        r#"pcre:"/Host/W";"#,
    ] {
        assert!(rule(bad).is_err(), "`{bad}` should fail");
    }
    assert!(rule(r#"pcre:"/b\"lah/i";"#).is_ok());
    assert!(rule(r#"pcre:"/host/W";"#).is_ok());
}

#[test]
fn byte_keywords() {
    let r = ok("byte_test:4,>,100,0,relative,little,bitmask 0xff00;");
    let Match::ByteTest(t) = first_match(&r) else {
        panic!()
    };
    assert_eq!(
        (t.nbytes, t.op, t.value, t.offset),
        (
            IntOrVar::Lit(4),
            ByteTestOp::Gt,
            IntOrVar::Lit(100),
            IntOrVar::Lit(0)
        )
    );
    assert!(t.relative && t.endian == Endian::Little && t.bitmask == Some(0xff00) && !t.negated);
    let r = ok("byte_test:3,!=,0x10,-2,string,hex;");
    let Match::ByteTest(t) = first_match(&r) else {
        panic!()
    };
    assert!(
        t.negated
            && t.op == ByteTestOp::Eq
            && t.string == Some(NumBase::Hex)
            && t.offset == IntOrVar::Lit(-2)
    );
    assert_eq!(t.value, IntOrVar::Lit(16));
    for (op, want) in [
        ("<", ByteTestOp::Lt),
        ("=", ByteTestOp::Eq),
        ("<=", ByteTestOp::Le),
        (">=", ByteTestOp::Ge),
        ("&", ByteTestOp::And),
        ("^", ByteTestOp::Or),
        ("!&", ByteTestOp::And),
    ] {
        let r = ok(&format!("byte_test:1,{op},1,0;"));
        let Match::ByteTest(t) = first_match(&r) else {
            panic!()
        };
        assert_eq!(t.op, want, "{op}");
    }
    let r = ok("byte_test:0,=,0,0,string,dec;");
    let Match::ByteTest(t) = first_match(&r) else {
        panic!()
    };
    assert_eq!(t.nbytes, IntOrVar::Lit(0));
    // The byte count may be a byte_extract variable (Suricata 7); unknown names fail.
    let r = ok("byte_extract:1,5,n; byte_test:n,=,1,5,bitmask 0xff;");
    let Some(Match::ByteTest(t)) = r.sections[0].matches.get(1) else {
        panic!()
    };
    assert!(matches!(t.nbytes, IntOrVar::Var(_)));
    assert!(rule("byte_test:nosuch,=,1,5;").is_err());
    assert!(rule("byte_test:9,=,1,5;").is_err());
    let r = ok(
        "byte_jump:4,0,relative,multiplier 2,align,from_beginning,post_offset -4,dce,bitmask 0x0f;",
    );
    let Match::ByteJump(j) = first_match(&r) else {
        panic!()
    };
    assert!(j.relative && j.multiplier == 2 && j.align && j.from_beginning && j.post_offset == -4);
    assert_eq!(j.endian, Endian::Dce);
    assert_eq!(j.bitmask, Some(0x0f));
    let r = ok("byte_jump:2,1,string,dec,from_end;");
    let Match::ByteJump(j) = first_match(&r) else {
        panic!()
    };
    assert!(j.from_end && j.string == Some(NumBase::Dec));
    let r = ok("byte_extract:2,0,len,relative,multiplier 4,little,align 4; byte_test:2,=,len,0; byte_extract:3,1,num,string,oct; isdataat:len,relative;");
    assert_eq!(r.byte_vars, vec!["len".to_string(), "num".to_string()]);
    let Match::ByteExtract(x) = r.sections[0].matches[0].clone() else {
        panic!()
    };
    assert!(
        x.relative && x.multiplier == 4 && x.align == 4 && x.endian == Endian::Little && x.var == 0
    );
    let Match::ByteTest(t) = r.sections[0].matches[1].clone() else {
        panic!()
    };
    assert_eq!(t.value, IntOrVar::Var(0));
    let Match::ByteExtract(x) = r.sections[0].matches[2].clone() else {
        panic!()
    };
    assert_eq!(x.string, Some(NumBase::Oct));
    let r = ok("byte_extract:1,0,n,string; byte_math:bytes 2, offset 0, oper +, rvalue n, result r, relative, endian little, string dec, bitmask 0xff; byte_jump:2,r;");
    let Match::ByteMath(m) = r.sections[0].matches[1].clone() else {
        panic!()
    };
    assert_eq!(
        (m.op, m.rvalue, m.result),
        (MathOp::Add, IntOrVar::Var(0), 1)
    );
    assert!(
        m.relative
            && m.endian == Endian::Little
            && m.string == Some(NumBase::Dec)
            && m.bitmask == Some(0xff)
    );
    let Match::ByteJump(j) = r.sections[0].matches[2].clone() else {
        panic!()
    };
    assert_eq!(j.offset, IntOrVar::Var(1));
    assert_eq!(j.nbytes, IntOrVar::Lit(2));
    // The byte count may be a variable too; an unknown name fails.
    let r = ok("byte_extract:1,4,len,relative; byte_jump:len,0,relative;");
    let Match::ByteJump(j) = r.sections[0].matches[1].clone() else {
        panic!()
    };
    assert_eq!(j.nbytes, IntOrVar::Var(0));
    assert!(rule("byte_jump:nosuch,0;").is_err());
    assert!(rule("byte_jump:9,0;").is_err());
    for op in ["-", "*", "/", "<<", ">>"] {
        ok(&format!(
            "byte_math:bytes 1,offset 0,oper {op},rvalue 2,result x;"
        ));
    }
    let r = ok("isdataat:!10,relative,rawbytes;");
    let Match::IsDataAt(d) = first_match(&r) else {
        panic!()
    };
    assert!(d.negated && d.relative && d.pos == IntOrVar::Lit(10));
    let r = ok("base64_decode:bytes 150, offset 4, relative; base64_data; content:\"x\";");
    let Match::Base64Decode(b) = r.sections[0].matches[0].clone() else {
        panic!()
    };
    assert_eq!((b.bytes, b.offset, b.relative), (150, 4, true));
    // After a legacy modifier moved the previous content, base64_decode follows it there.
    let r = ok("content:\"arg\"; http_uri; base64_decode:bytes 17, offset 1, relative; base64_data; content:\"x\";");
    let uri = r
        .sections
        .iter()
        .find(|s| s.buffer.name() == "http.uri")
        .expect("http_uri section");
    assert!(matches!(
        uri.matches[..],
        [Match::Content(_), Match::Base64Decode(_)]
    ));
    for bad in [
        "byte_test:9,=,1,0;",
        "byte_test:24,=,1,0,string,dec;",
        "byte_test:4,~,1,0;",
        "byte_test:4,=,1;",
        "byte_test:4,=,1,0,string;",
        "byte_test:4,=,1,0,string,bin;",
        "byte_test:4,=,1,0,big,little;",
        "byte_test:4,=,1,0,multiplier 2;",
        "byte_test:4,=,nosuch,0;",
        "byte_jump:4;",
        "byte_jump:4,0,from_beginning,from_end;",
        "byte_jump:4,0,multiplier 0;",
        "byte_jump:4,0,post_offset x;",
        "byte_extract:4,0;",
        "byte_extract:4,0,v,bitmask 1;",
        "byte_extract:4,0,v,align 3;",
        "byte_math:bytes 5,offset 0,oper <<,rvalue 1,result x;",
        "byte_math:bytes 11,offset 0,oper +,rvalue 1,result x;",
        "byte_math:bytes 1,offset 0,oper /,rvalue 0,result x;",
        "byte_math:bytes 1,offset 0,oper %,rvalue 1,result x;",
        "byte_math:bytes 1,offset 0,oper +,rvalue 1;",
        "byte_math:bytes 1,oper +,rvalue 1,result x;",
        "isdataat:x;",
        "isdataat:5,sideways;",
        "base64_decode:bytes 0;",
        "base64_decode:frobnicate;",
    ] {
        assert!(rule(bad).is_err(), "`{bad}` should fail");
    }
}

fn kw(opts: &str) -> Keyword {
    ok(opts).keywords.into_iter().next().expect("a keyword")
}

#[test]
fn meta_keywords() {
    let r = ok(
        r#"msg:"hello"; rev:3; gid:5; classtype:trojan-activity; priority:2; reference:url,example.com/a,b; reference:cve,2020-1234; metadata:created_at 2020_01_01, former_category MALWARE; target:dest_ip; noalert;"#,
    );
    assert_eq!((r.msg.as_str(), r.rev, r.gid, r.sid), ("hello", 3, 5, 1));
    assert_eq!(r.classtype.as_deref(), Some("trojan-activity"));
    assert_eq!(r.priority, Some(2));
    assert_eq!(
        r.references[0],
        Reference {
            system: "url".into(),
            id: "example.com/a,b".into()
        }
    );
    assert_eq!(r.references[1].system, "cve");
    let md: Vec<(&str, &str)> = r.metadata_pairs().collect();
    assert_eq!(
        md,
        [("created_at", "2020_01_01"), ("former_category", "MALWARE")]
    );
    assert_eq!(r.target, Some(Target::DestIp));
    assert!(r.noalert);
    for bad in [
        "rev:x;",
        "sid:2;",
        "reference:nocomma;",
        "target:both;",
        "classtype:a b;",
        "gid:-1;",
    ] {
        assert!(rule(bad).is_err(), "`{bad}` should fail");
    }
    assert!(parse_rule("alert tcp any any -> any any (sid:0;)", &vars()).is_err());
}

#[test]
fn flow_and_bits_keywords() {
    let Keyword::Flow(f) = kw("flow:established,to_server;") else {
        panic!()
    };
    assert!(f.established && f.to_server && !f.to_client);
    let Keyword::Flow(f) = kw("flow:from_server,not_established,only_stream,no_frag;") else {
        panic!()
    };
    assert!(f.to_client && f.not_established && f.only_stream && f.no_frag);
    let Keyword::Flow(f) = kw("flow:stateless;") else {
        panic!()
    };
    assert!(f.stateless);
    let Keyword::Flowbits(b) = kw("flowbits:set,ET.foo;") else {
        panic!()
    };
    assert_eq!(
        (b.cmd, b.names.clone()),
        (BitCmd::Set, vec!["ET.foo".to_string()])
    );
    let Keyword::Flowbits(b) = kw("flowbits:isset,a|b;") else {
        panic!()
    };
    assert!(b.any && b.names.len() == 2 && b.cmd == BitCmd::IsSet);
    let Keyword::Flowbits(b) = kw("flowbits:isnotset,a&b;") else {
        panic!()
    };
    assert!(!b.any && b.names.len() == 2);
    let Keyword::Flowbits(b) = kw("flowbits:noalert;") else {
        panic!()
    };
    assert_eq!(b.cmd, BitCmd::NoAlert);
    for c in ["unset", "toggle"] {
        assert!(matches!(
            kw(&format!("flowbits:{c},x;")),
            Keyword::Flowbits(_)
        ));
    }
    let Keyword::Flowint(i) = kw("flowint:cnt,+,1;") else {
        panic!()
    };
    assert_eq!((i.name.as_str(), i.op), ("cnt", FlowintOp::Add));
    let Keyword::Flowint(i) = kw("flowint:cnt,isset;") else {
        panic!()
    };
    assert!(i.op == FlowintOp::IsSet && i.value.is_none());
    let Keyword::Flowint(i) = kw("flowint:cnt,>=,other;") else {
        panic!()
    };
    assert_eq!(i.op, FlowintOp::Ge);
    let Keyword::Xbits(x) = kw("xbits:set,badip,track ip_src,expire 60;") else {
        panic!()
    };
    assert_eq!((x.cmd, x.expire), (BitCmd::Set, Some(60)));
    for bad in [
        "flow:to_server,to_client;",
        "flow:sideways;",
        "flow:established,not_established;",
        "flowbits:frob,x;",
        "flowbits:set;",
        "flowbits:isset,a|b&c;",
        "flowbits:noalert,x;",
        "flowint:cnt,~,1;",
        "flowint:cnt,+;",
        "flowint:cnt,isset,3;",
        "xbits:set,x;",
        "xbits:set,x,track ip_moon;",
        "xbits:set,track ip_src;",
        "xbits:noalert,x,track ip_src;",
        "xbits:noalert,track ip_src;",
        "xbits:isset,x;",
    ] {
        assert!(rule(bad).is_err(), "`{bad}` should fail");
    }
}

#[test]
fn header_field_keywords() {
    use shrike_rules::parse::keywords::tcp_flag::*;
    let Keyword::Flags(f) = kw("flags:S;") else {
        panic!()
    };
    assert!(f.matches(SYN) && !f.matches(SYN | ACK));
    let Keyword::Flags(f) = kw("flags:S,12;") else {
        panic!()
    };
    assert!(f.matches(SYN | ECE | CWR) && !f.matches(SYN | ACK));
    let Keyword::Flags(f) = kw("flags:+SA;") else {
        panic!()
    };
    assert!(f.modifier == BitsModifier::Plus && f.matches(SYN | ACK | PSH) && !f.matches(SYN));
    let Keyword::Flags(f) = kw("flags:*FR;") else {
        panic!()
    };
    assert!(f.matches(RST | ACK) && !f.matches(ACK));
    let Keyword::Flags(f) = kw("flags:!A;") else {
        panic!()
    };
    assert!(f.matches(SYN) && !f.matches(ACK));
    let Keyword::Flags(f) = kw("flags:0;") else {
        panic!()
    };
    assert!(f.matches(0) && !f.matches(FIN));
    let Keyword::Flags(f) = kw("flags:SA+;") else {
        panic!()
    };
    assert_eq!(f.modifier, BitsModifier::Plus);
    let Keyword::Fragbits(f) = kw("fragbits:M+;") else {
        panic!()
    };
    assert!(f.matches(1) && f.matches(3) && !f.matches(2));
    let Keyword::Fragbits(f) = kw("fragbits:!D;") else {
        panic!()
    };
    assert!(f.matches(0) && !f.matches(2));
    let Keyword::Ttl(t) = kw("ttl:<10;") else {
        panic!()
    };
    assert!(t.matches(9) && !t.matches(10));
    let Keyword::Ttl(t) = kw("ttl:1-5;") else {
        panic!()
    };
    assert!(t.matches(3) && !t.matches(1) && !t.matches(5));
    let Keyword::Dsize(d) = kw("dsize:>100;") else {
        panic!()
    };
    assert!(d.matches(101) && !d.matches(100));
    let Keyword::Dsize(d) = kw("dsize:10<>20;") else {
        panic!()
    };
    assert!(d.matches(11) && !d.matches(20));
    let Keyword::Dsize(d) = kw("dsize:!0;") else {
        panic!()
    };
    assert!(d.matches(1) && !d.matches(0));
    let Keyword::Tos(t) = kw("tos:!0x10;") else {
        panic!()
    };
    assert!(t.matches(0) && !t.matches(16));
    let Keyword::Id(i) = kw("id:12345;") else {
        panic!()
    };
    assert!(i.matches(12345));
    assert!(matches!(kw("ipopts:lsrr;"), Keyword::Ipopts(_)));
    let Keyword::IpProto(p) = kw("ip_proto:tcp;") else {
        panic!()
    };
    assert!(p.matches(6));
    let Keyword::IpProto(p) = kw("ip_proto:!17;") else {
        panic!()
    };
    assert!(p.matches(6) && !p.matches(17));
    let Keyword::IpProto(p) = kw("ip_proto:>50;") else {
        panic!()
    };
    assert!(p.matches(51));
    let Keyword::Itype(t) = kw("itype:8;") else {
        panic!()
    };
    assert!(t.matches(8));
    let Keyword::Icode(t) = kw("icode:>=3;") else {
        panic!()
    };
    assert!(t.matches(3) && !t.matches(2));
    assert!(matches!(kw("icmp_id:0;"), Keyword::IcmpId(_)));
    assert!(matches!(kw("icmp_seq:5;"), Keyword::IcmpSeq(_)));
    assert_eq!(kw("seq:0;"), Keyword::Seq(0));
    assert_eq!(kw("ack:4294967295;"), Keyword::Ack(u32::MAX));
    let Keyword::Window(w) = kw("window:!55808;") else {
        panic!()
    };
    assert!(!w.matches(55808) && w.matches(1));
    assert_eq!(kw("sameip;"), Keyword::SameIp);
    let Keyword::TcpMss(m) = kw("tcp.mss:<536;") else {
        panic!()
    };
    assert!(m.matches(535));
    let Keyword::Fragoffset(f) = kw("fragoffset:>0;") else {
        panic!()
    };
    assert!(f.matches(1) && !f.matches(0));
    let Keyword::Urilen { len, raw } = kw("urilen:>500,raw;") else {
        panic!()
    };
    assert!(raw && len.matches(501));
    let Keyword::StreamSize { cmp, .. } = kw("stream_size:server,>,100;") else {
        panic!()
    };
    assert!(cmp.matches(101));
    // Suricata 7's stream_size grammar: side, operator, decimal u32; spaces allowed.
    for (v, side, mode, a) in [
        ("server,<,6", StreamSide::Server, UintMode::Lt, 6),
        (" client , > , 8 ", StreamSide::Client, UintMode::Gt, 8),
        ("both,>=,0", StreamSide::Both, UintMode::Gte, 0),
        (
            "either,<=,4294967295",
            StreamSide::Either,
            UintMode::Lte,
            4294967295,
        ),
        ("server,=,1", StreamSide::Server, UintMode::Eq, 1),
        ("server,!=,1", StreamSide::Server, UintMode::Ne, 1),
        ("server,!,1", StreamSide::Server, UintMode::Ne, 1),
    ] {
        let Keyword::StreamSize { side: s, cmp } = kw(&format!("stream_size:{v};")) else {
            panic!("{v}")
        };
        assert_eq!((s, cmp.mode, cmp.a), (side, mode, a), "{v}");
    }
    for bad in [
        "server,<>,6",
        "server,=<,6",
        "server,,6",
        "server,<,-1",
        "server,<,0x10",
        "server,<,4294967296",
        "Server,<,6",
        "server,<,6,7",
    ] {
        assert!(
            rule(&format!("stream_size:{bad};")).is_err(),
            "`{bad}` should fail"
        );
    }
    // `prefilter` applies to the last match: a keyword becomes the prefilter, a content
    // the fast pattern; nothing before it, a pcre or a second prefilter are errors.
    let r = ok("stream_size:server,<,5; prefilter;");
    assert_eq!(r.keywords.last(), Some(&Keyword::Prefilter));
    let r = ok("content:\"a\"; content:\"bb\"; prefilter;");
    let Match::Content(c) = r.sections[0].matches[1].clone() else {
        panic!()
    };
    assert!(c.fast_pattern.is_some());
    for bad in [
        "prefilter;",
        "pcre:\"/a/\"; prefilter;",
        "ttl:5; prefilter; prefilter;",
        "content:!\"a\"; depth:4; prefilter;",
        "ttl:5; prefilter:x;",
    ] {
        assert!(rule(bad).is_err(), "`{bad}` should fail");
    }
    let r = ok("http.uri; bsize:<=10;");
    let Match::Bsize(b) = first_match(&r) else {
        panic!()
    };
    assert!(b.matches(10) && !b.matches(11));
    for bad in [
        "flags:Q;",
        "flags:;",
        "flags:++S;",
        "fragbits:X;",
        "ttl:256;",
        "ttl:<0;",
        "ttl:5-2;",
        "dsize:70000;",
        "dsize:abc;",
        "ipopts:bogus;",
        "ip_proto:bogus;",
        "ip_proto:300;",
        "seq:-1;",
        "ack:x;",
        "window:70000;",
        "itype:256;",
        "urilen:5,cooked;",
        "stream_size:up,>,5;",
        "stream_size:server,>;",
        "tos:256;",
    ] {
        assert!(rule(bad).is_err(), "`{bad}` should fail");
    }
}

#[test]
fn threshold_tag_events_and_unknowns() {
    let Keyword::Threshold(t) = kw("threshold: type limit, track by_src, count 1, seconds 60;")
    else {
        panic!()
    };
    assert_eq!(
        (t.kind, t.track, t.count, t.seconds),
        (ThresholdType::Limit, Track::BySrc, 1, 60)
    );
    let Keyword::Threshold(t) = kw("threshold:type backoff,track by_flow,count 1,multiplier 10;")
    else {
        panic!()
    };
    assert_eq!((t.kind, t.multiplier), (ThresholdType::Backoff, 10));
    let Keyword::DetectionFilter(t) = kw("detection_filter:track by_dst, count 5, seconds 10;")
    else {
        panic!()
    };
    assert_eq!(
        (t.kind, t.track),
        (ThresholdType::DetectionFilter, Track::ByDst)
    );
    let Keyword::Tag(t) = kw("tag:session,10,seconds;") else {
        panic!()
    };
    assert_eq!(t.count, 10);
    assert!(matches!(kw("tag:host,5,packets,dst;"), Keyword::Tag(t) if t.dst));
    assert!(matches!(kw("tag:session;"), Keyword::Tag(t) if t.count == 256));
    assert_eq!(
        kw("app-layer-protocol:!tls;"),
        Keyword::AppLayerProtocol {
            negated: true,
            name: "tls".into()
        }
    );
    assert_eq!(
        kw("app-layer-event:http.request_field_too_long;"),
        Keyword::AppLayerEvent("http.request_field_too_long".into())
    );
    assert!(matches!(
        kw("decode-event:ipv4.trunc_pkt;"),
        Keyword::DecodeEvent(_)
    ));
    assert!(matches!(
        kw("stream-event:3whs_wrong_seq_wrong_ack;"),
        Keyword::StreamEvent(_)
    ));
    // Known-but-untyped and unknown keywords are kept for the loader.
    let r = ok("tls.version:1.2; frobnicate:1;");
    assert_eq!(
        r.unknown_keywords().collect::<Vec<_>>(),
        ["tls.version", "frobnicate"]
    );
    assert!(matches!(
        &r.keywords[0],
        Keyword::Unknown { known: true, .. }
    ));
    assert!(matches!(
        &r.keywords[1],
        Keyword::Unknown { known: false, .. }
    ));
    let set = shrike_rules::load_rules_from_str(
        "alert tcp any any -> any any (frobnicate; sid:1;)\nalert tcp any any -> any any (asn1:oversize_length 100; sid:2;)\n",
        "x.rules",
        &vars(),
        &Default::default(),
    );
    assert_eq!(set.summary.loaded, 1);
    assert_eq!(
        set.summary
            .skipped_by_reason
            .get("unknown keyword `frobnicate`"),
        Some(&1)
    );
    assert_eq!(set.summary.unenforced_keywords.get("asn1"), Some(&1));
    for bad in [
        "threshold:type limit, track by_src, count 1;",
        "threshold:type sometimes, track by_src, count 1, seconds 1;",
        "threshold:type limit, track by_moon, count 1, seconds 1;",
        "threshold:type backoff,track by_flow,count 1,multiplier 1;",
        "detection_filter:track by_src, count 5;",
        "tag:forever;",
        "tag:session,10,fortnights;",
    ] {
        assert!(rule(bad).is_err(), "`{bad}` should fail");
    }
}

/// Contents that can never match a fingerprint or hash buffer fail the rule, as Suricata
/// 7.0.10's validate callbacks make them (checked with `suricata -T` on the same rules).
#[test]
fn hash_and_fingerprint_contents_are_validated() {
    let fp = "c3:d4:82:26:a8:f9:4d:3b:bb:49:91:8a:c0:21:87:49:32:58:e7:4e";
    assert!(rule(&format!("tls.cert_fingerprint; content:\"{fp}\";")).is_ok());
    assert!(rule("tls.cert_fingerprint; content:\":\";").is_err());
    assert!(rule(&format!(
        "tls.cert_fingerprint; content:\"{}\";",
        fp.replace(':', "-")
    ))
    .is_err());
    // A transform makes another buffer: not checked.
    assert!(rule("tls.cert_fingerprint; to_lowercase; content:\":\";").is_ok());
    assert!(rule("ja3.hash; content:\"e7eca2baf4458d095b7f45da28c16c34\";").is_ok());
    assert!(rule("ja3.hash; content:\"e7eca2\";").is_err());
    assert!(rule("ja3s.hash; content:\"a\";").is_err());
    assert!(rule("tls.cert_serial; content:\"01\";").is_ok());
    assert!(rule("tls.cert_serial; content:\"0A:1B\";").is_ok());
    assert!(rule("tls.cert_serial; content:\"0A1B\";").is_err());
    assert!(rule("ssh.hassh; content:\"ec7378c1a92f5a8dde7e8b7a1ddf33d1\";").is_ok());
    assert!(rule("ssh.hassh; content:\"ec7378c1a92f5a8dde7e8b7a1ddf33dZ\";").is_err());
    assert!(rule("ssh.hassh.server; content:\"abc\";").is_err());
    assert!(rule("quic.cyu.hash; content:\"abc\";").is_err());
}
