//! AF_PACKET capture with a TPACKET_V3 ring of our own over `libc`.
//!
//! One [`AfPacketSocket`] is one ring; [`open_fanout`] opens N of them in one `PACKET_FANOUT`
//! group, one per worker. A worker calls [`AfPacketSocket::next_block`] with the time its timer
//! wheel allows; it gets a [`Block`] (a batch the kernel filled) or `None` after the timeout.
//! The block lends its packets ([`Block::next_packet`]) and goes back to the kernel when
//! dropped, strictly in ring order.
//!
//! ```no_run
//! use std::time::Duration;
//! use shrike_capture::{afpacket, AfPacketConfig};
//! let cfg = AfPacketConfig::default();
//! let mut socks = afpacket::open_fanout("eth1", 4, &cfg)?;
//! let mut s = socks.remove(0); // move each to its pinned worker thread
//! loop {
//!     if let Some(mut block) = s.next_block(Duration::from_millis(100))? {
//!         while let Some(pkt) = block.next_packet() {
//!             let _ = (pkt.ts, pkt.data); // decode + detect
//!         }
//!     } // block returned to the kernel here
//!     // run timers; now and then: s.stats()
//! #   break;
//! }
//! # Ok::<(), shrike_capture::LiveError>(())
//! ```

mod block;
mod bpf;
mod sys;
mod tx;

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub use block::PacketInfo;
pub use bpf::{dlt_of, BpfProgram};
pub use tx::Sender;

use crate::config::{AfPacketConfig, RingGeometry};
use crate::live::{LiveError, LiveStats};
use crate::{LinkType, RawPacket};
use block::{Cursor, Step};

/// Fanout membership of a socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fanout {
    /// Group id (16 bits, per network namespace).
    pub group: u16,
    /// `PACKET_FANOUT_*` mode.
    pub mode: u32,
    /// Add `PACKET_FANOUT_FLAG_DEFRAG`.
    pub defrag: bool,
}

impl Fanout {
    /// The `PACKET_FANOUT` option word: `group | (mode | flags) << 16`.
    pub fn option(self) -> u32 {
        let flags = if self.defrag {
            libc::PACKET_FANOUT_FLAG_DEFRAG
        } else {
            0
        };
        self.group as u32 | ((self.mode | flags) << 16)
    }
}

/// What the ring looks like once opened (log it like Suricata's `SCLogPerf` line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingInfo {
    /// The geometry asked for.
    pub geometry: RingGeometry,
    /// True when the ring is locked in memory. False when `mmap-locked` is off, or when
    /// MAP_LOCKED failed (RLIMIT_MEMLOCK too low, no CAP_IPC_LOCK) and the ring was mapped
    /// unlocked instead: it may then be swapped out under memory pressure.
    pub locked: bool,
    /// The interface index bound to (changes when the interface is recreated).
    pub ifindex: i32,
    /// Link type of the frames, from the interface's hardware type: Ethernet for Ethernet
    /// and loopback devices, Raw for IP-only devices (tun, PPP, IP tunnels).
    pub link: LinkType,
}

/// The link type AF_PACKET `SOCK_RAW` frames of an `ARPHRD_*` device carry (as Suricata's
/// `AFPGetDevLinktype`): Ethernet headers, or none (raw IP) for devices without a link
/// header.
pub fn link_type_for_arphrd(hw: u16) -> LinkType {
    match hw {
        1 | 772 => LinkType::Ethernet, // ARPHRD_ETHER, ARPHRD_LOOPBACK
        // ARPHRD_PPP, ARPHRD_RAWIP, ARPHRD_TUNNEL, ARPHRD_TUNNEL6, ARPHRD_SIT, ARPHRD_IPGRE,
        // ARPHRD_IP6GRE, ARPHRD_NONE
        512 | 519 | 768 | 769 | 776 | 778 | 823 | 0xfffe => LinkType::Raw,
        other => LinkType::Other(0x1_0000 | other as u32),
    }
}

/// Everything needed to (re)open one socket.
#[derive(Clone, Debug)]
struct Params {
    geometry: RingGeometry,
    fanout: Option<Fanout>,
    promisc: bool,
    filter: Option<BpfProgram>,
    poll_timeout: Duration,
    reopen_interval: Duration,
    lock: bool,
}

struct Open {
    fd: OwnedFd,
    ring: sys::Mmap,
    ifindex: i32,
    link: LinkType,
}

