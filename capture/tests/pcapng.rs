//! pcapng: sections, interfaces, timestamp resolutions, block kinds, errors.

mod common;

use common::*;
use shrike_capture::{CaptureError, FileFormat, LinkType, PacketSource, Timestamp};

const OPT_TSRESOL: u16 = 9;
const OPT_TSOFFSET: u16 = 14;

fn ts(secs: u64, nanos: u32) -> Timestamp {
    Timestamp::from_secs_nanos(secs, nanos)
}

/// Two sections (LE then BE) with interfaces of different link types and resolutions,
/// EPB, SPB, PB, skipped blocks and an unsupported interface.
fn two_sections() -> NgBuilder {
    let mut b = NgBuilder::new();
    b.shb(false)
        .idb(1, 0, &[]) // Ethernet, default microseconds
        .idb(101, 0, &[opt(OPT_TSRESOL, &[9])]) // raw, nanoseconds
        .idb(
            113,
            0,
            &[
                opt(OPT_TSRESOL, &[0x80 | 20]), // 2^-20 s
                opt(OPT_TSOFFSET, &100i64.to_le_bytes()),
            ],
        )
        .block(0x0000_0BAD, b"custom block payload", false)
        .epb(0, 1_700_000_000_123_456, &payload(1, 60), 60)
        .block(4, &[0; 8], false) // name resolution block
        .epb(1, 1_700_000_000_987_654_321, &payload(2, 41), 41)
        .spb(&payload(3, 33), 33)
        .pb(
            2,
            (1_700_000_000u64 << 20) + (1 << 19),
            &payload(4, 77),
            1500,
        )
        .block(5, &[0; 12], false); // interface statistics block
    b.shb(true)
        .idb(276, 0, &[opt(OPT_TSRESOL, &[3])]) // SLL2, milliseconds
        .idb(147, 0, &[]) // USER0: unsupported
        .epb(0, 1_700_000_000_500, &payload(5, 90), 90)
        .epb(1, 1, &payload(6, 10), 10)
        .epb(1, 2, &payload(7, 10), 10)
        .spb(&payload(8, 20), 20)
        .epb(0, 1_700_000_001_000, &payload(9, 1514), 1514);
    b
}

#[test]
fn pcapng_sections_interfaces_and_block_kinds() {
    let b = two_sections();
    let (pkts, src) = read_ok(&b.buf);
    assert_eq!(src.format(), FileFormat::PcapNg);
    assert_eq!(src.link_type(), None);
    let got: Vec<(Timestamp, LinkType, Vec<u8>, u32)> = pkts
        .iter()
        .map(|p| (p.ts, p.link, p.data.clone(), p.orig_len))
        .collect();
    let want = vec![
        (
            ts(1_700_000_000, 123_456_000),
            LinkType::Ethernet,
            payload(1, 60),
            60,
        ),
        (
            ts(1_700_000_000, 987_654_321),
            LinkType::Raw,
            payload(2, 41),
            41,
        ),
        // SPB: interface 0, the last seen timestamp.
        (
            ts(1_700_000_000, 987_654_321),
            LinkType::Ethernet,
            payload(3, 33),
            33,
        ),
        // PB on the 2^-20 interface with a +100 s offset.
        (
            ts(1_700_000_100, 500_000_000),
            LinkType::LinuxSll,
            payload(4, 77),
            1500,
        ),
        // Second section: big-endian, interfaces reset.
        (
            ts(1_700_000_000, 500_000_000),
            LinkType::LinuxSll2,
            payload(5, 90),
            90,
        ),
        (
            ts(1_700_000_000, 500_000_000),
            LinkType::LinuxSll2,
            payload(8, 20),
            20,
        ),
        (
            ts(1_700_000_001, 0),
            LinkType::LinuxSll2,
            payload(9, 1514),
            1514,
        ),
    ];
    assert_eq!(got, want);
    let s = src.stats();
    assert_eq!(s.packets, 7);
    assert_eq!(s.bytes, 60 + 41 + 33 + 77 + 90 + 20 + 1514);
    assert_eq!(s.skipped_unsupported, 2);
    assert_eq!(s.truncated, 0);
    assert_eq!(src.unsupported_link_types(), &[147]);
    assert_eq!(src.sections(), 2);
    assert_eq!(s.packets_for(LinkType::Ethernet), 2);
    assert_eq!(s.packets_for(LinkType::Raw), 1);
    assert_eq!(s.packets_for(LinkType::LinuxSll), 1);
    assert_eq!(s.packets_for(LinkType::LinuxSll2), 3);
    assert_eq!(src.bytes_read(), b.buf.len() as u64);
}

