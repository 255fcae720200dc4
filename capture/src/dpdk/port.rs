//! Port set-up: find the port, create its mempool, configure RSS over one RX queue per
//! worker, start it; stop, close and free everything when the last queue goes.

use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use shrike_dpdk_sys as sys;

use super::{last_error, strerror, DpdkQueue};
use crate::config::DpdkConfig;
use crate::live::{LiveError, LiveStats};

/// What was set up on the port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// DPDK port number.
    pub port: u16,
    /// Device name (PCI address or vdev name).
    pub name: String,
    /// PMD driver name (`net_pcap`, `net_af_packet`, `net_ice` …).
    pub driver: String,
    /// RX queues configured (one per worker).
    pub rx_queues: u16,
    /// True when hardware RSS spreads packets over the queues with the symmetric key. False
    /// with one queue, and for devices without RSS offloads (those that spread queues on
    /// their own, like net_af_packet's fanout, or that deliver everything to queue 0).
    pub rss: bool,
    /// Mbufs in the port's mempool.
    pub mempool_size: u32,
}

pub(crate) struct Port {
    pub(crate) id: u16,
    pub(crate) name: String,
    pub(crate) info: PortInfo,
    mempool: *mut sys::rte_mempool,
}

// SAFETY: the port id and the mempool pointer are shared read-only between the queues;
// rte_eth_stats_get and the final stop/close/free calls are made by whichever thread holds
// the last reference, one at a time (Arc), which DPDK allows.
unsafe impl Send for Port {}
// SAFETY: see above; `port_stats` only reads port counters.
unsafe impl Sync for Port {}

impl Port {
    pub(crate) fn port_stats(&self) -> Option<sys::rte_eth_stats> {
        let mut st = sys::rte_eth_stats::default();
        // SAFETY: `st` is a writable rte_eth_stats; the port is configured and started.
        let rc = unsafe { sys::rte_eth_stats_get(self.id, &mut st) };
        (rc == 0).then_some(st)
    }
}

impl Drop for Port {
    fn drop(&mut self) {
        // SAFETY: the last queue is gone, so no thread polls the port or holds its mbufs;
        // stop and close the port, then free its mempool, once.
        unsafe {
            sys::rte_eth_dev_stop(self.id);
            sys::rte_eth_dev_close(self.id);
            if !self.mempool.is_null() {
                sys::rte_mempool_free(self.mempool);
            }
        }
    }
}

fn dpdk_err(iface: &str, op: &'static str, reason: String) -> LiveError {
    LiveError::Dpdk {
        iface: iface.to_string(),
        op,
        reason,
    }
}

/// Resolves the port from `interface` (device name) or `port` (number, default 0).
fn resolve_port(cfg: &DpdkConfig) -> Result<(u16, String), LiveError> {
    let id = if let Some(name) = &cfg.interface {
        let c = CString::new(name.as_str())
            .map_err(|_| LiveError::config(name, "interface name contains a NUL byte"))?;
        let mut id = 0u16;
        // SAFETY: `c` is NUL-terminated, `id` writable.
        let rc = unsafe { sys::rte_eth_dev_get_port_by_name(c.as_ptr(), &mut id) };
        if rc != 0 {
            return Err(LiveError::NoSuchInterface {
                iface: format!("{name} (DPDK port; {} ports available)", port_count()),
            });
        }
        id
    } else {
        cfg.port.unwrap_or(0)
    };
    // SAFETY: plain query.
    if unsafe { sys::rte_eth_dev_is_valid_port(id) } == 0 {
        return Err(LiveError::NoSuchInterface {
            iface: format!("DPDK port {id} ({} ports available)", port_count()),
        });
    }
    let mut buf = [0 as std::ffi::c_char; 64];
    // SAFETY: `buf` is writable and large enough for RTE_ETH_NAME_MAX_LEN (64).
    let rc = unsafe { sys::rte_eth_dev_get_name_by_port(id, buf.as_mut_ptr()) };
    let name = if rc == 0 {
        // SAFETY: on success the name is NUL-terminated inside `buf`.
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    } else {
        format!("port{id}")
    };
    Ok((id, name))
}

