//! Flow table counters with Suricata's EVE `stats` names (`flow.*`).

use shrike_packet::counters;

counters! {
    /// Flow table counters (`stats.flow`).
    #[derive(Default)]
    pub struct FlowStats {
        total => "flow.total",
        tcp => "flow.tcp",
        udp => "flow.udp",
        icmpv4 => "flow.icmpv4",
        icmpv6 => "flow.icmpv6",
        memcap => "flow.memcap",
        get_used => "flow.get_used",
        get_used_eval => "flow.get_used_eval",
        get_used_eval_reject => "flow.get_used_eval_reject",
        get_used_failed => "flow.get_used_failed",
        emerg_mode_entered => "flow.emerg_mode_entered",
        emerg_mode_over => "flow.emerg_mode_over",
        tcp_reuse => "flow.tcp_reuse",
        timeouts => "flow.mgr.flows_timeout",
        checked => "flow.mgr.flows_checked",
        notimeout => "flow.mgr.flows_notimeout",
        end_new => "flow.end.state.new",
        end_established => "flow.end.state.established",
        end_closed => "flow.end.state.closed",
    }
    extra {
        /// Flows currently in the table (`flow.active`; a gauge, summed on merge).
        active: u64,
        /// Bytes held by the table's storage (`flow.memuse`; a gauge, summed on merge).
        memuse: u64,
    }
}

impl FlowStats {
    /// Yields every counter with its dotted Suricata name.
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        self.visit_plain(f);
        f("flow.active", self.active);
        f("flow.memuse", self.memuse);
    }

    /// Adds `o` into `self`.
    pub fn merge(&mut self, o: &Self) {
        self.merge_plain(o);
        self.active += o.active;
        self.memuse += o.memuse;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visit_names_and_merge_sums() {
        let mut f = FlowStats {
            total: 4,
            active: 2,
            ..Default::default()
        };
        let g = f.clone();
        f.merge(&g);
        let mut seen = vec![];
        f.visit(&mut |n, v| seen.push((n.to_string(), v)));
        assert!(seen.contains(&("flow.total".to_string(), 8)));
        assert!(seen.contains(&("flow.active".to_string(), 4)));
    }
}
