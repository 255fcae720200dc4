//! Writing alerts: EVE `alert` records (through `shrike_output::eve::alert`) and fast.log
//! lines, in Suricata 7's formats.

use std::io::Write;
use std::net::IpAddr;

use shrike_output::eve::addr::{proto_has_ports, Ipv6Style};
use shrike_output::eve::alert::{write_alert_record, AlertFlow, AlertRecord, AlertTunnel};
use shrike_output::eve::header::{write_eve_header, EtherMacs, EveHeader};
use shrike_output::eve::time::write_fast;
use shrike_output::fast::{write_fast_line, FastAlert};
use shrike_output::{EventKind, JsonWriter};

use super::{Alert, Engine, FlowVars, Packet};
use shrike_packet::decode::{proto, tunnel_src, Ipv4, Ipv6};

pub use shrike_output::eve::AlertFlowInfo;

/// Everything besides the engine and the alert that an alert record needs.
#[derive(Debug, Clone, Copy)]
pub struct AlertContext<'a> {
    /// The packet.
    pub pkt: Packet<'a>,
    /// Packet number in the input (EVE `pcap_cnt`).
    pub pcap_cnt: u64,
    /// pcap link type of the packet (`packet_info.linktype`).
    pub linktype: u32,
    /// The packet's flow, if any.
    pub flow: Option<AlertFlowInfo>,
    /// Detected application protocol of the flow (EVE `app_proto`).
    pub app_proto: Option<&'a str>,
    /// The flow's app-layer state, for the app-layer objects of the alert (`alert.http`,
    /// `dns`, `tls` beside the alert) when the alert comes from a transaction.
    pub app: Option<&'a shrike_app::layer::AppFlow>,
    /// The flow's variables (flowbits, flowints), logged as the top-level `metadata` object
    /// when the alert `metadata` option is on.
    pub flow_vars: Option<&'a FlowVars>,
    /// The packet's variables (`pcre` captures into `pkt:` names of the rules that
    /// matched), logged as `metadata.pktvars` of its alerts.
    pub pkt_vars: &'a [shrike_rules::matcher::Captured],
    /// IPv6 text form.
    pub ipv6: Ipv6Style,
    /// The flow's TCP session: stream and transaction alerts on TCP log its data as their
    /// payload (Suricata's `AlertJsonStreamData`).
    pub tcp: Option<&'a shrike_stream::TcpSession>,
}

impl<'a> AlertContext<'a> {
    /// The context of a packet that has no flow (fragments, non-IP packets, tunnel roots).
    pub fn flowless(pkt: Packet<'a>, pcap_cnt: u64, linktype: u32, ipv6: Ipv6Style) -> Self {
        AlertContext {
            pkt,
            pcap_cnt,
            linktype,
            flow: None,
            app_proto: None,
            app: None,
            flow_vars: None,
            pkt_vars: &[],
            ipv6,
            tcp: None,
        }
    }

    fn addrs(&self) -> (Option<IpAddr>, Option<IpAddr>) {
        (self.pkt.meta.src_addr(), self.pkt.meta.dst_addr())
    }

    fn proto(&self) -> Option<u8> {
        self.pkt.meta.is_ip().then_some(self.pkt.meta.proto)
    }

    fn l4(&self) -> bool {
        self.pkt.meta.kind == shrike_packet::decode::PacketKind::L4
    }
}

/// The EVE header of a record about the packet of `ctx` (`alert`, `anomaly`, `packet`): the
/// packet's own addresses and ports, the flow id, `pcap_cnt` and `pkt_src`.
pub fn packet_header<'a>(ctx: &'a AlertContext<'a>, event_type: &'a str) -> EveHeader<'a> {
    header(ctx, event_type)
}

/// Writes the flow variables with names (`"flowbits":[...]`, `"flowints":{...}`) into the
/// open object of `w` (the top-level `metadata` of a record), without allocating. Returns
/// whether anything was written.
pub fn write_flow_vars(w: &mut JsonWriter, engine: &Engine, vars: &FlowVars) -> bool {
    let bits = || vars.set_bits().filter_map(|id| engine.flowbit_name(id));
    let ints = || {
        vars.ints()
            .iter()
            .filter_map(|&(id, val)| engine.flowint_name(id).map(|n| (n, val)))
    };
    let (any_bits, any_ints) = (bits().next().is_some(), ints().next().is_some());
    if any_bits {
        w.open_array("flowbits");
        for b in bits() {
            w.str(b);
        }
        w.close();
    }
    if any_ints {
        w.open_object("flowints");
        for (n, val) in ints() {
            w.set_u64(n, val.into());
        }
        w.close();
    }
    let any_strs = write_str_vars(w, vars);
    any_bits || any_ints || any_strs
}

