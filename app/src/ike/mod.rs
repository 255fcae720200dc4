//! IKE v1 and v2 over UDP (port 500), as Suricata 7's IKE parser (`rust/src/ike`). IKEv1
//! payloads are decoded here ([`v1`], as Suricata's own parser), IKEv2 with the Rusticata
//! `ipsec-parser` crate Suricata uses.
//!
//! * Detection: a probing parser on port 500: a 28-byte ISAKMP header of version 1, or of
//!   version 2.0 with an exchange type 34-37 and a length equal to the datagram's.
//! * Each datagram is one transaction of its direction. The flow keeps what Suricata keeps in
//!   its state: the IKEv1 client and server key exchange, nonce and chosen transform, the
//!   domain of interpretation, and the IKEv2 algorithms the responder chose.
//! * Events (Suricata's names): weak or missing algorithms in IKEv2 proposals, AH without
//!   encryption, unknown transforms, payload data left over, several server proposals.
//!   `payload_extra_data` and `multiple_server_proposal` go, as in Suricata, to the flow's
//!   transaction before the message that raised them.
//! * EVE `ike` record per transaction, the same object (with `exchange_type_verbose`) in
//!   alerts; `eve-log.types.ike.extended` adds `exchange_type_verbose` to the records.
//! * Rules: `alert ike`, `ike.init_spi` (to server), `ike.resp_spi` (to client),
//!   `ike.vendor` (to server, multi), `ike.nonce_payload`, `ike.key_exchange_payload`; the
//!   integer keywords read [`IkeTx`].

pub mod v1;

use std::any::Any;

use ipsec_parser::{
    parse_ikev2_payload_list, IkePayloadType, IkeTransformAuthType, IkeTransformDHType,
    IkeTransformESNType, IkeTransformEncType, IkeTransformPRFType, IkeV2PayloadContent,
    IkeV2Proposal, IkeV2Transform, ProtocolID,
};
use shrike_output::JsonWriter;

use crate::anomaly::AppAnomaly;
use crate::common::kw::{PredKw, UintKw};
use crate::common::txlist::{log_all, Tx, TxList};
use crate::registry::{
    AppParser, BufferDesc, Detect, KeywordDesc, LogCtx, ParserConfig, Probe, Protocol, TxMatch,
};
use crate::Dir;

/// Most live transactions per flow (they are freed once logged).
const MAX_TXS: usize = 256;
/// Most IKEv1 transforms kept per side (Suricata keeps the first one and counts the rest).
const MAX_TRANSFORMS: usize = 64;

const BUF_INIT_SPI: u16 = 0;
const BUF_RESP_SPI: u16 = 1;
const BUF_VENDOR: u16 = 2;
const BUF_NONCE: u16 = 3;
const BUF_KEY_EXCHANGE: u16 = 4;

/// IKE events (Suricata's names), in id order.
pub const EVENT_NAMES: &[&str] = &[
    "malformed_data",
    "no_encryption",
    "weak_crypto_enc",
    "weak_crypto_prf",
    "weak_crypto_dh",
    "weak_crypto_auth",
    "weak_crypto_no_dh",
    "weak_crypto_no_auth",
    "invalid_proposal",
    "unknown_proposal",
    "payload_extra_data",
    "multiple_server_proposal",
];
const EV_NO_ENCRYPTION: u8 = 1;
const EV_WEAK_ENC: u8 = 2;
const EV_WEAK_PRF: u8 = 3;
const EV_WEAK_DH: u8 = 4;
const EV_WEAK_AUTH: u8 = 5;
const EV_WEAK_NO_DH: u8 = 6;
const EV_WEAK_NO_AUTH: u8 = 7;
const EV_INVALID_PROPOSAL: u8 = 8;
const EV_UNKNOWN_PROPOSAL: u8 = 9;
const EV_PAYLOAD_EXTRA_DATA: u8 = 10;
const EV_MULTIPLE_SERVER_PROPOSAL: u8 = 11;

