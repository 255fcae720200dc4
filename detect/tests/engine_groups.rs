//! Grouping is only an optimisation: for random port rules and random packets, the engine
//! must alert exactly on the rules whose header matches (an oracle that checks every rule),
//! whatever the group limit, hot ports, prefilter or non-prefilter path.

mod engine_common;

use engine_common::*;
use proptest::prelude::*;
use shrike_detect::EngineConfig;

#[derive(Debug, Clone)]
struct R {
    tcp: bool,
    sp: Option<(u16, u16)>,
    dp: Option<(u16, u16)>,
    bidir: bool,
    content: bool,
}

fn ports() -> impl Strategy<Value = Option<(u16, u16)>> {
    prop_oneof![
        Just(None),
        prop_oneof![
            Just(53u16),
            Just(80),
            Just(443),
            Just(1000),
            Just(5060),
            1u16..2000
        ]
        .prop_map(|p| Some((p, p))),
        (1u16..2000, 0u16..300).prop_map(|(a, w)| Some((a, a.saturating_add(w)))),
    ]
}

fn rule() -> impl Strategy<Value = R> {
    (
        any::<bool>(),
        ports(),
        ports(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(tcp, sp, dp, bidir, content)| R {
            tcp,
            sp,
            dp,
            bidir,
            content,
        })
}

fn spec(p: Option<(u16, u16)>) -> String {
    match p {
        None => "any".into(),
        Some((a, b)) if a == b => a.to_string(),
        Some((a, b)) => format!("{a}:{b}"),
    }
}

fn inside(p: Option<(u16, u16)>, v: u16) -> bool {
    p.is_none_or(|(a, b)| a <= v && v <= b)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn groups_never_change_results(
        rules in prop::collection::vec(rule(), 1..40),
        pkts in prop::collection::vec((any::<bool>(), prop_oneof![Just(53u16), Just(80), 1u16..2100], prop_oneof![Just(443u16), Just(5060), 1u16..2100], any::<bool>()), 1..12),
        max_groups in 1usize..6,
    ) {
        let text: String = rules
            .iter()
            .enumerate()
            .map(|(i, r)| {
                format!(
                    "alert {} any {} {} any {} ({}sid:{};)\n",
                    if r.tcp { "tcp" } else { "udp" },
                    spec(r.sp),
                    if r.bidir { "<>" } else { "->" },
                    spec(r.dp),
                    if r.content { "content:\"needle\"; " } else { "" },
                    i + 1
                )
            })
            .collect();
        let cfg = EngineConfig { max_port_groups: max_groups, ..EngineConfig::default() };
        let mut sim = Sim::with(&text, &cfg);
        for (i, (tcp, sp, dp, needle)) in pkts.iter().enumerate() {
            let payload: &[u8] = if *needle { b"xx needle xx" } else { b"xx hay xx" };
            // Fresh addresses per packet: no flow state carries over.
            let src = [10, 0, (i >> 8) as u8, i as u8];
            let frame = if *tcp {
                tcp4(src, S4, *sp, *dp, 1, 1, ACK | PSH, payload)
            } else {
                udp4(src, S4, *sp, *dp, payload)
            };
            let got = sim.feed(&at(frame, i as f64));
            let mut want: Vec<u32> = rules
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    r.tcp == *tcp
                        && (!r.content || *needle)
                        && ((inside(r.sp, *sp) && inside(r.dp, *dp))
                            || (r.bidir && inside(r.sp, *dp) && inside(r.dp, *sp)))
                })
                .map(|(k, _)| k as u32 + 1)
                .collect();
            want.sort_unstable();
            let mut got_sorted = got.clone();
            got_sorted.sort_unstable();
            // Only 15 alerts per packet are kept (packet-alert-max).
            if want.len() <= 15 {
                prop_assert_eq!(got_sorted, want, "packet {} tcp={} {}->{} needle={}", i, tcp, sp, dp, needle);
            } else {
                prop_assert_eq!(got.len(), 15);
            }
        }
    }
}

fn addr_spec() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("any".to_string()),
        Just("10.1.2.3".to_string()),
        Just("10.1.2.0/24".to_string()),
        Just("10.1.0.0/16".to_string()),
        Just("[10.1.2.3,192.168.5.0/24]".to_string()),
        Just("!10.1.2.0/24".to_string()),
        Just("2001:db8::1".to_string()),
        Just("[2001:db8::/64,10.9.9.9]".to_string()),
        Just("192.168.5.77".to_string()),
    ]
}

fn addr_pool() -> impl Strategy<Value = [u8; 4]> {
    prop_oneof![
        Just([10u8, 1, 2, 3]),
        Just([10, 1, 2, 200]),
        Just([10, 1, 9, 9]),
        Just([10, 9, 9, 9]),
        Just([192, 168, 5, 77]),
        Just([192, 168, 6, 1]),
        Just([8, 8, 8, 8]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn ip_only_index_never_changes_results(
        rules in prop::collection::vec((addr_spec(), addr_spec(), any::<bool>()), 1..30),
        pkts in prop::collection::vec((addr_pool(), addr_pool()), 1..10),
    ) {
        use shrike_rules::parse::IpSet;
        use shrike_rules::Vars;
        let text: String = rules
            .iter()
            .enumerate()
            .map(|(i, (s, d, bidir))| {
                format!("alert ip {s} any {} {d} any (sid:{};)\n", if *bidir { "<>" } else { "->" }, i + 1)
            })
            .collect();
        let mut sim = Sim::new(&text);
        let vars = Vars::empty();
        for (i, (src, dst)) in pkts.iter().enumerate() {
            // A new flow per packet (distinct ports): IP-only rules run on each.
            let frame = udp4(*src, *dst, 1000 + i as u16, 2000, b"x");
            let mut got = sim.feed(&at(frame, i as f64));
            got.sort_unstable();
            let ip = |a: [u8; 4]| std::net::IpAddr::from(a);
            let mut want: Vec<u32> = rules
                .iter()
                .enumerate()
                .filter(|(_, (s, d, bidir))| {
                    let (ss, ds) = (IpSet::parse(s, &vars).unwrap(), IpSet::parse(d, &vars).unwrap());
                    (ss.contains(ip(*src)) && ds.contains(ip(*dst)))
                        || (*bidir && ss.contains(ip(*dst)) && ds.contains(ip(*src)))
                })
                .map(|(k, _)| k as u32 + 1)
                .collect();
            want.sort_unstable();
            if want.len() <= 15 {
                prop_assert_eq!(got, want, "packet {} {:?} -> {:?}", i, src, dst);
            }
        }
    }
}
