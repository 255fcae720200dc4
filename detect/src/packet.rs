//! The engine's input: one decoded packet, with optional flow context, and the facts the
//! engine derives from it once before running any signature.

use shrike_capture::Timestamp;

use shrike_packet::decode::{flags, PacketKind, PacketMeta};

use super::sig::{mask, PacketBuffer};
use super::vars::FlowDetect;

/// A decoded packet handed to [`super::Engine::inspect`].
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    /// What the decoder found.
    pub meta: &'a PacketMeta,
    /// The frame bytes the meta's offsets point into.
    pub data: &'a [u8],
    /// Packet time.
    pub ts: Timestamp,
}

/// The flow a packet belongs to, as the worker's flow table sees it.
#[derive(Debug)]
pub struct FlowInput<'a> {
    /// The engine's per-flow state (kept in the worker's flow data).
    pub state: &'a mut FlowDetect,
    /// The packet travels from client to server.
    pub to_server: bool,
    /// Packets seen to the server so far, this one included.
    pub pkts_toserver: u64,
    /// Packets seen to the client so far, this one included.
    pub pkts_toclient: u64,
    /// For TCP: whether the session was established before this packet, when a stream
    /// engine tracks it (Suricata's `ssn->state >= TCP_ESTABLISHED`). `None`: the engine
    /// follows the handshake itself (see [`FlowDetect`]).
    pub tcp_established: Option<bool>,
    /// The flow's app-layer state (transactions and their sticky buffers), when the app
    /// layer runs on this flow. Set by the worker; read by transaction inspection.
    pub app: Option<&'a shrike_app::layer::AppFlow>,
    /// Whole seconds from the flow's first packet to its last one (Suricata's
    /// `lastts - startts` in seconds: `flow.age`).
    pub age_secs: u64,
}

/// Facts about the packet, computed once per packet.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PacketView<'a> {
    pub meta: &'a PacketMeta,
    pub data: &'a [u8],
    pub ts_ns: u64,
    /// 4, 6, or 0 without an IP layer.
    pub ip_version: u8,
    /// Suricata's `p->proto`: the transport protocol, 0 when there is no IP layer or the
    /// transport header failed to decode.
    pub proto: u8,
    /// The IP header's protocol (Suricata's `IP_GET_IPPROTO`), 0 without an IP layer.
    pub ip_proto: u8,
    /// TCP/UDP/SCTP with a decoded header: ports are meaningful.
    pub has_ports: bool,
    pub fragment: bool,
    pub sport: u16,
    pub dport: u16,
    pub src_v4: u32,
    pub dst_v4: u32,
    pub src_v6: u128,
    pub dst_v6: u128,
    pub payload: &'a [u8],
    /// TCP flags (TCP packets only, else 0).
    pub tcp_flags: u8,
    pub is_tcp: bool,
    /// Required-property bits present in this packet (see [`mask`]).
    pub mask: u8,
    pub has_flow: bool,
    pub to_server: bool,
    pub established: bool,
    /// Stream events the stream engine raised on this packet (`stream-event:`).
    pub stream_events: shrike_stream::StreamEventSet,
    /// Packet app-layer events raised on this packet (`app-layer-event:<name>` without a
    /// protocol; [`shrike_app::layer::PACKET_EVENTS`] bits).
    pub app_events: u8,
    /// The flow's app-layer protocol.
    pub app_proto: shrike_app::AppProto,
    /// The protocol detection found in the packet's direction (Suricata's `alproto_ts` /
    /// `alproto_tc`), for `app-layer-protocol`.
    pub dir_proto: shrike_app::AppProto,
    /// `[client, server]` stream sizes of the flow's TCP session (`stream_size`), when
    /// the packet belongs to one.
    pub tcp_sizes: Option<[u32; 2]>,
    /// A flow-end pseudo packet.
    pub pseudo: bool,
    /// Whole seconds from the flow's first packet to its last (`flow.age`).
    pub flow_age: u64,
}

