//! Helpers for the hostile-traffic and bad-input tests: a deterministic RNG, frame builders
//! (Ethernet/IPv4/IPv6/TCP/UDP), pcap and pcapng writers, and a runner that reports the
//! child's peak RSS (`/usr/bin/time -f %M`, or `VmHWM` sampled from `/proc` when `time` is
//! missing).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// xorshift64*: deterministic and dependency-free.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
    pub fn u16(&mut self) -> u16 {
        (self.next() >> 48) as u16
    }
    pub fn u8(&mut self) -> u8 {
        (self.next() >> 56) as u8
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

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

/// Ethernet II frame around an IPv4 (0x0800) or IPv6 (0x86dd) packet.
pub fn eth(ethertype: u16, l3: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + l3.len());
    f.extend_from_slice(&[0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);
    f.extend_from_slice(&[0x00, 0x66, 0x77, 0x88, 0x99, 0xaa]);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(l3);
    f
}

/// IPv4 packet with a valid header checksum; `frag` is the flags+offset field.
pub fn ipv4(src: [u8; 4], dst: [u8; 4], id: u16, frag: u16, proto: u8, body: &[u8]) -> Vec<u8> {
    let total = 20 + body.len();
    let mut p = Vec::with_capacity(total);
    p.extend_from_slice(&[0x45, 0, (total >> 8) as u8, total as u8]);
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&frag.to_be_bytes());
    p.extend_from_slice(&[64, proto, 0, 0]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    let c = csum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(body);
    p
}

/// IPv6 packet (`next` header, no extension headers).
pub fn ipv6(src: [u8; 16], dst: [u8; 16], next: u8, body: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(40 + body.len());
    p.extend_from_slice(&[0x60, 0, 0, 0]);
    p.extend_from_slice(&(body.len() as u16).to_be_bytes());
    p.extend_from_slice(&[next, 64]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(body);
    p
}

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;

/// TCP segment (no checksum: shrike does not validate by default, like Suricata's `-k none`
/// offline default for files).
pub fn tcp(sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut t = Vec::with_capacity(20 + payload.len());
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&ack.to_be_bytes());
    t.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    t.extend_from_slice(payload);
    t
}

pub fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = Vec::with_capacity(8 + payload.len());
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    u
}

/// Ethernet + IPv4 + TCP.
#[allow(clippy::too_many_arguments)]
pub fn tcp4(
    src: [u8; 4],
    dst: [u8; 4],
    sp: u16,
    dp: u16,
    seq: u32,
    ack: u32,
    fl: u8,
    pl: &[u8],
) -> Vec<u8> {
    eth(
        0x0800,
        &ipv4(src, dst, 1, 0x4000, 6, &tcp(sp, dp, seq, ack, fl, pl)),
    )
}

/// Ethernet + IPv4 + UDP.
pub fn udp4(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16, pl: &[u8]) -> Vec<u8> {
    eth(0x0800, &ipv4(src, dst, 1, 0x4000, 17, &udp(sp, dp, pl)))
}

/// A classic pcap file (microsecond timestamps, little endian).
pub struct Pcap {
    pub buf: Vec<u8>,
    pub packets: u64,
}

