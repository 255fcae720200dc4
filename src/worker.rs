//! A detect worker: owns its flow table (and the table's timer wheel), its EVE output and its
//! counters. Nothing here is shared with other workers on the packet path.

use std::fs::File;
use std::io::Write;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shrike_capture::{LinkType, Timestamp};
use shrike_detect::decode::PacketMeta;
use shrike_detect::engine::output::{
    write_eve_alert, write_eve_tagged_packet, write_fast_alert, AlertContext, AlertFlowInfo,
};
use shrike_detect::engine::{DetectThread, Engine, FlowDetect, FlowInput, Packet};
use shrike_detect::flow::{Direction, EndReason, Flow, FlowKey, FlowState, FlowTable};
use shrike_output::eve::addr::Ipv6Style;
use shrike_output::eve::flow::{
    write_flow_record, FlowEndReason, FlowIcmp, FlowRecord, FlowState as EveFlowState, TcpFlowInfo,
};
use shrike_output::{EveOutput, EventKind};

use crate::config::SensorConfig;
use crate::dispatch::Entry;
use crate::stats::{Snapshot, StatsBoard};

/// Per-flow state the worker keeps beside the table's own fields.
#[derive(Debug, Default)]
pub struct FlowData {
    /// ICMP type/code of the first packet, and of the first reply.
    icmp: Option<(u8, u8)>,
    icmp_reply: Option<(u8, u8)>,
    /// Any alert fired on this flow.
    alerted: bool,
    /// The detection engine's per-flow state (TCP handshake, flowbits, IP-only flags).
    detect: FlowDetect,
}

/// Bytes one flow costs in the worker's table (slab slot, index, timer), engine state
/// included: must stay within 256.
#[cfg(test)]
pub fn flow_footprint() -> usize {
    shrike_detect::flow::table::flow_footprint() + std::mem::size_of::<Flow<FlowData>>()
        - std::mem::size_of::<Flow<()>>()
}

/// What a worker needs to run detection.
pub struct WorkerDetect {
    pub engine: Arc<Engine>,
    /// fast.log, opened for appending (each buffer is one write).
    pub fast: Option<File>,
    /// Alerts so far, for the progress reporter (bumped once per batch).
    pub alerts: Arc<AtomicU64>,
}

/// A worker's detection state.
struct Detect {
    engine: Arc<Engine>,
    thread: DetectThread,
    fast: Option<File>,
    fast_buf: Vec<u8>,
    alerts: Arc<AtomicU64>,
    /// Alerts logged since the last progress bump.
    pending: u64,
}

const FAST_FLUSH_BYTES: usize = 64 * 1024;

impl Detect {
    fn flush_fast(&mut self) {
        if self.fast_buf.is_empty() {
            return;
        }
        if let Some(f) = self.fast.as_mut() {
            if let Err(e) = f.write_all(&self.fast_buf) {
                eprintln!("shrike: warning: fast.log: {e}");
                self.fast = None;
            }
        }
        self.fast_buf.clear();
    }
}

/// pcap LINKTYPE number of a link type (EVE `packet_info.linktype`).
fn linktype_number(l: LinkType) -> u32 {
    match l {
        LinkType::Null => 0,
        LinkType::Ethernet => 1,
        LinkType::Raw => 12,
        LinkType::Loop => 108,
        LinkType::LinuxSll => 113,
        LinkType::Ipv4 => 228,
        LinkType::Ipv6 => 229,
        LinkType::LinuxSll2 => 276,
        LinkType::Other(v) => v,
    }
}

/// Worker counters that are not owned by a detect component.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    pkts: u64,
    bytes: u64,
    non_ip: u64,
    flow_records: u64,
}

pub struct Worker {
    id: usize,
    flows: FlowTable<FlowData>,
    out: EveOutput,
    board: Arc<StatsBoard>,
    counters: Counters,
    ipv6: Ipv6Style,
    /// Packet time of the newest packet (the clock of file mode).
    now: Timestamp,
    last_expire_ms: u64,
    flush_every_ms: u64,
    next_flush_ms: u64,
    last_publish: Instant,
    detect: Option<Detect>,
    /// Live rule reload: the engine slot this worker follows (see [`Worker::check_engine`]).
    engine_watch: Option<crate::reload::SlotWatch>,
}

