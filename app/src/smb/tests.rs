use super::*;
use crate::dcerpc::{setup_iface, setup_opnum};

fn hdr(cmd: u16, resp: bool, status: u32, msg: u64, tree: u32, ssn: u64) -> Vec<u8> {
    let mut h = vec![0u8; 64];
    h[..4].copy_from_slice(b"\xfeSMB");
    h[4] = 64;
    h[8..12].copy_from_slice(&status.to_le_bytes());
    h[12..14].copy_from_slice(&cmd.to_le_bytes());
    h[16..20].copy_from_slice(&(u32::from(resp)).to_le_bytes());
    h[24..32].copy_from_slice(&msg.to_le_bytes());
    h[36..40].copy_from_slice(&tree.to_le_bytes());
    h[40..48].copy_from_slice(&ssn.to_le_bytes());
    h
}

fn nbss(m: &[u8]) -> Vec<u8> {
    let mut v = vec![0, 0, (m.len() >> 8) as u8, m.len() as u8];
    v.extend_from_slice(m);
    v
}

fn utf16(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(|c| c.to_le_bytes()).collect()
}

fn tree_connect(msg: u64, share: &str) -> Vec<u8> {
    let mut m = hdr(3, false, 0, msg, 0, 7);
    let name = utf16(share);
    let mut b = vec![9, 0, 0, 0];
    b.extend_from_slice(&72u16.to_le_bytes());
    b.extend_from_slice(&(name.len() as u16).to_le_bytes());
    m.extend_from_slice(&b);
    m.extend_from_slice(&name);
    m
}

fn tree_connect_resp(msg: u64, tree: u32, share_type: u8) -> Vec<u8> {
    let mut m = hdr(3, true, 0, msg, tree, 7);
    m.extend_from_slice(&[16, 0, share_type, 0]);
    m.extend_from_slice(&[0; 12]);
    m
}

fn feed(s: &mut SmbState, dir: Dir, d: &[u8], step: usize) {
    for c in d.chunks(step.max(1)) {
        AppParser::parse(s, dir, c);
    }
}

#[test]
fn tree_connect_share_and_pipe_split_anywhere() {
    for step in [1, 3, 7, 1000] {
        let mut s = SmbState::new(FileConfig::default());
        let mut ts = nbss(&tree_connect(4, "\\\\10.0.0.12\\smb2"));
        ts.extend(nbss(&tree_connect(6, "\\\\10.0.0.12\\IPC$")));
        feed(&mut s, Dir::ToServer, &ts, step);
        let mut tc = nbss(&tree_connect_resp(4, 1, 1));
        tc.extend(nbss(&tree_connect_resp(6, 5, 2)));
        feed(&mut s, Dir::ToClient, &tc, step);
        assert_eq!(s.tx_count(), 2);
        let mut got = Vec::new();
        assert!(s.buffer(0, BUF_SHARE, Dir::ToServer, &mut |b| {
            got = b.to_vec();
            true
        }));
        assert_eq!(got, b"\\\\10.0.0.12\\smb2");
        assert!(!s.buffer(0, BUF_PIPE, Dir::ToServer, &mut |_| true));
        assert!(s.buffer(1, BUF_PIPE, Dir::ToServer, &mut |b| b
            == b"\\\\10.0.0.12\\IPC$"));
        let t = s.tx(1).unwrap();
        assert_eq!((t.tree_id, t.status, t.response_done), (5, Some(0), true));
        let mut w = JsonWriter::new();
        w.start_object();
        s.alert_members(1, &mut w);
        w.close();
        let j = String::from_utf8(w.as_bytes().to_vec()).unwrap();
        assert!(
            j.contains("\"named_pipe\":\"\\\\\\\\10.0.0.12\\\\IPC$\""),
            "{j}"
        );
        assert!(j.contains("\"share_type\":\"PIPE\""), "{j}");
        assert!(
            j.contains("\"command\":\"SMB2_COMMAND_TREE_CONNECT\""),
            "{j}"
        );
    }
}

#[test]
fn write_then_close_makes_a_closed_file() {
    let mut s = SmbState::new(FileConfig::default());
    // CREATE request with a name, response with a GUID.
    let name = utf16("a.txt");
    let mut c = hdr(5, false, 0, 10, 1, 7);
    let mut b = vec![0u8; 56];
    b[0] = 57;
    b[36..40].copy_from_slice(&2u32.to_le_bytes());
    b[44..46].copy_from_slice(&120u16.to_le_bytes());
    b[46..48].copy_from_slice(&(name.len() as u16).to_le_bytes());
    c.extend_from_slice(&b);
    c.extend_from_slice(&name);
    feed(&mut s, Dir::ToServer, &nbss(&c), 5);
    let guid: Vec<u8> = (1..=16).collect();
    let mut r = hdr(5, true, 0, 10, 1, 7);
    let mut rb = vec![0u8; 88];
    rb[0] = 89;
    rb[64..80].copy_from_slice(&guid);
    r.extend_from_slice(&rb);
    feed(&mut s, Dir::ToClient, &nbss(&r), 5);
    // WRITE request "hello" at offset 0.
    let mut w = hdr(9, false, 0, 11, 1, 7);
    let mut wb = vec![0u8; 48];
    wb[0] = 49;
    wb[2..4].copy_from_slice(&112u16.to_le_bytes());
    wb[4..8].copy_from_slice(&5u32.to_le_bytes());
    wb[16..32].copy_from_slice(&guid);
    w.extend_from_slice(&wb);
    w.extend_from_slice(b"hello");
    feed(&mut s, Dir::ToServer, &nbss(&w), 2);
    // CLOSE request.
    let mut cl = hdr(6, false, 0, 12, 1, 7);
    let mut cb = vec![0u8; 24];
    cb[0] = 24;
    cb[8..24].copy_from_slice(&guid);
    cl.extend_from_slice(&cb);
    feed(&mut s, Dir::ToServer, &nbss(&cl), 100);
    let t = s.tx(1).unwrap();
    assert_eq!(t.cmd, 9);
    match &t.data {
        TxData::File { file, name, .. } => {
            assert_eq!(name, b"a.txt");
            assert_eq!(file.size(), 5);
            assert_eq!(file.state(), crate::files::FileState::Closed);
        }
        d => panic!("{d:?}"),
    }
    assert!(t.request_done && t.response_done);
    match &s.tx(0).unwrap().data {
        TxData::Create {
            filename,
            guid: g,
            disposition,
            ..
        } => {
            assert_eq!(
                (filename.as_slice(), g, *disposition),
                (&b"a.txt"[..], &guid, 2)
            );
        }
        d => panic!("{d:?}"),
    }
}