#[test]
fn pcapng_big_endian_first_section_and_resolutions() {
    // (if_tsresol byte, raw count, expected ns since epoch)
    let cases: &[(Option<u8>, u64, u64)] = &[
        (None, 1_000_001, 1_000_001_000),
        (Some(6), 1_000_001, 1_000_001_000),
        (Some(9), 1_000_001, 1_000_001),
        (Some(0), 7, 7_000_000_000),
        (Some(1), 15, 1_500_000_000),
        (Some(12), 1_500_000_000_000, 1_500_000_000),
        (Some(0x80), 3, 3_000_000_000),
        (Some(0x80 | 1), 3, 1_500_000_000),
        (Some(0x80 | 30), 1 << 30, 1_000_000_000),
        (Some(0x80 | 10), 1, 976_562), // 1/1024 s, truncated toward zero
    ];
    for be in [false, true] {
        for &(resol, raw, want) in cases {
            let mut b = NgBuilder::new();
            let opts: Vec<_> = resol.map(|r| opt(OPT_TSRESOL, &[r])).into_iter().collect();
            b.shb(be)
                .idb(1, 65535, &opts)
                .epb(0, raw, &payload(1, 14), 14);
            let (pkts, _) = read_ok(&b.buf);
            assert_eq!(pkts.len(), 1);
            assert_eq!(
                pkts[0].ts,
                Timestamp(want),
                "be={be} resol={resol:?} raw={raw}"
            );
        }
    }
}

#[test]
fn pcapng_tsoffset_negative_and_spb_snaplen() {
    let mut b = NgBuilder::new();
    b.shb(true)
        .idb(1, 64, &[opt(OPT_TSOFFSET, &(-10i64).to_be_bytes())])
        .epb(0, 20_000_000, &payload(1, 64), 64)
        // SPB with orig_len 100 but snaplen 64: 64 bytes captured.
        .spb(&payload(2, 64), 100);
    let (pkts, _) = read_ok(&b.buf);
    assert_eq!(pkts[0].ts, ts(10, 0));
    assert_eq!(pkts[1].ts, ts(10, 0));
    assert_eq!(pkts[1].data, payload(2, 64));
    assert_eq!(pkts[1].orig_len, 100);
}

#[test]
fn pcapng_blocks_larger_than_the_buffer() {
    let mut b = NgBuilder::new();
    b.shb(false).idb(1, 0, &[]);
    // A 3 MiB custom block, skipped by streaming.
    b.block(0x4000_0BAD, &vec![0xAB; 3 << 20], false);
    b.epb(0, 1, &payload(1, 100), 100);
    // A 2 MiB block of an unknown type, then one more packet.
    b.block(0x0000_0099, &vec![0xCD; 2 << 20], false);
    b.epb(0, 2, &payload(2, 100), 100);
    // An EPB of 1.5 MiB: 100 data bytes, then 24 options of 65532 bytes.
    let mut body = epb_body(0, 100, 0);
    body.extend_from_slice(&payload(3, 100));
    for _ in 0..24 {
        body.extend_from_slice(&1u16.to_le_bytes());
        body.extend_from_slice(&65532u16.to_le_bytes());
        body.extend(std::iter::repeat_n(b'c', 65532));
    }
    body.extend_from_slice(&[0; 4]);
    b.block(6, &body, true);
    b.epb(0, 4, &payload(4, 100), 100);
    let (pkts, src) = read_ok(&b.buf);
    assert_eq!(pkts.len(), 4);
    assert_eq!(pkts[1].data, payload(2, 100));
    assert_eq!(pkts[2].data, payload(3, 100));
    assert_eq!(pkts[3].data, payload(4, 100));
    assert_eq!(src.bytes_read(), b.buf.len() as u64);
}

#[test]
fn pcapng_bad_first_section_header() {
    let mut b = NgBuilder::new();
    b.shb_version(false, 2, 0).idb(1, 0, &[]);
    let e = source(&b.buf).unwrap_err();
    assert!(matches!(e, CaptureError::BadHeader { .. }), "{e}");
    assert!(
        e.to_string().contains("unsupported pcapng version 2.0"),
        "{e}"
    );

    let mut bytes = NgBuilder::new().shb(false).buf.clone();
    bytes[8..12].copy_from_slice(&[1, 2, 3, 4]);
    let e = source(&bytes).unwrap_err();
    assert!(e.to_string().contains("byte-order magic"), "{e}");

    let bytes = NgBuilder::new().shb(false).buf[..20].to_vec();
    let e = source(&bytes).unwrap_err();
    assert!(e.to_string().contains("file ends inside"), "{e}");
}

/// EPB body (little-endian) with the given caplen field and `data_len` data bytes.
fn epb_body(iface: u32, caplen: u32, data_len: usize) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&iface.to_le_bytes());
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&caplen.to_le_bytes());
    v.extend_from_slice(&caplen.to_le_bytes());
    v.extend(std::iter::repeat_n(0u8, data_len));
    v
}

