//! DPDK capture (feature `dpdk`): EAL start-up, one port with one RX queue per worker, a
//! symmetric RSS key so both directions of a flow reach the same queue, and bursts of mbufs
//! lent zero-copy as [`RawPacket`]s and freed in bulk when the worker is done with them.
//!
//! ```no_run
//! use std::time::Duration;
//! use shrike_capture::{dpdk, DpdkConfig};
//! let cfg = DpdkConfig { interface: Some("0000:3b:00.0".into()), ..Default::default() };
//! dpdk::eal_init(&["-l".into(), "0".into()])?;
//! let mut queues = dpdk::open_port(&cfg, 4)?; // move each to its pinned worker
//! let q = &mut queues[0];
//! if let Some(burst) = q.next_burst(Duration::from_millis(100)) {
//!     for pkt in burst.packets() {
//!         let _ = pkt.data; // decode + detect
//!     }
//! } // mbufs freed here
//! # Ok::<(), shrike_capture::LiveError>(())
//! ```

mod port;

use std::ffi::{c_char, CStr, CString};
use std::ptr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shrike_dpdk_sys as sys;

pub use port::{open_port, PortInfo};

use crate::live::{LiveError, LiveStats};
use crate::{LinkType, RawPacket, Timestamp};

/// Outcome of the one EAL start-up a process may do.
static EAL: Mutex<Option<Result<(), String>>> = Mutex::new(None);

/// Starts DPDK's EAL with `args` (without a program name). Only the first call does work;
/// later calls return its result and ignore their arguments. `rte_eal_init` pins the calling
/// thread to the main lcore's CPUs: call it before pinning, from the thread that may keep
/// that affinity (the main thread).
pub fn eal_init(args: &[String]) -> Result<(), LiveError> {
    let mut g = EAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = g.as_ref() {
        return r.clone().map_err(|reason| LiveError::Dpdk {
            iface: "eal".into(),
            op: "rte_eal_init",
            reason,
        });
    }
    let mut owned: Vec<CString> = Vec::with_capacity(args.len() + 1);
    owned.push(CString::new("shrike").unwrap_or_default());
    for a in args {
        owned.push(CString::new(a.as_str()).map_err(|_| LiveError::Dpdk {
            iface: "eal".into(),
            op: "rte_eal_init",
            reason: format!("argument `{a}` contains a NUL byte"),
        })?);
    }
    let mut argv: Vec<*mut c_char> = owned.iter().map(|c| c.as_ptr() as *mut c_char).collect();
    argv.push(ptr::null_mut());
    // SAFETY: argv holds argc NUL-terminated strings followed by NULL; EAL may permute the
    // pointer array (which we own) and keeps no pointer past the call except into `owned`,
    // which is leaked below so it lives for the process.
    let rc = unsafe { sys::rte_eal_init(owned.len() as i32, argv.as_mut_ptr()) };
    let result = if rc < 0 {
        Err(format!("{} (args: {})", last_error(), args.join(" ")))
    } else {
        std::mem::forget(owned);
        Ok(())
    };
    *g = Some(result.clone());
    result.map_err(|reason| LiveError::Dpdk {
        iface: "eal".into(),
        op: "rte_eal_init",
        reason,
    })
}

/// DPDK's version string (`DPDK 22.11.11`).
pub fn version() -> String {
    // SAFETY: rte_version returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(sys::rte_version()) }
        .to_string_lossy()
        .into_owned()
}

/// The text of `rte_errno`.
pub(crate) fn last_error() -> String {
    // SAFETY: reads the calling thread's rte_errno.
    let e = unsafe { sys::shim_errno() };
    strerror(e)
}

/// The text of a DPDK error code (positive or negative).
pub(crate) fn strerror(code: i32) -> String {
    // SAFETY: rte_strerror returns a NUL-terminated string valid until the next call on this
    // thread; it is copied at once.
    let s = unsafe { CStr::from_ptr(sys::rte_strerror(code.abs())) };
    format!("{} ({})", s.to_string_lossy(), code)
}

/// One RX queue of a started port, owned by one worker. `Send`: open the port anywhere, move
/// each queue to its worker thread. The port stops when its last queue is dropped.
pub struct DpdkQueue {
    port: Arc<port::Port>,
    queue: u16,
    mbufs: Vec<*mut sys::rte_mbuf>,
    burst_size: u16,
    idle_sleep: Duration,
    registered: bool,
    stats: LiveStats,
}

// SAFETY: the raw pointers are mbufs this queue received and frees itself; an RX queue is
// polled by one thread at a time (this value is not Sync and `next_burst` takes `&mut self`),
// which is all DPDK requires of rte_eth_rx_burst.
unsafe impl Send for DpdkQueue {}

impl DpdkQueue {
    /// The port's device name.
    pub fn iface(&self) -> &str {
        &self.port.name
    }

    /// This queue's index on the port.
    pub fn queue(&self) -> u16 {
        self.queue
    }

    /// Port number, driver and RSS state.
    pub fn info(&self) -> &PortInfo {
        &self.port.info
    }

