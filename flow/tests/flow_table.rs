//! Flow table: creation, accounting, state, lazy timeouts, forced eviction, drain, stats.

#[path = "../../packet/tests/decode_util/mod.rs"]
mod decode_util;

use decode_util::*;
use shrike_capture::{LinkType, Timestamp};
use shrike_flow::config::FlowConfig;
use shrike_flow::table::flow_footprint;
use shrike_flow::{Direction, EndReason, Flow, FlowKey, FlowState, FlowTable};
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats, PacketMeta};

const SEED: u64 = 42;

fn ts(s: u64) -> Timestamp {
    Timestamp::from_secs_nanos(1_700_000_000 + s, 0)
}

fn pkt(f: &[u8]) -> PacketMeta {
    decode(
        LinkType::Ethernet,
        f,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    )
}

struct Harness {
    t: FlowTable<u32>,
    ended: Vec<(Flow<u32>, EndReason)>,
}

impl Harness {
    fn new(max: usize) -> Self {
        let cfg = FlowConfig {
            max_flows: max,
            ..Default::default()
        };
        Harness {
            t: FlowTable::new(&cfg, 3),
            ended: vec![],
        }
    }

    fn feed(&mut self, frame: &[u8], at: Timestamp) -> (shrike_flow::FlowHandle, bool) {
        self.try_feed(frame, at).expect("a flow for the packet")
    }

    /// [`Self::feed`]; `None` when the packet gets no flow.
    fn try_feed(&mut self, frame: &[u8], at: Timestamp) -> Option<(shrike_flow::FlowHandle, bool)> {
        let m = pkt(frame);
        let (k, d) = FlowKey::from_meta(&m);
        let ended = &mut self.ended;
        self.t.packet(
            k.hash(SEED),
            k,
            d,
            at,
            frame.len() as u32,
            m.tcp_flags,
            || 7,
            &mut |f, r| ended.push((f, r)),
        )
    }

    fn expire(&mut self, at: Timestamp) {
        let ended = &mut self.ended;
        self.t.expire(at, &mut |f, r| ended.push((f, r)));
    }
}

const SYN: u8 = 0x02;
const ACK: u8 = 0x10;
const FIN: u8 = 0x01;

fn c2s(flags: u8) -> Vec<u8> {
    eth_tcp4(40000, 80, flags, b"")
}

fn s2c(flags: u8) -> Vec<u8> {
    eth(
        0x0800,
        &ipv4(B4, A4, 6, &tcp(&B4, &A4, 80, 40000, flags, b"")),
    )
}

#[test]
fn tcp_lifecycle_and_accounting() {
    let mut h = Harness::new(100);
    let (fh, created) = h.feed(&c2s(SYN), ts(0));
    assert!(created);
    assert!(!h.feed(&s2c(SYN | ACK), ts(1)).1);
    assert_eq!(h.t.get(fh).unwrap().state, FlowState::New);
    h.feed(&c2s(ACK), ts(1));
    let f = h.t.get(fh).unwrap();
    // TCP flags alone change no state: the stream engine's session does (Suricata's
    // `StreamTcpPacketSetState`), through `set_state`.
    assert_eq!(f.state, FlowState::New);
    h.t.set_state(fh, FlowState::Established);
    let f = h.t.get(fh).unwrap();
    assert_eq!(f.state, FlowState::Established);
    assert_eq!((f.pkts, f.tcp_flags), ([2, 1], [SYN | ACK, SYN | ACK]));
    assert_eq!(f.bytes[0], (c2s(SYN).len() + c2s(ACK).len()) as u64);
    assert!(f.id > 0 && f.id < 1 << 53);
    assert_eq!(f.data, 7);
    assert!(f.to_server(f.client));
    h.feed(&c2s(FIN | ACK), ts(2));
    assert_eq!(h.t.get(fh).unwrap().state, FlowState::Established);
    h.feed(&s2c(FIN | ACK), ts(2));
    assert_eq!(h.t.get(fh).unwrap().state, FlowState::Established);
    h.t.set_state(fh, FlowState::Closed);
    // tcp closed timeout is 60 s, compared in whole seconds as Suricata does: timed out
    // once 2 + 60 < now, i.e. at 63 s, not at 62.
    h.expire(ts(62));
    assert!(h.ended.is_empty());
    h.expire(ts(63));
    assert_eq!(h.ended.len(), 1);
    let (f, r) = &h.ended[0];
    assert_eq!(
        (r, f.state, f.last_ts),
        (&EndReason::Timeout, FlowState::Closed, ts(2))
    );
    assert!(h.t.get(fh).is_none() && h.t.is_empty());
    let s = &h.t.stats;
    assert_eq!(
        (s.total, s.tcp, s.timeouts, s.end_closed, s.active),
        (1, 1, 1, 1, 0)
    );
}

