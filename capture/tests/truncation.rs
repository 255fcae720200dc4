//! Truncated inputs (cut at every byte), pipes, and random bytes after a valid header.

mod common;

use common::*;
use proptest::prelude::*;
use shrike_capture::{CaptureError, FileSource, PacketSource};

fn small_pcap() -> PcapBuilder {
    let mut b = PcapBuilder::new(false, false, 1);
    b.record(1, 10, &payload(1, 42), 42)
        .record(2, 20, &payload(2, 7), 60)
        .record(3, 30, &payload(3, 33), 33);
    b
}

fn small_pcapng() -> NgBuilder {
    let mut b = NgBuilder::new();
    b.shb(true)
        .idb(1, 0, &[opt(9, &[9])])
        .epb(0, 1_000, &payload(1, 42), 42)
        .block(0xBAD, b"skip me", false)
        .spb(&payload(2, 7), 60)
        .epb(0, 3_000, &payload(3, 33), 33);
    b
}

/// Reads `bytes[..cut]` and checks the documented outcome for that cut. `record_ends` lists
/// every record or block end (`true` for packets), and the end of a pcap file header.
fn check_cut(
    bytes: &[u8],
    cut: usize,
    header_len: usize,
    record_ends: &[(usize, bool)],
    full: &[Pkt],
) {
    let part = &bytes[..cut];
    let opened = source(part);
    if cut == 0 {
        assert!(
            matches!(opened, Err(CaptureError::Empty { .. })),
            "cut 0: {opened:?}"
        );
        return;
    }
    if cut < header_len {
        match opened {
            Err(CaptureError::BadHeader { reason, .. }) => {
                assert!(
                    reason.contains("file ends inside") || reason.contains("too short"),
                    "cut {cut}: {reason}"
                )
            }
            other => panic!("cut {cut}: expected a header error, got {other:?}"),
        }
        return;
    }
    let mut src = opened.unwrap_or_else(|e| panic!("cut {cut}: {e}"));
    let (pkts, err) = drain(&mut src);
    assert!(err.is_none(), "cut {cut}: {err:?}");
    let complete = record_ends
        .iter()
        .filter(|(end, pkt)| *pkt && *end <= cut)
        .count();
    assert_eq!(pkts.len(), complete, "cut {cut}");
    assert_eq!(&pkts[..], &full[..complete], "cut {cut}");
    let at_boundary = record_ends.iter().any(|(end, _)| *end == cut);
    assert_eq!(src.is_truncated(), !at_boundary, "cut {cut}");
    assert_eq!(src.stats().truncated, u64::from(!at_boundary), "cut {cut}");
    assert_eq!(src.stats().packets, complete as u64);
    // Ended: further calls stay at None.
    assert!(src.next_packet().unwrap().is_none());
}

#[test]
fn pcap_cut_at_every_byte() {
    let b = small_pcap();
    let (full, _) = read_ok(&b.buf);
    assert_eq!(full.len(), 3);
    let mut ends = vec![(24, false)];
    ends.extend(b.ends.iter().map(|e| (*e, true)));
    for cut in 0..=b.buf.len() {
        check_cut(&b.buf, cut, 24, &ends, &full);
    }
}

#[test]
fn pcapng_cut_at_every_byte() {
    let b = small_pcapng();
    let (full, _) = read_ok(&b.buf);
    assert_eq!(full.len(), 3);
    // The first 28 bytes (the SHB's fixed part) are checked when opening; a cut after
    // them but inside the SHB is a truncated file with no packets.
    for cut in 0..=b.buf.len() {
        check_cut(&b.buf, cut, 28, &b.ends, &full);
    }
}

