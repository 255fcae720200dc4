//! DNS record types, response codes and the names Suricata 7 gives them in EVE.

/// A.
pub const TYPE_A: u16 = 1;
/// NS.
pub const TYPE_NS: u16 = 2;
/// CNAME.
pub const TYPE_CNAME: u16 = 5;
/// SOA.
pub const TYPE_SOA: u16 = 6;
/// NULL.
pub const TYPE_NULL: u16 = 10;
/// PTR.
pub const TYPE_PTR: u16 = 12;
/// MX.
pub const TYPE_MX: u16 = 15;
/// TXT.
pub const TYPE_TXT: u16 = 16;
/// AAAA.
pub const TYPE_AAAA: u16 = 28;
/// SRV.
pub const TYPE_SRV: u16 = 33;
/// OPT (EDNS).
pub const TYPE_OPT: u16 = 41;
/// SSHFP.
pub const TYPE_SSHFP: u16 = 44;
/// SVCB.
pub const TYPE_SVCB: u16 = 64;
/// HTTPS.
pub const TYPE_HTTPS: u16 = 65;

/// (type, EVE name) for every type Suricata 7 names; others are logged as their number.
/// The odd spellings (`NSAPPT`, `CDSNKEY`, `ND`) are Suricata's.
const RRTYPE_NAMES: &[(u16, &str)] = &[
    (1, "A"),
    (2, "NS"),
    (3, "ND"),
    (4, "MF"),
    (5, "CNAME"),
    (6, "SOA"),
    (7, "MB"),
    (8, "MG"),
    (9, "MR"),
    (10, "NULL"),
    (11, "WKS"),
    (12, "PTR"),
    (13, "HINFO"),
    (14, "MINFO"),
    (15, "MX"),
    (16, "TXT"),
    (17, "RP"),
    (18, "AFSDB"),
    (19, "X25"),
    (20, "ISDN"),
    (21, "RT"),
    (22, "NSAP"),
    (23, "NSAPPT"),
    (24, "SIG"),
    (25, "KEY"),
    (26, "PX"),
    (27, "GPOS"),
    (28, "AAAA"),
    (29, "LOC"),
    (30, "NXT"),
    (33, "SRV"),
    (34, "ATMA"),
    (35, "NAPTR"),
    (36, "KX"),
    (37, "CERT"),
    (38, "A6"),
    (39, "DNAME"),
    (41, "OPT"),
    (42, "APL"),
    (43, "DS"),
    (44, "SSHFP"),
    (45, "IPSECKEY"),
    (46, "RRSIG"),
    (47, "NSEC"),
    (48, "DNSKEY"),
    (49, "DHCID"),
    (50, "NSEC3"),
    (51, "NSEC3PARAM"),
    (52, "TLSA"),
    (55, "HIP"),
    (59, "CDS"),
    (60, "CDSNKEY"),
    (65, "HTTPS"),
    (99, "SPF"),
    (249, "TKEY"),
    (250, "TSIG"),
    (254, "MAILA"),
    (255, "ANY"),
    (256, "URI"),
];

/// Suricata's name for a record type, or `None` for types it logs as a number.
pub fn rrtype_name(t: u16) -> Option<&'static str> {
    RRTYPE_NAMES.iter().find(|(v, _)| *v == t).map(|(_, n)| *n)
}

/// The type for a name accepted in the `types` EVE option (case-insensitive; Suricata's
/// `MD` is accepted for 3).
pub fn rrtype_from_name(name: &str) -> Option<u16> {
    if name.eq_ignore_ascii_case("md") {
        return Some(3);
    }
    RRTYPE_NAMES
        .iter()
        .find(|(_, n)| n.eq_ignore_ascii_case(name))
        .map(|(v, _)| *v)
}

/// Suricata's name for the 4-bit rcode in `flags`, or `None` when it is logged as a number.
pub fn rcode_name(flags: u16) -> Option<&'static str> {
    Some(match flags & 0xf {
        0 => "NOERROR",
        1 => "FORMERR",
        2 => "SERVFAIL",
        3 => "NXDOMAIN",
        4 => "NOTIMP",
        5 => "REFUSED",
        6 => "YXDOMAIN",
        7 => "YXRRSET",
        8 => "NXRRSET",
        9 => "NOTAUTH",
        10 => "NOTZONE",
        _ => return None,
    })
}

/// Write `rrtype_name(t)` or the decimal number into `out`.
pub fn write_rrtype(out: &mut String, t: u16) {
    match rrtype_name(t) {
        Some(n) => out.push_str(n),
        None => {
            use std::fmt::Write;
            let _ = write!(out, "{t}");
        }
    }
}
