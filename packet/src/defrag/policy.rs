//! IP defragmentation overlap policies (Suricata's `DEFRAG_POLICY_*`, after Novak's
//! "Target-Based Fragmentation Reassembly").
//!
//! The reassembly itself (`tracker.rs`) follows Suricata's `DefragInsertFrag`: each new
//! fragment is trimmed, or stored ones trimmed or dropped, by the policy's rules, against
//! the stored fragments in offset order, and the datagram is rebuilt by copying the
//! fragments in offset order. [`DefragPolicy::new_wins`] states each policy's rule for two
//! fragments alone.

use crate::policy::OsPolicy;

/// Fragment overlap policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DefragPolicy {
    /// Earlier data always wins.
    First,
    /// Later data always wins.
    Last,
    /// Later data wins when it starts before the earlier fragment (Suricata's default).
    #[default]
    Bsd,
    /// The fragment starting at the higher offset wins; equal start: the later one.
    BsdRight,
    /// Later data wins when it starts at or before the earlier fragment.
    Linux,
    /// Later data wins when it starts before and ends after the earlier fragment.
    Windows,
    /// Later data wins when it starts before and ends at or after the earlier fragment.
    Solaris,
}

impl DefragPolicy {
    /// Every policy.
    pub const ALL: [DefragPolicy; 7] = [
        DefragPolicy::First,
        DefragPolicy::Last,
        DefragPolicy::Bsd,
        DefragPolicy::BsdRight,
        DefragPolicy::Linux,
        DefragPolicy::Windows,
        DefragPolicy::Solaris,
    ];

    /// Suricata's mapping of host OS policies to defrag policies.
    pub fn from_os(p: OsPolicy) -> Self {
        use OsPolicy as O;
        match p {
            O::Bsd | O::Hpux10 | O::Irix => DefragPolicy::Bsd,
            O::BsdRight => DefragPolicy::BsdRight,
            O::OldLinux | O::Linux => DefragPolicy::Linux,
            O::OldSolaris | O::Hpux11 | O::Macos | O::First => DefragPolicy::First,
            O::Solaris => DefragPolicy::Solaris,
            O::Windows | O::Vista | O::Windows2k3 => DefragPolicy::Windows,
            O::Last => DefragPolicy::Last,
        }
    }

    /// The policy's name (`bsd-right` …).
    pub fn name(self) -> &'static str {
        match self {
            DefragPolicy::First => "first",
            DefragPolicy::Last => "last",
            DefragPolicy::Bsd => "bsd",
            DefragPolicy::BsdRight => "bsd-right",
            DefragPolicy::Linux => "linux",
            DefragPolicy::Windows => "windows",
            DefragPolicy::Solaris => "solaris",
        }
    }

    /// Whether a later fragment `[ns, ne)` replaces an earlier `[os, oe)` where they overlap,
    /// when those two are the only fragments (the summary of the policy; with more
    /// fragments the tracker's per-fragment trimming decides).
    pub fn new_wins(self, ns: u32, ne: u32, os: u32, oe: u32) -> bool {
        match self {
            DefragPolicy::First => false,
            DefragPolicy::Last => true,
            DefragPolicy::Bsd => ns < os,
            DefragPolicy::BsdRight => ns >= os,
            DefragPolicy::Linux => ns <= os,
            DefragPolicy::Windows => ns < os && ne > oe,
            DefragPolicy::Solaris => ns < os && ne >= oe,
        }
    }
}
