//! Creating files where someone else may have planted something: the log directory (writable
//! by the `shrike` user while the sensor may start as root) and the Hyperscan cache.
//!
//! Every file is opened relative to a [`DirHandle`] (`openat(2)`), with `O_NOFOLLOW` (a
//! symbolic link planted under the file's name is refused, `ELOOP`), `O_NONBLOCK` while opening
//! (a planted FIFO cannot hang the open) and `O_CLOEXEC`, with an explicit mode. Once open, the
//! file must be a regular file with one link (a hard link to a file elsewhere is refused). New
//! files are created with `O_EXCL`; an existing file is only appended to, and truncated only when
//! it belongs to the user shrike runs as.

use std::ffi::{CString, OsStr};
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// An open directory, the anchor for the files created in it.
#[derive(Debug)]
pub struct DirHandle {
    dir: File,
    path: PathBuf,
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    let b = name.as_bytes();
    if b.is_empty() || b == b"." || b == b".." || b.contains(&b'/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is not a plain file name", name.to_string_lossy()),
        ));
    }
    CString::new(b).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in file name"))
}

/// The file behind a descriptor from `openat`, or the OS error.
fn from_fd(fd: libc::c_int) -> io::Result<File> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by a successful openat and is owned by nobody else.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// Refuses anything but a regular file with a single link.
pub fn check_regular(f: &File, what: &Path) -> io::Result<Metadata> {
    let md = f.metadata()?;
    if !md.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: not a regular file; refusing to write to it",
                what.display()
            ),
        ));
    }
    if md.nlink() > 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: has {} hard links (one may point outside the directory); refusing to write to it",
                what.display(),
                md.nlink()
            ),
        ));
    }
    Ok(md)
}

/// The effective user id.
fn euid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

impl DirHandle {
    /// Open directory `path` (symbolic links in the path are followed: check the directory
    /// with [`crate::privileges::check_log_dir`] first).
    pub fn open(path: &Path) -> io::Result<DirHandle> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))?;
        // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        Ok(DirHandle {
            dir: from_fd(fd)?,
            path: path.to_path_buf(),
        })
    }

    /// The directory's path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory's own metadata (of the directory opened, not of a path).
    pub fn metadata(&self) -> io::Result<Metadata> {
        self.dir.metadata()
    }

    fn openat(&self, name: &OsStr, flags: libc::c_int, mode: u32) -> io::Result<File> {
        let c = c_name(name)?;
        // SAFETY: the directory descriptor is open for the life of `self`, `c` is a valid
        // NUL-terminated string; the mode is passed as the variadic argument openat expects.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK,
                mode as libc::c_uint,
            )
        };
        from_fd(fd)
    }

    /// Open `name` for appending, creating it with `mode` when missing. An existing entry must
    /// be a regular file with one link; a symbolic link is refused.
    pub fn open_append(&self, name: &OsStr, mode: u32) -> io::Result<File> {
        let f = self.openat(name, libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT, mode)?;
        check_regular(&f, &self.path.join(name))?;
        Ok(f)
    }

    /// Create `name` with `mode`; fails when anything by that name exists (`O_EXCL`).
    pub fn create_new(&self, name: &OsStr, mode: u32) -> io::Result<File> {
        let f = self.openat(name, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, mode)?;
        check_regular(&f, &self.path.join(name))?;
        Ok(f)
    }

    /// Open `name` for writing from its start, emptied: created with `mode` when missing; an
    /// existing file is truncated only when it is a regular, singly linked file owned by the
    /// user shrike runs as (never a file someone else planted).
    pub fn create_truncate(&self, name: &OsStr, mode: u32) -> io::Result<File> {
        let f = self.openat(name, libc::O_WRONLY | libc::O_CREAT, mode)?;
        let md = check_regular(&f, &self.path.join(name))?;
        if md.uid() != euid() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{}: owned by uid {}, not by uid {}; refusing to truncate it",
                    self.path.join(name).display(),
                    md.uid(),
                    euid()
                ),
            ));
        }
        f.set_len(0)?;
        Ok(f)
    }

    /// Open `name` for reading, refusing a symbolic link or anything but a regular file.
    pub fn open_read(&self, name: &OsStr) -> io::Result<File> {
        let f = self.openat(name, libc::O_RDONLY, 0)?;
        let md = f.metadata()?;
        if !md.file_type().is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: not a regular file", self.path.join(name).display()),
            ));
        }
        Ok(f)
    }

    /// Rename `from` to `to`, both in this directory (atomic; replaces `to`).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (a, b) = (c_name(from)?, c_name(to)?);
        let fd = self.dir.as_raw_fd();
        // SAFETY: both names are valid NUL-terminated strings; `fd` is open.
        let r = unsafe { libc::renameat(fd, a.as_ptr(), fd, b.as_ptr()) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Remove the file `name` (a symbolic link by that name is removed, not followed).
    pub fn unlink(&self, name: &OsStr) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: `c` is a valid NUL-terminated string; the descriptor is open.
        let r = unsafe { libc::unlinkat(self.dir.as_raw_fd(), c.as_ptr(), 0) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Split `path` into its directory (`.` for a bare name) and file name.
fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: no file name", path.display()),
        )
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((dir, name))
}

