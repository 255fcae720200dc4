//! File tracking shared by every protocol that carries files (Suricata's File API,
//! `util-file.c`): a protocol opens a [`TrackedFile`] with a name when a file's first bytes
//! arrive, appends its data in order (hashes are updated as the data streams by; nothing is
//! buffered beyond the first bytes kept for `file.magic`, unless `filestore` rules may still
//! ask for the file), signals gaps, and closes it (`CLOSED`) or cuts it short
//! (`TRUNCATED`). The `fileinfo` record and the `files` array of alerts are written from it
//! ([`TrackedFile::write_eve`], Suricata's `EveFileInfo`).
//!
//! The file store ([`enable_store`], Suricata's `file-store` v2) writes the files asked for
//! ([`TrackedFile::request_store`], [`apply_filestore`]) under their SHA-256.
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

/// Bytes of an open file needed before its type is looked up (Suricata's
/// `FILEMAGIC_MIN_SIZE`).
pub const MAGIC_MIN_SIZE: u64 = 512;

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
    /// Rules may ask to store files (`filestore`): keep a file's data until it is stored
    /// or its transaction is logged (Suricata keeps file data a filestore may still want).
    pub keep_for_store: bool,
}

impl FileConfig {
    /// Add what another source needs.
    pub fn merge(&mut self, o: FileConfig) {
        self.md5 |= o.md5;
        self.sha1 |= o.sha1;
        self.sha256 |= o.sha256;
        self.magic |= o.magic;
        self.keep_for_store |= o.keep_for_store;
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

/// Most bytes of a file kept in memory while a `filestore` rule may still ask for it; a
/// bigger file is stored only when asked before its data went past this.
pub const STORE_KEEP_MAX: usize = 32 * 1024 * 1024;

/// The file store (Suricata's `file-store` output, version 2): files are written to
/// `<dir>/tmp/file.<id>` while they stream, then renamed to `<dir>/<xx>/<sha256>` (`xx` the
/// hash's first byte in hex) when they end; `id` counts stored files from 1 per process.
#[derive(Debug)]
pub struct FileStore {
    dir: std::path::PathBuf,
    force: bool,
    /// `stream-depth`: the reassembly depth a `filestore` match gives its TCP session
    /// (Suricata's `FileReassemblyDepth`; 0: unlimited).
    pub depth: u64,
    next_id: std::sync::atomic::AtomicU32,
    /// Files stored.
    pub stored: std::sync::atomic::AtomicU64,
    /// Create, open, write, rename or removal failures (`file_store.fs_errors`).
    pub errors: std::sync::atomic::AtomicU64,
}

static STORE: std::sync::OnceLock<FileStore> = std::sync::OnceLock::new();

/// Turn the file store on (once per process): files go under `dir`; `force` stores every
/// file (`force-filestore`). Creates `dir/tmp`.
pub fn enable_store(dir: &std::path::Path, force: bool, depth: u64) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("tmp"))?;
    let _ = STORE.set(FileStore {
        dir: dir.to_path_buf(),
        force,
        depth,
        next_id: std::sync::atomic::AtomicU32::new(0),
        stored: std::sync::atomic::AtomicU64::new(0),
        errors: std::sync::atomic::AtomicU64::new(0),
    });
    Ok(())
}

/// The file store, when on.
pub fn store() -> Option<&'static FileStore> {
    STORE.get()
}

