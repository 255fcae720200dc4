//! Frame inspection (Suricata 7's `DetectRunFrames`, `detect-engine-frame.c`): a
//! `frame:<proto>.<type>` rule inspects the bytes of each frame of that type the flow's
//! parser marked ([`shrike_app::frames`]), on packets of the frame's direction. On TCP the
//! bytes come from the reassembled stream: a frame is inspected once all of it is in (or at
//! the end of the stream, or 2500 bytes at a time for a long one), each stored block on its
//! own (a gap splits a frame, as Suricata's stream callback does); on UDP the frame is a
//! slice of the datagram. An alert from a frame carries the frame (EVE `frame` object,
//! [`write_frame`]) and the frame's transaction when the parser set one.

use shrike_app::frames::{name_of, Frame};
use shrike_app::{AppProto, Dir};
use shrike_output::JsonWriter;
use shrike_rules::matcher::{CompiledSection, MatchEnv};
use shrike_stream::TcpSession;

use super::inspect::DetectThread;
use super::packet::{FlowInput, PacketView};
use super::Engine;

/// The frame part of a `frame:` rule.
#[derive(Debug)]
pub(crate) struct FrameSig {
    /// The protocol whose frames it inspects.
    pub proto: AppProto,
    /// The frame type.
    pub ty: u8,
    /// The matches on the frame's bytes (with the section's transforms).
    pub matcher: CompiledSection,
}

/// The frame an alert came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHit {
    /// The flow's protocol (names the type).
    pub proto: AppProto,
    /// Frame type.
    pub ty: u8,
    /// Frame id.
    pub id: i64,
    /// Stream offset (TCP) or payload offset (UDP).
    pub offset: u64,
    /// Length (-1: unknown).
    pub len: i64,
    /// The frame's transaction.
    pub tx: Option<u64>,
    /// The direction whose stream holds it.
    pub dir: Dir,
    /// On TCP (else UDP).
    pub tcp: bool,
}

impl FrameHit {
    pub(crate) fn of(f: &Frame, proto: AppProto, dir: Dir, tcp: bool) -> Self {
        FrameHit {
            proto,
            ty: f.ty,
            id: f.id,
            offset: f.offset,
            len: f.len,
            tx: f.tx_id,
            dir,
            tcp,
        }
    }
}

/// Bytes of a long frame inspected per round (Suricata's 2500).
const ROUND: u64 = 2500;

impl Engine {
    /// Inspects the frames of the packet's direction with the `frame:` rules.
    pub(crate) fn run_frames(
        &self,
        p: &PacketView<'_>,
        f: &mut FlowInput<'_>,
        stream: Option<(&TcpSession, Dir, bool)>,
        th: &mut DetectThread,
    ) {
        let Some(app) = f.app else {
            return;
        };
        let Some(fr) = app.frames.as_deref() else {
            return;
        };
        let tcp = p.is_tcp;
        let dir = match stream {
            Some((_, d, _)) if tcp => d,
            _ if f.to_server => Dir::ToServer,
            _ => Dir::ToClient,
        };
        let frames = fr.dir(dir);
        if frames.list.is_empty() {
            return;
        }
        let env = MatchEnv::default();
        for frame in &frames.list {
            let wanted = |n: &u32| {
                self.sigs
                    .get(*n as usize)
                    .and_then(|s| s.frame.as_deref())
                    .is_some_and(|fs| fs.ty == frame.ty && fs.proto.sig_matches(app.proto))
            };
            if !self.frame_sigs.iter().any(wanted) {
                continue;
            }
            // The span to inspect: [start, end) of the stream (TCP) or of the payload (UDP).
            let progress = frame.inspect_progress.get();
            let (start, end) = if tcp {
                let Some((ssn, sdir, eof)) = stream else {
                    continue;
                };
                let usable = ssn.app_progress(sdir);
                let start = frame.offset + progress;
                if usable <= start {
                    continue;
                }
                let end = match frame.end() {
                    Some(e) if e <= usable => e,
                    _ if eof => usable,
                    // Incomplete: inspect once a round of new bytes is in.
                    _ if usable - start >= ROUND => usable,
                    _ => continue,
                };
                if end <= start {
                    continue;
                }
                (start, end)
            } else {
                let len = p.payload.len() as u64;
                if progress > 0 || frame.offset >= len {
                    continue;
                }
                let end = frame.end().map_or(len, |e| e.min(len));
                (frame.offset, end)
            };
            frame.inspect_progress.set(end - frame.offset);
            for &n in self.frame_sigs.iter().filter(|n| wanted(n)) {
                let Some(s) = self.sigs.get(n as usize) else {
                    continue;
                };
                let Some(fs) = s.frame.as_deref() else {
                    continue;
                };
                if !s.header.matches(p) {
                    continue;
                }
                let vars = f.state.vars();
                if !s.checks.iter().all(|c| c.matches(p, vars)) {
                    continue;
                }
                th.scratch.captures.clear();
                let (scratch, out, tmp) = (&mut th.scratch, &mut th.frame_buf, &mut th.frame_tmp);
                let mut check = |b: &[u8]| {
                    if fs.matcher.transforms.is_empty() {
                        fs.matcher.matches(b, scratch, &env)
                    } else {
                        super::app_buffers::apply_transforms(&fs.matcher.transforms, b, out, tmp);
                        fs.matcher.matches(out, scratch, &env)
                    }
                };
                let mut hit = false;
                match stream.filter(|_| tcp) {
                    // Each stored block on its own (a gap splits the frame).
                    Some((ssn, sdir, _)) => ssn.blocks(sdir, start, end, &mut |_, b| {
                        hit = check(b);
                        hit
                    }),
                    None => {
                        if let Some(b) = p.payload.get(start as usize..end as usize) {
                            hit = check(b);
                        }
                    }
                }
                if hit {
                    s.post.iter().for_each(|op| op.apply(f.state));
                    super::inspect::apply_captures(&mut th.scratch, Some(&mut *f.state));
                    th.push_frame_hit(n, FrameHit::of(frame, app.proto, dir, tcp));
                }
            }
        }
    }
}

