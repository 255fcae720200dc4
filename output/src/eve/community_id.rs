//! Community ID v1 (<https://github.com/corelight/community-id-spec>), as Suricata 7 writes it
//! in `community_id`: base64 of SHA1 over seed (2 bytes, big endian), the two addresses and
//! ports ordered so both directions give the same id, the IP protocol and a zero pad byte.
//!
//! Suricata's ICMP rule differs from the spec's: the "ports" are the type of the flow's first
//! packet and its counterpart type (echo request 8 <-> echo reply 0, ...), or 0 for a type
//! without one; the code never counts (`CalculateCommunityFlowIdv4` in output-json.c).

use sha1::{Digest, Sha1};
use std::net::IpAddr;

use super::addr::ipproto;

/// `1:` and 28 base64 characters.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CommunityId([u8; 30]);

impl std::fmt::Debug for CommunityId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

impl CommunityId {
    /// The id of a flow whose first packet went `src:sp -> dst:dp` (for ICMP pass the
    /// result of [`icmp_ports`]; for protocols without ports, zeros). `None` when the
    /// addresses are of different families.
    pub fn new(seed: u16, proto: u8, src: IpAddr, dst: IpAddr, sp: u16, dp: u16) -> Option<Self> {
        let mut h = Sha1::new();
        h.update(seed.to_be_bytes());
        let (a, b): (&[u8], &[u8]);
        let (s4, d4, s6, d6);
        match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                s4 = s.octets();
                d4 = d.octets();
                (a, b) = (&s4, &d4);
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                s6 = s.octets();
                d6 = d.octets();
                (a, b) = (&s6, &d6);
            }
            _ => return None,
        }
        // Suricata compares the ports as stored, in network byte order, read as host-order
        // integers (x86: byte-swapped); it only matters when both addresses are equal.
        let (sp_n, dp_n) = (sp.swap_bytes(), dp.swap_bytes());
        let keep = a < b || (a == b && sp_n < dp_n);
        let (a, b, sp, dp) = if keep { (a, b, sp, dp) } else { (b, a, dp, sp) };
        h.update(a);
        h.update(b);
        h.update([proto, 0]);
        h.update(sp.to_be_bytes());
        h.update(dp.to_be_bytes());
        let digest: [u8; 20] = h.finalize().into();
        let mut out = [0u8; 30];
        out[0] = b'1';
        out[1] = b':';
        let mut o = 2;
        for chunk in digest.chunks(3) {
            let n = chunk.len();
            let v = (u32::from(chunk[0]) << 16)
                | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
                | u32::from(*chunk.get(2).unwrap_or(&0));
            for i in 0..4 {
                out[o + i] = if i <= n {
                    B64[((v >> (18 - 6 * i)) & 63) as usize]
                } else {
                    b'='
                };
            }
            o += 4;
        }
        Some(CommunityId(out))
    }

    /// The id as written: `1:` and base64.
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever written into the array.
        std::str::from_utf8(&self.0).unwrap_or("")
    }
}

/// The "ports" of an ICMP or ICMPv6 flow in Suricata's Community ID: the first packet's type
/// and its counterpart type (0 when the type has none).
pub fn icmp_ports(proto: u8, first_type: u8) -> (u16, u16) {
    let counterpart = match proto {
        ipproto::ICMP => icmp4_counterpart(first_type),
        ipproto::ICMPV6 => icmp6_counterpart(first_type),
        _ => None,
    };
    (first_type.into(), counterpart.unwrap_or(0).into())
}

/// Suricata's `ICMPv4GetCounterpart`.
fn icmp4_counterpart(t: u8) -> Option<u8> {
    const PAIRS: [(u8, u8); 5] = [(8, 0), (13, 14), (15, 16), (10, 9), (17, 18)];
    pair_of(&PAIRS, t)
}

/// Suricata's `ICMPv6GetCounterpart`.
fn icmp6_counterpart(t: u8) -> Option<u8> {
    const PAIRS: [(u8, u8); 10] = [
        (128, 129),
        (135, 136),
        (133, 134),
        (130, 131),
        (139, 140),
        (144, 145),
        (146, 147),
        (148, 149),
        (151, 152),
        (157, 158),
    ];
    pair_of(&PAIRS, t)
}

fn pair_of(pairs: &[(u8, u8)], t: u8) -> Option<u8> {
    pairs.iter().find_map(|&(a, b)| {
        if a == t {
            Some(b)
        } else if b == t {
            Some(a)
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(seed: u16, proto: u8, src: &str, dst: &str, sp: u16, dp: u16) -> String {
        CommunityId::new(
            seed,
            proto,
            src.parse().unwrap(),
            dst.parse().unwrap(),
            sp,
            dp,
        )
        .unwrap()
        .as_str()
        .to_string()
    }

    /// Values Suricata 7.0.10 wrote for zeek's communityid_*.pcap (eve-log
    /// `community-id: yes`; tests/data/community_id/README.md says how).
    #[test]
    fn matches_suricata_on_the_zeek_captures() {
        let tcp = id(0, 6, "128.232.110.120", "66.35.250.204", 34855, 80);
        assert_eq!(tcp, "1:LQU9qZlK+B5F3KDmev6m5PMibrg=");
        // Both directions give the same id.
        assert_eq!(id(0, 6, "66.35.250.204", "128.232.110.120", 80, 34855), tcp);
        assert_eq!(
            id(0, 17, "192.168.1.52", "8.8.8.8", 54585, 53),
            "1:d/FP5EW3wiY1vCndhwleRRKHowQ="
        );
        assert_eq!(
            id(0, 132, "192.168.170.8", "192.168.170.56", 7, 7),
            "1:MP2EtRCAUIZvTw6MxJHLV7N7JDs="
        );
        // ICMP echo: ports are (8, 0).
        let (sp, dp) = icmp_ports(1, 8);
        assert_eq!((sp, dp), (8, 0));
        assert_eq!(
            id(0, 1, "192.168.0.89", "192.168.0.1", sp, dp),
            "1:X0snYXpgwiv9TZtqg64sgzUn6Dk="
        );
        // ICMPv6 destination unreachable (type 1, code 4): no counterpart, the code does
        // not count.
        let (sp, dp) = icmp_ports(58, 1);
        assert_eq!((sp, dp), (1, 0));
        assert_eq!(
            id(
                0,
                58,
                "3ffe:507:0:1:200:86ff:fe05:80da",
                "3ffe:501:4819::42",
                sp,
                dp
            ),
            "1:o0yvnfaDuj9+3FFmZs8tk7zR3cY="
        );
        assert_eq!(icmp_ports(58, 129), (129, 128));
        assert_eq!(
            id(
                0,
                6,
                "2001:470:e5bf:dead:4957:2174:e82c:4887",
                "2607:f8b0:400c:c03::1a",
                63943,
                25
            ),
            "1:/qFaeAR+gFe1KYjMzVDsMv+wgU4="
        );
    }

    #[test]
    fn seed_changes_the_id_and_families_must_match() {
        assert_ne!(
            id(1, 6, "10.0.0.1", "10.0.0.2", 1, 2),
            id(0, 6, "10.0.0.1", "10.0.0.2", 1, 2)
        );
        assert!(CommunityId::new(
            0,
            6,
            "10.0.0.1".parse().unwrap(),
            "::1".parse().unwrap(),
            1,
            2
        )
        .is_none());
    }
}