/// Builds a file with two good packets, then `bad`, then a packet that must not appear.
fn corrupt_case(bad: impl FnOnce(&mut NgBuilder)) -> (Vec<u8>, usize) {
    let mut b = NgBuilder::new();
    b.shb(false)
        .idb(1, 0, &[])
        .epb(0, 1, &payload(1, 50), 50)
        .epb(0, 2, &payload(2, 50), 50);
    let at = b.buf.len();
    bad(&mut b);
    b.epb(0, 3, &payload(3, 50), 50);
    (b.buf, at)
}

#[test]
fn pcapng_corrupt_blocks_report_offset_after_good_packets() {
    type Case = (&'static str, Box<dyn FnOnce(&mut NgBuilder)>);
    let cases: Vec<Case> = vec![
        (
            "does not match its trailing length",
            Box::new(|b| {
                b.block_with_lens(6, 12 + 20 + 52, &epb_body(0, 50, 52), 999, true);
            }),
        ),
        (
            "bad length 30",
            Box::new(|b| {
                b.block_with_lens(6, 30, &epb_body(0, 4, 4), 30, true);
            }),
        ),
        (
            "bad length 8",
            Box::new(|b| {
                b.block_with_lens(0xBAD, 8, &[], 8, false);
            }),
        ),
        (
            "bad length 20 for block type 0x6",
            Box::new(|b| {
                b.block_with_lens(6, 20, &[0; 8], 20, true);
            }),
        ),
        (
            "bad length 4294967292",
            Box::new(|b| {
                b.block_with_lens(0xBAD, 0xFFFF_FFFC, &[], 0, false);
            }),
        ),
        (
            "larger than its block",
            Box::new(|b| {
                b.block(6, &epb_body(0, 200, 52), true);
            }),
        ),
        (
            "exceeds the maximum 262144",
            Box::new(|b| {
                b.block(6, &epb_body(0, 300_000, 52), true);
            }),
        ),
        (
            "packet on interface 5",
            Box::new(|b| {
                b.epb(5, 0, &payload(0, 10), 10);
            }),
        ),
        (
            "unsupported pcapng version 9.0",
            Box::new(|b| {
                b.shb_version(false, 9, 0);
            }),
        ),
        (
            "bad byte-order magic",
            Box::new(|b| {
                let mut body = vec![9, 9, 9, 9, 1, 0, 0, 0];
                body.extend_from_slice(&[0xff; 8]);
                b.block(0x0a0d_0d0a, &body, false);
            }),
        ),
    ];
    for (want, bad) in cases {
        let (bytes, at) = corrupt_case(bad);
        let mut src = source(&bytes).unwrap();
        let (pkts, err) = drain(&mut src);
        assert_eq!(pkts.len(), 2, "{want}");
        let e = err.unwrap_or_else(|| panic!("no error for {want}"));
        match &e {
            CaptureError::Corrupt { offset, .. } => assert_eq!(*offset, at as u64, "{want}: {e}"),
            other => panic!("{want}: wrong error {other}"),
        }
        let msg = e.to_string();
        assert!(
            msg.starts_with("mem.pcap: corrupt capture at byte offset"),
            "{msg}"
        );
        assert!(msg.contains(want), "{msg} lacks {want}");
        assert!(src.next_packet().unwrap().is_none());
    }
}

#[test]
fn pcapng_packets_need_an_interface_in_their_section() {
    // The second section resets interfaces: its SPB has no interface 0.
    let mut b = NgBuilder::new();
    b.shb(false).idb(1, 0, &[]).spb(&payload(1, 10), 10);
    b.shb(false);
    let at = b.buf.len();
    b.spb(&payload(2, 10), 10);
    let mut src = source(&b.buf).unwrap();
    let (pkts, err) = drain(&mut src);
    assert_eq!(pkts.len(), 1);
    match err {
        Some(CaptureError::Corrupt { offset, reason, .. }) => {
            assert_eq!(offset, at as u64, "{reason}");
            assert!(reason.contains("interface 0"), "{reason}");
        }
        other => panic!("wrong result {other:?}"),
    }
}

#[test]
fn short_reads_give_the_same_packets() {
    let ng = two_sections().buf;
    let mut p = PcapBuilder::new(true, true, 113);
    for i in 0..50u8 {
        p.record(u32::from(i), 7, &payload(i, usize::from(i) * 13), 2000);
    }
    for bytes in [ng, p.buf] {
        let (want, _) = read_ok(&bytes);
        let mut src =
            shrike_capture::FileSource::from_reader("pipe", ShortReads::new(bytes)).unwrap();
        let (got, err) = drain(&mut src);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(got, want);
        assert!(!src.is_truncated());
        assert!(!got.is_empty());
    }
}
