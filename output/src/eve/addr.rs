//! IP address and protocol formatting as Suricata prints them.
//!
//! * IPv4: dotted quad.
//! * IPv6: Suricata 7 prints the full, uncompressed form with four lowercase hex digits per group
//!   (`fe80:0000:0000:0000:0260:97ff:fe07:69ea`, checked against Suricata 7.0.10 on
//!   zeek/communityid_icmp6.pcap). [`Ipv6Style::Compressed`] gives the RFC 5952 form instead.
//! * Protocols: the IANA keyword Suricata keeps for numbers 0..=143 (`TCP`, `UDP`, `ICMP`,
//!   `IPv6-ICMP`, `SCTP`, `GRE`, ...); other numbers print as decimal in EVE and as `PROTO:NNN` in
//!   fast.log.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// How IPv6 addresses are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ipv6Style {
    /// Eight groups of four hex digits, Suricata 7's format.
    #[default]
    Full,
    /// RFC 5952 compressed form (`fe80::1`).
    Compressed,
}

/// Append the dotted-quad form of `a`.
pub fn write_ipv4(out: &mut Vec<u8>, a: Ipv4Addr) {
    let mut b = itoa::Buffer::new();
    for (i, o) in a.octets().iter().enumerate() {
        if i > 0 {
            out.push(b'.');
        }
        out.extend_from_slice(b.format(*o).as_bytes());
    }
}

/// Append `a` in the given style.
pub fn write_ipv6(out: &mut Vec<u8>, a: Ipv6Addr, style: Ipv6Style) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match style {
        Ipv6Style::Full => {
            for (i, g) in a.segments().iter().enumerate() {
                if i > 0 {
                    out.push(b':');
                }
                out.extend_from_slice(&[
                    HEX[(g >> 12) as usize & 15],
                    HEX[(g >> 8) as usize & 15],
                    HEX[(g >> 4) as usize & 15],
                    HEX[*g as usize & 15],
                ]);
            }
        }
        Ipv6Style::Compressed => {
            // Display for Ipv6Addr writes RFC 5952 text; writing into a Vec cannot fail.
            let _ = write!(out, "{a}");
        }
    }
}

/// Append `a` (IPv4 dotted, IPv6 in `style`).
pub fn write_ip(out: &mut Vec<u8>, a: IpAddr, style: Ipv6Style) {
    match a {
        IpAddr::V4(v4) => write_ipv4(out, v4),
        IpAddr::V6(v6) => write_ipv6(out, v6, style),
    }
}

/// The address as a `String` (cold paths and tests).
pub fn ip_string(a: IpAddr, style: Ipv6Style) -> String {
    let mut v = Vec::with_capacity(40);
    write_ip(&mut v, a, style);
    String::from_utf8(v).unwrap_or_default()
}

/// IANA protocol keywords for 0..=143, as Suricata names them.
static PROTO_NAMES: [&str; 144] = [
    "HOPOPT",
    "ICMP",
    "IGMP",
    "GGP",
    "IP-in-IP",
    "ST",
    "TCP",
    "CBT",
    "EGP",
    "IGP", // 0-9
    "BBN-RCC-MON",
    "NVP-II",
    "PUP",
    "ARGUS",
    "EMCON",
    "XNET",
    "CHAOS",
    "UDP",
    "MUX",
    "DCN-MEAS", // 10-19
    "HMP",
    "PRM",
    "XNS-IDP",
    "TRUNK-1",
    "TRUNK-2",
    "LEAF-1",
    "LEAF-2",
    "RDP",
    "IRTP",
    "ISO-TP4", // 20-29
    "NETBLT",
    "MFE-NSP",
    "MERIT-INP",
    "DCCP",
    "3PC",
    "IDPR",
    "XTP",
    "DDP",
    "IDPR-CMTP",
    "TP++", // 30-39
    "IL",
    "IPv6",
    "SDRP",
    "IPv6-Route",
    "IPv6-Frag",
    "IDRP",
    "RSVP",
    "GRE",
    "DSR",
    "BNA", // 40-49
    "ESP",
    "AH",
    "I-NLSP",
    "SwIPe",
    "NARP",
    "MOBILE",
    "TLSP",
    "SKIP",
    "IPv6-ICMP",
    "IPv6-NoNxt", // 50-59
    "IPv6-Opts",
    "Any",
    "CFTP",
    "Any",
    "SAT-EXPAK",
    "KRYPTOLAN",
    "RVD",
    "IPPC",
    "Any",
    "SAT-MON", // 60-69
    "VISA",
    "IPCU",
    "CPNX",
    "CPHB",
    "WSN",
    "PVP",
    "BR-SAT-MON",
    "SUN-ND",
    "WB-MON",
    "WB-EXPAK", // 70-79
    "ISO-IP",
    "VMTP",
    "SECURE-VMTP",
    "VINES",
    "TTP",
    "NSFNET-IGP",
    "DGP",
    "TCF",
    "EIGRP",
    "OSPF", // 80-89
    "Sprite-RPC",
    "LARP",
    "MTP",
    "AX.25",
    "OS",
    "MICP",
    "SCC-SP",
    "ETHERIP",
    "ENCAP",
    "Any", // 90-99
    "GMTP",
    "IFMP",
    "PNNI",
    "PIM",
    "ARIS",
    "SCPS",
    "QNX",
    "A/N",
    "IPComp",
    "SNP", // 100-109
    "Compaq-Peer",
    "IPX-in-IP",
    "VRRP",
    "PGM",
    "Any",
    "L2TP",
    "DDX",
    "IATP",
    "STP",
    "SRP", // 110-119
    "UTI",
    "SMP",
    "SM",
    "PTP",
    "IS-IS",
    "FIRE",
    "CRTP",
    "CRUDP",
    "SSCOPMCE",
    "IPLT", // 120-129
    "SPS",
    "PIPE",
    "SCTP",
    "FC",
    "RSVP-E2E-IGNORE",
    "Mobility",
    "UDPLite",
    "MPLS-in-IP",
    "manet",
    "HIP", // 130-139
    "Shim6",
    "WESP",
    "ROHC",
    "Ethernet", // 140-143
];