/// One TPACKET_V3 socket and its ring. `Send`: open it anywhere, move it to the worker that
/// reads it. Closes (and leaves its fanout group) on drop.
pub struct AfPacketSocket {
    iface: String,
    params: Params,
    open: Option<Open>,
    /// Index of the next block to read.
    cur: u32,
    stats: LiveStats,
    next_retry: Option<Instant>,
    scratch: Vec<u8>,
    info: RingInfo,
}

/// Opens `n` sockets on `iface` in one fanout group (`cluster-id`, `cluster-type`, `defrag`
/// from `cfg`); with `n == 1` no fanout group is joined, like Suricata.
pub fn open_fanout(
    iface: &str,
    n: usize,
    cfg: &AfPacketConfig,
) -> Result<Vec<AfPacketSocket>, LiveError> {
    if n == 0 || n > 65536 {
        return Err(LiveError::config(
            iface,
            format!("threads {n} must be 1..=65536"),
        ));
    }
    let fanout = (n > 1).then_some(Fanout {
        group: cfg.cluster_id,
        mode: cfg.cluster_type.fanout_mode(),
        defrag: cfg.defrag,
    });
    (0..n)
        .map(|_| AfPacketSocket::open(iface, cfg, fanout))
        .collect()
}

impl AfPacketSocket {
    /// Opens one socket on `iface` with the ring from `cfg`, in the fanout group `fanout`.
    /// Errors name the interface: a missing interface, missing privileges (EPERM), a bad
    /// setting, or a fanout group already used with other settings.
    pub fn open(
        iface: &str,
        cfg: &AfPacketConfig,
        fanout: Option<Fanout>,
    ) -> Result<AfPacketSocket, LiveError> {
        let geometry = cfg.geometry().map_err(|r| LiveError::config(iface, r))?;
        let promisc = cfg
            .promisc_enabled()
            .map_err(|r| LiveError::config(iface, r))?;
        let filter = match (&cfg.bpf_program, &cfg.bpf_filter) {
            (Some(_), Some(_)) => {
                return Err(LiveError::config(
                    iface,
                    "bpf-filter and bpf-program are exclusive",
                ))
            }
            (Some(p), None) => Some(BpfProgram::parse(p).map_err(|r| LiveError::config(iface, r))?),
            (None, Some(e)) => {
                Some(BpfProgram::compile(e).map_err(|r| LiveError::config(iface, r))?)
            }
            (None, None) => None,
        };
        let params = Params {
            geometry,
            fanout,
            promisc,
            filter,
            poll_timeout: Duration::from_millis(cfg.poll_timeout as u64),
            reopen_interval: Duration::from_millis(cfg.reopen_interval.max(1) as u64),
            lock: cfg.mmap_locked,
        };
        let open = open_socket(iface, &params)?;
        let info = RingInfo {
            geometry,
            locked: open.ring.locked,
            ifindex: open.ifindex,
            link: open.link,
        };
        Ok(AfPacketSocket {
            iface: iface.to_string(),
            scratch: Vec::with_capacity(geometry.block_size as usize + 4),
            params,
            open: Some(open),
            cur: 0,
            stats: LiveStats::default(),
            next_retry: None,
            info,
        })
    }

    /// The interface name.
    pub fn iface(&self) -> &str {
        &self.iface
    }

    /// Ring geometry, lock state and ifindex of the current socket.
    pub fn info(&self) -> RingInfo {
        self.info
    }

    /// The configured `poll-timeout`, a good default for [`AfPacketSocket::next_block`].
    pub fn poll_timeout(&self) -> Duration {
        self.params.poll_timeout
    }

    /// True while the interface is gone and the socket waits to reopen.
    pub fn is_down(&self) -> bool {
        self.open.is_none()
    }

