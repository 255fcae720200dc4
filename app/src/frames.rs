//! App-layer frames (Suricata 7's `app-layer-frames.c`): the parsers mark protocol units
//! in the stream (an MQTT PDU, its fixed header and its data; an SMB2 header; an HTTP
//! request) by absolute stream offset and length, `frame:<proto>.<type>` rules inspect those
//! bytes, and EVE writes them in `frame` records and in the `frame` object of alerts.
//!
//! Frames cost nothing unless asked for: a parser creates a frame only when its type is
//! enabled ([`enable`]: a loaded rule uses it, or eve-log `frame` records are on, which
//! enable every type, as Suricata's `FrameConfigEnable` / `FrameConfigEnableAll`).
//!
//! On TCP a frame's offset is the absolute offset in its direction's stream (the first
//! byte after the SYN is 0); on UDP it is the offset in the datagram's payload, and the
//! frames of a datagram live only while that datagram is inspected and logged.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::registry::MAX_PROTOCOLS;
use crate::AppProto;

/// Suricata's `FRAME_STREAM_TYPE`: the `<proto>.stream` frame, the whole stream of one
/// direction, opened on the parser's first data and closed at the end of the stream.
pub const STREAM_TYPE: u8 = 63;

/// Most frames kept per direction (Suricata: 3 static + 256 dynamic).
pub const MAX_FRAMES: usize = 3 + 256;

/// Per protocol, the enabled frame types (bit per type).
static ENABLED: [AtomicU64; MAX_PROTOCOLS] = [const { AtomicU64::new(0) }; MAX_PROTOCOLS];

/// Enables frame type `ty` of protocol `p` (a rule uses it).
pub fn enable(p: AppProto, ty: u8) {
    if let (Some(i), true) = (p.index(), ty < 64) {
        ENABLED[i].fetch_or(1 << ty, Ordering::Relaxed);
    }
}

/// Enables every frame type of every protocol (eve-log `frame` records).
pub fn enable_all() {
    for e in &ENABLED {
        e.store(u64::MAX, Ordering::Relaxed);
    }
}

/// The enabled frame types of protocol `p`.
#[inline]
pub fn enabled(p: AppProto) -> u64 {
    p.index().map_or(0, |i| ENABLED[i].load(Ordering::Relaxed))
}

/// The frame type names of protocol `p`, a type's id being its index (Suricata 7.0.10's
/// `AppLayerFrameType` enums and the C parsers' tables).
pub fn names(p: AppProto) -> &'static [&'static str] {
    match p.name() {
        "http" => &["request", "response"],
        "mqtt" => &["pdu", "header", "data"],
        "smb" => &[
            "nbss.pdu",
            "nbss.hdr",
            "nbss.data",
            "smb1.pdu",
            "smb1.hdr",
            "smb1.data",
            "smb2.pdu",
            "smb2.hdr",
            "smb2.data",
            "smb3.pdu",
            "smb3.hdr",
            "smb3.data",
        ],
        "dns" => &["pdu"],
        "sip" => &[
            "pdu",
            "request.line",
            "response.line",
            "request.headers",
            "response.headers",
            "request.body",
            "response.body",
        ],
        "telnet" => &["pdu", "ctl", "data"],
        "rfb" => &["pdu"],
        "nfs" => &[
            "rpc.pdu",
            "rpc.hdr",
            "rpc.data",
            "rpc.creds",
            "nfs.pdu",
            "nfs.status",
            "nfs4.pdu",
            "nfs4.hdr",
            "nfs4.ops",
            "nfs4.status",
        ],
        "tls" => &[
            "pdu",
            "hdr",
            "data",
            "alert",
            "heartbeat",
            "sslv2.hdr",
            "sslv2.pdu",
        ],
        _ => &[],
    }
}

/// The type id of frame `name` of protocol `p` (`stream` on TCP only).
pub fn type_of(p: AppProto, name: &str, tcp: bool) -> Option<u8> {
    if tcp && name == "stream" {
        return Some(STREAM_TYPE);
    }
    names(p)
        .iter()
        .position(|n| *n == name)
        .and_then(|i| u8::try_from(i).ok())
}

/// The name of frame type `ty` of protocol `p`.
pub fn name_of(p: AppProto, ty: u8) -> &'static str {
    if ty == STREAM_TYPE {
        return "stream";
    }
    names(p).get(usize::from(ty)).copied().unwrap_or("unknown")
}

/// One frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Protocol-specific type (an index into [`names`], or [`STREAM_TYPE`]).
    pub ty: u8,
    /// Id, unique in its direction of the flow (from 1).
    pub id: i64,
    /// Absolute stream offset (TCP) or payload offset (UDP).
    pub offset: u64,
    /// Length; -1 while unknown.
    pub len: i64,
    /// The transaction it belongs to, when the parser says.
    pub tx_id: Option<u64>,
    /// Bytes of the frame already inspected by detection (detection moves it on while the
    /// flow's app state is shared with it).
    pub inspect_progress: std::cell::Cell<u64>,
    /// Written as an EVE `frame` record.
    pub logged: std::cell::Cell<bool>,
}

impl Frame {
    /// The end offset, when the length is known.
    pub fn end(&self) -> Option<u64> {
        u64::try_from(self.len).ok().map(|l| self.offset + l)
    }
}

