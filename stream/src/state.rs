//! The TCP state machine (Suricata `StreamTcpPacketState*` semantics, IDS mode).
//!
//! Roles: track 0 is the client (sent the SYN), track 1 the server. `p.d` is the sender's
//! role; `snd = tracks[p.d]`, `rcv = tracks[1 - p.d]`. A track's `last_ack`, `window` and
//! `next_win` describe the peer's acknowledgement of that track's data.

use super::events::{StreamEvent as E, StreamEventSet};
use super::options::TcpOpts;
use super::seq;
use super::session::{ssf, tf, TcpSession, TcpState as S, TcpTrack};
use super::{Pkt, StreamEngine, Verdict};
use shrike_flow::Dir;
use shrike_packet::decode::tcp_flags::{ACK, FIN, RST, SYN};

/// Maximum window scale shift.
const WSCALE_MAX: u8 = 14;
/// PAWS: timestamps older than this many seconds are not compared.
const PAWS_24DAYS: u32 = 24 * 86_400;

fn tr(s: &TcpSession, i: usize) -> TcpTrack {
    s.tracks.get(i).copied().unwrap_or_default()
}

fn tr_mut(s: &mut TcpSession, i: usize) -> &mut TcpTrack {
    // `i` is always 0 or 1.
    let i = i.min(1);
    &mut s.tracks[i]
}

fn set_state(s: &mut TcpSession, st: S) {
    if s.state != st {
        s.prev_state = s.state;
        s.state = st;
    }
}

fn init_ts(s: &mut TcpSession, o: &TcpOpts, snd: usize, secs: u32) {
    if let Some((v, e)) = o.ts {
        s.flags |= ssf::TIMESTAMP;
        let a = tr_mut(s, snd);
        a.last_ts = v;
        a.last_pkt_ts = secs;
        if v == 0 {
            a.flags |= tf::ZERO_TS;
        }
        let b = tr_mut(s, 1 - snd);
        b.last_ts = e;
        if e == 0 {
            b.flags |= tf::ZERO_TS;
        }
    }
}

impl StreamEngine {
    /// Packet on a flow without session.
    pub(crate) fn state_none(
        &mut self,
        s: &mut TcpSession,
        p0: &Pkt<'_>,
        flow_dir: Dir,
        ev: &mut StreamEventSet,
    ) -> Verdict {
        let mut p = *p0;
        let midstream = self.cfg.midstream;
        let oneside = self.cfg.async_oneside;
        if p.has(RST) {
            ev.insert(E::RstButNoSession);
            return Verdict::NoSession;
        }
        let synack = p.has(SYN) && p.has(ACK);
        if p.has(FIN) && !p.has(SYN) {
            if !midstream || p.payload.is_empty() {
                ev.insert(E::FinButNoSession);
                return Verdict::NoSession;
            }
        } else if synack {
            if !midstream && !oneside {
                return Verdict::NoSession;
            }
        } else if p.has(SYN) {
        } else if p.has(ACK) {
            if !midstream {
                return Verdict::NoSession;
            }
        } else {
            return Verdict::NoSession;
        }
        // The sender is the server for a SYN/ACK, the client otherwise.
        p.d = if synack { 1 } else { 0 };
        let sender_flow_is_server = flow_dir == Dir::ToServer;
        let swapped = if p.d == 0 {
            !sender_flow_is_server
        } else {
            sender_flow_is_server
        };
        if !self.create(s, &p, p.d == 0) {
            return Verdict::NoSession;
        }
        if swapped {
            s.flags |= ssf::SWAPPED;
        }
        if oneside {
            s.flags |= ssf::ASYNC;
        }
        let (seqn, ackn, win, len) = (p.seq, p.ack, p.win, p.len());
        if synack {
            self.stats.midstream_pickups += 1;
            set_state(s, S::SynRecv);
            s.flags |= ssf::MIDSTREAM | ssf::MIDSTREAM_SYNACK;
            {
                let sv = tr_mut(s, 1);
                sv.isn = seqn;
                sv.next_seq = seqn.wrapping_add(1);
                sv.window = win;
                sv.last_ack = seqn;
                sv.next_win = seqn.wrapping_add(win);
            }
            {
                let c = tr_mut(s, 0);
                c.isn = ackn.wrapping_sub(1);
                c.next_seq = ackn;
                c.last_ack = ackn;
                c.window = win;
                c.next_win = ackn.wrapping_add(win);
            }
            if let Some(ws) = p.opts.wscale {
                tr_mut(s, 0).wscale = ws;
                tr_mut(s, 1).wscale = WSCALE_MAX;
            }
            init_ts(s, &p.opts, 1, p.secs);
            if p.opts.sackok {
                s.flags |= ssf::SACKOK;
            }
            return Verdict::Accepted;
        }
        if p.has(SYN) {
            set_state(s, S::SynSent);
            {
                let c = tr_mut(s, 0);
                c.isn = seqn;
                c.next_seq = seqn.wrapping_add(1);
                c.last_ack = seqn.wrapping_add(1);
            }
            if let Some((v, _)) = p.opts.ts {
                let c = tr_mut(s, 0);
                c.last_ts = v;
                c.last_pkt_ts = p.secs;
                c.flags |= tf::TS;
                if v == 0 {
                    c.flags |= tf::ZERO_TS;
                }
            }
            tr_mut(s, 1).window = win;
            if let Some(ws) = p.opts.wscale {
                s.flags |= ssf::SERVER_WSCALE;
                tr_mut(s, 1).wscale = ws;
            }
            if p.opts.sackok {
                s.flags |= ssf::CLIENT_SACKOK;
            }
            if p.opts.tfo {
                s.flags |= ssf::TFO;
                if len > 0 {
                    let c = tr_mut(s, 0);
                    c.next_seq = c.next_seq.wrapping_add(len);
                    let mut dp = p;
                    dp.seq = seqn.wrapping_add(1);
                    self.handle_data(s, &dp, ev);
                }
            }
            return Verdict::Accepted;
        }
        // Midstream pickup on ACK (ESTABLISHED) or FIN with data (FIN_WAIT1).
        self.stats.midstream_pickups += 1;
        let fin = p.has(FIN);
        set_state(s, if fin { S::FinWait1 } else { S::Established });
        s.flags |= ssf::MIDSTREAM | ssf::MIDSTREAM_EST;
        {
            let c = tr_mut(s, 0);
            c.wscale = WSCALE_MAX;
            c.isn = seqn.wrapping_sub(1);
            c.next_seq = seqn.wrapping_add(len).wrapping_add(u32::from(fin));
            c.window = win << WSCALE_MAX;
            c.last_ack = seqn;
            c.next_win = seqn.wrapping_add(c.window);
        }
        {
            let sv = tr_mut(s, 1);
            sv.wscale = WSCALE_MAX;
            sv.isn = ackn.wrapping_sub(1);
            sv.next_seq = ackn;
            sv.last_ack = ackn;
            sv.next_win = ackn;
        }
        init_ts(s, &p.opts, 0, p.secs);
        s.flags |= ssf::SACKOK;
        self.handle_data(s, &p, ev);
        Verdict::Accepted
    }

