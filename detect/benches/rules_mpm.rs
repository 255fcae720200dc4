//! Prefilter backends side by side: Aho-Corasick (default) and Hyperscan (with
//! `--features hyperscan`), over the fast patterns that ET Open selects.
//!
//! ```text
//! cargo bench -p shrike-detect --features hyperscan --bench rules_mpm
//! ```
//!
//! Two pattern sets: every distinct packet-payload fast pattern of ET Open (the size of the
//! largest group the engine builds) and every distinct fast pattern of any buffer (the
//! worst case). Haystacks: an HTTP request (~400 bytes) and 1,460 bytes of pseudo-random
//! payload. Also the build time of each matcher, which counts toward start-up.

use std::path::PathBuf;
use std::time::Instant;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use shrike_detect::prefilter::{build_with, MpmAlgo, HAVE_HYPERSCAN};
use shrike_rules::loader::{load_rules, LoadOptions};
use shrike_rules::mpm::select_fast_pattern;
use shrike_rules::Vars;

fn et_rules() -> Vec<PathBuf> {
    let dir = std::env::var_os("SHRIKE_ET_RULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/rules/et-open")
        });
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "rules"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    if files.is_empty() {
        files.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/sample.rules"));
    }
    files
}

/// (payload-buffer patterns, all patterns), lowercased and distinct.
fn patterns() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let set = load_rules(
        &et_rules(),
        &Vars::suricata_defaults(),
        &LoadOptions::default(),
    );
    let mut payload = Vec::new();
    let mut all = Vec::new();
    for r in &set.rules {
        if let Some(fp) = select_fast_pattern(&r.rule) {
            if fp.pattern.is_empty() {
                continue;
            }
            let p = fp.pattern.to_ascii_lowercase();
            if fp.buffer.name() == "payload" || fp.buffer.name() == "pkt_data" {
                payload.push(p.clone());
            }
            all.push(p);
        }
    }
    for v in [&mut payload, &mut all] {
        v.sort();
        v.dedup();
    }
    (payload, all)
}

fn haystacks() -> Vec<(&'static str, Vec<u8>)> {
    let http = b"GET /images/logo.png?id=1234&session=abcdef HTTP/1.1\r\nHost: www.example.com\r\n\
User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) \
Chrome/120.0 Safari/537.36\r\nAccept: image/avif,image/webp,*/*\r\nAccept-Language: en-US,en;q=0.5\r\n\
Accept-Encoding: gzip, deflate, br\r\nReferer: https://www.example.com/index.html\r\n\
Cookie: a=1; b=2\r\nConnection: keep-alive\r\n\r\n"
        .to_vec();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let random: Vec<u8> = (0..1460)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    vec![("http_request", http), ("random_1460", random)]
}

fn bench(c: &mut Criterion) {
    let (payload, all) = patterns();
    let mut algos = vec![MpmAlgo::Ac];
    if HAVE_HYPERSCAN {
        algos.push(MpmAlgo::Hs);
    }
    for (set_name, pats) in [("payload", &payload), ("all", &all)] {
        let refs: Vec<&[u8]> = pats.iter().map(Vec::as_slice).collect();
        for &algo in &algos {
            let t = Instant::now();
            let pf = build_with(algo, &refs).expect("matcher builds");
            eprintln!(
                "{algo:?} over {} {set_name} patterns: built in {:?}",
                refs.len(),
                t.elapsed()
            );
            let mut g = c.benchmark_group(format!("prefilter/{set_name}"));
            for (name, hay) in haystacks() {
                g.throughput(Throughput::Bytes(hay.len() as u64));
                g.bench_function(format!("{algo:?}/{name}"), |b| {
                    b.iter(|| {
                        let mut n = 0u32;
                        pf.scan(black_box(&hay), &mut |i, _, _| n = n.wrapping_add(i + 1));
                        n
                    })
                });
            }
            g.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
