//! EVE `dns` records in Suricata 7's version-2 format, and the `alert.dns` object.
//!
//! The writer is abstracted by [`JsonOut`], whose methods mirror `shrike_output::JsonWriter`
//! (a one-line `impl` wires it); values are written in Suricata's key order.

use super::consts::{rcode_name, rrtype_from_name, rrtype_name};
use super::message::{DnsMessage, RData, Record};
use super::DnsTx;

pub use crate::common::json::JsonOut;

/// `outputs.eve-log.types.dns` options (version 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsLogConfig {
    /// Log requests (`requests`).
    pub requests: bool,
    /// Log responses (`responses`).
    pub responses: bool,
    /// `formats` includes `detailed` (the `answers` array).
    pub detailed: bool,
    /// `formats` includes `grouped` (the `grouped` object).
    pub grouped: bool,
    /// `types`: record types to log by query type; `None` logs all.
    pub types: Option<Vec<u16>>,
}

impl Default for DnsLogConfig {
    fn default() -> Self {
        DnsLogConfig {
            requests: true,
            responses: true,
            detailed: true,
            grouped: true,
            types: None,
        }
    }
}

impl DnsLogConfig {
    /// Set `types` from names as written in the YAML (`a`, `aaaa`, `mx` …); unknown names are
    /// returned as the error.
    pub fn set_types<'a>(
        &mut self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), String> {
        let mut v = Vec::new();
        for n in names {
            v.push(rrtype_from_name(n).ok_or_else(|| n.to_string())?);
        }
        self.types = Some(v);
        Ok(())
    }

    fn type_enabled(&self, t: u16) -> bool {
        self.types.as_ref().is_none_or(|v| v.contains(&t))
    }
}

fn rrtype_str(t: u16, f: impl FnOnce(&str)) {
    match rrtype_name(t) {
        Some(n) => f(n),
        None => f(&t.to_string()),
    }
}

