//! Carrying a worker's detection state over a rule reload.
//!
//! A reload builds a new [`Engine`] whose signature numbers and variable ids may differ from
//! the old one's. What each worker keeps, and how:
//!
//! * Per-flow state ([`FlowDetect`]): the TCP handshake tracker, the midstream flag and a
//!   flow-wide `pass` are kept as they are. Flowbits and flowints are kept **by name**: a
//!   [`VarRemap`] maps each old id to the new engine's id of the same name, and variables the
//!   new rules never mention are dropped. The IP-only "done" flags are cleared, so the new
//!   rule set's IP-only rules are evaluated once on flows that were live during the reload.
//!   Session tags are keyed by sid/gid and are kept.
//! * Per-worker state ([`DetectThread`]): the counters (`detect.alert` ...) carry on, host
//!   tags (keyed by sid/gid) are kept; threshold and `detection_filter` counters (indexed by
//!   the old engine's threshold specs) and hostbits start empty.

use super::vars::fflag;
use super::{DetectThread, Engine, FlowDetect};
use std::collections::HashMap;
use std::sync::Arc;

/// Old-engine variable ids to new-engine ids, by name. Build it once per reload.
#[derive(Debug, Clone, Default)]
pub struct VarRemap {
    bits: Vec<Option<u32>>,
    ints: Vec<Option<u32>>,
}

fn map_ids(old: &[Box<str>], new: &[Box<str>]) -> Vec<Option<u32>> {
    let by_name: HashMap<&str, u32> = new
        .iter()
        .enumerate()
        .map(|(i, n)| (&**n, i as u32))
        .collect();
    old.iter().map(|n| by_name.get(&**n).copied()).collect()
}

impl VarRemap {
    /// The mapping from `old`'s flowbit and flowint ids to `new`'s.
    pub fn new(old: &Engine, new: &Engine) -> VarRemap {
        VarRemap {
            bits: map_ids(&old.bit_names, &new.bit_names),
            ints: map_ids(&old.int_names, &new.int_names),
        }
    }

    /// New id of old flowbit `id` (`None`: the new rules do not know it).
    pub fn bit(&self, id: u32) -> Option<u32> {
        self.bits.get(id as usize).copied().flatten()
    }

    /// New id of old flowint `id`.
    pub fn int(&self, id: u32) -> Option<u32> {
        self.ints.get(id as usize).copied().flatten()
    }
}

impl FlowDetect {
    /// Make this flow's state valid for the engine `remap` leads to (see the module doc).
    pub fn rebind(&mut self, remap: &VarRemap) {
        self.flags &= !(fflag::IPONLY_TS | fflag::IPONLY_TC);
        let Some(v) = self.vars.as_mut() else {
            return;
        };
        let bits: Vec<u32> = v.set_bits().filter_map(|id| remap.bit(id)).collect();
        let ints: Vec<(u32, u32)> = v
            .ints()
            .iter()
            .filter_map(|&(id, val)| remap.int(id).map(|n| (n, val)))
            .collect();
        let tags = std::mem::take(&mut v.tags);
        let mut nv = super::FlowVars::default();
        for b in bits {
            nv.set_bit(b, true);
        }
        for (id, val) in ints {
            nv.set_int(id, val);
        }
        nv.tags = tags;
        if nv.is_empty() && nv.tags.is_empty() {
            self.vars = None;
        } else {
            **v = nv;
        }
    }
}