impl Worker {
    pub fn new(
        id: usize,
        cfg: &SensorConfig,
        out: EveOutput,
        board: Arc<StatsBoard>,
        _seed: u64,
    ) -> Worker {
        let flush_every_ms = (cfg.output.eve.flush_interval * 1000.0).max(1.0) as u64;
        Worker {
            id,
            flows: FlowTable::new(&cfg.detect.flow, id as u8),
            out,
            board,
            counters: Counters::default(),
            ipv6: Ipv6Style::default(),
            now: Timestamp(0),
            last_expire_ms: 0,
            flush_every_ms,
            next_flush_ms: 0,
            last_publish: Instant::now(),
            detect: None,
            engine_watch: None,
        }
    }

    /// Follow `slot` for live rule reloads (checked once per batch, never per packet).
    pub fn with_engine_slot(
        mut self,
        slot: Option<std::sync::Arc<crate::reload::EngineSlot>>,
    ) -> Worker {
        self.engine_watch = slot.map(|slot| crate::reload::SlotWatch { slot, gen: 0 });
        self
    }

    /// Live rule reload: when a newer engine was published, switch to it: a new detection
    /// context continuing this one's counters, and every flow's detection state rebound
    /// (flowbits/flowints by name, IP-only flags cleared; see `shrike_detect::engine::reload`).
    /// One atomic load when nothing changed.
    pub fn check_engine(&mut self) {
        let Some(w) = self.engine_watch.as_mut() else {
            return;
        };
        let Some((gen, engine)) = w.slot.newer_than(w.gen) else {
            return;
        };
        w.gen = gen;
        if let Some(d) = self.detect.as_mut() {
            let remap = shrike_detect::engine::VarRemap::new(&d.engine, &engine);
            let old = std::mem::replace(&mut d.thread, engine.thread());
            d.thread = engine.thread_after_reload(old);
            d.engine = engine;
            self.flows
                .for_each_mut(&mut |f| f.data.detect.rebind(&remap));
        }
        w.slot.ack(self.id, gen);
    }

    /// Run detection in this worker (`None`: decode and flows only).
    pub fn with_detect(mut self, det: Option<WorkerDetect>) -> Worker {
        self.detect = det.map(|d| Detect {
            thread: d.engine.thread(),
            engine: d.engine,
            fast: d.fast,
            fast_buf: Vec::with_capacity(FAST_FLUSH_BYTES),
            alerts: d.alerts,
            pending: 0,
        });
        self
    }

    /// Process one packet (decoded by the reader).
    #[inline]
    pub fn process(&mut self, e: &Entry<PacketMeta>, data: &[u8]) {
        self.advance_clock(e.ts);
        self.counters.pkts += 1;
        self.counters.bytes += data.len() as u64;
        let m = &e.meta;
        if !m.is_ip() {
            self.counters.non_ip += 1;
            // Decoder-event rules still see packets that did not decode to IP.
            if !m.events.is_empty() {
                if let Some(d) = self.detect.as_mut() {
                    let pkt = Packet {
                        meta: m,
                        data,
                        ts: e.ts,
                    };
                    let alerts = d.engine.inspect(&pkt, None, &mut d.thread);
                    if !alerts.is_empty() {
                        let ctx = AlertContext {
                            pkt,
                            pcap_cnt: e.seq,
                            linktype: linktype_number(e.link),
                            flow: None,
                            app_proto: None,
                            app: None,
                            flow_vars: None,
                            ipv6: self.ipv6,
                        };
                        log_alerts(d, &mut self.out, &ctx);
                    }
                }
            }
            return;
        }
        let (key, dir) = FlowKey::from_meta(m);
        let tcp = if m.proto == 6 { m.tcp_flags } else { 0 };
        let (out, ipv6, counters) = (&mut self.out, self.ipv6, &mut self.counters);
        let (h, _created) = self.flows.packet(
            e.hash,
            key,
            dir,
            e.ts,
            data.len() as u32,
            tcp,
            FlowData::default,
            &mut |f, r| {
                counters.flow_records += 1;
                write_flow(out, &f, r, e.ts, ipv6);
            },
        );
        if let Some(flow) = self.flows.get_mut(h) {
            if m.is_icmp() {
                if let (Some(t), Some(c)) = (m.icmp_type(), m.icmp_code()) {
                    if flow.to_server(dir) {
                        flow.data.icmp.get_or_insert((t, c));
                    } else {
                        flow.data.icmp_reply.get_or_insert((t, c));
                    }
                }
            }
            if let Some(d) = self.detect.as_mut() {
                let to_server = flow.to_server(dir);
                let pkt = Packet {
                    meta: m,
                    data,
                    ts: e.ts,
                };
                let input = FlowInput {
                    state: &mut flow.data.detect,
                    to_server,
                    pkts_toserver: flow.pkts[0],
                    pkts_toclient: flow.pkts[1],
                    tcp_established: None,
                    app: None,
                };
                let alerted = !d
                    .engine
                    .inspect(&pkt, Some(input), &mut d.thread)
                    .is_empty();
                if alerted || d.thread.tagged() {
                    flow.data.alerted |= alerted;
                    let ctx = AlertContext {
                        pkt,
                        pcap_cnt: e.seq,
                        linktype: linktype_number(e.link),
                        flow: Some(alert_flow(flow, to_server)),
                        app_proto: None,
                        app: None,
                        flow_vars: flow.data.detect.vars(),
                        ipv6: self.ipv6,
                    };
                    log_alerts(d, &mut self.out, &ctx);
                }
            }
        }
    }

