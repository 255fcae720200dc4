//! Dropping privileges after the capture sockets are open, and refusing unsafe files.
//!
//! A sensor started as root opens its AF_PACKET rings (or DPDK ports), then switches to an
//! unprivileged user and keeps only the capabilities it still needs (typically `CAP_NET_RAW`
//! and `CAP_NET_ADMIN` to reopen a ring after the interface went down, `CAP_IPC_LOCK` to lock
//! a reopened ring and `CAP_SYS_NICE` for worker priorities). Suricata does the same with
//! libcap-ng (`run-as:` in `suricata.yaml`).
//!
//! The sequence of [`drop_privileges`] (capabilities(7), "Effect of user ID changes"):
//!
//! 1. drop every capability outside `keep` from the bounding set (needs `CAP_SETPCAP`), clear
//!    the ambient set;
//! 2. `PR_SET_KEEPCAPS = 1`, so the permitted set survives the switch away from uid 0;
//! 3. `setgroups(0)`, `setresgid(g, g, g)`, `setresuid(u, u, u)` (glibc applies the id
//!    changes to every thread of the process);
//! 4. `PR_SET_KEEPCAPS = 0`, then `capset` with effective = permitted = `keep`, inheritable
//!    empty.
//!
//! Capabilities are per thread: call it from the main thread after the rings are open and
//! **before** spawning the worker threads, which then inherit the reduced sets. Threads that
//! already exist keep their uid switch (glibc broadcasts it) and, with `PR_SET_KEEPCAPS`
//! unset in them, lose all their capabilities: the safe direction.
//!
//! Under systemd the unit already starts the process as the `shrike` user with ambient
//! capabilities; [`limit_capabilities`] then trims them without a uid change.