/// The frames of one direction of a flow.
#[derive(Clone, Debug, Default)]
pub struct Frames {
    /// Live frames, oldest first.
    pub list: Vec<Frame>,
    base_id: i64,
}

impl Frames {
    /// A new frame; `None` when the direction holds [`MAX_FRAMES`] already.
    pub fn add(&mut self, ty: u8, offset: u64, len: i64) -> Option<i64> {
        if self.list.len() >= MAX_FRAMES {
            return None;
        }
        self.base_id += 1;
        self.list.push(Frame {
            ty,
            id: self.base_id,
            offset,
            len,
            tx_id: None,
            inspect_progress: std::cell::Cell::new(0),
            logged: std::cell::Cell::new(false),
        });
        Some(self.base_id)
    }

    /// The frame with id `id`.
    pub fn get_mut(&mut self, id: i64) -> Option<&mut Frame> {
        self.list.iter_mut().find(|f| f.id == id)
    }

    /// The frame with id `id`.
    pub fn get(&self, id: i64) -> Option<&Frame> {
        self.list.iter().find(|f| f.id == id)
    }

    /// Drops every frame (UDP: after each datagram).
    pub fn clear(&mut self) {
        self.list.clear();
    }

    /// Suricata's `FramePrune`: drops the frames whose data is all in (`eof`: all).
    pub fn prune(&mut self, usable: u64, eof: bool) {
        if eof {
            self.list.clear();
            return;
        }
        self.list.retain(|f| f.end().is_none_or(|e| e > usable));
    }

    /// The lowest stream offset a live frame still needs (Suricata's `FrameLeftEdge`):
    /// complete frames need nothing, others their start, or the last 2500 bytes of a
    /// long one.
    pub fn left_edge(&self, app_progress: u64) -> u64 {
        let mut le = app_progress;
        for f in &self.list {
            let have = app_progress.saturating_sub(f.offset);
            let e = match f.end() {
                Some(end) if end <= app_progress => app_progress,
                _ if have <= 2500 => f.offset,
                _ => f.offset + (have - 2500),
            };
            le = le.min(e);
        }
        le
    }
}

/// What a parser gets to create frames with during one call: the absolute offset of the
/// call's first byte and the enabled types.
#[derive(Debug)]
pub struct FrameCtx<'a> {
    /// Absolute offset of the first byte of the data handed to the parser in this call.
    pub offset: u64,
    /// Enabled types ([`enabled`]).
    pub mask: u64,
    /// Where the frames go.
    pub frames: &'a mut Frames,
}

impl FrameCtx<'_> {
    /// Whether type `ty` is enabled.
    #[inline]
    pub fn on(&self, ty: u8) -> bool {
        ty < 64 && self.mask & (1 << ty) != 0
    }

    /// A new frame of type `ty` at absolute offset `abs` (`len` -1: unknown yet), if
    /// enabled.
    pub fn new_frame(&mut self, abs: u64, len: i64, ty: u8) -> Option<i64> {
        if !self.on(ty) {
            return None;
        }
        self.frames.add(ty, abs, len)
    }

    /// A new frame starting `rel` bytes into this call's data (negative: bytes the parser
    /// held from earlier calls).
    pub fn new_rel(&mut self, rel: i64, len: i64, ty: u8) -> Option<i64> {
        if !self.on(ty) {
            return None;
        }
        let abs = u64::try_from(i64::try_from(self.offset).ok()? + rel).ok()?;
        self.frames.add(ty, abs, len)
    }

    /// Sets the length of frame `id`.
    pub fn set_len(&mut self, id: Option<i64>, len: i64) {
        if let Some(f) = id.and_then(|i| self.frames.get_mut(i)) {
            f.len = len;
        }
    }

    /// Sets the transaction of frame `id`.
    pub fn set_tx(&mut self, id: Option<i64>, tx: u64) {
        if let Some(f) = id.and_then(|i| self.frames.get_mut(i)) {
            f.tx_id = Some(tx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_prune_and_left_edge() {
        let mut f = Frames::default();
        let mut c = FrameCtx {
            offset: 100,
            mask: 0b11,
            frames: &mut f,
        };
        assert_eq!(c.new_rel(0, 10, 0), Some(1));
        assert_eq!(c.new_rel(-4, -1, 1), Some(2));
        assert_eq!(c.new_rel(0, 5, 2), None, "type 2 is not enabled");
        c.set_len(Some(2), 20);
        assert_eq!(f.get(2).map(|x| (x.offset, x.len)), Some((96, 20)));
        assert_eq!(f.left_edge(110), 96);
        f.prune(110, false);
        assert_eq!(f.list.len(), 1, "the complete frame 1 is dropped");
        f.prune(116, false);
        assert!(f.list.is_empty());
        assert_eq!(f.add(0, 0, 1), Some(3), "ids keep counting");
    }

    #[test]
    fn names_resolve() {
        let smb = AppProto::SMB;
        assert_eq!(type_of(smb, "smb2.data", true), Some(8));
        assert_eq!(name_of(smb, 8), "smb2.data");
        assert_eq!(type_of(smb, "stream", true), Some(STREAM_TYPE));
        assert_eq!(type_of(smb, "stream", false), None);
        assert_eq!(type_of(AppProto::HTTP, "bogus", true), None);
    }
}