#[test]
fn synack_first_makes_the_receiver_the_client() {
    let mut h = Harness::new(10);
    let (fh, _) = h.feed(&s2c(SYN | ACK), ts(0));
    let f = h.t.get(fh).unwrap();
    // The SYN-ACK went server -> client, so that packet counts to the client.
    assert_eq!(f.pkts, [0, 1]);
    let m = pkt(&c2s(ACK));
    assert!(f.to_server(FlowKey::from_meta(&m).1));
}

#[test]
fn lazy_expiry_rearms_active_flows() {
    let mut h = Harness::new(10);
    let (fh, _) = h.feed(&eth_udp4(1, 2, b"a"), ts(0));
    // New UDP flows time out after 30 s idle; traffic at 20 s pushes that to 50 s.
    h.feed(&eth_udp4(1, 2, b"b"), ts(20));
    // The timer armed at creation fires at 31 s (0 + 30 passed); the flow was active.
    h.expire(ts(31));
    assert!(h.ended.is_empty() && h.t.get(fh).is_some());
    assert_eq!((h.t.stats.checked, h.t.stats.notimeout), (1, 1));
    assert_eq!(h.t.next_deadline_ms(), Some(ts(51).as_millis()));
    // The reply makes it established: 300 s.
    h.feed(
        &eth(0x0800, &ipv4(B4, A4, 17, &udp(&B4, &A4, 2, 1, b"r"))),
        ts(40),
    );
    assert_eq!(h.t.get(fh).unwrap().state, FlowState::Established);
    h.expire(ts(50));
    assert!(h.ended.is_empty());
    h.expire(ts(340));
    assert!(h.ended.is_empty());
    h.expire(ts(341));
    assert_eq!(h.ended.len(), 1);
    assert_eq!(h.t.stats.end_established, 1);
}

#[test]
fn full_table_evicts_the_flow_closest_to_timeout() {
    let mut h = Harness::new(3);
    let a = h.feed(&eth_udp4(1, 100, b""), ts(0)).0;
    let b = h.feed(&eth_udp4(2, 100, b""), ts(1)).0;
    let c = h.feed(&eth_udp4(3, 100, b""), ts(2)).0;
    // `a` is refreshed, so `b` is now closest to timing out.
    h.feed(&eth_udp4(1, 100, b""), ts(5));
    let (d, created) = h.feed(&eth_udp4(4, 100, b""), ts(6));
    assert!(created);
    assert_eq!(h.ended.len(), 1);
    let (f, r) = &h.ended[0];
    assert_eq!(
        (*r, f.key.lo_port.min(f.key.hi_port)),
        (EndReason::Forced, 2)
    );
    assert!(h.t.get(b).is_none());
    assert!(h.t.get(a).is_some() && h.t.get(c).is_some() && h.t.get(d).is_some());
    assert_eq!(
        (h.t.len(), h.t.stats.get_used, h.t.stats.get_used_failed),
        (3, 1, 0)
    );
    // Drain hands out the rest at shutdown.
    let mut rest = vec![];
    h.t.drain(&mut |f, r| rest.push((f.id, r)));
    assert_eq!(rest.len(), 3);
    assert!(rest.iter().all(|(_, r)| *r == EndReason::Shutdown));
    let mut ids: Vec<u64> = rest.iter().map(|x| x.0).collect();
    ids.push(h.ended[0].0.id);
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 4, "flow ids are unique");
    assert!(h.t.is_empty() && h.t.next_deadline_ms().is_none());
}

#[test]
fn many_flows_round_trip() {
    let mut h = Harness::new(100_000);
    for i in 0..20_000u16 {
        h.feed(&eth_udp4(i, 53, b""), ts(u64::from(i % 10)));
    }
    assert_eq!(h.t.len(), 20_000);
    for i in (0..20_000u16).step_by(7) {
        assert!(!h.feed(&eth_udp4(i, 53, b""), ts(20)).1);
    }
    h.expire(ts(40));
    let expired = h.ended.len();
    assert_eq!(expired, 20_000 - (0..20_000).step_by(7).count());
    h.expire(ts(51));
    assert_eq!(h.ended.len(), 20_000);
    assert!(h.t.memuse() > 0);
}

