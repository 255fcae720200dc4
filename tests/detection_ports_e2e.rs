//! `detection-ports` end to end: Suricata's `app-layer.protocols.<name>[.tcp|.udp]
//! .detection-ports` (`dp`, `sp`) move a protocol's probing parser to other ports. A
//! generated DNS-over-TCP query and answer on port 1053 is DNS only with
//! `dns.tcp.detection-ports.dp: 1053` (as Suricata 7.0.10 on the same capture: two `dns`
//! records, `app_proto: dns`), in a suricata.yaml, with `--set`, and in shrike's own
//! configuration; the default ports stay DNS's otherwise (SHRIKE_DP_PCAP_OUT=<file> keeps the
//! capture).

mod common;
mod hostile_util;

use common::{assert_valid_eve, eve_records, shrike, stderr, TempDir};
use hostile_util::{tcp4, Pcap, ACK, PSH, SYN};

const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];

fn capture() -> Pcap {
    let q: &[u8] = &[
        0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 2, b'b', b'c', 0, 0, 1, 0, 1,
    ];
    let mut a = q.to_vec();
    a[2] = 0x81;
    a[3] = 0x80;
    a[7] = 1;
    a.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 9, 8, 7]);
    let framed = |m: &[u8]| {
        let mut v = (m.len() as u16).to_be_bytes().to_vec();
        v.extend_from_slice(m);
        v
    };
    let (q, a) = (framed(q), framed(&a));
    let (sp, dp) = (40000u16, 1053u16);
    let (cs, ss) = (100u32, 900u32);
    let (ql, al) = (q.len() as u32, a.len() as u32);
    let mut cap = Pcap::new(1);
    let mut t = 1_700_000_000_000_000u64;
    let mut push = |f: Vec<u8>| {
        t += 1000;
        cap.push(t, &f);
    };
    push(tcp4(C, S, sp, dp, cs, 0, SYN, b""));
    push(tcp4(S, C, dp, sp, ss, cs + 1, SYN | ACK, b""));
    push(tcp4(C, S, sp, dp, cs + 1, ss + 1, ACK, b""));
    push(tcp4(C, S, sp, dp, cs + 1, ss + 1, PSH | ACK, &q));
    push(tcp4(S, C, dp, sp, ss + 1, cs + 1 + ql, PSH | ACK, &a));
    push(tcp4(C, S, sp, dp, cs + 1 + ql, ss + 1 + al, ACK, b""));
    cap
}

fn run(cfg: Option<&str>, sets: &[&str], tag: &str) -> Vec<serde_json::Value> {
    let dir = TempDir::new(tag);
    let pcap = dir.path().join("dns1053.pcap");
    capture().write(&pcap);
    if let Ok(keep) = std::env::var("SHRIKE_DP_PCAP_OUT") {
        let _ = std::fs::copy(&pcap, keep);
    }
    let mut cmd = shrike();
    if let Some(c) = cfg {
        let p = dir.path().join("config.yaml");
        std::fs::write(&p, c).unwrap();
        cmd.arg("-c").arg(p);
    }
    for s in sets {
        cmd.args(["--set", s]);
    }
    let out = cmd
        .arg("-r")
        .arg(&pcap)
        .arg("-l")
        .arg(dir.path())
        .args(["-k", "none"])
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "shrike failed: {}", stderr(&out));
    let recs = eve_records(dir.path());
    assert_valid_eve(&recs);
    recs
}

fn dns_and_proto(recs: &[serde_json::Value]) -> (usize, Option<String>) {
    let n = recs.iter().filter(|r| r["event_type"] == "dns").count();
    let p = recs
        .iter()
        .find(|r| r["event_type"] == "flow")
        .and_then(|f| f["app_proto"].as_str().map(str::to_string));
    (n, p)
}

const SURICATA_YAML: &str = "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      \
    filename: eve.json\n      types:\n        - dns\n        - flow\n";

#[test]
fn detection_ports_move_the_dns_probe() {
    // Default: port 1053 is not DNS's.
    let (n, p) = dns_and_proto(&run(Some(SURICATA_YAML), &[], "dp-default"));
    assert_eq!((n, p.as_deref()), (0, Some("failed")));
    // suricata.yaml, per transport.
    let yaml = format!(
        "{SURICATA_YAML}app-layer:\n  protocols:\n    dns:\n      tcp:\n        enabled: yes\n        \
         detection-ports:\n          dp: 1053\n"
    );
    let (n, p) = dns_and_proto(&run(Some(&yaml), &[], "dp-yaml"));
    assert_eq!((n, p.as_deref()), (2, Some("dns")));
    // `--set` on a suricata.yaml, as suricata-verify's tests do.
    let (n, p) = dns_and_proto(&run(
        Some(SURICATA_YAML),
        &["app-layer.protocols.dns.tcp.detection-ports.dp=1053"],
        "dp-set",
    ));
    assert_eq!((n, p.as_deref()), (2, Some("dns")));
    // The UDP setting does not move the TCP probe.
    let yaml = format!(
        "{SURICATA_YAML}app-layer:\n  protocols:\n    dns:\n      udp:\n        \
         detection-ports:\n          dp: 1053\n"
    );
    let (n, _) = dns_and_proto(&run(Some(&yaml), &[], "dp-udp-only"));
    assert_eq!(n, 0);
    // shrike's own configuration, a port range.
    let native =
        "detect:\n  app-layer:\n    detection-ports:\n      dns.tcp:\n        dp: \"1000:1100\"\n";
    let (n, p) = dns_and_proto(&run(Some(native), &[], "dp-native"));
    assert_eq!((n, p.as_deref()), (2, Some("dns")));
}
