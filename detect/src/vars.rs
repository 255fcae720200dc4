//! Per-flow detection state: the TCP handshake tracker behind `flow:established`, the
//! IP-only "done" flags, the "no more inspection" flag of a flow-wide `pass`, and the
//! flow variables (`flowbits`, `flowint`).
//!
//! [`FlowDetect`] lives inline in the worker's per-flow data and stays small (16 bytes):
//! flow variables are boxed and only allocated when a rule first sets one.

use shrike_packet::decode::tcp_flags;

/// TCP session state as far as `flow:established` needs it (Suricata's `TcpState`, coarse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
#[repr(u8)]
pub enum TcpTrack {
    /// Nothing seen yet (or picked up midstream with midstream pickup off).
    #[default]
    None = 0,
    /// SYN seen from the client.
    SynSent = 1,
    /// SYN/ACK seen from the server.
    SynRecv = 2,
    /// Handshake completed (or midstream pickup). Later states (FIN, RST) stay here: Suricata
    /// treats every state from ESTABLISHED on as established.
    Established = 3,
}

/// Flag bits of [`FlowDetect::flags`].
pub(crate) mod fflag {
    /// IP-only rules were run for the to-server direction.
    pub const IPONLY_TS: u8 = 1 << 0;
    /// IP-only rules were run for the to-client direction.
    pub const IPONLY_TC: u8 = 1 << 1;
    /// A flow-wide `pass` matched: no more inspection for this flow.
    pub const NO_INSPECT: u8 = 1 << 2;
    /// The flow was picked up without a SYN.
    pub const MIDSTREAM: u8 = 1 << 3;
}

/// The flow variables of one flow (`flowbits` and `flowint`), indexed by the engine's
/// variable ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowVars {
    bits: Vec<u64>,
    ints: Vec<(u32, u32)>,
    /// Flow variables set by `pcre` captures (`flowvar`), by name, in the order first set.
    strs: Vec<(std::sync::Arc<str>, Box<[u8]>)>,
    /// Session tags (`tag:session`).
    pub(crate) tags: Vec<super::tag::TagEntry>,
}

impl FlowVars {
    /// Is flowbit `id` set?
    #[inline]
    pub fn bit(&self, id: u32) -> bool {
        self.bits
            .get((id / 64) as usize)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    /// Set or clear flowbit `id`.
    pub fn set_bit(&mut self, id: u32, on: bool) {
        let w = (id / 64) as usize;
        if self.bits.len() <= w {
            if !on {
                return;
            }
            self.bits.resize(w + 1, 0);
        }
        if let Some(word) = self.bits.get_mut(w) {
            if on {
                *word |= 1 << (id % 64);
            } else {
                *word &= !(1 << (id % 64));
            }
        }
    }

    /// Value of flowint `id`, if set.
    #[inline]
    pub fn int(&self, id: u32) -> Option<u32> {
        self.ints.iter().find(|(k, _)| *k == id).map(|(_, v)| *v)
    }

    /// Set flowint `id`.
    pub fn set_int(&mut self, id: u32, v: u32) {
        match self.ints.iter_mut().find(|(k, _)| *k == id) {
            Some(e) => e.1 = v,
            None => self.ints.push((id, v)),
        }
    }

    /// Ids of the flowbits that are set, ascending.
    pub fn set_bits(&self) -> impl Iterator<Item = u32> + '_ {
        self.bits.iter().enumerate().flat_map(|(w, &word)| {
            (0..64u32)
                .filter(move |b| word & (1u64 << b) != 0)
                .map(move |b| w as u32 * 64 + b)
        })
    }

    /// `(id, value)` of the flowints that are set, in the order they were first set.
    pub fn ints(&self) -> &[(u32, u32)] {
        &self.ints
    }

    /// Value of flow variable `name` (a `pcre` capture), if set.
    pub fn str_var(&self, name: &str) -> Option<&[u8]> {
        self.strs
            .iter()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| &**v)
    }

    /// Set flow variable `name` (Suricata's `FlowVarAddIdValue`: a new value replaces the
    /// old one, the variable keeps its place).
    pub fn set_str_var(&mut self, name: &std::sync::Arc<str>, value: &[u8]) {
        match self.strs.iter_mut().find(|(n, _)| n == name) {
            Some(e) => e.1 = value.into(),
            None => self.strs.push((std::sync::Arc::clone(name), value.into())),
        }
    }

    /// `(name, value)` of the flow variables, in the order they were first set.
    pub fn str_vars(&self) -> impl Iterator<Item = (&str, &[u8])> + '_ {
        self.strs.iter().map(|(n, v)| (&**n, &**v))
    }

    /// No variable set at all (Suricata's "flow has no flowvars").
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0) && self.ints.is_empty() && self.strs.is_empty()
    }
}

