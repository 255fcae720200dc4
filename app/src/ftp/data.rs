//! FTP data connections (`ftp-data`), as Suricata 7 has them: a flow the control channel
//! announced (`PASV`/`EPSV`/`PORT`/`EPRT`, then `RETR` or `STOR`) carries one file in the
//! direction the command implies; its name is the command's argument. One transaction per
//! flow, complete at the end of the flow: the `ftp_data` record (`filename`, `command`) and
//! a `fileinfo` record; rules see `file.data`, `file.name` and `ftpdata_command`.

use std::any::Any;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::registry::{
    AppParser, BufferDesc, Detect, KeywordDesc, LogCtx, ParserConfig, Protocol, TxMatch,
};
use crate::Dir;

/// File bytes kept for inspection (shrike's bound).
pub const FILE_KEEP: usize = 256 << 10;

/// `ftp-data` in the protocol registry (never detected by content: only announced).
pub static PROTOCOL: Protocol = Protocol {
    name: "ftp-data",
    aliases: &[],
    ip_protos: &[6],
    ports: &[],
    tcp: Detect::None,
    udp: Detect::None,
    new_parser,
    buffers: &[
        BufferDesc {
            name: "file.data",
            dir: None,
        },
        BufferDesc {
            name: "file.name",
            dir: None,
        },
    ],
    events: &[],
    keywords: &[KeywordDesc {
        name: "ftpdata_command",
        dir: None,
        setup: command_setup,
    }],
    generic_stats: true,
};

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(FtpDataState::new(true, Vec::new(), Dir::ToClient))
}

/// `ftpdata_command:retr|stor`.
#[derive(Debug)]
struct CommandMatch {
    retr: bool,
}

fn command_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("ftpdata_command needs a value")?.trim();
    let retr = match v {
        "retr" => true,
        "stor" => false,
        _ => return Err(format!("invalid ftpdata_command value `{v}`")),
    };
    Ok(Box::new(CommandMatch { retr }))
}

impl TxMatch for CommandMatch {
    fn matches(&self, parser: &dyn AppParser, _tx: u64, _dir: Dir) -> Option<bool> {
        let s = parser.as_any().downcast_ref::<FtpDataState>()?;
        Some(s.retr == self.retr)
    }
}

/// One data connection.
#[derive(Debug)]
pub struct FtpDataState {
    /// `RETR` (else `STOR`).
    pub retr: bool,
    /// The file name (the command's argument).
    pub filename: Vec<u8>,
    /// The direction the file goes.
    pub dir: Dir,
    data: Vec<u8>,
    seen: bool,
    gap: bool,
    closed: bool,
    files: crate::files::FileConfig,
    /// The file, opened with the first byte.
    file: Option<Box<crate::files::TrackedFile>>,
    /// Its `fileinfo` record was written.
    file_logged: bool,
}

impl FtpDataState {
    /// A connection announced by `RETR` (`retr`) or `STOR` of `filename`, carrying the
    /// file in `dir`.
    pub fn new(retr: bool, filename: Vec<u8>, dir: Dir) -> Self {
        FtpDataState {
            retr,
            filename,
            dir,
            data: Vec::new(),
            seen: false,
            gap: false,
            closed: false,
            files: crate::files::FileConfig::default(),
            file: None,
            file_logged: false,
        }
    }

    /// What the file computes (eve-log `files: force-hash`, `force-magic`).
    pub fn with_files(mut self, files: crate::files::FileConfig) -> Self {
        self.files = files;
        self
    }

    fn command(&self) -> &'static str {
        if self.retr {
            "RETR"
        } else {
            "STOR"
        }
    }

    fn write_obj(&self, w: &mut JsonWriter) {
        w.open_object("ftp_data");
        if !self.filename.is_empty() {
            w.set_bytes("filename", &self.filename);
        }
        w.set_str("command", self.command());
        w.close();
    }
}