    /// Packet on an existing session, then Suricata's `StreamTcpPacketCheckPostRst`: a
    /// packet other than a RST from the sender of a RST its receiver was marked for
    /// (`RST_RECV`) means the RST was likely injected: event, and the session is no longer
    /// closed by it.
    pub(crate) fn dispatch(
        &mut self,
        s: &mut TcpSession,
        p: &Pkt<'_>,
        ev: &mut StreamEventSet,
    ) -> Verdict {
        let v = self.dispatch_state(s, p, ev);
        if !p.has(RST) && tr(s, 1 - p.d).flags & tf::RST_RECV != 0 {
            tr_mut(s, 1 - p.d).flags &= !tf::RST_RECV;
            s.flags &= !ssf::CLOSED_BY_RST;
            ev.insert(E::SuspectedRstInject);
        }
        v
    }

    fn dispatch_state(
        &mut self,
        s: &mut TcpSession,
        p: &Pkt<'_>,
        ev: &mut StreamEventSet,
    ) -> Verdict {
        if p.has(SYN) && p.has(FIN) {
            ev.insert(E::FinSyn);
            return Verdict::Rejected;
        }
        // Suricata's checks before the state handlers (`StreamTcpPacket`): keep-alives and
        // their ACKs, zero-window-probe ACKs, bad window updates and outdated ACKs are
        // skipped (no state change); a spurious retransmission raises its event and is
        // skipped only when it lies entirely before the reassembly base.
        if self.is_keepalive(s, p) {
            tr_mut(s, p.d).flags |= tf::KEEPALIVE;
            return Verdict::Accepted;
        }
        if self.is_keepalive_ack(s, p) {
            tr_mut(s, 1 - p.d).flags &= !tf::KEEPALIVE;
            return Verdict::Accepted;
        }
        tr_mut(s, p.d).flags &= !tf::KEEPALIVE;
        let zwp_ack = self.is_zwp_ack(s, p);
        s.flags &= !if p.d == 1 { ssf::ZWP_TS } else { ssf::ZWP_TC };
        if zwp_ack {
            return Verdict::Accepted;
        }
        if !self.is_fin_shutdown_ack(s, p) && !self.is_window_update(s, p) {
            if self.is_bad_window_update(s, p) {
                ev.insert(E::PktBadWindowUpdate);
                return Verdict::Rejected;
            }
            if self.is_outdated_ack(s, p) {
                return Verdict::Accepted;
            }
        }
        match self.spurious(s, p) {
            2 => {
                ev.insert(E::PktSpuriousRetransmission);
                return Verdict::Rejected;
            }
            1 => ev.insert(E::PktSpuriousRetransmission),
            _ => {}
        }
        if s.flags & ssf::TIMESTAMP != 0 && !p.has(RST) && !self.valid_ts(s, p) {
            ev.insert(E::PktInvalidTimestamp);
            return Verdict::Rejected;
        }
        if p.has(RST) && s.state != S::Closed {
            if p.len() > 0 {
                ev.insert(E::RstWithData);
            }
            return self.rst(s, p, ev);
        }
        let st = s.state;
        self.by_state(s, p, st, ev)
    }

    fn by_state(
        &mut self,
        s: &mut TcpSession,
        p: &Pkt<'_>,
        st: S,
        ev: &mut StreamEventSet,
    ) -> Verdict {
        let ok = match st {
            S::None | S::Listen => false,
            S::SynSent => self.syn_sent(s, p, ev),
            S::SynRecv => self.syn_recv(s, p, ev),
            S::Established => self.established(s, p, ev),
            S::FinWait1 => self.fin_wait1(s, p, ev),
            S::FinWait2 => self.fin_wait2(s, p, ev),
            S::Closing => self.closing(s, p, ev),
            S::CloseWait => self.close_wait(s, p, ev),
            S::LastAck => self.last_ack(s, p, ev),
            S::TimeWait => self.time_wait(s, p, ev),
            S::Closed => return self.closed(s, p, ev),
        };
        if ok {
            Verdict::Accepted
        } else {
            Verdict::Rejected
        }
    }

