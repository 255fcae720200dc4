//! Packet keywords (Suricata's MATCH list): compiled form and evaluation with Suricata 7's
//! semantics. Every check is a pure predicate over the packet and its flow.

use shrike_packet::decode::{checksum, flags, tcp_flags, DecodeEvent, Ipv4, Tcp};
use shrike_rules::parse::keywords::{BitsModifier, FlowOpts, IpOpt, StreamSide};
use shrike_rules::parse::UintMatch;

use super::packet::PacketView;
use super::vars::{FlowVars, IntOperand};

/// `flow:` requirements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct FlowReq {
    pub to_server: bool,
    pub to_client: bool,
    pub established: bool,
    pub not_established: bool,
    pub only_frag: bool,
    pub no_frag: bool,
}

impl FlowReq {
    pub(crate) fn from_opts(o: &FlowOpts) -> FlowReq {
        FlowReq {
            to_server: o.to_server,
            to_client: o.to_client,
            established: o.established,
            not_established: o.not_established,
            only_frag: o.only_frag,
            no_frag: o.no_frag,
        }
    }

    /// Suricata's `FlowMatch`. Rebuilt fragments do not exist yet, so `no_frag` always holds
    /// and `only_frag` never does.
    #[inline]
    fn matches(&self, p: &PacketView<'_>) -> bool {
        if self.only_frag {
            return false;
        }
        let to_server = p.has_flow && p.to_server;
        let to_client = p.has_flow && !p.to_server;
        if (self.to_server && !to_server) || (self.to_client && !to_client) {
            return false;
        }
        if self.established && !p.established {
            return false;
        }
        if self.not_established && p.established {
            return false;
        }
        true
    }
}

/// `flowint` comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntCmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Which checksum a `*-csum` keyword validates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Csum {
    Ipv4,
    Tcpv4,
    Tcpv6,
    Udpv4,
    Udpv6,
    Icmpv4,
    Icmpv6,
}

/// A compiled packet keyword.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    Flow(FlowReq),
    /// `flowbits:isset` (`any`: `a|b`, else all of them).
    BitsIsSet {
        ids: Box<[u32]>,
        any: bool,
    },
    /// `flowbits:isnotset`.
    BitsIsNotSet {
        ids: Box<[u32]>,
        any: bool,
    },
    IntCmp {
        id: u32,
        op: IntCmp,
        rhs: IntOperand,
    },
    IntIsSet(u32),
    IntNotSet(u32),
    /// `flowvar:<name>,<content>`: the flow variable (a `pcre` capture) holds the content.
    FlowVar {
        name: Box<str>,
        content: Box<[u8]>,
    },
    Flags {
        modifier: BitsModifier,
        flags: u8,
        keep: u8,
    },
    Fragbits {
        modifier: BitsModifier,
        bits: u8,
    },
    Fragoffset(UintMatch),
    Ttl(UintMatch),
    Tos(UintMatch),
    Id(UintMatch),
    Ipopts(IpOpt),
    IpProto(UintMatch),
    Itype(UintMatch),
    Icode(UintMatch),
    IcmpId(UintMatch),
    IcmpSeq(UintMatch),
    Seq(u32),
    Ack(u32),
    Window(UintMatch),
    SameIp,
    TcpMss(UintMatch),
    /// `flow.age` (`DetectFlowAgeMatch`): whole seconds from the flow's first packet to this
    /// one; never without a flow.
    FlowAge(UintMatch),
    /// `icmpv6.mtu`: an ICMPv6 Packet Too Big (type 2, code 0) message's MTU, not on
    /// pseudo packets.
    Icmpv6Mtu(UintMatch),
    Dsize(UintMatch),
    /// `rpc:<program>[,<version>|*[,<procedure>|*]]`: an ONC RPC call in the packet
    /// payload (after the record marker on TCP).
    Rpc {
        program: u32,
        version: Option<u32>,
        procedure: Option<u32>,
    },
    Event(DecodeEvent),
    /// `stream-event:` (raised by the stream engine on this packet).
    StreamEvent(shrike_stream::StreamEvent),
    /// `app-layer-event:<name>` without a protocol: a packet app-layer event (protocol
    /// detection) raised on this packet ([`shrike_app::layer::PACKET_EVENTS`] bit).
    AppPktEvent(u8),
    Csum {
        which: Csum,
        valid: bool,
    },
    /// `stream_size` (`prefilter`: used as the rule's prefilter, which skips pseudo
    /// packets).
    StreamSize {
        side: StreamSide,
        cmp: UintMatch,
        prefilter: bool,
    },
}