    /// The next burst of at most `burst-size` packets, polling until one arrives or `timeout`
    /// passes (sleeping `idle-sleep-us` between empty polls, or spinning when 0).
    pub fn next_burst(&mut self, timeout: Duration) -> Option<Burst<'_>> {
        if !self.registered {
            self.registered = true;
            // SAFETY: plain EAL calls on the calling thread; registering gives a non-EAL
            // thread an lcore id so the mempool's per-lcore cache serves it.
            unsafe {
                if sys::shim_lcore_id() == sys::shim_lcore_id_any() {
                    sys::rte_thread_register();
                }
            }
        }
        let start = Instant::now();
        loop {
            // SAFETY: `mbufs` has capacity for `burst_size` pointers and is empty (a Burst
            // frees and clears it on drop); rx_burst writes at most that many.
            let n = unsafe {
                sys::shim_rx_burst(
                    self.port.id,
                    self.queue,
                    self.mbufs.as_mut_ptr(),
                    self.burst_size,
                )
            };
            if n > 0 {
                // SAFETY: rx_burst initialised the first `n` pointers.
                unsafe { self.mbufs.set_len(n as usize) };
                let ts = now();
                self.stats.blocks += 1;
                self.stats.delivered += n as u64;
                for &m in &self.mbufs {
                    let p = packet(m, ts);
                    self.stats.bytes += p.data.len() as u64;
                    if (p.orig_len as usize) > p.data.len() {
                        self.stats.truncated += 1;
                    }
                }
                return Some(Burst {
                    ts,
                    q: self,
                    next: 0,
                });
            }
            if start.elapsed() >= timeout {
                // (No poll counters: those are `capture.afpacket.*` in EVE.)
                return None;
            }
            if self.idle_sleep.is_zero() {
                std::hint::spin_loop();
                std::thread::yield_now();
            } else {
                std::thread::sleep(self.idle_sleep);
            }
        }
    }

    /// Counters. Queue 0 also carries the port's counters (`ipackets`, `imissed`,
    /// `rx_nombuf`, `ierrors`), so summing every queue's stats counts the port once.
    pub fn stats(&mut self) -> LiveStats {
        let mut s = self.stats.clone();
        if self.queue == 0 {
            if let Some(p) = self.port.port_stats() {
                s.packets = p.ipackets + p.imissed;
                s.drops = p.imissed + p.rx_nombuf;
                s.errors = p.ierrors;
                s.dpdk_imissed = p.imissed;
                s.dpdk_rx_nombuf = p.rx_nombuf;
                s.dpdk_ierrors = p.ierrors;
            }
        }
        s
    }
}

impl Drop for DpdkQueue {
    fn drop(&mut self) {
        free_all(&mut self.mbufs);
    }
}

fn free_all(v: &mut Vec<*mut sys::rte_mbuf>) {
    if !v.is_empty() {
        // SAFETY: every pointer is an mbuf received from rx_burst and not freed yet.
        unsafe { sys::shim_pktmbuf_free_bulk(v.as_mut_ptr(), v.len() as u32) };
        v.clear();
    }
}

fn now() -> Timestamp {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp::from_secs_nanos(d.as_secs(), d.subsec_nanos())
}

/// One burst of received mbufs, lent to the worker; freed (in bulk) on drop. All packets of
/// a burst carry the time the burst was received.
pub struct Burst<'q> {
    q: &'q mut DpdkQueue,
    ts: Timestamp,
    next: usize,
}

impl Burst<'_> {
    /// Packets in this burst.
    pub fn len(&self) -> usize {
        self.q.mbufs.len()
    }

    /// Always false: an empty poll returns no burst.
    pub fn is_empty(&self) -> bool {
        self.q.mbufs.is_empty()
    }

    /// The packets of the burst (Ethernet frames; the first segment of a chained mbuf).
    pub fn packets(&self) -> impl Iterator<Item = RawPacket<'_>> + '_ {
        self.q.mbufs.iter().map(move |&m| packet(m, self.ts))
    }

    /// The next packet (the same sequence as [`Burst::packets`], as a lending cursor like
    /// the AF_PACKET block's).
    pub fn next_packet(&mut self) -> Option<RawPacket<'_>> {
        let m = *self.q.mbufs.get(self.next)?;
        self.next += 1;
        Some(packet(m, self.ts))
    }
}

fn packet<'a>(m: *mut sys::rte_mbuf, ts: Timestamp) -> RawPacket<'a> {
    let mut data_len = 0u16;
    let mut pkt_len = 0u32;
    // SAFETY: `m` is a live mbuf from rx_burst; the shim reads its header fields.
    let p = unsafe { sys::shim_mbuf_data(m, &mut data_len, &mut pkt_len) };
    let data: &[u8] = if p.is_null() {
        &[]
    } else {
        // SAFETY: the first segment holds `data_len` bytes at `p`; the mbuf stays allocated
        // until the Burst that lends this packet is dropped, and the returned lifetime is
        // bound to a borrow of that Burst by the callers.
        unsafe { std::slice::from_raw_parts(p, data_len as usize) }
    };
    RawPacket {
        ts,
        link: LinkType::Ethernet,
        data,
        orig_len: pkt_len.max(data_len as u32),
    }
}

impl Drop for Burst<'_> {
    fn drop(&mut self) {
        free_all(&mut self.q.mbufs);
    }
}
