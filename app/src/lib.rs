//! shrike-app: the application layer. Protocol detection, the parsers (one folder per
//! protocol: HTTP/1.x, DNS, TLS), their transactions and the EVE records they write, fed with reassembled stream data (TCP) or
//! datagrams (UDP), exposing per-transaction buffers to the detection engine and records to EVE.
//!
//! Contract shared by every protocol module:
//! * a per-flow parser state, created when the protocol is detected on the flow, fed with
//!   `parse(dir, data)` in order per direction (TCP: the reassembled stream; UDP: one datagram),
//!   and told about gaps with `gap(dir, len)`;
//! * transactions with a per-direction progress, numbered from 0 per flow;
//! * sticky buffers read through [`BufferId`]: single buffers return one slice, multi-buffers
//!   (e.g. `dns.query` with several questions, `tls.certs`) call the visitor once per item;
//! * memory bounded by configured limits, every limit hit counted; malformed input sets
//!   app-layer events (Suricata's names) and never panics.

#![forbid(unsafe_code)]

pub mod anomaly;
pub mod bittorrent_dht;
pub mod common;
pub mod dcerpc;
pub mod dhcp;
pub mod dnp3;
pub mod dns;
pub mod enip;
pub mod eve_config;
pub mod file_range;
pub mod files;
pub mod frames;
pub mod ftp;
pub mod http;
pub mod http2;
pub mod ike;
pub mod imap;
pub mod krb5;
pub mod layer;
pub mod log;
pub mod modbus;
pub mod mqtt;
pub mod nfs;
pub mod ntp;
pub mod pgsql;
pub mod quic;
pub mod rdp;
pub mod registry;
pub mod rfb;
pub mod sip;
pub mod smb;
pub mod smtp;
pub mod snmp;
pub mod ssh;
pub mod telnet;
pub mod tftp;
pub mod tls;

pub use shrike_flow::Dir;

/// An application protocol: unknown, failed, or one of the registry's
/// ([`registry::PROTOCOLS`]); names as Suricata's `app_proto`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AppProto(u8);