/// Format address bytes like Suricata: dotted quad for 4 bytes, eight full 4-hex-digit groups
/// for 16 bytes, empty otherwise.
pub fn format_addr(a: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(40);
    match a.len() {
        4 => {
            let _ = write!(s, "{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
        }
        16 => {
            for (i, c) in a.chunks_exact(2).enumerate() {
                if i > 0 {
                    s.push(':');
                }
                let _ = write!(s, "{:02x}{:02x}", c[0], c[1]);
            }
        }
        _ => {}
    }
    s
}

/// Number of query records [`write_query`] would write for this transaction.
pub fn query_count(tx: &DnsTx) -> usize {
    tx.request().map_or(0, |m| m.queries.len())
}

/// Write the body of the `dns` object of query record `i` (one EVE record per query):
/// `type`, `id`, `rrname`, `rrtype`, `tx_id`, `z`, `opcode`. The caller opens `"dns":{`
/// and writes `"version":2` first (as Suricata's C side). Returns `false` (nothing written)
/// when there is no such query or its type is filtered out.
pub fn write_query(w: &mut dyn JsonOut, tx: &DnsTx, i: usize, cfg: &DnsLogConfig) -> bool {
    let Some(m) = tx.request() else { return false };
    let Some(q) = m.queries.get(i) else {
        return false;
    };
    if !cfg.type_enabled(q.rrtype) {
        return false;
    }
    w.set_str("type", "query");
    w.set_u64("id", m.header.id as u64);
    w.set_bytes("rrname", m.bytes(q.name));
    rrtype_str(q.rrtype, |s| w.set_str("rrtype", s));
    w.set_u64("tx_id", tx.id);
    if m.header.z() {
        w.set_bool("z", true);
    }
    w.set_u64("opcode", m.header.opcode() as u64);
    true
}

/// Whether [`write_answer`] would log this transaction.
pub fn answer_enabled(tx: &DnsTx, cfg: &DnsLogConfig) -> bool {
    tx.response()
        .is_some_and(|m| m.queries.iter().any(|q| cfg.type_enabled(q.rrtype)))
}

/// Write the body of an answer record's `dns` object: `version`, `type`, `id`, `flags`,
/// the flag booleans, `opcode`, the first query's `rrname`/`rrtype`, `rcode`, then `answers`
/// (detailed), `grouped` and `authorities`. `with_answers == false` leaves out `answers` and
/// `grouped` (the `alert.dns.answer` form). Returns `false` (nothing written) when disabled.
pub fn write_answer(
    w: &mut dyn JsonOut,
    tx: &DnsTx,
    cfg: &DnsLogConfig,
    with_answers: bool,
) -> bool {
    if !answer_enabled(tx, cfg) {
        return false;
    }
    let Some(m) = tx.response() else { return false };
    let h = &m.header;
    w.set_u64("version", 2);
    w.set_str("type", "answer");
    w.set_u64("id", h.id as u64);
    w.set_str("flags", &format!("{:x}", h.flags));
    for (bit, key) in [
        (0x8000, "qr"),
        (0x0400, "aa"),
        (0x0200, "tc"),
        (0x0100, "rd"),
        (0x0080, "ra"),
        (0x0040, "z"),
    ] {
        if h.flags & bit != 0 {
            w.set_bool(key, true);
        }
    }
    w.set_u64("opcode", h.opcode() as u64);
    if let Some(q) = m.queries.first() {
        w.set_bytes("rrname", m.bytes(q.name));
        rrtype_str(q.rrtype, |s| w.set_str("rrtype", s));
    }
    match rcode_name(h.flags) {
        Some(r) => w.set_str("rcode", r),
        None => w.set_str("rcode", &(h.flags & 0xf).to_string()),
    }
    if with_answers && !m.answers.is_empty() {
        if cfg.detailed {
            w.open_array("answers");
            for a in &m.answers {
                w.start_object();
                write_record(w, m, a);
                w.close();
            }
            w.close();
        }
        if cfg.grouped {
            write_grouped(w, m);
        }
    }
    if !m.authorities.is_empty() {
        w.open_array("authorities");
        for a in &m.authorities {
            w.start_object();
            write_record(w, m, a);
            w.close();
        }
        w.close();
    }
    true
}

/// One detailed record: `rrname`, `rrtype`, `ttl` and the data (`rdata`, `soa`, `sshfp`,
/// `srv`; nothing for other types, as Suricata 7).
fn write_record(w: &mut dyn JsonOut, m: &DnsMessage, r: &Record) {
    w.set_bytes("rrname", m.bytes(r.name));
    rrtype_str(r.rrtype, |s| w.set_str("rrtype", s));
    w.set_u64("ttl", r.ttl as u64);
    match r.data {
        RData::A(s) | RData::Aaaa(s) => w.set_str("rdata", &format_addr(m.bytes(s))),
        RData::Cname(s) | RData::Ns(s) | RData::Ptr(s) | RData::Txt(s) | RData::Null(s) => {
            w.set_bytes("rdata", m.bytes(s))
        }
        RData::Mx { exchange, .. } => w.set_bytes("rdata", m.bytes(exchange)),
        RData::Soa(_) => {
            w.open_object("soa");
            write_data_object(w, m, &r.data);
            w.close();
        }
        RData::Sshfp { .. } => {
            w.open_object("sshfp");
            write_data_object(w, m, &r.data);
            w.close();
        }
        RData::Srv { .. } => {
            w.open_object("srv");
            write_data_object(w, m, &r.data);
            w.close();
        }
        RData::Opt(_) | RData::Svcb { .. } | RData::Unknown(_) => {}
    }
}

/// The members of the SOA / SSHFP / SRV objects.
fn write_data_object(w: &mut dyn JsonOut, m: &DnsMessage, d: &RData) {
    match *d {
        RData::Soa(s) => {
            w.set_bytes("mname", m.bytes(s.mname));
            w.set_bytes("rname", m.bytes(s.rname));
            w.set_u64("serial", s.serial as u64);
            w.set_u64("refresh", s.refresh as u64);
            w.set_u64("retry", s.retry as u64);
            w.set_u64("expire", s.expire as u64);
            w.set_u64("minimum", s.minimum as u64);
        }
        RData::Sshfp {
            algo,
            fp_type,
            fingerprint,
        } => {
            w.set_str(
                "fingerprint",
                &crate::common::hex::colon_hex(m.bytes(fingerprint), false),
            );
            w.set_u64("algo", algo as u64);
            w.set_u64("type", fp_type as u64);
        }
        RData::Srv {
            priority,
            weight,
            port,
            target,
        } => {
            w.set_u64("priority", priority as u64);
            w.set_u64("weight", weight as u64);
            w.set_u64("port", port as u64);
            w.set_bytes("name", m.bytes(target));
        }
        _ => {}
    }
}

/// `grouped`: per record type (in order of first appearance), the data of each answer.
fn write_grouped(w: &mut dyn JsonOut, m: &DnsMessage) {
    let groupable =
        |d: &RData| !matches!(d, RData::Opt(_) | RData::Svcb { .. } | RData::Unknown(_));
    let mut types: Vec<u16> = Vec::new();
    for a in m.answers.iter().filter(|a| groupable(&a.data)) {
        if !types.contains(&a.rrtype) {
            types.push(a.rrtype);
        }
    }
    if types.is_empty() {
        return;
    }
    w.open_object("grouped");
    for t in types {
        rrtype_str(t, |s| w.open_array(s));
        for a in m
            .answers
            .iter()
            .filter(|a| a.rrtype == t && groupable(&a.data))
        {
            match a.data {
                RData::A(s) | RData::Aaaa(s) => w.str(&format_addr(m.bytes(s))),
                RData::Cname(s) | RData::Ns(s) | RData::Ptr(s) | RData::Txt(s) | RData::Null(s) => {
                    w.bytes(m.bytes(s))
                }
                RData::Mx { exchange, .. } => w.bytes(m.bytes(exchange)),
                _ => {
                    w.start_object();
                    write_data_object(w, m, &a.data);
                    w.close();
                }
            }
        }
        w.close();
    }
    w.close();
}

/// Write the `alert.dns` object's members (the caller opens `"dns":{`): `version`, then
/// `query` (array of query objects) for a request or `answer` (answer object without
/// `answers`/`grouped`) for a response, as Suricata 7.
pub fn write_alert(w: &mut dyn JsonOut, tx: &DnsTx) {
    let all = DnsLogConfig::default();
    w.set_u64("version", 2);
    if tx.request().is_some() {
        w.open_array("query");
        for i in 0..query_count(tx) {
            w.start_object();
            write_query(w, tx, i, &all);
            w.close();
        }
        w.close();
    }
    if tx.response().is_some() {
        w.open_object("answer");
        write_answer(w, tx, &all, false);
        w.close();
    }
}
