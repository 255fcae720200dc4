//! DNS in the protocol registry.

use std::any::Any;

use shrike_output::JsonWriter;

use super::{DnsState, Probe as DnsProbe};
use crate::anomaly::AppAnomaly;
use crate::registry::{
    AppParser, Detect, KeywordDesc, LogCtx, ParserConfig, Probe, Protocol, TxMatch,
};
use crate::Dir;

/// Most logged transactions kept for detection per flow (DNS over TCP).
const MAX_KEPT_TXS: u64 = 32;

/// DNS over UDP and TCP: a probing parser on port 53 (either side).
pub static PROTOCOL: Protocol = Protocol {
    name: "dns",
    aliases: &[],
    ip_protos: &[6, 17],
    ports: &[53],
    tcp: Detect::Port(probe_tcp),
    udp: Detect::Port(probe_udp),
    new_parser,
    // `dns.query` and the DNS events are resolved by the engine's DNS inspection.
    buffers: &[],
    events: &[],
    keywords: &[KeywordDesc {
        name: "dns.opcode",
        dir: None,
        setup: opcode_setup,
    }],
    generic_stats: false,
};

/// `dns.opcode:[!]N` (Suricata 7's `parse_opcode`: blanks and `!` before a decimal `u8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Opcode {
    negate: bool,
    opcode: u8,
}

fn opcode_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("dns.opcode needs a value")?;
    let mut negate = false;
    for (i, c) in v.char_indices() {
        match c {
            ' ' | '\t' => {}
            '!' => negate = true,
            _ => {
                let opcode = v[i..]
                    .parse::<u8>()
                    .map_err(|_| format!("invalid dns.opcode value `{v}`"))?;
                return Ok(Box::new(Opcode { negate, opcode }));
            }
        }
    }
    Err(format!("invalid dns.opcode value `{v}`"))
}

impl TxMatch for Opcode {
    /// The request's opcode going to the server, the response's going to the client
    /// (Suricata's `rs_dns_opcode_match`).
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool> {
        let t = parser.as_any().downcast_ref::<DnsState>()?.tx(tx)?;
        let m = match dir {
            Dir::ToServer => t.request(),
            Dir::ToClient => t.response(),
        };
        Some(m.is_some_and(|m| (m.header.opcode() == self.opcode) != self.negate))
    }
}

fn probe_of(p: DnsProbe) -> Probe {
    match p {
        DnsProbe::Yes { .. } => Probe::Yes,
        DnsProbe::No => Probe::No,
        DnsProbe::NeedMore => Probe::NeedMore,
    }
}

fn probe_tcp(_dir: Dir, data: &[u8]) -> Probe {
    probe_of(super::probe_tcp(data))
}

fn probe_udp(dir: Dir, data: &[u8]) -> Probe {
    // A datagram whose QR bit says it goes the other way reverses the flow (Suricata's
    // `rs_dns_probe` sets `rdir`).
    match super::probe_udp(data) {
        DnsProbe::Yes { dir: d } if d != dir => Probe::YesReversed,
        r => probe_of(r),
    }
}

fn new_parser(cfg: &ParserConfig, tcp: bool) -> Box<dyn AppParser> {
    Box::new(DnsState::new(tcp, cfg.dns))
}

impl AppParser for DnsState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        DnsState::parse(self, dir, data);
        false
    }

    fn parse_frames(
        &mut self,
        dir: Dir,
        data: &[u8],
        fc: &mut crate::frames::FrameCtx<'_>,
    ) -> bool {
        if !self.tcp {
            // Suricata frames the whole datagram.
            fc.new_rel(0, data.len() as i64, 0);
            DnsState::parse(self, dir, data);
            return false;
        }
        self.frame_msgs.get_or_insert_with(Vec::new).clear();
        DnsState::parse(self, dir, data);
        if let Some(m) = self.frame_msgs.as_mut() {
            // The first entry is the base.
            for &(rel, len) in m.iter().skip(1) {
                fc.new_rel(rel, len as i64, 0);
            }
            m.clear();
        }
        false
    }

    fn gap(&mut self, dir: Dir, len: u64) {
        DnsState::gap(self, dir, u32::try_from(len).unwrap_or(u32::MAX));
    }

    fn tx_count(&self) -> u64 {
        DnsState::tx_count(self)
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        DnsState::tx_count(self)
    }

    fn live_txs(&self, dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs().filter(|t| t.dir == Some(dir)).map(|t| t.id));
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let mut id = *c.next;
        while id < DnsState::tx_count(self) {
            if let Some(tx) = self.tx(id) {
                if c.write {
                    c.rec.dns(c.out, tx, &c.opts.dns);
                }
                c.logged += 1;
            }
            id += 1;
        }
        *c.next = id;
        // Over TCP a message is parsed when the other side acknowledges it, so a
        // transaction can appear on a packet of the opposite direction; detection
        // inspects it on the next packet of its own direction. Keep the latest
        // logged ones for that (bounded) until the flow ends.
        let keep_from = if c.closed || c.rec.ip_proto != 6 {
            id
        } else {
            id.saturating_sub(MAX_KEPT_TXS)
        };
        self.free_txs_before(keep_from);
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        let start = from.max(self.anomaly_next);
        // A message that failed before any transaction existed leaves an event-only
        // transaction; Suricata has none to put the event on, and logs nothing.
        for tx in self
            .txs()
            .filter(|t| t.id >= start && t.message().is_some())
        {
            for e in tx.events.iter() {
                f(AppAnomaly {
                    tx_id: tx.id,
                    name: e.name(),
                    upper: false,
                });
            }
        }
        self.anomaly_next = self.anomaly_next.max(DnsState::tx_count(self));
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        w.open_object("dns");
        super::eve::write_alert(w, t);
        w.close();
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