#[test]
fn ntlmssp_auth_fields() {
    let mut m = b"NTLMSSP\0".to_vec();
    m.extend_from_slice(&3u32.to_le_bytes());
    m.resize(72, 0);
    let dom = utf16("CONTOSO");
    let user = utf16("Administrator");
    let host = utf16("SERVER01");
    let mut off = 72u32;
    for (at, f) in [(28, &dom), (36, &user), (44, &host)] {
        m[at..at + 2].copy_from_slice(&(f.len() as u16).to_le_bytes());
        m[at + 4..at + 8].copy_from_slice(&off.to_le_bytes());
        off += f.len() as u32;
    }
    // Empty LM, NTLM response and session key fields after the others.
    for at in [12, 20, 52] {
        m[at + 4..at + 8].copy_from_slice(&off.to_le_bytes());
    }
    m[60..64].copy_from_slice(&(0x0200_0001u32).to_le_bytes());
    m[64..72].copy_from_slice(&[6, 1, 0xb1, 0x1d, 0, 0, 0, 15]);
    for f in [&dom, &user, &host] {
        m.extend_from_slice(f);
    }
    m.push(0);
    let mut blob = vec![0xa1, 0x30];
    blob.extend_from_slice(&m);
    let n = parse_ntlmssp_auth(&blob).unwrap();
    assert_eq!(n.user, b"Administrator");
    assert_eq!(n.domain, b"CONTOSO");
    assert_eq!(n.host, b"SERVER01");
    assert_eq!(n.version.as_deref(), Some("6.1 build 7601 rev 15"));
    assert!(!n.unusual_order);
    assert!(parse_ntlmssp_auth(&blob[..80]).is_none());
    // The user field placed before the domain's end: Suricata's unusual order.
    let mut odd = blob.clone();
    let user_off = 2 + 36 + 4;
    odd[user_off..user_off + 4].copy_from_slice(&74u32.to_le_bytes());
    assert!(parse_ntlmssp_auth(&odd).unwrap().unusual_order);
}

/// A CREATE of `a.txt` answered with GUID 1..=16, on session 7 tree 1.
fn create_a_txt(s: &mut SmbState) -> Vec<u8> {
    create_file(s, "a.txt", 1)
}

/// CREATE of `name` on tree `tree` answered with file id 1..=16 (returned).
fn create_file(s: &mut SmbState, name: &str, tree: u32) -> Vec<u8> {
    let name = utf16(name);
    let mut c = hdr(5, false, 0, 10, tree, 7);
    let mut b = vec![0u8; 56];
    b[0] = 57;
    b[44..46].copy_from_slice(&120u16.to_le_bytes());
    b[46..48].copy_from_slice(&(name.len() as u16).to_le_bytes());
    c.extend_from_slice(&b);
    c.extend_from_slice(&name);
    feed(s, Dir::ToServer, &nbss(&c), 1000);
    let guid: Vec<u8> = (1..=16).collect();
    let mut r = hdr(5, true, 0, 10, tree, 7);
    let mut rb = vec![0u8; 88];
    rb[0] = 89;
    rb[64..80].copy_from_slice(&guid);
    r.extend_from_slice(&rb);
    feed(s, Dir::ToClient, &nbss(&r), 1000);
    guid
}

/// A WRITE of `data` at `off` to file `guid` (message `msg`), claiming `claim` bytes.
fn write_req(msg: u64, guid: &[u8], off: u64, data: &[u8], claim: u32) -> Vec<u8> {
    write_req_on(1, msg, guid, off, data, claim)
}

/// [`write_req`] on tree `tree`.
fn write_req_on(tree: u32, msg: u64, guid: &[u8], off: u64, data: &[u8], claim: u32) -> Vec<u8> {
    let mut w = hdr(9, false, 0, msg, tree, 7);
    let mut wb = vec![0u8; 48];
    wb[0] = 49;
    wb[2..4].copy_from_slice(&112u16.to_le_bytes());
    wb[4..8].copy_from_slice(&claim.to_le_bytes());
    wb[8..16].copy_from_slice(&off.to_le_bytes());
    wb[16..32].copy_from_slice(guid);
    w.extend_from_slice(&wb);
    w.extend_from_slice(data);
    nbss(&w)
}

/// Tree 5 connected to `IPC$`, then pipe `name` opened on it (file id returned).
fn open_pipe(s: &mut SmbState, name: &str) -> Vec<u8> {
    feed(
        s,
        Dir::ToServer,
        &nbss(&tree_connect(6, "\\\\h\\IPC$")),
        100,
    );
    feed(s, Dir::ToClient, &nbss(&tree_connect_resp(6, 5, 2)), 100);
    create_file(s, name, 5)
}

/// A WRITE of all of `data` to pipe `guid` on tree 5.
fn pipe_write(msg: u64, guid: &[u8], data: &[u8]) -> Vec<u8> {
    write_req_on(5, msg, guid, 0, data, data.len() as u32)
}

fn file_of(s: &SmbState) -> &SmbTx {
    s.txs
        .iter()
        .find(|t| matches!(t.data, TxData::File { .. }))
        .expect("a file transaction")
}

fn ev(name: &str) -> u32 {
    1 << PROTOCOL.events.iter().position(|e| *e == name).unwrap()
}

