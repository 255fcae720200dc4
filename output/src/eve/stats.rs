//! `stats` records: dotted counter names nested into objects.
//!
//! `decoder.event.ipv4.trunc_pkt = 3` becomes `{"decoder":{"event":{"ipv4":{"trunc_pkt":3}}}}`.
//! Order is stable: members appear in the order their names were first added, which is the
//! order the stats structs' `visit` functions name them (Suricata uses registration order).
//! Adding a name twice sums the values, so per-worker snapshots can be merged by adding them all.
//! If a name is both a counter and a prefix (`a = 1` and `a.b = 2`), the object wins and the
//! scalar is dropped (JSON cannot hold both); [`StatsTree::conflicts`] counts such names.

use super::header::set_timestamp;
use crate::json::JsonWriter;

#[derive(Debug, Clone)]
struct Node {
    /// Byte range of this node's name segment in `names`.
    name: (usize, usize),
    value: Option<u64>,
    first_child: Option<usize>,
    last_child: Option<usize>,
    next_sibling: Option<usize>,
}

/// Counters arranged as a tree of dotted names. Reuse it across intervals with [`clear`](Self::clear)
/// to keep its allocations.
#[derive(Debug, Clone)]
pub struct StatsTree {
    names: String,
    nodes: Vec<Node>,
    conflicts: u64,
}

impl Default for StatsTree {
    fn default() -> Self {
        Self::new()
    }
}

impl StatsTree {
    /// An empty tree.
    pub fn new() -> Self {
        StatsTree {
            names: String::new(),
            nodes: vec![Node {
                name: (0, 0),
                value: None,
                first_child: None,
                last_child: None,
                next_sibling: None,
            }],
            conflicts: 0,
        }
    }

    /// Remove all counters.
    pub fn clear(&mut self) {
        self.names.clear();
        self.nodes.truncate(1);
        if let Some(root) = self.nodes.first_mut() {
            root.first_child = None;
            root.last_child = None;
        }
        self.conflicts = 0;
    }

    /// Number of names that were both a counter and a prefix of another counter.
    pub fn conflicts(&self) -> u64 {
        self.conflicts
    }

    /// True when no counter was added.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1
    }

    fn seg(&self, n: usize) -> &str {
        let (a, b) = self.nodes.get(n).map(|x| x.name).unwrap_or((0, 0));
        self.names.get(a..b).unwrap_or("")
    }

    fn child(&mut self, parent: usize, seg: &str) -> usize {
        let mut c = self.nodes.get(parent).and_then(|p| p.first_child);
        while let Some(i) = c {
            if self.seg(i) == seg {
                return i;
            }
            c = self.nodes.get(i).and_then(|n| n.next_sibling);
        }
        let start = self.names.len();
        self.names.push_str(seg);
        let idx = self.nodes.len();
        self.nodes.push(Node {
            name: (start, self.names.len()),
            value: None,
            first_child: None,
            last_child: None,
            next_sibling: None,
        });
        let last = self.nodes.get(parent).and_then(|p| p.last_child);
        match last {
            Some(l) => {
                if let Some(n) = self.nodes.get_mut(l) {
                    n.next_sibling = Some(idx);
                }
            }
            None => {
                if let Some(p) = self.nodes.get_mut(parent) {
                    p.first_child = Some(idx);
                }
            }
        }
        if let Some(p) = self.nodes.get_mut(parent) {
            p.last_child = Some(idx);
        }
        idx
    }

    /// Add `value` under the dotted `name` (summing with an earlier value of the same name).
    /// Empty segments (`a..b`, leading or trailing dots) are skipped.
    pub fn add(&mut self, name: &str, value: u64) {
        let mut cur = 0;
        for seg in name.split('.').filter(|s| !s.is_empty()) {
            cur = self.child(cur, seg);
        }
        if cur == 0 {
            return;
        }
        if let Some(n) = self.nodes.get_mut(cur) {
            n.value = Some(n.value.unwrap_or(0).saturating_add(value));
        }
    }

    /// Add every counter a stats struct's `visit` names.
    pub fn add_from(&mut self, visit: impl FnOnce(&mut dyn FnMut(&str, u64))) {
        visit(&mut |name, v| self.add(name, v));
    }

    /// Write the members of the tree into the currently open object.
    pub fn write_members(&mut self, w: &mut JsonWriter) {
        let mut conflicts = 0;
        self.write_children(w, 0, &mut conflicts);
        self.conflicts = conflicts;
    }

    fn write_children(&self, w: &mut JsonWriter, parent: usize, conflicts: &mut u64) {
        let mut c = self.nodes.get(parent).and_then(|p| p.first_child);
        while let Some(i) = c {
            let Some(n) = self.nodes.get(i) else { break };
            if n.first_child.is_some() {
                if n.value.is_some() {
                    *conflicts += 1;
                }
                w.open_object(self.seg(i));
                self.write_children(w, i, conflicts);
                w.close();
            } else if let Some(v) = n.value {
                w.set_u64(self.seg(i), v);
            }
            c = n.next_sibling;
        }
    }

    /// Visit the counters in order with their full dotted names (for stats.log).
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        let mut path = String::new();
        self.visit_children(0, &mut path, f);
    }

    fn visit_children(&self, parent: usize, path: &mut String, f: &mut dyn FnMut(&str, u64)) {
        let mut c = self.nodes.get(parent).and_then(|p| p.first_child);
        while let Some(i) = c {
            let Some(n) = self.nodes.get(i) else { break };
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(self.seg(i));
            if let Some(v) = n.value {
                f(path, v);
            }
            self.visit_children(i, path, f);
            path.truncate(len);
            c = n.next_sibling;
        }
    }
}

