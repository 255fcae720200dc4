//! Streaming gzip / deflate decoding of HTTP bodies (Content-Encoding), fed with arbitrary
//! segments. Like libhtp: `gzip` also accepts a zlib stream, `deflate` also accepts a zlib
//! or gzip stream; data that cannot be decoded is passed through as is (and flagged);
//! anything after the end of the compressed stream is ignored.

use flate2::{Decompress, FlushDecompress, Status};

/// A Content-Encoding this decoder understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Coding {
    /// `gzip` / `x-gzip`.
    Gzip,
    /// `deflate` / `x-deflate`.
    Deflate,
}

/// Scratch output size per inflate call.
const OUT_CHUNK: usize = 8192;

#[derive(Debug)]
enum GzHdr {
    /// Fixed 10-byte header; `n` bytes seen, `flags` once known.
    Fixed { n: u8, flags: u8 },
    /// FEXTRA length (2 bytes little endian).
    ExtraLen { n: u8, len: u16 },
    /// FEXTRA data left.
    Extra { left: u16 },
    /// FNAME (1) or FCOMMENT (2) up to NUL.
    Str { which: u8 },
    /// FHCRC, bytes left.
    Crc { left: u8 },
}

#[derive(Debug)]
enum State {
    /// Waiting for the first two bytes to tell gzip / zlib / raw deflate apart.
    Sniff { buf: [u8; 2], n: u8 },
    /// Skipping a gzip member header.
    Header(GzHdr),
    /// Inflating.
    Inflate,
    /// Undecodable input: passed through unchanged.
    Passthrough,
    /// End of the compressed stream (or stopped): input ignored.
    Done,
}

/// Input kept while nothing has been decoded yet, so that undecodable data can be passed
/// through whole.
const REPLAY_MAX: usize = 512;

/// One decoding layer.
struct Layer {
    coding: Coding,
    state: State,
    z: Decompress,
    flags: u8,
    replay: Vec<u8>,
}

impl Layer {
    fn new(coding: Coding) -> Layer {
        Layer {
            coding,
            state: State::Sniff { buf: [0; 2], n: 0 },
            z: Decompress::new(false),
            flags: 0,
            replay: Vec::new(),
        }
    }
}

/// Outcome flags of a decode call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DecodeReport {
    /// Some input could not be decoded and was passed through.
    pub failed: bool,
}

/// A chain of decoding layers (one per Content-Encoding token, outermost first).
pub(crate) struct Decoder {
    layers: Vec<Layer>,
    scratch: Vec<Vec<u8>>,
    stopped: bool,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("layers", &self.layers.len())
            .finish()
    }
}

impl Decoder {
    /// A decoder for `layers` encodings (all gzip/deflate behave alike once sniffed).
    pub(crate) fn new(codings: &[Coding]) -> Decoder {
        Decoder {
            layers: codings.iter().map(|&c| Layer::new(c)).collect(),
            scratch: codings.iter().map(|_| vec![0u8; OUT_CHUNK]).collect(),
            stopped: false,
        }
    }

    /// Stops decoding: further input is ignored.
    pub(crate) fn stop(&mut self) {
        self.stopped = true;
    }

    /// Whether [`Decoder::stop`] was called or the sink asked to stop.
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Decodes `input`, handing decoded bytes to `sink` (which returns false to stop).
    pub(crate) fn feed(
        &mut self,
        input: &[u8],
        sink: &mut dyn FnMut(&[u8]) -> bool,
    ) -> DecodeReport {
        let mut rep = DecodeReport::default();
        if self.stopped || input.is_empty() {
            return rep;
        }
        let Decoder {
            layers,
            scratch,
            stopped,
        } = self;
        if !feed_layer(layers, scratch, input, sink, &mut rep) {
            *stopped = true;
        }
        rep
    }
}