/// `"flowvars":[{"<name>":"<value>"},...]` (Suricata's `EveAddFlowVars`: values with every
/// byte that is not printable as `.`).
fn write_str_vars(w: &mut JsonWriter, vars: &FlowVars) -> bool {
    if vars.str_vars().next().is_none() {
        return false;
    }
    w.open_array("flowvars");
    for (n, v) in vars.str_vars() {
        w.start_object();
        w.set_printable(n, v);
        w.close();
    }
    w.close();
    true
}

/// `"pktvars":[{"<name>":"<value>"},...]` (Suricata's `EveAddPacketVars`; a key-value
/// variable's key is the name).
fn write_pkt_vars(w: &mut JsonWriter, vars: &[shrike_rules::matcher::Captured]) -> bool {
    if vars.is_empty() {
        return false;
    }
    w.open_array("pktvars");
    for v in vars {
        w.start_object();
        if v.kind == shrike_rules::parse::CaptureKind::PktKeyValue {
            let key: String = v
                .key
                .iter()
                .map(|&b| {
                    if (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\r' {
                        b as char
                    } else {
                        '.'
                    }
                })
                .collect();
            w.set_printable(&key, &v.value);
        } else {
            w.set_printable(&v.name, &v.value);
        }
        w.close();
    }
    w.close();
    true
}

fn header<'a>(ctx: &'a AlertContext<'a>, event_type: &'a str) -> EveHeader<'a> {
    let m = ctx.pkt.meta;
    let (src, dst) = ctx.addrs();
    let proto = ctx.proto();
    let ports = match proto {
        Some(p) if proto_has_ports(p) && ctx.l4() => Some((m.sport, m.dport)),
        // Suricata logs ports for every TCP, UDP or SCTP packet by its IP protocol
        // (`JsonAddrInfoInit` on `p->proto`), 0 when the transport header did not decode
        // (too small, or an IPv4 fragment). An IPv6 fragment's protocol is the fragment
        // header's, so no ports there.
        Some(p)
            if proto_has_ports(p)
                && m.kind == shrike_packet::decode::PacketKind::Ip
                && (m.ip_version() != 6
                    || m.flags & shrike_packet::decode::flags::FRAGMENT == 0) =>
        {
            Some((0, 0))
        }
        _ => None,
    };
    let icmp = match (m.icmp_type(), m.icmp_code()) {
        (Some(t), Some(c)) => Some((t, c)),
        _ => None,
    };
    // A tunnel's inner packet is a packet of its own in Suricata: no capture number, and
    // the decoder that made it as its source; so is a datagram rebuilt from fragments
    // (`defrag`).
    let tunnel = (m.is_tunnel_inner() || m.tunnel_src & tunnel_src::KIND == tunnel_src::DEFRAG)
        .then(|| tunnel_src::name(m.tunnel_src))
        .flatten();
    EveHeader {
        timestamp_ns: ctx.pkt.ts.0,
        flow_id: ctx.flow.map_or(0, |f| f.flow_id),
        parent_id: 0,
        in_iface: None,
        pcap_cnt: if tunnel.is_some() { 0 } else { ctx.pcap_cnt },
        event_type,
        vlan: m.vlan_ids(),
        src_ip: src,
        dest_ip: dst,
        ports,
        proto,
        ip_v: None,
        icmp,
        // Flow-end pseudo packets (stream inspection at flow timeout) have no number.
        pkt_src: Some(if ctx.pcap_cnt == 0 && ctx.flow.is_some() {
            "stream (flow timeout)"
        } else {
            tunnel.unwrap_or("wire/pcap")
        }),
        ether: None,
        community_id: ctx
            .flow
            .as_ref()
            .and_then(|f| f.community_id.as_ref())
            .map(|c| c.as_str()),
        ipv6: ctx.ipv6,
    }
}

