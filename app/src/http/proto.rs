//! HTTP/1.x in the protocol registry.

use std::any::Any;

use shrike_output::JsonWriter;

use super::{EveHttpOptions, HttpState, Progress};
use crate::anomaly::AppAnomaly;
use crate::registry::{AppParser, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

/// Most logged transactions kept for detection per flow.
const MAX_KEPT_TXS: u64 = 32;

/// HTTP/1.x: content patterns on any port (a method or `HTTP/` at the start of a
/// direction), port 80 and the usual proxy ports first.
pub static PROTOCOL: Protocol = Protocol {
    name: "http",
    aliases: &["http1"],
    ip_protos: &[6],
    ports: &[],
    tcp: Detect::Pattern(probe),
    udp: Detect::None,
    new_parser,
    // HTTP's buffers and events are resolved by the engine's HTTP inspection
    // (`HttpBuffer`, `HttpEvent`), which predates the registry.
    buffers: &[],
    events: &[],
    keywords: &[],
    generic_stats: false,
};

fn probe(dir: Dir, data: &[u8]) -> Probe {
    match super::probe(dir, data) {
        super::ProbeResult::Yes => Probe::Yes,
        super::ProbeResult::No => Probe::No,
        super::ProbeResult::NeedMore => Probe::NeedMore,
    }
}

fn new_parser(cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(HttpState::new(std::sync::Arc::clone(&cfg.http)))
}

impl AppParser for HttpState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if !self.is_tunnel() {
            HttpState::parse(self, dir, data);
        }
        false
    }

    fn parse_frames(
        &mut self,
        dir: Dir,
        data: &[u8],
        fc: &mut crate::frames::FrameCtx<'_>,
    ) -> bool {
        let d = usize::from(dir == Dir::ToClient);
        let f = self.frames.get_or_insert_with(Box::default);
        f.pos[d] = fc.offset;
        f.step.clear();
        f.out.clear();
        AppParser::parse(self, dir, data);
        let Some(f) = self.frames.as_deref_mut() else {
            return false;
        };
        for (ed, start, at, tx) in f.out.drain(..) {
            if ed != d {
                continue;
            }
            if start {
                let id = fc.new_frame(at, -1, ed as u8);
                fc.set_tx(id, tx);
                f.open[d] = id;
            } else {
                if let Some(id) = f.open[d].take() {
                    let len = at.saturating_sub(f.stamp[d]);
                    fc.set_len(Some(id), i64::try_from(len).unwrap_or(i64::MAX));
                }
                f.stamp[d] = at;
            }
        }
        false
    }

    fn gap(&mut self, dir: Dir, len: u64) {
        HttpState::gap(self, dir, len);
    }

    fn close(&mut self) {
        HttpState::close(self, Dir::ToServer);
        HttpState::close(self, Dir::ToClient);
    }

    fn truncate(&mut self, dir: Dir) {
        self.truncate_files(dir);
    }

    fn tx_count(&self) -> u64 {
        HttpState::tx_count(self)
    }

    fn complete_in(&self, dir: Dir) -> u64 {
        let open = self
            .txs()
            .filter(|t| {
                let p = match dir {
                    Dir::ToServer => t.request_progress(),
                    Dir::ToClient => t.response_progress(),
                };
                p != Progress::Complete
            })
            .count() as u64;
        HttpState::tx_count(self).saturating_sub(open)
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs().map(|t| t.id()));
    }

    fn files(&self, tx: u64, dir: Dir, f: &mut dyn FnMut(&crate::files::TrackedFile)) {
        let Some(t) = self.tx(tx) else {
            return;
        };
        let body = match dir {
            Dir::ToServer => t.request_body(),
            Dir::ToClient => t.response_body(),
        };
        for file in body.files() {
            f(file);
        }
    }

    fn lift_file_limit(&mut self, tx: u64, dir: Dir) {
        if let Some(t) = self.tx_mut(tx) {
            match dir {
                Dir::ToServer => t.req_body.depth_set = true,
                Dir::ToClient => t.resp_body.depth_set = true,
            }
        }
    }

    fn files_mut(&mut self, tx: u64, dir: Dir, f: &mut dyn FnMut(&mut crate::files::TrackedFile)) {
        let Some(t) = self.tx_mut(tx) else {
            return;
        };
        let body = match dir {
            Dir::ToServer => &mut t.req_body,
            Dir::ToClient => &mut t.resp_body,
        };
        body.for_each_file_mut(f);
    }

    fn tx_final(&self, tx: u64, closed: bool) -> bool {
        self.tx(tx).is_none_or(|t| t.is_complete() || closed)
    }

    fn switch_to(&self) -> Option<crate::AppProto> {
        self.proto_change.then_some(crate::AppProto::UNKNOWN)
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        // Files that ended before their transaction (cut at the body limit or the stream
        // depth) are logged now, on a packet of their direction.
        if let (true, false, Some(d)) = (c.write, c.closed, c.pkt_dir) {
            for i in *c.next..HttpState::tx_count(self) {
                if self.tx(i).is_some_and(|t| !t.is_complete()) {
                    c.rec.http_files_when(c.out, self, i, [true, true], Some(d));
                }
            }
        }
        // Files held for a packet of their direction (or the flow's end).
        let ready = |to_server: bool, c: &LogCtx<'_>| {
            c.closed
                || c.pkt_dir
                    == Some(if to_server {
                        Dir::ToServer
                    } else {
                        Dir::ToClient
                    })
        };
        if !self.files_pending.is_empty() {
            let pending = std::mem::take(&mut self.files_pending);
            for (t, ts) in pending {
                if ready(ts, c) {
                    if c.write {
                        c.rec.http_files(c.out, self, t, [ts, !ts]);
                    }
                } else {
                    self.files_pending.push((t, ts));
                }
            }
        }
        let mut id = *c.next;
        while id < HttpState::tx_count(self) {
            let Some(tx) = self.tx(id) else {
                id += 1;
                continue;
            };
            if !(tx.is_complete() || c.closed) {
                break;
            }
            if let Some(t) = self.tx_mut(id) {
                // Files end with their transaction: closed when the body ended, truncated
                // when the flow ended first (Suricata prunes open files as truncated).
                for b in [&mut t.req_body, &mut t.resp_body] {
                    let done = b.complete;
                    b.close_file(!done);
                }
            }
            if c.write {
                // Suricata's file logger writes the files of the packet's direction (both at
                // the flow's end); the other direction's wait for a packet going that way.
                let mut now = [false, false];
                let has = self.tx(id).map_or([false, false], |t| {
                    [
                        t.request_body().files().next().is_some(),
                        t.response_body().files().next().is_some(),
                    ]
                });
                {
                    for (i, (ts, any)) in [(true, has[0]), (false, has[1])].into_iter().enumerate()
                    {
                        if !any {
                            continue;
                        }
                        if ready(ts, c) || self.files_pending.len() as u64 >= MAX_KEPT_TXS {
                            now[i] = true;
                        } else {
                            self.files_pending.push((id, ts));
                        }
                    }
                }
                c.rec.http_files(c.out, self, id, now);
                c.rec.http(c.out, self, id, &c.opts.http);
            }
            c.logged += 1;
            id += 1;
        }
        *c.next = id;
        // Keep what detection has not inspected in both directions yet (bounded).
        // Bounded: files held too long are written with the packet at hand.
        let floor = id.saturating_sub(MAX_KEPT_TXS);
        if self.files_pending.iter().any(|p| p.0 < floor) {
            let pending = std::mem::take(&mut self.files_pending);
            for (t, ts) in pending {
                if t < floor {
                    if c.write {
                        c.rec.http_files(c.out, self, t, [ts, !ts]);
                    }
                } else {
                    self.files_pending.push((t, ts));
                }
            }
        }
        let keep_from = if c.closed {
            id
        } else {
            let pending = self.files_pending.iter().map(|p| p.0).min().unwrap_or(id);
            c.inspected
                .min(id)
                .max(id.saturating_sub(MAX_KEPT_TXS))
                .min(pending)
        };
        self.free_txs_before(keep_from, false);
        if c.closed {
            self.release_pool();
        }
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        for id in from..HttpState::tx_count(self) {
            let Some(tx) = self.tx_mut(id) else {
                continue;
            };
            // The request flag events are reported as often as Suricata's checks added
            // them; the others once.
            let new = tx.events.without(&tx.events_logged);
            tx.events_logged = tx.events;
            for e in new.iter() {
                if super::tx::CHECK_EVENTS.contains(&e) {
                    continue;
                }
                f(AppAnomaly {
                    tx_id: id,
                    name: e.name(),
                    upper: true,
                });
            }
            for (i, e) in super::tx::CHECK_EVENTS.iter().enumerate() {
                let (Some(&n), Some(done)) = (tx.check_counts.get(i), tx.check_logged.get_mut(i))
                else {
                    continue;
                };
                for _ in *done..n {
                    f(AppAnomaly {
                        tx_id: id,
                        name: e.name(),
                        upper: true,
                    });
                }
                *done = n;
            }
        }
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let opts = EveHttpOptions {
            extended: true,
            ..EveHttpOptions::default()
        };
        self.write_eve_json(tx, &opts, w)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
