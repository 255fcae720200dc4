//! Differential test: runs every payload matcher case through Suricata 7
//! (`suricata -r` on a generated pcap, one UDP packet and one rule per case)
//! and checks that Suricata, the table and shrike agree.
//!
//! Needs `suricata` on PATH; run with `cargo test --test rules_matcher_oracle -- --ignored`.

mod rules_common;

use rules_common::matcher_cases as cases;

use std::collections::BTreeSet;
use std::io::Write;
use std::process::Command;

const BASE_PORT: u16 = 30000;

fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in data.chunks(2) {
        let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        sum += u32::from(w);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn udp_packet(dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x00]);
    let total = 20 + 8 + payload.len();
    let mut ip = vec![
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0,
        0,
        64,
        17,
        0,
        0,
        10,
        0,
        0,
        1,
        10,
        0,
        0,
        2,
    ];
    let c = checksum(&ip);
    ip[10] = (c >> 8) as u8;
    ip[11] = c as u8;
    p.extend_from_slice(&ip);
    let ulen = 8 + payload.len();
    p.extend_from_slice(&[
        0x04,
        0xd2,
        (dport >> 8) as u8,
        dport as u8,
        (ulen >> 8) as u8,
        ulen as u8,
        0,
        0,
    ]);
    p.extend_from_slice(payload);
    p
}

fn write_pcap(path: &std::path::Path, packets: &[Vec<u8>]) {
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(&[
        0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0,
    ])
    .unwrap();
    for (i, p) in packets.iter().enumerate() {
        let ts = 1_700_000_000u32 + i as u32;
        f.write_all(&ts.to_le_bytes()).unwrap();
        f.write_all(&0u32.to_le_bytes()).unwrap();
        f.write_all(&(p.len() as u32).to_le_bytes()).unwrap();
        f.write_all(&(p.len() as u32).to_le_bytes()).unwrap();
        f.write_all(p).unwrap();
    }
}

/// Runs Suricata on `(rule options, payload)` cases, one UDP packet and
/// one rule per case; returns the indexes of cases that alerted and the log.
fn run_suricata(cases: &[(String, Vec<u8>)]) -> (BTreeSet<usize>, String) {
    let dir = std::env::temp_dir().join(format!(
        "shrike-oracle-{}-{}",
        std::process::id(),
        cases.len()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rules = String::new();
    let mut packets = Vec::new();
    for (i, (opts, payload)) in cases.iter().enumerate() {
        let port = BASE_PORT + i as u16;
        rules.push_str(&format!(
            "alert udp any any -> any {port} (msg:\"case {i}\"; {opts} sid:{};)\n",
            i + 1
        ));
        packets.push(udp_packet(port, payload));
    }
    std::fs::write(dir.join("cases.rules"), &rules).unwrap();
    write_pcap(&dir.join("cases.pcap"), &packets);
    let out = Command::new("suricata")
        .args([
            "-r",
            "cases.pcap",
            "-S",
            "cases.rules",
            "-l",
            ".",
            "-k",
            "none",
            "--runmode",
            "single",
            "--set",
            "mpm-algo=ac",
        ])
        .current_dir(&dir)
        .output()
        .expect("run suricata");
    let log =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "suricata failed: {log}");
    let eve = std::fs::read_to_string(dir.join("eve.json")).unwrap_or_default();
    let mut fired = BTreeSet::new();
    for line in eve.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["event_type"] == "alert" {
            let sid = v["alert"]["signature_id"].as_u64().unwrap() as usize;
            fired.insert(sid - 1);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    (fired, log)
}

#[test]
#[ignore = "needs suricata installed"]
fn suricata_agrees_with_table_and_shrike() {
    let cases: Vec<(String, Vec<u8>)> = cases::CASES
        .iter()
        .map(|(o, p, _)| (o.to_string(), p.to_vec()))
        .collect();
    let (fired, log) = run_suricata(&cases);
    let mut problems = Vec::new();
    for (i, (opts, payload, want)) in cases::CASES.iter().enumerate() {
        let suri = fired.contains(&i);
        let ours = rules_common::eval(opts, payload);
        if suri != *want || suri != ours {
            problems.push(format!(
                "case {i}: suricata {suri}, table {want}, shrike {ours}: `{opts}` on {:?}",
                String::from_utf8_lossy(payload)
            ));
        }
    }
    let failed_rules: Vec<&str> = log.lines().filter(|l| l.contains("rror")).collect();
    assert!(
        problems.is_empty() && failed_rules.is_empty(),
        "{}\n{}",
        problems.join("\n"),
        failed_rules.join("\n")
    );
}

/// Random rules × random payloads through Suricata and shrike. With
/// `SHRIKE_UPDATE_ORACLE=1` the verdicts are written to
/// `rules_common/random_oracle.tsv`, which `rules_matcher.rs` replays
/// without Suricata.
#[test]
#[ignore = "needs suricata installed"]
fn suricata_agrees_on_random_cases() {
    let mut rng = rules_common::Rng(0x5eed_1234_abcd_0001);
    let mut cases = Vec::new();
    while cases.len() < 3000 {
        let opts = rules_common::random_rule(&mut rng);
        let payload = rules_common::random_payload(&mut rng);
        // Only rules shrike accepts (Suricata rejecting one shows up as a miss).
        if rules_common::try_eval(&opts, &payload).is_some() {
            cases.push((opts, payload));
        }
    }
    let (fired, log) = run_suricata(&cases);
    let mut problems = Vec::new();
    let mut tsv = String::from("# suricata-7.0.10 verdict\tpayload hex\trule options (generated by rules_matcher_oracle.rs)\n");
    for (i, (opts, payload)) in cases.iter().enumerate() {
        let suri = fired.contains(&i);
        let ours = rules_common::eval(opts, payload);
        let hex: String = payload.iter().map(|b| format!("{b:02x}")).collect();
        tsv.push_str(&format!("{}\t{hex}\t{opts}\n", u8::from(suri)));
        if suri != ours {
            problems.push(format!(
                "case {i}: suricata {suri}, shrike {ours}: `{opts}` on {:?}",
                String::from_utf8_lossy(payload)
            ));
        }
    }
    if std::env::var_os("SHRIKE_UPDATE_ORACLE").is_some() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/rules_common/random_oracle.tsv");
        std::fs::write(path, tsv).unwrap();
    }
    let failed_rules: Vec<&str> = log.lines().filter(|l| l.contains("rror")).collect();
    eprintln!("{} random cases, {} alerts", cases.len(), fired.len());
    assert!(
        problems.is_empty() && failed_rules.is_empty(),
        "{} mismatches:\n{}\n{}",
        problems.len(),
        problems.join("\n"),
        failed_rules.join("\n")
    );
}