/// The packet's Ethernet addresses, as Suricata's `ether` object has them: those of the
/// packet's own Ethernet header: the frame's on Ethernet captures, the inner one of a GRE
/// TEB or ERSPAN tunnel packet; none for other link types, VXLAN inner packets (Suricata
/// starts them at the IP header) and flow-end pseudo packets.
fn ether_of(ctx: &AlertContext<'_>) -> Option<EtherMacs> {
    let m = ctx.pkt.meta;
    let own_l2 = if m.is_tunnel_inner() {
        m.tunnel_src & tunnel_src::KIND != tunnel_src::VXLAN && m.packet_start() == m.l2()?
    } else {
        ctx.linktype == 1
    };
    if !own_l2 {
        return None;
    }
    let e = shrike_packet::decode::Ethernet::from_meta(m, ctx.pkt.data)?;
    Some(EtherMacs {
        src: e.src(),
        dst: e.dst(),
    })
}

/// The `tunnel` object of an alert on a tunnel's inner packet: the outer packet's tuple,
/// read from its IP header (at [`shrike_packet::decode::PacketMeta::root_l3`]) in the frame.
fn tunnel_of<'a>(ctx: &AlertContext<'a>) -> Option<AlertTunnel<'a>> {
    let m = ctx.pkt.meta;
    if !m.is_tunnel_inner() || m.root_l3 == u8::MAX {
        return None;
    }
    let at = ctx.pkt.data.get(usize::from(m.root_l3)..)?;
    let (src, dst, ip_proto, l4): (IpAddr, IpAddr, u8, &[u8]) = match at.first()? >> 4 {
        4 => {
            let h = Ipv4::new_checked(at)?;
            let l4 = at.get(h.header_len()..).unwrap_or(&[]);
            (h.src().into(), h.dst().into(), h.protocol(), l4)
        }
        6 => {
            let h = Ipv6::new_checked(at)?;
            let mut ext = h.ext_headers();
            for _ in ext.by_ref() {}
            let (nh, l4) = ext.upper();
            (h.src().into(), h.dst().into(), nh, l4)
        }
        _ => return None,
    };
    let ports = match (ip_proto, l4) {
        (proto::TCP | proto::UDP | proto::SCTP, [a, b, c, d, ..]) => {
            (u16::from_be_bytes([*a, *b]), u16::from_be_bytes([*c, *d]))
        }
        _ => (0, 0),
    };
    Some(AlertTunnel {
        src_ip: src,
        dest_ip: dst,
        src_port: ports.0,
        dest_port: ports.1,
        proto: ip_proto,
        depth: m.tunnel_depth,
        pcap_cnt: ctx.pcap_cnt,
        pkt_src: "wire/pcap",
    })
}

/// The bytes and link type an alert's `packet` shows: the frame, or for a tunnel's inner
/// packet that packet alone, as raw IP (`DLT_RAW`, 12), as Suricata logs its tunnel packets.
fn logged_packet<'a>(ctx: &AlertContext<'a>) -> (&'a [u8], u32) {
    let m = ctx.pkt.meta;
    if m.is_tunnel_inner() {
        if let Some(inner) = ctx.pkt.data.get(m.packet_start()..) {
            return (inner, 12);
        }
    }
    (ctx.pkt.data, ctx.linktype)
}

/// Writes the EVE `frame` records of the packet of `ctx` (Suricata's eve-log `frame`
/// logger): each frame of the packet's direction not logged yet, once it is all in, 2500
/// bytes of it are, or the stream ended. `tdir` is the TCP direction (`None`: UDP).
pub fn write_eve_frames(
    out: &mut shrike_output::EveOutput,
    ctx: &AlertContext<'_>,
    tdir: Option<shrike_app::Dir>,
) {
    let Some(app) = ctx.app else {
        return;
    };
    if app.proto == shrike_app::AppProto::UNKNOWN {
        return;
    }
    let Some(fr) = app.frames.as_deref() else {
        return;
    };
    let to_server = ctx.flow.is_some_and(|f| f.to_server);
    let dir = tdir.unwrap_or(if to_server {
        shrike_app::Dir::ToServer
    } else {
        shrike_app::Dir::ToClient
    });
    let (progress, eof) = match (tdir, ctx.tcp) {
        (Some(d), Some(t)) => (t.app_progress(d), t.is_eof()),
        _ => (0, false),
    };
    let payload = ctx.pkt.meta.payload(ctx.pkt.data);
    for f in &fr.dir(dir).list {
        if f.logged.get() {
            continue;
        }
        if tdir.is_some() {
            let win = progress as i64 - f.offset as i64;
            if !eof && win < f.len && win < 2500 {
                continue;
            }
        }
        let Some(mut rec) = out.record(EventKind::Other) else {
            continue;
        };
        write_eve_header(&mut rec, &header(ctx, "frame"));
        rec.set_str("app_proto", app.proto.name());
        rec.key("frame");
        let h = super::frames::FrameHit::of(f, app.proto, dir, tdir.is_some());
        super::frames::write_frame(&mut rec, &h, to_server, ctx.tcp, payload);
        rec.close();
        let _ = rec.commit();
        f.logged.set(true);
    }
}

