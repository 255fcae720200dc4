//! Walking one TPACKET_V3 block: the block descriptor, the packet headers chained by
//! `tp_next_offset`, and the VLAN tag restore. Safe code over the block's bytes; every offset
//! the kernel wrote is checked against the block before use.

use std::mem::offset_of;

use libc::{tpacket3_hdr, tpacket_block_desc, tpacket_hdr_v1, tpacket_hdr_variant1};

use crate::{LinkType, RawPacket, Timestamp};

/// Offset of `block_status` in the block descriptor.
pub(crate) const BLOCK_STATUS_OFF: usize =
    offset_of!(tpacket_block_desc, hdr) + offset_of!(tpacket_hdr_v1, block_status);
const NUM_PKTS_OFF: usize =
    offset_of!(tpacket_block_desc, hdr) + offset_of!(tpacket_hdr_v1, num_pkts);
const FIRST_PKT_OFF: usize =
    offset_of!(tpacket_block_desc, hdr) + offset_of!(tpacket_hdr_v1, offset_to_first_pkt);
const SEQ_OFF: usize = offset_of!(tpacket_block_desc, hdr) + offset_of!(tpacket_hdr_v1, seq_num);

const H_NEXT: usize = offset_of!(tpacket3_hdr, tp_next_offset);
const H_SEC: usize = offset_of!(tpacket3_hdr, tp_sec);
const H_NSEC: usize = offset_of!(tpacket3_hdr, tp_nsec);
const H_SNAPLEN: usize = offset_of!(tpacket3_hdr, tp_snaplen);
const H_LEN: usize = offset_of!(tpacket3_hdr, tp_len);
const H_STATUS: usize = offset_of!(tpacket3_hdr, tp_status);
const H_MAC: usize = offset_of!(tpacket3_hdr, tp_mac);
const H_RXHASH: usize = offset_of!(tpacket3_hdr, hv1) + offset_of!(tpacket_hdr_variant1, tp_rxhash);
const H_TCI: usize = offset_of!(tpacket3_hdr, hv1) + offset_of!(tpacket_hdr_variant1, tp_vlan_tci);
const H_TPID: usize =
    offset_of!(tpacket3_hdr, hv1) + offset_of!(tpacket_hdr_variant1, tp_vlan_tpid);
const H_SIZE: usize = std::mem::size_of::<tpacket3_hdr>();

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// The descriptor fields of a block user space owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockHeader {
    pub(crate) num_pkts: u32,
    pub(crate) first: usize,
    pub(crate) seq: u64,
}

/// Reads the block descriptor; `None` if the block is too short to hold one.
pub(crate) fn block_header(block: &[u8]) -> Option<BlockHeader> {
    Some(BlockHeader {
        num_pkts: u32_at(block, NUM_PKTS_OFF)?,
        first: u32_at(block, FIRST_PKT_OFF)? as usize,
        seq: u64_at(block, SEQ_OFF)?,
    })
}

/// Metadata of one ring packet besides the frame itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketInfo {
    /// `tp_status` bits (`TP_STATUS_*`).
    pub status: u32,
    /// The kernel's skb hash (`TP_FT_REQ_FILL_RXHASH`); not guaranteed symmetric.
    pub rxhash: u32,
    /// The VLAN TCI the kernel stripped, when `TP_STATUS_VLAN_VALID`; it was put back into
    /// the frame handed out.
    pub vlan_tci: Option<u16>,
}

/// One packet header, checked against the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PktHeader {
    pub(crate) next: u32,
    pub(crate) ts: Timestamp,
    pub(crate) data_start: usize,
    pub(crate) snaplen: usize,
    pub(crate) len: u32,
    pub(crate) info: PacketInfo,
    /// TPID of the stripped tag (0x8100 unless the kernel says otherwise).
    pub(crate) tpid: u16,
}

/// Parses the packet header at `off`; `None` when it or its data lies outside the block.
pub(crate) fn packet_header(block: &[u8], off: usize) -> Option<PktHeader> {
    if off.checked_add(H_SIZE)? > block.len() {
        return None;
    }
    let status = u32_at(block, off + H_STATUS)?;
    let snaplen = u32_at(block, off + H_SNAPLEN)? as usize;
    let data_start = off.checked_add(u16_at(block, off + H_MAC)? as usize)?;
    if data_start < off + H_SIZE || data_start.checked_add(snaplen)? > block.len() {
        return None;
    }
    let vlan_valid = status & libc::TP_STATUS_VLAN_VALID != 0;
    let tpid = if status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
        u16_at(block, off + H_TPID)?
    } else {
        0x8100
    };
    Some(PktHeader {
        next: u32_at(block, off + H_NEXT)?,
        ts: Timestamp::from_secs_nanos(
            u32_at(block, off + H_SEC)? as u64,
            u32_at(block, off + H_NSEC)?.min(999_999_999),
        ),
        data_start,
        snaplen,
        len: u32_at(block, off + H_LEN)?,
        info: PacketInfo {
            status,
            rxhash: u32_at(block, off + H_RXHASH)?,
            vlan_tci: vlan_valid.then(|| u32_at(block, off + H_TCI).unwrap_or(0) as u16),
        },
        tpid,
    })
}

