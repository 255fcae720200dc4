//! End to end for SIP, RFB, TFTP, Telnet and SSH HASSH (issue 19): records, alerts and
//! keywords against what Suricata 7.0.10 writes for the same captures and rules with the stock
//! `suricata.yaml` (`suricata -k none --runmode single -r tests/data/app/<pcap> -S <rules>`).
//! The captures come from the shared corpus (`ndpi/sip.pcap`, `ndpi/tftp.pcap`,
//! `ndpi/telnet.pcap`, `zeek/rfb_vnc-mac-to-linux.pcap`, `zeek/ssh_ssh_kex_curve25519.pcap`).

mod common;

use common::{assert_valid_eve, eve_records, repo, shrike, stderr, TempDir};

fn run(pcap: &str, rules: &str, args: &[&str], tag: &str) -> Vec<serde_json::Value> {
    let dir = TempDir::new(tag);
    let rf = dir.path().join("test.rules");
    std::fs::write(&rf, rules).unwrap();
    let out = shrike()
        .args(args)
        .arg("-r")
        .arg(repo().join("tests/data/app").join(pcap))
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

fn of_type<'a>(recs: &'a [serde_json::Value], t: &str) -> Vec<&'a serde_json::Value> {
    recs.iter().filter(|r| r["event_type"] == t).collect()
}

fn count_sid(recs: &[serde_json::Value], sid: u64) -> usize {
    of_type(recs, "alert")
        .iter()
        .filter(|a| a["alert"]["signature_id"] == sid)
        .count()
}