/// Feeds `input` to the first layer of `layers`; its output goes to the next layer or to
/// `sink`. Returns false when the sink asked to stop.
fn feed_layer(
    layers: &mut [Layer],
    scratch: &mut [Vec<u8>],
    mut input: &[u8],
    sink: &mut dyn FnMut(&[u8]) -> bool,
    rep: &mut DecodeReport,
) -> bool {
    let Some((layer, rest_layers)) = layers.split_first_mut() else {
        return sink(input);
    };
    let Some((out, rest_scratch)) = scratch.split_first_mut() else {
        return sink(input);
    };
    let mut emit = |data: &[u8], rep: &mut DecodeReport| -> bool {
        if data.is_empty() {
            return true;
        }
        feed_layer(rest_layers, rest_scratch, data, sink, rep)
    };
    while !input.is_empty() {
        match &mut layer.state {
            State::Done => return true,
            State::Passthrough => return emit(input, rep),
            State::Sniff { buf, n } => {
                let take = (2 - usize::from(*n)).min(input.len());
                for (i, &b) in input.iter().take(take).enumerate() {
                    if let Some(slot) = buf.get_mut(usize::from(*n) + i) {
                        *slot = b;
                    }
                }
                *n += take as u8;
                input = input.get(take..).unwrap_or(&[]);
                if *n < 2 {
                    return true;
                }
                let (b0, b1) = (buf[0], buf[1]);
                let zlib_hdr = b0 & 0x0f == 8
                    && b0 >> 4 <= 7
                    && (u16::from(b0) << 8 | u16::from(b1)) % 31 == 0;
                if b0 == 0x1f && b1 == 0x8b {
                    layer.state = State::Header(GzHdr::Fixed { n: 2, flags: 0 });
                } else {
                    if zlib_hdr && layer.coding == Coding::Deflate {
                        // libhtp first tries raw deflate, fails (and says so), then
                        // restarts in zlib mode.
                        rep.failed = true;
                    }
                    layer.z = Decompress::new(zlib_hdr);
                    layer.state = State::Inflate;
                    let head = [b0, b1];
                    if !inflate(layer, out, &head, &mut emit, rep) {
                        return false;
                    }
                }
            }
            State::Header(h) => {
                let Some((&b, rest)) = input.split_first() else {
                    return true;
                };
                input = rest;
                let mut next: Option<GzHdr> = None;
                let mut done = false;
                match h {
                    GzHdr::Fixed { n, flags } => {
                        if *n == 3 {
                            *flags = b;
                            layer.flags = b;
                        }
                        *n += 1;
                        if *n == 10 {
                            done = true;
                        }
                    }
                    GzHdr::ExtraLen { n, len } => {
                        *len |= u16::from(b) << (8 * *n);
                        *n += 1;
                        if *n == 2 {
                            if *len == 0 {
                                layer.flags &= !0x04;
                                done = true;
                            } else {
                                next = Some(GzHdr::Extra { left: *len });
                            }
                        }
                    }
                    GzHdr::Extra { left } => {
                        *left -= 1;
                        if *left == 0 {
                            layer.flags &= !0x04;
                            done = true;
                        }
                    }
                    GzHdr::Str { which } => {
                        if b == 0 {
                            layer.flags &= if *which == 1 { !0x08 } else { !0x10 };
                            done = true;
                        }
                    }
                    GzHdr::Crc { left } => {
                        *left -= 1;
                        if *left == 0 {
                            layer.flags &= !0x02;
                            done = true;
                        }
                    }
                }
                if let Some(nh) = next {
                    layer.state = State::Header(nh);
                } else if done {
                    // Next optional header part, in RFC 1952 order.
                    let f = layer.flags;
                    layer.state = if f & 0x04 != 0 {
                        State::Header(GzHdr::ExtraLen { n: 0, len: 0 })
                    } else if f & 0x08 != 0 {
                        State::Header(GzHdr::Str { which: 1 })
                    } else if f & 0x10 != 0 {
                        State::Header(GzHdr::Str { which: 2 })
                    } else if f & 0x02 != 0 {
                        State::Header(GzHdr::Crc { left: 2 })
                    } else {
                        layer.z = Decompress::new(false);
                        State::Inflate
                    };
                }
            }
            State::Inflate => {
                let data = input;
                input = &[];
                if !inflate(layer, out, data, &mut emit, rep) {
                    return false;
                }
            }
        }
    }
    true
}

/// Inflates `data` through `layer`, emitting output. On a decoding error the rest of the
/// input (and everything after) is passed through unchanged.
fn inflate(
    layer: &mut Layer,
    out: &mut [u8],
    mut data: &[u8],
    emit: &mut dyn FnMut(&[u8], &mut DecodeReport) -> bool,
    rep: &mut DecodeReport,
) -> bool {
    let replaying = layer.z.total_out() == 0 && layer.replay.len() < REPLAY_MAX;
    let mut replay = std::mem::take(&mut layer.replay);
    if replaying {
        replay.extend_from_slice(data.get(..REPLAY_MAX.min(data.len())).unwrap_or(&[]));
    }
    let ok = inflate_inner(layer, out, &mut data, emit, rep, &replay);
    if layer.z.total_out() == 0 {
        layer.replay = replay;
    }
    ok
}

