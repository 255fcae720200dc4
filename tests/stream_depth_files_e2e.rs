//! Files cut at the stream reassembly depth, as Suricata 7.0.10 cuts them: the packet that
//! takes the stream past its depth ends the direction's open files `TRUNCATED` at once
//! (`STREAM_DEPTH`, `FileTruncateAllOpenFiles`), with the data the app layer has so far (the
//! partial message line of SMTP included). A generated SMTP mail with a 60 KiB base64
//! attachment through a 20 KiB stream depth gives the `fileinfo` record Suricata writes for
//! it (size, state, packet: checked with `suricata -r <pcap> -k none --set
//! stream.reassembly.depth=20kb`; SHRIKE_DEPTH_PCAP_OUT=<prefix> keeps the captures).

mod common;
mod hostile_util;

use common::{assert_valid_eve, eve_records, shrike, stderr, TempDir};
use hostile_util::{tcp4, Pcap, ACK, PSH, SYN};

const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];

fn b64(data: &[u8]) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn capture() -> Pcap {
    let body: Vec<u8> = (0..60 * 1024u32).map(|i| (i * 7 % 251) as u8).collect();
    let enc = b64(&body);
    let mut mail = String::from(
        "From: a@b.example\r\nTo: c@d.example\r\nSubject: t\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"XX\"\r\n\r\n--XX\r\n\
         Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\
         Content-Disposition: attachment; filename=\"big.bin\"\r\n\r\n",
    );
    for line in enc.as_bytes().chunks(76) {
        mail.push_str(std::str::from_utf8(line).unwrap());
        mail.push_str("\r\n");
    }
    mail.push_str("--XX--\r\n.\r\n");
    let (sp, dp) = (40000u16, 25u16);
    let (mut cs, mut ss) = (1000u32, 5000u32);
    let mut frames: Vec<Vec<u8>> = vec![tcp4(C, S, sp, dp, cs, 0, SYN, b"")];
    frames.push(tcp4(S, C, dp, sp, ss, cs + 1, SYN | ACK, b""));
    cs += 1;
    ss += 1;
    frames.push(tcp4(C, S, sp, dp, cs, ss, ACK, b""));
    let greeting: &[u8] = b"220 mx ESMTP\r\n";
    frames.push(tcp4(S, C, dp, sp, ss, cs, PSH | ACK, greeting));
    ss += greeting.len() as u32;
    let steps: [(&[u8], &[u8]); 5] = [
        (b"EHLO c.example\r\n", b"250 mx\r\n"),
        (b"MAIL FROM:<a@b.example>\r\n", b"250 ok\r\n"),
        (b"RCPT TO:<c@d.example>\r\n", b"250 ok\r\n"),
        (b"DATA\r\n", b"354 go\r\n"),
        (mail.as_bytes(), b""),
    ];
    for (cmd, reply) in steps {
        for seg in cmd.chunks(1400) {
            frames.push(tcp4(C, S, sp, dp, cs, ss, PSH | ACK, seg));
            cs += seg.len() as u32;
            frames.push(tcp4(S, C, dp, sp, ss, cs, ACK, b""));
        }
        if !reply.is_empty() {
            frames.push(tcp4(S, C, dp, sp, ss, cs, PSH | ACK, reply));
            ss += reply.len() as u32;
        }
    }
    let mut cap = Pcap::new(1);
    for (i, f) in frames.iter().enumerate() {
        cap.push(1_700_000_000_000_000u64 + i as u64 * 1000, f);
    }
    cap
}

/// An HTTP download of 60 KiB, the client acknowledging each segment.
fn http_capture() -> Pcap {
    let body: Vec<u8> = (0..60 * 1024u32).map(|i| (i * 13 % 253) as u8).collect();
    let mut resp = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    resp.extend_from_slice(&body);
    let req: &[u8] = b"GET /big.bin HTTP/1.1\r\nHost: h.example\r\n\r\n";
    let (sp, dp) = (40001u16, 80u16);
    let (mut cs, mut ss) = (1000u32, 5000u32);
    let mut frames: Vec<Vec<u8>> = vec![tcp4(C, S, sp, dp, cs, 0, SYN, b"")];
    frames.push(tcp4(S, C, dp, sp, ss, cs + 1, SYN | ACK, b""));
    cs += 1;
    ss += 1;
    frames.push(tcp4(C, S, sp, dp, cs, ss, ACK, b""));
    frames.push(tcp4(C, S, sp, dp, cs, ss, PSH | ACK, req));
    cs += req.len() as u32;
    for seg in resp.chunks(1400) {
        frames.push(tcp4(S, C, dp, sp, ss, cs, PSH | ACK, seg));
        ss += seg.len() as u32;
        frames.push(tcp4(C, S, sp, dp, cs, ss, ACK, b""));
    }
    let mut cap = Pcap::new(1);
    for (i, f) in frames.iter().enumerate() {
        cap.push(1_700_000_000_000_000u64 + i as u64 * 1000, f);
    }
    cap
}