/// The payload Suricata logs for a frame (`FrameJsonStreamDataCallback`): the frame's
/// stored bytes up to `right` (at most 4095), a gap written as `[N bytes missing]`.
fn tcp_payload(h: &FrameHit, ssn: &TcpSession, out: &mut Vec<u8>) -> bool {
    const SIZE: usize = 4096;
    out.clear();
    let right = ssn.acked_edge(h.dir).max(ssn.app_progress(h.dir));
    let complete = h.len >= 0 && h.frame_end() <= ssn.data_right_edge(h.dir);
    let mut last = h.offset;
    let mut full = false;
    let frame_end = h.frame_end();
    let missing = |out: &mut Vec<u8>, n: u64| {
        let s = format!("[{n} bytes missing]");
        let room = SIZE.saturating_sub(out.len()).min(2048).saturating_sub(1);
        out.extend_from_slice(&s.as_bytes()[..s.len().min(room)]);
    };
    ssn.blocks(h.dir, h.offset, right, &mut |o, d| {
        if o >= frame_end {
            return true;
        }
        let mut n = d.len();
        let mut done = false;
        if o + d.len() as u64 >= frame_end {
            n = (frame_end - o) as usize;
            done = true;
        }
        if o > last {
            missing(out, o - last);
        }
        let avail = SIZE - out.len();
        let w = if n >= avail {
            avail.saturating_sub(1)
        } else {
            n
        };
        out.extend_from_slice(&d[..w]);
        if w < n {
            full = true;
            done = true;
        }
        last = o + w as u64;
        done
    });
    if complete && !full && last < frame_end {
        missing(out, frame_end - last);
    }
    complete
}

impl FrameHit {
    fn frame_end(&self) -> u64 {
        u64::try_from(self.len).map_or(u64::MAX, |l| self.offset + l)
    }
}

/// Writes the EVE `frame` object of `h` (as a value: the caller names it) (Suricata's `FrameJsonLogOneFrame`): the packet's
/// direction, on TCP the stream offset, length and logged payload, on UDP the datagram's
/// slice (at most 256 bytes).
pub fn write_frame(
    w: &mut JsonWriter,
    h: &FrameHit,
    to_server: bool,
    ssn: Option<&TcpSession>,
    udp_payload: &[u8],
) {
    w.start_object();
    w.set_str("type", name_of(h.proto, h.ty));
    w.set_u64("id", u64::try_from(h.id).unwrap_or(0));
    w.set_str("direction", if to_server { "toserver" } else { "toclient" });
    let mut buf = Vec::new();
    if h.tcp {
        w.set_u64("stream_offset", h.offset);
        let len = match u64::try_from(h.len) {
            Ok(l) => l,
            Err(_) => ssn.map_or(0, |s| s.contiguous_edge(h.dir).saturating_sub(h.offset)),
        };
        w.set_u64("length", len);
        if let Some(s) = ssn {
            let complete = tcp_payload(h, s, &mut buf);
            if !buf.is_empty() {
                w.set_base64("payload", &buf);
                w.set_printable("payload_printable", &buf);
                w.set_bool("complete", complete);
            }
        }
    } else {
        w.set_i64("length", h.len);
        let o = usize::try_from(h.offset).unwrap_or(usize::MAX);
        if o < udp_payload.len() {
            let rest = udp_payload.len() - o;
            let (n, complete) = match usize::try_from(h.len) {
                Ok(l) if l <= rest => (l, true),
                _ => (rest, false),
            };
            w.set_bool("complete", complete);
            let d = &udp_payload[o..o + n.min(256)];
            w.set_base64("payload", d);
            w.set_printable("payload_printable", d);
        }
    }
    if let Some(t) = h.tx {
        w.set_u64("tx_id", t);
    }
    w.close();
}
