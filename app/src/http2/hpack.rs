//! HPACK (RFC 7541) header block decoding as Suricata 7's HTTP/2 parser does it: the static
//! table, a dynamic table per direction bounded by `app-layer.protocols.http2.max-table-size`,
//! size updates kept as blocks (EVE `table_size_update`), and decoding errors kept as blocks
//! (EVE `error`) instead of failing the frame.

use std::cell::RefCell;
use std::collections::VecDeque;

use loona_hpack::huffman::HuffmanDecoder;

/// What one representation of a header block decoded to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// A header field.
    Header,
    /// A dynamic table size update (the new size).
    SizeUpdate(u64),
    /// A reference to an index that is not in the tables.
    NotIndexed,
    /// An integer that does not fit 64 bits.
    IntegerOverflow,
    /// Index 0.
    Index0,
}

impl BlockKind {
    /// Suricata's name of the decoding status (EVE `error`).
    pub fn error_name(&self) -> &'static str {
        match self {
            BlockKind::Header => "HTTP2HeaderDecodeSuccess",
            BlockKind::SizeUpdate(_) => "HTTP2HeaderDecodeSizeUpdate",
            BlockKind::NotIndexed => "HTTP2HeaderDecodeNotIndexed",
            BlockKind::IntegerOverflow => "HTTP2HeaderDecodeIntegerOverflow",
            BlockKind::Index0 => "HTTP2HeaderDecodeIndex0",
        }
    }

    /// An error status (Suricata's `>= HTTP2HeaderDecodeError`).
    pub fn is_error(&self) -> bool {
        !matches!(self, BlockKind::Header | BlockKind::SizeUpdate(_))
    }
}

/// One decoded representation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Header name (empty unless [`BlockKind::Header`]).
    pub name: Vec<u8>,
    /// Header value.
    pub value: Vec<u8>,
    /// What it is.
    pub kind: BlockKind,
}

impl Block {
    fn status(kind: BlockKind) -> Block {
        Block {
            name: Vec::new(),
            value: Vec::new(),
            kind,
        }
    }
}

const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// The dynamic table of one direction.
#[derive(Clone, Debug)]
pub struct DynTable {
    /// Oldest first.
    entries: VecDeque<(Vec<u8>, Vec<u8>)>,
    /// RFC 7541 size of the entries counted so far.
    current: usize,
    /// The size the peer allows.
    pub max_size: usize,
    /// 0: none; 1: the peer allowed more than our limit; 2: the limit was passed.
    pub overflow: u8,
    /// `app-layer.protocols.http2.max-table-size`.
    pub limit: usize,
}

