//! Errors of the capture sources. Every variant names the input it concerns, so the caller
//! can print it as is.

use std::io;

/// What went wrong while opening or reading a packet source.
///
/// Truncated captures are *not* errors: the source delivers every complete record, then ends
/// and reports [`crate::CaptureStats::truncated`].
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The input could not be opened (missing, permission denied, ...).
    #[error("{path}: cannot open: {source}")]
    Open {
        /// The input as the user named it.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A path given as a capture file is a directory.
    #[error("{path}: is a directory, not a capture file")]
    IsDirectory {
        /// The input as the user named it.
        path: String,
    },
    /// A path named on the command line does not exist.
    #[error("{path}: no such file or directory")]
    NotFound {
        /// The input as the user named it.
        path: String,
    },
    /// A directory could not be listed.
    #[error("{path}: cannot read directory: {source}")]
    ReadDir {
        /// The directory.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A directory given as input holds no capture files.
    #[error("{path}: directory holds no capture files")]
    EmptyDirectory {
        /// The directory.
        path: String,
    },
    /// The input has no bytes at all.
    #[error("{path}: empty capture file")]
    Empty {
        /// The input as the user named it.
        path: String,
    },
    /// The file header is not a pcap or pcapng header we can read.
    #[error("{path}: not a readable pcap/pcapng file: {reason}")]
    BadHeader {
        /// The input as the user named it.
        path: String,
        /// What is wrong with the header.
        reason: String,
    },
    /// A classic pcap file whose link type shrike cannot decode. The whole file is skipped;
    /// the caller reports this once and goes on with the next input.
    #[error("{path}: link type {linktype} is not supported, skipping the file")]
    UnsupportedLinkType {
        /// The input as the user named it.
        path: String,
        /// The LINKTYPE_* value from the header (FCS bits masked off).
        linktype: u32,
    },
    /// A record or block is malformed. Every record before `offset` was delivered.
    #[error("{path}: corrupt capture at byte offset {offset}: {reason}")]
    Corrupt {
        /// The input as the user named it.
        path: String,
        /// Byte offset of the bad record or block from the start of the input.
        offset: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// Reading from the input failed.
    #[error("{path}: read error at byte offset {offset}: {source}")]
    Io {
        /// The input as the user named it.
        path: String,
        /// Bytes consumed before the failing read.
        offset: u64,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl CaptureError {
    /// The input this error concerns.
    pub fn path(&self) -> &str {
        match self {
            CaptureError::Open { path, .. }
            | CaptureError::IsDirectory { path }
            | CaptureError::NotFound { path }
            | CaptureError::ReadDir { path, .. }
            | CaptureError::EmptyDirectory { path }
            | CaptureError::Empty { path }
            | CaptureError::BadHeader { path, .. }
            | CaptureError::UnsupportedLinkType { path, .. }
            | CaptureError::Corrupt { path, .. }
            | CaptureError::Io { path, .. } => path,
        }
    }

    /// True for [`CaptureError::UnsupportedLinkType`]: the file is fine but skipped.
    pub fn is_unsupported_link(&self) -> bool {
        matches!(self, CaptureError::UnsupportedLinkType { .. })
    }
}