/// Write a complete `stats` record: `{"timestamp":..,"event_type":"stats","stats":{"uptime":..,...}}`.
pub fn write_stats_record(
    w: &mut JsonWriter,
    timestamp_ns: u64,
    uptime_secs: u64,
    tree: &mut StatsTree,
) {
    w.start_object();
    set_timestamp(w, "timestamp", timestamp_ns);
    w.set_str("event_type", "stats");
    w.open_object("stats");
    w.set_u64("uptime", uptime_secs);
    tree.write_members(w);
    w.close();
    w.close();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nests_in_first_seen_order_and_sums() {
        let mut t = StatsTree::new();
        t.add("decoder.pkts", 10);
        t.add("decoder.event.ipv4.trunc_pkt", 3);
        t.add("flow.total", 2);
        t.add("decoder.bytes", 100);
        t.add("decoder.pkts", 5);
        t.add("decoder.event.ipv6.trunc_pkt", 0);
        let mut w = JsonWriter::new();
        w.start_object();
        t.write_members(&mut w);
        w.close();
        assert_eq!(
            std::str::from_utf8(w.as_bytes()).unwrap(),
            r#"{"decoder":{"pkts":15,"event":{"ipv4":{"trunc_pkt":3},"ipv6":{"trunc_pkt":0}},"bytes":100},"flow":{"total":2}}"#
        );
        let mut seen = Vec::new();
        t.visit(&mut |n, v| seen.push((n.to_string(), v)));
        assert_eq!(
            seen,
            vec![
                ("decoder.pkts".to_string(), 15),
                ("decoder.event.ipv4.trunc_pkt".to_string(), 3),
                ("decoder.event.ipv6.trunc_pkt".to_string(), 0),
                ("decoder.bytes".to_string(), 100),
                ("flow.total".to_string(), 2),
            ]
        );
    }

    #[test]
    fn conflicts_and_odd_names() {
        let mut t = StatsTree::new();
        t.add("a", 1);
        t.add("a.b", 2);
        t.add("..c..d.", 4);
        t.add("", 9);
        let mut w = JsonWriter::new();
        w.start_object();
        t.write_members(&mut w);
        w.close();
        assert!(w.is_complete());
        assert_eq!(
            std::str::from_utf8(w.as_bytes()).unwrap(),
            r#"{"a":{"b":2},"c":{"d":4}}"#
        );
        assert_eq!(t.conflicts(), 1);
        t.clear();
        assert!(t.is_empty());
    }
}