impl DynTable {
    /// A table with RFC 7541's default size and Suricata's `max-table-size` limit.
    pub fn new(limit: usize) -> Self {
        DynTable {
            entries: VecDeque::new(),
            current: 0,
            max_size: 4096,
            overflow: 0,
            limit,
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No entries held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A SETTINGS_HEADER_TABLE_SIZE from the peer.
    pub fn set_peer_size(&mut self, v: u32) {
        self.max_size = v as usize;
        self.overflow = u8::from(v as usize > self.limit);
    }

    fn evict_to(&mut self, size: usize) {
        while self.current > size {
            match self.entries.pop_front() {
                Some((n, v)) => self.current -= (32 + n.len() + v.len()).min(self.current),
                None => {
                    self.current = 0;
                    break;
                }
            }
        }
    }

    fn add(&mut self, name: &[u8], value: &[u8]) {
        self.current = self.current.saturating_add(32 + name.len() + value.len());
        if self.overflow > 0 {
            if self.overflow == 1 {
                if self.current <= self.limit {
                    self.entries.push_back((name.to_vec(), value.to_vec()));
                } else if self.current > self.max_size {
                    self.overflow = 2;
                }
            }
        } else {
            self.entries.push_back((name.to_vec(), value.to_vec()));
        }
        let max = self.max_size;
        self.evict_to(max);
    }

    fn get(&self, n: u64) -> Result<(Vec<u8>, Vec<u8>), BlockKind> {
        if n == 0 {
            return Err(BlockKind::Index0);
        }
        if let Some((a, b)) = usize::try_from(n - 1).ok().and_then(|i| STATIC.get(i)) {
            return Ok((a.as_bytes().to_vec(), b.as_bytes().to_vec()));
        }
        let i = usize::try_from(n).unwrap_or(usize::MAX) - STATIC.len();
        if i > self.entries.len() {
            return Err(BlockKind::NotIndexed);
        }
        // index 62 is the newest entry
        let e = &self.entries[self.entries.len() - i];
        Ok((e.0.clone(), e.1.clone()))
    }
}

/// Input ended inside a representation.
#[derive(Debug, PartialEq, Eq)]
pub struct Truncated;

/// HPACK integer with an `prefix`-bit prefix already masked to `first`. `Ok(None)`: it does
/// not fit 64 bits (Suricata's integer overflow).
fn integer(input: &[u8], first: u64, max: u64) -> Result<(&[u8], Option<u64>), Truncated> {
    if first < max {
        return Ok((input, Some(first)));
    }
    let cont = input.iter().take_while(|b| *b & 0x80 != 0).count();
    let Some(&last) = input.get(cont) else {
        return Err(Truncated);
    };
    let rest = &input[cont + 1..];
    if cont > 9 || (cont == 9 && last > 1) {
        // Suricata reads this as 0
        return Ok((rest, Some(0)));
    }
    let mut v = max;
    for (i, b) in input[..cont].iter().enumerate() {
        v = v.wrapping_add(u64::from(b & 0x7f) << (7 * i));
    }
    let add = u64::from(last).checked_shl(7 * cont as u32).unwrap_or(0);
    Ok((rest, v.checked_add(add)))
}

thread_local! {
    static HUFFMAN: RefCell<HuffmanDecoder> = RefCell::new(HuffmanDecoder::new());
}

fn string(input: &[u8]) -> Result<(&[u8], Option<Vec<u8>>), Truncated> {
    let Some(&b) = input.first() else {
        return Err(Truncated);
    };
    let (rest, len) = integer(&input[1..], u64::from(b & 0x7f), 0x7f)?;
    let Some(len) = len else {
        return Ok((rest, None));
    };
    let len = usize::try_from(len).map_err(|_| Truncated)?;
    if rest.len() < len {
        return Err(Truncated);
    }
    let (data, rest) = rest.split_at(len);
    if b & 0x80 == 0 {
        return Ok((rest, Some(data.to_vec())));
    }
    let v = HUFFMAN.with(|h| h.borrow_mut().decode(data).unwrap_or_default());
    Ok((rest, Some(v)))
}

/// Decodes a header block fragment: the blocks decoded, and whether input was left over that
/// does not decode (Suricata's incomplete frame data).
pub fn decode(mut input: &[u8], table: &mut DynTable) -> (Vec<Block>, bool) {
    let mut out = Vec::new();
    while let Some(&b) = input.first() {
        match one(input, b, table) {
            Ok((rest, block)) => {
                let overflow = block.kind == BlockKind::IntegerOverflow;
                out.push(block);
                if overflow {
                    return (out, false);
                }
                input = rest;
            }
            Err(Truncated) => return (out, true),
        }
    }
    (out, false)
}

fn one<'a>(input: &'a [u8], b: u8, table: &mut DynTable) -> Result<(&'a [u8], Block), Truncated> {
    let rest = &input[1..];
    if b & 0x80 != 0 {
        let (rest, n) = integer(rest, u64::from(b & 0x7f), 0x7f)?;
        let Some(n) = n else {
            return Ok((rest, Block::status(BlockKind::IntegerOverflow)));
        };
        return Ok((
            rest,
            match table.get(n) {
                Ok((name, value)) => Block {
                    name,
                    value,
                    kind: BlockKind::Header,
                },
                Err(k) => Block::status(k),
            },
        ));
    }
    if b & 0xe0 == 0x20 {
        let (rest, n) = integer(rest, u64::from(b & 0x1f), 0x1f)?;
        let Some(n) = n else {
            return Ok((rest, Block::status(BlockKind::IntegerOverflow)));
        };
        if (n as usize) < table.max_size {
            table.evict_to(n as usize);
        }
        return Ok((rest, Block::status(BlockKind::SizeUpdate(n))));
    }
    let (mask, index_it) = if b & 0x40 != 0 {
        (0x3f, true)
    } else {
        (0x0f, false)
    };
    let (rest, idx) = integer(rest, u64::from(b & mask), u64::from(mask))?;
    let Some(idx) = idx else {
        return Ok((rest, Block::status(BlockKind::IntegerOverflow)));
    };
    let (rest, name, kind) = if idx == 0 {
        let (rest, n) = string(rest)?;
        match n {
            Some(n) => (rest, n, BlockKind::Header),
            None => return Ok((rest, Block::status(BlockKind::IntegerOverflow))),
        }
    } else {
        match table.get(idx) {
            Ok((n, _)) => (rest, n, BlockKind::Header),
            Err(_) => (rest, Vec::new(), BlockKind::NotIndexed),
        }
    };
    let (rest, value) = string(rest)?;
    let Some(value) = value else {
        return Ok((rest, Block::status(BlockKind::IntegerOverflow)));
    };
    if index_it && kind == BlockKind::Header {
        table.add(&name, &value);
    }
    Ok((rest, Block { name, value, kind }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7541_c3_requests_without_huffman_share_the_dynamic_table() {
        let mut t = DynTable::new(65536);
        let (b, trunc) = decode(b"\x82\x86\x84\x41\x0fwww.example.com", &mut t);
        assert!(!trunc);
        assert_eq!(b.len(), 4);
        assert_eq!(b[3].name, b":authority");
        assert_eq!(b[3].value, b"www.example.com");
        assert_eq!(t.len(), 1);
        let (b, _) = decode(b"\x82\x86\x84\xbe\x58\x08no-cache", &mut t);
        assert_eq!(b[3].value, b"www.example.com");
        assert_eq!(b[4].name, b"cache-control");
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn huffman_strings_decode() {
        // RFC 7541 C.4.1
        let mut t = DynTable::new(65536);
        let (b, _) = decode(
            &[
                0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab,
                0x90, 0xf4, 0xff,
            ],
            &mut t,
        );
        assert_eq!(b[3].value, b"www.example.com");
    }

    #[test]
    fn bad_indexes_and_size_updates_are_blocks() {
        let mut t = DynTable::new(65536);
        let (b, _) = decode(b"\x80\xbf\x3f\xe1\x1f", &mut t);
        assert_eq!(b[0].kind, BlockKind::Index0);
        assert_eq!(b[1].kind, BlockKind::NotIndexed);
        assert_eq!(b[2].kind, BlockKind::SizeUpdate(4096));
        let (b, trunc) = decode(b"\x41\x05ab", &mut t);
        assert!(b.is_empty() && trunc);
        let (b, _) = decode(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", &mut t);
        assert_eq!(b.len(), 1);
    }

    #[test]
    fn table_is_bounded_by_the_limit() {
        let mut t = DynTable::new(100);
        t.set_peer_size(1 << 30);
        for _ in 0..100 {
            let mut v = vec![0x40, 0x01, b'a', 0x7f, 0x81, 0x01];
            v.extend(std::iter::repeat_n(b'x', 0x80 + 0x7f));
            decode(&v, &mut t);
        }
        assert!(t.len() <= 1);
    }

    #[test]
    fn no_panic_on_any_prefix() {
        let data: Vec<u8> = (0..=255u8).cycle().take(2000).collect();
        for i in 0..data.len().min(600) {
            let mut t = DynTable::new(4096);
            decode(&data[i..], &mut t);
        }
    }
}