impl Engine {
    /// A worker's detection context for this (new) engine that continues `old`, the context
    /// the worker used with the previous engine (see the module doc for what is kept).
    pub fn thread_after_reload(&self, old: DetectThread) -> DetectThread {
        let mut t = self.thread();
        t.stats = old.stats;
        // Host tags carry over (once: every worker's old context shares them).
        if !Arc::ptr_eq(&t.host, &old.host) {
            let mut new = t.host.host_tags();
            if new.is_empty() {
                std::mem::swap(&mut *new, &mut *old.host.host_tags());
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::{self, EngineSetup};
    use crate::FlowVars;

    fn engine(rules: &str) -> Engine {
        let dir = std::env::temp_dir().join(format!(
            "shrike-remap-{}-{}",
            std::process::id(),
            rules.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("r.rules");
        std::fs::write(&f, rules).unwrap();
        let s = EngineSetup {
            rule_files: vec![f],
            ..EngineSetup::default()
        };
        let l = setup::load(&s, &mut |_, _| {}, &mut || {});
        let _ = std::fs::remove_dir_all(&dir);
        l.engine
    }

    #[test]
    fn flowbits_and_flowints_follow_their_names() {
        let old = engine(concat!(
            "alert tcp any any -> any any (msg:\"a\"; flowbits:set,alpha; flowbits:noalert; sid:1;)\n",
            "alert tcp any any -> any any (msg:\"b\"; flowbits:set,beta; flowbits:noalert; sid:2;)\n",
            "alert tcp any any -> any any (msg:\"c\"; flowint:cnt,=,5; sid:3;)\n",
        ));
        let new = engine(concat!(
            "alert tcp any any -> any any (msg:\"y\"; flowbits:isset,beta; sid:11;)\n",
            "alert tcp any any -> any any (msg:\"x\"; flowbits:set,gamma; sid:10;)\n",
            "alert tcp any any -> any any (msg:\"z\"; flowint:cnt,>,1; sid:12;)\n",
        ));
        let id = |e: &Engine, n: &str| {
            (0..64)
                .find(|&i| e.flowbit_name(i) == Some(n))
                .unwrap_or_else(|| panic!("no flowbit {n}"))
        };
        let (alpha, beta_old, beta_new) = (id(&old, "alpha"), id(&old, "beta"), id(&new, "beta"));
        assert_ne!(beta_old, beta_new, "the test needs ids that move");
        let remap = VarRemap::new(&old, &new);
        assert_eq!(remap.bit(alpha), None);
        assert_eq!(remap.bit(beta_old), Some(beta_new));
        assert_eq!(remap.bit(999), None);

        let mut fd = FlowDetect {
            flags: fflag::IPONLY_TS | fflag::IPONLY_TC | fflag::NO_INSPECT,
            ..FlowDetect::default()
        };
        {
            let v = fd.vars_mut();
            v.set_bit(alpha, true);
            v.set_bit(beta_old, true);
            v.set_int(0, 5);
        }
        fd.rebind(&remap);
        assert_eq!(
            fd.flags,
            fflag::NO_INSPECT,
            "IP-only flags cleared, pass kept"
        );
        let v: &FlowVars = fd.vars().expect("beta survives");
        assert_eq!(v.set_bits().collect::<Vec<_>>(), vec![beta_new]);
        let cnt_new = (0..8)
            .find(|&i| new.flowint_name(i) == Some("cnt"))
            .unwrap();
        assert_eq!(v.ints(), &[(cnt_new, 5)]);
    }

    #[test]
    fn vars_unknown_to_the_new_rules_are_dropped() {
        let old = engine(
            "alert tcp any any -> any any (msg:\"a\"; flowbits:set,alpha; flowbits:noalert; sid:1;)\n",
        );
        let new = engine("alert tcp any any -> any any (msg:\"b\"; sid:2;)\n");
        let mut fd = FlowDetect::default();
        fd.vars_mut().set_bit(0, true);
        fd.rebind(&VarRemap::new(&old, &new));
        assert!(fd.vars().is_none());
    }

    #[test]
    fn thread_keeps_counters() {
        let old = engine("alert tcp any any -> any any (msg:\"a\"; sid:1;)\n");
        let new = engine(
            "alert tcp any any -> any any (msg:\"a\"; sid:1;)\nalert udp any any -> any any (msg:\"b\"; sid:2;)\n",
        );
        let mut th = old.thread();
        th.stats.alert = 7;
        th.stats.alerts_suppressed = 2;
        let t2 = new.thread_after_reload(th);
        assert_eq!(t2.stats.alert, 7);
        assert_eq!(t2.stats.alerts_suppressed, 2);
    }
}
