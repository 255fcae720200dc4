//! The live-capture settings deserialize from the values the binary hands over (a JSON tree
//! of the interface's YAML keys), accept Suricata's spellings and reject unknown keys.

use serde_json::{json, Value};
use shrike_capture::config::{EalParams, SYMMETRIC_RSS_KEY};
use shrike_capture::{AfPacketConfig, ClusterType, DpdkConfig, LiveStats};

fn afp(v: Value) -> Result<AfPacketConfig, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

#[test]
fn empty_section_gives_suricata_defaults() {
    let c = afp(json!({})).unwrap();
    assert_eq!(c, AfPacketConfig::default());
    assert_eq!(c.cluster_id, 99);
    assert_eq!(c.cluster_type, ClusterType::Hash);
    assert!(c.defrag);
    assert_eq!(c.block_size, 131072);
    assert_eq!(c.block_timeout, 10);
    assert_eq!(c.poll_timeout, 100);
    assert_eq!(c.promisc_enabled(), Ok(true));
    let g = c.geometry().unwrap();
    assert_eq!(g.ring_bytes(), 32 * 131072);
}

#[test]
fn suricata_af_packet_keys() {
    let c = afp(json!({
        "interface": "eth1",
        "threads": 4,
        "cluster-id": 98,
        "cluster-type": "cluster_qm",
        "defrag": "no",
        "use-mmap": "yes",
        "tpacket-v3": true,
        "mmap-locked": "on",
        "ring-size": 2048,
        "block-size": "1mb",
        "block-timeout": 20,
        "disable-promisc": "yes",
        "bpf-filter": "not port 22",
    }))
    .unwrap();
    assert_eq!(c.interface, "eth1");
    assert_eq!(c.threads, Some(4));
    assert_eq!(c.cluster_type, ClusterType::Qm);
    assert!(!c.defrag);
    assert_eq!(c.block_size, 1 << 20);
    assert_eq!(c.promisc_enabled(), Ok(false));
    // 512 frames of 2048 per 1 MiB block: 2048 / 512 + 1 = 5 blocks.
    assert_eq!(c.geometry().unwrap().block_count, 5);
    assert!(c.lints().is_empty(), "{:?}", c.lints());
    assert_eq!(c.bpf_filter.as_deref(), Some("not port 22"));
}

#[test]
fn shrike_names_and_lints() {
    let c =
        afp(json!({"cluster-type": "lb", "block-count": 4, "block-size": 4096, "promisc": false}))
            .unwrap();
    assert_eq!(c.cluster_type, ClusterType::Lb);
    assert_eq!(c.geometry().unwrap().block_count, 4);
    let lints = c.lints();
    assert!(lints.iter().any(|l| l.contains("block-size")), "{lints:?}");
    assert!(
        lints.iter().any(|l| l.contains("cluster_round_robin")),
        "{lints:?}"
    );
}

#[test]
fn bad_values_name_the_key() {
    let table = [
        (json!({"cluster-typo": "hash"}), "cluster-typo"),
        (json!({"cluster-type": "cluster_ebpf"}), "cluster_ebpf"),
        (json!({"defrag": "maybe"}), "maybe"),
        (json!({"block-size": "lots"}), "lots"),
        (json!({"cluster-id": 70000}), "70000"),
    ];
    for (v, needle) in table {
        let e = afp(v.clone()).unwrap_err();
        assert!(e.contains(needle), "{v}: {e}");
    }
}

#[test]
fn dpdk_section() {
    let c: DpdkConfig = serde_json::from_value(json!({
        "interface": "net_pcap0",
        "eal-params": ["--no-huge", "--no-pci", "-l", "0"],
        "rx-queues": 2,
        "mempool-size": 8191,
        "mempool-cache-size": 250,
        "rx-descriptors": 512,
        "promisc": "no",
    }))
    .unwrap();
    assert_eq!(c.interface.as_deref(), Some("net_pcap0"));
    assert_eq!(c.eal_params.to_args(), ["--no-huge", "--no-pci", "-l", "0"]);
    assert!(!c.promisc);
    assert_eq!(c.rss_key_bytes().unwrap(), SYMMETRIC_RSS_KEY);
    c.validate().unwrap();

    let m: DpdkConfig = serde_json::from_value(json!({
        "eal-params": {"no-huge": true, "vdev": ["net_null0", "net_null1"], "l": "0-1"},
    }))
    .unwrap();
    assert!(matches!(m.eal_params, EalParams::Map(_)));
    assert_eq!(
        m.eal_params.to_args(),
        [
            "-l",
            "0-1",
            "--no-huge",
            "--vdev",
            "net_null0",
            "--vdev",
            "net_null1"
        ]
    );
    let bad: DpdkConfig = serde_json::from_value(json!({"burst-size": 0})).unwrap();
    assert!(bad.validate().unwrap_err().contains("burst-size"));
    assert!(serde_json::from_value::<DpdkConfig>(json!({"rx-queue": 1})).is_err());
}

fn schema() -> Option<Value> {
    let base = match std::env::var_os("SHRIKE_SHARED") {
        Some(s) => std::path::PathBuf::from(s),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    };
    let text = std::fs::read_to_string(base.join("eve-schema/schema.json")).ok()?;
    serde_json::from_str(&text).ok()
}

#[test]
fn live_stats_names_validate_against_the_eve_schema() {
    let Some(s) = schema() else {
        eprintln!("schema not found; skipping");
        return;
    };
    let stats = &s["properties"]["stats"];
    let mut n = 0;
    LiveStats::default().visit(&mut |name, _| {
        let mut node = stats;
        for part in name.split('.') {
            node = &node["properties"][part];
        }
        assert_eq!(
            node["type"], "integer",
            "{name} is not an integer path of stats"
        );
        n += 1;
    });
    assert_eq!(n, 8);
    // The extra names are deliberately outside the schema (stats.log only).
    LiveStats::default().visit_extra(&mut |name, _| {
        let mut node = stats;
        for part in name.split('.') {
            node = &node["properties"][part];
        }
        assert!(
            node.is_null(),
            "{name} is in the schema: move it to visit()"
        );
    });
}