/// Suricata's `DetectStreamSizeMatchAux`: `sizes` are `[client, server]` stream sizes
/// (`next_seq - isn` of each sender, see [`shrike_stream::TcpSession::stream_sizes`]).
pub(crate) fn stream_size_match(side: StreamSide, cmp: &UintMatch, sizes: [u32; 2]) -> bool {
    let [c, s] = sizes;
    let m = |v: u32| cmp.matches(u64::from(v));
    match side {
        StreamSide::Server => m(s),
        StreamSide::Client => m(c),
        StreamSide::Both => m(s) && m(c),
        StreamSide::Either => m(s) || m(c),
    }
}

/// Suricata's `FlagsMatch` (`keep` is the complement of the ignore mask).
pub(crate) fn flags_match(pflags: u8, modifier: BitsModifier, dflags: u8, keep: u8) -> bool {
    if dflags == 0 && pflags != 0 {
        return modifier == BitsModifier::Not;
    }
    let f = pflags & keep;
    match modifier {
        BitsModifier::Any => f & dflags != 0,
        BitsModifier::Plus => f & dflags == dflags,
        BitsModifier::Not => f & dflags != dflags,
        BitsModifier::Exact => f == dflags,
    }
}

/// Suricata's `FragBitsMatch` (bits: M=1, D=2, R=4). `+` needs another bit besides.
pub(crate) fn fragbits_match(pbits: u8, modifier: BitsModifier, dbits: u8) -> bool {
    match modifier {
        BitsModifier::Any => pbits & dbits != 0,
        BitsModifier::Plus => pbits & dbits == dbits && pbits.wrapping_sub(dbits) > 0,
        BitsModifier::Not => pbits & dbits != dbits,
        BitsModifier::Exact => pbits == dbits,
    }
}

