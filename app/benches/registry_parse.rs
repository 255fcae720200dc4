//! Parse throughput of every registered protocol on a real capture, through the registry
//! trait as the engine drives it: the payloads of the capture's first flow of the protocol
//! (by its usual ports), in capture order, fed to a fresh parser each iteration. Captures
//! come from `tests/data/app` and, when present, the shared corpus (`../shared/corpus`);
//! a protocol whose capture is missing is skipped. Throughput is in payload bytes.
//!
//!     cargo bench -p shrike-app --bench registry_parse [-- <protocol>]

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shrike_app::registry::{ParserConfig, PROTOCOLS};
use shrike_app::Dir;

/// (protocol, capture relative to the repository, transport is TCP).
const CASES: &[(&str, &str, bool)] = &[
    ("ssh", "tests/data/app/ssh_curve25519.pcap", true),
    ("telnet", "tests/data/app/telnet.pcap", true),
    ("rfb", "tests/data/app/rfb.pcap", true),
    ("sip", "tests/data/app/sip.pcap", false),
    ("tftp", "tests/data/app/tftp.pcap", false),
    ("dhcp", "tests/data/app/dhcp.pcap", false),
    ("ike", "tests/data/app/ikev2.pcap", false),
    ("krb5", "tests/data/app/krb5_error.pcap", false),
    ("snmp", "tests/data/app/snmpv1_get.pcap", false),
    ("mqtt", "tests/data/app/mqtt_cases/cases.pcap", true),
    ("ntp", "../shared/corpus/pcaps/ndpi/NTPv4.pcap", false),
    ("ftp", "../shared/corpus/pcaps/ndpi/ftp.pcap", true),
    ("pgsql", "../shared/corpus/pcaps/ndpi/pgsql.pcap", true),
    (
        "smb",
        "../shared/corpus/pcaps/zeek/smb_raw_ntlm_in_smb.pcap",
        true,
    ),
    ("dnp3", "../shared/corpus/pcaps/ndpi/dnp3.pcap", true),
    ("modbus", "../shared/corpus/pcaps/ndpi/modbus.pcap", true),
    ("quic", "../shared/corpus/pcaps/ndpi/quic.pcap", false),
    ("nfs", "../shared/corpus/pcaps/ndpi/nfsv3.pcap", true),
    ("dcerpc", "../shared/corpus/pcaps/ndpi/dcerpc.pcap", true),
    ("rdp", "../shared/corpus/pcaps/zeek/rdp.pcap", true),
    ("imap", "../shared/corpus/pcaps/ndpi/imap.pcap", true),
];

/// One packet's transport payload: (source address and port, destination, data).
type Seg = ((Vec<u8>, u16), (Vec<u8>, u16), Vec<u8>);

/// The TCP or UDP payloads of a classic pcap with Ethernet (or raw IP) frames.
fn payloads(path: &Path, tcp: bool) -> Option<Vec<Seg>> {
    let b = std::fs::read(path).ok()?;
    let magic = u32::from_le_bytes(b.get(0..4)?.try_into().ok()?);
    let le = match magic {
        0xa1b2_c3d4 | 0xa1b2_3c4d => true,
        0xd4c3_b2a1 | 0x4d3c_b2a1 => false,
        _ => return None,
    };
    let u32at = |o: usize| -> Option<u32> {
        let a: [u8; 4] = b.get(o..o + 4)?.try_into().ok()?;
        Some(if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        })
    };
    let link = u32at(20)?;
    let mut off = 24;
    let mut out = Vec::new();
    while let Some(caplen) = u32at(off + 8) {
        let frame = b.get(off + 16..off + 16 + caplen as usize)?;
        off += 16 + caplen as usize;
        let ip = match link {
            1 => {
                let mut p = 12;
                let mut ty = u16::from_be_bytes(frame.get(p..p + 2)?.try_into().ok()?);
                while ty == 0x8100 {
                    p += 4;
                    ty = u16::from_be_bytes(frame.get(p..p + 2)?.try_into().ok()?);
                }
                frame.get(p + 2..)?
            }
            101 => frame,
            _ => return None,
        };
        let (proto, src, dst, l4) = match ip.first()? >> 4 {
            4 => {
                let ihl = usize::from(ip[0] & 15) * 4;
                let total = usize::from(u16::from_be_bytes(ip.get(2..4)?.try_into().ok()?));
                (
                    ip[9],
                    ip.get(12..16)?,
                    ip.get(16..20)?,
                    ip.get(ihl..total.min(ip.len()))?,
                )
            }
            6 => (ip[6], ip.get(8..24)?, ip.get(24..40)?, ip.get(40..)?),
            _ => continue,
        };
        let (data, sp, dp) = match (proto, tcp) {
            (6, true) => {
                let doff = usize::from(l4.get(12)? >> 4) * 4;
                (l4.get(doff..)?, &l4[0..2], &l4[2..4])
            }
            (17, false) => (l4.get(8..)?, &l4[0..2], &l4[2..4]),
            _ => continue,
        };
        if data.is_empty() {
            continue;
        }
        let port = |p: &[u8]| u16::from_be_bytes([p[0], p[1]]);
        out.push((
            (src.to_vec(), port(sp)),
            (dst.to_vec(), port(dp)),
            data.to_vec(),
        ));
    }
    Some(out)
}

/// The first flow on one of `ports`: its payloads with their direction.
fn first_flow(segs: Vec<Seg>, ports: &[u16]) -> Vec<(Dir, Vec<u8>)> {
    let Some(server) = segs
        .iter()
        .find_map(|(s, d, _)| {
            if ports.contains(&d.1) {
                Some(d.clone())
            } else if ports.contains(&s.1) {
                Some(s.clone())
            } else {
                None
            }
        })
        .or_else(|| segs.first().map(|(_, d, _)| d.clone()))
    else {
        return Vec::new();
    };
    let client = segs.iter().find_map(|(s, d, _)| {
        if *d == server {
            Some(s.clone())
        } else if *s == server {
            Some(d.clone())
        } else {
            None
        }
    });
    segs.into_iter()
        .filter_map(|(s, d, data)| {
            if d == server && Some(&s) == client.as_ref() {
                Some((Dir::ToServer, data))
            } else if s == server && Some(&d) == client.as_ref() {
                Some((Dir::ToClient, data))
            } else {
                None
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let cfg = ParserConfig::default();
    let mut g = c.benchmark_group("registry");
    for (name, pcap, tcp) in CASES {
        let Some(p) = PROTOCOLS.iter().find(|p| p.name == *name) else {
            continue;
        };
        let Some(segs) = payloads(&root.join(pcap), *tcp) else {
            continue;
        };
        let msgs = first_flow(segs, p.ports);
        if msgs.is_empty() {
            continue;
        }
        g.throughput(Throughput::Bytes(
            msgs.iter().map(|m| m.1.len() as u64).sum(),
        ));
        g.bench_function(*name, |b| {
            b.iter(|| {
                let mut st = (p.new_parser)(&cfg, *tcp);
                for (d, m) in &msgs {
                    st.parse(*d, std::hint::black_box(m));
                }
                st.tx_count()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
