//! End to end through the app layer: protocol detection on a non-standard port, transaction
//! rules on http/dns/tls buffers, and the EVE `http`, `dns` and `tls` records (schema-valid,
//! fields as Suricata 7 logs them for the same captures).

mod common;

use common::{assert_valid_eve, eve_records, repo, shrike, stderr, TempDir};

fn run(pcap: &str, rules: &str, tag: &str) -> (Vec<serde_json::Value>, String) {
    let dir = TempDir::new(tag);
    let rf = dir.path().join("test.rules");
    std::fs::write(&rf, rules).unwrap();
    let out = shrike()
        .arg("-r")
        .arg(repo().join("tests/data/app").join(pcap))
        .arg("-S")
        .arg(&rf)
        .arg("-l")
        .arg(dir.path())
        .output()
        .expect("run shrike");
    let err = stderr(&out);
    assert!(out.status.success(), "shrike failed: {err}");
    let recs = eve_records(dir.path());
    assert_valid_eve(&recs);
    (recs, err)
}

fn of_type<'a>(recs: &'a [serde_json::Value], t: &str) -> Vec<&'a serde_json::Value> {
    recs.iter().filter(|r| r["event_type"] == t).collect()
}

fn sids(recs: &[serde_json::Value]) -> Vec<u64> {
    let mut v: Vec<u64> = of_type(recs, "alert")
        .iter()
        .filter_map(|a| a["alert"]["signature_id"].as_u64())
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn http_on_port_8888_detected_and_alerts_on_uri() {
    let rules = "\
alert http any any -> any any (msg:\"uri\"; flow:to_server; http.uri; content:\"/star-123456/index.m3u8\"; startswith; sid:1;)
alert http any any -> any any (msg:\"legacy ua\"; content:\"exoplayer\"; http_user_agent; sid:2;)
alert http any any -> any any (msg:\"stat code\"; http.stat_code; content:\"403\"; sid:3;)
alert http any any -> any any (msg:\"wrong method\"; http.method; content:\"POST\"; sid:4;)
alert http any any -> any any (msg:\"urilen\"; urilen:>50; sid:5;)
alert tls any any -> any any (msg:\"not tls\"; tls.sni; content:\"a\"; sid:6;)
";
    let (recs, _) = run("http_on_sip_port.pcap", rules, "http");
    assert_eq!(sids(&recs), vec![1, 2, 3, 5]);
    let http = of_type(&recs, "http");
    assert_eq!(http.len(), 1, "one http record");
    let h = &http[0]["http"];
    assert_eq!(h["hostname"], "45.58.148.2");
    assert_eq!(h["http_method"], "GET");
    assert_eq!(h["status"], 403);
    assert_eq!(h["http_user_agent"], "exoplayer-codelab");
    assert_eq!(http[0]["dest_port"], 8888);
    // The alert carries the transaction and its http object.
    let a = of_type(&recs, "alert")
        .into_iter()
        .find(|a| a["alert"]["signature_id"] == 1)
        .unwrap();
    assert_eq!(a["tx_id"], 0);
    assert_eq!(a["app_proto"], "http");
    assert_eq!(a["http"]["url"], h["url"]);
    let flows = of_type(&recs, "flow");
    assert!(flows.iter().any(|f| f["app_proto"] == "http"));
}

/// `dns.opcode` goes through the registry's protocol keywords (`KeywordDesc`): the alerts,
/// transactions and directions equal Suricata 7.0.10's on the same capture and rules
/// (`suricata -k none --runmode single -r tests/data/app/dns.pcap`): sid 20 on tx 0 of both
/// flows going to port 53 and on the two responses (tx 1), sid 23 on the responses only,
/// sid 24 once; a value Suricata refuses fails the rule.
#[test]
fn dns_opcode_keyword_as_suricata() {
    let rules = "\
alert dns any any -> any any (msg:\"op0\"; dns.opcode:0; sid:20;)
alert dns any any -> any any (msg:\"opnot0\"; dns.opcode:!0; sid:21;)
alert dns any any -> any any (msg:\"op4\"; dns.opcode:4; sid:22;)
alert dns any any -> any any (msg:\"op0 to client\"; flow:to_client; dns.opcode: 0; sid:23;)
alert dns any any -> any any (msg:\"op0 + query\"; dns.opcode:0; dns.query; content:\"example\"; sid:24;)
alert dns any any -> any any (msg:\"bad\"; dns.opcode:x; sid:25;)
";
    let (recs, err) = run("dns.pcap", rules, "dns-opcode");
    let mut got: Vec<(u64, u64, u64)> = of_type(&recs, "alert")
        .iter()
        .map(|a| {
            (
                a["alert"]["signature_id"].as_u64().unwrap(),
                a["tx_id"].as_u64().unwrap(),
                a["dest_port"].as_u64().unwrap(),
            )
        })
        .collect();
    got.sort_unstable();
    assert_eq!(
        got,
        vec![
            (20, 0, 53),
            (20, 0, 53),
            (20, 1, 32795),
            (20, 1, 47255),
            (23, 1, 32795),
            (23, 1, 47255),
            (24, 0, 53),
        ]
    );
    assert!(err.contains("1 failed"), "{err}");
}

#[test]
fn dns_query_alert_over_udp() {
    let rules = "\
alert dns any any -> any any (msg:\"example\"; dns.query; content:\"www.example.com\"; nocase; sid:10;)
alert dns any any -> any any (msg:\"whatsapp dotprefix\"; dns.query; dotprefix; content:\".whatsapp.net\"; endswith; sid:11;)
alert dns any any -> any any (msg:\"nomatch\"; dns.query; content:\"nothing.invalid\"; sid:12;)
alert udp any any -> any 53 (msg:\"legacy\"; dns_query; content:\"example\"; sid:13;)
";
    let (recs, _) = run("dns.pcap", rules, "dns");
    let s = sids(&recs);
    assert!(
        s.contains(&10) && s.contains(&11) && s.contains(&13),
        "{s:?}"
    );
    assert!(!s.contains(&12));
    // Each rule alerts once per transaction: sid 10 matches one query transaction.
    assert_eq!(s.iter().filter(|&&x| x == 10).count(), 1);
    let dns = of_type(&recs, "dns");
    let q = dns
        .iter()
        .find(|d| d["dns"]["type"] == "query" && d["dns"]["rrname"] == "www.example.com")
        .expect("query record");
    assert_eq!(q["dns"]["version"], 2);
    assert_eq!(q["dns"]["rrtype"], "AAAA");
    assert_eq!(q["dest_port"], 53);
    // Answers, like queries, carry the flow's direction (Suricata 7's LOG_DIR_FLOW).
    let answers: Vec<_> = dns
        .iter()
        .filter(|d| d["dns"]["type"] == "answer")
        .collect();
    assert!(!answers.is_empty());
    for a in answers {
        assert_eq!(a["dest_port"], 53, "{a}");
        assert_ne!(a["src_port"], 53, "{a}");
    }
    let a = of_type(&recs, "alert")
        .into_iter()
        .find(|a| a["alert"]["signature_id"] == 10)
        .unwrap();
    assert_eq!(a["dns"]["query"][0]["rrname"], "www.example.com");
}

#[test]
fn tls_sni_alert_and_record() {
    let rules = "\
alert tls any any -> any any (msg:\"sni\"; tls.sni; content:\"www.ntop.org\"; bsize:12; sid:20;)
alert tls any any -> any any (msg:\"issuer\"; tls.cert_issuer; content:\"Let's Encrypt\"; sid:21;)
alert tls any any -> any any (msg:\"wrong sni\"; tls.sni; content:\"example.com\"; sid:22;)
alert tls any any -> any any (msg:\"ja3 present\"; ja3.hash; bsize:32; sid:23;)
";
    let (recs, _) = run("443-curl.pcap", rules, "tls");
    let s = sids(&recs);
    assert_eq!(s, vec![20, 21, 23]);
    let tls = of_type(&recs, "tls");
    assert_eq!(tls.len(), 1);
    let t = &tls[0]["tls"];
    assert_eq!(t["sni"], "www.ntop.org");
    assert_eq!(t["subject"], "CN=www.ntop.org");
    assert_eq!(
        t["serial"],
        "03:C5:6F:66:36:ED:A7:2F:7F:4C:56:65:FA:05:5D:93:32:55"
    );
    let a = of_type(&recs, "alert")
        .into_iter()
        .find(|a| a["alert"]["signature_id"] == 20)
        .unwrap();
    assert_eq!(a["tls"]["sni"], "www.ntop.org");
    assert_eq!(a["app_proto"], "tls");
}

/// `fileinfo` with `force-hash: [md5, sha256]` from a suricata.yaml: the file's fields equal
/// Suricata 7.0.10's record on the same capture and options (md5/sha256 streamed, no sha1).
#[test]
fn fileinfo_hashes_as_suricata_with_force_hash() {
    let dir = TempDir::new("fileinfo-hash");
    let cfg = dir.path().join("suricata.yaml");
    std::fs::write(
        &cfg,
        "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      filetype: regular\n      filename: eve.json\n      types:\n        - http\n        - files:\n            force-magic: no\n            force-hash: [md5, sha256]\n",
    )
    .unwrap();
    let out = shrike()
        .arg("-c")
        .arg(&cfg)
        .arg("-r")
        .arg(repo().join("tests/data/app/http_on_sip_port.pcap"))
        .arg("-l")
        .arg(dir.path())
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "{}", stderr(&out));
    let recs = eve_records(dir.path());
    assert_valid_eve(&recs);
    let files = of_type(&recs, "fileinfo");
    assert_eq!(files.len(), 1);
    assert_eq!(
        files[0]["fileinfo"],
        serde_json::json!({
            "filename": "/star-123456/index.m3u8",
            "gaps": false,
            "state": "CLOSED",
            "md5": "bcddeb791f2d331251373fc272712013",
            "sha256": "a03d03a05f18b3cd500250ff71127d44f8312c39de8b77d1a856cb854c663fc1",
            "stored": false,
            "size": 880,
            "tx_id": 0
        })
    );
    assert_eq!(files[0]["http"]["status"], 403);
}

/// `filename` / `fileext` (Suricata 7: nocase contents on `file.name`, `.ext` at its end),
/// `file.name` and the `files` array of alerts: alerts and the array equal Suricata 7.0.10's
/// on the same capture and rules.
#[test]
fn file_name_keywords_and_files_in_alerts_as_suricata() {
    let rules = "\
alert http any any -> any any (msg:\"filename\"; filename:\"index.m3u8\"; sid:1;)
alert http any any -> any any (msg:\"fileext\"; fileext:\"M3U8\"; sid:2;)
alert http any any -> any any (msg:\"file.name\"; file.name; content:\"/star-\"; startswith; sid:3;)
alert http any any -> any any (msg:\"fileext no\"; fileext:\"exe\"; sid:4;)
alert http any any -> any any (msg:\"filename neg\"; filename:!\"foo\"; sid:5;)
alert http any any -> any any (msg:\"fileext unquoted\"; fileext:m3u8; sid:6;)
";
    let (recs, _) = run("http_on_sip_port.pcap", rules, "file-kw");
    assert_eq!(sids(&recs), vec![1, 2, 3, 5, 6]);
    for a in of_type(&recs, "alert") {
        assert_eq!(
            a["files"],
            serde_json::json!([{
                "filename": "/star-123456/index.m3u8",
                "gaps": false,
                "state": "CLOSED",
                "stored": false,
                "size": 880,
                "tx_id": 0
            }]),
            "{a}"
        );
    }
}
