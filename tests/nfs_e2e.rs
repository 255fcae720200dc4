//! End to end for NFS over ONC RPC: the shrike binary on NFS captures of the shared corpus
//! (NFSv3 over TCP with a WRITE, NFSv2 and NFSv3 over UDP). The alerts of `nfs_procedure`,
//! `rpc`, and `file.name`, the `nfs` record count and the written file's `fileinfo` record
//! equal Suricata 7.0.10's on the same captures and rules (`suricata -r <pcap> -S <rules>
//! -k none --runmode single`, values copied from its `eve.json`). Every record validates
//! against the EVE schema.

mod common;

use common::{assert_valid_eve, eve_records, shrike, stderr, TempDir};
use serde_json::{json, Value};

const RULES: &str = "\
alert nfs any any -> any any (msg:\"write\"; nfs_procedure:7; sid:1;)
alert nfs any any -> any any (msg:\"lookup\"; nfs_procedure:3; sid:2;)
alert tcp any any -> any 2049 (msg:\"rpc nfs3\"; rpc:100003,3,*; sid:3;)
alert udp any any -> any 2049 (msg:\"rpc nfs2 read\"; rpc:100003,2,6; sid:4;)
alert nfs any any -> any any (msg:\"name\"; file.name; content:\"hello_world\"; sid:5;)
alert nfs any any -> any any (msg:\"never\"; nfs_procedure:>30; sid:7;)
";

/// Runs shrike on a corpus capture; None when the shared corpus is not there.
fn run(rel: &str, tag: &str) -> Option<Vec<Value>> {
    let pcap = common::shared_file(rel)?;
    let dir = TempDir::new(tag);
    let rf = dir.path().join("nfs.rules");
    std::fs::write(&rf, RULES).unwrap();
    let out = shrike()
        .arg("-r")
        .arg(&pcap)
        .arg("-S")
        .arg(&rf)
        .arg("-k")
        .arg("none")
        .arg("-l")
        .arg(dir.path())
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "shrike failed: {}", stderr(&out));
    let recs = eve_records(dir.path());
    assert_valid_eve(&recs);
    Some(recs)
}

fn of_type<'a>(recs: &'a [Value], t: &str) -> Vec<&'a Value> {
    recs.iter().filter(|r| r["event_type"] == t).collect()
}

fn alerts(recs: &[Value]) -> Vec<(u64, u64)> {
    of_type(recs, "alert")
        .iter()
        .map(|a| {
            (
                a["alert"]["signature_id"].as_u64().unwrap(),
                a["pcap_cnt"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn nfs3_tcp_write_records_file_and_keywords_as_suricata() {
    let Some(recs) = run("corpus/pcaps/zeek/nfs_nfs_write.pcap", "nfs-write") else {
        return;
    };
    // Suricata 7.0.10: rpc:100003,3,* on every call to 2049, LOOKUP (3) calls and replies,
    // the WRITE (7) reply and the file name at packet 135.
    let mut want: Vec<(u64, u64)> = [
        15, 43, 47, 49, 51, 55, 57, 59, 61, 63, 66, 67, 72, 74, 76, 78, 80, 82, 84, 86, 88, 90, 92,
        94, 96, 98, 100, 102, 104, 106, 108, 110, 112, 114, 116, 118, 120, 122, 125, 131, 133, 136,
        139, 142,
    ]
    .iter()
    .map(|&p| (3, p))
    .collect();
    want.extend([(2, 63), (2, 65), (2, 69), (2, 69), (1, 135), (5, 135)]);
    want.sort_unstable();
    let mut got = alerts(&recs);
    got.sort_unstable();
    assert_eq!(got, want);
    assert_eq!(of_type(&recs, "nfs").len(), 17);
    let files = of_type(&recs, "fileinfo");
    assert_eq!(files.len(), 1);
    let f = files[0];
    assert_eq!(f["pcap_cnt"], 135);
    assert_eq!(f["app_proto"], "nfs");
    assert_eq!(
        f["fileinfo"],
        json!({"filename": "hello_world", "gaps": false, "state": "CLOSED", "stored": false,
               "size": 13, "tx_id": 42})
    );
    assert_eq!(
        f["nfs"],
        json!({"version": 3, "procedure": "WRITE", "filename": "hello_world", "hhash": "66a805cd",
               "id": 43, "file_tx": true, "type": "response", "status": "OK",
               "write": {"first": true, "last": true, "last_xid": 2447245691u64, "chunks": 0}})
    );
    assert_eq!(
        f["rpc"],
        json!({"xid": 2447245691u64, "status": "ACCEPTED", "auth_type": "NULL"})
    );
}

#[test]
fn nfs_over_udp_records_and_keywords_as_suricata() {
    let Some(v3) = run("corpus/pcaps/ndpi/nfsv3.pcap", "nfs-v3udp") else {
        return;
    };
    let mut want: Vec<(u64, u64)> = [
        19, 21, 29, 31, 33, 35, 39, 41, 43, 47, 49, 53, 61, 63, 67, 71, 101, 103, 107, 109, 113,
        115, 119, 123,
    ]
    .iter()
    .map(|&p| (2, p))
    .collect();
    want.push((1, 77));
    want.sort_unstable();
    let mut got = alerts(&v3);
    got.sort_unstable();
    assert_eq!(got, want);
    assert_eq!(of_type(&v3, "nfs").len(), 48);
    assert_eq!(of_type(&v3, "fileinfo").len(), 2);
    let Some(v2) = run("corpus/pcaps/ndpi/nfsv2.pcap", "nfs-v2udp") else {
        return;
    };
    // The NFSv2 READ call (procedure 6 of version 2) matched by rpc, and no v3 procedure
    // number matched on a v2 transaction.
    assert_eq!(alerts(&v2), vec![(4, 101)]);
    assert_eq!(of_type(&v2, "nfs").len(), 54);
    assert!(of_type(&v2, "nfs").iter().all(|r| r["nfs"]["version"] == 2));
    assert_eq!(of_type(&v2, "fileinfo").len(), 1);
}
