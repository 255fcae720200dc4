//! What the live sources (AF_PACKET, DPDK) share: counters, errors and thread helpers.

use std::io;
use std::time::Duration;

/// Counters of one live socket or queue. Plain `u64`s owned by the worker; kernel counters that
/// reset on read (`PACKET_STATISTICS`) are accumulated here.
///
/// [`LiveStats::visit`] yields names of Suricata's EVE `stats.capture` object;
/// [`LiveStats::visit_extra`] yields shrike's own counters (for `stats.log`, not EVE).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiveStats {
    /// Packets the kernel (or NIC) saw for this socket, drops included
    /// (`capture.kernel_packets`; `tp_packets`, or DPDK `ipackets + imissed`).
    pub packets: u64,
    /// Packets dropped because the ring (or NIC queue, or mempool) was full
    /// (`capture.kernel_drops`; `tp_drops`, or DPDK `imissed + rx_nombuf`).
    pub drops: u64,
    /// Times the kernel froze the ring because user space was behind (`tp_freeze_q_cnt`).
    pub freeze_q: u64,
    /// Packets handed to the caller.
    pub delivered: u64,
    /// Captured bytes handed to the caller.
    pub bytes: u64,
    /// Ring blocks (or DPDK bursts) handed to the caller.
    pub blocks: u64,
    /// Packets whose VLAN tag was restored from the ring header.
    pub vlan_restored: u64,
    /// Packets truncated by the ring (`tp_len > tp_snaplen`).
    pub truncated: u64,
    /// Times the interface went away (down, removed, poll error) and the socket was closed.
    pub iface_down: u64,
    /// Successful reopens after the interface came back.
    pub reopens: u64,
    /// Malformed ring blocks or packet headers skipped (a kernel/ABI mismatch; never expected).
    pub ring_errors: u64,
    /// Receive errors (`capture.errors`; DPDK `ierrors`, AF_PACKET poll errors).
    pub errors: u64,
    /// `poll()` calls (`capture.afpacket.polls`).
    pub polls: u64,
    /// Polls interrupted by a signal (`capture.afpacket.poll_signal`).
    pub poll_signal: u64,
    /// Polls that timed out (`capture.afpacket.poll_timeout`).
    pub poll_timeout: u64,
    /// Polls that found data (`capture.afpacket.poll_data`).
    pub poll_data: u64,
    /// Polls that reported an error (`capture.afpacket.poll_errors`).
    pub poll_errors: u64,
    /// DPDK: packets the port missed (`imissed`, stats.log only).
    pub dpdk_imissed: u64,
    /// DPDK: packets dropped for lack of mbufs (`rx_nombuf`, stats.log only).
    pub dpdk_rx_nombuf: u64,
    /// DPDK: erroneous received packets (`ierrors`, stats.log only).
    pub dpdk_ierrors: u64,
}

impl LiveStats {
    /// Counters with names from Suricata's EVE schema (`stats.capture.*`).
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        f("capture.kernel_packets", self.packets);
        f("capture.kernel_drops", self.drops);
        f("capture.errors", self.errors);
        f("capture.afpacket.polls", self.polls);
        f("capture.afpacket.poll_signal", self.poll_signal);
        f("capture.afpacket.poll_timeout", self.poll_timeout);
        f("capture.afpacket.poll_data", self.poll_data);
        f("capture.afpacket.poll_errors", self.poll_errors);
    }

    /// shrike's own counters, which Suricata's EVE schema has no place for.
    pub fn visit_extra(&self, f: &mut dyn FnMut(&str, u64)) {
        f("capture.freeze_q", self.freeze_q);
        f("capture.delivered", self.delivered);
        f("capture.bytes", self.bytes);
        f("capture.blocks", self.blocks);
        f("capture.vlan_restored", self.vlan_restored);
        f("capture.truncated", self.truncated);
        f("capture.iface_down", self.iface_down);
        f("capture.reopens", self.reopens);
        f("capture.ring_errors", self.ring_errors);
        f("capture.dpdk.imissed", self.dpdk_imissed);
        f("capture.dpdk.rx_nombuf", self.dpdk_rx_nombuf);
        f("capture.dpdk.ierrors", self.dpdk_ierrors);
    }

    /// Adds every counter of `o` to `self`.
    pub fn merge(&mut self, o: &LiveStats) {
        self.packets += o.packets;
        self.drops += o.drops;
        self.freeze_q += o.freeze_q;
        self.delivered += o.delivered;
        self.bytes += o.bytes;
        self.blocks += o.blocks;
        self.vlan_restored += o.vlan_restored;
        self.truncated += o.truncated;
        self.iface_down += o.iface_down;
        self.reopens += o.reopens;
        self.ring_errors += o.ring_errors;
        self.errors += o.errors;
        self.polls += o.polls;
        self.poll_signal += o.poll_signal;
        self.poll_timeout += o.poll_timeout;
        self.poll_data += o.poll_data;
        self.poll_errors += o.poll_errors;
        self.dpdk_imissed += o.dpdk_imissed;
        self.dpdk_rx_nombuf += o.dpdk_rx_nombuf;
        self.dpdk_ierrors += o.dpdk_ierrors;
    }
}