/// ONC RPC over TCP: one record (last fragment) holding `body`.
fn rpc_record(body: &[u8]) -> Vec<u8> {
    let mut v = (0x8000_0000u32 | body.len() as u32).to_be_bytes().to_vec();
    v.extend_from_slice(body);
    v
}

fn be32(v: &mut Vec<u8>, n: u32) {
    v.extend_from_slice(&n.to_be_bytes());
}

/// XDR opaque: length, bytes, padding to 4.
fn opaque(v: &mut Vec<u8>, d: &[u8]) {
    be32(v, d.len() as u32);
    v.extend_from_slice(d);
    v.resize(v.len() + (4 - d.len() % 4) % 4, 0);
}

/// An NFSv3 call (AUTH_NULL) of procedure `proc` with `args`.
fn nfs_call(xid: u32, proc_: u32, args: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for n in [xid, 0, 2, 100_003, 3, proc_, 0, 0, 0, 0] {
        be32(&mut v, n);
    }
    v.extend_from_slice(args);
    rpc_record(&v)
}

/// An accepted, successful NFSv3 reply with `res` after its status.
fn nfs_reply(xid: u32, res: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for n in [xid, 1, 0, 0, 0, 0] {
        be32(&mut v, n);
    }
    v.extend_from_slice(res);
    rpc_record(&v)
}

/// NFSv3 over TCP: a LOOKUP of `big.bin`, then four 16 KiB READs of it (the last at its
/// end), the client acknowledging each segment of the replies.
fn nfs_capture() -> Pcap {
    let (dirfh, fh) = ([1u8; 8], [2u8; 8]);
    let mut msgs: Vec<(bool, Vec<u8>)> = Vec::new();
    let mut a = Vec::new();
    opaque(&mut a, &dirfh);
    opaque(&mut a, b"big.bin");
    msgs.push((true, nfs_call(1, 3, &a)));
    let mut r = Vec::new();
    be32(&mut r, 0);
    opaque(&mut r, &fh);
    be32(&mut r, 0);
    be32(&mut r, 0);
    msgs.push((false, nfs_reply(1, &r)));
    let chunk = 16 * 1024u32;
    for i in 0..4u32 {
        let mut a = Vec::new();
        opaque(&mut a, &fh);
        a.extend_from_slice(&(u64::from(i * chunk)).to_be_bytes());
        be32(&mut a, chunk);
        msgs.push((true, nfs_call(10 + i, 6, &a)));
        let data: Vec<u8> = (0..chunk).map(|j| ((i * chunk + j) % 247) as u8).collect();
        let mut r = Vec::new();
        be32(&mut r, 0);
        // Attributes follow (Suricata's parser always takes the 84 bytes of `fattr3`).
        be32(&mut r, 1);
        r.resize(r.len() + 84, 0);
        be32(&mut r, chunk);
        be32(&mut r, u32::from(i == 3));
        opaque(&mut r, &data);
        msgs.push((false, nfs_reply(10 + i, &r)));
    }
    let (sp, dp) = (901u16, 2049u16);
    let (mut cs, mut ss) = (1000u32, 5000u32);
    let mut frames: Vec<Vec<u8>> = vec![tcp4(C, S, sp, dp, cs, 0, SYN, b"")];
    frames.push(tcp4(S, C, dp, sp, ss, cs + 1, SYN | ACK, b""));
    cs += 1;
    ss += 1;
    frames.push(tcp4(C, S, sp, dp, cs, ss, ACK, b""));
    for (to_server, m) in &msgs {
        for seg in m.chunks(1400) {
            if *to_server {
                frames.push(tcp4(C, S, sp, dp, cs, ss, PSH | ACK, seg));
                cs += seg.len() as u32;
                frames.push(tcp4(S, C, dp, sp, ss, cs, ACK, b""));
            } else {
                frames.push(tcp4(S, C, dp, sp, ss, cs, PSH | ACK, seg));
                ss += seg.len() as u32;
                frames.push(tcp4(C, S, sp, dp, cs, ss, ACK, b""));
            }
        }
    }
    let mut cap = Pcap::new(1);
    for (i, f) in frames.iter().enumerate() {
        cap.push(1_700_000_000_000_000u64 + i as u64 * 1000, f);
    }
    cap
}

fn run(cap: Pcap, tag: &str, extra: &str) -> Vec<(u64, u64, String)> {
    let dir = TempDir::new(tag);
    let pcap = dir.path().join("depth.pcap");
    cap.write(&pcap);
    if let Ok(keep) = std::env::var("SHRIKE_DEPTH_PCAP_OUT") {
        let _ = std::fs::copy(&pcap, format!("{keep}-{tag}.pcap"));
    }
    run_on(
        &dir,
        &pcap,
        extra,
        &["--set", "stream.reassembly.depth=20kb"],
    )
}

