//! A rule with Suricata's `files` engine (`filesize`, `filestore`, `filemd5` ...) alerts
//! again when its transaction gets a new file (Suricata 7.0.10's
//! `DETECT_ENGINE_STATE_FLAG_FILE_NEW`, raised by its HTTP/1 and SMTP parsers), and alerts
//! list only the files not yet pruned (a file that ended on an earlier packet of its
//! direction is gone from the transaction's container, `FilesPrune`). A generated HTTP POST
//! whose multipart form carries three files, each ending on its own packet, and a response
//! body: the alerts (rule, packet, `files` names) are the ones `suricata -r <pcap> -k none`
//! (stock `suricata.yaml`) gives with the same rules (SHRIKE_REINSPECT_PCAP_OUT=<path> keeps the capture).

mod common;
mod hostile_util;

use common::{assert_valid_eve, eve_records, shrike, stderr, TempDir};
use hostile_util::{tcp4, Pcap, ACK, FIN, PSH, SYN};

const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];

fn capture() -> Pcap {
    let part = |name: &str, data: &str| {
        format!(
            "--BB\r\nContent-Disposition: form-data; name=\"f\"; filename=\"{name}\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n{data}\r\n"
        )
    };
    // Each piece ends a file's data, the next starts with the boundary closing it.
    let pieces = [
        part("a.txt", "first file"),
        part("b.jpg", "second file, longer"),
        part("c.txt", "3rd"),
        "--BB--\r\n".to_string(),
    ];
    let body_len: usize = pieces.iter().map(String::len).sum();
    let head = format!(
        "POST /up HTTP/1.1\r\nHost: h.example\r\n\
         Content-Type: multipart/form-data; boundary=BB\r\nContent-Length: {body_len}\r\n\r\n"
    );
    let resp_body = "stored three files";
    let resp = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{resp_body}",
        resp_body.len()
    );
    let (sp, dp) = (40002u16, 80u16);
    let (mut cs, mut ss) = (1000u32, 5000u32);
    let mut frames: Vec<Vec<u8>> = vec![tcp4(C, S, sp, dp, cs, 0, SYN, b"")];
    frames.push(tcp4(S, C, dp, sp, ss, cs + 1, SYN | ACK, b""));
    cs += 1;
    ss += 1;
    frames.push(tcp4(C, S, sp, dp, cs, ss, ACK, b""));
    let mut segs = vec![head];
    segs.extend(pieces);
    for seg in &segs {
        frames.push(tcp4(C, S, sp, dp, cs, ss, PSH | ACK, seg.as_bytes()));
        cs += seg.len() as u32;
        frames.push(tcp4(S, C, dp, sp, ss, cs, ACK, b""));
    }
    frames.push(tcp4(S, C, dp, sp, ss, cs, PSH | ACK, resp.as_bytes()));
    ss += resp.len() as u32;
    frames.push(tcp4(C, S, sp, dp, cs, ss, FIN | ACK, b""));
    cs += 1;
    frames.push(tcp4(S, C, dp, sp, ss, cs, FIN | ACK, b""));
    ss += 1;
    frames.push(tcp4(C, S, sp, dp, cs, ss, ACK, b""));
    let mut cap = Pcap::new(1);
    for (i, f) in frames.iter().enumerate() {
        cap.push(1_700_000_000_000_000u64 + i as u64 * 1000, f);
    }
    cap
}

/// (sid, pcap_cnt, names in the alert's `files`) of each alert, in order.
type Alert = (u64, u64, Vec<String>);

fn run(rules: &str, tag: &str) -> Vec<Alert> {
    let dir = TempDir::new(tag);
    let pcap = dir.path().join("files.pcap");
    capture().write(&pcap);
    if let Ok(keep) = std::env::var("SHRIKE_REINSPECT_PCAP_OUT") {
        let _ = std::fs::copy(&pcap, keep);
    }
    let rf = dir.path().join("test.rules");
    std::fs::write(&rf, rules).unwrap();
    let out = shrike()
        .arg("-r")
        .arg(&pcap)
        .arg("-S")
        .arg(&rf)
        .args(["-k", "none", "-l"])
        .arg(dir.path())
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "shrike failed: {}", stderr(&out));
    let recs = eve_records(dir.path());
    assert_valid_eve(&recs);
    recs.iter()
        .filter(|r| r["event_type"] == "alert")
        .map(|a| {
            let names = a["files"]
                .as_array()
                .map(|v| {
                    v.iter()
                        .map(|f| f["filename"].as_str().unwrap_or("").to_string())
                        .collect()
                })
                .unwrap_or_default();
            (
                a["alert"]["signature_id"].as_u64().unwrap(),
                a["pcap_cnt"].as_u64().unwrap_or(0),
                names,
            )
        })
        .collect()
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// `filestore` (a `files` keyword matching an open file) alerts again for each new file of
/// the transaction, listing the files not pruned yet; a `file.name` content beside it must
/// hold on the files too. Suricata 7.0.10: sid 4 at packets 8, 10, 12, sid 5 at 10 and 12.
#[test]
fn filestore_alerts_again_for_each_new_file() {
    let got = run(
        "alert http any any -> any any (content:\"POST\"; http_method; filestore; sid:4;)\n\
         alert http any any -> any any (filename:\"b.jpg\"; filestore; sid:5;)\n",
        "reinspect-filestore",
    );
    assert_eq!(
        got,
        vec![
            (4, 8, names(&["a.txt"])),
            (4, 10, names(&["a.txt", "b.jpg"])),
            (5, 10, names(&["a.txt", "b.jpg"])),
            (4, 12, names(&["b.jpg", "c.txt"])),
            (5, 12, names(&["b.jpg", "c.txt"])),
        ]
    );
}

/// `filesize` matching a closed file while the next is still open is Suricata's
/// `MATCH_MORE_FILES`: the alert does not record the file engine, so later request files do
/// not inspect it again; the response body (the other direction) still alerts once.
#[test]
fn filesize_match_with_more_files_alerts_once_per_direction() {
    let got = run(
        "alert http any any -> any any (filesize:>0; sid:1;)\n",
        "reinspect-filesize",
    );
    assert_eq!(
        got,
        vec![
            (1, 10, names(&["a.txt", "b.jpg"])),
            (1, 16, names(&["/up"]))
        ]
    );
}

/// A `file.name` content (no `files` engine in 7.0.10) alerts once, on the packet the first
/// file opens; a to-server rule mixing an HTTP buffer with `filesize` alerts once too here.
#[test]
fn file_name_rules_alert_once() {
    let got = run(
        "alert http any any -> any any (content:\"POST\"; http_method; filesize:>3; sid:2;)\n\
         alert http any any -> any any (file.name; content:\".txt\"; sid:3;)\n",
        "reinspect-mixed",
    );
    assert_eq!(
        got,
        vec![
            (3, 8, names(&["a.txt"])),
            (2, 10, names(&["a.txt", "b.jpg"]))
        ]
    );
}