/// Suricata's name for IP protocol `proto`, if it has one.
pub fn proto_name(proto: u8) -> Option<&'static str> {
    PROTO_NAMES.get(proto as usize).copied()
}

/// Append the EVE `proto` value text: the name, or the decimal number.
pub fn write_proto(out: &mut Vec<u8>, proto: u8) {
    match proto_name(proto) {
        Some(n) => out.extend_from_slice(n.as_bytes()),
        None => out.extend_from_slice(itoa::Buffer::new().format(proto).as_bytes()),
    }
}

/// Append the fast.log protocol text: the name, or `PROTO:NNN` (zero-padded to three digits).
pub fn write_proto_fast(out: &mut Vec<u8>, proto: u8) {
    match proto_name(proto) {
        Some(n) => out.extend_from_slice(n.as_bytes()),
        None => {
            out.extend_from_slice(b"PROTO:");
            out.extend_from_slice(&[
                b'0' + proto / 100,
                b'0' + (proto / 10) % 10,
                b'0' + proto % 10,
            ]);
        }
    }
}

/// Whether Suricata logs `src_port`/`dest_port` for this protocol (TCP, UDP, SCTP).
pub fn proto_has_ports(proto: u8) -> bool {
    matches!(proto, 6 | 17 | 132)
}

/// IP protocol numbers used by the record builders.
pub mod ipproto {
    /// ICMP.
    pub const ICMP: u8 = 1;
    /// TCP.
    pub const TCP: u8 = 6;
    /// UDP.
    pub const UDP: u8 = 17;
    /// ESP.
    pub const ESP: u8 = 50;
    /// ICMPv6.
    pub const ICMPV6: u8 = 58;
    /// SCTP.
    pub const SCTP: u8 = 132;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_like_suricata7() {
        let cases: &[(&str, &str, &str)] = &[
            ("141.142.228.5", "141.142.228.5", "141.142.228.5"),
            ("0.0.0.0", "0.0.0.0", "0.0.0.0"),
            (
                "fe80::260:97ff:fe07:69ea",
                "fe80:0000:0000:0000:0260:97ff:fe07:69ea",
                "fe80::260:97ff:fe07:69ea",
            ),
            (
                "ff02::1",
                "ff02:0000:0000:0000:0000:0000:0000:0001",
                "ff02::1",
            ),
            ("::", "0000:0000:0000:0000:0000:0000:0000:0000", "::"),
            (
                "3ffe:501:4819::42",
                "3ffe:0501:4819:0000:0000:0000:0000:0042",
                "3ffe:501:4819::42",
            ),
        ];
        for &(input, full, comp) in cases {
            let a: IpAddr = input.parse().unwrap();
            assert_eq!(ip_string(a, Ipv6Style::Full), full);
            assert_eq!(ip_string(a, Ipv6Style::Compressed), comp);
        }
    }

    #[test]
    fn proto_names() {
        let cases: &[(u8, &str, &str)] = &[
            (1, "ICMP", "ICMP"),
            (6, "TCP", "TCP"),
            (17, "UDP", "UDP"),
            (47, "GRE", "GRE"),
            (58, "IPv6-ICMP", "IPv6-ICMP"),
            (132, "SCTP", "SCTP"),
            (143, "Ethernet", "Ethernet"),
            (144, "144", "PROTO:144"),
            (253, "253", "PROTO:253"),
        ];
        for &(p, eve, fast) in cases {
            let mut v = Vec::new();
            write_proto(&mut v, p);
            assert_eq!(std::str::from_utf8(&v).unwrap(), eve);
            v.clear();
            write_proto_fast(&mut v, p);
            assert_eq!(std::str::from_utf8(&v).unwrap(), fast);
        }
        assert!(proto_has_ports(6) && proto_has_ports(17) && proto_has_ports(132));
        assert!(!proto_has_ports(1) && !proto_has_ports(58) && !proto_has_ports(47));
    }
}