#[test]
fn flow_footprint_within_budget() {
    let fp = flow_footprint();
    println!(
        "size_of::<Flow<()>>() = {}, footprint with index and timer = {fp}",
        std::mem::size_of::<Flow<()>>()
    );
    assert!(std::mem::size_of::<Flow<()>>() <= 160);
    assert!(fp <= 256, "{fp}");
    let _ = Direction::LoToHi;
}

#[test]
fn worker_jobs_share_the_flow_wheel() {
    let mut h = Harness::new(2);
    // The worker's flush and stats jobs, due before the flows time out.
    let ms = |s: u64| ts(s).as_millis();
    h.t.schedule_aux(ms(1), 1);
    h.t.schedule_aux(ms(8), 2);
    h.feed(&eth_udp4(1, 100, b""), ts(0));
    assert_eq!(
        h.t.next_deadline_ms(),
        Some(ms(1)),
        "the earliest job is the next deadline"
    );
    h.expire(ts(1));
    assert_eq!(h.t.take_aux().collect::<Vec<_>>(), vec![1]);
    assert!(h.ended.is_empty());
    // A full table evicting a flow skips the jobs and keeps them scheduled.
    h.feed(&eth_udp4(2, 100, b""), ts(2));
    h.feed(&eth_udp4(3, 100, b""), ts(3));
    assert_eq!(h.ended.len(), 1);
    assert_eq!(h.ended[0].1, EndReason::Forced);
    h.expire(ts(8));
    assert_eq!(h.t.take_aux().collect::<Vec<_>>(), vec![2]);
    // Jobs never come back as flows, and flows time out as before.
    h.expire(ts(1_000));
    assert_eq!(h.t.take_aux().count(), 0);
    assert!(h.ended[1..].iter().all(|(_, r)| *r == EndReason::Timeout));
    assert!(h.t.is_empty());
}

#[test]
fn ttl_ranges_per_direction() {
    let mut h = Harness::new(16);
    let (fh, _) = h.feed(&eth_udp4(1000, 53, b"q"), ts(0));
    let d = FlowKey::from_meta(&pkt(&eth_udp4(1000, 53, b"q"))).1;
    let f = h.t.get_mut(fh).unwrap();
    assert_eq!((f.ttl_range(true), f.ttl_range(false)), ((0, 0), (0, 0)));
    for ttl in [64, 60, 70] {
        f.note_ttl(d, ttl);
    }
    f.note_ttl(d.reverse(), 128);
    assert_eq!(f.ttl_range(true), (60, 70));
    assert_eq!(f.ttl_range(false), (128, 128));
}

/// UDP from B4:`sp` back to A4:`dp` (the reply of `eth_udp4(dp, sp, ..)`).
fn udp_reply(sp: u16, dp: u16) -> Vec<u8> {
    eth(0x0800, &ipv4(B4, A4, 17, &udp(&B4, &A4, sp, dp, b"r")))
}

fn ended_ports(h: &Harness) -> Vec<(EndReason, u16)> {
    h.ended
        .iter()
        .map(|(f, r)| (*r, f.key.lo_port.min(f.key.hi_port)))
        .collect()
}