/// Cursor over the packets of one block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor {
    /// Packets left.
    pub(crate) left: u32,
    /// Offset of the next packet header.
    pub(crate) off: usize,
    /// The chain broke after a good packet; the next step reports it.
    broken: bool,
}

/// What one step of the cursor found.
pub(crate) enum Step {
    /// A packet.
    Packet(PktHeader),
    /// No packets left.
    End,
    /// A header or offset outside the block; the rest of the block is skipped.
    Malformed,
}

impl Cursor {
    /// A cursor at the block's first packet.
    pub(crate) fn new(h: &BlockHeader) -> Cursor {
        Cursor {
            left: h.num_pkts,
            off: h.first,
            broken: false,
        }
    }

    /// Reads the next packet header and advances.
    pub(crate) fn step(&mut self, block: &[u8]) -> Step {
        if self.broken {
            self.broken = false;
            return Step::Malformed;
        }
        if self.left == 0 {
            return Step::End;
        }
        let Some(h) = packet_header(block, self.off) else {
            self.left = 0;
            return Step::Malformed;
        };
        self.left -= 1;
        if self.left > 0 {
            match self.off.checked_add(h.next as usize) {
                Some(n) if h.next as usize >= H_SIZE && n < block.len() => self.off = n,
                _ => {
                    // The packet itself is fine; the chain after it is not.
                    self.left = 0;
                    self.broken = true;
                }
            }
        }
        Step::Packet(h)
    }
}

