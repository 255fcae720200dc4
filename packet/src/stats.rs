//! Per-worker counters with Suricata's EVE `stats` names.
//!
//! Plain `u64` fields owned by one thread. `visit` yields each counter under its dotted
//! name (`decoder.ipv4`, `decoder.event.ipv4.trunc_pkt`, `flow.memcap` …); every name is a
//! path of the EVE schema's `stats` object. `merge` sums another worker's snapshot in.

use crate::decode::events::{DecodeEvent, EVENT_COUNT};

/// Declares a counters struct: plain `u64` fields with their Suricata names, plus extra
/// fields, with `visit_plain` and `merge_plain` over the plain ones. Used by every stage
/// crate for its stats.
#[macro_export]
macro_rules! counters {
    ($(#[$m:meta])* $vis:vis struct $name:ident { $($(#[$fm:meta])* $field:ident => $stat:literal,)* } extra { $($(#[$xm:meta])* $xfield:ident: $xty:ty,)* }) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        $vis struct $name {
            $($(#[$fm])* #[doc = concat!("`", $stat, "`")] pub $field: u64,)*
            $($(#[$xm])* pub $xfield: $xty,)*
        }

        impl $name {
            #[allow(dead_code)]
            fn visit_plain(&self, f: &mut dyn FnMut(&str, u64)) {
                $(f($stat, self.$field);)*
            }

            #[allow(dead_code)]
            fn merge_plain(&mut self, o: &Self) {
                $(self.$field += o.$field;)*
            }
        }
    };
}

counters! {
    /// Decoder counters (`stats.decoder`).
    pub struct DecodeStats {
        pkts => "decoder.pkts",
        bytes => "decoder.bytes",
        invalid => "decoder.invalid",
        ipv4 => "decoder.ipv4",
        ipv6 => "decoder.ipv6",
        ethernet => "decoder.ethernet",
        arp => "decoder.arp",
        unknown_ethertype => "decoder.unknown_ethertype",
        raw => "decoder.raw",
        null => "decoder.null",
        chdlc => "decoder.chdlc",
        sll => "decoder.sll",
        sll2 => "decoder.sll2",
        tcp => "decoder.tcp",
        udp => "decoder.udp",
        sctp => "decoder.sctp",
        esp => "decoder.esp",
        icmpv4 => "decoder.icmpv4",
        icmpv6 => "decoder.icmpv6",
        ppp => "decoder.ppp",
        pppoe => "decoder.pppoe",
        gre => "decoder.gre",
        vlan => "decoder.vlan",
        vlan_qinq => "decoder.vlan_qinq",
        vlan_qinqinq => "decoder.vlan_qinqinq",
        vntag => "decoder.vntag",
        vxlan => "decoder.vxlan",
        geneve => "decoder.geneve",
        teredo => "decoder.teredo",
        ipv4_in_ipv4 => "decoder.ipv4_in_ipv4",
        ipv6_in_ipv4 => "decoder.ipv6_in_ipv4",
        ipv4_in_ipv6 => "decoder.ipv4_in_ipv6",
        ipv6_in_ipv6 => "decoder.ipv6_in_ipv6",
        mpls => "decoder.mpls",
        erspan => "decoder.erspan",
    }
    extra {
        /// Largest frame seen (`decoder.max_pkt_size`; merged with `max`).
        max_pkt_size: u64,
        /// Per-event counts, indexed by [`DecodeEvent::index`].
        events: [u64; EVENT_COUNT],
        /// IPv4 headers with a bad checksum. Suricata has no counter for this, so it is not
        /// visited; the binary may log it.
        ipv4_csum_bad: u64,
    }
}

impl Default for DecodeStats {
    fn default() -> Self {
        DecodeStats {
            pkts: 0,
            bytes: 0,
            invalid: 0,
            ipv4: 0,
            ipv6: 0,
            ethernet: 0,
            arp: 0,
            unknown_ethertype: 0,
            raw: 0,
            null: 0,
            chdlc: 0,
            sll: 0,
            sll2: 0,
            tcp: 0,
            udp: 0,
            sctp: 0,
            esp: 0,
            icmpv4: 0,
            icmpv6: 0,
            ppp: 0,
            pppoe: 0,
            gre: 0,
            vlan: 0,
            vlan_qinq: 0,
            vlan_qinqinq: 0,
            vntag: 0,
            vxlan: 0,
            geneve: 0,
            teredo: 0,
            ipv4_in_ipv4: 0,
            ipv6_in_ipv4: 0,
            ipv4_in_ipv6: 0,
            ipv6_in_ipv6: 0,
            mpls: 0,
            erspan: 0,
            max_pkt_size: 0,
            events: [0; EVENT_COUNT],
            ipv4_csum_bad: 0,
        }
    }
}

impl DecodeStats {
    /// Count of one decoder event.
    pub fn event(&self, e: DecodeEvent) -> u64 {
        self.events.get(e.index()).copied().unwrap_or(0)
    }

    /// `decoder.avg_pkt_size` (integer bytes per packet).
    pub fn avg_pkt_size(&self) -> u64 {
        self.bytes.checked_div(self.pkts).unwrap_or(0)
    }

    /// Yields every counter with its dotted Suricata name, zeros included.
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        self.visit_plain(f);
        f("decoder.avg_pkt_size", self.avg_pkt_size());
        f("decoder.max_pkt_size", self.max_pkt_size);
        for e in DecodeEvent::ALL {
            f(e.stats_name(), self.event(*e));
        }
    }

    /// Adds `o` into `self` (`max_pkt_size` takes the maximum).
    pub fn merge(&mut self, o: &Self) {
        self.merge_plain(o);
        self.max_pkt_size = self.max_pkt_size.max(o.max_pkt_size);
        for (a, b) in self.events.iter_mut().zip(o.events.iter()) {
            *a += *b;
        }
        self.ipv4_csum_bad += o.ipv4_csum_bad;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visit_names_are_unique_and_merge_sums() {
        let mut a = DecodeStats {
            pkts: 2,
            bytes: 100,
            max_pkt_size: 60,
            ..Default::default()
        };
        a.events[DecodeEvent::Ipv4TruncPkt.index()] = 3;
        let b = DecodeStats {
            pkts: 1,
            bytes: 50,
            max_pkt_size: 90,
            ..a.clone()
        };
        a.merge(&b);
        assert_eq!(a.pkts, 3);
        assert_eq!(a.max_pkt_size, 90);
        assert_eq!(a.avg_pkt_size(), 50);
        assert_eq!(a.event(DecodeEvent::Ipv4TruncPkt), 6);
        let mut names = Vec::new();
        let mut trunc = 0;
        a.visit(&mut |n, v| {
            names.push(n.to_string());
            if n == "decoder.event.ipv4.trunc_pkt" {
                trunc = v;
            }
        });
        assert_eq!(trunc, 6);
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(n, names.len());
    }
}
