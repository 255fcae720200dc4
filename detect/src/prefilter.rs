//! Multi-pattern prefilter behind a small trait, so the backend can be swapped (the
//! project's `rules::mpm` backends, Hyperscan) without touching the engine.
//!
//! The built-in backend is an Aho-Corasick automaton over the ASCII-lowercased patterns,
//! searched case-insensitively with overlapping matches; case-sensitive patterns are
//! confirmed on the exact bytes by the caller (see [`super::group`]).

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// A multi-pattern matcher over a fixed pattern list.
pub trait Prefilter: Send + Sync + std::fmt::Debug {
    /// Report `(pattern index, start, end)` for every occurrence of every pattern in `hay`,
    /// matching ASCII case-insensitively.
    fn scan(&self, hay: &[u8], found: &mut dyn FnMut(u32, usize, usize));

    /// Number of patterns.
    fn patterns(&self) -> usize;
}

/// The built-in Aho-Corasick backend.
#[derive(Debug)]
pub struct AcPrefilter {
    ac: AhoCorasick,
    n: usize,
}

impl AcPrefilter {
    /// Build over `patterns` (already lowercased; matching ignores ASCII case).
    pub fn new(patterns: &[&[u8]]) -> Option<AcPrefilter> {
        // Contiguous NFA: a DFA scans the mix 1.7x faster but doubles start-up and memory
        // with ET Open (docs/performance.md). No skip prefilter: an overlapping search uses it
        // only from the start state, and on packet payloads its per-call set-up (rare-byte
        // memchr) cost more than it skipped: -11% CPU on 64-byte UDP, same on the mix.
        let ac = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
            .prefilter(false)
            .build(patterns)
            .ok()?;
        Some(AcPrefilter {
            ac,
            n: patterns.len(),
        })
    }
}

impl Prefilter for AcPrefilter {
    #[inline]
    fn scan(&self, hay: &[u8], found: &mut dyn FnMut(u32, usize, usize)) {
        for m in self.ac.find_overlapping_iter(hay) {
            found(m.pattern().as_u32(), m.start(), m.end());
        }
    }

    fn patterns(&self) -> usize {
        self.n
    }
}

/// Which multi-pattern matcher the engine builds (Suricata's `mpm-algo`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MpmAlgo {
    /// The default: Aho-Corasick (see `detect/DESIGN.md` for the measurement behind it).
    #[default]
    Auto,
    /// Aho-Corasick (pure Rust, always available).
    Ac,
    /// Hyperscan (needs a build with the `hyperscan` feature; else Aho-Corasick with a
    /// warning at start-up).
    Hs,
}

/// Default place of the Hyperscan database cache.
pub const DEFAULT_CACHE_DIR: &str = "/var/cache/shrike/mpm";

struct Settings {
    algo: MpmAlgo,
    cache_dir: Option<std::path::PathBuf>,
}

static SETTINGS: std::sync::RwLock<Settings> = std::sync::RwLock::new(Settings {
    algo: MpmAlgo::Auto,
    cache_dir: None,
});

/// Select the matcher and the database cache for engines built from now on (process-wide:
/// [`super::Engine::build`] sets it from its configuration).
pub fn configure(algo: MpmAlgo, cache_dir: Option<std::path::PathBuf>) {
    if let Ok(mut s) = SETTINGS.write() {
        s.algo = algo;
        s.cache_dir = cache_dir;
    }
}

static INSECURE_CACHE_OK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Use the Hyperscan cache directory even when it is world-writable or owned by another user
/// (`--allow-insecure-files`).
pub fn allow_insecure_cache(ok: bool) {
    INSECURE_CACHE_OK.store(ok, std::sync::atomic::Ordering::Relaxed);
}

#[cfg_attr(not(feature = "hyperscan"), allow(dead_code))]
pub(crate) fn insecure_cache_ok() -> bool {
    INSECURE_CACHE_OK.load(std::sync::atomic::Ordering::Relaxed)
}

/// The matcher engines are built with.
pub fn algo() -> MpmAlgo {
    SETTINGS.read().map(|s| s.algo).unwrap_or_default()
}

#[cfg_attr(not(feature = "hyperscan"), allow(dead_code))]
fn cache_dir() -> Option<std::path::PathBuf> {
    SETTINGS.read().ok().and_then(|s| s.cache_dir.clone())
}