    /// No packet for a while (live capture): let the timers run on the wall clock.
    pub fn idle(&mut self, now: Timestamp) {
        self.advance_clock(now);
    }

    /// Packet time moves on: run the flow timeouts and the EVE flush timer.
    #[inline]
    fn advance_clock(&mut self, ts: Timestamp) {
        if ts <= self.now {
            return;
        }
        self.now = ts;
        let now_ms = ts.as_millis();
        if now_ms != self.last_expire_ms {
            self.last_expire_ms = now_ms;
            if self.flows.next_deadline_ms().is_some_and(|d| d <= now_ms) {
                let (out, ipv6, counters) = (&mut self.out, self.ipv6, &mut self.counters);
                self.flows.expire(ts, &mut |f, r| {
                    counters.flow_records += 1;
                    write_flow(out, &f, r, ts, ipv6);
                });
            }
            if now_ms >= self.next_flush_ms {
                if self.next_flush_ms != 0 {
                    self.out.flush();
                    if let Some(d) = self.detect.as_mut() {
                        d.flush_fast();
                        // Single runmode has no batches: report alerts here too.
                        if d.pending > 0 {
                            d.alerts.fetch_add(d.pending, Ordering::Relaxed);
                            d.pending = 0;
                        }
                    }
                }
                self.next_flush_ms = now_ms + self.flush_every_ms;
            }
        }
    }

    /// End of a batch: publish stats now and then (wall clock, never per packet).
    pub fn batch_done(&mut self) {
        self.check_engine();
        if let Some(d) = self.detect.as_mut() {
            if d.pending > 0 {
                d.alerts.fetch_add(d.pending, Ordering::Relaxed);
                d.pending = 0;
            }
        }
        if self.last_publish.elapsed() >= Duration::from_millis(500) {
            self.publish();
        }
    }

    fn publish(&mut self) {
        self.last_publish = Instant::now();
        let mut s = Snapshot::default();
        self.flows.stats.visit(&mut |k, v| s.add(k, v));
        s.add("shrike.worker.pkts", self.counters.pkts);
        s.add("shrike.worker.bytes", self.counters.bytes);
        s.add("shrike.worker.flow_records", self.counters.flow_records);
        // Records written and dropped by type (not EVE stats names: summary and -v only).
        self.out
            .stats()
            .visit(&mut |k, v| s.add(&format!("shrike.{k}"), v));
        if let Some(d) = &self.detect {
            d.thread.stats.visit(&mut |k, v| s.add(k, v));
        }
        self.board.publish(self.id, s, self.now.0);
    }

    /// End of input: every remaining flow is logged (reason "shutdown"), output is closed.
    pub fn finish(mut self) {
        // Off the packet path now: wait for the writer rather than drop flow records.
        self.out.block_all();
        let now = self.now;
        let (out, ipv6, counters) = (&mut self.out, self.ipv6, &mut self.counters);
        self.flows.drain(&mut |f, r| {
            counters.flow_records += 1;
            write_flow(out, &f, r, now, ipv6);
        });
        self.batch_done();
        if let Some(d) = self.detect.as_mut() {
            d.flush_fast();
        }
        self.publish();
        let _ = self.out.close();
    }
}

/// The flow part of an alert record.
fn alert_flow(f: &Flow<FlowData>, to_server: bool) -> AlertFlowInfo {
    let v6 = f.key.ip_version == 6;
    let client_lo = f.client == Direction::LoToHi;
    let (c, s, cp, sp) = if client_lo {
        (&f.key.lo_addr, &f.key.hi_addr, f.key.lo_port, f.key.hi_port)
    } else {
        (&f.key.hi_addr, &f.key.lo_addr, f.key.hi_port, f.key.lo_port)
    };
    AlertFlowInfo {
        flow_id: f.id,
        to_server,
        pkts_toserver: f.pkts[0],
        pkts_toclient: f.pkts[1],
        bytes_toserver: f.bytes[0],
        bytes_toclient: f.bytes[1],
        start_ns: f.first_ts.0,
        client: ip_of(c, v6),
        server: ip_of(s, v6),
        ports: matches!(f.key.proto, 6 | 17 | 132).then_some((cp, sp)),
    }
}

