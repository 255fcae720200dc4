//! How TCP payload rules use the reassembled stream and the packet payload (Suricata's
//! `SIG_FLAG_REQUIRE_STREAM` / `REQUIRE_PACKET`), and which alerts count as stream matches.

mod engine_common;

use engine_common::*;
use shrike_capture::{LinkType, Timestamp};
use shrike_detect::{FlowDetect, FlowInput, Packet, StreamData};
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats};

/// Inspects one established to-server TCP packet carrying `payload` with the stream side
/// `window` / `added`; returns `(matched, stream match)`.
fn run(opts: &str, payload: &[u8], window: &[u8], added: bool) -> (bool, bool) {
    let rule = format!("alert tcp any any -> any any ({opts} sid:1;)");
    let engine = engine(&rule);
    assert!(engine.report().skipped.is_empty(), "{rule}");
    let mut th = engine.thread();
    let frame = tcp4(C4, S4, 40000, 80, 100, 200, ACK | PSH, payload);
    let m = decode(
        LinkType::Ethernet,
        &frame,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    );
    let pkt = Packet {
        meta: &m,
        data: &frame,
        ts: Timestamp(1),
    };
    let mut st = FlowDetect::default();
    let input = FlowInput {
        state: &mut st,
        to_server: true,
        pkts_toserver: 4,
        pkts_toclient: 3,
        tcp_established: Some(true),
        app: None,
        age_secs: 0,
    };
    let sd = StreamData {
        window,
        added,
        sizes: Some([1 + payload.len() as u32, 1]),
        ..StreamData::default()
    };
    let a = engine.inspect_with_stream(&pkt, Some(input), sd, &mut th);
    (!a.is_empty(), a.first().is_some_and(|a| a.stream))
}

#[test]
fn stream_and_packet_inspection_table() {
    // (options, packet payload, stream window, packet added to the stream, want)
    type Case<'a> = (&'a str, &'a [u8], &'a [u8], bool, (bool, bool));
    let cases: &[Case] = &[
        // Stream rule: the stream matches; the packet only when not added to a stream.
        ("content:\"abc\";", b"xxabc", b"abc", true, (true, true)),
        ("content:\"abc\";", b"xxabc", b"", true, (false, false)),
        ("content:\"abc\";", b"xxabc", b"", false, (true, false)),
        // depth/offset and stream_size: the packet payload too.
        (
            "content:\"abc\"; depth:5;",
            b"xxabc",
            b"",
            true,
            (true, false),
        ),
        (
            "stream_size:client,>,1; content:\"abc\";",
            b"xxabc",
            b"",
            true,
            (true, false),
        ),
        (
            "stream_size:client,>,1; content:\"abc\";",
            b"zzz",
            b"abc",
            true,
            (true, true),
        ),
        // Packet-header keywords make the rule packet-only (sv tcp-fastopen-08).
        (
            "flags:A+; content:\"abc\";",
            b"xxabc",
            b"",
            true,
            (true, false),
        ),
        (
            "flags:A+; content:\"abc\";",
            b"zzz",
            b"abc",
            true,
            (false, false),
        ),
        (
            "ttl:>0; content:\"abc\";",
            b"xxabc",
            b"",
            true,
            (true, false),
        ),
        (
            "window:>0; content:\"abc\";",
            b"zzz",
            b"abc",
            true,
            (false, false),
        ),
        (
            "flow:no_stream; content:\"abc\";",
            b"zzz",
            b"abc",
            true,
            (false, false),
        ),
        (
            "dsize:>0; content:\"abc\";",
            b"xxabc",
            b"abc",
            true,
            (true, false),
        ),
        // flow keywords keep the stream.
        (
            "flow:established,to_server; content:\"abc\";",
            b"zzz",
            b"abc",
            true,
            (true, true),
        ),
    ];
    for (i, &(opts, payload, window, added, want)) in cases.iter().enumerate() {
        assert_eq!(run(opts, payload, window, added), want, "case {i}: {opts}");
    }
}
