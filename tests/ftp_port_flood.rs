//! An FTP PORT flood stays within Suricata's expectation limit: at most 10 announced data
//! connections are kept per address pair (`EXPECTATION_MAX_LEVEL`), the oldest dropped
//! first, so after 30 PORT commands a data connection to the first port is not FTP data and
//! one to the last port is, as in Suricata 7.0.10 on the same capture (`suricata -r <pcap>
//! -k none --runmode single`: flows `[20 -> 50000, none]`, `[20 -> 50029, ftp-data]`, one
//! `ftp_data` record for `RETR f.txt`). `app_layer.expectations` counts what is pending.

mod common;
mod hostile_util;

use common::{eve_records, shrike, stderr, TempDir};
use hostile_util::{tcp_conversation, Pcap};

#[test]
fn port_flood_keeps_the_latest_ten_expectations() {
    let dir = TempDir::new("ftp-port-flood");
    let mut cap = Pcap::new(1);
    let mut t = 1_700_000_000_000_000u64;
    let (c, s) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let mut msgs: Vec<(bool, Vec<u8>)> = vec![
        (false, b"220 ready\r\n".to_vec()),
        (true, b"USER a\r\n".to_vec()),
        (false, b"331 pw\r\n".to_vec()),
        (true, b"PASS b\r\n".to_vec()),
        (false, b"230 ok\r\n".to_vec()),
    ];
    for i in 0..30u16 {
        let port = 50_000 + i;
        msgs.push((
            true,
            format!("PORT 10,0,0,1,{},{}\r\n", port >> 8, port & 255).into_bytes(),
        ));
        msgs.push((false, b"200 PORT ok\r\n".to_vec()));
    }
    msgs.push((true, b"RETR f.txt\r\n".to_vec()));
    msgs.push((false, b"150 opening\r\n".to_vec()));
    let refs: Vec<(bool, &[u8])> = msgs.iter().map(|(d, m)| (*d, m.as_slice())).collect();
    tcp_conversation(&mut cap, &mut t, (c, s), (40_000, 21), &refs);
    for port in [50_000u16, 50_029] {
        let data = format!("hello data {port}\n").into_bytes();
        tcp_conversation(&mut cap, &mut t, (s, c), (20, port), &[(true, &data)]);
    }
    let pcap = dir.path().join("flood.pcap");
    cap.write(&pcap);
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let out = shrike()
        .args(["-k", "none", "--runmode", "single", "-r"])
        .arg(&pcap)
        .arg("-l")
        .arg(&logs)
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "{}", stderr(&out));
    let recs = eve_records(&logs);
    let proto = |port: u64| {
        recs.iter()
            .find(|r| r["event_type"] == "flow" && r["dest_port"] == port)
            .map(|r| r["app_proto"].clone())
            .expect("data flow")
    };
    assert!(proto(50_000).is_null(), "{}", proto(50_000));
    assert_eq!(proto(50_029), "ftp-data");
    let ftp_data: Vec<_> = recs
        .iter()
        .filter(|r| r["event_type"] == "ftp_data")
        .collect();
    assert_eq!(ftp_data.len(), 1);
    assert_eq!(ftp_data[0]["ftp_data"]["filename"], "f.txt");
    let stats = recs
        .iter()
        .rfind(|r| r["event_type"] == "stats")
        .expect("stats");
    assert!(stats["stats"]["app_layer"]["expectations"]
        .as_u64()
        .is_some());
}
