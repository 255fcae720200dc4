//! EVE records of the app layer: the protocol records (`http`, `dns`, `tls`) written by
//! [`crate::layer::AppLayer::log_completed`], and the app-layer objects Suricata puts in
//! an `alert` record that comes from a transaction (`tx_id`, and `http`/`dns`/`tls` beside
//! `alert`).

use shrike_output::eve::addr::Ipv6Style;
use shrike_output::eve::header::{write_eve_header, EveHeader};
use shrike_output::{EventKind, JsonWriter};

use crate::dns::eve::{self as dns_eve, DnsLogConfig};
use crate::dns::DnsTx;
use crate::http::{EveHttpOptions, HttpState};
use crate::layer::AppFlow;
use crate::registry::AppParser;
use crate::tls::eve::{self as tls_eve, TlsLogConfig};
use crate::tls::TlsState;

use shrike_output::eve::AlertFlowInfo;

/// The per-protocol options of the EVE protocol records (eve-log `types:` entries).
#[derive(Debug, Clone)]
pub struct LogOptions {
    /// `http`.
    pub http: EveHttpOptions,
    /// `dns`.
    pub dns: DnsLogConfig,
    /// `tls`.
    pub tls: TlsLogConfig,
    /// `dhcp`.
    pub dhcp: crate::dhcp::DhcpLogConfig,
    /// `ike`: `extended` (adds `exchange_type_verbose`).
    pub ike_extended: bool,
    /// `quic`: `ja4` (adds the client's JA4).
    pub quic_ja4: bool,
    /// `mqtt`.
    pub mqtt: crate::mqtt::eve::MqttLogConfig,
    /// `pgsql`.
    pub pgsql: crate::pgsql::PgsqlLogConfig,
    /// `smtp`.
    pub smtp: crate::smtp::SmtpLogConfig,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            http: EveHttpOptions {
                extended: true,
                ..EveHttpOptions::default()
            },
            dns: DnsLogConfig::default(),
            tls: TlsLogConfig::new(true, false, None),
            dhcp: crate::dhcp::DhcpLogConfig::default(),
            ike_extended: false,
            quic_ja4: false,
            mqtt: Default::default(),
            pgsql: Default::default(),
            smtp: crate::smtp::SmtpLogConfig::default(),
        }
    }
}

/// What every protocol record of one flow shares.
#[derive(Debug, Clone, Copy)]
pub struct RecordCtx<'a> {
    /// The flow.
    pub info: &'a AlertFlowInfo,
    /// Record time.
    pub ts_ns: u64,
    /// IP protocol of the flow.
    pub ip_proto: u8,
    /// EVE `pcap_cnt` (0: left out).
    pub pcap_cnt: u64,
}