/// Builds the packet handed out: the frame in place, or — for an Ethernet packet whose VLAN
/// tag the kernel stripped — a copy in `scratch` with the 802.1Q/802.1ad tag re-inserted after
/// the MAC addresses. `scratch` must have capacity for the frame plus 4 bytes (no allocation
/// then).
pub(crate) fn make_packet<'a>(
    block: &'a [u8],
    h: &PktHeader,
    link: LinkType,
    scratch: &'a mut Vec<u8>,
) -> (RawPacket<'a>, bool) {
    let frame = block
        .get(h.data_start..h.data_start + h.snaplen)
        .unwrap_or_default();
    match h.info.vlan_tci {
        Some(tci) if frame.len() >= 12 && link == LinkType::Ethernet => {
            scratch.clear();
            scratch.extend_from_slice(&frame[..12]);
            scratch.extend_from_slice(&h.tpid.to_be_bytes());
            scratch.extend_from_slice(&tci.to_be_bytes());
            scratch.extend_from_slice(&frame[12..]);
            (
                RawPacket {
                    ts: h.ts,
                    link,
                    data: scratch.as_slice(),
                    orig_len: h.len.saturating_add(4),
                },
                true,
            )
        }
        _ => (
            RawPacket {
                ts: h.ts,
                link,
                data: frame,
                orig_len: h.len.max(frame.len() as u32),
            },
            false,
        ),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes a V3 block image with the given frames (and optional VLAN tci per frame).
    pub(crate) fn block_image(size: usize, frames: &[(&[u8], Option<u16>)]) -> Vec<u8> {
        let mut b = vec![0u8; size];
        let first = 48usize; // descriptor rounded up, like the kernel's BLK_PLUS_PRIV
        b[NUM_PKTS_OFF..NUM_PKTS_OFF + 4].copy_from_slice(&(frames.len() as u32).to_ne_bytes());
        b[FIRST_PKT_OFF..FIRST_PKT_OFF + 4].copy_from_slice(&(first as u32).to_ne_bytes());
        b[SEQ_OFF..SEQ_OFF + 8].copy_from_slice(&7u64.to_ne_bytes());
        let mut off = first;
        for (i, (f, tci)) in frames.iter().enumerate() {
            let mac = 64usize; // header + sockaddr_ll padding, 16-aligned
            let next = (mac + f.len()).next_multiple_of(16);
            let put = |b: &mut Vec<u8>, at: usize, v: u32| {
                b[off + at..off + at + 4].copy_from_slice(&v.to_ne_bytes())
            };
            put(
                &mut b,
                H_NEXT,
                if i + 1 < frames.len() { next as u32 } else { 0 },
            );
            put(&mut b, H_SEC, 1_700_000_000 + i as u32);
            put(&mut b, H_NSEC, 123_456_789);
            put(&mut b, H_SNAPLEN, f.len() as u32);
            put(&mut b, H_LEN, f.len() as u32 + 10);
            let mut status = libc::TP_STATUS_USER;
            if let Some(t) = tci {
                status |= libc::TP_STATUS_VLAN_VALID;
                put(&mut b, H_TCI, *t as u32);
            }
            put(&mut b, H_STATUS, status);
            put(&mut b, H_RXHASH, 0xabcd0000 + i as u32);
            b[off + H_MAC..off + H_MAC + 2].copy_from_slice(&(mac as u16).to_ne_bytes());
            b[off + mac..off + mac + f.len()].copy_from_slice(f);
            off += next;
        }
        b
    }

    /// (frame, orig_len, vlan tci) per packet.
    type Walked = Vec<(Vec<u8>, u32, Option<u16>)>;

    fn walk(b: &[u8]) -> (Walked, bool) {
        let h = block_header(b).unwrap();
        let mut c = Cursor::new(&h);
        let mut scratch = Vec::with_capacity(b.len() + 4);
        let mut out = Vec::new();
        loop {
            match c.step(b) {
                Step::Packet(ph) => {
                    let (p, _) = make_packet(b, &ph, LinkType::Ethernet, &mut scratch);
                    out.push((p.data.to_vec(), p.orig_len, ph.info.vlan_tci));
                }
                Step::End => return (out, false),
                Step::Malformed => return (out, true),
            }
        }
    }

    #[test]
    fn walks_every_packet_and_restores_vlan() {
        let f1: Vec<u8> = (0..60u8).collect();
        let f2: Vec<u8> = (100..164u8).collect();
        let img = block_image(4096, &[(&f1, None), (&f2, Some(0x2064))]);
        let (pkts, bad) = walk(&img);
        assert!(!bad);
        assert_eq!(pkts.len(), 2);
        assert_eq!(pkts[0].0, f1);
        assert_eq!(pkts[0].1, 70);
        let tagged = &pkts[1].0;
        assert_eq!(tagged.len(), f2.len() + 4);
        assert_eq!(&tagged[..12], &f2[..12]);
        assert_eq!(&tagged[12..16], &[0x81, 0x00, 0x20, 0x64]);
        assert_eq!(&tagged[16..], &f2[12..]);
        assert_eq!(pkts[1].1, 64 + 10 + 4);
        assert_eq!(pkts[1].2, Some(0x2064));
    }

    #[test]
    fn malformed_offsets_stop_the_walk_without_panic() {
        let f: Vec<u8> = vec![1; 60];
        let good = block_image(1024, &[(&f, None), (&f, None), (&f, None)]);
        // Table: (byte offset to overwrite, value) -> packets still delivered.
        let first = 48;
        let cases: &[(usize, u32, usize)] = &[
            (FIRST_PKT_OFF, 5000, 0),     // first packet outside the block
            (first + H_SNAPLEN, 4000, 0), // data runs past the block
            (first + H_NEXT, 0, 1),       // next offset 0: chain broken
            (first + H_NEXT, 100_000, 1), // next offset outside
            (NUM_PKTS_OFF, 9, 3),         // more packets claimed than exist
            (first + H_MAC, 2, 0),        // data overlapping the header
        ];
        let (_, bad) = walk(&good);
        assert!(!bad);
        for &(at, v, want) in cases {
            let mut img = good.clone();
            if at == first + H_MAC {
                img[at..at + 2].copy_from_slice(&(v as u16).to_ne_bytes());
            } else {
                img[at..at + 4].copy_from_slice(&v.to_ne_bytes());
            }
            let (pkts, bad) = walk(&img);
            assert_eq!(pkts.len(), want, "case at {at} = {v}");
            assert!(bad, "case at {at} = {v} not reported as malformed");
        }
        // A block shorter than a descriptor.
        assert!(block_header(&[0u8; 8]).is_none());
    }

    #[test]
    fn raw_ip_frames_keep_their_link_and_get_no_tag() {
        let f: Vec<u8> = (0..40u8).collect();
        let img = block_image(1024, &[(&f, Some(7))]);
        let h = block_header(&img).unwrap();
        let mut c = Cursor::new(&h);
        let Step::Packet(ph) = c.step(&img) else {
            panic!("no packet")
        };
        let mut scratch = Vec::with_capacity(1100);
        let (p, restored) = make_packet(&img, &ph, LinkType::Raw, &mut scratch);
        assert!(!restored);
        assert_eq!(p.link, LinkType::Raw);
        assert_eq!(p.data, &f[..]);
    }

    #[test]
    fn short_tagged_frame_is_handed_out_unchanged() {
        let f = [9u8; 10];
        let img = block_image(1024, &[(&f, Some(5))]);
        let (pkts, _) = walk(&img);
        assert_eq!(pkts[0].0, f);
    }
}
