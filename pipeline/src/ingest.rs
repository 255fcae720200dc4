//! The decode stage of every reader (file reader, live capture threads): decode, IP
//! defragmentation (before flow hashing, as Suricata's decode threads do), flow hash.
//!
//! A fragment is handed on as a packet of its own (no flow: hash 0); when it completes a
//! datagram, the reassembled IP packet is decoded (raw IP, keeping the fragment's VLAN ids
//! and tunnel depth) and handed on right after it with the same packet number, like
//! Suricata's reassembled pseudo packet. The sink copies the bytes (into a batch arena or
//! straight into a worker), so the reassembly buffer is reused for the next datagram.
//!
//! A frame whose tunnel (GRE, IP-in-IP, VXLAN) yielded an inner IP packet is handed on
//! twice, like Suricata's tunnel root and tunnel packet: first the outer (root) packet
//! (marked [`decode::tunnel_src::ROOT`], its own flow hash), then the inner one.

use shrike_capture::{LinkType, Timestamp};
use shrike_packet::config::DecodeConfig;
use shrike_packet::decode::{self, flags, PacketMeta};
use shrike_packet::defrag::{Defrag, DefragStatus};
use shrike_packet::stats::DecodeStats;

use crate::config::SensorConfig;
use crate::dispatch::Entry;

/// One captured frame as the reader sees it.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    pub link: LinkType,
    pub data: &'a [u8],
    pub orig_len: u32,
    pub ts: Timestamp,
    /// Packet number (Suricata's `pcap_cnt`).
    pub seq: u64,
}

/// A reader's decode stage: configuration, counters, defragmenter.
pub struct Ingest {
    /// Decoder settings.
    pub decode_cfg: DecodeConfig,
    /// Decoder counters (`decoder.*`).
    pub decode_stats: DecodeStats,
    /// IP defragmentation (`defrag.*` counters).
    pub defrag: Defrag,
    seed: u64,
    /// A reassembled datagram behind its fragment's link header.
    buf: Vec<u8>,
}

impl Ingest {
    /// The decode stage of one reader.
    pub fn new(cfg: &SensorConfig, seed: u64) -> Self {
        Ingest {
            decode_cfg: cfg.detect.decoder.clone(),
            decode_stats: DecodeStats::default(),
            defrag: Defrag::new(cfg.detect.defrag.clone(), crate::session::host_policy(cfg)),
            seed,
            buf: Vec::with_capacity(65_536 + 64),
        }
    }

    /// Decode `f`, defragment, hash; `sink` gets the packet, then the datagram it completed.
    #[inline]
    pub fn packet(&mut self, f: &Frame<'_>, sink: &mut impl FnMut(&Entry<PacketMeta>, &[u8])) {
        let (mut meta, root) =
            decode::decode_tunnel(f.link, f.data, &self.decode_cfg, &mut self.decode_stats);
        if let Some(r) = root {
            let hash = if r.kind == decode::PacketKind::L4 {
                shrike_flow::FlowKey::from_meta(&r).0.hash(self.seed)
            } else {
                0
            };
            let re = Entry {
                off: 0,
                len: f.data.len() as u32,
                orig_len: f.orig_len,
                ts: f.ts,
                link: f.link,
                hash,
                seq: f.seq,
                tick: false,
                order: 0,
                meta: r,
            };
            sink(&re, f.data);
        }
        let mut e = Entry {
            off: 0,
            len: f.data.len() as u32,
            orig_len: f.orig_len,
            ts: f.ts,
            link: f.link,
            hash: 0,
            seq: f.seq,
            tick: false,
            order: 0,
            meta,
        };
        if !meta.is_ip() {
            sink(&e, f.data);
            return;
        }
        if !meta.has(flags::FRAGMENT) {
            e.hash = shrike_flow::FlowKey::from_meta(&meta).0.hash(self.seed);
            sink(&e, f.data);
            return;
        }
        let secs = (f.ts.0 / 1_000_000_000) as u32;
        let r = self.defrag.process(&meta, f.data, secs);
        meta.events.union(&r.events);
        e.meta = meta;
        sink(&e, f.data);
        if r.status != DefragStatus::Reassembled {
            return;
        }
        // Outside tunnels the datagram keeps the fragment's link header (Suricata logs the
        // reassembled packet with it); inside a tunnel it is decoded as raw IP.
        let l3 = usize::from(meta.l3_off);
        let (link, bytes): (LinkType, &[u8]) = match f.data.get(..l3) {
            Some(hdr) if meta.tunnel_depth == 0 && l3 > 0 && f.link != LinkType::Raw => {
                self.buf.clear();
                self.buf.extend_from_slice(hdr);
                self.buf.extend_from_slice(r.packet);
                (f.link, &self.buf)
            }
            _ => (LinkType::Raw, r.packet),
        };
        let mut rm = decode::decode(link, bytes, &self.decode_cfg, &mut self.decode_stats);
        // A raw-IP capture keeps its own link type in the alert's `packet_info`.
        let link = match f.link {
            LinkType::Raw | LinkType::Ipv4 | LinkType::Ipv6 if link == LinkType::Raw => f.link,
            _ => link,
        };
        if matches!(link, LinkType::Raw | LinkType::Ipv4 | LinkType::Ipv6) {
            rm.vlan = meta.vlan;
            rm.tunnel_depth = meta.tunnel_depth;
        }
        // Suricata's rebuilt packet: `pkt_src` `defrag`, no capture number.
        if rm.tunnel_depth == 0 {
            rm.tunnel_src =
                (rm.tunnel_src & !decode::tunnel_src::KIND) | decode::tunnel_src::DEFRAG;
        }
        let hash = if rm.is_ip() && !rm.has(flags::FRAGMENT) {
            shrike_flow::FlowKey::from_meta(&rm).0.hash(self.seed)
        } else {
            0
        };
        let re = Entry {
            off: 0,
            len: bytes.len() as u32,
            orig_len: bytes.len() as u32,
            ts: f.ts,
            link,
            hash,
            seq: f.seq,
            tick: false,
            order: 0,
            meta: rm,
        };
        sink(&re, bytes);
    }

    /// Decoder and defrag counters.
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        self.decode_stats.visit(f);
        self.defrag.stats.visit(f);
    }
}