fn inflate_inner(
    layer: &mut Layer,
    out: &mut [u8],
    data: &mut &[u8],
    emit: &mut dyn FnMut(&[u8], &mut DecodeReport) -> bool,
    rep: &mut DecodeReport,
    replay: &[u8],
) -> bool {
    loop {
        let before_in = layer.z.total_in();
        let before_out = layer.z.total_out();
        let res = layer.z.decompress(data, out, FlushDecompress::None);
        let used = (layer.z.total_in() - before_in) as usize;
        let produced = (layer.z.total_out() - before_out) as usize;
        if produced > 0 && !emit(out.get(..produced).unwrap_or(&[]), rep) {
            layer.state = State::Done;
            return false;
        }
        *data = data.get(used..).unwrap_or(&[]);
        match res {
            Ok(Status::StreamEnd) => {
                layer.state = State::Done;
                return true;
            }
            Ok(_) => {
                if data.is_empty() && produced < out.len() {
                    return true;
                }
                if used == 0 && produced == 0 {
                    // No progress possible with this input.
                    return true;
                }
            }
            Err(_) => {
                rep.failed = true;
                layer.state = State::Passthrough;
                if layer.z.total_out() == 0 && replay.len() < REPLAY_MAX {
                    // Nothing decoded yet: pass everything seen through, as libhtp does.
                    // `replay` holds every byte fed so far, this call's input included.
                    return emit(replay, rep);
                }
                return emit(data, rep);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use flate2::Compression;
    use std::io::Write;

    fn run(codings: &[Coding], data: &[u8], step: usize) -> (Vec<u8>, bool) {
        let mut d = Decoder::new(codings);
        let mut out = Vec::new();
        let mut failed = false;
        for c in data.chunks(step.max(1)) {
            let r = d.feed(c, &mut |b| {
                out.extend_from_slice(b);
                true
            });
            failed |= r.failed;
        }
        (out, failed)
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn gzip_zlib_raw_any_segmentation() {
        let plain: Vec<u8> = (0..20000u32).map(|i| (i % 251) as u8).collect();
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(&plain).unwrap();
        let zl = z.finish().unwrap();
        let mut r = DeflateEncoder::new(Vec::new(), Compression::default());
        r.write_all(&plain).unwrap();
        let raw = r.finish().unwrap();
        let ok = |got: (Vec<u8>, bool), failed: bool| got.0 == plain && got.1 == failed;
        for step in [1, 3, 100, 100_000] {
            assert!(ok(run(&[Coding::Gzip], &gz(&plain), step), false));
            assert!(ok(run(&[Coding::Gzip], &zl, step), false));
            assert!(ok(run(&[Coding::Deflate], &raw, step), false));
            // libhtp decodes a zlib stream sent as "deflate" but flags the failed first try.
            assert!(ok(run(&[Coding::Deflate], &zl, step), true));
            assert!(ok(
                run(&[Coding::Gzip, Coding::Gzip], &gz(&gz(&plain)), step),
                false
            ));
        }
    }

    #[test]
    fn gzip_header_with_name_and_trailing_junk() {
        let mut e = flate2::GzBuilder::new()
            .filename("a.txt")
            .comment("c")
            .extra(vec![1, 2, 3])
            .write(Vec::new(), Compression::default());
        e.write_all(b"hello world").unwrap();
        let mut data = e.finish().unwrap();
        data.extend_from_slice(b"JUNK");
        assert_eq!(
            run(&[Coding::Gzip], &data, 1),
            (b"hello world".to_vec(), false)
        );
    }

    #[test]
    fn garbage_passes_through() {
        let (out, failed) = run(
            &[Coding::Gzip],
            b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xff\xffplain",
            4,
        );
        assert!(failed);
        assert!(out.ends_with(b"plain"));
    }

    #[test]
    fn sink_stop_is_honoured() {
        let big = gz(&vec![0u8; 1 << 20]);
        let mut d = Decoder::new(&[Coding::Gzip]);
        let mut n = 0usize;
        d.feed(&big, &mut |b| {
            n += b.len();
            n < 10_000
        });
        assert!(d.is_stopped());
        assert!(n < 10_000 + OUT_CHUNK);
    }
}
