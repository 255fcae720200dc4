//! Raw stream inspection (Suricata's `DetectEngineInspectRulePayloadMatches`): payload rules
//! on TCP are inspected against the reassembled stream window the stream engine hands over,
//! and fall back to the packet payload only when the packet's data was not added to a
//! stream (or the rule also requires packet inspection).
//!
//! Rule classes (set at compile time, Suricata's `SIG_FLAG_REQUIRE_STREAM` /
//! `SIG_FLAG_REQUIRE_PACKET`):
//! * a rule whose protocol covers TCP and which has payload matches requires the stream,
//!   unless it uses `flow:no_stream` or `dsize` (packet only);
//! * a `content` with `depth` / `offset` (or `startswith`) also requires the packet: the
//!   packet payload is inspected when the stream did not match;
//! * `flow:only_stream` requires the stream; the `tcp-stream` protocol never falls back.

use super::inspect::{Alert, DetectThread};
use super::packet::{FlowInput, Packet, PacketView};
use super::sig::{mask, Sig};
use super::vars::FlowVars;
use super::Engine;
use shrike_rules::matcher::{MatchEnv, Scratch};

/// How a rule's payload matches relate to the TCP stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum StreamMode {
    /// Packet payload only (no TCP payload matches, `flow:no_stream`, `dsize`).
    #[default]
    Packet,
    /// Stream first; packet payload only when the packet was not added to a stream.
    Stream,
    /// Stream first, then always the packet payload (`depth`/`offset` contents).
    StreamPacket,
    /// Stream only (`tcp-stream` rules).
    StreamOnly,
}

impl StreamMode {
    /// Suricata's flags from what the rule uses.
    pub(crate) fn of(
        covers_tcp: bool,
        has_payload: bool,
        no_stream: bool,
        dsize: bool,
        anchored: bool,
        stream_only: bool,
    ) -> StreamMode {
        if stream_only {
            return StreamMode::StreamOnly;
        }
        if !covers_tcp || !has_payload || no_stream || dsize {
            return StreamMode::Packet;
        }
        if anchored {
            StreamMode::StreamPacket
        } else {
            StreamMode::Stream
        }
    }
}

/// The stream side of one TCP packet, handed to [`Engine::inspect_with_stream`].
#[derive(Clone, Copy, Debug, Default)]
pub struct StreamData<'a> {
    /// The raw stream window of the packet's direction when it is due for inspection
    /// (empty otherwise).
    pub window: &'a [u8],
    /// The packet's payload was added to the stream (Suricata's `PKT_STREAM_ADD`).
    pub added: bool,
    /// A flow-end pseudo packet: only rules inspecting the stream run.
    pub pseudo: bool,
    /// Stream events the stream engine raised on this packet.
    pub events: shrike_stream::StreamEventSet,
    /// `[client, server]` stream sizes of the session after this packet
    /// ([`shrike_stream::TcpSession::stream_sizes`]), for `stream_size`.
    pub sizes: Option<[u32; 2]>,
    /// The TCP session, for frame inspection (`frame:` rules read the frames' bytes from
    /// it).
    pub session: Option<&'a shrike_stream::TcpSession>,
    /// The packet's TCP direction (the stream of `session` its frames are in; `None`:
    /// the packet's flow direction).
    pub dir: Option<shrike_app::Dir>,
    /// The stream ended (Suricata's eof: the session is closed).
    pub eof: bool,
}

impl Engine {
    /// [`Engine::inspect`] for a TCP packet of a tracked session: payload rules requiring
    /// the stream are inspected against `stream.window` (see the module docs).
    pub fn inspect_with_stream<'t>(
        &self,
        pkt: &Packet<'_>,
        flow: Option<FlowInput<'_>>,
        stream: StreamData<'_>,
        th: &'t mut DetectThread,
    ) -> &'t [Alert] {
        self.inspect_impl(pkt, flow, Some(stream), th)
    }

    /// Whether `s` matches the packet, given the stream view `sv` (a copy of `p` whose
    /// payload is the stream window) and whether the packet's data went into the stream:
    /// `None` for no match, `Some(true)` for a match on the stream, `Some(false)` on the
    /// packet.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sig_matches_stream(
        &self,
        s: &Sig,
        p: &PacketView<'_>,
        sv: Option<&PacketView<'_>>,
        stream: Option<StreamData<'_>>,
        vars: Option<&FlowVars>,
        scratch: &mut Scratch,
        env: &MatchEnv,
    ) -> Option<bool> {
        let mode = s.stream;
        let (added, pseudo) = stream.map_or((false, false), |d| (d.added, d.pseudo));
        if pseudo && (mode == StreamMode::Packet || sv.is_none()) {
            return None;
        }
        let on_packet =
            |scratch: &mut Scratch| self.sig_matches(s, p, vars, scratch, env).then_some(false);
        if mode == StreamMode::Packet || !p.is_tcp {
            return if mode == StreamMode::StreamOnly {
                None
            } else {
                on_packet(scratch)
            };
        }
        if let Some(sv) = sv {
            if self.sig_matches(s, sv, vars, scratch, env) {
                return Some(true);
            }
        }
        match mode {
            StreamMode::StreamOnly => None,
            StreamMode::Stream if added || pseudo => None,
            _ => on_packet(scratch),
        }
    }
}

/// The stream view of a packet: the same packet facts with the stream window as payload.
pub(crate) fn stream_view<'a>(p: &PacketView<'a>, window: &'a [u8]) -> PacketView<'a> {
    let mut v = *p;
    v.payload = window;
    v.mask &= !(mask::PAYLOAD | mask::NO_PAYLOAD);
    v.mask |= if window.is_empty() {
        mask::NO_PAYLOAD
    } else {
        mask::PAYLOAD
    };
    v
}

#[cfg(test)]
mod tests {
    use super::StreamMode as M;

    #[test]
    fn stream_mode_table() {
        // (covers_tcp, has_payload, no_stream, dsize, anchored, stream_only) -> mode
        let cases = [
            ((true, true, false, false, false, false), M::Stream),
            ((true, true, false, false, true, false), M::StreamPacket),
            ((true, true, true, false, false, false), M::Packet),
            ((true, true, false, true, false, false), M::Packet),
            ((false, true, false, false, false, false), M::Packet),
            ((true, false, false, false, false, false), M::Packet),
            ((true, true, false, false, false, true), M::StreamOnly),
        ];
        for ((a, b, c, d, e, f), want) in cases {
            assert_eq!(M::of(a, b, c, d, e, f), want, "{:?}", (a, b, c, d, e, f));
        }
    }
}