#[test]
fn out_of_order_writes_are_held_until_their_offset_comes() {
    let mut s = SmbState::new(FileConfig::default());
    let guid = create_a_txt(&mut s);
    feed(
        &mut s,
        Dir::ToServer,
        &write_req(12, &guid, 5, b"world", 5),
        1000,
    );
    match &file_of(&s).data {
        TxData::File {
            file, in_flight, ..
        } => {
            assert_eq!((file.size(), *in_flight), (0, 5));
        }
        d => panic!("{d:?}"),
    }
    feed(
        &mut s,
        Dir::ToServer,
        &write_req(11, &guid, 0, b"hello", 5),
        1000,
    );
    match &file_of(&s).data {
        TxData::File {
            file,
            in_flight,
            head,
            ..
        } => {
            assert_eq!((file.size(), *in_flight), (10, 0));
            assert_eq!(head, b"helloworld");
            assert!(!file.has_gaps());
        }
        d => panic!("{d:?}"),
    }
    // A chunk before the tracked offset is an overlap, never appended.
    feed(
        &mut s,
        Dir::ToServer,
        &write_req(13, &guid, 2, b"XX", 2),
        1000,
    );
    let t = file_of(&s);
    assert_ne!(t.events & ev("file_overlap"), 0);
    match &t.data {
        TxData::File { file, .. } => assert_eq!(file.size(), 10),
        d => panic!("{d:?}"),
    }
}

#[test]
fn a_large_write_streams_to_its_file_before_it_is_all_in() {
    // Suricata parses an SMB2 WRITE record once 512 bytes of it are in and streams the rest
    // of its data to the file as it comes: the file has the data that arrived, whatever the
    // segmentation, and the whole of it once the record ended.
    let data: Vec<u8> = (0..4000u32).map(|i| (i % 251) as u8).collect();
    for step in [600usize, 1000, 4096] {
        let mut s = SmbState::new(FileConfig::default());
        let guid = create_a_txt(&mut s);
        let rec = write_req(11, &guid, 0, &data, data.len() as u32);
        let first = &rec[..step.min(rec.len())];
        feed(&mut s, Dir::ToServer, first, 10_000);
        let in_file = |s: &SmbState| match &file_of(s).data {
            TxData::File { file, .. } => file.size(),
            d => panic!("{d:?}"),
        };
        // 4 NBSS + 64 header + 48 WRITE bytes before the data.
        let expect = first.len().saturating_sub(4 + 112).min(data.len()) as u64;
        assert_eq!(in_file(&s), expect, "step {step}");
        feed(&mut s, Dir::ToServer, &rec[first.len()..], 700);
        assert_eq!(in_file(&s), data.len() as u64, "step {step}");
        match &file_of(&s).data {
            TxData::File { head, .. } => assert_eq!(&head[..], &data[..head.len()]),
            d => panic!("{d:?}"),
        }
    }
}

#[test]
fn write_queue_count_and_size_limits_raise_suricata_events() {
    let mut s = SmbState::new(FileConfig::default());
    s.cfg.max_write_queue_cnt = 2;
    let guid = create_a_txt(&mut s);
    for (k, off) in [100u64, 200, 300].iter().enumerate() {
        feed(
            &mut s,
            Dir::ToServer,
            &write_req(20 + k as u64, &guid, *off, b"abcd", 4),
            1000,
        );
    }
    let last = s.txs.back().unwrap();
    assert_ne!(last.events & ev("write_queue_cnt_exceeded"), 0);
    match &file_of(&s).data {
        TxData::File { ooo, in_flight, .. } => assert_eq!((ooo.len(), *in_flight), (2, 8)),
        d => panic!("{d:?}"),
    }
    let mut s = SmbState::new(FileConfig::default());
    s.cfg.max_write_queue_size = 6;
    let guid = create_a_txt(&mut s);
    feed(
        &mut s,
        Dir::ToServer,
        &write_req(20, &guid, 100, b"abcd", 4),
        1000,
    );
    assert_eq!(
        s.txs.back().unwrap().events & ev("write_queue_size_exceeded"),
        0
    );
    feed(
        &mut s,
        Dir::ToServer,
        &write_req(21, &guid, 200, b"abcd", 4),
        1000,
    );
    assert_ne!(
        s.txs.back().unwrap().events & ev("write_queue_size_exceeded"),
        0
    );
}

#[test]
fn writes_over_max_write_size_or_the_record_are_not_followed() {
    let mut s = SmbState::new(FileConfig::default());
    s.cfg.max_write_size = 4;
    let guid = create_a_txt(&mut s);
    feed(
        &mut s,
        Dir::ToServer,
        &write_req(11, &guid, 0, b"hello", 5),
        1000,
    );
    assert!(s.txs.iter().all(|t| !matches!(t.data, TxData::File { .. })));
    assert_ne!(
        s.txs.back().unwrap().events & ev("write_request_too_large"),
        0
    );
    // Claiming more than the record holds.
    let mut s = SmbState::new(FileConfig::default());
    let guid = create_a_txt(&mut s);
    feed(
        &mut s,
        Dir::ToServer,
        &write_req(11, &guid, 0, b"hello", 50),
        1000,
    );
    assert!(s.txs.iter().all(|t| !matches!(t.data, TxData::File { .. })));
    assert_ne!(
        s.txs.back().unwrap().events & ev("write_request_too_large"),
        0
    );
}

#[test]
fn negotiated_sizes_over_the_limits_raise_events() {
    let mut s = SmbState::new(FileConfig::default());
    s.cfg.max_read_size = 65536;
    let mut req = hdr(0, false, 0, 1, 0, 0);
    let mut b = vec![0u8; 36];
    b[0] = 36;
    b[2] = 1;
    req.extend_from_slice(&b);
    req.extend_from_slice(&0x0311u16.to_le_bytes());
    feed(&mut s, Dir::ToServer, &nbss(&req), 1000);
    let mut resp = hdr(0, true, 0, 1, 0, 0);
    let mut rb = vec![0u8; 64];
    rb[0] = 65;
    rb[4..6].copy_from_slice(&0x0311u16.to_le_bytes());
    rb[32..36].copy_from_slice(&(8u32 << 20).to_le_bytes());
    rb[36..40].copy_from_slice(&(8u32 << 20).to_le_bytes());
    resp.extend_from_slice(&rb);
    feed(&mut s, Dir::ToClient, &nbss(&resp), 1000);
    let t = s.tx(0).unwrap();
    assert_ne!(t.events & ev("negotiate_max_read_size_too_large"), 0);
    assert_eq!(t.events & ev("negotiate_max_write_size_too_large"), 0);
}