/// The engine's state for one flow; keep one per flow in the worker's flow data.
#[derive(Debug, Clone, Default)]
pub struct FlowDetect {
    pub(crate) tcp: TcpTrack,
    pub(crate) flags: u8,
    /// Client ISN (SYN) and server ISN (SYN/ACK), for the handshake checks.
    pub(crate) isn: [u32; 2],
    pub(crate) vars: Option<Box<FlowVars>>,
    /// Transaction detection state.
    pub(crate) app: Option<Box<super::app_inspect::AppDetect>>,
}

impl FlowDetect {
    /// TCP handshake state.
    pub fn tcp_state(&self) -> TcpTrack {
        self.tcp
    }

    /// The flow's variables, if any were ever set.
    pub fn vars(&self) -> Option<&FlowVars> {
        self.vars.as_deref()
    }

    /// True when a flow-wide `pass` stopped inspection of this flow.
    pub fn inspection_stopped(&self) -> bool {
        self.flags & fflag::NO_INSPECT != 0
    }

    pub(crate) fn vars_mut(&mut self) -> &mut FlowVars {
        self.vars.get_or_insert_with(Box::default)
    }

    /// Track the TCP handshake with one packet (`to_server`: sent by the client). Returns
    /// whether the session was established *before* this packet, which is what Suricata's
    /// `flow:established` sees (the packet completing the handshake is not established).
    pub(crate) fn tcp_packet(
        &mut self,
        flags: u8,
        seq: u32,
        ack: u32,
        to_server: bool,
        midstream: bool,
    ) -> bool {
        let before = self.tcp >= TcpTrack::Established;
        let syn = flags & tcp_flags::SYN != 0;
        let ackf = flags & tcp_flags::ACK != 0;
        let rst = flags & tcp_flags::RST != 0;
        match self.tcp {
            TcpTrack::None => {
                if syn && !ackf && to_server {
                    self.tcp = TcpTrack::SynSent;
                    self.isn[0] = seq;
                } else if midstream && !rst {
                    self.flags |= fflag::MIDSTREAM;
                    self.tcp = TcpTrack::Established;
                }
            }
            TcpTrack::SynSent => {
                if syn && ackf && !to_server && ack == self.isn[0].wrapping_add(1) {
                    self.tcp = TcpTrack::SynRecv;
                    self.isn[1] = seq;
                } else if syn && !ackf && to_server {
                    // SYN retransmission (possibly with a new ISN).
                    self.isn[0] = seq;
                } else if rst {
                    // Suricata moves to CLOSED, which counts as established or later.
                    self.tcp = TcpTrack::Established;
                }
            }
            TcpTrack::SynRecv => {
                if ackf && !syn && to_server && ack == self.isn[1].wrapping_add(1) {
                    self.tcp = TcpTrack::Established;
                } else if syn && ackf && !to_server {
                    self.isn[1] = seq;
                } else if rst {
                    self.tcp = TcpTrack::Established;
                }
            }
            TcpTrack::Established => {}
        }
        before
    }
}

/// A post-match operation (Suricata's POSTMATCH list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PostOp {
    /// `flowbits:set`
    BitsSet(Box<[u32]>),
    /// `flowbits:unset`
    BitsUnset(Box<[u32]>),
    /// `flowbits:toggle`
    BitsToggle(Box<[u32]>),
    /// `flowint:name,=,value`
    IntSet(u32, IntOperand),
    /// `flowint:name,+,value`
    IntAdd(u32, IntOperand),
    /// `flowint:name,-,value`
    IntSub(u32, IntOperand),
}

/// Right operand of a `flowint` operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntOperand {
    /// A literal.
    Lit(u32),
    /// Another flowint.
    Var(u32),
}

impl IntOperand {
    pub(crate) fn value(self, vars: Option<&FlowVars>) -> Option<u32> {
        match self {
            IntOperand::Lit(v) => Some(v),
            IntOperand::Var(id) => vars.and_then(|v| v.int(id)),
        }
    }
}

