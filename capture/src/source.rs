//! [`FileSource`]: a pcap or pcapng file, or a pipe, read as a stream of packets.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::buf::{InputBuf, DEFAULT_CAPACITY};
use crate::pcap::{self, HeaderError, PcapReader};
use crate::pcapng::{self, NgReader};
use crate::{CaptureError, CaptureStats, LinkType, PacketSource, RawPacket};

/// Largest caplen accepted in a record (256 KiB, libpcap's maximum snapshot length).
/// A larger one marks the record as corrupt.
pub const MAX_CAPLEN: u32 = 256 * 1024;

/// Largest pcapng block accepted (16 MiB, as libpcap).
pub const MAX_BLOCK_LEN: u32 = 16 * 1024 * 1024;

/// Name used for standard input in messages.
const STDIN_NAME: &str = "<stdin>";

/// The format of a capture file, from its magic number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileFormat {
    /// Classic pcap.
    Pcap {
        /// Nanosecond timestamps (magic `a1b23c4d`) instead of microseconds.
        nanos: bool,
        /// Big-endian headers.
        big_endian: bool,
    },
    /// pcapng (the byte order may change per section).
    PcapNg,
}

impl FileFormat {
    /// Short name for logs and summaries: `pcap`, `pcap-ns` or `pcapng`.
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Pcap { nanos: false, .. } => "pcap",
            FileFormat::Pcap { nanos: true, .. } => "pcap-ns",
            FileFormat::PcapNg => "pcapng",
        }
    }
}

/// What a reader's `next` returns when it did not fail.
pub(crate) enum Step<'a> {
    Packet(RawPacket<'a>),
    /// Clean end of input at a record boundary.
    End,
    /// The input ended inside a record.
    Truncated,
}

impl Step<'_> {
    /// `End` when nothing is left over, `Truncated` when a partial record is.
    pub(crate) fn end_or_truncated(left: usize) -> Step<'static> {
        if left == 0 {
            Step::End
        } else {
            Step::Truncated
        }
    }
}

/// A read failure, before it is given the input's name.
pub(crate) enum ReadError {
    Io { offset: u64, source: io::Error },
    Corrupt { offset: u64, reason: String },
}

impl ReadError {
    pub(crate) fn io(offset: u64, source: io::Error) -> ReadError {
        ReadError::Io { offset, source }
    }

    #[cold]
    pub(crate) fn corrupt(offset: u64, reason: String) -> ReadError {
        ReadError::Corrupt { offset, reason }
    }

    fn named(self, path: &str) -> CaptureError {
        let path = path.to_string();
        match self {
            ReadError::Io { offset, source } => CaptureError::Io {
                path,
                offset,
                source,
            },
            ReadError::Corrupt { offset, reason } => CaptureError::Corrupt {
                path,
                offset,
                reason,
            },
        }
    }
}

enum Reader {
    Pcap(PcapReader),
    Ng(NgReader),
}

/// A capture file (pcap or pcapng, detected from its first bytes) read as a stream.
///
/// Reads through a 1 MiB buffer and never seeks, so pipes work. Each packet borrows that
/// buffer until the next call; nothing is allocated per packet.
pub struct FileSource {
    name: String,
    input: InputBuf,
    total: Option<u64>,
    format: FileFormat,
    reader: Reader,
    done: bool,
    stats: CaptureStats,
}