#[test]
fn max_tx_closes_the_oldest_open_transaction() {
    let mut s = SmbState::new(FileConfig::default());
    s.cfg.max_tx = 3;
    for msg in 0..6u64 {
        // ECHO requests, never answered.
        let mut m = hdr(13, false, 0, msg, 0, 7);
        m.extend_from_slice(&[4, 0, 0, 0]);
        feed(&mut s, Dir::ToServer, &nbss(&m), 1000);
    }
    let t = s.tx(0).unwrap();
    assert!(t.response_done);
    assert_ne!(t.events & ev("too_many_transactions"), 0);
    assert!(!s.tx(5).unwrap().response_done);
}

#[test]
fn probe_and_guid() {
    let req = nbss(&hdr(0, false, 0, 0, 0, 0));
    let resp = nbss(&hdr(0, true, 0, 0, 0, 0));
    assert_eq!(probe(Dir::ToServer, &req), Probe::Yes);
    assert_eq!(probe(Dir::ToClient, &resp), Probe::Yes);
    // A response going to the server: detection reverses a midstream flow.
    assert_eq!(probe(Dir::ToServer, &resp), Probe::No);
    assert_eq!(probe(Dir::ToServer, &req[..10]), Probe::NeedMore);
    // Midstream: garbage, then a record.
    let mut mid = b"garbage!".to_vec();
    mid.extend_from_slice(&req);
    assert_eq!(probe(Dir::ToServer, &mid), Probe::Yes);
    assert_eq!(probe(Dir::ToServer, b"\x00\x00\x00"), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, b"GET / HTTP"), Probe::No);
    let g: Vec<u8> = (0..16).collect();
    assert_eq!(guid_to_string(&g), "03020100-0504-0706-0908-0b0a0f0e0d0c");
    assert_eq!(filetime_unix(0), 0);
    assert_eq!(filetime_unix(116_444_736_000_000_000 + 10_000_000), 1);
}

