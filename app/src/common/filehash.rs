//! File hashes of the registry protocols' files (Suricata's eve-log `files: force-hash`):
//! which are on, and running MD5 / SHA-1 / SHA-256 of a file.

use shrike_output::JsonWriter;

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The hashes computed for files (Suricata's `force-hash`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileHashes {
    /// MD5.
    pub md5: bool,
    /// SHA-1.
    pub sha1: bool,
    /// SHA-256.
    pub sha256: bool,
}

impl FileHashes {
    /// From Suricata's `force-hash` list (`md5`, `sha1`, `sha256`).
    pub fn from_names(names: &[String]) -> Self {
        let has = |n: &str| names.iter().any(|x| x.trim().eq_ignore_ascii_case(n));
        FileHashes {
            md5: has("md5"),
            sha1: has("sha1"),
            sha256: has("sha256"),
        }
    }

    /// Whether any is on.
    pub fn any(self) -> bool {
        self.md5 || self.sha1 || self.sha256
    }
}

/// Running hashes of a file.
#[derive(Clone, Debug, Default)]
pub struct FileHasher {
    md5: Option<md5::Md5>,
    sha1: Option<sha1::Sha1>,
    sha256: Option<sha2::Sha256>,
}

impl FileHasher {
    /// Hashers for `h`.
    pub fn new(h: FileHashes) -> Self {
        use md5::Digest as _;
        FileHasher {
            md5: h.md5.then(md5::Md5::new),
            sha1: h.sha1.then(sha1::Sha1::new),
            sha256: h.sha256.then(sha2::Sha256::new),
        }
    }

    /// More file data.
    pub fn update(&mut self, d: &[u8]) {
        use md5::Digest as _;
        if let Some(h) = self.md5.as_mut() {
            h.update(d);
        }
        if let Some(h) = self.sha1.as_mut() {
            h.update(d);
        }
        if let Some(h) = self.sha256.as_mut() {
            h.update(d);
        }
    }

    /// Writes `md5`, `sha1`, `sha256` (the hashes on) as Suricata's fileinfo has them.
    pub fn write(&self, w: &mut JsonWriter) {
        use md5::Digest as _;
        if let Some(h) = &self.md5 {
            w.set_str("md5", &hex(&h.clone().finalize()));
        }
        if let Some(h) = &self.sha1 {
            w.set_str("sha1", &hex(&h.clone().finalize()));
        }
        if let Some(h) = &self.sha256 {
            w.set_str("sha256", &hex(&h.clone().finalize()));
        }
    }
}
