//! A worker's EVE `anomaly` records (Suricata's eve-log `anomaly` logger): the decoder and
//! stream events of each packet, and the app-layer events of its flow, written into the
//! worker's own EVE output without allocating.
//!
//! Which anomalies are reported follows `output.eve.anomaly.types` (Suricata's defaults:
//! app-layer on, decode and stream off). As in Suricata, transaction events are reported only
//! while the protocol's own records are logged (its transaction logger drives them).

use shrike_app::anomaly::{AppAnomaly, EVENT_NAME_MAX};
use shrike_app::layer::AppFlow;
use shrike_detect::output::{packet_header, write_flow_vars, AlertContext};
use shrike_detect::Engine;
use shrike_output::eve::anomaly::{write_anomaly_record, Anomaly, AnomalyRecord};
use shrike_output::{EveConfig, EveOutput, EventKind, JsonWriter};
use shrike_packet::decode::{DecodeEvent, EventSet};
use shrike_stream::StreamEventSet;

/// What a worker reports as `anomaly` records (fixed at start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AnomalyLog {
    decode: bool,
    stream: bool,
    applayer: bool,
    /// Transaction (`proto_parser`) events too: Suricata logs those only while a protocol
    /// record type is on (its transaction loggers run), protocol-detection ones always.
    applayer_tx: bool,
    packethdr: bool,
    metadata: bool,
}

/// Longest `decoder.<name>` event name.
const DECODE_NAME_MAX: usize = 96;

/// `decoder.<name>`, Suricata's name of a decoder event in `anomaly` records.
fn decoder_name(buf: &mut [u8; DECODE_NAME_MAX], e: DecodeEvent) -> &str {
    const PREFIX: &[u8] = b"decoder.";
    let name = e.name().as_bytes();
    let n = (PREFIX.len() + name.len()).min(DECODE_NAME_MAX);
    for (d, s) in buf.iter_mut().zip(PREFIX.iter().chain(name)) {
        *d = *s;
    }
    std::str::from_utf8(buf.get(..n).unwrap_or_default()).unwrap_or("")
}

impl AnomalyLog {
    /// The settings of `cfg` for a worker writing into `out` (nothing is reported when
    /// `anomaly` is not among the output's record types).
    pub fn new(cfg: &EveConfig, out: &EveOutput) -> Self {
        let on = out.wants(EventKind::Anomaly);
        let t = cfg.anomaly.types;
        AnomalyLog {
            decode: on && t.decode,
            stream: on && t.stream,
            applayer: on && t.applayer,
            applayer_tx: on && t.applayer && out.wants(EventKind::Protocol),
            packethdr: cfg.anomaly.packet_header(),
            metadata: cfg.metadata,
        }
    }

    /// Whether decoder or stream events are reported.
    pub fn wants_packet(&self) -> bool {
        self.decode || self.stream
    }

    /// eve-log `metadata`: records carry the flow's variables.
    pub fn metadata(&self) -> bool {
        self.metadata
    }

    /// Whether app-layer events are reported.
    pub fn wants_app(&self) -> bool {
        self.applayer
    }

    /// One record per decoder event (`decode`) and stream event (`stream`) of the packet of
    /// `ctx`, decoder events first, as Suricata raises them.
    pub fn packet(
        &self,
        out: &mut EveOutput,
        ctx: &AlertContext<'_>,
        decode: &EventSet,
        stream: StreamEventSet,
        engine: Option<&Engine>,
    ) {
        if !self.wants_packet() || (decode.is_empty() && stream.is_empty()) {
            return;
        }
        let packet = self.packethdr.then_some((ctx.pkt.data, ctx.linktype));
        for e in decode.iter() {
            // Suricata 7 numbers `too_many_layers` past its last packet decoder event, so its
            // anomaly logger reports it with the stream events.
            let as_stream = e == DecodeEvent::TooManyLayers;
            if !(if as_stream { self.stream } else { self.decode }) {
                continue;
            }
            let mut buf = [0u8; DECODE_NAME_MAX];
            let name = decoder_name(&mut buf, e);
            let a = if as_stream {
                Anomaly::Stream(name)
            } else {
                Anomaly::Decode(name)
            };
            self.write(out, ctx, engine, None, a, packet);
        }
        if self.stream {
            for e in stream.iter() {
                self.write(
                    out,
                    ctx,
                    engine,
                    None,
                    Anomaly::Stream(e.stats_name()),
                    packet,
                );
            }
        }
    }

