//! A protocol folder depends on the registry and the shared pieces (`common`), never on a
//! sibling protocol folder: scanned from the sources, so a new protocol is held to it too.

use std::path::{Path, PathBuf};

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_protocol_uses_a_sibling_protocol() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // A protocol folder is one that registers a `PROTOCOL`.
    let mut protos = Vec::new();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let p = e.path();
        if !p.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        rs_files(&p, &mut files);
        if files.iter().any(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .contains("pub static PROTOCOL: Protocol")
        }) {
            protos.push((e.file_name().to_string_lossy().into_owned(), files));
        }
    }
    assert!(
        protos.len() >= 4,
        "{:?}",
        protos.iter().map(|p| &p.0).collect::<Vec<_>>()
    );
    let mut bad = Vec::new();
    for (name, files) in &protos {
        for f in files {
            let text = std::fs::read_to_string(f).unwrap();
            // HTTP/2 transactions are inspected and logged through HTTP/1's buffer
            // definitions and decompressor, as Suricata's HTTP/2 mimics HTTP/1: the one
            // allowed dependency between protocol folders. QUIC's CRYPTO frames carry a
            // TLS ClientHello/ServerHello, read with TLS's hello parser and JA3 hashing as
            // Suricata's QUIC uses its TLS parser's.
            // SMB carries DCERPC over named pipes and reads it with DCERPC's PDU code, as
            // Suricata's SMB parser uses its DCERPC module.
            let allowed = |other: &str| {
                (name == "http2" && other == "http")
                    || (name == "quic" && other == "tls")
                    || (name == "smb" && other == "dcerpc")
            };
            for (other, _) in protos
                .iter()
                .filter(|(o, _)| o != name && !allowed(o.as_str()))
            {
                for pat in [
                    format!("crate::{other}::"),
                    format!("crate::{other}}}"),
                    format!("super::super::{other}"),
                ] {
                    if text.contains(&pat) {
                        bad.push(format!("{} uses {pat}", f.display()));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
