//! File tracking shared by every protocol that carries files (Suricata's File API,
//! `util-file.c`): a protocol opens a [`TrackedFile`] with a name when a file's first bytes
//! arrive, appends its data in order (hashes are updated as the data streams by, nothing is
//! buffered beyond the first bytes kept for `file.magic`), signals gaps, and closes it
//! (`CLOSED`) or cuts it short (`TRUNCATED`). The `fileinfo` record and the `files` array
//! of alerts are written from it ([`TrackedFile::write_eve`], Suricata's `EveFileInfo`).
//!
//! What is tracked is set once per engine ([`FileConfig`]): the eve-log `files` options
//! (`force-hash`, `force-magic`) and what the loaded rules need (`filemd5` needs MD5 ...).

use md5::{Digest as _, Md5};
use sha1::Sha1;
use sha2::Sha256;
use shrike_output::JsonWriter;

/// Bytes of a file's start kept for `file.magic` (libmagic reads at most this much of a
/// buffer for most types; Suricata hands it the first chunk of the file).
pub const MAGIC_HEAD: usize = 4096;

/// Longest file name kept (Suricata's `SC_FILENAME_MAX`); longer names are cut and the
/// protocol raises its `file_name_too_long` event.
pub const FILENAME_MAX: usize = 1024;

/// What every tracked file computes (Suricata's `g_file_force_*` and the rules' needs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileConfig {
    /// MD5 (`force-hash: [md5]`, `filemd5` rules).
    pub md5: bool,
    /// SHA-1.
    pub sha1: bool,
    /// SHA-256.
    pub sha256: bool,
    /// Keep the first bytes for `magic` (`force-magic`, `filemagic` rules).
    pub magic: bool,
}

impl FileConfig {
    /// Add what another source needs.
    pub fn merge(&mut self, o: FileConfig) {
        self.md5 |= o.md5;
        self.sha1 |= o.sha1;
        self.sha256 |= o.sha256;
        self.magic |= o.magic;
    }

    /// `force-hash` values (`md5`, `sha1`, `sha256`); unknown names are returned.
    pub fn force_hash<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
        let mut bad = Vec::new();
        for n in names {
            match n.trim().to_ascii_lowercase().as_str() {
                "md5" => self.md5 = true,
                "sha1" => self.sha1 = true,
                "sha256" => self.sha256 = true,
                _ => bad.push(n),
            }
        }
        bad
    }
}

/// Where a file stands (Suricata's `FileState`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileState {
    /// Data may still come.
    #[default]
    Opened,
    /// Ended normally.
    Closed,
    /// Ended early: a gap, a limit, the transaction or flow ended first.
    Truncated,
    /// The protocol could not track it.
    Error,
}

impl FileState {
    /// The name EVE writes.
    pub fn name(self) -> &'static str {
        match self {
            FileState::Opened => "UNKNOWN",
            FileState::Closed => "CLOSED",
            FileState::Truncated => "TRUNCATED",
            FileState::Error => "ERROR",
        }
    }
}

/// Running hash state of a file.
#[derive(Clone, Debug, Default)]
struct Hashers {
    md5: Option<Md5>,
    sha1: Option<Sha1>,
    sha256: Option<Sha256>,
}

/// One file inside a transaction.
#[derive(Clone, Debug, Default)]
pub struct TrackedFile {
    name: Vec<u8>,
    state: FileState,
    size: u64,
    gaps: bool,
    /// `Content-Range` start and end (`end` 0: no range).
    range: (u64, u64),
    hashers: Option<Box<Hashers>>,
    md5: Option<[u8; 16]>,
    sha1: Option<[u8; 20]>,
    sha256: Option<[u8; 32]>,
    head: Vec<u8>,
    keep_head: bool,
    /// Rules that matched on the file (`fileinfo.sid`).
    sids: Vec<u32>,
    /// Opened without a name (HTTP/2's files): `filename` is left out, as Suricata's
    /// `EveFileInfo` does for a NULL name.
    unnamed: bool,
}

impl TrackedFile {
    /// A file named `name` (cut to [`FILENAME_MAX`]) computing what `cfg` asks.
    pub fn open(name: &[u8], cfg: &FileConfig) -> TrackedFile {
        let name = &name[..name.len().min(FILENAME_MAX)];
        let hashers = (cfg.md5 || cfg.sha1 || cfg.sha256).then(|| {
            Box::new(Hashers {
                md5: cfg.md5.then(Md5::new),
                sha1: cfg.sha1.then(Sha1::new),
                sha256: cfg.sha256.then(Sha256::new),
            })
        });
        TrackedFile {
            name: name.to_vec(),
            hashers,
            keep_head: cfg.magic,
            ..TrackedFile::default()
        }
    }

