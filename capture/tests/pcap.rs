//! Classic pcap: byte orders, resolutions, link types, header and record errors, open errors.

mod common;

use common::*;
use shrike_capture::{CaptureError, FileFormat, FileSource, LinkType, PacketSource, Timestamp};

#[test]
fn pcap_all_byte_orders_and_resolutions() {
    for be in [false, true] {
        for nanos in [false, true] {
            let mut b = PcapBuilder::new(be, nanos, 1);
            let frac = if nanos { 123_456_789 } else { 123_456 };
            b.record(1_700_000_000, frac, &payload(1, 60), 60)
                .record(1_700_000_001, 0, &payload(2, 1514), 1514)
                .record(4_000_000_000, 999, &payload(3, 100), 9000);
            let (pkts, src) = read_ok(&b.buf);
            let ctx = format!("be={be} nanos={nanos}");
            assert_eq!(
                src.format(),
                FileFormat::Pcap {
                    nanos,
                    big_endian: be
                },
                "{ctx}"
            );
            assert_eq!(src.link_type(), Some(LinkType::Ethernet), "{ctx}");
            assert_eq!(pkts.len(), 3, "{ctx}");
            let first_ns = if nanos { 123_456_789 } else { 123_456_000 };
            assert_eq!(
                pkts[0].ts,
                Timestamp(1_700_000_000 * 1_000_000_000 + first_ns),
                "{ctx}"
            );
            assert_eq!(pkts[0].ts.secs(), 1_700_000_000);
            assert_eq!(
                pkts[1].ts,
                Timestamp::from_secs_nanos(1_700_000_001, 0),
                "{ctx}"
            );
            let last_ns = if nanos { 999 } else { 999_000 };
            assert_eq!(
                pkts[2].ts,
                Timestamp::from_secs_nanos(4_000_000_000, last_ns),
                "{ctx}"
            );
            assert_eq!(pkts[0].data, payload(1, 60));
            assert_eq!(pkts[1].data, payload(2, 1514));
            assert_eq!(pkts[2].data, payload(3, 100));
            assert_eq!((pkts[0].orig_len, pkts[2].orig_len), (60, 9000));
            assert!(pkts.iter().all(|p| p.link == LinkType::Ethernet));
            let s = src.stats();
            assert_eq!(
                (s.files, s.packets, s.bytes, s.truncated),
                (1, 3, 1674, 0),
                "{ctx}"
            );
            assert_eq!(s.packets_for(LinkType::Ethernet), 3);
            assert_eq!(src.bytes_read(), b.buf.len() as u64);
            assert_eq!(src.total_bytes(), None);
        }
    }
}

#[test]
fn pcap_link_types_and_fcs_bits_masked() {
    let cases: &[(u32, LinkType)] = &[
        (0, LinkType::Null),
        (1, LinkType::Ethernet),
        (12, LinkType::Raw),
        (14, LinkType::Raw),
        (101, LinkType::Raw),
        (108, LinkType::Loop),
        (113, LinkType::LinuxSll),
        (228, LinkType::Ipv4),
        (229, LinkType::Ipv6),
        (276, LinkType::LinuxSll2),
        // FCS length 4 (in 16-bit words: 2), F bit set: still Ethernet.
        (0x2000_0000 | 0x0400_0000 | 1, LinkType::Ethernet),
        (0xF400_0000 | 113, LinkType::LinuxSll),
    ];
    for &(field, want) in cases {
        let mut b = PcapBuilder::new(false, false, field);
        b.record(1, 2, &payload(9, 40), 40);
        let (pkts, src) = read_ok(&b.buf);
        assert_eq!(src.link_type(), Some(want), "field {field:#x}");
        assert_eq!(pkts[0].link, want);
        assert_eq!(src.stats().packets_for(want), 1);
    }
}

#[test]
fn pcap_unsupported_link_type_is_a_distinct_error() {
    for (field, lt) in [(105u32, 105u32), (127, 127), (0x0400_0000 | 147, 147)] {
        let mut b = PcapBuilder::new(true, false, field);
        b.record(1, 2, &payload(9, 40), 40);
        let e = source(&b.buf).unwrap_err();
        assert!(e.is_unsupported_link(), "{e}");
        match &e {
            CaptureError::UnsupportedLinkType { path, linktype } => {
                assert_eq!(*linktype, lt);
                assert_eq!(path, "mem.pcap");
            }
            other => panic!("wrong error {other}"),
        }
        assert!(e.to_string().contains(&format!("link type {lt}")), "{e}");
    }
}

#[test]
fn pcap_orig_len_never_below_caplen() {
    let mut b = PcapBuilder::new(false, false, 1);
    b.record(1, 0, &payload(1, 80), 20);
    let (pkts, _) = read_ok(&b.buf);
    assert_eq!(pkts[0].orig_len, 80);
    assert_eq!(pkts[0].data.len(), 80);
}