    /// PAWS (Suricata `StreamTcpValidateTimestamp`): updates the sender's last timestamp.
    fn valid_ts(&self, s: &mut TcpSession, p: &Pkt<'_>) -> bool {
        let Some((v, _)) = p.opts.ts else {
            return true;
        };
        let t = tr_mut(s, p.d);
        if t.flags & tf::ZERO_TS != 0 && v != 0 {
            t.flags &= !tf::ZERO_TS;
        } else if (v.wrapping_sub(t.last_ts) as i32) < 0
            && t.last_ts != 0
            && p.secs <= t.last_pkt_ts.saturating_add(PAWS_24DAYS)
        {
            return false;
        }
        if seq::geq(v, t.last_ts) {
            t.last_ts = v;
        }
        t.last_pkt_ts = p.secs;
        true
    }

    /// Suricata `StreamTcpPacketIsSpuriousRetransmission`: 2 entirely before the
    /// reassembly base (skipped), 1 entirely acked already (event only), 0 neither.
    fn spurious(&self, s: &TcpSession, p: &Pkt<'_>) -> u8 {
        if p.payload.is_empty() {
            return 0;
        }
        let t = tr(s, p.d);
        if let Some(b) = s.buf(super::dir_of(p.d)) {
            if seq::leq(p.end(), b.base_seq) && b.base_off > 0 {
                return 2;
            }
        }
        u8::from(seq::leq(p.end(), t.last_ack) && s.flags & ssf::ASYNC == 0)
    }

    /// Suricata `StreamTcpPacketIsKeepAlive`.
    fn is_keepalive(&self, s: &TcpSession, p: &Pkt<'_>) -> bool {
        if p.payload.len() > 1 || p.has(SYN | FIN | RST) {
            return false;
        }
        let (snd, rcv) = (tr(s, p.d), tr(s, 1 - p.d));
        p.ack == rcv.last_ack && p.seq == snd.next_seq.wrapping_sub(1)
    }

    /// Suricata `StreamTcpPacketIsKeepAliveACK`.
    fn is_keepalive_ack(&self, s: &TcpSession, p: &Pkt<'_>) -> bool {
        if !p.payload.is_empty() || p.has(SYN | FIN | RST) || p.win == 0 {
            return false;
        }
        let (snd, rcv) = (tr(s, p.d), tr(s, 1 - p.d));
        (p.win << rcv.wscale) == rcv.window
            && rcv.flags & tf::KEEPALIVE != 0
            && p.ack == rcv.last_ack
            && p.seq == snd.next_seq
    }

    /// Suricata `StreamTcpPacketIsZeroWindowProbeAck`.
    fn is_zwp_ack(&self, s: &TcpSession, p: &Pkt<'_>) -> bool {
        if s.state < S::Established
            || !p.payload.is_empty()
            || p.flags & (ACK | SYN | FIN | RST) != ACK
        {
            return false;
        }
        let need = if p.d == 1 { ssf::ZWP_TS } else { ssf::ZWP_TC };
        if s.flags & need == 0 {
            return false;
        }
        let (snd, rcv) = (tr(s, p.d), tr(s, 1 - p.d));
        let win = p.win << snd.wscale;
        win == 0 && win == rcv.window && p.seq == snd.next_seq && p.ack == rcv.last_ack
    }

    /// Suricata `StreamTcpPacketIsFinShutdownAck`.
    fn is_fin_shutdown_ack(&self, s: &TcpSession, p: &Pkt<'_>) -> bool {
        if !matches!(s.state, S::TimeWait | S::CloseWait | S::LastAck)
            || p.flags != ACK
            || !p.payload.is_empty()
        {
            return false;
        }
        let (snd, rcv) = (tr(s, p.d), tr(s, 1 - p.d));
        snd.next_seq.wrapping_add(1) == p.seq && p.ack == rcv.next_seq.wrapping_add(1)
    }

    /// Suricata `StreamTcpPacketIsWindowUpdate`.
    fn is_window_update(&self, s: &TcpSession, p: &Pkt<'_>) -> bool {
        if s.state < S::Established || !p.payload.is_empty() || p.has(SYN | FIN | RST) || p.win == 0
        {
            return false;
        }
        let (snd, rcv) = (tr(s, p.d), tr(s, 1 - p.d));
        (p.win << rcv.wscale) != rcv.window && p.ack == rcv.last_ack && p.seq == snd.next_seq
    }

    /// Suricata `StreamTcpPacketIsBadWindowUpdate`.
    fn is_bad_window_update(&self, s: &TcpSession, p: &Pkt<'_>) -> bool {
        if s.state < S::Established || s.state == S::Closed || p.has(SYN | FIN | RST) {
            return false;
        }
        let (snd, rcv) = (tr(s, p.d), tr(s, 1 - p.d));
        let win = p.win << rcv.wscale;
        if win >= rcv.window {
            return false;
        }
        let diff = rcv.window - win;
        if diff > p.payload.len() as u32
            && seq::gt(p.ack, rcv.next_seq)
            && seq::gt(p.seq, snd.next_seq)
        {
            let adiff = p.ack.wrapping_sub(rcv.last_ack);
            return (win > 1024 && diff > adiff.saturating_add(32))
                || (win <= 1024 && diff > adiff);
        }
        false
    }

    /// Suricata `StreamTcpPacketIsOutdatedAck` (a SACK-carrying ACK counts as current).
    fn is_outdated_ack(&self, s: &TcpSession, p: &Pkt<'_>) -> bool {
        if s.state < S::Established
            || !p.payload.is_empty()
            || p.flags & (ACK | SYN | FIN | RST) != ACK
        {
            return false;
        }
        let (snd, rcv) = (tr(s, p.d), tr(s, 1 - p.d));
        p.seq == snd.next_seq && seq::lt(p.ack, rcv.last_ack) && !p.opts.sack
    }