#[test]
fn random_input_never_panics() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) as u32
    };
    let seeds: Vec<Vec<u8>> = (0..19u16)
        .map(|c| nbss(&hdr(c, c % 2 == 0, 0, 1, 1, 1)))
        .collect();
    for round in 0..300 {
        let mut st = (PROTOCOL.new_parser)(&ParserConfig::default(), true);
        for _ in 0..20 {
            let len = (next() % 300) as usize;
            let mut d: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if round % 2 == 0 {
                let seed = &seeds[(next() as usize) % seeds.len()];
                let mut s = seed.clone();
                let l = s.len() + d.len() - 4;
                s[2] = (l >> 8) as u8;
                s[3] = l as u8;
                s.extend_from_slice(&d);
                d = s;
            }
            let dir = if next() % 2 == 0 {
                Dir::ToServer
            } else {
                Dir::ToClient
            };
            let _ = st.parse(dir, &d);
            if next() % 50 == 0 {
                st.gap(dir, 10);
            }
        }
        st.close();
        let mut live = Vec::new();
        st.live_txs(Dir::ToServer, &mut live);
        for tx in live {
            for b in 0..PROTOCOL.buffers.len() as u16 {
                st.buffer(tx, b, Dir::ToServer, &mut |_| false);
            }
            let mut w = JsonWriter::new();
            w.start_object();
            st.alert_members(tx, &mut w);
            w.close();
            assert!(std::str::from_utf8(w.as_bytes()).is_ok());
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn smb1(
    cmd: u8,
    resp: bool,
    status: u32,
    uid: u16,
    tid: u16,
    mid: u16,
    words: &[u8],
    bytes: &[u8],
) -> Vec<u8> {
    let mut h = vec![0u8; 32];
    h[..4].copy_from_slice(b"\xffSMB");
    h[4] = cmd;
    h[5..9].copy_from_slice(&status.to_le_bytes());
    h[9] = if resp { 0x80 } else { 0 };
    h[10..12].copy_from_slice(&0x4000u16.to_le_bytes()); // NT status, ASCII
    h[24..26].copy_from_slice(&tid.to_le_bytes());
    h[28..30].copy_from_slice(&uid.to_le_bytes());
    h[30..32].copy_from_slice(&mid.to_le_bytes());
    h.push((words.len() / 2) as u8);
    h.extend_from_slice(words);
    h.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    h.extend_from_slice(bytes);
    h
}

fn json_of(s: &SmbState, tx: u64) -> String {
    let mut w = JsonWriter::new();
    w.start_object();
    s.alert_members(tx, &mut w);
    w.close();
    String::from_utf8(w.as_bytes().to_vec()).unwrap()
}

#[test]
fn smb1_negotiate_and_ascii_tree_connect() {
    let mut s = SmbState::new(FileConfig::default());
    let req = smb1(
        0x72,
        false,
        0,
        0,
        0,
        1,
        &[],
        b"\x02PC NETWORK PROGRAM 1.0\x00\x02NT LM 0.12\x00",
    );
    feed(&mut s, Dir::ToServer, &nbss(&req), 3);
    let mut words = vec![0u8; 34];
    words[0..2].copy_from_slice(&1u16.to_le_bytes());
    let resp = smb1(0x72, true, 0, 0, 0, 1, &words, &[]);
    feed(&mut s, Dir::ToClient, &nbss(&resp), 1000);
    let j = json_of(&s, 0);
    assert!(j.contains("\"dialect\":\"NT LM 0.12\""), "{j}");
    assert!(
        j.contains("\"command\":\"SMB1_COMMAND_NEGOTIATE_PROTOCOL\""),
        "{j}"
    );
    assert!(
        j.contains("\"client_dialects\":[\"PC NETWORK PROGRAM 1.0\",\"NT LM 0.12\"]"),
        "{j}"
    );
    // TREE_CONNECT_ANDX, no AndX follow-up, password of 1 byte, ASCII path, service.
    let w = [0xff, 0, 0, 0, 0, 0, 1, 0];
    let req = smb1(
        0x75,
        false,
        0,
        100,
        0,
        2,
        &w,
        b"\x00\\\\127.0.0.1\\IPC$\x00?????\x00",
    );
    feed(&mut s, Dir::ToServer, &nbss(&req), 5);
    let resp = smb1(
        0x75,
        true,
        0,
        100,
        2049,
        2,
        &[0xff, 0, 0, 0, 0, 0],
        b"IPC\x00",
    );
    feed(&mut s, Dir::ToClient, &nbss(&resp), 5);
    assert!(s.buffer(1, BUF_PIPE, Dir::ToServer, &mut |b| b
        == b"\\127.0.0.1\\IPC$"));
    let j = json_of(&s, 1);
    assert!(
        j.contains("\"service\":{\"request\":\"?????\",\"response\":\"IPC\"}"),
        "{j}"
    );
    assert!(j.contains("\"tree_id\":2049"), "{j}");
}

fn dce_hdr(ptype: u8, flags: u8, call_id: u32, body: &[u8]) -> Vec<u8> {
    let mut v = vec![5, 0, ptype, flags, 0x10, 0, 0, 0];
    v.extend_from_slice(&((16 + body.len()) as u16).to_le_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(&call_id.to_le_bytes());
    v.extend_from_slice(body);
    v
}

#[test]
fn dcerpc_bind_and_request_over_a_pipe() {
    let mut s = SmbState::new(FileConfig::default());
    // WRITE of a BIND with one context: uuid 12345678-1234-abcd-ef00-0123456789ab v1.0.
    let mut bind = vec![0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0];
    bind.extend_from_slice(&[0, 0, 1, 0]);
    bind.extend_from_slice(&[0x78, 0x56, 0x34, 0x12, 0x34, 0x12, 0xcd, 0xab]);
    bind.extend_from_slice(&[0xef, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab]);
    bind.extend_from_slice(&[1, 0, 0, 0]);
    bind.extend_from_slice(&[0u8; 20]);
    let pdu = dce_hdr(dcerpc::BIND, 3, 2, &bind);
    // The pipe is a service Suricata knows as DCERPC.
    let guid = open_pipe(&mut s, "srvsvc");
    let write = |msg: u64, data: &[u8]| pipe_write(msg, &guid, data);
    feed(&mut s, Dir::ToServer, &write(7, &pdu), 7);
    // READ request and a BINDACK in the response.
    let mut r = hdr(8, false, 0, 8, 5, 7);
    let mut rb = vec![0u8; 48];
    rb[0] = 49;
    rb[16..32].copy_from_slice(&guid);
    r.extend_from_slice(&rb);
    feed(&mut s, Dir::ToServer, &nbss(&r), 100);
    let mut ack = vec![0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 0, 0];
    ack.extend_from_slice(&[0, 0]); // pad to 4
    ack.extend_from_slice(&[1, 0, 0, 0]);
    ack.extend_from_slice(&[0u8; 24]);
    let ackpdu = dce_hdr(dcerpc::BINDACK, 3, 2, &ack);
    let mut rr = hdr(8, true, 0, 8, 5, 7);
    let mut rrb = vec![0u8; 16];
    rrb[0] = 17;
    rrb[2] = 80;
    rrb[4..8].copy_from_slice(&(ackpdu.len() as u32).to_le_bytes());
    rr.extend_from_slice(&rrb);
    rr.extend_from_slice(&ackpdu);
    feed(&mut s, Dir::ToClient, &nbss(&rr), 9);
    let bind_tx = s
        .txs
        .iter()
        .find(|t| {
            matches!(
                t.data,
                TxData::Dcerpc {
                    req_cmd: Some(dcerpc::BIND),
                    ..
                }
            )
        })
        .unwrap();
    assert!(bind_tx.response_done);
    let j = json_of(&s, bind_tx.id);
    assert!(
        j.contains("\"request\":\"BIND\",\"response\":\"BINDACK\""),
        "{j}"
    );
    assert!(j.contains("\"uuid\":\"12345678-1234-abcd-ef00-0123456789ab\",\"version\":\"1.0\",\"ack_result\":0"), "{j}");
    // A REQUEST, opnum 15, 4 bytes of stub.
    let req = dce_hdr(
        dcerpc::REQUEST,
        3,
        3,
        &[4, 0, 0, 0, 0, 0, 15, 0, 1, 2, 3, 4],
    );
    feed(&mut s, Dir::ToServer, &write(9, &req), 11);
    let id = s.tx_count() - 1;
    let (iface, op) = (
        setup_iface(Some("12345678-1234-abcd-ef00-0123456789ab,=1")).unwrap(),
        setup_opnum(Some("1,10-20")).unwrap(),
    );
    assert_eq!(iface.matches(&s, id, Dir::ToServer), Some(true));
    assert_eq!(op.matches(&s, id, Dir::ToServer), Some(true));
    assert_eq!(
        setup_opnum(Some("16"))
            .unwrap()
            .matches(&s, id, Dir::ToServer),
        Some(false)
    );
    assert_eq!(
        setup_iface(Some("12345678-1234-abcd-ef00-0123456789ab,>1"))
            .unwrap()
            .matches(&s, id, Dir::ToServer),
        Some(false)
    );
    assert!(s.buffer(id, BUF_STUB, Dir::ToServer, &mut |b| b == [1, 2, 3, 4]));
    assert!(setup_iface(Some("nope")).is_err());
    assert!(setup_version(Some("3")).is_err());
    assert_eq!(
        setup_version(Some("2"))
            .unwrap()
            .matches(&s, id, Dir::ToServer),
        Some(true)
    );
}

fn der(tag: u8, c: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    if c.len() < 0x80 {
        v.push(c.len() as u8);
    } else {
        v.extend_from_slice(&[0x82, (c.len() >> 8) as u8, c.len() as u8]);
    }
    v.extend_from_slice(c);
    v
}

#[test]
fn kerberos_ticket_in_a_blob() {
    let names = [der(0x1b, b"cifs"), der(0x1b, b"dc1.contoso.local")].concat();
    let pn = der(
        0x30,
        &[der(0xa0, &der(0x02, &[2])), der(0xa1, &der(0x30, &names))].concat(),
    );
    let tkt = der(
        0x61,
        &der(
            0x30,
            &[
                der(0xa0, &der(0x02, &[5])),
                der(0xa1, &der(0x1b, b"CONTOSO.LOCAL")),
                der(0xa2, &pn),
                der(0xa3, &der(0x30, &[0; 200])),
            ]
            .concat(),
        ),
    );
    let ap = der(
        0x6e,
        &der(
            0x30,
            &[
                der(0xa0, &der(0x02, &[5])),
                der(0xa1, &der(0x02, &[14])),
                der(0xa2, &der(0x03, &[0, 0, 0, 0, 0])),
                der(0xa3, &tkt),
            ]
            .concat(),
        ),
    );
    let mut blob = vec![
        0x60, 0x82, 0x01, 0x00, 0x06, 0x09, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 0,
    ];
    blob.extend_from_slice(&ap);
    let t = krb::find_ticket(&blob).unwrap();
    assert_eq!(t.realm, "CONTOSO.LOCAL");
    assert_eq!(t.snames, ["cifs", "dc1.contoso.local"]);
    assert!(krb::find_ticket(&blob[..blob.len() - 10]).is_none());
}

/// A TRANS2 request with Suricata's layout: parameters 3 bytes into the byte block.
fn trans2(mid: u16, subcmd: u16, params: &[u8], data: &[u8]) -> Vec<u8> {
    let mut w = vec![0u8; 30];
    let poff = 68u16; // 32 header + 1 wct + 30 words + 2 bcc + 3 pad
    w[18..20].copy_from_slice(&(params.len() as u16).to_le_bytes());
    w[20..22].copy_from_slice(&poff.to_le_bytes());
    w[22..24].copy_from_slice(&(data.len() as u16).to_le_bytes());
    let doff = poff + params.len() as u16 + 2;
    w[24..26].copy_from_slice(&doff.to_le_bytes());
    w[26] = 1;
    w[28..30].copy_from_slice(&subcmd.to_le_bytes());
    let mut b = vec![0u8; 3];
    b.extend_from_slice(params);
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(data);
    smb1(0x32, false, 0, 100, 1, mid, &w, &b)
}

fn rename_info(to: &str) -> Vec<u8> {
    let n = utf16(to);
    let mut d = vec![0u8; 8];
    d.extend_from_slice(&(n.len() as u32).to_le_bytes());
    d.extend_from_slice(&n);
    d
}

#[test]
fn smb1_trans2_set_path_and_file_info() {
    let mut s = SmbState::new(FileConfig::default());
    // SET_PATH_INFO rename.
    let mut p = vec![0xf2, 0x03, 0, 0, 0, 0]; // loi 1010
    p.extend_from_slice(&utf16("old.txt"));
    p.extend_from_slice(&[0, 0]);
    feed(
        &mut s,
        Dir::ToServer,
        &nbss(&trans2(5, 6, &p, &rename_info("new.txt"))),
        7,
    );
    let j = json_of(&s, 0);
    assert!(
        j.contains("\"rename\":{\"from\":\"old.txt\",\"to\":\"new.txt\"}"),
        "{j}"
    );
    assert!(j.contains("\"command\":\"SMB1_COMMAND_TRANS2\""), "{j}");
    assert!(!j.contains("set_info"), "{j}");
    // Its response completes it with the status.
    let resp = smb1(0x32, true, 0xc000_0022, 100, 1, 5, &[0u8; 20], &[]);
    feed(&mut s, Dir::ToClient, &nbss(&resp), 1000);
    let j = json_of(&s, 0);
    assert!(j.contains("\"status\":\"STATUS_ACCESS_DENIED\""), "{j}");
    // SET_FILE_INFO disposition on an unknown FID.
    let p = [0x07, 0x40, 0xf5, 0x03]; // fid 0x4007, loi 1013
    feed(&mut s, Dir::ToServer, &nbss(&trans2(6, 8, &p, &[1])), 1000);
    let j = json_of(&s, 1);
    for want in [
        "\"filename\":\"<unknown>\"",
        "\"access\":\"delete on close\"",
        "\"subcmd\":\"SET_FILE_INFO\"",
        "\"level_of_interest\":\"Set Disposition Information\"",
    ] {
        assert!(j.contains(want), "{want} in {j}");
    }
    // Other sub-commands (FIND_FIRST2) and other levels make no tx.
    let n = s.tx_count();
    feed(
        &mut s,
        Dir::ToServer,
        &nbss(&trans2(7, 1, &[0; 12], &[])),
        1000,
    );
    feed(
        &mut s,
        Dir::ToServer,
        &nbss(&trans2(8, 8, &[7, 0x40, 4, 1], &[0; 40])),
        1000,
    );
    assert_eq!(s.tx_count(), n);
    // A disposition without its data byte makes no tx and, as in Suricata, no event.
    feed(&mut s, Dir::ToServer, &nbss(&trans2(9, 8, &p, &[])), 1000);
    assert_eq!(s.tx_count(), n);
    assert_eq!(s.pending_events, 0);
}

#[test]
fn smb1_negotiate_reply_shorter_than_nt_lm_leaves_the_tx_open() {
    let mut s = SmbState::new(FileConfig::default());
    let req = smb1(
        0x72,
        false,
        0,
        0,
        0,
        1,
        &[],
        b"\x02LANMAN1.0\x00\x02LANMAN2.1\x00",
    );
    feed(&mut s, Dir::ToServer, &nbss(&req), 1000);
    // LANMAN's 13-word reply: Suricata's NT LM layout does not fit, no update.
    let mut words = vec![0u8; 26];
    words[0..2].copy_from_slice(&1u16.to_le_bytes());
    let resp = smb1(0x72, true, 0, 0, 0, 1, &words, &[]);
    feed(&mut s, Dir::ToClient, &nbss(&resp), 1000);
    let j = json_of(&s, 0);
    assert!(j.contains("\"dialect\":\"unknown\""), "{j}");
    assert!(!j.contains("\"status\""), "{j}");
}

#[test]
fn smb1_andx_chain_is_followed_while_offsets_advance() {
    // 20 chained LOGOFF_ANDX blocks of 7 bytes each, the last one ending the chain.
    let n = 20usize;
    let mut blocks = Vec::new();
    for i in 0..n {
        let next = 32 + 7 * (i + 1);
        let cmd = if i + 1 == n { 0xff } else { 0x74 };
        blocks.extend_from_slice(&[2, cmd, 0, (next & 0xff) as u8, (next >> 8) as u8, 0, 0]);
    }
    let mut rec = smb1(0x74, false, 0, 100, 0, 3, &[], &[]);
    rec.truncate(32);
    rec.extend_from_slice(&blocks);
    let mut s = SmbState::new(FileConfig::default());
    feed(&mut s, Dir::ToServer, &nbss(&rec), 1000);
    assert_eq!(s.tx_count(), n as u64);
    // An offset that does not move forward ends the chain.
    let mut rec2 = rec.clone();
    rec2[32 + 3] = 32;
    rec2[32 + 4] = 0;
    let mut s = SmbState::new(FileConfig::default());
    feed(&mut s, Dir::ToServer, &nbss(&rec2), 1000);
    assert_eq!(s.tx_count(), 1);
}

#[test]
fn hostile_andx_chain_stays_within_max_tx() {
    // The 16-bit AndX offsets bound a chain to ~9300 blocks of 7 bytes; with max-tx 16 the
    // held transactions stay bounded and the limit is reported on the ones closed.
    let n = 9000usize;
    let mut rec = smb1(0x74, false, 0, 100, 0, 3, &[], &[]);
    rec.truncate(32);
    for i in 0..n {
        let next = 32 + 7 * (i + 1);
        let cmd = if i + 1 == n { 0xff } else { 0x74 };
        rec.extend_from_slice(&[2, cmd, 0, (next & 0xff) as u8, (next >> 8) as u8, 0, 0]);
    }
    let mut s = SmbState::new(FileConfig::default());
    s.cfg.max_tx = 16;
    feed(&mut s, Dir::ToServer, &nbss(&rec), 4096);
    assert_eq!(s.tx_count(), n as u64);
    // The hard bound on held transactions: 4 x max-tx, at least 1024.
    assert!(s.txs.len() <= 1024, "{} live txs", s.txs.len());
    assert!(s
        .txs
        .iter()
        .any(|t| t.events & ev("too_many_transactions") != 0));
}

/// Suricata's `netbios-split-session-msg`: an SMB1 record of the bare 32-byte header is a
/// request (an unknown command makes a generic transaction); a record too short for the
/// header is `malformed_data` on the last transaction and a parser error.
#[test]
fn header_only_smb1_record_and_malformed_record() {
    let mut s = SmbState::new(FileConfig::default());
    let mut h = b"\xffSMB".to_vec();
    h.extend_from_slice(&[0x41; 28]);
    let mut d = nbss(&h);
    d.extend(nbss(b"\xffSMB"));
    d.extend(nbss(&h));
    assert!(AppParser::parse(&mut s, Dir::ToServer, &d), "parser error");
    assert_eq!(s.txs.len(), 1, "the record after the error is not parsed");
    let t = &s.txs[0];
    assert_eq!(
        (t.ver, t.cmd, t.session_id, t.tree_id),
        (1, 0x41, 0x4141, 0x4141)
    );
    let mut seen = Vec::new();
    s.drain_events(0, false, &mut |a| seen.push((a.tx_id, a.name)));
    assert_eq!(seen, vec![(0, "malformed_data")]);
    s.drain_events(0, false, &mut |a| seen.push((a.tx_id, a.name)));
    assert_eq!(seen.len(), 1, "each event once");
    assert!(s.failed, "incomplete transactions are logged at once");
}

/// Pipes of services Suricata 7.0.10 does not know as DCERPC (`wkssvc` here) carry no
/// DCERPC transactions: a BIND written to one is skipped (`krb_kerberos_tso`).
#[test]
fn bind_on_a_pipe_suricata_does_not_know_is_skipped() {
    for (name, dce) in [("wkssvc", false), ("\\srvsvc", true), ("SRVSVC", false)] {
        let mut s = SmbState::new(FileConfig::default());
        let guid = open_pipe(&mut s, name);
        let mut bind = vec![0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0];
        bind.extend_from_slice(&[0, 0, 1, 0]);
        bind.extend_from_slice(&[0x11; 16]);
        bind.extend_from_slice(&[1, 0, 0, 0]);
        bind.extend_from_slice(&[0u8; 20]);
        let pdu = dce_hdr(dcerpc::BIND, 3, 2, &bind);
        feed(&mut s, Dir::ToServer, &pipe_write(7, &guid, &pdu), 1000);
        let has_bind = s
            .txs
            .iter()
            .any(|t| matches!(t.data, TxData::Dcerpc { .. }));
        assert_eq!(has_bind, dce, "{name}");
        assert!(
            s.txs.iter().all(|t| !matches!(t.data, TxData::File { .. })),
            "a pipe write is not a file"
        );
    }
}

#[test]
fn hostile_pipe_fragment_flood_is_bounded() {
    // DCERPC in a named pipe: one request continued by endless non-last fragments, then
    // many calls of big fragments. A transaction's stub stops at MAX_STUB, the flow's at its
    // budget; what is refused is counted.
    let mut s = SmbState::new(FileConfig::default());
    s.cfg.max_tx = 16;
    s.dce_stub_budget = 4 << 20;
    // The pipe is a service Suricata knows as DCERPC.
    let guid = open_pipe(&mut s, "srvsvc");
    let write = |msg: u64, data: &[u8]| pipe_write(msg, &guid, data);
    let req = |flags: u8, call: u32| {
        let mut b = vec![0u8; 8];
        b[6] = 15;
        b.extend_from_slice(&[0x42; 16000]);
        dce_hdr(dcerpc::REQUEST, flags, call, &b)
    };
    // 300 writes of 4 continuation fragments (19 MB) after the first one.
    feed(&mut s, Dir::ToServer, &write(10, &req(1, 1)), 4096);
    let cont: Vec<u8> = (0..4).flat_map(|_| req(0, 1)).collect();
    for m in 0..300 {
        feed(&mut s, Dir::ToServer, &write(11 + m, &cont), 65536);
    }
    let stub_of = |t: &SmbTx| match &t.data {
        TxData::Dcerpc {
            stub_req, frag_req, ..
        } => Some((stub_req.len(), *frag_req)),
        _ => None,
    };
    let (len, frags) = s.txs.iter().find_map(stub_of).unwrap();
    assert_eq!(len, dcerpc::MAX_STUB);
    assert_eq!(frags, 1 + 300 * 4);
    assert!(s.dce_stub_dropped > 0);
    // Many calls of 4 first fragments each: the flow's budget holds.
    let dropped = s.dce_stub_dropped;
    for call in 0..100u32 {
        let many: Vec<u8> = (0..4).flat_map(|i| req(3, 100 + call * 4 + i)).collect();
        feed(
            &mut s,
            Dir::ToServer,
            &write(1000 + u64::from(call), &many),
            65536,
        );
    }
    let held: usize = s.txs.iter().filter_map(stub_of).map(|(l, _)| l).sum();
    assert!(held <= 4 << 20, "held {held}");
    assert!(s.dce_stub_dropped > dropped);
    assert!(s.txs.len() <= 1024);
}

/// An NTLMSSP AUTHENTICATE: domain, user, host (UTF-16) after a 72-byte header with the
/// version, empty LM / NTLM response / session key fields after them, one trailing byte.
fn ntlm_auth(dom: &[u8], user: &[u8], host: &[u8]) -> Vec<u8> {
    let mut m = b"NTLMSSP\0".to_vec();
    m.extend_from_slice(&3u32.to_le_bytes());
    m.resize(72, 0);
    let mut off = 72u32;
    for (at, f) in [(28, dom), (36, user), (44, host)] {
        m[at..at + 2].copy_from_slice(&(f.len() as u16).to_le_bytes());
        m[at + 4..at + 8].copy_from_slice(&off.to_le_bytes());
        off += f.len() as u32;
    }
    for at in [12, 20, 52] {
        m[at + 4..at + 8].copy_from_slice(&off.to_le_bytes());
    }
    m[60..64].copy_from_slice(&(0x0200_0001u32).to_le_bytes());
    m[64..72].copy_from_slice(&[10, 0, 0x61, 0x4a, 0, 0, 0, 15]);
    for f in [dom, user, host] {
        m.extend_from_slice(f);
    }
    m.push(0);
    m
}

fn set_field(m: &mut [u8], at: usize, len: u16, off: u32) {
    m[at..at + 2].copy_from_slice(&len.to_le_bytes());
    m[at + 4..at + 8].copy_from_slice(&off.to_le_bytes());
}

#[test]
fn hostile_ntlmssp_offsets_lengths_and_versions() {
    let good = ntlm_auth(&utf16("D"), &utf16("u"), &utf16("h"));
    let n = parse_ntlmssp_auth(&good).unwrap();
    assert_eq!(
        (n.user.as_slice(), n.version.as_deref()),
        (&b"u"[..], Some("10.0 build 19041 rev 15"))
    );
    // Any of the six fields with a length or offset past the record: the record is refused
    // (Suricata's `verify`), whichever field it is, with offsets up to u32::MAX (no overflow).
    for at in [12, 20, 28, 36, 44, 52] {
        for (len, off) in [
            (0xffff, 72),
            (2, u32::MAX),
            (2, 0x8000_0000),
            (0, good.len() as u32),
        ] {
            let mut m = good.clone();
            set_field(&mut m, at, len, off);
            assert!(
                parse_ntlmssp_auth(&m).is_none(),
                "field {at} len {len} off {off:#x}"
            );
        }
    }
    // Offsets inside the record but running past it, or inside the header (< 12).
    let mut m = good.clone();
    set_field(&mut m, 36, 20, good.len() as u32 - 4);
    assert!(parse_ntlmssp_auth(&m).is_none());
    let mut m = good.clone();
    set_field(&mut m, 36, 2, 4);
    assert!(parse_ntlmssp_auth(&m).is_none());
    // All three names over the same bytes: read, and Suricata's unusual order.
    let mut m = good.clone();
    for at in [28, 36, 44] {
        set_field(&mut m, at, 2, 72);
    }
    let n = parse_ntlmssp_auth(&m).unwrap();
    assert_eq!(
        (n.domain.as_slice(), n.user.as_slice(), n.host.as_slice()),
        (&b"D"[..], &b"D"[..], &b"D"[..])
    );
    assert!(n.unusual_order);
    // Version flag set but a field's data starting inside the version bytes: no version
    // (Suricata reads it only when the data starts at 72 or later).
    let mut m = good.clone();
    set_field(&mut m, 12, 0, 68);
    assert_eq!(parse_ntlmssp_auth(&m).unwrap().version, None);
    // A record cut inside its fixed part, at every length: refused, no panic.
    for n in 0..72 {
        assert!(parse_ntlmssp_auth(&good[..n]).is_none());
    }
}

#[test]
fn hostile_session_setup_with_a_64k_blob() {
    // SMB2 SESSION_SETUP requests carrying a 65,000-byte security blob: an AUTHENTICATE with
    // a 64,000-byte user name, and a blob of 8,000 NTLMSSP signatures with no valid record.
    let nbss24 = |m: &[u8]| {
        let mut v = vec![
            0,
            (m.len() >> 16) as u8,
            (m.len() >> 8) as u8,
            m.len() as u8,
        ];
        v.extend_from_slice(m);
        v
    };
    let setup = |msg: u64, blob: &[u8]| {
        let mut m = hdr(1, false, 0, msg, 0, 9);
        let mut b = vec![0u8; 24];
        b[0] = 25;
        b[12..14].copy_from_slice(&88u16.to_le_bytes());
        b[14..16].copy_from_slice(&(blob.len() as u16).to_le_bytes());
        m.extend_from_slice(&b);
        m.extend_from_slice(blob);
        nbss24(&m)
    };
    let user = utf16(&"A".repeat(32_000));
    let mut blob = vec![0xa1, 0x82, 0, 0];
    blob.extend_from_slice(&ntlm_auth(&utf16("D"), &user, &utf16("h")));
    blob.resize(65_000, 0);
    let mut junk = Vec::new();
    while junk.len() < 65_000 {
        junk.extend_from_slice(b"NTLMSSP\0\x03\0\0\0");
    }
    junk.truncate(65_000);
    let mut s = SmbState::new(FileConfig::default());
    feed(&mut s, Dir::ToServer, &setup(1, &blob), 1460);
    feed(&mut s, Dir::ToServer, &setup(2, &junk), 1460);
    assert_eq!(s.tx_count(), 2);
    match &s.tx(0).unwrap().data {
        TxData::SessionSetup {
            ntlmssp: Some(n), ..
        } => assert_eq!(n.user.len(), 32_000),
        d => panic!("{d:?}"),
    }
    match &s.tx(1).unwrap().data {
        TxData::SessionSetup { ntlmssp, .. } => assert!(ntlmssp.is_none()),
        d => panic!("{d:?}"),
    }
    let j = json_of(&s, 0);
    assert!(j.len() < 40_000, "{}", j.len());
}
