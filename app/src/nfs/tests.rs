//! NFS parser tests: hand-built ONC RPC / NFSv3 / NFSv2 messages driven through the
//! registry's `AppParser` trait, as the engine drives them.

use super::*;
use crate::registry::TxMatch;

const MACHINE: &[u8] = b"cli4";

fn be(v: &mut Vec<u8>, w: u32) {
    v.extend_from_slice(&w.to_be_bytes());
}

/// XDR opaque: length, bytes, padding.
fn opaque(v: &mut Vec<u8>, b: &[u8]) {
    be(v, b.len() as u32);
    v.extend_from_slice(b);
    v.resize(v.len() + fill_of(b.len() as u32) as usize, 0);
}

/// An RPC call (no record marker): AUTH_UNIX credentials (machine `cli4`, uid 1000,
/// gid 100), a null verifier, then `args`.
fn call(xid: u32, vers: u32, procedure: u32, args: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for w in [xid, 0, 2, NFS_PROGRAM, vers, procedure] {
        be(&mut v, w);
    }
    let mut creds = Vec::new();
    be(&mut creds, 0x1234); // stamp
    opaque(&mut creds, MACHINE);
    be(&mut creds, 1000);
    be(&mut creds, 100);
    be(&mut creds, 0); // no auxiliary gids
    be(&mut v, 1);
    opaque(&mut v, &creds);
    be(&mut v, 0);
    be(&mut v, 0);
    v.extend_from_slice(args);
    v
}

/// An accepted RPC reply (no record marker) with `res`.
fn reply(xid: u32, res: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for w in [xid, 1, 0, 0, 0, 0] {
        be(&mut v, w);
    }
    v.extend_from_slice(res);
    v
}

/// One TCP record: the last-fragment marker, then the message.
fn rec(msg: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    be(&mut v, 0x8000_0000 | msg.len() as u32);
    v.extend_from_slice(msg);
    v
}

const DIR_FH: &[u8] = b"dir-handle-0001!";
const FILE_FH: &[u8] = b"file-handle-0002";

fn lookup_call(xid: u32, name: &[u8]) -> Vec<u8> {
    let mut a = Vec::new();
    opaque(&mut a, DIR_FH);
    opaque(&mut a, name);
    call(xid, 3, proc3::LOOKUP, &a)
}

/// LOOKUP3res: OK, the object's handle, no attributes.
fn lookup_reply(xid: u32, status: u32) -> Vec<u8> {
    let mut r = Vec::new();
    be(&mut r, status);
    opaque(&mut r, FILE_FH);
    be(&mut r, 0);
    be(&mut r, 0);
    reply(xid, &r)
}

/// WRITE3args: the file handle, offset, count, stable, data.
fn write_call(xid: u32, offset: u64, stable: u32, data: &[u8]) -> Vec<u8> {
    let mut a = Vec::new();
    opaque(&mut a, FILE_FH);
    be(&mut a, (offset >> 32) as u32);
    be(&mut a, offset as u32);
    be(&mut a, data.len() as u32);
    be(&mut a, stable);
    opaque(&mut a, data);
    call(xid, 3, proc3::WRITE, &a)
}

fn commit_call(xid: u32) -> Vec<u8> {
    let mut a = Vec::new();
    opaque(&mut a, FILE_FH);
    a.extend_from_slice(&[0; 12]);
    call(xid, 3, proc3::COMMIT, &a)
}

/// A reply whose results start with NFS3_OK (WRITE, COMMIT: the rest is not read).
fn ok_reply(xid: u32) -> Vec<u8> {
    reply(xid, &[0; 16])
}

fn tcp() -> NfsState {
    NfsState::new(NfsConfig::default(), FileConfig::default(), false)
}

fn udp() -> NfsState {
    NfsState::new(NfsConfig::default(), FileConfig::default(), true)
}

