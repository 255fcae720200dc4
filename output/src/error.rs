//! Errors of the output crate.

use std::io;
use std::path::PathBuf;

/// Output errors.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// A file or socket could not be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// What was opened.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A write failed.
    #[error("write to {what} failed: {source}")]
    Write {
        /// Where the write went.
        what: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The configuration cannot work (names the key).
    #[error("invalid output config: {0}")]
    Config(String),
    /// A Redis server answered with an error or broke the protocol.
    #[error("redis: {0}")]
    Redis(String),
}