    /// Suricata `StreamTcpValidateAck` against the acked track `rcv`.
    fn valid_ack(&self, s: &TcpSession, rcv: usize, ack: u32) -> bool {
        let t = tr(s, rcv);
        if seq::gt(ack, t.last_ack) && seq::leq(ack, t.next_win) {
            return true;
        }
        if ack == t.last_ack || seq::lt(ack, t.last_ack) || s.flags & ssf::ASYNC != 0 {
            return true;
        }
        !(s.state > S::SynSent && seq::gt(ack, t.next_win))
    }

    /// Validates the ACK; raises `pkt_invalid_ack` plus the state's own event.
    fn check_ack(&self, s: &TcpSession, p: &Pkt<'_>, state_ev: E, ev: &mut StreamEventSet) -> bool {
        if !p.has(ACK) || self.valid_ack(s, 1 - p.d, p.ack) {
            return true;
        }
        ev.insert(E::PktInvalidAck);
        ev.insert(state_ev);
        false
    }

    /// Window / ACK / timestamp bookkeeping of an accepted packet.
    fn update_acks(&mut self, s: &mut TcpSession, p: &Pkt<'_>) {
        let asyn = s.flags & ssf::ASYNC != 0;
        let r = tr_mut(s, 1 - p.d);
        r.window = p.win << r.wscale;
        if p.has(ACK) && seq::gt(p.ack, r.last_ack) {
            r.last_ack = p.ack;
        }
        if !asyn && p.has(ACK) && seq::gt(r.last_ack, r.next_seq) {
            self.stats.ack_unseen_data += 1;
        }
        let nw = r.last_ack.wrapping_add(r.window);
        if seq::gt(nw, r.next_win) {
            r.next_win = nw;
        }
        let t = tr_mut(s, p.d);
        if seq::gt(p.end(), t.next_seq) {
            t.next_seq = p.end();
        }
    }