/// Errors of the live sources. Each names the interface (or DPDK port) it concerns.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// No interface of that name exists (in this network namespace).
    #[error("{iface}: no such network interface")]
    NoSuchInterface {
        /// The interface name.
        iface: String,
    },
    /// The process lacks CAP_NET_RAW (socket) or CAP_NET_ADMIN (promiscuous mode).
    #[error("{iface}: permission denied for {op}: capture needs root or CAP_NET_RAW (and CAP_NET_ADMIN, CAP_IPC_LOCK)")]
    Permission {
        /// The interface name.
        iface: String,
        /// The operation that failed.
        op: &'static str,
    },
    /// A setting is invalid.
    #[error("{iface}: bad capture setting: {reason}")]
    Config {
        /// The interface name.
        iface: String,
        /// What is wrong, naming the key.
        reason: String,
    },
    /// A system call failed while setting up or reading the socket.
    #[error("{iface}: {op} failed: {source}")]
    Sys {
        /// The interface name.
        iface: String,
        /// The operation (`socket`, `PACKET_RX_RING`, `mmap`, `bind`, `PACKET_FANOUT`, `poll` …).
        op: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A DPDK call failed.
    #[error("{iface}: DPDK {op} failed: {reason}")]
    Dpdk {
        /// The port (device name or number).
        iface: String,
        /// The DPDK function.
        op: &'static str,
        /// The error text (`rte_strerror`) or code.
        reason: String,
    },
}

impl LiveError {
    /// Builds [`LiveError::Sys`] from errno, or [`LiveError::Permission`] for EPERM/EACCES.
    pub(crate) fn sys(iface: &str, op: &'static str, source: io::Error) -> LiveError {
        match source.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => LiveError::Permission {
                iface: iface.to_string(),
                op,
            },
            _ => LiveError::Sys {
                iface: iface.to_string(),
                op,
                source,
            },
        }
    }

    /// Builds [`LiveError::Config`].
    pub(crate) fn config(iface: &str, reason: impl Into<String>) -> LiveError {
        LiveError::Config {
            iface: iface.to_string(),
            reason: reason.into(),
        }
    }
}

/// A live packet source a worker or capture thread polls: one AF_PACKET fanout member or
/// one DPDK RX queue. The runmodes drive every live source through this trait; capture files
/// are read through [`crate::PacketSource`].
pub trait LiveSource: Send {
    /// Hand every packet available within `timeout` to `f`; returns how many.
    fn poll(
        &mut self,
        timeout: Duration,
        f: &mut dyn FnMut(crate::RawPacket<'_>),
    ) -> Result<usize, LiveError>;
    /// Counters so far (kernel or NIC drops included).
    fn stats(&mut self) -> LiveStats;
}

impl LiveSource for crate::afpacket::AfPacketSocket {
    fn poll(
        &mut self,
        timeout: Duration,
        f: &mut dyn FnMut(crate::RawPacket<'_>),
    ) -> Result<usize, LiveError> {
        let mut n = 0;
        if let Some(mut block) = self.next_block(timeout)? {
            while let Some(p) = block.next_packet() {
                f(p);
                n += 1;
            }
        }
        Ok(n)
    }
    fn stats(&mut self) -> LiveStats {
        crate::afpacket::AfPacketSocket::stats(self)
    }
}

#[cfg(feature = "dpdk")]
impl LiveSource for crate::dpdk::DpdkQueue {
    fn poll(
        &mut self,
        timeout: Duration,
        f: &mut dyn FnMut(crate::RawPacket<'_>),
    ) -> Result<usize, LiveError> {
        let mut n = 0;
        if let Some(mut burst) = self.next_burst(timeout) {
            while let Some(p) = burst.next_packet() {
                f(p);
                n += 1;
            }
        }
        Ok(n)
    }
    fn stats(&mut self) -> LiveStats {
        crate::dpdk::DpdkQueue::stats(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_merge_adds() {
        let s = LiveStats {
            packets: 1,
            drops: 2,
            errors: 3,
            polls: 4,
            freeze_q: 5,
            dpdk_ierrors: 6,
            ..Default::default()
        };
        let mut names = std::collections::HashSet::new();
        let mut n = 0;
        s.visit(&mut |k, _| {
            assert!(names.insert(k.to_string()), "{k}");
            n += 1;
        });
        s.visit_extra(&mut |k, _| {
            assert!(names.insert(k.to_string()), "{k}");
            n += 1;
        });
        assert_eq!(n, 20);
        let mut t = s.clone();
        t.merge(&s);
        assert_eq!(
            (t.packets, t.drops, t.freeze_q, t.dpdk_ierrors),
            (2, 4, 10, 12)
        );
    }
}
