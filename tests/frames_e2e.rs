//! App-layer frames end to end: `frame:` rules and EVE `frame` records against Suricata
//! 7.0.10's output for the same captures and rules (counts taken from
//! `suricata -c /etc/suricata/suricata.yaml -k none --runmode single -r PCAP -S RULES
//! --set outputs.1.eve-log.types.1.frame.enabled=yes`; `scripts/diff/frames-diff.py`
//! compares the records one by one).

mod common;

use std::collections::BTreeMap;

use common::{assert_valid_eve, eve_records, shrike, stderr, TempDir};

/// EVE frame records on, as in the reference runs above.
const FRAME_ON: bool = true;

/// Shrike with a suricata.yaml logging alerts and (`frames`) frame records, MQTT on.
fn run(pcap: &std::path::Path, rules: &str, frames: bool, tag: &str) -> Vec<serde_json::Value> {
    let dir = TempDir::new(tag);
    let rf = dir.path().join("test.rules");
    std::fs::write(&rf, rules).unwrap();
    let cfg = dir.path().join("suricata.yaml");
    std::fs::write(
        &cfg,
        format!(
            "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      filetype: regular\n      filename: eve.json\n      types:\n        - alert\n        - frame:\n            enabled: {}\napp-layer:\n  protocols:\n    mqtt:\n      enabled: yes\n",
            if frames { "yes" } else { "no" }
        ),
    )
    .unwrap();
    let out = shrike()
        .arg("-c")
        .arg(&cfg)
        .arg("-r")
        .arg(pcap)
        .arg("-S")
        .arg(&rf)
        .arg("-l")
        .arg(dir.path())
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "shrike failed: {}", stderr(&out));
    let recs = eve_records(dir.path());
    assert_valid_eve(&recs);
    recs
}

/// Alerts per sid and frame records per type.
fn counts(recs: &[serde_json::Value]) -> (BTreeMap<u64, usize>, BTreeMap<String, usize>) {
    let mut alerts = BTreeMap::new();
    let mut frames = BTreeMap::new();
    for r in recs {
        match r["event_type"].as_str() {
            Some("alert") => {
                *alerts
                    .entry(r["alert"]["signature_id"].as_u64().unwrap())
                    .or_default() += 1;
                assert!(
                    r["frame"].is_object(),
                    "a frame rule's alert has its frame: {r}"
                );
            }
            Some("frame") => {
                *frames
                    .entry(r["frame"]["type"].as_str().unwrap().to_string())
                    .or_default() += 1;
            }
            _ => {}
        }
    }
    (alerts, frames)
}

fn map<K: Ord + Clone>(v: &[(K, usize)]) -> BTreeMap<K, usize> {
    v.iter().cloned().collect()
}

fn strs(v: &[(&str, usize)]) -> BTreeMap<String, usize> {
    v.iter().map(|(k, n)| (k.to_string(), *n)).collect()
}

#[test]
fn mqtt_frames_as_suricata_verify() {
    // suricata-verify mqtt-frames: its rules on the mqtt5-pub-userpass capture.
    let Some(pcap) = common::shared_file("suricata-verify/tests/mqtt5-pub-userpass/input.pcap")
    else {
        return;
    };
    let rules =
        "alert mqtt any any -> any any (frame:pdu; content:\"|10 2f 00|\"; startswith; sid:1;)\n\
        alert mqtt any any -> any any (frame:pdu; content:\"|61 73 73|\"; endswith; sid:2;)\n\
        alert mqtt any any -> any any (flow:to_server; frame:header; content:\"|10|\"; sid:3;)\n\
        alert mqtt any any -> any any (frame:header; content:\"|20|\"; sid:4;)\n\
        alert mqtt any any -> any any (frame:pdu; content:\"|17 0C E2|\"; sid:5;)\n\
        alert mqtt any any -> any any (frame:data; content:\"|00 00 03 22|\"; startswith; sid:7;)\n\
        alert mqtt any any -> any any (frame:data; content:\"|00 06|\"; sid:8;)\n";
    let recs = run(&pcap, rules, false, "frames-mqtt");
    let (alerts, frames) = counts(&recs);
    assert_eq!(
        alerts,
        map(&[(1, 1), (2, 1), (3, 1), (4, 1), (7, 1), (8, 1)])
    );
    assert!(frames.is_empty(), "frame records are off by default");
    let a1 = recs
        .iter()
        .find(|r| r["alert"]["signature_id"] == 1)
        .unwrap();
    assert_eq!(a1["frame"]["type"], "pdu");
    assert_eq!(a1["frame"]["length"], 49);
    assert_eq!(a1["frame"]["stream_offset"], 0);
    assert_eq!(a1["frame"]["complete"], true);
    let a4 = recs
        .iter()
        .find(|r| r["alert"]["signature_id"] == 4)
        .unwrap();
    assert_eq!(a4["frame"]["direction"], "toclient");
    assert_eq!(a4["frame"]["length"], 2);
}

