//! Builders of pcap/pcapng byte images and helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::{self, Read};

use shrike_capture::{CaptureError, FileSource, LinkType, PacketSource, Timestamp};

/// A packet copied out of a source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pkt {
    pub ts: Timestamp,
    pub link: LinkType,
    pub data: Vec<u8>,
    pub orig_len: u32,
}

/// Reads every packet; returns them together with the error that stopped the read, if any.
pub fn drain(src: &mut FileSource) -> (Vec<Pkt>, Option<CaptureError>) {
    let mut out = Vec::new();
    loop {
        match src.next_packet() {
            Ok(Some(p)) => out.push(Pkt {
                ts: p.ts,
                link: p.link,
                data: p.data.to_vec(),
                orig_len: p.orig_len,
            }),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

/// Opens an in-memory image.
pub fn source(bytes: &[u8]) -> Result<FileSource, CaptureError> {
    FileSource::from_reader("mem.pcap", io::Cursor::new(bytes.to_vec()))
}

/// Reads all packets of an image, failing the test on any error.
pub fn read_ok(bytes: &[u8]) -> (Vec<Pkt>, FileSource) {
    let mut src = source(bytes).expect("header");
    let (pkts, err) = drain(&mut src);
    assert!(err.is_none(), "unexpected error: {err:?}");
    (pkts, src)
}

/// Payload of `n` bytes derived from `seed`, so packets differ.
pub fn payload(seed: u8, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| seed.wrapping_mul(31).wrapping_add(i as u8))
        .collect()
}

fn put16(v: &mut Vec<u8>, x: u16, be: bool) {
    v.extend_from_slice(&if be { x.to_be_bytes() } else { x.to_le_bytes() });
}

fn put32(v: &mut Vec<u8>, x: u32, be: bool) {
    v.extend_from_slice(&if be { x.to_be_bytes() } else { x.to_le_bytes() });
}

/// Builds a classic pcap image.
pub struct PcapBuilder {
    pub be: bool,
    pub buf: Vec<u8>,
    /// Offset where each record ends.
    pub ends: Vec<usize>,
}

impl PcapBuilder {
    /// Header with version 2.4, snaplen 65535 and the given LinkType field (raw 32 bits).
    pub fn new(be: bool, nanos: bool, linktype_field: u32) -> Self {
        Self::with_version(be, nanos, linktype_field, 2, 4)
    }

    pub fn with_version(
        be: bool,
        nanos: bool,
        linktype_field: u32,
        major: u16,
        minor: u16,
    ) -> Self {
        let mut buf = Vec::new();
        put32(&mut buf, if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }, be);
        put16(&mut buf, major, be);
        put16(&mut buf, minor, be);
        put32(&mut buf, 0, be);
        put32(&mut buf, 0, be);
        put32(&mut buf, 65535, be);
        put32(&mut buf, linktype_field, be);
        PcapBuilder {
            be,
            buf,
            ends: Vec::new(),
        }
    }

    /// A record whose caplen is `data.len()`.
    pub fn record(&mut self, secs: u32, frac: u32, data: &[u8], orig_len: u32) -> &mut Self {
        self.record_raw(secs, frac, data.len() as u32, orig_len, data)
    }

    /// A record with an arbitrary caplen field.
    pub fn record_raw(
        &mut self,
        secs: u32,
        frac: u32,
        caplen: u32,
        orig_len: u32,
        data: &[u8],
    ) -> &mut Self {
        let be = self.be;
        put32(&mut self.buf, secs, be);
        put32(&mut self.buf, frac, be);
        put32(&mut self.buf, caplen, be);
        put32(&mut self.buf, orig_len, be);
        self.buf.extend_from_slice(data);
        self.ends.push(self.buf.len());
        self
    }
}

/// Builds a pcapng image block by block; the byte order is that of the last SHB.
#[derive(Default)]
pub struct NgBuilder {
    pub be: bool,
    pub buf: Vec<u8>,
    /// (end offset, is a packet block) of every block.
    pub ends: Vec<(usize, bool)>,
}

/// An option for [`NgBuilder::idb`].
pub fn opt(code: u16, value: &[u8]) -> (u16, Vec<u8>) {
    (code, value.to_vec())
}

impl NgBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Any block: header, body padded to 4, trailer.
    pub fn block(&mut self, btype: u32, body: &[u8], is_packet: bool) -> &mut Self {
        let len = 12 + body.len().next_multiple_of(4);
        self.block_with_lens(btype, len as u32, body, len as u32, is_packet)
    }

    /// A block with explicit (possibly wrong) header and trailer lengths.
    pub fn block_with_lens(
        &mut self,
        btype: u32,
        len: u32,
        body: &[u8],
        trailer: u32,
        is_packet: bool,
    ) -> &mut Self {
        let be = self.be;
        put32(&mut self.buf, btype, be);
        put32(&mut self.buf, len, be);
        self.buf.extend_from_slice(body);
        let pad = body.len().next_multiple_of(4) - body.len();
        self.buf.resize(self.buf.len() + pad, 0);
        put32(&mut self.buf, trailer, be);
        self.ends.push((self.buf.len(), is_packet));
        self
    }

    fn options(&self, opts: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut v = Vec::new();
        if opts.is_empty() {
            return v;
        }
        for (code, val) in opts {
            put16(&mut v, *code, self.be);
            put16(&mut v, val.len() as u16, self.be);
            v.extend_from_slice(val);
            v.resize(v.len().next_multiple_of(4), 0);
        }
        put32(&mut v, 0, self.be);
        v
    }

    /// Section Header Block in the given byte order, version 1.0.
    pub fn shb(&mut self, be: bool) -> &mut Self {
        self.shb_version(be, 1, 0)
    }

    pub fn shb_version(&mut self, be: bool, major: u16, minor: u16) -> &mut Self {
        self.be = be;
        let mut body = Vec::new();
        put32(&mut body, 0x1a2b_3c4d, be);
        put16(&mut body, major, be);
        put16(&mut body, minor, be);
        body.extend_from_slice(&u64::MAX.to_le_bytes());
        let opts = self.options(&[opt(4, b"shrike test")]);
        body.extend_from_slice(&opts);
        self.block(0x0a0d_0d0a, &body, false)
    }

    /// Interface Description Block.
    pub fn idb(&mut self, linktype: u16, snaplen: u32, opts: &[(u16, Vec<u8>)]) -> &mut Self {
        let mut body = Vec::new();
        put16(&mut body, linktype, self.be);
        put16(&mut body, 0, self.be);
        put32(&mut body, snaplen, self.be);
        let o = self.options(opts);
        body.extend_from_slice(&o);
        self.block(1, &body, false)
    }

    /// Enhanced Packet Block (with one comment option, to test that options are skipped).
    pub fn epb(&mut self, iface: u32, ts: u64, data: &[u8], orig_len: u32) -> &mut Self {
        let mut body = Vec::new();
        put32(&mut body, iface, self.be);
        put32(&mut body, (ts >> 32) as u32, self.be);
        put32(&mut body, ts as u32, self.be);
        put32(&mut body, data.len() as u32, self.be);
        put32(&mut body, orig_len, self.be);
        body.extend_from_slice(data);
        body.resize(body.len().next_multiple_of(4), 0);
        let o = self.options(&[opt(1, b"a comment")]);
        body.extend_from_slice(&o);
        self.block(6, &body, true)
    }

    /// Obsolete Packet Block.
    pub fn pb(&mut self, iface: u16, ts: u64, data: &[u8], orig_len: u32) -> &mut Self {
        let mut body = Vec::new();
        put16(&mut body, iface, self.be);
        put16(&mut body, 0, self.be);
        put32(&mut body, (ts >> 32) as u32, self.be);
        put32(&mut body, ts as u32, self.be);
        put32(&mut body, data.len() as u32, self.be);
        put32(&mut body, orig_len, self.be);
        body.extend_from_slice(data);
        self.block(2, &body, true)
    }

    /// Simple Packet Block.
    pub fn spb(&mut self, data: &[u8], orig_len: u32) -> &mut Self {
        let mut body = Vec::new();
        put32(&mut body, orig_len, self.be);
        body.extend_from_slice(data);
        self.block(3, &body, true)
    }
}

/// A reader that returns 1 to 7 bytes per call, like a slow pipe.
pub struct ShortReads {
    pub data: Vec<u8>,
    pub at: usize,
    pub state: u32,
}

impl ShortReads {
    pub fn new(data: Vec<u8>) -> Self {
        ShortReads {
            data,
            at: 0,
            state: 0x9e37_79b9,
        }
    }
}

impl Read for ShortReads {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        // xorshift for a deterministic 1..=7 chunk size.
        self.state ^= self.state << 13;
        self.state ^= self.state >> 17;
        self.state ^= self.state << 5;
        let step = 1 + (self.state % 7) as usize;
        let rest = &self.data[self.at..];
        let n = step.min(out.len()).min(rest.len());
        out[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        Ok(n)
    }
}
