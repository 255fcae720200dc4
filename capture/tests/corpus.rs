//! Reads every file of the shared corpus (/work/shared/corpus/pcaps) and checks the
//! packet counts against its MANIFEST.tsv. Run with `--nocapture` to see the summary.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use shrike_capture::{CaptureError, CaptureStats, FileSource, LinkType, PacketSource};

const CORPUS: &str = "/work/shared/corpus/pcaps";

/// Corpus files that are corrupt on purpose (fuzzer output), with the error they must give.
/// libpcap delivers a clipped first record of this one and then reports a truncated file;
/// shrike refuses a caplen above 256 KiB as corrupt.
const KNOWN_CORRUPT: &[(&str, &str)] = &[(
    "ndpi/fuzz-2021-10-13.pcap",
    "corrupt capture at byte offset 24: record caplen 524501 exceeds the maximum 262144",
)];

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// file (relative) -> packet count, from MANIFEST.tsv.
fn manifest(root: &Path) -> HashMap<String, u64> {
    let Ok(text) = std::fs::read_to_string(root.join("MANIFEST.tsv")) else {
        return HashMap::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split('\t');
            let name = f.next()?.to_string();
            let packets = f.nth(1)?.parse().ok()?;
            Some((name, packets))
        })
        .collect()
}

#[test]
fn corpus_reads_without_errors() {
    let root = Path::new(CORPUS);
    if !root.is_dir() {
        eprintln!("skipping: {CORPUS} is absent");
        return;
    }
    let expected = manifest(root);
    let mut files = Vec::new();
    walk(root, &mut files);

    let mut total = CaptureStats::default();
    let mut per_format: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut unsupported_files: BTreeMap<u32, u64> = BTreeMap::new();
    let mut ng_unsupported: BTreeMap<u32, u64> = BTreeMap::new();
    let mut not_captures = Vec::new();
    let mut truncated = Vec::new();
    let mut failures = Vec::new();
    let mut corrupt_seen = Vec::new();
    let mut checked_counts = 0;

    for path in &files {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let is_capture_name = [".pcap", ".pcapng", ".cap"]
            .iter()
            .any(|e| rel.ends_with(e));
        let mut src = match FileSource::open(path) {
            Ok(s) => s,
            Err(CaptureError::UnsupportedLinkType { linktype, .. }) => {
                *unsupported_files.entry(linktype).or_default() += 1;
                total.files_unsupported += 1;
                continue;
            }
            Err(e @ CaptureError::BadHeader { .. }) if !is_capture_name => {
                not_captures.push(e.to_string());
                continue;
            }
            Err(e) => {
                failures.push(e.to_string());
                continue;
            }
        };
        let mut n = 0u64;
        loop {
            match src.next_packet() {
                Ok(Some(p)) => {
                    assert!(p.link.is_supported());
                    assert!(p.orig_len as usize >= p.data.len());
                    n += 1;
                }
                Ok(None) => break,
                Err(e) => {
                    let msg = e.to_string();
                    match KNOWN_CORRUPT.iter().find(|(f, _)| *f == rel) {
                        Some((_, want)) if msg.contains(want) => corrupt_seen.push(rel.clone()),
                        _ => failures.push(msg),
                    }
                    break;
                }
            }
        }
        let s = src.stats();
        assert_eq!(s.packets, n);
        assert_eq!(s.link_packets.iter().sum::<u64>(), n, "{rel}");
        if src.is_truncated() {
            truncated.push(format!(
                "{rel} ({n} packets, {} of {:?} bytes)",
                src.bytes_read(),
                src.total_bytes()
            ));
        } else if s.errors == 0 && !rel.ends_with(".gz") {
            // (A gzip capture counts decompressed bytes read against its compressed size.)
            assert_eq!(
                Some(src.bytes_read()),
                src.total_bytes(),
                "{rel}: not read to the end"
            );
        }
        for lt in src.unsupported_link_types() {
            *ng_unsupported.entry(*lt).or_default() += 1;
        }
        if let Some(&want) = expected.get(&rel) {
            if !src.is_truncated() && s.errors == 0 {
                assert_eq!(
                    n + s.skipped_unsupported,
                    want,
                    "{rel}: packet count differs from MANIFEST.tsv"
                );
                checked_counts += 1;
            }
        }
        let f = per_format.entry(src.format().name()).or_default();
        f.0 += 1;
        f.1 += n;
        total.merge(s);
    }

    println!("corpus: {} files under {CORPUS}", files.len());
    println!("per format (files, packets): {per_format:?}");
    println!("per link type (packets):");
    for l in LinkType::SUPPORTED {
        println!("  {:<9} {}", l.name(), total.packets_for(l));
    }
    println!(
        "pcap files skipped for unsupported link types (linktype: files): {unsupported_files:?}"
    );
    println!(
        "pcapng files with skipped unsupported interfaces (linktype: files): {ng_unsupported:?}"
    );
    println!("not capture files: {}", not_captures.len());
    for m in &not_captures {
        println!("  {m}");
    }
    println!("truncated: {}", truncated.len());
    for t in &truncated {
        println!("  {t}");
    }
    println!("packet counts checked against MANIFEST.tsv: {checked_counts} files");
    let mut totals = Vec::new();
    total.visit(&mut |k, v| totals.push(format!("{k}={v}")));
    println!("stats: {}", totals.join(" "));

    let known: Vec<String> = KNOWN_CORRUPT.iter().map(|(f, _)| f.to_string()).collect();
    assert_eq!(
        corrupt_seen, known,
        "known-corrupt files must fail as listed"
    );
    assert!(
        failures.is_empty(),
        "{} files failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(total.packets > 0);
}