impl PostOp {
    /// Apply to a flow's state (no flow: no effect).
    pub(crate) fn apply(&self, st: &mut FlowDetect) {
        match self {
            PostOp::BitsSet(ids) => {
                let v = st.vars_mut();
                ids.iter().for_each(|&i| v.set_bit(i, true));
            }
            PostOp::BitsUnset(ids) => {
                if let Some(v) = st.vars.as_deref_mut() {
                    ids.iter().for_each(|&i| v.set_bit(i, false));
                }
            }
            PostOp::BitsToggle(ids) => {
                let v = st.vars_mut();
                for &i in ids.iter() {
                    let on = v.bit(i);
                    v.set_bit(i, !on);
                }
            }
            PostOp::IntSet(id, op) => {
                if let Some(x) = op.value(st.vars()) {
                    st.vars_mut().set_int(*id, x);
                }
            }
            PostOp::IntAdd(id, op) => {
                if let Some(x) = op.value(st.vars()) {
                    let cur = st.vars().and_then(|v| v.int(*id));
                    st.vars_mut()
                        .set_int(*id, cur.map_or(x, |c| c.wrapping_add(x)));
                }
            }
            PostOp::IntSub(id, op) => {
                if let Some(x) = op.value(st.vars()) {
                    let cur = st.vars().and_then(|v| v.int(*id));
                    st.vars_mut()
                        .set_int(*id, cur.map_or(0, |c| c.wrapping_sub(x)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shrike_packet::decode::tcp_flags::{ACK, PSH, RST, SYN};

    #[test]
    fn flow_detect_is_small() {
        // Handshake tracking, flags, ISNs, and two boxes (flow variables, transaction state).
        assert!(std::mem::size_of::<FlowDetect>() <= 32);
    }

    #[test]
    fn handshake_established_after_third_packet() {
        let mut f = FlowDetect::default();
        assert!(!f.tcp_packet(SYN, 100, 0, true, false));
        assert!(!f.tcp_packet(SYN | ACK, 500, 101, false, false));
        // The ACK completing the handshake is not yet established.
        assert!(!f.tcp_packet(ACK, 101, 501, true, false));
        assert!(f.tcp_packet(ACK | PSH, 101, 501, true, false));
        assert_eq!(f.tcp_state(), TcpTrack::Established);
    }

    #[test]
    fn bad_ack_numbers_do_not_establish() {
        let mut f = FlowDetect::default();
        f.tcp_packet(SYN, 100, 0, true, false);
        f.tcp_packet(SYN | ACK, 500, 999, false, false);
        assert_eq!(f.tcp_state(), TcpTrack::SynSent);
        f.tcp_packet(SYN | ACK, 500, 101, false, false);
        f.tcp_packet(ACK, 101, 7, true, false);
        assert_eq!(f.tcp_state(), TcpTrack::SynRecv);
    }

    #[test]
    fn midstream_pickup() {
        let mut f = FlowDetect::default();
        assert!(!f.tcp_packet(ACK | PSH, 1, 1, true, false));
        assert_eq!(f.tcp_state(), TcpTrack::None);
        let mut g = FlowDetect::default();
        assert!(!g.tcp_packet(ACK | PSH, 1, 1, true, true));
        assert!(g.tcp_packet(ACK, 1, 1, false, true));
        let mut h = FlowDetect::default();
        h.tcp_packet(RST, 1, 1, true, true);
        assert_eq!(h.tcp_state(), TcpTrack::None);
    }

    #[test]
    fn flowvars() {
        let mut v = FlowVars::default();
        assert!(v.is_empty());
        v.set_bit(130, true);
        assert!(v.bit(130) && !v.bit(129) && !v.bit(5000));
        v.set_bit(130, false);
        assert!(v.is_empty());
        v.set_int(3, 7);
        v.set_int(3, 9);
        assert_eq!(v.int(3), Some(9));
        assert_eq!(v.int(4), None);
    }

    #[test]
    fn post_ops() {
        let mut st = FlowDetect::default();
        PostOp::BitsUnset(vec![1].into()).apply(&mut st);
        assert!(st.vars.is_none());
        PostOp::BitsToggle(vec![1, 2].into()).apply(&mut st);
        assert!(st.vars().unwrap().bit(1) && st.vars().unwrap().bit(2));
        PostOp::IntSub(0, IntOperand::Lit(5)).apply(&mut st);
        assert_eq!(st.vars().unwrap().int(0), Some(0));
        PostOp::IntAdd(1, IntOperand::Lit(5)).apply(&mut st);
        PostOp::IntAdd(1, IntOperand::Var(1)).apply(&mut st);
        assert_eq!(st.vars().unwrap().int(1), Some(10));
        PostOp::IntSet(2, IntOperand::Var(9)).apply(&mut st);
        assert_eq!(st.vars().unwrap().int(2), None);
    }
}
