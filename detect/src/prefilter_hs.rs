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
        let path = dir.map(|d| d.join(cache_name(patterns)));
        if let Some(db) = path.as_deref().and_then(load) {
            CACHE_HITS.fetch_add(1, Ordering::Relaxed);
            return Some(HsPrefilter::with_db(db, patterns));
        }
        CACHE_MISSES.fetch_add(1, Ordering::Relaxed);
        let db = compile(patterns)?;
        if let Some(p) = path.as_deref() {
            store(p, &db);
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

/// Cache file name: a digest of the Hyperscan version and the pattern list.
fn cache_name(patterns: &[&[u8]]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"shrike-mpm-v1\0");
    h.update(hyperscan::version_str().to_bytes());
    for p in patterns {
        h.update((p.len() as u32).to_le_bytes());
        h.update(p);
    }
    let d = h.finalize();
    let mut name = String::with_capacity(72);
    for b in d.iter().take(20) {
        name.push_str(&format!("{b:02x}"));
    }
    name.push_str(".hsdb");
    name
}

fn load(path: &Path) -> Option<BlockDatabase> {
    use hyperscan::SerializedDatabase;
    let bytes = std::fs::read(path).ok()?;
    bytes.deserialize::<hyperscan::BlockMode>().ok()
}

fn store(path: &Path, db: &BlockDatabase) {
    let Ok(bytes) = db.serialize() else {
        return;
    };
    let Some(dir) = path.parent() else {
        return;
    };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    // Write then rename: a reader never sees a partial file.
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        std::process::id(),
        NEXT_ID.fetch_add(1, Ordering::Relaxed)
    ));
    if std::fs::write(&tmp, &*bytes).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

fn compile(patterns: &[&[u8]]) -> Option<BlockDatabase> {
    if patterns.is_empty() || patterns.iter().any(|p| p.is_empty()) {
        return None;
    }
    let pats: Vec<Pattern> = patterns
        .iter()
        .enumerate()
        .map(|(i, p)| {
            Pattern::with_flags(
                escape(p),
                hyperscan::PatternFlags::CASELESS | hyperscan::PatternFlags::DOTALL,
            )
            .map(|mut pat| {
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
    if let Some(d) = dir {
        if let Some(db) = load(&d.join(cache_name(patterns))) {
            CACHE_HITS.fetch_add(1, Ordering::Relaxed);
            return Some(Box::new(HsPrefilter::with_db(db, patterns)));
        }
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

    #[test]
    fn empty_pattern_is_refused() {
        assert!(HsPrefilter::new(&[b"a", b""]).is_none());
        assert!(HsPrefilter::new(&[]).is_none());
    }
}