    fn rst(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> Verdict {
        // Suricata's StreamTcpValidateRst checks the timestamp first.
        if s.flags & ssf::TIMESTAMP != 0 && !self.valid_ts(s, p) {
            ev.insert(E::PktInvalidTimestamp);
            return Verdict::Rejected;
        }
        // Suricata's `StreamTcpValidateRst`: with a TCP MD5/AO option the RST is accepted,
        // but the receiver is marked: if the RST's sender goes on, it was likely injected.
        if p.opts.auth && s.state != S::SynSent {
            tr_mut(s, 1 - p.d).flags |= tf::RST_RECV;
        }
        let snd = tr(s, p.d);
        let valid = if s.state == S::SynSent {
            if p.d == 1 {
                p.has(ACK) && p.ack == snd.next_seq.wrapping_sub(0) || {
                    let c = tr(s, 0);
                    p.has(ACK) && (p.ack == c.isn.wrapping_add(1) || p.ack == c.next_seq)
                }
            } else {
                p.seq == snd.isn || p.seq == snd.next_seq
            }
        } else {
            if p.has(ACK) && p.ack != 0 && !self.valid_ack(s, 1 - p.d, p.ack) {
                ev.insert(E::RstInvalidAck);
                return Verdict::Rejected;
            }
            if s.flags & ssf::ASYNC != 0 {
                true
            } else {
                use super::OsPolicy as P;
                match snd.policy {
                    P::Hpux11 => seq::geq(p.seq, snd.next_seq),
                    P::OldLinux | P::Linux | P::Solaris => {
                        seq::geq(p.seq, snd.last_ack) && seq::leq(p.seq, snd.next_win)
                            || p.seq == snd.next_seq
                    }
                    _ => p.seq == snd.next_seq,
                }
            }
        };
        if !valid {
            if p.has(ACK) && s.state == S::SynSent {
                ev.insert(E::RstInvalidAck);
            }
            return Verdict::Rejected;
        }
        // Suricata never puts a RST's payload into the stream (`StreamTcpReassembleHandleSegment`
        // skips RST data), and marks the receiver (`RST_RECV`, checked by the closed state for
        // packets that keep coming) only for a RST in SYN_SENT.
        if s.state == S::SynSent {
            tr_mut(s, 1 - p.d).flags |= tf::RST_RECV;
        }
        s.flags |= ssf::CLOSED_BY_RST;
        set_state(s, S::Closed);
        Verdict::Accepted
    }

    fn syn_sent(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        let four = s.flags & ssf::FOUR_WHS != 0;
        if p.has(SYN) && p.has(ACK) {
            s.synack_count = s.synack_count.saturating_add(1);
            if four && p.d == 0 {
                // 4-way handshake: the client answers the server's SYN.
                let sv = tr(s, 1);
                if p.ack != sv.isn.wrapping_add(1) {
                    ev.insert(E::FourWhsSynackWithWrongAck);
                    return false;
                }
                if p.seq != tr(s, 0).isn {
                    ev.insert(E::FourWhsSynackWithWrongSyn);
                    return false;
                }
                set_state(s, S::SynRecv);
                {
                    let sv = tr_mut(s, 1);
                    sv.last_ack = p.ack;
                    sv.window = p.win;
                    sv.next_win = sv.last_ack.wrapping_add(sv.window);
                }
                let c = tr_mut(s, 0);
                c.next_win = c.last_ack.wrapping_add(c.window);
                self.negotiate(s, p);
                Self::sync_base(s);
                return true;
            }
            if p.d == 0 {
                ev.insert(E::ThreeWhsSynackInWrongDirection);
                return false;
            }
            let c = tr(s, 0);
            let tfo_acked = s.flags & ssf::TFO != 0 && p.ack == c.next_seq;
            if p.ack != c.isn.wrapping_add(1) && !tfo_acked {
                ev.insert(E::ThreeWhsSynackWithWrongAck);
                return false;
            }
            if s.flags & ssf::TFO != 0 && !tfo_acked && c.next_seq != c.isn.wrapping_add(1) {
                ev.insert(E::ThreeWhsSynackTfoDataIgnored);
                tr_mut(s, 0).next_seq = c.isn.wrapping_add(1);
                if let Some(b) = s.buf_mut(Dir::ToServer) {
                    // The dropped data leaves the reassembly memory count too (the stream
                    // fuzz target found the count drifting here).
                    let (base, before) = (b.base_seq, b.mem());
                    *b = super::reassembly::StreamBuf::new(base);
                    let after = b.mem();
                    self.stats.reassembly_memuse =
                        (self.stats.reassembly_memuse + after as u64).saturating_sub(before as u64);
                }
            }
            set_state(s, S::SynRecv);
            {
                let sv = tr_mut(s, 1);
                sv.isn = p.seq;
                sv.next_seq = p.seq.wrapping_add(1);
                sv.last_ack = p.seq.wrapping_add(1);
                sv.next_win = sv.last_ack.wrapping_add(sv.window);
            }
            {
                let c = tr_mut(s, 0);
                c.window = p.win;
                c.last_ack = p.ack;
                c.next_win = c.last_ack.wrapping_add(c.window);
            }
            self.negotiate(s, p);
            Self::sync_base(s);
            return true;
        }
        if p.has(SYN) {
            if p.d == 1 {
                // Server SYN: split (4-way) handshake.
                s.flags |= ssf::FOUR_WHS;
                let sv = tr_mut(s, 1);
                sv.isn = p.seq;
                sv.next_seq = p.seq.wrapping_add(1);
                sv.last_ack = p.seq.wrapping_add(1);
                if let Some(ws) = p.opts.wscale {
                    tr_mut(s, 0).wscale = ws;
                }
                Self::sync_base(s);
                return true;
            }
            // Suricata queues a resent SYN that differs (`StreamTcp3whsStoreSyn`, at most
            // `max-syn-queued`) and takes its timestamp, window scale, window and SACK
            // permission, but keeps the first SYN's ISN: a SYN/ACK answering the later ISN
            // has the wrong ACK.
            let c = tr(s, 0);
            let differs = p.seq != c.isn
                || p.win != tr(s, 1).window
                || p.opts.wscale.is_some() != (s.flags & ssf::SERVER_WSCALE != 0)
                || p.opts.wscale.is_some_and(|w| w != tr(s, 1).wscale)
                || p.opts.sackok != (s.flags & ssf::CLIENT_SACKOK != 0)
                || p.opts.ts.map(|t| t.0) != (c.flags & tf::TS != 0).then_some(c.last_ts);
            if differs {
                if s.syn_queued >= self.cfg.max_syn_queued {
                    ev.insert(E::ThreeWhsSynFlood);
                    return false;
                }
                s.syn_queued = s.syn_queued.saturating_add(1);
                {
                    let c = tr_mut(s, 0);
                    if let Some((v, _)) = p.opts.ts {
                        c.last_ts = v;
                        c.last_pkt_ts = p.secs;
                        c.flags |= tf::TS;
                    }
                }
                match p.opts.wscale {
                    Some(ws) => {
                        s.flags |= ssf::SERVER_WSCALE;
                        tr_mut(s, 1).wscale = ws;
                    }
                    None => {
                        // Suricata's `flags &= SERVER_WSCALE` here (not `&= ~`) leaves the
                        // window-scale flag as it was and clears the others it knows in
                        // this state.
                        s.flags &= !(ssf::TFO | ssf::ASYNC);
                        tr_mut(s, 1).wscale = 0;
                    }
                }
                tr_mut(s, 1).window = p.win;
                if p.opts.sackok {
                    s.flags |= ssf::CLIENT_SACKOK;
                } else {
                    s.flags &= !ssf::CLIENT_SACKOK;
                }
            }
            return true;
        }
        if p.has(ACK) && p.d == 0 && s.flags & ssf::ASYNC != 0 {
            let c = tr(s, 0);
            if p.seq != c.next_seq {
                ev.insert(E::ThreeWhsAsyncWrongSeq);
                return false;
            }
            set_state(s, S::Established);
            {
                let sv = tr_mut(s, 1);
                sv.isn = p.ack.wrapping_sub(1);
                sv.next_seq = p.ack;
                sv.last_ack = p.ack;
                sv.next_win = p.ack;
            }
            let wscale = s.flags & ssf::SERVER_WSCALE != 0;
            {
                // Suricata: the unscaled window of this packet; the window scale is
                // assumed to be the maximum when the SYN offered one.
                let c = tr_mut(s, 0);
                c.window = p.win;
                c.last_ack = p.seq;
                c.next_win = c.last_ack.wrapping_add(c.window);
                if wscale {
                    c.wscale = 14;
                }
            }
            Self::sync_base(s);
            self.update_acks(s, p);
            self.handle_data(s, p, ev);
            return true;
        }
        false
    }

    /// Window scale, SACK and timestamp negotiation when the SYN/ACK is seen.
    fn negotiate(&mut self, s: &mut TcpSession, p: &Pkt<'_>) {
        match (s.flags & ssf::SERVER_WSCALE != 0, p.opts.wscale) {
            (true, Some(ws)) => tr_mut(s, 0).wscale = ws,
            _ => {
                tr_mut(s, 0).wscale = 0;
                tr_mut(s, 1).wscale = 0;
            }
        }
        if s.flags & ssf::CLIENT_SACKOK != 0 && p.opts.sackok {
            s.flags |= ssf::SACKOK;
        }
        let client_ts = tr(s, 0).flags & tf::TS != 0;
        match (client_ts, p.opts.ts) {
            (true, Some((v, _))) => {
                s.flags |= ssf::TIMESTAMP;
                let t = tr_mut(s, p.d);
                t.last_ts = v;
                t.last_pkt_ts = p.secs;
                if v == 0 {
                    t.flags |= tf::ZERO_TS;
                }
            }
            _ => {
                tr_mut(s, 0).last_ts = 0;
                tr_mut(s, 1).last_ts = 0;
            }
        }
    }

    fn syn_recv(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        let four = s.flags & ssf::FOUR_WHS != 0;
        // In a 4-way handshake the SYN/ACK came from the client: the final ACK is the server's.
        let syn_side = if four { 0 } else { 1 };
        let ack_side = 1 - syn_side;
        if p.has(FIN) {
            // As in the established state (Suricata).
            return self.handle_fin(s, p, ev);
        }
        if p.has(SYN) && p.has(ACK) {
            if p.d != syn_side {
                ev.insert(E::ThreeWhsSynackToserverOnSynRecv);
                return false;
            }
            s.synack_count = s.synack_count.saturating_add(1);
            if s.synack_count > self.cfg.max_synack_queued {
                ev.insert(E::ThreeWhsSynackFlood);
                return false;
            }
            let t = tr(s, syn_side);
            if p.seq != t.isn {
                ev.insert(E::ThreeWhsSynackResendWithDiffSeq);
                return false;
            }
            if p.ack != tr(s, ack_side).last_ack {
                ev.insert(E::ThreeWhsSynackResendWithDiffAck);
                return false;
            }
            return true;
        }
        if p.has(SYN) {
            if p.d == 1 {
                ev.insert(E::ThreeWhsSynToclientOnSynRecv);
                return false;
            }
            if p.seq != tr(s, 0).isn {
                ev.insert(E::ThreeWhsSynResendDiffSeqOnSynRecv);
                return false;
            }
            return true;
        }
        if !p.has(ACK) {
            return false;
        }
        if four {
            let (snd, rcv) = (tr(s, p.d), tr(s, 1 - p.d));
            // The 4-way handshake's final ACK comes from the server.
            if p.d == 1 {
                if p.seq != snd.next_seq {
                    ev.insert(E::FourWhsWrongSeq);
                    return false;
                }
                if !(p.ack == rcv.next_seq || s.flags & ssf::ASYNC != 0) {
                    ev.insert(E::FourWhsInvalidAck);
                    return false;
                }
                return self.establish(s, p, ev);
            }
        }
        // Suricata's `StreamTcpPacketStateSynRecv` (IDS mode), in its order: the tests compare
        // the packet with the client's numbers whatever its direction. A to-client ACK
        // (not a 4-way handshake, not TCP Fast Open) suggests the handshake's final ACK was
        // missed; it is no event in IDS mode.
        let missed_3whs_ack = p.d == 1 && s.flags & (ssf::MIDSTREAM_SYNACK | ssf::TFO) == 0;
        let (c_next, c_last_ack, c_next_win) = {
            let c = tr(s, 0);
            (c.next_seq, c.last_ack, c.next_win)
        };
        let sv_next = tr(s, 1).next_seq;
        if p.seq == c_next && p.ack == sv_next {
            // The normal final ACK (with or without data).
        } else if self.cfg.async_oneside && p.seq == sv_next {
            s.flags |= ssf::ASYNC;
        } else if p.seq == c_next {
            ev.insert(E::ThreeWhsRightSeqWrongAckEvasion);
            return false;
        } else if p.d == 1 && seq::gt(p.seq, c_next) && seq::gt(p.ack, c_last_ack) {
            // SYN/ACK followed by more to-client packets: packets were lost.
        } else if seq::gt(p.seq, c_next) && seq::leq(p.seq, c_next_win) && p.ack == sv_next {
            // A proper ACK with a sequence number past what was seen, in the window.
        } else if (missed_3whs_ack || s.flags & ssf::TFO != 0)
            && p.ack == c_last_ack
            && p.seq == sv_next
        {
            // To-client data after the missed final ACK.
        } else {
            ev.insert(E::ThreeWhsWrongSeqWrongAck);
            return false;
        }
        self.establish(s, p, ev)
    }

    /// SYN_RECV to ESTABLISHED with packet `p`'s numbers and data.
    fn establish(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        set_state(s, S::Established);
        s.synack_count = 0;
        self.update_acks(s, p);
        self.handle_data(s, p, ev);
        true
    }

    /// Shared established-style handling of data/ACK packets (Suricata
    /// `HandleEstablishedPacketTo{Server,Client}`), with the state's event names.
    fn est_data(
        &mut self,
        s: &mut TcpSession,
        p: &Pkt<'_>,
        ev: &mut StreamEventSet,
        evs: (E, E, E),
    ) -> bool {
        let (ev_invalid_ack, ev_before_last_ack, ev_oow) = evs;
        if !self.check_ack(s, p, ev_invalid_ack, ev) {
            return false;
        }
        if p.d == 1 && s.flags & ssf::MIDSTREAM != 0 && s.flags & ssf::MIDSTREAM_EST != 0 {
            let t = tr_mut(s, 1);
            t.window = p.win << t.wscale;
            t.next_win = t.last_ack.wrapping_add(t.window);
            s.flags &= !ssf::MIDSTREAM_EST;
        }
        let oneside = self.cfg.async_oneside;
        let snd = tr(s, p.d);
        let keepalive = p.len() <= 1 && p.seq == snd.next_seq.wrapping_sub(1);
        if !keepalive && !seq::geq(p.end(), snd.last_ack) {
            let mid = s.flags & ssf::MIDSTREAM != 0;
            if s.flags & ssf::ASYNC != 0 {
                tr_mut(s, p.d).last_ack = p.seq;
            } else if oneside
                && mid
                && (snd.next_seq == p.seq || snd.last_ack == snd.isn.wrapping_add(1))
            {
                tr_mut(s, p.d).last_ack = p.seq;
                s.flags |= ssf::ASYNC;
            } else if seq::gt(snd.last_ack, snd.next_seq) && seq::gt(p.end(), snd.next_seq) {
                // Acked data we had not seen: accept.
            } else {
                ev.insert(ev_before_last_ack);
                return false;
            }
        }
        let zwp = p.len() == 1 && p.seq == snd.next_seq && snd.window == 0;
        if zwp {
            s.flags |= if p.d == 0 { ssf::ZWP_TS } else { ssf::ZWP_TC };
            self.handle_data(s, p, ev);
            return true;
        }
        let snd = tr(s, p.d);
        let in_window =
            seq::leq(p.end(), snd.next_win) || s.flags & (ssf::MIDSTREAM | ssf::ASYNC) != 0;
        if !in_window {
            ev.insert(ev_oow);
            return false;
        }
        self.update_acks(s, p);
        self.handle_data(s, p, ev);
        true
    }

    fn established(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        if p.has(SYN) {
            let t = tr(s, p.d);
            let e = match (p.has(ACK), p.d) {
                (true, 0) => E::EstSynackToserver,
                (true, _) if p.seq != t.isn => E::EstSynackResendWithDiffSeq,
                (true, _) if p.ack != tr(s, 0).isn.wrapping_add(1) => E::EstSynackResendWithDiffAck,
                (true, _) => E::EstSynackResend,
                (false, 1) => E::EstSynToclient,
                (false, _) if p.seq != t.isn => E::EstSynResendDiffSeq,
                (false, _) => E::EstSynResend,
            };
            ev.insert(e);
            return false;
        }
        if p.has(FIN) {
            return self.handle_fin(s, p, ev);
        }
        if !p.has(ACK) {
            return false;
        }
        self.est_data(
            s,
            p,
            ev,
            (
                E::EstInvalidAck,
                E::EstPktBeforeLastAck,
                E::EstPacketOutOfWindow,
            ),
        )
    }

    /// A FIN in the established (or SYN_RECV) state (Suricata `StreamTcpHandleFin`).
    fn handle_fin(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        // Suricata 7's StreamTcpHandleFin checks the window whatever the session kind
        // (a one-sided async stream whose FIN lies beyond the first ACK's window is
        // rejected and the session stays established).
        let snd = tr(s, p.d);
        if seq::lt(p.seq, snd.next_seq) || seq::gt(p.seq, snd.last_ack.wrapping_add(snd.window)) {
            ev.insert(E::FinOutOfWindow);
            return false;
        }
        if !self.check_ack(s, p, E::FinInvalidAck, ev) {
            return false;
        }
        set_state(s, if p.d == 0 { S::CloseWait } else { S::FinWait1 });
        self.accept_fin(s, p, ev);
        true
    }

    /// Accepts a FIN: bookkeeping, data, and the FIN's sequence number.
    fn accept_fin(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) {
        self.update_acks(s, p);
        self.handle_data(s, p, ev);
        let t = tr_mut(s, p.d);
        let fin_end = p.end().wrapping_add(1);
        if seq::gt(fin_end, t.next_seq) {
            t.next_seq = fin_end;
        }
        t.flags |= tf::FIN;
    }

    /// Suricata `StreamTcpPacketIsRetransmission` for the closing states.
    fn retransmission(&self, s: &TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        if p.payload.is_empty() {
            return false;
        }
        let t = tr(s, p.d);
        if seq::leq(p.end(), t.next_seq) || seq::lt(p.seq, t.last_ack) {
            ev.insert(E::PktRetransmission);
            return true;
        }
        false
    }

    /// A non-FIN packet in a closing state: validate, then account ACK and data.
    fn close_pkt(
        &mut self,
        s: &mut TcpSession,
        p: &Pkt<'_>,
        ev: &mut StreamEventSet,
        ev_seq: E,
        ev_ack: E,
    ) -> bool {
        if !p.has(ACK) {
            return false;
        }
        if self.retransmission(s, p, ev) {
            return false;
        }
        let t = tr(s, p.d);
        let asyn = s.flags & (ssf::ASYNC | ssf::MIDSTREAM) != 0;
        if !asyn
            && (seq::lt(p.seq, t.next_seq.wrapping_sub(1))
                || seq::gt(p.seq, t.last_ack.wrapping_add(t.window)))
        {
            ev.insert(ev_seq);
            return false;
        }
        if !self.check_ack(s, p, ev_ack, ev) {
            return false;
        }
        self.update_acks(s, p);
        self.handle_data(s, p, ev);
        true
    }

    /// A FIN in a closing state from the side that has not sent one yet.
    fn close_fin(
        &mut self,
        s: &mut TcpSession,
        p: &Pkt<'_>,
        ev: &mut StreamEventSet,
        ev_seq: E,
        ev_ack: E,
    ) -> bool {
        if self.retransmission(s, p, ev) {
            return false;
        }
        let t = tr(s, p.d);
        let asyn = s.flags & (ssf::ASYNC | ssf::MIDSTREAM) != 0;
        if !asyn
            && (seq::lt(p.seq, t.next_seq) || seq::gt(p.seq, t.last_ack.wrapping_add(t.window)))
        {
            ev.insert(ev_seq);
            return false;
        }
        if !self.check_ack(s, p, ev_ack, ev) {
            return false;
        }
        self.accept_fin(s, p, ev);
        true
    }

    /// Whether `p` acknowledges everything the peer sent, FIN included.
    fn acks_peer_fin(s: &TcpSession, p: &Pkt<'_>) -> bool {
        p.has(ACK) && seq::geq(p.ack, tr(s, 1 - p.d).next_seq)
    }

    fn fin_wait1(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        if p.has(SYN) {
            ev.insert(E::ShutdownSynResend);
            return false;
        }
        if p.d == 1 {
            // The server already sent its FIN: retransmissions and ACKs only.
            return p.has(FIN) || self.close_pkt(s, p, ev, E::Fin1AckWrongSeq, E::Fin1InvalidAck);
        }
        if p.has(FIN) {
            if !self.close_fin(s, p, ev, E::Fin1FinWrongSeq, E::Fin1InvalidAck) {
                return false;
            }
            // Suricata's FIN_WAIT1: the client's FIN with an ACK (of anything) is TIME_WAIT,
            // a FIN without ACK is CLOSING.
            let next = if p.has(ACK) { S::TimeWait } else { S::Closing };
            set_state(s, next);
            return true;
        }
        // FIN_WAIT2 on an ACK of exactly the server's next sequence number (its FIN
        // included) from the client's next sequence number.
        // (A retransmission never gets there: `close_pkt` refuses it.)
        let to_fin2 = p.has(ACK) && p.ack == tr(s, 1).next_seq && p.seq == tr(s, 0).next_seq;
        if !self.close_pkt(s, p, ev, E::Fin1AckWrongSeq, E::Fin1InvalidAck) {
            return false;
        }
        if to_fin2 {
            set_state(s, S::FinWait2);
        }
        true
    }

    /// Suricata's `next_seq` of sender `d`: the server's FIN counts at once
    /// (`StreamTcpHandleFin` adds it), the client's only once the server acknowledged it.
    fn suricata_next_seq(s: &TcpSession, d: usize) -> u32 {
        let t = tr(s, d);
        t.next_seq
            .wrapping_sub(u32::from(d == 0 && t.fin_unacked()))
    }

    fn fin_wait2(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        if p.has(SYN) {
            ev.insert(E::ShutdownSynResend);
            return false;
        }
        if p.has(FIN) && p.d == 0 {
            if !self.close_fin(s, p, ev, E::Fin2FinWrongSeq, E::Fin2InvalidAck) {
                return false;
            }
            set_state(s, S::TimeWait);
            return true;
        }
        if p.has(FIN) {
            return true;
        }
        self.close_pkt(s, p, ev, E::Fin2AckWrongSeq, E::Fin2InvalidAck)
    }

    /// Suricata's `StreamTcpPacketStateClosing`: an ACK (a FIN included) must carry exactly
    /// the sender's next sequence number as Suricata counts it (a FIN enters `next_seq`
    /// only once the peer acknowledged it), else `closing_ack_wrong_seq` and the state
    /// stays; any valid ACK that is not a retransmission moves to TIME_WAIT.
    fn closing(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        if p.has(SYN) {
            ev.insert(E::ShutdownSynResend);
            return false;
        }
        if !p.has(ACK) {
            return true;
        }
        let retransmission = self.retransmission(s, p, ev);
        if p.seq != Self::suricata_next_seq(s, p.d) {
            ev.insert(E::ClosingAckWrongSeq);
            return false;
        }
        if !self.check_ack(s, p, E::ClosingInvalidAck, ev) {
            return false;
        }
        if !retransmission {
            set_state(s, S::TimeWait);
        }
        self.update_acks(s, p);
        self.handle_data(s, p, ev);
        true
    }

    fn close_wait(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        if p.has(SYN) {
            ev.insert(E::ShutdownSynResend);
            return false;
        }
        if p.d == 0 {
            // The client already sent its FIN.
            return p.has(FIN)
                || self.close_pkt(s, p, ev, E::ClosewaitAckOutOfWindow, E::ClosewaitInvalidAck);
        }
        if p.has(FIN) {
            if !self.close_fin(s, p, ev, E::ClosewaitFinOutOfWindow, E::ClosewaitInvalidAck) {
                return false;
            }
            set_state(s, S::LastAck);
            return true;
        }
        if !p.has(ACK) {
            return false;
        }
        self.est_data(
            s,
            p,
            ev,
            (
                E::ClosewaitInvalidAck,
                E::ClosewaitPktBeforeLastAck,
                E::ClosewaitAckOutOfWindow,
            ),
        )
    }

    fn last_ack(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        if p.has(SYN) {
            ev.insert(E::ShutdownSynResend);
            return false;
        }
        if p.has(FIN) || p.d == 1 {
            return true;
        }
        if !self.close_pkt(s, p, ev, E::LastackAckWrongSeq, E::LastackInvalidAck) {
            return false;
        }
        if Self::acks_peer_fin(s, p) {
            set_state(s, S::Closed);
        }
        true
    }

    fn time_wait(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> bool {
        if p.has(SYN) {
            ev.insert(E::ShutdownSynResend);
            return false;
        }
        if p.has(FIN) {
            return true;
        }
        if !self.close_pkt(s, p, ev, E::TimewaitAckWrongSeq, E::TimewaitInvalidAck) {
            return false;
        }
        if Self::acks_peer_fin(s, p) {
            set_state(s, S::Closed);
        }
        true
    }

    /// CLOSED: after a RST, packets from the RST's sender are still processed in the
    /// previous state (the RST may have been injected).
    fn closed(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) -> Verdict {
        if p.has(RST) {
            return Verdict::Rejected;
        }
        let snd_recv = tr(s, p.d).flags & tf::RST_RECV != 0;
        let rcv_recv = tr(s, 1 - p.d).flags & tf::RST_RECV != 0;
        if !snd_recv && rcv_recv && s.prev_state != S::Closed {
            let prev = s.prev_state;
            let v = self.by_state(s, p, prev, ev);
            if v == Verdict::Accepted && s.state == S::Closed {
                s.state = prev;
            }
            return v;
        }
        Verdict::Rejected
    }
}
