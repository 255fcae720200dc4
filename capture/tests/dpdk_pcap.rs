//! DPDK capture from the `net_pcap` vdev (no NIC, no hugepages): exact counts and bytes.
//! Built only with `--features dpdk`; the EAL is started once per test binary.
#![cfg(feature = "dpdk")]

mod live_util;

use std::time::{Duration, Instant};

use live_util::{pcap_image, udp_frame};
use shrike_capture::{dpdk, DpdkConfig, LinkType, LiveError};

#[test]
fn dpdk_pcap_vdev_exact_count() {
    let sent: Vec<Vec<u8>> = (0..3000u32)
        .map(|i| {
            udp_frame(
                [10, 0, 0, 1],
                [10, 0, 0, 2],
                1000 + (i % 97) as u16,
                53,
                &[],
                i,
                30 + (i % 300) as usize,
            )
        })
        .collect();
    let file = std::env::temp_dir().join(format!("shrk-dpdk-{}.pcap", std::process::id()));
    std::fs::write(&file, pcap_image(&sent)).unwrap();
    let args: Vec<String> = [
        "--no-huge",
        "--no-pci",
        "--no-shconf",
        &format!("--file-prefix=shrk{}", std::process::id()),
        "-l",
        "0",
        "-m",
        "256",
        "--log-level=lib.eal:error",
        &format!("--vdev=net_pcap0,rx_pcap={}", file.display()),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    dpdk::eal_init(&args).expect("EAL");
    assert!(dpdk::version().starts_with("DPDK "), "{}", dpdk::version());
    // A second init is a no-op returning the first result.
    dpdk::eal_init(&[]).unwrap();

    let cfg = DpdkConfig {
        interface: Some("net_pcap0".into()),
        mempool_size: 8191,
        mempool_cache_size: 256,
        ..Default::default()
    };
    // Errors before anything is set up: name the port and the key.
    let e = dpdk::open_port(&cfg, 2).err().unwrap();
    assert!(
        e.to_string().contains("2 RX queues") && e.to_string().contains("net_pcap0"),
        "{e}"
    );
    let two = DpdkConfig {
        rx_queues: Some(2),
        ..cfg.clone()
    };
    let e = dpdk::open_port(&two, 1).err().unwrap();
    assert!(e.to_string().contains("rx-queues"), "{e}");
    let missing = DpdkConfig {
        interface: Some("net_nope9".into()),
        ..cfg.clone()
    };
    let e = dpdk::open_port(&missing, 1).err().unwrap();
    assert!(
        matches!(e, LiveError::NoSuchInterface { .. }) && e.to_string().contains("net_nope9"),
        "{e}"
    );

    let mut queues = dpdk::open_port(&cfg, 1).expect("port");
    assert_eq!(queues.len(), 1);
    let info = queues[0].info().clone();
    assert_eq!(info.driver, "net_pcap");
    assert!(!info.rss);
    // Move the queue to a worker thread, as the binary does.
    let (got, st) = std::thread::spawn(move || {
        let mut q = queues.pop().unwrap();
        let mut got: Vec<Vec<u8>> = Vec::new();
        let t = Instant::now();
        while got.len() < 3000 && t.elapsed() < Duration::from_secs(10) {
            if let Some(mut b) = q.next_burst(Duration::from_millis(50)) {
                assert!(b.len() <= 32);
                while let Some(p) = b.next_packet() {
                    assert_eq!(p.link, LinkType::Ethernet);
                    got.push(p.data.to_vec());
                }
            }
        }
        // Nothing more arrives.
        assert!(q.next_burst(Duration::from_millis(100)).is_none());
        (got, q.stats())
    })
    .join()
    .unwrap();
    let _ = std::fs::remove_file(&file);
    assert_eq!(got.len(), 3000);
    assert_eq!(got, sent);
    assert_eq!(st.delivered, 3000);
    assert_eq!(st.packets, 3000, "{st:?}");
    assert_eq!((st.drops, st.errors), (0, 0), "{st:?}");
    assert_eq!(st.bytes, sent.iter().map(|f| f.len() as u64).sum::<u64>());
}
