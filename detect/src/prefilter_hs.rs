//! Hyperscan backend of the prefilter (cargo feature `hyperscan`, links the system's
//! `libhs` from Debian's `libhyperscan-dev`).
//!
//! Every pattern is a literal, compiled caseless (the engine confirms case-sensitive
//! patterns on the exact bytes, as with the Aho-Corasick backend) without start-of-match
//! tracking: a literal's start is its end minus its length, so the costly `SOM_LEFTMOST`
//! mode is not needed.
//!
//! Hyperscan needs a scratch area per scanning thread. One scratch per thread serves every
//! database: the first scan of a database on a thread grows the thread's scratch for it
//! (`hs_alloc_scratch` on the existing scratch), and the thread remembers which databases it
//! has prepared. The packet path therefore allocates nothing after warm-up.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use hyperscan::prelude::*;
use std::collections::HashSet;

use shrike_sys::safefs::DirHandle;

use super::prefilter::Prefilter;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's scratch and the databases it has been prepared for.
    static SCRATCH: RefCell<Option<(Scratch, HashSet<u64>)>> = const { RefCell::new(None) };
}

/// A Hyperscan block-mode database over literal patterns.
pub struct HsPrefilter {
    db: BlockDatabase,
    id: u64,
    lens: Box<[u32]>,
}

impl std::fmt::Debug for HsPrefilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HsPrefilter")
            .field("id", &self.id)
            .field("patterns", &self.lens.len())
            .finish()
    }
}