/// Whether this build has the Hyperscan backend.
pub const HAVE_HYPERSCAN: bool = cfg!(feature = "hyperscan");

/// Build the selected prefilter over lowercased patterns.
pub fn build(patterns: &[&[u8]]) -> Option<Box<dyn Prefilter>> {
    build_with(algo(), patterns)
}

/// Build a prefilter with the given matcher: `ac` Aho-Corasick; `hs` Hyperscan (from the
/// cache or compiled now); `auto` Hyperscan from the cache, else Aho-Corasick now and
/// Hyperscan later from a background thread ([`spawn_upgrades`]). Builds without the
/// `hyperscan` feature always use Aho-Corasick.
pub fn build_with(algo: MpmAlgo, patterns: &[&[u8]]) -> Option<Box<dyn Prefilter>> {
    #[cfg(feature = "hyperscan")]
    match algo {
        MpmAlgo::Hs => {
            if let Some(p) =
                super::prefilter_hs::HsPrefilter::cached(cache_dir().as_deref(), patterns)
            {
                return Some(Box::new(p));
            }
        }
        MpmAlgo::Auto => {
            return super::prefilter_hs::build_auto(cache_dir().as_deref(), patterns, || {
                AcPrefilter::new(patterns).map(|p| Box::new(p) as Box<dyn Prefilter>)
            });
        }
        MpmAlgo::Ac => {}
    }
    if algo == MpmAlgo::Hs && !HAVE_HYPERSCAN {
        static WARN: std::sync::Once = std::sync::Once::new();
        WARN.call_once(|| {
            eprintln!(
                "shrike: warning: mpm-algo hs: this build has no Hyperscan (feature \
                 `hyperscan`); using Aho-Corasick"
            )
        });
    }
    AcPrefilter::new(patterns).map(|p| Box::new(p) as Box<dyn Prefilter>)
}

/// Block until the background compilations started so far are done and cached (`-T` uses
/// it, so that checking a ruleset also warms the cache for the next start).
pub fn wait_upgrades() {
    #[cfg(feature = "hyperscan")]
    super::prefilter_hs::wait_upgrades();
}

/// Start the background Hyperscan compilation of the automata built in `auto` mode since
/// the last call (no-op without the `hyperscan` feature).
pub fn spawn_upgrades() {
    #[cfg(feature = "hyperscan")]
    super::prefilter_hs::spawn_upgrades(cache_dir());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_and_nocase() {
        let p = build(&[b"abc", b"bc", b"c"]).unwrap();
        let mut hits = Vec::new();
        p.scan(b"xABCx", &mut |i, s, e| hits.push((i, s, e)));
        hits.sort_unstable();
        assert_eq!(hits, vec![(0, 1, 4), (1, 2, 4), (2, 3, 4)]);
        assert_eq!(p.patterns(), 3);
    }

    /// Every occurrence of every pattern, as a naive case-insensitive search finds them, on
    /// short and long haystacks with matches at both ends.
    #[test]
    fn matches_naive_search() {
        let pats: [&[u8]; 5] = [b"get ", b"user-agent", b"\x00\x01", b"zz", b"a"];
        let mut long = vec![b'x'; 3000];
        long[..4].copy_from_slice(b"GET ");
        long[1500..1510].copy_from_slice(b"User-Agent");
        long[2998..].copy_from_slice(b"ZZ");
        let hays: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"a".to_vec(),
            b"zzz\x00\x01".to_vec(),
            b"GET /a HTTP/1.1\r\nuser-AGENT: curl\r\n".to_vec(),
            long,
        ];
        let p = build(&pats).unwrap();
        for hay in &hays {
            let mut got = Vec::new();
            p.scan(hay, &mut |i, s, e| got.push((i, s, e)));
            got.sort_unstable();
            let mut want = Vec::new();
            for (i, pat) in pats.iter().enumerate() {
                for s in 0..hay.len().saturating_sub(pat.len() - 1) {
                    if hay[s..s + pat.len()].eq_ignore_ascii_case(pat) {
                        want.push((i as u32, s, s + pat.len()));
                    }
                }
            }
            want.sort_unstable();
            assert_eq!(got, want, "haystack of {} bytes", hay.len());
        }
    }
}