/// Suricata: 81 `sip` records, sid 1 on 18 requests, sid 2 on 14 responses, sid 6 six times.
#[test]
fn sip_records_and_buffers_as_suricata() {
    let rules = "\
alert sip any any -> any any (flow:to_server; sip.method; content:\"REGISTER\"; sid:1;)
alert sip any any -> any any (sip.stat_code; content:\"401\"; sid:2;)
alert sip any any -> any any (sip.stat_code; content:\"REGISTER\"; sid:3;)
alert sip any any -> any any (flow:to_server; sip.from; content:\"sip:\"; sid:4;)
alert sip any any -> any any (flow:to_client; sip.from; content:\"sip:\"; sid:5;)
alert udp any any -> any 5060 (app-layer-event:sip.invalid_data; sid:6;)
";
    let recs = run("sip.pcap", rules, &[], "sip");
    let mut sip = of_type(&recs, "sip");
    assert_eq!(sip.len(), 81);
    // Workers may interleave flows: take the capture's order.
    sip.sort_by_key(|r| r["pcap_cnt"].as_u64());
    let first = &sip[0];
    assert_eq!(first["src_port"], 5060);
    assert!(
        first.get("tx_id").is_none(),
        "Suricata's sip record has no tx_id"
    );
    assert_eq!(first["sip"]["method"], "REGISTER");
    assert_eq!(first["sip"]["uri"], "sip:sip.cybercity.dk");
    assert_eq!(first["sip"]["version"], "SIP/2.0");
    assert_eq!(
        first["sip"]["request_line"],
        "REGISTER sip:sip.cybercity.dk SIP/2.0"
    );
    // The response is its own transaction, logged with the response's direction.
    let resp = &sip[1];
    assert_eq!(resp["sip"]["code"], "401");
    assert_eq!(resp["sip"]["response_line"], "SIP/2.0 401 Unauthorized");
    assert_eq!(resp["dest_ip"], first["src_ip"]);
    assert_eq!(count_sid(&recs, 1), 18);
    assert_eq!(count_sid(&recs, 2), 14);
    assert_eq!(count_sid(&recs, 3), 0);
    // Suricata 8's header buffer: each of the 81 messages has a `From: ...sip:...` line, read
    // from the request going to the server and from the response going to the client.
    let requests = sip
        .iter()
        .filter(|r| r["sip"]["method"].is_string())
        .count();
    assert_eq!(count_sid(&recs, 4), requests);
    assert_eq!(count_sid(&recs, 5), sip.len() - requests);
    // A datagram that does not parse raises `invalid_data` on the flow's last transaction,
    // which is kept until inspected both ways: Suricata alerts 6 times.
    assert_eq!(count_sid(&recs, 6), 6);
    let a = of_type(&recs, "alert")
        .into_iter()
        .find(|a| a["alert"]["signature_id"] == 1)
        .unwrap();
    assert_eq!(a["app_proto"], "sip");
    assert_eq!(a["sip"]["method"], "REGISTER");
    assert!(a["tx_id"].is_u64());
}

/// Suricata: three `rfb` records (two handshakes cut short, one complete), one alert each
/// for sids 1-3, none for sid 4.
#[test]
fn rfb_records_and_keywords_as_suricata() {
    let rules = "\
alert rfb any any -> any any (rfb.name; content:\"martin-VirtualBox\"; sid:1;)
alert rfb any any -> any any (rfb.sectype:2; sid:2;)
alert rfb any any -> any any (rfb.secresult:ok; sid:3;)
alert rfb any any -> any any (rfb.secresult:fail; sid:4;)
";
    let recs = run("rfb.pcap", rules, &[], "rfb");
    let rfb = of_type(&recs, "rfb");
    assert_eq!(rfb.len(), 3);
    let full = rfb
        .iter()
        .find(|r| r["rfb"]["framebuffer"].is_object())
        .expect("complete handshake");
    let r = &full["rfb"];
    assert_eq!(r["server_protocol_version"]["minor"], "008");
    assert_eq!(r["client_protocol_version"]["minor"], "003");
    assert_eq!(r["authentication"]["security_type"], 2);
    assert_eq!(
        r["authentication"]["vnc"]["challenge"],
        "34756223ac15bc40ce0c2b0138369f80"
    );
    assert_eq!(r["authentication"]["security_result"], "OK");
    assert_eq!(r["screen_shared"], true);
    assert_eq!(r["framebuffer"]["width"], 1024);
    assert_eq!(
        r["framebuffer"]["name"],
        "root's X desktop (martin-VirtualBox:1)"
    );
    assert_eq!(r["framebuffer"]["pixel_format"]["bits_per_pixel"], 32);
    for sid in 1..=3 {
        assert_eq!(count_sid(&recs, sid), 1, "sid {sid}");
    }
    assert_eq!(count_sid(&recs, 4), 0);
    let rfb_flows = of_type(&recs, "flow")
        .iter()
        .filter(|f| f["app_proto"] == "rfb")
        .count();
    assert_eq!(rfb_flows, 3);
}

/// Suricata: five `tftp` records (one request of the capture does not parse).
#[test]
fn tftp_records_as_suricata() {
    let rules = "alert tftp any any -> any any (tftp.file_name; content:\"rfc1350\"; sid:1;)\n";
    let recs = run("tftp.pcap", rules, &[], "tftp");
    let got: Vec<(String, String, String)> = of_type(&recs, "tftp")
        .iter()
        .map(|r| {
            let t = &r["tftp"];
            (
                t["packet"].as_str().unwrap().to_string(),
                t["file"].as_str().unwrap().to_string(),
                t["mode"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut want: Vec<(String, String, String)> = [
        ("read", "", "octet"),
        ("read", "rfc1350.txt", "octet"),
        ("read", "sysman.lis", "octet"),
        ("write", "zz.bin", "netascii"),
        ("write", "empty100KB", "octet"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    let mut got_sorted = got.clone();
    got_sorted.sort();
    want.sort();
    assert_eq!(got_sorted, want);
    assert_eq!(count_sid(&recs, 1), 1);
}

#[test]
fn telnet_flow_detected() {
    let recs = run(
        "telnet.pcap",
        "alert telnet any any -> any any (flow:to_client; content:\"|ff|\"; sid:1;)\n",
        &[],
        "telnet",
    );
    let flows = of_type(&recs, "flow");
    assert_eq!(flows.len(), 1);
    assert_eq!(flows[0]["app_proto"], "telnet");
}

/// With `app-layer.protocols.ssh.hassh: yes` Suricata logs these HASSH values; without it,
/// a rule with a hassh keyword turns HASSH on.
#[test]
fn ssh_hassh_as_suricata() {
    let rules = "\
alert ssh any any -> any any (ssh.hassh; content:\"0df0d56bb50c6b2426d8d40234bf1826\"; sid:1;)
alert ssh any any -> any any (ssh.hassh.server; content:\"a95c22bf8e9b19ed0a5dc74bb2f9c613\"; sid:2;)
alert ssh any any -> any any (ssh.hassh.server.string; content:\"curve25519-sha256|3b|chacha20-poly1305@openssh.com\"; startswith; sid:3;)
alert ssh any any -> any any (ssh.protoversion:2_compat; ssh.softwareversion:OpenSSH_7.4; sid:4;)
";
    let recs = run("ssh_curve25519.pcap", rules, &[], "hassh");
    let ssh = of_type(&recs, "ssh");
    assert_eq!(ssh.len(), 1);
    let s = &ssh[0]["ssh"];
    assert_eq!(s["client"]["software_version"], "OpenSSH_7.4");
    assert_eq!(
        s["client"]["hassh"]["hash"],
        "0df0d56bb50c6b2426d8d40234bf1826"
    );
    assert_eq!(
        s["server"]["hassh"]["hash"],
        "a95c22bf8e9b19ed0a5dc74bb2f9c613"
    );
    for sid in 1..=4 {
        assert_eq!(count_sid(&recs, sid), 1, "sid {sid}");
    }
}