impl RecordCtx<'_> {
    /// The EVE header of a record of this flow (`to_server`: the client is `src`).
    pub fn header<'b>(&'b self, event_type: &'b str, to_server: bool) -> EveHeader<'b> {
        let f = self.info;
        let (src, dst, ports) = if to_server {
            (f.client, f.server, f.ports)
        } else {
            (f.server, f.client, f.ports.map(|(a, b)| (b, a)))
        };
        EveHeader {
            timestamp_ns: self.ts_ns,
            flow_id: f.flow_id,
            pcap_cnt: self.pcap_cnt,
            src_ip: Some(src),
            dest_ip: Some(dst),
            ports,
            proto: Some(self.ip_proto),
            pkt_src: Some("wire/pcap"),
            community_id: f.community_id.as_ref().map(|c| c.as_str()),
            vlan: f.vlan_ids(),
            ipv6: Ipv6Style::Full,
            ..EveHeader::new(self.ts_ns, event_type)
        }
    }

    /// One EVE `http` record for transaction `id`.
    pub fn http(
        &self,
        out: &mut shrike_output::EveOutput,
        h: &HttpState,
        id: u64,
        opts: &EveHttpOptions,
    ) {
        if !out.wants_type("http") {
            return;
        }
        let Some(mut rec) = out.record(EventKind::Protocol) else {
            return;
        };
        write_eve_header(&mut rec, &self.header("http", true));
        rec.set_u64("tx_id", id);
        h.write_eve_json(id, opts, &mut rec);
        rec.close();
        let _ = rec.commit();
    }

    /// The EVE `fileinfo` records of HTTP transaction `id`: the response body (and a PUT
    /// request body) as a file, named by `Content-Disposition` or else the URI path.
    pub fn http_files(
        &self,
        out: &mut shrike_output::EveOutput,
        h: &HttpState,
        id: u64,
        dirs: [bool; 2],
    ) {
        self.http_files_when(out, h, id, dirs, None);
    }

    /// The `fileinfo` records of HTTP transaction `id` not written yet; with `done_in`,
    /// only of the files of that direction that ended (Suricata's file logger writes a file
    /// once it closed, on a packet of its direction, before its transaction completes: a
    /// body cut at its limit or at the stream depth).
    pub fn http_files_when(
        &self,
        out: &mut shrike_output::EveOutput,
        h: &HttpState,
        id: u64,
        dirs: [bool; 2],
        done_in: Option<crate::Dir>,
    ) {
        let emit = out.wants_type("files");
        let Some(tx) = h.tx(id) else {
            return;
        };
        for (to_server, body) in [(true, tx.request_body()), (false, tx.response_body())] {
            if !dirs[usize::from(!to_server)] {
                continue;
            }
            let dir = if to_server {
                crate::Dir::ToServer
            } else {
                crate::Dir::ToClient
            };
            for f in body.files() {
                if f.logged()
                    || done_in.is_some_and(|d| d != dir || !f.is_done())
                    || !(emit || crate::files::wants_fileinfo_file(f))
                {
                    continue;
                }
                f.set_logged();
                let Some(mut rec) = out.record(EventKind::Other) else {
                    return;
                };
                let hdr = self.header("fileinfo", to_server);
                write_eve_header(&mut rec, &hdr);
                // Suricata's `EveHttpAddMetadata`: basic and extended fields, whatever the
                // `http` record's options.
                let meta = EveHttpOptions {
                    extended: true,
                    ..EveHttpOptions::default()
                };
                h.write_eve_json(id, &meta, &mut rec);
                rec.set_str("app_proto", "http");
                rec.open_object("fileinfo");
                f.write_eve(&mut rec, id, None);
                rec.close();
                rec.close();
                crate::files::finish_fileinfo(rec, f, hdr.timestamp_ns, emit);
            }
        }
    }

    /// The EVE `dns` records of one transaction: one per query of a request, one for a
    /// response.
    pub fn dns(&self, out: &mut shrike_output::EveOutput, tx: &DnsTx, cfg: &DnsLogConfig) {
        if !out.wants_type("dns") {
            return;
        }
        if tx.request().is_some() && cfg.requests {
            for i in 0..dns_eve::query_count(tx) {
                let Some(mut rec) = out.record(EventKind::Protocol) else {
                    return;
                };
                write_eve_header(&mut rec, &self.header("dns", true));
                rec.open_object("dns");
                rec.set_u64("version", 2);
                let ok = dns_eve::write_query(&mut *rec, tx, i, cfg);
                rec.close();
                rec.close();
                if ok {
                    let _ = rec.commit();
                } else {
                    rec.abort();
                }
            }
        }
        if tx.response().is_some() && cfg.responses && dns_eve::answer_enabled(tx, cfg) {
            let Some(mut rec) = out.record(EventKind::Protocol) else {
                return;
            };
            // Suricata 7 writes both query and answer records with the flow's direction
            // (LOG_DIR_FLOW): client as `src`, server as `dest`.
            write_eve_header(&mut rec, &self.header("dns", true));
            rec.open_object("dns");
            let ok = dns_eve::write_answer(&mut *rec, tx, cfg, true);
            rec.close();
            rec.close();
            if ok {
                let _ = rec.commit();
            } else {
                rec.abort();
            }
        }
    }

    /// The EVE `tls` record of the flow.
    pub fn tls(
        &self,
        out: &mut shrike_output::EveOutput,
        t: &TlsState,
        cfg: &TlsLogConfig,
        from: crate::AppProto,
    ) {
        if !out.wants_type("tls") {
            return;
        }
        let Some(mut rec) = out.record(EventKind::Protocol) else {
            return;
        };
        write_eve_header(&mut rec, &self.header("tls", true));
        rec.open_object("tls");
        tls_eve::write_tls(&mut *rec, t, cfg);
        // The protocol before STARTTLS / HTTP CONNECT (Suricata's `from_proto`).
        if from != crate::AppProto::UNKNOWN {
            rec.set_str("from_proto", from.name());
        }
        rec.close();
        rec.close();
        let _ = rec.commit();
    }
}

/// The `"files":[...]` member of an alert from transaction `tx` of `app` on a packet going
/// `dir` (Suricata's `AlertAddFiles`: the transaction's files in that direction, as they
/// stand); `None` without files.
pub fn alert_files(app: &AppFlow, tx: u64, dir: crate::Dir) -> Option<Vec<u8>> {
    let p: &dyn AppParser = app.parser()?;
    let mut w = JsonWriter::with_capacity(256);
    let mut any = false;
    p.files(tx, dir, &mut |f| {
        if f.is_pruned() {
            return;
        }
        if !any {
            w.start_object();
            w.open_array("files");
            any = true;
        }
        w.start_object();
        f.write_eve(&mut w, tx, None);
        w.close();
    });
    if !any {
        return None;
    }
    w.close();
    w.close();
    let b = w.into_inner();
    b.get(1..b.len().saturating_sub(1)).map(<[u8]>::to_vec)
}

/// The members an alert from transaction `tx` of `app` carries beside `alert`
/// (`"http":{...}`, `"dns":{...}` or `"tls":{...}`), as JSON text without the enclosing
/// braces; `None` when there is nothing to log.
pub fn alert_app_members(app: &AppFlow, tx: u64) -> Option<Vec<u8>> {
    let p: &dyn AppParser = app.parser()?;
    let mut w = JsonWriter::with_capacity(512);
    w.start_object();
    if !p.alert_members(tx, &mut w) {
        return None;
    }
    w.close();
    let b = w.into_inner();
    let inner = b.get(1..b.len().saturating_sub(1))?;
    (!inner.is_empty()).then(|| inner.to_vec())
}
