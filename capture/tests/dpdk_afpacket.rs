//! DPDK smoke test closest to a NIC: the `net_af_packet` vdev on a veth pair inside a private
//! network namespace. Built only with `--features dpdk`; root only.
#![cfg(feature = "dpdk")]

mod live_util;

use std::time::{Duration, Instant};

use live_util::{seq_of, udp_frame, NetNs};
use shrike_capture::afpacket::Sender;
use shrike_capture::{dpdk, DpdkConfig};

#[test]
fn dpdk_af_packet_vdev_on_veth() {
    let Some(ns) = NetNs::new("dpdk") else { return };
    let n = 5000u32;
    let (got, st) = ns.run(move || {
        // The vdev opens its socket during rte_eal_init, in this thread's namespace.
        let args: Vec<String> = [
            "--no-huge",
            "--no-pci",
            "--no-shconf",
            &format!("--file-prefix=shrkaf{}", std::process::id()),
            "-l",
            "0",
            "-m",
            "256",
            "--log-level=lib.eal:error",
            "--vdev=net_af_packet0,iface=veth0,qpairs=2,framecnt=8192,blocksz=16384,framesz=2048",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        dpdk::eal_init(&args).expect("EAL");
        let cfg = DpdkConfig {
            interface: Some("net_af_packet0".into()),
            mempool_size: 16383,
            ..Default::default()
        };
        let mut qs = dpdk::open_port(&cfg, 2).expect("port");
        assert_eq!(qs[0].info().driver, "net_af_packet");
        assert_eq!(qs[0].info().rx_queues, 2);
        // A thread spawned here inherits this thread's network namespace.
        let sender = std::thread::spawn(move || {
            let mut tx = Sender::open("veth1").unwrap();
            for i in 0..n {
                let sport = 1000 + (i % 64) as u16;
                tx.send(&udp_frame(
                    [10, 0, 0, 1],
                    [10, 0, 0, 2],
                    sport,
                    6,
                    &[],
                    i,
                    60,
                ))
                .unwrap();
            }
        });
        let mut got: Vec<Vec<u32>> = vec![Vec::new(), Vec::new()];
        let t = Instant::now();
        while got.iter().map(Vec::len).sum::<usize>() < n as usize
            && t.elapsed() < Duration::from_secs(15)
        {
            for (i, q) in qs.iter_mut().enumerate() {
                if let Some(b) = q.next_burst(Duration::from_millis(10)) {
                    got[i].extend(b.packets().map(|p| seq_of(p.data).unwrap()));
                }
            }
        }
        sender.join().unwrap();
        let mut st = qs[0].stats();
        st.merge(&qs[1].stats());
        (got, st)
    });
    let counts: Vec<usize> = got.iter().map(Vec::len).collect();
    assert_eq!(
        counts.iter().sum::<usize>(),
        n as usize,
        "{counts:?} {st:?}"
    );
    for q in &got {
        assert!(q.windows(2).all(|w| w[0] < w[1]), "in order per queue");
    }
    assert_eq!(st.delivered, n as u64);
    eprintln!("per queue: {counts:?}");
}