/// What a transaction is, as the logger and the keywords see it. The chunk count is left
/// out: Suricata counts every piece of file data handed to the tracker, so it depends on
/// how the stream was cut.
fn summary(s: &NfsState) -> Vec<String> {
    s.txs()
        .iter()
        .map(|t| {
            let file = t.file.as_ref().map(|f| {
                let (size, done) = f
                    .tracker
                    .file
                    .as_ref()
                    .map_or((0, false), |x| (x.size(), x.is_done()));
                (f.dir, f.last_xid, size, done, f.head.clone())
            });
            format!(
                "{} xid={} proc={} v={} name={:?} st={}/{} done={}/{} first={} last={} ev={} {:?}",
                t.id,
                t.xid,
                t.procedure,
                t.nfs_version,
                String::from_utf8_lossy(&t.file_name),
                t.rpc_status,
                t.nfs_status,
                t.request_done,
                t.response_done,
                t.is_first,
                t.is_last,
                t.events,
                file
            )
        })
        .collect()
}

/// The `rpc` and `nfs` objects of an alert on `tx`.
fn alert_json(s: &NfsState, tx: u64) -> serde_json::Value {
    let mut w = JsonWriter::new();
    w.start_object();
    assert!(s.alert_members(tx, &mut w));
    w.close();
    serde_json::from_slice(w.as_bytes()).unwrap()
}

fn drive(s: &mut NfsState, msgs: &[(Dir, Vec<u8>)]) {
    for (d, m) in msgs {
        s.parse(*d, m);
    }
}

#[test]
fn probes_as_suricata() {
    let c = rec(&lookup_call(1, b"a"));
    assert_eq!(probe_tcp(Dir::ToServer, &c), Probe::Yes);
    assert_eq!(
        probe_tcp(Dir::ToServer, b"GET / HTTP/1.1\r\n\r\n"),
        Probe::No
    );
    assert_eq!(probe_udp(Dir::ToServer, &lookup_call(1, b"a")), Probe::Yes);
    assert_eq!(probe_udp(Dir::ToServer, &[0xff; 40]), Probe::No);
}

#[test]
fn v3_call_and_reply_make_one_transaction() {
    let mut s = tcp();
    assert!(!s.parse(Dir::ToServer, &rec(&lookup_call(0x11, b"hosts"))));
    assert_eq!(s.tx_count(), 1);
    assert!(s.tx(0).unwrap().request_done && !s.tx(0).unwrap().response_done);
    assert!(!s.parse(Dir::ToClient, &rec(&lookup_reply(0x11, 0))));
    assert_eq!(s.tx_count(), 1);
    let t = s.tx(0).unwrap();
    assert!(t.response_done);
    assert_eq!(t.events, 0);
    assert_eq!(s.complete_in(Dir::ToClient), 1);
    let j = alert_json(&s, 0);
    assert_eq!(j["rpc"]["xid"], 0x11);
    assert_eq!(j["rpc"]["status"], "ACCEPTED");
    assert_eq!(j["rpc"]["auth_type"], "UNIX");
    assert_eq!(j["rpc"]["creds"]["machine_name"], "cli4");
    assert_eq!(j["rpc"]["creds"]["uid"], 1000);
    assert_eq!(j["rpc"]["creds"]["gid"], 100);
    assert_eq!(j["nfs"]["version"], 3);
    assert_eq!(j["nfs"]["procedure"], "LOOKUP");
    assert_eq!(j["nfs"]["filename"], "hosts");
    assert_eq!(j["nfs"]["id"], 1);
    assert_eq!(j["nfs"]["file_tx"], false);
    assert_eq!(j["nfs"]["type"], "response");
    assert_eq!(j["nfs"]["status"], "OK");
    // An error status is named as Suricata names it.
    let mut s = tcp();
    drive(
        &mut s,
        &[
            (Dir::ToServer, rec(&lookup_call(2, b"nope"))),
            (Dir::ToClient, rec(&lookup_reply(2, 2))),
        ],
    );
    assert_eq!(alert_json(&s, 0)["nfs"]["status"], "ERR_NOENT");
}

fn session() -> Vec<(Dir, Vec<u8>)> {
    let data: Vec<u8> = (0..600u32).map(|i| (i % 251) as u8).collect();
    vec![
        (Dir::ToServer, rec(&lookup_call(1, b"notes.txt"))),
        (Dir::ToClient, rec(&lookup_reply(1, 0))),
        (Dir::ToServer, rec(&write_call(2, 0, 0, &data))),
        (Dir::ToClient, rec(&ok_reply(2))),
        (Dir::ToServer, rec(&write_call(3, 600, 0, b"tail"))),
        (Dir::ToClient, rec(&ok_reply(3))),
        (Dir::ToServer, rec(&commit_call(4))),
        (Dir::ToClient, rec(&ok_reply(4))),
    ]
}

