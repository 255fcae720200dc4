//! With the `link` feature: finds DPDK with pkg-config (22.11 or newer), compiles the C shim
//! and generates bindings with bindgen. Without it: nothing (the crate is empty).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/wrapper.h");
    println!("cargo:rerun-if-changed=csrc/shim.c");
    #[cfg(feature = "link")]
    link::run();
}

#[cfg(feature = "link")]
mod link {
    use std::path::PathBuf;

    pub fn run() {
        let lib = match pkg_config::Config::new()
            .atleast_version("22.11")
            .probe("libdpdk")
        {
            Ok(l) => l,
            Err(e) => panic!(
                "the `dpdk` feature needs DPDK 22.11+ development files \
                 (Debian: apt-get install dpdk-dev libdpdk-dev libclang-dev clang): {e}"
            ),
        };
        // `pkg-config --cflags libdpdk` also carries `-include rte_config.h` and `-march=...`,
        // which the pkg-config crate does not report as include paths: take them as given.
        let cflags = std::process::Command::new("pkg-config")
            .args(["--cflags", "libdpdk"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let extra: Vec<String> = {
            let toks: Vec<&str> = cflags.split_whitespace().collect();
            let mut out = Vec::new();
            let mut i = 0;
            while i < toks.len() {
                match toks[i] {
                    "-include" if i + 1 < toks.len() => {
                        out.push("-include".to_string());
                        out.push(toks[i + 1].to_string());
                        i += 1;
                    }
                    t if t.starts_with("-march=") || t.starts_with("-m") => out.push(t.to_string()),
                    _ => {}
                }
                i += 1;
            }
            out
        };

        let mut cc = cc::Build::new();
        cc.file("csrc/shim.c")
            .include("csrc")
            .opt_level(3)
            .flag("-Wno-deprecated-declarations")
            .flag_if_supported("-Wno-unused-parameter");
        for p in &lib.include_paths {
            cc.include(p);
        }
        for f in &extra {
            cc.flag(f);
        }
        cc.compile("shrike_dpdk_shim");

        let mut b = bindgen::Builder::default()
            .header("csrc/wrapper.h")
            .allowlist_function(
                "rte_eal_init|rte_eal_cleanup|rte_thread_register|rte_socket_id|rte_version|rte_strerror\
                 |rte_eth_dev_count_avail|rte_eth_dev_is_valid_port|rte_eth_dev_get_port_by_name\
                 |rte_eth_dev_get_name_by_port|rte_eth_dev_info_get|rte_eth_dev_configure\
                 |rte_eth_rx_queue_setup|rte_eth_tx_queue_setup|rte_eth_dev_start|rte_eth_dev_stop\
                 |rte_eth_dev_close|rte_eth_stats_get|rte_eth_stats_reset|rte_eth_promiscuous_enable\
                 |rte_eth_dev_socket_id|rte_eth_dev_set_mtu|rte_pktmbuf_pool_create|rte_mempool_free\
                 |rte_mempool_avail_count|rte_mempool_in_use_count|shim_.*",
            )
            .allowlist_type("rte_eth_conf|rte_eth_dev_info|rte_eth_stats|rte_eth_rxconf|rte_eth_rx_mq_mode")
            .allowlist_var("RTE_ETHDEV_QUEUE_STAT_CNTRS|RTE_MAX_ETHPORTS|RTE_VER_.*")
            .derive_default(true)
            .layout_tests(false)
            .generate_comments(false)
            .prepend_enum_name(false);
        for p in &lib.include_paths {
            b = b.clang_arg(format!("-I{}", p.display()));
        }
        b = b.clang_arg("-Icsrc");
        for f in &extra {
            b = b.clang_arg(f);
        }
        let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
        b.generate()
            .expect("bindgen over DPDK headers")
            .write_to_file(out.join("dpdk.rs"))
            .expect("write bindings");
    }
}
