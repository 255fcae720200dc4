//! Finding the IP-only rules that may match a packet without testing all of them: rules
//! are indexed by the address ranges of their source (or, when the source is `any`, their
//! destination), per address family, as sorted segments with the rules covering each
//! (Suricata uses radix trees for the same job). Candidates still get the full header test.

use std::collections::HashMap;

use shrike_rules::parse::ranges::{RangeInt, RangeSet};

use super::packet::PacketView;
use super::sig::Sig;

/// Sorted segments of an address space, each with the rules covering it.
#[derive(Debug)]
struct Segments<T> {
    starts: Box<[T]>,
    lists: Box<[u32]>,
}

impl<T: RangeInt> Segments<T> {
    fn build(
        items: &[(u32, &RangeSet<T>)],
        pool: &mut Vec<Box<[u32]>>,
        ids: &mut HashMap<Vec<u32>, u32>,
    ) -> Segments<T> {
        // (position, sig, start?) events; an end at MAX+1 is never reached.
        let mut ev: Vec<(T, bool, u32)> = Vec::new();
        for &(n, set) in items {
            for &(lo, hi) in set.ranges() {
                ev.push((lo, true, n));
                if let Some(e) = hi.succ() {
                    ev.push((e, false, n));
                }
            }
        }
        ev.sort_unstable_by_key(|e| e.0);
        let mut active: Vec<u32> = Vec::new();
        let mut starts = Vec::new();
        let mut lists = Vec::new();
        let mut i = 0;
        while i < ev.len() {
            let pos = ev[i].0;
            while i < ev.len() && ev[i].0 == pos {
                let (_, start, n) = ev[i];
                match active.binary_search(&n) {
                    Ok(k) if !start => {
                        active.remove(k);
                    }
                    Err(k) if start => active.insert(k, n),
                    _ => {}
                }
                i += 1;
            }
            let id = match ids.get(&active) {
                Some(&id) => id,
                None => {
                    let id = pool.len() as u32;
                    pool.push(active.clone().into_boxed_slice());
                    ids.insert(active.clone(), id);
                    id
                }
            };
            if lists.last() != Some(&id) {
                starts.push(pos);
                lists.push(id);
            }
        }
        Segments {
            starts: starts.into_boxed_slice(),
            lists: lists.into_boxed_slice(),
        }
    }

    fn get(&self, v: T) -> Option<u32> {
        let i = self.starts.partition_point(|&s| s <= v).checked_sub(1)?;
        self.lists.get(i).copied()
    }
}

/// The IP-only rules, indexed.
#[derive(Debug)]
pub(crate) struct IpOnlyIndex {
    /// Rules tested on every packet (source and destination `any`, or bidirectional).
    always: Box<[u32]>,
    src4: Segments<u32>,
    src6: Segments<u128>,
    dst4: Segments<u32>,
    dst6: Segments<u128>,
    pool: Box<[Box<[u32]>]>,
    len: usize,
}

impl IpOnlyIndex {
    /// Index the rules `nums` (IP-only rules in engine order).
    pub(crate) fn build(sigs: &[Sig], nums: &[u32]) -> IpOnlyIndex {
        let mut always = Vec::new();
        let (mut s4, mut s6, mut d4, mut d6) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for &n in nums {
            let Some(s) = sigs.get(n as usize) else {
                continue;
            };
            let h = &s.header;
            if h.bidir || (h.src_any && h.dst_any) {
                always.push(n);
            } else if !h.src_any {
                s4.push((n, &h.src.v4));
                s6.push((n, &h.src.v6));
            } else {
                d4.push((n, &h.dst.v4));
                d6.push((n, &h.dst.v6));
            }
        }
        let mut pool = vec![Box::<[u32]>::default()];
        let mut ids = HashMap::new();
        ids.insert(Vec::new(), 0);
        IpOnlyIndex {
            always: always.into_boxed_slice(),
            src4: Segments::build(&s4, &mut pool, &mut ids),
            src6: Segments::build(&s6, &mut pool, &mut ids),
            dst4: Segments::build(&d4, &mut pool, &mut ids),
            dst6: Segments::build(&d6, &mut pool, &mut ids),
            pool: pool.into_boxed_slice(),
            len: nums.len(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Candidate rules for a packet, sorted, into `out`.
    pub(crate) fn candidates(&self, p: &PacketView<'_>, out: &mut Vec<u32>) {
        out.clear();
        out.extend_from_slice(&self.always);
        let (a, b) = match p.ip_version {
            4 => (self.src4.get(p.src_v4), self.dst4.get(p.dst_v4)),
            6 => (self.src6.get(p.src_v6), self.dst6.get(p.dst_v6)),
            _ => (None, None),
        };
        for id in [a, b].into_iter().flatten() {
            if let Some(l) = self.pool.get(id as usize) {
                out.extend_from_slice(l);
            }
        }
        out.sort_unstable();
    }
}
