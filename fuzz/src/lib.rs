//! Helpers shared by the fuzz targets: a byte cursor that turns fuzz input into structured
//! choices, and builders for raw IPv4/IPv6 packets (valid header checksums, so the decoder
//! lets them through to the stage under test).

/// Reads structured values from fuzz bytes; every read past the end yields zeros.
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// A cursor over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data }
    }
    /// Bytes left.
    pub fn len(&self) -> usize {
        self.data.len()
    }
    /// True when nothing is left.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// One byte (0 at the end).
    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }
    /// A big-endian u16.
    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.u8(), self.u8()])
    }
    /// A big-endian u32.
    pub fn u32(&mut self) -> u32 {
        u32::from_be_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    /// Up to `n` bytes.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.data.len());
        let (a, b) = self.data.split_at(n);
        self.data = b;
        a
    }
    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        self.take(self.data.len())
    }
}

/// Internet checksum of `h`.
pub fn csum(h: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in h.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], c.get(1).copied().unwrap_or(0)]));
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// A raw IPv4 packet (no L2) with a valid header checksum.
pub fn ipv4(src: [u8; 4], dst: [u8; 4], id: u16, frag: u16, proto: u8, body: &[u8]) -> Vec<u8> {
    let total = (20 + body.len()).min(65_535);
    let mut p = Vec::with_capacity(total);
    p.extend_from_slice(&[0x45, 0, (total >> 8) as u8, total as u8]);
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&frag.to_be_bytes());
    p.extend_from_slice(&[64, proto, 0, 0]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    let c = csum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(&body[..total - 20]);
    p
}

/// A raw IPv6 packet carrying a fragment header (`next` = upper protocol).
pub fn ipv6_frag(src_last: u8, id: u32, off_flags: u16, next: u8, body: &[u8]) -> Vec<u8> {
    let plen = (8 + body.len()).min(65_535);
    let mut p = Vec::with_capacity(40 + plen);
    p.extend_from_slice(&[0x60, 0, 0, 0]);
    p.extend_from_slice(&(plen as u16).to_be_bytes());
    p.extend_from_slice(&[44, 64]);
    let mut a = [0u8; 16];
    a[0] = 0x20;
    a[1] = 0x01;
    a[15] = src_last;
    p.extend_from_slice(&a);
    a[15] = 0xfe;
    p.extend_from_slice(&a);
    p.extend_from_slice(&[next, 0]);
    p.extend_from_slice(&off_flags.to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&body[..plen - 8]);
    p
}

/// A TCP header (+ options, padded to 4 bytes) and payload.
#[allow(clippy::too_many_arguments)]
pub fn tcp(
    sport: u16,
    dport: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    win: u16,
    opts: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    let opts = &opts[..opts.len().min(40)];
    let olen = opts.len().div_ceil(4) * 4;
    let mut t = Vec::with_capacity(20 + olen + payload.len());
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&ack.to_be_bytes());
    t.push((((20 + olen) / 4) as u8) << 4);
    t.push(flags);
    t.extend_from_slice(&win.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 0]);
    t.extend_from_slice(opts);
    t.resize(20 + olen, 0);
    t.extend_from_slice(payload);
    t
}

/// Splits `data` into chunks whose sizes are chosen by `sizes` (cycled; 0 means "the rest").
pub fn split<'a>(data: &'a [u8], sizes: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    let mut i = 0;
    while !rest.is_empty() {
        let s = sizes.get(i % sizes.len().max(1)).copied().unwrap_or(0) as usize;
        let n = if s == 0 {
            rest.len()
        } else {
            s.min(rest.len())
        };
        let (a, b) = rest.split_at(n);
        out.push(a);
        rest = b;
        i += 1;
    }
    out
}

/// The binary's config modules (`src/config.rs`, `src/suricata_yaml.rs`), from its library
/// target.
pub mod bin_config {
    pub use shrike::{config, suricata_yaml};
}

/// One step of an app-layer conversation decoded from fuzz bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// Data in one direction (`true` = to server).
    Data(bool, &'a [u8]),
    /// A gap of this many bytes.
    Gap(bool, u32),
    /// End of stream in one direction.
    Close(bool),
}

/// Decodes the fuzz bytes into app-layer steps: each step is an op byte (bit 0: direction,
/// bits 1-2: data / data / gap / close, bits 3-7: a length class) followed by the data.
/// The two directions interleave and split wherever the input says.
pub fn steps(data: &[u8]) -> Vec<Step<'_>> {
    let mut b = Bytes::new(data);
    let mut out = Vec::new();
    while !b.is_empty() && out.len() < 1000 {
        let op = b.u8();
        let ts = op & 1 == 0;
        match (op >> 1) & 3 {
            0 | 1 => {
                let n = match op >> 3 {
                    0 => b.len(),
                    k @ 1..=15 => usize::from(k),
                    k => usize::from(b.u8()) * usize::from(k - 15),
                };
                out.push(Step::Data(ts, b.take(n)));
            }
            2 => out.push(Step::Gap(ts, u32::from(op >> 3) * u32::from(b.u8()) + 1)),
            _ => out.push(Step::Close(ts)),
        }
    }
    out
}

/// Drive a registry protocol's parser with fuzz input, through the registry trait alone (as
/// the engine and the pipeline reach it): both directions, each step one datagram (or stream
/// chunk), with gaps and the close, the probes on every step; every sticky buffer and event
/// of every transaction is read, and each alert object must be valid JSON.
pub fn drive_registry_parser(proto: &shrike_app::registry::Protocol, tcp: bool, data: &[u8]) {
    use shrike_app::registry::{AppParser, Detect, ParserConfig};
    use shrike_app::Dir;
    let dir = |ts: bool| if ts { Dir::ToServer } else { Dir::ToClient };
    let mut st: Box<dyn AppParser> = (proto.new_parser)(&ParserConfig::default(), tcp);
    for s in steps(data) {
        match s {
            Step::Data(ts, d) => {
                let detect = if tcp { proto.tcp } else { proto.udp };
                if let Detect::Port(f) | Detect::Pattern(f) = detect {
                    let _ = f(dir(ts), d);
                }
                let _ = st.parse(dir(ts), d);
            }
            Step::Gap(ts, n) => st.gap(dir(ts), n.into()),
            Step::Close(_) => st.close(),
        }
        for tx in 0..st.tx_count() {
            for b in 0..proto.buffers.len() as u16 {
                for d in [Dir::ToServer, Dir::ToClient] {
                    st.buffer(tx, b, d, &mut |x| x.len() > usize::MAX - 1);
                }
            }
            for e in 0..proto.events.len() as u16 {
                let _ = st.has_event(tx, e);
            }
            let mut w = shrike_output::JsonWriter::with_capacity(256);
            w.start_object();
            st.alert_members(tx, &mut w);
            w.close();
            let out = w.into_inner();
            assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
        }
    }
}