    /// A file without a name (Suricata's HTTP/2 files).
    pub fn open_unnamed(cfg: &FileConfig) -> TrackedFile {
        TrackedFile {
            unnamed: true,
            ..TrackedFile::open(b"", cfg)
        }
    }

    /// Set the `Content-Range` the file covers (`start`..=`end`).
    pub fn set_range(&mut self, start: u64, end: u64) {
        self.range = (start, end);
    }

    /// Append in-order data (ignored once the file ended).
    pub fn append(&mut self, data: &[u8]) {
        if self.state != FileState::Opened || data.is_empty() {
            return;
        }
        self.size += data.len() as u64;
        if let Some(h) = self.hashers.as_deref_mut() {
            if let Some(m) = h.md5.as_mut() {
                m.update(data);
            }
            if let Some(s) = h.sha1.as_mut() {
                s.update(data);
            }
            if let Some(s) = h.sha256.as_mut() {
                s.update(data);
            }
        }
        if self.keep_head && self.head.len() < MAGIC_HEAD {
            let n = (MAGIC_HEAD - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..n]);
        }
    }

    /// `len` bytes of the file are missing: counted in its size, not hashed (Suricata's
    /// `FileAppendGAPById`); the file will end `TRUNCATED`.
    pub fn gap(&mut self, len: u64) {
        if self.state == FileState::Opened {
            self.gaps = true;
            self.size += len;
        }
    }

    /// The file ended: `CLOSED` with its hashes, or `TRUNCATED` when `truncated` or after a
    /// gap (then only SHA-256 is final, as in Suricata's `FileCloseFilePtr`).
    pub fn close(&mut self, truncated: bool) {
        if self.state != FileState::Opened {
            return;
        }
        let h = self.hashers.take();
        if truncated || self.gaps {
            self.state = FileState::Truncated;
            if let Some(s) = h.and_then(|h| h.sha256) {
                self.sha256 = Some(s.finalize().into());
            }
        } else {
            self.state = FileState::Closed;
            if let Some(h) = h {
                self.md5 = h.md5.map(|m| m.finalize().into());
                self.sha1 = h.sha1.map(|s| s.finalize().into());
                self.sha256 = h.sha256.map(|s| s.finalize().into());
            }
        }
    }

    /// As [`TrackedFile::close`] for the files Suricata's Rust file tracker follows (SMB,
    /// NFS): its close passes the flow's `FILE_NOSTORE` (no filestore applies), so a
    /// truncated file keeps no hash at all.
    pub fn close_tracked(&mut self, truncated: bool) {
        self.close(truncated);
        if self.state == FileState::Truncated {
            self.sha256 = None;
        }
    }

    /// Mark the file as failed.
    pub fn error(&mut self) {
        if self.state == FileState::Opened {
            self.state = FileState::Error;
            self.hashers = None;
        }
    }

    /// Record that rule `sid` matched on the file.
    pub fn add_sid(&mut self, sid: u32) {
        if !self.sids.contains(&sid) && self.sids.len() < 64 {
            self.sids.push(sid);
        }
    }

    /// The file's name.
    pub fn name(&self) -> &[u8] {
        &self.name
    }
    /// Bytes seen so far.
    pub fn size(&self) -> u64 {
        self.size
    }
    /// Where it stands.
    pub fn state(&self) -> FileState {
        self.state
    }
    /// Whether it ended.
    pub fn is_done(&self) -> bool {
        self.state != FileState::Opened
    }
    /// Whether data was missing.
    pub fn has_gaps(&self) -> bool {
        self.gaps
    }
    /// MD5, once closed and when computed.
    pub fn md5(&self) -> Option<&[u8; 16]> {
        self.md5.as_ref()
    }
    /// SHA-1, once closed and when computed.
    pub fn sha1(&self) -> Option<&[u8; 20]> {
        self.sha1.as_ref()
    }
    /// SHA-256, once final and when computed.
    pub fn sha256(&self) -> Option<&[u8; 32]> {
        self.sha256.as_ref()
    }
    /// The first bytes (when kept for magic).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The `fileinfo` members (Suricata 7's `EveFileInfo`, in its order) for transaction
    /// `tx_id`; `magic` is the file type when it is known.
    pub fn write_eve(&self, w: &mut JsonWriter, tx_id: u64, magic: Option<&str>) {
        // An empty name is left out, as Suricata's `jb_set_string_from_bytes` does.
        if !self.unnamed && !self.name.is_empty() {
            w.set_bytes("filename", &self.name);
        }
        if !self.sids.is_empty() {
            w.open_array("sid");
            for s in &self.sids {
                w.u64(u64::from(*s));
            }
            w.close();
        }
        if let Some(m) = magic {
            w.set_str("magic", m);
        }
        w.set_bool("gaps", self.gaps);
        w.set_str("state", self.state.name());
        if self.state == FileState::Closed {
            if let Some(m) = &self.md5 {
                w.set_hex("md5", m);
            }
            if let Some(s) = &self.sha1 {
                w.set_hex("sha1", s);
            }
        }
        if let Some(s) = &self.sha256 {
            w.set_hex("sha256", s);
        }
        w.set_bool("stored", false);
        w.set_u64("size", self.size);
        if self.range.1 > 0 {
            w.set_u64("start", self.range.0);
            w.set_u64("end", self.range.1);
        }
        w.set_u64("tx_id", tx_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> FileConfig {
        FileConfig {
            md5: true,
            sha1: true,
            sha256: true,
            magic: true,
        }
    }

    #[test]
    fn hashes_streamed_equal_hashes_of_the_whole() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut f = TrackedFile::open(b"/a.bin", &all());
        for c in data.chunks(333) {
            f.append(c);
        }
        f.close(false);
        assert_eq!(f.state(), FileState::Closed);
        assert_eq!(f.size(), 10_000);
        assert_eq!(f.md5().unwrap()[..], Md5::digest(&data)[..]);
        assert_eq!(f.sha1().unwrap()[..], Sha1::digest(&data)[..]);
        assert_eq!(f.sha256().unwrap()[..], Sha256::digest(&data)[..]);
        assert_eq!(f.head(), &data[..MAGIC_HEAD]);
        // Data after the end is ignored.
        f.append(b"more");
        assert_eq!(f.size(), 10_000);
    }

    #[test]
    fn truncated_or_gapped_files_keep_only_sha256() {
        let mut f = TrackedFile::open(b"x", &all());
        f.append(b"abc");
        f.gap(10);
        f.append(b"def");
        f.close(false);
        assert_eq!(f.state(), FileState::Truncated);
        assert!(f.has_gaps() && f.md5().is_none() && f.sha1().is_none());
        assert_eq!(f.sha256().unwrap()[..], Sha256::digest(b"abcdef")[..]);
        assert_eq!(f.size(), 16);
        let mut w = JsonWriter::new();
        w.start_object();
        f.write_eve(&mut w, 3, None);
        w.close();
        let v: serde_json::Value = serde_json::from_slice(w.as_bytes()).unwrap();
        assert_eq!(v["state"], "TRUNCATED");
        assert_eq!(v["gaps"], true);
        assert_eq!(v["size"], 16);
        assert_eq!(v["tx_id"], 3);
        assert!(v.get("md5").is_none() && v.get("start").is_none());
    }

    #[test]
    fn nothing_computed_unless_asked_and_names_are_bounded() {
        let mut f = TrackedFile::open(&[b'a'; 5000], &FileConfig::default());
        f.append(b"data");
        f.set_range(10, 13);
        f.add_sid(7);
        f.add_sid(7);
        f.close(false);
        assert_eq!(f.name().len(), FILENAME_MAX);
        assert!(f.md5().is_none() && f.sha256().is_none() && f.head().is_empty());
        let mut w = JsonWriter::new();
        w.start_object();
        f.write_eve(&mut w, 0, Some("ASCII text"));
        w.close();
        let v: serde_json::Value = serde_json::from_slice(w.as_bytes()).unwrap();
        assert_eq!(v["sid"], serde_json::json!([7]));
        assert_eq!(v["magic"], "ASCII text");
        assert_eq!(
            (v["start"].as_u64(), v["end"].as_u64()),
            (Some(10), Some(13))
        );
        assert_eq!(v["state"], "CLOSED");
    }

    #[test]
    fn force_hash_names() {
        let mut c = FileConfig::default();
        assert_eq!(c.force_hash(["md5", "SHA256", "crc"]), vec!["crc"]);
        assert!(c.md5 && c.sha256 && !c.sha1);
    }
}
