//! Defrag configuration (Suricata's `defrag:` section).
//!
//! ```yaml
//! defrag:
//!   memcap: 32mb        # fragment data held (per defragmenter)
//!   trackers: 65535     # datagrams in reassembly at once
//!   max-frags: 65535    # fragments held at once
//!   timeout: 60         # seconds a datagram may take to complete
//! ```

use serde::{Deserialize, Serialize};

use crate::config::de_size;

/// `defrag:`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DefragConfig {
    /// Bytes of fragment data and bookkeeping held at most (default 32 MiB).
    #[serde(deserialize_with = "de_size")]
    pub memcap: u64,
    /// Suricata's hash size; accepted for compatibility (the table grows as needed).
    pub hash_size: u32,
    /// Trackers (datagrams being reassembled) at most (default 65535).
    pub trackers: u32,
    /// Fragments held at most (default 65535).
    pub max_frags: u32,
    /// Accepted for compatibility.
    pub prealloc: bool,
    /// Seconds of inactivity before a datagram is dropped (default 60).
    pub timeout: u32,
}

impl Default for DefragConfig {
    fn default() -> Self {
        DefragConfig {
            memcap: 32 << 20,
            hash_size: 65_536,
            trackers: 65_535,
            max_frags: 65_535,
            prealloc: true,
            timeout: 60,
        }
    }
}