/// Write the logged alerts of the last inspected packet to EVE and fast.log, and the packet
/// itself when a `tag` covers it.
fn log_alerts(d: &mut Detect, out: &mut EveOutput, ctx: &AlertContext<'_>) {
    if d.thread.tagged() && d.engine.config().alert.tagged_packets {
        if let Some(mut rec) = out.record(EventKind::Other) {
            write_eve_tagged_packet(&mut rec, ctx);
            let _ = rec.commit();
        }
    }
    for a in d.thread.alerts() {
        if !a.log {
            continue;
        }
        d.pending += 1;
        if let Some(mut rec) = out.record(EventKind::Alert) {
            write_eve_alert(&mut rec, &d.engine, a, ctx);
            let _ = rec.commit();
        }
        if d.fast.is_some() {
            write_fast_alert(&mut d.fast_buf, &d.engine, a, ctx);
        }
    }
    if d.fast_buf.len() >= FAST_FLUSH_BYTES {
        d.flush_fast();
    }
}

fn ip_of(addr: &[u8; 16], v6: bool) -> IpAddr {
    if v6 {
        IpAddr::from(*addr)
    } else {
        IpAddr::from([addr[0], addr[1], addr[2], addr[3]])
    }
}

/// Write the EVE `flow` record of a flow leaving the table.
fn write_flow(
    out: &mut EveOutput,
    f: &Flow<FlowData>,
    reason: EndReason,
    now: Timestamp,
    ipv6: Ipv6Style,
) {
    let Some(mut rec) = out.record(EventKind::Flow) else {
        return;
    };
    let v6 = f.key.ip_version == 6;
    let client_lo = f.client == Direction::LoToHi;
    let (src, dst, sp, dp) = if client_lo {
        (&f.key.lo_addr, &f.key.hi_addr, f.key.lo_port, f.key.hi_port)
    } else {
        (&f.key.hi_addr, &f.key.lo_addr, f.key.hi_port, f.key.lo_port)
    };
    let proto = f.key.proto;
    let tcp = (proto == 6).then(|| TcpFlowInfo {
        flags: f.tcp_flags[0] | f.tcp_flags[1],
        flags_ts: f.tcp_flags[0],
        flags_tc: f.tcp_flags[1],
        ..TcpFlowInfo::default()
    });
    let icmp = f.data.icmp.map(|(t, c)| FlowIcmp {
        icmp_type: t,
        icmp_code: c,
        response: f.data.icmp_reply,
    });
    let vlan: &[u16] = match f.key.vlan {
        [0, 0] => &[],
        [_, 0] => &f.key.vlan[..1],
        _ => &f.key.vlan[..],
    };
    let rec_ts = if reason == EndReason::Shutdown {
        now.max(f.last_ts)
    } else {
        now
    };
    let r = FlowRecord {
        timestamp_ns: rec_ts.0,
        flow_id: f.id,
        in_iface: None,
        vlan,
        src_ip: ip_of(src, v6),
        dest_ip: ip_of(dst, v6),
        src_port: sp,
        dest_port: dp,
        proto,
        icmp,
        spi: None,
        app_proto: None,
        app_proto_ts: None,
        app_proto_tc: None,
        pkts_toserver: f.pkts[0],
        pkts_toclient: f.pkts[1],
        bytes_toserver: f.bytes[0],
        bytes_toclient: f.bytes[1],
        start_ns: f.first_ts.0,
        end_ns: f.last_ts.0,
        emergency: false,
        state: match f.state {
            FlowState::New => EveFlowState::New,
            FlowState::Established => EveFlowState::Established,
            FlowState::Closed => EveFlowState::Closed,
        },
        reason: match reason {
            EndReason::Timeout => FlowEndReason::Timeout,
            EndReason::Forced => FlowEndReason::Forced,
            EndReason::Shutdown => FlowEndReason::Shutdown,
        },
        alerted: f.data.alerted,
        wrong_thread: false,
        action: None,
        tcp,
        ipv6,
    };
    write_flow_record(&mut rec, &r);
    let _ = rec.commit();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_flow_fits_budget() {
        let fp = flow_footprint();
        eprintln!(
            "worker flow footprint: {fp} bytes (FlowData {} bytes)",
            std::mem::size_of::<FlowData>()
        );
        assert!(fp <= 256, "flow footprint {fp} bytes");
        assert!(std::mem::size_of::<FlowData>() <= 32);
    }
}
