//! App-layer events for EVE `anomaly` records (Suricata's `applayer` anomaly type).
//!
//! Suricata's anomaly transaction logger runs on every packet that updated the app layer (and
//! on flow-end pseudo packets); for each transaction not yet logged by the protocol's own
//! logger it reports the events raised since its last run, once each, with the transaction's
//! id and `layer: proto_parser`. [`AppFlow::drain_anomalies`] is that step: the worker calls it
//! after the packet's app-layer work and before the protocol records are written
//! ([`super::layer::AppLayer::log_completed`]), and writes one record per [`AppAnomaly`].
//!
//! Event names are the parsers' own: the C parsers of Suricata 7 (HTTP/libhtp, TLS) name
//! them in upper case (`UNABLE_TO_MATCH_RESPONSE_TO_REQUEST`), the Rust ones (DNS) in lower
//! case (`z_flag_set`); [`AppAnomaly::eve_name`] gives the EVE form without allocating.

use super::layer::AppFlow;

/// Longest event name [`AppAnomaly::eve_name`] writes (longer names are cut).
pub const EVENT_NAME_MAX: usize = 64;

/// One app-layer event to report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppAnomaly {
    /// The transaction it was raised on (EVE `tx_id`).
    pub tx_id: u64,
    /// The rule-keyword name (`app-layer-event:<proto>.<name>`), lower case.
    pub name: &'static str,
    /// Suricata's EVE name is the upper-case form (HTTP and TLS events).
    pub upper: bool,
}

impl AppAnomaly {
    /// Suricata's `layer` for transaction events.
    pub const LAYER: &'static str = "proto_parser";

    /// The EVE `anomaly.event` text, written into `buf` when it must be upper-cased.
    pub fn eve_name<'b>(&self, buf: &'b mut [u8; EVENT_NAME_MAX]) -> &'b str {
        if !self.upper {
            return self.name;
        }
        let n = self.name.len().min(EVENT_NAME_MAX);
        let src = self.name.as_bytes().get(..n).unwrap_or_default();
        for (d, s) in buf.iter_mut().zip(src) {
            *d = s.to_ascii_uppercase();
        }
        // Names are ASCII, so upper-casing keeps them UTF-8.
        std::str::from_utf8(buf.get(..n).unwrap_or_default()).unwrap_or("")
    }
}

impl AppFlow {
    /// Whether something reached the flow's app layer since the last
    /// [`AppFlow::drain_anomalies`] (otherwise it has nothing to report).
    #[inline]
    pub fn anomalies_pending(&self) -> bool {
        self.anomaly_gen != self.gen || self.detect_events != 0
    }