#[test]
fn eviction_takes_half_open_then_closed_then_established() {
    let mut h = Harness::new(3);
    // Established (UDP both ways), the oldest.
    h.feed(&eth_udp4(1, 9000, b"q"), ts(0));
    h.feed(&udp_reply(9000, 1), ts(0));
    // Closed (TCP RST: the stream engine closes the session), then a half-open TCP flow
    // (SYN only).
    let (c, _) = h.feed(&eth_tcp4(2, 9000, SYN, b""), ts(1));
    let rst = eth(0x0800, &ipv4(B4, A4, 6, &tcp(&B4, &A4, 9000, 2, 0x04, b"")));
    h.feed(&rst, ts(1));
    h.t.set_state(c, FlowState::Closed);
    h.feed(&eth_tcp4(3, 9000, SYN, b""), ts(2));
    // A SYN flood: each new half-open flow pushes out the oldest half-open one once that
    // one is no longer alive (2 s idle); the closed and established flows stay.
    for (i, p) in (100..110u16).enumerate() {
        assert!(h.feed(&eth_tcp4(p, 9000, SYN, b""), ts(4 + 2 * i as u64)).1);
    }
    let got = ended_ports(&h);
    assert_eq!(got.len(), 10);
    assert_eq!(got[0], (EndReason::Forced, 3));
    assert_eq!(
        got[1..].iter().map(|x| x.1).collect::<Vec<_>>(),
        (100..109).collect::<Vec<_>>()
    );
    assert!(h.ended.iter().all(|(f, _)| f.state == FlowState::New));
    assert_eq!((h.t.stats.get_used, h.t.stats.get_used_failed), (10, 0));
    // With no half-open flow left, the closed one goes, then the established one.
    let mut h2 = Harness::new(2);
    h2.feed(&eth_udp4(1, 9000, b"q"), ts(0));
    h2.feed(&udp_reply(9000, 1), ts(0));
    let (c, _) = h2.feed(&eth_tcp4(2, 9000, SYN, b""), ts(1));
    h2.feed(&rst, ts(1));
    h2.t.set_state(c, FlowState::Closed);
    // The closed flow is alive for 3 s after its last packet, the established one for 5 s.
    assert!(h2.try_feed(&eth_udp4(5, 9000, b"q"), ts(4)).is_none());
    assert_eq!(
        (h2.t.stats.get_used_failed, h2.t.stats.get_used_eval_reject),
        (1, 2)
    );
    h2.feed(&eth_udp4(5, 9000, b"q"), ts(5));
    h2.feed(&udp_reply(9000, 5), ts(5));
    assert_eq!(ended_ports(&h2), vec![(EndReason::Forced, 2)]);
    assert!(h2.try_feed(&eth_udp4(6, 9000, b"q"), ts(5)).is_none());
    h2.feed(&eth_udp4(6, 9000, b"q"), ts(6));
    h2.feed(&udp_reply(9000, 6), ts(6));
    assert_eq!(ended_ports(&h2)[1], (EndReason::Forced, 1));
    assert_eq!(h2.t.stats.get_used, 2);
}

#[test]
fn eviction_spares_recently_active_flows() {
    let mut h = Harness::new(4);
    for p in 1..=4u16 {
        h.feed(&eth_udp4(p, 53, b""), ts(u64::from(p)));
    }
    // 1 and 2 see traffic again: 3 is the least recently active.
    h.feed(&eth_udp4(1, 53, b""), ts(5));
    h.feed(&eth_udp4(2, 53, b""), ts(6));
    h.feed(&eth_udp4(10, 53, b""), ts(7));
    h.feed(&eth_udp4(11, 53, b""), ts(8));
    h.feed(&eth_udp4(12, 53, b""), ts(9));
    let got: Vec<u16> = ended_ports(&h).iter().map(|x| x.1).collect();
    assert_eq!(got, vec![3, 4, 1]);
}

#[test]
fn emergency_mode_enters_when_full_and_ends_at_recovery() {
    let cfg = FlowConfig {
        max_flows: 10,
        emergency_recovery: 30,
        ..Default::default()
    };
    let mut h = Harness {
        t: FlowTable::new(&cfg, 3),
        ended: vec![],
    };
    for p in 0..10u16 {
        h.feed(&eth_udp4(1000 + p, 53, b""), ts(0));
    }
    assert!(!h.t.in_emergency());
    assert_eq!(h.t.stats.emerg_mode_entered, 0);
    // The 11th flow a second later: emergency mode, but every flow is still alive (seen
    // within the last second): the packet gets no flow.
    assert!(h.try_feed(&eth_udp4(2000, 53, b""), ts(1)).is_none());
    assert!(h.t.in_emergency());
    assert_eq!(h.t.stats.emerg_mode_entered, 1);
    assert_eq!((h.t.stats.get_used_failed, h.t.stats.get_used), (1, 0));
    assert!(h.ended.is_empty());
    // Two seconds on, the oldest flow is forced out for it.
    h.feed(&eth_udp4(2000, 53, b""), ts(2));
    assert_eq!(ended_ports(&h), vec![(EndReason::Forced, 53)]);
    assert_eq!((h.t.stats.get_used, h.t.stats.get_used_eval), (1, 2));
    // Five flows stay active; the rest idle past UDP's emergency-new timeout (10 s),
    // well before the normal one (30 s).
    for p in 5..10u16 {
        h.feed(&eth_udp4(1000 + p, 53, b""), ts(8));
    }
    h.expire(ts(9));
    assert_eq!(h.ended.len(), 1);
    h.expire(ts(11));
    let timeouts = h.ended.iter().filter(|x| x.1 == EndReason::Timeout).count();
    assert_eq!(timeouts, 4, "1001..1004 ended in emergency mode");
    // 6 flows of 10 left: more than 30 % free, emergency mode is over.
    assert_eq!(h.t.len(), 6);
    assert!(!h.t.in_emergency());
    assert_eq!(h.t.stats.emerg_mode_over, 1);
    // Back to normal timeouts: 2000 lives until 2 + 30 s, the others until 8 + 30 s (timed
    // out once past that second).
    h.expire(ts(32));
    assert_eq!(h.t.len(), 6);
    h.expire(ts(33));
    assert_eq!(h.t.len(), 5);
    h.expire(ts(38));
    assert_eq!(h.t.len(), 5);
    h.expire(ts(39));
    assert_eq!(h.t.len(), 0);
    // Filling it again enters emergency mode again.
    for p in 0..10u16 {
        h.feed(&eth_udp4(3000 + p, 53, b""), ts(40));
    }
    assert!(h.try_feed(&eth_udp4(3010, 53, b""), ts(40)).is_none());
    assert_eq!(h.t.stats.emerg_mode_entered, 2);
    assert!(h.t.in_emergency());
}