impl AppParser for FtpDataState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if dir != self.dir {
            return false;
        }
        self.seen = true;
        let room = FILE_KEEP.saturating_sub(self.data.len());
        self.data.extend_from_slice(&data[..room.min(data.len())]);
        let files = self.files;
        let name = &self.filename;
        self.file
            .get_or_insert_with(|| Box::new(crate::files::TrackedFile::open(name, &files)))
            .append(data);
        false
    }

    fn gap(&mut self, dir: Dir, _len: u64) {
        if dir == self.dir {
            self.gap = true;
            if let Some(f) = self.file.as_deref_mut() {
                // Marked as having gaps (its size counts the bytes seen).
                f.gap(0);
            }
        }
    }

    fn truncate(&mut self, dir: Dir) {
        if dir == self.dir {
            if let Some(f) = self.file.as_deref_mut() {
                f.close(true);
            }
        }
    }

    fn close(&mut self) {
        self.closed = true;
        // A data connection with a gap ends its file `TRUNCATED`.
        if let Some(f) = self.file.as_deref_mut() {
            f.close(self.gap);
        }
    }

    fn files(&self, _tx: u64, dir: Dir, f: &mut dyn FnMut(&crate::files::TrackedFile)) {
        if dir == self.dir {
            if let Some(file) = self.file.as_deref() {
                f(file);
            }
        }
    }

    fn files_mut(&mut self, _tx: u64, dir: Dir, f: &mut dyn FnMut(&mut crate::files::TrackedFile)) {
        if dir == self.dir {
            if let Some(file) = self.file.as_deref_mut() {
                f(file);
            }
        }
    }

    fn tx_count(&self) -> u64 {
        1
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        u64::from(self.closed)
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        out.push(0);
    }

    fn buffer_ready(&self, _tx: u64, _buf: u16, dir: Dir, closed: bool) -> Option<bool> {
        let fin = closed || self.closed;
        (dir == self.dir && (self.seen || fin)).then_some(fin)
    }

    fn buffer(&self, _tx: u64, buf: u16, dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        if dir != self.dir || !self.seen {
            return false;
        }
        match buf {
            0 => f(&self.data),
            1 => f(&self.filename),
            _ => false,
        }
    }

    fn tx_final(&self, _tx: u64, closed: bool) -> bool {
        closed || self.closed
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        // A file cut short at the stream depth is logged then (Suricata's file logger runs
        // when the file closes), before the flow's `ftp_data` record.
        if !self.file_logged && self.file.as_deref().is_some_and(|f| f.is_done()) {
            self.file_logged = true;
            if c.write {
                self.write_fileinfo(c);
            }
        }
        if *c.flow_logged || !(c.closed || self.closed) {
            return;
        }
        *c.flow_logged = true;
        *c.next = 1;
        c.logged += 1;
        if !c.write {
            return;
        }
        if c.out.wants_type("ftp") {
            if let Some(mut rec) = c.out.record(EventKind::Protocol) {
                write_eve_header(&mut rec, &c.rec.header("ftp_data", true));
                rec.set_u64("tx_id", 0);
                self.write_obj(&mut rec);
                rec.close();
                let _ = rec.commit();
            }
        }
        if let Some(f) = self.file.as_deref_mut() {
            f.close(self.gap);
        }
        if !self.file_logged {
            self.file_logged = true;
            self.write_fileinfo(c);
        }
    }

    fn alert_members(&self, _tx: u64, w: &mut JsonWriter) -> bool {
        self.write_obj(w);
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl FtpDataState {
    /// The file's `fileinfo` record.
    fn write_fileinfo(&self, c: &mut LogCtx<'_>) {
        let emit = c.out.wants_type("files");
        let Some(f) = self.file.as_deref() else {
            return;
        };
        if emit || crate::files::wants_fileinfo_file(f) {
            if let Some(mut rec) = c.out.record(EventKind::Other) {
                let hdr = c.rec.header("fileinfo", self.dir == Dir::ToServer);
                write_eve_header(&mut rec, &hdr);
                rec.set_str("app_proto", "ftp-data");
                rec.open_object("fileinfo");
                f.write_eve(&mut rec, 0, None);
                rec.close();
                rec.close();
                crate::files::finish_fileinfo(rec, f, hdr.timestamp_ns, emit);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_in_its_direction_and_command_keyword() {
        let mut s = FtpDataState::new(true, b"index.html".to_vec(), Dir::ToClient);
        AppParser::parse(&mut s, Dir::ToServer, b"ignored");
        AppParser::parse(&mut s, Dir::ToClient, b"root:x:0:0");
        assert_eq!(s.buffer_ready(0, 0, Dir::ToServer, false), None);
        assert_eq!(s.buffer_ready(0, 0, Dir::ToClient, false), Some(false));
        let mut got = Vec::new();
        s.buffer(0, 0, Dir::ToClient, &mut |d| {
            got = d.to_vec();
            true
        });
        assert_eq!(got, b"root:x:0:0");
        let m = command_setup(Some("retr")).unwrap();
        assert_eq!(m.matches(&s, 0, Dir::ToClient), Some(true));
        let m = command_setup(Some("stor")).unwrap();
        assert_eq!(m.matches(&s, 0, Dir::ToClient), Some(false));
        assert!(command_setup(Some("list")).is_err());
    }
}
