//! Helpers of the live-capture tests: a private network namespace with a veth pair (removed
//! on drop, even when the test panics), frame builders and a pcap writer.
#![allow(dead_code)]

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// True when the process may create network namespaces (root).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `ip ARGS`, panicking with its stderr on failure.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A network namespace `shrk-<tag>-<pid>-<n>` holding `veth0` <-> `veth1`, both up, IPv6 off
/// (so the kernel sends nothing of its own on them). Deleted on drop.
pub struct NetNs {
    pub name: String,
}

impl NetNs {
    /// Creates the namespace and the pair; `None` (test skipped) when not root.
    pub fn new(tag: &str) -> Option<NetNs> {
        if !is_root() {
            eprintln!("not root: skipping a test that needs a network namespace");
            return None;
        }
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "shrk-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        ip(&["netns", "add", &name]);
        // The guard exists from here on, so a failure below still removes the namespace.
        let ns = NetNs { name };
        ns.sysctl("net.ipv6.conf.all.disable_ipv6=1");
        ns.sysctl("net.ipv6.conf.default.disable_ipv6=1");
        ns.add_veth();
        ip(&["-n", &ns.name, "link", "set", "lo", "up"]);
        Some(ns)
    }

    fn sysctl(&self, kv: &str) {
        let ok = Command::new("ip")
            .args(["netns", "exec", &self.name, "sysctl", "-qw", kv])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "sysctl {kv} in {}", self.name);
    }

    /// (Re)creates veth0 <-> veth1 and brings both up.
    pub fn add_veth(&self) {
        ip(&[
            "-n", &self.name, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1",
        ]);
        self.link("veth0", "up");
        self.link("veth1", "up");
    }

    /// `ip link set DEV up|down` inside the namespace.
    pub fn link(&self, dev: &str, state: &str) {
        ip(&["-n", &self.name, "link", "set", dev, state]);
    }

    /// Deletes the pair.
    pub fn del_veth(&self) {
        ip(&["-n", &self.name, "link", "del", "veth0"]);
    }

    /// Runs `f` on a new thread inside the namespace and returns its result (a panic in `f`
    /// fails the test with its message).
    pub fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let name = self.name.clone();
        std::thread::spawn(move || {
            shrike_sys::netns::enter_netns(&name).expect("setns");
            f()
        })
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
    }

    /// Spawns `f` on a thread inside the namespace.
    pub fn spawn<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> std::thread::JoinHandle<T> {
        let name = self.name.clone();
        std::thread::spawn(move || {
            shrike_sys::netns::enter_netns(&name).expect("setns");
            f()
        })
    }

    /// Runs a command inside the namespace (`ip netns exec`).
    pub fn exec(&self, cmd: &str, args: &[&str]) -> std::process::Output {
        Command::new("ip")
            .args(["netns", "exec", &self.name, cmd])
            .args(args)
            .output()
            .expect("ip netns exec")
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// An IPv4/UDP Ethernet frame; `vlans` are (TPID, TCI) tags outermost first; the payload
/// starts with `seq` (big-endian) and is padded to `payload_len`.
pub fn udp_frame(
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    vlans: &[(u16, u16)],
    seq: u32,
    payload_len: usize,
) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02];
    for &(tpid, tci) in vlans {
        f.extend_from_slice(&tpid.to_be_bytes());
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let plen = payload_len.max(4);
    let total = 20 + 8 + plen;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&(total as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 1, 0x40, 0, 64, 17, 0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let mut sum: u32 = ip
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let ck = !(sum as u16);
    ip[10..12].copy_from_slice(&ck.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&((8 + plen) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend((4..plen).map(|i| (i as u8).wrapping_mul(7)));
    f
}

/// A TCP SYN frame (for filter tests).
pub fn tcp_frame(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
    let mut f = udp_frame(src, dst, sport, dport, &[], 0, 4);
    // Turn the UDP frame into a minimal TCP one: protocol 6 and a 20-byte header.
    f[23] = 6;
    f.truncate(34);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
    let total = (f.len() - 14) as u16;
    f[16..18].copy_from_slice(&total.to_be_bytes());
    f
}

/// The UDP 5-tuple of a frame (untagged), normalised so both directions are equal.
pub fn flow_key(frame: &[u8]) -> Option<([u8; 4], u16, [u8; 4], u16)> {
    if frame.get(12..14)? != [0x08, 0x00] {
        return None;
    }
    let src: [u8; 4] = frame.get(26..30)?.try_into().ok()?;
    let dst: [u8; 4] = frame.get(30..34)?.try_into().ok()?;
    let sp = u16::from_be_bytes(frame.get(34..36)?.try_into().ok()?);
    let dp = u16::from_be_bytes(frame.get(36..38)?.try_into().ok()?);
    Some(if (src, sp) <= (dst, dp) {
        (src, sp, dst, dp)
    } else {
        (dst, dp, src, sp)
    })
}

/// A classic little-endian pcap file image (Ethernet, µs).
pub fn pcap_image(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    v.extend_from_slice(&2u16.to_le_bytes());
    v.extend_from_slice(&4u16.to_le_bytes());
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&65535u32.to_le_bytes());
    v.extend_from_slice(&1u32.to_le_bytes());
    for (i, f) in frames.iter().enumerate() {
        v.extend_from_slice(&(1_700_000_000u32 + i as u32 / 1000).to_le_bytes());
        v.extend_from_slice(&((i as u32 % 1000) * 1000).to_le_bytes());
        v.extend_from_slice(&(f.len() as u32).to_le_bytes());
        v.extend_from_slice(&(f.len() as u32).to_le_bytes());
        v.extend_from_slice(f);
    }
    v
}

/// The sequence number `udp_frame` put in an untagged frame's payload.
pub fn seq_of(frame: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(frame.get(42..46)?.try_into().ok()?))
}