#[test]
fn cut_files_through_short_reads() {
    // Same checks through a pipe-like reader, at a few cut points.
    let b = small_pcap();
    let (full, _) = read_ok(&b.buf);
    for cut in [
        24,
        50,
        b.ends[0],
        b.ends[1] + 3,
        b.buf.len() - 1,
        b.buf.len(),
    ] {
        let mut src =
            FileSource::from_reader("pipe", ShortReads::new(b.buf[..cut].to_vec())).unwrap();
        let (pkts, err) = drain(&mut src);
        assert!(err.is_none());
        let complete = b.ends.iter().filter(|e| **e <= cut).count();
        assert_eq!(pkts, full[..complete].to_vec(), "cut {cut}");
    }
}

/// Reads everything; only a clean end, a truncation or a `Corrupt` error may come out.
fn read_random(bytes: Vec<u8>) {
    let Ok(mut src) = FileSource::from_reader("fuzz", std::io::Cursor::new(bytes.clone())) else {
        return;
    };
    let mut n = 0u64;
    loop {
        match src.next_packet() {
            Ok(Some(p)) => {
                assert!(p.data.len() <= 256 * 1024);
                assert!(p.orig_len as usize >= p.data.len());
                n += 1;
            }
            Ok(None) => break,
            Err(CaptureError::Corrupt { offset, .. }) => {
                assert!(offset <= bytes.len() as u64);
                break;
            }
            Err(e) => panic!("unexpected error kind: {e}"),
        }
    }
    assert_eq!(src.stats().packets, n);
    assert!(src.bytes_read() <= bytes.len() as u64);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_after_pcap_header(be: bool, nanos: bool, tail in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut bytes = PcapBuilder::new(be, nanos, 1).buf;
        bytes.extend_from_slice(&tail);
        read_random(bytes);
    }

    #[test]
    fn random_bytes_after_pcapng_header(be: bool, tail in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut b = NgBuilder::new();
        b.shb(be).idb(1, 0, &[]);
        let mut bytes = b.buf;
        bytes.extend_from_slice(&tail);
        read_random(bytes);
    }

    /// Random mutations of a valid file exercise deeper paths than pure noise.
    #[test]
    fn mutated_valid_files(ng: bool, flips in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = if ng { small_pcapng().buf } else { small_pcap().buf };
        for (at, v) in flips {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        let Ok(mut src) = FileSource::from_reader("fuzz", std::io::Cursor::new(bytes)) else {
            return Ok(());
        };
        while let Ok(Some(_)) = src.next_packet() {}
    }
}

#[test]
fn real_pipe_from_a_child_process() {
    // A real pipe (not seekable): `cat FILE | reader`, for a whole and a cut file.
    let mut b = small_pcapng();
    for i in 0..200u8 {
        b.epb(
            0,
            u64::from(i) * 1000,
            &payload(i, 300 + usize::from(i)),
            2000,
        );
    }
    let (full, _) = read_ok(&b.buf);
    assert_eq!(full.len(), 203);
    let path = std::env::temp_dir().join(format!("shrike-pipe-{}.pcapng", std::process::id()));
    for cut in [b.buf.len(), b.buf.len() - 5] {
        std::fs::write(&path, &b.buf[..cut]).unwrap();
        let mut child = std::process::Command::new("cat")
            .arg(&path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("spawn cat");
        let out = child.stdout.take().unwrap();
        let mut src = FileSource::from_reader("pipe", out).unwrap();
        assert_eq!(src.total_bytes(), None);
        let (pkts, err) = drain(&mut src);
        assert!(err.is_none(), "{err:?}");
        let want = if cut == b.buf.len() { 203 } else { 202 };
        assert_eq!(pkts, full[..want].to_vec());
        assert_eq!(src.is_truncated(), cut != b.buf.len());
        assert_eq!(
            src.bytes_read(),
            *b.ends
                .iter()
                .map(|(e, _)| e)
                .filter(|e| **e <= cut)
                .max()
                .unwrap() as u64
        );
        child.wait().unwrap();
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn file_source_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<FileSource>();
    assert_send::<CaptureError>();
}