fn port_count() -> u16 {
    // SAFETY: plain query.
    unsafe { sys::rte_eth_dev_count_avail() }
}

/// The RSS key sized to what the device wants: the configured key if its length fits,
/// otherwise the symmetric 0x6D5A pattern stretched to the device's key size.
fn fit_key(key: &[u8], want: usize) -> Vec<u8> {
    if want == 0 || key.len() == want {
        return key.to_vec();
    }
    (0..want)
        .map(|i| if i % 2 == 0 { 0x6d } else { 0x5a })
        .collect()
}

/// Configures and starts the port of `cfg` with one RX queue per worker and returns the
/// queues. The EAL must be running ([`super::eal_init`]).
pub fn open_port(cfg: &DpdkConfig, workers: usize) -> Result<Vec<DpdkQueue>, LiveError> {
    let label = cfg
        .interface
        .clone()
        .unwrap_or_else(|| format!("port{}", cfg.port.unwrap_or(0)));
    cfg.validate().map_err(|r| LiveError::config(&label, r))?;
    if workers == 0 || workers > u16::MAX as usize {
        return Err(LiveError::config(
            &label,
            format!("threads {workers} must be 1..=65535"),
        ));
    }
    let nq = cfg.rx_queues.unwrap_or(workers as u16);
    if nq as usize != workers {
        return Err(LiveError::config(
            &label,
            format!(
                "rx-queues {nq} must equal the number of workers ({workers}): one queue per worker"
            ),
        ));
    }
    let (id, name) = resolve_port(cfg)?;

    let mut dev = sys::rte_eth_dev_info::default();
    // SAFETY: `dev` is writable; `id` is a valid port.
    let rc = unsafe { sys::rte_eth_dev_info_get(id, &mut dev) };
    if rc != 0 {
        return Err(dpdk_err(&name, "rte_eth_dev_info_get", strerror(rc)));
    }
    let driver = if dev.driver_name.is_null() {
        String::new()
    } else {
        // SAFETY: the driver name is a static NUL-terminated string of the PMD.
        unsafe { CStr::from_ptr(dev.driver_name) }
            .to_string_lossy()
            .into_owned()
    };
    if nq > dev.max_rx_queues {
        return Err(LiveError::config(
            &name,
            format!(
                "{nq} RX queues asked, the {driver} port has at most {}",
                dev.max_rx_queues
            ),
        ));
    }

    let mut key = fit_key(
        &cfg.rss_key_bytes()
            .map_err(|r| LiveError::config(&name, r))?,
        dev.hash_key_size as usize,
    );
    let mut conf = sys::rte_eth_conf::default();
    // RSS when there are several queues and the device hashes in hardware. A device without
    // RSS offloads (net_af_packet, which spreads its queues with a kernel fanout group) is
    // set up without it; `PortInfo::rss` says so.
    // SAFETY: plain computation of DPDK's flag set.
    let hf = unsafe { sys::shim_rss_hf_ip_tcp_udp() } & dev.flow_type_rss_offloads;
    let rss = nq > 1 && hf != 0;
    if rss {
        conf.rxmode.mq_mode = sys::RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_key = key.as_mut_ptr();
        conf.rx_adv_conf.rss_conf.rss_key_len = key.len() as u8;
        conf.rx_adv_conf.rss_conf.rss_hf = hf;
    }

    // The mempool: one per port, on the port's NUMA socket.
    static POOLS: AtomicU32 = AtomicU32::new(0);
    let pool_name = CString::new(format!(
        "shrike_p{id}_{}",
        POOLS.fetch_add(1, Ordering::Relaxed)
    ))
    .unwrap_or_default();
    // SAFETY: plain queries.
    let socket = unsafe { sys::rte_eth_dev_socket_id(id) };
    // SAFETY: plain computation.
    let buf_size = unsafe { sys::shim_mbuf_default_buf_size() };
    // SAFETY: `pool_name` is NUL-terminated; DPDK copies it.
    let mp = unsafe {
        sys::rte_pktmbuf_pool_create(
            pool_name.as_ptr(),
            cfg.mempool_size,
            cfg.mempool_cache_size,
            0,
            buf_size,
            socket,
        )
    };
    if mp.is_null() {
        return Err(dpdk_err(
            &name,
            "rte_pktmbuf_pool_create",
            format!(
                "{} (mempool-size {}, mempool-cache-size {})",
                last_error(),
                cfg.mempool_size,
                cfg.mempool_cache_size
            ),
        ));
    }
    // From here on the Port guard stops/closes the device and frees the pool on any error.
    let mut port = Port {
        id,
        name: name.clone(),
        info: PortInfo {
            port: id,
            name: name.clone(),
            driver: driver.clone(),
            rx_queues: nq,
            rss,
            mempool_size: cfg.mempool_size,
        },
        mempool: mp,
    };

    // Some PMDs want a TX queue even for RX-only use: try without, then with one.
    let mut ntx = 0u16;
    // SAFETY: `conf` is a valid rte_eth_conf; `key` outlives the call (DPDK copies it).
    let mut rc = unsafe { sys::rte_eth_dev_configure(id, nq, ntx, &conf) };
    if rc != 0 {
        ntx = 1;
        // SAFETY: as above.
        rc = unsafe { sys::rte_eth_dev_configure(id, nq, ntx, &conf) };
    }
    if rc != 0 {
        return Err(dpdk_err(&name, "rte_eth_dev_configure", strerror(rc)));
    }
    if let Some(mtu) = cfg.mtu {
        // SAFETY: plain call on a configured port.
        let rc = unsafe { sys::rte_eth_dev_set_mtu(id, mtu) };
        if rc != 0 {
            return Err(dpdk_err(&name, "rte_eth_dev_set_mtu", strerror(rc)));
        }
    }
    let sock_id = if socket < 0 { 0 } else { socket as u32 };
    for q in 0..nq {
        // SAFETY: the port is configured with `nq` RX queues; a NULL rxconf takes the
        // driver's defaults; `mp` is a live pktmbuf pool.
        let rc = unsafe {
            sys::rte_eth_rx_queue_setup(id, q, cfg.rx_descriptors, sock_id, std::ptr::null(), mp)
        };
        if rc != 0 {
            return Err(dpdk_err(
                &name,
                "rte_eth_rx_queue_setup",
                format!(
                    "queue {q}: {} (rx-descriptors {})",
                    strerror(rc),
                    cfg.rx_descriptors
                ),
            ));
        }
    }
    for q in 0..ntx {
        // SAFETY: the port is configured with `ntx` TX queues; NULL txconf = defaults.
        let rc = unsafe { sys::rte_eth_tx_queue_setup(id, q, 512, sock_id, std::ptr::null()) };
        if rc != 0 {
            return Err(dpdk_err(&name, "rte_eth_tx_queue_setup", strerror(rc)));
        }
    }
    // SAFETY: plain call on a configured port.
    let rc = unsafe { sys::rte_eth_dev_start(id) };
    if rc != 0 {
        return Err(dpdk_err(&name, "rte_eth_dev_start", strerror(rc)));
    }
    if cfg.promisc {
        // Not every PMD supports it (vdevs often do not); that is not an error.
        // SAFETY: plain call on a started port.
        let _ = unsafe { sys::rte_eth_promiscuous_enable(id) };
    }
    port.info.rx_queues = nq;
    let port = Arc::new(port);
    Ok((0..nq)
        .map(|q| DpdkQueue {
            port: port.clone(),
            queue: q,
            mbufs: Vec::with_capacity(cfg.burst_size as usize),
            burst_size: cfg.burst_size,
            idle_sleep: Duration::from_micros(cfg.idle_sleep_us as u64),
            registered: false,
            stats: LiveStats::default(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::fit_key;

    #[test]
    fn key_is_stretched_symmetrically() {
        let k40 = crate::config::SYMMETRIC_RSS_KEY;
        assert_eq!(fit_key(&k40, 40), k40.to_vec());
        assert_eq!(fit_key(&k40, 0), k40.to_vec());
        let k52 = fit_key(&k40, 52);
        assert_eq!(k52.len(), 52);
        assert!(k52.chunks(2).all(|c| c == [0x6d, 0x5a]));
    }
}
