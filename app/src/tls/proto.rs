//! TLS in the protocol registry.

use std::any::Any;

use shrike_output::JsonWriter;

use super::{Probe as TlsProbe, TlsState};
use crate::anomaly::AppAnomaly;
use crate::registry::{AppParser, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

/// TLS/SSL: record-header patterns on any port, the usual TLS ports first.
pub static PROTOCOL: Protocol = Protocol {
    name: "tls",
    aliases: &["ssl"],
    ip_protos: &[6],
    ports: &[443, 465, 993, 995, 8443],
    tcp: Detect::Pattern(probe),
    udp: Detect::None,
    new_parser,
    // The TLS buffers, events and legacy keywords are resolved by the engine's TLS
    // inspection.
    buffers: &[],
    events: &[],
    keywords: &[],
    generic_stats: false,
};

fn probe(dir: Dir, data: &[u8]) -> Probe {
    match super::probe(dir, data) {
        TlsProbe::Yes => Probe::Yes,
        TlsProbe::No => Probe::No,
        TlsProbe::NeedMore => Probe::NeedMore,
    }
}

fn new_parser(cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(TlsState::new(cfg.tls))
}

impl AppParser for TlsState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        let before = self.failed();
        !TlsState::parse(self, dir, data) && !before
    }

    fn parse_frames(
        &mut self,
        dir: Dir,
        data: &[u8],
        fc: &mut crate::frames::FrameCtx<'_>,
    ) -> bool {
        let before = self.failed();
        !TlsState::parse_framed(self, dir, data, Some(fc)) && !before
    }

    fn gap(&mut self, dir: Dir, len: u64) {
        TlsState::gap(self, dir, u32::try_from(len).unwrap_or(u32::MAX));
    }

    fn tx_count(&self) -> u64 {
        1
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        out.push(0);
    }

    fn tx_final(&self, _tx: u64, closed: bool) -> bool {
        self.handshake_done() || closed
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        // One record per flow; Suricata 7 counts no TLS transactions.
        if !*c.flow_logged && (self.log_ready() || c.closed) {
            *c.flow_logged = true;
            if c.write && self.should_log(c.opts.tls.session_resumption) {
                c.rec.tls(c.out, self, &c.opts.tls, c.orig_proto);
            }
        }
    }

    fn drain_events(&mut self, _from: u64, flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        if flow_logged {
            return;
        }
        let new = self.events.without(self.events_reported);
        self.events_reported = self.events;
        for e in new.iter() {
            f(AppAnomaly {
                tx_id: 0,
                name: e.name(),
                upper: true,
            });
        }
    }

    fn alert_members(&self, _tx: u64, w: &mut JsonWriter) -> bool {
        w.open_object("tls");
        super::eve::write_alert(w, self);
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