    /// Calls `f` for every app-layer event raised since the last call on a transaction the
    /// protocol logger has not logged yet (each event once per transaction). Cheap when
    /// nothing reached the flow's app layer since the last call.
    pub fn drain_anomalies(&mut self, f: &mut dyn FnMut(AppAnomaly)) {
        if !self.anomalies_pending() {
            return;
        }
        self.anomaly_gen = self.gen;
        let from = self.logged_before();
        let flow_logged = self.flow_logged();
        if let Some(p) = self.state.as_deref_mut() {
            p.drain_events(from, flow_logged, f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::{AppLayer, FlowCtx};
    use crate::Dir;

    fn ctx(dp: u16, proto: u8) -> FlowCtx {
        FlowCtx {
            ip_proto: proto,
            client_port: 40000,
            server_port: dp,
            ts_ns: 0,
            midstream: false,
            bail_limits: [0; 2],
            held: [0; 2],
            addrs: [[0; 16]; 2],
        }
    }

    fn drain(f: &mut Option<Box<AppFlow>>) -> Vec<(u64, String)> {
        let mut v = Vec::new();
        if let Some(f) = f.as_deref_mut() {
            f.drain_anomalies(&mut |a| {
                let mut buf = [0u8; EVENT_NAME_MAX];
                v.push((a.tx_id, a.eve_name(&mut buf).to_string()));
            });
        }
        v
    }

    #[test]
    fn http_events_reported_once_in_upper_case() {
        let mut al = AppLayer::new();
        let mut f = None;
        let c = ctx(80, 6);
        // A response before any request: libhtp's UNABLE_TO_MATCH_RESPONSE_TO_REQUEST.
        al.on_tcp_data(&mut f, &c, Dir::ToClient, b"HTTP/1.1 200 OK\r\n");
        al.on_tcp_data(
            &mut f,
            &c,
            Dir::ToServer,
            b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
        );
        al.on_tcp_data(&mut f, &c, Dir::ToClient, b"Content-Length: 0\r\n\r\n");
        let got = drain(&mut f);
        assert!(
            got.contains(&(0, "UNABLE_TO_MATCH_RESPONSE_TO_REQUEST".to_string())),
            "{got:?}"
        );
        // Nothing new: nothing reported again, even after more data.
        assert!(drain(&mut f).is_empty());
        al.on_tcp_data(
            &mut f,
            &c,
            Dir::ToServer,
            b"GET /b HTTP/1.1\r\nHost: a\r\n\r\n",
        );
        assert!(drain(&mut f).is_empty());
    }

    #[test]
    fn http_event_on_a_later_transaction() {
        let mut al = AppLayer::new();
        let mut f = None;
        let c = ctx(80, 6);
        al.on_tcp_data(
            &mut f,
            &c,
            Dir::ToServer,
            b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
        );
        assert!(drain(&mut f).is_empty());
        // The second request has no Host header (HTTP/1.1): MISSING_HOST_HEADER on tx 1,
        // twice as Suricata (header data flushed, request complete).
        al.on_tcp_data(
            &mut f,
            &c,
            Dir::ToServer,
            b"GET /x HTTP/1.1\r\nA: b\r\n\r\n",
        );
        let got = drain(&mut f);
        assert_eq!(
            got,
            vec![
                (1, "MISSING_HOST_HEADER".to_string()),
                (1, "MISSING_HOST_HEADER".to_string())
            ]
        );
    }

    #[test]
    fn dns_events_lower_case_per_transaction() {
        // Query with the Z flag set.
        let q = [
            0x12, 0x34, 0x01, 0x40, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 1, b'b', 0, 0, 1, 0, 1,
        ];
        let mut al = AppLayer::new();
        let mut f = None;
        let c = ctx(53, 17);
        al.on_udp(&mut f, &c, Dir::ToServer, &q);
        assert_eq!(drain(&mut f), vec![(0, "z_flag_set".to_string())]);
        assert!(drain(&mut f).is_empty());
        al.on_udp(&mut f, &c, Dir::ToServer, &q);
        assert_eq!(drain(&mut f), vec![(1, "z_flag_set".to_string())]);
    }

    #[test]
    fn dns_event_only_transactions_are_not_reported() {
        // A response sent to the server: not_request, with no transaction to carry it.
        let r = [
            0x12, 0x34, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 0, 0, 1, 0, 1,
        ];
        let mut al = AppLayer::new();
        let mut f = None;
        let c = ctx(53, 17);
        let q = [
            0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 0, 0, 1, 0, 1,
        ];
        al.on_udp(&mut f, &c, Dir::ToServer, &q);
        assert!(drain(&mut f).is_empty());
        al.on_udp(&mut f, &c, Dir::ToServer, &r);
        let dns = f.as_ref().unwrap().dns().unwrap();
        assert!(
            dns.txs().any(|t| !t.events.is_empty()),
            "the parser kept the event"
        );
        assert!(drain(&mut f).is_empty());
        // Only the stray response: the flow turns round (Suricata's probing parser sets
        // `rdir`) and it is an answer, without event.
        let mut h = None;
        assert!(al.on_udp(&mut h, &c, Dir::ToServer, &r), "reversed");
        let dns = h.as_ref().unwrap().dns().unwrap();
        assert!(dns
            .txs()
            .any(|t| t.message().is_some() && t.events.is_empty()));
        assert!(drain(&mut h).is_empty());
    }

    #[test]
    fn eve_name_cuts_overlong_names() {
        let a = AppAnomaly {
            tx_id: 0,
            name: "request_line_leading_whitespace",
            upper: true,
        };
        let mut buf = [0u8; EVENT_NAME_MAX];
        assert_eq!(a.eve_name(&mut buf), "REQUEST_LINE_LEADING_WHITESPACE");
        let lower = AppAnomaly { upper: false, ..a };
        assert_eq!(lower.eve_name(&mut buf), "request_line_leading_whitespace");
    }
}