/// `pat` as a Hyperscan expression that matches exactly these bytes.
fn escape(pat: &[u8]) -> String {
    let mut s = String::with_capacity(pat.len() * 4);
    for &b in pat {
        if b.is_ascii_alphanumeric() {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

impl HsPrefilter {
    /// Compile `patterns` (matched ignoring ASCII case). `None` when a pattern is empty or
    /// Hyperscan refuses the set.
    pub fn new(patterns: &[&[u8]]) -> Option<HsPrefilter> {
        let db = compile(patterns)?;
        Some(HsPrefilter::with_db(db, patterns))
    }

    fn with_db(db: BlockDatabase, patterns: &[&[u8]]) -> HsPrefilter {
        HsPrefilter {
            db,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            lens: patterns.iter().map(|p| p.len() as u32).collect(),
        }
    }

    /// Load the database for `patterns` from the cache in `dir`, or compile it and store it
    /// there. Counts hits and misses in [`cache_stats`].
    pub fn cached(dir: Option<&Path>, patterns: &[&[u8]]) -> Option<HsPrefilter> {
        if let Some(db) = load_cached(dir, patterns) {
            return Some(HsPrefilter::with_db(db, patterns));
        }
        CACHE_MISSES.fetch_add(1, Ordering::Relaxed);
        let db = compile(patterns)?;
        if let Some(d) = dir.and_then(open_dir) {
            let fp = fingerprint(patterns);
            store(&d, &cache_name(&fp), &fp, &db);
        }
        Some(HsPrefilter::with_db(db, patterns))
    }
}

static CACHE_HITS: AtomicU64 = AtomicU64::new(0);
static CACHE_MISSES: AtomicU64 = AtomicU64::new(0);
static UPGRADED: AtomicU64 = AtomicU64::new(0);

/// (databases loaded from the cache, databases compiled, automata upgraded in the
/// background) since the process started.
pub fn cache_stats() -> (u64, u64, u64) {
    (
        CACHE_HITS.load(Ordering::Relaxed),
        CACHE_MISSES.load(Ordering::Relaxed),
        UPGRADED.load(Ordering::Relaxed),
    )
}

/// Cache entries discarded: a fingerprint that does not match the pattern set (a file
/// swapped between keys or left by another version), a checksum mismatch or a database
/// Hyperscan refuses. Each is logged, removed and rebuilt.
static CACHE_REJECTED: AtomicU64 = AtomicU64::new(0);

/// Cache entries discarded since the process started (see [`CACHE_REJECTED`]).
pub fn cache_rejected() -> u64 {
    CACHE_REJECTED.load(Ordering::Relaxed)
}

/// First bytes of a cache entry (the format version is in it).
const MAGIC: &[u8; 16] = b"shrike-hsdb-v2\n\0";

/// Pattern flags every database is compiled with (part of the fingerprint).
fn pattern_flags() -> hyperscan::PatternFlags {
    hyperscan::PatternFlags::CASELESS | hyperscan::PatternFlags::DOTALL
}

/// What a database is for: SHA-256 over the format, the Hyperscan version, the pattern
/// flags and the pattern list. Stored in the entry and checked on load.
fn fingerprint(patterns: &[&[u8]]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(MAGIC);
    h.update(hyperscan::version_str().to_bytes());
    h.update(b"\0");
    h.update(format!("{:?}", pattern_flags()).as_bytes());
    h.update(b"\0");
    for p in patterns {
        h.update((p.len() as u32).to_le_bytes());
        h.update(p);
    }
    h.finalize().into()
}

fn sha256(b: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(b).into()
}

/// Cache file name: the first 160 bits of the fingerprint.
fn cache_name(fp: &[u8; 32]) -> String {
    let mut name = String::with_capacity(48);
    for b in fp.iter().take(20) {
        name.push_str(&format!("{b:02x}"));
    }
    name.push_str(".hsdb");
    name
}

/// Directories already reported as unusable (warned once each).
static BAD_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The cache directory as a handle, created (mode 0700) when missing; `None` (warned once)
/// when it is not trusted: world-writable, or owned by a user other than root and the one
/// shrike runs as, or reached through another user's symbolic link (as the log directory).
fn open_dir(dir: &Path) -> Option<DirHandle> {
    if std::fs::symlink_metadata(dir).is_err() {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir);
    }
    let checked = if super::prefilter::insecure_cache_ok() {
        Ok(())
    } else {
        shrike_sys::privileges::check_output_dir(dir, None).map_err(|e| e.to_string())
    };
    let opened = checked.and_then(|()| DirHandle::open(dir).map_err(|e| e.to_string()));
    match opened {
        Ok(h) => Some(h),
        Err(why) => {
            if let Ok(mut bad) = BAD_DIRS.lock() {
                if !bad.iter().any(|b| b == dir) {
                    bad.push(dir.to_path_buf());
                    eprintln!("shrike: warning: mpm-cache-dir not used: {why}");
                }
            }
            None
        }
    }
}

/// Discard a bad cache entry: counted, logged, removed.
fn reject(dir: &DirHandle, name: &str, why: &str) {
    CACHE_REJECTED.fetch_add(1, Ordering::Relaxed);
    eprintln!(
        "shrike: warning: mpm cache {}: {why}; discarded, rebuilding",
        dir.path().join(name).display()
    );
    let _ = dir.unlink(std::ffi::OsStr::new(name));
}

/// The database stored under `name` for fingerprint `fp`, when the entry is intact and is
/// for exactly this pattern set.
fn load(dir: &DirHandle, name: &str, fp: &[u8; 32]) -> Option<BlockDatabase> {
    use hyperscan::SerializedDatabase;
    use std::io::Read;
    let mut f = match dir.open_read(std::ffi::OsStr::new(name)) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            reject(dir, name, &format!("cannot be read safely ({e})"));
            return None;
        }
    };
    let mut bytes = Vec::new();
    if f.read_to_end(&mut bytes).is_err() {
        reject(dir, name, "cannot be read");
        return None;
    }
    let head = MAGIC.len() + 64;
    let (Some(magic), Some(stored_fp), Some(digest), Some(payload)) = (
        bytes.get(..MAGIC.len()),
        bytes.get(MAGIC.len()..MAGIC.len() + 32),
        bytes.get(MAGIC.len() + 32..head),
        bytes.get(head..),
    ) else {
        reject(dir, name, "truncated");
        return None;
    };
    if magic != MAGIC {
        reject(dir, name, "not a shrike cache entry of this version");
        return None;
    }
    if stored_fp != fp {
        reject(
            dir,
            name,
            "fingerprint does not match the pattern set (swapped or stale file)",
        );
        return None;
    }
    if digest != sha256(payload) {
        reject(dir, name, "checksum mismatch (corrupt file)");
        return None;
    }
    match payload.deserialize::<hyperscan::BlockMode>() {
        Ok(db) => Some(db),
        Err(e) => {
            reject(dir, name, &format!("Hyperscan refuses it ({e})"));
            None
        }
    }
}

