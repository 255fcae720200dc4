//! One file carried in chunks at offsets (NFS READ replies, WRITE calls), as Suricata's
//! `FileTransferTracker` follows it: a chunk at the tracked offset is appended as it streams
//! in, any other chunk is held at its offset until the file reaches it; a chunk marked last
//! closes the file once it is in; a new chunk while one is unfinished, or a last chunk out of
//! order, truncates the file. Held data is bounded ([`MAX_QUEUED`]); past it the file is
//! truncated.

use std::collections::HashMap;

use crate::files::{FileConfig, TrackedFile};

/// Bytes of out-of-order chunks a file holds at most (Suricata truncates a file whose
/// queue passes 2000000 bytes after a gap; shrike bounds it always).
pub const MAX_QUEUED: u64 = 2_000_000;

/// The tracker.
#[derive(Debug, Default)]
pub struct Tracker {
    /// The file (`None` until the first chunk opens it).
    pub file: Option<TrackedFile>,
    tracked: u64,
    chunk_left: u32,
    fill: u8,
    chunk_last: bool,
    chunk_ooo: bool,
    ooo_off: u64,
    open: bool,
    truncated: bool,
    closed: bool,
    chunks: HashMap<u64, (Vec<u8>, bool)>,
    queued: u64,
}

impl Tracker {
    /// Whether the file is not open (never opened, or ended).
    pub fn is_done(&self) -> bool {
        !self.open
    }

    /// Bytes held out of order.
    pub fn queued(&self) -> u64 {
        self.queued
    }

    /// End the file normally.
    pub fn close(&mut self) {
        if !self.truncated {
            if let Some(f) = self.file.as_mut() {
                f.close_tracked(false);
            }
        }
        self.open = false;
        self.closed = true;
        self.tracked = 0;
    }

    /// End the file early.
    pub fn trunc(&mut self) {
        if self.truncated || !self.open {
            return;
        }
        if let Some(f) = self.file.as_mut() {
            f.close_tracked(true);
        }
        self.truncated = true;
        self.chunks.clear();
        self.queued = 0;
    }

    /// A new chunk at `off` of `size` bytes (`fill` padding bytes follow it), whose first
    /// bytes are `data`. Returns the bytes of `data` used.
    #[allow(clippy::too_many_arguments)]
    pub fn new_chunk(
        &mut self,
        cfg: &FileConfig,
        name: &[u8],
        data: &[u8],
        off: u64,
        size: u32,
        fill: u8,
        last: bool,
    ) -> u32 {
        if self.chunk_left != 0 || self.fill != 0 {
            self.trunc();
        }
        if off != self.tracked {
            if last {
                self.trunc();
            }
            self.chunk_ooo = true;
            self.ooo_off = off;
        }
        self.chunk_left = size;
        self.fill = fill;
        self.chunk_last = last;
        if self.truncated || self.closed {
            return 0;
        }
        if !self.open {
            self.file = Some(TrackedFile::open(name, cfg));
            self.open = true;
        }
        self.update(data, 0)
    }

    fn append(&mut self, d: &[u8], gap: u32) {
        if let Some(f) = self.file.as_mut() {
            if gap > 0 {
                f.gap(u64::from(gap));
            } else {
                f.append(d);
            }
        }
    }

    fn hold(&mut self, d: &[u8]) {
        let e = self.chunks.entry(self.ooo_off).or_default();
        e.0.extend_from_slice(d);
        self.queued += d.len() as u64;
        if self.queued > MAX_QUEUED {
            self.trunc();
        }
    }

    /// More bytes of the chunk in progress (`gap` > 0: that many bytes are missing, `data`
    /// is zeros standing for them). Returns the bytes used (chunk data and padding).
    pub fn update(&mut self, data: &[u8], gap: u32) -> u32 {
        if self.truncated {
            let used = (data.len() as u32).min(self.chunk_left);
            self.chunk_left = self.chunk_left.saturating_sub(data.len() as u32);
            return used;
        }
        if self.chunk_left == 0 && self.fill == 0 {
            if self.chunk_last {
                self.close();
                self.chunk_last = false;
            }
            return 0;
        }
        if self.chunk_left == 0 {
            let n = data.len().min(usize::from(self.fill));
            self.fill -= n as u8;
            return n as u32;
        }
        let mut used = 0usize;
        if self.chunk_left as usize <= data.len() {
            let left = self.chunk_left as usize;
            let d = &data[..left];
            if !self.chunk_ooo {
                self.append(d, if gap > 0 { left as u32 } else { 0 });
                self.tracked += left as u64;
            } else {
                self.hold(d);
            }
            used += left;
            self.chunk_left = 0;
            if self.fill > 0 {
                let extra = data.len() - left;
                let n = extra.min(usize::from(self.fill));
                used += n;
                self.fill -= n as u8;
            } else if !self.chunk_ooo {
                while let Some((c, _)) = self.chunks.remove(&self.tracked) {
                    self.queued -= c.len() as u64;
                    self.append(&c, 0);
                    self.tracked += c.len() as u64;
                }
            } else {
                self.chunk_ooo = false;
                self.ooo_off = 0;
            }
            if self.chunk_last {
                self.close();
                self.chunk_last = false;
            }
        } else {
            if !self.chunk_ooo {
                self.append(data, gap);
                self.tracked += data.len() as u64;
            } else {
                self.hold(data);
            }
            self.chunk_left -= data.len() as u32;
            used += data.len();
        }
        used as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::FileState;

    #[test]
    fn in_order_chunks_stream_and_close() {
        let cfg = FileConfig::default();
        let mut t = Tracker::default();
        assert_eq!(t.new_chunk(&cfg, b"f", b"ab", 0, 4, 0, false), 2);
        assert_eq!(t.update(b"cdXX", 0), 2);
        assert_eq!(t.new_chunk(&cfg, b"f", b"ef", 4, 2, 2, true), 2);
        assert!(t.is_done());
        let f = t.file.as_ref().unwrap();
        assert_eq!((f.size(), f.state()), (6, FileState::Closed));
    }

    #[test]
    fn out_of_order_chunk_is_held_then_appended() {
        let cfg = FileConfig::default();
        let mut t = Tracker::default();
        t.new_chunk(&cfg, b"f", b"cd", 2, 2, 0, false);
        assert_eq!(t.queued(), 2);
        t.new_chunk(&cfg, b"f", b"ab", 0, 2, 0, false);
        assert_eq!(t.queued(), 0);
        assert_eq!(t.file.as_ref().unwrap().size(), 4);
        // A last chunk out of order: earlier chunks were missed.
        t.new_chunk(&cfg, b"f", b"zz", 9, 2, 0, true);
        assert_eq!(t.file.as_ref().unwrap().state(), FileState::Truncated);
    }
}
