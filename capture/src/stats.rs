//! Per-file and aggregated counters of the file sources.

use crate::LinkType;

/// Counters of one capture file, or (after [`CaptureStats::merge`]) of many.
///
/// Owned by the reader thread; plain `u64`s. Suricata has no counters for its pcap-file
/// source, so these use shrike's own `pcap.*` names. They are not part of Suricata's EVE
/// `stats` schema: show them in `stats.log` and the run summary, not in EVE records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Inputs opened and read (`pcap.files`).
    pub files: u64,
    /// Packets delivered (`pcap.packets`).
    pub packets: u64,
    /// Captured bytes delivered, the sum of the packets' caplen (`pcap.bytes`).
    pub bytes: u64,
    /// Inputs that ended inside a record (`pcap.truncated`).
    pub truncated: u64,
    /// Inputs that stopped on a corrupt record or a read error (`pcap.errors`).
    /// The caller adds inputs that failed to open.
    pub errors: u64,
    /// Classic pcap inputs skipped whole for an unsupported link type
    /// (`pcap.files_unsupported`); counted by the caller from the open error.
    pub files_unsupported: u64,
    /// pcapng packets skipped because their interface's link type is unsupported
    /// (`pcap.skipped_unsupported`).
    pub skipped_unsupported: u64,
    /// Packets delivered per supported link type, indexed by [`LinkType::index`]
    /// (`pcap.link.<name>`).
    pub link_packets: [u64; LinkType::SUPPORTED.len()],
}

impl CaptureStats {
    /// Packets delivered with link type `link` (0 for unsupported ones, which are skipped).
    pub fn packets_for(&self, link: LinkType) -> u64 {
        link.index()
            .and_then(|i| self.link_packets.get(i).copied())
            .unwrap_or(0)
    }

    /// Calls `f` with each counter's dotted name and value.
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        f("pcap.files", self.files);
        f("pcap.packets", self.packets);
        f("pcap.bytes", self.bytes);
        f("pcap.truncated", self.truncated);
        f("pcap.errors", self.errors);
        f("pcap.files_unsupported", self.files_unsupported);
        f("pcap.skipped_unsupported", self.skipped_unsupported);
        for (link, n) in LinkType::SUPPORTED.iter().zip(self.link_packets.iter()) {
            f(link_counter_name(*link), *n);
        }
    }

    /// Adds every counter of `other` to `self`.
    pub fn merge(&mut self, other: &CaptureStats) {
        self.files += other.files;
        self.packets += other.packets;
        self.bytes += other.bytes;
        self.truncated += other.truncated;
        self.errors += other.errors;
        self.files_unsupported += other.files_unsupported;
        self.skipped_unsupported += other.skipped_unsupported;
        for (a, b) in self.link_packets.iter_mut().zip(other.link_packets.iter()) {
            *a += *b;
        }
    }
}

fn link_counter_name(link: LinkType) -> &'static str {
    match link {
        LinkType::Null => "pcap.link.null",
        LinkType::Ethernet => "pcap.link.ethernet",
        LinkType::Raw => "pcap.link.raw",
        LinkType::Loop => "pcap.link.loop",
        LinkType::LinuxSll => "pcap.link.sll",
        LinkType::Ipv4 => "pcap.link.ipv4",
        LinkType::Ipv6 => "pcap.link.ipv6",
        LinkType::LinuxSll2 => "pcap.link.sll2",
        LinkType::Ppp => "pcap.link.ppp",
        LinkType::CiscoHdlc => "pcap.link.chdlc",
        LinkType::Other(_) => "pcap.link.other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visit_names_every_counter_once() {
        let mut s = CaptureStats {
            files: 1,
            packets: 2,
            bytes: 3,
            truncated: 4,
            errors: 5,
            files_unsupported: 6,
            skipped_unsupported: 7,
            link_packets: [8, 9, 10, 11, 12, 13, 14, 15, 16, 17],
        };
        let mut seen = Vec::new();
        s.visit(&mut |k, v| seen.push((k.to_string(), v)));
        let names: std::collections::HashSet<_> = seen.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(names.len(), seen.len(), "duplicate counter names: {seen:?}");
        assert_eq!(seen.len(), 17);
        let values: Vec<u64> = seen.iter().map(|(_, v)| *v).collect();
        assert_eq!(values, (1..=17).collect::<Vec<u64>>());
        assert!(seen.contains(&("pcap.link.ethernet".to_string(), 9)));
        assert_eq!(s.packets_for(LinkType::LinuxSll2), 15);
        assert!(seen.contains(&("pcap.link.ppp".to_string(), 16)));
        assert_eq!(s.packets_for(LinkType::CiscoHdlc), 17);
        assert_eq!(s.packets_for(LinkType::Other(147)), 0);

        let copy = s.clone();
        s.merge(&copy);
        assert_eq!(s.files, 2);
        assert_eq!(s.skipped_unsupported, 14);
        assert_eq!(s.link_packets[7], 30);
    }
}