#[test]
fn pcap_zero_length_and_max_caplen_records() {
    let mut b = PcapBuilder::new(false, false, 1);
    b.record(1, 0, &[], 0)
        .record(2, 0, &payload(3, 256 * 1024), 256 * 1024)
        .record(3, 0, &payload(4, 10), 10);
    let (pkts, src) = read_ok(&b.buf);
    assert_eq!(pkts.len(), 3);
    assert!(pkts[0].data.is_empty());
    assert_eq!(pkts[1].data.len(), 256 * 1024);
    assert_eq!(pkts[1].data, payload(3, 256 * 1024));
    assert_eq!(pkts[2].data, payload(4, 10));
    assert_eq!(src.stats().bytes, 256 * 1024 + 10);
}

#[test]
fn pcap_bad_headers_name_the_file() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            b"GIF89a this is not a capture".to_vec(),
            "unknown magic number 0x47494638",
        ),
        (
            vec![
                0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ],
            "gzip",
        ),
        (vec![0xd4, 0xc3], "too short"),
        (
            PcapBuilder::new(false, false, 1).buf[..20].to_vec(),
            "file ends inside",
        ),
        (
            PcapBuilder::with_version(false, false, 1, 1, 0).buf,
            "unsupported pcap version 1.0",
        ),
        (
            PcapBuilder::with_version(true, true, 1, 0x4000, 4).buf,
            "unsupported pcap version 16384.4",
        ),
    ];
    for (bytes, want) in cases {
        let e = FileSource::from_reader("evil.pcap", std::io::Cursor::new(bytes)).unwrap_err();
        assert!(matches!(e, CaptureError::BadHeader { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.starts_with("evil.pcap: "), "{msg}");
        assert!(msg.contains(want), "{msg} lacks {want}");
    }
    let e = source(&[]).unwrap_err();
    assert!(matches!(e, CaptureError::Empty { .. }));
    assert_eq!(e.to_string(), "mem.pcap: empty capture file");
}

#[test]
fn pcap_corrupt_record_after_good_ones() {
    let mut b = PcapBuilder::new(false, false, 1);
    b.record(1, 0, &payload(1, 100), 100)
        .record(2, 0, &payload(2, 100), 100);
    let bad_at = b.buf.len();
    b.record_raw(3, 0, 256 * 1024 + 1, 100, &payload(3, 100));
    let mut src = source(&b.buf).unwrap();
    let (pkts, err) = drain(&mut src);
    assert_eq!(pkts.len(), 2);
    let e = err.expect("corrupt record");
    match &e {
        CaptureError::Corrupt { offset, path, .. } => {
            assert_eq!(*offset, bad_at as u64);
            assert_eq!(path, "mem.pcap");
        }
        other => panic!("wrong error {other}"),
    }
    assert!(
        e.to_string().contains(&format!("byte offset {bad_at}")),
        "{e}"
    );
    assert_eq!(src.stats().errors, 1);
    // Fused: nothing more after an error.
    assert!(src.next_packet().unwrap().is_none());
}

#[test]
fn open_errors_name_the_path() {
    let dir = std::env::temp_dir().join(format!("shrike-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let missing = dir.join("missing.pcap");
    let e = FileSource::open(&missing).unwrap_err();
    assert!(matches!(e, CaptureError::Open { .. }), "{e}");
    assert!(e.to_string().contains("missing.pcap"), "{e}");

    let e = FileSource::open(&dir).unwrap_err();
    assert!(matches!(e, CaptureError::IsDirectory { .. }), "{e}");
    assert!(e.to_string().contains(&dir.display().to_string()), "{e}");

    let empty = dir.join("empty.pcap");
    std::fs::write(&empty, b"").unwrap();
    let e = FileSource::open(&empty).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}: empty capture file", empty.display())
    );

    let mut b = PcapBuilder::new(false, false, 1);
    b.record(5, 6, &payload(1, 70), 70);
    let good = dir.join("good.pcap");
    std::fs::write(&good, &b.buf).unwrap();
    let mut src = FileSource::open_arg(&good).unwrap();
    assert_eq!(src.total_bytes(), Some(b.buf.len() as u64));
    assert_eq!(src.bytes_read(), 24);
    assert_eq!(drain(&mut src).0.len(), 1);
    assert_eq!(src.bytes_read(), b.buf.len() as u64);

    {
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.join("locked.pcap");
        std::fs::write(&locked, &b.buf).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        match FileSource::open(&locked) {
            Err(e) => {
                assert!(matches!(e, CaptureError::Open { .. }), "{e}");
                assert!(e.to_string().contains("locked.pcap"), "{e}");
                assert!(
                    e.to_string().to_lowercase().contains("permission denied"),
                    "{e}"
                );
            }
            Ok(_) => eprintln!("running as root: permission-denied case not testable here"),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