/// `write-fileinfo: yes`: a stored file's `fileinfo` record is also written next to it.
static WRITE_FILEINFO: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turn on (or off) the JSON metadata file written next to each stored file (Suricata's
/// file-store `write-fileinfo`).
pub fn set_write_fileinfo(on: bool) {
    WRITE_FILEINFO.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a `fileinfo` record of `f` must be built for its metadata file even when the
/// eve-log does not log files: the file is stored and `write-fileinfo` is on.
pub fn wants_fileinfo_file(f: &TrackedFile) -> bool {
    WRITE_FILEINFO.load(std::sync::atomic::Ordering::Relaxed)
        && store().is_some()
        && f.stored_id().is_some()
}

/// The metadata file of a stored file (Suricata's `OutputFilestoreFinalizeFiles`):
/// `<dir>/<xx>/<sha256>.<seconds>.<file id>.json`, `seconds` the packet time.
pub fn fileinfo_path(f: &TrackedFile, ts_ns: u64) -> Option<std::path::PathBuf> {
    let st = store()?;
    let id = f.stored_id()?;
    let h = f.sha256()?;
    let hex: String = h.iter().map(|b| format!("{b:02x}")).collect();
    Some(
        st.dir
            .join(&hex[..2])
            .join(format!("{hex}.{}.{id}.json", ts_ns / 1_000_000_000)),
    )
}

/// End a `fileinfo` record of `f` written into `rec`: when `f` was stored and
/// `write-fileinfo` is on, the record (as built so far: without the eve-log's `host`
/// trailer, and with no newline, as Suricata writes it) goes to its metadata file; the
/// record is then committed to the eve-log when `emit`, dropped otherwise.
pub fn finish_fileinfo(rec: shrike_output::Record<'_>, f: &TrackedFile, ts_ns: u64, emit: bool) {
    if wants_fileinfo_file(f) && rec.is_complete() {
        if let Some(path) = fileinfo_path(f, ts_ns) {
            // A metadata file that cannot be written is skipped, not counted (Suricata's
            // `OutputFilestoreFinalizeFiles` counts no `fs_errors` for it).
            let _ = std::fs::write(&path, rec.written());
        }
    }
    if emit {
        let _ = rec.commit();
    } else {
        rec.abort();
    }
}

/// `max-open-files`: most files kept open while being stored (0: none).
static MAX_OPEN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
/// Files kept open now (Suricata's `file_store.open_files`).
static OPEN_NOW: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
/// Files that found the limit reached (Suricata's `file_store.open_files_max_hit`).
static OPEN_MAX_HITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Set the file store's `max-open-files` (Suricata's `FileSetMaxOpenFiles`).
pub fn set_max_open_files(n: u32) {
    MAX_OPEN.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// Files being stored that are kept open now, and how often a file found the
/// `max-open-files` limit reached (it is then reopened for each write, as Suricata does).
pub fn open_files_counters() -> (u32, u64) {
    use std::sync::atomic::Ordering;
    (
        OPEN_NOW.load(Ordering::Relaxed),
        OPEN_MAX_HITS.load(Ordering::Relaxed),
    )
}

/// A file being written to the store.
#[derive(Debug)]
struct Storing {
    id: u32,
    tmp: std::path::PathBuf,
    /// The open file, when it counts among the `max-open-files` kept open.
    out: Option<std::io::BufWriter<std::fs::File>>,
    /// A write failed: the file is not stored.
    failed: bool,
    /// This copy writes the file (a clone does not); false once it ended.
    active: bool,
}

impl Storing {
    fn start(st: &FileStore) -> Option<Storing> {
        use std::sync::atomic::Ordering;
        let id = st.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let tmp = st.dir.join("tmp").join(format!("file.{id}"));
        match std::fs::File::create(&tmp) {
            Ok(f) => {
                // Suricata keeps the descriptor while fewer than `max-open-files` are
                // open; past it (when a limit is set) it counts a hit and reopens the
                // file for every write.
                let max = MAX_OPEN.load(Ordering::Relaxed);
                let held = OPEN_NOW
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                        (n < max).then_some(n + 1)
                    })
                    .is_ok();
                if !held && max > 0 {
                    OPEN_MAX_HITS.fetch_add(1, Ordering::Relaxed);
                }
                Some(Storing {
                    id,
                    tmp,
                    out: held.then(|| std::io::BufWriter::new(f)),
                    failed: false,
                    active: true,
                })
            }
            Err(_) => {
                st.errors.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    fn write(&mut self, d: &[u8]) {
        use std::io::Write;
        if self.failed || !self.active {
            return;
        }
        let ok = match self.out.as_mut() {
            Some(o) => o.write_all(d).is_ok(),
            None => std::fs::OpenOptions::new()
                .append(true)
                .open(&self.tmp)
                .and_then(|mut f| f.write_all(d))
                .is_ok(),
        };
        if !ok {
            self.failed = true;
            let _ = self.release();
            if let Some(st) = store() {
                st.errors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }

    /// Close the file kept open, if any (it no longer counts against `max-open-files`).
    fn release(&mut self) -> bool {
        match self.out.take() {
            Some(mut o) => {
                use std::io::Write;
                OPEN_NOW.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
                o.flush().is_ok()
            }
            None => true,
        }
    }

    /// Close the temporary file and move it to its final name; the file id on success.
    fn finish(mut self, sha256: Option<&[u8; 32]>) -> Option<u32> {
        use std::sync::atomic::Ordering;
        let st = store()?;
        let ok = self.active && self.release() && !self.failed;
        self.active = false;
        let Some(h) = sha256.filter(|_| ok) else {
            let _ = std::fs::remove_file(&self.tmp);
            return None;
        };
        let hex: String = h.iter().map(|b| format!("{b:02x}")).collect();
        let sub = st.dir.join(&hex[..2]);
        let dst = sub.join(&hex);
        let moved = std::fs::create_dir_all(&sub).is_ok()
            && if dst.exists() {
                // The same content is stored already: keep that one.
                std::fs::remove_file(&self.tmp).is_ok()
            } else {
                std::fs::rename(&self.tmp, &dst).is_ok()
            };
        if moved {
            st.stored.fetch_add(1, Ordering::Relaxed);
            Some(self.id)
        } else {
            // The rename (or the removal of the duplicate) failed; a failed removal of the
            // temporary file counts once more, as Suricata's.
            st.errors.fetch_add(1, Ordering::Relaxed);
            if std::fs::remove_file(&self.tmp).is_err() && self.tmp.exists() {
                st.errors.fetch_add(1, Ordering::Relaxed);
            }
            None
        }
    }
}

/// What a `filestore` rule's match stores (Suricata's `FilestorePostMatchWithOptions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreScope {
    /// The files of the matching transaction in the given directions (Suricata's default
    /// `file` scope).
    File,
    /// The files of the matching transaction, present and to come (Suricata's `tx` scope:
    /// the transaction's file flags).
    Tx,
    /// The files of every transaction, present and to come (`ssn` / `flow`: the flow's
    /// file flags).
    Flow,
}

/// Most transaction-scope store orders a flow keeps (the oldest goes first).
const MAX_TX_ORDERS: usize = 64;

/// The `filestore` matches whose scope reaches files still to come (Suricata's
/// `FLOWFILE_STORE_TS/TC` in a transaction's or the flow's file flags).
#[derive(Clone, Debug, Default)]
pub struct StoreOrders {
    /// Every file of the flow in these directions ([to server, to client]).
    flow: [bool; 2],
    /// Every file of these transactions in these directions.
    txs: Vec<(u64, [bool; 2])>,
}

impl StoreOrders {
    /// Record a match of scope `scope` on transaction `tx`.
    pub fn add(&mut self, tx: u64, dirs: [bool; 2], scope: StoreScope) {
        match scope {
            StoreScope::File => {}
            StoreScope::Flow => {
                self.flow[0] |= dirs[0];
                self.flow[1] |= dirs[1];
            }
            StoreScope::Tx => {
                if let Some(o) = self.txs.iter_mut().find(|o| o.0 == tx) {
                    o.1[0] |= dirs[0];
                    o.1[1] |= dirs[1];
                    return;
                }
                if self.txs.len() >= MAX_TX_ORDERS {
                    self.txs.remove(0);
                }
                self.txs.push((tx, dirs));
            }
        }
    }

    /// Whether there is no order.
    pub fn is_empty(&self) -> bool {
        self.flow == [false, false] && self.txs.is_empty()
    }

    /// Ask the store for the files the orders cover (files opened since the match
    /// included; a file already asked for is left as it is).
    pub fn apply(&self, p: &mut dyn crate::registry::AppParser) {
        if store().is_none() || self.is_empty() {
            return;
        }
        let mut live = Vec::new();
        if self.flow != [false, false] {
            p.live_txs(crate::Dir::ToServer, &mut live);
            p.live_txs(crate::Dir::ToClient, &mut live);
            live.sort_unstable();
            live.dedup();
        }
        for (i, d) in [crate::Dir::ToServer, crate::Dir::ToClient]
            .into_iter()
            .enumerate()
        {
            if self.flow[i] {
                for &t in &live {
                    p.files_mut(t, d, &mut |f| f.request_store());
                }
            }
            for &(t, dirs) in &self.txs {
                if dirs[i] && !(self.flow[i] && live.contains(&t)) {
                    p.files_mut(t, d, &mut |f| f.request_store());
                }
            }
        }
    }
}

/// Apply a `filestore` match of rule `sid` on transaction `tx` to the flow's parser:
/// `dirs` = [to server, to client].
pub fn apply_filestore(
    p: &mut dyn crate::registry::AppParser,
    tx: u64,
    dirs: [bool; 2],
    scope: StoreScope,
    sid: u32,
) {
    if store().is_none() {
        return;
    }
    let mut txs = Vec::new();
    match scope {
        StoreScope::File | StoreScope::Tx => txs.push(tx),
        StoreScope::Flow => {
            p.live_txs(crate::Dir::ToServer, &mut txs);
            p.live_txs(crate::Dir::ToClient, &mut txs);
            txs.sort_unstable();
            txs.dedup();
        }
    }
    for t in txs {
        for (i, d) in [crate::Dir::ToServer, crate::Dir::ToClient]
            .into_iter()
            .enumerate()
        {
            if dirs[i] {
                p.lift_file_limit(t, d);
                p.files_mut(t, d, &mut |f| {
                    if !f.is_pruned() {
                        f.add_sid(sid);
                        f.request_store();
                    }
                });
            }
        }
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
    /// File store state (only with the store on).
    st: Option<Box<StoreSt>>,
    /// Its `fileinfo` record was written (protocols that log files apart from their
    /// transactions).
    logged: std::cell::Cell<bool>,
    /// Ended on an earlier packet of its direction: gone from detection and from alerts'
    /// `files` (Suricata's `FilesPrune` frees a closed file from the transaction's container
    /// after the packet's detection and logging).
    pruned: std::cell::Cell<bool>,
    /// libmagic's answer, once asked ([`TrackedFile::magic`]).
    magic: std::cell::OnceCell<Box<Option<String>>>,
}

/// A tracked file's file store state.
#[derive(Clone, Debug, Default)]
struct StoreSt {
    /// Data kept while a `filestore` rule may still ask for the file (`None`: not kept,
    /// or past [`STORE_KEEP_MAX`]).
    kept: Option<Vec<u8>>,
    /// Being written to the store (Suricata's `FILE_STORE`).
    storing: Option<Storing>,
    /// Asked to be stored.
    asked: bool,
    /// Stored under this file id (`FILE_STORED`).
    stored: Option<u32>,
}

impl Drop for Storing {
    fn drop(&mut self) {
        // Dropped before it ended (the flow went away): nothing to name it by.
        if self.active {
            let _ = self.release();
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

impl Clone for Storing {
    fn clone(&self) -> Self {
        // A copy of a tracked file does not write to the store.
        Storing {
            id: self.id,
            tmp: self.tmp.clone(),
            out: None,
            failed: true,
            active: false,
        }
    }
}

impl TrackedFile {
    /// A file named `name` (cut to [`FILENAME_MAX`]) computing what `cfg` asks.
    pub fn open(name: &[u8], cfg: &FileConfig) -> TrackedFile {
        let name = &name[..name.len().min(FILENAME_MAX)];
        let st = store();
        // The store names files by SHA-256 (Suricata's file-store turns it on).
        let sha256 = cfg.sha256 || st.is_some();
        let hashers = (cfg.md5 || cfg.sha1 || sha256).then(|| {
            Box::new(Hashers {
                md5: cfg.md5.then(Md5::new),
                sha1: cfg.sha1.then(Sha1::new),
                sha256: sha256.then(Sha256::new),
            })
        });
        let mut f = TrackedFile {
            name: name.to_vec(),
            hashers,
            keep_head: cfg.magic,
            st: st.map(|_| {
                Box::new(StoreSt {
                    kept: cfg.keep_for_store.then(Vec::new),
                    ..StoreSt::default()
                })
            }),
            ..TrackedFile::default()
        };
        if st.is_some_and(|s| s.force) {
            f.request_store();
        }
        f
    }

    /// As [`TrackedFile::open`] for a file that reaches a transaction only later (an HTTP
    /// byte-range reassembly): its data is kept for the store and `force-filestore` applies
    /// when it is handed over ([`TrackedFile::store_if_forced`]), as Suricata's store sees
    /// it only then.
    pub fn open_deferred(name: &[u8], cfg: &FileConfig, unnamed: bool) -> TrackedFile {
        let keep = FileConfig {
            keep_for_store: true,
            ..*cfg
        };
        let st = store();
        let mut f = TrackedFile {
            unnamed,
            keep_head: cfg.magic,
            ..TrackedFile::default()
        };
        let name = &name[..name.len().min(FILENAME_MAX)];
        f.name = name.to_vec();
        let sha256 = cfg.sha256 || st.is_some();
        f.hashers = (cfg.md5 || cfg.sha1 || sha256).then(|| {
            Box::new(Hashers {
                md5: cfg.md5.then(Md5::new),
                sha1: cfg.sha1.then(Sha1::new),
                sha256: sha256.then(Sha256::new),
            })
        });
        f.st = st.map(|_| {
            Box::new(StoreSt {
                kept: keep.keep_for_store.then(Vec::new),
                ..StoreSt::default()
            })
        });
        f
    }

    /// `force-filestore` for a file opened with [`TrackedFile::open_deferred`].
    pub fn store_if_forced(&mut self) {
        if store().is_some_and(|s| s.force) {
            self.request_store();
        }
    }

    /// A `filestore` rule (or `force-filestore`) asks for the file: it is written to the
    /// store from its first byte if that is still at hand (the file is open and was followed
    /// from the start, or its data was kept), and named when it ends.
    pub fn request_store(&mut self) {
        let (Some(store), Some(st)) = (store(), self.st.as_deref_mut()) else {
            return;
        };
        if st.asked {
            return;
        }
        st.asked = true;
        if self.size > 0 && st.kept.is_none() {
            return;
        }
        let Some(mut w) = Storing::start(store) else {
            return;
        };
        if let Some(k) = st.kept.take() {
            w.write(&k);
        }
        match self.state {
            FileState::Opened => st.storing = Some(w),
            FileState::Closed | FileState::Truncated => {
                st.stored = w.finish(self.sha256.as_ref());
            }
            FileState::Error => {
                let _ = w.finish(None);
            }
        }
    }

    /// Stored under this file id (`fileinfo.file_id`).
    pub fn stored_id(&self) -> Option<u32> {
        self.st.as_deref().and_then(|s| s.stored)
    }

    fn is_storing(&self) -> bool {
        self.st.as_deref().is_some_and(|s| s.storing.is_some())
    }

    /// End the file's store state: name the stored file by `sha256` (`None`: drop it).
    fn finish_store(&mut self, sha256: Option<[u8; 32]>) {
        if let Some(st) = self.st.as_deref_mut() {
            st.kept = None;
            if let Some(w) = st.storing.take() {
                st.stored = w.finish(sha256.as_ref());
            }
        }
    }

    /// Whether its `fileinfo` record was written ([`Self::set_logged`]).
    pub fn logged(&self) -> bool {
        self.logged.get()
    }

    /// Marks its `fileinfo` record written.
    pub fn set_logged(&self) {
        self.logged.set(true);
    }

    /// Whether the file was pruned ([`TrackedFile::prune`]): detection no longer sees it
    /// and alerts no longer list it (its `fileinfo` record and the store are not affected).
    pub fn is_pruned(&self) -> bool {
        self.pruned.get()
    }

    /// The packet's detection and logging are done: a file that ended is pruned (Suricata's
    /// `FilePruneFile`: `state >= CLOSED`).
    pub fn prune(&self) {
        if self.is_done() {
            self.pruned.set(true);
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
        if let Some(st) = self.st.as_deref_mut() {
            if let Some(w) = st.storing.as_mut() {
                w.write(data);
            } else if let Some(k) = st.kept.as_mut() {
                if k.len() + data.len() <= STORE_KEEP_MAX {
                    k.extend_from_slice(data);
                } else {
                    st.kept = None;
                }
            }
        }
    }

    /// `len` bytes of the file are missing: counted in its size, not hashed (Suricata's
    /// `FileAppendGAPById`); the file will end `TRUNCATED`.
    pub fn gap(&mut self, len: u64) {
        if self.state == FileState::Opened {
            self.gaps = true;
            self.size += len;
            // Nothing is written for the missing bytes (Suricata's store skips gaps too).
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
        if self.is_storing() {
            self.finish_store(self.sha256);
        }
    }

    /// As [`TrackedFile::close`] for the files Suricata's Rust file tracker follows (SMB,
    /// NFS): its close passes the flow's `FILE_NOSTORE` unless the file is being stored, so
    /// a truncated file not being stored keeps no hash at all (a stored one keeps its
    /// SHA-256 and is stored, as Suricata 7.0.10 does with `force-filestore`).
    pub fn close_tracked(&mut self, truncated: bool) {
        let storing = self.is_storing();
        self.close(truncated);
        if self.state == FileState::Truncated && !storing {
            self.sha256 = None;
        }
    }

    /// Mark the file as failed.
    pub fn error(&mut self) {
        if self.state == FileState::Opened {
            self.state = FileState::Error;
            self.hashers = None;
            self.finish_store(None);
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

    /// The file's type as libmagic says it (Suricata's `FilemagicThreadLookup`): known once
    /// [`MAGIC_MIN_SIZE`] bytes were seen or the file ended, from its first bytes (kept when
    /// `force-magic` or a `filemagic` rule asks); `None` before, without data or without
    /// libmagic.
    pub fn magic(&self) -> Option<&str> {
        if !self.keep_head || self.head.is_empty() {
            return None;
        }
        if self.size < MAGIC_MIN_SIZE && self.state == FileState::Opened {
            return None;
        }
        self.magic
            .get_or_init(|| Box::new(shrike_sys::magic::lookup(&self.head)))
            .as_deref()
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
        if let Some(m) = magic.or_else(|| self.magic()) {
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
        match self.stored_id() {
            Some(id) => {
                w.set_bool("stored", true);
                w.set_u64("file_id", u64::from(id));
            }
            None => {
                w.set_bool("stored", false);
                if self.is_storing() {
                    w.set_bool("storing", true);
                }
            }
        }
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
            keep_for_store: false,
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

    #[test]
    fn magic_once_enough_data_or_ended() {
        let cfg = FileConfig {
            magic: true,
            ..FileConfig::default()
        };
        let mut f = TrackedFile::open(b"a.pdf", &cfg);
        f.append(b"%PDF-1.5\n");
        // Open with fewer than 512 bytes: not looked up yet.
        assert_eq!(f.magic(), None);
        f.append(&[b' '; 600]);
        if shrike_sys::magic::available() {
            assert!(f.magic().unwrap().starts_with("PDF document"));
        }
        // Without `magic` nothing is kept and nothing looked up.
        let mut g = TrackedFile::open(b"b", &FileConfig::default());
        g.append(b"%PDF-1.5\n");
        g.close(false);
        assert_eq!(g.magic(), None);
    }
}
