//! The decoder over every supported link type: first byte picks the link type and the
//! decoder settings, the rest is the frame. Also walks every accessor view of the result.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_capture::LinkType;
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats, Ipv4, Ipv6, Tcp, Udp};
use shrike_flow::FlowKey;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, frame)) = data.split_first() else {
        return;
    };
    let link = LinkType::SUPPORTED[usize::from(sel & 7)];
    let mut cfg = DecodeConfig {
        checksum_validation: sel & 0x08 != 0,
        ..DecodeConfig::default()
    };
    cfg.vlan.use_for_tracking = sel & 0x10 == 0;
    cfg.vxlan.enabled = sel & 0x20 == 0;
    if sel & 0x40 != 0 {
        cfg.max_layers = u16::from(sel >> 7) + 2;
    }
    let mut st = DecodeStats::default();
    let meta = decode(link, frame, &cfg, &mut st);
    let (key, _dir) = FlowKey::from_meta(&meta);
    let _ = key.hash(0x5eed);
    let _ = meta.payload(frame).len();
    let _ = (
        meta.src_addr(),
        meta.dst_addr(),
        meta.emb_src_addr(),
        meta.emb_dst_addr(),
    );
    let _ = (meta.icmp_type(), meta.icmp_code(), meta.vlan_ids().len());
    for e in meta.events.iter() {
        let _ = e;
    }
    if let Some(ip) = Ipv4::from_meta(&meta, frame) {
        for o in ip.options() {
            let _ = o;
        }
    }
    if let Some(ip) = Ipv6::from_meta(&meta, frame) {
        for h in ip.ext_headers() {
            let _ = h;
        }
    }
    if let Some(t) = Tcp::from_meta(&meta, frame) {
        for o in t.options() {
            let _ = o;
        }
        let _ = t.payload().len();
    }
    if let Some(u) = Udp::from_meta(&meta, frame) {
        let _ = u;
    }
});