/// IKE in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "ike",
    aliases: &["ikev2"],
    ip_protos: &[17],
    ports: &[500],
    tcp: Detect::None,
    udp: Detect::Port(probe),
    new_parser,
    buffers: &[
        BufferDesc {
            name: "ike.init_spi",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "ike.resp_spi",
            dir: Some(Dir::ToClient),
        },
        BufferDesc {
            name: "ike.vendor",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "ike.nonce_payload",
            dir: None,
        },
        BufferDesc {
            name: "ike.key_exchange_payload",
            dir: None,
        },
    ],
    events: EVENT_NAMES,
    keywords: &[
        KeywordDesc {
            name: "ike.exchtype",
            dir: None,
            setup: |v| {
                UintKw::setup(v, u64::from(u8::MAX), "ike.exchtype", |p, tx| {
                    ike_tx(p, tx).map(|t| u64::from(t.exchange_type()))
                })
            },
        },
        KeywordDesc {
            name: "ike.chosen_sa_attribute",
            dir: Some(Dir::ToClient),
            setup: chosen_sa_setup,
        },
        KeywordDesc {
            name: "ike.key_exchange_payload_length",
            dir: None,
            setup: |v| {
                UintKw::setup(
                    v,
                    u64::from(u32::MAX),
                    "ike.key_exchange_payload_length",
                    |p, tx| ike_tx(p, tx)?.key_exchange().map(|k| k.len() as u64),
                )
            },
        },
        KeywordDesc {
            name: "ike.nonce_payload_length",
            dir: None,
            setup: |v| {
                UintKw::setup(
                    v,
                    u64::from(u32::MAX),
                    "ike.nonce_payload_length",
                    |p, tx| ike_tx(p, tx)?.nonce().map(|k| k.len() as u64),
                )
            },
        },
    ],
    generic_stats: true,
};

fn ike_tx(p: &dyn AppParser, tx: u64) -> Option<&IkeTx> {
    Some(&p.as_any().downcast_ref::<IkeState>()?.tx(tx)?.data)
}

/// Attributes `ike.chosen_sa_attribute` accepts (Suricata 7's list).
const CHOSEN_SA_NAMES: &[&str] = &[
    "alg_enc",
    "alg_hash",
    "alg_auth",
    "alg_dh",
    "sa_group_type",
    "sa_life_type",
    "sa_life_duration",
    "alg_prf",
    "sa_key_length",
    "sa_field_size",
];

/// `ike.chosen_sa_attribute:<name>=<u32>`.
fn chosen_sa_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("ike.chosen_sa_attribute needs a value")?;
    let bad = || format!("invalid ike.chosen_sa_attribute value `{v}`");
    let (name, val) = v.split_once('=').ok_or_else(bad)?;
    let name = CHOSEN_SA_NAMES
        .iter()
        .copied()
        .find(|n| *n == name.trim())
        .ok_or_else(bad)?;
    let val = val.trim();
    if val.is_empty() || !val.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u32 = val.parse().map_err(|_| bad())?;
    Ok(Box::new(PredKw {
        arg: (name, n),
        pred: |(name, n), p, tx| ike_tx(p, tx).and_then(|t| t.sa_attribute(name)) == Some(*n),
    }))
}

/// Suricata's IKE probing parser.
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    let Some((h, _)) = v1::parse_header(data) else {
        return Probe::No;
    };
    match h.maj_ver {
        1 => Probe::Yes,
        2 if h.min_ver == 0
            && (34..=37).contains(&h.exch_type)
            && usize::try_from(h.length).ok() == Some(data.len()) =>
        {
            Probe::Yes
        }
        _ => Probe::No,
    }
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(IkeState::default())
}

/// One IKE message.
#[derive(Debug)]
pub struct IkeTx {
    /// 1 or 2.
    pub version: u8,
    /// The ISAKMP header.
    pub hdr: v1::IsakmpHeader,
    /// Initiator SPI, 16 hex digits.
    pub spi_initiator: String,
    /// Responder SPI, 16 hex digits.
    pub spi_responder: String,
    /// IKEv1 payloads (`None`: encrypted payloads).
    pub v1: Option<v1::V1Payloads>,
    /// IKEv2 payload type names in order.
    pub v2_payloads: Vec<String>,
    /// IKEv2 notify type names.
    pub v2_notify: Vec<String>,
    /// IKEv2 error notifications.
    pub v2_errors: u32,
    /// IKEv2 transforms the responder chose in this message: (type, id) with type 1 enc,
    /// 2 prf, 3 auth, 4 dh, 5 esn.
    pub v2_chosen: Vec<(u8, u16)>,
    /// The direction Suricata parses the message in (the flow's direction, after the
    /// reversal its probe can ask for; see [`IkeState::parse_msg`]).
    pub sem_dir: Dir,
}