/// Suricata's `DetectRpcMatch`: the payload (past the 4-byte record marker on TCP, of at
/// least 28 bytes on TCP and 24 on UDP) is a call to `program`, of `version` and
/// `procedure` when given.
pub(crate) fn rpc_match(
    p: &PacketView<'_>,
    program: u32,
    version: Option<u32>,
    procedure: Option<u32>,
) -> bool {
    let msg = if p.is_tcp {
        if p.payload.len() < 28 {
            return false;
        }
        &p.payload[4..]
    } else if p.ip_proto == 17 && p.has_ports {
        if p.payload.len() < 24 {
            return false;
        }
        p.payload
    } else {
        return false;
    };
    let w = |i: usize| {
        msg.get(i * 4..i * 4 + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    w(1) == Some(0)
        && w(3) == Some(program)
        && version.is_none_or(|v| w(4) == Some(v))
        && procedure.is_none_or(|v| w(5) == Some(v))
}

/// `rpc`'s value as Suricata's `DetectRpcParse` reads it: a program, then optionally a
/// version and a procedure, each a decimal number or `*`.
pub(crate) fn parse_rpc(v: &str) -> Option<(u32, Option<u32>, Option<u32>)> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let num = |s: &str| -> Option<u32> {
        if s.is_empty() || s.len() > 10 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let opt = |s: Option<&&str>| -> Option<Option<u32>> {
        match s {
            None => Some(None),
            Some(&"*") => Some(None),
            Some(s) => num(s).map(Some),
        }
    };
    Some((num(parts[0])?, opt(parts.get(1))?, opt(parts.get(2))?))
}

/// ICMP messages that carry an identifier and sequence number (Suricata's list).
fn icmp_has_id(p: &PacketView<'_>) -> bool {
    let t = (p.meta.sport >> 8) as u8;
    if p.icmp(false) {
        matches!(t, 0 | 8 | 13 | 14 | 15 | 16 | 17 | 18)
    } else if p.icmp(true) {
        matches!(t, 128 | 129)
    } else {
        false
    }
}

fn icmp_u16(p: &PacketView<'_>, off: usize) -> Option<u16> {
    let o = p.meta.l4()? + off;
    let b = p.data.get(o..o + 2)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

/// IPv4 option type per `ipopts` name.
fn ipopt_code(o: IpOpt) -> Option<u8> {
    Some(match o {
        IpOpt::Rr => 7,
        IpOpt::Eol => 0,
        IpOpt::Nop => 1,
        IpOpt::Ts => 68,
        IpOpt::Sec => 130,
        IpOpt::Esec => 133,
        IpOpt::Lsrr => 131,
        IpOpt::Lsrre => 147,
        IpOpt::Ssrr => 137,
        IpOpt::Satid => 136,
        IpOpt::Any => return None,
    })
}

fn ipopts_match(p: &PacketView<'_>, o: IpOpt) -> bool {
    if p.ip_version != 4 {
        return false;
    }
    let Some(ip) = Ipv4::from_meta(p.meta, p.data) else {
        return false;
    };
    let mut opts = ip.options().peekable();
    match ipopt_code(o) {
        None => opts.peek().is_some(),
        Some(code) => opts.any(|op| op.kind == code),
    }
}

fn tcp_mss(p: &PacketView<'_>) -> Option<u16> {
    if !p.is_tcp || !p.meta.has(flags::TCP_OPTS) {
        return None;
    }
    let t = Tcp::from_meta(p.meta, p.data)?;
    t.options().find_map(|o| match o {
        shrike_packet::decode::TcpOption::Mss(v) => Some(v),
        _ => None,
    })
}

/// Transport checksum of the packet, computed (Suricata computes it on demand).
fn l4_csum_ok(p: &PacketView<'_>, proto: u8) -> Option<bool> {
    if p.meta.kind != shrike_packet::decode::PacketKind::L4 || p.proto != proto {
        return None;
    }
    let l4 = p.meta.l4()?;
    let end = p.meta.payload_off_end();
    let seg = p.data.get(l4..end)?;
    let m = p.meta;
    let acc = match p.ip_version {
        4 if proto == 1 => 0,
        4 => checksum::pseudo_v4(&m.src[..4], &m.dst[..4], proto, seg.len()),
        6 => checksum::pseudo_v6(&m.src, &m.dst, proto, seg.len()),
        _ => return None,
    };
    Some(checksum::fold(checksum::sum(seg, acc)) == 0xffff)
}

trait PayloadEnd {
    fn payload_off_end(&self) -> usize;
}

impl PayloadEnd for shrike_packet::decode::PacketMeta {
    fn payload_off_end(&self) -> usize {
        if self.payload_off == shrike_packet::decode::NO_OFFSET {
            self.l4().unwrap_or(0)
        } else {
            self.payload_off as usize + self.payload_len as usize
        }
    }
}

fn csum_match(p: &PacketView<'_>, which: Csum, valid: bool) -> bool {
    let ok = match which {
        Csum::Ipv4 => {
            if p.ip_version != 4 {
                return false;
            }
            Some(!p.meta.has(flags::IPV4_CSUM_BAD))
        }
        Csum::Tcpv4 if p.ip_version == 4 => l4_csum_ok(p, 6),
        Csum::Tcpv6 if p.ip_version == 6 => l4_csum_ok(p, 6),
        Csum::Udpv4 if p.ip_version == 4 => {
            // A zero UDP checksum over IPv4 means "not computed": valid.
            if icmp_u16(p, 6) == Some(0) && p.proto == 17 {
                Some(true)
            } else {
                l4_csum_ok(p, 17)
            }
        }
        Csum::Udpv6 if p.ip_version == 6 => l4_csum_ok(p, 17),
        Csum::Icmpv4 if p.ip_version == 4 => l4_csum_ok(p, 1),
        Csum::Icmpv6 if p.ip_version == 6 => l4_csum_ok(p, 58),
        _ => None,
    };
    ok.is_some_and(|ok| ok == valid)
}

impl Check {
    /// Evaluate against a packet; `vars` are the flow's variables (None: no flow or none set).
    #[inline]
    pub(crate) fn matches(&self, p: &PacketView<'_>, vars: Option<&FlowVars>) -> bool {
        let m = p.meta;
        match self {
            Check::Flow(f) => f.matches(p),
            Check::BitsIsSet { ids, any } => {
                let Some(v) = vars else { return false };
                if *any {
                    ids.iter().any(|&i| v.bit(i))
                } else {
                    ids.iter().all(|&i| v.bit(i))
                }
            }
            Check::BitsIsNotSet { ids, any } => {
                if !p.has_flow {
                    return false;
                }
                let set = |i: u32| vars.is_some_and(|v| v.bit(i));
                if *any {
                    ids.iter().any(|&i| !set(i))
                } else {
                    ids.iter().all(|&i| !set(i))
                }
            }
            Check::IntCmp { id, op, rhs } => {
                let (Some(a), Some(b)) = (vars.and_then(|v| v.int(*id)), rhs.value(vars)) else {
                    return false;
                };
                match op {
                    IntCmp::Eq => a == b,
                    IntCmp::Ne => a != b,
                    IntCmp::Lt => a < b,
                    IntCmp::Le => a <= b,
                    IntCmp::Gt => a > b,
                    IntCmp::Ge => a >= b,
                }
            }
            Check::IntIsSet(id) => vars.is_some_and(|v| v.int(*id).is_some()),
            Check::IntNotSet(id) => p.has_flow && vars.and_then(|v| v.int(*id)).is_none(),
            Check::FlowVar { name, content } => vars
                .and_then(|v| v.str_var(name))
                .is_some_and(|v| memchr::memmem::find(v, content).is_some()),
            Check::Flags {
                modifier,
                flags: f,
                keep,
            } => p.is_tcp && flags_match(p.tcp_flags, *modifier, *f, *keep),
            Check::Fragbits { modifier, bits } => {
                if p.ip_version != 4 {
                    return false;
                }
                let mut b = 0u8;
                if m.has(flags::MF) {
                    b |= 1;
                }
                if m.has(flags::DF) {
                    b |= 2;
                }
                if m.has(flags::RF) {
                    b |= 4;
                }
                fragbits_match(b, *modifier, *bits)
            }
            Check::Fragoffset(u) => match p.ip_version {
                4 => u.matches(u64::from(m.frag_off)),
                6 if m.has(flags::IPV6_FRAG_HDR) => u.matches(u64::from(m.frag_off) * 8),
                _ => false,
            },
            Check::Ttl(u) => p.ip_version != 0 && u.matches(u64::from(m.ttl)),
            Check::Tos(u) => p.ip_version == 4 && u.matches(u64::from(m.tos)),
            Check::Id(u) => p.ip_version == 4 && u.matches(u64::from(m.ip_id)),
            Check::Ipopts(o) => ipopts_match(p, *o),
            Check::IpProto(u) => p.ip_version != 0 && u.matches(u64::from(m.proto)),
            Check::Itype(u) => {
                (p.icmp(false) || p.icmp(true)) && u.matches(u64::from(m.sport >> 8))
            }
            Check::Icode(u) => {
                (p.icmp(false) || p.icmp(true)) && u.matches(u64::from(m.sport & 0xff))
            }
            Check::IcmpId(u) => {
                icmp_has_id(p) && icmp_u16(p, 4).is_some_and(|v| u.matches(u64::from(v)))
            }
            Check::IcmpSeq(u) => {
                icmp_has_id(p) && icmp_u16(p, 6).is_some_and(|v| u.matches(u64::from(v)))
            }
            Check::Seq(s) => p.is_tcp && m.tcp_seq() == *s,
            Check::Ack(a) => p.is_tcp && m.tcp_ack() == *a,
            Check::Window(u) => p.is_tcp && u.matches(u64::from(m.tcp_win)),
            Check::SameIp => match p.ip_version {
                4 => p.src_v4 == p.dst_v4,
                6 => p.src_v6 == p.dst_v6,
                _ => false,
            },
            Check::TcpMss(u) => tcp_mss(p).is_some_and(|v| u.matches(u64::from(v))),
            Check::FlowAge(u) => p.has_flow && u.matches(p.flow_age),
            Check::Icmpv6Mtu(u) => {
                p.icmp(true)
                    && !p.pseudo
                    && m.sport == 2 << 8
                    && icmp_u16(p, 4)
                        .zip(icmp_u16(p, 6))
                        .is_some_and(|(hi, lo)| u.matches(u64::from(hi) << 16 | u64::from(lo)))
            }
            Check::Dsize(u) => u.matches(p.payload.len() as u64),
            Check::Rpc {
                program,
                version,
                procedure,
            } => rpc_match(p, *program, *version, *procedure),
            Check::Event(e) => m.has_event(*e),
            Check::StreamEvent(e) => p.stream_events.contains(*e),
            Check::AppPktEvent(bit) => p.app_events & bit != 0,
            Check::Csum { which, valid } => csum_match(p, *which, *valid),
            Check::StreamSize {
                side,
                cmp,
                prefilter,
            } => {
                p.is_tcp
                    && !(*prefilter && p.pseudo)
                    && p.tcp_sizes
                        .is_some_and(|sz| stream_size_match(*side, cmp, sz))
            }
        }
    }

    /// Suricata's setup of this keyword sets `SIG_FLAG_REQUIRE_PACKET`: a TCP payload rule
    /// using it inspects the packet payload only, never the reassembled stream.
    pub(crate) fn requires_packet(&self) -> bool {
        matches!(
            self,
            Check::Flags { .. }
                | Check::Fragbits { .. }
                | Check::Fragoffset(_)
                | Check::Ttl(_)
                | Check::Tos(_)
                | Check::Id(_)
                | Check::Ipopts(_)
                | Check::IpProto(_)
                | Check::Itype(_)
                | Check::Icode(_)
                | Check::IcmpId(_)
                | Check::IcmpSeq(_)
                | Check::Seq(_)
                | Check::Ack(_)
                | Check::Window(_)
                | Check::SameIp
                | Check::TcpMss(_)
                | Check::FlowAge(_)
                | Check::Icmpv6Mtu(_)
                | Check::Dsize(_)
                | Check::Rpc { .. }
        )
    }

    /// The mask bits this check implies (Suricata's `SignatureCreateMask`).
    pub(crate) fn mask(&self) -> u8 {
        use super::sig::mask;
        use shrike_rules::parse::UintMode;
        match self {
            Check::Flow(_)
            | Check::BitsIsSet { .. }
            | Check::BitsIsNotSet { .. }
            | Check::IntCmp { .. }
            | Check::IntIsSet(_)
            | Check::IntNotSet(_)
            | Check::FlowVar { .. } => mask::FLOW,
            Check::Flags { flags: f, .. } => {
                let mut b = 0;
                if f & (tcp_flags::SYN | tcp_flags::RST | tcp_flags::FIN) != 0 {
                    b |= mask::FLAGS_INITDEINIT;
                }
                if f & (tcp_flags::URG | tcp_flags::ECE | tcp_flags::CWR) != 0 {
                    b |= mask::FLAGS_UNUSUAL;
                }
                b
            }
            Check::Dsize(u) => match u.mode {
                UintMode::Range | UintMode::Gt | UintMode::Ne | UintMode::Gte => mask::PAYLOAD,
                UintMode::Eq if u.a > 0 => mask::PAYLOAD,
                UintMode::Eq => mask::NO_PAYLOAD,
                _ => 0,
            },
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shrike_packet::decode::tcp_flags::*;

    #[test]
    fn tcp_flags_table() {
        use BitsModifier::*;
        let all = 0xff;
        let cases: &[(u8, BitsModifier, u8, u8, bool)] = &[
            (SYN, Exact, SYN, all, true),
            (SYN | ACK, Exact, SYN, all, false),
            (SYN | ACK, Exact, SYN | ACK, all, true),
            (SYN | ACK, Plus, SYN, all, true),
            (SYN, Plus, SYN, all, true),
            (ACK, Plus, SYN, all, false),
            (SYN | ACK, Any, SYN | FIN, all, true),
            (ACK, Any, SYN | FIN, all, false),
            (SYN | ACK, Not, SYN | ACK, all, false),
            (SYN, Not, SYN | ACK, all, true),
            // Ignore mask: `flags:S,CE` ignores CWR and ECE.
            (SYN | ECE | CWR, Exact, SYN, !(ECE | CWR), true),
            (SYN | ECE, Exact, SYN, all, false),
            // `flags:0`
            (0, Exact, 0, all, true),
            (ACK, Exact, 0, all, false),
            (ACK, Not, 0, all, true),
        ];
        for &(p, m, d, keep, want) in cases {
            assert_eq!(flags_match(p, m, d, keep), want, "{p:#x} {m:?} {d:#x}");
        }
    }

    #[test]
    fn stream_size_table() {
        use shrike_rules::parse::UintMode::*;
        use StreamSide::*;
        let cmp = |mode, a| UintMatch { mode, a, b: 0 };
        // (side, mode, value, [client, server] sizes, match)
        let cases: &[(
            StreamSide,
            shrike_rules::parse::UintMode,
            u64,
            [u32; 2],
            bool,
        )] = &[
            (Server, Lt, 1111, [200, 1008], true),
            (Server, Lt, 1111, [200, 1111], false),
            (Server, Lte, 1111, [200, 1111], true),
            (Client, Gt, 8, [10, 0], true),
            (Client, Gt, 8, [8, 100], false),
            (Client, Gte, 8, [8, 0], true),
            (Server, Eq, 1, [5, 1], true),
            (Server, Ne, 1, [5, 1], false),
            (Both, Gt, 5, [6, 7], true),
            (Both, Gt, 5, [6, 5], false),
            (Either, Gt, 5, [6, 5], true),
            (Either, Gt, 5, [1, 5], false),
            // Sizes are 32-bit sequence differences (a wrapped ISN still counts up).
            (Client, Eq, 3, [3, 0], true),
        ];
        for &(side, mode, v, sizes, want) in cases {
            assert_eq!(
                stream_size_match(side, &cmp(mode, v), sizes),
                want,
                "{side:?} {mode:?} {v} {sizes:?}"
            );
        }
    }

    #[test]
    fn fragbits_table() {
        use BitsModifier::*;
        let cases: &[(u8, BitsModifier, u8, bool)] = &[
            (2, Exact, 2, true),
            (3, Exact, 2, false),
            (3, Plus, 2, true),
            // `+` needs another bit besides the named ones (Suricata 7).
            (2, Plus, 2, false),
            (1, Any, 3, true),
            (4, Any, 3, false),
            (3, Not, 3, false),
            (1, Not, 3, true),
        ];
        for &(p, m, d, want) in cases {
            assert_eq!(fragbits_match(p, m, d), want, "{p} {m:?} {d}");
        }
    }
}
