//! A tiny pcap / pcapng reader for tests (the product reader lives in shrike-capture).

use std::path::{Path, PathBuf};

/// One packet: link type number and captured bytes.
pub struct Pkt {
    pub linktype: u32,
    pub data: Vec<u8>,
}

fn u16e(b: &[u8], o: usize, be: bool) -> Option<u16> {
    let s: [u8; 2] = b.get(o..o + 2)?.try_into().ok()?;
    Some(if be {
        u16::from_be_bytes(s)
    } else {
        u16::from_le_bytes(s)
    })
}

fn u32e(b: &[u8], o: usize, be: bool) -> Option<u32> {
    let s: [u8; 4] = b.get(o..o + 4)?.try_into().ok()?;
    Some(if be {
        u32::from_be_bytes(s)
    } else {
        u32::from_le_bytes(s)
    })
}

/// Reads every packet of a pcap or pcapng file. Returns `None` when the format is unknown
/// or the file is damaged before the first packet; stops quietly at a damaged tail.
pub fn read(path: &Path) -> Option<Vec<Pkt>> {
    let mut b = std::fs::read(path).ok()?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&b[..]), &mut out).ok()?;
        b = out;
    }
    let magic = u32e(&b, 0, false)?;
    match magic {
        0xa1b2c3d4 | 0xa1b23c4d => read_pcap(&b, false),
        0xd4c3b2a1 | 0x4d3cb2a1 => read_pcap(&b, true),
        0x0a0d0d0a => read_pcapng(&b),
        _ => None,
    }
}

fn read_pcap(b: &[u8], be: bool) -> Option<Vec<Pkt>> {
    // The link type's upper bits may carry FCS information.
    let linktype = u32e(b, 20, be)? & 0x0fff_ffff;
    let mut out = Vec::new();
    let mut o = 24;
    while let (Some(incl), Some(_)) = (u32e(b, o + 8, be), u32e(b, o + 12, be)) {
        let start = o + 16;
        // A damaged last record keeps what is there, as capinfos does.
        let end = (start + incl as usize).min(b.len());
        let Some(d) = b.get(start..end) else { break };
        out.push(Pkt {
            linktype,
            data: d.to_vec(),
        });
        o = end;
    }
    Some(out)
}

fn read_pcapng(b: &[u8]) -> Option<Vec<Pkt>> {
    let mut out = Vec::new();
    let mut be = false;
    let mut ifaces: Vec<u32> = Vec::new();
    let mut o = 0;
    while o + 12 <= b.len() {
        let t = u32e(b, o, be)?;
        if t == 0x0a0d0d0a {
            be = match u32e(b, o + 8, false)? {
                0x1a2b3c4d => false,
                0x4d3c2b1a => true,
                _ => return Some(out),
            };
            ifaces.clear();
        }
        let len = u32e(b, o + 4, be)? as usize;
        if len < 12 || o + len > b.len() {
            break;
        }
        let body = &b[o + 8..o + len - 4];
        match t {
            1 => ifaces.push(u32::from(u16e(body, 0, be)?)),
            6 => {
                let ifid = u32e(body, 0, be)? as usize;
                let cap = u32e(body, 12, be)? as usize;
                if let (Some(lt), Some(d)) = (ifaces.get(ifid), body.get(20..20 + cap)) {
                    out.push(Pkt {
                        linktype: *lt,
                        data: d.to_vec(),
                    });
                }
            }
            3 => {
                let orig = u32e(body, 0, be)? as usize;
                let d = body.get(4..).unwrap_or(&[]);
                let d = &d[..orig.min(d.len())];
                if let Some(lt) = ifaces.first() {
                    out.push(Pkt {
                        linktype: *lt,
                        data: d.to_vec(),
                    });
                }
            }
            2 => {
                let ifid = usize::from(u16e(body, 0, be)?);
                let cap = u32e(body, 12, be)? as usize;
                if let (Some(lt), Some(d)) = (ifaces.get(ifid), body.get(20..20 + cap)) {
                    out.push(Pkt {
                        linktype: *lt,
                        data: d.to_vec(),
                    });
                }
            }
            _ => {}
        }
        o += len;
    }
    Some(out)
}

/// The corpus directory (`../shared/corpus/pcaps` from the workspace root, or
/// `$SHRIKE_SHARED/corpus/pcaps`), if present.
pub fn corpus_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("SHRIKE_SHARED") {
        Some(s) => PathBuf::from(s),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    };
    let d = base.join("corpus/pcaps");
    d.is_dir().then_some(d)
}

/// All capture files under `dir`, sorted.
pub fn capture_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("pcap" | "pcapng" | "cap" | "gz")
            ) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