    /// One record per app-layer event raised on the flow's transactions since the last call,
    /// reported on the packet of `ctx` (`ctx.app` is not used).
    pub fn app(
        &self,
        out: &mut EveOutput,
        ctx: &AlertContext<'_>,
        app: &mut AppFlow,
        engine: Option<&Engine>,
    ) {
        if !self.applayer {
            return;
        }
        let app_proto = app.proto.name();
        // Protocol-detection events (Suricata's packet app-layer events, `proto_detect`).
        let det = app.take_detect_events();
        for &(bit, event) in shrike_app::layer::PACKET_EVENTS {
            if det & bit != 0 {
                let anomaly = Anomaly::AppLayer {
                    app_proto,
                    event,
                    layer: "proto_detect",
                };
                self.write(out, ctx, engine, None, anomaly, None);
            }
        }
        if !self.applayer_tx {
            return;
        }
        app.drain_anomalies(&mut |a: AppAnomaly| {
            let mut buf = [0u8; EVENT_NAME_MAX];
            let event = a.eve_name(&mut buf);
            let anomaly = Anomaly::AppLayer {
                app_proto,
                event,
                layer: AppAnomaly::LAYER,
            };
            self.write(out, ctx, engine, Some(a.tx_id), anomaly, None);
        });
    }

    fn write(
        &self,
        out: &mut EveOutput,
        ctx: &AlertContext<'_>,
        engine: Option<&Engine>,
        tx_id: Option<u64>,
        anomaly: Anomaly<'_>,
        packet: Option<(&[u8], u32)>,
    ) {
        let Some(mut rec) = out.record(EventKind::Anomaly) else {
            return;
        };
        let vars = ctx.flow_vars.zip(engine).filter(|_| self.metadata);
        let md = |w: &mut JsonWriter| vars.is_some_and(|(v, e)| write_flow_vars(w, e, v));
        let r = AnomalyRecord {
            header: packet_header(ctx, "anomaly"),
            metadata: vars
                .is_some()
                .then_some(&md as &dyn Fn(&mut JsonWriter) -> bool),
            tx_id,
            anomaly,
            packet,
        };
        write_anomaly_record(&mut rec, &r);
        let _ = rec.commit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoder_names_carry_the_prefix() {
        let mut buf = [0u8; DECODE_NAME_MAX];
        assert_eq!(
            decoder_name(&mut buf, DecodeEvent::Ipv4TruncPkt),
            "decoder.ipv4.trunc_pkt"
        );
        for e in DecodeEvent::ALL {
            let n = decoder_name(&mut buf, *e).to_string();
            assert_eq!(n, format!("decoder.{}", e.name()));
        }
    }

    #[test]
    fn settings_follow_types_and_record_kinds() {
        let out = |types: Option<Vec<&str>>| {
            let cfg = EveConfig {
                types: types.map(|t| t.into_iter().map(String::from).collect()),
                ..EveConfig::default()
            };
            let path =
                std::env::temp_dir().join(format!("shrike-anomaly-{}.json", std::process::id()));
            let file = shrike_output::sink::open_append(&path).unwrap();
            let mut o = EveOutput::direct(4096, shrike_output::FileWriter::from_file(file, path));
            o.set_enabled(cfg.enabled_kinds());
            (cfg, o)
        };
        // Default: every record type; app-layer anomalies only.
        let (cfg, o) = out(None);
        let a = AnomalyLog::new(&cfg, &o);
        assert!(a.wants_app() && !a.wants_packet());
        // `anomaly` not listed: nothing.
        let (cfg, o) = out(Some(vec!["alert", "http"]));
        assert_eq!(
            AnomalyLog::new(&cfg, &o),
            AnomalyLog::default().with_meta(true)
        );
        // `anomaly` without a protocol logger: no transaction events (Suricata's tx logger
        // does not run) but protocol-detection ones (packet events), packet events as
        // configured.
        let (mut cfg, o) = out(Some(vec!["anomaly"]));
        cfg.anomaly.types.decode = true;
        cfg.anomaly.packethdr = true;
        let a = AnomalyLog::new(&cfg, &o);
        assert!(a.wants_app() && !a.applayer_tx);
        assert!(a.wants_packet() && a.packethdr && !a.stream);
    }

    impl AnomalyLog {
        fn with_meta(mut self, m: bool) -> Self {
            self.metadata = m;
            self
        }
    }
}