impl Pcap {
    pub fn new(linktype: u32) -> Pcap {
        let mut buf = Vec::with_capacity(1 << 20);
        buf.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        buf.extend_from_slice(&2u16.to_le_bytes());
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&[0; 8]);
        buf.extend_from_slice(&262_144u32.to_le_bytes());
        buf.extend_from_slice(&linktype.to_le_bytes());
        Pcap { buf, packets: 0 }
    }
    /// Appends a record at `usec` microseconds since the epoch.
    pub fn push(&mut self, usec: u64, frame: &[u8]) {
        self.buf
            .extend_from_slice(&((usec / 1_000_000) as u32).to_le_bytes());
        self.buf
            .extend_from_slice(&((usec % 1_000_000) as u32).to_le_bytes());
        self.buf
            .extend_from_slice(&(frame.len() as u32).to_le_bytes());
        self.buf
            .extend_from_slice(&(frame.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(frame);
        self.packets += 1;
    }
    pub fn write(&self, path: &Path) {
        std::fs::write(path, &self.buf).unwrap();
    }
}

/// A pcapng file: one section, one Ethernet interface, enhanced packet blocks.
pub struct Pcapng {
    pub buf: Vec<u8>,
    pub packets: u64,
}

fn block(buf: &mut Vec<u8>, btype: u32, body: &[u8]) {
    let pad = (4 - body.len() % 4) % 4;
    let len = (12 + body.len() + pad) as u32;
    buf.extend_from_slice(&btype.to_le_bytes());
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(body);
    buf.extend(std::iter::repeat_n(0u8, pad));
    buf.extend_from_slice(&len.to_le_bytes());
}

impl Pcapng {
    pub fn new() -> Pcapng {
        let mut buf = Vec::new();
        let mut shb = Vec::new();
        shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        block(&mut buf, 0x0a0d_0d0a, &shb);
        let mut idb = Vec::new();
        idb.extend_from_slice(&1u16.to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&262_144u32.to_le_bytes());
        block(&mut buf, 1, &idb);
        Pcapng { buf, packets: 0 }
    }
    pub fn push(&mut self, usec: u64, frame: &[u8]) {
        let mut epb = Vec::with_capacity(20 + frame.len());
        epb.extend_from_slice(&0u32.to_le_bytes());
        epb.extend_from_slice(&((usec >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(usec as u32).to_le_bytes());
        epb.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        epb.extend_from_slice(frame);
        block(&mut self.buf, 6, &epb);
        self.packets += 1;
    }
    pub fn write(&self, path: &Path) {
        std::fs::write(path, &self.buf).unwrap();
    }
}

/// The result of a run: the process output and its peak RSS in KiB (when measurable).
pub struct Run {
    pub out: Output,
    pub peak_rss_kib: Option<u64>,
}

impl Run {
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    pub fn code(&self) -> Option<i32> {
        self.out.status.code()
    }
}

/// Runs shrike with `args`, measuring its peak RSS.
pub fn run_measured(args: &[&std::ffi::OsStr], scratch: &Path) -> Run {
    let bin = env!("CARGO_BIN_EXE_shrike");
    if Path::new("/usr/bin/time").exists() {
        let rss_file = scratch.join("peak-rss.txt");
        let out = Command::new("/usr/bin/time")
            .arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(&rss_file)
            .arg(bin)
            .args(args)
            .output()
            .unwrap();
        let peak = std::fs::read_to_string(&rss_file)
            .ok()
            .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()));
        return Run {
            out,
            peak_rss_kib: peak,
        };
    }
    // Fallback: sample VmHWM while the child runs.
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status_path = PathBuf::from(format!("/proc/{}/status", child.id()));
    let mut peak = None;
    let stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        if let Some(mut e) = stderr {
            let _ = std::io::Read::read_to_end(&mut e, &mut s);
        }
        s
    });
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_path) {
            if let Some(v) = vm_kib(&text, "VmHWM:") {
                peak = Some(peak.unwrap_or(0).max(v));
            }
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = child.wait_with_output().unwrap();
    out.stderr = reader.join().unwrap();
    Run {
        out,
        peak_rss_kib: peak,
    }
}

/// `VmHWM:   1234 kB` → 1234.
pub fn vm_kib(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Value of `name=V` in the `-v` counters line.
pub fn counter(err: &str, name: &str) -> Option<u64> {
    let line = err.lines().find(|l| l.starts_with("shrike: counters:"))?;
    line.split(' ')
        .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
        .and_then(|v| v.parse().ok())
}

/// The `N packets` of the summary line.
pub fn summary_packets(err: &str) -> Option<u64> {
    let line = err
        .lines()
        .find(|l| l.starts_with("shrike: ") && l.contains(" packets, "))?;
    line.strip_prefix("shrike: ")?
        .split(' ')
        .next()?
        .parse()
        .ok()
}

/// A value from the last `stats` EVE record, by dotted path (`flow.memcap`).
pub fn eve_stat(dir: &Path, path: &str) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join("eve.json")).ok()?;
    let rec: serde_json::Value = text
        .lines()
        .rfind(|l| l.contains("\"event_type\":\"stats\""))
        .and_then(|l| serde_json::from_str(l).ok())?;
    let mut v = &rec["stats"];
    for seg in path.split('.') {
        v = v.get(seg)?;
    }
    v.as_u64()
}

/// A fresh temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "shrike-hostile-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A TCP conversation between `c` (client) and `s` on ports `sp` -> `dp`: the handshake,
/// then each `(from client, payload)` acknowledged by the other side, one millisecond per
/// packet from `*t` on; nothing closes it (the flow ends with the capture).
pub fn tcp_conversation(
    cap: &mut Pcap,
    t: &mut u64,
    (c, s): ([u8; 4], [u8; 4]),
    (sp, dp): (u16, u16),
    msgs: &[(bool, &[u8])],
) {
    let (mut cs, mut ss) = (1000u32, 5000u32);
    let mut push = |cap: &mut Pcap, f: Vec<u8>| {
        *t += 1000;
        cap.push(*t, &f);
    };
    push(cap, tcp4(c, s, sp, dp, cs, 0, SYN, b""));
    push(cap, tcp4(s, c, dp, sp, ss, cs + 1, SYN | ACK, b""));
    cs += 1;
    ss += 1;
    push(cap, tcp4(c, s, sp, dp, cs, ss, ACK, b""));
    for (client, pl) in msgs {
        let n = pl.len() as u32;
        if *client {
            push(cap, tcp4(c, s, sp, dp, cs, ss, PSH | ACK, pl));
            cs += n;
            push(cap, tcp4(s, c, dp, sp, ss, cs, ACK, b""));
        } else {
            push(cap, tcp4(s, c, dp, sp, ss, cs, PSH | ACK, pl));
            ss += n;
            push(cap, tcp4(c, s, sp, dp, cs, ss, ACK, b""));
        }
    }
}