use std::ffi::CString;
use std::fmt;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One Linux capability, by its number in `<linux/capability.h>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Capability(u8);

/// Names of capabilities 0..=40, in number order (`cap_chown` is 0).
const CAP_NAMES: [&str; 41] = [
    "cap_chown",
    "cap_dac_override",
    "cap_dac_read_search",
    "cap_fowner",
    "cap_fsetid",
    "cap_kill",
    "cap_setgid",
    "cap_setuid",
    "cap_setpcap",
    "cap_linux_immutable",
    "cap_net_bind_service",
    "cap_net_broadcast",
    "cap_net_admin",
    "cap_net_raw",
    "cap_ipc_lock",
    "cap_ipc_owner",
    "cap_sys_module",
    "cap_sys_rawio",
    "cap_sys_chroot",
    "cap_sys_ptrace",
    "cap_sys_pacct",
    "cap_sys_admin",
    "cap_sys_boot",
    "cap_sys_nice",
    "cap_sys_resource",
    "cap_sys_time",
    "cap_sys_tty_config",
    "cap_mknod",
    "cap_lease",
    "cap_audit_write",
    "cap_audit_control",
    "cap_setfcap",
    "cap_mac_override",
    "cap_mac_admin",
    "cap_syslog",
    "cap_wake_alarm",
    "cap_block_suspend",
    "cap_audit_read",
    "cap_perfmon",
    "cap_bpf",
    "cap_checkpoint_restore",
];

impl Capability {
    /// `CAP_SETGID`.
    pub const SETGID: Capability = Capability(6);
    /// `CAP_SETUID`.
    pub const SETUID: Capability = Capability(7);
    /// `CAP_SETPCAP`.
    pub const SETPCAP: Capability = Capability(8);
    /// `CAP_NET_ADMIN`: promiscuous mode, `SO_RCVBUFFORCE`, NIC settings.
    pub const NET_ADMIN: Capability = Capability(12);
    /// `CAP_NET_RAW`: AF_PACKET sockets.
    pub const NET_RAW: Capability = Capability(13);
    /// `CAP_IPC_LOCK`: locking rings beyond `RLIMIT_MEMLOCK`.
    pub const IPC_LOCK: Capability = Capability(14);
    /// `CAP_SYS_ADMIN`.
    pub const SYS_ADMIN: Capability = Capability(21);
    /// `CAP_SYS_NICE`: thread priorities and affinities of other threads.
    pub const SYS_NICE: Capability = Capability(23);

    /// The capability with number `n` (0..=63).
    pub fn from_number(n: u8) -> Option<Capability> {
        (n < 64).then_some(Capability(n))
    }

    /// Its number.
    pub fn number(self) -> u8 {
        self.0
    }

    /// Parses `CAP_NET_RAW`, `cap_net_raw` or `net_raw`.
    pub fn from_name(s: &str) -> Option<Capability> {
        let lower = s.trim().to_ascii_lowercase();
        let full = if lower.starts_with("cap_") {
            lower
        } else {
            format!("cap_{lower}")
        };
        CAP_NAMES
            .iter()
            .position(|n| *n == full)
            .map(|i| Capability(i as u8))
    }

    /// The lower-case name (`cap_net_raw`), or `cap_<n>` for numbers this table lacks.
    pub fn name(self) -> String {
        CAP_NAMES
            .get(self.0 as usize)
            .map(|s| s.to_string())
            .unwrap_or_else(|| format!("cap_{}", self.0))
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// The capabilities live capture needs: `CAP_NET_RAW`, `CAP_NET_ADMIN`, `CAP_IPC_LOCK`,
/// `CAP_SYS_NICE` (the same four the systemd unit grants).
pub const CAPTURE_CAPS: [Capability; 4] = [
    Capability::NET_RAW,
    Capability::NET_ADMIN,
    Capability::IPC_LOCK,
    Capability::SYS_NICE,
];

/// A set of capabilities: bit `n` is capability `n`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CapSet(pub u64);

impl CapSet {
    /// No capability.
    pub const EMPTY: CapSet = CapSet(0);

    /// The set of `caps`.
    pub fn of(caps: &[Capability]) -> CapSet {
        CapSet(caps.iter().fold(0, |acc, c| acc | (1u64 << c.0)))
    }

    /// Whether `c` is in the set.
    pub fn contains(self, c: Capability) -> bool {
        self.0 & (1u64 << c.0) != 0
    }

    /// Both sets' members.
    pub fn intersect(self, o: CapSet) -> CapSet {
        CapSet(self.0 & o.0)
    }

    /// Members of `self` not in `o`.
    pub fn minus(self, o: CapSet) -> CapSet {
        CapSet(self.0 & !o.0)
    }

    /// True when empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The members in number order.
    pub fn iter(self) -> impl Iterator<Item = Capability> {
        (0u8..64)
            .filter(move |i| self.0 & (1u64 << i) != 0)
            .map(Capability)
    }

    /// Parses a comma- or space-separated list of names (`net_raw, CAP_IPC_LOCK`).
    pub fn parse(s: &str) -> Result<CapSet, String> {
        let mut set = CapSet::EMPTY;
        for word in s.split([',', ' ']).filter(|w| !w.is_empty()) {
            let c = Capability::from_name(word)
                .ok_or_else(|| format!("unknown capability `{word}`"))?;
            set.0 |= 1u64 << c.0;
        }
        Ok(set)
    }
}

impl fmt::Display for CapSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("(none)");
        }
        let names: Vec<String> = self.iter().map(|c| c.name()).collect();
        f.write_str(&names.join(","))
    }
}

/// The calling thread's capability sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadCaps {
    /// Capabilities in effect now.
    pub effective: CapSet,
    /// Capabilities the thread may make effective.
    pub permitted: CapSet,
    /// Capabilities preserved across `execve` (with file or ambient capabilities).
    pub inheritable: CapSet,
}

/// Errors of this module; each names what failed.
#[derive(Debug, thiserror::Error)]
pub enum PrivError {
    /// No user of that name.
    #[error("run-as: no such user `{0}`")]
    NoSuchUser(String),
    /// No group of that name.
    #[error("run-as: no such group `{0}`")]
    NoSuchGroup(String),
    /// Changing to another user needs root (or CAP_SETUID and CAP_SETGID).
    #[error("run-as: switching to uid {uid} needs root (running as uid {current})")]
    NotRoot {
        /// Target uid.
        uid: u32,
        /// Current effective uid.
        current: u32,
    },
    /// A system call failed.
    #[error("{op}: {source}")]
    Sys {
        /// The call, with its arguments where useful.
        op: String,
        /// errno.
        source: io::Error,
    },
    /// A configuration or rules path anyone may write to.
    #[error(
        "{}: world-writable (mode {mode:04o}); refusing configuration, rules or an output \
         directory any local user could change (chmod o-w, or --allow-insecure-files)",
        path.display()
    )]
    WorldWritable {
        /// The offending file or directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A configuration, rules or cache file owned by a user other than root and the one shrike
    /// runs as.
    #[error(
        "{}: owned by uid {uid}, neither root nor uid {current}; refusing a file another user \
         controls (chown it, or --allow-insecure-files)",
        path.display()
    )]
    OtherOwner {
        /// The offending file or directory.
        path: PathBuf,
        /// Its owner.
        uid: u32,
        /// The effective uid shrike runs as.
        current: u32,
    },
    /// A log or cache directory reached through a symbolic link that another user controls.
    #[error(
        "{}: a symbolic link owned by uid {uid} (neither root nor uid {current}); refusing to \
         follow it (point -l at the real directory)",
        path.display()
    )]
    UntrustedLink {
        /// The link.
        path: PathBuf,
        /// Its owner.
        uid: u32,
        /// The effective uid shrike runs as.
        current: u32,
    },
    /// A path could not be inspected.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

fn sys(op: impl Into<String>) -> PrivError {
    PrivError::Sys {
        op: op.into(),
        source: io::Error::last_os_error(),
    }
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The calling thread's effective, permitted and inheritable sets (`capget`).
pub fn thread_caps() -> Result<ThreadCaps, PrivError> {
    let mut hdr = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: capget(2) with a version-3 header reads into exactly two `CapData` structs
    // (`_LINUX_CAPABILITY_U32S_3`); both pointers are valid for the duration of the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut hdr as *mut CapHeader,
            data.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(sys("capget"));
    }
    let join = |f: fn(&CapData) -> u32| CapSet(f(&data[0]) as u64 | (f(&data[1]) as u64) << 32);
    Ok(ThreadCaps {
        effective: join(|d| d.effective),
        permitted: join(|d| d.permitted),
        inheritable: join(|d| d.inheritable),
    })
}

/// Sets the calling thread's capability sets (`capset`).
fn set_thread_caps(c: ThreadCaps) -> Result<(), PrivError> {
    let mut hdr = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let split = |s: CapSet| (s.0 as u32, (s.0 >> 32) as u32);
    let (e0, e1) = split(c.effective);
    let (p0, p1) = split(c.permitted);
    let (i0, i1) = split(c.inheritable);
    let data = [
        CapData {
            effective: e0,
            permitted: p0,
            inheritable: i0,
        },
        CapData {
            effective: e1,
            permitted: p1,
            inheritable: i1,
        },
    ];
    // SAFETY: capset(2) with a version-3 header reads two `CapData` structs; both pointers
    // are valid and the kernel does not keep them.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &mut hdr as *mut CapHeader, data.as_ptr()) };
    if rc != 0 {
        return Err(sys(format!(
            "capset(effective={}, permitted={})",
            c.effective, c.permitted
        )));
    }
    Ok(())
}

fn prctl(op: libc::c_int, arg: libc::c_ulong, what: &str) -> Result<libc::c_int, PrivError> {
    // SAFETY: the prctl options used here (KEEPCAPS, CAPBSET_*, CAP_AMBIENT, NO_NEW_PRIVS)
    // take integer arguments only; no memory is passed to the kernel.
    let rc = unsafe { libc::prctl(op, arg, 0 as libc::c_ulong, 0 as libc::c_ulong, 0) };
    if rc < 0 {
        return Err(sys(what.to_string()));
    }
    Ok(rc)
}

/// The highest capability number this kernel knows (`/proc/sys/kernel/cap_last_cap`, else
/// probed with `PR_CAPBSET_READ`).
pub fn last_cap() -> u8 {
    if let Ok(s) = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap") {
        if let Ok(n) = s.trim().parse::<u8>() {
            return n.min(63);
        }
    }
    let mut n = 0u8;
    while n < 63 && prctl(libc::PR_CAPBSET_READ, (n + 1) as libc::c_ulong, "").is_ok() {
        n += 1;
    }
    n
}

/// The process's capability bounding set (`PR_CAPBSET_READ` for each capability).
pub fn bounding_set() -> Result<CapSet, PrivError> {
    let mut set = 0u64;
    for n in 0..=last_cap() {
        if prctl(
            libc::PR_CAPBSET_READ,
            n as libc::c_ulong,
            "prctl(PR_CAPBSET_READ)",
        )? == 1
        {
            set |= 1 << n;
        }
    }
    Ok(CapSet(set))
}

/// The thread's ambient set (`PR_CAP_AMBIENT_IS_SET` for each capability).
pub fn ambient_set() -> Result<CapSet, PrivError> {
    let mut set = 0u64;
    for n in 0..=last_cap() {
        // SAFETY: PR_CAP_AMBIENT with integer arguments only.
        let rc = unsafe {
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_IS_SET as libc::c_ulong,
                n as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            )
        };
        if rc < 0 {
            return Err(sys("prctl(PR_CAP_AMBIENT_IS_SET)"));
        }
        if rc == 1 {
            set |= 1 << n;
        }
    }
    Ok(CapSet(set))
}

fn clear_ambient() -> Result<(), PrivError> {
    // SAFETY: PR_CAP_AMBIENT with integer arguments only.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    // EINVAL: a kernel before 4.3 without ambient capabilities; nothing to clear.
    if rc < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return Err(sys("prctl(PR_CAP_AMBIENT_CLEAR_ALL)"));
    }
    Ok(())
}

/// Removes from the bounding set every capability outside `keep` (needs `CAP_SETPCAP` while
/// the bounding set still has capabilities to remove).
fn shrink_bounding_set(keep: CapSet) -> Result<(), PrivError> {
    let current = bounding_set()?;
    for c in current.minus(keep).iter() {
        prctl(
            libc::PR_CAPBSET_DROP,
            c.number() as libc::c_ulong,
            &format!("prctl(PR_CAPBSET_DROP, {c})"),
        )?;
    }
    Ok(())
}

/// The process's effective uid and gid.
pub fn current_ids() -> (u32, u32) {
    // SAFETY: geteuid/getegid cannot fail and touch no memory.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

/// The supplementary groups of the process.
pub fn supplementary_groups() -> Result<Vec<u32>, PrivError> {
    // SAFETY: getgroups(0, NULL) only returns the count.
    let n = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    if n < 0 {
        return Err(sys("getgroups"));
    }
    let mut v = vec![0 as libc::gid_t; n as usize];
    // SAFETY: `v` has room for `n` gids, the size passed.
    let m = unsafe { libc::getgroups(n, v.as_mut_ptr()) };
    if m < 0 {
        return Err(sys("getgroups"));
    }
    v.truncate(m as usize);
    Ok(v)
}

/// Looks up a user by name or number: returns its uid and primary gid.
pub fn lookup_user(name: &str) -> Result<(u32, u32), PrivError> {
    let cname = CString::new(name).map_err(|_| PrivError::NoSuchUser(name.into()))?;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    loop {
        // SAFETY: `passwd` is plain old data; getpwnam_r fills it with pointers into `buf`,
        // which outlives every use below. `result` is set to null or to `&pwd`.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call; the buffer length is `buf.len()`.
        let rc = unsafe {
            libc::getpwnam_r(
                cname.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if rc == 0 && !result.is_null() {
            return Ok((pwd.pw_uid, pwd.pw_gid));
        }
        break;
    }
    // Not in the user database: a plain number is a uid whose primary group is the same number.
    name.parse::<u32>()
        .map(|n| (n, n))
        .map_err(|_| PrivError::NoSuchUser(name.into()))
}

/// Looks up a group by name or number.
pub fn lookup_group(name: &str) -> Result<u32, PrivError> {
    let cname = CString::new(name).map_err(|_| PrivError::NoSuchGroup(name.into()))?;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    loop {
        // SAFETY: `group` is plain old data; getgrnam_r fills it with pointers into `buf`.
        let mut grp: libc::group = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::group = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call; the buffer length is `buf.len()`.
        let rc = unsafe {
            libc::getgrnam_r(
                cname.as_ptr(),
                &mut grp,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if rc == 0 && !result.is_null() {
            return Ok(grp.gr_gid);
        }
        break;
    }
    name.parse::<u32>()
        .map_err(|_| PrivError::NoSuchGroup(name.into()))
}

/// What [`drop_privileges`] should do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DropSpec {
    /// User to become (name or number); `None` keeps the current user.
    pub user: Option<String>,
    /// Group to become (name or number); `None` takes the user's primary group.
    pub group: Option<String>,
    /// Capabilities to keep (effective and permitted); everything else goes, bounding set too.
    pub keep: CapSet,
}

/// The state after [`drop_privileges`] or [`limit_capabilities`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    /// Effective uid now.
    pub uid: u32,
    /// Effective gid now.
    pub gid: u32,
    /// The calling thread's sets now.
    pub caps: ThreadCaps,
    /// Capabilities asked for in `keep` that the process did not have to begin with.
    pub missing: CapSet,
}

/// Switches to `spec.user`/`spec.group` keeping only `spec.keep` (see the module docs for the
/// sequence). Without a user, only the capabilities are reduced ([`limit_capabilities`]).
/// Capabilities in `keep` the process never had are reported in [`Dropped::missing`], not an
/// error: the caller decides whether it can live without them.
pub fn drop_privileges(spec: &DropSpec) -> Result<Dropped, PrivError> {
    let Some(user) = spec.user.as_deref() else {
        if let Some(g) = spec.group.as_deref() {
            let gid = lookup_group(g)?;
            set_gid_only(gid)?;
        }
        return limit_capabilities(spec.keep);
    };
    let (uid, user_gid) = lookup_user(user)?;
    let gid = match spec.group.as_deref() {
        Some(g) => lookup_group(g)?,
        None => user_gid,
    };
    let (euid, _) = current_ids();
    if euid == uid {
        set_gid_only(gid)?;
        return limit_capabilities(spec.keep);
    }
    if euid != 0 {
        return Err(PrivError::NotRoot { uid, current: euid });
    }
    let before = thread_caps()?;
    let keep = spec.keep.intersect(before.permitted);
    shrink_bounding_set(keep)?;
    clear_ambient()?;
    prctl(libc::PR_SET_KEEPCAPS, 1, "prctl(PR_SET_KEEPCAPS, 1)")?;
    // SAFETY: setgroups with a zero count reads no memory.
    if unsafe { libc::setgroups(0, std::ptr::null()) } != 0 {
        return Err(sys("setgroups(0)"));
    }
    // SAFETY: plain integer arguments; glibc applies the change to every thread.
    if unsafe { libc::setresgid(gid, gid, gid) } != 0 {
        return Err(sys(format!("setresgid({gid})")));
    }
    // SAFETY: as above.
    if unsafe { libc::setresuid(uid, uid, uid) } != 0 {
        return Err(sys(format!("setresuid({uid})")));
    }
    prctl(libc::PR_SET_KEEPCAPS, 0, "prctl(PR_SET_KEEPCAPS, 0)")?;
    set_thread_caps(ThreadCaps {
        effective: keep,
        permitted: keep,
        inheritable: CapSet::EMPTY,
    })?;
    let (uid_now, gid_now) = current_ids();
    Ok(Dropped {
        uid: uid_now,
        gid: gid_now,
        caps: thread_caps()?,
        missing: spec.keep.minus(before.permitted),
    })
}

fn set_gid_only(gid: u32) -> Result<(), PrivError> {
    if current_ids().1 == gid {
        return Ok(());
    }
    // SAFETY: plain integer arguments.
    if unsafe { libc::setresgid(gid, gid, gid) } != 0 {
        return Err(sys(format!("setresgid({gid})")));
    }
    Ok(())
}

/// Keeps only `keep` without changing the user: the bounding set loses the rest (when
/// `CAP_SETPCAP` allows; otherwise it is left as it is), the ambient set is cleared, and the
/// effective and permitted sets become `keep ∩ permitted`.
pub fn limit_capabilities(keep: CapSet) -> Result<Dropped, PrivError> {
    let before = thread_caps()?;
    let keep_now = keep.intersect(before.permitted);
    if before.effective.contains(Capability::SETPCAP) {
        shrink_bounding_set(keep_now)?;
    }
    clear_ambient()?;
    set_thread_caps(ThreadCaps {
        effective: keep_now,
        permitted: keep_now,
        inheritable: CapSet::EMPTY,
    })?;
    let (uid, gid) = current_ids();
    Ok(Dropped {
        uid,
        gid,
        caps: thread_caps()?,
        missing: keep.minus(before.permitted),
    })
}

/// Sets `PR_SET_NO_NEW_PRIVS`: no later `execve` can gain privileges (setuid binaries, file
/// capabilities).
pub fn set_no_new_privs() -> Result<(), PrivError> {
    prctl(libc::PR_SET_NO_NEW_PRIVS, 1, "prctl(PR_SET_NO_NEW_PRIVS)").map(|_| ())
}

/// Deepest directory level [`check_not_world_writable`] descends to.
const MAX_DEPTH: usize = 8;

/// Refuses a world-writable configuration or rules path: `path` itself and, for a directory,
/// every file and directory below it (symbolic links are followed; at most 8 levels deep).
/// Anyone who can write there could change what the sensor loads, as Suricata's packagers
/// and sshd's `StrictModes` also refuse.
pub fn check_not_world_writable(path: &Path) -> Result<(), PrivError> {
    check_path(path, 0)
}

/// Refuses a rule, configuration or cache file (or directory) that is world-writable or owned by
/// a user other than root and the effective user (`extra_owner`: one more trusted uid, the
/// `run-as` user). As for [`check_not_world_writable`], a directory is checked with what is in it.
pub fn check_trusted(path: &Path, extra_owner: Option<u32>) -> Result<(), PrivError> {
    check_not_world_writable(path)?;
    let md = std::fs::metadata(path).map_err(|source| PrivError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let current = current_ids().0;
    if md.uid() != 0 && md.uid() != current && Some(md.uid()) != extra_owner {
        return Err(PrivError::OtherOwner {
            path: path.to_path_buf(),
            uid: md.uid(),
            current,
        });
    }
    Ok(())
}

/// Checks a directory shrike writes into (the log directory, the Hyperscan cache): it must not be
/// world-writable and must belong to root, the effective user or `extra_owner` (the `run-as`
/// user). A symbolic link to it is followed only when the link itself belongs to root, the
/// effective user or `extra_owner`; the directory it leads to is then checked the same way.
/// The directory's contents are not inspected (files in it are opened with
/// [`crate::safefs::DirHandle`]).
pub fn check_output_dir(path: &Path, extra_owner: Option<u32>) -> Result<(), PrivError> {
    let io_err = |source| PrivError::Io {
        path: path.to_path_buf(),
        source,
    };
    let current = current_ids().0;
    let trusted = |uid: u32| uid == 0 || uid == current || Some(uid) == extra_owner;
    let lmd = std::fs::symlink_metadata(path).map_err(io_err)?;
    if lmd.file_type().is_symlink() && !trusted(lmd.uid()) {
        return Err(PrivError::UntrustedLink {
            path: path.to_path_buf(),
            uid: lmd.uid(),
            current,
        });
    }
    let md = std::fs::metadata(path).map_err(io_err)?;
    if !md.is_dir() {
        return Err(PrivError::Io {
            path: path.to_path_buf(),
            source: io::Error::new(io::ErrorKind::InvalidInput, "not a directory"),
        });
    }
    let mode = md.mode() & 0o7777;
    if mode & 0o002 != 0 {
        return Err(PrivError::WorldWritable {
            path: path.to_path_buf(),
            mode,
        });
    }
    if !trusted(md.uid()) {
        return Err(PrivError::OtherOwner {
            path: path.to_path_buf(),
            uid: md.uid(),
            current,
        });
    }
    Ok(())
}

fn check_path(path: &Path, depth: usize) -> Result<(), PrivError> {
    let md = std::fs::metadata(path).map_err(|source| PrivError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mode = md.mode() & 0o7777;
    if mode & 0o002 != 0 {
        return Err(PrivError::WorldWritable {
            path: path.to_path_buf(),
            mode,
        });
    }
    if md.is_dir() && depth < MAX_DEPTH {
        let entries = std::fs::read_dir(path).map_err(|source| PrivError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        for e in entries {
            let e = e.map_err(|source| PrivError::Io {
                path: path.to_path_buf(),
                source,
            })?;
            match check_path(&e.path(), depth + 1) {
                // A dangling symlink or an entry removed meanwhile is not ours to judge.
                Err(PrivError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {}
                other => other?,
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn capability_names_round_trip() {
        for (i, n) in CAP_NAMES.iter().enumerate() {
            let c = Capability::from_name(n).unwrap();
            assert_eq!(c.number() as usize, i);
            assert_eq!(&c.name(), n);
        }
        assert_eq!(Capability::from_name("NET_RAW"), Some(Capability::NET_RAW));
        assert_eq!(
            Capability::from_name("CAP_SYS_NICE"),
            Some(Capability::SYS_NICE)
        );
        assert_eq!(Capability::from_name("cap_bogus"), None);
        assert_eq!(Capability::from_number(64), None);
        assert_eq!(Capability(50).name(), "cap_50");
    }

    #[test]
    fn capset_operations() {
        let s = CapSet::of(&CAPTURE_CAPS);
        assert_eq!(s.0, (1 << 12) | (1 << 13) | (1 << 14) | (1 << 23));
        assert!(s.contains(Capability::NET_RAW) && !s.contains(Capability::SETUID));
        assert_eq!(
            s.to_string(),
            "cap_net_admin,cap_net_raw,cap_ipc_lock,cap_sys_nice"
        );
        assert_eq!(
            CapSet::parse("net_raw, CAP_IPC_LOCK")
                .unwrap()
                .iter()
                .count(),
            2
        );
        assert!(CapSet::parse("net_raw,nope").is_err());
        assert_eq!(
            s.minus(CapSet::of(&[Capability::NET_RAW])).iter().count(),
            3
        );
        assert_eq!(CapSet::EMPTY.to_string(), "(none)");
    }

    #[test]
    fn reads_own_caps_and_ids() {
        let c = thread_caps().unwrap();
        assert_eq!(c.effective.minus(c.permitted), CapSet::EMPTY);
        let b = bounding_set().unwrap();
        assert!(!b.is_empty() || current_ids().0 != 0 || c.permitted.is_empty());
        ambient_set().unwrap();
        supplementary_groups().unwrap();
        assert!(last_cap() >= 36);
    }

    #[test]
    fn user_and_group_lookup() {
        assert_eq!(lookup_user("root").unwrap(), (0, 0));
        assert_eq!(lookup_group("root").unwrap(), 0);
        assert_eq!(lookup_user("4242").unwrap(), (4242, 4242));
        assert_eq!(lookup_group("4242").unwrap(), 4242);
        assert!(matches!(
            lookup_user("no-such-user-shrike-x"),
            Err(PrivError::NoSuchUser(_))
        ));
        assert!(matches!(
            lookup_group("no-such-group-shrike-x"),
            Err(PrivError::NoSuchGroup(_))
        ));
        assert!(lookup_user("a\0b").is_err());
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("shrike-priv-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o750)).unwrap();
        d
    }

    #[test]
    fn world_writable_paths_are_refused() {
        let d = scratch("ww");
        let sub = d.join("rules");
        std::fs::create_dir(&sub).unwrap();
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
        let f = sub.join("a.rules");
        std::fs::write(&f, "alert ip any any -> any any (sid:1;)\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        check_not_world_writable(&d).unwrap();
        check_not_world_writable(&f).unwrap();

        // A world-writable file deep inside is found and named.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        match check_not_world_writable(&d) {
            Err(PrivError::WorldWritable { path, mode }) => {
                assert_eq!(path, f);
                assert_eq!(mode, 0o666);
            }
            other => panic!("{other:?}"),
        }
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();

        // A world-writable directory, even sticky like /tmp.
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let err = check_not_world_writable(&d).unwrap_err();
        assert!(err.to_string().contains("world-writable"), "{err}");
        assert!(err.to_string().contains("1777"), "{err}");
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();

        // Group-writable is the admin's choice, not an error; a dangling link is skipped.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o664)).unwrap();
        std::os::unix::fs::symlink(d.join("gone"), sub.join("dangling")).unwrap();
        check_not_world_writable(&d).unwrap();

        // A missing path is an error that names it.
        let err = check_not_world_writable(&d.join("missing")).unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn output_dirs_and_trusted_files_are_checked() {
        use std::os::unix::fs::symlink;
        let d = std::env::temp_dir().join(format!("shrike-outdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        check_output_dir(&d, None).unwrap();
        // A link we own to a good directory is followed.
        let link = d.join("via-link");
        let real = d.join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o750)).unwrap();
        symlink(&real, &link).unwrap();
        check_output_dir(&link, None).unwrap();
        // World-writable (even sticky, like /tmp) is refused, for a directory and a file.
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let e = check_output_dir(&link, None).unwrap_err();
        assert!(matches!(e, PrivError::WorldWritable { .. }), "{e}");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o750)).unwrap();
        let f = d.join("a.rules");
        std::fs::write(&f, "x").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o646)).unwrap();
        assert!(matches!(
            check_trusted(&f, None),
            Err(PrivError::WorldWritable { .. })
        ));
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        check_trusted(&f, None).unwrap();
        assert!(
            check_output_dir(&f, None).is_err(),
            "a file is not a directory"
        );
        if current_ids().0 == 0 {
            // Owned by another (non-root) user: refused unless that is the run-as user.
            let c = CString::new(f.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid path string.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
            let e = check_trusted(&f, None).unwrap_err();
            assert!(e.to_string().contains("owned by uid 65534"), "{e}");
            check_trusted(&f, Some(65534)).unwrap();
            let c = CString::new(real.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid path string.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
            assert!(matches!(
                check_output_dir(&link, None),
                Err(PrivError::OtherOwner { .. })
            ));
            check_output_dir(&link, Some(65534)).unwrap();
            // A link owned by another user is not followed, wherever it leads.
            let c = CString::new(link.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid path string.
            assert_eq!(unsafe { libc::lchown(c.as_ptr(), 65534, 65534) }, 0);
            assert!(matches!(
                check_output_dir(&link, None),
                Err(PrivError::UntrustedLink { .. })
            ));
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
