//! Test helpers: crafted IPv4/IPv6 TCP packets and a connection driver.
#![allow(dead_code)]

use shrike_capture::LinkType;
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats, PacketMeta};
use shrike_stream::Dir;
use shrike_stream::{
    AppChunk, HostOsPolicy, OsPolicy, StreamConfig, StreamEngine, StreamResult, TcpSession,
};

pub const SYN: u8 = 0x02;
pub const ACK: u8 = 0x10;
pub const FIN: u8 = 0x01;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;

/// IPv4 header checksum.
pub fn ip_csum(h: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in h.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// Raw IPv4 + TCP packet.
#[allow(clippy::too_many_arguments)]
pub fn tcp4(
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    win: u16,
    opts: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    assert!(opts.len() % 4 == 0);
    let tcp_len = 20 + opts.len() + payload.len();
    let total = 20 + tcp_len;
    let mut p = Vec::with_capacity(total);
    p.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0x40,
        0,
        64,
        6,
        0,
        0,
    ]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    let c = ip_csum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(&sport.to_be_bytes());
    p.extend_from_slice(&dport.to_be_bytes());
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(&ack.to_be_bytes());
    p.push((((20 + opts.len()) / 4) as u8) << 4);
    p.push(flags);
    p.extend_from_slice(&win.to_be_bytes());
    p.extend_from_slice(&[0, 0, 0, 0]);
    p.extend_from_slice(opts);
    p.extend_from_slice(payload);
    p
}

/// Decodes a raw IP packet.
pub fn meta_of(p: &[u8]) -> PacketMeta {
    let mut st = DecodeStats::default();
    decode(LinkType::Raw, p, &DecodeConfig::default(), &mut st)
}

/// A TCP connection between 10.0.0.1:40000 (client) and 10.0.0.2:80 (server).
pub struct Conn {
    pub eng: StreamEngine,
    pub ssn: TcpSession,
    pub ts: u32,
    /// App data collected per TCP direction (gaps as `?` bytes).
    pub app: [Vec<u8>; 2],
    /// Gaps seen per direction.
    pub gaps: [u64; 2],
    /// Raw data inspected per direction.
    pub raw: [Vec<u8>; 2],
    pub last: Option<StreamResult>,
    /// Drain the app layer after each packet.
    pub drain_app: bool,
    /// Drain the raw window (when ready) after each packet.
    pub drain_raw: bool,
}

pub const CLI: [u8; 4] = [10, 0, 0, 1];
pub const SRV: [u8; 4] = [10, 0, 0, 2];

impl Conn {
    pub fn new(cfg: StreamConfig) -> Self {
        Self::with_policy(cfg, HostOsPolicy::new(OsPolicy::Bsd))
    }

    pub fn with_policy(cfg: StreamConfig, hosts: HostOsPolicy) -> Self {
        Conn {
            eng: StreamEngine::new(cfg, hosts),
            ssn: TcpSession::new(),
            ts: 1_000_000,
            app: [Vec::new(), Vec::new()],
            gaps: [0; 2],
            raw: [Vec::new(), Vec::new()],
            last: None,
            drain_app: true,
            drain_raw: true,
        }
    }

    /// Sends a packet in flow direction `dir` (ToServer = from 10.0.0.1).
    pub fn send_opts(
        &mut self,
        dir: Dir,
        flags: u8,
        seq: u32,
        ack: u32,
        opts: &[u8],
        payload: &[u8],
    ) -> StreamResult {
        self.send_full(dir, flags, seq, ack, 65535, opts, payload)
    }

    /// [`Self::send`] with the advertised window `win`.
    pub fn send_win(
        &mut self,
        dir: Dir,
        flags: u8,
        seq: u32,
        ack: u32,
        win: u16,
        payload: &[u8],
    ) -> StreamResult {
        self.send_full(dir, flags, seq, ack, win, &[], payload)
    }

    #[allow(clippy::too_many_arguments)]
    fn send_full(
        &mut self,
        dir: Dir,
        flags: u8,
        seq: u32,
        ack: u32,
        win: u16,
        opts: &[u8],
        payload: &[u8],
    ) -> StreamResult {
        let p = match dir {
            Dir::ToServer => tcp4(CLI, SRV, 40000, 80, seq, ack, flags, win, opts, payload),
            Dir::ToClient => tcp4(SRV, CLI, 80, 40000, seq, ack, flags, win, opts, payload),
        };
        let m = meta_of(&p);
        self.ts += 1;
        let r = self.eng.on_packet(&mut self.ssn, &m, &p, dir, self.ts);
        self.last = Some(r);
        self.drain();
        r
    }

    pub fn send(
        &mut self,
        dir: Dir,
        flags: u8,
        seq: u32,
        ack: u32,
        payload: &[u8],
    ) -> StreamResult {
        self.send_opts(dir, flags, seq, ack, &[], payload)
    }

    pub fn drain(&mut self) {
        for (i, d) in [Dir::ToServer, Dir::ToClient].into_iter().enumerate() {
            if self.drain_app {
                loop {
                    match self.ssn.app_next(d) {
                        AppChunk::Data(b) => {
                            let n = b.len();
                            self.app[i].extend_from_slice(b);
                            self.ssn.app_consume(d, n);
                        }
                        AppChunk::Gap(n) => {
                            self.gaps[i] += u64::from(n);
                            self.app[i].extend(std::iter::repeat_n(b'?', n as usize));
                            self.ssn.app_consume(d, n as usize);
                        }
                        AppChunk::None => break,
                    }
                }
            }
            if self.drain_raw {
                let w = self.eng.raw_window(&self.ssn, d);
                if w.ready {
                    let n = w.data.len();
                    self.raw[i].extend_from_slice(w.data);
                    self.ssn.raw_consume(d, n);
                }
            }
        }
    }

    /// Client SYN (isn 1000), server SYN/ACK (isn 5000), client ACK.
    pub fn handshake(&mut self) {
        self.send(Dir::ToServer, SYN, 1000, 0, b"");
        self.send(Dir::ToClient, SYN | ACK, 5000, 1001, b"");
        self.send(Dir::ToServer, ACK, 1001, 5001, b"");
    }

    pub fn end(&mut self) {
        self.eng.flow_end(&mut self.ssn);
        self.drain();
    }
}