impl<'a> PacketView<'a> {
    pub(crate) fn new(p: &Packet<'a>) -> PacketView<'a> {
        let m = p.meta;
        let ip_version = m.ip_version();
        let l4 = m.kind == PacketKind::L4;
        let fragment = m.has(flags::FRAGMENT);
        let proto = match (ip_version, l4) {
            (0, _) => 0,
            (_, true) => m.proto,
            // A fragment keeps its protocol; a transport header that failed to decode
            // leaves Suricata's p->proto unset.
            _ if fragment => m.proto,
            _ if matches!(m.proto, 1 | 6 | 17 | 58 | 132) => 0,
            _ => m.proto,
        };
        let has_ports = l4 && matches!(proto, 6 | 17 | 132);
        let is_tcp = l4 && proto == 6;
        let payload = if l4 { m.payload(p.data) } else { &[][..] };
        let tcp_flags = if is_tcp { m.tcp_flags } else { 0 };
        let mut mk = if payload.is_empty() {
            mask::NO_PAYLOAD
        } else {
            mask::PAYLOAD
        };
        if !m.events.is_empty() {
            mk |= mask::ENGINE_EVENT;
        }
        if tcp_flags & 0x07 != 0 {
            mk |= mask::FLAGS_INITDEINIT;
        }
        if tcp_flags & 0xe0 != 0 {
            mk |= mask::FLAGS_UNUSUAL;
        }
        let v4 = |a: &[u8; 16]| u32::from_be_bytes([a[0], a[1], a[2], a[3]]);
        PacketView {
            meta: m,
            data: p.data,
            ts_ns: p.ts.0,
            ip_version,
            proto,
            ip_proto: if ip_version != 0 { m.proto } else { 0 },
            has_ports,
            fragment,
            sport: if has_ports { m.sport } else { 0 },
            dport: if has_ports { m.dport } else { 0 },
            src_v4: v4(&m.src),
            dst_v4: v4(&m.dst),
            src_v6: u128::from_be_bytes(m.src),
            dst_v6: u128::from_be_bytes(m.dst),
            payload,
            tcp_flags,
            is_tcp,
            mask: mk,
            has_flow: false,
            to_server: false,
            established: false,
            stream_events: shrike_stream::StreamEventSet::EMPTY,
            app_events: 0,
            app_proto: shrike_app::AppProto::UNKNOWN,
            dir_proto: shrike_app::AppProto::UNKNOWN,
            tcp_sizes: None,
            pseudo: false,
            flow_age: 0,
        }
    }

    /// Is this an ICMPv4 (`v6 == false`) or ICMPv6 message with a decoded header?
    #[inline]
    pub(crate) fn icmp(&self, v6: bool) -> bool {
        self.meta.kind == PacketKind::L4 && self.proto == if v6 { 58 } else { 1 }
    }

    /// The bytes of an inspection buffer (empty when the layer is absent).
    pub(crate) fn buffer(&self, b: PacketBuffer) -> &'a [u8] {
        let m = self.meta;
        let d = self.data;
        let slice = |a: Option<usize>, b: Option<usize>| match (a, b) {
            (Some(a), Some(b)) if a <= b => d.get(a..b).unwrap_or(&[]),
            _ => &[][..],
        };
        match b {
            PacketBuffer::Payload => self.payload,
            PacketBuffer::Ipv4Hdr => {
                if self.ip_version != 4 {
                    return &[];
                }
                let l3 = m.l3();
                let hl = l3
                    .and_then(|o| d.get(o))
                    .map(|&b| usize::from(b & 0x0f) * 4);
                slice(l3, l3.zip(hl).map(|(a, b)| a + b))
            }
            PacketBuffer::Ipv6Hdr => {
                if self.ip_version != 6 {
                    return &[];
                }
                let l3 = m.l3();
                let end = m.l4().or_else(|| l3.map(|o| o + 40));
                slice(l3, end)
            }
            PacketBuffer::TcpHdr if self.is_tcp => slice(m.l4(), self.payload_start()),
            PacketBuffer::UdpHdr if self.proto == 17 && m.kind == PacketKind::L4 => {
                slice(m.l4(), m.l4().map(|o| o + 8))
            }
            PacketBuffer::Icmpv4Hdr if self.icmp(false) => slice(m.l4(), self.payload_start()),
            PacketBuffer::Icmpv6Hdr if self.icmp(true) => slice(m.l4(), self.payload_start()),
            _ => &[],
        }
    }

    fn payload_start(&self) -> Option<usize> {
        self.meta.payload_off_opt()
    }
}

/// Offset helper kept here so the decoder's meta stays untouched.
trait PayloadOff {
    fn payload_off_opt(&self) -> Option<usize>;
}

impl PayloadOff for PacketMeta {
    fn payload_off_opt(&self) -> Option<usize> {
        (self.payload_off != shrike_packet::decode::NO_OFFSET).then_some(self.payload_off as usize)
    }
}