impl Default for IkeTx {
    fn default() -> Self {
        IkeTx {
            version: 0,
            hdr: v1::IsakmpHeader::default(),
            spi_initiator: String::new(),
            spi_responder: String::new(),
            v1: None,
            v2_payloads: Vec::new(),
            v2_notify: Vec::new(),
            v2_errors: 0,
            v2_chosen: Vec::new(),
            sem_dir: Dir::ToServer,
        }
    }
}

impl IkeTx {
    /// The exchange type.
    pub fn exchange_type(&self) -> u8 {
        self.hdr.exch_type
    }

    /// IKEv1 key exchange data (raw).
    pub fn key_exchange(&self) -> Option<&[u8]> {
        self.v1
            .as_ref()
            .map(|p| p.key_exchange.as_slice())
            .filter(|k| self.version == 1 && !k.is_empty())
    }

    /// IKEv1 nonce (raw).
    pub fn nonce(&self) -> Option<&[u8]> {
        self.v1
            .as_ref()
            .map(|p| p.nonce.as_slice())
            .filter(|k| self.version == 1 && !k.is_empty())
    }

    /// `ike.chosen_sa_attribute`: the value of attribute `name` of the first transform
    /// (IKEv1) or of the chosen IKEv2 algorithm.
    pub fn sa_attribute(&self, name: &str) -> Option<u32> {
        if self.version == 1 {
            let first = self.v1.as_ref()?.transforms.first()?;
            return first
                .iter()
                .find(|a| v1::attribute_name(a.atype) == name && a.numeric.is_some())
                .and_then(|a| a.numeric);
        }
        let want = match name {
            "alg_enc" => 1,
            "alg_prf" => 2,
            "alg_auth" => 3,
            "alg_dh" => 4,
            _ => return None,
        };
        self.v2_chosen
            .iter()
            .find(|(t, _)| *t == want)
            .map(|(_, v)| u32::from(*v))
    }
}

/// What an IKEv1 side has shown so far.
#[derive(Debug, Default)]
pub struct V1Side {
    /// Key exchange data, hex.
    pub key_exchange: String,
    /// Nonce, hex.
    pub nonce: String,
    /// Transforms seen.
    pub nb_transforms: u64,
    /// The first transform.
    pub transform: Vec<v1::SaAttribute>,
}

impl V1Side {
    fn update(&mut self, p: &v1::V1Payloads) {
        self.key_exchange = hex(&p.key_exchange);
        self.nonce = hex(&p.nonce);
        if self.nb_transforms == 0 {
            if let Some(t) = p.transforms.first() {
                self.transform.extend(t.iter().cloned());
            }
        }
        self.nb_transforms += p.transforms.len() as u64;
    }
}

/// The responder's chosen IKEv2 algorithms.
#[derive(Debug, Clone, Copy)]
pub struct V2Chosen {
    enc: IkeTransformEncType,
    auth: IkeTransformAuthType,
    prf: IkeTransformPRFType,
    dh: IkeTransformDHType,
    esn: IkeTransformESNType,
}

impl Default for V2Chosen {
    fn default() -> Self {
        V2Chosen {
            enc: IkeTransformEncType::ENCR_NULL,
            auth: IkeTransformAuthType::NONE,
            prf: IkeTransformPRFType::PRF_NULL,
            dh: IkeTransformDHType::None,
            esn: IkeTransformESNType::NoESN,
        }
    }
}

/// Per-flow IKE state.
#[derive(Debug)]
pub struct IkeState {
    txs: TxList<IkeTx>,
    /// IKEv1 domain of interpretation.
    pub doi: Option<u32>,
    /// IKEv1 initiator.
    pub client: V1Side,
    /// IKEv1 responder.
    pub server: V1Side,
    v2: V2Chosen,
    /// The first to-client datagram was seen (Suricata probes each direction once).
    tc_probed: bool,
    /// Suricata reversed the flow on that probe: directions are swapped from then on.
    swapped: bool,
}

impl Default for IkeState {
    fn default() -> Self {
        IkeState {
            txs: TxList::new(MAX_TXS),
            doi: None,
            client: V1Side::default(),
            server: V1Side::default(),
            v2: V2Chosen::default(),
            tc_probed: false,
            swapped: false,
        }
    }
}

