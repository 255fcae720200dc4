//! File sinks for EVE buffers: a shared `O_APPEND` file or one file per worker.
//!
//! Every [`FileWriter::write_buffer`] call hands the kernel one whole buffer of whole records in
//! a single `write(2)` (looping only if the kernel accepts part of it, which regular files do only
//! on errors such as ENOSPC). With `O_APPEND` each write lands atomically at the end of the file
//! relative to other appends, so records of different workers never interleave.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Layout;
use crate::error::OutputError;

/// The EVE file(s) of one output.
#[derive(Debug, Clone)]
pub struct EveSink {
    path: PathBuf,
    layout: Layout,
    shared: Option<Arc<File>>,
}

/// Mode of the log files shrike creates (Suricata's default `filemode`, 0640).
pub const LOG_FILE_MODE: u32 = 0o640;

/// Open `path` for appending (created with mode [`LOG_FILE_MODE`] when missing), relative to
/// its directory and never through a symbolic link, a hard link or into anything but a regular
/// file ([`shrike_sys::safefs`]); `/dev/stdout` and other `/dev/` paths as given.
pub fn open_append(path: &Path) -> Result<File, OutputError> {
    shrike_sys::safefs::open_append(path, LOG_FILE_MODE).map_err(|source| OutputError::Open {
        path: path.to_path_buf(),
        source,
    })
}

/// `eve.json` -> `eve.<worker>.json` (Suricata's threaded file naming); `eve` -> `eve.<worker>`.
pub fn worker_file_name(path: &Path, worker: usize) -> PathBuf {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match file.rfind('.') {
        Some(dot) if dot > 0 => format!("{}.{}{}", &file[..dot], worker, &file[dot..]),
        _ => format!("{file}.{worker}"),
    };
    path.with_file_name(name)
}

impl EveSink {
    /// Prepare the sink. For [`Layout::Shared`] the file is opened now; per-worker files are
    /// opened by [`writer`](Self::writer).
    pub fn open(path: impl Into<PathBuf>, layout: Layout) -> Result<Self, OutputError> {
        let path = path.into();
        let shared = match layout {
            Layout::Shared => Some(Arc::new(open_append(&path)?)),
            Layout::PerWorker => None,
        };
        Ok(EveSink {
            path,
            layout,
            shared,
        })
    }

    /// The configured path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The file a worker writes to.
    pub fn worker_path(&self, worker: usize) -> PathBuf {
        match self.layout {
            Layout::Shared => self.path.clone(),
            Layout::PerWorker => worker_file_name(&self.path, worker),
        }
    }

    /// A writer for worker `worker` (shares the fd in the shared layout).
    pub fn writer(&self, worker: usize) -> Result<FileWriter, OutputError> {
        let path = self.worker_path(worker);
        let file = match &self.shared {
            Some(f) => Arc::clone(f),
            None => Arc::new(open_append(&path)?),
        };
        Ok(FileWriter { file, path })
    }
}

/// Appends whole buffers to one file.
#[derive(Debug)]
pub struct FileWriter {
    file: Arc<File>,
    path: PathBuf,
}

impl FileWriter {
    /// Wrap an open file.
    pub fn from_file(file: File, path: PathBuf) -> Self {
        FileWriter {
            file: Arc::new(file),
            path,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write all of `data` (normally one `write(2)`); returns the number of write calls made.
    ///
    /// On error, `Err((written, e))` tells how much of `data` already reached the file, so a
    /// retry can continue with the rest without duplicating records.
    pub fn write_buffer(&mut self, data: &[u8]) -> Result<u64, (usize, io::Error)> {
        let mut done = 0;
        let mut calls = 0;
        while done < data.len() {
            let rest = data.get(done..).unwrap_or_default();
            match (&*self.file).write(rest) {
                Ok(0) => return Err((done, io::Error::from(io::ErrorKind::WriteZero))),
                Ok(n) => {
                    done += n;
                    calls += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err((done, e)),
            }
        }
        Ok(calls)
    }

    /// Reopen the path (after logrotate moved the file away).
    pub fn reopen(&mut self) -> Result<(), OutputError> {
        self.file = Arc::new(open_append(&self.path)?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_names() {
        let cases = [
            ("/l/eve.json", 3, "/l/eve.3.json"),
            ("eve", 0, "eve.0"),
            ("/l/.hidden", 1, "/l/.hidden.1"),
            ("/l/a.b.json", 12, "/l/a.b.12.json"),
        ];
        for (p, w, want) in cases {
            assert_eq!(worker_file_name(Path::new(p), w), PathBuf::from(want));
        }
    }
}