/// Store `db` under `name`: written to a new file under an unpredictable name (`O_EXCL`,
/// mode 0600, never through a link), then renamed into place, so a reader never sees a
/// partial entry and nobody can plant the temporary file.
fn store(dir: &DirHandle, name: &str, fp: &[u8; 32], db: &BlockDatabase) {
    use std::io::Write;
    let Ok(bytes) = db.serialize() else {
        return;
    };
    let tmp = shrike_sys::safefs::unpredictable_name(".tmp-");
    let tmp = std::ffi::OsStr::new(&tmp);
    let Ok(mut f) = dir.create_new(tmp, 0o600) else {
        return;
    };
    let ok = f.write_all(MAGIC).is_ok()
        && f.write_all(fp).is_ok()
        && f.write_all(&sha256(&bytes)).is_ok()
        && f.write_all(&bytes).is_ok();
    drop(f);
    if !ok || dir.rename(tmp, std::ffi::OsStr::new(name)).is_err() {
        let _ = dir.unlink(tmp);
    }
}

/// Load from the cache in `dir`, if any (counted as a hit).
fn load_cached(dir: Option<&Path>, patterns: &[&[u8]]) -> Option<BlockDatabase> {
    let d = open_dir(dir?)?;
    let fp = fingerprint(patterns);
    let db = load(&d, &cache_name(&fp), &fp)?;
    CACHE_HITS.fetch_add(1, Ordering::Relaxed);
    Some(db)
}

fn compile(patterns: &[&[u8]]) -> Option<BlockDatabase> {
    if patterns.is_empty() || patterns.iter().any(|p| p.is_empty()) {
        return None;
    }
    let pats: Vec<Pattern> = patterns
        .iter()
        .enumerate()
        .map(|(i, p)| {
            Pattern::with_flags(escape(p), pattern_flags()).map(|mut pat| {
                pat.id = Some(i);
                pat
            })
        })
        .collect::<Result<_, _>>()
        .ok()?;
    Patterns(pats).build().ok()
}

/// Aho-Corasick now, Hyperscan as soon as a background thread has compiled it: start-up
/// stays fast and long runs get the faster matcher. Switching is one atomic load per scan.
#[derive(Debug)]
pub struct UpgradingPrefilter {
    ac: Box<dyn Prefilter>,
    hs: OnceLock<HsPrefilter>,
}

impl Prefilter for UpgradingPrefilter {
    #[inline]
    fn scan(&self, hay: &[u8], found: &mut dyn FnMut(u32, usize, usize)) {
        match self.hs.get() {
            Some(h) => h.scan(hay, found),
            None => self.ac.scan(hay, found),
        }
    }

    fn patterns(&self) -> usize {
        self.ac.patterns()
    }
}

/// Owner handle of a shared [`UpgradingPrefilter`] (the background thread holds a weak one).
#[derive(Debug)]
pub struct SharedUpgrading(Arc<UpgradingPrefilter>);

impl Prefilter for SharedUpgrading {
    #[inline]
    fn scan(&self, hay: &[u8], found: &mut dyn FnMut(u32, usize, usize)) {
        self.0.scan(hay, found)
    }

    fn patterns(&self) -> usize {
        self.0.patterns()
    }
}