impl FileSource {
    /// Opens the capture file at `path` and reads its header.
    ///
    /// Errors name the path: it is missing, unreadable, a directory, empty, not a capture
    /// file, or (classic pcap) of an unsupported link type.
    pub fn open(path: impl AsRef<Path>) -> Result<FileSource, CaptureError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let file = File::open(path).map_err(|source| CaptureError::Open {
            path: name.clone(),
            source,
        })?;
        let meta = file.metadata().map_err(|source| CaptureError::Open {
            path: name.clone(),
            source,
        })?;
        if meta.is_dir() {
            return Err(CaptureError::IsDirectory { path: name });
        }
        let total = meta.is_file().then_some(meta.len());
        FileSource::with_input(name, Box::new(file), total)
    }

    /// Opens a command-line input: `-` is standard input, anything else a file.
    pub fn open_arg(path: impl AsRef<Path>) -> Result<FileSource, CaptureError> {
        let path = path.as_ref();
        if path.as_os_str() == "-" {
            FileSource::stdin()
        } else {
            FileSource::open(path)
        }
    }

    /// Reads a capture from any reader (a pipe, a socket, memory). `name` is used in
    /// messages. The total size is unknown.
    pub fn from_reader<R: Read + Send + 'static>(
        name: impl Into<String>,
        reader: R,
    ) -> Result<FileSource, CaptureError> {
        FileSource::with_input(name.into(), Box::new(reader), None)
    }

    /// Reads a capture from standard input (`-r -`).
    pub fn stdin() -> Result<FileSource, CaptureError> {
        FileSource::from_reader(STDIN_NAME, io::stdin())
    }

    fn with_input(
        name: String,
        reader: Box<dyn Read + Send>,
        total: Option<u64>,
    ) -> Result<FileSource, CaptureError> {
        let mut input = InputBuf::new(reader, DEFAULT_CAPACITY);
        let io_err = |source: io::Error, name: &str| CaptureError::Io {
            path: name.to_string(),
            offset: 0,
            source,
        };
        let bad = |reason: String, name: &str| CaptureError::BadHeader {
            path: name.to_string(),
            reason,
        };
        // Enough for either header (pcap 24 bytes, the fixed part of a pcapng SHB 28).
        input.fill(pcapng::MIN_SHB).map_err(|e| io_err(e, &name))?;
        let head = input.data();
        if head.is_empty() {
            return Err(CaptureError::Empty { path: name });
        }
        let Some(magic) = head.first_chunk::<4>().copied() else {
            return Err(bad(
                format!("file too short for a capture header ({} bytes)", head.len()),
                &name,
            ));
        };
        let (format, reader) = match magic {
            pcap::MAGIC_USEC_LE
            | pcap::MAGIC_USEC_BE
            | pcap::MAGIC_NSEC_LE
            | pcap::MAGIC_NSEC_BE => {
                let r = match PcapReader::from_header(head) {
                    Ok(r) => r,
                    Err(HeaderError::Bad(reason)) => return Err(bad(reason, &name)),
                    Err(HeaderError::Unsupported(linktype)) => {
                        return Err(CaptureError::UnsupportedLinkType {
                            path: name,
                            linktype,
                        })
                    }
                };
                input.take(pcap::FILE_HEADER_LEN);
                let format = FileFormat::Pcap {
                    nanos: r.nanos(),
                    big_endian: r.big_endian(),
                };
                (format, Reader::Pcap(r))
            }
            pcapng::SHB_MAGIC => {
                if let Err(reason) = pcapng::check_first_shb(head) {
                    return Err(bad(reason, &name));
                }
                // The reader parses the SHB itself; only its first bytes were checked.
                (FileFormat::PcapNg, Reader::Ng(NgReader::new()))
            }
            [0x1f, 0x8b, ..] => {
                // gzip (`.pcap.gz`, as tcpdump and Wireshark read them), from a file or a
                // pipe alike: decompress on the fly (concatenated members too). The
                // compressed size says nothing about progress.
                let gz = flate2::read::MultiGzDecoder::new(input.into_reader());
                return match FileSource::with_input(name.clone(), Box::new(gz), None) {
                    Err(CaptureError::Io { source, .. }) => Err(bad(
                        format!("gzip-compressed input that cannot be decompressed: {source}"),
                        &name,
                    )),
                    Err(CaptureError::Empty { .. }) => Err(bad(
                        "gzip-compressed input that holds no data".into(),
                        &name,
                    )),
                    r => r,
                };
            }
            other => {
                return Err(bad(
                    format!("unknown magic number {:#010x}", u32::from_be_bytes(other)),
                    &name,
                ))
            }
        };
        Ok(FileSource {
            name,
            input,
            total,
            format,
            reader,
            done: false,
            stats: CaptureStats {
                files: 1,
                ..CaptureStats::default()
            },
        })
    }

    /// The input's name as given (`<stdin>` for standard input).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The detected file format.
    pub fn format(&self) -> FileFormat {
        self.format
    }

    /// The link type of a classic pcap file; `None` for pcapng, where it is per interface.
    pub fn link_type(&self) -> Option<LinkType> {
        match &self.reader {
            Reader::Pcap(r) => Some(r.link()),
            Reader::Ng(_) => None,
        }
    }

    /// Bytes of input consumed so far (header and records), for progress reporting.
    pub fn bytes_read(&self) -> u64 {
        self.input.pos()
    }

    /// Size of the input when known (regular files); `None` for pipes and readers.
    pub fn total_bytes(&self) -> Option<u64> {
        self.total
    }

    /// True once the input ended inside a record. The caller warns; it is not an error.
    pub fn is_truncated(&self) -> bool {
        self.stats.truncated != 0
    }

    /// pcapng only: the unsupported LINKTYPE values whose packets were skipped (each once,
    /// in order of first sight), so the caller can report them once per file.
    pub fn unsupported_link_types(&self) -> &[u32] {
        match &self.reader {
            Reader::Pcap(_) => &[],
            Reader::Ng(r) => r.unsupported(),
        }
    }

    /// pcapng only: the number of sections read so far (0 for classic pcap).
    pub fn sections(&self) -> u64 {
        match &self.reader {
            Reader::Pcap(_) => 0,
            Reader::Ng(r) => r.sections(),
        }
    }
}

impl PacketSource for FileSource {
    #[inline]
    fn next_packet(&mut self) -> Result<Option<RawPacket<'_>>, CaptureError> {
        if self.done {
            return Ok(None);
        }
        let step = match &mut self.reader {
            Reader::Pcap(r) => r.next(&mut self.input, &mut self.stats),
            Reader::Ng(r) => r.next(&mut self.input, &mut self.stats),
        };
        match step {
            Ok(Step::Packet(p)) => Ok(Some(p)),
            Ok(Step::End) => {
                self.done = true;
                Ok(None)
            }
            Ok(Step::Truncated) => {
                self.done = true;
                self.stats.truncated = 1;
                Ok(None)
            }
            Err(e) => {
                self.done = true;
                self.stats.errors = 1;
                Err(e.named(&self.name))
            }
        }
    }

    fn stats(&self) -> &CaptureStats {
        &self.stats
    }
}

impl std::fmt::Debug for FileSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileSource")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("bytes_read", &self.input.pos())
            .field("total", &self.total)
            .field("done", &self.done)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}