/// Shrike on `pcap` with a config logging `files` (plus `extra`) and `args`: the
/// (packet, size, state) of each `fileinfo`.
fn run_on(
    dir: &TempDir,
    pcap: &std::path::Path,
    extra: &str,
    args: &[&str],
) -> Vec<(u64, u64, String)> {
    let cfg = dir.path().join("suricata.yaml");
    std::fs::write(
        &cfg,
        format!(
            "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      \
             types:\n        - files\n{extra}"
        ),
    )
    .unwrap();
    let out = shrike()
        .arg("-c")
        .arg(&cfg)
        .arg("-r")
        .arg(pcap)
        .args(args)
        .args(["-k", "none", "-l"])
        .arg(dir.path())
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "shrike failed: {}", stderr(&out));
    let recs = eve_records(dir.path());
    assert_valid_eve(&recs);
    recs.iter()
        .filter(|r| r["event_type"] == "fileinfo")
        .map(|r| {
            (
                r["pcap_cnt"].as_u64().unwrap_or(0),
                r["fileinfo"]["size"].as_u64().unwrap(),
                r["fileinfo"]["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn smtp_attachment_truncated_at_the_depth_as_suricata() {
    let files = run(capture(), "depth-smtp", "");
    // Suricata 7.0.10's `fileinfo` (packet, size, state) on the capture: cut on the packet
    // that crossed the depth, with the data acknowledged before it.
    assert_eq!(files, vec![(45, 14139, "TRUNCATED".to_string())]);
}

/// HTTP: with Suricata's compiled-in 4 KiB body limit (a suricata.yaml without libhtp
/// settings) the file is cut there; without a body limit, at the stream depth. Both are
/// logged on the next packet of the file's direction, before the transaction completes.
#[test]
fn http_download_truncated_at_the_limit_and_depth_as_suricata() {
    let t = |v: &[(u64, u64, &str)]| {
        v.iter()
            .map(|(p, s, st)| (*p, *s, st.to_string()))
            .collect::<Vec<_>>()
    };
    let files = run(http_capture(), "depth-http-limit", "");
    assert_eq!(files, t(&[(13, 4096, "TRUNCATED")]));
    let nolimit =
        "app-layer:\n  protocols:\n    http:\n      libhtp:\n        default-config:\n          \
                   response-body-limit: 0\n";
    let files = run(http_capture(), "depth-http", nolimit);
    assert_eq!(files, t(HTTP_DEPTH_EXPECTED));
}

/// Suricata 7.0.10's `fileinfo` (packet, size, state) for the download cut at the depth.
const HTTP_DEPTH_EXPECTED: &[(u64, u64, &str)] = &[(33, 19518, "TRUNCATED")];

/// NFS (no truncate callback in Suricata, but the parser's `TRUNC` flag ends the open files
/// of the direction): the file read over NFSv3 ends `TRUNCATED` on the packet that takes the
/// replies past the 20 KiB depth, with the data the READ reply streamed so far.
#[test]
fn nfs_read_truncated_at_the_depth_as_suricata() {
    let files = run(nfs_capture(), "depth-nfs", "");
    assert_eq!(
        files,
        NFS_DEPTH_EXPECTED
            .iter()
            .map(|(p, s, st)| (*p, *s, st.to_string()))
            .collect::<Vec<_>>()
    );
}

/// Suricata 7.0.10's `fileinfo` (packet, size, state) for the NFS read cut at the depth.
const NFS_DEPTH_EXPECTED: &[(u64, u64, &str)] = &[(40, 19052, "TRUNCATED")];

/// SMB (zeek `smb_smb2.pcap`, a 1,508,939-byte file written): `app-layer.protocols.smb.
/// stream-depth` raises the session's depth only (Suricata's `TcpSessionSetReassemblyDepth`),
/// and the WRITE in progress when the requests pass it gives the file the data that
/// arrived of it (Suricata streams partial WRITE records to the file), the file then
/// `TRUNCATED` and logged at once. (packet, size, state) as Suricata 7.0.10's for each
/// (smb stream-depth, stream.reassembly.depth); unlimited, the file closes and is logged
/// with the next request after the CLOSE response.
#[test]
fn smb_write_truncated_at_the_depth_as_suricata() {
    let Some(pcap) = common::shared_file("corpus/pcaps/zeek/smb_smb2.pcap") else {
        return;
    };
    let cases: [(&str, &str, (u64, u64, &str)); 4] = [
        ("20kb", "10kb", (50, 5724, "TRUNCATED")),
        ("500kb", "10kb", (411, 501_312, "TRUNCATED")),
        ("20kb", "1mb", (803, 983_040, "TRUNCATED")),
        ("0", "1mb", (1166, 1_508_939, "CLOSED")),
    ];
    for (smb, global, (p, size, st)) in cases {
        let dir = TempDir::new(&format!("depth-smb-{smb}-{global}"));
        let a = format!("app-layer.protocols.smb.stream-depth={smb}");
        let b = format!("stream.reassembly.depth={global}");
        let files = run_on(&dir, &pcap, "", &["--set", &a, "--set", &b]);
        assert_eq!(
            files,
            vec![(p, size, st.to_string())],
            "smb {smb}, global {global}"
        );
    }
}