#[test]
fn telnet_frames_as_suricata() {
    let Some(pcap) = common::shared_file("corpus/pcaps/ndpi/telnet.pcap") else {
        return;
    };
    let rules = "alert telnet any any -> any any (frame:telnet.pdu; content:\"|ff|\"; startswith; sid:1;)\n\
        alert telnet any any -> any any (frame:telnet.data; content:\":\"; sid:2;)\n\
        alert telnet any any -> any any (frame:telnet.ctl; content:\"|ff fb|\"; startswith; sid:3;)\n";
    let (alerts, frames) = counts(&run(&pcap, rules, FRAME_ON, "frames-telnet"));
    assert_eq!(alerts, map(&[(1, 68), (2, 13), (3, 12)]));
    assert_eq!(
        frames,
        strs(&[("ctl", 68), ("data", 32), ("pdu", 100), ("stream", 2)])
    );
}

#[test]
fn sip_frames_as_suricata() {
    let Some(pcap) = common::shared_file("corpus/pcaps/ndpi/sip.pcap") else {
        return;
    };
    let rules = "alert sip any any -> any any (frame:sip.pdu; content:\"SIP/2.0\"; sid:1;)\n\
        alert sip any any -> any any (frame:sip.request.line; content:\"SIP/2.0|0d 0a|\"; endswith; sid:2;)\n\
        alert sip any any -> any any (frame:sip.response.headers; content:\"Via:\"; startswith; sid:3;)\n\
        alert sip any any -> any any (frame:sip.request.body; content:\"v=0\"; startswith; sid:4;)\n\
        alert sip any any -> any any (frame:sip.request.headers; content:\"|0d 0a|\"; endswith; sid:5;)\n";
    let (alerts, frames) = counts(&run(&pcap, rules, FRAME_ON, "frames-sip"));
    assert_eq!(alerts, map(&[(1, 81), (2, 47), (3, 3), (4, 11), (5, 47)]));
    assert_eq!(
        frames,
        strs(&[
            ("pdu", 102),
            ("request.body", 11),
            ("request.headers", 47),
            ("request.line", 47),
            ("response.body", 1),
            ("response.headers", 34),
            ("response.line", 34),
        ])
    );
}