/// Write one EVE `packet` record for a tagged packet (Suricata's `tagged-packets`).
pub fn write_eve_tagged_packet(w: &mut JsonWriter, ctx: &AlertContext<'_>) {
    write_eve_header(w, &header(ctx, "packet"));
    let (bytes, linktype) = logged_packet(ctx);
    w.set_base64("packet", bytes);
    w.open_object("packet_info")
        .set_u64("linktype", linktype.into())
        .close();
    w.close();
}

/// Write one EVE `alert` record (a complete JSON object, no newline).
pub fn write_eve_alert(w: &mut JsonWriter, engine: &Engine, a: &Alert, ctx: &AlertContext<'_>) {
    let Some(s) = engine.sig_info(a.sig) else {
        return;
    };
    let cfg = &engine.config().alert;
    let mut header = header(ctx, "alert");
    if cfg.ethernet {
        header.ether = ether_of(ctx);
    }
    let (packet_bytes, packet_linktype) = logged_packet(ctx);
    let want_payload = cfg.payload || cfg.payload_printable;
    let mut log = Vec::new();
    let (payload, stream) = if want_payload {
        alert_payload(ctx, a, cfg.payload_buffer_size, &mut log)
    } else {
        (None, false)
    };
    let frame_json = a.frame.map(|h| {
        let mut fw = JsonWriter::with_capacity(512);
        let to_server = ctx.flow.is_some_and(|f| f.to_server);
        super::frames::write_frame(
            &mut fw,
            &h,
            to_server,
            ctx.tcp,
            ctx.pkt.meta.payload(ctx.pkt.data),
        );
        fw.into_inner()
    });
    let rec = AlertRecord {
        header,
        action: "allowed",
        tunnel: tunnel_of(ctx),
        gid: s.gid,
        signature_id: s.sid,
        rev: s.rev,
        signature: s.msg.as_bytes(),
        category: s.class_msg.as_deref(),
        severity: s.priority,
        metadata_json: if cfg.metadata {
            s.metadata_json.as_deref()
        } else {
            None
        },
        // Suricata's `EveAddAppProto`: nothing while the protocol is undecided.
        app_proto: ctx.app_proto.filter(|p| *p != "unknown"),
        app_proto_more: ctx.app.map_or([None; 4], |a| {
            let [ts, tc] = a.dir_protos();
            let [orig, expect] = a.change_protos();
            [ts, tc, orig, expect]
        }),
        direction: ctx.flow.map(|f| {
            if f.to_server {
                "to_server"
            } else {
                "to_client"
            }
        }),
        flow: ctx.flow.map(|f| AlertFlow {
            pkts_toserver: f.pkts_toserver,
            pkts_toclient: f.pkts_toclient,
            bytes_toserver: f.bytes_toserver,
            bytes_toclient: f.bytes_toclient,
            start_ns: f.start_ns,
            src_ip: f.client,
            dest_ip: f.server,
            ports: f.ports,
        }),
        payload,
        payload_base64: cfg.payload,
        payload_printable: cfg.payload_printable,
        stream: want_payload.then_some(u8::from(stream)),
        packet: cfg.packet.then_some(packet_bytes),
        linktype: cfg.packet.then_some(packet_linktype),
        frame: frame_json.as_deref(),
    };
    let target = s.target.map(|t| (t, ctx));
    let vars = if cfg.metadata {
        vars_json(engine, ctx)
    } else {
        None
    };
    let app_tx = a.tx.zip(ctx.app);
    if target.is_none() && vars.is_none() && app_tx.is_none() {
        write_alert_record(w, &rec);
        return;
    }
    // `AlertRecord` has no place for the top-level `metadata` (flow variables) or for
    // `alert.source`/`alert.target`: write the record aside and splice them in where
    // Suricata puts them (before `"alert"`, and after `"severity"`).
    let mut tmp = JsonWriter::with_capacity(1024);
    write_alert_record(&mut tmp, &rec);
    let mut bytes = tmp.into_inner();
    if let Some((t, ctx)) = target {
        if let Some(st) = source_target_json(t, ctx, ctx.ipv6) {
            if let Some(at) = find(&bytes, b"\"severity\":") {
                let end = bytes[at + 11..]
                    .iter()
                    .position(|b| !b.is_ascii_digit())
                    .map_or(bytes.len(), |e| at + 11 + e);
                bytes.splice(end..end, st);
            }
        }
    }
    if let Some((tx, app)) = app_tx {
        // Suricata: `"tx_id"` before `"alert"`, the protocol object right after it.
        if let Some(m) = shrike_app::log::alert_app_members(app, tx) {
            let at = [&b",\"app_proto\":"[..], b",\"direction\":", b",\"flow\":"]
                .iter()
                .find_map(|k| find(&bytes, k))
                .unwrap_or(bytes.len().saturating_sub(1));
            let mut ins = b",".to_vec();
            ins.extend_from_slice(&m);
            bytes.splice(at..at, ins);
        }
        // The transaction's files in the packet's direction, with the rule metadata
        // setting (Suricata's `LOG_JSON_RULE_METADATA`).
        let dir = match ctx.flow.map(|f| f.to_server) {
            Some(false) => shrike_app::Dir::ToClient,
            _ => shrike_app::Dir::ToServer,
        };
        if let Some(m) = cfg
            .metadata
            .then(|| shrike_app::log::alert_files(app, tx, dir))
            .flatten()
        {
            let at = [&b",\"app_proto\":"[..], b",\"direction\":", b",\"flow\":"]
                .iter()
                .find_map(|k| find(&bytes, k))
                .unwrap_or(bytes.len().saturating_sub(1));
            let mut ins = b",".to_vec();
            ins.extend_from_slice(&m);
            bytes.splice(at..at, ins);
        }
        if let Some(at) = find(&bytes, b",\"alert\":{") {
            let ins = format!(",\"tx_id\":{tx}").into_bytes();
            bytes.splice(at..at, ins);
        }
    }
    if let Some(v) = vars {
        if let Some(at) = find(&bytes, b",\"alert\":{") {
            let mut ins = b",\"metadata\":".to_vec();
            ins.extend_from_slice(&v);
            bytes.splice(at..at, ins);
        }
    }
    w.raw(&bytes);
}

