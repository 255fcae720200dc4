//! Destinations the writer thread hands buffers to: files (optionally rotated segments),
//! unix datagram/stream sockets, and Redis lists/channels.
//!
//! Every sink accepts one buffer of whole newline-terminated records at a time. On error it
//! reports how many bytes of the buffer are already delivered, so the writer can retry the rest
//! without duplicating or splitting records.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::config::{RedisConfig, RedisMode};
use crate::error::OutputError;
use crate::sink::open_append;
use crate::stats::OutputStats;

/// Progress made before an error: bytes of the buffer already delivered.
pub type Partial = (usize, io::Error);

/// A destination for buffers of EVE records.
pub trait Sink: Send + std::fmt::Debug {
    /// Deliver `data[..]` (whole records). On error, return how much was delivered.
    fn write_buffer(&mut self, data: &[u8], stats: &mut OutputStats) -> Result<(), Partial>;
    /// Reopen the destination (SIGHUP / logrotate). Default: nothing to do.
    fn reopen(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Periodic housekeeping (age-based rotation). Default: nothing.
    fn tick(&mut self, _now: Instant, _stats: &mut OutputStats) {}
    /// Whether `e` means the destination's reader is gone for good, so retrying is pointless
    /// (a pipe or FIFO whose reader exited: `shrike -l - | head`). Sockets reconnect instead.
    fn reader_gone(&self, _e: &io::Error) -> bool {
        false
    }
    /// The destination, for messages (a file's path, a socket's path, a Redis server).
    fn describe(&self) -> String {
        "EVE output".into()
    }
    /// The writer drops the rest of a buffer whose last `tail` delivered bytes are the
    /// beginning of a record (a write cut short by a full disk, then given up): take those
    /// bytes back so the destination holds no half record. Default: nothing (a datagram or a
    /// Redis command is whole or not sent).
    fn drop_partial(&mut self, _tail: usize, _stats: &mut OutputStats) {}
}

fn write_file(f: &mut File, data: &[u8], stats: &mut OutputStats) -> Result<(), Partial> {
    let mut done = 0;
    while done < data.len() {
        match f.write(data.get(done..).unwrap_or_default()) {
            Ok(0) => return Err((done, io::Error::from(io::ErrorKind::WriteZero))),
            Ok(n) => {
                done += n;
                stats.writes += 1;
                stats.bytes += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((done, e)),
        }
    }
    Ok(())
}

/// One file, or a series of segment files rotated by size and/or age.
///
/// Without rotation the file is `path` itself. With rotation, segment `n` of `eve.3.json` is
/// `eve.3.<n>.json` (n from 0); a segment is only closed between buffers, so records never span
/// two segments.
#[derive(Debug)]
pub struct FileSink {
    base: PathBuf,
    rotate_size: u64,
    rotate_age: Duration,
    seq: u64,
    file: File,
    path: PathBuf,
    size: u64,
    opened: Instant,
    /// A cut record could not be taken back (the file cannot be truncated): the next write
    /// starts with a newline so the next record starts on a line of its own.
    owe_newline: bool,
}

fn segment_name(base: &Path, seq: u64) -> PathBuf {
    crate::sink::worker_file_name(base, seq as usize)
}

impl FileSink {
    /// Open `base` (no rotation when both limits are 0).
    pub fn open(
        base: PathBuf,
        rotate_size: u64,
        rotate_age_secs: u64,
    ) -> Result<Self, OutputError> {
        let rotating = rotate_size > 0 || rotate_age_secs > 0;
        let path = if rotating {
            segment_name(&base, 0)
        } else {
            base.clone()
        };
        let file = open_append(&path)?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(FileSink {
            base,
            rotate_size,
            rotate_age: Duration::from_secs(rotate_age_secs),
            seq: 0,
            file,
            path,
            size,
            opened: Instant::now(),
            owe_newline: false,
        })
    }

    /// The file being written now.
    pub fn current_path(&self) -> &Path {
        &self.path
    }

    fn rotating(&self) -> bool {
        self.rotate_size > 0 || !self.rotate_age.is_zero()
    }

    fn rotate(&mut self, stats: &mut OutputStats) {
        let next = segment_name(&self.base, self.seq + 1);
        // If the next segment cannot be opened, keep writing the current one.
        if let Ok(f) = open_append(&next) {
            let _ = self.file.flush();
            self.file = f;
            self.seq += 1;
            self.path = next;
            self.size = 0;
            self.opened = Instant::now();
            stats.rotations += 1;
        }
    }
}

impl Sink for FileSink {
    fn write_buffer(&mut self, data: &[u8], stats: &mut OutputStats) -> Result<(), Partial> {
        if self.owe_newline {
            write_file(&mut self.file, b"\n", stats)?;
            self.owe_newline = false;
            self.size += 1;
        }
        let r = write_file(&mut self.file, data, stats);
        let done = match &r {
            Ok(()) => data.len(),
            Err((d, _)) => *d,
        };
        self.size += done as u64;
        if r.is_ok() && self.rotate_size > 0 && self.size >= self.rotate_size {
            self.rotate(stats);
        }
        r
    }

    fn reader_gone(&self, e: &io::Error) -> bool {
        e.raw_os_error() == Some(libc::EPIPE)
    }

    fn drop_partial(&mut self, tail: usize, stats: &mut OutputStats) {
        // The file is opened for appending and only this thread writes it: its end is the
        // cut record's end. Truncating frees space, so it works on a full disk.
        let cut = self.file.metadata().map(|m| m.len()).and_then(|len| {
            let keep = len.saturating_sub(tail as u64);
            self.file.set_len(keep).map(|()| len - keep)
        });
        match cut {
            Ok(n) => {
                self.size = self.size.saturating_sub(n);
                stats.truncated_bytes += n;
            }
            // A pipe or a device: end the half record's line before the next one.
            Err(_) => self.owe_newline = true,
        }
    }

    fn reopen(&mut self) -> io::Result<()> {
        let f = open_append(&self.path).map_err(|e| match e {
            OutputError::Open { source, .. } => source,
            other => io::Error::other(other.to_string()),
        })?;
        self.size = f.metadata().map(|m| m.len()).unwrap_or(0);
        self.file = f;
        Ok(())
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn tick(&mut self, now: Instant, stats: &mut OutputStats) {
        if self.rotating()
            && !self.rotate_age.is_zero()
            && self.size > 0
            && now.duration_since(self.opened) >= self.rotate_age
        {
            self.rotate(stats);
        }
    }
}

/// A unix datagram socket: one record per datagram (including its newline), as Suricata's
/// `unix_dgram` filetype.
#[derive(Debug)]
pub struct UnixDgramSink {
    sock: UnixDatagram,
    path: PathBuf,
}

impl UnixDgramSink {
    /// Send to the socket bound at `path`.
    pub fn open(path: PathBuf) -> Result<Self, OutputError> {
        let sock = UnixDatagram::unbound().map_err(|source| OutputError::Open {
            path: path.clone(),
            source,
        })?;
        Ok(UnixDgramSink { sock, path })
    }
}

impl Sink for UnixDgramSink {
    fn write_buffer(&mut self, data: &[u8], stats: &mut OutputStats) -> Result<(), Partial> {
        let mut done = 0;
        for rec in data.split_inclusive(|&b| b == b'\n') {
            loop {
                match self.sock.send_to(rec, &self.path) {
                    Ok(_) => {
                        stats.writes += 1;
                        stats.bytes += rec.len() as u64;
                        break;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.raw_os_error() == Some(libc::EMSGSIZE) => {
                        // Never deliverable: count it and move on.
                        stats.write_errors += 1;
                        stats.lost_bytes += rec.len() as u64;
                        break;
                    }
                    Err(e) => return Err((done, e)),
                }
            }
            done += rec.len();
        }
        Ok(())
    }
}

/// A unix stream socket, reconnected on demand after errors.
#[derive(Debug)]
pub struct UnixStreamSink {
    path: PathBuf,
    conn: Option<UnixStream>,
}

impl UnixStreamSink {
    /// Connect lazily to `path`.
    pub fn open(path: PathBuf) -> Self {
        UnixStreamSink { path, conn: None }
    }
}

impl Sink for UnixStreamSink {
    fn write_buffer(&mut self, data: &[u8], stats: &mut OutputStats) -> Result<(), Partial> {
        let conn = match &mut self.conn {
            Some(c) => c,
            None => {
                let c = UnixStream::connect(&self.path).map_err(|e| (0, e))?;
                self.conn.insert(c)
            }
        };
        let mut done = 0;
        while done < data.len() {
            match conn.write(data.get(done..).unwrap_or_default()) {
                Ok(0) => {
                    self.conn = None;
                    return Err((done, io::Error::from(io::ErrorKind::WriteZero)));
                }
                Ok(n) => {
                    done += n;
                    stats.writes += 1;
                    stats.bytes += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.conn = None;
                    return Err((done, e));
                }
            }
        }
        Ok(())
    }

    fn reopen(&mut self) -> io::Result<()> {
        self.conn = None;
        Ok(())
    }
}

/// Redis over RESP, written by hand: `LPUSH`/`RPUSH key record` or `PUBLISH channel record`,
/// one command per record, pipelined per buffer (all commands written, then all replies read).
#[derive(Debug)]
pub struct RedisSink {
    cfg: RedisConfig,
    conn: Option<(TcpStream, BufReader<TcpStream>)>,
    scratch: Vec<u8>,
    line: String,
}

impl RedisSink {
    /// Connect lazily to `cfg.server:cfg.port`.
    pub fn new(cfg: RedisConfig) -> Self {
        RedisSink {
            cfg,
            conn: None,
            scratch: Vec::new(),
            line: String::new(),
        }
    }

    fn command(&self) -> &'static [u8] {
        match self.cfg.mode {
            RedisMode::Lpush => b"LPUSH",
            RedisMode::Rpush => b"RPUSH",
            RedisMode::Publish => b"PUBLISH",
        }
    }

    fn connect(&mut self) -> io::Result<()> {
        if self.conn.is_none() {
            let s = TcpStream::connect((self.cfg.server.as_str(), self.cfg.port))?;
            s.set_nodelay(true)?;
            s.set_read_timeout(Some(Duration::from_secs(5)))?;
            let r = BufReader::new(s.try_clone()?);
            self.conn = Some((s, r));
        }
        Ok(())
    }
}

fn push_bulk(out: &mut Vec<u8>, v: &[u8]) {
    out.push(b'$');
    out.extend_from_slice(itoa::Buffer::new().format(v.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(v);
    out.extend_from_slice(b"\r\n");
}

impl Sink for RedisSink {
    fn write_buffer(&mut self, data: &[u8], stats: &mut OutputStats) -> Result<(), Partial> {
        self.connect().map_err(|e| (0, e))?;
        let cmd = self.command();
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let mut n = 0usize;
        for rec in data.split(|&b| b == b'\n').filter(|r| !r.is_empty()) {
            scratch.extend_from_slice(b"*3\r\n");
            push_bulk(&mut scratch, cmd);
            push_bulk(&mut scratch, self.cfg.key.as_bytes());
            push_bulk(&mut scratch, rec);
            n += 1;
        }
        let result = (|| {
            let Some((w, r)) = &mut self.conn else {
                return Err(io::Error::from(io::ErrorKind::NotConnected));
            };
            w.write_all(&scratch)?;
            stats.writes += 1;
            let mut errors = 0u64;
            for _ in 0..n {
                self.line.clear();
                if r.read_line(&mut self.line)? == 0 {
                    return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
                }
                match self.line.as_bytes().first() {
                    Some(b':') | Some(b'+') => {}
                    Some(b'-') => errors += 1,
                    _ => return Err(io::Error::new(io::ErrorKind::InvalidData, "bad RESP reply")),
                }
            }
            Ok(errors)
        })();
        self.scratch = scratch;
        match result {
            Ok(errors) => {
                stats.bytes += data.len() as u64;
                stats.write_errors += errors;
                Ok(())
            }
            Err(e) => {
                // The server may have applied some commands; a retry resends the whole buffer
                // (at-least-once), which is the best a pipelined client without replies can do.
                self.conn = None;
                Err((0, e))
            }
        }
    }

    fn reopen(&mut self) -> io::Result<()> {
        self.conn = None;
        Ok(())
    }
}