    /// The next filled block, waiting at most `timeout` (`poll()`); `None` on timeout, on a
    /// signal, or while the interface is down. When the interface goes away (down, removed,
    /// poll error) the socket is closed, counted in `iface_down`, and reopened by name every
    /// `reopen-interval` once the interface is up again (`reopens`).
    pub fn next_block(&mut self, timeout: Duration) -> Result<Option<Block<'_>>, LiveError> {
        if self.open.is_none() {
            self.try_reopen(timeout)?;
            if self.open.is_none() {
                return Ok(None);
            }
        }
        if !self.block_ready() {
            let Some(open) = &self.open else {
                return Ok(None);
            };
            let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
            self.stats.polls += 1;
            match sys::poll_in(open.fd.as_raw_fd(), ms) {
                Ok(sys::Polled::Data) => self.stats.poll_data += 1,
                Ok(sys::Polled::Timeout) => {
                    self.stats.poll_timeout += 1;
                    return Ok(None);
                }
                Ok(sys::Polled::Signal) => {
                    self.stats.poll_signal += 1;
                    return Ok(None);
                }
                Ok(sys::Polled::Error) => {
                    self.stats.poll_errors += 1;
                    self.stats.errors += 1;
                    self.go_down();
                    return Ok(None);
                }
                Err(e) => return Err(LiveError::sys(&self.iface, "poll", e)),
            }
        }
        if !self.block_ready() {
            return Ok(None);
        }
        Ok(Block::new(self))
    }

    /// Counters so far. Reads `PACKET_STATISTICS` (which the kernel resets on every read)
    /// and adds it to the running totals.
    pub fn stats(&mut self) -> LiveStats {
        self.read_kernel_stats();
        self.stats.clone()
    }

    fn read_kernel_stats(&mut self) {
        if let Some(open) = &self.open {
            if let Ok(s) = sys::getsockopt::<libc::tpacket_stats_v3>(
                open.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
            ) {
                self.stats.packets += s.tp_packets as u64;
                self.stats.drops += s.tp_drops as u64;
                self.stats.freeze_q += s.tp_freeze_q_cnt as u64;
            }
        }
    }

    /// True if user space owns the current block (Acquire load of its status word).
    fn block_ready(&self) -> bool {
        let Some(open) = self.open.as_ref() else {
            return false;
        };
        let off =
            self.cur as usize * self.params.geometry.block_size as usize + block::BLOCK_STATUS_OFF;
        if off + 4 > open.ring.len() {
            return false;
        }
        // SAFETY: `off` is inside the mapping (checked above) and 4-aligned (blocks are
        // page-aligned, the field is at offset 8); the kernel writes this word concurrently,
        // which is why it is accessed only atomically.
        let status = unsafe { AtomicU32::from_ptr(open.ring.base().add(off).cast::<u32>()) };
        status.load(Ordering::Acquire) & libc::TP_STATUS_USER != 0
    }

    /// Hands the current block back to the kernel (Release store) and moves to the next.
    fn release_current(&mut self) {
        if let Some(open) = &self.open {
            let off = self.cur as usize * self.params.geometry.block_size as usize
                + block::BLOCK_STATUS_OFF;
            if off + 4 <= open.ring.len() {
                // SAFETY: as in `block_ready`; the Release store publishes that user space
                // is done with every byte of the block.
                let status =
                    unsafe { AtomicU32::from_ptr(open.ring.base().add(off).cast::<u32>()) };
                status.store(libc::TP_STATUS_KERNEL, Ordering::Release);
            }
        }
        self.cur = (self.cur + 1) % self.params.geometry.block_count;
        self.stats.blocks += 1;
    }

    fn go_down(&mut self) {
        if let Some(open) = &self.open {
            // Clear the pending error; its value does not change what happens next.
            let _ = sys::take_socket_error(open.fd.as_raw_fd());
        }
        self.read_kernel_stats();
        self.open = None;
        self.cur = 0;
        self.stats.iface_down += 1;
        self.next_retry = Some(Instant::now() + self.params.reopen_interval);
    }

    /// While down: wait until the next retry (at most `timeout`), then try to reopen if the
    /// interface exists and is up.
    fn try_reopen(&mut self, timeout: Duration) -> Result<(), LiveError> {
        let now = Instant::now();
        let at = self.next_retry.unwrap_or(now);
        if at > now {
            let wait = (at - now).min(timeout);
            std::thread::sleep(wait);
            if Instant::now() < at {
                return Ok(());
            }
        }
        self.next_retry = Some(Instant::now() + self.params.reopen_interval);
        if !interface_up(&self.iface) {
            return Ok(());
        }
        match open_socket(&self.iface, &self.params) {
            Ok(open) => {
                self.info.locked = open.ring.locked;
                self.info.ifindex = open.ifindex;
                self.info.link = open.link;
                self.open = Some(open);
                self.cur = 0;
                self.next_retry = None;
                self.stats.reopens += 1;
                Ok(())
            }
            Err(LiveError::NoSuchInterface { .. }) => Ok(()),
            Err(LiveError::Sys { source, .. })
                if matches!(
                    source.raw_os_error(),
                    Some(libc::ENETDOWN) | Some(libc::ENODEV) | Some(libc::ENXIO)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}

/// True if `iface` exists and is administratively up (checked with a throwaway socket in the
/// calling thread's namespace).
fn interface_up(iface: &str) -> bool {
    let Ok(fd) = sys::packet_socket() else {
        return false;
    };
    matches!(sys::if_flags(fd.as_raw_fd(), iface), Ok(f) if f & libc::IFF_UP != 0)
}

/// The setup sequence: socket (protocol 0) → TPACKET_V3 → filter → RX ring → mmap → bind to
/// the ifindex with ETH_P_ALL → promiscuous membership → fanout.
fn open_socket(iface: &str, p: &Params) -> Result<Open, LiveError> {
    let ifindex = sys::ifindex(iface).ok_or_else(|| LiveError::NoSuchInterface {
        iface: iface.to_string(),
    })?;
    let fd = sys::packet_socket().map_err(|e| LiveError::sys(iface, "socket(AF_PACKET)", e))?;
    let raw = fd.as_raw_fd();
    let link = match sys::if_hwtype(raw, iface) {
        Ok(hw) => link_type_for_arphrd(hw),
        Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {
            return Err(LiveError::NoSuchInterface {
                iface: iface.to_string(),
            })
        }
        Err(e) => return Err(LiveError::sys(iface, "SIOCGIFHWADDR", e)),
    };
    let v3 = libc::tpacket_versions::TPACKET_V3 as libc::c_int;
    sys::setsockopt(raw, libc::SOL_PACKET, libc::PACKET_VERSION, &v3)
        .map_err(|e| LiveError::sys(iface, "PACKET_VERSION (TPACKET_V3)", e))?;
    if let Some(f) = &p.filter {
        f.attach(raw)
            .map_err(|e| LiveError::sys(iface, "SO_ATTACH_FILTER", e))?;
    }
    let g = p.geometry;
    let req = libc::tpacket_req3 {
        tp_block_size: g.block_size,
        tp_block_nr: g.block_count,
        tp_frame_size: g.frame_size,
        tp_frame_nr: (g.block_size / g.frame_size) * g.block_count,
        tp_retire_blk_tov: g.block_timeout,
        tp_sizeof_priv: 0,
        tp_feature_req_word: libc::TP_FT_REQ_FILL_RXHASH,
    };
    sys::setsockopt(raw, libc::SOL_PACKET, libc::PACKET_RX_RING, &req).map_err(|e| {
        LiveError::Sys {
            iface: iface.to_string(),
            op: "PACKET_RX_RING",
            source: std::io::Error::new(
                e.kind(),
                format!(
                    "{e} (ring of {} blocks of {} bytes)",
                    g.block_count, g.block_size
                ),
            ),
        }
    })?;
    let ring = sys::Mmap::map(&fd, g.ring_bytes(), p.lock)
        .map_err(|e| LiveError::sys(iface, "mmap", e))?;
    sys::bind(raw, ifindex, sys::ETH_P_ALL_BE).map_err(|e| match e.raw_os_error() {
        Some(libc::ENODEV) => LiveError::NoSuchInterface {
            iface: iface.to_string(),
        },
        _ => LiveError::sys(iface, "bind", e),
    })?;
    if p.promisc {
        // SAFETY: packet_mreq is plain data; all-zero is valid.
        let mut mr: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mr.mr_ifindex = ifindex;
        mr.mr_type = libc::PACKET_MR_PROMISC as u16;
        sys::setsockopt(raw, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mr)
            .map_err(|e| LiveError::sys(iface, "PACKET_ADD_MEMBERSHIP (promiscuous mode)", e))?;
    }
    if let Some(f) = p.fanout {
        let opt = f.option();
        sys::setsockopt(raw, libc::SOL_PACKET, libc::PACKET_FANOUT, &opt).map_err(|e| {
            match e.raw_os_error() {
                Some(libc::EINVAL) | Some(libc::EALREADY) | Some(libc::EEXIST) => {
                    LiveError::config(
                        iface,
                        format!(
                            "cannot join fanout group {} (mode {}): {e}; the id is probably used \
                         by another socket with other settings: set a different cluster-id",
                            f.group, f.mode
                        ),
                    )
                }
                _ => LiveError::sys(iface, "PACKET_FANOUT", e),
            }
        })?;
    }
    Ok(Open {
        fd,
        ring,
        ifindex,
        link,
    })
}

// The struct holds a raw mapping (through `sys::Mmap`, which is Send) and owned data only.
const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<AfPacketSocket>();
};

/// One ring block the kernel filled, lent to the caller. Its packets come out with
/// [`Block::next_packet`]; dropping the block hands it back to the kernel.
pub struct Block<'s> {
    sock: &'s mut AfPacketSocket,
    data: &'s [u8],
    cursor: Cursor,
    seq: u64,
    num_pkts: u32,
}