#[test]
fn split_at_every_byte_and_coalesced_records_give_the_same_transactions() {
    let msgs = session();
    let mut whole = tcp();
    drive(&mut whole, &msgs);
    let want = summary(&whole);
    assert_eq!(want.len(), 2, "{want:?}");
    // Each record cut in two at every byte.
    for (i, (d, m)) in msgs.iter().enumerate() {
        for k in 1..m.len() {
            let mut s = tcp();
            drive(&mut s, &msgs[..i]);
            assert!(!s.parse(*d, &m[..k]));
            assert!(!s.parse(*d, &m[k..]));
            drive(&mut s, &msgs[i + 1..]);
            assert_eq!(summary(&s), want, "record {i} split at {k}");
        }
    }
    // After the LOOKUP (its reply names the handle), the calls in one segment and the
    // replies in another.
    let mut s = tcp();
    drive(&mut s, &msgs[..2]);
    let mut calls = Vec::new();
    let mut replies = Vec::new();
    for (d, m) in &msgs[2..] {
        match d {
            Dir::ToServer => calls.extend_from_slice(m),
            Dir::ToClient => replies.extend_from_slice(m),
        }
    }
    assert!(!s.parse(Dir::ToServer, &calls));
    assert!(!s.parse(Dir::ToClient, &replies));
    assert_eq!(summary(&s), want);
    // Byte by byte.
    let mut s = tcp();
    for (d, m) in &msgs {
        for b in m {
            assert!(!s.parse(*d, std::slice::from_ref(b)));
        }
    }
    assert_eq!(summary(&s), want);
}

#[test]
fn write_makes_a_file_transaction_named_by_lookup_closed_by_commit() {
    let mut s = tcp();
    let msgs = session();
    drive(&mut s, &msgs[..6]);
    let t = s.tx(1).unwrap();
    assert!(t.is_file_tx && t.is_first && !t.is_last);
    let f = t.file.as_ref().unwrap();
    assert_eq!(f.dir, Dir::ToServer);
    let file = f.tracker.file.as_ref().unwrap();
    assert_eq!(file.name(), b"notes.txt");
    assert_eq!(file.size(), 604);
    assert!(!file.is_done());
    drive(&mut s, &msgs[6..]);
    let t = s.tx(1).unwrap();
    assert!(t.is_last && t.request_done);
    let f = t.file.as_ref().unwrap();
    assert_eq!(f.additional_procs, vec![proc3::COMMIT]);
    assert_eq!(f.last_xid, 4);
    assert_eq!(f.chunk_count, 2);
    assert!(f.tracker.file.as_ref().unwrap().is_done());
    assert_eq!(&f.head[600..], b"tail");
    // file.name and file.data, to the server only.
    let mut got = Vec::new();
    assert!(s.buffer(1, BUF_FILE_NAME, Dir::ToServer, &mut |b| {
        got = b.to_vec();
        true
    }));
    assert_eq!(got, b"notes.txt");
    assert_eq!(
        s.buffer_ready(1, BUF_FILE_DATA, Dir::ToServer, false),
        Some(true)
    );
    assert!(!s.buffer(1, BUF_FILE_NAME, Dir::ToClient, &mut |_| true));
    let mut n = 0;
    s.files(1, Dir::ToServer, &mut |_| n += 1);
    s.files(1, Dir::ToClient, &mut |_| n += 10);
    assert_eq!(n, 1);
    let j = alert_json(&s, 1);
    assert_eq!(j["nfs"]["procedure"], "WRITE");
    assert_eq!(j["nfs"]["file_tx"], true);
    assert_eq!(j["nfs"]["write"]["first"], true);
    assert_eq!(j["nfs"]["write"]["last"], true);
    assert_eq!(j["nfs"]["write"]["last_xid"], 4);
    assert_eq!(j["nfs"]["write"]["chunks"], 2);
}