#[test]
fn emergency_mode_waits_for_the_recovery_share() {
    let cfg = FlowConfig {
        max_flows: 10,
        emergency_recovery: 50,
        ..Default::default()
    };
    let mut h = Harness {
        t: FlowTable::new(&cfg, 0),
        ended: vec![],
    };
    for p in 0..11u16 {
        h.feed(&eth_udp4(1000 + p, 53, b""), ts(u64::from(p / 6) * 5));
    }
    // Flows 1000..1005 at t=0 (1000 forced out), 1006..1010 at t=5.
    assert!(h.t.in_emergency());
    h.expire(ts(12));
    // 1001..1005 timed out: 5 of 10 free, 50 % is enough.
    assert_eq!(h.t.len(), 5);
    assert!(!h.t.in_emergency());
    // Only 4 of 10 free: emergency mode goes on.
    let cfg = FlowConfig {
        max_flows: 10,
        emergency_recovery: 50,
        ..Default::default()
    };
    let mut h = Harness {
        t: FlowTable::new(&cfg, 0),
        ended: vec![],
    };
    for p in 0..11u16 {
        h.feed(&eth_udp4(1000 + p, 53, b""), ts(u64::from(p / 5) * 5));
    }
    h.expire(ts(12));
    assert_eq!(h.t.len(), 6);
    assert!(h.t.in_emergency());
    assert_eq!(h.t.stats.emerg_mode_over, 0);
}

#[test]
fn full_table_spares_flows_still_alive_per_state() {
    // Suricata's StillAlive: new 1 s, closed 3 s, established 5 s, in whole seconds.
    let mut h = Harness::new(3);
    h.feed(
        &eth_udp4(1, 9000, b"q"),
        Timestamp::from_secs_nanos(1_700_000_000, 900_000_000),
    );
    // 1.1 s later but two second boundaries on: idle 2 s, no longer alive.
    let late = Timestamp::from_secs_nanos(1_700_000_002, 0);
    h.feed(&eth_udp4(2, 9000, b"q"), late);
    h.feed(&eth_udp4(3, 9000, b"q"), late);
    h.feed(&eth_udp4(4, 9000, b"q"), late);
    assert_eq!(ended_ports(&h), vec![(EndReason::Forced, 1)]);
    // Flows 2..4 were seen this second: nothing to take.
    assert!(h.try_feed(&eth_udp4(5, 9000, b"q"), late).is_none());
    assert!(h.try_feed(&eth_udp4(5, 9000, b"q"), ts(3)).is_none());
    // An existing flow still gets its packets.
    assert!(!h.feed(&eth_udp4(2, 9000, b"q"), ts(3)).1);
    assert_eq!(h.t.stats.get_used_failed, 2);
    // 2 s after their last packet the half-open flows go, least recently active first
    // (flow 2 was just seen: 3 then 4 go before it).
    h.feed(&eth_udp4(5, 9000, b"q"), ts(4));
    h.feed(&eth_udp4(6, 9000, b"q"), ts(4));
    let got: Vec<u16> = ended_ports(&h).iter().map(|x| x.1).collect();
    assert_eq!(got, vec![1, 3, 4]);
    assert!(h.ended.iter().all(|(_, r)| *r == EndReason::Forced));
}