/// [`DirHandle::open_append`] of `path` in its directory. Paths under `/dev/` (`/dev/stdout`,
/// `/dev/null`) are opened as given: they are devices the configuration names on purpose.
pub fn open_append(path: &Path, mode: u32) -> io::Result<File> {
    if path.starts_with("/dev") {
        return std::fs::OpenOptions::new().append(true).open(path);
    }
    let (dir, name) = split(path)?;
    DirHandle::open(dir)?.open_append(name, mode)
}

/// [`DirHandle::create_truncate`] of `path` in its directory (`/dev/` paths as given).
pub fn create_truncate(path: &Path, mode: u32) -> io::Result<File> {
    if path.starts_with("/dev") {
        return std::fs::OpenOptions::new().write(true).open(path);
    }
    let (dir, name) = split(path)?;
    DirHandle::open(dir)?.create_truncate(name, mode)
}

/// A name nobody can predict: `prefix` plus 64 random bits (the std hasher's per-process
/// random keys, the pid, the time and a counter).
pub fn unpredictable_name(prefix: &str) -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u64(N.fetch_add(1, Ordering::Relaxed));
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    format!("{prefix}{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::fs::{symlink, OpenOptionsExt};

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("shrike-safefs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn planted_links_and_fifos_are_refused_and_the_target_untouched() {
        let d = tmpdir("plant");
        let outside = d.join("outside.txt");
        std::fs::write(&outside, b"precious").unwrap();
        let logs = d.join("logs");
        std::fs::create_dir(&logs).unwrap();
        symlink(&outside, logs.join("eve.json")).unwrap();
        std::fs::hard_link(&outside, logs.join("fast.log")).unwrap();
        let dir = DirHandle::open(&logs).unwrap();
        let e = dir.open_append(OsStr::new("eve.json"), 0o640).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP), "{e}");
        assert!(dir.create_truncate(OsStr::new("eve.json"), 0o640).is_err());
        assert!(dir.create_new(OsStr::new("eve.json"), 0o640).is_err());
        let e = dir.open_append(OsStr::new("fast.log"), 0o640).unwrap_err();
        assert!(e.to_string().contains("hard links"), "{e}");
        assert!(dir.create_truncate(OsStr::new("fast.log"), 0o640).is_err());
        // A FIFO neither blocks the open nor is written to.
        let fifo = CString::new(logs.join("stats.log").as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid path string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        // (ENXIO with no reader; "not a regular file" with one.)
        assert!(dir.open_append(OsStr::new("stats.log"), 0o640).is_err());
        let _reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(logs.join("stats.log"))
            .unwrap();
        let e = dir.open_append(OsStr::new("stats.log"), 0o640).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        // Names that leave the directory are refused.
        assert!(dir.open_append(OsStr::new("../x"), 0o640).is_err());
        assert!(dir.open_append(OsStr::new(".."), 0o640).is_err());
        let mut s = String::new();
        File::open(&outside)
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "precious");
        assert!(!d.join("x").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn append_creates_with_the_mode_and_keeps_existing_data() {
        use std::os::unix::fs::PermissionsExt;
        let d = tmpdir("append");
        let dir = DirHandle::open(&d).unwrap();
        let mut f = dir.open_append(OsStr::new("eve.json"), 0o600).unwrap();
        f.write_all(b"one\n").unwrap();
        let mode = std::fs::metadata(d.join("eve.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "created 0600: {mode:o}");
        let mut f = open_append(&d.join("eve.json"), 0o600).unwrap();
        f.write_all(b"two\n").unwrap();
        assert_eq!(std::fs::read(d.join("eve.json")).unwrap(), b"one\ntwo\n");
        // Our own file may be truncated.
        let mut f = create_truncate(&d.join("eve.json"), 0o600).unwrap();
        f.write_all(b"3\n").unwrap();
        assert_eq!(std::fs::read(d.join("eve.json")).unwrap(), b"3\n");
        // create_new never reuses a name; rename and unlink stay in the directory.
        let n = unpredictable_name(".probe-");
        assert_ne!(n, unpredictable_name(".probe-"));
        dir.create_new(OsStr::new(&n), 0o600).unwrap();
        assert!(dir.create_new(OsStr::new(&n), 0o600).is_err());
        dir.rename(OsStr::new(&n), OsStr::new("moved")).unwrap();
        assert!(d.join("moved").exists());
        dir.unlink(OsStr::new("moved")).unwrap();
        assert!(!d.join("moved").exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}