#[test]
fn a_file_sync_write_closes_the_file() {
    let mut s = tcp();
    drive(
        &mut s,
        &[
            (Dir::ToServer, rec(&write_call(9, 0, 2, b"all of it"))),
            (Dir::ToClient, rec(&ok_reply(9))),
        ],
    );
    let t = s.tx(0).unwrap();
    assert!(t.is_first && t.is_last && t.request_done);
    let file = t.file.as_ref().unwrap().tracker.file.as_ref().unwrap();
    assert!(file.is_done());
    assert_eq!(file.size(), 9);
}

#[test]
fn a_record_without_the_last_fragment_bit_is_one_message() {
    // Suricata reads each fragment as a message of its own: the marker's last-fragment
    // bit is not required.
    let mut s = tcp();
    let mut c = rec(&lookup_call(5, b"x"));
    c[0] &= 0x7f;
    assert!(!s.parse(Dir::ToServer, &c));
    let mut r = rec(&lookup_reply(5, 0));
    r[0] &= 0x7f;
    assert!(!s.parse(Dir::ToClient, &r));
    assert_eq!(s.tx_count(), 1);
    let t = s.tx(0).unwrap();
    assert!(t.request_done && t.response_done);
    assert_eq!(t.file_name, b"x");
}

#[test]
fn udp_datagrams() {
    let mut s = udp();
    assert!(!s.parse(Dir::ToServer, &lookup_call(7, b"etc")));
    assert!(!s.parse(Dir::ToClient, &lookup_reply(7, 0)));
    assert!(!s.parse(Dir::ToServer, &write_call(8, 0, 2, b"datagram")));
    assert!(!s.parse(Dir::ToClient, &ok_reply(8)));
    assert_eq!(s.tx_count(), 2);
    let t = s.tx(0).unwrap();
    assert!(t.request_done && t.response_done);
    assert_eq!(t.file_name, b"etc");
    let t = s.tx(1).unwrap();
    assert!(t.is_file_tx && t.is_last);
    let file = t.file.as_ref().unwrap().tracker.file.as_ref().unwrap();
    assert_eq!(file.name(), b"etc");
    assert_eq!(file.size(), 8);
    // A reply to no call and a non-NFS datagram make nothing.
    assert!(!s.parse(Dir::ToClient, &lookup_reply(99, 0)));
    assert!(!s.parse(Dir::ToServer, &[1, 2, 3]));
    assert_eq!(s.tx_count(), 2);
}

#[test]
fn v2_call_and_reply() {
    let mut s = tcp();
    // NFSv2 LOOKUP (procedure 4): a 32-byte handle, then the name.
    let mut a = vec![7u8; 32];
    opaque(&mut a, b"old");
    drive(
        &mut s,
        &[
            (Dir::ToServer, rec(&call(3, 2, 4, &a))),
            (Dir::ToClient, rec(&reply(3, &[0; 4]))),
        ],
    );
    assert_eq!(s.tx_count(), 1);
    let j = alert_json(&s, 0);
    assert_eq!(j["nfs"]["version"], 2);
    assert_eq!(j["nfs"]["procedure"], "LOOKUP");
}

#[test]
fn max_tx_raises_too_many_transactions_and_bounds_memory() {
    let cfg = NfsConfig { max_tx: 4 };
    let mut s = NfsState::new(cfg, FileConfig::default(), false);
    // Calls with no replies: each opens a transaction.
    for xid in 0..10 {
        assert!(!s.parse(Dir::ToServer, &rec(&lookup_call(xid, b"f"))));
    }
    assert_eq!(s.tx_count(), 10);
    let ev = EVENTS
        .iter()
        .position(|e| *e == "too_many_transactions")
        .unwrap() as u16;
    assert!(s.has_event(0, ev));
    assert!(s.tx(0).unwrap().response_done);
    assert!(!s.has_event(9, ev));
    assert!(!s.tx(9).unwrap().response_done);
    let mut seen = Vec::new();
    s.drain_events(0, false, &mut |a| seen.push((a.tx_id, a.name)));
    assert!(seen.contains(&(0, "too_many_transactions")));
    // The xid map stays bounded however many calls go unanswered.
    let mut s = tcp();
    let c = rec(&call(0, 3, proc3::NULL, &[]));
    let mut many = Vec::new();
    for xid in 0..(MAX_MAP as u32 + 500) {
        let mut m = c.clone();
        m[4..8].copy_from_slice(&xid.to_be_bytes());
        many.extend_from_slice(&m);
    }
    assert!(!s.parse(Dir::ToServer, &many));
    assert!(s.requestmap.len() <= MAX_MAP);
}

