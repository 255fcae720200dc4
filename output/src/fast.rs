//! fast.log lines in Suricata 7's format:
//!
//! `01/31/2024-12:34:56.123456  [**] [1:2000001:3] msg [**] [Classification: X] [Priority: 2] {TCP} 1.2.3.4:1234 -> 5.6.7.8:80`
//!
//! Two spaces after the timestamp; in IPS mode an action tag (`[Drop] `, `[wDrop] `) comes before
//! the first `[**]`. The message is written as is (no escaping). A rule without classtype prints
//! `(null)` as Suricata 7.0.10 does. Protocols without a name print `PROTO:NNN`. For ICMP the
//! "ports" are the ICMP type and code, which the caller passes in `src_port`/`dest_port`.

use std::io::Write;
use std::net::IpAddr;

use crate::eve::addr::{write_ip, write_proto_fast, Ipv6Style};
use crate::eve::time::write_fast;

/// One fast.log alert.
#[derive(Debug, Clone, Copy)]
pub struct FastAlert<'a> {
    /// Packet time, nanoseconds since the epoch.
    pub timestamp_ns: u64,
    /// IPS action tag including its trailing space (`"[Drop] "`), or `""`.
    pub action: &'a str,
    /// Generator id.
    pub gid: u32,
    /// Signature id.
    pub sid: u32,
    /// Revision.
    pub rev: u32,
    /// Rule message.
    pub msg: &'a [u8],
    /// Classification text; `None` prints `(null)`.
    pub class_msg: Option<&'a str>,
    /// Priority.
    pub priority: u32,
    /// IP protocol number.
    pub proto: u8,
    /// Source address.
    pub src_ip: IpAddr,
    /// Source port (ICMP: type).
    pub src_port: u16,
    /// Destination address.
    pub dest_ip: IpAddr,
    /// Destination port (ICMP: code).
    pub dest_port: u16,
    /// IPv6 text form.
    pub ipv6: Ipv6Style,
}

/// Append one fast.log line (with `\n`) to `out`.
pub fn write_fast_line(out: &mut Vec<u8>, a: &FastAlert<'_>) {
    write_fast(out, a.timestamp_ns);
    out.extend_from_slice(b"  ");
    out.extend_from_slice(a.action.as_bytes());
    let _ = write!(out, "[**] [{}:{}:{}] ", a.gid, a.sid, a.rev);
    out.extend_from_slice(a.msg);
    out.extend_from_slice(b" [**] [Classification: ");
    out.extend_from_slice(a.class_msg.unwrap_or("(null)").as_bytes());
    let _ = write!(out, "] [Priority: {}] {{", a.priority);
    write_proto_fast(out, a.proto);
    out.extend_from_slice(b"} ");
    write_ip(out, a.src_ip, a.ipv6);
    let _ = write!(out, ":{} -> ", a.src_port);
    write_ip(out, a.dest_ip, a.ipv6);
    let _ = writeln!(out, ":{}", a.dest_port);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alert<'a>(msg: &'a [u8], class: Option<&'a str>) -> FastAlert<'a> {
        FastAlert {
            timestamp_ns: 1_362_692_526_869_344_000,
            action: "",
            gid: 1,
            sid: 2000001,
            rev: 3,
            msg,
            class_msg: class,
            priority: 1,
            proto: 6,
            src_ip: "141.142.228.5".parse().unwrap(),
            src_port: 59856,
            dest_ip: "192.150.187.43".parse().unwrap(),
            dest_port: 80,
            ipv6: Ipv6Style::Full,
        }
    }

    /// Lines as Suricata 7.0.10 wrote them for zeek/http-vlan-0.pcap and
    /// zeek/communityid_icmp6.pcap with `alert ip any any -> any any`.
    #[test]
    fn matches_suricata_lines() {
        let mut out = Vec::new();
        write_fast_line(
            &mut out,
            &alert(
                br#"ALL "quoted" back\slash"#,
                Some("A Network Trojan was detected"),
            ),
        );
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "03/07/2013-21:42:06.869344  [**] [1:2000001:3] ALL \"quoted\" back\\slash [**] \
             [Classification: A Network Trojan was detected] [Priority: 1] {TCP} \
             141.142.228.5:59856 -> 192.150.187.43:80\n"
        );

        out.clear();
        let mut a = alert("no class é".as_bytes(), None);
        a.sid = 5;
        a.rev = 1;
        a.priority = 3;
        write_fast_line(&mut out, &a);
        assert!(std::str::from_utf8(&out)
            .unwrap()
            .contains("[1:5:1] no class é [**] [Classification: (null)] [Priority: 3] {TCP}"));

        out.clear();
        let mut a = alert(b"x", Some("c"));
        a.timestamp_ns = 921_159_907_494_265_000;
        a.proto = 58;
        a.src_ip = "fe80::200:86ff:fe05:80da".parse().unwrap();
        a.src_port = 135;
        a.dest_ip = "fe80::260:97ff:fe07:69ea".parse().unwrap();
        a.dest_port = 0;
        write_fast_line(&mut out, &a);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "03/11/1999-13:45:07.494265  [**] [1:2000001:3] x [**] [Classification: c] \
             [Priority: 1] {IPv6-ICMP} fe80:0000:0000:0000:0200:86ff:fe05:80da:135 -> \
             fe80:0000:0000:0000:0260:97ff:fe07:69ea:0\n"
        );

        out.clear();
        let mut a = alert(b"x", Some("c"));
        a.proto = 200;
        a.action = "[Drop] ";
        write_fast_line(&mut out, &a);
        assert!(std::str::from_utf8(&out).unwrap().contains(
            "  [Drop] [**] [1:2000001:3] x [**] [Classification: c] [Priority: 1] {PROTO:200}"
        ));
    }
}