impl<'s> Block<'s> {
    fn new(sock: &'s mut AfPacketSocket) -> Option<Block<'s>> {
        let bs = sock.params.geometry.block_size as usize;
        let start = sock.cur as usize * bs;
        let base = sock.open.as_ref()?.ring.base();
        if start + bs > sock.open.as_ref()?.ring.len() {
            return None;
        }
        // SAFETY: the block lies inside the mapping (checked above). The kernel set its status
        // to TP_STATUS_USER (observed with Acquire in `next_block`) and does not write it
        // until the Release store in `release_current`, which runs when this `Block` drops;
        // the mapping lives as long as the socket, which this block borrows mutably.
        let data: &'s [u8] = unsafe { std::slice::from_raw_parts(base.add(start), bs) };
        let (cursor, seq, num_pkts) = match block::block_header(data) {
            Some(h) => (Cursor::new(&h), h.seq, h.num_pkts),
            None => {
                sock.stats.ring_errors += 1;
                (
                    Cursor::new(&block::BlockHeader {
                        num_pkts: 0,
                        first: 0,
                        seq: 0,
                    }),
                    0,
                    0,
                )
            }
        };
        Some(Block {
            sock,
            data,
            cursor,
            seq,
            num_pkts,
        })
    }

    /// The kernel's sequence number of this block.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Packets the kernel put in this block.
    pub fn num_packets(&self) -> u32 {
        self.num_pkts
    }

    /// The next packet (an Ethernet frame, VLAN tag restored), borrowed until the next call.
    pub fn next_packet(&mut self) -> Option<RawPacket<'_>> {
        self.next_with_info().map(|(p, _)| p)
    }