/// The payload of an alert record and its `stream` value, as Suricata's `AlertJson`: a
/// stream or transaction match on TCP logs the stream data of the packet's direction
/// (into `log`), falling back to the packet payload when the stream holds none; any other
/// alert logs the packet payload, even empty.
fn alert_payload<'a>(
    ctx: &'a AlertContext<'a>,
    a: &Alert,
    max: u64,
    log: &'a mut Vec<u8>,
) -> (Option<&'a [u8]>, bool) {
    let m = ctx.pkt.meta;
    let packet = m.payload(ctx.pkt.data);
    let stream = a.stream && ctx.l4() && m.proto == 6 && ctx.flow.is_some();
    if !stream {
        return (Some(packet), false);
    }
    if let (Some(t), Some(f)) = (ctx.tcp, ctx.flow) {
        let tdir = if f.to_server != t.is_swapped() {
            shrike_app::Dir::ToServer
        } else {
            shrike_app::Dir::ToClient
        };
        t.log_payload(tdir, usize::try_from(max).unwrap_or(usize::MAX), log);
    }
    if !log.is_empty() {
        (Some(&log[..]), true)
    } else if !packet.is_empty() && ctx.pcap_cnt != 0 {
        // Flow-end pseudo packets carry no payload of their own in Suricata.
        (Some(packet), true)
    } else {
        (None, true)
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `"metadata":{"flowbits":[...],"flowints":{...}}` for a flow with variables.
fn vars_json(engine: &Engine, ctx: &AlertContext<'_>) -> Option<Vec<u8>> {
    let empty = FlowVars::default();
    let v = ctx.flow_vars.unwrap_or(&empty);
    let bits: Vec<&str> = v
        .set_bits()
        .filter_map(|id| engine.flowbit_name(id))
        .collect();
    let ints: Vec<(&str, u32)> = v
        .ints()
        .iter()
        .filter_map(|&(id, val)| engine.flowint_name(id).map(|n| (n, val)))
        .collect();
    if bits.is_empty()
        && ints.is_empty()
        && v.str_vars().next().is_none()
        && ctx.pkt_vars.is_empty()
    {
        return None;
    }
    let mut w = JsonWriter::with_capacity(128);
    w.start_object();
    if !bits.is_empty() {
        w.open_array("flowbits");
        for b in bits {
            w.str(b);
        }
        w.close();
    }
    if !ints.is_empty() {
        w.open_object("flowints");
        for (n, val) in ints {
            w.set_u64(n, val.into());
        }
        w.close();
    }
    write_str_vars(&mut w, v);
    write_pkt_vars(&mut w, ctx.pkt_vars);
    w.close();
    Some(w.into_inner())
}

/// `,"source":{...},"target":{...}` for a rule with `target:` (Suricata's
/// `AlertJsonSourceTarget`): the target is the rule's `dest_ip` or `src_ip` side.
fn source_target_json(
    t: shrike_rules::parse::Target,
    ctx: &AlertContext<'_>,
    style: Ipv6Style,
) -> Option<Vec<u8>> {
    use shrike_rules::parse::Target;
    let m = ctx.pkt.meta;
    let (src, dst) = (m.src_addr()?, m.dst_addr()?);
    let ports = ctx.l4() && proto_has_ports(m.proto);
    let (sp, dp) = (m.sport, m.dport);
    let ((tip, tport), (sip, sport)) = match t {
        Target::DestIp => ((dst, dp), (src, sp)),
        Target::SrcIp => ((src, sp), (dst, dp)),
    };
    let mut w = JsonWriter::with_capacity(128);
    w.start_object();
    w.open_object("source");
    shrike_output::eve::header::set_ip(&mut w, "ip", sip, style);
    if ports {
        w.set_u64("port", sport.into());
    }
    w.close();
    w.open_object("target");
    shrike_output::eve::header::set_ip(&mut w, "ip", tip, style);
    if ports {
        w.set_u64("port", tport.into());
    }
    w.close();
    w.close();
    let mut v = w.into_inner();
    // `{"source":…,"target":…}` → `,"source":…,"target":…`
    v.pop();
    if let Some(first) = v.first_mut() {
        *first = b',';
    }
    Some(v)
}

/// Append one fast.log line for an alert.
pub fn write_fast_alert(out: &mut Vec<u8>, engine: &Engine, a: &Alert, ctx: &AlertContext<'_>) {
    let Some(s) = engine.sig_info(a.sig) else {
        return;
    };
    let m = ctx.pkt.meta;
    match ctx.addrs() {
        (Some(src), Some(dst)) => {
            let proto = m.proto;
            let (sp, dp) = if ctx.l4() && proto_has_ports(proto) {
                (m.sport, m.dport)
            } else if let (Some(t), Some(c)) = (m.icmp_type(), m.icmp_code()) {
                (u16::from(t), u16::from(c))
            } else {
                (0, 0)
            };
            write_fast_line(
                out,
                &FastAlert {
                    timestamp_ns: ctx.pkt.ts.0,
                    action: "",
                    gid: s.gid,
                    sid: s.sid,
                    rev: s.rev,
                    msg: s.msg.as_bytes(),
                    class_msg: s.class_msg.as_deref(),
                    priority: s.priority,
                    proto,
                    src_ip: src,
                    src_port: sp,
                    dest_ip: dst,
                    dest_port: dp,
                    ipv6: ctx.ipv6,
                },
            );
        }
        _ => {
            // Suricata's decoder-event line: no addresses, the first 32 raw bytes.
            write_fast(out, ctx.pkt.ts.0);
            let _ = write!(out, "  [**] [{}:{}:{}] ", s.gid, s.sid, s.rev);
            out.extend_from_slice(s.msg.as_bytes());
            out.extend_from_slice(b" [**] [Classification: ");
            out.extend_from_slice(s.class_msg.as_deref().unwrap_or("(null)").as_bytes());
            let _ = write!(out, "] [Priority: {}] [**] [Raw pkt: ", s.priority);
            for b in ctx.pkt.data.iter().take(32) {
                let _ = write!(out, "{b:02X} ");
            }
            if ctx.pcap_cnt != 0 {
                let _ = writeln!(out, "] [pcap file packet: {}]", ctx.pcap_cnt);
            } else {
                out.extend_from_slice(b"]\n");
            }
        }
    }
}