#[test]
fn tls_frame_alerts_as_suricata() {
    let Some(pcap) = common::shared_file("corpus/pcaps/ndpi/dns2tcp_tunnel.pcap") else {
        return;
    };
    // Frame records differ (Suricata's logger skips frames once its stream buffer slid:
    // docs/compat.md); the alerts, ids and lengths do not.
    let rules =
        "alert tls any any -> any any (frame:tls.hdr; content:\"|16 03|\"; startswith; sid:1;)\n\
        alert tls any any -> any any (frame:tls.pdu; content:\"|17 03 03|\"; startswith; sid:2;)\n\
        alert tls any any -> any any (frame:tls.data; content:\"|01 00|\"; startswith; sid:3;)\n";
    let recs = run(&pcap, rules, FRAME_ON, "frames-tls");
    let (alerts, _) = counts(&recs);
    assert_eq!(alerts, map(&[(1, 2), (2, 25), (3, 1)]));
    // Suricata 7.0.10 makes the data frame of an application record again where a later
    // call continues it: the 2915-byte record's pdu is frame 9, the next pdu frame 13.
    let ids: Vec<i64> = recs
        .iter()
        .filter(|r| r["alert"]["signature_id"] == 2 && r["frame"]["direction"] == "toclient")
        .map(|r| r["frame"]["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids.get(..2), Some(&[9, 13][..]), "{ids:?}");
}

#[test]
fn frame_rules_rejected_as_suricata() {
    let Some(pcap) = common::shared_file("corpus/pcaps/ndpi/sip.pcap") else {
        return;
    };
    // Suricata's DetectFrameTestBadRules: each is refused; the good one loads.
    let rules = "alert tcp-pkt any any -> any any (frame:tls.pdu; content:\"a\"; sid:1;)\n\
        alert smb any any -> any any (frame:tls.pdu; content:\"a\"; sid:3;)\n\
        alert tcp any any -> any any (frame:tls; content:\"a\"; sid:4;)\n\
        alert tls any any -> any any (content:\"abc\"; frame:tls.pdu; content:\"a\"; sid:5;)\n\
        alert tls any any -> any any (frame:smb1.pdu; content:\"a\"; sid:7;)\n\
        alert sip any any -> any any (frame:pdu; content:\"SIP\"; sid:8;)\n";
    let dir = TempDir::new("frames-bad");
    let rf = dir.path().join("test.rules");
    std::fs::write(&rf, rules).unwrap();
    let out = shrike()
        .arg("-r")
        .arg(&pcap)
        .arg("-S")
        .arg(&rf)
        .arg("-l")
        .arg(dir.path())
        .output()
        .expect("run shrike");
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("6 rule(s): 1 loaded, 5 failed to load"),
        "{err}"
    );
    let recs = eve_records(dir.path());
    let (alerts, _) = counts(&recs);
    assert_eq!(alerts.keys().copied().collect::<Vec<_>>(), vec![8]);
}

#[test]
fn http_and_smb_frames_as_suricata_verify() {
    // suricata-verify http-gap-simple-frames: its rules and checks (a response body with a
    // gap: the response frame still matches around it).
    if let Some(pcap) = common::shared_file("suricata-verify/tests/http-gap-simple/input.pcap") {
        let rules = "alert http any any -> any any (frame:http1.response; content:\"|0d 0a|AAA\"; sid:1;)\n\
            alert http any any -> any any (frame:http1.response; content:\"AAA\"; endswith; sid:2;)\n\
            alert http any any -> any any (frame:http1.stream; content:\"AAA\"; sid:3;)\n\
            alert http any any -> any any (frame:http1.response; content:\"|0d 0a|AAA\"; endswith; sid:4;)\n";
        let recs = run(&pcap, rules, FRAME_ON, "frames-http");
        let (alerts, _) = counts(&recs);
        assert_eq!(alerts, map(&[(1, 1), (2, 1), (3, 1)]));
        let req = recs
            .iter()
            .filter(|r| r["event_type"] == "frame" && r["frame"]["type"] == "request")
            .find(|r| r["frame"]["id"] == 2)
            .expect("the first request frame");
        assert_eq!(req["app_proto"], "http");
        assert_eq!(req["frame"]["stream_offset"], 0);
        assert_eq!(req["frame"]["length"], 40);
        assert_eq!(req["frame"]["direction"], "toserver");
        assert_eq!(req["frame"]["tx_id"], 0);
    }
    // suricata-verify smb-eicar-file-frames: the SMB1 write's data frame.
    if let Some(pcap) = common::shared_file("suricata-verify/tests/smb-eicar-file/input.pcap") {
        let recs = run(&pcap, "", FRAME_ON, "frames-smb");
        let data: Vec<_> = recs
            .iter()
            .filter(|r| r["event_type"] == "frame" && r["frame"]["type"] == "smb1.data")
            .filter(|r| r["frame"]["stream_offset"] == 853)
            .collect();
        assert_eq!(data.len(), 1, "{data:?}");
        assert_eq!(data[0]["frame"]["direction"], "toserver");
        assert_eq!(data[0]["frame"]["length"], 100);
        assert_eq!(
            data[0]["frame"]["payload"],
            "Dv8AAAAAQAAAAAAAAAAAAAAAAAAARABAAAAAAABFAABYNU8hUCVAQVBbNFxQWlg1NChQXik3Q0MpN30kRUlDQVItU1RBTkRBUkQtQU5USVZJUlVTLVRFU1QtRklMRSEkSCtIKg=="
        );
    }
}

/// NFS frame rules, one per Suricata 7.0.10 `NFSFrameType` seen in the captures.
const NFS_FRAME_RULES: &str = "alert nfs any any -> any any (frame:nfs.rpc.pdu; content:\"|00 01 86 a3|\"; sid:1;)\n\
    alert nfs any any -> any any (frame:nfs.rpc.creds; content:\"|00 00 00 01|\"; startswith; sid:2;)\n\
    alert nfs any any -> any any (frame:nfs.nfs.pdu; content:\"|00 00|\"; sid:3;)\n\
    alert nfs any any -> any any (frame:nfs.nfs.status; content:\"|00 00 00 00|\"; sid:4;)\n\
    alert nfs any any -> any any (frame:nfs.rpc.hdr; content:\"|00 00 00 01|\"; sid:5;)\n\
    alert nfs any any -> any any (frame:nfs.rpc.data; content:\"|00 00 00 00|\"; startswith; sid:6;)\n\
    alert nfs any any -> any any (frame:nfs.nfs4.pdu; content:\"|00|\"; sid:7;)\n";

#[test]
fn nfs_udp_frames_as_suricata() {
    let Some(pcap) = common::shared_file("corpus/pcaps/ndpi/nfsv3.pcap") else {
        return;
    };
    let recs = run(&pcap, NFS_FRAME_RULES, FRAME_ON, "frames-nfs-udp");
    let (alerts, frames) = counts(&recs);
    assert_eq!(
        alerts,
        map(&[(1, 57), (2, 57), (3, 114), (4, 45), (5, 57), (6, 57)])
    );
    assert_eq!(
        frames,
        strs(&[
            ("nfs.pdu", 114),
            ("nfs.status", 57),
            ("rpc.creds", 57),
            ("rpc.data", 57),
            ("rpc.hdr", 57),
            ("rpc.pdu", 114),
        ])
    );
    let a = recs
        .iter()
        .find(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == 1)
        .unwrap();
    assert_eq!(a["frame"]["type"], "rpc.pdu");
    assert_eq!(a["frame"]["direction"], "toserver");
    assert_eq!(a["frame"]["length"], 128);
}

#[test]
fn nfs_tcp_frames_as_suricata() {
    let Some(pcap) = common::shared_file("corpus/pcaps/zeek/nfs_nfs_write.pcap") else {
        return;
    };
    // Alerts as Suricata's; frame records are not compared: Suricata's logger stops
    // writing this flow's frames once its stream buffer slid (docs/compat.md).
    let recs = run(&pcap, NFS_FRAME_RULES, FRAME_ON, "frames-nfs-tcp");
    let (alerts, _) = counts(&recs);
    assert_eq!(
        alerts,
        map(&[(1, 45), (2, 44), (3, 88), (4, 40), (5, 47), (6, 47)])
    );
    let a = recs
        .iter()
        .find(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == 1)
        .unwrap();
    assert_eq!(a["frame"]["type"], "rpc.pdu");
    assert_eq!(a["frame"]["stream_offset"], 0);
    assert_eq!(a["frame"]["length"], 44);
}