#[test]
fn malformed_data_raises_malformed_data() {
    let ev = EVENTS.iter().position(|e| *e == "malformed_data").unwrap() as u16;
    // A LOOKUP reply cut inside its handle.
    let mut s = tcp();
    s.parse(Dir::ToServer, &rec(&lookup_call(1, b"a")));
    let mut r = reply(1, &[]);
    be(&mut r, 0);
    be(&mut r, 64);
    assert!(!s.parse(Dir::ToClient, &rec(&r)));
    assert!(s.has_event(0, ev));
    // A record marker too short for a message: the direction gives up.
    let mut s = tcp();
    s.parse(Dir::ToServer, &rec(&lookup_call(1, b"a")));
    assert!(s.parse(Dir::ToServer, &[0x80, 0, 0, 4, 0, 0, 0, 0]));
    assert!(s.has_event(0, ev));
    // Nothing more is parsed on the flow.
    assert!(!s.parse(Dir::ToServer, &rec(&lookup_call(2, b"b"))));
    assert_eq!(s.tx_count(), 1);
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_and_truncated_inputs_never_panic() {
    let msgs = session();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..300 {
        for is_udp in [false, true] {
            let mut s = NfsState::new(NfsConfig { max_tx: 8 }, FileConfig::default(), is_udp);
            for (d, m) in &msgs {
                let mut m = if is_udp { m[4..].to_vec() } else { m.clone() };
                // Flip a few bytes, then maybe truncate.
                for _ in 0..(rng.next() % 4) {
                    let i = (rng.next() as usize) % m.len();
                    m[i] = rng.next() as u8;
                }
                if round % 3 == 0 {
                    let n = (rng.next() as usize) % (m.len() + 1);
                    m.truncate(n);
                }
                s.parse(*d, &m);
                if round % 7 == 0 {
                    s.gap(*d, rng.next() % 2000);
                }
            }
            s.close();
            let mut ids = Vec::new();
            s.live_txs(Dir::ToServer, &mut ids);
            for id in ids {
                let _ = alert_json(&s, id);
            }
            assert!(s.txs().len() <= 9 + msgs.len());
        }
    }
    // Pure noise.
    for _ in 0..200 {
        let n = (rng.next() % 300) as usize;
        let b: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        let mut s = tcp();
        s.parse(Dir::ToServer, &b);
        s.parse(Dir::ToClient, &b);
        let mut s = udp();
        s.parse(Dir::ToServer, &b);
        s.parse(Dir::ToClient, &b);
    }
}

fn keyword(name: &str, value: &str) -> Box<dyn TxMatch> {
    let k = detect::KEYWORDS.iter().find(|k| k.name == name).unwrap();
    assert_eq!(k.dir, Some(Dir::ToServer));
    (k.setup)(Some(value)).unwrap()
}

#[test]
fn nfs_procedure_and_version_keywords() {
    let mut s = tcp();
    drive(&mut s, &session());
    let p: &dyn AppParser = &s;
    // tx 0 is LOOKUP (3), tx 1 the WRITE file transaction, COMMIT (21) among its procedures.
    assert_eq!(
        keyword("nfs_procedure", "3").matches(p, 0, Dir::ToServer),
        Some(true)
    );
    assert_eq!(
        keyword("nfs_procedure", "7").matches(p, 0, Dir::ToServer),
        Some(false)
    );
    assert_eq!(
        keyword("nfs_procedure", "7").matches(p, 1, Dir::ToServer),
        Some(true)
    );
    assert_eq!(
        keyword("nfs_procedure", "21").matches(p, 1, Dir::ToServer),
        Some(true)
    );
    assert_eq!(
        keyword("nfs_procedure", ">20").matches(p, 1, Dir::ToServer),
        Some(true)
    );
    assert_eq!(
        keyword("nfs_procedure", "<3").matches(p, 0, Dir::ToServer),
        Some(false)
    );
    assert_eq!(
        keyword("nfs_procedure", "lookup").matches(p, 0, Dir::ToServer),
        Some(true)
    );
    assert_eq!(
        keyword("nfs_procedure", "WRITE").matches(p, 0, Dir::ToServer),
        Some(false)
    );
    for name in ["nfs.version", "nfs_version"] {
        assert_eq!(keyword(name, "3").matches(p, 0, Dir::ToServer), Some(true));
        assert_eq!(keyword(name, "2").matches(p, 1, Dir::ToServer), Some(false));
        assert_eq!(
            keyword(name, "2-4").matches(p, 1, Dir::ToServer),
            Some(true)
        );
    }
    // No such transaction.
    assert_eq!(
        keyword("nfs_procedure", "3").matches(p, 99, Dir::ToServer),
        None
    );
    assert!((detect::KEYWORDS[0].setup)(None).is_err());
}

/// Frames of `data` parsed at absolute offset `off`: (type, offset, length).
fn frames_of(s: &mut NfsState, dir: Dir, off: u64, data: &[u8]) -> Vec<(u8, u64, i64)> {
    let mut fr = crate::frames::Frames::default();
    let mut fc = crate::frames::FrameCtx {
        offset: off,
        mask: u64::MAX,
        frames: &mut fr,
    };
    s.parse_frames(dir, data, &mut fc);
    fr.list.iter().map(|f| (f.ty, f.offset, f.len)).collect()
}

#[test]
fn tcp_frames_as_suricata() {
    let mut s = tcp();
    let c = rec(&lookup_call(1, b"notes.txt"));
    // rpc.pdu (the record to the end of the input), rpc.creds (flavour, length, body at
    // 28), nfs.pdu (the arguments).
    let args = c.len() - 68;
    assert_eq!(
        frames_of(&mut s, Dir::ToServer, 100, &c),
        vec![
            (FRAME_RPC_PDU, 100, c.len() as i64),
            (FRAME_RPC_CREDS, 128, 32),
            (FRAME_NFS_PDU, 100 + 68, args as i64),
        ]
    );
    // A reply: rpc.pdu, rpc.hdr (12 bytes), rpc.data (the rest), nfs.pdu and nfs.status.
    let r = rec(&lookup_reply(1, 0));
    let res = r.len() - 28;
    assert_eq!(
        frames_of(&mut s, Dir::ToClient, 0, &r),
        vec![
            (FRAME_RPC_PDU, 0, r.len() as i64),
            (FRAME_RPC_HDR, 0, 12),
            (FRAME_RPC_DATA, 12, r.len() as i64 - 12),
            (FRAME_NFS_PDU, 28, res as i64),
            (FRAME_NFS_STATUS, 28, 4),
        ]
    );
    // A record in two segments: its rpc.pdu is made on the first pass with what was in,
    // and again, whole, on the pass that completes it (Suricata asks for the whole record
    // before it calls the parser again: the 10 bytes after the first segment call nothing).
    let c = rec(&lookup_call(2, b"x"));
    let off = 1000;
    assert_eq!(
        frames_of(&mut s, Dir::ToServer, off, &c[..40]),
        vec![(FRAME_RPC_PDU, off, 40)]
    );
    assert!(frames_of(&mut s, Dir::ToServer, off + 40, &c[40..50]).is_empty());
    let f = frames_of(&mut s, Dir::ToServer, off + 50, &c[50..]);
    assert_eq!(f[0], (FRAME_RPC_PDU, off, c.len() as i64));
    assert_eq!(f.len(), 3);
    assert_eq!(s.tx_count(), 2);
}

#[test]
fn udp_frames_as_suricata() {
    let mut s = udp();
    let c = lookup_call(3, b"a");
    assert_eq!(
        frames_of(&mut s, Dir::ToServer, 0, &c),
        vec![
            (FRAME_RPC_PDU, 0, c.len() as i64),
            (FRAME_RPC_CREDS, 24, 32),
            (FRAME_NFS_PDU, 64, c.len() as i64 - 64),
        ]
    );
    let r = lookup_reply(3, 0);
    assert_eq!(
        frames_of(&mut s, Dir::ToClient, 0, &r),
        vec![
            (FRAME_RPC_PDU, 0, r.len() as i64),
            (FRAME_RPC_HDR, 0, 8),
            (FRAME_RPC_DATA, 8, r.len() as i64 - 8),
            (FRAME_NFS_PDU, 24, r.len() as i64 - 24),
            (FRAME_NFS_STATUS, 24, 4),
        ]
    );
    // A reply to no known call: only the RPC frames.
    let r = lookup_reply(77, 0);
    assert_eq!(frames_of(&mut s, Dir::ToClient, 0, &r).len(), 3);
}

// Hostile traffic: record-marking fragment floods, huge fragment length claims, huge names
// never answered, NFSv4 COMPOUNDs of thousands of ops, READDIRPLUS replies of thousands of
// entries. Memory stays within the record buffer, the maps' count and byte bounds and the
// transaction bound; limit hits show (`too_many_transactions`, `malformed_data`,
// `limits()`).

/// One TCP record-marking fragment without the last-fragment bit.
fn frag(msg: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    be(&mut v, msg.len() as u32);
    v.extend_from_slice(msg);
    v
}

#[test]
fn hostile_fragment_chain_flood_is_bounded() {
    // 20,000 non-last fragments, each a LOOKUP never answered (Suricata takes each fragment
    // as a message): max-tx closes them, the hard bound (1024 at max-tx 8) caps the list,
    // the call map stays at MAX_MAP.
    let mut s = NfsState::new(NfsConfig { max_tx: 8 }, FileConfig::default(), false);
    let mut chunk = Vec::new();
    for xid in 0..20_000u32 {
        chunk.extend(frag(&lookup_call(xid, b"name")));
        if chunk.len() > 60_000 {
            assert!(!s.parse(Dir::ToServer, &chunk));
            chunk.clear();
        }
    }
    assert!(!s.parse(Dir::ToServer, &chunk));
    assert_eq!(s.tx_count(), 20_000);
    assert!(s.txs().len() <= 1024, "{} live", s.txs().len());
    let ev = EVENTS
        .iter()
        .position(|e| *e == "too_many_transactions")
        .unwrap() as u16;
    assert!(s.txs().iter().any(|t| s.has_event(t.id, ev)));
    let l = s.limits();
    assert!(l.txs_evicted > 0 && l.requests_evicted > 0, "{l:?}");
    assert!(s.requestmap.len() <= MAX_MAP);
    assert!(s.memuse() < 2 << 20, "memuse {}", s.memuse());
}

#[test]
fn hostile_fragment_length_claims_give_up_past_the_record_buffer() {
    // A call claiming 2 GiB: buffered up to MAX_RECORD_BUF, then `malformed_data` and the
    // flow is given up. Under the bound, the record waits whole.
    let mut s = tcp();
    assert!(!s.parse(Dir::ToServer, &rec(&lookup_call(1, b"a"))));
    let mut m = lookup_call(2, b"b");
    let mut big = Vec::new();
    be(&mut big, 0x7fff_ffff);
    big.append(&mut m);
    assert!(s.parse(Dir::ToServer, &big));
    let ev = EVENTS.iter().position(|e| *e == "malformed_data").unwrap() as u16;
    assert!(s.has_event(0, ev));
    assert!(!s.parse(Dir::ToServer, &rec(&lookup_call(3, b"c"))));
    assert_eq!(s.tx_count(), 1);
    // 900 KB claimed, fed in 1400-byte segments: held (under 1 MiB), no event.
    let mut s = tcp();
    let mut a = Vec::new();
    opaque(&mut a, DIR_FH);
    opaque(&mut a, &vec![b'n'; 900_000]);
    let r = rec(&call(9, 3, proc3::LOOKUP, &a));
    for seg in r.chunks(1400) {
        assert!(!s.parse(Dir::ToServer, seg));
        // The buffer (capacity doubling) and, at the end, the transaction's and the call
        // map's copies of the name.
        assert!(s.memuse() < 4 * MAX_RECORD_BUF, "memuse {}", s.memuse());
    }
    assert_eq!(s.tx_count(), 1);
    assert_eq!(s.dirs[0].buf.capacity(), 0);
    assert_eq!(s.tx(0).unwrap().file_name.len(), 900_000);
}

#[test]
fn hostile_huge_names_never_answered_stay_within_the_map_bytes() {
    // 400 LOOKUPs of 60 KB names without replies (24 MB of names): the call map keeps at
    // most MAX_MAP_BYTES of them.
    let mut s = NfsState::new(NfsConfig { max_tx: 8 }, FileConfig::default(), false);
    let name = vec![b'x'; 60_000];
    for xid in 0..400u32 {
        assert!(!s.parse(Dir::ToServer, &rec(&lookup_call(xid, &name))));
    }
    assert!(s.request_bytes <= MAX_MAP_BYTES);
    assert!(s.limits().requests_evicted > 0);
    assert_eq!(
        s.request_bytes,
        s.requestmap.values().map(xidmap_bytes).sum::<usize>()
    );
    // A reply to a forgotten call makes nothing; one to a kept call completes it.
    assert!(!s.requestmap.contains_key(&0));
    assert!(!s.parse(Dir::ToClient, &rec(&lookup_reply(0, 2))));
    assert_eq!(s.tx_count(), 400);
    assert_eq!(s.tx(0).unwrap().nfs_status, 0);
    assert!(!s.tx(399).unwrap().response_done);
    assert!(!s.parse(Dir::ToClient, &rec(&lookup_reply(399, 0))));
    assert!(s.tx(399).unwrap().response_done);
}

/// An NFSv4 COMPOUND call: `n` ops claimed, GETFH repeated `getfh` times, then REMOVE "x".
fn compound(xid: u32, n: u32, getfh: usize) -> Vec<u8> {
    let mut a = Vec::new();
    opaque(&mut a, b"");
    be(&mut a, 0);
    be(&mut a, n);
    for _ in 0..getfh {
        be(&mut a, 10);
    }
    be(&mut a, 28);
    opaque(&mut a, b"x");
    call(xid, 4, 1, &a)
}

#[test]
fn hostile_compound_with_thousands_of_ops_is_malformed() {
    // 64 ops (Suricata's NFSD_MAX_OPS_PER_COMPOUND): parsed. 65 to 4 billion: refused with
    // `malformed_data` on the flow's last transaction, nothing allocated for the count.
    let mut s = tcp();
    assert!(!s.parse(Dir::ToServer, &rec(&compound(1, 64, 63))));
    assert_eq!(s.tx_count(), 1);
    assert_eq!(s.tx(0).unwrap().file_name, b"x");
    let ev = EVENTS.iter().position(|e| *e == "malformed_data").unwrap() as u16;
    assert!(!s.has_event(0, ev));
    for (xid, n, ops) in [(2, 65, 64), (3, 5000, 4999), (4, u32::MAX, 10)] {
        assert!(!s.parse(Dir::ToServer, &rec(&compound(xid, n, ops))));
    }
    assert_eq!(s.tx_count(), 1);
    assert!(s.has_event(0, ev));
    assert!(s.memuse() < 64 * 1024);
}

#[test]
fn hostile_readdirplus_with_thousands_of_entries_is_bounded() {
    // A READDIRPLUS reply of 10,000 entries with handles (600 KB): every name goes through
    // the handle-to-name map, which keeps at most MAX_MAP.
    let mut s = tcp();
    let mut a = Vec::new();
    opaque(&mut a, DIR_FH);
    a.extend_from_slice(&[0; 24]);
    assert!(!s.parse(Dir::ToServer, &rec(&call(7, 3, proc3::READDIRPLUS, &a))));
    let mut r = Vec::new();
    be(&mut r, 0); // NFS3_OK
    be(&mut r, 0); // no dir attributes
    r.extend_from_slice(&[0; 8]); // cookieverf
    for i in 0..10_000u32 {
        be(&mut r, 1);
        r.extend_from_slice(&u64::from(i).to_be_bytes());
        opaque(&mut r, format!("f{i:07}").as_bytes());
        r.extend_from_slice(&[0; 8]);
        be(&mut r, 0);
        be(&mut r, 1);
        opaque(&mut r, format!("handle-{i:09}").as_bytes());
    }
    be(&mut r, 0);
    be(&mut r, 1);
    let m = rec(&reply(7, &r));
    assert!(m.len() > 500_000);
    for seg in m.chunks(1400) {
        assert!(!s.parse(Dir::ToClient, seg));
    }
    assert_eq!(s.namemap.len(), MAX_MAP);
    assert_eq!(s.limits().names_evicted, 10_000 - MAX_MAP as u64);
    assert!(s.name_bytes <= MAX_MAP_BYTES);
    assert!(s.tx(0).unwrap().response_done);
    assert!(s.memuse() < 3 << 20, "memuse {}", s.memuse());
}