#[test]
fn emergency_mode_can_restrict_new_tcp_flows_to_syns() {
    let mut h = Harness::new(2);
    h.t.set_emergency_syn_only(true);
    // Not in emergency mode yet: an ACK starts a flow (midstream).
    h.feed(&eth_tcp4(1, 80, ACK, b""), ts(0));
    h.feed(&eth_tcp4(2, 80, SYN, b""), ts(0));
    // Full: emergency mode; the SYN finds no flow it may take yet.
    assert!(h.try_feed(&eth_tcp4(3, 80, SYN, b""), ts(0)).is_none());
    assert!(h.t.in_emergency());
    // Two seconds on: an ACK of an unknown flow gets none, a SYN gets one; known flows
    // keep theirs whatever their flags.
    assert!(h.try_feed(&eth_tcp4(4, 80, ACK, b""), ts(2)).is_none());
    assert_eq!(h.t.stats.get_used, 0);
    assert!(h
        .try_feed(&eth_tcp4(4, 80, SYN | ACK, b""), ts(2))
        .is_none());
    assert!(h.feed(&eth_tcp4(5, 80, SYN, b""), ts(2)).1);
    assert!(!h.feed(&eth_tcp4(5, 80, ACK, b""), ts(2)).1);
    assert_eq!(h.t.stats.get_used, 1);
    // Without the restriction an ACK may take a flow in emergency mode.
    let mut h = Harness::new(1);
    h.feed(&eth_tcp4(1, 80, SYN, b""), ts(0));
    assert!(h.feed(&eth_tcp4(2, 80, ACK, b""), ts(2)).1);
    assert!(h.t.in_emergency());
}

/// Suricata's timeout rule, as a table: a flow last seen at `last` (seconds after the base
/// time, fractions in ms) with UDP's 30 s `new` timeout is timed out for a packet at `now`
/// once `secs(last) + 30 < secs(now)` — checked on lookup, by the packet's own time, so
/// also when packet time went backwards and no `expire` ran (captures are not always in
/// time order).
#[test]
fn lookup_times_out_by_the_packets_own_time_in_whole_seconds() {
    let at = |ms: u64| {
        Timestamp::from_secs_nanos(1_700_000_000 + ms / 1000, (ms % 1000) as u32 * 1_000_000)
    };
    // (packet times in ms, flows created by each packet)
    let table: &[(&[u64], &[bool])] = &[
        // 30.8 s idle, same second + 30: same flow.
        (&[100, 30_900], &[true, false]),
        // 31 s past the second: new flow.
        (&[100, 31_000], &[true, true]),
        // Exactly 30 s: same flow.
        (&[0, 30_000], &[true, false]),
        // 30.999 s from x.001 stays within the second: same flow; from x.999 on to the
        // second after: timed out although only 30.001 s passed.
        (&[1, 30_999], &[true, false]),
        (&[999, 31_000], &[true, true]),
    ];
    for (times, created) in table {
        let mut h = Harness::new(100);
        let got: Vec<bool> = times
            .iter()
            .map(|&t| h.feed(&eth_udp4(5000, 53, b"q"), at(t)).1)
            .collect();
        assert_eq!(&got, created, "{times:?}");
        let timeouts = created.iter().skip(1).filter(|c| **c).count();
        assert_eq!(h.ended.len(), timeouts, "{times:?}");
        assert!(h.ended.iter().all(|(_, r)| *r == EndReason::Timeout));
        assert_eq!(h.t.stats.timeouts as usize, timeouts);
    }
}

/// Packet time going backwards: a flow created after the jump back is timed out by its own
/// later packet, though the worker's clock (and `expire`) never gets there.
#[test]
fn flows_after_time_went_back_still_time_out() {
    let mut h = Harness::new(100);
    h.feed(&eth_udp4(1, 53, b"a"), ts(10_000));
    h.expire(ts(10_000));
    let (_, created) = h.feed(&eth_udp4(2, 53, b"b"), ts(0));
    assert!(created);
    // 40 s later by packet time (the clock stays at 10 000 s): the 30 s timeout passed.
    let (_, created) = h.feed(&eth_udp4(2, 53, b"c"), ts(40));
    assert!(created, "a new flow");
    assert_eq!(h.ended.len(), 1);
    assert_eq!(h.ended[0].1, EndReason::Timeout);
    assert_eq!(h.ended[0].0.last_ts, ts(0));
    // The flow seen at 10 000 s is untouched by the earlier packet times.
    assert!(!h.feed(&eth_udp4(1, 53, b"d"), ts(20)).1);
}