type Job = (Weak<UpgradingPrefilter>, Vec<Vec<u8>>);

/// Upgrades waiting for the background compiler.
static PENDING: Mutex<Vec<Job>> = Mutex::new(Vec::new());

/// `auto`: the cached Hyperscan database when there is one; otherwise Aho-Corasick, queued
/// for a background upgrade ([`spawn_upgrades`]).
pub fn build_auto(
    dir: Option<&Path>,
    patterns: &[&[u8]],
    ac: impl FnOnce() -> Option<Box<dyn Prefilter>>,
) -> Option<Box<dyn Prefilter>> {
    if let Some(db) = load_cached(dir, patterns) {
        return Some(Box::new(HsPrefilter::with_db(db, patterns)));
    }
    // Not cached: Aho-Corasick now (built only here, so a warm cache costs no automaton).
    let ac = ac()?;
    let up = Arc::new(UpgradingPrefilter {
        ac,
        hs: OnceLock::new(),
    });
    if let Ok(mut q) = PENDING.lock() {
        q.push((
            Arc::downgrade(&up),
            patterns.iter().map(|p| p.to_vec()).collect(),
        ));
    }
    Some(Box::new(SharedUpgrading(up)))
}

/// Start one background thread that compiles the queued upgrades, largest first, stores
/// them in the cache and switches each automaton to Hyperscan. Engines dropped meanwhile
/// (a reload) are skipped.
pub fn spawn_upgrades(dir: Option<PathBuf>) {
    let mut jobs = match PENDING.lock() {
        Ok(mut q) => std::mem::take(&mut *q),
        Err(_) => return,
    };
    if jobs.is_empty() {
        return;
    }
    jobs.sort_by_key(|(_, p)| std::cmp::Reverse(p.len()));
    let spawned = std::thread::Builder::new()
        .name("shrike-mpm".into())
        .spawn(move || {
            for (weak, pats) in jobs {
                if weak.strong_count() == 0 {
                    continue;
                }
                let refs: Vec<&[u8]> = pats.iter().map(Vec::as_slice).collect();
                let Some(h) = HsPrefilter::cached(dir.as_deref(), &refs) else {
                    continue;
                };
                if let Some(up) = weak.upgrade() {
                    if up.hs.set(h).is_ok() {
                        UPGRADED.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        });
    if let (Ok(h), Ok(mut v)) = (spawned, THREADS.lock()) {
        v.push(h);
    }
}

static THREADS: Mutex<Vec<std::thread::JoinHandle<()>>> = Mutex::new(Vec::new());

/// Wait until every background upgrade started so far is compiled (and cached).
pub fn wait_upgrades() {
    let hs = match THREADS.lock() {
        Ok(mut v) => std::mem::take(&mut *v),
        Err(_) => return,
    };
    for h in hs {
        let _ = h.join();
    }
}

impl Prefilter for HsPrefilter {
    fn scan(&self, hay: &[u8], found: &mut dyn FnMut(u32, usize, usize)) {
        if hay.is_empty() {
            return;
        }
        SCRATCH.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                match self.db.alloc_scratch() {
                    Ok(s) => {
                        let mut seen = HashSet::new();
                        seen.insert(self.id);
                        *slot = Some((s, seen));
                    }
                    Err(_) => return,
                }
            }
            let Some((scratch, seen)) = slot.as_mut() else {
                return;
            };
            if !seen.contains(&self.id) {
                if self.db.realloc_scratch(scratch).is_err() {
                    return;
                }
                seen.insert(self.id);
            }
            let lens = &self.lens;
            let _ = self
                .db
                .scan(hay, scratch, |id: u32, _from: u64, to: u64, _| {
                    let end = to as usize;
                    let len = lens.get(id as usize).copied().unwrap_or(0) as usize;
                    found(id, end.saturating_sub(len), end);
                    Matching::Continue
                });
        });
    }

    fn patterns(&self) -> usize {
        self.lens.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefilter::AcPrefilter;

    fn hits(p: &dyn Prefilter, hay: &[u8]) -> Vec<(u32, usize, usize)> {
        let mut v = Vec::new();
        p.scan(hay, &mut |i, s, e| v.push((i, s, e)));
        v.sort_unstable();
        v
    }

    #[test]
    fn overlapping_nocase_and_binary() {
        let pats: [&[u8]; 5] = [b"abc", b"bc", b"c", b"\x00\xff.*", b"GET /"];
        let hs = HsPrefilter::new(&pats).unwrap();
        assert_eq!(hs.patterns(), 5);
        assert_eq!(hits(&hs, b"xABCx"), vec![(0, 1, 4), (1, 2, 4), (2, 3, 4)]);
        // Regex metacharacters and binary bytes are literal.
        assert_eq!(hits(&hs, b"\x00\xffab"), vec![]);
        assert_eq!(hits(&hs, b"z\x00\xff.*"), vec![(3, 1, 5)]);
        assert_eq!(hits(&hs, b"get /index"), vec![(4, 0, 5)]);
    }

    #[test]
    fn same_hits_as_aho_corasick() {
        // Patterns and haystacks from a small deterministic generator over a tiny alphabet,
        // so that overlaps and repeats are frequent.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let alpha = b"aAbB\x00|";
        for _ in 0..50 {
            let n = 1 + (next() % 20) as usize;
            let mut pats: Vec<Vec<u8>> = Vec::new();
            for _ in 0..n {
                let len = 1 + (next() % 4) as usize;
                let p: Vec<u8> = (0..len)
                    .map(|_| alpha[(next() % alpha.len() as u64) as usize].to_ascii_lowercase())
                    .collect();
                if !pats.contains(&p) {
                    pats.push(p);
                }
            }
            let refs: Vec<&[u8]> = pats.iter().map(Vec::as_slice).collect();
            let hs = HsPrefilter::new(&refs).unwrap();
            let ac = AcPrefilter::new(&refs).unwrap();
            let hay: Vec<u8> = (0..64)
                .map(|_| alpha[(next() % alpha.len() as u64) as usize])
                .collect();
            assert_eq!(hits(&hs, &hay), hits(&ac, &hay), "patterns {pats:?}");
        }
    }

    #[test]
    fn cache_round_trip_and_background_upgrade() {
        let dir = std::env::temp_dir().join(format!("shrike-mpm-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let pats: [&[u8]; 3] = [b"evil", b"\x00\x01", b"attack"];
        // Not cached yet: Aho-Corasick now, Hyperscan once the background thread is done.
        let ac = || AcPrefilter::new(&pats).map(|p| Box::new(p) as Box<dyn Prefilter>);
        let auto = build_auto(Some(&dir), &pats, ac).unwrap();
        assert_eq!(hits(&*auto, b"an EVIL attack"), vec![(0, 3, 7), (2, 8, 14)]);
        spawn_upgrades(Some(dir.clone()));
        wait_upgrades();
        assert_eq!(hits(&*auto, b"an EVIL attack"), vec![(0, 3, 7), (2, 8, 14)]);
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(files.len(), 1, "one database cached");
        // Cached: the next build loads Hyperscan directly and finds the same matches.
        let (hits0, _, _) = cache_stats();
        // ... without building the Aho-Corasick automaton at all.
        let auto2 = build_auto(Some(&dir), &pats, || panic!("AC built on a cache hit")).unwrap();
        assert_eq!(cache_stats().0, hits0 + 1);
        assert!(format!("{auto2:?}").starts_with("HsPrefilter"));
        assert_eq!(hits(&*auto2, b"x\x00\x01 evil"), vec![(0, 4, 8), (1, 1, 3)]);
        // A corrupt cache file is ignored and replaced.
        let f = files[0].as_ref().unwrap().path();
        std::fs::write(&f, b"garbage").unwrap();
        let h = HsPrefilter::cached(Some(&dir), &pats).unwrap();
        assert_eq!(hits(&h, b"evil"), vec![(0, 0, 4)]);
        assert!(std::fs::read(&f).unwrap().len() > 100);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Whoever can write the cache swaps entries between pattern sets or flips bytes: each
    /// is detected (counted), discarded and rebuilt, and the matches stay those of the
    /// patterns asked for.
    #[test]
    fn poisoned_cache_entries_are_detected_and_rebuilt() {
        let dir = std::env::temp_dir().join(format!("shrike-mpm-poison-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let a: [&[u8]; 2] = [b"alpha", b"bravo"];
        let b: [&[u8]; 2] = [b"charlie", b"delta"];
        let hay = b"alpha bravo charlie delta";
        let want_a = hits(&HsPrefilter::new(&a).unwrap(), hay);
        let want_b = hits(&HsPrefilter::new(&b).unwrap(), hay);
        HsPrefilter::cached(Some(&dir), &a).unwrap();
        HsPrefilter::cached(Some(&dir), &b).unwrap();
        let fa = dir.join(cache_name(&fingerprint(&a)));
        let fb = dir.join(cache_name(&fingerprint(&b)));
        assert!(fa.exists() && fb.exists());
        // Only the two entries: no temporary file left behind.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);

        // Swap the two entries.
        let (ba, bb) = (std::fs::read(&fa).unwrap(), std::fs::read(&fb).unwrap());
        std::fs::write(&fa, &bb).unwrap();
        std::fs::write(&fb, &ba).unwrap();
        let r0 = cache_rejected();
        let h = HsPrefilter::cached(Some(&dir), &a).unwrap();
        assert_eq!(hits(&h, hay), want_a, "a's matches, not b's");
        let h = build_auto(Some(&dir), &b, || {
            AcPrefilter::new(&b).map(|p| Box::new(p) as Box<dyn Prefilter>)
        })
        .unwrap();
        assert_eq!(hits(&*h, hay), want_b, "b's matches, not a's");
        assert_eq!(cache_rejected(), r0 + 2, "both swaps detected");
        assert_eq!(std::fs::read(&fa).unwrap(), ba, "a rebuilt in place");

        // Flip one byte of the database: the checksum catches it.
        let mut bytes = std::fs::read(&fa).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x55;
        std::fs::write(&fa, &bytes).unwrap();
        let h = HsPrefilter::cached(Some(&dir), &a).unwrap();
        assert_eq!(hits(&h, hay), want_a);
        assert_eq!(cache_rejected(), r0 + 3);

        // A symbolic link planted as an entry is not followed (and is discarded).
        std::fs::remove_file(&fa).unwrap();
        let outside = dir.with_extension("outside");
        std::fs::write(&outside, &ba).unwrap();
        std::os::unix::fs::symlink(&outside, &fa).unwrap();
        let h = HsPrefilter::cached(Some(&dir), &a).unwrap();
        assert_eq!(hits(&h, hay), want_a);
        assert_eq!(cache_rejected(), r0 + 4);
        assert_eq!(
            std::fs::read(&outside).unwrap(),
            ba,
            "the link target untouched"
        );

        // A world-writable cache directory is not used at all.
        use std::os::unix::fs::PermissionsExt;
        let ww = dir.join("ww");
        std::fs::create_dir(&ww).unwrap();
        std::fs::set_permissions(&ww, std::fs::Permissions::from_mode(0o777)).unwrap();
        HsPrefilter::cached(Some(&ww), &a).unwrap();
        assert_eq!(
            std::fs::read_dir(&ww).unwrap().count(),
            0,
            "nothing stored there"
        );
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(&outside);
    }

    #[test]
    fn empty_pattern_is_refused() {
        assert!(HsPrefilter::new(&[b"a", b""]).is_none());
        assert!(HsPrefilter::new(&[]).is_none());
    }
}