fn hex(d: &[u8]) -> String {
    let mut s = String::with_capacity(d.len() * 2);
    for b in d {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

impl IkeState {
    /// Transaction `id`, while live.
    pub fn tx(&self, id: u64) -> Option<&Tx<IkeTx>> {
        self.txs.get(id)
    }

    fn state_event(&mut self, ev: u8) {
        if let Some(t) = self.txs.last_mut() {
            t.raise(ev);
        }
    }

    /// One datagram going `dir` in the flow; false when it is not IKE (a parser error).
    ///
    /// Suricata probes the first datagram of each direction; when the to-client one is IKE
    /// with a zero responder SPI (an initiator's message), its probe reverses the flow and
    /// from that datagram on Suricata parses every message in the other direction. Records
    /// keep the packet's own addresses; the client/server bookkeeping follows Suricata.
    pub fn parse_msg(&mut self, pkt_dir: Dir, data: &[u8]) -> bool {
        if data.is_empty() {
            return true;
        }
        if pkt_dir == Dir::ToClient && !self.tc_probed {
            self.tc_probed = true;
            if probe(pkt_dir, data) == Probe::Yes
                && v1::parse_header(data).is_some_and(|(h, _)| h.resp_spi == 0)
            {
                self.swapped = true;
            }
        }
        let dir = match (self.swapped, pkt_dir) {
            (false, d) => d,
            (true, Dir::ToServer) => Dir::ToClient,
            (true, Dir::ToClient) => Dir::ToServer,
        };
        let Some((h, rest)) = v1::parse_header(data) else {
            return false;
        };
        let mut tx = IkeTx {
            version: h.maj_ver,
            hdr: h,
            spi_initiator: format!("{:016x}", h.init_spi),
            spi_responder: format!("{:016x}", h.resp_spi),
            sem_dir: dir,
            ..IkeTx::default()
        };
        match h.maj_ver {
            1 => self.v1(pkt_dir, dir, rest, tx),
            2 => {
                let mut ev = Vec::new();
                self.v2(dir, rest, &mut tx, &mut ev);
                self.txs.push_raised(pkt_dir, &ev, tx);
            }
            _ => return false,
        }
        true
    }

    fn v1(&mut self, pkt_dir: Dir, dir: Dir, rest: &[u8], mut tx: IkeTx) {
        let encrypted = tx.hdr.flags & 0x01 != 0;
        let mut p = v1::V1Payloads::default();
        p.types.push(tx.hdr.next_payload);
        if !encrypted {
            let (list, left) = v1::payload_list(rest);
            let mut cur = tx.hdr.next_payload;
            let mut doi = self.doi;
            for pl in list {
                let ok = p.payload(cur, pl.data, 0);
                if p.doi.is_some() {
                    doi = p.doi;
                }
                if !ok {
                    // Suricata drops the message (no transaction).
                    self.doi = doi;
                    return;
                }
                cur = pl.next;
            }
            self.doi = doi;
            p.transforms.truncate(MAX_TRANSFORMS);
            if p.types.contains(&1) {
                match dir {
                    Dir::ToServer => self.client = V1Side::default(),
                    Dir::ToClient => self.server = V1Side::default(),
                }
            }
            match dir {
                Dir::ToServer => self.client.update(&p),
                Dir::ToClient => {
                    let n = self.server.nb_transforms;
                    if n <= 1 && n + p.transforms.len() as u64 > 1 {
                        self.state_event(EV_MULTIPLE_SERVER_PROPOSAL);
                    }
                    self.server.update(&p);
                }
            }
            if !left.is_empty() {
                self.state_event(EV_PAYLOAD_EXTRA_DATA);
            }
        }
        tx.v1 = Some(p);
        self.txs.push(pkt_dir, 0, tx);
    }

    fn v2(&mut self, dir: Dir, rest: &[u8], tx: &mut IkeTx, ev: &mut Vec<u8>) {
        let Ok((_, Ok(list))) = parse_ikev2_payload_list(rest, IkePayloadType(tx.hdr.next_payload))
        else {
            return;
        };
        for p in &list {
            tx.v2_payloads
                .push(format!("{:?}", p.hdr.next_payload_type));
            match &p.content {
                IkeV2PayloadContent::SA(props) => self.v2_proposals(dir, props, tx, ev),
                IkeV2PayloadContent::Notify(n) => {
                    if n.notify_type.is_error() {
                        tx.v2_errors += 1;
                    }
                    tx.v2_notify.push(format!("{:?}", n.notify_type));
                }
                _ => {}
            }
        }
    }

    fn v2_proposals(
        &mut self,
        dir: Dir,
        props: &[IkeV2Proposal<'_>],
        tx: &mut IkeTx,
        ev: &mut Vec<u8>,
    ) {
        for p in props {
            let transforms: Vec<IkeV2Transform> = p.transforms.iter().map(|x| x.into()).collect();
            for t in &transforms {
                match t {
                    IkeV2Transform::Encryption(e) => {
                        if matches!(
                            *e,
                            IkeTransformEncType::ENCR_DES_IV64
                                | IkeTransformEncType::ENCR_DES
                                | IkeTransformEncType::ENCR_3DES
                                | IkeTransformEncType::ENCR_RC5
                                | IkeTransformEncType::ENCR_IDEA
                                | IkeTransformEncType::ENCR_CAST
                                | IkeTransformEncType::ENCR_BLOWFISH
                                | IkeTransformEncType::ENCR_3IDEA
                                | IkeTransformEncType::ENCR_DES_IV32
                                | IkeTransformEncType::ENCR_NULL
                        ) {
                            ev.push(EV_WEAK_ENC);
                        }
                    }
                    IkeV2Transform::PRF(prf) => match *prf {
                        IkeTransformPRFType::PRF_NULL => ev.push(EV_INVALID_PROPOSAL),
                        IkeTransformPRFType::PRF_HMAC_MD5 | IkeTransformPRFType::PRF_HMAC_SHA1 => {
                            ev.push(EV_WEAK_PRF)
                        }
                        _ => {}
                    },
                    IkeV2Transform::Auth(a) => {
                        if matches!(
                            *a,
                            IkeTransformAuthType::AUTH_HMAC_MD5_96
                                | IkeTransformAuthType::AUTH_HMAC_SHA1_96
                                | IkeTransformAuthType::AUTH_DES_MAC
                                | IkeTransformAuthType::AUTH_KPDK_MD5
                                | IkeTransformAuthType::AUTH_AES_XCBC_96
                                | IkeTransformAuthType::AUTH_HMAC_MD5_128
                                | IkeTransformAuthType::AUTH_HMAC_SHA1_160
                        ) {
                            ev.push(EV_WEAK_AUTH);
                        }
                    }
                    IkeV2Transform::DH(dh) => match *dh {
                        IkeTransformDHType::None => ev.push(EV_INVALID_PROPOSAL),
                        IkeTransformDHType::Modp768
                        | IkeTransformDHType::Modp1024
                        | IkeTransformDHType::Modp1024s160
                        | IkeTransformDHType::Modp1536 => ev.push(EV_WEAK_DH),
                        _ => {}
                    },
                    IkeV2Transform::Unknown(..) => ev.push(EV_UNKNOWN_PROPOSAL),
                    IkeV2Transform::ESN(_) => {}
                }
            }
            if !transforms
                .iter()
                .any(|x| matches!(x, IkeV2Transform::DH(_)))
            {
                ev.push(EV_WEAK_NO_DH);
            }
            if p.protocol_id == ProtocolID::AH {
                ev.push(EV_NO_ENCRYPTION);
            }
            let has_auth = transforms
                .iter()
                .any(|x| matches!(x, IkeV2Transform::Auth(a) if *a != IkeTransformAuthType::NONE));
            let has_aead = transforms
                .iter()
                .any(|x| matches!(x, IkeV2Transform::Encryption(e) if e.is_aead()));
            if !has_auth && !has_aead {
                ev.push(EV_WEAK_NO_AUTH);
            }
            if dir == Dir::ToClient {
                for t in &transforms {
                    match t {
                        IkeV2Transform::Encryption(e) => {
                            self.v2.enc = *e;
                            tx.v2_chosen.push((1, e.0));
                        }
                        IkeV2Transform::PRF(e) => {
                            self.v2.prf = *e;
                            tx.v2_chosen.push((2, e.0));
                        }
                        IkeV2Transform::Auth(e) => {
                            self.v2.auth = *e;
                            tx.v2_chosen.push((3, e.0));
                        }
                        IkeV2Transform::DH(e) => {
                            self.v2.dh = *e;
                            tx.v2_chosen.push((4, e.0));
                        }
                        IkeV2Transform::ESN(e) => {
                            self.v2.esn = *e;
                            tx.v2_chosen.push((5, e.0));
                        }
                        IkeV2Transform::Unknown(..) => {}
                    }
                }
                tx.v2_chosen.truncate(MAX_TRANSFORMS);
            }
        }
    }

    fn add_attributes(attrs: &[v1::SaAttribute], w: &mut JsonWriter) {
        for a in attrs {
            let name = v1::attribute_name(a.atype);
            w.set_str(name, a.value);
            let raw = format!("{name}_raw");
            if let Some(n) = a.numeric {
                w.set_u64(&raw, u64::from(n));
            } else if let Some(h) = &a.hex {
                w.set_str(&raw, h);
            }
        }
    }

    /// The `ike` object (Suricata's `log_ike`).
    pub fn write_ike(&self, t: &Tx<IkeTx>, extended: bool, w: &mut JsonWriter) {
        let tx = &t.data;
        w.open_object("ike");
        w.set_u64("version_major", u64::from(tx.hdr.maj_ver));
        w.set_u64("version_minor", u64::from(tx.hdr.min_ver));
        w.set_str("init_spi", &tx.spi_initiator);
        w.set_str("resp_spi", &tx.spi_responder);
        w.set_u64("message_id", u64::from(tx.hdr.msg_id));
        w.set_u64("exchange_type", u64::from(tx.hdr.exch_type));
        if tx.version == 1 {
            if extended {
                if let Some(v) = exchange_type_verbose(tx.hdr.exch_type) {
                    w.set_str("exchange_type_verbose", v);
                }
            }
            if self.server.nb_transforms > 0 {
                Self::add_attributes(&self.server.transform, w);
            }
            let transforms = tx.v1.as_ref().map_or(&[][..], |p| &p.transforms[..]);
            if tx.sem_dir == Dir::ToClient && transforms.len() > 1 {
                w.open_array("server_proposals");
                for tr in transforms {
                    w.start_object();
                    Self::add_attributes(tr, w);
                    w.close();
                }
                w.close();
            }
        } else if tx.hdr.flags & 0x08 != 0 {
            w.set_str("role", "initiator");
        } else {
            w.set_str("role", "responder");
            w.set_str("alg_enc", &format!("{:?}", self.v2.enc));
            w.set_str("alg_auth", &format!("{:?}", self.v2.auth));
            w.set_str("alg_prf", &format!("{:?}", self.v2.prf));
            w.set_str("alg_dh", &format!("{:?}", self.v2.dh));
            w.set_str("alg_esn", &format!("{:?}", self.v2.esn));
        }
        w.open_array("payload");
        if tx.version == 1 {
            if let Some(p) = &tx.v1 {
                for t in p.types.iter().filter_map(|&t| v1::payload_type_name(t)) {
                    w.str(t);
                }
            }
        } else {
            for p in &tx.v2_payloads {
                w.str(p);
            }
        }
        w.close();
        if tx.version == 1 {
            self.write_v1(t, w);
        } else {
            w.open_object("ikev2");
            w.set_u64("errors", u64::from(tx.v2_errors));
            if !tx.v2_notify.is_empty() {
                w.open_array("notify");
                for n in &tx.v2_notify {
                    w.str(n);
                }
                w.close();
            }
            w.close();
        }
        w.close();
    }

    fn write_v1(&self, t: &Tx<IkeTx>, w: &mut JsonWriter) {
        let tx = &t.data;
        let encrypted = tx.hdr.flags & 0x01 != 0;
        w.open_object("ikev1");
        if let Some(doi) = self.doi {
            w.set_u64("doi", u64::from(doi));
        }
        w.set_bool("encrypted_payloads", encrypted);
        if !encrypted {
            for (key, side) in [("client", &self.client), ("server", &self.server)] {
                w.open_object(key);
                if !side.key_exchange.is_empty() {
                    w.set_str("key_exchange_payload", &side.key_exchange);
                    w.set_u64(
                        "key_exchange_payload_length",
                        side.key_exchange.len() as u64 / 2,
                    );
                }
                if !side.nonce.is_empty() {
                    w.set_str("nonce_payload", &side.nonce);
                    w.set_u64("nonce_payload_length", side.nonce.len() as u64 / 2);
                }
                if key == "client" && tx.sem_dir == Dir::ToServer {
                    if let Some(p) = tx.v1.as_ref().filter(|p| !p.transforms.is_empty()) {
                        w.open_array("proposals");
                        for tr in &p.transforms {
                            w.start_object();
                            Self::add_attributes(tr, w);
                            w.close();
                        }
                        w.close();
                    }
                }
                w.close();
            }
            if let Some(p) = tx.v1.as_ref().filter(|p| !p.vendor_ids.is_empty()) {
                w.open_array("vendor_ids");
                for v in &p.vendor_ids {
                    w.str(v);
                }
                w.close();
            }
        }
        w.close();
    }
}

fn exchange_type_verbose(t: u8) -> Option<&'static str> {
    Some(match t {
        0 => "Unknown Exchange Type",
        1 => "Base",
        2 => "Identity Protection",
        3 => "Authentication Only",
        4 => "Aggressive",
        5 => "Informational",
        6 => "Transaction (Config Mode)",
        32 => "Quick Mode",
        33 => "New Group Mode",
        _ => return None,
    })
}

impl AppParser for IkeState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        !self.parse_msg(dir, data)
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {}

    fn tx_count(&self) -> u64 {
        self.txs.count()
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        self.txs.count()
    }

    fn live_txs(&self, dir: Dir, out: &mut Vec<u64>) {
        self.txs.live(dir, out);
    }

    fn buffer(&self, tx: u64, buf: u16, _dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let Some(t) = self.txs.get(tx) else {
            return false;
        };
        let t = &t.data;
        match buf {
            BUF_INIT_SPI => f(t.spi_initiator.as_bytes()),
            BUF_RESP_SPI => f(t.spi_responder.as_bytes()),
            BUF_VENDOR => {
                t.version == 1
                    && t.v1
                        .as_ref()
                        .is_some_and(|p| p.vendor_ids.iter().any(|v| f(v.as_bytes())))
            }
            BUF_NONCE => t.nonce().is_some_and(f),
            BUF_KEY_EXCHANGE => t.key_exchange().is_some_and(f),
            _ => false,
        }
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        self.txs.get(tx).is_some_and(|t| t.has(ev))
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let extended = c.opts.ike_extended;
        let mut txs = std::mem::replace(&mut self.txs, TxList::new(MAX_TXS));
        log_all(&mut txs, c, "ike", |t, w| {
            self.write_ike(t, extended, w);
            true
        });
        self.txs = txs;
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        self.txs.drain_events(from, EVENT_NAMES, f);
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.txs.get(tx) else {
            return false;
        };
        self.write_ike(t, true, w);
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(maj: u8, exch: u8, flags: u8, next: u8, len: u32) -> Vec<u8> {
        let mut d = Vec::new();
        d.extend_from_slice(&0xe47a_591f_d057_587f_u64.to_be_bytes());
        d.extend_from_slice(&0u64.to_be_bytes());
        d.push(next);
        d.push(maj << 4);
        d.push(exch);
        d.push(flags);
        d.extend_from_slice(&0u32.to_be_bytes());
        d.extend_from_slice(&len.to_be_bytes());
        d
    }

    #[test]
    fn ikev1_main_mode_sa_and_vendor() {
        let transform = [0u8, 0, 0, 12, 1, 1, 0, 0, 0x80, 0x01, 0x00, 0x07];
        let mut proposal = vec![0u8, 0, 0, 20, 1, 1, 0, 1];
        proposal.extend_from_slice(&transform);
        let mut sa = vec![13u8, 0, 0, 32, 0, 0, 0, 1, 0, 0, 0, 1];
        sa.extend_from_slice(&proposal);
        let vid = [0u8, 0, 0, 8, 0x4a, 0x13, 0x1c, 0x81];
        let mut d = header(1, 2, 0, 1, 0);
        d.extend_from_slice(&sa);
        d.extend_from_slice(&vid);
        assert_eq!(probe(Dir::ToServer, &d), Probe::Yes);
        let mut s = IkeState::default();
        assert!(!AppParser::parse(&mut s, Dir::ToServer, &d));
        let t = s.tx(0).unwrap();
        assert_eq!(t.data.spi_initiator, "e47a591fd057587f");
        assert_eq!(t.data.sa_attribute("alg_enc"), Some(7));
        let mut got = Vec::new();
        s.buffer(0, BUF_VENDOR, Dir::ToServer, &mut |b| {
            got.push(b.to_vec());
            false
        });
        assert_eq!(got, [b"4a131c81".to_vec()]);
        let mut w = JsonWriter::new();
        w.start_object();
        s.write_ike(t, false, &mut w);
        w.close();
        let j = String::from_utf8(w.as_bytes().to_vec()).unwrap();
        assert!(
            j.contains(r#""payload":["SecurityAssociation","Proposal","Transform","VendorID"]"#),
            "{j}"
        );
        assert!(
            j.contains(r#""proposals":[{"alg_enc":"EncAesCbc","alg_enc_raw":7}]"#),
            "{j}"
        );
        assert_eq!(t.events, 0);
    }

    #[test]
    fn keywords_exchtype_chosen_sa_and_lengths() {
        let transform = [0u8, 0, 0, 12, 1, 1, 0, 0, 0x80, 0x01, 0x00, 0x07];
        let mut proposal = vec![0u8, 0, 0, 20, 1, 1, 0, 1];
        proposal.extend_from_slice(&transform);
        let mut sa = vec![10u8, 0, 0, 32, 0, 0, 0, 1, 0, 0, 0, 1];
        sa.extend_from_slice(&proposal);
        let nonce = [0u8, 0, 0, 8, 1, 2, 3, 4];
        let mut d = header(1, 2, 0, 1, 0);
        d.extend_from_slice(&sa);
        d.extend_from_slice(&nonce);
        let mut s = IkeState::default();
        assert!(!AppParser::parse(&mut s, Dir::ToClient, &d));
        let p: &dyn AppParser = &s;
        let kw = |name: &str, v: &str| {
            let k = PROTOCOL.keywords.iter().find(|k| k.name == name).unwrap();
            (k.setup)(Some(v)).map(|m| m.matches(p, 0, Dir::ToClient))
        };
        assert_eq!(kw("ike.exchtype", "2"), Ok(Some(true)));
        assert_eq!(kw("ike.chosen_sa_attribute", "alg_enc=7"), Ok(Some(true)));
        assert_eq!(
            kw("ike.chosen_sa_attribute", "alg_enc = 5"),
            Ok(Some(false))
        );
        assert!(kw("ike.chosen_sa_attribute", "nope=1").is_err());
        assert_eq!(kw("ike.nonce_payload_length", "4"), Ok(Some(true)));
        assert_eq!(kw("ike.key_exchange_payload_length", ">0"), Ok(Some(false)));
    }

    #[test]
    fn ikev2_probe_needs_matching_length_and_exchange() {
        let d = header(2, 34, 0x08, 0, 28);
        assert_eq!(probe(Dir::ToServer, &d), Probe::Yes);
        assert_eq!(probe(Dir::ToServer, &header(2, 33, 0x08, 0, 28)), Probe::No);
        assert_eq!(probe(Dir::ToServer, &header(2, 34, 0x08, 0, 40)), Probe::No);
        assert_eq!(probe(Dir::ToServer, &d[..20]), Probe::No);
        let mut s = IkeState::default();
        assert!(!AppParser::parse(&mut s, Dir::ToServer, &d));
        assert_eq!(s.tx(0).unwrap().data.version, 2);
    }

    #[test]
    fn extra_data_goes_to_the_previous_transaction() {
        let mut s = IkeState::default();
        let d = header(1, 2, 0, 0, 0);
        assert!(!AppParser::parse(&mut s, Dir::ToServer, &d));
        let mut e = d.clone();
        e.extend_from_slice(&[0, 0]);
        assert!(!AppParser::parse(&mut s, Dir::ToClient, &e));
        assert!(s.tx(0).unwrap().has(10));
        assert!(!s.tx(1).unwrap().has(10));
    }

    #[test]
    fn no_panic_on_cut_or_flipped() {
        let mut d = header(1, 2, 0, 1, 0);
        d.extend_from_slice(&[0, 0, 0, 20, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 8, 1, 1, 0, 1]);
        let mut s = IkeState::default();
        for n in 0..d.len() {
            let _ = AppParser::parse(&mut s, Dir::ToServer, &d[..n]);
        }
        for i in 16..d.len() {
            let mut v = d.clone();
            v[i] ^= 0xff;
            let _ = AppParser::parse(&mut s, Dir::ToClient, &v);
        }
    }
}
