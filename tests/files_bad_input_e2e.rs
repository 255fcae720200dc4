//! Issue 22's bad input for files, end to end: a zero-length body, a body claiming 4 GiB
//! (`Content-Length: 4294967296`) cut short by the close, and an endless chunked body (3,000
//! chunks of 1,000 bytes, never terminated). The `fileinfo` records equal Suricata 7.0.10's
//! on the same capture and configuration (`suricata -c <this yaml> -k none --runmode single`):
//! no file for the empty body, the cut one `CLOSED` with the 20,000 bytes seen and their MD5,
//! the chunked one `TRUNCATED` at the 100 KiB body limit without a hash.

mod common;
mod hostile_util;

use common::{eve_records, shrike, stderr, TempDir};
use hostile_util::{tcp_conversation, Pcap};

const YAML: &str = "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      filetype: regular\n      filename: eve.json\n      types:\n        - http\n        - files:\n            force-magic: no\n            force-hash: [md5]\napp-layer:\n  protocols:\n    http:\n      libhtp:\n        default-config:\n          request-body-limit: 100kb\n          response-body-limit: 100kb\n";

#[test]
fn empty_huge_claimed_and_endless_chunked_bodies() {
    let dir = TempDir::new("files-bad-input");
    let mut cap = Pcap::new(1);
    let mut t = 1_700_000_000_000_000u64;
    let (c, s) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let chunked: Vec<u8> = (0..3000)
        .flat_map(|_| {
            let mut v = b"3e8\r\n".to_vec();
            v.extend(std::iter::repeat_n(b'B', 1000));
            v.extend_from_slice(b"\r\n");
            v
        })
        .collect();
    let cases: [(u16, &str, Vec<u8>); 3] = [
        (
            41_000,
            "/empty.bin",
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec(),
        ),
        (41_001, "/huge.bin", {
            let mut v = b"HTTP/1.1 200 OK\r\nContent-Length: 4294967296\r\n\r\n".to_vec();
            v.extend(std::iter::repeat_n(b'A', 20_000));
            v
        }),
        (41_002, "/chunked.bin", {
            let mut v = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            v.extend_from_slice(&chunked);
            v
        }),
    ];
    for (port, path, resp) in &cases {
        let req = format!("GET {path} HTTP/1.1\r\nHost: a\r\n\r\n").into_bytes();
        let mut msgs: Vec<(bool, &[u8])> = vec![(true, &req)];
        msgs.extend(resp.chunks(1400).map(|p| (false, p)));
        tcp_conversation(&mut cap, &mut t, (c, s), (*port, 80), &msgs);
    }
    let pcap = dir.path().join("files.pcap");
    cap.write(&pcap);
    let cfg = dir.path().join("suricata.yaml");
    std::fs::write(&cfg, YAML).unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let out = shrike()
        .arg("-c")
        .arg(&cfg)
        .args(["-k", "none", "--runmode", "single", "-r"])
        .arg(&pcap)
        .arg("-l")
        .arg(&logs)
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "{}", stderr(&out));
    let recs = eve_records(&logs);
    let mut files: Vec<(String, u64, String, Option<String>)> = recs
        .iter()
        .filter(|r| r["event_type"] == "fileinfo")
        .map(|r| {
            let f = &r["fileinfo"];
            (
                f["filename"].as_str().unwrap().to_string(),
                f["size"].as_u64().unwrap(),
                f["state"].as_str().unwrap().to_string(),
                f["md5"].as_str().map(str::to_string),
            )
        })
        .collect();
    files.sort();
    assert_eq!(
        files,
        vec![
            ("/chunked.bin".into(), 102_400, "TRUNCATED".into(), None),
            (
                "/huge.bin".into(),
                20_000,
                "CLOSED".into(),
                Some("0af181fb57f1eefb62b74081bbddb155".into())
            ),
        ]
    );
    // One `http` record per download.
    let http = recs.iter().filter(|r| r["event_type"] == "http").count();
    assert_eq!(http, 3);
}