    /// Like [`Block::next_packet`], with the ring's per-packet metadata.
    pub fn next_with_info(&mut self) -> Option<(RawPacket<'_>, PacketInfo)> {
        loop {
            match self.cursor.step(self.data) {
                Step::End => return None,
                Step::Malformed => {
                    self.sock.stats.ring_errors += 1;
                    continue;
                }
                Step::Packet(h) => {
                    let st = &mut self.sock.stats;
                    st.delivered += 1;
                    st.bytes += h.snaplen as u64;
                    if (h.len as usize) > h.snaplen {
                        st.truncated += 1;
                    }
                    let link = self.sock.info.link;
                    let (pkt, restored) =
                        block::make_packet(self.data, &h, link, &mut self.sock.scratch);
                    if restored {
                        self.sock.stats.vlan_restored += 1;
                    }
                    return Some((pkt, h.info));
                }
            }
        }
    }
}

impl Drop for Block<'_> {
    fn drop(&mut self) {
        self.sock.release_current();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arphrd_mapping() {
        for (hw, want) in [
            (1, LinkType::Ethernet),
            (772, LinkType::Ethernet),
            (0xfffe, LinkType::Raw),
            (512, LinkType::Raw),
            (519, LinkType::Raw),
            (778, LinkType::Raw),
        ] {
            assert_eq!(link_type_for_arphrd(hw), want, "{hw}");
        }
        assert!(!link_type_for_arphrd(801).is_supported()); // ARPHRD_IEEE80211
    }

    #[test]
    fn fanout_option_word() {
        let f = Fanout {
            group: 99,
            mode: libc::PACKET_FANOUT_QM,
            defrag: true,
        };
        assert_eq!(f.option(), 99 | ((5 | 0x8000) << 16));
        let f = Fanout {
            group: 0xffff,
            mode: libc::PACKET_FANOUT_HASH,
            defrag: false,
        };
        assert_eq!(f.option(), 0xffff);
    }
}
